//! Stage 6b, incremental paired statistics: joint counts per (model, domain, comparison,
//! length) maintained by differential dataflow as outcomes arrive (the live console table), and
//! metric snapshots — every point metric with its intervals and tests, computed by `c2s-stats`
//! over the item-level outcomes — every N outcomes or T seconds and at the end.
//!
//! Statistics are global: outcomes and trajectories from every worker are routed to worker 0.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use differential_dataflow::AsCollection;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::{Exchange as ExchangePact, Pipeline};
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::StreamVec;

use c2s_records::{Domain, PairedOutcome, Trajectory};
use c2s_stats::{
    calibration_metrics, independence_metrics, paired_metrics, JointTable, MetricRow, StatsConfig,
};

/// When snapshots are taken.
#[derive(Debug, Clone, Copy)]
pub struct SnapshotPolicy {
    pub every_outcomes: u64,
    pub every: Duration,
    /// Number of the first snapshot (continues after a resumed run's last one).
    pub first: u64,
}

/// Joint tables per (model, domain, comparison), over all lengths: the live console view.
#[derive(Debug, Default, Clone)]
pub struct LiveTable {
    pub tables: BTreeMap<(String, Domain, String), JointTable>,
    pub snapshots: u64,
}

/// Every metric of a snapshot: paired metrics, the independence reference, calibration.
pub fn snapshot_rows(
    outcomes: &[PairedOutcome],
    trajectories: &[Trajectory],
    cfg: &StatsConfig,
    snapshot: u64,
) -> Result<Vec<MetricRow>, c2s_stats::StatsError> {
    // Sums over items run in item order, so results do not depend on arrival order (worker
    // count, resume, offline recomputation).
    let mut outcomes: Vec<&PairedOutcome> = outcomes.iter().collect();
    outcomes.sort_by(|a, b| {
        (&a.item_id, &a.native_arm, &a.serial_arm).cmp(&(&b.item_id, &b.native_arm, &b.serial_arm))
    });
    let outcomes: Vec<PairedOutcome> = outcomes.into_iter().cloned().collect();
    let mut trajectories: Vec<&Trajectory> = trajectories.iter().collect();
    trajectories
        .sort_by(|a, b| (&a.model, &a.arm, &a.item_id).cmp(&(&b.model, &b.arm, &b.item_id)));
    let trajectories: Vec<Trajectory> = trajectories.into_iter().cloned().collect();
    let mut rows = paired_metrics(&outcomes, cfg, snapshot)?;
    rows.extend(independence_metrics(&trajectories, cfg, snapshot)?);
    rows.extend(calibration_metrics(&trajectories, snapshot)?);
    Ok(rows)
}

/// Joint counts per (model, domain, comparison), maintained by differential dataflow as
/// outcomes arrive, published into `live`. Returns the (empty) output stream, for probing.
pub fn joint_counts<'s>(
    outcomes: StreamVec<'s, u64, PairedOutcome>,
    live: Arc<Mutex<LiveTable>>,
) -> StreamVec<'s, u64, ()> {
    // Differential: joint-cell counts per group, updated incrementally.
    let cells = outcomes.unary::<CapacityContainerBuilder<
        Vec<(((String, Domain, String), u8), u64, isize)>,
    >, _, _, _>(
        ExchangePact::new(|_: &PairedOutcome| 0u64),
        "JointCells",
        |_, _| {
            move |input, output| {
                input.for_each(|cap, data| {
                    let Some(&time) = cap.least() else { return };
                    let mut session = output.session(&cap);
                    for o in data.drain(..) {
                        let cell = match (o.native_correct, o.serial_correct) {
                            (true, true) => 0u8,
                            (true, false) => 1,
                            (false, true) => 2,
                            (false, false) => 3,
                        };
                        let group = (
                            o.model.clone(),
                            o.domain,
                            format!("{} vs {}", o.native_arm, o.serial_arm),
                        );
                        session.give(((group, cell), time, 1isize));
                    }
                });
            }
        },
    );
    cells
        .as_collection()
        .count()
        .inner
        .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(Pipeline, "LiveTable", move |_, _| {
            move |input, _output| {
                input.for_each(|_, data| {
                    let mut t = live.lock().unwrap_or_else(|p| p.into_inner());
                    for (((group, cell), count), _, diff) in data.drain(..) {
                        // Counts arrive as retractions of the old value and additions of the new.
                        if diff > 0 {
                            let jt = t.tables.entry(group).or_default();
                            let n = count as u64;
                            match cell {
                                0 => jt.both = n,
                                1 => jt.native_only = n,
                                2 => jt.serial_only = n,
                                _ => jt.neither = n,
                            }
                        }
                    }
                });
            }
        })
}

/// The statistics stage: live joint counts (differential) and metric snapshots.
pub fn live_stats<'s>(
    outcomes: StreamVec<'s, u64, PairedOutcome>,
    trajectories: StreamVec<'s, u64, Trajectory>,
    cfg: StatsConfig,
    policy: SnapshotPolicy,
    live: Arc<Mutex<LiveTable>>,
) -> StreamVec<'s, u64, MetricRow> {
    joint_counts(outcomes.clone(), live.clone());
    let scope = outcomes.scope();
    outcomes.binary_frontier::<_, CapacityContainerBuilder<Vec<MetricRow>>, _, _, _, _>(
        trajectories,
        ExchangePact::new(|_: &PairedOutcome| 0u64),
        ExchangePact::new(|_: &Trajectory| 0u64),
        "Snapshots",
        move |initial, info| {
            let worker_zero = scope.index() == 0;
            let mut cap = worker_zero.then_some(initial);
            let activator = scope.activator_for(info.address.clone());
            let mut all_outcomes: Vec<PairedOutcome> = Vec::new();
            let mut all_trajectories: Vec<Trajectory> = Vec::new();
            let mut since_last = 0u64;
            let mut last = Instant::now();
            let mut next_snapshot = policy.first;
            move |(outcomes_in, f1), (trajectories_in, f2), output| {
                outcomes_in.for_each(|_, data| {
                    since_last += data.len() as u64;
                    all_outcomes.append(data);
                });
                trajectories_in.for_each(|_, data| all_trajectories.append(data));
                let Some(c) = cap.as_mut() else { return };
                let finished = f1.frontier().is_empty() && f2.frontier().is_empty();
                let due = since_last >= policy.every_outcomes
                    || (since_last > 0 && last.elapsed() >= policy.every)
                    || finished;
                if due && (since_last > 0 || finished) {
                    match snapshot_rows(&all_outcomes, &all_trajectories, &cfg, next_snapshot) {
                        Ok(rows) => {
                            output.session(&*c).give_iterator(rows.into_iter());
                        }
                        Err(e) => tracing::error!("metric snapshot {next_snapshot} failed: {e}"),
                    }
                    live.lock().unwrap_or_else(|p| p.into_inner()).snapshots = next_snapshot + 1;
                    next_snapshot += 1;
                    since_last = 0;
                    last = Instant::now();
                }
                if finished {
                    cap = None;
                    return;
                }
                // Keep the capability only as far back as the inputs can still reach.
                let lower = f1
                    .frontier()
                    .iter()
                    .chain(f2.frontier().iter())
                    .min()
                    .copied();
                if let Some(t) = lower {
                    if *c.time() < t {
                        c.downgrade(&t);
                    }
                }
                activator.activate_after(policy.every);
            }
        },
    )
}
