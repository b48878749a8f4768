//! Figures 17 and 18's numbers (D.13, "Crossed prompt and option order robustness"), both from
//! the panel `config/panels/readout-grid.toml`: GoldCopy readout of one preselected position
//! on the 96 Copy parents (48 per domain), templates T0–T2 × option orders O0–O2 ×
//! Indexed/Direct evidence × code (`gencode`) / character (`char`) output.
//!
//! Figure 17: "Prompt and option order change which output contract is more accurate. For
//! single-position readout on 96 supplied-target parents, (a–d) Qwen3-8B has corrected code and
//! character advantages in different settings; (e–h) Qwen3.5-27B's corrected differences favor
//! codes. Malformed outputs fail strict scoring. Asterisks mark Holm p < 0.05 after correction
//! across all 72 paired comparisons." Each panel (domain × evidence) is a 3 × 3 grid of
//! character − code accuracy (pp), rows T0/T1/T2, columns O0/O1/O2 (the axis labels `O0O1O2 T0
//! T1 T2`; the text lists each grid row by row, so "72.9*60.4*70.8* 20.82.116.7
//! -33.3*-22.9-20.8" is T0: 72.9*, 60.4*, 70.8*; T1: 20.8, 2.1, 16.7; T2: −33.3*, −22.9,
//! −20.8). Rows as templates is the reading under which Figure 18's caption holds: Qwen3.5-27B's
//! T1 − T0 changes are near zero and its T2 − T0 changes large (a column reading would make its
//! T1 − T0 changes at least as large as its T2 − T0 ones). Ours, per model, domain, evidence,
//! template and order: the difference and its 95% parent-bootstrap interval are the unit
//! contrast character − code of the setting's two arms (`GoldCopy/Full/char/T?/EVIDENCE[/O?]`
//! − `GoldCopy/Full/gencode/…`, built here with the run's draws, seed and level: the panel
//! declares these 72 tests as pairings, not as unit contrasts); the Holm p is the exact McNemar
//! p of the panel's pairing `gencode vs char` of that setting, Holm-adjusted in the panel's
//! declared family `D.13 settings` (scope global: 18 settings × 2 domains × the run's models,
//! the paper's 72 with two models). With one trajectory per parent and arm the sign-flip test
//! of the unit differences is that McNemar test.
//!
//! Figure 18: "Wording shifts the relative success of code and character output. Contrasts
//! average option orders within 96 supplied-target parents. (a) Both alternative templates
//! shift Qwen3-8B's relative accuracy toward codes compared with T0; (b) Qwen3.5-27B changes
//! survive correction for T2 but not T1. Intervals are paired 95% parent bootstrap; asterisks
//! mark Holm p < 0.05 after correction across all sixteen interaction tests." The figure prints
//! no number: only its axis and eight asterisks for (a) and four for (b), which the caption
//! places on all eight Qwen3-8B changes and on Qwen3.5-27B's four T2 − T0 changes. We print
//! those marks and, beside them, the change Figure 17's printed cells imply (the mean over
//! orders of the Tk row minus that of the T0 row; exact up to the cells' rounding, since every
//! parent has every arm). Ours are the panel's declared unit contrasts `Tk - T0, character -
//! code, EVIDENCE, DOMAIN` (difference of differences, orders averaged within parent) with
//! their intervals and sign-flip p Holm-adjusted in the family `D.13 template interactions`
//! (eight per model, sixteen with two models).

use std::collections::BTreeSet;

use anyhow::Context;
use c2s_records::Endpoint;
use c2s_stats::{contrast_tables, ContrastRow, ContrastSpec, MetricRow, Selector};
use serde::{Deserialize, Serialize};

