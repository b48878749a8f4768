//! The report rows of [`super::coverage_summary`]: rates, discrimination, cell summaries,
//! threshold rules, full-set rows, missing decisions and the summary that holds them.

use serde::{Deserialize, Serialize};

use c2s_records::coverage::{CoverageSplit, NameVariant};

use super::{CoverageScore, CoverageStatsConfig, PrecisionAudit, Subset};
use crate::bootstrap::Estimate;

/// A proportion: `successes` of `n` decisions, its value and (where bootstrapped) interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Decisions counted as hits (e.g. rejected absent decisions for detection).
    pub successes: u64,
    /// Decisions in the denominator; 0 makes the rate undefined.
    pub n: u64,
    #[serde(flatten)]
    /// `successes / n` with its text-bootstrap percentile interval (no interval for point-only
    /// rates).
    pub estimate: Estimate,
}

/// Discrimination of one coverage score in one cell.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Discrimination {
    /// The coverage score ranked.
    pub score: CoverageScore,
    /// Texts with both a present and an absent decision of the score's variant.
    pub pairs: u64,
    /// Present = positive.
    pub auroc: Estimate,
    /// Absent = positive, ranked by the negated score.
    pub average_precision: Estimate,
}

/// The metrics of one cell (model, task, k, names) on one subset of its test texts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSummary {
    /// The model that made the decisions.
    pub model: String,
    /// The task (label set) decided.
    pub task: String,
    /// Ordinary candidate count k of the present and absent sets.
    pub k: usize,
    /// k = L − 1: every label but the reference (absent) or but one other (present).
    pub all_but_reference: bool,
    /// Whether the options carry natural or neutral names.
    pub names: NameVariant,
    /// Which of the cell's test texts are summarized.
    pub subset: Subset,
    /// Test texts of the subset with at least one non-missing present/absent decision.
    pub texts: u64,
    /// Missing present/absent decisions of the cell (of the subset's texts).
    pub missing: u64,
    /// Present, without none: choice = reference.
    pub accuracy: Rate,
    /// Present, with none: choice = reference (a rejection is not correct).
    pub accuracy_with_none: Rate,
    /// Native rule, D = P(none chosen | absent) over absent decisions with the none option.
    pub detection: Rate,
    /// Native rule, FR = P(none chosen | present) over present decisions with the none option.
    pub false_rejection: Rate,
    /// Native rule, P(none not chosen) over present and absent decisions with the none option,
    /// pooled.
    pub acceptance: Rate,
    /// Accepted present and absent sets pooled: the choice is not the reference.
    pub error_among_accepted: Rate,
    /// Accepted present sets (G = 1): the choice is not the reference.
    pub error_among_accepted_present: Rate,
    /// Accepted absent sets (G = 0): always an error (1 whenever defined).
    pub error_among_accepted_absent: Rate,
    /// Present/absent discrimination of each coverage score, in [`CoverageScore::ALL`] order.
    pub discrimination: Vec<Discrimination>,
}

/// A rejection rule of a cell chosen on calibration texts and measured on test texts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdRow {
    /// The model that made the decisions.
    pub model: String,
    /// The task (label set) decided.
    pub task: String,
    /// Ordinary candidate count k of the present and absent sets.
    pub k: usize,
    /// Whether k = L − 1 (every label but the reference, or but one other).
    pub all_but_reference: bool,
    /// Whether the options carry natural or neutral names.
    pub names: NameVariant,
    /// The test texts the rule is tested on (the threshold comes from every calibration
    /// text of the cell).
    pub subset: Subset,
    /// `native` or the score's name.
    pub rule: String,
    /// `None` for the native rule.
    pub score: Option<CoverageScore>,
    /// Rejects iff score < threshold; `None` for the native rule or without calibration data.
    pub threshold: Option<f64>,
    /// On calibration decisions (no interval).
    pub calibration_false_rejection: Rate,
    /// On calibration decisions: the rule's rejection rate on absent sets (no interval).
    pub calibration_detection: Rate,
    /// On test decisions, intervals conditional on the threshold.
    pub test_detection: Rate,
    /// On test decisions: the rule's rejection rate on present sets, interval conditional on the
    /// threshold.
    pub test_false_rejection: Rate,
}

/// Full-set classification of one (model, task, names) on test texts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FullSetRow {
    /// The model that made the decisions.
    pub model: String,
    /// The task (label set) decided.
    pub task: String,
    /// Whether the options carry natural or neutral names.
    pub names: NameVariant,
    /// Full-set decisions without none: choice = reference.
    pub accuracy: Rate,
    /// Test texts whose full-set decision chooses the reference (the full-set-correct subset).
    pub full_set_correct: u64,
    /// Size of the shared-correct subset: texts full-set-correct for every model of the task.
    pub shared_correct: u64,
    /// Missing full-set decisions without none on the test split.
    pub missing: u64,
}

/// Missing decisions of one model, task and split by reason.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MissingRow {
    /// The model that made the decisions.
    pub model: String,
    /// The task of the decisions.
    pub task: String,
    /// The split (calibration or test) of the decisions.
    pub split: CoverageSplit,
    /// The reason: the decision's error message, or `empty probabilities`, `probabilities do not
    /// match labels` or `none option not offered`.
    pub error: String,
    /// Number of decisions missing for this reason.
    pub count: u64,
}

/// Everything [`super::coverage_summary`] reports, in (model, task, k, names) order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoverageSummary {
    /// The settings the summary was computed with.
    pub config: CoverageStatsConfig,
    /// One row per cell and subset, in (model, task, k, names, subset) order.
    pub cells: Vec<CellSummary>,
    /// One row per cell, subset and rule (the four scores, then the native rule).
    pub thresholds: Vec<ThresholdRow>,
    /// One row per (model, task, names): full-set accuracy and subset sizes.
    pub full_set: Vec<FullSetRow>,
    /// The precision audits (a)–(e).
    pub audit: PrecisionAudit,
    /// Missing decisions per model, task, split and reason (audit f).
    pub missing: Vec<MissingRow>,
}
