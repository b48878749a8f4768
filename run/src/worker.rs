//! The skeleton every protocol's worker shares. [`WorkerParts::start`] gives a worker its
//! engine's batching service, the `requests/`, `rejects/` and `prompts/` sinks, the input the
//! sources feed and the probes; the protocol (`items`, `coverage`, `dialogue`) builds its own
//! stages and datasets in one dataflow and ends it with [`sink_records`] (its records, the
//! exchanges, their prompts and the rejects to their datasets); then [`finish`] runs
//! [`drive`] — feed the sources in epochs with backpressure, commit Kafka offsets of epochs
//! whose outputs are durable, stop on Ctrl-C, drain — and adds the worker's engine counters
//! to the run's.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::operators::{Concat, Probe};
use timely::dataflow::{InputHandle, ProbeHandle, StreamVec};
use timely::worker::Worker;

use c2s_operators::messages::{Exchange, Incoming, Reject};
use c2s_operators::sink_op::{sink, RowSink, WriteHealth};
use c2s_sinks::{RejectRow, RequestRow};

use c2s_model::InferenceService;

use super::console::Console;
use super::feed::Feeder;
use super::outputs::{reject_sink, request_sink, DatasetSink};
use super::prompts::{prompt_output, sink_prompts, PromptOutput};
use super::shared::Shared;

/// How often a sink checks whether its open part is due to roll.
pub(super) const PART_CHECK: Duration = Duration::from_millis(200);

/// What one worker of any protocol starts with.
pub(super) struct WorkerParts {
    /// The engine's batching service, with the answers a resumed run already has.
    pub service: InferenceService,
    /// Where [`drive`] feeds the sources' records, an epoch at a time.
    pub input: InputHandle<u64, CapacityContainerBuilder<Vec<Incoming>>>,
    /// Passes an epoch once every output of it is in a closed part (Kafka offsets are
    /// committed then).
    pub durable: ProbeHandle<u64>,
    /// Passes an epoch once every record and reject of it exists: the feeding window.
    /// Feeding on durability would tie throughput to part rolling (at most
    /// `max_active_items` items per `part_seconds`).
    pub processed: ProbeHandle<u64>,
    pub requests_out: DatasetSink<Exchange, RequestRow>,
    pub rejects_out: DatasetSink<Reject, RejectRow>,
    /// The `prompts/` writer (`None` where no prompt is rendered: the simulated engine).
    pub prompts_out: Option<PromptOutput>,
}

impl WorkerParts {
    /// Start this worker's engine and open its request and reject sinks.
    pub fn start(worker: &Worker, shared: &Shared) -> anyhow::Result<WorkerParts> {
        let cfg = &shared.cfg;
        let index = worker.index();
        let service = super::engine::start_service(
            cfg,
            &shared.identity,
            shared.template_time,
            shared.tally.clone(),
            shared.outages.clone(),
        )
        .context("starting the engine")?;
        service.preload(shared.resume.answers.iter().cloned());
        let dir = &shared.run_dir;
        let model = service.identity().label();
        Ok(WorkerParts {
            requests_out: request_sink(dir, index, cfg, &shared.resume, model)?,
            rejects_out: reject_sink(dir, index, cfg, &shared.resume, shared.counters.clone())?,
            prompts_out: match &shared.prompts {
                Some(recorder) => Some(prompt_output(
                    dir,
                    index,
                    cfg,
                    &shared.resume,
                    recorder.clone(),
                )?),
                None => None,
            },
            service,
            input: InputHandle::new(),
            durable: ProbeHandle::new(),
            processed: ProbeHandle::new(),
        })
    }
}

/// Run the worker's dataflow to the end ([`drive`]), then add its engine counters to the
/// run's. `records_per_unit` is how many completed records (trajectories, decisions, dialogue
/// runs) make one unit of the progress display (an item, a case, a dialogue).
pub(super) fn finish(
    worker: &mut Worker,
    shared: &Arc<Shared>,
    service: InferenceService,
    input: InputHandle<u64, CapacityContainerBuilder<Vec<Incoming>>>,
    (durable, processed): (&ProbeHandle<u64>, &ProbeHandle<u64>),
    records_per_unit: u64,
) -> anyhow::Result<()> {
    let done =
        move |s: &Shared| s.counters.trajectories.load(Ordering::Relaxed) / records_per_unit.max(1);
    drive(worker, shared, input, durable, processed, done)?;
    if let Ok(mut all) = shared.engine_stats.lock() {
        all.push(service.stats());
    }
    Ok(())
}

/// Items per epoch: the unit of progress tracking, backpressure and offset commits.
const EPOCH_ITEMS: usize = 4;

/// Feed the sources into `input` in epochs with backpressure (at most a window of epochs not
/// yet `processed`), commit Kafka offsets of epochs whose outputs are all durable (`probe`),
/// stop on Ctrl-C, then drain. `done` counts the finished units for the progress bar.
fn drive(
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
        // output cannot be written or the remote server cannot be reached.
        if !processed.less_than(&epoch.saturating_sub(window))
            && !shared.writes.blocked()
            && !shared.outage_on()
        {
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
        feeder.watch();
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
        feeder.watch();
        if let Some(c) = console.as_mut() {
            c.tick(shared, done(shared));
        }
        if shared.serving && published.elapsed() >= MONITOR_EVERY {
            publish(shared, &feeder, done(shared));
            published = std::time::Instant::now();
        }
    }
    commit_durable(&mut feeder, &mut offsets, probe)?;
    feeder
        .finish_commits()
        .context("committing Kafka offsets")?;
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

/// The end every protocol's dataflow shares. Its records (`name`: `trajectories`,
/// `decisions`, `dialogue_turns`) and all its rejects count as processed once they exist (the
/// feeding window, [`WorkerParts::processed`]); then they, the model exchanges and the
/// exchanges' prompts go to their datasets. The returned stream's frontier passes a time once
/// those sinks have written it: the protocol adds its other datasets' sinks and probes
/// durability.
pub(super) fn sink_records<'s, D: Clone + 'static, S: RowSink<D>>(
    (records, records_out, name): (StreamVec<'s, u64, D>, S, &str),
    exchanges: StreamVec<'s, u64, Exchange>,
    rejects: StreamVec<'s, u64, Reject>,
    (requests_out, rejects_out, prompts_out): (
        DatasetSink<Exchange, RequestRow>,
        DatasetSink<Reject, RejectRow>,
        Option<PromptOutput>,
    ),
    processed: &ProbeHandle<u64>,
    writes: &Arc<WriteHealth>,
) -> StreamVec<'s, u64, ()> {
    let records = records.probe_with(processed);
    let rejects = rejects.probe_with(processed);
    let written = sink(records, records_out, name, PART_CHECK, writes.clone());
    let prompts = prompts_out.map(|out| sink_prompts(exchanges.clone(), out, writes));
    let requests = sink(
        exchanges,
        requests_out,
        "requests",
        PART_CHECK,
        writes.clone(),
    );
    let rejects = sink(rejects, rejects_out, "rejects", PART_CHECK, writes.clone());
    let written = written.concat(requests).concat(rejects);
    match prompts {
        Some(prompts) => written.concat(prompts),
        None => written,
    }
}
