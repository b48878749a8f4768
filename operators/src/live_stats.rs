//! Stage 6b, incremental paired statistics, computed from counts.
//!
//! 1. **Keys** (every worker): each paired outcome and each trajectory becomes the
//!    [`StatsKey`]s of the cells it counts in (joint cell per length, position pattern,
//!    confidence key). Outcomes and trajectories a resumed run already counted (its seed) are
//!    skipped.
//! 2. **Counts** (differential, every worker): `count()` over the keys keeps one arranged
//!    count per distinct cell and emits each change as the retraction of the old count and
//!    the insertion of the new one; Σ count·diff is the cell's change. Retractions upstream
//!    (a corrected item) flow through unchanged.
//! 3. **Snapshots** (a dedicated thread, fed by worker 0): the changes of every worker are
//!    routed to worker 0, whose operator only forwards them over a channel. The thread owns a
//!    [`StatsCounts`] (seeded from a resumed run's `outcomes/` and `trajectories/`), publishes
//!    the live console table, and computes a snapshot every N outcomes or T seconds and at
//!    the end (the outcome policy is checked after each dataflow time's changes, so snapshots
//!    fall at the same points however fast the thread runs). A snapshot's cost depends on
//!    groups, lengths and draws, not on the number of outcomes, and it never runs on a timely
//!    thread: feeding and answer routing go on while it is computed. The operator holds its capability until the final snapshot's rows are
//!    back, and emits rows as they arrive. A snapshot that fails is a `snapshot_error` row in
//!    `metrics/` and a line in the console, not only a log line.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use differential_dataflow::AsCollection;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::{Exchange as ExchangePact, Pipeline};
use timely::dataflow::operators::core::Partition;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::Concat;
use timely::dataflow::StreamVec;
use timely::scheduling::SyncActivator;

use c2s_records::{Domain, Metric, PairedOutcome, Trajectory};
use c2s_stats::{comparison_label, JointTable, MetricRow, StatsConfig, StatsCounts, StatsKey};

/// `metric` of the row that reports a failed snapshot (its message is in `comparison`).
pub const SNAPSHOT_ERROR: Metric = Metric::SnapshotError;

/// When snapshots are taken.
#[derive(Debug, Clone, Copy)]
pub struct SnapshotPolicy {
    /// Take a snapshot once this many paired outcomes came in since the last one.
    pub every_outcomes: u64,
    /// Or once this long has passed since the last one (with at least one new outcome).
    pub every: Duration,
    /// Number of the first snapshot (continues after a resumed run's last one).
    pub first: u64,
}

/// Called on the snapshot thread after every successful snapshot with the counts it was taken
/// from, its number and its rows: a live monitor keeps its own view of the latest snapshot
/// (what it derives from the counts is computed here, off the timely threads).
#[derive(Clone)]
pub struct SnapshotObserver(pub Arc<ObserveSnapshot>);

/// What a [`SnapshotObserver`] calls: the counts, the snapshot's number, its rows.
pub type ObserveSnapshot = dyn Fn(&StatsCounts, u64, &[MetricRow]) + Send + Sync;

impl std::fmt::Debug for SnapshotObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SnapshotObserver")
    }
}

/// The live console view: joint tables per (model, domain, comparison) over all lengths.
#[derive(Debug, Default, Clone)]
pub struct LiveTable {
    /// Joint tables keyed by (model, domain, comparison).
    pub tables: BTreeMap<(String, Domain, String), JointTable>,
    /// Snapshots taken (the next snapshot's number).
    pub snapshots: u64,
    /// Paired outcomes counted, seed included.
    pub outcomes: u64,
    /// Distinct counted cells (the size of the statistics state).
    pub cells: usize,
    /// The last failed snapshot's error, cleared by the next successful one.
    pub last_error: Option<String>,
    /// Snapshots that failed.
    pub failed_snapshots: u64,
    /// Records whose keys could not be formed since the last snapshot (on any worker of this
    /// process); the next snapshot fails with them.
    pub pending_errors: Vec<String>,
    /// When the latest snapshot (successful or not) was taken.
    pub last_snapshot_at: Option<std::time::SystemTime>,
    /// Told of every successful snapshot (set before the run starts; none by default).
    pub observer: Option<SnapshotObserver>,
}