use super::paper::PaperTable;
use super::{differences, pp_diff, run_of, signed1, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{p_value, Group, MetricIndex, UNDEFINED};

/// The panel both figures read.
pub const PANEL: &str = "readout-grid";
/// Domains and evidence levels in the paper's panel order: (a) arithmetic indexed, (b)
/// arithmetic direct, (c) lexical indexed, (d) lexical direct.
pub const DOMAINS: [&str; 2] = ["arithmetic", "lexical"];
/// The evidence levels, as arm labels spell them: Indexed then Direct.
pub const EVIDENCE: [&str; 2] = ["indexed", "direct"];
/// The readout templates, the grids' rows.
pub const TEMPLATES: [&str; 3] = ["T0", "T1", "T2"];
/// Option orders O0–O2.
pub const ORDERS: usize = 3;
/// The panel's Holm family of the 72 setting McNemar tests (Figure 17's asterisks).
pub const SETTINGS_FAMILY: &str = "D.13 settings";
/// The panel's Holm family of the sixteen template-interaction contrasts (Figure 18's).
pub const INTERACTIONS_FAMILY: &str = "D.13 template interactions";

/// The domain and evidence as the figures' panel titles print them.
fn title(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    })
}

/// The arm of one setting: `GoldCopy/Full/CONTRACT/T?/EVIDENCE`, with `/O1` or `/O2` for the
/// permuted option orders.
pub fn arm(character: bool, template: usize, evidence: &str, order: usize) -> String {
    let contract = if character { "char" } else { "gencode" };
    let order = match order {
        0 => String::new(),
        o => format!("/O{o}"),
    };
    format!(
        "GoldCopy/Full/{contract}/{}/{evidence}{order}",
        TEMPLATES[template]
    )
}

/// The panel's pairing of a setting (code as the reference, character as the compared arm),
/// as listed in its family `D.13 settings`.
pub fn setting_comparison(template: usize, evidence: &str, order: usize) -> String {
    format!(
        "{} vs {}",
        arm(false, template, evidence, order),
        arm(true, template, evidence, order)
    )
}

/// The name of the unit contrast character − code of a setting (built here, not declared).
pub fn setting_contrast_name(
    domain: &str,
    evidence: &str,
    template: usize,
    order: usize,
) -> String {
    format!(
        "character - code, {}, O{order}, {evidence}, {domain}",
        TEMPLATES[template]
    )
}

/// The name of the panel's declared template interaction `Tk - T0` (k = 1, 2).
pub fn interaction_name(domain: &str, evidence: &str, template: usize) -> String {
    format!(
        "{} - T0, character - code, {evidence}, {domain}",
        TEMPLATES[template]
    )
}

/// The 36 setting contrasts character − code per model (2 domains × 2 evidence × 3 templates ×
/// 3 orders): each setting's character arm against its code arm, within parent.
pub fn setting_contrasts() -> Vec<ContrastSpec> {
    let side = |character, template, evidence: &str, order, domain: &str| {
        vec![Selector {
            arm: arm(character, template, evidence, order),
            domain: Some(domain.to_string()),
            placement: None,
            operation: None,
        }]
    };
    let mut out = Vec::new();
    for domain in DOMAINS {
        for evidence in EVIDENCE {
            for template in 0..TEMPLATES.len() {
                for order in 0..ORDERS {
                    out.push(ContrastSpec {
                        name: setting_contrast_name(domain, evidence, template, order),
                        compared: side(true, template, evidence, order, domain),
                        reference: side(false, template, evidence, order, domain),
                        family: None,
                        difference_of_differences: false,
                        endpoint: Endpoint::Correct,
                    });
                }
            }
        }
    }
    out
}

/// A printed cell of Figure 17: character − code in percentage points and its asterisk (Holm p
/// < 0.05 across the 72 settings).
pub type PaperCell = (f64, bool);

/// One panel of Figure 17 as printed: rows T0, T1, T2; columns O0, O1, O2.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct PaperPanel {
    /// The paper model (Qwen3-8B: panels a–d; Qwen3.5-27B: e–h).
    pub model: String,
    /// The panel's letter, `a` to `h`.
    pub letter: char,
    /// A bank domain of [`DOMAINS`].
    pub domain: String,
    /// An evidence level of [`EVIDENCE`].
    pub evidence: String,
    /// Character − code (pp) with its asterisk, rows T0–T2 by columns O0–O2.
    pub grid: [[PaperCell; ORDERS]; 3],
}

/// Figure 17's eight panels, transcribed from the text row by row.
pub static PAPER: PaperTable<PaperPanel> = PaperTable::new("figure17");

/// A printed mark of Figure 18: model, domain, evidence, template k of `Tk − T0` and whether
/// it carries an asterisk (Holm p < 0.05 across the sixteen interaction tests). The figure
/// prints no value; the caption places (a)'s eight asterisks on every Qwen3-8B change and (b)'s
/// four on Qwen3.5-27B's T2 − T0 changes ("survive correction for T2 but not T1").
pub type PaperMark = (String, String, String, usize, bool);

