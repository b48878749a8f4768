//! Table 3: "One-response solving largely preserves accuracy; repeated position queries do not.
//! Qwen3.5-27B uses the same 96 items per domain, with no supplied answer. Correct counts are
//! content EM; valid trajectories are arithmetic/lexical percentages; calls are per item."
//!
//! Columns as printed: Interface, Arithmetic, Lexical, Valid, Calls. Rows: Native,
//! WholeGenerate, Position query (Serial), PrefixContinue, from `config/panels/table3.toml`
//! (E.3, D.8). Our rows are counted from the run's trajectories, one block per model; then
//! the paper's rows and ours minus the paper's.

use std::collections::BTreeMap;

use c2s_records::{Domain, Trajectory};
use serde::{Deserialize, Serialize};

use super::paper::PaperTable;
use super::{distinct, pp_diff, run_of, signed2, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::UNDEFINED;

/// Table 3's interfaces, in its order, with the arm each is run as.
pub const INTERFACES: [(&str, &str); 4] = [
    ("Native", "Native"),
    ("WholeGenerate", "WholeGenerate"),
    ("Position query", "Serial"),
    ("PrefixContinue", "PrefixContinue"),
];

/// One row of Table 3 as printed (Qwen3.5-27B; 96 items per domain).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct PaperRow {
    /// The interface as printed (one of [`INTERFACES`]' names).
    pub interface: String,
    /// Correct of 96: arithmetic, lexical.
    pub correct: (u64, u64),
    /// Valid trajectories, percent: arithmetic, lexical.
    pub valid: (f64, f64),
    /// Model calls per item, over both domains.
    pub calls: f64,
    /// Items per domain (the denominator of `correct`).
    pub items: u64,
}

/// Table 3's four printed rows (exhibits/table3.tsv).
pub static PAPER: PaperTable<PaperRow> = PaperTable::new("table3");

/// Counts of one (interface, domain) cell.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counts {
    /// Trajectories (items) of the interface in the domain.
    pub items: u64,
    /// Trajectories whose content is correct (EM).
    pub correct: u64,
    /// Trajectories with a valid output.
    pub valid: u64,
    /// Model calls summed over the trajectories.
    pub calls: u64,
}

impl Counts {
    fn correct_rate(&self) -> Option<f64> {
        (self.items > 0).then(|| self.correct as f64 / self.items as f64)
    }
    fn valid_rate(&self) -> Option<f64> {
        (self.items > 0).then(|| self.valid as f64 / self.items as f64)
    }
}

/// One of our rows: a model's interface with its arithmetic and lexical counts.
#[derive(Debug, Clone, PartialEq)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The interface as Table 3 prints it (one of [`INTERFACES`]' names).
    pub interface: &'static str,
    /// The arithmetic items' counts.
    pub arithmetic: Counts,
    /// The lexical items' counts.
    pub lexical: Counts,
}

impl OurRow {
    /// Calls per item over both domains.
    fn calls(&self) -> Option<f64> {
        let items = self.arithmetic.items + self.lexical.items;
        (items > 0).then(|| (self.arithmetic.calls + self.lexical.calls) as f64 / items as f64)
    }
}

/// The interface of an arm label (`Serial/Full/char` → Position query); `None` for an arm
/// Table 3 has no row for.
fn interface_of(arm: &str) -> Option<&'static str> {
    let kind = arm.split('/').next().unwrap_or(arm);
    INTERFACES
        .iter()
        .find(|(_, a)| *a == kind)
        .map(|(name, _)| *name)
}

/// Our rows from the panel's trajectories, per model in Table 3's interface order.
pub fn our_rows(trajectories: &[Trajectory]) -> Vec<OurRow> {
    let mut cells: BTreeMap<(String, usize), OurRow> = BTreeMap::new();
    for t in trajectories {
        let Some(interface) = interface_of(&t.arm) else {
            continue;
        };
        let order = INTERFACES
            .iter()
            .position(|(name, _)| *name == interface)
            .unwrap_or(INTERFACES.len());
        let row = cells
            .entry((t.model.clone(), order))
            .or_insert_with(|| OurRow {
                model: t.model.clone(),
                interface,
                arithmetic: Counts::default(),
                lexical: Counts::default(),
            });
        let counts = match t.domain {
            Domain::Arithmetic => &mut row.arithmetic,
            Domain::Lexical => &mut row.lexical,
            _ => continue,
        };
        counts.items += 1;
        counts.correct += u64::from(t.correct);
        counts.valid += u64::from(t.valid);
        counts.calls += u64::from(t.calls);
    }
    cells.into_values().collect()
}

fn fraction(c: &Counts) -> String {
    format!("{}/{}", c.correct, c.items)
}

