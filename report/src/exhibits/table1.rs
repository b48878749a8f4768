//! Table 1: paired correctness per model / interface and domain, from the panels `table1-code`
//! (Native and Serial/Full score the legal codes) and `table1-direct` (Native generates the
//! string, Serial one character). Its rows are declared in exhibits/table1.toml (`[[sources]]`:
//! each panel's paired groups); this module holds what other exhibits share of it: the two
//! interfaces, the paper's domain order and the paper's models (`--against`).

use serde::{Deserialize, Serialize};

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

/// The paper's models, in its order: what `--against` accepts.
pub fn paper_models() -> anyhow::Result<Vec<String>> {
    let rows = super::paper::records("table1")?;
    let models = rows.iter().filter_map(|r| r.get_attr("model").ok());
    let names: Vec<String> = models
        .filter_map(|m| m.as_str().map(String::from))
        .collect();
    Ok(super::distinct(names.iter().map(String::as_str))
        .into_iter()
        .map(String::from)
        .collect())
}

/// A domain's place in the paper's order, math then lexical (any other last).
pub(super) fn domain_rank(domain: &str) -> usize {
    ["math", "lexical"]
        .iter()
        .position(|d| *d == domain)
        .unwrap_or(2)
}

#[cfg(test)]
mod tests {
    use c2s_stats::MetricRow;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::testing::{declared, panel_metrics};

    fn metric(domain: &str, metric: &str, value: f64, num: u64, den: u64) -> MetricRow {
        MetricRow {
            value: Some(value),
            numerator: Some(num),
            denominator: Some(den),
            ..MetricRow::empty(
                0,
                "m",
                c2s_records::Domain::parse(domain),
                None,
                "Native/code vs Serial/Full/code",
                c2s_records::Metric::parse(metric).unwrap(),
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
        let panel = panel_metrics("table1-code", rows);
        let md = declared("table1", &[panel], Frame::new(), "Qwen3.5-27B");
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
