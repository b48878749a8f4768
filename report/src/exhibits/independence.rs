//! Figure 14's numbers (B.1, D.10), which the paper only plots: per panel (`independent-384`:
//! Independent on Table 1's 384 items per domain; `teacher-forced`: TeacherForced on 60),
//! model, domain and reference arm, and each of D.10's two populations, per length the
//! reference R = Π_t c_t (the product of the observed position accuracies), the arm's string
//! EM and their difference, beside Serial's string EM on the same population.
//!
//! - All items: the run report's independence rows; Serial is the pairing's Serial EM.
//! - Native-correct: the items the same model's `Native/code` selection got right, the
//!   population recomputed in every draw ([`c2s_stats::independence_metrics_within`]); Serial
//!   is the pairing's SCR, whose denominator is likewise recomputed.

use std::collections::{BTreeMap, BTreeSet};

use c2s_records::{Arm, ArmSpec, PairedOutcome, Trajectory};
use c2s_stats::{
    independence_metrics_within, is_reference_arm, LocalGroup, MetricRow, PopulationCounts,
    StatsConfig,
};
use serde::Serialize;

use super::engine::Frame;
use super::PanelRun;
use super::{kind_of, pairs_with};
use crate::tables::{count, estimate, estimate_pp, MetricIndex};

/// The Native arm whose correct selections define D.10's Native-correct population
/// (`Native/code`).
fn native_arm() -> ArmSpec {
    ArmSpec::new(Arm::Native)
}

/// The panels in the figure's order and the reference arm each plots.
const PANELS: [(&str, Arm); 2] = [
    ("independent-384", Arm::Independent),
    ("teacher-forced", Arm::TeacherForced),
];

/// D.10's two populations: (as the figure names it, the pairing's metric that is Serial's
/// string EM on it).
const POPULATIONS: [(&str, &str); 2] =
    [("all items", "serial_em"), ("Native-correct items", "scr")];

/// One table of the figure: a reference arm of a model and domain on one population.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableKey {
    /// The model label of the run's records.
    pub model: String,
    /// The bank's domain name.
    pub domain: String,
    /// The reference arm (`Independent/Full/code`).
    pub comparison: String,
    /// The population: `all items` or `Native-correct items`.
    pub population: &'static str,
}

/// One target length of a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LengthRow {
    /// The table the row belongs to.
    pub table: TableKey,
    /// Target length; `None` in a panel's list of its tables (each laid out, rowless or not).
    pub length: Option<u32>,
    /// n, Π c_t, the reference's string EM, Serial's string EM (percent, with intervals) and
    /// EM − Π c_t (points), as printed.
    pub cells: Vec<String>,
}

/// One panel's metric rows on all items and on the Native-correct items.
pub struct PanelRows<'a> {
    /// The panel's config stem (`independent-384` or `teacher-forced`).
    pub panel: &'a str,
    /// The panel's metric rows: pairings and the all-items independence references.
    pub rows: Vec<MetricRow>,
    /// The independence references on the Native-correct population.
    pub native_correct: Vec<MetricRow>,
}

