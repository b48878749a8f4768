//! Whole-item bootstrap stratified by length (paper §3.4, A.6, D.10), computed from counts.
//!
//! Design: every item of a group is reduced to a small integer code (the 2-bit joint cell of
//! a Native/Serial pair, 3 bits for two arms against Native, a position pattern, …), and a
//! group is kept only as its code counts per stratum. Resampling the n items of a stratum
//! with replacement gives code counts that are Multinomial(n, observed counts / n), so a draw
//! is one multinomial draw per stratum over the observed counts; the statistic is recomputed
//! from those count arrays. A draw costs O(strata × codes), whatever the number of items:
//! the live statistics keep counts only, and a snapshot's cost does not grow with
//! the history. [`bootstrap_per_item`] is the direct per-item resampling, kept as the
//! reference the count path is tested against (same distribution, different random numbers).
//!
//! Reproducibility:
//! - A stratum is its key and its code counts: the result does not depend on item order,
//!   arrival order, or which items hold which codes.
//! - Draw `d` (0-based) of the stratum with key `L` uses its own generator:
//!   `ChaCha8Rng::seed_from_u64(seed ^ L·0x9E3779B97F4A7C15)` moved to stream `d`
//!   (`set_stream(d)`). Draws are therefore independent of how they are split over threads,
//!   the same seed always gives the same draws, and a stratum's resamples depend only on its
//!   own counts (adding items of length 3 leaves the length-5 intervals unchanged).
//! - The multinomial is drawn as conditional binomials over the codes in ascending order,
//!   skipping codes with a zero count: x_c ~ Binomial(n − Σ_{c'<c} x_c', k_c / Σ_{c'≥c} k_c'),
//!   with `rand_distr`'s `Binomial` (BINV inversion below n·p = 10, else BTPE), the last
//!   nonzero code taking the rest. The version of `rand_distr` is pinned by `Cargo.lock`.
//! - Conditional denominators are recomputed in every draw; a draw whose statistic is
//!   undefined (empty denominator, or NaN) is dropped and counted. With no defined draw the
//!   interval is undefined.
//! - Intervals are type-7 percentiles (linear interpolation between order statistics, numpy's
//!   default) at (1 − level)/2 and (1 + level)/2 of the defined draws.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Binomial, Distribution};
use serde::{Deserialize, Serialize};

use crate::error::StatsError;
use crate::intervals::{check_level, percentile_interval, Interval};
use crate::joint::{equal_length_rates, joint_rates, JointCell, JointTable};

/// Draws of the working tables (paper: 9,999; 99,999 for final tables).
pub const DEFAULT_DRAWS: u32 = 9_999;
/// The paper's original inference seed (A.6).
pub const DEFAULT_SEED: u64 = 20_261_005;

/// Bootstrap settings. `threads` does not change any result; 0 means one per available core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootstrapConfig {
    /// Number of bootstrap draws per statistic (at least 1).
    pub draws: u32,
    /// Base seed; each stratum's generator is derived from it and the stratum key (see the module
    /// docs).
    pub seed: u64,
    /// Worker threads; 0 means one per available core. Results do not depend on it.
    pub threads: usize,
}

impl Default for BootstrapConfig {
    fn default() -> BootstrapConfig {
        BootstrapConfig {
            draws: DEFAULT_DRAWS,
            seed: DEFAULT_SEED,
            threads: 0,
        }
    }
}

/// A group's items as code counts per stratum, strata in ascending key order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StratifiedSample {
    code_count: usize,
    keys: Vec<u32>,
    /// `keys.len() × code_count` counts, stratum-major.
    observed: Vec<u32>,
}