/// Figure 18's sixteen rows, in the paper's order (bottom to top of each panel: arithmetic /
/// indexed T1 − T0 first, lexical / direct T2 − T0 last).
pub static PAPER_MARKS: PaperTable<PaperMark> = PaperTable::new("figure18");

/// The paper's Figure 17 panel of a model, domain and evidence.
pub fn paper_panel<'a>(
    panels: &'a [PaperPanel],
    model: &str,
    domain: &str,
    evidence: &str,
) -> Option<&'a PaperPanel> {
    panels
        .iter()
        .find(|p| p.model == model && p.domain == domain && p.evidence == evidence)
}

/// The change `Tk − T0` of the character − code gap that Figure 17's printed cells imply: the
/// mean over orders of row Tk minus that of row T0, in percentage points.
pub fn implied_change(panel: &PaperPanel, template: usize) -> f64 {
    let mean = |t: usize| panel.grid[t].iter().map(|c| c.0).sum::<f64>() / ORDERS as f64;
    mean(template) - mean(0)
}

/// A paper cell as printed: `72.9*`, `−33.3*`, `2.1`.
fn paper_cell((v, starred): PaperCell) -> String {
    format!("{}{}", signed1(v), if starred { "*" } else { "" })
}

fn significant(holm_p: Option<f64>) -> Option<bool> {
    super::holm_significant(holm_p)
}

/// A fraction in percentage points with one decimal, a value that rounds to zero as `0.0`
/// (never `−0.0` from a floating-point residue of a difference of means).
fn pp1(fraction: f64) -> String {
    let v = 100.0 * fraction;
    signed1(if v.abs() < 0.05 { 0.0 } else { v })
}

/// An estimate in percentage points with its asterisk and interval: `72.9* [60.4, 83.3]`.
fn marked_interval(d: Option<(f64, Option<f64>, Option<f64>)>, holm_p: Option<f64>) -> String {
    let Some((v, lo, hi)) = d else {
        return UNDEFINED.to_string();
    };
    let star = if significant(holm_p) == Some(true) {
        "*"
    } else {
        ""
    };
    match (lo, hi) {
        (Some(lo), Some(hi)) => format!("{}{star} [{}, {}]", pp1(v), pp1(lo), pp1(hi)),
        _ => format!("{}{star}", pp1(v)),
    }
}

fn yes_no(b: Option<bool>) -> &'static str {
    match b {
        Some(true) => "yes",
        Some(false) => "no",
        None => UNDEFINED,
    }
}

/// The estimate of a contrast row: difference with its interval.
fn estimate_of(c: &ContrastRow) -> Option<(f64, Option<f64>, Option<f64>)> {
    c.estimate
        .difference
        .map(|d| (d, c.estimate.ci_low, c.estimate.ci_high))
}

/// One setting of our run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SettingCell {
    /// Character − code (fraction) with its 95% parent-bootstrap interval.
    pub difference: Option<(f64, Option<f64>, Option<f64>)>,
    /// McNemar p, Holm-adjusted in `D.13 settings`.
    pub holm_p: Option<f64>,
    /// The number of tests in that Holm family.
    pub family_tests: Option<u64>,
}

/// One row of our Figure 17 grids: a model's template row of one panel, orders O0–O2.
#[derive(Debug, Clone, PartialEq)]
pub struct GridRow {
    /// The model label of the run's records.
    pub model: String,
    /// A bank domain of [`DOMAINS`].
    pub domain: &'static str,
    /// An evidence level of [`EVIDENCE`].
    pub evidence: &'static str,
    /// The template's index in [`TEMPLATES`].
    pub template: usize,
    /// The settings at option orders O0, O1, O2.
    pub cells: [SettingCell; ORDERS],
}

