//! Confidence of completed strings against their correctness (paper §6.1, A.6, D.15):
//! Brier score, ECE with ten equal-width reliability bins, AUROC, average precision, the
//! negative-length ranking baseline and the prevalence baseline.
//!
//! Samples are `(score, correct)` pairs. One-class samples (all correct or all wrong) leave
//! AUROC and AP undefined (`None`); an empty sample leaves everything undefined.

use c2s_records::{Confidence, Trajectory};
use serde::{Deserialize, Serialize};

use crate::error::StatsError;

/// Number of reliability bins.
pub const ECE_BINS: usize = 10;

/// Which confidence composite scores a completed string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ScoreKind {
    /// Product of the chosen probabilities.
    Product,
    /// exp(mean log chosen probability).
    GeometricMean,
    /// Smallest per-step top-choice probability.
    MinTop,
}

impl ScoreKind {
    pub const ALL: [ScoreKind; 3] = [
        ScoreKind::Product,
        ScoreKind::GeometricMean,
        ScoreKind::MinTop,
    ];

    pub fn of(self, c: &Confidence) -> f64 {
        match self {
            ScoreKind::Product => c.product,
            ScoreKind::GeometricMean => c.geometric_mean,
            ScoreKind::MinTop => c.min_top,
        }
    }

    /// snake_case name, as in `Confidence`'s fields.
    pub fn as_str(self) -> &'static str {
        match self {
            ScoreKind::Product => "product",
            ScoreKind::GeometricMean => "geometric_mean",
            ScoreKind::MinTop => "min_top",
        }
    }
}

fn check_probabilities(pairs: &[(f64, bool)]) -> Result<(), StatsError> {
    match pairs.iter().find(|(s, _)| !(0.0..=1.0).contains(s)) {
        Some(&(s, _)) => Err(StatsError::InvalidScore(s)),
        None => Ok(()),
    }
}

fn check_finite(pairs: &[(f64, bool)]) -> Result<(), StatsError> {
    match pairs.iter().find(|(s, _)| !s.is_finite()) {
        Some(&(s, _)) => Err(StatsError::NonFiniteScore(s)),
        None => Ok(()),
    }
}

/// Mean squared difference between score and outcome (1 correct, 0 wrong). Scores must be
/// probabilities. `None` for an empty sample.
pub fn brier(pairs: &[(f64, bool)]) -> Result<Option<f64>, StatsError> {
    check_probabilities(pairs)?;
    if pairs.is_empty() {
        return Ok(None);
    }
    let sum: f64 = pairs
        .iter()
        .map(|&(s, y)| {
            let d = s - f64::from(u8::from(y));
            d * d
        })
        .sum();
    Ok(Some(sum / pairs.len() as f64))
}

/// One reliability bin `[low, high)` (the last bin also holds 1.0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReliabilityBin {
    pub low: f64,
    pub high: f64,
    pub count: u64,
    /// `None` for an empty bin.
    pub mean_score: Option<f64>,
    /// `None` for an empty bin.
    pub accuracy: Option<f64>,
}

/// The reliability diagram and its expected calibration error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reliability {
    pub bins: Vec<ReliabilityBin>,
    /// ECE = Σ_b (n_b / n)·|accuracy_b − mean_score_b| over non-empty bins; `None` when empty.
    pub ece: Option<f64>,
}

/// Edge `k` of the ten equal-width bins: k/10, correctly rounded.
fn bin_edge(k: usize) -> f64 {
    k as f64 / ECE_BINS as f64
}

/// Bin of a probability: the number of inner edges k/10 (k = 1..9) at or below it, so bin b is
/// `[b/10, (b+1)/10)` with the edges as correctly rounded doubles (0.3 falls in bin 3) and
/// 1.0 in the last bin.
pub fn bin_index(score: f64) -> usize {
    let mut b = ((score * ECE_BINS as f64).floor().max(0.0) as usize).min(ECE_BINS - 1);
    // Guard against rounding in score·10 near an edge.
    if b + 1 < ECE_BINS && score >= bin_edge(b + 1) {
        b += 1;
    } else if b > 0 && score < bin_edge(b) {
        b -= 1;
    }
    b
}

