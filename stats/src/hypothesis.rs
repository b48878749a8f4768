//! Hypothesis tests: the exact McNemar test on discordant pairs and Holm's step-down
//! correction over a declared family (paper §3.4, A.6).

use serde::{Deserialize, Serialize};
use statrs::function::factorial::ln_binomial;

use crate::error::StatsError;
use crate::joint::JointTable;

/// An exact McNemar test of one paired table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct McNemar {
    /// Native correct, Serial wrong (b).
    pub native_only: u64,
    /// Native wrong, Serial correct (c).
    pub serial_only: u64,
    /// Two-sided exact p-value.
    pub p_value: f64,
}

impl McNemar {
    /// The exact McNemar test of `table`'s discordant pairs (b = native_only, c = serial_only).
    pub fn of(table: &JointTable) -> McNemar {
        McNemar {
            native_only: table.native_only,
            serial_only: table.serial_only,
            p_value: mcnemar_exact(table.native_only, table.serial_only),
        }
    }

    /// Number of discordant pairs b + c, the test's binomial sample size.
    pub fn discordant(&self) -> u64 {
        self.native_only + self.serial_only
    }
}

/// Exact two-sided McNemar p-value: under H0 the b of b + c discordant pairs are
/// Binomial(b + c, 1/2), and `p = min(1, 2·P(X ≤ min(b, c)))` — the definition of
/// `statsmodels.stats.contingency_tables.mcnemar(table, exact=True)`. No discordant pairs
/// give p = 1.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    (2.0 * binomial_half_cdf(b.min(c), b + c)).min(1.0)
}

/// P(X ≥ k) for X ~ Binomial(n, p): the exact one-sided binomial test of k or more successes
/// against success probability `p` (`scipy.stats.binomtest(k, n, p, alternative="greater")`).
/// `None` for n = 0 or p outside [0, 1].
pub fn binomial_upper_tail(k: u64, n: u64, p: f64) -> Option<f64> {
    use statrs::distribution::{Binomial, DiscreteCDF};
    if n == 0 {
        return None;
    }
    let b = Binomial::new(p, n).ok()?;
    Some(if k == 0 { 1.0 } else { b.sf(k - 1) })
}

/// P(X ≤ k) for X ~ Binomial(n, 1/2), summed exactly from the largest term downwards
/// (k ≤ n/2 makes the terms increase with i, so the sum is dominated by its last term).
pub fn binomial_half_cdf(k: u64, n: u64) -> f64 {
    if k >= n {
        return 1.0;
    }
    if k > n / 2 {
        // P(X ≤ k) = 1 − P(X ≤ n − k − 1) by symmetry.
        return 1.0 - binomial_half_cdf(n - k - 1, n);
    }
    let mut term = (ln_binomial(n, k) - n as f64 * std::f64::consts::LN_2).exp();
    let mut sum = 0.0;
    let mut i = k;
    loop {
        sum += term;
        if i == 0 || term < sum * 1e-18 {
            break;
        }
        // C(n, i − 1) = C(n, i) · i / (n − i + 1).
        term *= i as f64 / (n - i + 1) as f64;
        i -= 1;
    }
    sum.min(1.0)
}

/// Holm's step-down adjustment of a family of p-values, returned in input order:
/// with p sorted ascending (ties in input order), `adj(j) = min(1, max_{i ≤ j} (m − i)·p(i))`
/// (0-based i). The result is monotone in the sorted order, never below the raw p-value and
/// capped at 1 — `statsmodels.stats.multitest.multipletests(p, method="holm")[1]`.
pub fn holm(p_values: &[f64]) -> Result<Vec<f64>, StatsError> {
    if let Some(&bad) = p_values.iter().find(|p| !(0.0..=1.0).contains(*p)) {
        return Err(StatsError::InvalidPValue(bad));
    }
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]).then(a.cmp(&b)));
    let mut adjusted = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &idx) in order.iter().enumerate() {
        let scaled = ((m - rank) as f64 * p_values[idx]).min(1.0);
        running = running.max(scaled);
        adjusted[idx] = running;
    }
    Ok(adjusted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-12 * b.abs().max(1e-300), "{a} vs {b}");
    }

    /// `scipy.stats.binomtest(k, n, p, alternative="greater").pvalue`: 968/1024 for 3 of 10
    /// at 1/2, and 1 − (7/8)^10 for 1 of 10 at 1/8.
    #[test]
    fn the_upper_tail_matches_scipy() {
        close(binomial_upper_tail(3, 10, 0.5).unwrap(), 968.0 / 1024.0);
        close(
            binomial_upper_tail(1, 10, 0.125).unwrap(),
            1.0 - 0.875f64.powi(10),
        );
        assert_eq!(binomial_upper_tail(0, 5, 0.125), Some(1.0));
        assert_eq!(binomial_upper_tail(1, 0, 0.125), None);
    }

    #[test]
    fn mcnemar_matches_statsmodels() {
        // statsmodels.stats.contingency_tables.mcnemar([[0, b], [c, 0]], exact=True).pvalue
        // (statsmodels 0.15.0); equal to scipy.stats.binomtest(b, b + c, 0.5).pvalue here.
        let cases: [(u64, u64, f64); 10] = [
            (250, 0, 1.105429575052089e-75), // Table 1 Jev arithmetic discordant pairs
            (22, 31, 0.27167916606550335),   // Table 2 Qwen3-8B named fields
            (15, 40, 0.0010158471941252854), // Table 2 StartLux named fields
            (4, 5, 1.0),
            (0, 0, 1.0),
            (3, 3, 1.0),
            (1, 9, 0.021484375),
            (0, 6, 0.03125),
            (12, 2, 0.012939453125),
            (100, 130, 0.05561357778139238),
        ];
        for (b, c, p) in cases {
            close(mcnemar_exact(b, c), p);
        }
        let t = JointTable::new(6, 22, 31, 69);
        let m = McNemar::of(&t);
        assert_eq!(m.discordant(), 53);
        close(m.p_value, 0.27167916606550335);
    }

    #[test]
    fn binomial_cdf_edges() {
        assert_eq!(binomial_half_cdf(0, 0), 1.0);
        assert_eq!(binomial_half_cdf(0, 1), 0.5);
        close(binomial_half_cdf(2, 4), 11.0 / 16.0);
        close(binomial_half_cdf(3, 4), 15.0 / 16.0);
    }

    #[test]
    fn holm_matches_statsmodels() {
        // statsmodels.stats.multitest.multipletests(p, method="holm")[1]
        let p = [0.01, 0.04, 0.03, 0.005, 0.5];
        let expected = [0.04, 0.09, 0.09, 0.025, 0.5];
        for (a, e) in holm(&p).unwrap().iter().zip(expected) {
            close(*a, e);
        }
        let p = [0.02, 0.02, 0.9, 0.001, 0.04, 0.03];
        let expected = [0.1, 0.1, 0.9, 0.006, 0.1, 0.1];
        for (a, e) in holm(&p).unwrap().iter().zip(expected) {
            close(*a, e);
        }
        assert_eq!(holm(&[]).unwrap(), Vec::<f64>::new());
        assert_eq!(holm(&[0.3]).unwrap(), vec![0.3]);
        assert_eq!(holm(&[0.6, 0.7]).unwrap(), vec![1.0, 1.0]);
        assert_eq!(holm(&[0.1, 1.5]), Err(StatsError::InvalidPValue(1.5)));
        assert!(holm(&[f64::NAN]).is_err());
    }
}