/// Our grid rows from the run's metric rows (the pairings' Holm p) and its setting contrasts
/// ([`setting_contrasts`]); a row none of whose orders has a number is left out.
pub fn our_grid(rows: &[MetricRow], settings: &[ContrastRow]) -> Vec<GridRow> {
    let index = MetricIndex::new(rows);
    let models: BTreeSet<&str> = rows
        .iter()
        .map(|r| r.model.as_str())
        .chain(settings.iter().map(|c| c.model.as_str()))
        .collect();
    let mut out = Vec::new();
    for model in models {
        for domain in DOMAINS {
            for evidence in EVIDENCE {
                for template in 0..TEMPLATES.len() {
                    let cells: [SettingCell; ORDERS] = std::array::from_fn(|order| {
                        let name = setting_contrast_name(domain, evidence, template, order);
                        let contrast = settings
                            .iter()
                            .find(|c| c.model == model && c.contrast == name);
                        let group = Group {
                            model: model.to_string(),
                            domain: domain.to_string(),
                            comparison: setting_comparison(template, evidence, order),
                        };
                        let holm = index.get(&group, None, "mcnemar_p_holm");
                        SettingCell {
                            difference: contrast.and_then(estimate_of),
                            holm_p: holm.and_then(|r| r.value),
                            family_tests: holm.and_then(|r| r.denominator),
                        }
                    });
                    if cells.iter().any(|c| *c != SettingCell::default()) {
                        out.push(GridRow {
                            model: model.to_string(),
                            domain,
                            evidence,
                            template,
                            cells,
                        });
                    }
                }
            }
        }
    }
    out
}

fn grid_header(leading: &[&str]) -> Vec<String> {
    leading
        .iter()
        .copied()
        .chain(["Template", "O0", "O1", "O2"])
        .map(String::from)
        .collect()
}