/// Ten equal-width bins on [0, 1]: per-bin counts, mean score and accuracy, and the ECE.
/// Empty bins stay empty and contribute nothing.
pub fn reliability(pairs: &[(f64, bool)]) -> Result<Reliability, StatsError> {
    check_probabilities(pairs)?;
    let mut count = [0u64; ECE_BINS];
    let mut score_sum = [0.0f64; ECE_BINS];
    let mut correct = [0u64; ECE_BINS];
    for &(s, y) in pairs {
        let b = bin_index(s);
        count[b] += 1;
        score_sum[b] += s;
        correct[b] += u64::from(y);
    }
    let n = pairs.len() as f64;
    let mut ece = 0.0;
    let bins = (0..ECE_BINS)
        .map(|b| {
            let (mean_score, accuracy) = if count[b] == 0 {
                (None, None)
            } else {
                let c = count[b] as f64;
                let (m, a) = (score_sum[b] / c, correct[b] as f64 / c);
                ece += c / n * (a - m).abs();
                (Some(m), Some(a))
            };
            ReliabilityBin {
                low: bin_edge(b),
                high: bin_edge(b + 1),
                count: count[b],
                mean_score,
                accuracy,
            }
        })
        .collect();
    Ok(Reliability {
        bins,
        ece: (!pairs.is_empty()).then_some(ece),
    })
}

/// Expected calibration error with ten equal-width bins.
pub fn ece(pairs: &[(f64, bool)]) -> Result<Option<f64>, StatsError> {
    Ok(reliability(pairs)?.ece)
}

/// Pairs sorted by score ascending (total order), after the finiteness check.
fn sorted_by_score(pairs: &[(f64, bool)]) -> Result<Vec<(f64, bool)>, StatsError> {
    check_finite(pairs)?;
    let mut v = pairs.to_vec();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(v)
}

/// Area under the ROC curve as the Mann–Whitney statistic: the share of (correct, wrong)
/// pairs where the correct one scores higher, ties counted ½ (midranks) —
/// `sklearn.metrics.roc_auc_score`. `None` for a one-class or empty sample. Scores need only
/// be finite.
pub fn auroc(pairs: &[(f64, bool)]) -> Result<Option<f64>, StatsError> {
    let v = sorted_by_score(pairs)?;
    let positives = v.iter().filter(|p| p.1).count() as f64;
    let negatives = v.len() as f64 - positives;
    if positives == 0.0 || negatives == 0.0 {
        return Ok(None);
    }
    // Sum of the positives' midranks (1-based).
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j < v.len() && v[j].0 == v[i].0 {
            j += 1;
        }
        let midrank = (i + 1 + j) as f64 / 2.0;
        let pos = v[i..j].iter().filter(|p| p.1).count() as f64;
        rank_sum += pos * midrank;
        i = j;
    }
    let u = rank_sum - positives * (positives + 1.0) / 2.0;
    Ok(Some(u / (positives * negatives)))
}

/// Average precision, step-wise: `Σ_k (R_k − R_{k−1})·P_k` over thresholds at the distinct
/// scores in descending order, tied scores entering together — the definition of
/// `sklearn.metrics.average_precision_score`. `None` for a one-class or empty sample.
pub fn average_precision(pairs: &[(f64, bool)]) -> Result<Option<f64>, StatsError> {
    let mut v = sorted_by_score(pairs)?;
    v.reverse();
    let positives = v.iter().filter(|p| p.1).count() as f64;
    if positives == 0.0 || positives == v.len() as f64 {
        return Ok(None);
    }
    let (mut tp, mut seen) = (0.0f64, 0.0f64);
    let mut prev_recall = 0.0;
    let mut ap = 0.0;
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j < v.len() && v[j].0 == v[i].0 {
            tp += f64::from(u8::from(v[j].1));
            seen += 1.0;
            j += 1;
        }
        let recall = tp / positives;
        ap += (recall - prev_recall) * (tp / seen);
        prev_recall = recall;
        i = j;
    }
    Ok(Some(ap))
}

/// AUROC and AP of a ranking.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    pub auroc: Option<f64>,
    pub average_precision: Option<f64>,
}