impl StratifiedSample {
    /// Builds a sample from `(stratum, item_id, code)` triples in any order. Errors on a
    /// repeated item_id, a code not below `code_count`, or `code_count` outside 1..=256.
    pub fn new<S, I>(code_count: usize, items: I) -> Result<StratifiedSample, StatsError>
    where
        S: AsRef<str>,
        I: IntoIterator<Item = (u32, S, u8)>,
    {
        if !(1..=256).contains(&code_count) {
            return Err(StatsError::InvalidCodeCount(code_count));
        }
        let items: Vec<(u32, S, u8)> = items.into_iter().collect();
        if let Some(&(_, _, code)) = items.iter().find(|(_, _, c)| usize::from(*c) >= code_count) {
            return Err(StatsError::CodeOutOfRange {
                code,
                k: code_count,
            });
        }
        // Duplicate ids, whatever their strata.
        let mut ids: Vec<&str> = items.iter().map(|(_, id, _)| id.as_ref()).collect();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(StatsError::DuplicateItem {
                group: String::new(),
                item_id: w[0].to_string(),
            });
        }
        let mut strata: std::collections::BTreeMap<u32, Vec<u64>> = Default::default();
        for (key, _, code) in &items {
            strata.entry(*key).or_insert_with(|| vec![0; code_count])[usize::from(*code)] += 1;
        }
        StratifiedSample::from_counts(code_count, strata)
    }

    /// Builds a sample from code counts per stratum key. Strata with no item are left out.
    /// Errors when `code_count` is 0, a count vector has another length, or a stratum holds
    /// more than `u32::MAX` items.
    pub fn from_counts<I>(code_count: usize, strata: I) -> Result<StratifiedSample, StatsError>
    where
        I: IntoIterator<Item = (u32, Vec<u64>)>,
    {
        if code_count == 0 {
            return Err(StatsError::InvalidCodeCount(code_count));
        }
        let mut strata: Vec<(u32, Vec<u64>)> = strata
            .into_iter()
            .filter(|(_, c)| c.iter().any(|&k| k > 0))
            .collect();
        strata.sort_by_key(|(k, _)| *k);
        let mut keys = Vec::with_capacity(strata.len());
        let mut observed = Vec::with_capacity(strata.len() * code_count);
        for (key, counts) in strata {
            if counts.len() != code_count {
                return Err(StatsError::InvalidCodeCount(counts.len()));
            }
            if keys.last() == Some(&key) {
                return Err(StatsError::DuplicateStratum(key));
            }
            let n: u64 = counts.iter().sum();
            if n > u64::from(u32::MAX) {
                return Err(StatsError::StratumTooLarge { key, items: n });
            }
            keys.push(key);
            observed.extend(counts.iter().map(|&k| k as u32));
        }
        Ok(StratifiedSample {
            code_count,
            keys,
            observed,
        })
    }

    /// Size of the code alphabet: every item code is below it.
    pub fn code_count(&self) -> usize {
        self.code_count
    }

    /// Stratum keys, ascending.
    pub fn keys(&self) -> &[u32] {
        &self.keys
    }

    /// Index of the stratum with `key`.
    pub fn stratum_index(&self, key: u32) -> Option<usize> {
        self.keys.binary_search(&key).ok()
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.observed.iter().map(|&k| k as usize).sum()
    }

    /// Whether the sample holds no stratum (and so no item).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The observed code counts (the statistic's point estimate is computed from these).
    pub fn observed(&self) -> Counts<'_> {
        Counts {
            code_count: self.code_count,
            counts: &self.observed,
        }
    }
}

/// Code counts per stratum of one sample or one bootstrap draw.
#[derive(Debug, Clone, Copy)]
pub struct Counts<'a> {
    code_count: usize,
    counts: &'a [u32],
}

impl<'a> Counts<'a> {
    /// Number of strata (one per stratum key).
    pub fn strata(&self) -> usize {
        self.counts.len() / self.code_count
    }

    /// Code counts of stratum `s` (index in ascending key order).
    pub fn stratum(&self, s: usize) -> &'a [u32] {
        &self.counts[s * self.code_count..(s + 1) * self.code_count]
    }

    /// Code counts of every stratum, in ascending key order.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u32]> + 'a {
        self.counts.chunks_exact(self.code_count)
    }

    /// Count of `code` summed over strata.
    pub fn pooled(&self, code: usize) -> u64 {
        self.iter().map(|c| u64::from(c[code])).sum()
    }
}

/// The defined draws of one statistic.
#[derive(Debug, Clone, PartialEq)]
pub struct StatDraws {
    /// Observed (point) value on the original sample.
    pub observed: Option<f64>,
    /// Defined draw values, in draw order.
    pub values: Vec<f64>,
    /// Draws where the statistic was undefined.
    pub dropped: u32,
}

impl StatDraws {
    /// Type-7 percentile interval of the defined draws; `None` when all were dropped.
    pub fn interval(&self, level: f64) -> Option<Interval> {
        let mut v = self.values.clone();
        percentile_interval(&mut v, level)
    }

