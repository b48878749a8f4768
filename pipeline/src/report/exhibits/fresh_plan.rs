//! Table 4: "Serial plan-copying fidelity and indexed task correctness. Raw and Indexed measure
//! fidelity to freshly selected model plans, including incorrect selections; Gold EM measures
//! indexed outputs against the task target. Each model–domain pair contains 30 plans."
//!
//! Columns as printed: Model, Domain, Raw, Indexed, Gold EM (counts of 30). Ours come from
//! `config/panels/fresh-plan.toml`: SelfPlanSpell under Serial control with raw and with
//! indexed evidence, each copying the model's own fresh Native choice.
//!
//! Figure 4 ([`figure4`]): "Indexing improves fidelity to selected plans without guaranteeing
//! task correctness. Each panel uses 30 fresh plans per domain/model." It adds the Independent
//! control: raw → indexed fidelity per model, domain and control, printed as counts of 30, with
//! the indexed gold EM drawn as a marker (not printed).

use std::collections::BTreeMap;

use c2s_records::Trajectory;
use serde::{Deserialize, Serialize};

use super::paper::PaperTable;
use super::{differences, paper_domain, pp_diff, run_of, Count, PanelRun};
use crate::report::doc::{Doc, Table};

/// The Serial copy arms of the panel: raw and indexed evidence.
pub const RAW_ARM: &str = "SelfPlanSpell/Full/code/raw/serial";
/// The Serial copy arm with indexed evidence (Table 4's Indexed and Gold EM columns).
pub const INDEXED_ARM: &str = "SelfPlanSpell/Full/code/indexed/serial";

/// One row of Table 4 as printed: raw fidelity, indexed fidelity, indexed gold EM, of `plans`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct PaperRow {
    /// The paper model, as printed.
    pub model: String,
    /// `math` or `lexical`, as printed.
    pub domain: String,
    /// Raw fidelity, indexed fidelity and indexed gold EM, as counts of `plans`.
    pub counts: [u64; 3],
    /// Fresh plans of the model and domain (30).
    pub plans: u64,
}

/// Table 4's printed rows (exhibits/table4.tsv).
pub static PAPER: PaperTable<PaperRow> = PaperTable::new("table4");

/// One of our rows: raw fidelity, indexed fidelity, indexed gold EM.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// Raw fidelity and indexed fidelity to the model's own fresh Native choice, and the
    /// indexed outputs' gold EM, each of the arm's trajectories.
    pub counts: [Count; 3],
}

/// Our Table 4 rows from the Serial raw and indexed arms' trajectories, math first.
pub fn our_rows(trajectories: &[Trajectory]) -> Vec<OurRow> {
    rows_of(trajectories, RAW_ARM, INDEXED_ARM)
}

