//! The dataflow of one worker, and its driving loop: feed items in epochs with backpressure,
//! step the worker, commit Kafka offsets of epochs whose outputs are durable, stop on Ctrl-C.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::operators::{Concat, Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle, StreamVec};
use timely::worker::Worker;

use c2s_operators::expand::expand;
use c2s_operators::live_stats::{live_stats, SnapshotPolicy};
use c2s_operators::messages::{Exchange, Incoming, Reject};
use c2s_operators::pairing::{pair, PairSpec};
use c2s_operators::serial_loop::serial_loop;
use c2s_operators::sink_op::{sink, WriteHealth};
use c2s_operators::validate::validate;
use c2s_protocol::{ControllerConfig, LexiconRef};
use c2s_sinks::{RejectRow, RequestRow};

use super::console::Console;
use super::feed::Feeder;
use super::outputs::{
    metric_sink, outcome_sink, reject_sink, request_sink, stats_config, trajectory_sink,
    DatasetSink,
};
use super::Shared;

/// Items per epoch: the unit of progress tracking, backpressure and offset commits.
const EPOCH_ITEMS: usize = 4;

pub fn worker_main(worker: &mut Worker, shared: &Arc<Shared>) -> anyhow::Result<()> {
    if shared.cfg.coverage.is_some() {
        return super::coverage::coverage_worker_main(worker, shared);
    }
    if shared.cfg.dialogue.is_some() {
        return super::dialogue::dialogue_worker_main(worker, shared);
    }
    let cfg = &shared.cfg;
    let index = worker.index();
    let service = super::engine::start_service(
        cfg,
        &shared.identity,
        shared.template_time,
        shared.tally.clone(),
    )
    .context("starting the engine")?;
    service.preload(shared.resume.answers.iter().cloned());
    let part_check = Duration::from_millis(200);
    let model = service.identity().label();
    let dir = &shared.run_dir;
    let trajectories_out = trajectory_sink(dir, index, cfg, &shared.resume)?;
    let requests_out = request_sink(dir, index, cfg, &shared.resume, model.clone())?;
    let rejects_out = reject_sink(dir, index, cfg, &shared.resume, shared.counters.clone())?;
    let outcomes_out = outcome_sink(dir, index, cfg, &shared.resume)?;
    let metrics_out = metric_sink(dir, index, cfg)?;
    let mut input: InputHandle<u64, CapacityContainerBuilder<Vec<Incoming>>> = InputHandle::new();
    // `durable`: every output of an epoch is in a closed part (Kafka offsets are committed
    // then). `processed`: every trajectory, outcome and reject of an epoch exists (the
    // feeding window). Feeding on durability would tie throughput to part rolling: at most
    // `max_active_items` items per `part_seconds`.
    let probe: ProbeHandle<u64> = ProbeHandle::new();
    let processed: ProbeHandle<u64> = ProbeHandle::new();
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
            stats_config(cfg),
            policy,
            sh.resume.stats.clone(),
            sh.live.clone(),
        );
        out.trajectories.clone().probe_with(&processed);
        outcomes.clone().probe_with(&processed);
        let all_rejects = rejects.concat(out.rejects).probe_with(&processed);
        let writes = sh.writes.clone();
        let d1 = sink(
            out.trajectories,
            trajectories_out,
            "trajectories",
            part_check,
            writes.clone(),
        );
        let d23 = sink_requests_and_rejects(
            (out.exchanges, requests_out),
            (all_rejects, rejects_out),
            part_check,
            &writes,
        );
        let d4 = sink(
            outcomes,
            outcomes_out,
            "outcomes",
            part_check,
            writes.clone(),
        );
        let d5 = sink(metrics, metrics_out, "metrics", part_check, writes);
        d1.concat(d23).concat(d4).concat(d5).probe_with(&probe);
    });
    drive(worker, shared, input, &probe, &processed, items_done)?;
    if let Ok(mut all) = shared.engine_stats.lock() {
        all.push(service.stats());
    }
    Ok(())
}

