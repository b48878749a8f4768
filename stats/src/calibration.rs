//! Confidence of completed strings against their correctness (paper §6.1, A.6, D.15):
//! Brier score, ECE with ten equal-width reliability bins, AUROC, average precision, the
//! negative-length ranking baseline and the prevalence baseline.
//!
//! Samples are `(score, correct)` pairs. One-class samples (all correct or all wrong) leave
//! AUROC and AP undefined (`None`); an empty sample leaves everything undefined.

use c2s_records::Trajectory;
use serde::{Deserialize, Serialize};

use crate::error::StatsError;

/// Number of reliability bins.
pub const ECE_BINS: usize = 10;

pub use c2s_records::ScoreKind;

/// A distinct score with how many wrong and correct strings hold it: the count form every
/// confidence metric is computed from (a snapshot's cost grows with the number of distinct
/// scores, not of strings).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreCount {
    /// The distinct score (a probability for Brier/ECE, any finite number for rankings).
    pub score: f64,
    /// Number of wrong strings with this score (negatives).
    pub wrong: u64,
    /// Number of correct strings with this score (positives).
    pub correct: u64,
}

/// Pairs as counts per distinct score, ascending (total order).
pub fn score_counts(pairs: &[(f64, bool)]) -> Vec<ScoreCount> {
    score_counts_weighted(pairs.iter().map(|&(s, y)| (s, y, 1)))
}

/// `(score, correct, count)` triples as counts per distinct score, ascending (total order).
pub fn score_counts_weighted<I>(triples: I) -> Vec<ScoreCount>
where
    I: IntoIterator<Item = (f64, bool, u64)>,
{
    let mut v: Vec<(f64, bool, u64)> = triples.into_iter().filter(|t| t.2 > 0).collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<ScoreCount> = Vec::new();
    for (s, y, k) in v {
        let c = match out.last_mut() {
            Some(c) if c.score.total_cmp(&s).is_eq() => c,
            _ => {
                let i = out.len();
                out.push(ScoreCount {
                    score: s,
                    wrong: 0,
                    correct: 0,
                });
                &mut out[i]
            }
        };
        if y {
            c.correct += k;
        } else {
            c.wrong += k;
        }
    }
    out
}

fn check_probabilities(scores: &[ScoreCount]) -> Result<(), StatsError> {
    match scores.iter().find(|c| !(0.0..=1.0).contains(&c.score)) {
        Some(c) => Err(StatsError::InvalidScore(c.score)),
        None => Ok(()),
    }
}

fn check_finite(scores: &[ScoreCount]) -> Result<(), StatsError> {
    match scores.iter().find(|c| !c.score.is_finite()) {
        Some(c) => Err(StatsError::NonFiniteScore(c.score)),
        None => Ok(()),
    }
}

fn totals(scores: &[ScoreCount]) -> (u64, u64) {
    scores
        .iter()
        .fold((0, 0), |(w, c), s| (w + s.wrong, c + s.correct))
}

/// Mean squared difference between score and outcome (1 correct, 0 wrong). Scores must be
/// probabilities. `None` for an empty sample.
pub fn brier(pairs: &[(f64, bool)]) -> Result<Option<f64>, StatsError> {
    brier_counts(&score_counts(pairs))
}

/// [`brier`] from counts per distinct score.
pub fn brier_counts(scores: &[ScoreCount]) -> Result<Option<f64>, StatsError> {
    check_probabilities(scores)?;
    let (wrong, correct) = totals(scores);
    if wrong + correct == 0 {
        return Ok(None);
    }
    let sum: f64 = scores
        .iter()
        .map(|c| {
            let d = 1.0 - c.score;
            c.wrong as f64 * c.score * c.score + c.correct as f64 * d * d
        })
        .sum();
    Ok(Some(sum / (wrong + correct) as f64))
}

/// One reliability bin `[low, high)` (the last bin also holds 1.0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReliabilityBin {
    /// Lower edge b/10 of bin b, included.
    pub low: f64,
    /// Upper edge (b + 1)/10, excluded except for the last bin, which holds 1.0.
    pub high: f64,
    /// Number of strings whose score falls in the bin.
    pub count: u64,
    /// `None` for an empty bin.
    pub mean_score: Option<f64>,
    /// `None` for an empty bin.
    pub accuracy: Option<f64>,
}

/// The reliability diagram and its expected calibration error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reliability {
    /// The ten bins in ascending order, empty ones included.
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
    reliability_counts(&score_counts(pairs))
}

