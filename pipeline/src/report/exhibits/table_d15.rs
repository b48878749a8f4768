//! Table D15: "Marginal improvement can coexist with substantial correctness turnover. Joint
//! counts give both correct / Native only / Serial only / neither. SCR, its difference from
//! Serial EM (∆, percentage points), and Serial success on Native-wrong items (Gain rate)
//! summarize different parts of the same paired table."
//!
//! Columns as printed: Model / interface, Task, Items, Joint counts, SCR (%), ∆, Gain rate (%).
//! The paper's rows are Table 1's ten (panels `table1-code`, `table1-direct`) and the semantic
//! bridge's six (`semantic-bridge`, "binary fields" and "named fields"). ∆ is SCR − Serial EM
//! ("Jev math … 33.0 +0.9": 123/373 − 123/384), the gain rate Serial only / (Serial only +
//! neither).

use c2s_stats::MetricRow;
use serde::{Deserialize, Serialize};

use super::paper::PaperTable;
use super::table1::Interface;
use super::{differences, paper_domain, pp_diff, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{count, pct, Group, MetricIndex, UNDEFINED};

/// Where a row comes from: one of Table 1's interfaces or the semantic bridge (in
/// exhibits/tableD15.tsv: `code`, `direct`, `bridge`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(try_from = "String", into = "String")]
pub enum Source {
    /// Table 1's code or direct panel (`table1-code`, `table1-direct`).
    Table1(Interface),
    /// The semantic bridge panel's named and binary fields (`semantic-bridge`).
    SemanticBridge,
}

impl TryFrom<String> for Source {
    type Error = String;
    fn try_from(name: String) -> Result<Source, String> {
        match name.as_str() {
            "code" => Ok(Source::Table1(Interface::Code)),
            "direct" => Ok(Source::Table1(Interface::Direct)),
            "bridge" => Ok(Source::SemanticBridge),
            other => Err(format!("`{other}` is not a source: code, direct or bridge")),
        }
    }
}

impl From<Source> for String {
    fn from(source: Source) -> String {
        match source {
            Source::Table1(i) => i.label().to_string(),
            Source::SemanticBridge => "bridge".to_string(),
        }
    }
}

impl Source {
    fn of_panel(panel: &str) -> anyhow::Result<Source> {
        match panel {
            "semantic-bridge" => Ok(Source::SemanticBridge),
            p => Ok(Source::Table1(Interface::of_panel(p)?)),
        }
    }

    /// The "Task" cell of a group of this source (`None`: not one of the table's tasks).
    fn task(self, domain: &str) -> Option<String> {
        match (self, domain) {
            (Source::SemanticBridge, "semantic_named") => Some("named fields".into()),
            (Source::SemanticBridge, "semantic_binary") => Some("binary fields".into()),
            (Source::SemanticBridge, _) => None,
            (Source::Table1(_), d) => Some(paper_domain(d).to_string()),
        }
    }

    /// The "Model / interface" cell of `model`'s row.
    fn label(self, model: &str) -> String {
        match self {
            Source::Table1(i) => format!("{model} / {}", i.label()),
            Source::SemanticBridge => model.to_string(),
        }
    }
}

/// One row of Table D15 as printed: the joint counts and the three printed summaries.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct PaperRow {
    /// The paper model, as printed.
    pub model: String,
    /// The "Model / interface" cell.
    pub label: String,
    /// The panel the row is from.
    pub source: Source,
    /// The "Task" cell: `math`, `lexical`, `named fields` or `binary fields`.
    pub task: String,
    /// Both / Native only / Serial only / neither.
    pub joint: [u64; 4],
    /// SCR (%), ∆ (pp), gain rate (%), as printed.
    pub printed: (f64, f64, f64),
}

impl PaperRow {
    /// Items of the row: the sum of its joint counts.
    pub fn items(&self) -> u64 {
        self.joint.iter().sum()
    }
    /// SCR, Serial EM and gain rate as fractions, from the joint counts.
    pub fn rates(&self) -> (f64, f64, f64) {
        let [both, native_only, serial_only, neither] = self.joint.map(|c| c as f64);
        (
            both / (both + native_only),
            (both + serial_only) / self.items() as f64,
            serial_only / (serial_only + neither),
        )
    }
}

/// Table D15 as printed, in its order.
pub static PAPER: PaperTable<PaperRow> = PaperTable::new("tableD15");

