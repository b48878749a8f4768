//! Whole-item bootstrap stratified by length (paper §3.4, A.6, D.10).
//!
//! Design: every item of a group is reduced to a small integer code (the 2-bit joint cell of
//! a Native/Serial pair, 3 bits for two arms against Native, a position bitmask, …). A draw
//! resamples, within each stratum, as many items as the stratum holds, with replacement, and
//! only counts codes per stratum; the statistic is then recomputed from those count arrays.
//! Nothing is allocated per draw.
//!
//! Reproducibility:
//! - Items are sorted by (stratum, item_id) before resampling, so the result does not depend
//!   on the order in which items arrive. An item_id may occur only once in a sample.
//! - Draw `d` (0-based) of the stratum with key `L` uses its own generator:
//!   `ChaCha8Rng::seed_from_u64(seed ^ L·0x9E3779B97F4A7C15)` moved to stream `d`
//!   (`set_stream(d)`). Draws are therefore independent of how they are split over threads,
//!   the same seed always gives the same draws, and a stratum's resamples depend only on its
//!   own items (adding items of length 3 leaves the length-5 intervals unchanged). Indices are
//!   drawn from one `next_u32` each by Lemire's unbiased multiply-and-reject method
//!   (implemented here, so it does not change with `rand`).
//! - Conditional denominators are recomputed in every draw; a draw whose statistic is
//!   undefined (empty denominator, or NaN) is dropped and counted. With no defined draw the
//!   interval is undefined.
//! - Intervals are type-7 percentiles (linear interpolation between order statistics, numpy's
//!   default) at (1 − level)/2 and (1 + level)/2 of the defined draws.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
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
    pub draws: u32,
    pub seed: u64,
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

/// One stratum of a sample: its key (the length) and its items' codes in item_id order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stratum {
    pub key: u32,
    codes: Vec<u8>,
}

