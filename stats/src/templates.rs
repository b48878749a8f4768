//! Mean and worst-setting SCR over prompt templates (D.4, Table D4): "Means average … the
//! three templates in the separate Qwen panel. They are not expectations over an unspecified
//! prompt distribution. Worst-setting SCR and conditional denominators are recomputed in each
//! parent bootstrap draw." Table D4: "Each domain resamples 96 parents and recomputes its
//! worst setting."
//!
//! An item (parent) carries, for each of the T templates, whether its Native arm and its
//! Serial arm were correct under that template. Its code packs those 2·T bits (template t:
//! bit 2t Native, bit 2t + 1 Serial), so T ≤ 4 fits the count bootstrap's 256 codes. SCR_t is
//! Σ both_t / Σ native_t over the items; the mean is the mean of the T SCRs and the worst their
//! minimum, both undefined when any template has no Native success. Parents are resampled
//! within their stratum (length: "Bootstrap retains templates within parent/length").

use serde::{Deserialize, Serialize};

use crate::bootstrap::{bootstrap, BootstrapConfig, Estimate, StratifiedSample};
use crate::error::StatsError;
use crate::intervals::check_level;

/// The most templates one item code can hold.
pub const MAX_TEMPLATES: usize = 4;

/// One parent's outcomes under each template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateOutcomes {
    /// The parent item's id, unique within the sample.
    pub item_id: String,
    /// The bootstrap stratum the parent is resampled in (its length).
    pub stratum: u32,
    /// (Native correct, Serial correct) per template, in template order.
    pub outcomes: Vec<(bool, bool)>,
}

/// Mean and worst SCR over templates, with their bootstrap intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TemplateScr {
    /// Number of templates T (1 to 4).
    pub templates: usize,
    /// Number of parent items.
    pub items: u64,
    /// The mean of the T per-template SCRs; undefined when any template has no Native success.
    pub mean: Estimate,
    /// The worst (minimum) per-template SCR, recomputed in each draw; undefined like the mean.
    pub worst: Estimate,
}

fn code(outcomes: &[(bool, bool)]) -> u8 {
    outcomes
        .iter()
        .enumerate()
        .map(|(t, &(n, s))| (u8::from(n) << (2 * t)) | (u8::from(s) << (2 * t + 1)))
        .fold(0, |a, b| a | b)
}

/// Mean and worst SCR of `items` (all with the same number of templates, 1..=4).
pub fn template_scr(
    items: &[TemplateOutcomes],
    cfg: &BootstrapConfig,
    level: f64,
) -> Result<Option<TemplateScr>, StatsError> {
    check_level(level)?;
    let Some(first) = items.first() else {
        return Ok(None);
    };
    let templates = first.outcomes.len();
    if !(1..=MAX_TEMPLATES).contains(&templates) {
        return Err(StatsError::TemplatesOutOfRange(templates));
    }
    if let Some(bad) = items.iter().find(|i| i.outcomes.len() != templates) {
        return Err(StatsError::TemplateCount {
            item_id: bad.item_id.clone(),
            expected: templates,
            found: bad.outcomes.len(),
        });
    }
    let codes = 1usize << (2 * templates);
    let sample = StratifiedSample::new(
        codes,
        items
            .iter()
            .map(|i| (i.stratum, i.item_id.as_str(), code(&i.outcomes))),
    )?;
    let draws = bootstrap(&sample, cfg, 2, |counts, out| {
        let mut scrs = Vec::with_capacity(templates);
        for t in 0..templates {
            let (mut native, mut both) = (0u64, 0u64);
            for c in 0..codes {
                let k = counts.pooled(c);
                if c >> (2 * t) & 1 == 1 {
                    native += k;
                    if c >> (2 * t + 1) & 1 == 1 {
                        both += k;
                    }
                }
            }
            if native == 0 {
                return;
            }
            scrs.push(both as f64 / native as f64);
        }
        out[0] = Some(scrs.iter().sum::<f64>() / templates as f64);
        out[1] = scrs.iter().copied().reduce(f64::min);
    })?;
    Ok(Some(TemplateScr {
        templates,
        items: items.len() as u64,
        mean: draws[0].estimate(level),
        worst: draws[1].estimate(level),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: usize, stratum: u32, outcomes: &[(bool, bool)]) -> TemplateOutcomes {
        TemplateOutcomes {
            item_id: format!("i{id}"),
            stratum,
            outcomes: outcomes.to_vec(),
        }
    }

    /// Table D4's point values from Table D3's template SCRs: arithmetic 7.4, 28.7 and 12.6
    /// give a mean of 16.2 and a worst of 7.4; here SCRs 1/2, 1/4 and 1 give 7/12 and 1/4.
    #[test]
    fn mean_and_worst_are_over_the_templates_scrs() {
        let (t, f) = (true, false);
        let items = vec![
            item(0, 3, &[(t, t), (t, t), (t, t)]),
            item(1, 3, &[(t, f), (t, f), (f, f)]),
            item(2, 4, &[(f, f), (t, f), (f, t)]),
            item(3, 4, &[(f, t), (t, f), (f, f)]),
        ];
        let cfg = BootstrapConfig {
            draws: 499,
            seed: 7,
            threads: 1,
        };
        let r = template_scr(&items, &cfg, 0.95).unwrap().unwrap();
        assert_eq!(r.templates, 3);
        let mean = r.mean.value.unwrap();
        assert!((mean - (0.5 + 0.25 + 1.0) / 3.0).abs() < 1e-12, "{mean}");
        assert_eq!(r.worst.value, Some(0.25));
        let (lo, hi) = (
            r.worst.interval.unwrap().low,
            r.worst.interval.unwrap().high,
        );
        assert!(lo <= 0.25 && 0.25 <= hi, "{lo} {hi}");
        assert!(
            r.mean.dropped_draws > 0,
            "draws without a Native success are dropped"
        );
        // The same seed gives the same interval.
        let again = template_scr(&items, &cfg, 0.95).unwrap().unwrap();
        assert_eq!(again, r);
    }

    #[test]
    fn mismatched_template_counts_are_an_error() {
        let items = vec![
            item(0, 3, &[(true, true), (true, false)]),
            item(1, 3, &[(true, true)]),
        ];
        assert!(template_scr(&items, &BootstrapConfig::default(), 0.95).is_err());
        assert_eq!(
            template_scr(&[], &BootstrapConfig::default(), 0.95).unwrap(),
            None
        );
    }
}
