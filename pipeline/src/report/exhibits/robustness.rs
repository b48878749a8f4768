//! Figure 10's numbers (D.3): "The Jev domain gap survives natural-task perturbations. Across
//! 72 items, (a,c) Jev retains more arithmetic than lexical answers; (e,g) StartLux retention
//! stays low; (i,k) Qwen3-8B legal-code construction has no successes. Paired changes are
//! imprecise. SCR uses setting-specific Native successes, with 95% item bootstrap intervals."
//! D.3: "The 72-parent natural panel varies two paraphrases, two option orders and two
//! additional trajectories separately from the reference, yielding seven settings per model.
//! Each setting has its own Native conditioning".
//!
//! Panels as printed, per model (Jev, StartLux, Qwen3-8B) and domain: SCR (%) over the seven
//! settings Reference, Order 1, Order 2, Prompt v2, Prompt v3, Repeat 1, Repeat 2, each bar with
//! its count retained/Native correct, and a "Serial EM change (p)" panel that prints no
//! numbers. Ours come from three panels on the 72-parent robustness panel
//! (`data/panels/robustness-72.txt`, code contract), each setting paired within itself:
//!
//! - Reference: `config/panels/repeats.toml`'s unsuffixed pairing `Native/code vs
//!   Serial/Full/code` (Table D2's Serial 0 is the figure's Reference, see [`PAPER`]); the two
//!   other panels' own unsuffixed pairings (the same prompt) are compared in a note.
//! - Order 1, Order 2: `config/panels/option-orders.toml`'s `Native/code/O1 vs
//!   Serial/Full/code/O1` and `…/O2`.
//! - Prompt v2, Prompt v3: `config/panels/prompt-variants.toml`'s `Native/code/v2 vs
//!   Serial/Full/code/v2` and `…/v3` (its Independent pairings are not drawn).
//! - Repeat 1, Repeat 2: `config/panels/repeats.toml`'s `/r1` and `/r2` pairings.
//!
//! SCR count and SCR [95% CI]: the pairing's `scr` row (retained / setting-specific Native
//! correct, with the run's length-stratified item-bootstrap interval). Serial EM change: the
//! setting's Serial arm minus its own panel's reference Serial arm (`Serial/Full/code`) on the
//! items both hold, with D.3's "whole-item paired intervals" ("Complete trajectories use actual
//! prefixes and whole-item paired intervals"): each draw resamples whole items within length
//! and scores both Serial arms on that same resample, the panel's draws, seed and level
//! ([`item_intervals::paired_difference`]).

use std::collections::BTreeMap;

use c2s_records::Trajectory;
use c2s_stats::{MetricRow, StatsConfig};
use serde::{Deserialize, Serialize};

use super::item_intervals::Interval;
use super::paper::PaperTable;
use super::PanelRun;
use super::{differences, item_intervals, paper_domain, percent_interval, pp_diff, run_of};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{estimate, scr_cell, MetricIndex, UNDEFINED};

/// One of Figure 10's settings: its label, the panel it is read from and the suffix of its
/// arms' labels (`Native/code{suffix} vs Serial/Full/code{suffix}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// The setting as the figure prints it (`Reference`, `Order 1`, …).
    pub label: &'static str,
    /// The panel whose run holds the setting's arms.
    pub panel: &'static str,
    /// The arm-label suffix (`""`, `/O1`, `/v2`, `/r1`, …).
    pub suffix: &'static str,
}

/// The panel whose unsuffixed pairing is the figure's Reference row.
pub const REFERENCE_PANEL: &str = "repeats";

/// Figure 10's settings, in the order the counts are printed (the figure draws them bottom to
/// top).
pub const SETTINGS: [Setting; 7] = [
    Setting {
        label: "Reference",
        panel: REFERENCE_PANEL,
        suffix: "",
    },
    Setting {
        label: "Order 1",
        panel: "option-orders",
        suffix: "/O1",
    },
    Setting {
        label: "Order 2",
        panel: "option-orders",
        suffix: "/O2",
    },
    Setting {
        label: "Prompt v2",
        panel: "prompt-variants",
        suffix: "/v2",
    },
    Setting {
        label: "Prompt v3",
        panel: "prompt-variants",
        suffix: "/v3",
    },
    Setting {
        label: "Repeat 1",
        panel: "repeats",
        suffix: "/r1",
    },
    Setting {
        label: "Repeat 2",
        panel: "repeats",
        suffix: "/r2",
    },
];

