//! Figure 11's numbers (D.5) on the support-union panel (`config/panels/support-union.toml`,
//! that of Tables D5 and D6): per model and domain, the EM of Native and Full Serial (the
//! pairing `Native/code vs Serial/Full/code`) and of the position union (the Serial EM of
//! `Native/code vs Serial/UnionFill/code`), and the Union − Full gain on the pairing
//! `Serial/Full/code vs Serial/UnionFill/code`: (recovered − lost) / items with a paired item
//! bootstrap within length, its asterisk the exact McNemar p, Holm-corrected in the family
//! "D.5 Full/Union". The paper's bars are derived from Table D5's printed counts.

use std::collections::BTreeMap;

use c2s_records::{comparison_of, Arm, ArmSpec, PairedOutcome};
use c2s_stats::{paired_em_difference, MetricRow, StatsConfig};
use serde::Serialize;

use super::engine::Frame;
use super::item_intervals::Interval;
use super::support::{full_arm, union_arm};
use super::{paper_domain, run_of, PanelRun};
use crate::tables::{Group, MetricIndex};

/// The Native arm whose EM is the figure's Native bar, paired with Full Serial (`Native/code`).
pub fn native_arm() -> ArmSpec {
    ArmSpec::new(Arm::Native)
}

/// The figure's domains, in its panel order ((a, c) arithmetic, (b, d) lexical).
pub const DOMAINS: [&str; 2] = ["math", "lexical"];

/// One (model, domain) of ours.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OurBars {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// Items of the Full/Union pairing; `None` without its joint table.
    pub items: Option<u64>,
    /// Native EM (of its pairing with Full Serial).
    pub native: Option<MetricRow>,
    /// Full Serial EM.
    pub full: Option<MetricRow>,
    /// Union (UnionFill Serial) EM.
    pub union: Option<MetricRow>,
    /// Union − Full with its paired interval.
    pub gain: Option<Interval>,
    /// The Full/Union exact McNemar p, Holm-corrected (its denominator the family's tests).
    pub holm: Option<MetricRow>,
}

/// One item of the Full/Union pairing: (length, item id, Union correct, Full correct).
type PairedItem<'a> = (u32, &'a str, bool, bool);

/// The paired Union − Full EM difference per (model, bank domain), bootstrapped within length.
pub fn union_gains(
    outcomes: &[PairedOutcome],
    stats: &StatsConfig,
) -> anyhow::Result<BTreeMap<(String, String), Interval>> {
    let (full, union) = (full_arm().label(), union_arm().label());
    let mut items: BTreeMap<(String, String), Vec<PairedItem<'_>>> = BTreeMap::new();
    for o in outcomes
        .iter()
        .filter(|o| o.native_arm == full && o.serial_arm == union)
    {
        let length = u32::try_from(o.length)?;
        items
            .entry((o.model.clone(), o.domain.as_str().to_string()))
            .or_default()
            // First the Union arm (the pairing's Serial side), then Full (its Native side).
            .push((
                length,
                o.item_id.as_str(),
                o.serial_correct,
                o.native_correct,
            ));
    }
    let mut gains = BTreeMap::new();
    for (key, group) in items {
        let e = paired_em_difference(group, &stats.bootstrap(), stats.level)?;
        gains.extend(super::item_intervals::triple(&e).map(|gain| (key, gain)));
    }
    Ok(gains)
}

/// Our bars from the run's metric rows and the paired gains ([`union_gains`]).
pub fn our_bars(rows: &[MetricRow], gains: &BTreeMap<(String, String), Interval>) -> Vec<OurBars> {
    let index = MetricIndex::new(rows);
    let (native, full, union) = (native_arm(), full_arm(), union_arm());
    let full_vs_union = comparison_of(&full, &union);
    let mut out: Vec<OurBars> = index
        .paired_groups()
        .into_iter()
        .filter(|g| g.comparison == full_vs_union)
        .map(|g| {
            let em = |serial: &ArmSpec, metric: &str| {
                let paired = Group {
                    comparison: comparison_of(&native, serial),
                    ..g.clone()
                };
                index.get(&paired, None, metric).cloned()
            };
            OurBars {
                model: g.model.clone(),
                domain: paper_domain(&g.domain).to_string(),
                items: index.get(&g, None, "both").and_then(|r| r.denominator),
                native: em(&full, "native_em"),
                full: em(&full, "serial_em"),
                union: em(&union, "serial_em"),
                gain: gains.get(&(g.model.clone(), g.domain.clone())).copied(),
                holm: index.get(&g, None, "mcnemar_p_holm").cloned(),
            }
        })
        .collect();
    out.sort_by_key(|r| DOMAINS.iter().position(|d| *d == r.domain));
    out
}

