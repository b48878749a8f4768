//! Whole-item bootstrap intervals an exhibit computes from a run's trajectories: a bar's rate
//! and the paired difference of two arms on the same items. Both resample items within target
//! length (A.6: "Intervals resample whole items … within length"), with the run's own draws,
//! seed and level (`[stats]` of the panel), so an exhibit's interval is the one the panel
//! declares.

use anyhow::Context;
use c2s_records::Trajectory;
use c2s_stats::{em_rate, mean_share, paired_em_difference, Estimate, StatsConfig};

/// An estimate with its interval, `(value, low, high)`; a bound is `None` where the
/// interval is undefined.
pub type Interval = (f64, Option<f64>, Option<f64>);

/// A trajectory's item key: its domain and item id (item ids are unique within a bank).
fn item_key(t: &Trajectory) -> String {
    format!("{}/{}", t.domain.as_str(), t.item_id)
}

fn length(t: &Trajectory) -> anyhow::Result<u32> {
    u32::try_from(t.length).with_context(|| format!("item {}: length {}", t.item_id, t.length))
}

/// An estimate as `(value, low, high)`; `None` when its value is undefined (no items).
pub fn triple(e: &Estimate) -> Option<Interval> {
    let value = e.value?;
    Some((value, e.interval.map(|i| i.low), e.interval.map(|i| i.high)))
}

/// The share of `trajectories` (one per item) where `hit` holds, with its whole-item
/// interval.
pub fn rate<'a>(
    trajectories: impl IntoIterator<Item = &'a Trajectory>,
    hit: impl Fn(&Trajectory) -> bool,
    stats: &StatsConfig,
) -> anyhow::Result<Option<Interval>> {
    let items = trajectories
        .into_iter()
        .map(|t| Ok((length(t)?, item_key(t), hit(t))))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if items.is_empty() {
        return Ok(None);
    }
    Ok(triple(&em_rate(items, &stats.bootstrap(), stats.level)?))
}

/// `hit`'s rate on `compared` minus its rate on `reference`, over the items both hold (one
/// trajectory per item on each side), with the paired whole-item interval: each draw resamples
/// items once and scores both sides on that resample.
pub fn paired_difference<'a>(
    compared: impl IntoIterator<Item = &'a Trajectory>,
    reference: impl IntoIterator<Item = &'a Trajectory>,
    hit: impl Fn(&Trajectory) -> bool,
    stats: &StatsConfig,
) -> anyhow::Result<Option<Interval>> {
    let reference: std::collections::BTreeMap<String, bool> = reference
        .into_iter()
        .map(|t| (item_key(t), hit(t)))
        .collect();
    let mut items = Vec::new();
    for t in compared {
        let key = item_key(t);
        if let Some(&r) = reference.get(&key) {
            items.push((length(t)?, key, hit(t), r));
        }
    }
    if items.is_empty() {
        return Ok(None);
    }
    Ok(triple(&paired_em_difference(
        items,
        &stats.bootstrap(),
        stats.level,
    )?))
}

/// The mean over items of each item's share of `hit` among its trajectories (an item's
/// repeats averaged within the item first: B.5's "Cross-model estimates average two shared
/// repeats within parent"), with the whole-item interval; and the number of items.
pub fn within_item_mean<'a>(
    trajectories: impl IntoIterator<Item = &'a Trajectory>,
    hit: impl Fn(&Trajectory) -> bool,
    stats: &StatsConfig,
) -> anyhow::Result<(u64, Option<Interval>)> {
    let mut items: std::collections::BTreeMap<String, (u32, u32, u32)> =
        std::collections::BTreeMap::new();
    for t in trajectories {
        let entry = items.entry(item_key(t)).or_insert((length(t)?, 0, 0));
        entry.1 += u32::from(hit(t));
        entry.2 += 1;
    }
    if items.is_empty() {
        return Ok((0, None));
    }
    let n = items.len() as u64;
    let shares = items
        .into_iter()
        .map(|(key, (length, correct, seen))| (length, key, correct, seen));
    Ok((
        n,
        triple(&mean_share(shares, &stats.bootstrap(), stats.level)?),
    ))
}
