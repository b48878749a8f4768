//! Tables 2 and B2, the semantic bridge (A.5, B.4), from `config/panels/semantic-bridge.toml`:
//! 128 fact records rendered as named yes/no fields (`semantic_named`) and as binary strings
//! (`semantic_binary`), Native against Serial/Full on each.
//!
//! Table 2: "Named semantic fields use 128 records per model. Joint counts are both correct /
//! Native only / Serial only / neither; EM and SCR are percentages." Columns: Model,
//! Native/Serial EM, Joint counts, SCR.
//!
//! Table B2: "SCR reports retained/correct Native counts and 95% intervals separately for named
//! and binary outputs." Columns: Model, Representation, Native EM, Serial EM, SCR count,
//! SCR [95% CI].

use c2s_stats::MetricRow;
use serde::{Deserialize, Serialize};

use super::paper::PaperTable;
use super::{differences, pp_diff, run_of, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{count, pct, ratio, scr_cell, MetricIndex, UNDEFINED};

/// A representation of the bridge, as the paper names it.
fn representation(domain: &str) -> Option<&'static str> {
    match domain {
        "semantic_named" => Some("named"),
        "semantic_binary" => Some("binary"),
        _ => None,
    }
}

/// One row of Table B2 as printed (Table 2's rows are its named rows with joint counts).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct PaperRow {
    /// The paper model, as printed.
    pub model: String,
    /// `named` or `binary`.
    pub representation: String,
    /// Native EM in percent, as printed.
    pub native_em: f64,
    /// Serial EM in percent, as printed.
    pub serial_em: f64,
    /// Retained / Native correct.
    pub scr_count: (u64, u64),
    /// SCR [95% CI] in percent, as printed.
    pub scr: (f64, f64, f64),
    /// Table 2's joint counts (named rows only): both / Native only / Serial only / neither.
    pub joint_counts: [Option<u64>; 4],
}

impl PaperRow {
    /// Table 2's joint counts, on the named rows.
    pub fn joint(&self) -> Option<[u64; 4]> {
        let [a, b, c, d] = self.joint_counts;
        Some([a?, b?, c?, d?])
    }
}

/// Table B2 as printed, in its order; the named rows carry Table 2's joint counts.
pub static PAPER: PaperTable<PaperRow> = PaperTable::new("tableB2");

/// Table 2 prints its models in this order (Jev, Qwen3-8B, StartLux).
const TABLE2_ORDER: [&str; 3] = ["Jev", "Qwen3-8B", "StartLux"];

/// One of our rows: a (model, representation) paired group.
#[derive(Debug, Clone)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// `named` (`semantic_named`) or `binary` (`semantic_binary`).
    pub representation: &'static str,
    /// Joint counts as printed: both / Native only / Serial only / neither.
    pub joint: String,
    /// SCR count as printed: retained / Native correct.
    pub scr_count: String,
    /// SCR with its interval in percent, as printed († exact, ‡ dropped draws).
    pub scr_ci: String,
    /// Native EM as a fraction over the 128 records; `None` when undefined.
    pub native_em: Option<f64>,
    /// Serial EM as a fraction over the 128 records; `None` when undefined.
    pub serial_em: Option<f64>,
    /// SCR as a fraction; `None` with no Native-correct record.
    pub scr: Option<f64>,
}

/// Our rows from the bridge panel's metric rows (one paired group per model and
/// representation; other domains are not the bridge's).
pub fn our_rows(rows: &[MetricRow]) -> Vec<OurRow> {
    let index = MetricIndex::new(rows);
    index
        .paired_groups()
        .into_iter()
        .filter_map(|g| {
            let representation = representation(&g.domain)?;
            Some(OurRow {
                model: g.model.clone(),
                representation,
                joint: ["both", "native_only", "serial_only", "neither"]
                    .map(|m| count(index.get(&g, None, m)))
                    .join("/"),
                scr_count: ratio(index.get(&g, None, "scr")),
                scr_ci: scr_cell(&index, &g, None),
                native_em: index.value(&g, None, "native_em"),
                serial_em: index.value(&g, None, "serial_em"),
                scr: index.value(&g, None, "scr"),
            })
        })
        .collect()
}

