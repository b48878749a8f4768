//! Figure 11's numbers (D.5): "Candidate support improves Serial success while leaving a gap
//! to Native. On 384 formal items per domain, (a,c) arithmetic gains combine option
//! restriction with deterministic filling; (b,d) lexical gains retain a model request at every
//! position. Intervals are paired 95% item bootstrap; asterisks indicate Holm p < 0.05 across
//! six tests."
//!
//! Panels (a, b): complete-string EM of Native, Full Serial and the position union (Serial
//! under UnionFill) per model (Qwen3.5-27B, StartLux, Jev) and domain; (c, d): the Union − Full
//! paired EM gain in points, with the Holm asterisks. Ours come from the support-union panel
//! (`config/panels/support-union.toml`, the panel of Tables D5 and D6):
//! - Native and Full Serial EM: the pairing `Native/code vs Serial/Full/code` (its Native EM
//!   and its Serial EM); position union EM: the Serial EM of `Native/code vs
//!   Serial/UnionFill/code`, each with the run's length-stratified item-bootstrap interval.
//! - The gain: Union − Full EM on the pairing `Serial/Full/code vs Serial/UnionFill/code`
//!   ((recovered − lost) / items), its interval a paired item bootstrap within length (both
//!   arms on each resample, the run's draws, seed and level), and its asterisk the pairing's
//!   exact McNemar p, Holm-corrected in the panel's family "D.5 Full/Union" (the paper's six
//!   tests are three models × two domains; one model's run holds two of them). The panel
//!   declares no unit contrast: the gain is this paired difference of one item's two arms.
//!
//! The figure prints no bar value. Its Full and Union bars and its gains are the paired counts
//! of Table D5 (the same 384 items per domain), so the paper's numbers here are derived from
//! them ([`super::support::PAPER_D5`]): Full EM = (lost + both correct) / 384, Union EM =
//! (recovered + both correct) / 384, gain = (recovered − lost) / 384. Native's bars are neither
//! printed nor derivable, nor are the intervals; the asterisks are transcribed (all six).

use std::collections::BTreeMap;

use c2s_records::PairedOutcome;
use c2s_stats::{paired_em_difference, MetricRow, StatsConfig};

use super::item_intervals::Interval;
use super::support::{FULL_ARM, PAPER_D5, UNION_ARM};
use super::{
    differences, paper_domain, percent_interval, pp_diff, run_of, signed1, starred, PanelRun,
};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{estimate, p_value, Group, MetricIndex, UNDEFINED};

/// The Native arm whose EM is the figure's Native bar (paired with Full Serial).
pub const NATIVE_ARM: &str = "Native/code";

/// The figure's domains, in its panel order ((a, c) arithmetic, (b, d) lexical).
pub const DOMAINS: [&str; 2] = ["math", "lexical"];

/// Figure 11's numbers for one paper model and domain, derived from Table D5's counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaperBars {
    /// The paper model, as Table D5 names it.
    pub model: &'static str,
    /// `math` or `lexical`, as printed.
    pub domain: &'static str,
    /// Table D5's items (the sum of its four counts).
    pub items: u64,
    /// Full and Union EM (%).
    pub full: f64,
    /// Union EM (%): (recovered + both correct) / items.
    pub union: f64,
    /// Union − Full (points).
    pub gain: f64,
    /// The figure's asterisk: Holm p < 0.05 across six tests (all six are marked).
    pub holm_significant: bool,
}

/// The paper's bars from Table D5 (both wrong, recovered, lost, both correct of 384), in the
/// figure's panel order: arithmetic then lexical, models in Table D5's order.
pub fn paper_bars() -> anyhow::Result<Vec<PaperBars>> {
    let printed = PAPER_D5.rows()?;
    Ok(DOMAINS
        .iter()
        .flat_map(|d| printed.iter().filter(move |p| p.1 == *d))
        .map(|(model, domain, counts @ [_, recovered, lost, both])| {
            let items: u64 = counts.iter().sum();
            let pct = |k: u64| 100.0 * k as f64 / items as f64;
            PaperBars {
                model: model.as_str(),
                domain: domain.as_str(),
                items,
                full: pct(lost + both),
                union: pct(recovered + both),
                gain: pct(*recovered) - pct(*lost),
                holm_significant: true,
            }
        })
        .collect())
}

