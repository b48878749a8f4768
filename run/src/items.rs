//! The item protocol's dataflow of one worker: validate items, expand them into arms, the
//! Serial feedback loop through the engine, pairing, live statistics, and the trajectory,
//! outcome and metric sinks beside the shared request and reject sinks (`worker`).

use std::sync::Arc;
use std::time::Duration;

use timely::dataflow::operators::{Concat, Input, Probe};
use timely::worker::Worker;

use c2s_operators::expand::expand;
use c2s_operators::live_stats::{live_stats, SnapshotPolicy};
use c2s_operators::pairing::{pair, PairSpec};
use c2s_operators::serial_loop::serial_loop;
use c2s_operators::sink_op::sink;
use c2s_operators::validate::validate;
use c2s_protocol::{ControllerConfig, LexiconRef};

use super::outputs::{metric_sink, outcome_sink, trajectory_sink};
use super::shared::Shared;
use super::worker::{finish, sink_records, WorkerParts, PART_CHECK};

/// One worker of an item run: its datasets (trajectories, outcomes, metrics) and stages.
pub fn item_worker_main(worker: &mut Worker, shared: &Arc<Shared>) -> anyhow::Result<()> {
    let cfg = &shared.cfg;
    let index = worker.index();
    let WorkerParts {
        service,
        mut input,
        durable,
        processed,
        requests_out,
        rejects_out,
        prompts_out,
    } = WorkerParts::start(worker, shared)?;
    let dir = &shared.run_dir;
    let trajectories_out = trajectory_sink(dir, index, cfg, &shared.resume)?;
    let outcomes_out = outcome_sink(dir, index, cfg, &shared.resume)?;
    let metrics_out = metric_sink(dir, index, cfg)?;
    let sh = shared.clone();
    worker.dataflow::<u64, _, _>(|scope| {
        let incoming = scope.input_from(&mut input);
        let (items, rejects) = validate(incoming, cfg.item_policy(), cfg.run.duplicate_id_window);
        let plans = std::sync::Arc::new(
            cfg.copy_plans
                .as_ref()
                .map(|c| c.plans.clone())
                .unwrap_or_default(),
        );
        let tasks = expand(items, cfg.arms.clone(), plans);
        let ccfg = ControllerConfig {
            option_seed: cfg.run.option_seed,
            lexicon: lexicon(&cfg.run.wordnet_dir),
            tokens: sh.tokens.clone(),
        };
        let out = serial_loop(
            tasks,
            service.clone(),
            sh.runtime.clone(),
            ccfg,
            sh.counters.clone(),
            sh.writes.clone(),
        );
        let copy_arms: Vec<String> = cfg
            .arms
            .iter()
            .filter(|a| a.arm.is_copy())
            .map(c2s_records::ArmSpec::label)
            .collect();
        let pairs = cfg
            .comparisons
            .iter()
            .map(|(reference, compared)| PairSpec {
                by_fidelity: copy_arms.contains(reference) && copy_arms.contains(compared),
                reference: reference.clone(),
                compared: compared.clone(),
            })
            .collect();
        let outcomes = pair(out.trajectories.clone(), pairs);
        let policy = SnapshotPolicy {
            every_outcomes: cfg.stats.snapshot_every,
            every: Duration::from_secs_f64(cfg.stats.snapshot_seconds),
            first: sh.resume.next_snapshot,
        };
        let metrics = live_stats(
            outcomes.clone(),
            out.trajectories.clone(),
            c2s_rundir::stats_config_of(&cfg.stats),
            policy,
            sh.resume.stats.clone(),
            sh.live.clone(),
        );
        let outcomes = outcomes.probe_with(&processed);
        let writes = &sh.writes;
        let written = sink_records(
            (out.trajectories, trajectories_out, "trajectories"),
            out.exchanges,
            rejects.concat(out.rejects),
            (requests_out, rejects_out, prompts_out),
            &processed,
            writes,
        );
        let outcomes_written = sink(
            outcomes,
            outcomes_out,
            "outcomes",
            PART_CHECK,
            writes.clone(),
        );
        let metrics_written = sink(metrics, metrics_out, "metrics", PART_CHECK, writes.clone());
        written
            .concat(outcomes_written)
            .concat(metrics_written)
            .probe_with(&durable);
    });
    finish(
        worker,
        shared,
        service,
        input,
        (&durable, &processed),
        cfg.arms.len() as u64,
    )
}

/// WordNet's index for the lexical membership classes (D.17), loaded once per process and kept
/// for its lifetime (every worker's controllers share it). `None`, with a warning, when the
/// directory cannot be read: lexical non-candidate outputs are then `outside`.
fn lexicon(dir: &std::path::Path) -> Option<LexiconRef> {
    static LEXICON: std::sync::OnceLock<Option<LexiconRef>> = std::sync::OnceLock::new();
    *LEXICON.get_or_init(|| match c2s_banks::wordnet::WordIndex::load(dir) {
        Ok(index) => Some(LexiconRef(Box::leak(Box::new(index)))),
        Err(e) => {
            tracing::warn!(
                "{e}: lexical outputs outside the candidates are classified `outside` \
                 (set [run] wordnet_dir to WordNet 3.0's dict directory for D.17's classes)"
            );
            None
        }
    })
}