fn em_pair(native: Option<f64>, serial: Option<f64>) -> String {
    format!("{}/{}", pct(native), pct(serial))
}

fn table2_cells(model: &str, native: String, joint: String, scr: String) -> Vec<String> {
    vec![model.to_string(), native, joint, scr]
}

/// Table 2's document: our named rows, the paper's, and the differences.
pub fn table2_layout(ours: &[OurRow], against: &str) -> anyhow::Result<Doc> {
    let printed = PAPER.rows()?;
    let header: Vec<String> = ["Model", "Native/Serial EM", "Joint counts", "SCR"]
        .map(String::from)
        .to_vec();
    let mut doc = Doc::new("Table 2: A marginal gain can replace most Native successes");
    doc.p(
        "Named semantic fields use 128 records per model. Joint counts are both correct / \
         Native only / Serial only / neither; EM and SCR are percentages.",
    );
    let named: Vec<&OurRow> = ours
        .iter()
        .filter(|r| r.representation == "named")
        .collect();
    doc.h(2, "This run");
    doc.table(Table {
        text_columns: 1,
        header: header.clone(),
        rows: named
            .iter()
            .map(|r| {
                table2_cells(
                    &r.model,
                    em_pair(r.native_em, r.serial_em),
                    r.joint.clone(),
                    pct(r.scr),
                )
            })
            .collect(),
        notes: vec!["semantic_named: Native against Serial/Full over the named fields.".into()],
    });
    doc.h(2, "The paper (Table 2)");
    let paper_named = || {
        TABLE2_ORDER.iter().filter_map(|m| {
            printed
                .iter()
                .find(|p| p.model == *m && p.representation == "named")
        })
    };
    doc.table(Table {
        text_columns: 1,
        header,
        rows: paper_named()
            .map(|p| {
                table2_cells(
                    &p.model,
                    format!("{:.1}/{:.1}", p.native_em, p.serial_em),
                    p.joint().map_or(UNDEFINED.to_string(), |j| {
                        j.map(|c| c.to_string()).join("/")
                    }),
                    format!("{:.1}", p.scr.0),
                )
            })
            .collect(),
        notes: vec![],
    });
    difference_rows(&mut doc, printed, &named, against, "Table 2");
    Ok(doc)
}

/// Table B2's document: our rows per representation, the paper's, and the differences.
pub fn table_b2_layout(ours: &[OurRow], against: &str) -> anyhow::Result<Doc> {
    let paper_rows = PAPER.rows()?;
    let header: Vec<String> = [
        "Model",
        "Representation",
        "Native EM",
        "Serial EM",
        "SCR count",
        "SCR [95% CI]",
    ]
    .map(String::from)
    .to_vec();
    let mut doc = Doc::new("Table B2: Semantic decisions preserved under either encoding");
    doc.p(
        "SCR reports retained/correct Native counts and 95% intervals separately for named \
         and binary outputs.",
    );
    doc.h(2, "This run");
    doc.table(Table {
        text_columns: 2,
        header: header.clone(),
        rows: ours
            .iter()
            .map(|r| {
                vec![
                    r.model.clone(),
                    r.representation.to_string(),
                    pct(r.native_em),
                    pct(r.serial_em),
                    r.scr_count.clone(),
                    r.scr_ci.clone(),
                ]
            })
            .collect(),
        notes: vec![
            "Intervals: the run's paired bootstrap stratified by gold pattern (A.6).".into(),
        ],
    });
    doc.h(2, "The paper (Table B2)");
    doc.table(Table {
        text_columns: 2,
        header,
        rows: paper_rows
            .iter()
            .map(|p| {
                vec![
                    p.model.to_string(),
                    p.representation.to_string(),
                    format!("{:.1}", p.native_em),
                    format!("{:.1}", p.serial_em),
                    format!("{}/{}", p.scr_count.0, p.scr_count.1),
                    format!("{:.1} [{:.1}, {:.1}]", p.scr.0, p.scr.1, p.scr.2),
                ]
            })
            .collect(),
        notes: vec![],
    });
    let all: Vec<&OurRow> = ours.iter().collect();
    difference_rows(&mut doc, paper_rows, &all, against, "Table B2");
    Ok(doc)
}