/// The panels Figure 10 reads, each with its own reference pairing.
pub const PANELS: [&str; 3] = ["prompt-variants", "option-orders", "repeats"];

/// The Serial arm of a setting.
fn serial_arm(suffix: &str) -> String {
    format!("Serial/Full/code{suffix}")
}

/// The paired comparison of a setting.
fn pairing(suffix: &str) -> String {
    format!("Native/code{suffix} vs {}", serial_arm(suffix))
}

/// One (model, domain) panel of Figure 10 as printed: retained / Native correct per setting,
/// in [`SETTINGS`]' order.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct PaperPanel {
    /// The paper model (Jev, StartLux, Qwen3-8B).
    pub model: String,
    /// `math` or `lexical`, as printed.
    pub domain: String,
    /// Retained / Native correct of each setting, in [`SETTINGS`]' order.
    pub retained: [(u64, u64); 7],
}

/// Figure 10's printed counts, panels (a), (c), (e), (g), (i), (k). The figure prints the
/// labels top to bottom ("Repeat 2 Repeat 1 Prompt v3 Prompt v2 Order 2 Order 1 Reference")
/// and the counts in the opposite order, Reference first: Jev's arithmetic counts read "12/35
/// 11/35 10/35 13/34 12/35 13/35 12/35", whose first and last two (12/35, 13/35, 12/35) are
/// Table D2's Serial 0, 1, 2 (and its lexical 0/36, 1/36, 1/36 likewise), while the other
/// reading would make Repeat 1 11/35 (lexical 2/36). Read Reference first, every panel's
/// repeats also share the Reference's Native-correct denominator, as D.2's agreeing Native
/// choices require (the other reading gives StartLux's Repeat 1 22 Native successes against
/// the Reference's 20). Tests below check both.
pub static PAPER: PaperTable<PaperPanel> = PaperTable::new("figure10");

/// One panel run's numbers: its metric rows, its declared contrasts and their rows.
#[derive(Debug, Clone, Default)]
pub struct PanelNumbers {
    /// The panel's config stem (one of [`PANELS`]).
    pub panel: String,
    /// The panel run's metric rows (its settings' pairings).
    pub rows: Vec<MetricRow>,
    /// Each non-reference setting's paired Serial EM change, by (model, domain as the paper
    /// prints it, index into [`SETTINGS`]) ([`serial_changes`]).
    pub changes: BTreeMap<(String, String, usize), Option<Interval>>,
}

/// A setting's Serial EM change from its panel's reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// The reference setting itself.
    Reference,
    /// The paired difference with its whole-item interval (`None`: no shared item).
    Paired(Option<Interval>),
}

impl Change {
    fn cell(self) -> String {
        match self {
            Change::Reference => "reference".to_string(),
            Change::Paired(d) => percent_interval(d),
        }
    }
}

/// One of our rows: a (model, domain, setting).
#[derive(Debug, Clone, PartialEq)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it.
    pub domain: String,
    /// An index into [`SETTINGS`].
    pub setting: usize,
    /// Retained / Native correct.
    pub retained: Option<(u64, u64)>,
    /// SCR as a fraction on the setting's own Native-correct items; `None` when undefined.
    pub scr: Option<f64>,
    /// SCR with its interval in percent, as printed († exact, ‡ dropped draws).
    pub scr_cell: String,
    /// The setting's Serial EM with its interval in percent, as printed.
    pub serial_em_cell: String,
    /// The Serial EM change from the setting's own panel reference.
    pub change: Change,
}

/// A panel's own reference pairing for one (model, domain): retained / Native correct.
#[derive(Debug, Clone, PartialEq)]
pub struct PanelReference {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// The panel whose unsuffixed pairing this is.
    pub panel: String,
    /// Retained / Native correct of the pairing; `None` without its SCR row.
    pub retained: Option<(u64, u64)>,
}

/// Our rows and every panel's own reference.
#[derive(Debug, Clone, Default)]
pub struct Ours {
    /// One row per (model, domain, setting), in the paper's order.
    pub rows: Vec<OurRow>,
    /// Every panel's own unsuffixed pairing, compared in a note with the Reference.
    pub references: Vec<PanelReference>,
}

fn counts(row: Option<&MetricRow>) -> Option<(u64, u64)> {
    row.and_then(|r| Some((r.numerator?, r.denominator?)))
}

