//! Table 4 and Figure 4's numbers from `config/panels/fresh-plan.toml`: SelfPlanSpell copying
//! the model's own fresh Native choice with raw and with indexed evidence, per model and domain:
//! raw fidelity, indexed fidelity and the indexed outputs' gold EM. Table 4 is the Serial
//! control; Figure 4 adds the Independent control. Both are counts over the panel's
//! trajectories, declared in exhibits/table4.toml and exhibits/figure4.toml (`[[sources]]`);
//! no code computes them.

#[cfg(test)]
mod tests {
    use c2s_records::Trajectory;

    use crate::exhibits::engine::Frame;
    use crate::exhibits::sources::PanelRecords;
    use crate::exhibits::testing::declared;

    fn trajectory(arm: &str, fidelity: bool, correct: bool) -> Trajectory {
        serde_json::from_value(serde_json::json!({
            "item_id": "i", "domain": "arithmetic", "length": 3, "model": "m", "arm": arm,
            "support": "Full", "output": "123", "correct": correct, "valid": true,
            "fidelity": fidelity, "membership": "Gold", "aborted": false, "calls": 3,
            "fills": 0, "prompt_tokens": 0, "completion_tokens": 0, "latency_ms": 0.0,
            "steps": [], "position_correct": [],
        }))
        .expect("a test trajectory")
    }

    fn panel(trajectories: Vec<Trajectory>) -> PanelRecords {
        PanelRecords {
            panel: "fresh-plan".into(),
            metric_rows: vec![],
            trajectories,
        }
    }

    #[test]
    fn figure4_has_both_controls_and_the_papers_bars() {
        let ts = vec![
            trajectory("SelfPlanSpell/Full/code/raw/independent", false, false),
            trajectory("SelfPlanSpell/Full/code/indexed/independent", true, true),
            trajectory("SelfPlanSpell/Full/code/raw/serial", true, true),
            trajectory("SelfPlanSpell/Full/code/indexed/serial", true, false),
        ];
        let md = declared("figure4", &[panel(ts)], Frame::new(), "Jev");
        for want in [
            "| Model | Domain | Control | Raw | Indexed | Indexed gold EM |",
            "| m | math | Independent | 0/1 | 1/1 | 1/1 |",
            "| m | math | Serial | 1/1 | 1/1 | 0/1 |",
            "| StartLux | lexical | Independent | 0/30 | 29/30 | marker, not printed |",
            "| m | math | Independent | Jev math Independent | −43.3 | +0.0 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        // 30 plans: raw faithful on 3, indexed faithful on 27 and gold-correct on 12.
        let mut ts = Vec::new();
        for i in 0..30 {
            ts.push(trajectory(
                "SelfPlanSpell/Full/code/raw/serial",
                i < 3,
                false,
            ));
            ts.push(trajectory(
                "SelfPlanSpell/Full/code/indexed/serial",
                i < 27,
                i < 12,
            ));
        }
        let md = declared("table4", &[panel(ts)], Frame::new(), "Qwen3.5-27B");
        for want in [
            "| Model | Domain | Raw | Indexed | Gold EM |",
            "| m | math | 3/30 | 27/30 | 12/30 |",
            "| StartLux | lexical | 1/30 | 29/30 | 28/30 |",
            "| m | math | Jev math | −46.7 | −10.0 | −53.3 |",
            "| m | math | StartLux math | −16.7 | +6.7 | −13.3 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
