//! The dataflow of a candidate-coverage run (`[coverage]`): cases instead of items, scored
//! decisions instead of trajectories. Feeding, backpressure, Kafka offset commits, resume and
//! the Parquet sinks are the main pipeline's (see [`super::worker`]).
//!
//! Before the dataflow starts, worker 0 writes the plan audit, `coverage_plan_audit.json`
//! ([`c2s_protocol::coverage_audit`]): every request of every case of the file sources
//! rendered and checked independently of the dataflow, with the planned decisions that
//! `choice2seq coverage` checks a collection against. A Kafka source has no plan known in
//! advance; the file then says so.

use std::sync::Arc;

use anyhow::Context;
use timely::dataflow::operators::{Concat, Input, Probe};
use timely::worker::Worker;

use c2s_config::{CoverageSection, RunConfig, SourceConfig};
use c2s_operators::coverage::{decide, validate_cases, DecisionPlan};
use c2s_protocol::coverage_audit::{plan_audit, PlanAudit, PlanSettings, PLAN_AUDIT_FILE};
use c2s_records::{parse_case, CoverageCase};

use super::outputs::decision_sink;
use super::shared::Shared;
use super::worker::{finish, sink_records, WorkerParts};

/// One worker of a coverage run: its `decisions/` dataset and stages.
pub fn coverage_worker_main(
    worker: &mut Worker,
    shared: &Arc<Shared>,
    section: &CoverageSection,
) -> anyhow::Result<()> {
    let cfg = &shared.cfg;
    let index = worker.index();
    if index == 0 {
        write_plan_audit(cfg, &shared.run_dir)?;
    }
    let WorkerParts {
        service,
        mut input,
        durable,
        processed,
        requests_out,
        rejects_out,
        prompts_out,
    } = WorkerParts::start(worker, shared)?;
    let decisions_out = decision_sink(&shared.run_dir, index, cfg, &shared.resume)?;
    let catalogues = Arc::new(section.loaded.clone());
    let plan = DecisionPlan {
        ks: section.ks.clone(),
        names: section.names.clone(),
        none: section.none.clone(),
        full_set: section.full_set,
        scoring: section.scoring,
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
        sink_records(
            (out.decisions, decisions_out, "decisions"),
            out.exchanges,
            rejects.concat(out.rejects),
            (requests_out, rejects_out, prompts_out),
            &processed,
            &sh.writes,
        )
        .probe_with(&durable);
    });
    let per_case = plan_size(shared);
    finish(
        worker,
        shared,
        service,
        input,
        (&durable, &processed),
        per_case,
    )
}

/// Decisions per test case when every size of `ks` is in the bank (progress only).
fn plan_size(shared: &Shared) -> u64 {
    let Some(c) = shared.cfg.coverage.as_ref() else {
        return 1;
    };
    let pairs = 2 * c.ks.len() * c.names.len() * c.none.len();
    (pairs + usize::from(c.full_set) * c.names.len()).max(1) as u64
}

/// What `coverage_plan_audit.json` holds: the audit, or why there is none.
#[derive(Debug, serde::Serialize)]
struct PlanAuditFile<'a> {
    /// The cases come from a Kafka source: no plan is known before they arrive.
    #[serde(skip_serializing_if = "Option::is_none")]
    unavailable: Option<&'a str>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    audit: Option<&'a PlanAudit>,
}

/// Every case of the run's file sources, after each source's selection and limit (as the
/// feed reads them; unreadable records are left to the run's rejects). `None` when a source
/// is a Kafka topic.
pub fn planned_cases(cfg: &RunConfig) -> anyhow::Result<Option<Vec<CoverageCase>>> {
    let mut cases = Vec::new();
    for s in &cfg.sources {
        let (records, limit, select): (Box<dyn Iterator<Item = c2s_sources::SourceRecord>>, _, _) =
            match s {
                SourceConfig::Jsonl {
                    path,
                    limit,
                    select,
                } => (
                    Box::new(
                        c2s_sources::read_jsonl(path, None)
                            .with_context(|| format!("opening {}", path.display()))?,
                    ),
                    *limit,
                    select,
                ),
                SourceConfig::Parquet {
                    path,
                    limit,
                    select,
                } => (
                    Box::new(
                        c2s_sources::read_parquet_items(path, None)
                            .with_context(|| format!("opening {}", path.display()))?,
                    ),
                    *limit,
                    select,
                ),
                SourceConfig::Kafka { .. } => return Ok(None),
            };
        let kept = records.filter(|r| match (&r.payload, select) {
            (Ok(text), Some(sel)) => sel.keeps(text),
            _ => true,
        });
        for r in kept.take(limit.unwrap_or(usize::MAX)) {
            if let Ok(case) = r
                .payload
                .as_deref()
                .map_err(|_| ())
                .and_then(|t| parse_case(t).map_err(|_| ()))
            {
                cases.push(case);
            }
        }
    }
    Ok(Some(cases))
}

/// The plan audit of a run's config: `None` when a source is a Kafka topic.
pub fn audit_plan(cfg: &RunConfig) -> anyhow::Result<Option<PlanAudit>> {
    let Some(section) = cfg.coverage.as_ref() else {
        anyhow::bail!("not a coverage run");
    };
    let Some(cases) = planned_cases(cfg)? else {
        return Ok(None);
    };
    let names = section.names.clone();
    Ok(Some(plan_audit(
        &cases,
        &section.loaded,
        &PlanSettings {
            ks: &section.ks,
            names: &names,
            none: &section.none,
            full_set: section.full_set,
        },
    )))
}

/// Write `coverage_plan_audit.json` into the run directory (atomically: a temporary file
/// renamed).
fn write_plan_audit(cfg: &RunConfig, run_dir: &std::path::Path) -> anyhow::Result<()> {
    let audit = audit_plan(cfg).context("auditing the coverage plan")?;
    let file = PlanAuditFile {
        unavailable: audit
            .is_none()
            .then_some("a Kafka source: the cases are not known before they arrive"),
        audit: audit.as_ref(),
    };
    let path = run_dir.join(PLAN_AUDIT_FILE);
    let tmp = run_dir.join(format!(".{PLAN_AUDIT_FILE}.tmp"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(&file)?)
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
    if let Some(a) = &audit {
        if !a.checks.clean() {
            tracing::warn!(
                "the coverage plan audit found problems (see {}): {:?}",
                path.display(),
                a.checks.examples
            );
        }
    }
    Ok(())
}
