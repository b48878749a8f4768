//! Table D13: the original lexical population (Table 1's code panel, `table1-code`) under D.15's
//! equal-length mixture ("each length weight 1/6 and each item 1/(6 n_L)"): the run's
//! `*_equal_length` metric rows. The paper's "New lexical" cohort of 2,347 targets is not
//! published nor built here, so its rows have none of ours.

use c2s_stats::MetricRow;
use serde::Serialize;

use super::engine::Frame;
use super::{run_of, PanelRun};
use crate::report::tables::{estimate, MetricIndex};

/// The metrics of one row, in the table's column order.
const METRICS: [&str; 3] = [
    "native_em_equal_length",
    "serial_em_equal_length",
    "scr_equal_length",
];

/// One of our rows: a model's original lexical population under equal-length weights.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The population as the paper names it: `Original lexical`.
    pub population: &'static str,
    /// The mixture as the paper names it: `Equal length`.
    pub mixture: &'static str,
    /// Native EM, Serial EM and SCR under equal-length weights, `value [low, high]` in percent.
    pub cells: Vec<String>,
    /// The same three estimates as fractions, for the differences; `None` when undefined.
    pub values: [Option<f64>; 3],
}

/// Our rows from the code panel's metric rows: its lexical paired groups.
pub fn our_rows(rows: &[MetricRow]) -> Vec<OurRow> {
    let index = MetricIndex::new(rows);
    index
        .paired_groups()
        .into_iter()
        .filter(|g| g.domain == "lexical")
        .map(|g| OurRow {
            model: g.model.clone(),
            population: "Original lexical",
            mixture: "Equal length",
            cells: METRICS
                .iter()
                .map(|m| estimate(index.get(&g, None, m), None))
                .collect(),
            values: METRICS.map(|m| index.value(&g, None, m)),
        })
        .collect()
}

/// Table D13 from the `table1-code` panel's run.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "table1-code")?.load()?;
    Ok(Frame::new().rows("ours", &our_rows(&run.metric_rows()?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::testing::laid_out;

    fn row(metric: &str, value: f64) -> MetricRow {
        MetricRow {
            value: Some(value),
            ci_low: Some(value - 0.01),
            ci_high: Some(value + 0.01),
            ..MetricRow::empty(
                0,
                "m",
                Some(c2s_records::Domain::Lexical),
                None,
                "Native/code vs Serial/Full/code",
                c2s_records::Metric::parse(metric).unwrap(),
            )
        }
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let rows = vec![
            row("both", 0.1),
            row("native_em_equal_length", 0.9),
            row("serial_em_equal_length", 0.1),
            row("scr_equal_length", 0.11),
        ];
        let ours = our_rows(&rows);
        assert_eq!(ours.len(), 1);
        let md = laid_out("tableD13", Frame::new().rows("ours", &ours), "Jev");
        for want in [
            "| Model | Population | Mixture | Native EM | Serial EM | SCR |",
            "| m | Original lexical | Equal length | 90.0 [89.0, 91.0] | 10.0 [9.0, 11.0] | 11.0 [10.0, 12.0] |",
            "| Jev | New lexical | Source | 99.2 [98.8, 99.5] | 0.6 [0.3, 0.9] | 0.6 [0.3, 0.9] |",
            "| m | Jev original lexical, equal | −9.5 | +7.9 | +8.9 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
