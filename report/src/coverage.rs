//! The report of candidate-coverage runs (`shared/paper/candidate-coverage-typed-decisions.txt`):
//! what each number means, full-set classification, per-cell metrics of every subset
//! (accuracy, the native none rule's detection / false rejection / acceptance / error among
//! accepted, present/absent discrimination of the coverage scores), calibrated thresholds with
//! their tested rates and one detection-vs-false-rejection figure per task, the plan audit
//! beside the document's totals, the precision audits (sums, quantization,
//! renormalization, raw-score choices, the pair closing rule, scoring rules) and the missing
//! decisions, all from [`c2s_stats::coverage::coverage_summary`] and the runs'
//! `coverage_plan_audit.json`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context;
use c2s_records::NameVariant;
use c2s_sinks::Manifest;
use c2s_stats::coverage::{CoverageScore, CoverageSummary, Rate, Subset, ThresholdRow};
use c2s_stats::Estimate;

use c2s_rundir::{RunPlan, TokenAudit};

use super::doc::{Doc, Table};
use super::figures::{
    png_font_problem, DetectionFigure, DetectionPanel, MarkerShape, PointSeries, RulePoint,
};
use super::tables::UNDEFINED;
use super::{dir_name, model_items, scalar, utc, FigureWriter, ReportOutput, Stems};

/// What a coverage report is made from.
pub struct CoverageReportInput<'a> {
    /// The coverage run directory reported on; its name titles the report without a manifest.
    pub run_dir: &'a Path,
    /// Further run directories read with the first (e.g. one per model).
    pub other_runs: &'a [PathBuf],
    /// The first run's `manifest.json`, when present (header and settings); `None` reports
    /// the default statistics settings.
    pub manifest: Option<&'a Manifest>,
    /// The coverage statistics of every directory's decisions, all the report's tables and
    /// figures.
    pub summary: &'a CoverageSummary,
    /// Each run directory's plan audit.
    pub plans: &'a [RunPlan],
    /// Missing and failed planned decisions (a partial report when not empty).
    pub incomplete: &'a [String],
    /// Rows of the runs' `rejects/` datasets.
    pub rejects: usize,
    /// Each run directory's token replay (`choice2seq coverage --tokens`), or why it could
    /// not be made (the model file is gone, say).
    pub token_audits: &'a [(String, Result<TokenAudit, String>)],
}

/// `value [low, high] (successes/n)` in percent with one decimal; “–” when undefined.
pub fn rate_cell(r: &Rate) -> String {
    let counts = format!("({}/{})", r.successes, r.n);
    match r.estimate.value {
        None => format!("{UNDEFINED} {counts}"),
        Some(v) => match &r.estimate.interval {
            Some(i) => format!(
                "{:.1} [{:.1}, {:.1}] {counts}",
                100.0 * v,
                100.0 * i.low,
                100.0 * i.high
            ),
            None => format!("{:.1} {counts}", 100.0 * v),
        },
    }
}

/// `value [low, high]` with three decimals; “–” when undefined.
pub fn estimate_cell(e: &Estimate) -> String {
    match (e.value, &e.interval) {
        (None, _) => UNDEFINED.to_string(),
        (Some(v), Some(i)) => format!("{v:.3} [{:.3}, {:.3}]", i.low, i.high),
        (Some(v), None) => format!("{v:.3}"),
    }
}

mod audits;

pub use audits::{
    missing_table, pair_closing_table, plan_checks_table, plan_tasks_table, plan_totals_table,
    prob_sums_table, quantization_table, rule_changes_table, token_replay_table,
};

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| UNDEFINED.to_string(), |x| format!("{x:.decimals$}"))
}

fn signed6(v: Option<f64>) -> String {
    v.map_or_else(|| UNDEFINED.to_string(), |x| format!("{x:+.6}"))
}

fn signed4(v: Option<f64>) -> String {
    v.map_or_else(
        || UNDEFINED.to_string(),
        |x| {
            if x < 0.0 {
                format!("−{:.4}", -x)
            } else {
                format!("+{x:.4}")
            }
        },
    )
}