    /// The point value with its interval.
    pub fn estimate(&self, level: f64) -> Estimate {
        Estimate {
            value: self.observed,
            interval: self.interval(level),
            defined_draws: self.values.len() as u32,
            dropped_draws: self.dropped,
        }
    }
}

/// A point value with its bootstrap percentile interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// On the observed sample; `None` when undefined.
    pub value: Option<f64>,
    /// `None` when every draw was dropped.
    pub interval: Option<Interval>,
    /// Draws that gave a finite value.
    pub defined_draws: u32,
    /// Draws where the statistic was undefined (empty denominator or NaN) and left out of the
    /// interval.
    pub dropped_draws: u32,
}

/// How one draw resamples a stratum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resampling {
    /// One multinomial draw over the stratum's code counts (the default path).
    Multinomial,
    /// n uniform item indices over the stratum's items (the per-item reference).
    PerItem,
}

/// Runs the bootstrap: per draw, resample each stratum (one multinomial draw over its code
/// counts) and call `stat` with the draw's code counts; it writes one value per statistic
/// into its output slice (`None` or NaN = undefined in this draw). Returns each statistic's
/// observed value and defined draws. The cost does not depend on the number of items.
pub fn bootstrap<F>(
    sample: &StratifiedSample,
    cfg: &BootstrapConfig,
    n_stats: usize,
    stat: F,
) -> Result<Vec<StatDraws>, StatsError>
where
    F: Fn(&Counts<'_>, &mut [Option<f64>]) + Sync,
{
    run_bootstrap(sample, cfg, n_stats, Resampling::Multinomial, stat)
}

/// The direct per-item bootstrap: per draw and stratum, n item indices drawn uniformly with
/// replacement (Lemire's unbiased multiply-and-reject on `next_u32`), the resampled items'
/// codes counted. Its draws have the same distribution as [`bootstrap`]'s but not the same
/// values, and its cost grows with the number of items: the reference the count path is
/// tested against, and the baseline of `choice2seq bench stats`.
pub fn bootstrap_per_item<F>(
    sample: &StratifiedSample,
    cfg: &BootstrapConfig,
    n_stats: usize,
    stat: F,
) -> Result<Vec<StatDraws>, StatsError>
where
    F: Fn(&Counts<'_>, &mut [Option<f64>]) + Sync,
{
    run_bootstrap(sample, cfg, n_stats, Resampling::PerItem, stat)
}

fn run_bootstrap<F>(
    sample: &StratifiedSample,
    cfg: &BootstrapConfig,
    n_stats: usize,
    resampling: Resampling,
    stat: F,
) -> Result<Vec<StatDraws>, StatsError>
where
    F: Fn(&Counts<'_>, &mut [Option<f64>]) + Sync,
{
    if cfg.draws == 0 {
        return Err(StatsError::ZeroDraws);
    }
    let mut observed = vec![None; n_stats];
    stat(&sample.observed(), &mut observed);

    let threads = match cfg.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        t => t,
    };
    // Below a few thousand units of work a thread costs more than it saves.
    let per_draw = match resampling {
        Resampling::Multinomial => sample.observed.len() as u64 * 4,
        Resampling::PerItem => sample.len() as u64,
    };
    let work = u64::from(cfg.draws) * per_draw;
    let threads = if work < 50_000 {
        1
    } else {
        threads.min(cfg.draws as usize).max(1)
    };
    let seeds: Vec<[u8; 32]> = sample
        .keys
        .iter()
        .map(|&key| stratum_seed(cfg.seed, key))
        .collect();
    let seeds = &seeds[..];
    let draws = u64::from(cfg.draws);
    let chunk = draws.div_ceil(threads as u64);
    let ranges: Vec<(u32, u32)> = (0..threads as u64)
        .map(|t| ((t * chunk).min(draws), ((t + 1) * chunk).min(draws)))
        .filter(|(a, b)| a < b)
        .map(|(a, b)| (a as u32, b as u32))
        .collect();
    // The per-item path needs the items: codes in code order (which item holds which code
    // does not change the distribution of a uniform resample).
    let items: Vec<Vec<u32>> = match resampling {
        Resampling::Multinomial => Vec::new(),
        Resampling::PerItem => sample
            .observed()
            .iter()
            .map(|c| {
                c.iter()
                    .enumerate()
                    .flat_map(|(code, &k)| std::iter::repeat_n(code as u32, k as usize))
                    .collect()
            })
            .collect(),
    };
    let items = &items[..];
    let run = |range| run_draws(sample, seeds, items, range, n_stats, &stat);

    let parts: Vec<Part> = if ranges.len() == 1 {
        vec![run(ranges[0])]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = ranges
                .iter()
                .map(|&r| {
                    let run = &run;
                    scope.spawn(move || run(r))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| match h.join() {
                    Ok(part) => part,
                    Err(panic) => std::panic::resume_unwind(panic),
                })
                .collect()
        })
    };

    let mut out: Vec<StatDraws> = observed
        .into_iter()
        .map(|o| StatDraws {
            observed: o.filter(|v| v.is_finite()),
            values: Vec::with_capacity(cfg.draws as usize),
            dropped: 0,
        })
        .collect();
    for part in parts {
        for (i, values) in part.values.into_iter().enumerate() {
            out[i].values.extend(values);
            out[i].dropped += part.dropped[i];
        }
    }
    Ok(out)
}

struct Part {
    values: Vec<Vec<f64>>,
    dropped: Vec<u32>,
}

/// The ChaCha8 key of a stratum.
fn stratum_seed(seed: u64, key: u32) -> [u8; 32] {
    ChaCha8Rng::seed_from_u64(seed ^ u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15)).get_seed()
}