/// The paired Serial EM change of every non-reference setting `panel` holds, per model and
/// domain, from the panel's trajectories.
pub fn serial_changes(
    panel: &str,
    trajectories: &[Trajectory],
    stats: &StatsConfig,
) -> anyhow::Result<BTreeMap<(String, String, usize), Option<Interval>>> {
    let mut by_arm: BTreeMap<(&str, &str, &str), Vec<&Trajectory>> = BTreeMap::new();
    for t in trajectories {
        let domain = paper_domain(t.domain.as_str());
        by_arm
            .entry((t.model.as_str(), domain, t.arm.as_str()))
            .or_default()
            .push(t);
    }
    let mut changes = BTreeMap::new();
    let reference_arm = serial_arm("");
    for (setting, s) in SETTINGS.iter().enumerate().skip(1) {
        if s.panel != panel {
            continue;
        }
        let arm = serial_arm(s.suffix);
        for (&(model, domain, _), compared) in by_arm.iter().filter(|((_, _, a), _)| *a == arm) {
            let Some(reference) = by_arm.get(&(model, domain, reference_arm.as_str())) else {
                continue;
            };
            let change = item_intervals::paired_difference(
                compared.iter().copied(),
                reference.iter().copied(),
                |t| t.correct,
                stats,
            )?;
            changes.insert((model.to_string(), domain.to_string(), setting), change);
        }
    }
    Ok(changes)
}

/// Our rows from the three panels' numbers.
pub fn our_rows(panels: &[PanelNumbers]) -> Ours {
    let mut out = Ours::default();
    for numbers in panels {
        let index = MetricIndex::new(&numbers.rows);
        for g in index.paired_groups() {
            let domain = paper_domain(&g.domain).to_string();
            if g.comparison == pairing("") {
                out.references.push(PanelReference {
                    model: g.model.clone(),
                    domain: domain.clone(),
                    panel: numbers.panel.clone(),
                    retained: counts(index.get(&g, None, "scr")),
                });
            }
            let Some(setting) = SETTINGS
                .iter()
                .position(|s| s.panel == numbers.panel && g.comparison == pairing(s.suffix))
            else {
                continue;
            };
            let change = if setting == 0 {
                Change::Reference
            } else {
                let key = (g.model.clone(), domain.clone(), setting);
                Change::Paired(numbers.changes.get(&key).copied().flatten())
            };
            out.rows.push(OurRow {
                model: g.model.clone(),
                domain,
                setting,
                retained: counts(index.get(&g, None, "scr")),
                scr: index.value(&g, None, "scr"),
                scr_cell: scr_cell(&index, &g, None),
                serial_em_cell: estimate(index.get(&g, None, "serial_em"), None),
                change,
            });
        }
    }
    // The paper's order: model, arithmetic before lexical, then the settings.
    out.rows.sort_by(|a, b| {
        (&a.model, a.domain != "math", &a.domain, a.setting).cmp(&(
            &b.model,
            b.domain != "math",
            &b.domain,
            b.setting,
        ))
    });
    out
}

fn count_cell(c: Option<(u64, u64)>) -> String {
    c.map_or(UNDEFINED.to_string(), |(k, n)| format!("{k}/{n}"))
}

/// A signed count difference (`+1`, `−2`).
fn signed_count(ours: u64, paper: u64) -> String {
    if ours < paper {
        format!("−{}", paper - ours)
    } else {
        format!("+{}", ours - paper)
    }
}

fn header() -> Vec<String> {
    [
        "Model",
        "Domain",
        "Setting",
        "Retained / Native correct",
        "SCR [95% CI]",
        "Serial EM",
        "Serial EM change [95% CI]",
    ]
    .map(String::from)
    .to_vec()
}

/// Notes on the panels' own references where they disagree on a (model, domain).
fn reference_notes(references: &[PanelReference]) -> Vec<String> {
    let mut by_cell: BTreeMap<(&str, &str), Vec<&PanelReference>> = BTreeMap::new();
    for r in references {
        by_cell
            .entry((r.model.as_str(), r.domain.as_str()))
            .or_default()
            .push(r);
    }
    let disagreeing: Vec<String> = by_cell
        .iter()
        .filter(|(_, refs)| refs.iter().any(|r| r.retained != refs[0].retained))
        .map(|((model, domain), refs)| {
            let listed: Vec<String> = refs
                .iter()
                .map(|r| format!("{} {}", r.panel, count_cell(r.retained)))
                .collect();
            format!(
                "{model} / {domain}: the panels' own references differ ({}); each change is \
                 taken from its own panel's reference.",
                listed.join(", ")
            )
        })
        .collect();
    if disagreeing.is_empty() && !by_cell.is_empty() {
        vec!["The panels' own references agree on every model and domain.".to_string()]
    } else {
        disagreeing
    }
}

