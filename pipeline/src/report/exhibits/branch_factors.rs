//! Figure 13's numbers (D.7): "Query count and branch placement affect Jev more than alphabet
//! size in this symbolic panel. On 32 twelve-character reversal sources, (a,b) counts show
//! correct strings under crossed factors. (c) Paired effects have 95% source-bootstrap
//! intervals; Jev's query-count and branch-location contrasts survive six-test Holm
//! correction."
//!
//! Panels (a, b) print, per model (Jev, Qwen3.5-27B), the correct count of 32 sources in each
//! cell of candidate branch location (Early, Late) × 10 or 26 choices × 2 or 6 queries — the
//! correct counts of Table D8 ([`super::twelve_character::PAPER`]). Ours are the eight
//! `[[stats.cells]]` of `config/panels/twelve-character.toml` (`early 10 / 2` …: the four
//! Serial/FullFill arms, alphabet a–j or a–z × two or six queries, per placement).
//!
//! Panel (c) plots the three paired factor effects per model (EM difference, points) without
//! printing them. Ours are the panel's three unit contrasts (family "D.7 factors"): `26 - 10
//! choices` (the a–z arms against the a–j arms), `6 - 2 queries` (the arms that also query
//! positions 1, 4, 8, 12 against those that do not) and `late - early` (every arm's late
//! presentation against its early one), each averaged within source, with its stratified
//! source-bootstrap interval and its exact sign-flip p, Holm-corrected over the family (the
//! paper's six tests are three contrasts × two models; a one-model run holds three). The
//! paper's point effects are derived from its printed counts: every source contributes the
//! same trajectories to each side, so the mean source difference is the side totals'
//! difference over 4 × 32 trajectories. Its intervals are not printed; which effects survive
//! Holm is transcribed from the caption (Jev's query-count and branch-location effects).

use std::collections::BTreeMap;

use c2s_stats::{CellRow, ContrastRow};

use super::engine::sig3;
use super::paper::PaperTable;
use super::twelve_character::{PaperRow, PAPER, PAPER_MODELS};
use super::{differences, distinct, percent_interval, pp_diff, run_of, signed1, starred, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::UNDEFINED;

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

/// Whether the caption says an effect survives Holm: (paper model, effect as [`EFFECTS`]
/// labels it, survives).
pub static PAPER_SURVIVING: PaperTable<(String, String, bool)> = PaperTable::new("figure13");

/// One of panel (c)'s effects as the paper gives it: derived point (points) and whether the
/// caption says it survives Holm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaperEffect {
    /// The paper model (one of Table D8's two).
    pub model: &'static str,
    /// Index of the effect in [`EFFECTS`].
    pub effect: usize,
    /// Compared minus reference EM, in percentage points, derived from the printed counts.
    pub difference: f64,
    /// Whether the caption says the effect survives six-test Holm correction.
    pub survives_holm: bool,
}

