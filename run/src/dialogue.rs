//! The dataflow of a dialogue-state run (`[dialogue]`, Appendix C): dialogues instead of
//! items, per-turn field rows instead of trajectories. Feeding, backpressure, Kafka offset
//! commits, resume and the Parquet sinks are the main pipeline's (see [`super::worker`]).

use std::sync::Arc;

use timely::dataflow::operators::{Concat, Input, Probe};
use timely::worker::Worker;

use c2s_config::DialogueSection;
use c2s_operators::dialogue::{construct_fields, validate_dialogues};

use super::outputs::field_turn_sink;
use super::shared::Shared;
use super::worker::{finish, sink_records, WorkerParts};

/// One worker of a dialogue run: its `dialogue_turns/` dataset and stages.
pub fn dialogue_worker_main(
    worker: &mut Worker,
    shared: &Arc<Shared>,
    section: &DialogueSection,
) -> anyhow::Result<()> {
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
    let turns_out = field_turn_sink(&shared.run_dir, index, cfg, &shared.resume)?;
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
        sink_records(
            (out.turns, turns_out, "dialogue_turns"),
            out.exchanges,
            rejects.concat(out.rejects),
            (requests_out, rejects_out, prompts_out),
            &processed,
            &sh.writes,
        )
        .probe_with(&durable);
    });
    finish(
        worker,
        shared,
        service,
        input,
        (&durable, &processed),
        per_dialogue,
    )
}
