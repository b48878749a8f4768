//! Table D13: the original lexical population (Table 1's code panel, `table1-code`) under D.15's
//! equal-length mixture ("each length weight 1/6 and each item 1/(6 n_L)"): the run's
//! `*_equal_length` metric rows, declared in exhibits/tableD13.toml (`[[sources]]`). The
//! paper's "New lexical" cohort of 2,347 targets is not published nor built here, so its rows
//! have none of ours.

#[cfg(test)]
mod tests {
    use c2s_stats::MetricRow;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::testing::{declared, panel_metrics};

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
        let panel = panel_metrics("table1-code", rows);
        let md = declared("tableD13", &[panel], Frame::new(), "Jev");
        assert_eq!(md.matches("| m | Original lexical |").count(), 1, "{md}");
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
