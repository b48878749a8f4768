//! Figure 5's and Figure 6's numbers (B.4, B.5).
//!
//! Figure 5: "Matched symbol operations yield small letter–digit contrasts, while option-name
//! conflicts remain interface dependent. (a) On 120 shared COPY/REVERSE bases, contrast
//! intervals span both directions. (b) Extra conflict losses survive correction for StartLux
//! arithmetic and Qwen3-8B lexical readout. Paired intervals are 95%; asterisks mark Holm p <
//! 0.05 after correction within each comparison family."
//!
//! Figure 6: "On 60 supplied-target parents per domain, (a,b) Jev and StartLux approach perfect
//! indexed readout from lower raw accuracy; Qwen3-8B legal-code accuracy stays lower. Intervals
//! are 95% item bootstrap."
//!
//! The paper plots these and prints no numbers: the figures' text holds only axis ticks, the
//! models (Qwen3-8B, StartLux, Jev) and, in Figure 5 (b), two asterisks, which the caption
//! places on StartLux arithmetic and Qwen3-8B lexical. Those two marks are the only thing
//! transcribed ([`PAPER_MARKS`]); there is no printed number to take a difference from, so the
//! exhibits set our Holm marks beside the paper's instead.
//!
//! Ours:
//! - (5a) `config/panels/copy-reverse.toml`: the declared unit contrast `letter - digit, Serial
//!   EM` (Serial/Full/code on `symbolic_letters` minus `symbolic_digits`, both operations
//!   averaged within base, stratified base bootstrap, exact sign-flip p, Holm within the family
//!   `letter - digit` over every model), beside its Native EM twin of the same family; under
//!   them the panel's four declared cells (digits/letters × copy/reverse: Serial correct,
//!   joint/Native, SCR).
//! - (5b) `config/panels/binding.toml`: B.5's "Extra conflict loss is (aligned − conflicting) −
//!   (opaque − remapped)" of the arms `GoldCopy/Full/code/T0/EVIDENCE` (opaque),
//!   `…/names-opaque_remapped`, `…/names-readable_aligned` and `…/names-readable_conflicting`.
//!   The panel declares one difference-of-differences contrast per evidence level over all 144
//!   records (family `B.5 extra conflict loss`); the figure draws one bar per model and domain,
//!   so the exhibit also computes each declared contrast within arithmetic and within lexical
//!   (the same spec with its selectors restricted to the domain, the run's draws, seed and
//!   level), Holm-corrected per evidence level over every model and both domains (the figure's
//!   bars). The caption does not say which evidence level the bars use; every level is shown.
//!   The four conditions' accuracies are counted from the trajectories.
//! - (6) `config/panels/binding.toml`: accuracy of the opaque-name arm at each evidence level,
//!   with the whole-parent interval within length. The figure does not say which name
//!   condition its bars use; the opaque names are the panel's base condition (the other three
//!   are in Figure 5 (b)'s table).
//!
//! Repeats (B.5: "Cross-model estimates average two shared repeats within parent; Jev's
//! three-repeat estimate is separate"; A.5: "Cross model estimates use the first two shared
//! repetition labels"): the panel runs every arm twice (`/r1`), each contrast's sides hold both
//! repeats (so a parent's value is its within-parent average), the conditions' accuracies count
//! both, and Figure 6 averages each parent's two repeats before averaging parents. A third
//! repeat, where a config adds one, is left out of these cross-model estimates.

use std::collections::BTreeMap;

use anyhow::Context;
use c2s_records::Trajectory;
use c2s_stats::{contrast_tables, CellRow, ContrastRow, ContrastSpec, Selector, StatsConfig};

use super::paper::PaperTable;
use super::{
    compared_models, distinct, item_intervals, paper_domain, percent_interval, run_of, starred,
    LoadedRun, PanelRun,
};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{self, p_value, UNDEFINED};

/// The evidence levels, from Raw to Direct.
pub const EVIDENCE: [&str; 3] = ["raw", "indexed", "direct"];

/// The four name conditions as the extra conflict loss orders them: (label, arm suffix).
pub const NAMES: [(&str, &str); 4] = [
    ("Opaque", ""),
    ("Remapped", "/names-opaque_remapped"),
    ("Aligned", "/names-readable_aligned"),
    ("Conflicting", "/names-readable_conflicting"),
];

