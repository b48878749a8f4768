//! The audit tables of the coverage report: the plan audit, probability sums, quantization
//! and renormalization, the pair's closing rule, scoring rules, missing decisions.

use c2s_stats::coverage::CoverageSummary;

use super::super::doc::Table;
use super::{opt, rate_cell, signed4, signed6, strings};
use c2s_rundir::{RunPlan, TokenAudit};

/// Probability sums per model.
pub fn prob_sums_table(s: &CoverageSummary) -> Table {
    Table {
        text_columns: 1,
        header: strings(&[
            "Model",
            "Decisions",
            "Sum deviating > 0.001",
            "Max |sum − 1|",
            "With raw scores",
            "Choice ≠ largest raw score",
        ]),
        rows: s
            .audit
            .prob_sums
            .iter()
            .map(|p| {
                vec![
                    p.model.clone(),
                    p.decisions.to_string(),
                    p.deviating.to_string(),
                    format!("{:.2e}", p.max_deviation),
                    p.with_raw_scores.to_string(),
                    p.choice_not_raw_argmax.to_string(),
                ]
            })
            .collect(),
        notes: vec![
            "Every non-missing decision (both splits, every set); nothing is repaired. The \
             ordinary-score view renormalizes the ordinary options only. The last column \
             checks each choice against the engine's raw log-likelihoods under the run's \
             scoring rule (\"One native choice is 0.01 below another reported probability\")."
                .to_string(),
        ],
    }
}

/// Point AUROC before and after quantization per cell and score.
pub fn quantization_table(s: &CoverageSummary) -> Table {
    let d = s.audit.quantize_decimals;
    Table {
        text_columns: 5,
        header: vec![
            "Model".into(),
            "Task".into(),
            "k".into(),
            "Names".into(),
            "Score".into(),
            "AUROC".into(),
            format!("AUROC, {d} decimals"),
            "Change".into(),
            "AUROC, renormalized".into(),
            "Change".into(),
        ],
        rows: s
            .audit
            .quantization
            .iter()
            .map(|q| {
                vec![
                    q.model.clone(),
                    q.task.clone(),
                    q.k.to_string(),
                    q.names.as_str().to_string(),
                    q.score.as_str().to_string(),
                    opt(q.auroc, 4),
                    opt(q.quantized_auroc, 4),
                    signed4(q.change),
                    opt(q.renormalized_auroc, 6),
                    signed6(q.renormalization_change),
                ]
            })
            .collect(),
        notes: vec![format!(
            "Every probability rounded to {d} decimals (half to even), choices kept as \
             recorded; and every distribution divided by its sum (\"Renormalizing … \
             distributions\"); all test texts."
        )],
    }
}

/// The plan audit's totals beside the document's, per run directory.
pub fn plan_totals_table(plans: &[RunPlan]) -> Table {
    let mut rows = Vec::new();
    for p in plans {
        let Some(a) = &p.audit else { continue };
        for d in &a.document {
            let ours = match d.what.as_str() {
                "cases" => a.cases,
                "requests" => a.requests,
                "pairs" => a.pairs,
                _ => a.test_requests,
            };
            rows.push(vec![
                p.run_dir.clone(),
                d.what.clone(),
                ours.to_string(),
                d.value.to_string(),
                d.quote.clone(),
            ]);
        }
    }
    Table {
        text_columns: 2,
        header: strings(&[
            "Run",
            "Total",
            "Ours",
            "Document",
            "Where the document says it",
        ]),
        rows,
        notes: vec![
            "The document's totals are over its own four tasks, sample and two models; ours over \
             this run's cases and plan. Pairs = present/absent request pairs (a case, k, name \
             variant and none choice); test requests = the requests of test texts (the \
             document's replay count)."
                .to_string(),
        ],
    }
}

/// The plan audit per task and its checks.
pub fn plan_tasks_table(plans: &[RunPlan]) -> Table {
    let mut rows = Vec::new();
    for p in plans {
        let Some(a) = &p.audit else { continue };
        for t in &a.tasks {
            rows.push(vec![
                p.run_dir.clone(),
                t.task.clone(),
                t.calibration_cases.to_string(),
                t.test_cases.to_string(),
                t.requests.to_string(),
                t.test_requests.to_string(),
                t.full_set_requests.to_string(),
                t.pairs.to_string(),
                t.ks.iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
            ]);
        }
    }
    Table {
        text_columns: 2,
        header: strings(&[
            "Run",
            "Task",
            "Calibration cases",
            "Test cases",
            "Requests",
            "Test requests",
            "Full-set requests",
            "Pairs",
            "k",
        ]),
        rows,
        notes: Vec::new(),
    }
}

