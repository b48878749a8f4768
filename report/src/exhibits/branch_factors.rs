//! Figure 13's numbers (D.7) on `config/panels/twelve-character.toml`. Panels (a, b): per
//! model, the correct count of each of the eight `[[stats.cells]]` (branch location Early or
//! Late × 10 or 26 choices × 2 or 6 queries; the paper's are Table D8's). Panel (c): the
//! panel's three unit contrasts (family "D.7 factors": `26 - 10 choices`, `6 - 2 queries`,
//! `late - early`), averaged within source, with a stratified source-bootstrap interval and
//! the exact sign-flip p, Holm-corrected over the family. The paper's effects are derived from
//! its counts: every source gives each side the same trajectories, so an effect is the side
//! totals' difference over 4 × 32 trajectories.

use std::collections::BTreeMap;

use c2s_stats::{CellRow, ContrastRow};
use serde::Serialize;

use super::engine::Frame;
use super::twelve_character::{cell_name, our_cells, PaperRow, PAPER, PAPER_MODELS};
use super::{distinct, run_of, PanelRun};

/// The figure's cell columns, in its order: (label, choices / queries of Table D8).
pub const COLUMNS: [(&str, &str); 4] = [
    ("10 choices, 2 queries", "10 / 2"),
    ("26 choices, 2 queries", "26 / 2"),
    ("10 choices, 6 queries", "10 / 6"),
    ("26 choices, 6 queries", "26 / 6"),
];

/// The figure's rows: candidate branch location.
pub const BRANCHES: [&str; 2] = ["Early", "Late"];

/// Panel (c)'s effects, in its order: (label, the panel's contrast name).
pub const EFFECTS: [(&str, &str); 3] = [
    ("26 − 10 choices", "26 - 10 choices"),
    ("6 − 2 queries", "6 - 2 queries"),
    ("Late − early", "late - early"),
];

/// One of panel (c)'s effects as derived from the paper's printed counts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PaperEffect {
    /// The paper model (one of Table D8's two).
    pub model: &'static str,
    /// The effect as [`EFFECTS`] labels it.
    pub effect: &'static str,
    /// Compared minus reference EM, in percentage points.
    pub difference: f64,
}

/// +1 where a Table D8 cell (branch, choices / queries) is on an effect's compared side, else −1.
fn side(effect: usize, branch: &str, cell: &str) -> f64 {
    let (choices, queries) = cell.split_once(" / ").unwrap_or((cell, ""));
    let compared = [choices == "26", queries == "6", branch == "Late"][effect];
    if compared {
        1.0
    } else {
        -1.0
    }
}

/// Panel (c) from the printed counts: each side holds four of the eight cells, so the effect is
/// the mean over a side's cells of correct / sources, compared minus reference.
pub fn paper_effects() -> anyhow::Result<Vec<PaperEffect>> {
    let printed = PAPER.rows()?;
    let mut out = Vec::new();
    for (i, (effect, _)) in EFFECTS.iter().enumerate() {
        for (m, model) in PAPER_MODELS.iter().enumerate() {
            let sum: f64 = (printed.iter())
                .map(|(branch, cell, counts)| {
                    let (correct, sources) = counts[m].0;
                    side(i, branch, cell) * correct as f64 / sources as f64
                })
                .sum();
            let difference = 100.0 * sum / 4.0;
            out.push(PaperEffect {
                model,
                effect,
                difference,
            });
        }
    }
    Ok(out)
}

/// The correct count of a printed cell (paper model index `m`).
fn paper_count(printed: &[PaperRow], m: usize, branch: &str, cell: &str) -> Option<(u64, u64)> {
    printed
        .iter()
        .find(|(b, c, _)| *b == branch && *c == cell)
        .map(|(_, _, counts)| counts[m].0)
}

/// A row of panels (a, b): one model's correct strings on one branch, per [`COLUMNS`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridRow {
    /// The model (ours: the records' label; the paper's: as printed).
    pub model: String,
    /// The candidate branch location ([`BRANCHES`]).
    pub branch: &'static str,
    /// Correct strings of the sources per column, `None` where there is no cell.
    pub counts: [Option<(u64, u64)>; 4],
}

/// A model's two rows of panels (a, b); `count` gives a branch and column's correct strings.
fn grid(model: &str, count: impl Fn(&str, &str) -> Option<(u64, u64)>) -> [GridRow; 2] {
    BRANCHES.map(|branch| GridRow {
        model: model.to_string(),
        branch,
        counts: COLUMNS.map(|(_, cell)| count(branch, cell)),
    })
}

/// One of our panel (c) effects: a model's unit contrast.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffectRow {
    /// The effect as [`EFFECTS`] labels it.
    pub effect: &'static str,
    /// The records' model label.
    pub model: String,
    /// Compared minus reference EM (a fraction) with its interval; `None` without a contrast.
    pub difference: Option<(f64, Option<f64>, Option<f64>)>,
    /// The exact sign-flip p.
    pub sign_p: Option<f64>,
    /// The sign-flip p, Holm-corrected over the family D.7 factors.
    pub holm_p: Option<f64>,
}