/// A percentage as Table 3 prints it: whole numbers bare (100), else one decimal (9.4).
fn percent(v: Option<f64>) -> String {
    let Some(v) = v else {
        return UNDEFINED.to_string();
    };
    let x = (1000.0 * v).round() / 10.0;
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

fn header() -> Vec<String> {
    ["Interface", "Arithmetic", "Lexical", "Valid", "Calls"]
        .map(String::from)
        .to_vec()
}

/// Table 3's document: ours, the paper's, and the differences.
pub fn layout(ours: &[OurRow]) -> anyhow::Result<Doc> {
    let printed = PAPER.rows()?;
    let mut doc = Doc::new("Table 3: One-response solving and repeated position queries");
    doc.p(
        "Correct counts are content EM; valid trajectories are arithmetic/lexical percentages; \
         calls are per item.",
    );
    let models = distinct(ours.iter().map(|r| r.model.as_str()));
    for model in models {
        doc.h(2, format!("This run: {model}"));
        doc.table(Table {
            text_columns: 1,
            header: header(),
            rows: ours
                .iter()
                .filter(|r| r.model == model)
                .map(|r| {
                    vec![
                        r.interface.to_string(),
                        fraction(&r.arithmetic),
                        fraction(&r.lexical),
                        format!(
                            "{}/{}",
                            percent(r.arithmetic.valid_rate()),
                            percent(r.lexical.valid_rate())
                        ),
                        r.calls()
                            .map_or(UNDEFINED.to_string(), |c| format!("{c:.2}")),
                    ]
                })
                .collect(),
            notes: vec![
                "Correct: the arm's strict string EM. Position query: Serial/Full with one \
                 character per request."
                    .into(),
            ],
        });
    }
    doc.h(2, "The paper (Table 3, Qwen3.5-27B)");
    doc.table(Table {
        text_columns: 1,
        header: header(),
        rows: printed
            .iter()
            .map(|p| {
                vec![
                    p.interface.to_string(),
                    format!("{}/{}", p.correct.0, p.items),
                    format!("{}/{}", p.correct.1, p.items),
                    format!(
                        "{}/{}",
                        percent(Some(p.valid.0 / 100.0)),
                        percent(Some(p.valid.1 / 100.0))
                    ),
                    format!("{:.2}", p.calls),
                ]
            })
            .collect(),
        notes: vec!["96 items per domain, no supplied answer.".into()],
    });
    doc.h(2, "This run minus Qwen3.5-27B");
    let mut diff = Table {
        text_columns: 2,
        header: [
            "Model",
            "Interface",
            "Δ Arithmetic correct",
            "Δ Lexical correct",
            "Δ Valid arithmetic",
            "Δ Valid lexical",
            "Δ Calls",
        ]
        .map(String::from)
        .to_vec(),
        ..Table::default()
    };
    for r in ours {
        let Some(p) = printed.iter().find(|p| p.interface == r.interface) else {
            continue;
        };
        let per = |c: u64| 100.0 * c as f64 / p.items as f64;
        diff.rows.push(vec![
            r.model.clone(),
            r.interface.to_string(),
            pp_diff(r.arithmetic.correct_rate(), per(p.correct.0)),
            pp_diff(r.lexical.correct_rate(), per(p.correct.1)),
            pp_diff(r.arithmetic.valid_rate(), p.valid.0),
            pp_diff(r.lexical.valid_rate(), p.valid.1),
            r.calls()
                .map_or(UNDEFINED.to_string(), |c| signed2(c - p.calls)),
        ]);
    }
    diff.notes.push(
        "Correct and valid rates in percentage points (ours over our items, the paper's over \
         96); calls per item as a difference."
            .into(),
    );
    doc.table(diff);
    Ok(doc)
}

/// Table 3 from the `table3` panel's trajectories (the paper prints one model, so `_against`
/// is unused).
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, "table3")?.load()?;
    layout(&our_rows(&run.trajectories))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(items: u64, correct: u64, valid: u64, calls: u64) -> Counts {
        Counts {
            items,
            correct,
            valid,
            calls,
        }
    }

    #[test]
    fn the_papers_rows_have_its_calls() {
        // Lengths 3–8 in equal numbers: a position query asks 5.5 times per item.
        let mean_length = (3..=8).sum::<u64>() as f64 / 6.0;
        assert_eq!(mean_length, 5.5);
        let printed = PAPER.rows().unwrap();
        assert_eq!(printed[2].calls, mean_length);
        let interfaces: Vec<&str> = printed.iter().map(|p| p.interface.as_str()).collect();
        assert_eq!(INTERFACES.map(|(name, _)| name), interfaces.as_slice());
    }

    #[test]
    fn the_layout_has_the_papers_columns_rows_and_differences() {
        let ours = vec![
            OurRow {
                model: "m".into(),
                interface: "Native",
                arithmetic: counts(8, 6, 8, 8),
                lexical: counts(8, 2, 8, 8),
            },
            OurRow {
                model: "m".into(),
                interface: "PrefixContinue",
                arithmetic: counts(8, 4, 8, 44),
                lexical: counts(8, 0, 1, 44),
            },
        ];
        let md = layout(&ours).unwrap().markdown();
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
    }

    #[test]
    fn arms_map_to_the_tables_interfaces() {
        assert_eq!(interface_of("Serial/Full/char"), Some("Position query"));
        assert_eq!(
            interface_of("WholeGenerate/string/max32"),
            Some("WholeGenerate")
        );
        assert_eq!(interface_of("Independent/Full/char"), None);
    }
}