/// Figure 17's document: our grids (character − code with interval and asterisk, then Holm p),
/// the paper's printed grids, and ours minus the paper's.
pub fn figure17_layout(ours: &[GridRow], against: &str) -> anyhow::Result<Doc> {
    let panels = PAPER.rows()?;
    let mut doc = Doc::new(
        "Figure 17: Prompt and option order change which output contract is more accurate",
    );
    doc.p(
        "Character − code accuracy (percentage points) of single-position readout on the 96 \
         supplied-target parents, rows templates T0–T2, columns option orders O0–O2, one panel \
         per domain and evidence. Malformed outputs fail strict scoring. Asterisks mark Holm p \
         < 0.05 after correction across the paired comparisons of the family D.13 settings.",
    );
    let row_start = |r: &GridRow| {
        vec![
            r.model.clone(),
            title(r.domain),
            title(r.evidence),
            TEMPLATES[r.template].to_string(),
        ]
    };
    let family_sizes: BTreeSet<u64> = ours
        .iter()
        .flat_map(|r| r.cells.iter().filter_map(|c| c.family_tests))
        .collect();
    let family_sizes = if family_sizes.is_empty() {
        UNDEFINED.to_string()
    } else {
        family_sizes
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    doc.h(2, "This run: character − code, pp [95% CI]");
    doc.table(Table {
        text_columns: 4,
        header: grid_header(&["Model", "Domain", "Evidence"]),
        rows: ours
            .iter()
            .map(|r| {
                let mut row = row_start(r);
                row.extend(
                    r.cells
                        .iter()
                        .map(|c| marked_interval(c.difference, c.holm_p)),
                );
                row
            })
            .collect(),
        notes: vec![format!(
            "Each cell: the unit contrast character − code of the setting's two GoldCopy arms \
             (mean within-parent difference, parent bootstrap within length with the run's draws \
             and seed); * Holm p < 0.05 (next table; family size in this run: {family_sizes}, the \
             paper's 72 with two models)."
        )],
    });
    doc.h(2, "This run: Holm p");
    doc.table(Table {
        text_columns: 4,
        header: grid_header(&["Model", "Domain", "Evidence"]),
        rows: ours
            .iter()
            .map(|r| {
                let mut row = row_start(r);
                row.extend(r.cells.iter().map(|c| p_value(c.holm_p)));
                row
            })
            .collect(),
        notes: vec![format!(
            "Exact McNemar p of the pairing gencode vs char of each setting, Holm-adjusted in \
             the family {SETTINGS_FAMILY} (every model and domain)."
        )],
    });
    doc.h(2, "The paper (Figure 17, character − code, pp)");
    doc.table(Table {
        text_columns: 5,
        header: grid_header(&["Model", "Panel", "Domain", "Evidence"]),
        rows: panels
            .iter()
            .flat_map(|p| {
                p.grid.iter().enumerate().map(move |(t, cells)| {
                    let mut row = vec![
                        p.model.to_string(),
                        format!("({})", p.letter),
                        title(&p.domain),
                        title(&p.evidence),
                        TEMPLATES[t].to_string(),
                    ];
                    row.extend(cells.iter().map(|c| paper_cell(*c)));
                    row
                })
            })
            .collect(),
        notes: vec![
            "96 supplied-target parents (48 per domain); * Holm p < 0.05 across all 72 paired \
             comparisons. The figure prints no interval or p-value."
                .into(),
        ],
    });
    let (models, mut diff) = differences(
        &mut doc,
        panels.iter().map(|p| p.model.as_str()),
        against,
        5,
        &[
            "Model",
            "Domain",
            "Evidence",
            "Template",
            "Paper panel",
            "Δ O0",
            "Δ O1",
            "Δ O2",
            "Asterisks agree",
        ],
    );
    for r in ours {
        for model in &models {
            let Some(p) = paper_panel(panels, model, r.domain, r.evidence) else {
                continue;
            };
            let printed = p.grid[r.template];
            let mut row = row_start(r);
            row.push(format!("{} ({})", p.model, p.letter));
            row.extend(
                r.cells
                    .iter()
                    .zip(printed)
                    .map(|(c, (v, _))| pp_diff(c.difference.map(|d| d.0), v)),
            );
            let judged: Vec<bool> = r
                .cells
                .iter()
                .zip(printed)
                .filter_map(|(c, (_, starred))| significant(c.holm_p).map(|s| s == starred))
                .collect();
            row.push(format!(
                "{}/{}",
                judged.iter().filter(|a| **a).count(),
                judged.len()
            ));
            diff.rows.push(row);
        }
    }
    diff.notes.push(
        "Percentage points, ours minus the paper's printed cell; asterisks agree: orders where \
         our Holm p < 0.05 matches the paper's asterisk, of those with a p."
            .into(),
    );
    doc.table(diff);
    Ok(doc)
}

/// One template interaction of our run.
#[derive(Debug, Clone, PartialEq)]
pub struct InteractionRow {
    /// The model label of the run's records.
    pub model: String,
    /// A bank domain of [`DOMAINS`].
    pub domain: &'static str,
    /// An evidence level of [`EVIDENCE`].
    pub evidence: &'static str,
    /// k of `Tk − T0`.
    pub template: usize,
    /// Change in the character − code gap (fraction) with its 95% parent-bootstrap interval.
    pub change: Option<(f64, Option<f64>, Option<f64>)>,
    /// Sign-flip p, Holm-adjusted in `D.13 template interactions`.
    pub holm_p: Option<f64>,
}

/// Our interaction rows from the panel's declared contrasts, per model in the paper's order.
pub fn our_interactions(contrasts: &[ContrastRow]) -> Vec<InteractionRow> {
    let models: BTreeSet<&str> = contrasts.iter().map(|c| c.model.as_str()).collect();
    let mut out = Vec::new();
    for model in models {
        for domain in DOMAINS {
            for evidence in EVIDENCE {
                for template in 1..TEMPLATES.len() {
                    let name = interaction_name(domain, evidence, template);
                    let Some(c) = contrasts
                        .iter()
                        .find(|c| c.model == model && c.contrast == name)
                    else {
                        continue;
                    };
                    out.push(InteractionRow {
                        model: model.to_string(),
                        domain,
                        evidence,
                        template,
                        change: estimate_of(c),
                        holm_p: c.sign_p_holm,
                    });
                }
            }
        }
    }
    out
}

fn domain_evidence(domain: &str, evidence: &str) -> String {
    format!("{} / {evidence}", title(domain))
}

fn interaction_label(template: usize) -> String {
    format!("{} − T0", TEMPLATES[template])
}

/// Figure 18's document: our interactions, the paper's marks with the changes Figure 17's
/// cells imply, and ours minus those.
pub fn figure18_layout(ours: &[InteractionRow], against: &str) -> anyhow::Result<Doc> {
    let paper_rows = PAPER_MARKS.rows()?;
    let panels = PAPER.rows()?;
    let mut doc =
        Doc::new("Figure 18: Wording shifts the relative success of code and character output");
    doc.p(
        "Change in the character − code gap (percentage points) from T0 to T1 or T2, option \
         orders averaged within each of the 96 supplied-target parents. Intervals are paired 95% \
         parent bootstrap; asterisks mark Holm p < 0.05 across the interaction tests.",
    );
    doc.h(2, "This run");
    let tests = ours.iter().filter(|r| r.holm_p.is_some()).count();
    doc.table(Table {
        text_columns: 3,
        header: [
            "Model",
            "Domain / evidence",
            "Contrast",
            "Change in character − code gap, pp [95% CI]",
            "Holm p",
        ]
        .map(String::from)
        .to_vec(),
        rows: ours
            .iter()
            .map(|r| {
                vec![
                    r.model.clone(),
                    domain_evidence(r.domain, r.evidence),
                    interaction_label(r.template),
                    marked_interval(r.change, r.holm_p),
                    p_value(r.holm_p),
                ]
            })
            .collect(),
        notes: vec![format!(
            "The panel's contrasts `Tk - T0, character - code, EVIDENCE, DOMAIN` (difference of \
             differences); Holm p: exact sign-flip p, Holm-adjusted in the family \
             {INTERACTIONS_FAMILY} over this run's {tests} tests (the paper's sixteen with two \
             models)."
        )],
    });
    doc.h(2, "The paper (Figure 18)");
    doc.table(Table {
        text_columns: 3,
        header: [
            "Model",
            "Domain / evidence",
            "Contrast",
            "Holm p < 0.05 (asterisk)",
            "Implied by Figure 17's cells, pp",
        ]
        .map(String::from)
        .to_vec(),
        rows: paper_rows
            .iter()
            .map(|(model, domain, evidence, template, starred)| {
                vec![
                    model.to_string(),
                    domain_evidence(domain, evidence),
                    interaction_label(*template),
                    if *starred { "*" } else { "no" }.to_string(),
                    paper_panel(panels, model, domain, evidence).map_or_else(
                        || UNDEFINED.to_string(),
                        |p| signed1(implied_change(p, *template)),
                    ),
                ]
            })
            .collect(),
        notes: vec![
            "The figure prints no value, only bars, intervals and asterisks (the caption places \
             them on all eight Qwen3-8B changes and on Qwen3.5-27B's T2 − T0 changes). The last \
             column is not printed: it is the mean over orders of Figure 17's Tk row minus its \
             T0 row, exact up to the cells' rounding."
                .into(),
        ],
    });
    let (models, mut diff) = differences(
        &mut doc,
        paper_rows.iter().map(|m| m.0.as_str()),
        against,
        4,
        &[
            "Model",
            "Domain / evidence",
            "Contrast",
            "Paper model",
            "Δ change (vs Figure 17's cells)",
            "Holm p < 0.05 (ours / paper)",
        ],
    );
    for r in ours {
        for m in paper_rows.iter().filter(|m| {
            models.contains(&m.0.as_str())
                && m.1 == r.domain
                && m.2 == r.evidence
                && m.3 == r.template
        }) {
            let implied = paper_panel(panels, &m.0, &m.1, &m.2).map(|p| implied_change(p, m.3));
            diff.rows.push(vec![
                r.model.clone(),
                domain_evidence(r.domain, r.evidence),
                interaction_label(r.template),
                m.0.to_string(),
                implied.map_or_else(
                    || UNDEFINED.to_string(),
                    |v| pp_diff(r.change.map(|c| c.0), v),
                ),
                format!("{} / {}", yes_no(significant(r.holm_p)), yes_no(Some(m.4))),
            ]);
        }
    }
    diff.notes.push(
        "Percentage points, ours minus the change implied by Figure 17's printed cells (Figure \
         18 prints none)."
            .into(),
    );
    doc.table(diff);
    Ok(doc)
}

/// Figure 17's numbers from the `readout-grid` panel: the 72 setting contrasts built here and
/// the pairings' Holm-adjusted McNemar p.
pub fn figure17(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, PANEL)?.load()?;
    let rows = run.metric_rows()?;
    let (settings, _) = contrast_tables(
        &run.trajectories,
        &setting_contrasts(),
        &[],
        run.stats.bootstrap_draws,
        run.stats.seed,
        run.stats.level,
    )
    .with_context(|| format!("setting contrasts of {}", run.display()))?;
    figure17_layout(&our_grid(&rows, &settings), against)
}