/// Rows of the raw and indexed arms `raw_arm`, `indexed_arm` (one control).
fn rows_of(trajectories: &[Trajectory], raw_arm: &str, indexed_arm: &str) -> Vec<OurRow> {
    let mut rows: BTreeMap<(String, usize, String), OurRow> = BTreeMap::new();
    for t in trajectories {
        let raw = t.arm == raw_arm;
        if !raw && t.arm != indexed_arm {
            continue;
        }
        let domain = paper_domain(t.domain.as_str()).to_string();
        let rank = usize::from(domain != "math");
        let row = rows
            .entry((t.model.clone(), rank, domain.clone()))
            .or_insert_with(|| OurRow {
                model: t.model.clone(),
                domain,
                ..OurRow::default()
            });
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

fn header() -> Vec<String> {
    ["Model", "Domain", "Raw", "Indexed", "Gold EM"]
        .map(String::from)
        .to_vec()
}

/// Table 4's document: our counts, the paper's rows as printed, and ours minus the paper
/// model's (`against`, else every printed model) in percentage points.
pub fn layout(ours: &[OurRow], against: &str) -> anyhow::Result<Doc> {
    let paper_rows = PAPER.rows()?;
    let mut doc = Doc::new("Table 4: Serial plan-copying fidelity and indexed task correctness");
    doc.p(
        "Raw and Indexed measure fidelity to freshly selected model plans, including incorrect \
         selections; Gold EM measures indexed outputs against the task target.",
    );
    doc.h(2, "This run");
    doc.table(Table {
        text_columns: 2,
        header: header(),
        rows: ours
            .iter()
            .map(|r| {
                let mut cells = vec![r.model.clone(), r.domain.clone()];
                cells.extend(r.counts.iter().map(Count::cell));
                cells
            })
            .collect(),
        notes: vec![format!(
            "Raw: {RAW_ARM} fidelity; Indexed: {INDEXED_ARM} fidelity; Gold EM: the indexed arm's \
             gold EM."
        )],
    });
    doc.h(2, "The paper (Table 4)");
    doc.table(Table {
        text_columns: 2,
        header: header(),
        rows: paper_rows
            .iter()
            .map(|p| {
                let mut cells = vec![p.model.to_string(), p.domain.to_string()];
                cells.extend(p.counts.map(|k| format!("{k}/{}", p.plans)));
                cells
            })
            .collect(),
        notes: vec!["Each model–domain pair contains 30 plans.".into()],
    });
    let (models, mut diff) = differences(
        &mut doc,
        paper_rows.iter().map(|p| p.model.as_str()),
        against,
        3,
        &[
            "Model",
            "Domain",
            "Paper row",
            "Δ Raw",
            "Δ Indexed",
            "Δ Gold EM",
        ],
    );
    for r in ours {
        for p in paper_rows
            .iter()
            .filter(|p| models.contains(&p.model.as_str()) && p.domain == r.domain)
        {
            let mut cells = vec![
                r.model.clone(),
                r.domain.clone(),
                format!("{} {}", p.model, p.domain),
            ];
            for i in 0..3 {
                cells.push(pp_diff(
                    r.counts[i].rate(),
                    100.0 * p.counts[i] as f64 / p.plans as f64,
                ));
            }
            diff.rows.push(cells);
        }
    }
    diff.notes
        .push("Percentage points (ours over our plans, the paper's over 30).".into());
    doc.table(diff);
    Ok(doc)
}

/// Table 4 from the `fresh-plan` panel's trajectories.
pub fn document(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, "fresh-plan")?.load()?;
    layout(&our_rows(&run.trajectories), against)
}

/// Figure 4's controls, in its order, with the arm-label suffix of each.
pub const CONTROLS: [(&str, &str); 2] = [("Independent", "independent"), ("Serial", "serial")];

/// Figure 4 as printed: model, domain, control, raw and indexed fidelity of 30. Its Serial bars
/// are Table 4's Raw and Indexed columns.
pub static PAPER_FIGURE4: PaperTable<(String, String, String, [u64; 2], u64)> =
    PaperTable::new("figure4");

/// Our Figure 4 rows: (control, row) per model and domain, Independent first.
pub fn figure4_rows(trajectories: &[Trajectory]) -> Vec<(&'static str, OurRow)> {
    let mut out = Vec::new();
    for (control, suffix) in CONTROLS {
        let raw = format!("SelfPlanSpell/Full/code/raw/{suffix}");
        let indexed = format!("SelfPlanSpell/Full/code/indexed/{suffix}");
        out.extend(
            rows_of(trajectories, &raw, &indexed)
                .into_iter()
                .map(|r| (control, r)),
        );
    }
    out.sort_by(|a, b| {
        (&a.1.model, a.1.domain != "math", &a.1.domain, a.0).cmp(&(
            &b.1.model,
            b.1.domain != "math",
            &b.1.domain,
            b.0,
        ))
    });
    out
}

/// Figure 4's numbers: raw → indexed fidelity per model, domain and control (Independent,
/// Serial) with the indexed gold EM, the paper's printed bars, and ours minus them.
pub fn figure4_layout(ours: &[(&str, OurRow)], against: &str) -> anyhow::Result<Doc> {
    let paper_rows = PAPER_FIGURE4.rows()?;
    let mut doc =
        Doc::new("Figure 4: Plan fidelity under Independent and Serial control (numbers)");
    doc.p(
        "Indexing improves fidelity to selected plans without guaranteeing task correctness. \
         Each panel uses 30 fresh plans per domain/model: raw → indexed fidelity per control, \
         and the indexed outputs' gold EM.",
    );
    let header: Vec<String> = [
        "Model",
        "Domain",
        "Control",
        "Raw",
        "Indexed",
        "Indexed gold EM",
    ]
    .map(String::from)
    .to_vec();
    doc.h(2, "This run");
    doc.table(Table {
        text_columns: 3,
        header: header.clone(),
        rows: ours
            .iter()
            .map(|(control, r)| {
                let mut cells = vec![r.model.clone(), r.domain.clone(), control.to_string()];
                cells.extend(r.counts.iter().map(Count::cell));
                cells
            })
            .collect(),
        notes: vec![
            "SelfPlanSpell/Full/code/{raw,indexed}/{independent,serial}: fidelity to the \
             model's own fresh Native choice; gold EM of the indexed arm."
                .into(),
        ],
    });
    doc.h(2, "The paper (Figure 4)");
    doc.table(Table {
        text_columns: 3,
        header,
        rows: paper_rows
            .iter()
            .map(|(model, domain, control, [raw, indexed], plans)| {
                vec![
                    model.to_string(),
                    domain.to_string(),
                    control.to_string(),
                    format!("{raw}/{plans}"),
                    format!("{indexed}/{plans}"),
                    "marker, not printed".to_string(),
                ]
            })
            .collect(),
        notes: vec!["The Serial rows' gold EM is Table 4's.".into()],
    });
    let (models, mut diff) = differences(
        &mut doc,
        paper_rows.iter().map(|p| p.0.as_str()),
        against,
        4,
        &[
            "Model",
            "Domain",
            "Control",
            "Paper row",
            "Δ Raw",
            "Δ Indexed",
        ],
    );
    for (control, r) in ours {
        for (model, _, _, counts, plans) in paper_rows
            .iter()
            .filter(|p| models.contains(&p.0.as_str()) && p.1 == r.domain && p.2 == *control)
        {
            let mut cells = vec![
                r.model.clone(),
                r.domain.clone(),
                control.to_string(),
                format!("{model} {} {control}", r.domain),
            ];
            for (ours, paper) in r.counts.iter().zip(counts) {
                cells.push(pp_diff(ours.rate(), 100.0 * *paper as f64 / *plans as f64));
            }
            diff.rows.push(cells);
        }
    }
    diff.notes
        .push("Percentage points (ours over our plans, the paper's over 30).".into());
    doc.table(diff);
    Ok(doc)
}

/// Figure 4's numbers from the `fresh-plan` panel's trajectories.
pub fn figure4(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, "fresh-plan")?.load()?;
    figure4_layout(&figure4_rows(&run.trajectories), against)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Figure 4's Serial bars are Table 4's Raw and Indexed columns.
    #[test]
    fn figure4s_serial_bars_are_table4s() {
        for p in PAPER.rows().unwrap() {
            let bar = PAPER_FIGURE4
                .rows()
                .unwrap()
                .iter()
                .find(|f| f.0 == p.model && f.1 == p.domain && f.2 == "Serial")
                .expect("a Serial bar per Table 4 row");
            assert_eq!(bar.3, [p.counts[0], p.counts[1]]);
        }
    }

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
        let md = figure4_layout(&rows, "Jev").unwrap().markdown();
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
        let md = layout(&ours, "Qwen3.5-27B").unwrap().markdown();
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
