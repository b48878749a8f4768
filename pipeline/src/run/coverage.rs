//! The dataflow of a candidate-coverage run (`[coverage]`): cases instead of items, scored
//! decisions instead of trajectories. Feeding, backpressure, Kafka offset commits, resume and
//! the Parquet sinks are the main pipeline's (see [`super::dataflow`]).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::operators::{Concat, Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;

use c2s_operators::coverage::{decide, validate_cases, DecisionPlan};
use c2s_operators::messages::Incoming;
use c2s_operators::sink_op::sink;

use super::dataflow::{drive, sink_requests_and_rejects};
use super::outputs::{decision_sink, reject_sink, request_sink};
use super::Shared;

pub fn coverage_worker_main(worker: &mut Worker, shared: &Arc<Shared>) -> anyhow::Result<()> {
    let cfg = &shared.cfg;
    let Some(section) = cfg.coverage.as_ref() else {
        anyhow::bail!("not a coverage run");
    };
    let index = worker.index();
    let service = super::engine::start_service(cfg, &shared.identity, shared.template_time)
        .context("starting the engine")?;
    service.preload(shared.resume.answers.iter().cloned());
    let part_check = Duration::from_millis(200);
    let model = service.identity().label();
    let dir = &shared.run_dir;
    let decisions_out = decision_sink(dir, index, cfg, &shared.resume)?;
    let requests_out = request_sink(dir, index, cfg, &shared.resume, model)?;
    let rejects_out = reject_sink(dir, index, cfg, &shared.resume, shared.counters.clone())?;
    let mut input: InputHandle<u64, CapacityContainerBuilder<Vec<Incoming>>> = InputHandle::new();
    let probe: ProbeHandle<u64> = ProbeHandle::new();
    let processed: ProbeHandle<u64> = ProbeHandle::new();
    let catalogues = Arc::new(section.loaded.clone());
    let plan = DecisionPlan {
        ks: section.ks.clone(),
        names: section.name_variants(),
        none: section.none.clone(),
        full_set: section.full_set,
    };
    let sh = shared.clone();
    worker.dataflow::<u64, _, _>(|scope| {
        let incoming = scope.input_from(&mut input);
        let (cases, rejects) =
            validate_cases(incoming, catalogues.clone(), cfg.run.duplicate_id_window);
        let out = decide(
            cases,
            catalogues,
            plan,
            service.clone(),
            sh.runtime.clone(),
            sh.counters.clone(),
        );
        out.decisions.clone().probe_with(&processed);
        let all_rejects = rejects.concat(out.rejects).probe_with(&processed);
        let failed = sh.failed.clone();
        let d1 = sink(
            out.decisions,
            decisions_out,
            "decisions",
            part_check,
            failed.clone(),
        );
        let d23 = sink_requests_and_rejects(
            (out.exchanges, requests_out),
            (all_rejects, rejects_out),
            part_check,
            &failed,
        );
        d1.concat(d23).probe_with(&probe);
    });
    let per_case = plan_size(shared);
    drive(worker, shared, input, &probe, &processed, move |s| {
        s.counters
            .trajectories
            .load(std::sync::atomic::Ordering::Relaxed)
            / per_case
    })?;
    if let Ok(mut all) = shared.engine_stats.lock() {
        all.push(service.stats());
    }
    Ok(())
}

/// Decisions per test case when every size of `ks` is in the bank (progress only).
fn plan_size(shared: &Shared) -> u64 {
    let Some(c) = shared.cfg.coverage.as_ref() else {
        return 1;
    };
    let pairs = 2 * c.ks.len() * c.names.len() * c.none.len();
    (pairs + usize::from(c.full_set) * c.names.len()).max(1) as u64
}
