//! Confidence intervals: exact two-sided Clopper–Pearson intervals for binomial proportions
//! (used for zero-success cells, paper §3.4, A.6) and type-7 percentiles for bootstrap draws.

use serde::{Deserialize, Serialize};
use statrs::distribution::{Beta, Continuous, ContinuousCDF};

use crate::error::StatsError;

/// The default two-sided confidence level.
pub const DEFAULT_LEVEL: f64 = 0.95;

/// A two-sided interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower end, at the (1 − level)/2 quantile; `low ≤ high`.
    pub low: f64,
    /// Upper end, at the (1 + level)/2 quantile.
    pub high: f64,
}

impl Interval {
    /// Whether `x` lies in the closed interval [low, high].
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// The length `high − low`.
    pub fn width(&self) -> f64 {
        self.high - self.low
    }
}

/// Checks that a confidence level lies in the open interval (0, 1).
pub fn check_level(level: f64) -> Result<(), StatsError> {
    if level > 0.0 && level < 1.0 {
        Ok(())
    } else {
        Err(StatsError::InvalidLevel(level))
    }
}

/// Exact two-sided Clopper–Pearson interval for `k` successes in `n` trials at `level`:
/// `low = Beta(k, n − k + 1).ppf(α/2)` and `high = Beta(k + 1, n − k).ppf(1 − α/2)` with
/// α = 1 − level; `low = 0` for k = 0 and `high = 1` for k = n. `None` for n = 0 (no trials,
/// undefined proportion). Equals `statsmodels.stats.proportion.proportion_confint(k, n,
/// alpha, method="beta")`.
pub fn clopper_pearson(k: u64, n: u64, level: f64) -> Result<Option<Interval>, StatsError> {
    check_level(level)?;
    if k > n {
        return Err(StatsError::InvalidCount { k, n });
    }
    if n == 0 {
        return Ok(None);
    }
    let alpha = 1.0 - level;
    let (kf, nf) = (k as f64, n as f64);
    let low = if k == 0 {
        0.0
    } else {
        beta_quantile(kf, nf - kf + 1.0, alpha / 2.0)?
    };
    let high = if k == n {
        1.0
    } else {
        beta_quantile(kf + 1.0, nf - kf, 1.0 - alpha / 2.0)?
    };
    Ok(Some(Interval { low, high }))
}

/// The `q` quantile of Beta(a, b): statrs's inverse CDF (AS 109), polished by at most four
/// Newton steps on `cdf(x) − q` that are kept only while they shrink the residual (statrs
/// alone is accurate to about 1e-10 relative, e.g. for 13/2,347).
fn beta_quantile(a: f64, b: f64, q: f64) -> Result<f64, StatsError> {
    let dist = Beta::new(a, b).map_err(|e| StatsError::Distribution(e.to_string()))?;
    let mut x = dist.inverse_cdf(q);
    let mut residual = dist.cdf(x) - q;
    for _ in 0..4 {
        let density = dist.pdf(x);
        if residual == 0.0 || !(density.is_finite() && density > 0.0) {
            break;
        }
        let next = x - residual / density;
        if !(next > 0.0 && next < 1.0) {
            break;
        }
        let next_residual = dist.cdf(next) - q;
        if next_residual.abs() >= residual.abs() {
            break;
        }
        x = next;
        residual = next_residual;
    }
    Ok(x)
}

/// The type-7 percentile (Hyndman & Fan 1996; numpy's default `linear` method, R's default)
/// of already sorted values: with h = (m − 1)·q, the value is
/// `x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋ + 1] − x[⌊h⌋])`. `None` for an empty slice; `q` is clamped to
/// [0, 1].
pub fn percentile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    let m = sorted.len();
    if m == 0 {
        return None;
    }
    let h = (m - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor();
    let i = lo as usize;
    let frac = h - lo;
    let x0 = sorted[i];
    if i + 1 >= m || frac == 0.0 {
        return Some(x0);
    }
    Some(x0 + frac * (sorted[i + 1] - x0))
}