/// One of our rows: a paired (model, task) group of one source.
#[derive(Debug, Clone)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The panel the row is from.
    pub source: Source,
    /// The "Task" cell: `math`, `lexical`, `named fields` or `binary fields`.
    pub task: String,
    /// Paired items; `None` without the joint table.
    pub items: Option<u64>,
    /// Joint counts as printed: both / Native only / Serial only / neither.
    pub joint: String,
    /// SCR as a fraction (both / Native correct); `None` with no Native-correct item.
    pub scr: Option<f64>,
    /// Serial EM as a fraction over all paired items.
    pub serial_em: Option<f64>,
    /// Serial success on Native-wrong items, as a fraction: Serial only / (Serial only +
    /// neither); `None` when Native is never wrong.
    pub gain_rate: Option<f64>,
}

impl OurRow {
    /// ∆: SCR − Serial EM (a fraction; undefined when either is).
    pub fn delta(&self) -> Option<f64> {
        Some(self.scr? - self.serial_em?)
    }
}

/// Our rows of one panel's metric rows.
pub fn our_rows(rows: &[MetricRow], source: Source) -> Vec<OurRow> {
    let index = MetricIndex::new(rows);
    index
        .paired_groups()
        .into_iter()
        .filter_map(|g: Group| {
            let task = source.task(&g.domain)?;
            let joint = ["both", "native_only", "serial_only", "neither"]
                .map(|m| count(index.get(&g, None, m)))
                .join("/");
            Some(OurRow {
                model: g.model.clone(),
                source,
                task,
                items: index.get(&g, None, "both").and_then(|r| r.denominator),
                joint,
                scr: index.value(&g, None, "scr"),
                serial_em: index.value(&g, None, "serial_em"),
                gain_rate: index.value(&g, None, "gain_rate"),
            })
        })
        .collect()
}

/// A signed percentage-point cell with one decimal (`+0.9`, `−10.4`), as the paper prints ∆.
fn signed_pp(v: f64) -> String {
    if v < 0.0 {
        format!("−{:.1}", -v)
    } else {
        format!("+{v:.1}")
    }
}

const HEADER: [&str; 7] = [
    "Model / interface",
    "Task",
    "Items",
    "Joint counts",
    "SCR (%)",
    "∆",
    "Gain rate (%)",
];

/// Table D15's document: ours, the paper's sixteen rows, and the differences.
pub fn layout(ours: &[OurRow], against: &str) -> anyhow::Result<Doc> {
    let printed = PAPER.rows()?;
    let mut doc = Doc::new("Table D15: Marginal improvement and correctness turnover");
    doc.p(
        "Joint counts give both correct / Native only / Serial only / neither. SCR, its \
         difference from Serial EM (∆, percentage points), and Serial success on Native-wrong \
         items (Gain rate) summarize different parts of the same paired table.",
    );
    doc.h(2, "This run");
    doc.table(Table {
        text_columns: 2,
        header: HEADER.map(String::from).to_vec(),
        rows: ours
            .iter()
            .map(|r| {
                vec![
                    r.source.label(&r.model),
                    r.task.clone(),
                    r.items
                        .map_or_else(|| UNDEFINED.to_string(), |n| n.to_string()),
                    r.joint.clone(),
                    pct(r.scr),
                    r.delta()
                        .map_or_else(|| UNDEFINED.to_string(), |d| signed_pp(100.0 * d)),
                    pct(r.gain_rate),
                ]
            })
            .collect(),
        notes: vec![
            "code / direct: Table 1's panels (table1-code, table1-direct); named and binary \
             fields: the semantic bridge (semantic-bridge). “–”: an empty denominator."
                .into(),
        ],
    });
    doc.h(2, "The paper (Table D15)");
    doc.table(Table {
        text_columns: 2,
        header: HEADER.map(String::from).to_vec(),
        rows: printed
            .iter()
            .map(|p| {
                vec![
                    p.label.to_string(),
                    p.task.to_string(),
                    p.items().to_string(),
                    p.joint.map(|c| c.to_string()).join("/"),
                    format!("{:.1}", p.printed.0),
                    signed_pp(p.printed.1),
                    format!("{:.1}", p.printed.2),
                ]
            })
            .collect(),
        notes: vec![],
    });
    let (models, mut diff) = differences(
        &mut doc,
        printed.iter().map(|p| p.model.as_str()),
        against,
        3,
        &[
            "Model / interface",
            "Task",
            "Paper row",
            "Δ SCR",
            "Δ ∆",
            "Δ gain rate",
        ],
    );
    for r in ours {
        for m in &models {
            let paper = printed
                .iter()
                .find(|p| p.model == *m && p.source == r.source && p.task == r.task);
            let (label, cells) = match paper {
                Some(p) => (
                    format!("{} / {}", p.label, p.task),
                    [
                        pp_diff(r.scr, p.printed.0),
                        pp_diff(r.delta(), p.printed.1),
                        pp_diff(r.gain_rate, p.printed.2),
                    ],
                ),
                None => (
                    format!("{m}: no such row"),
                    [(); 3].map(|_| UNDEFINED.into()),
                ),
            };
            let mut row = vec![r.source.label(&r.model), r.task.clone(), label];
            row.extend(cells);
            diff.rows.push(row);
        }
    }
    diff.notes.push(
        "Percentage points, this run minus the paper's row of the same interface and task.".into(),
    );
    doc.table(diff);
    Ok(doc)
}

