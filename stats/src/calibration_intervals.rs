//! Calibration and discrimination of completed strings with item-bootstrap intervals (D.14,
//! Table D14; D.15, Table D12). D.14: "The original confidence population has 384 Serial
//! items per domain. … Ten fixed width bins define ECE. Bootstrap uses 99,999 item draws
//! within length, seed 20261005. Discrimination is undefined in one-class samples". D.15:
//! "Negative target length is a fixed ranking baseline, without Brier/ECE. Scores share
//! outcomes and bootstrap draws; one-class replicates are undefined." Table D12: "Differences
//! compare Product with negative-length ranking, with paired 95% item intervals."
//!
//! Each item carries its three scores, its length (the stratum) and its correctness. An item's
//! bootstrap code is its index within its stratum, so a draw's code counts are the items'
//! multiplicities (at most 256 items per stratum: the original population has 64 per length).
//! Every draw recomputes, for each score, Brier, ECE, AUROC and AP on the resampled items
//! ([`crate::calibration`]'s count forms) and the paired AUROC and AP differences from the
//! negative-length ranking of the same draw. The items are weighted as sampled (the source
//! mixture); on a population with the same count at every length this is also D.15's
//! equal-length mixture ("each length weight 1/6 and each item 1/(6 n_L)").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::bootstrap::{bootstrap, BootstrapConfig, Estimate, StratifiedSample};
use crate::calibration::{
    bin_index, brier_counts, ranking_counts, reliability_counts, score_counts_weighted, ScoreKind,
    ECE_BINS,
};
use crate::error::StatsError;
use crate::intervals::check_level;

/// The most items one stratum can hold (an item's code is its index in its stratum).
pub const MAX_STRATUM_ITEMS: usize = 256;

/// One completed string: its scores (product, geometric mean, minimum top choice), length and
/// correctness.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredItem {
    /// The item's id, unique within the population.
    pub item_id: String,
    /// The target length L in characters: the bootstrap stratum.
    pub length: u32,
    /// The confidence composites in [`ScoreKind::ALL`] order (product, geometric mean, minimum top
    /// choice), each a probability in [0, 1].
    pub scores: [f64; 3],
    /// Whether the completed string was correct (exact match).
    pub correct: bool,
}

/// One score's estimates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreIntervals {
    /// The confidence composite these estimates are of.
    pub score: ScoreKind,
    /// Brier score of the composite, in [0, 1].
    pub brier: Estimate,
    /// Ten-bin ECE of the composite, in [0, 1].
    pub ece: Estimate,
    /// AUROC of the composite; draws with a one-class resample are dropped.
    pub auroc: Estimate,
    /// Average precision of the composite; one-class draws are dropped.
    pub average_precision: Estimate,
    /// AUROC of the score minus AUROC of the negative-length ranking, paired in each draw.
    pub auroc_minus_length: Estimate,
    /// AP of the score minus AP of the negative-length ranking, paired in each draw.
    pub ap_minus_length: Estimate,
}

/// Every score's estimates on one population.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationIntervals {
    /// Number of items in the population.
    pub items: u64,
    /// Number of correct items among them.
    pub correct: u64,
    /// One entry per composite, in [`ScoreKind::ALL`] order.
    pub scores: Vec<ScoreIntervals>,
}

const STATS_PER_SCORE: usize = 6;

