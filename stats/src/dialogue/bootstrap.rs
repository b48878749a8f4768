//! The bootstrap of ratios of dialogue sums: per-dialogue series Σ w x / Σ w y resampled
//! by dialogue and by response component through the crate's seeded per-item engine (see the
//! parent module's "Bootstrap" section).

use std::collections::BTreeMap;

use super::{ResponseComponents, Stat};
use crate::bootstrap::{bootstrap_per_item, BootstrapConfig, StatDraws, StratifiedSample};
use crate::error::StatsError;

/// Per-dialogue numerator and denominator of one statistic Σ w x / Σ w y.
pub(super) struct Series {
    pub(super) num: Vec<f64>,
    pub(super) den: Vec<f64>,
}

impl Series {
    pub(super) fn mean(num: Vec<f64>) -> Series {
        let den = vec![1.0; num.len()];
        Series { num, den }
    }
}

/// Draws of `n_stats` statistics over `units` resampled with replacement (per-item path of
/// the crate's engine, one stratum, one item per code); `stat` gets each unit's multiplicity.
pub(super) fn resample_units<F>(
    units: usize,
    cfg: &BootstrapConfig,
    n_stats: usize,
    stat: F,
) -> Result<Vec<StatDraws>, StatsError>
where
    F: Fn(&[u32], &mut [Option<f64>]) + Sync,
{
    if units == 0 {
        return Ok(vec![
            StatDraws {
                observed: None,
                values: Vec::new(),
                dropped: 0,
            };
            n_stats
        ]);
    }
    let sample = StratifiedSample::from_counts(units, [(0u32, vec![1u64; units])])?;
    bootstrap_per_item(&sample, cfg, n_stats, |counts, out| {
        stat(counts.stratum(0), out)
    })
}

/// The dialogues' component indices, renumbered densely; returns (index per dialogue, count).
pub(super) fn local_components(
    ids: &[&str],
    components: &ResponseComponents,
) -> (Vec<usize>, usize) {
    let mut dense: BTreeMap<usize, usize> = BTreeMap::new();
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        // A dialogue without rows in the component map (cannot happen for scored dialogues)
        // forms its own component.
        let c = components
            .component_of
            .get(*id)
            .copied()
            .unwrap_or(usize::MAX - out.len());
        let next = dense.len();
        out.push(*dense.entry(c).or_insert(next));
    }
    (out, dense.len())
}

/// Dialogue and component bootstraps of several ratio statistics over the same dialogues.
pub(super) fn ratio_stats(
    series: &[Series],
    component: &[usize],
    n_components: usize,
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<Vec<Stat>, StatsError> {
    let n = component.len();
    let eval = |weight: &dyn Fn(usize) -> u32, out: &mut [Option<f64>]| {
        for (s, o) in series.iter().zip(out.iter_mut()) {
            let (mut a, mut b) = (0.0, 0.0);
            for d in 0..n {
                let w = weight(d);
                if w > 0 {
                    a += f64::from(w) * s.num[d];
                    b += f64::from(w) * s.den[d];
                }
            }
            *o = (b > 0.0).then(|| a / b);
        }
    };
    let by_dialogue = resample_units(n, cfg, series.len(), |w, out| eval(&|d| w[d], out))?;
    let by_component = resample_units(n_components, cfg, series.len(), |w, out| {
        eval(&|d| w[component[d]], out)
    })?;
    Ok(by_dialogue
        .iter()
        .zip(&by_component)
        .map(|(d, c)| Stat {
            value: d.observed,
            dialogue_ci: d.interval(level),
            component_ci: c.interval(level),
            dialogue_dropped: d.dropped,
            component_dropped: c.dropped,
        })
        .collect())
}