/// Figure 10's numbers: ours, the paper's printed counts, and the differences.
pub fn layout(ours: &Ours, against: &str) -> anyhow::Result<Doc> {
    let paper_rows = PAPER.rows()?;
    let mut doc =
        Doc::new("Figure 10: The Jev domain gap survives natural-task perturbations (numbers)");
    doc.p(
        "Across 72 items, seven settings per model: the reference, two option orders, two \
         prompt paraphrases and two additional trajectories. SCR uses setting-specific Native \
         successes, with 95% item bootstrap intervals; Serial EM change is from the reference \
         (percentage points).",
    );
    doc.h(2, "This run");
    let mut notes = vec![
        format!(
            "Reference: the {REFERENCE_PANEL} panel's unsuffixed pairing; Order 1/2: \
             option-orders (O1, O2); Prompt v2/v3: prompt-variants; Repeat 1/2: repeats (r1, \
             r2). Each setting is paired within itself (its own Native conditioning)."
        ),
        "Serial EM change: the setting's Serial EM minus its own panel's reference Serial EM on \
         the items both hold, percentage points, with the whole-item paired 95% interval (D.3: \
         \"whole-item paired intervals\"; items resampled within length, the panel's draws and \
         seed)."
            .to_string(),
    ];
    notes.extend(reference_notes(&ours.references));
    doc.table(Table {
        text_columns: 3,
        header: header(),
        rows: ours
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.model.clone(),
                    r.domain.clone(),
                    SETTINGS[r.setting].label.to_string(),
                    count_cell(r.retained),
                    r.scr_cell.clone(),
                    r.serial_em_cell.clone(),
                    r.change.cell(),
                ]
            })
            .collect(),
        notes,
    });
    doc.h(2, "The paper (Figure 10)");
    let mut paper = Table {
        text_columns: 3,
        header: header(),
        ..Table::default()
    };
    for p in paper_rows {
        for (setting, (k, n)) in SETTINGS.iter().zip(p.retained) {
            paper.rows.push(vec![
                p.model.to_string(),
                p.domain.to_string(),
                setting.label.to_string(),
                format!("{k}/{n}"),
                format!("{:.1}", 100.0 * k as f64 / n as f64),
                "not printed".to_string(),
                "not printed".to_string(),
            ]);
        }
    }
    paper.notes.push(
        "Counts as printed; SCR computed from them (the bars' intervals are drawn, not \
         printed). The Serial EM change panels print no numbers."
            .into(),
    );
    doc.table(paper);
    let (models, mut diff) = differences(
        &mut doc,
        paper_rows.iter().map(|p| p.model.as_str()),
        against,
        4,
        &[
            "Model",
            "Domain",
            "Setting",
            "Paper panel",
            "Δ Retained",
            "Δ Native correct",
            "Δ SCR",
        ],
    );
    for r in &ours.rows {
        for m in &models {
            let mut row = vec![
                r.model.clone(),
                r.domain.clone(),
                SETTINGS[r.setting].label.to_string(),
            ];
            match paper_rows
                .iter()
                .find(|p| p.model == *m && p.domain == r.domain)
            {
                Some(p) => {
                    let (k, n) = p.retained[r.setting];
                    row.push(format!("{} / {}", p.model, p.domain));
                    match r.retained {
                        Some((ours_k, ours_n)) => {
                            row.push(signed_count(ours_k, k));
                            row.push(signed_count(ours_n, n));
                        }
                        None => row.extend([UNDEFINED.to_string(), UNDEFINED.to_string()]),
                    }
                    row.push(pp_diff(r.scr, 100.0 * k as f64 / n as f64));
                }
                None => {
                    row.push(format!("{m}: no such panel"));
                    row.extend([UNDEFINED; 3].map(String::from));
                }
            }
            diff.rows.push(row);
        }
    }
    diff.notes.push(
        "Counts, this run minus the paper's; Δ SCR in percentage points against the SCR of the \
         paper's printed count."
            .into(),
    );
    doc.table(diff);
    Ok(doc)
}

