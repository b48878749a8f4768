//! Table 1: "Paired correctness on 384 items per domain. Joint counts give both correct /
//! Native only / Serial only / neither; EM and SCR are percentages. SCR counts are both correct
//! / Native correct. Intervals are length-stratified item bootstrap 95% CIs, except
//! zero-success cells (†), which show exact two-sided binomial intervals."
//!
//! Columns as the paper prints them: Model / interface, Domain, Native EM, Joint counts,
//! Serial EM, SCR count, SCR [95% CI]. Our rows come from the two panels
//! `config/panels/table1-code.toml` (the code interface: scored legal codes) and
//! `table1-direct.toml` (the direct interface: a generated string and character). The paper's
//! ten rows follow as printed, then ours minus the paper's row of the same interface and
//! domain for one paper model (`--against`).

use c2s_stats::MetricRow;
use serde::{Deserialize, Serialize};

use super::paper::PaperTable;
use super::{paper_domain, pp_diff, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{count, pct, ratio, scr_cell, MetricIndex, UNDEFINED};

/// The two interfaces of Table 1's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Interface {
    /// Scored legal codes (Jev and StartLux score their returned choices; Qwen "(code)").
    Code,
    /// The complete string and one character, generated ("(direct)").
    Direct,
}

impl Interface {
    /// The interface of Table 1's two panels (exhibits/table1.toml).
    pub(super) fn of_panel(panel: &str) -> anyhow::Result<Interface> {
        match panel {
            "table1-code" => Ok(Interface::Code),
            "table1-direct" => Ok(Interface::Direct),
            other => anyhow::bail!("`{other}` is not a panel of Table 1"),
        }
    }

    pub(super) fn label(self) -> &'static str {
        match self {
            Interface::Code => "code",
            Interface::Direct => "direct",
        }
    }
}

/// One row of the paper's Table 1, as printed (exhibits/table1.tsv).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct PaperRow {
    /// The model as the paper names it.
    pub model: String,
    /// The "Model / interface" cell.
    pub label: String,
    /// Whether the row is a code-interface or a direct-interface row.
    pub interface: Interface,
    /// `math` or `lexical`, as printed.
    pub domain: String,
    /// Joint counts: both / Native only / Serial only / neither.
    pub joint: [u64; 4],
    /// SCR [95% CI] in percent, as printed; `exact`: the † of a zero-success cell.
    pub scr: (f64, f64, f64),
    /// The printed †: the SCR interval is an exact two-sided binomial one (zero-success cell).
    pub exact: bool,
}

impl PaperRow {
    fn n(&self) -> u64 {
        self.joint.iter().sum()
    }
    fn native_em(&self) -> f64 {
        (self.joint[0] + self.joint[1]) as f64 / self.n() as f64
    }
    fn serial_em(&self) -> f64 {
        (self.joint[0] + self.joint[2]) as f64 / self.n() as f64
    }
}

/// The paper's Table 1 (its Native and Serial EM are the joint counts over 384).
pub static PAPER: PaperTable<PaperRow> = PaperTable::new("table1");

/// The paper's models, for `--against`.
pub fn paper_models() -> anyhow::Result<Vec<&'static str>> {
    let mut m: Vec<&str> = PAPER.rows()?.iter().map(|r| r.model.as_str()).collect();
    m.dedup();
    Ok(m)
}

/// One of our rows: its interface and the metric rows of its (model, domain) group.
#[derive(Debug, Clone)]
pub struct OurRow {
    /// The panel's interface (code or direct), matching the paper row it is compared with.
    pub interface: Interface,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// The row's seven printed cells, in Table 1's column order.
    pub cells: Vec<String>,
    /// Native EM, Serial EM and SCR (fractions), for the differences.
    pub native_em: Option<f64>,
    /// Serial EM as a fraction over all paired items; `None` when undefined.
    pub serial_em: Option<f64>,
    /// SCR as a fraction (both correct / Native correct); `None` with no Native-correct item.
    pub scr: Option<f64>,
}

/// Our rows of one panel's metric rows (one paired group per model and domain).
pub fn our_rows(rows: &[MetricRow], interface: Interface) -> Vec<OurRow> {
    let index = MetricIndex::new(rows);
    index
        .paired_groups()
        .into_iter()
        .map(|g| {
            let joint = ["both", "native_only", "serial_only", "neither"]
                .map(|m| count(index.get(&g, None, m)))
                .join("/");
            let native_em = index.value(&g, None, "native_em");
            let serial_em = index.value(&g, None, "serial_em");
            let domain = paper_domain(&g.domain).to_string();
            OurRow {
                cells: vec![
                    format!("{} ({})", g.model, interface.label()),
                    domain.clone(),
                    pct(native_em),
                    joint,
                    pct(serial_em),
                    ratio(index.get(&g, None, "scr")),
                    scr_cell(&index, &g, None),
                ],
                interface,
                domain,
                native_em,
                serial_em,
                scr: index.value(&g, None, "scr"),
            }
        })
        .collect()
}

const HEADER: [&str; 7] = [
    "Model / interface",
    "Domain",
    "Native EM",
    "Joint counts",
    "Serial EM",
    "SCR count",
    "SCR [95% CI]",
];

fn paper_cells(r: &PaperRow) -> Vec<String> {
    let native_correct = r.joint[0] + r.joint[1];
    vec![
        r.label.clone(),
        r.domain.clone(),
        pct(Some(r.native_em())),
        r.joint.map(|c| c.to_string()).join("/"),
        pct(Some(r.serial_em())),
        format!("{}/{native_correct}", r.joint[0]),
        format!(
            "{:.1} [{:.1}, {:.1}]{}",
            r.scr.0,
            r.scr.1,
            r.scr.2,
            if r.exact { "†" } else { "" }
        ),
    ]
}