/// One (model, domain) of ours.
#[derive(Debug, Clone, PartialEq)]
pub struct OurBars {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// Items of the Full/Union pairing; `None` without its joint table.
    pub items: Option<u64>,
    /// Native EM's cell (estimate with interval).
    pub native: String,
    /// Full and Union EM: the value and its cell.
    pub full: (Option<f64>, String),
    /// Union (UnionFill Serial) EM as a fraction, and its cell with the interval.
    pub union: (Option<f64>, String),
    /// Union − Full with its paired interval.
    pub gain: Option<Interval>,
    /// The Full/Union McNemar p, Holm-corrected, and the size of its family.
    pub holm_p: Option<f64>,
    /// Tests in that Holm family (the adjusted row's denominator); `None` when not corrected.
    pub holm_tests: Option<u64>,
}

/// One item of the Full/Union pairing: (length, item id, Union correct, Full correct).
type PairedItem<'a> = (u32, &'a str, bool, bool);

/// The paired Union − Full EM difference per (model, domain of the records), with the run's
/// paired item bootstrap within length.
pub fn union_gains(
    outcomes: &[PairedOutcome],
    stats: &StatsConfig,
) -> anyhow::Result<BTreeMap<(String, String), Interval>> {
    let mut items: BTreeMap<(String, String), Vec<PairedItem<'_>>> = BTreeMap::new();
    for o in outcomes
        .iter()
        .filter(|o| o.native_arm == FULL_ARM && o.serial_arm == UNION_ARM)
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
        if let Some(v) = e.value {
            let interval = e.interval;
            gains.insert(key, (v, interval.map(|i| i.low), interval.map(|i| i.high)));
        }
    }
    Ok(gains)
}

/// Our bars from the run's metric rows and the paired gains ([`union_gains`]).
pub fn our_bars(rows: &[MetricRow], gains: &BTreeMap<(String, String), Interval>) -> Vec<OurBars> {
    let index = MetricIndex::new(rows);
    let group = |g: &Group, native: &str, serial: &str| Group {
        comparison: format!("{native} vs {serial}"),
        ..g.clone()
    };
    let mut out: Vec<OurBars> = index
        .paired_groups()
        .into_iter()
        .filter(|g| g.comparison == format!("{FULL_ARM} vs {UNION_ARM}"))
        .map(|g| {
            let with_full = group(&g, NATIVE_ARM, FULL_ARM);
            let with_union = group(&g, NATIVE_ARM, UNION_ARM);
            let serial = |g: &Group| {
                (
                    index.value(g, None, "serial_em"),
                    estimate(index.get(g, None, "serial_em"), None),
                )
            };
            let holm = index.get(&g, None, "mcnemar_p_holm");
            OurBars {
                model: g.model.clone(),
                domain: paper_domain(&g.domain).to_string(),
                items: index.get(&g, None, "both").and_then(|r| r.denominator),
                native: estimate(index.get(&with_full, None, "native_em"), None),
                full: serial(&with_full),
                union: serial(&with_union),
                gain: gains.get(&(g.model.clone(), g.domain.clone())).copied(),
                holm_p: holm.and_then(|r| r.value),
                holm_tests: holm.and_then(|r| r.denominator),
            }
        })
        .collect();
    out.sort_by_key(|r| DOMAINS.iter().position(|d| *d == r.domain));
    out
}

/// `p *` when p < 0.05, as the figure's asterisk.
fn holm_cell(p: Option<f64>) -> String {
    starred(p_value(p), p)
}