/// Figure 5 (b)'s and Figure 6's domains (the panel's symbolic records are not drawn).
pub const FIGURE_DOMAINS: [&str; 2] = ["arithmetic", "lexical"];

/// The domain key of the declared contrasts over every record of the panel.
pub const ALL_RECORDS: &str = "all";

/// The stem of the binding panel's declared contrasts (`extra conflict loss, EVIDENCE`).
pub const CONFLICT_LOSS: &str = "extra conflict loss";

/// Figure 5 (a)'s contrasts in the copy-reverse panel: (endpoint, declared name); Serial EM is
/// the figure's bar.
pub const LETTER_DIGIT: [(&str, &str); 2] = [
    ("Serial EM", "letter - digit, Serial EM"),
    ("Native EM", "letter - digit, Native EM"),
];

/// Figure 5 (b)'s asterisks as printed: (model, domain, marked). The caption: "Extra conflict
/// losses survive correction for StartLux arithmetic and Qwen3-8B lexical readout"; the
/// figure's text holds exactly two asterisks.
pub static PAPER_MARKS: PaperTable<(String, String, bool)> = PaperTable::new("figure5");

/// The arm of an evidence level and name condition (an index into [`NAMES`]).
pub fn arm(evidence: &str, names: usize) -> String {
    format!("GoldCopy/Full/code/T0/{evidence}{}", NAMES[names].1)
}

/// A Holm p-value, with the figure's asterisk where it is below [`super::HOLM_ALPHA`].
fn holm_cell(p: Option<f64>) -> String {
    starred(p_value(p), p)
}

/// A contrast's estimate with its interval, in percentage points.
fn loss_cell(c: Option<&ContrastRow>) -> String {
    percent_interval(c.and_then(|c| {
        let e = &c.estimate;
        e.difference.map(|d| (d, e.ci_low, e.ci_high))
    }))
}

/// How a domain key prints.
fn domain_label(domain: &str) -> &str {
    match domain {
        ALL_RECORDS => "all records",
        d => paper_domain(d),
    }
}

/// The declared extra-conflict-loss contrasts split by the figure's domains: every selector
/// restricted to one domain, one Holm family per evidence level over every model and both
/// domains.
pub fn per_domain(declared: &[ContrastSpec]) -> Vec<ContrastSpec> {
    let mut out = Vec::new();
    for spec in declared
        .iter()
        .filter(|c| c.difference_of_differences && c.name.starts_with(CONFLICT_LOSS))
    {
        for domain in FIGURE_DOMAINS {
            let side = |selectors: &[Selector]| -> Vec<Selector> {
                selectors
                    .iter()
                    .map(|s| Selector {
                        domain: Some(domain.to_string()),
                        ..s.clone()
                    })
                    .collect()
            };
            out.push(ContrastSpec {
                name: format!("{}, {domain}", spec.name),
                compared: side(&spec.compared),
                reference: side(&spec.reference),
                family: Some(format!("{} per domain", spec.name)),
                ..spec.clone()
            });
        }
    }
    out
}

/// Correct and all trajectories of one arm.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Trajectories correct at the queried position.
    pub correct: u64,
    /// Trajectories of the arm (both cross-model repeats).
    pub n: u64,
}

impl Counts {
    fn percent(&self) -> String {
        if self.n == 0 {
            return UNDEFINED.to_string();
        }
        format!("{:.1}", 100.0 * self.correct as f64 / self.n as f64)
    }
}

/// Per (model, domain or [`ALL_RECORDS`], evidence index): the four name conditions' counts.
pub type Conditions = BTreeMap<(String, String, usize), [Counts; 4]>;

/// B.5: "Cross-model estimates average two shared repeats within parent; Jev's three-repeat
/// estimate is separate": the repeats the figures average, `r0` and `r1`.
pub const CROSS_MODEL_REPEATS: usize = 2;

/// The evidence level and name condition of a binding arm label among the cross-model repeats
/// ([`CROSS_MODEL_REPEATS`]): `…/T0/EVIDENCE[/names-…][/rK]`.
fn binding_arm(label: &str) -> Option<(usize, usize)> {
    let repeat = super::repeats::repeat_of(label);
    if repeat >= CROSS_MODEL_REPEATS {
        return None;
    }
    let base = match repeat {
        0 => label,
        k => label.strip_suffix(&format!("/r{k}"))?,
    };
    EVIDENCE.iter().enumerate().find_map(|(e, evidence)| {
        let names = (0..NAMES.len()).find(|&k| base == arm(evidence, k))?;
        Some((e, names))
    })
}

