//! Paired statistics of choice2seq (paper §3.1, §3.4, A.1, A.6, D.10, D.15): joint
//! tables and SCR, exact intervals and tests, the length-stratified whole-item bootstrap, the
//! independence reference, confidence calibration, and the metric rows of a snapshot.
//!
//! Everything here is a pure function of its input; the dataflow wires it in.
//!
//! Modules:
//! - [`joint`]: the 2×2 joint table, point metrics, SCR bounds, equal-length mixture.
//! - [`intervals`]: Clopper–Pearson intervals and type-7 percentiles.
//! - [`hypothesis`]: exact McNemar test and Holm correction.
//! - [`bootstrap`]: the code-count bootstrap engine, joint-table and paired-difference
//!   bootstraps.
//! - [`independence`]: the independence reference Π_t c_t.
//! - [`calibration`]: Brier, ECE, AUROC, AP and their baselines.
//! - [`calibration_intervals`]: the same with item-bootstrap intervals, and each score's
//!   paired AUROC/AP difference from the negative-length ranking (Tables D12, D14).
//! - [`contrasts`]: unit contrasts (mean within-unit differences, unit bootstrap, exact
//!   sign-flip test) of the symbolic panels.
//! - [`counts`]: the sufficient statistics of a snapshot, updated by signed differences.
//! - [`coverage`]: the candidate-coverage protocol's statistics.
//! - [`dialogue`]: the dialogue-state endpoints, contrasts, retention and sign tests
//!   (Appendix C).
//! - [`metrics`]: `MetricRow`, `StatsConfig` and the snapshot functions.

#![deny(missing_docs)]

pub mod bootstrap;
pub mod calibration;
pub mod calibration_intervals;
pub mod contrasts;
pub mod counts;
pub mod coverage;
pub mod dialogue;
pub mod error;
pub mod hypothesis;
pub mod independence;
pub mod intervals;
pub mod item_bootstrap;
pub mod joint;
pub mod metrics;
pub mod projection;
pub mod templates;

pub use bootstrap::{
    bootstrap, bootstrap_joint, bootstrap_joint_counts, bootstrap_per_item, BootstrapConfig,
    Counts, EqualLengthEstimates, Estimate, JointBootstrap, JointEstimates, StatDraws,
    StratifiedSample, DEFAULT_DRAWS, DEFAULT_SEED,
};
pub use calibration::{
    auroc, auroc_counts, average_precision, average_precision_counts, brier, brier_counts,
    calibration_report, calibration_report_counts, ece, negative_length_baseline,
    prevalence_baseline, reliability, reliability_counts, score_counts, score_counts_weighted,
    CalibrationReport, ConfidenceKey, PrevalenceBaseline, Ranking, Reliability, ReliabilityBin,
    ScoreCount, ScoreKind, ECE_BINS,
};
pub use calibration_intervals::{
    calibration_intervals, precision_at_coverage, reliability_intervals, screening_intervals,
    BinInterval, CalibrationIntervals, ScoreIntervals, ScoredItem, MAX_STRATUM_ITEMS,
    SCREENING_RANKERS,
};
pub use contrasts::{
    contrast_tables, sign_flip_p, unit_contrast, CellRow, CellSpec, ContrastEstimate, ContrastRow,
    ContrastSpec, HolmGroup, Selector, UnitCounts,
};
pub use counts::{StatsCounts, StatsKey};
pub use coverage::{
    calibrated_threshold, coverage_summary, CellSummary, CoverageScore, CoverageStatsConfig,
    CoverageSummary, Discrimination, FullSetRow, MissingRow, PrecisionAudit, ProbSumRow,
    QuantizationRow, Rate, Subset, ThresholdRow,
};
pub use error::StatsError;
pub use hypothesis::{binomial_half_cdf, binomial_upper_tail, holm, mcnemar_exact, McNemar};
pub use independence::{
    independence_estimates, independence_estimates_counts, independence_estimates_within,
    independence_reference, is_reference_arm, IndependenceEstimate, IndependenceReference,
    LocalGroup, PatternCounts, PopulationCounts,
};
pub use intervals::{
    clopper_pearson, percentile_interval, percentile_sorted, Interval, DEFAULT_LEVEL,
};
pub use item_bootstrap::{em_rate, mean_share, paired_em_difference, paired_scr_difference};
pub use joint::{
    equal_length_weighted, EqualLengthMixture, JointCell, JointTable, Ratio, ScrBounds,
};
pub use metrics::{
    calibration_metrics, calibration_metrics_counts, comparison_label, families_in_force,
    holm_cell, independence_metrics, independence_metrics_counts, independence_metrics_within,
    paired_metrics, paired_metrics_counts, paired_sample, sort_rows, ConfidenceCounts, FamilyScope,
    HolmFamily, MetricRow, PairedCounts, PairedStratum, StatsConfig, CI_BOOTSTRAP,
    CI_CLOPPER_PEARSON, METRIC_ORDER,
};
pub use projection::{
    mean_scores, position_scores, project, stratified_mean, MeanEstimate, PositionScores,
};
pub use templates::{template_scr, TemplateOutcomes, TemplateScr};
