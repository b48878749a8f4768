//! Item-level statistics of arms on the same items, each with the whole-item bootstrap of
//! [`crate::bootstrap`] (items resampled within length): one arm's rate, the mean of per-item
//! shares (repeats averaged within the item), and the paired EM and SCR differences of two arms
//! scored on the same resample.

use crate::bootstrap::{bootstrap, BootstrapConfig, Counts, Estimate, StratifiedSample};
use crate::error::StatsError;
use crate::intervals::check_level;

/// The bootstrap of the one statistic `stat` of `sample` (`None`: undefined in a draw), with
/// its interval at `level`.
fn one_statistic<F>(
    sample: &StratifiedSample,
    cfg: &BootstrapConfig,
    level: f64,
    stat: F,
) -> Result<Estimate, StatsError>
where
    F: Fn(&Counts<'_>) -> Option<f64> + Sync,
{
    let draws = bootstrap(sample, cfg, 1, |counts, out| out[0] = stat(counts))?;
    Ok(draws[0].estimate(level))
}

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
    one_statistic(&sample, cfg, level, |counts| {
        let n: u64 = (0..4).map(|c| counts.pooled(c)).sum();
        // Code bit 0: first arm correct; bit 1: second arm correct.
        let first = (counts.pooled(1) + counts.pooled(3)) as f64;
        let second = (counts.pooled(2) + counts.pooled(3)) as f64;
        (n > 0).then(|| (first - second) / n as f64)
    })
}

/// Bootstrap of one arm's EM over its items, `(length, item_id, correct)`: a bar's interval
/// (e.g. Figure 16's "Intervals use 95% item bootstrap"), items resampled within length as
/// every other interval here.
pub fn em_rate<S, I>(items: I, cfg: &BootstrapConfig, level: f64) -> Result<Estimate, StatsError>
where
    S: AsRef<str>,
    I: IntoIterator<Item = (u32, S, bool)>,
{
    check_level(level)?;
    let sample = StratifiedSample::new(
        2,
        items.into_iter().map(|(l, id, hit)| (l, id, u8::from(hit))),
    )?;
    one_statistic(&sample, cfg, level, |counts| {
        let n = counts.pooled(0) + counts.pooled(1);
        (n > 0).then(|| counts.pooled(1) as f64 / n as f64)
    })
}

/// Bootstrap of the mean of per-item shares `correct / n`, items `(length, item_id, correct,
/// n)`: an item's repeated observations averaged within the item first (B.5: "Cross-model
/// estimates average two shared repeats within parent"), then over items resampled within
/// length. Each distinct (correct, n) is one code, so a draw costs O(strata × codes).
pub fn mean_share<S, I>(items: I, cfg: &BootstrapConfig, level: f64) -> Result<Estimate, StatsError>
where
    S: AsRef<str>,
    I: IntoIterator<Item = (u32, S, u32, u32)>,
{
    check_level(level)?;
    let mut shares: Vec<(u32, u32)> = Vec::new();
    let mut coded = Vec::new();
    for (length, id, correct, n) in items {
        if n == 0 || correct > n {
            return Err(StatsError::BadShare {
                item_id: id.as_ref().to_string(),
                correct,
                n,
            });
        }
        let code = match shares.iter().position(|&s| s == (correct, n)) {
            Some(c) => c,
            None => {
                shares.push((correct, n));
                shares.len() - 1
            }
        };
        let code = u8::try_from(code).map_err(|_| StatsError::InvalidCodeCount(code + 1))?;
        coded.push((length, id, code));
    }
    let sample = StratifiedSample::new(shares.len().max(1), coded)?;
    one_statistic(&sample, cfg, level, |counts| {
        let (mut items, mut sum) = (0u64, 0.0);
        for (code, &(correct, n)) in shares.iter().enumerate() {
            let k = counts.pooled(code);
            items += k;
            sum += k as f64 * f64::from(correct) / f64::from(n);
        }
        (items > 0).then(|| sum / items as f64)
    })
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
    one_statistic(&sample, cfg, level, |counts| {
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
        (den > 0).then(|| (first as f64 - second as f64) / den as f64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::tests::cfg;

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

        // A rate is the paired difference against an arm that is never correct, draw by draw
        // (the same stratum codes, so the same multinomial draws).
        let items: Vec<(u32, String, bool)> = (0..50u32)
            .map(|i| (3 + i % 3, format!("{i}"), i % 5 < 2))
            .collect();
        let rate = em_rate(items.clone(), &cfg(2000, 0), 0.95).unwrap();
        let against_never = paired_em_difference(
            items.into_iter().map(|(l, id, hit)| (l, id, hit, false)),
            &cfg(2000, 0),
            0.95,
        )
        .unwrap();
        assert!((rate.value.unwrap() - 0.4).abs() < 1e-15);
        assert_eq!(rate.interval, against_never.interval);

        // Shares of one observation each are the rate; two repeats average within the item.
        let once: Vec<(u32, String, u32, u32)> = (0..50u32)
            .map(|i| (3 + i % 3, format!("{i}"), u32::from(i % 5 < 2), 1))
            .collect();
        let mean = mean_share(once, &cfg(2000, 0), 0.95).unwrap();
        assert_eq!(mean.value, rate.value);
        let twice = [
            (3, "a", 2, 2),
            (3, "b", 1, 2),
            (3, "c", 0, 2),
            (4, "d", 1, 2),
        ];
        let mean = mean_share(twice, &cfg(2000, 0), 0.95).unwrap();
        assert_eq!(mean.value, Some(0.5));
        assert!(matches!(
            mean_share([(3, "a", 3, 2)], &cfg(10, 0), 0.95),
            Err(StatsError::BadShare { .. })
        ));
    }
}
