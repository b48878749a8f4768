//! Table 3 (E.3, D.8): Native, WholeGenerate, Position query (Serial, one character per
//! request) and PrefixContinue on `config/panels/table3.toml`, counted from the run's
//! trajectories per model: correct (strict string EM), valid and items per domain, and model
//! calls. Its rows are declared in exhibits/table3.toml (`[[sources]]`: the panel's
//! trajectories summed per model and interface); this module holds its tests.

#[cfg(test)]
mod tests {
    use c2s_records::Trajectory;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::sources::PanelRecords;
    use crate::exhibits::testing::{declared, trajectory};

    /// `items` trajectories of `arm` in `domain`: the first `correct` correct, the first
    /// `valid` valid, `calls` model calls in all.
    fn cell(
        arm: &str,
        domain: &str,
        items: usize,
        correct: usize,
        valid: usize,
        calls: u32,
    ) -> Vec<Trajectory> {
        (0..items)
            .map(|i| {
                let mut t = trajectory(&format!("{domain}-{i}"), domain, 3, arm, i < correct);
                t.valid = i < valid;
                t.calls = calls / items as u32 + u32::from(i < calls as usize % items);
                t
            })
            .collect()
    }

    fn laid_out(trajectories: Vec<Trajectory>) -> String {
        let panel = PanelRecords {
            panel: "table3".into(),
            metric_rows: vec![],
            trajectories,
        };
        declared("table3", &[panel], Frame::new(), "Qwen3.5-27B")
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let ours = [
            cell("PrefixContinue/string/max32", "arithmetic", 8, 4, 8, 44),
            cell("PrefixContinue/string/max32", "lexical", 8, 0, 1, 44),
            cell("Native/string", "arithmetic", 8, 6, 8, 8),
            cell("Native/string", "lexical", 8, 2, 8, 8),
        ];
        let md = laid_out(ours.concat());
        for want in [
            "| Interface | Arithmetic | Lexical | Valid | Calls |",
            "| Native | 6/8 | 2/8 | 100/100 | 1.00 |",
            "| PrefixContinue | 4/8 | 0/8 | 100/12.5 | 5.50 |",
            "| PrefixContinue | 94/96 | 0/96 | 100/9.4 | 5.50 |",
            "| Position query | 14/96 | 27/96 | 100/100 | 5.50 |",
            "| m | Native | −22.9 | −75.0 | +0.0 | +0.0 | +0.00 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        // Table 3's order: Native before PrefixContinue.
        assert!(md.find("| Native | 6/8").unwrap() < md.find("| PrefixContinue | 4/8").unwrap());
    }

    #[test]
    fn arms_map_to_the_tables_interfaces() {
        let ours = [
            cell("Serial/Full/char", "lexical", 1, 1, 1, 1),
            cell("WholeGenerate/string/max32", "lexical", 1, 1, 1, 1),
            cell("Independent/Full/char", "lexical", 1, 1, 1, 1),
        ];
        let md = laid_out(ours.concat());
        assert!(md.contains("| Position query | 0/0 | 1/1 |"), "{md}");
        assert!(md.contains("| WholeGenerate | 0/0 | 1/1 |"), "{md}");
        assert!(!md.contains("Independent"), "{md}");
    }
}