/// The four name conditions' counts of the binding panel's trajectories, over both
/// cross-model repeats (every parent has each repeat once, so the share is the within-parent
/// average averaged over parents).
pub fn conditions(trajectories: &[Trajectory]) -> Conditions {
    let mut out = Conditions::new();
    for t in trajectories {
        let Some((e, names)) = binding_arm(&t.arm) else {
            continue;
        };
        for domain in [t.domain.as_str(), ALL_RECORDS] {
            let counts = &mut out
                .entry((t.model.clone(), domain.to_string(), e))
                .or_default()[names];
            counts.n += 1;
            counts.correct += u64::from(t.correct);
        }
    }
    out
}

/// One bar of Figure 5 (b): a model's extra conflict loss at one evidence level in one domain
/// (or over all records), with the four conditions' counts.
#[derive(Debug, Clone, PartialEq)]
pub struct ConflictRow {
    /// The model label of the run's records.
    pub model: String,
    /// The evidence level, one of [`EVIDENCE`].
    pub evidence: &'static str,
    /// A bank domain of [`FIGURE_DOMAINS`], or [`ALL_RECORDS`] for all 144 records.
    pub domain: String,
    /// The four name conditions' counts, in [`NAMES`] order (opaque, remapped, aligned,
    /// conflicting).
    pub conditions: [Counts; 4],
    /// The extra-conflict-loss contrast with its interval and Holm p; `None` when not computed.
    pub contrast: Option<ContrastRow>,
}

impl ConflictRow {
    /// Whether our Holm p earns the asterisk (`None`: no p).
    fn marked(&self) -> Option<bool> {
        super::holm_significant(self.contrast.as_ref().and_then(|c| c.sign_p_holm))
    }
}

/// Our rows of Figure 5 (b): per model, evidence level, the figure's domains then all records.
pub fn conflict_rows(conditions: &Conditions, contrasts: &[ContrastRow]) -> Vec<ConflictRow> {
    let mut models = distinct(
        contrasts
            .iter()
            .map(|c| c.model.as_str())
            .chain(conditions.keys().map(|k| k.0.as_str())),
    );
    models.sort_unstable();
    let mut out = Vec::new();
    for model in models {
        for (e, evidence) in EVIDENCE.iter().enumerate() {
            for domain in FIGURE_DOMAINS.into_iter().chain([ALL_RECORDS]) {
                let name = match domain {
                    ALL_RECORDS => format!("{CONFLICT_LOSS}, {evidence}"),
                    d => format!("{CONFLICT_LOSS}, {evidence}, {d}"),
                };
                let contrast = contrasts
                    .iter()
                    .find(|c| c.model == model && c.contrast == name);
                let counts = conditions.get(&(model.to_string(), domain.to_string(), e));
                if contrast.is_none() && counts.is_none() {
                    continue;
                }
                out.push(ConflictRow {
                    model: model.to_string(),
                    evidence,
                    domain: domain.to_string(),
                    conditions: counts.copied().unwrap_or_default(),
                    contrast: contrast.cloned(),
                });
            }
        }
    }
    out
}

fn mark(marked: Option<bool>) -> &'static str {
    match marked {
        Some(true) => "*",
        Some(false) => "no",
        None => UNDEFINED,
    }
}