/// [`reliability`] from counts per distinct score.
pub fn reliability_counts(scores: &[ScoreCount]) -> Result<Reliability, StatsError> {
    check_probabilities(scores)?;
    let mut count = [0u64; ECE_BINS];
    let mut score_sum = [0.0f64; ECE_BINS];
    let mut correct = [0u64; ECE_BINS];
    for c in scores {
        let b = bin_index(c.score);
        let k = c.wrong + c.correct;
        count[b] += k;
        score_sum[b] += k as f64 * c.score;
        correct[b] += c.correct;
    }
    let total: u64 = count.iter().sum();
    let n = total as f64;
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
        ece: (total > 0).then_some(ece),
    })
}

/// Expected calibration error with ten equal-width bins.
pub fn ece(pairs: &[(f64, bool)]) -> Result<Option<f64>, StatsError> {
    Ok(reliability(pairs)?.ece)
}

/// Area under the ROC curve as the Mann–Whitney statistic: the share of (correct, wrong)
/// pairs where the correct one scores higher, ties counted ½ (midranks) —
/// `sklearn.metrics.roc_auc_score`. `None` for a one-class or empty sample. Scores need only
/// be finite.
pub fn auroc(pairs: &[(f64, bool)]) -> Result<Option<f64>, StatsError> {
    auroc_counts(&score_counts(pairs))
}

/// [`auroc`] from counts per distinct score (ascending).
pub fn auroc_counts(scores: &[ScoreCount]) -> Result<Option<f64>, StatsError> {
    check_finite(scores)?;
    let (wrong, correct) = totals(scores);
    if wrong == 0 || correct == 0 {
        return Ok(None);
    }
    let (positives, negatives) = (correct as f64, wrong as f64);
    // Sum of the positives' midranks (1-based).
    let mut rank_sum = 0.0;
    let mut below = 0u64;
    for c in scores {
        let k = c.wrong + c.correct;
        let midrank = (2 * below + k + 1) as f64 / 2.0;
        rank_sum += c.correct as f64 * midrank;
        below += k;
    }
    let u = rank_sum - positives * (positives + 1.0) / 2.0;
    Ok(Some(u / (positives * negatives)))
}

/// Average precision, step-wise: `Σ_k (R_k − R_{k−1})·P_k` over thresholds at the distinct
/// scores in descending order, tied scores entering together — the definition of
/// `sklearn.metrics.average_precision_score`. `None` for a one-class or empty sample.
pub fn average_precision(pairs: &[(f64, bool)]) -> Result<Option<f64>, StatsError> {
    average_precision_counts(&score_counts(pairs))
}

/// [`average_precision`] from counts per distinct score (ascending).
pub fn average_precision_counts(scores: &[ScoreCount]) -> Result<Option<f64>, StatsError> {
    check_finite(scores)?;
    let (wrong, correct) = totals(scores);
    if correct == 0 || wrong == 0 {
        return Ok(None);
    }
    let positives = correct as f64;
    let (mut tp, mut seen) = (0u64, 0u64);
    let mut prev_recall = 0.0;
    let mut ap = 0.0;
    for c in scores.iter().rev() {
        tp += c.correct;
        seen += c.wrong + c.correct;
        let recall = tp as f64 / positives;
        ap += (recall - prev_recall) * (tp as f64 / seen as f64);
        prev_recall = recall;
    }
    Ok(Some(ap))
}

/// AUROC and AP of a ranking.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    /// AUROC (Mann–Whitney, ties ½), in [0, 1]; `None` for a one-class or empty sample.
    pub auroc: Option<f64>,
    /// Step-wise average precision, in [0, 1]; `None` for a one-class or empty sample.
    pub average_precision: Option<f64>,
}

/// The negative-length ranking baseline: AUROC and AP of score = −length (shorter targets
/// ranked as more likely correct), from `(length, correct)` pairs. It has no Brier/ECE.
pub fn negative_length_baseline(pairs: &[(usize, bool)]) -> Result<Ranking, StatsError> {
    let scored: Vec<(f64, bool)> = pairs.iter().map(|&(l, y)| (-(l as f64), y)).collect();
    ranking_counts(&score_counts(&scored))
}

/// AUROC and AP from counts per distinct score.
pub fn ranking_counts(scores: &[ScoreCount]) -> Result<Ranking, StatsError> {
    Ok(Ranking {
        auroc: auroc_counts(scores)?,
        average_precision: average_precision_counts(scores)?,
    })
}