/// Read the three panels' runs and lay out the table.
pub fn document(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let mut ours = Vec::new();
    for run in runs {
        ours.extend(our_rows(
            &run.load()?.metric_rows()?,
            Source::of_panel(run.panel)?,
        ));
    }
    layout(&ours, against)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::testing::paired_rows;

    /// The printed SCR, ∆ and gain rate follow from the printed joint counts ("SCR, its
    /// difference from Serial EM (∆, percentage points), and Serial success on Native-wrong
    /// items (Gain rate) summarize different parts of the same paired table"), and Table 1's
    /// rows are Table 1's joint counts.
    #[test]
    fn the_papers_summaries_follow_from_its_joint_counts() {
        for p in PAPER.rows().unwrap() {
            let (scr, serial, gain) = p.rates();
            let ctx = format!("{} {}", p.label, p.task);
            assert!((100.0 * scr - p.printed.0).abs() < 0.051, "SCR of {ctx}");
            assert!(
                (100.0 * (scr - serial) - p.printed.1).abs() < 0.051,
                "∆ of {ctx}"
            );
            assert!((100.0 * gain - p.printed.2).abs() < 0.051, "gain of {ctx}");
        }
        for t1 in super::super::table1::PAPER.rows().unwrap() {
            let d15 = PAPER
                .rows()
                .unwrap()
                .iter()
                .find(|p| {
                    p.model == t1.model
                        && p.source == Source::Table1(t1.interface)
                        && p.task == t1.domain
                })
                .expect("every Table 1 row is in D15");
            assert_eq!(d15.joint, t1.joint, "{} {}", t1.label, t1.domain);
        }
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let mut rows = paired_rows("m", "arithmetic", [2, 3, 1, 2], (0.1, 0.7));
        rows.push(MetricRow {
            value: Some(1.0 / 3.0),
            numerator: Some(1),
            denominator: Some(3),
            ..MetricRow::empty(
                0,
                "m",
                "arithmetic",
                None,
                "Native/code vs Serial/Full/code",
                "gain_rate",
            )
        });
        let ours = our_rows(&rows, Source::Table1(Interface::Code));
        assert_eq!(ours.len(), 1);
        // SCR 2/5 = 40.0; Serial EM 3/8 = 37.5; ∆ +2.5; gain 1/3.
        let md = layout(&ours, "Jev").unwrap().markdown();
        for want in [
            "| Model / interface | Task | Items | Joint counts | SCR (%) | ∆ | Gain rate (%) |",
            "| m / code | math | 8 | 2/3/1/2 | 40.0 | +2.5 | 33.3 |",
            "| Jev | math | 384 | 123/250/0/11 | 33.0 | +0.9 | 0.0 |",
            "| Qwen3-8B | binary fields | 128 | 1/18/19/90 | 5.3 | −10.4 | 17.4 |",
            "| m / code | math | Jev / math | +7.0 | +1.6 | +33.3 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        // The bridge's rows keep only its two representations.
        let bridge = paired_rows("m", "semantic_named", [1, 1, 1, 1], (0.0, 1.0));
        let ours = our_rows(&bridge, Source::SemanticBridge);
        assert_eq!(ours[0].task, "named fields");
        assert!(our_rows(
            &paired_rows("m", "arithmetic", [1, 1, 1, 1], (0.0, 1.0)),
            Source::SemanticBridge
        )
        .is_empty());
    }
}