/// Figure 5 (a): the letter − digit contrasts per model.
fn letter_digit_table(contrasts: &[ContrastRow]) -> Table {
    let mut models = distinct(contrasts.iter().map(|c| c.model.as_str()));
    models.sort_unstable();
    let mut rows = Vec::new();
    for model in models {
        for (endpoint, name) in LETTER_DIGIT {
            let Some(c) = contrasts
                .iter()
                .find(|c| c.model == model && c.contrast == name)
            else {
                continue;
            };
            rows.push(vec![
                model.to_string(),
                endpoint.to_string(),
                c.estimate.units.to_string(),
                loss_cell(Some(c)),
                p_value(c.estimate.sign_p),
                holm_cell(c.sign_p_holm),
            ]);
        }
    }
    Table {
        text_columns: 2,
        header: [
            "Model",
            "Endpoint",
            "Bases",
            "Letter − digit, pp [95% CI]",
            "Sign-flip p",
            "Holm p",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: vec![
            "Letter (a–j) minus digit encoding of the same base, both operations averaged \
             within base; stratified base bootstrap (length, repetition, profile), exact \
             sign-flip p, Holm within the family `letter - digit` over every model and both \
             endpoints; * Holm p < 0.05. The figure's bar is Serial EM."
                .into(),
        ],
    }
}

/// Figure 5 (b): the extra conflict loss per model, evidence and domain.
fn conflict_table(rows: &[ConflictRow]) -> Table {
    let mut header: Vec<String> = ["Model", "Evidence", "Domain"].map(String::from).to_vec();
    header.extend(NAMES.iter().map(|(label, _)| label.to_string()));
    header.extend(["Units", "Extra conflict loss, pp [95% CI]", "Holm p"].map(String::from));
    Table {
        text_columns: 3,
        header,
        rows: rows
            .iter()
            .map(|r| {
                let mut row = vec![
                    r.model.clone(),
                    r.evidence.to_string(),
                    domain_label(&r.domain).to_string(),
                ];
                row.extend(r.conditions.iter().map(Counts::percent));
                row.push(
                    r.contrast
                        .as_ref()
                        .map_or_else(|| UNDEFINED.to_string(), |c| c.estimate.units.to_string()),
                );
                row.push(loss_cell(r.contrast.as_ref()));
                row.push(holm_cell(r.contrast.as_ref().and_then(|c| c.sign_p_holm)));
                row
            })
            .collect(),
        notes: vec![
            "Accuracy (%) at the queried position under each name condition; loss = (aligned − \
             conflicting) − (opaque − remapped), averaged within parent (a symbolic base's two \
             encodings are one unit), exact sign-flip p; * Holm p < 0.05."
                .into(),
            "Per domain: the panel's declared contrast restricted to the domain, Holm per \
             evidence level over every model and both domains. All records: the declared \
             contrast over the panel's 144 records (132 units), Holm within `B.5 extra conflict \
             loss` over every model and evidence level."
                .into(),
        ],
    }
}

/// Figure 5's numbers: ours for (a) and (b), the paper's asterisks, ours beside them.
pub fn figure5_layout(
    letter_digit: &[ContrastRow],
    symbol_cells: &[CellRow],
    conflict: &[ConflictRow],
    level: f64,
    against: &str,
) -> anyhow::Result<Doc> {
    let paper_rows = PAPER_MARKS.rows()?;
    let mut doc = Doc::new(
        "Figure 5: Letter − digit contrasts and the extra option-name conflict loss (numbers)",
    );
    doc.p(
        "Matched symbol operations yield small letter–digit contrasts, while option-name \
         conflicts remain interface dependent. Paired intervals are 95%; asterisks mark Holm \
         p < 0.05 after correction within each comparison family. The paper plots these and \
         prints no numbers; its only printed marks are (b)'s two asterisks.",
    );
    doc.h(2, "(a) Matched digits and letters (copy-reverse)");
    doc.table(letter_digit_table(letter_digit));
    doc.table(tables::cells(symbol_cells, level));
    doc.h(2, "(b) Binding difference in differences (binding)");
    doc.table(conflict_table(conflict));
    doc.h(2, "The paper (Figure 5 (b), asterisks as printed)");
    doc.table(Table {
        text_columns: 2,
        header: ["Model", "Domain", "Holm p < 0.05"]
            .map(String::from)
            .to_vec(),
        rows: paper_rows
            .iter()
            .map(|(m, d, marked)| {
                vec![
                    m.to_string(),
                    d.to_string(),
                    mark(Some(*marked)).to_string(),
                ]
            })
            .collect(),
        notes: vec![
            "\"Extra conflict losses survive correction for StartLux arithmetic and Qwen3-8B \
             lexical readout.\" The bars and (a)'s intervals are plotted without numbers; the \
             figure does not say which evidence level (b) draws."
                .into(),
        ],
    });
    let models = compared_models(
        &paper_rows.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
        against,
    );
    doc.h(
        2,
        format!(
            "This run's asterisks beside the paper's ({})",
            models.join(", ")
        ),
    );
    let mut marks = Table {
        text_columns: 4,
        header: [
            "Model",
            "Evidence",
            "Domain",
            "Paper row",
            "Ours",
            "Paper",
            "Agree",
        ]
        .map(String::from)
        .to_vec(),
        ..Table::default()
    };
    for r in conflict.iter().filter(|r| r.domain != ALL_RECORDS) {
        let domain = paper_domain(&r.domain);
        for (m, d, marked) in paper_rows
            .iter()
            .filter(|p| models.contains(&p.0.as_str()) && p.1 == domain)
        {
            let ours = r.marked();
            marks.rows.push(vec![
                r.model.clone(),
                r.evidence.to_string(),
                domain.to_string(),
                format!("{m} {d}"),
                mark(ours).to_string(),
                mark(Some(*marked)).to_string(),
                match ours {
                    None => UNDEFINED.to_string(),
                    Some(o) if o == *marked => "yes".into(),
                    Some(_) => "no".into(),
                },
            ]);
        }
    }
    marks.notes.push(
        "No printed number to subtract: * Holm p < 0.05, no otherwise; ours at every evidence \
         level."
            .into(),
    );
    doc.table(marks);
    Ok(doc)
}

/// The per-domain extra conflict losses of the binding run (see [`per_domain`]).
fn per_domain_contrasts(run: &LoadedRun) -> anyhow::Result<Vec<ContrastRow>> {
    let Some(first) = run.run_dirs.first() else {
        anyhow::bail!("the binding panel has no run directory");
    };
    let (declared, _) = crate::rundir::declared(first)?;
    let s = &run.stats;
    let (rows, _) = contrast_tables(
        &run.trajectories,
        &per_domain(&declared),
        &[],
        s.bootstrap_draws,
        s.seed,
        s.level,
    )
    .with_context(|| format!("per-domain contrasts of {}", run.display()))?;
    Ok(rows)
}

/// Read the copy-reverse and binding panels and lay out Figure 5's numbers.
pub fn figure5(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let symbols = run_of(runs, "copy-reverse")?.load()?;
    let (letter_digit, symbol_cells) = symbols.contrast_tables()?;
    let binding = run_of(runs, "binding")?.load()?;
    let (mut contrasts, _) = binding.contrast_tables()?;
    contrasts.extend(per_domain_contrasts(&binding)?);
    let rows = conflict_rows(&conditions(&binding.trajectories), &contrasts);
    figure5_layout(
        &letter_digit,
        &symbol_cells,
        &rows,
        symbols.stats.level,
        against,
    )
}

/// One (model, domain) of Figure 6: parents and the opaque-name accuracy per evidence level.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadoutRow {
    /// The model label of the run's records.
    pub model: String,
    /// The bank's domain name (`arithmetic`, `lexical`, or the symbolic records').
    pub domain: String,
    /// Parents averaged over (the first evidence level's); `None` with no trajectory.
    pub parents: Option<u64>,
    /// Raw, Indexed and Direct accuracy in percent with the whole-parent interval, as printed.
    pub accuracy: [String; 3],
}