/// The type-7 percentile of unsorted values, found by selection (O(m)) instead of a full
/// sort; reorders `values`. Equal to [`percentile_sorted`] of the sorted values. Values must
/// not be NaN.
pub fn percentile_select(values: &mut [f64], q: f64) -> Option<f64> {
    let m = values.len();
    if m == 0 {
        return None;
    }
    let h = (m - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor();
    let i = lo as usize;
    let frac = h - lo;
    let (_, x0, upper) = values.select_nth_unstable_by(i, f64::total_cmp);
    let x0 = *x0;
    if frac == 0.0 || upper.is_empty() {
        return Some(x0);
    }
    // The next order statistic is the smallest value above position i.
    let x1 = upper.iter().copied().fold(f64::INFINITY, f64::min);
    Some(x0 + frac * (x1 - x0))
}

/// The two-sided type-7 percentile interval at `level`: the (1 − level)/2 and
/// (1 + level)/2 percentiles. `None` for no values. Reorders `values`.
pub fn percentile_interval(values: &mut [f64], level: f64) -> Option<Interval> {
    let alpha = 1.0 - level;
    let low = percentile_select(values, alpha / 2.0)?;
    let high = percentile_select(values, 1.0 - alpha / 2.0)?;
    Some(Interval { low, high })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cp(k: u64, n: u64, level: f64) -> Interval {
        clopper_pearson(k, n, level).unwrap().unwrap()
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-12 * b.abs().max(1e-3), "{a} vs {b}");
    }

    #[test]
    fn clopper_pearson_matches_scipy() {
        // References: scipy.stats.beta.ppf(α/2, k, n-k+1) and beta.ppf(1-α/2, k+1, n-k)
        // (scipy 1.17.1), identical to statsmodels proportion_confint(k, n, method="beta").
        let cases: [(u64, u64, f64, f64, f64); 10] = [
            // Paper A.6: exact upper bounds 6.1% for 0/59 and 1.0% for 0/363.
            (0, 59, 0.95, 0.0, 0.060608900950339835),
            (0, 363, 0.95, 0.0, 0.010110741640179916),
            (8, 379, 0.95, 0.009156018199735862, 0.04116640507334434),
            (123, 373, 0.95, 0.2822266061964885, 0.3800190561668531),
            (5, 10, 0.95, 0.18708602844739855, 0.8129139715526015),
            (10, 10, 0.95, 0.6915028921812392, 1.0),
            // Paper §6.1: 13/2,347, exact 95% interval 0.30–0.95%.
            (13, 2347, 0.95, 0.002952474244122174, 0.009453209459600358),
            // Paper D.15: 0.67% (0/546) and 0.79% (0/468).
            (0, 546, 0.95, 0.0, 0.006733417740526411),
            (0, 468, 0.95, 0.0, 0.007851237810452343),
            (7, 20, 0.90, 0.1773109175744491, 0.5580345113154888),
        ];
        for (k, n, level, low, high) in cases {
            let i = cp(k, n, level);
            close(i.low, low);
            close(i.high, high);
        }
        let one = cp(1, 1, 0.95);
        close(one.low, 0.025000000000000022);
        assert_eq!(one.high, 1.0);
    }

    #[test]
    fn clopper_pearson_edges() {
        assert_eq!(clopper_pearson(0, 0, 0.95), Ok(None));
        assert_eq!(
            clopper_pearson(3, 2, 0.95),
            Err(StatsError::InvalidCount { k: 3, n: 2 })
        );
        assert_eq!(
            clopper_pearson(1, 2, 1.0),
            Err(StatsError::InvalidLevel(1.0))
        );
        assert!(clopper_pearson(1, 2, f64::NAN).is_err());
    }

    #[test]
    fn type7_matches_numpy() {
        // numpy.percentile(x, [2.5, 97.5, 50, 10]) (default method "linear", numpy 2.x).
        let x = [0.3, 0.1, 0.7, 0.2, 0.9, 0.5, 0.55, 0.05, 0.8, 0.4, 0.6];
        let expected = [(0.025, 0.0625), (0.975, 0.875), (0.5, 0.5), (0.10, 0.1)];
        let mut sorted = x.to_vec();
        sorted.sort_by(f64::total_cmp);
        for (q, e) in expected {
            close(percentile_sorted(&sorted, q).unwrap(), e);
            let mut v = x.to_vec();
            close(percentile_select(&mut v, q).unwrap(), e);
        }
        assert_eq!(percentile_sorted(&[], 0.5), None);
        assert_eq!(percentile_select(&mut [2.0], 0.975), Some(2.0));
        let mut v = x.to_vec();
        let i = percentile_interval(&mut v, 0.95).unwrap();
        close(i.low, 0.0625);
        close(i.high, 0.875);
    }
}