/// Figure 11's rows of ours and our Holm family's size (the paper's bars, Table D5's counts,
/// are declared in exhibits/figure11.toml).
pub fn frame(ours: &[OurBars]) -> Frame {
    let holm_tests = (ours.iter())
        .filter_map(|r| r.holm.as_ref()?.denominator)
        .max();
    (Frame::new().rows("ours", ours)).var("holm_tests", holm_tests)
}

/// Read the support-union panel's run and compute the numbers.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "support-union")?.load()?;
    let gains = union_gains(&run.outcomes, &run.stats)?;
    Ok(frame(&our_bars(&run.metric_rows()?, &gains)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::{declared, paired_rows};
    use c2s_records::Domain;
    use c2s_stats::{holm, mcnemar_exact};

    /// The figure's six asterisks: the exact McNemar tests of Table D5's discordant counts
    /// all stay below 0.05 after Holm.
    #[test]
    fn the_papers_asterisks_follow_from_table_d5() {
        let p: Vec<f64> = (super::super::paper::records("tableD5").unwrap().iter())
            .map(|r| {
                let count = |c: &str| u64::try_from(r.get_attr(c).unwrap()).unwrap();
                mcnemar_exact(count("lost"), count("recovered"))
            })
            .collect();
        assert_eq!(p.len(), 6);
        let adjusted = holm(&p).expect("valid p-values");
        assert!(
            adjusted.iter().all(|p| *p < super::super::HOLM_ALPHA),
            "{adjusted:?}"
        );
    }

    fn outcome(id: usize, length: usize, full: bool, union: bool) -> PairedOutcome {
        PairedOutcome {
            item_id: format!("i{id}"),
            domain: Domain::Lexical,
            length,
            model: "m".into(),
            native_arm: full_arm().label(),
            serial_arm: union_arm().label(),
            native_correct: full,
            serial_correct: union,
            pattern: None,
        }
    }

    /// The gain is Union − Full on the same items: (recovered − lost) / items.
    #[test]
    fn the_gain_is_union_minus_full_on_the_same_items() {
        let outcomes: Vec<PairedOutcome> = (0..8)
            .map(|i| outcome(i, 3 + i % 2, i < 2, i < 5))
            .collect();
        let stats = StatsConfig {
            bootstrap_draws: 200,
            ..StatsConfig::default()
        };
        let gains = union_gains(&outcomes, &stats).expect("gains");
        let (v, lo, hi) = gains[&("m".to_string(), "lexical".to_string())];
        assert!((v - 3.0 / 8.0).abs() < 1e-12);
        assert!(lo.is_some_and(|lo| lo <= v) && hi.is_some_and(|hi| hi >= v));
    }

    #[test]
    fn the_layout_has_the_figures_bars_and_differences() {
        let comparison =
            |rows: Vec<MetricRow>, native: ArmSpec, serial: ArmSpec| -> Vec<MetricRow> {
                rows.into_iter()
                    .map(|r| MetricRow {
                        comparison: comparison_of(&native, &serial),
                        ..r
                    })
                    .collect()
            };
        let mut rows = comparison(
            paired_rows("m", "lexical", [1, 5, 1, 1], (0.0, 1.0)),
            native_arm(),
            full_arm(),
        );
        rows.extend(comparison(
            paired_rows("m", "lexical", [4, 2, 0, 2], (0.0, 1.0)),
            native_arm(),
            union_arm(),
        ));
        rows.extend(comparison(
            paired_rows("m", "lexical", [2, 0, 2, 4], (0.0, 1.0)),
            full_arm(),
            union_arm(),
        ));
        rows.push(MetricRow {
            value: Some(0.01),
            denominator: Some(2),
            ..MetricRow::empty(
                0,
                "m",
                Some(c2s_records::Domain::Lexical),
                None,
                &comparison_of(&full_arm(), &union_arm()),
                c2s_records::Metric::McnemarPHolm,
            )
        });
        let gains = BTreeMap::from([(
            ("m".to_string(), "lexical".to_string()),
            (0.25, Some(0.0), Some(0.5)),
        )]);
        let ours = our_bars(&rows, &gains);
        assert_eq!(ours.len(), 1);
        assert_eq!(ours[0].full.as_ref().and_then(|r| r.value), Some(0.25));
        assert_eq!(ours[0].union.as_ref().and_then(|r| r.value), Some(0.5));
        let md = declared("figure11", &[], frame(&ours), "Qwen3.5-27B");
        for want in [
            "| Model | Domain | Items | Native | Full Serial | Position union | Union − Full, pp [95% CI] | Holm p |",
            "| m | lexical | 8 | 75.0 | 25.0 | 50.0 | 25.0 [0.0, 50.0] | 0.010 * |",
            "| Jev | math | 384 | not printed | 28.1 | 76.0 | 47.9 | * |",
            "| Qwen3.5-27B | lexical | 384 | not printed | 34.1 | 49.0 | 14.8 | * |",
            "| m | lexical | Qwen3.5-27B / lexical | −9.1 | +1.0 | +10.2 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