/// Read the three panels' runs and lay out the numbers.
pub fn figure10(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let mut panels = Vec::new();
    for panel in PANELS {
        let run = run_of(runs, panel)?.load()?;
        panels.push(PanelNumbers {
            panel: panel.to_string(),
            rows: run.metric_rows()?,
            changes: serial_changes(panel, &run.trajectories, &run.stats)?,
        });
    }
    layout(&our_rows(&panels), against)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::repeats;
    use crate::report::exhibits::testing::{paired_rows, trajectory};

    fn setting(label: &str) -> usize {
        SETTINGS
            .iter()
            .position(|s| s.label == label)
            .expect("a setting of Figure 10")
    }

    fn paper(model: &str, domain: &str) -> &'static PaperPanel {
        PAPER
            .rows()
            .unwrap()
            .iter()
            .find(|p| p.model == model && p.domain == domain)
            .expect("a panel of Figure 10")
    }

    /// Table D2 prints Jev's repeats: the Reference-first reading of Figure 10's counts gives
    /// them back, the printed labels' top-to-bottom reading does not.
    #[test]
    fn the_counts_read_reference_first_as_table_d2_shows() {
        let (reference, first, second) = (
            setting("Reference"),
            setting("Repeat 1"),
            setting("Repeat 2"),
        );
        for (domain, (native_correct, _), serial) in repeats::PAPER.rows().unwrap() {
            let panel = paper(repeats::PAPER_MODEL, domain);
            let read = [
                panel.retained[reference],
                panel.retained[first],
                panel.retained[second],
            ];
            assert_eq!(read, *serial, "{domain}");
            assert_eq!(read[0].1, *native_correct, "{domain}");
            // Labels top to bottom: Repeat 2 is the first count, Repeat 1 the second,
            // Reference the last.
            let last = panel.retained.len() - 1;
            let other = [panel.retained[last], panel.retained[1], panel.retained[0]];
            assert_ne!(other, *serial, "{domain}");
        }
    }

    /// D.2: Native choices agree across repeats, so each repeat's Native-correct count is the
    /// Reference's in every panel; the other reading breaks this for StartLux and Qwen3-8B.
    #[test]
    fn repeats_share_the_references_native_correct() {
        let last = SETTINGS.len() - 1;
        let mut other_reading_agrees = true;
        for p in PAPER.rows().unwrap() {
            let n = p.retained[setting("Reference")].1;
            assert_eq!(
                p.retained[setting("Repeat 1")].1,
                n,
                "{} {}",
                p.model,
                p.domain
            );
            assert_eq!(
                p.retained[setting("Repeat 2")].1,
                n,
                "{} {}",
                p.model,
                p.domain
            );
            other_reading_agrees &= p.retained[1].1 == p.retained[last].1;
        }
        assert!(!other_reading_agrees);
    }

    /// D.3's text: "Jev leads all seven arithmetic settings and five lexical settings; two
    /// lexical settings have no successes."
    #[test]
    fn the_transcription_agrees_with_the_text() {
        let scr = |(k, n): (u64, u64)| k as f64 / n as f64;
        for (domain, leads) in [("math", 7), ("lexical", 5)] {
            let jev = paper("Jev", domain);
            let led = (0..SETTINGS.len())
                .filter(|&s| {
                    PAPER
                        .rows()
                        .unwrap()
                        .iter()
                        .filter(|p| p.domain == domain && p.model != "Jev")
                        .all(|p| scr(jev.retained[s]) > scr(p.retained[s]))
                })
                .count();
            assert_eq!(led, leads, "{domain}");
        }
        let empty = paper("Jev", "lexical")
            .retained
            .iter()
            .filter(|(k, _)| *k == 0)
            .count();
        assert_eq!(empty, 2);
    }

    fn relabel(rows: Vec<MetricRow>, suffix: &str) -> Vec<MetricRow> {
        rows.into_iter()
            .map(|r| MetricRow {
                comparison: pairing(suffix),
                ..r
            })
            .collect()
    }

    fn panel(name: &str, settings: &[(&str, [u64; 4])]) -> PanelNumbers {
        PanelNumbers {
            panel: name.to_string(),
            rows: settings
                .iter()
                .flat_map(|(suffix, joint)| {
                    relabel(paired_rows("m", "arithmetic", *joint, (0.4, 1.0)), suffix)
                })
                .collect(),
            ..PanelNumbers::default()
        }
    }

    #[test]
    fn the_layout_has_the_papers_settings_counts_and_differences() {
        let prompts = PanelNumbers {
            changes: BTreeMap::from([(
                ("m".to_string(), "math".to_string(), setting("Prompt v2")),
                Some((0.125, Some(-0.1), Some(0.3))),
            )]),
            ..panel(
                "prompt-variants",
                &[("", [3, 1, 0, 4]), ("/v2", [3, 1, 1, 3])],
            )
        };
        let orders = panel(
            "option-orders",
            &[("", [4, 0, 0, 4]), ("/O1", [2, 2, 1, 3])],
        );
        let repeated = panel("repeats", &[("", [3, 1, 0, 4]), ("/r1", [3, 1, 0, 4])]);
        let ours = our_rows(&[prompts, orders, repeated]);
        let labels: Vec<usize> = ours.rows.iter().map(|r| r.setting).collect();
        assert_eq!(labels, vec![0, 1, 3, 5]);
        let md = layout(&ours, "Jev").unwrap().markdown();
        for want in [
            "| Model | Domain | Setting | Retained / Native correct | SCR [95% CI] | Serial EM | Serial EM change [95% CI] |",
            "| m | math | Reference | 3/4 | 75.0 [40.0, 100.0] | 37.5 | reference |",
            "| m | math | Order 1 | 2/4 | 50.0 [40.0, 100.0] | 37.5 | – |",
            "| m | math | Prompt v2 | 3/4 | 75.0 [40.0, 100.0] | 50.0 | 12.5 [−10.0, 30.0] |",
            "| m | math | Repeat 1 | 3/4 | 75.0 [40.0, 100.0] | 37.5 | – |",
            "| Jev | math | Reference | 12/35 | 34.3 | not printed | not printed |",
            "| Qwen3-8B | lexical | Repeat 2 | 0/34 | 0.0 | not printed | not printed |",
            "## This run minus the paper (Jev)",
            "| Model | Domain | Setting | Paper panel | Δ Retained | Δ Native correct | Δ SCR |",
            "| m | math | Reference | Jev / math | −9 | −31 | +40.7 |",
            "m / math: the panels' own references differ (prompt-variants 3/4, option-orders 4/4, repeats 3/4)",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    #[test]
    fn every_printed_model_is_compared_when_against_is_not_printed() {
        let ours = our_rows(&[panel("repeats", &[("", [1, 1, 0, 2])])]);
        let md = layout(&ours, "Qwen3.5-27B").unwrap().markdown();
        for want in [
            "## This run minus the paper (Jev, StartLux, Qwen3-8B)",
            "| m | math | Reference | StartLux / math | +0 | −18 | +45.0 |",
            "| m | math | Reference | Qwen3-8B / math | +1 | −3 | +50.0 |",
            "The panels' own references agree on every model and domain.",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    /// D.3: "Complete trajectories use actual prefixes and whole-item paired intervals." Each
    /// setting's change is its Serial arm minus its panel's reference Serial arm on the same
    /// items, with a paired interval; settings of other panels are left to their panels.
    #[test]
    fn serial_em_changes_are_whole_item_paired_differences() {
        let mut trajectories = Vec::new();
        for i in 0..24 {
            let item = format!("a{i}");
            let length = 3 + i % 4;
            // Reference correct on items 0..12, Order 1 on 0..6 and 12..14: −4 items of 24.
            trajectories.push(trajectory(
                &item,
                "arithmetic",
                length,
                "Serial/Full/code",
                i < 12,
            ));
            let o1 = i < 6 || (12..14).contains(&i);
            trajectories.push(trajectory(
                &item,
                "arithmetic",
                length,
                "Serial/Full/code/O1",
                o1,
            ));
        }
        // An item only the compared arm holds is not paired.
        trajectories.push(trajectory(
            "extra",
            "arithmetic",
            3,
            "Serial/Full/code/O1",
            true,
        ));
        let stats = StatsConfig {
            bootstrap_draws: 999,
            ..StatsConfig::default()
        };
        let changes = serial_changes("option-orders", &trajectories, &stats).unwrap();
        assert_eq!(changes.len(), 1, "{changes:?}");
        let (d, lo, hi) =
            changes[&("m".to_string(), "math".to_string(), setting("Order 1"))].expect("a change");
        assert!((d - (-4.0 / 24.0)).abs() < 1e-12, "{d}");
        let (lo, hi) = (lo.unwrap(), hi.unwrap());
        assert!(lo < d && d < hi, "[{lo}, {hi}]");
        // The repeats panel holds no Order 1 arm.
        assert!(serial_changes("repeats", &trajectories, &stats)
            .unwrap()
            .is_empty());
    }
}