/// The plan audit's checks, one row per run directory.
pub fn plan_checks_table(plans: &[RunPlan]) -> Table {
    Table {
        text_columns: 1,
        header: strings(&[
            "Run",
            "Name-variant mismatches",
            "Pair mismatches",
            "None not last",
            "Catalogue metadata in a request",
            "Duplicate case ids",
            "Duplicate texts",
            "Across splits",
            "Cases that cannot run",
        ]),
        rows: plans
            .iter()
            .filter_map(|p| {
                let a = p.audit.as_ref()?;
                let c = &a.checks;
                Some(vec![
                    p.run_dir.clone(),
                    c.name_variant_mismatches.to_string(),
                    c.pair_mismatches.to_string(),
                    c.none_not_last.to_string(),
                    c.metadata_leaks.to_string(),
                    c.duplicate_case_ids.to_string(),
                    c.duplicate_texts.to_string(),
                    c.cross_split_duplicate_texts.to_string(),
                    a.unrunnable.len().to_string(),
                ])
            })
            .collect(),
        notes: vec![
            "Every request of every case rendered again, apart from the run: natural and \
             neutral requests offer the same labels in the same order with the same \
             descriptions; a present set and its absent twin differ only in the reference's \
             slot and are closed together; none is last; a request holds the question, the \
             options' names and descriptions, the response format and the text, and nothing \
             else of the catalogue; normalized texts occur once (there is no pilot set)."
                .to_string(),
        ],
    }
}

/// Pairs scored under different closing rules, per model.
pub fn pair_closing_table(s: &CoverageSummary) -> Table {
    Table {
        text_columns: 1,
        header: strings(&[
            "Model",
            "Pairs with raw scores",
            "Tokenized differently",
            "First",
        ]),
        rows: s
            .audit
            .pair_closing
            .iter()
            .map(|p| {
                vec![
                    p.model.clone(),
                    p.pairs.to_string(),
                    p.mismatched.to_string(),
                    p.examples.join(", "),
                ]
            })
            .collect(),
        notes: vec![
            "A present set and its absent twin share every option but one; a shared option \
             with another token count in the two sets was closed with the end token in one \
             and not the other. The pair rule closes both when any name of the pair prefixes \
             another, so this is 0."
                .to_string(),
        ],
    }
}

/// How often another scoring rule changes the choice.
pub fn rule_changes_table(s: &CoverageSummary) -> Table {
    Table {
        text_columns: 4,
        header: strings(&[
            "Model",
            "Task",
            "Recorded rule",
            "Other rule",
            "Decisions",
            "Choice changed",
            "Native rejection changed",
            "Accuracy, recorded",
            "Accuracy, other",
        ]),
        rows: s
            .audit
            .rule_changes
            .iter()
            .map(|r| {
                vec![
                    r.model.clone(),
                    r.task.clone(),
                    r.recorded.as_str().to_string(),
                    r.other.as_str().to_string(),
                    r.decisions.to_string(),
                    r.choice_changed.to_string(),
                    r.rejection_changed.to_string(),
                    rate_cell(&r.accuracy_recorded),
                    rate_cell(&r.accuracy_other),
                ]
            })
            .collect(),
        notes: vec![
            "The stored token log-probabilities of every non-missing decision read under \
             another rule: summed (the whole name), mean_per_token, first_token. Accuracy: \
             present sets without none. `choice2seq coverage --scoring RULE` recomputes every \
             figure under a rule."
                .to_string(),
        ],
    }
}

/// Missing decisions per model, task, split and reason.
pub fn missing_table(s: &CoverageSummary) -> Table {
    Table {
        text_columns: 4,
        header: strings(&["Model", "Task", "Split", "Reason", "Count"]),
        rows: s
            .missing
            .iter()
            .map(|m| {
                vec![
                    m.model.clone(),
                    m.task.clone(),
                    m.split.as_str().to_string(),
                    m.error.clone(),
                    m.count.to_string(),
                ]
            })
            .collect(),
        notes: vec![
            "A missing decision (a failed request, no or misaligned probabilities, no none \
             probability where offered) is counted here and in the cells' Missing column, never \
             as a rejection or an error."
                .to_string(),
        ],
    }
}

/// The token replay per run directory: every request's tokenization replayed with the run's
/// model file (`choice2seq coverage --tokens`), among them the option-capping check.
pub fn token_replay_table(audits: &[(String, Result<TokenAudit, String>)]) -> Table {
    Table {
        text_columns: 1,
        header: strings(&[
            "Run",
            "Requests",
            "Longest prompt (tokens)",
            "Prompt lengths not reproduced",
            "Prompts not intact",
            "Options capped",
            "Option collisions",
            "Closed by the end token (by the pair only)",
            "Option token counts not reproduced",
        ]),
        rows: audits
            .iter()
            .map(|(run, audit)| match audit {
                Ok(a) => vec![
                    run.clone(),
                    a.requests.to_string(),
                    a.max_prompt_tokens.to_string(),
                    a.length_mismatches.to_string(),
                    a.not_intact.to_string(),
                    a.options_capped.to_string(),
                    a.collisions.to_string(),
                    format!(
                        "{} ({})",
                        a.closed_with_end_token, a.closed_by_the_pair_only
                    ),
                    a.token_count_mismatches.to_string(),
                ],
                Err(why) => {
                    let mut row = vec![format!("{run}: not replayed: {why}")];
                    row.resize(9, super::UNDEFINED.to_string());
                    row
                }
            })
            .collect(),
        notes: vec![
            "Each request of requests/ is rendered and tokenized again with the model file \
             the manifest names, at the manifest's template date. Not intact: the user \
             message (instruction, every option, the text) is not in the decoded prompt \
             (shortening or truncation). Options capped: a scored option not shown in full \
             (fewer shown than scored, shown otherwise than scored, or tokens that do not \
             decode back to the name). Every column but the first three should be 0."
                .to_string(),
        ],
    }
}