/// What a resumed run's statistics start from: the counts of what is already on disk, and
/// the keys of those records, so that their re-emission (a resumed item whose other arms
/// were missing replays its finished ones) is not counted twice.
#[derive(Debug, Clone, Default)]
pub struct StatsSeed {
    /// Counts of the paired outcomes already on disk.
    pub counts: StatsCounts,
    /// `(item_id, comparison)` of the seeded outcomes.
    pub outcome_keys: Arc<BTreeSet<(String, String)>>,
    /// `(item_id, arm)` of the seeded trajectories.
    pub trajectory_keys: Arc<BTreeSet<(String, String)>>,
}

/// The row of one problem of a failed snapshot.
fn error_row(snapshot: u64, message: &str) -> MetricRow {
    MetricRow::empty(snapshot, "", None, None, message, SNAPSHOT_ERROR)
}

/// Stage 1: the counted keys of outcomes and trajectories (seeded records skipped), as
/// differential updates `(key, time, +n)` summed within each batch (a batch of outcomes
/// touches few cells, so differential sees a handful of keys rather than every outcome). A
/// record whose keys cannot be formed is reported in `live` (it then fails the next
/// snapshot).
pub fn stats_keys<'s>(
    outcomes: StreamVec<'s, u64, PairedOutcome>,
    trajectories: StreamVec<'s, u64, Trajectory>,
    seed: &StatsSeed,
    calibration: bool,
    live: Arc<Mutex<LiveTable>>,
) -> StreamVec<'s, u64, (StatsKey, u64, isize)> {
    let skip = seed.outcome_keys.clone();
    let errs = live.clone();
    let from_outcomes = outcomes
        .unary::<CapacityContainerBuilder<Vec<(StatsKey, u64, isize)>>, _, _, _>(
            Pipeline,
            "OutcomeKeys",
            move |_, _| {
                move |input, output| {
                    input.for_each(|cap, data| {
                        let Some(&time) = cap.least() else { return };
                        // Summed by borrowed fields first: no allocation per outcome.
                        type Cell<'a> = (&'a str, Domain, &'a str, &'a str, usize, bool, bool);
                        let mut cells: std::collections::HashMap<
                            Cell<'_>,
                            (isize, &PairedOutcome),
                        > = Default::default();
                        for o in data.iter() {
                            if !skip.is_empty()
                                && skip.contains(&(
                                    o.item_id.clone(),
                                    comparison_label(&o.native_arm, &o.serial_arm),
                                ))
                            {
                                continue;
                            }
                            let cell = (
                                o.model.as_str(),
                                o.domain,
                                o.native_arm.as_str(),
                                o.serial_arm.as_str(),
                                o.length,
                                o.native_correct,
                                o.serial_correct,
                            );
                            cells.entry(cell).or_insert((0, o)).0 += 1;
                        }
                        let mut session = output.session(&cap);
                        for (n, o) in cells.into_values() {
                            match StatsKey::of_outcome(o) {
                                Ok(k) => session.give((k, time, n)),
                                Err(e) => push_error(&errs, format!("outcome {}: {e}", o.item_id)),
                            }
                        }
                        data.clear();
                    });
                }
            },
        );
    let skip = seed.trajectory_keys.clone();
    let from_trajectories = trajectories
        .unary::<CapacityContainerBuilder<Vec<(StatsKey, u64, isize)>>, _, _, _>(
            Pipeline,
            "TrajectoryKeys",
            move |_, _| {
                move |input, output| {
                    input.for_each(|cap, data| {
                        let Some(&time) = cap.least() else { return };
                        let mut keys: BTreeMap<StatsKey, isize> = BTreeMap::new();
                        for t in data.drain(..) {
                            if !skip.is_empty()
                                && skip.contains(&(t.item_id.clone(), t.arm.to_string()))
                            {
                                continue;
                            }
                            match StatsKey::of_trajectory(&t) {
                                Ok(ks) => {
                                    for k in ks {
                                        if calibration || !matches!(k, StatsKey::Confidence { .. })
                                        {
                                            *keys.entry(k).or_default() += 1;
                                        }
                                    }
                                }
                                Err(e) => push_error(
                                    &live,
                                    format!("trajectory {} / {}: {e}", t.item_id, t.arm),
                                ),
                            }
                        }
                        output
                            .session(&cap)
                            .give_iterator(keys.into_iter().map(|(k, n)| (k, time, n)));
                    });
                }
            },
        );
    from_outcomes.concat(from_trajectories)
}