/// Ours minus each compared paper model's row of the same representation.
fn difference_rows(
    doc: &mut Doc,
    printed: &[PaperRow],
    ours: &[&OurRow],
    against: &str,
    exhibit: &str,
) {
    let (models, mut table) = differences(
        doc,
        printed.iter().map(|p| p.model.as_str()),
        against,
        3,
        &[
            "Model",
            "Representation",
            "Paper row",
            "Δ Native EM",
            "Δ Serial EM",
            "Δ SCR",
        ],
    );
    for r in ours {
        for m in &models {
            let Some(p) = printed
                .iter()
                .find(|p| p.model == *m && p.representation == r.representation)
            else {
                continue;
            };
            table.rows.push(vec![
                r.model.clone(),
                r.representation.to_string(),
                format!("{} {}", p.model, p.representation),
                pp_diff(r.native_em, p.native_em),
                pp_diff(r.serial_em, p.serial_em),
                pp_diff(r.scr, p.scr.0),
            ]);
        }
    }
    table.notes.push(format!(
        "Percentage points, this run minus {exhibit}'s row of the same representation."
    ));
    doc.table(table);
}

/// Table 2 from the `semantic-bridge` panel's named rows.
pub fn table2(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let rows = run_of(runs, "semantic-bridge")?.load()?.metric_rows()?;
    table2_layout(&our_rows(&rows), against)
}

/// Table B2 from the `semantic-bridge` panel's named and binary rows.
pub fn table_b2(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let rows = run_of(runs, "semantic-bridge")?.load()?.metric_rows()?;
    table_b2_layout(&our_rows(&rows), against)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::testing::paired_rows;

    /// The printed rows agree with themselves: 128 records, Table 2's joint counts give Table
    /// B2's SCR counts and EMs ("Jev 89.8/90.6 111/4/5/8 96.5").
    #[test]
    fn the_papers_rows_are_consistent() {
        for p in PAPER.rows().unwrap() {
            let Some(j) = p.joint() else { continue };
            assert_eq!(j.iter().sum::<u64>(), 128, "{}", p.model);
            assert_eq!((j[0], j[0] + j[1]), p.scr_count, "{}", p.model);
            let native = 100.0 * (j[0] + j[1]) as f64 / 128.0;
            let serial = 100.0 * (j[0] + j[2]) as f64 / 128.0;
            assert!((native - p.native_em).abs() < 0.06, "{}", p.model);
            assert!((serial - p.serial_em).abs() < 0.06, "{}", p.model);
        }
        for p in PAPER.rows().unwrap() {
            let scr = 100.0 * p.scr_count.0 as f64 / p.scr_count.1 as f64;
            assert!(
                (scr - p.scr.0).abs() < 0.06,
                "{} {}",
                p.model,
                p.representation
            );
        }
    }

    #[test]
    fn tables_2_and_b2_have_the_papers_columns_rows_and_differences() {
        let mut rows = paired_rows("m", "semantic_named", [60, 20, 10, 38], (0.5, 0.9));
        rows.extend(paired_rows(
            "m",
            "semantic_binary",
            [40, 20, 30, 38],
            (0.5, 0.8),
        ));
        let ours = our_rows(&rows);
        assert_eq!(ours.len(), 2);
        let md = table2_layout(&ours, "Qwen3.5-27B").unwrap().markdown();
        for want in [
            "| Model | Native/Serial EM | Joint counts | SCR |",
            "| m | 62.5/54.7 | 60/20/10/38 | 75.0 |",
            "| Jev | 89.8/90.6 | 111/4/5/8 | 96.5 |",
            "| Qwen3-8B | 21.9/28.9 | 6/22/31/69 | 21.4 |",
            "| m | named | Jev named | −27.3 | −35.9 | −21.5 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        let md = table_b2_layout(&ours, "StartLux").unwrap().markdown();
        for want in [
            "| Model | Representation | Native EM | Serial EM | SCR count | SCR [95% CI] |",
            "| m | binary | 46.9 | 54.7 | 40/60 | 66.7 [50.0, 80.0] |",
            "| StartLux | binary | 39.1 | 29.7 | 25/50 | 50.0 [40.4, 60.5] |",
            "| m | binary | StartLux binary | +7.8 | +25.0 | +16.7 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert!(!md.contains("Jev named |"), "--against StartLux only\n{md}");
    }
}