/// Our rows of Figure 6 from the binding run's trajectories, the figure's domains first: the
/// opaque-name arm's accuracy per parent averaged over the cross-model repeats, then over
/// parents, with the whole-parent interval (items resampled within length; the panel's draws,
/// seed and level).
pub fn readout_rows(
    trajectories: &[Trajectory],
    stats: &StatsConfig,
) -> anyhow::Result<Vec<ReadoutRow>> {
    let mut arms: BTreeMap<(usize, String, String), [Vec<&Trajectory>; 3]> = BTreeMap::new();
    for t in trajectories {
        let Some((e, 0)) = binding_arm(&t.arm) else {
            continue;
        };
        let domain = t.domain.as_str();
        let rank = FIGURE_DOMAINS
            .iter()
            .position(|d| *d == domain)
            .unwrap_or(FIGURE_DOMAINS.len());
        arms.entry((rank, domain.to_string(), t.model.clone()))
            .or_default()[e]
            .push(t);
    }
    let mut out = Vec::new();
    for ((_, domain, model), by_evidence) in arms {
        let mut row = ReadoutRow {
            model,
            domain,
            parents: None,
            accuracy: std::array::from_fn(|_| UNDEFINED.to_string()),
        };
        for (e, side) in by_evidence.iter().enumerate() {
            if side.is_empty() {
                continue;
            }
            let (parents, mean) =
                item_intervals::within_item_mean(side.iter().copied(), |t| t.correct, stats)?;
            row.parents = row.parents.or(Some(parents));
            row.accuracy[e] = percent_interval(mean);
        }
        out.push(row);
    }
    Ok(out)
}