/// `items` is empty for the multinomial path, else each stratum's item codes.
fn run_draws<F>(
    sample: &StratifiedSample,
    seeds: &[[u8; 32]],
    items: &[Vec<u32>],
    (start, end): (u32, u32),
    n_stats: usize,
    stat: &F,
) -> Part
where
    F: Fn(&Counts<'_>, &mut [Option<f64>]),
{
    let k = sample.code_count;
    let mut counts = vec![0u32; sample.observed.len()];
    let mut out = vec![None; n_stats];
    let len = (end - start) as usize;
    let mut values: Vec<Vec<f64>> = (0..n_stats).map(|_| Vec::with_capacity(len)).collect();
    let mut dropped = vec![0u32; n_stats];
    for draw in start..end {
        counts.fill(0);
        for (s, (slot, seed)) in counts.chunks_exact_mut(k).zip(seeds).enumerate() {
            // A fresh generator per (stratum, draw): stream `draw` of the stratum's key.
            let mut rng = ChaCha8Rng::from_seed(*seed);
            rng.set_stream(u64::from(draw));
            if items.is_empty() {
                multinomial(&mut rng, sample.observed().stratum(s), slot);
            } else {
                let codes = &items[s][..];
                let n = codes.len() as u32;
                for _ in 0..n {
                    let j = bounded(&mut rng, n) as usize;
                    slot[codes[j] as usize] += 1;
                }
            }
        }
        out.fill(None);
        stat(
            &Counts {
                code_count: k,
                counts: &counts,
            },
            &mut out,
        );
        for (i, v) in out.iter().enumerate() {
            match v {
                Some(x) if x.is_finite() => values[i].push(*x),
                _ => dropped[i] += 1,
            }
        }
    }
    Part { values, dropped }
}

/// One draw of Multinomial(n = Σ observed, observed / n) into `slot`: conditional binomials
/// over the nonzero codes in ascending order, the last nonzero code taking what is left.
fn multinomial(rng: &mut ChaCha8Rng, observed: &[u32], slot: &mut [u32]) {
    let mut items_left: u64 = observed.iter().map(|&k| u64::from(k)).sum();
    let mut mass_left = items_left;
    let last = observed.iter().rposition(|&k| k > 0);
    for (code, &k) in observed.iter().enumerate() {
        if k == 0 || items_left == 0 {
            continue;
        }
        let x = if Some(code) == last || u64::from(k) == mass_left {
            items_left
        } else {
            let p = f64::from(k) / mass_left as f64;
            // 0 < p < 1 here, so the distribution exists.
            Binomial::new(items_left, p).map_or(0, |b| b.sample(rng))
        };
        slot[code] = x as u32;
        items_left -= x;
        mass_left -= u64::from(k);
    }
}

/// Uniform integer in `0..n` (n > 0) from 32-bit outputs: Lemire's multiply-and-reject.
#[inline]
fn bounded(rng: &mut ChaCha8Rng, n: u32) -> u32 {
    let mut m = u64::from(rng.next_u32()) * u64::from(n);
    if (m as u32) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u32) < threshold {
            m = u64::from(rng.next_u32()) * u64::from(n);
        }
    }
    (m >> 32) as u32
}