fn push_error(live: &Mutex<LiveTable>, message: String) {
    tracing::error!("statistics: {message}");
    live.lock()
        .unwrap_or_else(|p| p.into_inner())
        .pending_errors
        .push(message);
}

/// Stage 2: the change of every counted cell, maintained by differential's `count()` and
/// routed to worker 0: `(key, Σ count·diff)` per cell and time. Confidence keys (about one per
/// completed string) go to the snapshot thread as they are: an arrangement would only keep a
/// second copy of that thread's exact counts.
pub fn count_changes<'s>(
    updates: StreamVec<'s, u64, (StatsKey, u64, isize)>,
) -> StreamVec<'s, u64, (StatsKey, i64)> {
    let parts = updates
        .partition::<CapacityContainerBuilder<Vec<(StatsKey, u64, isize)>>, _, _>(2, |u| {
            (u64::from(matches!(u.0, StatsKey::Confidence { .. })), u)
        });
    let [counted, direct] = crate::partitions(parts);
    let direct = direct.unary::<CapacityContainerBuilder<Vec<(StatsKey, i64)>>, _, _, _>(
        Pipeline,
        "ConfidenceChanges",
        |_, _| {
            move |input, output| {
                input.for_each(|cap, data| {
                    output
                        .session(&cap)
                        .give_iterator(data.drain(..).map(|(k, _, n)| (k, n as i64)));
                });
            }
        },
    );
    counted
        .as_collection()
        .count()
        .inner
        .unary::<CapacityContainerBuilder<Vec<(StatsKey, i64)>>, _, _, _>(
            ExchangePact::new(|_: &((StatsKey, isize), u64, isize)| 0u64),
            "CountChanges",
            |_, _| {
                move |input, output| {
                    input.for_each(|cap, data| {
                        // Changes at one time are summed per key before they leave.
                        let mut changes: BTreeMap<StatsKey, i64> = BTreeMap::new();
                        for ((key, count), _, diff) in data.drain(..) {
                            *changes.entry(key).or_default() += (count * diff) as i64;
                        }
                        output
                            .session(&cap)
                            .give_iterator(changes.into_iter().filter(|(_, d)| *d != 0));
                    });
                }
            },
        )
        .concat(direct)
}

/// Messages to the snapshot thread.
enum ToThread {
    Changes(Vec<(StatsKey, i64)>),
    /// The inputs are complete: take the final snapshot and stop.
    Finish,
}

/// Messages from the snapshot thread.
enum FromThread {
    Rows(Vec<MetricRow>),
    Done,
}

/// State of the snapshot thread.
struct SnapshotThread {
    counts: StatsCounts,
    cfg: StatsConfig,
    policy: SnapshotPolicy,
    live: Arc<Mutex<LiveTable>>,
    next: u64,
    since_last: u64,
    last: Instant,
    /// A change that a count could not take (a retraction below zero).
    bad_changes: Vec<String>,
}

impl SnapshotThread {
    fn apply(&mut self, changes: Vec<(StatsKey, i64)>) {
        for (key, diff) in changes {
            if key.is_outcome() {
                self.since_last += diff.unsigned_abs();
            }
            if let Err(e) = self.counts.update(&key, diff) {
                self.bad_changes.push(e.to_string());
            }
        }
    }

    fn publish(&self) {
        let mut t = self.live.lock().unwrap_or_else(|p| p.into_inner());
        t.tables = self.counts.joint_tables();
        t.outcomes = self.counts.outcomes();
        t.cells = self.counts.cell_count();
    }

