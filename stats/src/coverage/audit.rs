//! The precision audits' rows and the scoring-rule comparison of [`super::coverage_summary`].

use serde::{Deserialize, Serialize};

use c2s_records::coverage::{Decision, NameVariant, ScoringRule, SetKind};

use super::{CoverageScore, Rate};

/// Probability sums of one model's non-missing decisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbSumRow {
    pub model: String,
    pub decisions: u64,
    /// |Σp − 1| > [`SUM_TOLERANCE`].
    pub deviating: u64,
    pub max_deviation: f64,
    /// Decisions that carry the engine's raw log-likelihoods.
    pub with_raw_scores: u64,
    /// Of those, decisions whose choice is not the option with the largest raw score under
    /// the decision's rule.
    pub choice_not_raw_argmax: u64,
}

/// Present/absent pairs whose shared options were tokenized alike (the same token counts,
/// so closed with the end token together or not at all), per model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairClosingRow {
    pub model: String,
    /// Pairs whose two decisions both carry raw scores.
    pub pairs: u64,
    /// Pairs where a shared option has different token counts in the two sets: the two sets
    /// were scored under different closing rules.
    pub mismatched: u64,
    /// The first few mismatched pairs (`case_id arm`).
    pub examples: Vec<String>,
}

/// How often reading the stored token log-probabilities under another rule changes the
/// choice, per model, task and pair of rules (every non-missing decision with raw scores).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleChangeRow {
    pub model: String,
    pub task: String,
    /// The rule the run recorded.
    pub recorded: ScoringRule,
    pub other: ScoringRule,
    pub decisions: u64,
    pub choice_changed: u64,
    /// Decisions with the none option whose native rejection (none chosen) flips.
    pub rejection_changed: u64,
    /// Accuracy (present sets without none, choice = reference) under each rule.
    pub accuracy_recorded: Rate,
    pub accuracy_other: Rate,
}

/// Point AUROC of one cell and score before and after quantization (all test texts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuantizationRow {
    pub model: String,
    pub task: String,
    pub k: usize,
    pub names: NameVariant,
    pub score: CoverageScore,
    pub auroc: Option<f64>,
    pub quantized_auroc: Option<f64>,
    /// Quantized minus original.
    pub change: Option<f64>,
    /// Every distribution divided by its sum.
    pub renormalized_auroc: Option<f64>,
    /// Renormalized minus original.
    pub renormalization_change: Option<f64>,
}

/// The precision audits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrecisionAudit {
    pub prob_sums: Vec<ProbSumRow>,
    pub quantize_decimals: u32,
    pub quantization: Vec<QuantizationRow>,
    /// The row with the largest |change| (first in order on ties).
    pub largest_change: Option<QuantizationRow>,
    /// The row with the largest |renormalization_change| (first in order on ties).
    pub largest_renormalization_change: Option<QuantizationRow>,
    pub rule_changes: Vec<RuleChangeRow>,
    pub pair_closing: Vec<PairClosingRow>,
}

/// Counts of one (model, task, recorded rule, other rule).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct RuleTally {
    pub(super) decisions: u64,
    pub(super) choice_changed: u64,
    pub(super) rejection_changed: u64,
    /// (correct, n) of present sets without none under the recorded and the other rule.
    pub(super) accuracy: [(u64, u64); 2],
}

impl RuleTally {
    pub(super) fn add(&mut self, recorded: &Decision, other: &Decision) {
        self.decisions += 1;
        self.choice_changed += u64::from(recorded.choice() != other.choice());
        if recorded.spec.with_none {
            self.rejection_changed += u64::from(recorded.rejected() != other.rejected());
        }
        if recorded.spec.set == SetKind::Present && !recorded.spec.with_none {
            for (a, d) in self.accuracy.iter_mut().zip([recorded, other]) {
                a.0 += u64::from(d.choice() == Some(d.reference.as_str()));
                a.1 += 1;
            }
        }
    }
}

/// The offered label with the largest raw score under the decision's rule (first on ties),
/// when the decision carries raw scores aligned with its labels.
pub(super) fn raw_argmax_label(d: &Decision) -> Option<&str> {
    let raw = d.raw.as_ref().filter(|r| r.aligned(d.labels.len()))?;
    let scores = d.scoring.scores(&raw.token_logprobs)?;
    let mut best: Option<usize> = None;
    for (i, &x) in scores.iter().enumerate() {
        match best {
            Some(b) if scores[b] >= x => {}
            _ => best = Some(i),
        }
    }
    best.and_then(|i| d.labels.get(i).map(String::as_str))
}