impl Stratum {
    pub fn len(&self) -> usize {
        self.codes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    pub fn codes(&self) -> &[u8] {
        &self.codes
    }
}

/// Items reduced to codes `0..code_count`, grouped into strata in ascending key order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StratifiedSample {
    code_count: usize,
    strata: Vec<Stratum>,
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
        let mut items: Vec<(u32, S, u8)> = items.into_iter().collect();
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
        items.sort_by(|a, b| (a.0, a.1.as_ref()).cmp(&(b.0, b.1.as_ref())));
        let mut strata: Vec<Stratum> = Vec::new();
        for (key, _, code) in items {
            match strata.last_mut() {
                Some(s) if s.key == key => s.codes.push(code),
                _ => strata.push(Stratum {
                    key,
                    codes: vec![code],
                }),
            }
        }
        let mut observed = vec![0u32; strata.len() * code_count];
        for (s, stratum) in strata.iter().enumerate() {
            for &c in &stratum.codes {
                observed[s * code_count + usize::from(c)] += 1;
            }
        }
        Ok(StratifiedSample {
            code_count,
            strata,
            observed,
        })
    }

    pub fn code_count(&self) -> usize {
        self.code_count
    }

    pub fn strata(&self) -> &[Stratum] {
        &self.strata
    }

    /// Index of the stratum with `key`.
    pub fn stratum_index(&self, key: u32) -> Option<usize> {
        self.strata.binary_search_by_key(&key, |s| s.key).ok()
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.strata.iter().map(Stratum::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.strata.is_empty()
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
    pub defined_draws: u32,
    pub dropped_draws: u32,
}

/// Runs the bootstrap: per draw, resample each stratum and call `stat` with the draw's code
/// counts; it writes one value per statistic into its output slice (`None` or NaN = undefined
/// in this draw). Returns each statistic's observed value and defined draws.
pub fn bootstrap<F>(
    sample: &StratifiedSample,
    cfg: &BootstrapConfig,
    n_stats: usize,
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
    // Below a few thousand item draws a thread costs more than it saves.
    let work = u64::from(cfg.draws) * sample.len() as u64;
    let threads = if work < 50_000 {
        1
    } else {
        threads.min(cfg.draws as usize).max(1)
    };
    let seeds: Vec<[u8; 32]> = sample
        .strata
        .iter()
        .map(|s| stratum_seed(cfg.seed, s.key))
        .collect();
    let seeds = &seeds[..];
    let draws = u64::from(cfg.draws);
    let chunk = draws.div_ceil(threads as u64);
    let ranges: Vec<(u32, u32)> = (0..threads as u64)
        .map(|t| ((t * chunk).min(draws), ((t + 1) * chunk).min(draws)))
        .filter(|(a, b)| a < b)
        .map(|(a, b)| (a as u32, b as u32))
        .collect();

    let parts: Vec<Part> = if ranges.len() == 1 {
        vec![run_draws(sample, seeds, ranges[0], n_stats, &stat)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = ranges
                .iter()
                .map(|&r| {
                    let stat = &stat;
                    scope.spawn(move || run_draws(sample, seeds, r, n_stats, stat))
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

fn run_draws<F>(
    sample: &StratifiedSample,
    seeds: &[[u8; 32]],
    (start, end): (u32, u32),
    n_stats: usize,
    stat: &F,
) -> Part
where
    F: Fn(&Counts<'_>, &mut [Option<f64>]),
{
    let k = sample.code_count;
    let mut counts = vec![0u32; sample.strata.len() * k];
    let mut out = vec![None; n_stats];
    let len = (end - start) as usize;
    let mut values: Vec<Vec<f64>> = (0..n_stats).map(|_| Vec::with_capacity(len)).collect();
    let mut dropped = vec![0u32; n_stats];
    for draw in start..end {
        counts.fill(0);
        for ((stratum, slot), seed) in sample
            .strata
            .iter()
            .zip(counts.chunks_exact_mut(k))
            .zip(seeds)
        {
            // A fresh generator per (stratum, draw): stream `draw` of the stratum's key.
            let mut rng = ChaCha8Rng::from_seed(*seed);
            rng.set_stream(u64::from(draw));
            let codes = &stratum.codes[..];
            let n = codes.len() as u32;
            for _ in 0..n {
                let j = bounded(&mut rng, n) as usize;
                slot[usize::from(codes[j])] += 1;
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
    pub table: JointTable,
    pub native_em: Estimate,
    pub serial_em: Estimate,
    pub scr: Estimate,
    pub gain_rate: Estimate,
    pub loss_mass: Estimate,
}

/// Equal-length mixture estimates (see [`crate::joint::EqualLengthMixture`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EqualLengthEstimates {
    pub native_em: Estimate,
    pub serial_em: Estimate,
    pub scr: Estimate,
}

/// The joint metrics of a group with length-stratified bootstrap intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JointBootstrap {
    pub draws: u32,
    /// Per length, ascending. Each length's draws are exactly a within-length bootstrap.
    pub per_length: Vec<(u32, JointEstimates)>,
    /// All lengths pooled (the natural length mixture).
    pub all: JointEstimates,
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
    let strata = sample.strata().len();
    let n_stats = (strata + 1) * JOINT_STATS + 3;
    let draws = bootstrap(&sample, cfg, n_stats, |counts, out| {
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
        .strata()
        .iter()
        .enumerate()
        .map(|(s, stratum)| {
            let table = table_of(observed.stratum(s));
            all_table.merge(&table);
            (stratum.key, estimates(s * JOINT_STATS, table))
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

// ---------------------------------------------------------------------------------------
// Paired differences between two arms on the same items.

/// Paired bootstrap of EM(first) − EM(second) over the same items, e.g. Union − Full Serial
/// EM: each draw resamples items once (within length) and computes both arms on that same
/// resample. Items are `(length, item_id, first_correct, second_correct)`; the difference is
/// over all items pooled (the natural length mixture).
pub fn paired_em_difference<S, I>(
    items: I,
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<Estimate, StatsError>
where
    S: AsRef<str>,
    I: IntoIterator<Item = (u32, S, bool, bool)>,
{
    check_level(level)?;
    let sample = StratifiedSample::new(
        4,
        items
            .into_iter()
            .map(|(l, id, a, b)| (l, id, u8::from(a) | (u8::from(b) << 1))),
    )?;
    let draws = bootstrap(&sample, cfg, 1, |counts, out| {
        let n: u64 = (0..4).map(|c| counts.pooled(c)).sum();
        // Code bit 0: first arm correct; bit 1: second arm correct.
        let first = (counts.pooled(1) + counts.pooled(3)) as f64;
        let second = (counts.pooled(2) + counts.pooled(3)) as f64;
        out[0] = (n > 0).then(|| (first - second) / n as f64);
    })?;
    Ok(draws[0].estimate(level))
}

/// Paired bootstrap of SCR(first) − SCR(second): two Serial arms against the same Native run
/// on the same items, items `(length, item_id, native_correct, first_correct,
/// second_correct)`. The shared Native-success denominator is recomputed in every draw;
/// draws without a Native success are dropped.
pub fn paired_scr_difference<S, I>(
    items: I,
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<Estimate, StatsError>
where
    S: AsRef<str>,
    I: IntoIterator<Item = (u32, S, bool, bool, bool)>,
{
    check_level(level)?;
    let sample = StratifiedSample::new(
        8,
        items.into_iter().map(|(l, id, native, a, b)| {
            (
                l,
                id,
                u8::from(native) | (u8::from(a) << 1) | (u8::from(b) << 2),
            )
        }),
    )?;
    let draws = bootstrap(&sample, cfg, 1, |counts, out| {
        let (mut den, mut first, mut second) = (0u64, 0u64, 0u64);
        for code in (0..8).filter(|c| c & 1 == 1) {
            let k = counts.pooled(code);
            den += k;
            if code & 2 != 0 {
                first += k;
            }
            if code & 4 != 0 {
                second += k;
            }
        }
        out[0] = (den > 0).then(|| (first as f64 - second as f64) / den as f64);
    })?;
    Ok(draws[0].estimate(level))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(draws: u32, threads: usize) -> BootstrapConfig {
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
        assert_eq!(s.strata().len(), 2);
        assert_eq!(s.strata()[1].codes(), &[0, 1]);
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

    #[test]
    fn paired_differences() {
        // First arm correct on 30 of 60 items, second on 20; items where the second is correct
        // are a subset of the first, so every draw has a non-negative difference.
        let items: Vec<(u32, String, bool, bool)> = (0..60u32)
            .map(|i| {
                (
                    3 + i % 2,
                    format!("{i}"),
                    i % 2 == 0,
                    i % 6 < 4 && i % 2 == 0,
                )
            })
            .collect();
        let e = paired_em_difference(items, &cfg(2000, 0), 0.95).unwrap();
        assert!((e.value.unwrap() - 10.0 / 60.0).abs() < 1e-15);
        let i = e.interval.unwrap();
        assert!(i.low >= 0.0 && i.low < 10.0 / 60.0 && i.high > 10.0 / 60.0);

        let items: Vec<(u32, String, bool, bool, bool)> = (0..40u32)
            .map(|i| (3, format!("{i}"), i < 20, i < 10, !(5..30).contains(&i)))
            .collect();
        let e = paired_scr_difference(items, &cfg(2000, 0), 0.95).unwrap();
        assert!((e.value.unwrap() - 0.25).abs() < 1e-15);
        assert!(e.interval.unwrap().contains(0.25));
    }
}