/// Feed the sources into `input` in epochs with backpressure (at most a window of epochs not
/// yet `processed`), commit Kafka offsets of epochs whose outputs are all durable (`probe`),
/// stop on Ctrl-C, then drain. `done` counts the finished units for the progress bar.
pub(super) fn drive(
    worker: &mut Worker,
    shared: &Arc<Shared>,
    mut input: InputHandle<u64, CapacityContainerBuilder<Vec<Incoming>>>,
    probe: &ProbeHandle<u64>,
    processed: &ProbeHandle<u64>,
    done: impl Fn(&Shared) -> u64,
) -> anyhow::Result<()> {
    let cfg = &shared.cfg;
    let (index, peers) = (worker.index(), worker.peers());
    let mut feeder =
        Feeder::new(cfg, index, peers, shared.serving).context("opening the sources")?;
    let _ = shared.feeding_since.set(std::time::Instant::now());
    let mut published = std::time::Instant::now();
    let window = (cfg.inference.max_active_items / EPOCH_ITEMS).max(1) as u64;
    let mut console = (index == 0).then(|| Console::new(shared));
    let mut epoch: u64 = 0;
    // Kafka positions fed per epoch, committed once the epoch is durable.
    let mut offsets: BTreeMap<u64, Vec<(String, i32, i64)>> = BTreeMap::new();
    loop {
        shared.watch_health();
        let stopping = shared.stop.load(Ordering::SeqCst);
        if stopping || feeder.exhausted() {
            break;
        }
        // Backpressure: at most `window` epochs of items in processing, and none while an
        // output cannot be written.
        if !processed.less_than(&epoch.saturating_sub(window)) && !shared.writes.blocked() {
            let batch = feeder
                .next_batch(EPOCH_ITEMS)
                .context("reading the sources")?;
            if !batch.is_empty() {
                shared
                    .counters
                    .items_in
                    .fetch_add(batch.len() as u64, Ordering::Relaxed);
                let mut positions = Vec::new();
                for (rec, pos) in batch {
                    input.send(rec);
                    if let Some(p) = pos {
                        positions.push(p);
                    }
                }
                offsets.insert(epoch, positions);
                epoch += 1;
                input.advance_to(epoch);
            }
        }
        commit_durable(&mut feeder, &mut offsets, probe)?;
        if let Some(c) = console.as_mut() {
            c.tick(shared, done(shared));
        }
        if shared.serving && published.elapsed() >= MONITOR_EVERY {
            publish(shared, &feeder, done(shared));
            published = std::time::Instant::now();
        }
        worker.step_or_park(Some(Duration::from_millis(5)));
    }
    drop(input);
    while !probe.done() {
        shared.watch_health();
        worker.step_or_park(Some(Duration::from_millis(20)));
        commit_durable(&mut feeder, &mut offsets, probe)?;
        if let Some(c) = console.as_mut() {
            c.tick(shared, done(shared));
        }
        if shared.serving && published.elapsed() >= MONITOR_EVERY {
            publish(shared, &feeder, done(shared));
            published = std::time::Instant::now();
        }
    }
    commit_durable(&mut feeder, &mut offsets, probe)?;
    if shared.serving {
        publish(shared, &feeder, done(shared));
    }
    if let Some(c) = console.as_ref() {
        c.finish();
    }
    Ok(())
}

/// How often a served run's workers publish progress and Kafka offsets for the monitor.
const MONITOR_EVERY: Duration = Duration::from_millis(250);

/// What the live monitor reads from a worker: items done, and its Kafka partitions' offsets.
fn publish(shared: &Shared, feeder: &Feeder, done: u64) {
    shared.items_done.store(done, Ordering::Relaxed);
    let progress = feeder.kafka_progress();
    if !progress.is_empty() {
        let mut kafka = shared.kafka.lock().unwrap_or_else(|p| p.into_inner());
        for (topic, partition, p) in progress {
            kafka.insert((topic, partition), p);
        }
    }
}

/// Items whose every arm has completed (progress of this process).
fn items_done(shared: &Shared) -> u64 {
    shared.counters.trajectories.load(Ordering::Relaxed) / shared.cfg.arms.len().max(1) as u64
}

/// Commit the Kafka offsets of every epoch whose outputs are all durable.
fn commit_durable(
    feeder: &mut Feeder,
    offsets: &mut BTreeMap<u64, Vec<(String, i32, i64)>>,
    probe: &ProbeHandle<u64>,
) -> anyhow::Result<()> {
    let mut ready = Vec::new();
    while let Some((&e, _)) = offsets.first_key_value() {
        if probe.less_equal(&e) {
            break;
        }
        if let Some((_, pos)) = offsets.pop_first() {
            ready.extend(pos);
        }
    }
    if !ready.is_empty() {
        feeder.commit(&ready).context("committing Kafka offsets")?;
    }
    Ok(())
}

/// WordNet's index for the lexical membership classes (D.17), loaded once per process and kept
/// for its lifetime (every worker's controllers share it). `None`, with a warning, when the
/// directory cannot be read: lexical non-candidate outputs are then `outside`.
/// The two sinks every dataflow ends in besides its own datasets: the model exchanges
/// (`requests/`) and the rejects. The returned stream's frontier passes a time once both have
/// written it.
pub(super) fn sink_requests_and_rejects<'s>(
    (exchanges, requests_out): (
        StreamVec<'s, u64, Exchange>,
        DatasetSink<Exchange, RequestRow>,
    ),
    (rejects, rejects_out): (StreamVec<'s, u64, Reject>, DatasetSink<Reject, RejectRow>),
    part_check: Duration,
    writes: &Arc<WriteHealth>,
) -> StreamVec<'s, u64, ()> {
    let requests = sink(
        exchanges,
        requests_out,
        "requests",
        part_check,
        writes.clone(),
    );
    let rejects = sink(rejects, rejects_out, "rejects", part_check, writes.clone());
    requests.concat(rejects)
}

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
