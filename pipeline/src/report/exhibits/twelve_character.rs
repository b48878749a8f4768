//! Table D8: "Correctness depends on branch location and queried depth despite a fixed
//! eight-candidate set. Each cell contains 32 sources; counts are complete-output correct and
//! joint/Native correct. Query counts exclude deterministic fills. Exact 95% upper SCR limits
//! for zero cells are 13.2% (0/26), 16.1% (0/21) and 20.6% (0/16)."
//!
//! Rows as printed: Branch (Early, Late) × Choices / queries (10 or 26 letters, 2 or 6
//! queries); per model a correct count and an SCR count. Ours are the eight
//! `[[stats.cells]]` of `config/panels/twelve-character.toml` (named `early 10 / 2` …), one
//! column pair per model of the run.

use std::collections::BTreeMap;

use c2s_stats::CellRow;

use super::paper::PaperTable;
use super::{compared_models, distinct, pp_diff, run_of, PanelRun};
use crate::report::doc::{Doc, Table};

/// A row of Table D8 as printed: branch, choices / queries, and per paper model (correct,
/// SCR count) as (k, n) pairs.
pub type PaperRow = (String, String, [((u64, u64), (u64, u64)); 2]);

/// The paper's two models, in its column order (the table prints the second as "Qwen").
pub const PAPER_MODELS: [&str; 2] = ["Jev", "Qwen3.5-27B"];

/// Table D8's eight printed rows (exhibits/tableD8.tsv), Early then Late.
pub static PAPER: PaperTable<PaperRow> = PaperTable::new("tableD8");

/// The cell name of a printed row (`early 10 / 2`).
fn cell_name(branch: &str, choices: &str) -> String {
    format!("{} {choices}", branch.to_lowercase())
}

fn count((k, n): (u64, u64)) -> String {
    format!("{k}/{n}")
}

/// Our cells by (model, cell name).
pub fn our_cells(cells: &[CellRow]) -> BTreeMap<(String, String), CellRow> {
    cells
        .iter()
        .map(|c| ((c.model.clone(), c.cell.clone()), c.clone()))
        .collect()
}

fn scr_count(c: &CellRow) -> String {
    match (c.both, c.native_correct) {
        (Some(b), Some(n)) => match c.scr_upper_zero {
            Some(u) => format!("{b}/{n} (≤{:.1}%)", 100.0 * u),
            None => format!("{b}/{n}"),
        },
        _ => "–".into(),
    }
}