/// The estimates of `items` (one population: a model, domain and arm), resampled within
/// length. `None` for an empty population.
pub fn calibration_intervals(
    items: &[ScoredItem],
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<Option<CalibrationIntervals>, StatsError> {
    check_level(level)?;
    if items.is_empty() {
        return Ok(None);
    }
    let draws = item_bootstrap(
        items,
        cfg,
        STATS_PER_SCORE * ScoreKind::ALL.len(),
        |resampled, out| {
            let drawn = resampled();
            let lengths = score_counts_weighted(
                drawn
                    .iter()
                    .map(|(item, k)| (-f64::from(item.length), item.correct, *k)),
            );
            let Ok(length_ranking) = ranking_counts(&lengths) else {
                return;
            };
            for s in 0..ScoreKind::ALL.len() {
                let scores = score_counts_weighted(
                    drawn
                        .iter()
                        .map(|(item, k)| (item.scores[s], item.correct, *k)),
                );
                let slot = &mut out[s * STATS_PER_SCORE..(s + 1) * STATS_PER_SCORE];
                let (Ok(brier), Ok(reliability), Ok(ranking)) = (
                    brier_counts(&scores),
                    reliability_counts(&scores),
                    ranking_counts(&scores),
                ) else {
                    continue;
                };
                slot[0] = brier;
                slot[1] = reliability.ece;
                slot[2] = ranking.auroc;
                slot[3] = ranking.average_precision;
                slot[4] = ranking.auroc.zip(length_ranking.auroc).map(|(a, b)| a - b);
                slot[5] = ranking
                    .average_precision
                    .zip(length_ranking.average_precision)
                    .map(|(a, b)| a - b);
            }
        },
    )?;
    let scores = ScoreKind::ALL
        .iter()
        .enumerate()
        .map(|(s, &score)| {
            let d = &draws[s * STATS_PER_SCORE..(s + 1) * STATS_PER_SCORE];
            ScoreIntervals {
                score,
                brier: d[0].estimate(level),
                ece: d[1].estimate(level),
                auroc: d[2].estimate(level),
                average_precision: d[3].estimate(level),
                auroc_minus_length: d[4].estimate(level),
                ap_minus_length: d[5].estimate(level),
            }
        })
        .collect();
    Ok(Some(CalibrationIntervals {
        items: items.len() as u64,
        correct: items.iter().filter(|i| i.correct).count() as u64,
        scores,
    }))
}

/// The item bootstrap within length: each item's code is its index in its stratum, so a
/// draw's code counts are the items' multiplicities; `stat` receives a function listing the
/// drawn (item, multiplicity) pairs. Scores must be probabilities.
fn item_bootstrap<'a, F>(
    items: &'a [ScoredItem],
    cfg: &BootstrapConfig,
    n_stats: usize,
    stat: F,
) -> Result<Vec<crate::bootstrap::StatDraws>, StatsError>
where
    F: Fn(&dyn Fn() -> Vec<(&'a ScoredItem, u64)>, &mut [Option<f64>]) + Sync,
{
    let mut strata: BTreeMap<u32, Vec<&'a ScoredItem>> = BTreeMap::new();
    for item in items {
        strata.entry(item.length).or_default().push(item);
    }
    let largest = strata.values().map(Vec::len).max().unwrap_or(0);
    if largest > MAX_STRATUM_ITEMS {
        return Err(StatsError::InvalidCodeCount(largest));
    }
    for item in items {
        if let Some(bad) = item.scores.iter().find(|s| !(0.0..=1.0).contains(*s)) {
            return Err(StatsError::InvalidScore(*bad));
        }
    }
    let sample = StratifiedSample::new(
        largest,
        strata.iter().flat_map(|(&length, members)| {
            members
                .iter()
                .enumerate()
                .map(move |(code, item)| (length, item.item_id.as_str(), code as u8))
        }),
    )?;
    let members: Vec<&Vec<&'a ScoredItem>> = strata.values().collect();
    bootstrap(&sample, cfg, n_stats, |counts, out| {
        let resampled = || -> Vec<(&'a ScoredItem, u64)> {
            counts
                .iter()
                .zip(&members)
                .flat_map(|(stratum, items)| {
                    items
                        .iter()
                        .zip(stratum)
                        .filter(|(_, &k)| k > 0)
                        .map(|(item, &k)| (*item, u64::from(k)))
                })
                .collect()
        };
        stat(&resampled, out)
    })
}

/// Expected precision when a fraction `coverage` of the weighted strings is answered, highest
/// score first (Figure 21: "Paired 95% item bootstrap intervals use uniform expected inclusion
/// for cutoff ties"): strings tied at the cutoff enter in proportion, each with the same
/// probability. `None` for an empty sample or zero coverage.
pub fn precision_at_coverage(weighted: &[(f64, bool, u64)], coverage: f64) -> Option<f64> {
    let total: u64 = weighted.iter().map(|w| w.2).sum();
    let answered = coverage * total as f64;
    if total == 0 || answered <= 0.0 {
        return None;
    }
    let counts = score_counts_weighted(weighted.iter().copied());
    let (mut taken, mut correct) = (0.0f64, 0.0f64);
    for c in counts.iter().rev() {
        let w = (c.wrong + c.correct) as f64;
        let share = ((answered - taken) / w).min(1.0);
        if share <= 0.0 {
            break;
        }
        taken += share * w;
        correct += share * c.correct as f64;
    }
    Some(correct / answered)
}

/// The rankers of a screening curve: the three scores, then the negative-length ranking.
pub const SCREENING_RANKERS: usize = 4;

/// Precision at each of `coverages` for the three scores and the negative-length ranking
/// (index 3), each with its item-bootstrap interval within length: `[ranker][coverage]`.
pub fn screening_intervals(
    items: &[ScoredItem],
    coverages: &[f64],
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<Vec<Vec<Estimate>>, StatsError> {
    check_level(level)?;
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let n = coverages.len();
    let draws = item_bootstrap(items, cfg, SCREENING_RANKERS * n, |resampled, out| {
        let drawn = resampled();
        for r in 0..SCREENING_RANKERS {
            let weighted: Vec<(f64, bool, u64)> = drawn
                .iter()
                .map(|(item, k)| {
                    let score = if r < 3 {
                        item.scores[r]
                    } else {
                        -f64::from(item.length)
                    };
                    (score, item.correct, *k)
                })
                .collect();
            for (c, &coverage) in coverages.iter().enumerate() {
                out[r * n + c] = precision_at_coverage(&weighted, coverage);
            }
        }
    })?;
    Ok((0..SCREENING_RANKERS)
        .map(|r| (0..n).map(|c| draws[r * n + c].estimate(level)).collect())
        .collect())
}

/// One reliability bin with its accuracy's item-bootstrap interval (Figure 19: "Bin counts
/// give each estimate's support. Whole items are resampled within length.").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BinInterval {
    /// Lower edge b/10 of the bin, included.
    pub low: f64,
    /// Upper edge (b + 1)/10, excluded except for the last bin, which holds 1.0.
    pub high: f64,
    /// Number of observed items whose score falls in the bin.
    pub count: u64,
    /// Number of correct items among them.
    pub correct: u64,
    /// `None` for an empty bin.
    pub mean_score: Option<f64>,
    /// Correct / count; draws where the bin is empty are dropped.
    pub accuracy: Estimate,
}

/// The ten reliability bins of `score` on `items`, each bin's accuracy with its interval from
/// items resampled within length (an item's code is its bin and correctness).
pub fn reliability_intervals(
    items: &[ScoredItem],
    score: ScoreKind,
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<Vec<BinInterval>, StatsError> {
    check_level(level)?;
    let s = score_index(score);
    let mut strata: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    let mut count = [0u64; ECE_BINS];
    let mut correct = [0u64; ECE_BINS];
    let mut score_sum = [0.0f64; ECE_BINS];
    for item in items {
        let x = item.scores[s];
        if !(0.0..=1.0).contains(&x) {
            return Err(StatsError::InvalidScore(x));
        }
        let b = bin_index(x);
        count[b] += 1;
        correct[b] += u64::from(item.correct);
        score_sum[b] += x;
        strata
            .entry(item.length)
            .or_insert_with(|| vec![0; 2 * ECE_BINS])[2 * b + usize::from(item.correct)] += 1;
    }
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let sample = StratifiedSample::from_counts(2 * ECE_BINS, strata)?;
    let draws = bootstrap(&sample, cfg, ECE_BINS, |counts, out| {
        for (b, slot) in out.iter_mut().enumerate() {
            let (wrong, right) = (counts.pooled(2 * b), counts.pooled(2 * b + 1));
            if wrong + right > 0 {
                *slot = Some(right as f64 / (wrong + right) as f64);
            }
        }
    })?;
    Ok((0..ECE_BINS)
        .map(|b| BinInterval {
            low: b as f64 / ECE_BINS as f64,
            high: (b + 1) as f64 / ECE_BINS as f64,
            count: count[b],
            correct: correct[b],
            mean_score: (count[b] > 0).then(|| score_sum[b] / count[b] as f64),
            accuracy: draws[b].estimate(level),
        })
        .collect())
}

fn score_index(score: ScoreKind) -> usize {
    ScoreKind::ALL
        .iter()
        .position(|k| *k == score)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::{auroc, average_precision, brier, ece, negative_length_baseline};

    fn items() -> Vec<ScoredItem> {
        let rows: [(u32, f64, bool); 8] = [
            (3, 0.9, true),
            (3, 0.6, true),
            (3, 0.4, false),
            (3, 0.2, false),
            (4, 0.8, true),
            (4, 0.5, false),
            (4, 0.3, true),
            (4, 0.1, false),
        ];
        rows.iter()
            .enumerate()
            .map(|(i, &(length, s, correct))| ScoredItem {
                item_id: format!("i{i}"),
                length,
                scores: [s, s.sqrt(), s / 2.0],
                correct,
            })
            .collect()
    }

    fn cfg() -> BootstrapConfig {
        BootstrapConfig {
            draws: 999,
            seed: 11,
            threads: 1,
        }
    }

    /// The point values are the plain metrics of the population, and the paired differences
    /// are each score's AUROC/AP minus the negative-length ranking's ("Differences compare
    /// Product with negative-length ranking").
    #[test]
    fn point_values_are_the_populations_metrics() {
        let items = items();
        let r = calibration_intervals(&items, &cfg(), 0.95)
            .unwrap()
            .unwrap();
        assert_eq!((r.items, r.correct), (8, 4));
        let product: Vec<(f64, bool)> = items.iter().map(|i| (i.scores[0], i.correct)).collect();
        let lengths: Vec<(usize, bool)> = items
            .iter()
            .map(|i| (i.length as usize, i.correct))
            .collect();
        let p = &r.scores[0];
        assert_eq!(p.score, ScoreKind::Product);
        assert_eq!(p.brier.value, brier(&product).unwrap());
        assert_eq!(p.ece.value, ece(&product).unwrap());
        assert_eq!(p.auroc.value, auroc(&product).unwrap());
        assert_eq!(
            p.average_precision.value,
            average_precision(&product).unwrap()
        );
        let length = negative_length_baseline(&lengths).unwrap();
        let want = auroc(&product).unwrap().unwrap() - length.auroc.unwrap();
        assert!((p.auroc_minus_length.value.unwrap() - want).abs() < 1e-12);
        for s in &r.scores {
            let i = s.brier.interval.unwrap();
            assert!(i.low <= s.brier.value.unwrap() && s.brier.value.unwrap() <= i.high);
        }
    }

    /// One-class draws leave AUROC undefined and are dropped, never counted as 0.5.
    #[test]
    fn one_class_draws_are_dropped() {
        let items: Vec<ScoredItem> = (0..4)
            .map(|i| ScoredItem {
                item_id: format!("i{i}"),
                length: 3,
                scores: [0.1 * f64::from(i), 0.5, 0.5],
                correct: i == 0,
            })
            .collect();
        let r = calibration_intervals(&items, &cfg(), 0.95)
            .unwrap()
            .unwrap();
        assert!(r.scores[0].auroc.dropped_draws > 0);
        assert!(r.scores[0].brier.dropped_draws == 0);
    }

    /// Bins hold the items whose score falls in them; an item counts once per bin, and the
    /// accuracy is correct / count with an interval from the draws.
    #[test]
    fn reliability_bins_count_items_and_their_accuracy() {
        let items = items();
        let bins = reliability_intervals(&items, ScoreKind::Product, &cfg(), 0.95).unwrap();
        assert_eq!(bins.len(), ECE_BINS);
        assert_eq!(bins.iter().map(|b| b.count).sum::<u64>(), 8);
        // Product scores 0.9 (correct) and 0.8 (correct) sit in bins 9 and 8.
        assert_eq!((bins[9].count, bins[9].correct), (1, 1));
        assert_eq!(bins[9].accuracy.value, Some(1.0));
        assert_eq!(bins[5].mean_score, Some(0.5));
        assert_eq!(bins[7].count, 0);
        assert_eq!(bins[7].accuracy.value, None);
        let plain = crate::calibration::reliability(
            &items
                .iter()
                .map(|i| (i.scores[0], i.correct))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        for (b, p) in bins.iter().zip(&plain.bins) {
            assert_eq!(b.count, p.count);
            assert_eq!(b.accuracy.value, p.accuracy);
        }
    }

    /// Ties at the cutoff enter in proportion: with scores 0.9 (correct), 0.5 (correct), 0.5
    /// (wrong), 0.1 (wrong), half coverage answers 0.9 and half of each 0.5 string: 1.5/2.
    #[test]
    fn precision_at_coverage_shares_cutoff_ties() {
        let w = [
            (0.9, true, 1),
            (0.5, true, 1),
            (0.5, false, 1),
            (0.1, false, 1),
        ];
        assert_eq!(precision_at_coverage(&w, 0.25), Some(1.0));
        assert_eq!(precision_at_coverage(&w, 0.5), Some(0.75));
        assert_eq!(precision_at_coverage(&w, 1.0), Some(0.5));
        assert_eq!(precision_at_coverage(&w, 0.0), None);
        // A weight counts as that many strings.
        let w2 = [(0.9, true, 2), (0.1, false, 2)];
        assert_eq!(precision_at_coverage(&w2, 0.5), Some(1.0));
        let s = screening_intervals(&items(), &[0.25, 1.0], &cfg(), 0.95).unwrap();
        assert_eq!(s.len(), SCREENING_RANKERS);
        // Everything answered: precision is the prevalence for every ranker.
        for r in &s {
            assert_eq!(r[1].value, Some(0.5));
        }
        // Product's top quarter (0.9, 0.8) is correct.
        assert_eq!(s[0][0].value, Some(1.0));
    }

    #[test]
    fn bad_input_is_an_error() {
        let mut bad = items();
        bad[0].scores[0] = 1.5;
        assert_eq!(
            calibration_intervals(&bad, &cfg(), 0.95),
            Err(StatsError::InvalidScore(1.5))
        );
        assert_eq!(calibration_intervals(&[], &cfg(), 0.95), Ok(None));
        let crowded: Vec<ScoredItem> = (0..257)
            .map(|i| ScoredItem {
                item_id: format!("i{i}"),
                length: 3,
                scores: [0.5; 3],
                correct: i % 2 == 0,
            })
            .collect();
        assert_eq!(
            calibration_intervals(&crowded, &cfg(), 0.95),
            Err(StatsError::InvalidCodeCount(257))
        );
    }
}