/// The prevalence baseline: predicting the observed prevalence p for every item has Brier
/// p(1 − p); a random ranking has expected AP p.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PrevalenceBaseline {
    /// The observed share p of correct strings, in [0, 1].
    pub prevalence: f64,
    /// Brier score p(1 − p) of predicting p for every string.
    pub brier: f64,
    /// Expected AP of a random ranking, equal to p.
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
    prevalence_of_counts(k, n)
}

/// The prevalence baseline of `positives` correct among `n`; `None` for n = 0.
fn prevalence_of_counts(positives: u64, n: u64) -> Option<PrevalenceBaseline> {
    (n > 0).then(|| {
        let p = positives as f64 / n as f64;
        PrevalenceBaseline {
            prevalence: p,
            brier: p * (1.0 - p),
            average_precision: p,
        }
    })
}

/// Every confidence metric of one set of completed strings under one score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationReport {
    /// The confidence composite scored.
    pub score: ScoreKind,
    /// Trajectories with a confidence composite.
    pub n: u64,
    /// Correct among them.
    pub positives: u64,
    /// Trajectories without a confidence composite (e.g. generated contracts), left out.
    pub skipped: u64,
    /// Brier score of the composite, in [0, 1]; `None` with no scored string.
    pub brier: Option<f64>,
    /// Ten-bin reliability diagram and ECE of the composite.
    pub reliability: Reliability,
    /// AUROC and AP of ranking the strings by the composite.
    pub ranking: Ranking,
    /// AUROC and AP of the negative-length baseline (shorter targets ranked first) on the same
    /// strings.
    pub negative_length: Ranking,
    /// The prevalence baseline on the same strings; `None` with no scored string.
    pub prevalence: Option<PrevalenceBaseline>,
}

/// A completed string's confidence key: its three scores (as bits, so they can be counted
/// and ordered exactly), its length and correctness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ConfidenceKey {
    /// `f64::to_bits` of product, geometric mean, min top.
    pub scores: [u64; 3],
    /// The target length L in characters.
    pub length: u32,
    /// Whether the completed string was correct (exact match).
    pub correct: bool,
}

impl ConfidenceKey {
    /// `None` when the trajectory has no confidence composite (or a length beyond u32).
    pub fn of(t: &Trajectory) -> Option<ConfidenceKey> {
        let c = t.confidence.as_ref()?;
        Some(ConfidenceKey {
            scores: [
                c.product.to_bits(),
                c.geometric_mean.to_bits(),
                c.min_top.to_bits(),
            ],
            length: u32::try_from(t.length).ok()?,
            correct: t.correct,
        })
    }

    /// The value of the `kind` composite, decoded from its bits.
    pub fn score(&self, kind: ScoreKind) -> f64 {
        let i = match kind {
            ScoreKind::Product => 0,
            ScoreKind::GeometricMean => 1,
            ScoreKind::MinTop => 2,
        };
        f64::from_bits(self.scores[i])
    }
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
    let mut total = 0u64;
    let mut counts: std::collections::BTreeMap<ConfidenceKey, u64> = Default::default();
    for t in trajectories {
        total += 1;
        if let Some(k) = ConfidenceKey::of(t) {
            *counts.entry(k).or_default() += 1;
        }
    }
    let mut r = calibration_report_counts(&counts, score)?;
    r.skipped = total - r.n;
    Ok(r)
}

/// The calibration report from counts of confidence keys (`skipped` = 0).
pub fn calibration_report_counts(
    counts: &std::collections::BTreeMap<ConfidenceKey, u64>,
    score: ScoreKind,
) -> Result<CalibrationReport, StatsError> {
    let scores = score_counts_weighted(counts.iter().map(|(k, &n)| (k.score(score), k.correct, n)));
    let lengths = score_counts_weighted(
        counts
            .iter()
            .map(|(k, &n)| (-f64::from(k.length), k.correct, n)),
    );
    let (wrong, positives) = totals(&scores);
    let n = wrong + positives;
    Ok(CalibrationReport {
        score,
        n,
        positives,
        skipped: 0,
        brier: brier_counts(&scores)?,
        reliability: reliability_counts(&scores)?,
        ranking: ranking_counts(&scores)?,
        negative_length: ranking_counts(&lengths)?,
        prevalence: prevalence_of_counts(positives, n),
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