/// Figure 13's rows: our counts (of the panel's cells by model and cell name, as
/// [`our_cells`] gives them) and factor effects, the paper's counts and derived effects.
pub fn frame(
    cells: &BTreeMap<(String, String), CellRow>,
    contrasts: &[ContrastRow],
) -> anyhow::Result<Frame> {
    let paper_rows = PAPER.rows()?;
    let models = distinct(
        cells
            .keys()
            .map(|(m, _)| m.as_str())
            .chain(contrasts.iter().map(|c| c.model.as_str())),
    );
    let ours: Vec<GridRow> = (models.iter())
        .flat_map(|m| {
            grid(m, |b, c| {
                (cells.get(&(m.to_string(), cell_name(b, c)))).map(|c| (c.correct, c.n))
            })
        })
        .collect();
    let printed: Vec<GridRow> = (PAPER_MODELS.iter().enumerate())
        .flat_map(|(i, m)| grid(m, |b, c| paper_count(paper_rows, i, b, c)))
        .collect();
    // Each model's counts by branch, for the differences (by model, paper model, branch).
    let mut by_model: BTreeMap<&str, BTreeMap<&str, _>> = BTreeMap::new();
    for r in &ours {
        by_model
            .entry(&r.model)
            .or_default()
            .insert(r.branch, r.counts);
    }
    let effects: Vec<EffectRow> = (EFFECTS.iter())
        .flat_map(|(effect, name)| {
            models.iter().map(move |m| {
                let c = contrasts
                    .iter()
                    .find(|c| c.model == *m && c.contrast == *name);
                let e = c.map(|c| &c.estimate);
                EffectRow {
                    effect,
                    model: m.to_string(),
                    difference: e.and_then(|e| e.difference.map(|d| (d, e.ci_low, e.ci_high))),
                    sign_p: e.and_then(|e| e.sign_p),
                    holm_p: c.and_then(|c| c.sign_p_holm),
                }
            })
        })
        .collect();
    let family = (contrasts.iter()).filter(|c| c.family.as_deref() == Some("D.7 factors"));
    Ok(Frame::new()
        .rows("ours", &ours)
        .rows("models", &models)
        .rows("effects", &effects)
        .rows("paper_grid", &printed)
        .rows("paper_effects", &paper_effects()?)
        .var("grid", by_model)
        .var("family_tests", family.count()))
}

/// Read the twelve-character panel's run and compute the numbers.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let (contrasts, cells) = run_of(runs, "twelve-character")?
        .load()?
        .contrast_tables()?;
    frame(&our_cells(&cells), &contrasts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_stats::ContrastEstimate;

    use crate::exhibits::testing::laid_out;

    /// From Table D8's counts: Jev −3.1 / −18.8 / −21.9, Qwen −3.1 / −4.7 / −4.7 points —
    /// within the figure's −30 to 0 axis.
    #[test]
    fn the_papers_effects_follow_from_its_counts() {
        let effects = paper_effects().unwrap();
        let get = |model: &str, effect: usize| {
            (effects.iter())
                .find(|p| p.model == model && p.effect == EFFECTS[effect].0)
                .map(|p| p.difference)
        };
        assert_eq!(get("Jev", 0), Some(-3.125));
        assert_eq!(get("Jev", 1), Some(-18.75));
        assert_eq!(get("Jev", 2), Some(-21.875));
        assert_eq!(get("Qwen3.5-27B", 0), Some(-3.125));
        assert_eq!(get("Qwen3.5-27B", 1), Some(-4.6875));
        assert_eq!(get("Qwen3.5-27B", 2), Some(-4.6875));
        assert!(effects
            .iter()
            .all(|p| (-30.0..=0.0).contains(&p.difference)));
        assert_eq!(cell_name("Late", "26 / 6"), "late 26 / 6");
    }

    #[test]
    fn the_layout_has_the_figures_counts_effects_and_differences() {
        let cell = |name: &str, correct| CellRow {
            model: "m".into(),
            cell: name.into(),
            arm: "Serial/FullFill/code".into(),
            n: 32,
            correct,
            native_correct: None,
            both: None,
            scr: None,
            scr_upper_zero: None,
        };
        let cells = our_cells(&[cell("early 10 / 2", 8), cell("late 26 / 6", 3)]);
        let contrast = ContrastRow {
            model: "m".into(),
            contrast: "6 - 2 queries".into(),
            family: Some("D.7 factors".into()),
            estimate: ContrastEstimate {
                units: 32,
                incomplete_units: 0,
                compared_mean: Some(0.05),
                reference_mean: Some(0.3),
                difference: Some(-0.28125),
                ci_low: Some(-0.40625),
                ci_high: Some(-0.15625),
                sign_p: Some(0.0004),
            },
            sign_p_holm: Some(0.0012),
        };
        let md = laid_out("figure13", frame(&cells, &[contrast]).unwrap(), "Jev");
        for want in [
            "| Model | Branch | 10 choices, 2 queries | 26 choices, 2 queries | 10 choices, 6 queries | 26 choices, 6 queries |",
            "| m | Early | 8/32 | – | – | – |",
            "| m | Late | – | – | – | 3/32 |",
            "| 6 − 2 queries | m | −28.1 [−40.6, −15.6] | 4.00e-4 | 0.00120 * |",
            "| 26 − 10 choices | m | – | – | – |",
            "| Jev | Early | 15/32 | 11/32 | 1/32 | 1/32 |",
            "| Qwen3.5-27B | Late | 1/32 | 0/32 | 0/32 | 0/32 |",
            "| 6 − 2 queries | Jev | −18.8 | yes * |",
            "| 26 − 10 choices | Qwen3.5-27B | −3.1 | no |",
            "| m | Early | Jev | −21.9 | – | – | – |",
            "| m | Late | Jev | – | – | – | +9.4 |",
            "| 6 − 2 queries | m | Jev | −9.4 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
