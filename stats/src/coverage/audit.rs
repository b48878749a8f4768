//! The precision audits' rows and the scoring-rule comparison of [`super::coverage_summary`].

use serde::{Deserialize, Serialize};

use c2s_records::coverage::{Decision, NameVariant, ScoringRule, SetKind};

use super::{CoverageScore, Rate};

/// Probability sums of one model's non-missing decisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbSumRow {
    /// The model whose decisions are audited.
    pub model: String,
    /// Number of the model's non-missing decisions.
    pub decisions: u64,
    /// |Σp − 1| > [`SUM_TOLERANCE`].
    pub deviating: u64,
    /// The largest |Σp − 1| over those decisions (0 with none).
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
    /// The model whose present/absent pairs are compared.
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
    /// The model whose decisions are rescored.
    pub model: String,
    /// The task of the decisions.
    pub task: String,
    /// The rule the run recorded.
    pub recorded: ScoringRule,
    /// The rule the stored token log-probabilities are re-read under.
    pub other: ScoringRule,
    /// Non-missing decisions with raw scores that could be rescored under `other`.
    pub decisions: u64,
    /// Of those, decisions whose choice differs between the two rules.
    pub choice_changed: u64,
    /// Decisions with the none option whose native rejection (none chosen) flips.
    pub rejection_changed: u64,
    /// Accuracy (present sets without none, choice = reference) under each rule.
    pub accuracy_recorded: Rate,
    /// The same accuracy under the `other` rule (point value, no interval).
    pub accuracy_other: Rate,
}

/// Point AUROC of one cell and score before and after quantization (all test texts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuantizationRow {
    /// The model of the cell.
    pub model: String,
    /// The task of the cell.
    pub task: String,
    /// The cell's ordinary candidate count k.
    pub k: usize,
    /// Whether the options carry natural or neutral names.
    pub names: NameVariant,
    /// The coverage score ranked.
    pub score: CoverageScore,
    /// Point AUROC (present = positive) on the recorded probabilities; `None` without both classes.
    pub auroc: Option<f64>,
    /// Point AUROC after rounding every probability to `quantize_decimals` decimals (half to even).
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
    /// One row per model: the probability-sum audit (a).
    pub prob_sums: Vec<ProbSumRow>,
    /// Decimals every probability was rounded to in the quantization audit (b).
    pub quantize_decimals: u32,
    /// One row per cell and score: AUROC under quantization (b) and renormalization (c).
    pub quantization: Vec<QuantizationRow>,
    /// The row with the largest |change| (first in order on ties).
    pub largest_change: Option<QuantizationRow>,
    /// The row with the largest |renormalization_change| (first in order on ties).
    pub largest_renormalization_change: Option<QuantizationRow>,
    /// One row per model, task and pair of scoring rules: the scoring-rule audit (e).
    pub rule_changes: Vec<RuleChangeRow>,
    /// One row per model: whether present/absent pairs were closed alike.
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