/// Figure 6's numbers: one table per domain (the figure's panels), then the symbolic records.
pub fn figure6_layout(ours: &[ReadoutRow]) -> Doc {
    let mut doc = Doc::new(
        "Figure 6: Accuracy at the queried position under Raw / Indexed / Direct (numbers)",
    );
    doc.p(
        "On 60 supplied-target parents per domain, (a,b) Jev and StartLux approach perfect \
         indexed readout from lower raw accuracy; Qwen3-8B legal-code accuracy stays lower. \
         Intervals are 95% item bootstrap. The paper plots these and prints no numbers, so no \
         difference is taken.",
    );
    for domain in distinct(ours.iter().map(|r| r.domain.as_str())) {
        let heading = match FIGURE_DOMAINS.iter().position(|d| *d == domain) {
            Some(0) => "(a) Arithmetic".to_string(),
            Some(_) => "(b) Lexical".to_string(),
            None => format!("{domain} (symbolic COPY bases of the panel; not drawn)"),
        };
        doc.h(2, heading);
        doc.table(Table {
            text_columns: 1,
            header: ["Model", "Parents", "Raw", "Indexed", "Direct"]
                .map(String::from)
                .to_vec(),
            rows: ours
                .iter()
                .filter(|r| r.domain == domain)
                .map(|r| {
                    let mut row = vec![
                        r.model.clone(),
                        r.parents
                            .map_or_else(|| UNDEFINED.to_string(), |n| n.to_string()),
                    ];
                    row.extend(r.accuracy.iter().cloned());
                    row
                })
                .collect(),
            notes: vec![
                "Accuracy (%) of the opaque-name arm (scored legal codes, template T0), each \
                 parent's two repeats averaged within the parent (B.5: \"Cross-model estimates \
                 average two shared repeats within parent\"), with the whole-parent 95% \
                 bootstrap interval within length; the figure does not name its bars' name \
                 condition."
                    .into(),
            ],
        });
    }
    doc
}