/// The sides of an effect for one Table D8 row (branch, choices / queries): +1 compared, −1
/// reference.
fn side(effect: usize, branch: &str, cell: &str) -> f64 {
    let (choices, queries) = cell.split_once(" / ").unwrap_or((cell, ""));
    let compared = match effect {
        0 => choices == "26",
        1 => queries == "6",
        _ => branch == "Late",
    };
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
    let surviving = PAPER_SURVIVING.rows()?;
    let mut out = Vec::new();
    for (effect, (label, _)) in EFFECTS.iter().enumerate() {
        for (m, model) in PAPER_MODELS.iter().enumerate() {
            let sum: f64 = printed
                .iter()
                .map(|(branch, cell, counts)| {
                    let (correct, sources) = counts[m].0;
                    side(effect, branch, cell) * correct as f64 / sources as f64
                })
                .sum();
            let Some((_, _, survives_holm)) =
                (surviving.iter()).find(|(m, e, _)| m == model && e == label)
            else {
                anyhow::bail!("exhibits/figure13.tsv: no row for {model}, {label}")
            };
            out.push(PaperEffect {
                model,
                effect,
                difference: 100.0 * sum / 4.0,
                survives_holm: *survives_holm,
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

/// Our correct counts (correct, n) by (model, cell name `early 10 / 2`).
pub type Counts = BTreeMap<(String, String), (u64, u64)>;

/// Our correct counts from the panel's declared cells (`early 10 / 2` …).
pub fn our_counts(cells: &[CellRow]) -> Counts {
    cells
        .iter()
        .map(|c| ((c.model.clone(), c.cell.clone()), (c.correct, c.n)))
        .collect()
}

/// The panel's cell name of a branch and column (`early 10 / 2`).
fn cell_name(branch: &str, cell: &str) -> String {
    format!("{} {cell}", branch.to_lowercase())
}

fn count((k, n): (u64, u64)) -> String {
    format!("{k}/{n}")
}

fn rate((k, n): (u64, u64)) -> Option<f64> {
    (n > 0).then(|| k as f64 / n as f64)
}

fn grid_header(first: &str) -> Vec<String> {
    let mut h = vec![first.to_string(), "Branch".into()];
    h.extend(COLUMNS.iter().map(|(label, _)| label.to_string()));
    h
}

/// Figure 13's numbers: our counts and factor effects, the paper's, and the differences.
pub fn layout(counts: &Counts, contrasts: &[ContrastRow], against: &str) -> anyhow::Result<Doc> {
    let paper_rows = PAPER.rows()?;
    let models = distinct(
        counts
            .keys()
            .map(|(m, _)| m.as_str())
            .chain(contrasts.iter().map(|c| c.model.as_str())),
    );
    let mut doc = Doc::new(
        "Figure 13: Query count and branch placement affect Jev more than alphabet size \
         (numbers)",
    );
    doc.p(
        "On twelve-character reversal sources, (a, b) correct strings under crossed factors; \
         (c) paired factor effects (EM difference, points) with 95% source-bootstrap intervals \
         and six-test Holm correction.",
    );
    doc.h(2, "This run: (a, b) correct strings");
    doc.table(Table {
        text_columns: 2,
        header: grid_header("Model"),
        rows: models
            .iter()
            .flat_map(|m| {
                BRANCHES.iter().map(move |branch| {
                    let mut row = vec![m.to_string(), branch.to_string()];
                    row.extend(COLUMNS.iter().map(|(_, cell)| {
                        counts
                            .get(&(m.to_string(), cell_name(branch, cell)))
                            .map_or_else(|| UNDEFINED.to_string(), |c| count(*c))
                    }));
                    row
                })
            })
            .collect(),
        notes: vec![
            "The panel's cells (`early 10 / 2` …): the Serial/FullFill arm of each alphabet \
             (a–j: 10 choices, a–z: 26) and query count (two branch positions, or also 1, 4, 8, \
             12) on the early or late presentations."
                .into(),
        ],
    });
    doc.h(2, "This run: (c) paired factor effects");
    let family_tests = contrasts
        .iter()
        .filter(|c| c.family.as_deref() == Some("D.7 factors"))
        .count();
    let contrast_of = |model: &str, effect: usize| {
        contrasts
            .iter()
            .find(|c| c.model == model && c.contrast == EFFECTS[effect].1)
    };
    let difference = |c: Option<&ContrastRow>| {
        c.and_then(|c| {
            let e = &c.estimate;
            e.difference.map(|d| (d, e.ci_low, e.ci_high))
        })
    };
    doc.table(Table {
        text_columns: 2,
        header: [
            "Effect",
            "Model",
            "EM difference, pp [95% CI]",
            "Sign-flip p",
            "Holm p",
        ]
        .map(String::from)
        .to_vec(),
        rows: EFFECTS
            .iter()
            .enumerate()
            .flat_map(|(effect, (label, _))| {
                models.iter().map(move |m| {
                    let c = contrast_of(m, effect);
                    let holm = c.and_then(|c| c.sign_p_holm);
                    let holm_cell = starred(sig3(holm), holm);
                    vec![
                        label.to_string(),
                        m.to_string(),
                        percent_interval(difference(c)),
                        sig3(c.and_then(|c| c.estimate.sign_p)),
                        holm_cell,
                    ]
                })
            })
            .collect(),
        notes: vec![format!(
            "The panel's unit contrasts, averaged within source: stratified source-bootstrap \
             interval, exact sign-flip p, Holm over the family D.7 factors (tests in this \
             run: {family_tests}; the paper's six are three effects × two models); * marks Holm \
             p < 0.05."
        )],
    });
    doc.h(2, "The paper (Figure 13)");
    doc.table(Table {
        text_columns: 2,
        header: grid_header("Model"),
        rows: PAPER_MODELS
            .iter()
            .enumerate()
            .flat_map(|(m, model)| {
                BRANCHES.iter().map(move |branch| {
                    let mut row = vec![model.to_string(), branch.to_string()];
                    row.extend(COLUMNS.iter().map(|(_, cell)| {
                        paper_count(paper_rows, m, branch, cell)
                            .map_or_else(|| UNDEFINED.to_string(), count)
                    }));
                    row
                })
            })
            .collect(),
        notes: vec!["(a, b) as printed (Table D8's correct counts), 32 sources per cell.".into()],
    });
    let paper = paper_effects()?;
    doc.table(Table {
        text_columns: 2,
        header: ["Effect", "Model", "EM difference, pp", "Survives Holm"]
            .map(String::from)
            .to_vec(),
        rows: paper
            .iter()
            .map(|p| {
                vec![
                    EFFECTS[p.effect].0.to_string(),
                    p.model.to_string(),
                    signed1(p.difference),
                    if p.survives_holm { "yes *" } else { "no" }.into(),
                ]
            })
            .collect(),
        notes: vec![
            "(c) prints no value or interval: the effects are derived from the printed counts \
             ((Σ compared − Σ reference correct) / (4 × 32)); Survives Holm as the caption \
             says (\"Jev's query-count and branch-location contrasts survive six-test Holm \
             correction\")."
                .into(),
        ],
    });
    let mut header: Vec<&str> = vec!["Model", "Branch", "Paper model"];
    let labels: Vec<String> = COLUMNS.iter().map(|(l, _)| format!("Δ {l}")).collect();
    header.extend(labels.iter().map(String::as_str));
    let (compared, mut grid) = differences(&mut doc, PAPER_MODELS, against, 3, &header);
    for m in &models {
        for p in &compared {
            let Some(pi) = PAPER_MODELS.iter().position(|x| x == p) else {
                continue;
            };
            for branch in BRANCHES {
                let mut row = vec![m.to_string(), branch.to_string(), p.to_string()];
                row.extend(COLUMNS.iter().map(|(_, cell)| {
                    let ours = counts
                        .get(&(m.to_string(), cell_name(branch, cell)))
                        .and_then(|c| rate(*c));
                    match paper_count(paper_rows, pi, branch, cell).and_then(rate) {
                        Some(printed) => pp_diff(ours, 100.0 * printed),
                        None => UNDEFINED.to_string(),
                    }
                }));
                grid.rows.push(row);
            }
        }
    }
    grid.notes.push(
        "(a, b): correct strings in percentage points (ours over our sources, the paper's over \
         32)."
            .into(),
    );
    doc.table(grid);
    let mut effects = Table {
        text_columns: 3,
        header: ["Effect", "Model", "Paper model", "Δ EM difference"]
            .map(String::from)
            .to_vec(),
        ..Table::default()
    };
    for (effect, (label, _)) in EFFECTS.iter().enumerate() {
        for m in &models {
            for p in paper
                .iter()
                .filter(|p| p.effect == effect && compared.contains(&p.model))
            {
                let ours = difference(contrast_of(m, effect)).map(|d| d.0);
                effects.rows.push(vec![
                    label.to_string(),
                    m.to_string(),
                    p.model.to_string(),
                    pp_diff(ours, p.difference),
                ]);
            }
        }
    }
    effects
        .notes
        .push("(c): percentage points, ours minus the paper's derived effect.".into());
    doc.table(effects);
    Ok(doc)
}

/// Read the twelve-character panel's run and lay out the numbers.
pub fn document(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let (contrasts, cells) = run_of(runs, "twelve-character")?
        .load()?
        .contrast_tables()?;
    layout(&our_counts(&cells), &contrasts, against)
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_stats::ContrastEstimate;

    /// From Table D8's counts: Jev −3.1 / −18.8 / −21.9, Qwen −3.1 / −4.7 / −4.7 points —
    /// within the figure's −30 to 0 axis, Jev's two surviving effects the largest.
    #[test]
    fn the_papers_effects_follow_from_its_counts() {
        let effects = paper_effects().unwrap();
        let get = |model: &str, effect: usize| {
            effects
                .iter()
                .find(|p| p.model == model && p.effect == effect)
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
        assert_eq!(effects.iter().filter(|p| p.survives_holm).count(), 2);
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
        let counts = our_counts(&[cell("early 10 / 2", 8), cell("late 26 / 6", 3)]);
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
        let md = layout(&counts, &[contrast], "Jev").unwrap().markdown();
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
