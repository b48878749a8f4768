//! The dataflow of a dialogue-state run (`[dialogue]`, Appendix C): dialogues instead of
//! items, per-turn field rows instead of trajectories. Feeding, backpressure, Kafka offset
//! commits, resume and the Parquet sinks are the main pipeline's (see [`super::dataflow`]).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::operators::{Concat, Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;

use c2s_operators::dialogue::{construct_fields, validate_dialogues};
use c2s_operators::messages::Incoming;
use c2s_operators::sink_op::sink;

use super::dataflow::{drive, sink_requests_and_rejects};
use super::outputs::{field_turn_sink, reject_sink, request_sink};
use super::Shared;

pub fn dialogue_worker_main(worker: &mut Worker, shared: &Arc<Shared>) -> anyhow::Result<()> {
    let cfg = &shared.cfg;
    let Some(section) = cfg.dialogue.as_ref() else {
        anyhow::bail!("not a dialogue run");
    };
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
    let turns_out = field_turn_sink(dir, index, cfg, &shared.resume)?;
    let requests_out = request_sink(dir, index, cfg, &shared.resume, model)?;
    let rejects_out = reject_sink(dir, index, cfg, &shared.resume, shared.counters.clone())?;
    let mut input: InputHandle<u64, CapacityContainerBuilder<Vec<Incoming>>> = InputHandle::new();
    let probe: ProbeHandle<u64> = ProbeHandle::new();
    let processed: ProbeHandle<u64> = ProbeHandle::new();
    let specs = section.specs();
    let per_dialogue = specs.len().max(1) as u64;
    let sh = shared.clone();
    worker.dataflow::<u64, _, _>(|scope| {
        let incoming = scope.input_from(&mut input);
        let (dialogues, rejects) = validate_dialogues(incoming, cfg.run.duplicate_id_window);
        let out = construct_fields(
            dialogues,
            specs,
            service.clone(),
            sh.runtime.clone(),
            sh.counters.clone(),
        );
        out.turns.clone().probe_with(&processed);
        let all_rejects = rejects.concat(out.rejects).probe_with(&processed);
        let writes = sh.writes.clone();
        let d1 = sink(
            out.turns,
            turns_out,
            "dialogue_turns",
            part_check,
            writes.clone(),
        );
        let d23 = sink_requests_and_rejects(
            (out.exchanges, requests_out),
            (all_rejects, rejects_out),
            part_check,
            &writes,
        );
        d1.concat(d23).probe_with(&probe);
    });
    drive(worker, shared, input, &probe, &processed, move |s| {
        s.counters
            .trajectories
            .load(std::sync::atomic::Ordering::Relaxed)
            / per_dialogue
    })?;
    if let Ok(mut all) = shared.engine_stats.lock() {
        all.push(service.stats());
    }
    Ok(())
}
