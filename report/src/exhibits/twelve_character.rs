//! Table D8 from the eight `[[stats.cells]]` of `config/panels/twelve-character.toml`
//! (`early 10 / 2` …: branch × choices / queries): per model the complete-output correct count
//! and the SCR count (joint / Native correct, a zero cell with its exact upper limit). Its
//! tables have one column pair per model of the run, which a spec's fixed columns cannot give,
//! so they are built here as blocks.

use std::collections::BTreeMap;

use c2s_stats::CellRow;

use super::engine::Frame;
use super::paper::PaperTable;
use super::{compared_models, distinct, pp_diff, run_of, PanelRun};
use crate::doc::{Block, Table};

/// A row of Table D8 as printed: branch, choices / queries, and per paper model (correct,
/// SCR count) as (k, n) pairs.
pub type PaperRow = (String, String, [((u64, u64), (u64, u64)); 2]);

/// The paper's two models, in its column order (the table prints the second as "Qwen").
pub const PAPER_MODELS: [&str; 2] = ["Jev", "Qwen3.5-27B"];

/// Table D8's eight printed rows (exhibits/tableD8.tsv), Early then Late.
pub static PAPER: PaperTable<PaperRow> = PaperTable::new("tableD8");

/// The panel's cell name of a printed row's branch and choices / queries (`early 10 / 2`).
pub(super) fn cell_name(branch: &str, choices: &str) -> String {
    format!("{} {choices}", branch.to_lowercase())
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

/// A table by the printed rows (branch, choices / queries) with `cells` for each row: one
/// column per header after the first two, as many as the run has models.
fn by_printed_row(
    printed: &[PaperRow],
    header: Vec<String>,
    notes: &str,
    cells: impl Fn(&PaperRow) -> Vec<String>,
) -> Block {
    Block::Table(Table {
        text_columns: 2,
        header: ["Branch", "Choices / queries"]
            .map(String::from)
            .into_iter()
            .chain(header)
            .collect(),
        rows: (printed.iter())
            .map(|p| [vec![p.0.clone(), p.1.clone()], cells(p)].concat())
            .collect(),
        notes: vec![notes.to_string()],
    })
}

/// Table D8's blocks: our counts per printed row (`ours`) and our correct rate minus the
/// compared paper models' (`differences`; var `paper_models` names them).
pub fn frame(cells: &BTreeMap<(String, String), CellRow>, against: &str) -> anyhow::Result<Frame> {
    let printed = PAPER.rows()?;
    let models = distinct(cells.keys().map(|(m, _)| m.as_str()));
    let compared = compared_models(&PAPER_MODELS, against);
    let cell = |m: &str, (branch, choices, _): &PaperRow| {
        cells.get(&(m.to_string(), cell_name(branch, choices)))
    };
    let ours = by_printed_row(
        printed,
        (models.iter())
            .flat_map(|m| [format!("{m} correct"), format!("{m} SCR count")])
            .collect(),
        "(≤x%): the exact 95% upper SCR limit of a zero cell, as the paper gives them.",
        |p| {
            (models.iter())
                .flat_map(|m| match cell(m, p) {
                    Some(c) => [format!("{}/{}", c.correct, c.n), scr_count(c)],
                    None => ["–".to_string(), "–".to_string()],
                })
                .collect()
        },
    );
    let differences = by_printed_row(
        printed,
        (models.iter())
            .flat_map(|m| compared.iter().map(move |p| format!("{m} − {p}, correct")))
            .collect(),
        "Complete-output correct, percentage points.",
        |paper| {
            let mut row = Vec::new();
            for m in &models {
                let ours = cell(m, paper)
                    .filter(|c| c.n > 0)
                    .map(|c| c.correct as f64 / c.n as f64);
                for p in &compared {
                    let i = PAPER_MODELS.iter().position(|x| x == p).unwrap_or(0);
                    let (k, n) = paper.2[i].0;
                    row.push(pp_diff(ours, 100.0 * k as f64 / n as f64));
                }
            }
            row
        },
    );
    Ok(Frame::new()
        .blocks("ours", vec![ours])
        .blocks("differences", vec![differences])
        .var("paper_models", compared))
}

/// Table D8 from the `twelve-character` panel's declared cells.
pub fn document(runs: &[PanelRun], against: &str) -> anyhow::Result<Frame> {
    let (_, cells) = run_of(runs, "twelve-character")?
        .load()?
        .contrast_tables()?;
    frame(&our_cells(&cells), against)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::laid_out;

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
        let md = laid_out(
            "tableD8",
            frame(&cells, "Qwen3.5-27B").unwrap(),
            "Qwen3.5-27B",
        );
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