// ---------------------------------------------------------------------------------------
// Joint-table bootstrap of one (model, domain, comparison) group.

/// Estimates of the joint metrics of one stratum or of all items.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct JointEstimates {
    /// The observed 2×2 table the point values are computed from.
    pub table: JointTable,
    /// Native EM, the share of items with Native correct.
    pub native_em: Estimate,
    /// Serial EM, the share of items with Serial correct.
    pub serial_em: Estimate,
    /// SCR, the share of Native successes that Serial also gets right; undefined without a Native
    /// success.
    pub scr: Estimate,
    /// Gain rate, the share of Native failures that Serial gets right; undefined without a Native
    /// failure.
    pub gain_rate: Estimate,
    /// Loss mass, the share of all items that Native gets right and Serial wrong.
    pub loss_mass: Estimate,
}

/// Equal-length mixture estimates (see [`crate::joint::EqualLengthMixture`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EqualLengthEstimates {
    /// Native EM with every length present weighted equally.
    pub native_em: Estimate,
    /// Serial EM with every length present weighted equally.
    pub serial_em: Estimate,
    /// SCR of the equal-length mixture; undefined when no length has a Native success.
    pub scr: Estimate,
}

/// The joint metrics of a group with length-stratified bootstrap intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JointBootstrap {
    /// Number of bootstrap draws behind every interval.
    pub draws: u32,
    /// Per length, ascending. Each length's draws are exactly a within-length bootstrap.
    pub per_length: Vec<(u32, JointEstimates)>,
    /// All lengths pooled (the natural length mixture).
    pub all: JointEstimates,
    /// The equal-length mixture (paper D.15) from the same draws.
    pub equal_length: EqualLengthEstimates,
}

const JOINT_STATS: usize = 5;