    fn due(&self) -> bool {
        self.since_last > 0
            && (self.since_last >= self.policy.every_outcomes
                || self.last.elapsed() >= self.policy.every)
    }

    /// One snapshot: its rows, or one `snapshot_error` row per problem.
    fn snapshot(&mut self) -> Vec<MetricRow> {
        let n = self.next;
        self.next += 1;
        self.since_last = 0;
        self.last = Instant::now();
        let mut problems: Vec<String> = std::mem::take(&mut self.bad_changes);
        let mut t = self.live.lock().unwrap_or_else(|p| p.into_inner());
        problems.append(&mut t.pending_errors);
        drop(t);
        let result = if problems.is_empty() {
            self.counts
                .snapshot(&self.cfg, n)
                .map_err(|e| vec![e.to_string()])
        } else {
            Err(problems)
        };
        let mut t = self.live.lock().unwrap_or_else(|p| p.into_inner());
        t.snapshots = n + 1;
        t.last_snapshot_at = Some(std::time::SystemTime::now());
        match result {
            Ok(rows) => {
                t.last_error = None;
                let observer = t.observer.clone();
                drop(t);
                if let Some(SnapshotObserver(observe)) = observer {
                    observe(&self.counts, n, &rows);
                }
                rows
            }
            Err(problems) => {
                t.failed_snapshots += 1;
                t.last_error = Some(format!(
                    "metric snapshot {n} failed: {}",
                    problems.join("; ")
                ));
                tracing::error!("metric snapshot {n} failed: {}", problems.join("; "));
                problems.iter().map(|m| error_row(n, m)).collect()
            }
        }
    }

    fn run(mut self, rx: Receiver<ToThread>, tx: Sender<FromThread>, wake: SyncActivator) {
        self.publish();
        let send = |msg: FromThread| {
            let ok = tx.send(msg).is_ok();
            // The operator may already be gone (the dataflow was dropped): nothing to wake.
            let _ = wake.activate();
            ok
        };
        loop {
            let wait = self
                .policy
                .every
                .saturating_sub(self.last.elapsed())
                .max(Duration::from_millis(10));
            let msg = match rx.recv_timeout(wait) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            };
            let Some(msg) = msg else {
                // A time-based snapshot.
                if self.due() {
                    let rows = self.snapshot();
                    if !send(FromThread::Rows(rows)) {
                        return;
                    }
                }
                continue;
            };
            match msg {
                ToThread::Changes(c) => {
                    self.apply(c);
                    self.publish();
                    // Checked after every batch (one per dataflow time), so snapshots fall at
                    // the same outcome counts however fast the thread is; the counts are
                    // cheap to snapshot, so a backlog does not build up.
                    if self.due() {
                        let rows = self.snapshot();
                        if !send(FromThread::Rows(rows)) {
                            return;
                        }
                    }
                }
                ToThread::Finish => {
                    let rows = self.snapshot();
                    send(FromThread::Rows(rows));
                    send(FromThread::Done);
                    return;
                }
            }
        }
    }
}