/// Figure 14's rows: per panel present (`panels`), its length rows (named by the panel) and
/// its tables (`PANEL tables`), at interval `level`.
pub fn frame(panels: &[PanelRows<'_>], level: f64) -> Frame {
    let mut frame = Frame::new();
    let mut present = Vec::new();
    for (name, arm) in PANELS {
        let Some(panel) = panels.iter().find(|p| p.panel == name) else {
            continue;
        };
        present.push(name);
        let pairings = MetricIndex::new(&panel.rows);
        let native_correct = MetricIndex::new(&panel.native_correct);
        let (mut tables, mut rows) = (Vec::new(), Vec::new());
        for g in (pairings.independence_groups().into_iter())
            .filter(|g| kind_of(&g.comparison) == Some(arm))
        {
            let serial = pairings.paired_groups().into_iter().find(|p| {
                p.model == g.model && p.domain == g.domain && pairs_with(&p.comparison, Arm::Serial)
            });
            for ((population, serial_metric), index) in
                POPULATIONS.into_iter().zip([&pairings, &native_correct])
            {
                let table = TableKey {
                    model: g.model.clone(),
                    domain: g.domain.clone(),
                    comparison: g.comparison.clone(),
                    population,
                };
                for length in index.lengths(&g, "independence_reference") {
                    let l = Some(length);
                    let serial_em = serial
                        .as_ref()
                        .and_then(|s| pairings.get(s, l, serial_metric));
                    let cells = vec![
                        count(index.get(&g, l, "items")),
                        estimate(index.get(&g, l, "independence_reference"), None),
                        estimate(index.get(&g, l, "string_em"), None),
                        estimate(serial_em, None),
                        estimate_pp(index.get(&g, l, "em_minus_reference")),
                    ];
                    let table = table.clone();
                    rows.push(LengthRow {
                        table,
                        length: l,
                        cells,
                    });
                }
                let cells = Vec::new();
                tables.push(LengthRow {
                    table,
                    length: None,
                    cells,
                });
            }
        }
        frame = (frame.rows(name, &rows)).rows(&format!("{name} tables"), &tables);
    }
    frame.var("panels", present).var("level", level)
}

/// The independence rows of a panel's reference arms on D.10's Native-correct population:
/// each reference trajectory's item is a member when the same model's [`native_arm`] selected
/// it correctly. Items without a Native selection are left out.
pub fn native_correct_rows(
    outcomes: &[PairedOutcome],
    trajectories: &[Trajectory],
    stats: &StatsConfig,
) -> anyhow::Result<Vec<MetricRow>> {
    let native_arm = native_arm().label();
    let native: BTreeMap<(&str, &str, &str), bool> = outcomes
        .iter()
        .filter(|o| o.native_arm == native_arm)
        .map(|o| {
            let key = (o.model.as_str(), o.domain.as_str(), o.item_id.as_str());
            (key, o.native_correct)
        })
        .collect();
    let mut groups: BTreeMap<LocalGroup, PopulationCounts> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for t in trajectories.iter().filter(|t| is_reference_arm(&t.arm)) {
        let key = (t.model.as_str(), t.domain.as_str(), t.item_id.as_str());
        let Some(&member) = native.get(&key) else {
            continue;
        };
        if !seen.insert((key, t.arm.as_str())) {
            anyhow::bail!(
                "item {} appears twice in arm {} of model {}",
                t.item_id,
                t.arm,
                t.model
            );
        }
        let pattern = (t.position_correct.clone(), t.correct, member);
        *groups
            .entry(LocalGroup::of(t))
            .or_default()
            .entry(pattern)
            .or_default() += 1;
    }
    Ok(independence_metrics_within(&groups, stats, 0)?)
}

/// Figure 14's numbers from the `independent-384` and `teacher-forced` panels' runs.
pub fn document(runs: &[PanelRun]) -> anyhow::Result<Frame> {
    let mut panels = Vec::new();
    let mut level = 0.95;
    for run in runs {
        let loaded = run.load()?;
        level = loaded.stats.level;
        panels.push(PanelRows {
            panel: run.panel,
            rows: loaded.metric_rows()?,
            native_correct: native_correct_rows(
                &loaded.outcomes,
                &loaded.trajectories,
                &loaded.stats,
            )?,
        });
    }
    Ok(frame(&panels, level))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::{laid_out, trajectory};
    use c2s_records::Domain;

    fn at(comparison: &str, metric: &str, value: f64, ci: (f64, f64)) -> MetricRow {
        MetricRow {
            value: Some(value),
            numerator: Some(2),
            denominator: Some(4),
            ci_low: Some(ci.0),
            ci_high: Some(ci.1),
            ..MetricRow::empty(
                0,
                "m",
                Some(c2s_records::Domain::Lexical),
                Some(3),
                comparison,
                c2s_records::Metric::parse(metric).unwrap(),
            )
        }
    }

    /// Per length: the product, the reference arm's EM, Serial's EM and EM − product, under
    /// the figure's panel headings; TeacherForced's panel shows only TeacherForced.
    #[test]
    fn the_layout_has_the_figures_three_lines_per_length() {
        let independent = "Independent/Full/code";
        let rows = vec![
            at(independent, "items", 4.0, (4.0, 4.0)),
            at(independent, "string_em", 0.25, (0.0, 0.5)),
            at(independent, "independence_reference", 0.125, (0.05, 0.3)),
            at(independent, "em_minus_reference", -0.125, (-0.25, 0.0)),
            at("Native/code vs Serial/Full/code", "both", 0.5, (0.5, 0.5)),
            at(
                "Native/code vs Serial/Full/code",
                "serial_em",
                0.5,
                (0.25, 0.75),
            ),
        ];
        let native_correct: Vec<MetricRow> = rows
            .iter()
            .filter(|r| r.comparison == independent)
            .map(|r| MetricRow {
                value: r.value.map(|v| v / 2.0),
                ..r.clone()
            })
            .collect();
        let mut rows = rows;
        rows.push(at(
            "Native/code vs Serial/Full/code",
            "scr",
            0.75,
            (0.5, 1.0),
        ));
        let panel = |panel| PanelRows {
            panel,
            rows: rows.clone(),
            native_correct: native_correct.clone(),
        };
        let frame = frame(&[panel("independent-384"), panel("teacher-forced")], 0.95);
        let md = laid_out("figure14", frame, "Jev");
        for want in [
            "## (a, b) Independent, 384 items per domain (independent-384)",
            "### m · lexical · Independent/Full/code · all items",
            "| Target length | n | Position-rate product [CI] | Reference string EM [CI] | Serial string EM [CI] | Reference EM − product [CI] |",
            "| 3 | 2 | 12.5 [5.0, 30.0] | 25.0 [0.0, 50.0] | 50.0 [25.0, 75.0] | −12.5 [−25.0, 0.0] |",
            "### m · lexical · Independent/Full/code · Native-correct items",
            // Serial on the Native-correct items is the pairing's SCR.
            "| 3 | 2 | 6.2 [5.0, 30.0] | 12.5 [0.0, 50.0] | 75.0 [50.0, 100.0] | −6.2 [−25.0, 0.0] |",
            "## (c, d) TeacherForced, 60 items per domain (teacher-forced)",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert_eq!(
            md.matches("### m · lexical · Independent/Full/code")
                .count(),
            2,
            "{md}"
        );
    }

    fn native(item: &str, correct: bool) -> PairedOutcome {
        PairedOutcome {
            item_id: item.into(),
            domain: Domain::Lexical,
            length: 2,
            model: "m".into(),
            native_arm: native_arm().label(),
            serial_arm: "Serial/Full/code".into(),
            native_correct: correct,
            serial_correct: false,
            pattern: None,
        }
    }

    /// D.10: "Independent uses 384 parents per domain and TeacherForced 60, with all-items and
    /// Native-correct populations." The Native-correct rows hold only the items the Native arm
    /// got right; items without a Native selection are left out, other arms are ignored.
    #[test]
    fn the_native_correct_population_is_the_items_native_got_right() {
        let arm = "Independent/Full/code";
        let local = |item: &str, positions: [bool; 2]| {
            let mut t = trajectory(item, "lexical", 2, arm, positions == [true, true]);
            t.position_correct = positions.to_vec();
            t
        };
        let trajectories = vec![
            local("a", [true, true]),
            local("b", [true, false]),
            local("c", [false, false]),
            local("d", [false, true]),
            local("no-native", [false, false]),
            trajectory("a", "lexical", 2, "Serial/Full/code", true),
        ];
        let outcomes = vec![
            native("a", true),
            native("b", true),
            native("c", false),
            native("d", true),
        ];
        let stats = StatsConfig {
            bootstrap_draws: 999,
            ..StatsConfig::default()
        };
        let rows = native_correct_rows(&outcomes, &trajectories, &stats).unwrap();
        let value = |metric: &str| {
            rows.iter()
                .find(|r| r.comparison == arm && r.metric == metric && r.length == Some(2))
                .and_then(|r| r.value)
        };
        // Members a, b, d: positions (2/3, 2/3), one correct string.
        assert_eq!(value("items"), Some(3.0));
        assert_eq!(value("string_em"), Some(1.0 / 3.0));
        let reference = value("independence_reference").unwrap();
        assert!((reference - 4.0 / 9.0).abs() < 1e-12, "{reference}");
        assert!(rows.iter().all(|r| r.comparison == arm));

        let twice = [trajectories[0].clone(), trajectories[0].clone()];
        let err = native_correct_rows(&outcomes, &twice, &stats).unwrap_err();
        assert!(err.to_string().contains("item a appears twice"), "{err}");
    }
}