/// A table's k: the number, marked when it is every label but the reference.
fn k_cell(k: usize, all_but_reference: bool) -> String {
    if all_but_reference {
        format!("{k} (all but reference)")
    } else {
        k.to_string()
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The heading of a subset's tables.
pub fn subset_title(s: Subset) -> &'static str {
    match s {
        Subset::All => "All test texts",
        Subset::FullSetCorrect => "Full-set-correct texts",
        Subset::SharedCorrect => "Shared-correct texts",
    }
}

/// The legend label of a rule (`native` or a score's name).
pub fn rule_label(rule: &str) -> String {
    if rule == "native" {
        "native rule (none chosen)".to_string()
    } else {
        format!("{rule} < t (calibrated)")
    }
}

/// The marker of a rule: the native rule a filled circle, each score a hollow shape.
fn rule_shape(score: Option<CoverageScore>) -> MarkerShape {
    match score {
        None => MarkerShape::Circle,
        Some(CoverageScore::MaxProb) => MarkerShape::Square,
        Some(CoverageScore::NegEntropy) => MarkerShape::Triangle,
        Some(CoverageScore::Margin) => MarkerShape::Diamond,
        Some(CoverageScore::NotNone) => MarkerShape::Cross,
    }
}

fn interval_note(s: &CoverageSummary) -> String {
    format!(
        "Rates are percentages with the count (successes/n). Intervals are {:.0}% percentile \
         intervals of {} bootstrap draws over texts (a text's present and absent decisions move \
         together), seed {}; not adjusted for simultaneous comparisons. “–” = undefined (empty \
         denominator), never 0.",
        100.0 * s.config.level,
        s.config.draws,
        s.config.seed
    )
}

/// Full-set classification per (model, task, names).
pub fn full_set_table(s: &CoverageSummary) -> Table {
    Table {
        text_columns: 3,
        header: strings(&[
            "Model",
            "Task",
            "Names",
            "Texts",
            "Accuracy [CI]",
            "Full-set correct",
            "Shared correct",
            "Missing",
        ]),
        rows: s
            .full_set
            .iter()
            .map(|r| {
                vec![
                    r.model.clone(),
                    r.task.clone(),
                    r.names.as_str().to_string(),
                    r.accuracy.n.to_string(),
                    rate_cell(&r.accuracy),
                    r.full_set_correct.to_string(),
                    r.shared_correct.to_string(),
                    r.missing.to_string(),
                ]
            })
            .collect(),
        notes: vec![
            interval_note(s),
            "Full-set decisions offer every label of the task, without the none option. \
             Full-set correct = texts whose full-set choice is the reference; shared correct = \
             texts full-set correct for every model of the task."
                .to_string(),
        ],
    }
}

/// Accuracy and the native rule's rates of every cell of one subset.
pub fn cells_table(s: &CoverageSummary, subset: Subset) -> Table {
    Table {
        text_columns: 4,
        header: strings(&[
            "Model",
            "Task",
            "k",
            "Names",
            "Texts",
            "Missing",
            "Accuracy [CI]",
            "Accuracy, none offered [CI]",
            "Detection D [CI]",
            "False rejection FR [CI]",
            "Acceptance [CI]",
            "Error among accepted, pooled [CI]",
            "Error among accepted, present sets [CI]",
            "Error among accepted, absent sets [CI]",
        ]),
        rows: s
            .cells
            .iter()
            .filter(|c| c.subset == subset)
            .map(|c| {
                vec![
                    c.model.clone(),
                    c.task.clone(),
                    k_cell(c.k, c.all_but_reference),
                    c.names.as_str().to_string(),
                    c.texts.to_string(),
                    c.missing.to_string(),
                    rate_cell(&c.accuracy),
                    rate_cell(&c.accuracy_with_none),
                    rate_cell(&c.detection),
                    rate_cell(&c.false_rejection),
                    rate_cell(&c.acceptance),
                    rate_cell(&c.error_among_accepted),
                    rate_cell(&c.error_among_accepted_present),
                    rate_cell(&c.error_among_accepted_absent),
                ]
            })
            .collect(),
        notes: vec![
            interval_note(s),
            "Accuracy: present sets without the none option. Accuracy, none offered: present \
             sets with it (a rejection is not correct). D = rejections among absent sets, FR = \
             rejections among present sets, acceptance = non-rejections among present and \
             absent sets together, error among accepted = accepted choices that are not the \
             reference: pooled, on present sets (G = 1: \"Even when G=1, the selected \
             candidate can be wrong\") and on absent sets (G = 0: every acceptance is an \
             error). k marked “all but reference” is L − 1 for a task of L labels."
                .to_string(),
        ],
    }
}

/// Present/absent discrimination of every coverage score in every cell of one subset.
pub fn discrimination_table(s: &CoverageSummary, subset: Subset) -> Table {
    let mut rows = Vec::new();
    for c in s.cells.iter().filter(|c| c.subset == subset) {
        for d in &c.discrimination {
            rows.push(vec![
                c.model.clone(),
                c.task.clone(),
                c.k.to_string(),
                c.names.as_str().to_string(),
                d.score.as_str().to_string(),
                d.pairs.to_string(),
                estimate_cell(&d.auroc),
                estimate_cell(&d.average_precision),
            ]);
        }
    }
    Table {
        text_columns: 5,
        header: strings(&[
            "Model",
            "Task",
            "k",
            "Names",
            "Score",
            "Pairs",
            "AUROC [CI]",
            "AP, absent positive [CI]",
        ]),
        rows,
        notes: vec![format!(
            "Pairs = texts with both a present and an absent decision of the score's variant \
             (max_prob, neg_entropy, margin: without the none option; not_none: with it). AUROC: \
             present sets ranked above absent ones by the score (ties count half; 0.5 = no \
             discrimination). AP: average precision of finding the absent sets, lowest score \
             first (chance = the absent share of the pairs' decisions, 0.5). {:.0}% bootstrap \
             intervals over texts.",
            100.0 * s.config.level
        )],
    }
}

/// The native rule and every calibrated threshold with calibration and tested rates.
pub fn thresholds_table(s: &CoverageSummary) -> Table {
    Table {
        text_columns: 6,
        header: strings(&[
            "Model",
            "Task",
            "k",
            "Names",
            "Tested on",
            "Rule",
            "Threshold t",
            "Calibration FR",
            "Calibration D",
            "Test D [CI]",
            "Test FR [CI]",
        ]),
        rows: s
            .thresholds
            .iter()
            .map(|t| {
                vec![
                    t.model.clone(),
                    t.task.clone(),
                    k_cell(t.k, t.all_but_reference),
                    t.names.as_str().to_string(),
                    t.subset.as_str().to_string(),
                    t.rule.clone(),
                    opt(t.threshold, 4),
                    rate_cell(&t.calibration_false_rejection),
                    rate_cell(&t.calibration_detection),
                    rate_cell(&t.test_detection),
                    rate_cell(&t.test_false_rejection),
                ]
            })
            .collect(),
        notes: vec![
            format!(
                "A score rule rejects iff score < t; t is the largest calibration present-set \
                 score keeping the calibration false rejection at or below {:.1}%, from all \
                 calibration texts of the cell, and tested on all test texts and on the \
                 full-set-correct and shared-correct ones. The native \
                 rule rejects when the none option is chosen (no threshold). Test intervals \
                 condition on t (thresholds are not re-chosen in the bootstrap); the \
                 calibration constraint gives no population guarantee.",
                100.0 * s.config.max_false_rejection
            ),
            interval_note(s),
        ],
    }
}

/// The tested (FR, D) point of a rule, when both rates are defined.
fn tested_point(t: &ThresholdRow) -> Option<RulePoint> {
    Some(RulePoint {
        shape: rule_shape(t.score),
        false_rejection: t.test_false_rejection.estimate.value?,
        detection: t.test_detection.estimate.value?,
    })
}

/// The detection-vs-false-rejection figure of one task: one panel per (model, names), one
/// colour per k, one marker per rule.
pub fn detection_figure(s: &CoverageSummary, task: &str) -> DetectionFigure {
    let rows: Vec<&ThresholdRow> = s
        .thresholds
        .iter()
        .filter(|t| t.task == task && t.subset == Subset::All)
        .collect();
    let names: BTreeSet<NameVariant> = rows.iter().map(|t| t.names).collect();
    let groups: BTreeSet<(&str, NameVariant)> =
        rows.iter().map(|t| (t.model.as_str(), t.names)).collect();
    let panels = groups
        .into_iter()
        .map(|(model, n)| {
            let ks: BTreeSet<usize> = rows
                .iter()
                .filter(|t| t.model == model && t.names == n)
                .map(|t| t.k)
                .collect();
            DetectionPanel {
                title: format!("{model} · {} names", n.as_str()),
                series: ks
                    .into_iter()
                    .map(|k| PointSeries {
                        label: format!("k = {k}"),
                        points: rows
                            .iter()
                            .filter(|t| t.model == model && t.names == n && t.k == k)
                            .filter_map(|t| tested_point(t))
                            .collect(),
                    })
                    .collect(),
            }
        })
        .collect();
    let mut rules = vec![(rule_label("native"), rule_shape(None))];
    rules.extend(
        CoverageScore::ALL
            .iter()
            .map(|&c| (rule_label(c.as_str()), rule_shape(Some(c)))),
    );
    DetectionFigure {
        title: format!("Detection vs false rejection — {task}"),
        columns: names.len(),
        panels,
        rules,
    }
}

fn header(doc: &mut Doc, input: &CoverageReportInput<'_>, run_name: &str) {
    let s = input.summary;
    let models: BTreeSet<&str> = s
        .audit
        .prob_sums
        .iter()
        .map(|p| p.model.as_str())
        .chain(s.missing.iter().map(|m| m.model.as_str()))
        .collect();
    let tasks: BTreeSet<&str> = s
        .cells
        .iter()
        .map(|c| c.task.as_str())
        .chain(s.full_set.iter().map(|r| r.task.as_str()))
        .chain(s.missing.iter().map(|m| m.task.as_str()))
        .collect();
    let ok: u64 = s.audit.prob_sums.iter().map(|p| p.decisions).sum();
    let missing: u64 = s.missing.iter().map(|m| m.count).sum();
    let join = |v: &BTreeSet<&str>| v.iter().copied().collect::<Vec<_>>().join(", ");

    doc.h(2, "Run");
    let mut run = vec![
        ("Run".to_string(), run_name.to_string()),
        ("Protocol".to_string(), "candidate coverage".to_string()),
        ("Directory".to_string(), input.run_dir.display().to_string()),
    ];
    if !input.other_runs.is_empty() {
        run.push((
            "Read with".to_string(),
            input
                .other_runs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
                + " (one summary: the shared-correct subset spans every directory's models; \
                   the run header below is the first directory's)",
        ));
    }
    run.push(("Models (decisions)".to_string(), join(&models)));
    run.push(("Tasks".to_string(), join(&tasks)));
    run.push((
        "Data".to_string(),
        format!(
            "{} decisions ({missing} missing), {} rejected inputs",
            ok + missing,
            input.rejects
        ),
    ));
    let Some(m) = input.manifest else {
        run.push((
            "Manifest".to_string(),
            "none (manifest.json absent): the statistics use the default settings".to_string(),
        ));
        run.push(report_settings(s));
        doc.list(run);
        return;
    };
    run.push(("Started".to_string(), utc(m.started_at_ms)));
    run.push(("Last written".to_string(), utc(m.updated_at_ms)));
    if m.resumed > 0 {
        run.push(("Resumed".to_string(), format!("{} times", m.resumed)));
    }
    let mut build = format!("choice2seq {}", m.crate_version);
    for part in [&m.rustc, &m.target, &m.profile].into_iter().flatten() {
        build.push_str(&format!(", {part}"));
    }
    run.push(("Written by".to_string(), build));
    doc.list(run);

    doc.h(3, "Model identity");
    let model = model_items(m);
    if model.is_empty() {
        doc.p(format!("Models in the decisions: {}", join(&models)));
    } else {
        doc.list(model);
    }

    doc.h(3, "Configuration");
    let c = &m.config;
    let cov = &c["coverage"];
    let list = |v: &serde_json::Value| -> Option<String> {
        let a = v.as_array()?;
        Some(a.iter().filter_map(scalar).collect::<Vec<_>>().join(", "))
    };
    let mut items = Vec::new();
    if let Some(f) = scalar(&c["file"]) {
        items.push(("Config file".to_string(), f));
    }
    if let Some(e) = scalar(&c["model"]["engine"]) {
        let path = scalar(&c["model"]["path"]).unwrap_or_default();
        items.push(("Engine".to_string(), format!("{e} ({path})")));
    }
    if let Some(sources) = c["sources"].as_array() {
        let v: Vec<String> = sources
            .iter()
            .map(|s| {
                let kind = scalar(&s["kind"]).unwrap_or_else(|| "?".into());
                let what = scalar(&s["path"])
                    .or_else(|| scalar(&s["name"]))
                    .unwrap_or_default();
                format!("{kind} {what}")
            })
            .collect();
        if !v.is_empty() {
            items.push(("Sources".to_string(), v.join("; ")));
        }
    }
    for (key, label) in [
        ("catalogues", "Catalogues"),
        ("ks", "Ordinary sizes k"),
        ("names", "Name variants"),
        ("none", "None option offered"),
    ] {
        if let Some(v) = list(&cov[key]) {
            items.push((label.to_string(), v));
        }
    }
    if let Some(f) = scalar(&cov["full_set"]) {
        items.push(("Full-set decisions".to_string(), f));
    }
    if let Some(x) = cov["max_false_rejection"].as_f64() {
        items.push((
            "Calibration constraint".to_string(),
            format!("false rejection ≤ {:.1}%", 100.0 * x),
        ));
    }
    if let Some(d) = scalar(&cov["quantize_decimals"]) {
        items.push(("Quantization audit".to_string(), format!("{d} decimals")));
    }
    items.extend(super::provenance_items(m));
    items.push(report_settings(s));
    doc.list(items);
}

fn report_settings(s: &CoverageSummary) -> (String, String) {
    let c = &s.config;
    (
        "This report".to_string(),
        format!(
            "{} bootstrap draws, seed {}, level {}; calibration false rejection ≤ {:.1}%; \
             quantization audit at {} decimals",
            c.draws,
            c.seed,
            c.level,
            100.0 * c.max_false_rejection,
            c.quantize_decimals
        ),
    )
}

fn explanation(doc: &mut Doc, s: &CoverageSummary) {
    doc.h(2, "What the numbers mean");
    doc.p(
        "Each test text is asked with paired candidate sets of the same ordinary size k: a \
         present set that offers its reference label and an absent set in which another label \
         takes the reference's slot, each without and with a final none option, under natural \
         or neutral option names (same descriptions and order). A cell is one model, task, k \
         and name variant. Candidate coverage (is the reference offered?) is a different \
         capability from classification (is the choice right?) and from a rejection policy \
         (what is accepted?), so they are reported side by side.",
    );
    doc.list(vec![
        (
            "Accuracy".to_string(),
            "ordinary accuracy on present sets without the none option: the choice is the \
             reference. The variant with the none option offered counts a rejection as not \
             correct."
                .to_string(),
        ),
        (
            "Native rule".to_string(),
            "with the none option offered, the model rejects when it chooses none. Detection \
             D = rejections among absent sets; false rejection FR = rejections among present \
             sets; acceptance = non-rejections among present and absent sets together; error \
             among accepted = accepted choices that are not the reference (an accepted absent \
             set is always an error). A high D alone can come from rejecting nearly everything: \
             read it with FR."
                .to_string(),
        ),
        (
            "Coverage scores".to_string(),
            "higher = more likely covered. max_prob = the largest ordinary probability, \
             neg_entropy = minus the entropy (nats), margin = largest minus second largest \
             (each over the ordinary options renormalized, asked without the none option); \
             not_none = 1 − p(none), asked with it."
                .to_string(),
        ),
        (
            "Discrimination".to_string(),
            "AUROC of a score separating present from absent sets over paired texts (0.5 = \
             none, 1 = every present set above every absent one) and average precision (AP) \
             with the absent sets as the positive class, lowest score first."
                .to_string(),
        ),
        (
            "Calibrated thresholds".to_string(),
            format!(
                "a score rule rejects when the score is below t, chosen on the calibration \
                 split's present sets as the largest t whose calibration false rejection is at \
                 most {:.1}%. The tested D and FR on the test split are the operational result; \
                 the calibration constraint is no guarantee for the test rates, and the \
                 thresholds use task labels (not label-free rules).",
                100.0 * s.config.max_false_rejection
            ),
        ),
        (
            "Subsets".to_string(),
            "all test texts; full-set-correct texts (the model's choice over the task's full \
             label set, without none, is the reference); shared-correct texts (full-set \
             correct for every model of the task). Both are selected by the models: \
             descriptive, not causal."
                .to_string(),
        ),
        (
            "Precision audits".to_string(),
            format!(
                "probability sums deviating from 1 by more than 0.001 (not repaired), and every \
                 probability rounded to {} decimals with the choices kept, reporting how much \
                 each AUROC moves.",
                s.audit.quantize_decimals
            ),
        ),
        (
            "Missing decisions".to_string(),
            "failed requests are counted per reason and left out, never counted as rejections \
             or errors."
                .to_string(),
        ),
        (
            "Intervals".to_string(),
            format!(
                "{:.0}% percentile bootstrap over texts ({} draws, seed {}), a text's present \
                 and absent decisions moving together; not adjusted for simultaneous \
                 comparisons.",
                100.0 * s.config.level,
                s.config.draws,
                s.config.seed
            ),
        ),
    ]);
}

/// Writes the coverage report `out/report.md`, `out/report.html` and `out/figures/*`.
pub fn write_coverage_report(
    input: &CoverageReportInput<'_>,
    out: &Path,
) -> anyhow::Result<ReportOutput> {
    let s = input.summary;
    let fig_dir = out.join("figures");
    fs::create_dir_all(&fig_dir).with_context(|| format!("creating {}", fig_dir.display()))?;
    let font_problem = png_font_problem();
    let mut writer = FigureWriter {
        dir: fig_dir,
        png: font_problem.is_none(),
        stems: Stems::default(),
        files: Vec::new(),
        png_problems: Vec::new(),
    };
    let run_name = input
        .manifest
        .map(|m| m.run.clone())
        .unwrap_or_else(|| dir_name(input.run_dir));
    let mut doc = Doc::new(format!("choice2seq coverage report — {run_name}"));
    header(&mut doc, input, &run_name);
    if let Some(p) = &font_problem {
        doc.p(format!(
            "Note: no PNG figures. {p}; the figures below are SVGs."
        ));
    }
    if !input.incomplete.is_empty() {
        doc.p(format!(
            "PARTIAL: an incomplete collection ({} planned decisions missing or failed, \
             first: {}). Every figure covers what is there; \"Validation rejects incomplete \
             collections\", so these are not final results.",
            input.incomplete.len(),
            input
                .incomplete
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    explanation(&mut doc, s);

    doc.h(2, "Plan audit");
    if input.plans.iter().all(|p| p.audit.is_none()) {
        for p in input.plans {
            doc.p(format!(
                "{}: {}",
                p.run_dir,
                p.note.as_deref().unwrap_or("no plan audit")
            ));
        }
    } else {
        doc.table(plan_totals_table(input.plans));
        doc.table(plan_tasks_table(input.plans));
        doc.table(plan_checks_table(input.plans));
    }

    doc.h(2, "Full-set classification");
    if s.full_set.is_empty() {
        doc.p("No full-set decisions (the full-set-correct and shared-correct subsets are empty).");
    } else {
        doc.table(full_set_table(s));
    }

    doc.h(2, "Per-cell metrics");
    for subset in Subset::ALL {
        doc.h(3, subset_title(subset));
        if !s.cells.iter().any(|c| c.subset == subset) {
            doc.p("No test cells.");
            continue;
        }
        doc.h(
            4,
            format!("Accuracy and the native rule — {}", subset.as_str()),
        );
        doc.table(cells_table(s, subset));
        doc.h(
            4,
            format!("Present/absent discrimination — {}", subset.as_str()),
        );
        doc.table(discrimination_table(s, subset));
    }

    doc.h(2, "Calibrated thresholds");
    if s.thresholds.is_empty() {
        doc.p("No present/absent decisions.");
    } else {
        doc.table(thresholds_table(s));
        let tasks: BTreeSet<&str> = s.thresholds.iter().map(|t| t.task.as_str()).collect();
        for task in tasks {
            doc.h(3, format!("Detection vs false rejection — {task}"));
            let fig = detection_figure(s, task);
            writer.write(
                &mut doc,
                &fig,
                &["detection-vs-false-rejection", task],
                format!("Detection vs false rejection — {task}"),
                format!(
                    "Tested operating points on the test split, one panel per model and name \
                     variant, one colour per k: the native rule (filled circle, none chosen) \
                     and each score's threshold calibrated at false rejection ≤ {:.1}% (hollow \
                     markers); x = false rejection among present sets, y = detection among \
                     absent sets. On the dashed diagonal D = FR a rule rejects regardless of \
                     coverage; up and to the left is better. Undefined points are left out",
                    100.0 * s.config.max_false_rejection
                ),
            )?;
        }
    }

    doc.h(2, "Precision audit");
    doc.h(3, "Probability sums");
    if s.audit.prob_sums.is_empty() {
        doc.p("No non-missing decisions.");
    } else {
        doc.table(prob_sums_table(s));
    }
    doc.h(3, "Score quantization");
    match &s.audit.largest_change {
        Some(q) => doc.p(format!(
            "Rounding every probability to {} decimals (choices kept) changes an AUROC by at \
             most {}: {} · {} · k = {} · {} names · {} ({} → {}).",
            s.audit.quantize_decimals,
            signed4(q.change),
            q.model,
            q.task,
            q.k,
            q.names.as_str(),
            q.score.as_str(),
            opt(q.auroc, 4),
            opt(q.quantized_auroc, 4)
        )),
        None => doc.p("No defined AUROC to quantize."),
    }
    if !s.audit.quantization.is_empty() {
        doc.table(quantization_table(s));
    }

    doc.h(3, "Distribution renormalization");
    match &s.audit.largest_renormalization_change {
        Some(q) => doc.p(format!(
            "Dividing every distribution by its sum changes an AUROC by at most {}: {} · {} · \
             k = {} · {} names · {} ({} → {}).",
            signed6(q.renormalization_change),
            q.model,
            q.task,
            q.k,
            q.names.as_str(),
            q.score.as_str(),
            opt(q.auroc, 6),
            opt(q.renormalized_auroc, 6)
        )),
        None => doc.p("No defined AUROC to renormalize."),
    }
    doc.h(3, "The pair's closing rule");
    if s.audit.pair_closing.is_empty() {
        doc.p("No pair carries raw scores (decisions written before they were kept).");
    } else {
        doc.table(pair_closing_table(s));
    }
    doc.h(3, "Scoring rules");
    if s.audit.rule_changes.is_empty() {
        doc.p("No decision carries token log-probabilities (written before they were kept).");
    } else {
        doc.table(rule_changes_table(s));
    }
    doc.h(3, "Token replay");
    doc.table(token_replay_table(input.token_audits));

    doc.h(2, "Missing decisions");
    if s.missing.is_empty() {
        doc.p("No missing decisions.");
    } else {
        doc.table(missing_table(s));
    }

    doc.h(2, "Methods");
    doc.list(vec![
        (
            "Metrics".to_string(),
            "recomputed offline from decisions/ (the same computation as `choice2seq \
             coverage`)"
                .to_string(),
        ),
        (
            "Undefined".to_string(),
            "a value with an empty denominator prints as “–” and is left out of the figures"
                .to_string(),
        ),
    ]);
    super::finish(doc, writer, font_problem, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use c2s_stats::Interval;

    fn r(successes: u64, n: u64, value: Option<f64>, interval: Option<(f64, f64)>) -> Rate {
        Rate {
            successes,
            n,
            estimate: Estimate {
                value,
                interval: interval.map(|(low, high)| Interval { low, high }),
                defined_draws: 0,
                dropped_draws: 0,
            },
        }
    }

    #[test]
    fn rates_print_counts_and_undefined() {
        assert_eq!(
            rate_cell(&r(3, 4, Some(0.75), Some((0.5, 1.0)))),
            "75.0 [50.0, 100.0] (3/4)"
        );
        assert_eq!(rate_cell(&r(0, 0, None, None)), "– (0/0)");
        assert_eq!(signed4(Some(-0.06875)), "−0.0688");
        assert_eq!(rule_label("native"), "native rule (none chosen)");
    }
}