/// Figure 18's numbers from the `readout-grid` panel's declared template-interaction
/// contrasts.
pub fn figure18(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, PANEL)?.load()?;
    let (contrasts, _) = run.contrast_tables()?;
    figure18_layout(&our_interactions(&contrasts), against)
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_stats::ContrastEstimate;

    fn contrast(model: &str, name: &str, d: (f64, f64, f64), holm_p: f64) -> ContrastRow {
        ContrastRow {
            model: model.into(),
            contrast: name.into(),
            family: None,
            estimate: ContrastEstimate {
                units: 48,
                incomplete_units: 0,
                compared_mean: None,
                reference_mean: None,
                difference: Some(d.0),
                ci_low: Some(d.1),
                ci_high: Some(d.2),
                sign_p: Some(holm_p),
            },
            sign_p_holm: Some(holm_p),
        }
    }

    #[test]
    fn the_transcribed_grid_has_two_models_four_panels_nine_cells() {
        let printed = PAPER.rows().unwrap();
        let models = super::super::distinct(printed.iter().map(|p| p.model.as_str()));
        assert_eq!(models, ["Qwen3-8B", "Qwen3.5-27B"]);
        for model in models {
            let panels: Vec<&PaperPanel> = printed.iter().filter(|p| p.model == model).collect();
            assert_eq!(panels.len(), 4, "{model}");
            let cells: usize = panels
                .iter()
                .map(|p| p.grid.iter().map(|r| r.len()).sum::<usize>())
                .sum();
            assert_eq!(cells, 4 * 9, "{model}");
            for domain in DOMAINS {
                for evidence in EVIDENCE {
                    assert!(paper_panel(printed, model, domain, evidence).is_some());
                }
            }
        }
        let letters: String = printed.iter().map(|p| p.letter).collect();
        assert_eq!(letters, "abcdefgh");
        assert_eq!(PAPER_MARKS.rows().unwrap().len(), 16);
    }

    /// Every printed cell is a whole number of the 48 parents of a domain (to the printed
    /// rounding); the captions hold under the rows-as-templates reading.
    #[test]
    fn the_papers_cells_satisfy_the_captions() {
        let printed = PAPER.rows().unwrap();
        for p in printed {
            for (v, starred) in p.grid.iter().flatten() {
                let k = v * 48.0 / 100.0;
                assert!(
                    (k - k.round()).abs() < 0.03,
                    "{} ({}) {v}",
                    p.model,
                    p.letter
                );
                // (e–h): "Qwen3.5-27B's corrected differences favor codes".
                if p.model == "Qwen3.5-27B" && *starred {
                    assert!(*v < 0.0);
                }
            }
        }
        // (a–d): "corrected code and character advantages in different settings".
        let qwen3 = printed.iter().filter(|p| p.model == "Qwen3-8B");
        let starred: Vec<f64> = qwen3
            .flat_map(|p| p.grid.iter().flatten())
            .filter(|c| c.1)
            .map(|c| c.0)
            .collect();
        assert!(starred.iter().any(|v| *v > 0.0) && starred.iter().any(|v| *v < 0.0));
        // Figure 18: Qwen3-8B's changes all toward codes; Qwen3.5-27B's T1 − T0 near zero,
        // T2 − T0 large; all within the axis (−125, 0].
        for (model, domain, evidence, template, starred) in PAPER_MARKS.rows().unwrap() {
            let (template, starred) = (*template, *starred);
            let panel = paper_panel(printed, model, domain, evidence).unwrap();
            let change = implied_change(panel, template);
            assert!(
                change > -125.0 && change < 1.0,
                "{model} {domain} {evidence} {change}"
            );
            if model == "Qwen3-8B" || template == 2 {
                assert!(
                    starred && change < -40.0,
                    "{model} {domain} {evidence} {change}"
                );
            } else {
                assert!(
                    !starred && change.abs() < 1.0,
                    "{model} {domain} {evidence}"
                );
            }
        }
    }

    #[test]
    fn a_difference_that_rounds_to_zero_prints_without_a_sign() {
        assert_eq!(
            marked_interval(Some((-1e-17, Some(-0.056), Some(0.049))), Some(1.0)),
            "0.0 [−5.6, 4.9]"
        );
        assert_eq!(
            marked_interval(Some((-0.5, None, None)), Some(0.01)),
            "−50.0*"
        );
        assert_eq!(marked_interval(None, Some(0.01)), UNDEFINED);
    }

    #[test]
    fn the_setting_arms_are_the_panels_pairings() {
        assert_eq!(
            setting_comparison(0, "indexed", 0),
            "GoldCopy/Full/gencode/T0/indexed vs GoldCopy/Full/char/T0/indexed"
        );
        assert_eq!(
            setting_comparison(2, "direct", 2),
            "GoldCopy/Full/gencode/T2/direct/O2 vs GoldCopy/Full/char/T2/direct/O2"
        );
        let specs = setting_contrasts();
        assert_eq!(specs.len(), 36);
        let names: BTreeSet<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), 36);
    }

    #[test]
    fn figure17_layout_has_the_grids_and_differences() {
        let settings = vec![
            contrast(
                "m",
                &setting_contrast_name("arithmetic", "indexed", 0, 0),
                (0.75, 0.625, 0.875),
                0.001,
            ),
            contrast(
                "m",
                &setting_contrast_name("arithmetic", "indexed", 0, 1),
                (0.5, 0.375, 0.625),
                0.2,
            ),
        ];
        let holm = MetricRow {
            value: Some(0.001),
            denominator: Some(72),
            ..MetricRow::empty(
                0,
                "m",
                "arithmetic",
                None,
                &setting_comparison(0, "indexed", 0),
                "mcnemar_p_holm",
            )
        };
        let md = figure17_layout(&our_grid(&[holm], &settings), "Qwen3-8B")
            .unwrap()
            .markdown();
        for want in [
            "| Model | Domain | Evidence | Template | O0 | O1 | O2 |",
            "| m | Arithmetic | Indexed | T0 | 75.0* [62.5, 87.5] | 50.0 [37.5, 62.5] | – |",
            "| m | Arithmetic | Indexed | T0 | 0.001 | – | – |",
            "| Model | Panel | Domain | Evidence | Template | O0 | O1 | O2 |",
            "| Qwen3-8B | (a) | Arithmetic | Indexed | T0 | 72.9* | 60.4* | 70.8* |",
            "| Qwen3.5-27B | (h) | Lexical | Direct | T2 | −66.7* | −85.4* | −81.2* |",
            "## This run minus the paper (Qwen3-8B)",
            "| Model | Domain | Evidence | Template | Paper panel | Δ O0 | Δ O1 | Δ O2 | Asterisks agree |",
            "| m | Arithmetic | Indexed | T0 | Qwen3-8B (a) | +2.1 | −10.4 | – | 1/1 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert!(md.contains("family size in this run: 72"));
    }

    #[test]
    fn figure18_layout_has_the_rows_and_differences() {
        let contrasts = vec![
            contrast(
                "m",
                &interaction_name("arithmetic", "indexed", 1),
                (-0.5, -0.625, -0.375),
                0.0004,
            ),
            contrast(
                "m",
                &interaction_name("lexical", "direct", 2),
                (-0.75, -0.875, -0.625),
                0.2,
            ),
            contrast("m", "unrelated", (0.0, 0.0, 0.0), 1.0),
        ];
        let ours = our_interactions(&contrasts);
        assert_eq!(ours.len(), 2);
        let md = figure18_layout(&ours, "Jev").unwrap().markdown();
        for want in [
            "| Model | Domain / evidence | Contrast | Change in character − code gap, pp [95% CI] | Holm p |",
            "| m | Arithmetic / indexed | T1 − T0 | −50.0* [−62.5, −37.5] | 4.0e-4 |",
            "| Qwen3-8B | Arithmetic / indexed | T1 − T0 | * | −54.8 |",
            "| Qwen3.5-27B | Arithmetic / indexed | T1 − T0 | no | 0.7 |",
            "## This run minus the paper (Qwen3-8B, Qwen3.5-27B)",
            "| m | Arithmetic / indexed | T1 − T0 | Qwen3-8B | +4.8 | yes / yes |",
            "| m | Lexical / direct | T2 − T0 | Qwen3.5-27B | +2.8 | no / yes |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