/// Table D8's document: our correct and SCR counts per printed row and model, the paper's
/// as printed, and our correct rate minus the paper model's (`against`, else both).
pub fn layout(cells: &BTreeMap<(String, String), CellRow>, against: &str) -> anyhow::Result<Doc> {
    let printed = PAPER.rows()?;
    let models = distinct(cells.keys().map(|(m, _)| m.as_str()));
    let mut doc = Doc::new(
        "Table D8: Correctness depends on branch location and queried depth despite a fixed \
         eight-candidate set",
    );
    doc.p(
        "Counts are complete-output correct and joint/Native correct. Query counts exclude \
         deterministic fills.",
    );
    doc.h(2, "This run");
    let mut header = vec!["Branch".to_string(), "Choices / queries".to_string()];
    for m in &models {
        header.push(format!("{m} correct"));
        header.push(format!("{m} SCR count"));
    }
    doc.table(Table {
        text_columns: 2,
        header,
        rows: printed
            .iter()
            .map(|(branch, choices, _)| {
                let mut row = vec![branch.to_string(), choices.to_string()];
                for m in &models {
                    match cells.get(&(m.to_string(), cell_name(branch, choices))) {
                        Some(c) => {
                            row.push(count((c.correct, c.n)));
                            row.push(scr_count(c));
                        }
                        None => row.extend(["–".to_string(), "–".to_string()]),
                    }
                }
                row
            })
            .collect(),
        notes: vec![
            "(≤x%): the exact 95% upper SCR limit of a zero cell, as the paper gives them.".into(),
        ],
    });
    doc.h(2, "The paper (Table D8)");
    doc.table(Table {
        text_columns: 2,
        header: [
            "Branch",
            "Choices / queries",
            "Jev correct",
            "Jev SCR count",
            "Qwen correct",
            "Qwen SCR count",
        ]
        .map(String::from)
        .to_vec(),
        rows: printed
            .iter()
            .map(|(branch, choices, m)| {
                vec![
                    branch.to_string(),
                    choices.to_string(),
                    count(m[0].0),
                    count(m[0].1),
                    count(m[1].0),
                    count(m[1].1),
                ]
            })
            .collect(),
        notes: vec![
            "Each cell contains 32 sources. Exact 95% upper SCR limits for zero cells are 13.2% \
             (0/26), 16.1% (0/21) and 20.6% (0/16)."
                .into(),
        ],
    });
    let compared = compared_models(&PAPER_MODELS, against);
    doc.h(
        2,
        format!("This run minus the paper ({})", compared.join(", ")),
    );
    let mut header = vec!["Branch".to_string(), "Choices / queries".to_string()];
    for m in &models {
        for p in &compared {
            header.push(format!("{m} − {p}, correct"));
        }
    }
    doc.table(Table {
        text_columns: 2,
        header,
        rows: printed
            .iter()
            .map(|(branch, choices, paper)| {
                let mut row = vec![branch.to_string(), choices.to_string()];
                for m in &models {
                    let ours = cells
                        .get(&(m.to_string(), cell_name(branch, choices)))
                        .filter(|c| c.n > 0)
                        .map(|c| c.correct as f64 / c.n as f64);
                    for p in &compared {
                        let i = PAPER_MODELS.iter().position(|x| x == p).unwrap_or(0);
                        let (k, n) = paper[i].0;
                        row.push(pp_diff(ours, 100.0 * k as f64 / n as f64));
                    }
                }
                row
            })
            .collect(),
        notes: vec!["Complete-output correct, percentage points.".into()],
    });
    Ok(doc)
}

/// Table D8 from the `twelve-character` panel's declared cells.
pub fn document(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let (_, cells) = run_of(runs, "twelve-character")?
        .load()?
        .contrast_tables()?;
    layout(&our_cells(&cells), against)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_rows_are_its_cells() {
        // 32 sources per cell; SCR counts never exceed the correct counts.
        for (b, c, m) in PAPER.rows().unwrap() {
            for ((k, n), (both, native)) in m {
                assert_eq!(*n, 32, "{b} {c}");
                assert!(both <= k && both <= native, "{b} {c}");
            }
        }
        assert_eq!(cell_name("Early", "10 / 2"), "early 10 / 2");
    }

    #[test]
    fn the_layout_has_the_papers_rows_and_our_models_columns() {
        let cell = |name: &str, correct, both, native, upper| CellRow {
            model: "m".into(),
            cell: name.into(),
            arm: "Serial/FullFill/code".into(),
            n: 32,
            correct,
            native_correct: Some(native),
            both: Some(both),
            scr: None,
            scr_upper_zero: upper,
        };
        let cells = our_cells(&[
            cell("early 10 / 2", 8, 8, 30, None),
            cell("late 26 / 6", 0, 0, 26, Some(0.1323)),
        ]);
        let md = layout(&cells, "Qwen3.5-27B").unwrap().markdown();
        for want in [
            "| Branch | Choices / queries | m correct | m SCR count |",
            "| Early | 10 / 2 | 8/32 | 8/30 |",
            "| Late | 26 / 6 | 0/32 | 0/26 (≤13.2%) |",
            "| Early | 10 / 2 | 15/32 | 15/31 | 4/32 | 3/21 |",
            "| Branch | Choices / queries | m − Qwen3.5-27B, correct |",
            "| Early | 10 / 2 | +12.5 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
