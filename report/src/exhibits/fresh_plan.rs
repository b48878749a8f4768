//! Table 4 and Figure 4's numbers from `config/panels/fresh-plan.toml`: SelfPlanSpell copying
//! the model's own fresh Native choice with raw and with indexed evidence, per model and domain:
//! raw fidelity, indexed fidelity and the indexed outputs' gold EM. Table 4 is the Serial
//! control; Figure 4 adds the Independent control.

use std::collections::BTreeMap;

use c2s_records::Trajectory;
use serde::Serialize;

use super::copy_fidelity::count_pairs;
use super::engine::Frame;
use super::{paper_domain, run_of, Count, PanelRun};

/// Figure 4's controls, in its order, with the arm-label suffix of each (Table 4: Serial).
pub const CONTROLS: [(&str, &str); 2] = [("Independent", "independent"), ("Serial", "serial")];

/// One of our rows: raw fidelity, indexed fidelity, indexed gold EM.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// Raw fidelity, indexed fidelity (to the fresh Native choice), indexed gold EM.
    #[serde(serialize_with = "count_pairs")]
    pub counts: [Count; 3],
}

/// Our rows under the control whose arms end in `/suffix` (`SelfPlanSpell/Full/code/raw/…`,
/// `…/indexed/…`), by model, math first.
pub fn our_rows(trajectories: &[Trajectory], suffix: &str) -> Vec<OurRow> {
    let raw_arm = format!("SelfPlanSpell/Full/code/raw/{suffix}");
    let indexed_arm = format!("SelfPlanSpell/Full/code/indexed/{suffix}");
    let mut rows: BTreeMap<(String, bool, String), OurRow> = BTreeMap::new();
    for t in trajectories {
        let raw = t.arm == raw_arm;
        if !raw && t.arm != indexed_arm {
            continue;
        }
        let domain = paper_domain(t.domain.as_str()).to_string();
        let row = (rows.entry((t.model.clone(), domain != "math", domain.clone()))).or_insert_with(
            || OurRow {
                model: t.model.clone(),
                domain,
                ..OurRow::default()
            },
        );
        let fidelity = t.fidelity.unwrap_or(false);
        if raw {
            row.counts[0].add(fidelity);
        } else {
            row.counts[1].add(fidelity);
            row.counts[2].add(t.correct);
        }
    }
    rows.into_values().collect()
}

/// Table 4 from the `fresh-plan` panel's Serial arms.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "fresh-plan")?.load()?;
    Ok(Frame::new().rows("ours", &our_rows(&run.trajectories, "serial")))
}

/// One of our Figure 4 rows: a control's raw and indexed fidelity and indexed gold EM.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ControlRow {
    /// The control (`Independent`, `Serial`).
    pub control: &'static str,
    /// The model, domain and counts under the control.
    #[serde(flatten)]
    pub row: OurRow,
}

/// Our Figure 4 rows per model and domain, Independent first.
pub fn figure4_rows(trajectories: &[Trajectory]) -> Vec<ControlRow> {
    let mut out: Vec<ControlRow> = (CONTROLS.iter())
        .flat_map(|&(control, suffix)| {
            (our_rows(trajectories, suffix).into_iter()).map(move |row| ControlRow { control, row })
        })
        .collect();
    out.sort_by_key(|r| {
        let (model, domain) = (r.row.model.clone(), r.row.domain.clone());
        (model, domain != "math", domain, r.control)
    });
    out
}

/// Figure 4's numbers from the `fresh-plan` panel's trajectories.
pub fn figure4(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "fresh-plan")?.load()?;
    Ok(Frame::new().rows("ours", &figure4_rows(&run.trajectories)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::laid_out;

    #[test]
    fn figure4_has_both_controls_and_the_papers_bars() {
        let trajectory = |arm: &str, fidelity: bool, correct: bool| -> Trajectory {
            serde_json::from_value(serde_json::json!({
                "item_id": "i", "domain": "arithmetic", "length": 3, "model": "m", "arm": arm,
                "support": "Full", "output": "123", "correct": correct, "valid": true,
                "fidelity": fidelity, "membership": "Gold", "aborted": false, "calls": 3,
                "fills": 0, "prompt_tokens": 0, "completion_tokens": 0, "latency_ms": 0.0,
                "steps": [], "position_correct": [],
            }))
            .expect("a test trajectory")
        };
        let ts = vec![
            trajectory("SelfPlanSpell/Full/code/raw/independent", false, false),
            trajectory("SelfPlanSpell/Full/code/indexed/independent", true, true),
            trajectory("SelfPlanSpell/Full/code/raw/serial", true, true),
            trajectory("SelfPlanSpell/Full/code/indexed/serial", true, false),
        ];
        let rows = figure4_rows(&ts);
        assert_eq!(rows.len(), 2);
        let md = laid_out("figure4", Frame::new().rows("ours", &rows), "Jev");
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
        let c = |k, n| Count { k, n };
        let ours = vec![OurRow {
            model: "m".into(),
            domain: "math".into(),
            counts: [c(3, 30), c(27, 30), c(12, 30)],
        }];
        let md = laid_out("table4", Frame::new().rows("ours", &ours), "Qwen3.5-27B");
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
