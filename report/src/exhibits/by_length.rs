//! Figure 2's numbers (the paper plots them and prints none): per domain ((a, b) math, (c, d)
//! lexical), model / interface of Table 1's panels (`table1-code`, `table1-direct`) and target
//! length, the runs' per-length Native EM and SCR rows with their intervals. Its rows are
//! declared in exhibits/figure2.toml (`[[sources]]`: each panel's paired groups by length).

#[cfg(test)]
mod tests {
    use c2s_stats::MetricRow;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::testing::{declared, paired_rows, panel_metrics};

    #[test]
    fn the_layout_has_one_row_per_series_and_length() {
        let mut rows = Vec::new();
        for (length, joint) in [(3, [3, 1, 0, 0]), (4, [0, 2, 0, 2])] {
            rows.extend(
                paired_rows("m", "arithmetic", joint, (0.2, 0.9))
                    .into_iter()
                    .map(|r| MetricRow {
                        length: Some(length),
                        ..r
                    }),
            );
        }
        rows.extend(paired_rows("m", "arithmetic", [3, 3, 0, 2], (0.1, 0.8)));
        let panel = panel_metrics("table1-direct", rows);
        let md = declared("figure2", &[panel], Frame::new(), "Jev");
        assert_eq!(md.matches("| m (direct) |").count(), 2, "{md}");
        for want in [
            "## (a, b) math",
            "| Model / interface | Length | Items | Native EM [95% CI] | SCR count | SCR [95% CI] |",
            "| m (direct) | 3 | 4 | 100.0 | 3/4 | 75.0 [20.0, 90.0] |",
            "| m (direct) | 4 | 4 | 50.0 | 0/2 | 0.0 [20.0, 90.0] |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert!(!md.contains("(c, d)"), "{md}");
    }
}