/// Stage 3: snapshots on a dedicated thread, fed by worker 0.
pub fn snapshots<'s>(
    changes: StreamVec<'s, u64, (StatsKey, i64)>,
    cfg: StatsConfig,
    policy: SnapshotPolicy,
    seed: StatsCounts,
    live: Arc<Mutex<LiveTable>>,
) -> StreamVec<'s, u64, MetricRow> {
    let scope = changes.scope();
    changes.unary_frontier::<CapacityContainerBuilder<Vec<MetricRow>>, _, _, _>(
        ExchangePact::new(|_: &(StatsKey, i64)| 0u64),
        "Snapshots",
        move |initial, info| {
            let worker_zero = scope.index() == 0;
            let mut cap = worker_zero.then_some(initial);
            let mut channels: Option<(Sender<ToThread>, Receiver<FromThread>)> = None;
            if worker_zero {
                let (to_tx, to_rx) = mpsc::channel();
                let (from_tx, from_rx) = mpsc::channel();
                let wake = scope.worker().sync_activator_for(info.address.to_vec());
                let thread = SnapshotThread {
                    counts: seed,
                    cfg,
                    policy,
                    live,
                    next: policy.first,
                    since_last: 0,
                    last: Instant::now(),
                    bad_changes: Vec::new(),
                };
                let spawned = std::thread::Builder::new()
                    .name("c2s-snapshots".into())
                    .spawn(move || thread.run(to_rx, from_tx, wake));
                match spawned {
                    Ok(_) => channels = Some((to_tx, from_rx)),
                    Err(e) => tracing::error!("cannot start the snapshot thread: {e}"),
                }
            }
            let mut finish_sent = false;
            move |(input, frontier), output| {
                // One message per dataflow time: the thread checks its policy after each.
                let mut batches = Vec::new();
                input.for_each(|_, data| {
                    if !data.is_empty() {
                        batches.push(std::mem::take(data));
                    }
                });
                let Some(c) = cap.as_mut() else { return };
                let Some((to, from)) = channels.as_ref() else {
                    // No thread: nothing will ever come back.
                    cap = None;
                    return;
                };
                for batch in batches {
                    if to.send(ToThread::Changes(batch)).is_err() {
                        tracing::error!("the snapshot thread stopped; no further snapshots");
                        cap = None;
                        return;
                    }
                }
                let mut done = false;
                loop {
                    match from.try_recv() {
                        Ok(FromThread::Rows(rows)) => {
                            output.session(&*c).give_iterator(rows.into_iter())
                        }
                        Ok(FromThread::Done) => done = true,
                        Err(mpsc::TryRecvError::Empty) => break,
                        Err(mpsc::TryRecvError::Disconnected) => {
                            if !done {
                                tracing::error!(
                                    "the snapshot thread ended early; no further snapshots"
                                );
                            }
                            done = true;
                            break;
                        }
                    }
                }
                if done {
                    cap = None;
                    return;
                }
                if frontier.frontier().is_empty() {
                    if !finish_sent {
                        finish_sent = to.send(ToThread::Finish).is_ok();
                        if !finish_sent {
                            cap = None;
                        }
                    }
                    return;
                }
                // Keep the capability only as far back as the input can still reach.
                if let Some(&t) = frontier.frontier().iter().min() {
                    if *c.time() < t {
                        c.downgrade(&t);
                    }
                }
            }
        },
    )
}

