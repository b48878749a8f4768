//! Table D15, from Table 1's panels (`table1-code`, `table1-direct`) and the semantic bridge
//! (`semantic-bridge`, its named and binary fields): each paired group's joint counts, SCR,
//! ∆ = SCR − Serial EM ("Jev math … 33.0 +0.9": 123/373 − 123/384) and the gain rate, Serial
//! only / (Serial only + neither). Its rows are declared in exhibits/tableD15.toml
//! (`[[sources]]`: each panel's paired groups).

#[cfg(test)]
mod tests {
    use c2s_stats::MetricRow;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::testing::{declared, paired_rows, panel_metrics};

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
                Some(c2s_records::Domain::Arithmetic),
                None,
                "Native/code vs Serial/Full/code",
                c2s_records::Metric::GainRate,
            )
        });
        // SCR 2/5 = 40.0; Serial EM 3/8 = 37.5; ∆ +2.5; gain 1/3.
        let md = declared(
            "tableD15",
            &[panel_metrics("table1-code", rows)],
            Frame::new(),
            "Jev",
        );
        assert_eq!(md.matches("| m / code | math | 8 |").count(), 1, "{md}");
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
        let mut bridge = paired_rows("m", "semantic_named", [1, 1, 1, 1], (0.0, 1.0));
        bridge.extend(paired_rows("m", "arithmetic", [1, 1, 1, 1], (0.0, 1.0)));
        let md = declared(
            "tableD15",
            &[panel_metrics("semantic-bridge", bridge)],
            Frame::new(),
            "Jev",
        );
        assert!(md.contains("| m | named fields | 4 | 1/1/1/1 |"), "{md}");
        assert!(!md.contains("| m | math |"), "{md}");
    }
}