/// Read the binding panel and lay out Figure 6's numbers. The paper prints no numbers for the
/// figure, so there is nothing to take a difference against.
pub fn figure6(runs: &[PanelRun], _against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, "binding")?.load()?;
    Ok(figure6_layout(&readout_rows(
        &run.trajectories,
        &run.stats,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_records::{Domain, Endpoint, Membership};
    use c2s_stats::ContrastEstimate;

    fn contrast(model: &str, name: &str, d: f64, ci: (f64, f64), holm: f64) -> ContrastRow {
        ContrastRow {
            model: model.into(),
            contrast: name.into(),
            family: None,
            estimate: ContrastEstimate {
                units: 60,
                incomplete_units: 0,
                compared_mean: None,
                reference_mean: None,
                difference: Some(d),
                ci_low: Some(ci.0),
                ci_high: Some(ci.1),
                sign_p: Some(holm / 2.0),
            },
            sign_p_holm: Some(holm),
        }
    }

    fn trajectory(item: &str, domain: Domain, arm: &str, correct: bool) -> Trajectory {
        serde_json::from_value(serde_json::json!({
            "item_id": item, "domain": domain, "length": 3, "model": "m", "arm": arm,
            "support": "Full", "output": "1", "correct": correct, "valid": true,
            "membership": Membership::Outside, "aborted": false, "calls": 1, "fills": 0,
            "prompt_tokens": 0, "completion_tokens": 0, "latency_ms": 0.0,
            "position_correct": [true], "steps": [],
        }))
        .expect("a test trajectory")
    }

    /// The caption places the figure's two asterisks: "Extra conflict losses survive
    /// correction for StartLux arithmetic and Qwen3-8B lexical readout."
    #[test]
    fn the_papers_marks_are_the_captions_two() {
        let marked: Vec<(&str, &str)> = PAPER_MARKS
            .rows()
            .unwrap()
            .iter()
            .filter(|p| p.2)
            .map(|p| (p.0.as_str(), p.1.as_str()))
            .collect();
        assert_eq!(marked, [("Qwen3-8B", "lexical"), ("StartLux", "math")]);
        assert_eq!(arm("raw", 0), "GoldCopy/Full/code/T0/raw");
        assert_eq!(binding_arm("GoldCopy/Full/code/T0/direct"), Some((2, 0)));
        assert_eq!(
            binding_arm("GoldCopy/Full/code/T0/raw/names-readable_aligned/r1"),
            Some((0, 2))
        );
        // "Jev's three-repeat estimate is separate": r2 is not a cross-model repeat.
        assert_eq!(binding_arm("GoldCopy/Full/code/T0/raw/r2"), None);
    }

    /// A declared loss split by domain: arithmetic parents lose only under conflicting names
    /// (a loss of 1 each), lexical parents lose under conflict and remapping alike (0).
    #[test]
    fn the_declared_loss_splits_by_domain_and_counts_the_four_conditions() {
        let selector = |k: usize| Selector {
            arm: arm("raw", k),
            domain: None,
            placement: None,
            operation: None,
        };
        let declared = ContrastSpec {
            name: "extra conflict loss, raw".into(),
            compared: vec![selector(2), selector(1)],
            reference: vec![selector(3), selector(0)],
            family: Some("B.5 extra conflict loss".into()),
            difference_of_differences: true,
            endpoint: Endpoint::Correct,
        };
        let specs = per_domain(&[declared]);
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[1].name, "extra conflict loss, raw, lexical");
        assert_eq!(
            specs[1].family.as_deref(),
            Some("extra conflict loss, raw per domain")
        );
        assert!(specs[0]
            .compared
            .iter()
            .chain(&specs[0].reference)
            .all(|s| s.domain.as_deref() == Some("arithmetic")));
        let mut ts = Vec::new();
        for i in 0..6 {
            let item = format!("a{i}");
            // opaque, remapped, aligned right; conflicting wrong.
            for (k, correct) in [true, true, true, false].into_iter().enumerate() {
                ts.push(trajectory(
                    &item,
                    Domain::Arithmetic,
                    &arm("raw", k),
                    correct,
                ));
            }
            let item = format!("l{i}");
            // opaque and aligned right; remapped and conflicting wrong.
            for (k, correct) in [true, false, true, false].into_iter().enumerate() {
                ts.push(trajectory(&item, Domain::Lexical, &arm("raw", k), correct));
            }
        }
        let (rows, _) = contrast_tables(&ts, &specs, &[], 99, 1, 0.95).expect("contrasts");
        assert_eq!(rows[0].estimate.difference, Some(1.0));
        assert_eq!(rows[1].estimate.difference, Some(0.0));
        let conds = conditions(&ts);
        assert_eq!(
            conds[&("m".to_string(), ALL_RECORDS.to_string(), 0)][1],
            Counts { correct: 6, n: 12 }
        );
        let md = figure5_layout(&[], &[], &conflict_rows(&conds, &rows), 0.95, "Jev")
            .unwrap()
            .markdown();
        for want in [
            "| Model | Evidence | Domain | Opaque | Remapped | Aligned | Conflicting | Units | Extra conflict loss, pp [95% CI] | Holm p |",
            "| m | raw | math | 100.0 | 100.0 | 100.0 | 0.0 | 6 | 100.0 [100.0, 100.0] | 0.062 |",
            "| m | raw | lexical | 100.0 | 0.0 | 100.0 | 0.0 | 6 | 0.0 [0.0, 0.0] | 1.000 |",
            "| m | raw | all records | 100.0 | 50.0 | 100.0 | 0.0 | – | – | – |",
            "## This run's asterisks beside the paper's (Jev)",
            "| m | raw | math | Jev math | no | no | yes |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }

    #[test]
    fn figure5_has_the_letter_digit_bars_and_the_papers_marks() {
        let letter_digit = vec![
            contrast("m", "letter - digit, Native EM", 0.01, (-0.02, 0.04), 0.5),
            contrast(
                "m",
                "letter - digit, Serial EM",
                -0.025,
                (-0.075, 0.025),
                0.8,
            ),
        ];
        let cells = vec![CellRow {
            model: "m".into(),
            cell: "letters copy".into(),
            arm: "Serial/Full/code".into(),
            n: 120,
            correct: 30,
            native_correct: Some(60),
            both: Some(20),
            scr: Some(1.0 / 3.0),
            scr_upper_zero: None,
        }];
        let conflict = vec![ConflictRow {
            model: "m".into(),
            evidence: "indexed",
            domain: "lexical".into(),
            conditions: [Counts { correct: 3, n: 4 }; 4],
            contrast: Some(contrast(
                "m",
                "extra conflict loss, indexed, lexical",
                0.2,
                (0.05, 0.35),
                0.01,
            )),
        }];
        let md = figure5_layout(&letter_digit, &cells, &conflict, 0.95, "Qwen3.5-27B")
            .unwrap()
            .markdown();
        for want in [
            "| Model | Endpoint | Bases | Letter − digit, pp [95% CI] | Sign-flip p | Holm p |",
            "| m | Serial EM | 60 | −2.5 [−7.5, 2.5] | 0.400 | 0.800 |",
            "| m | Native EM | 60 | 1.0 [−2.0, 4.0] | 0.250 | 0.500 |",
            "| m | letters copy | Serial/Full/code | 30/120 | 20/60 | 33.3% |",
            "| m | indexed | lexical | 75.0 | 75.0 | 75.0 | 75.0 | 60 | 20.0 [5.0, 35.0] | 0.010 * |",
            "| StartLux | math | * |",
            "## This run's asterisks beside the paper's (Qwen3-8B, StartLux, Jev)",
            "| m | indexed | lexical | Qwen3-8B lexical | * | * | yes |",
            "| m | indexed | lexical | StartLux lexical | * | no | no |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        let serial = md.find("| m | Serial EM |").expect("serial row");
        assert!(serial < md.find("| m | Native EM |").expect("native row"));
    }

    /// B.5: "Cross-model estimates average two shared repeats within parent": each parent's
    /// r0 and r1 are averaged before the parents are.
    #[test]
    fn figure6_has_one_panel_per_domain_with_the_opaque_accuracy() {
        let mut ts = Vec::new();
        let repeats = |ts: &mut Vec<Trajectory>, item: &str, domain, evidence, both: [bool; 2]| {
            ts.push(trajectory(item, domain, &arm(evidence, 0), both[0]));
            let r1 = format!("{}/r1", arm(evidence, 0));
            ts.push(trajectory(item, domain, &r1, both[1]));
        };
        for i in 0..4 {
            let item = format!("l{i}");
            // Raw: right in both repeats on l0, in one repeat on l1 and l2, never on l3.
            let raw = [[true, true], [true, false], [false, true], [false, false]][i];
            repeats(&mut ts, &item, Domain::Lexical, "raw", raw);
            repeats(&mut ts, &item, Domain::Lexical, "indexed", [true, true]);
            repeats(
                &mut ts,
                &format!("a{i}"),
                Domain::Arithmetic,
                "direct",
                [true, true],
            );
        }
        repeats(
            &mut ts,
            "s0",
            Domain::SymbolicLetters,
            "raw",
            [false, false],
        );
        // A third repeat and other name conditions are not Figure 6's.
        ts.push(trajectory(
            "l3",
            Domain::Lexical,
            "GoldCopy/Full/code/T0/raw/r2",
            true,
        ));
        ts.push(trajectory("l3", Domain::Lexical, &arm("raw", 1), true));
        let stats = StatsConfig {
            bootstrap_draws: 999,
            ..StatsConfig::default()
        };
        let ours = readout_rows(&ts, &stats).unwrap();
        assert_eq!(ours.len(), 3, "{ours:?}");
        let md = figure6_layout(&ours).markdown();
        for want in [
            "## (a) Arithmetic",
            "| Model | Parents | Raw | Indexed | Direct |",
            "| m | 4 | – | – | 100.0 [100.0, 100.0] |",
            "## (b) Lexical",
            "| m | 4 | 50.0 [",
            "| 100.0 [100.0, 100.0] | – |",
            "## symbolic_letters (symbolic COPY bases of the panel; not drawn)",
            "| m | 1 | 0.0 [0.0, 0.0] | – | – |",
            "prints no numbers",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert!(md.find("(a) Arithmetic") < md.find("(b) Lexical"));
    }
}