/// The statistics stage: keys, differential counts, snapshots off the worker thread.
pub fn live_stats<'s>(
    outcomes: StreamVec<'s, u64, PairedOutcome>,
    trajectories: StreamVec<'s, u64, Trajectory>,
    cfg: StatsConfig,
    policy: SnapshotPolicy,
    seed: StatsSeed,
    live: Arc<Mutex<LiveTable>>,
) -> StreamVec<'s, u64, MetricRow> {
    let keys = stats_keys(outcomes, trajectories, &seed, cfg.calibration, live.clone());
    snapshots(count_changes(keys), cfg, policy, seed.counts, live)
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_records::{Confidence, Membership};
    use timely::dataflow::operators::{Capture, Input};
    use timely::dataflow::InputHandle;

    fn outcome(i: usize) -> PairedOutcome {
        PairedOutcome {
            item_id: format!("it{i:03}"),
            domain: if i.is_multiple_of(2) {
                Domain::Arithmetic
            } else {
                Domain::Lexical
            },
            length: 3 + i % 4,
            model: "m".into(),
            native_arm: "Native/code".into(),
            serial_arm: "Serial/Full/code".into(),
            native_correct: !i.is_multiple_of(3),
            serial_correct: i % 5 < 2,
            pattern: None,
        }
    }

    fn trajectory(i: usize, positions: Vec<bool>) -> Trajectory {
        let correct = positions.iter().all(|&p| p);
        Trajectory {
            item_id: format!("it{i:03}"),
            domain: Domain::Lexical,
            length: 3,
            model: "m".into(),
            arm: c2s_records::LabeledArm::parse("TeacherForced/Full/code").unwrap(),
            support: Some(c2s_records::Support::FULL),
            output: String::new(),
            correct,
            valid: true,
            fidelity: None,
            plan: None,
            plan_origin: None,
            plan_differences: None,
            base_id: None,
            operation: None,
            placement: None,
            repeated: None,
            pattern: None,
            membership: if correct {
                Membership::Gold
            } else {
                Membership::Outside
            },
            recombination: false,
            stop: None,
            aborted: false,
            calls: 3,
            fills: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            latency_ms: 0.0,
            confidence: Some(Confidence {
                product: (i % 7) as f64 / 7.0,
                geometric_mean: (i % 5) as f64 / 5.0,
                min_top: (i % 3) as f64 / 3.0,
                steps: 3,
            }),
            position_correct: positions,
            steps: Vec::new(),
        }
    }

    fn cfg() -> StatsConfig {
        StatsConfig {
            bootstrap_draws: 199,
            ..Default::default()
        }
    }

    /// Runs the stage over `workers` workers (records dealt round-robin, in epochs of 7) with
    /// `seed`, and returns the rows of the final snapshot (the largest snapshot number).
    fn run(
        workers: usize,
        outcomes: Vec<PairedOutcome>,
        trajectories: Vec<Trajectory>,
        seed: StatsSeed,
        observer: Option<SnapshotObserver>,
    ) -> (Vec<MetricRow>, LiveTable) {
        let live = Arc::new(Mutex::new(LiveTable {
            observer,
            ..LiveTable::default()
        }));
        let captured = Arc::new(Mutex::new(Vec::new()));
        let (l, c) = (live.clone(), captured.clone());
        timely::execute(timely::Config::process(workers), move |worker| {
            let mut oin: InputHandle<u64, CapacityContainerBuilder<Vec<PairedOutcome>>> =
                InputHandle::new();
            let mut tin: InputHandle<u64, CapacityContainerBuilder<Vec<Trajectory>>> =
                InputHandle::new();
            let (index, peers) = (worker.index(), worker.peers());
            let rx = worker.dataflow::<u64, _, _>(|scope| {
                let policy = SnapshotPolicy {
                    every_outcomes: 10,
                    every: Duration::from_secs(3600),
                    first: 5,
                };
                live_stats(
                    scope.input_from(&mut oin),
                    scope.input_from(&mut tin),
                    cfg(),
                    policy,
                    seed.clone(),
                    l.clone(),
                )
                .capture()
            });
            for (epoch, chunk) in outcomes.chunks(7).enumerate() {
                for (j, o) in chunk.iter().enumerate() {
                    if (epoch * 7 + j) % peers == index {
                        oin.send(o.clone());
                    }
                }
                oin.advance_to(epoch as u64 + 1);
                tin.advance_to(epoch as u64 + 1);
                worker.step();
            }
            for (j, t) in trajectories.iter().enumerate() {
                if j % peers == index {
                    tin.send(t.clone());
                }
            }
            drop(oin);
            drop(tin);
            while worker.step_or_park(Some(Duration::from_millis(5))) {}
            let mut rows = Vec::new();
            for event in rx.try_iter() {
                if let timely::dataflow::operators::capture::Event::Messages(_, data) = event {
                    rows.extend(data);
                }
            }
            c.lock().unwrap().extend(rows);
        })
        .unwrap();
        let rows = captured.lock().unwrap().clone();
        let table = live.lock().unwrap().clone();
        (rows, table)
    }

    /// The rows of the last snapshot, after checking that snapshots were taken while the
    /// stage ran (every 10 outcomes, checked after each epoch's changes).
    fn final_rows(rows: Vec<MetricRow>) -> Vec<MetricRow> {
        let last = rows.iter().map(|r| r.snapshot).max().unwrap();
        assert!(
            rows.iter().any(|r| r.snapshot < last),
            "snapshots while it ran"
        );
        rows.into_iter().filter(|r| r.snapshot == last).collect()
    }

    fn patterns(i: usize) -> Vec<bool> {
        vec![i.is_multiple_of(2), !i.is_multiple_of(3), i % 4 != 1]
    }

    #[test]
    fn live_final_snapshot_equals_the_offline_counts() {
        let outcomes: Vec<PairedOutcome> = (0..60).map(outcome).collect();
        let trajectories: Vec<Trajectory> = (0..30).map(|i| trajectory(i, patterns(i))).collect();
        let offline = StatsCounts::from_records(&outcomes, &trajectories)
            .unwrap()
            .snapshot(&cfg(), 0)
            .unwrap();
        let strip = |rows: Vec<MetricRow>| -> Vec<MetricRow> {
            rows.into_iter()
                .map(|r| MetricRow { snapshot: 0, ..r })
                .collect()
        };
        for workers in [1, 2] {
            let (rows, table) = run(
                workers,
                outcomes.clone(),
                trajectories.clone(),
                StatsSeed::default(),
                None,
            );
            assert_eq!(strip(final_rows(rows)), offline, "{workers} workers");
            assert_eq!(table.outcomes, 60);
            assert_eq!(table.last_error, None);
        }
        // Seeded with the first 40 outcomes and 20 trajectories (as a resumed run is), fed
        // everything again: what the seed holds is skipped, the rest is counted.
        let seed = StatsSeed {
            counts: StatsCounts::from_records(&outcomes[..40], &trajectories[..20]).unwrap(),
            outcome_keys: Arc::new(
                outcomes[..40]
                    .iter()
                    .map(|o| {
                        (
                            o.item_id.clone(),
                            comparison_label(&o.native_arm, &o.serial_arm),
                        )
                    })
                    .collect(),
            ),
            trajectory_keys: Arc::new(
                trajectories[..20]
                    .iter()
                    .map(|t| (t.item_id.clone(), t.arm.to_string()))
                    .collect(),
            ),
        };
        let (rows, table) = run(2, outcomes, trajectories, seed, None);
        assert_eq!(strip(final_rows(rows)), offline);
        assert_eq!(table.outcomes, 60);
    }

    #[test]
    fn a_failed_snapshot_is_a_metrics_row_and_a_console_line() {
        let outcomes: Vec<PairedOutcome> = (0..30).map(outcome).collect();
        // A TeacherForced trajectory with 2 position outcomes for length 3.
        let trajectories = vec![trajectory(1, vec![true, false])];
        let (rows, table) = run(1, outcomes, trajectories, StatsSeed::default(), None);
        // The snapshot taken after the bad trajectory arrived fails: one error row, naming it.
        let errors: Vec<&MetricRow> = rows.iter().filter(|r| r.metric == SNAPSHOT_ERROR).collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].comparison.contains("it001"),
            "{}",
            errors[0].comparison
        );
        assert!(errors[0].comparison.contains("position outcomes"));
        assert!(
            rows.iter()
                .filter(|r| r.snapshot == errors[0].snapshot)
                .all(|r| r.metric == SNAPSHOT_ERROR),
            "a failed snapshot has no metric rows"
        );
        // The console saw it (cleared again by a later successful snapshot).
        assert!(table.last_error.is_none_or(|e| e.contains("it001")));
        assert_eq!(table.failed_snapshots, 1);
    }

    /// An observer sees every successful snapshot with its counts, in order, and the last
    /// one it sees is the final snapshot.
    #[test]
    fn the_observer_sees_each_snapshot_with_its_counts() {
        let outcomes: Vec<PairedOutcome> = (0..40).map(outcome).collect();
        type Seen = Vec<(u64, u64, Vec<MetricRow>)>;
        let seen: Arc<Mutex<Seen>> = Arc::default();
        let s = seen.clone();
        let observer = SnapshotObserver(Arc::new(move |counts, n, rows| {
            s.lock()
                .unwrap()
                .push((n, counts.outcomes(), rows.to_vec()));
        }));
        let (rows, table) = run(
            1,
            outcomes,
            Vec::new(),
            StatsSeed::default(),
            Some(observer),
        );
        let seen = seen.lock().unwrap();
        assert!(seen.len() >= 2, "{} snapshots seen", seen.len());
        assert!(seen.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        let (last, counted, last_rows) = seen.last().unwrap();
        assert_eq!(*counted, 40);
        assert_eq!(*last_rows, final_rows(rows.clone()));
        assert_eq!(Some(*last + 1), Some(table.snapshots));
        assert!(table.last_snapshot_at.is_some());
    }
}