/// The negative-length ranking baseline: AUROC and AP of score = −length (shorter targets
/// ranked as more likely correct), from `(length, correct)` pairs. It has no Brier/ECE.
pub fn negative_length_baseline(pairs: &[(usize, bool)]) -> Result<Ranking, StatsError> {
    let scored: Vec<(f64, bool)> = pairs.iter().map(|&(l, y)| (-(l as f64), y)).collect();
    Ok(Ranking {
        auroc: auroc(&scored)?,
        average_precision: average_precision(&scored)?,
    })
}

/// The prevalence baseline: predicting the observed prevalence p for every item has Brier
/// p(1 − p); a random ranking has expected AP p.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PrevalenceBaseline {
    pub prevalence: f64,
    pub brier: f64,
    pub average_precision: f64,
}

/// `None` for an empty sample.
pub fn prevalence_baseline<I>(correct: I) -> Option<PrevalenceBaseline>
where
    I: IntoIterator<Item = bool>,
{
    let (mut n, mut k) = (0u64, 0u64);
    for y in correct {
        n += 1;
        k += u64::from(y);
    }
    if n == 0 {
        return None;
    }
    let p = k as f64 / n as f64;
    Some(PrevalenceBaseline {
        prevalence: p,
        brier: p * (1.0 - p),
        average_precision: p,
    })
}

/// Every confidence metric of one set of completed strings under one score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationReport {
    pub score: ScoreKind,
    /// Trajectories with a confidence composite.
    pub n: u64,
    /// Correct among them.
    pub positives: u64,
    /// Trajectories without a confidence composite (e.g. generated contracts), left out.
    pub skipped: u64,
    pub brier: Option<f64>,
    pub reliability: Reliability,
    pub ranking: Ranking,
    pub negative_length: Ranking,
    pub prevalence: Option<PrevalenceBaseline>,
}

