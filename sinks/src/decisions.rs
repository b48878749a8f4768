//! The `decisions` dataset of a candidate-coverage run: one row per scored request of a case
//! (a candidate set under a name variant, with or without the none option). The derived
//! columns (choice, rejection, coverage scores) are written for Arrow users; the statistics
//! recompute them from `labels` and `probabilities`. The engine's raw log-likelihoods
//! (`option_logprobs`, and each option's tokens in `option_token_counts` /
//! `option_token_logprobs`) were added later: parts written before read them as null.

use std::sync::Arc;

use arrow::datatypes::{DataType, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;

use c2s_records::{
    CoverageSplit, Decision, DecisionSpec, NameVariant, OptionLogprobs, ScoringRule, SetKind,
    NONE_LABEL,
};

use crate::columns::{self as col, field, list_field, next, Cols};
use crate::error::RowError;
use crate::row::Row;

/// One row of `decisions/`.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionRow(pub Decision);

impl From<Decision> for DecisionRow {
    fn from(d: Decision) -> Self {
        DecisionRow(d)
    }
}

fn bad(column: &str, value: &str) -> RowError {
    RowError::new(column, format!("unknown value `{value}`"))
}

/// The three raw-score columns of `raw`: per-option sums, per-option token counts, and every
/// option's token log-probabilities one after the other.
pub(crate) fn raw_columns(raw: Option<&OptionLogprobs>) -> (Option<Vec<u32>>, Option<Vec<f64>>) {
    match raw {
        Some(r) => (
            Some(r.token_counts()),
            Some(r.token_logprobs.iter().flatten().copied().collect()),
        ),
        None => (None, None),
    }
}

/// Raw scores from their columns (all null: none; partly null or inconsistent: an error).
pub(crate) fn raw_from_columns(
    logprobs: Option<Vec<f64>>,
    counts: Option<Vec<u32>>,
    flat: Option<Vec<f64>>,
) -> Result<Option<OptionLogprobs>, RowError> {
    match (logprobs, counts, flat) {
        (None, None, None) => Ok(None),
        (Some(logprobs), Some(counts), Some(flat)) => {
            let total: usize = counts.iter().map(|&c| c as usize).sum();
            if counts.len() != logprobs.len() || total != flat.len() {
                return Err(RowError::new(
                    "option_token_logprobs",
                    format!(
                        "{} token log-probabilities for token counts summing to {total} over {} options ({} option log-probabilities)",
                        flat.len(),
                        counts.len(),
                        logprobs.len()
                    ),
                ));
            }
            let mut at = 0;
            let token_logprobs = counts
                .iter()
                .map(|&c| {
                    let t = flat[at..at + c as usize].to_vec();
                    at += c as usize;
                    t
                })
                .collect();
            Ok(Some(OptionLogprobs {
                logprobs,
                token_logprobs,
            }))
        }
        _ => Err(RowError::new(
            "option_logprobs",
            "option_logprobs, option_token_counts and option_token_logprobs must be all null or all set",
        )),
    }
}

impl Row for DecisionRow {
    const DATASET: &'static str = "decisions";

    fn schema() -> SchemaRef {
        use DataType::{Boolean, Float64, UInt32, Utf8};
        Arc::new(Schema::new(vec![
            field("model", Utf8, false),
            field("case_id", Utf8, false),
            field("task", Utf8, false),
            field("split", Utf8, false),
            field("reference", Utf8, false),
            field("arm", Utf8, false),
            field("set", Utf8, false),
            field("k", UInt32, false),
            field("names", Utf8, false),
            field("with_none", Boolean, false),
            field("covered", Boolean, false),
            list_field("labels", Utf8, false),
            list_field("probabilities", Float64, true),
            field("choice", Utf8, true),
            field("correct", Boolean, true),
            field("rejected", Boolean, true),
            field("none_prob", Float64, true),
            field("max_prob", Float64, true),
            field("entropy", Float64, true),
            field("margin", Float64, true),
            field("prob_sum", Float64, true),
            field("request_id", Utf8, false),
            field("prompt_tokens", UInt32, false),
            field("latency_ms", Float64, false),
            field("error", Utf8, true),
            field("task_labels", UInt32, true),
            field("scoring", Utf8, true),
            list_field("option_logprobs", Float64, true),
            list_field("option_token_counts", UInt32, true),
            list_field("option_token_logprobs", Float64, true),
        ]))
    }

    fn to_batch(rows: &[Self]) -> Result<RecordBatch, ArrowError> {
        let d: Vec<&Decision> = rows.iter().map(|r| &r.0).collect();
        let answered = |x: &Decision| x.error.is_none() && !x.probabilities.is_empty();
        let scores: Vec<_> = d.iter().map(|x| x.ordinary_scores()).collect();
        let arms: Vec<String> = d.iter().map(|x| x.spec.label()).collect();
        let raws: Vec<_> = d.iter().map(|x| raw_columns(x.raw.as_ref())).collect();
        RecordBatch::try_new(
            Self::schema(),
            vec![
                col::utf8(d.iter().map(|x| x.model.as_str())),
                col::utf8(d.iter().map(|x| x.case_id.as_str())),
                col::utf8(d.iter().map(|x| x.task.as_str())),
                col::utf8(d.iter().map(|x| x.split.as_str())),
                col::utf8(d.iter().map(|x| x.reference.as_str())),
                col::utf8(arms.iter().map(String::as_str)),
                col::utf8(d.iter().map(|x| x.spec.set.as_str())),
                col::u32s(d.iter().map(|x| x.spec.k as u32)),
                col::utf8(d.iter().map(|x| x.spec.names.as_str())),
                col::bools(d.iter().map(|x| x.spec.with_none)),
                col::bools(d.iter().map(|x| x.spec.set.covered())),
                col::list_utf8(d.iter().map(|x| x.labels.as_slice())),
                col::opt_list_f64(
                    d.iter()
                        .map(|x| answered(x).then_some(x.probabilities.as_slice())),
                ),
                col::opt_utf8(d.iter().map(|x| x.choice())),
                col::opt_bools(d.iter().map(|x| x.choice().map(|c| c == x.reference))),
                col::opt_bools(d.iter().map(|x| x.choice().map(|c| c == NONE_LABEL))),
                col::opt_f64s(d.iter().map(|x| x.none_prob())),
                col::opt_f64s(scores.iter().map(|s| s.map(|s| s.max_prob))),
                col::opt_f64s(scores.iter().map(|s| s.map(|s| s.entropy))),
                col::opt_f64s(scores.iter().map(|s| s.map(|s| s.margin))),
                col::opt_f64s(d.iter().map(|x| answered(x).then(|| x.prob_sum()))),
                col::utf8(d.iter().map(|x| x.request_id.as_str())),
                col::u32s(d.iter().map(|x| x.prompt_tokens)),
                col::f64s(d.iter().map(|x| x.latency_ms)),
                col::opt_utf8(d.iter().map(|x| x.error.as_deref())),
                col::opt_u32s(d.iter().map(|x| x.task_labels)),
                col::opt_utf8(d.iter().map(|x| Some(x.scoring.as_str()))),
                col::opt_list_f64(
                    d.iter()
                        .map(|x| x.raw.as_ref().map(|r| r.logprobs.as_slice())),
                ),
                col::opt_list_u32(raws.iter().map(|r| r.0.as_deref())),
                col::opt_list_f64(raws.iter().map(|r| r.1.as_deref())),
            ],
        )
    }

    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, RowError> {
        let c = Cols::new(batch, Self::schema());
        let mut model = c.utf8("model")?.into_iter();
        let mut case_id = c.utf8("case_id")?.into_iter();
        let mut task = c.utf8("task")?.into_iter();
        let mut split = c.utf8("split")?.into_iter();
        let mut reference = c.utf8("reference")?.into_iter();
        let mut set = c.utf8("set")?.into_iter();
        let mut k = c.u32("k")?.into_iter();
        let mut names = c.utf8("names")?.into_iter();
        let mut with_none = c.bool("with_none")?.into_iter();
        let mut labels = c.list_utf8("labels")?.into_iter();
        let mut probabilities = c.opt_list_f64("probabilities")?.into_iter();
        let mut request_id = c.utf8("request_id")?.into_iter();
        let mut prompt_tokens = c.u32("prompt_tokens")?.into_iter();
        let mut latency_ms = c.f64("latency_ms")?.into_iter();
        let mut error = c.opt_utf8("error")?.into_iter();
        let mut task_labels = c.opt_u32("task_labels")?.into_iter();
        let mut scoring = c.opt_utf8("scoring")?.into_iter();
        let mut option_logprobs = c.opt_list_f64("option_logprobs")?.into_iter();
        let mut option_token_counts = c.opt_list_u32("option_token_counts")?.into_iter();
        let mut option_token_logprobs = c.opt_list_f64("option_token_logprobs")?.into_iter();
        let mut out = Vec::with_capacity(c.len());
        for _ in 0..c.len() {
            let sp: String = next(&mut split);
            let st: String = next(&mut set);
            let nm: String = next(&mut names);
            // Parts written before the rule was recorded were scored by summing.
            let rule: Option<String> = next(&mut scoring);
            let rule = match rule {
                None => ScoringRule::Summed,
                Some(r) => ScoringRule::parse(&r).ok_or_else(|| bad("scoring", &r))?,
            };
            let raw = raw_from_columns(
                next(&mut option_logprobs),
                next(&mut option_token_counts),
                next(&mut option_token_logprobs),
            )?;
            out.push(DecisionRow(Decision {
                model: next(&mut model),
                case_id: next(&mut case_id),
                task: next(&mut task),
                split: CoverageSplit::parse(&sp).ok_or_else(|| bad("split", &sp))?,
                reference: next(&mut reference),
                spec: DecisionSpec {
                    set: SetKind::parse(&st).ok_or_else(|| bad("set", &st))?,
                    k: next(&mut k) as usize,
                    names: NameVariant::parse(&nm).ok_or_else(|| bad("names", &nm))?,
                    with_none: next(&mut with_none),
                },
                labels: next(&mut labels),
                probabilities: next::<Option<Vec<f64>>>(&mut probabilities).unwrap_or_default(),
                request_id: next(&mut request_id),
                prompt_tokens: next(&mut prompt_tokens),
                latency_ms: next(&mut latency_ms),
                error: next(&mut error),
                task_labels: next(&mut task_labels),
                scoring: rule,
                raw,
            }));
        }
        Ok(out)
    }
}