fn header(gain: &str, holm: &str) -> Vec<String> {
    [
        "Model",
        "Domain",
        "Items",
        "Native",
        "Full Serial",
        "Position union",
        gain,
        holm,
    ]
    .map(String::from)
    .to_vec()
}

/// Figure 11's numbers: ours, the paper's (derived from Table D5), and the differences.
pub fn layout(ours: &[OurBars], against: &str) -> anyhow::Result<Doc> {
    let mut doc = Doc::new(
        "Figure 11: Candidate support improves Serial success while leaving a gap to Native \
         (numbers)",
    );
    doc.p(
        "Complete-string EM (%) of Native, Full Serial and the position union (UnionFill), and \
         the Union − Full paired EM gain (points). Intervals are paired 95% item bootstrap; \
         asterisks indicate Holm p < 0.05.",
    );
    doc.h(2, "This run");
    let holm_tests = ours
        .iter()
        .filter_map(|r| r.holm_tests)
        .max()
        .map_or_else(|| UNDEFINED.to_string(), |n| n.to_string());
    doc.table(Table {
        text_columns: 2,
        header: header("Union − Full, pp [95% CI]", "Holm p"),
        rows: ours
            .iter()
            .map(|r| {
                vec![
                    r.model.clone(),
                    r.domain.clone(),
                    r.items
                        .map_or_else(|| UNDEFINED.to_string(), |n| n.to_string()),
                    r.native.clone(),
                    r.full.1.clone(),
                    r.union.1.clone(),
                    percent_interval(r.gain),
                    holm_cell(r.holm_p),
                ]
            })
            .collect(),
        notes: vec![format!(
            "Native and Full: {NATIVE_ARM} vs {FULL_ARM}; position union: the Serial EM of \
                 {NATIVE_ARM} vs {UNION_ARM}, each with the run's length-stratified item \
                 bootstrap. Gain: {FULL_ARM} vs {UNION_ARM}, a paired item bootstrap within \
                 length; Holm p: its exact McNemar test in the family D.5 Full/Union \
                 (tests in this run: {holm_tests}; the paper's six are three models × two \
                 domains); * marks Holm p < 0.05."
        )],
    });
    doc.h(2, "The paper (Figure 11, derived from Table D5)");
    let paper = paper_bars()?;
    doc.table(Table {
        text_columns: 2,
        header: header("Union − Full, pp", "Holm p < 0.05"),
        rows: paper
            .iter()
            .map(|p| {
                vec![
                    p.model.to_string(),
                    p.domain.to_string(),
                    p.items.to_string(),
                    "not printed".into(),
                    format!("{:.1}", p.full),
                    format!("{:.1}", p.union),
                    signed1(p.gain),
                    if p.holm_significant { "*" } else { "" }.into(),
                ]
            })
            .collect(),
        notes: vec![
            "The figure prints no bar value or interval. Full = (lost + both correct) / 384, \
             Union = (recovered + both correct) / 384 and the gain = (recovered − lost) / 384 \
             from Table D5's paired counts of the same items; Native's bars are not derivable. \
             The asterisks are as printed: all six tests."
                .into(),
        ],
    });
    let (models, mut diff) = differences(
        &mut doc,
        paper.iter().map(|p| p.model),
        against,
        3,
        &[
            "Model",
            "Domain",
            "Paper bars",
            "Δ Full Serial",
            "Δ Position union",
            "Δ Union − Full",
        ],
    );
    for r in ours {
        for p in paper
            .iter()
            .filter(|p| models.contains(&p.model) && p.domain == r.domain)
        {
            diff.rows.push(vec![
                r.model.clone(),
                r.domain.clone(),
                format!("{} / {}", p.model, p.domain),
                pp_diff(r.full.0, p.full),
                pp_diff(r.union.0, p.union),
                pp_diff(r.gain.map(|g| g.0), p.gain),
            ]);
        }
    }
    diff.notes.push(
        "Percentage points, this run minus the paper's (derived) numbers; ours over our items, \
         the paper's over 384."
            .into(),
    );
    doc.table(diff);
    Ok(doc)
}

