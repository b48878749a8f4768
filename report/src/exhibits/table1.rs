//! Table 1: paired correctness per model / interface and domain, from the panels `table1-code`
//! (Native and Serial/Full score the legal codes) and `table1-direct` (Native generates the
//! string, Serial one character). Native and Serial EM are over every paired item; SCR is
//! both correct / Native correct, with the run's length-stratified bootstrap interval.

use c2s_stats::MetricRow;
use serde::{Deserialize, Serialize};

use super::engine::Frame;
use super::paper::PaperTable;
use super::{paper_domain, PanelRun};
use crate::tables::{ratio, scr_cell, MetricIndex};

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

/// The paper's Table 1 (its Native and Serial EM are the joint counts over 384).
pub static PAPER: PaperTable<PaperRow> = PaperTable::new("table1");

/// The paper's models, for `--against`.
pub fn paper_models() -> anyhow::Result<Vec<&'static str>> {
    Ok(super::distinct(
        PAPER.rows()?.iter().map(|r| r.model.as_str()),
    ))
}

/// One of our rows: a paired group (model, domain) of one interface's panel.
#[derive(Debug, Clone, Serialize)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The panel's interface (code or direct), matching the paper row it is compared with.
    pub interface: Interface,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// Joint counts: both / Native only / Serial only / neither; `None` where undefined.
    pub joint: [Option<u64>; 4],
    /// Native EM as a fraction over all paired items; `None` when undefined.
    pub native_em: Option<f64>,
    /// Serial EM as a fraction over all paired items; `None` when undefined.
    pub serial_em: Option<f64>,
    /// The SCR count, both correct / Native correct, as printed.
    pub scr_count: String,
    /// SCR [95% CI] in percent, as printed (with † for an exact interval).
    pub scr_ci: String,
    /// SCR as a fraction (both correct / Native correct); `None` with no Native-correct item.
    pub scr: Option<f64>,
}

/// Our rows of one panel's metric rows (one paired group per model and domain).
pub fn our_rows(rows: &[MetricRow], interface: Interface) -> Vec<OurRow> {
    let index = MetricIndex::new(rows);
    (index.paired_groups().into_iter())
        .map(|g| OurRow {
            joint: ["both", "native_only", "serial_only", "neither"]
                .map(|m| index.get(&g, None, m).and_then(|r| r.numerator)),
            native_em: index.value(&g, None, "native_em"),
            serial_em: index.value(&g, None, "serial_em"),
            scr_count: ratio(index.get(&g, None, "scr")),
            scr_ci: scr_cell(&index, &g, None),
            scr: index.value(&g, None, "scr"),
            model: g.model.clone(),
            interface,
            domain: paper_domain(&g.domain).to_string(),
        })
        .collect()
}

/// The rows `rows` makes of each Table 1 panel's metric rows with its interface (Table 1,
/// Figure 2).
pub(super) fn per_interface<T>(
    runs: &[PanelRun],
    rows: fn(&[MetricRow], Interface) -> Vec<T>,
) -> anyhow::Result<Vec<T>> {
    let mut out = Vec::new();
    for run in runs {
        let interface = Interface::of_panel(run.panel)?;
        out.extend(rows(&run.load()?.metric_rows()?, interface));
    }
    Ok(out)
}

/// A domain's place in the paper's order, math then lexical (any other last).
pub(super) fn domain_rank(domain: &str) -> usize {
    ["math", "lexical"]
        .iter()
        .position(|d| *d == domain)
        .unwrap_or(2)
}

/// Table 1's rows from its two panels.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    Ok(Frame::new().rows("ours", &per_interface(runs, our_rows)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::laid_out;

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
        let md = laid_out("table1", Frame::new().rows("ours", &ours), "Qwen3.5-27B");
        for want in [
            "| m (code) | math | 62.5 | 2/3/0/3 | 25.0 | 2/5 | 40.0 [10.0, 70.0] |",
            "| Model / interface | Domain | Native EM | Joint counts | Serial EM | SCR count | SCR [95% CI] |",
            "| Jev | math | 97.1 | 123/250/0/11 | 32.0 | 123/373 | 33.0 [29.0, 37.0] |",
            "| Qwen3-8B (code) | math | 15.4 | 0/59/0/325 | 0.0 | 0/59 | 0.0 [0.0, 6.1]† |",
            "| m (code) | math | Qwen3.5-27B (code) | +37.2 | +24.5 | +39.0 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