/// Table 1's document: ours, the paper's, and the differences against `against`.
pub fn layout(ours: &[OurRow], against: &str) -> anyhow::Result<Doc> {
    let printed = PAPER.rows()?;
    let mut doc = Doc::new("Table 1: Paired correctness");
    doc.p(
        "Joint counts give both correct / Native only / Serial only / neither; EM and SCR are \
         percentages. SCR counts are both correct / Native correct. Intervals are \
         length-stratified item bootstrap 95% CIs, except zero-success cells (†), which show \
         exact two-sided binomial intervals.",
    );
    doc.h(2, "This run");
    doc.table(Table {
        text_columns: 2,
        header: HEADER.map(String::from).to_vec(),
        rows: ours.iter().map(|r| r.cells.clone()).collect(),
        notes: vec![
            "code: Native and Serial/Full score the legal codes (table1-code); direct: Native \
             generates the string and Serial one character (table1-direct)."
                .into(),
        ],
    });
    doc.h(2, "The paper (Table 1)");
    doc.table(Table {
        text_columns: 2,
        header: HEADER.map(String::from).to_vec(),
        rows: printed.iter().map(paper_cells).collect(),
        notes: vec![
            "384 items per domain; Native and Serial EM are the joint counts over 384.".into(),
        ],
    });
    doc.h(2, format!("This run minus {against}"));
    let mut diff = Table {
        text_columns: 3,
        header: [
            "Model / interface",
            "Domain",
            "Paper row",
            "Δ Native EM",
            "Δ Serial EM",
            "Δ SCR",
        ]
        .map(String::from)
        .to_vec(),
        ..Table::default()
    };
    for r in ours {
        let paper = printed
            .iter()
            .find(|p| p.model == against && p.interface == r.interface && p.domain == r.domain);
        let (label, cells) = match paper {
            Some(p) => (
                p.label.to_string(),
                [
                    pp_diff(r.native_em, 100.0 * p.native_em()),
                    pp_diff(r.serial_em, 100.0 * p.serial_em()),
                    pp_diff(r.scr, p.scr.0),
                ],
            ),
            None => (
                format!("{against} has no {} row", r.interface.label()),
                [
                    UNDEFINED.to_string(),
                    UNDEFINED.to_string(),
                    UNDEFINED.to_string(),
                ],
            ),
        };
        let mut row = vec![r.cells[0].clone(), r.domain.clone(), label];
        row.extend(cells);
        diff.rows.push(row);
    }
    diff.notes.push(
        "Percentage points, this run minus the paper's row of the same interface and domain."
            .into(),
    );
    doc.table(diff);
    Ok(doc)
}

/// Read each panel's run and lay out the table.
pub fn document(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let mut ours = Vec::new();
    for run in runs {
        ours.extend(our_rows(
            &run.load()?.metric_rows()?,
            Interface::of_panel(run.panel)?,
        ));
    }
    layout(&ours, against)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's rows as printed: every row holds 384 items, its SCR count is both / Native
    /// correct, and its Native EM is the printed one ("Jev math 97.1 … 123/373 33.0").
    #[test]
    fn the_papers_rows_are_consistent() {
        let printed_native = [97.1, 99.5, 61.2, 93.8, 15.4, 94.5, 25.3, 99.7, 98.4, 99.0];
        for (r, want) in PAPER.rows().unwrap().iter().zip(printed_native) {
            assert_eq!(r.n(), 384, "{}", r.label);
            assert!(
                (100.0 * r.native_em() - want).abs() < 0.06,
                "{} {}",
                r.label,
                r.domain
            );
        }
        assert_eq!(
            paper_models().unwrap(),
            ["Jev", "StartLux", "Qwen3-8B", "Qwen3.5-27B"]
        );
    }

    fn metric(domain: &str, metric: &str, value: f64, num: u64, den: u64) -> MetricRow {
        MetricRow {
            value: Some(value),
            numerator: Some(num),
            denominator: Some(den),
            ..MetricRow::empty(
                0,
                "m",
                domain,
                None,
                "Native/code vs Serial/Full/code",
                metric,
            )
        }
    }

    /// Our rows in the paper's columns, the paper's ten rows, and the differences.
    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let mut rows = Vec::new();
        for (m, v, n) in [
            ("both", 2.0 / 8.0, 2),
            ("native_only", 3.0 / 8.0, 3),
            ("serial_only", 0.0, 0),
            ("neither", 3.0 / 8.0, 3),
            ("native_em", 5.0 / 8.0, 5),
            ("serial_em", 2.0 / 8.0, 2),
        ] {
            rows.push(metric("arithmetic", m, v, n, 8));
        }
        rows.push(MetricRow {
            ci_low: Some(0.1),
            ci_high: Some(0.7),
            ..metric("arithmetic", "scr", 0.4, 2, 5)
        });
        let ours = our_rows(&rows, Interface::Code);
        assert_eq!(
            ours[0].cells,
            [
                "m (code)",
                "math",
                "62.5",
                "2/3/0/3",
                "25.0",
                "2/5",
                "40.0 [10.0, 70.0]"
            ]
        );
        let md = layout(&ours, "Qwen3.5-27B").unwrap().markdown();
        for want in [
            "| Model / interface | Domain | Native EM | Joint counts | Serial EM | SCR count | SCR [95% CI] |",
            "| Jev | math | 97.1 | 123/250/0/11 | 32.0 | 123/373 | 33.0 [29.0, 37.0] |",
            "| Qwen3-8B (code) | math | 15.4 | 0/59/0/325 | 0.0 | 0/59 | 0.0 [0.0, 6.1]† |",
            "| m (code) | math | Qwen3.5-27B (code) | +37.2 | +24.5 | +39.0 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