/// The calibration report of `trajectories` (one model/domain/arm population, chosen by the
/// caller) under `score`. Trajectories without `confidence` are skipped and counted.
pub fn calibration_report<'a, I>(
    trajectories: I,
    score: ScoreKind,
) -> Result<CalibrationReport, StatsError>
where
    I: IntoIterator<Item = &'a Trajectory>,
{
    let mut total = 0usize;
    let with: Vec<&Trajectory> = trajectories
        .into_iter()
        .inspect(|_| total += 1)
        .filter(|t| t.confidence.is_some())
        .collect();
    let pairs: Vec<(f64, bool)> = with
        .iter()
        .filter_map(|t| t.confidence.as_ref().map(|c| (score.of(c), t.correct)))
        .collect();
    let lengths: Vec<(usize, bool)> = with.iter().map(|t| (t.length, t.correct)).collect();
    Ok(CalibrationReport {
        score,
        n: pairs.len() as u64,
        positives: pairs.iter().filter(|p| p.1).count() as u64,
        skipped: (total - with.len()) as u64,
        brier: brier(&pairs)?,
        reliability: reliability(&pairs)?,
        ranking: Ranking {
            auroc: auroc(&pairs)?,
            average_precision: average_precision(&pairs)?,
        },
        negative_length: negative_length_baseline(&lengths)?,
        prevalence: prevalence_baseline(pairs.iter().map(|p| p.1)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-12, "{a} vs {b}");
    }

    const SCORES: [f64; 10] = [0.9, 0.8, 0.8, 0.7, 0.5, 0.5, 0.5, 0.2, 0.1, 0.1];
    const LABELS: [bool; 10] = [
        true, true, false, true, false, true, false, false, true, false,
    ];

    fn sample() -> Vec<(f64, bool)> {
        SCORES.iter().copied().zip(LABELS).collect()
    }

    #[test]
    fn ranking_matches_sklearn_with_ties() {
        // sklearn 1.9.1: roc_auc_score(y, s) = 0.6799999999999999,
        // average_precision_score(y, s) = 0.6976190476190476, brier_score_loss(y, s) = 0.239.
        let p = sample();
        close(auroc(&p).unwrap().unwrap(), 0.68);
        close(average_precision(&p).unwrap().unwrap(), 0.6976190476190476);
        close(brier(&p).unwrap().unwrap(), 0.239);
        // Order of the input does not matter.
        let mut rev = p.clone();
        rev.reverse();
        assert_eq!(auroc(&rev), auroc(&p));
        assert_eq!(average_precision(&rev), average_precision(&p));
    }

    #[test]
    fn negative_length_matches_sklearn() {
        // roc_auc_score(y, -L) = 0.8999999999999999, average_precision_score(y, -L) =
        // 0.8666666666666667 for L = [3,3,4,5,5,6,7,8], y = [1,1,0,1,0,0,0,0].
        let pairs = [
            (3, true),
            (3, true),
            (4, false),
            (5, true),
            (5, false),
            (6, false),
            (7, false),
            (8, false),
        ];
        let r = negative_length_baseline(&pairs).unwrap();
        close(r.auroc.unwrap(), 0.9);
        close(r.average_precision.unwrap(), 0.8666666666666667);
    }

    #[test]
    fn prevalence_baseline_by_hand() {
        // brier_score_loss(y, full(prevalence)) = 0.234375 for 3 of 8 correct.
        let y = [true, false, false, true, true, false, false, false];
        let b = prevalence_baseline(y).unwrap();
        assert_eq!(b.prevalence, 0.375);
        close(b.brier, 0.234375);
        assert_eq!(b.average_precision, 0.375);
        assert_eq!(prevalence_baseline(std::iter::empty()), None);
    }

    #[test]
    fn one_class_is_undefined() {
        let all = [(0.2, true), (0.9, true)];
        assert_eq!(auroc(&all), Ok(None));
        assert_eq!(average_precision(&all), Ok(None));
        let none = [(0.2, false), (0.9, false)];
        assert_eq!(auroc(&none), Ok(None));
        assert_eq!(average_precision(&none), Ok(None));
        assert_eq!(brier(&[]), Ok(None));
        assert_eq!(ece(&[]), Ok(None));
        // Brier stays defined for one class.
        close(brier(&all).unwrap().unwrap(), (0.64 + 0.01) / 2.0);
    }

    #[test]
    fn ece_by_hand() {
        // Bins: 0: {0.05 ✗}; 1: {0.15 ✗, 0.15 ✓}; 3: {0.3 ✓}; 5: {0.55 ✓};
        // 9: {0.95 ✓, 1.0 ✓, 1.0 ✗}.
        // ECE = (1·0.05 + 2·|0.5 − 0.15| + 1·0.7 + 1·0.45 + 3·|2/3 − 2.95/3|) / 8 = 2.85 / 8.
        let p = [
            (0.05, false),
            (0.15, false),
            (0.15, true),
            (0.3, true),
            (0.95, true),
            (1.0, true),
            (1.0, false),
            (0.55, true),
        ];
        let r = reliability(&p).unwrap();
        close(r.ece.unwrap(), 0.35625);
        let counts: Vec<u64> = r.bins.iter().map(|b| b.count).collect();
        assert_eq!(counts, [1, 2, 0, 1, 0, 1, 0, 0, 0, 3]);
        assert_eq!(r.bins[2].mean_score, None);
        assert_eq!(r.bins[2].accuracy, None);
        close(r.bins[9].mean_score.unwrap(), 2.95 / 3.0);
        close(r.bins[9].accuracy.unwrap(), 2.0 / 3.0);
        close(r.bins[1].accuracy.unwrap(), 0.5);
        assert_eq!((r.bins[3].low, r.bins[3].high), (0.3, 0.4));
        // sklearn.metrics.brier_score_loss on the same sample = 0.3053125.
        close(brier(&p).unwrap().unwrap(), 0.3053125);
    }

    #[test]
    fn bins_respect_edges() {
        assert_eq!(bin_index(0.0), 0);
        assert_eq!(bin_index(0.1), 1);
        assert_eq!(bin_index(0.3), 3);
        assert_eq!(bin_index(0.7), 7);
        assert_eq!(bin_index(0.29999999999999993), 2);
        assert_eq!(bin_index(0.9999999999999999), 9);
        assert_eq!(bin_index(1.0), 9);
    }

    #[test]
    fn bad_scores_are_rejected() {
        assert_eq!(brier(&[(1.5, true)]), Err(StatsError::InvalidScore(1.5)));
        assert!(reliability(&[(f64::NAN, true)]).is_err());
        assert!(auroc(&[(f64::INFINITY, true), (0.0, false)]).is_err());
        // Ranking scores need not be probabilities.
        assert_eq!(auroc(&[(-3.0, true), (-5.0, false)]), Ok(Some(1.0)));
    }
}