/// Read the support-union panel's run and lay out the numbers.
pub fn document(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, "support-union")?.load()?;
    let gains = union_gains(&run.outcomes, &run.stats)?;
    layout(&our_bars(&run.metric_rows()?, &gains), against)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::testing::paired_rows;
    use c2s_records::Domain;
    use c2s_stats::{holm, mcnemar_exact};

    /// The derived bars fit the figure's axes (gains 0–60 points) and its six asterisks: the
    /// exact McNemar tests of Table D5's discordant counts all stay below 0.05 after Holm.
    #[test]
    fn the_papers_bars_follow_from_table_d5() {
        let paper = paper_bars().unwrap();
        assert_eq!(paper.len(), 6);
        assert_eq!(paper[0].model, "Jev");
        assert_eq!(paper[0].domain, "math");
        assert!((paper[0].full - 28.125).abs() < 1e-9);
        assert!((paper[0].union - 76.041_666).abs() < 1e-5);
        assert!((paper[0].gain - 47.916_666).abs() < 1e-5);
        assert!(paper.iter().all(|p| (0.0..60.0).contains(&p.gain)));
        assert!(paper
            .iter()
            .all(|p| (p.union - p.full - p.gain).abs() < 1e-9));
        let p: Vec<f64> = PAPER_D5
            .rows()
            .unwrap()
            .iter()
            .map(|(_, _, c)| mcnemar_exact(c[2], c[1]))
            .collect();
        let adjusted = holm(&p).expect("valid p-values");
        assert!(
            adjusted.iter().all(|p| *p < super::super::HOLM_ALPHA),
            "{adjusted:?}"
        );
        assert!(paper.iter().all(|p| p.holm_significant));
    }

    fn outcome(id: usize, length: usize, full: bool, union: bool) -> PairedOutcome {
        PairedOutcome {
            item_id: format!("i{id}"),
            domain: Domain::Lexical,
            length,
            model: "m".into(),
            native_arm: FULL_ARM.into(),
            serial_arm: UNION_ARM.into(),
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
        let comparison = |rows: Vec<MetricRow>, native: &str, serial: &str| -> Vec<MetricRow> {
            rows.into_iter()
                .map(|r| MetricRow {
                    comparison: format!("{native} vs {serial}"),
                    ..r
                })
                .collect()
        };
        let mut rows = comparison(
            paired_rows("m", "lexical", [1, 5, 1, 1], (0.0, 1.0)),
            NATIVE_ARM,
            FULL_ARM,
        );
        rows.extend(comparison(
            paired_rows("m", "lexical", [4, 2, 0, 2], (0.0, 1.0)),
            NATIVE_ARM,
            UNION_ARM,
        ));
        rows.extend(comparison(
            paired_rows("m", "lexical", [2, 0, 2, 4], (0.0, 1.0)),
            FULL_ARM,
            UNION_ARM,
        ));
        rows.push(MetricRow {
            value: Some(0.01),
            denominator: Some(2),
            ..MetricRow::empty(
                0,
                "m",
                "lexical",
                None,
                &format!("{FULL_ARM} vs {UNION_ARM}"),
                "mcnemar_p_holm",
            )
        });
        let gains = BTreeMap::from([(
            ("m".to_string(), "lexical".to_string()),
            (0.25, Some(0.0), Some(0.5)),
        )]);
        let ours = our_bars(&rows, &gains);
        assert_eq!(ours.len(), 1);
        assert_eq!(ours[0].full.0, Some(0.25));
        assert_eq!(ours[0].union.0, Some(0.5));
        let md = layout(&ours, "Qwen3.5-27B").unwrap().markdown();
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