/// Bootstraps Native EM, Serial EM, SCR, gain rate and loss mass per length and pooled, and
/// the equal-length mixture, from `(length, item_id, cell)` items, all from the same draws.
pub fn bootstrap_joint<S, I>(
    items: I,
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<JointBootstrap, StatsError>
where
    S: AsRef<str>,
    I: IntoIterator<Item = (u32, S, JointCell)>,
{
    check_level(level)?;
    let sample = StratifiedSample::new(
        4,
        items
            .into_iter()
            .map(|(length, id, cell)| (length, id, cell.code())),
    )?;
    bootstrap_joint_counts(&sample, cfg, level)
}

/// [`bootstrap_joint`] from the joint tables per length: a sample with 4 codes
/// ([`JointCell::code`]) and one stratum per length.
pub fn bootstrap_joint_counts(
    sample: &StratifiedSample,
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<JointBootstrap, StatsError> {
    check_level(level)?;
    if sample.code_count() != 4 {
        return Err(StatsError::InvalidCodeCount(sample.code_count()));
    }
    let strata = sample.keys().len();
    let n_stats = (strata + 1) * JOINT_STATS + 3;
    let draws = bootstrap(sample, cfg, n_stats, |counts, out| {
        let mut pooled = [0.0f64; 4];
        for (s, c) in counts.iter().enumerate() {
            let cells = [c[0] as f64, c[1] as f64, c[2] as f64, c[3] as f64];
            for (p, x) in pooled.iter_mut().zip(cells) {
                *p += x;
            }
            out[s * JOINT_STATS..(s + 1) * JOINT_STATS].copy_from_slice(&joint_rates(cells));
        }
        let base = strata * JOINT_STATS;
        out[base..base + JOINT_STATS].copy_from_slice(&joint_rates(pooled));
        let (n, s, r) = equal_length_rates(
            counts
                .iter()
                .map(|c| [c[0] as f64, c[1] as f64, c[2] as f64, c[3] as f64]),
        );
        out[base + JOINT_STATS..].copy_from_slice(&[n, s, r]);
    })?;
    let estimates = |first: usize, table: JointTable| JointEstimates {
        table,
        native_em: draws[first].estimate(level),
        serial_em: draws[first + 1].estimate(level),
        scr: draws[first + 2].estimate(level),
        gain_rate: draws[first + 3].estimate(level),
        loss_mass: draws[first + 4].estimate(level),
    };
    let table_of = |c: &[u32]| {
        JointTable::new(
            u64::from(c[0]),
            u64::from(c[1]),
            u64::from(c[2]),
            u64::from(c[3]),
        )
    };
    let observed = sample.observed();
    let mut all_table = JointTable::default();
    let per_length = sample
        .keys()
        .iter()
        .enumerate()
        .map(|(s, &key)| {
            let table = table_of(observed.stratum(s));
            all_table.merge(&table);
            (key, estimates(s * JOINT_STATS, table))
        })
        .collect();
    let base = strata * JOINT_STATS;
    Ok(JointBootstrap {
        draws: cfg.draws,
        per_length,
        all: estimates(base, all_table),
        equal_length: EqualLengthEstimates {
            native_em: draws[base + JOINT_STATS].estimate(level),
            serial_em: draws[base + JOINT_STATS + 1].estimate(level),
            scr: draws[base + JOINT_STATS + 2].estimate(level),
        },
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Test settings: `draws` draws on `threads` threads, seed 7.
    pub(crate) fn cfg(draws: u32, threads: usize) -> BootstrapConfig {
        BootstrapConfig {
            draws,
            seed: 7,
            threads,
        }
    }

    #[test]
    fn bounded_is_in_range_and_covers() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut seen = [0u32; 7];
        for _ in 0..7_000 {
            seen[bounded(&mut rng, 7) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 850 && c < 1150), "{seen:?}");
        assert_eq!(bounded(&mut rng, 1), 0);
    }

    #[test]
    fn sample_rejects_bad_input() {
        let dup = StratifiedSample::new(2, [(3, "a", 0u8), (4, "a", 1)]);
        assert!(matches!(dup, Err(StatsError::DuplicateItem { .. })));
        let code = StratifiedSample::new(2, [(3, "a", 2u8)]);
        assert_eq!(code, Err(StatsError::CodeOutOfRange { code: 2, k: 2 }));
        assert_eq!(
            StratifiedSample::new(0, Vec::<(u32, &str, u8)>::new()),
            Err(StatsError::InvalidCodeCount(0))
        );
        let s = StratifiedSample::new(2, [(4, "b", 1u8), (3, "z", 0), (4, "a", 0)]).unwrap();
        assert_eq!(s.keys(), &[3, 4]);
        assert_eq!(s.stratum_index(4), Some(1));
        assert_eq!(s.observed().stratum(1), &[1, 1]);
    }

    #[test]
    fn threads_do_not_change_draws() {
        let items: Vec<(u32, String, u8)> = (0..300)
            .map(|i| (3 + i % 6, format!("item{i:03}"), (i * 7 % 4) as u8))
            .collect();
        let sample = StratifiedSample::new(4, items).unwrap();
        let stat = |c: &Counts<'_>, out: &mut [Option<f64>]| {
            out[0] = Some(c.pooled(0) as f64);
            out[1] = (c.pooled(1) > 75).then(|| c.pooled(1) as f64);
        };
        let one = bootstrap(&sample, &cfg(999, 1), 2, stat).unwrap();
        let three = bootstrap(&sample, &cfg(999, 3), 2, stat).unwrap();
        assert_eq!(one, three);
        assert_eq!(one[0].values.len(), 999);
        assert_eq!(one[1].values.len() as u32 + one[1].dropped, 999);
        assert!(one[1].dropped > 0);
        assert_eq!(one[0].observed, Some(75.0));
    }

    /// Two-sample chi-square test of homogeneity on the histogram of a discrete statistic;
    /// cells with fewer than 10 expected draws are pooled into their neighbours.
    fn homogeneity_p(a: &[f64], b: &[f64]) -> f64 {
        use statrs::distribution::{ChiSquared, ContinuousCDF};
        let mut hist: BTreeMap<i64, (f64, f64)> = BTreeMap::new();
        for &x in a {
            hist.entry(x.round() as i64).or_default().0 += 1.0;
        }
        for &x in b {
            hist.entry(x.round() as i64).or_default().1 += 1.0;
        }
        let (na, nb) = (a.len() as f64, b.len() as f64);
        let mut cells: Vec<(f64, f64)> = Vec::new();
        let mut acc = (0.0, 0.0);
        for &(x, y) in hist.values() {
            acc = (acc.0 + x, acc.1 + y);
            if acc.0 + acc.1 >= 20.0 {
                cells.push(acc);
                acc = (0.0, 0.0);
            }
        }
        if let Some(last) = cells.last_mut() {
            *last = (last.0 + acc.0, last.1 + acc.1);
        }
        let mut chi = 0.0;
        for &(x, y) in &cells {
            let t = x + y;
            let (ea, eb) = (t * na / (na + nb), t * nb / (na + nb));
            chi += (x - ea).powi(2) / ea + (y - eb).powi(2) / eb;
        }
        let df = (cells.len() - 1) as f64;
        1.0 - ChiSquared::new(df).unwrap().cdf(chi)
    }

    /// Paper §3.4: "Intervals resample whole items or source clusters within frozen strata,
    /// redrawing conditional denominators"; Table 1: "Intervals are length-stratified item
    /// bootstrap 95% CIs". Resampling n_L whole items of a stratum with replacement is a
    /// multinomial draw over its cells, which this test checks against the per-item resample.
    #[test]
    fn multinomial_draws_agree_with_per_item_resampling() {
        // Three strata of different sizes and cell mixes, one with a rare cell; 20,000 draws
        // by each method. The statistics: the pooled count of one cell and SCR (a ratio with
        // a random denominator). Same distribution ⇔ homogeneity is not rejected, and mean
        // and variance match the multinomial's exact moments.
        let mut strata: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        strata.insert(3, vec![40, 7, 2, 15]);
        strata.insert(5, vec![12, 20, 9, 23]);
        strata.insert(8, vec![1, 30, 0, 33]);
        let sample = StratifiedSample::from_counts(4, strata.clone()).unwrap();
        let stat = |c: &Counts<'_>, out: &mut [Option<f64>]| {
            out[0] = Some(c.pooled(0) as f64);
            let den = c.pooled(0) + c.pooled(1);
            out[1] = (den > 0).then(|| c.pooled(0) as f64 / den as f64);
        };
        let cfg = cfg(20_000, 0);
        let counts = bootstrap(&sample, &cfg, 2, stat).unwrap();
        let items = bootstrap_per_item(&sample, &cfg, 2, stat).unwrap();
        assert_eq!(counts[0].observed, items[0].observed);
        assert_ne!(counts[0].values, items[0].values);
        // Exact moments of the pooled Both count: Σ_L n_L p_L and Σ_L n_L p_L (1 − p_L).
        let (mut mean, mut var) = (0.0, 0.0);
        for c in strata.values() {
            let n: u64 = c.iter().sum();
            let p = c[0] as f64 / n as f64;
            mean += n as f64 * p;
            var += n as f64 * p * (1.0 - p);
        }
        for draws in [&counts[0].values, &items[0].values] {
            let m = draws.iter().sum::<f64>() / draws.len() as f64;
            let v = draws.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (draws.len() - 1) as f64;
            let se = (var / draws.len() as f64).sqrt();
            assert!((m - mean).abs() < 4.5 * se, "mean {m} vs {mean}");
            assert!((v / var - 1.0).abs() < 0.06, "variance {v} vs {var}");
        }
        let p = homogeneity_p(&counts[0].values, &items[0].values);
        assert!(p > 1e-3, "pooled count: homogeneity p = {p}");
        let scale = |v: &[f64]| v.iter().map(|x| x * 100.0).collect::<Vec<_>>();
        let p = homogeneity_p(&scale(&counts[1].values), &scale(&items[1].values));
        assert!(p > 1e-3, "SCR: homogeneity p = {p}");
        let (a, b) = (
            counts[1].interval(0.95).unwrap(),
            items[1].interval(0.95).unwrap(),
        );
        assert!((a.low - b.low).abs() < 0.01 && (a.high - b.high).abs() < 0.01);
    }

    #[test]
    fn multinomial_keeps_stratum_sizes() {
        let sample =
            StratifiedSample::from_counts(3, [(2u32, vec![5, 0, 7]), (9, vec![0, 0, 4])]).unwrap();
        let stat = |c: &Counts<'_>, out: &mut [Option<f64>]| {
            let s0: u32 = c.stratum(0).iter().sum();
            let s1 = c.stratum(1);
            out[0] = Some(f64::from(s0));
            // A code with no item is never drawn; a one-code stratum is constant.
            out[1] = Some(f64::from(c.stratum(0)[1] + s1[0] + s1[1]));
            out[2] = Some(f64::from(s1[2]));
        };
        let d = bootstrap(&sample, &cfg(500, 1), 3, stat).unwrap();
        assert!(d[0].values.iter().all(|&x| x == 12.0));
        assert!(d[1].values.iter().all(|&x| x == 0.0));
        assert!(d[2].values.iter().all(|&x| x == 4.0));
        assert_eq!(sample.len(), 16);
        assert_eq!(sample.keys(), &[2, 9]);
    }

    #[test]
    fn strata_resample_independently() {
        let l4: Vec<(u32, String, JointCell)> = (0..30)
            .map(|i| (4, format!("b{i}"), JointCell::ALL[i % 3]))
            .collect();
        let mut both = l4.clone();
        both.extend((0..17).map(|i| (3, format!("a{i}"), JointCell::ALL[i % 4])));
        let alone = bootstrap_joint(l4, &cfg(300, 1), 0.95).unwrap();
        let with = bootstrap_joint(both, &cfg(300, 2), 0.95).unwrap();
        assert_eq!(with.per_length[1], alone.per_length[0]);
        assert_ne!(with.all, alone.all);
    }

    #[test]
    fn zero_draws_is_an_error() {
        let sample = StratifiedSample::new(2, [(3, "a", 0u8)]).unwrap();
        let r = bootstrap(&sample, &cfg(0, 1), 1, |_, _| {});
        assert_eq!(r, Err(StatsError::ZeroDraws));
    }

    #[test]
    fn em_interval_has_binomial_width() {
        // 384 items, 64 per length, half correct in every length: the stratified bootstrap
        // standard error is sqrt(0.25 / 384) = 0.0255, so the 95% interval is about
        // 0.5 ± 0.050.
        let items: Vec<(u32, String, JointCell)> = (0..384u32)
            .map(|i| {
                let cell = if (i / 6) % 2 == 0 {
                    JointCell::Both
                } else {
                    JointCell::Neither
                };
                (3 + i % 6, format!("i{i}"), cell)
            })
            .collect();
        let b = bootstrap_joint(items, &cfg(4000, 0), 0.95).unwrap();
        let i = b.all.native_em.interval.unwrap();
        assert_eq!(b.all.native_em.value, Some(0.5));
        assert!(
            (i.low - 0.45).abs() < 0.01 && (i.high - 0.55).abs() < 0.01,
            "{i:?}"
        );
        // Every item in the Native-correct cells is Serial-correct: SCR is 1 in every draw.
        let scr = b.all.scr.interval.unwrap();
        assert_eq!((scr.low, scr.high), (1.0, 1.0));
        assert_eq!(b.per_length.len(), 6);
        assert_eq!(b.per_length[0].1.table, JointTable::new(32, 0, 0, 32));
        assert_eq!(b.equal_length.native_em.value, Some(0.5));
    }

    #[test]
    fn undefined_scr_drops_every_draw() {
        let items = [
            (3u32, "a", JointCell::Neither),
            (3, "b", JointCell::SerialOnly),
        ];
        let b = bootstrap_joint(items, &cfg(200, 1), 0.95).unwrap();
        assert_eq!(b.all.scr.value, None);
        assert_eq!(b.all.scr.interval, None);
        assert_eq!(b.all.scr.dropped_draws, 200);
        assert_eq!(b.all.scr.defined_draws, 0);
    }

    #[test]
    fn rare_native_success_drops_some_draws() {
        // One Native success among 20 items: (19/20)^20 ≈ 35.8% of draws miss it.
        let items: Vec<(u32, String, JointCell)> = (0..20)
            .map(|i| {
                let cell = if i == 0 {
                    JointCell::Both
                } else {
                    JointCell::Neither
                };
                (5, format!("{i:02}"), cell)
            })
            .collect();
        let b = bootstrap_joint(items, &cfg(5000, 0), 0.95).unwrap();
        let share = f64::from(b.all.scr.dropped_draws) / 5000.0;
        assert!((share - 0.358).abs() < 0.03, "{share}");
        assert_eq!(b.all.scr.defined_draws + b.all.scr.dropped_draws, 5000);
    }
}
