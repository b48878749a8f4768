//! Table 4: "Serial plan-copying fidelity and indexed task correctness. Raw and Indexed measure
//! fidelity to freshly selected model plans, including incorrect selections; Gold EM measures
//! indexed outputs against the task target. Each model–domain pair contains 30 plans."
//!
//! Columns as printed: Model, Domain, Raw, Indexed, Gold EM (counts of 30). Ours come from
//! `config/panels/fresh-plan.toml`: SelfPlanSpell under Serial control with raw and with
//! indexed evidence, each copying the model's own fresh Native choice.

use std::collections::BTreeMap;

use c2s_records::Trajectory;

use super::{differences, paper_domain, pp_diff, run_of, PanelRun};
use crate::report::doc::{Doc, Table};

/// The Serial copy arms of the panel: raw and indexed evidence.
pub const RAW_ARM: &str = "SelfPlanSpell/Full/code/raw/serial";
pub const INDEXED_ARM: &str = "SelfPlanSpell/Full/code/indexed/serial";

/// One row of Table 4 as printed: raw fidelity, indexed fidelity, indexed gold EM, of
/// `PAPER_PLANS`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaperRow {
    pub model: &'static str,
    pub domain: &'static str,
    pub counts: [u64; 3],
}

pub const PAPER_PLANS: u64 = 30;

pub const PAPER: [PaperRow; 4] = [
    PaperRow {
        model: "Jev",
        domain: "math",
        counts: [17, 30, 28],
    },
    PaperRow {
        model: "Jev",
        domain: "lexical",
        counts: [4, 29, 29],
    },
    PaperRow {
        model: "StartLux",
        domain: "math",
        counts: [8, 25, 16],
    },
    PaperRow {
        model: "StartLux",
        domain: "lexical",
        counts: [1, 29, 28],
    },
];

/// k of n.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    pub k: u64,
    pub n: u64,
}

impl Count {
    fn add(&mut self, hit: bool) {
        self.k += u64::from(hit);
        self.n += 1;
    }
    fn rate(&self) -> Option<f64> {
        (self.n > 0).then(|| self.k as f64 / self.n as f64)
    }
    fn cell(&self) -> String {
        format!("{}/{}", self.k, self.n)
    }
}

/// One of our rows: raw fidelity, indexed fidelity, indexed gold EM.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OurRow {
    pub model: String,
    pub domain: String,
    pub counts: [Count; 3],
}

pub fn our_rows(trajectories: &[Trajectory]) -> Vec<OurRow> {
    let mut rows: BTreeMap<(String, usize, String), OurRow> = BTreeMap::new();
    for t in trajectories {
        let raw = t.arm == RAW_ARM;
        if !raw && t.arm != INDEXED_ARM {
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

pub fn layout(ours: &[OurRow], against: &str) -> Doc {
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
        rows: PAPER
            .iter()
            .map(|p| {
                let mut cells = vec![p.model.to_string(), p.domain.to_string()];
                cells.extend(p.counts.map(|k| format!("{k}/{PAPER_PLANS}")));
                cells
            })
            .collect(),
        notes: vec!["Each model–domain pair contains 30 plans.".into()],
    });
    let (models, mut diff) = differences(
        &mut doc,
        PAPER.iter().map(|p| p.model),
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
        for p in PAPER
            .iter()
            .filter(|p| models.contains(&p.model) && p.domain == r.domain)
        {
            let mut cells = vec![
                r.model.clone(),
                r.domain.clone(),
                format!("{} {}", p.model, p.domain),
            ];
            for i in 0..3 {
                cells.push(pp_diff(
                    r.counts[i].rate(),
                    100.0 * p.counts[i] as f64 / PAPER_PLANS as f64,
                ));
            }
            diff.rows.push(cells);
        }
    }
    diff.notes
        .push("Percentage points (ours over our plans, the paper's over 30).".into());
    doc.table(diff);
    doc
}

pub fn document(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, "fresh-plan")?.load()?;
    Ok(layout(&our_rows(&run.trajectories), against))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let c = |k, n| Count { k, n };
        let ours = vec![OurRow {
            model: "m".into(),
            domain: "math".into(),
            counts: [c(3, 30), c(27, 30), c(12, 30)],
        }];
        let md = layout(&ours, "Qwen3.5-27B").markdown();
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
