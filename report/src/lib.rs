//! `c2s-report`: the run report, its tables and figures, and the paper's exhibits.
//!
//! Layers: above `c2s-rundir` (the run directories it reads); `c2s-serve` draws the live
//! page's tables and figures with it and the `choice2seq` binary prints with it.
//!
//! - the report itself ([`write_report`]): `report.md` and `report.html` with paper-style
//!   tables and figures (SVG and PNG under `figures/`), built from metrics recomputed offline
//!   and from the trajectories; [`coverage`]: a candidate-coverage run's report;
//! - [`doc`], [`tables`], [`figures`]: the document model, the paired tables and the figures;
//! - [`holm`]: the Holm families;
//! - [`exhibits`]: the exhibit engine, which rebuilds the paper's tables and figures from the
//!   specs under `exhibits/` (embedded at build time by `build.rs`);
//! - [`text`]: the coverage and dialogue summaries as console text.
//!
//! The report's sections: run header (run, model identity, configuration from `manifest.json` when
//! present), paired correctness over all lengths, Native EM and SCR by length (figure and one table
//! per comparison), confidence (table, reliability diagrams, coverage–precision curves), the
//! independence reference, unit contrasts, the Holm families beside the paper's sizes ([`holm`]),
//! per-arm trajectory counts, and the methods.
//!
//! A candidate-coverage run gets its own report ([`coverage`]).
//!
//! The Markdown shows the PNGs (and links the SVGs); the HTML embeds the SVGs (and links the
//! PNGs). Without a usable font the PNGs are skipped and the Markdown shows the SVGs.

#![deny(missing_docs)]

pub mod coverage;
pub mod doc;
pub mod exhibits;
pub mod figures;
pub mod holm;
pub mod tables;
pub mod text;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context;
use c2s_records::{Metric, Trajectory};
use c2s_sinks::Manifest;
use c2s_stats::{calibration_report, FamilyScope, MetricRow, ScoreKind, StatsConfig};
use serde_json::Value;

use doc::{Doc, FigureRef};
use figures::{
    coverage_figure, png_font_problem, render, slug, ByLengthFigure, Figure, LengthPoint,
    ReliabilityFigure, Series,
};
use tables::{Group, MetricIndex};

/// What a report is made from.
pub struct ReportInput<'a> {
    /// The run directory reported on; its name titles the report when there is no manifest.
    pub run_dir: &'a Path,
    /// Further run directories counted with the first (e.g. other models over the same
    /// items); the header and settings are the first directory's.
    pub other_runs: &'a [PathBuf],
    /// The run's `manifest.json`, when present: run name, model identity and configuration
    /// for the header; `None` falls back to the records' model labels and default settings.
    pub manifest: Option<&'a Manifest>,
    /// The statistics settings the metrics were recomputed with.
    pub cfg: &'a StatsConfig,
    /// The metric rows recomputed offline, read by the tables and the by-length figures.
    pub rows: &'a [MetricRow],
    /// The run's trajectories: per-arm counts and the confidence section's reliability data.
    pub trajectories: &'a [Trajectory],
    /// Paired outcomes read.
    pub outcomes: usize,
    /// The run's declared unit contrasts and cells (`choice2seq contrasts`).
    pub contrasts: &'a [c2s_stats::ContrastRow],
    /// The run's declared cells (`[[stats.cells]]`), printed beside the contrasts.
    pub cells: &'a [c2s_stats::CellRow],
}

/// What was written.
#[derive(Debug)]
pub struct ReportOutput {
    /// Path of the `report.md` written.
    pub markdown: PathBuf,
    /// Path of the `report.html` written.
    pub html: PathBuf,
    /// Every figure file written (SVG and PNG).
    pub figure_files: Vec<PathBuf>,
    /// Why PNGs are missing, when they are.
    pub png_problems: Vec<String>,
}

/// Figure stems, unique within a report.
#[derive(Default)]
struct Stems(BTreeSet<String>);

impl Stems {
    fn take(&mut self, parts: &[&str]) -> String {
        let base = slug(parts);
        let mut s = base.clone();
        let mut k = 2;
        while !self.0.insert(s.clone()) {
            s = format!("{base}-{k}");
            k += 1;
        }
        s
    }
}

struct FigureWriter {
    dir: PathBuf,
    png: bool,
    stems: Stems,
    files: Vec<PathBuf>,
    png_problems: Vec<String>,
}

impl FigureWriter {
    fn write<F: Figure>(
        &mut self,
        doc: &mut Doc,
        fig: &F,
        parts: &[&str],
        title: String,
        caption: String,
    ) -> anyhow::Result<()> {
        let stem = self.stems.take(parts);
        let w = render(fig, &self.dir, &stem, self.png)?;
        self.files.push(w.svg.clone());
        if let Some(p) = &w.png {
            self.files.push(p.clone());
        }
        if let Some(e) = w.png_error {
            self.png_problems.push(e);
        }
        doc.figure(FigureRef {
            title,
            svg: format!("figures/{stem}.svg"),
            png: w.png.map(|_| format!("figures/{stem}.png")),
            caption,
        });
        Ok(())
    }
}

/// Writes `out/report.md`, `out/report.html` and `out/figures/*`.
pub fn write_report(input: &ReportInput<'_>, out: &Path) -> anyhow::Result<ReportOutput> {
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
    let index = MetricIndex::new(input.rows);
    let run_name = input
        .manifest
        .map(|m| m.run.clone())
        .unwrap_or_else(|| dir_name(input.run_dir));
    let mut doc = Doc::new(format!("choice2seq report — {run_name}"));
    header(&mut doc, input, &run_name);
    if let Some(p) = &font_problem {
        doc.p(format!(
            "Note: no PNG figures. {p}; the figures below are SVGs."
        ));
    }

    let paired = index.paired_groups();
    let level = input.cfg.level;
    let ci = format!("{:.0}%", 100.0 * level);

    doc.h(2, "Paired correctness (all lengths)");
    if paired.is_empty() {
        doc.p("No paired Native/Serial outcomes in this run.");
    } else {
        doc.p(format!(
            "One row per model, domain and comparison (Native arm vs Serial-type arm), on the \
             items where both arms completed. SCR = #(Native correct and Serial correct) / \
             #(Native correct), with {ci} intervals."
        ));
        doc.table(tables::paired_summary(&index, &paired, level));
    }

    // By length: one figure per (model, domain), one table per comparison.
    let mut by_md: BTreeMap<(String, String), Vec<Group>> = BTreeMap::new();
    for g in &paired {
        by_md
            .entry((g.model.clone(), g.domain.clone()))
            .or_default()
            .push(g.clone());
    }
    if !by_md.is_empty() {
        doc.h(2, "Native accuracy and SCR by length");
    }
    for ((model, domain), groups) in &by_md {
        doc.h(3, format!("{model} · {domain}"));
        let fig = by_length_figure(&index, model, domain, groups);
        writer.write(
            &mut doc,
            &fig,
            &["em-scr-by-length", model, domain],
            format!("Native accuracy and SCR by length — {model} · {domain}"),
            format!(
                "(a) Native EM and (b) SCR per target length; shaded bands and error bars are \
                 {ci} intervals (length-stratified item bootstrap; exact Clopper–Pearson for \
                 zero-success SCR cells); gaps mark undefined SCR (no Native-correct item)"
            ),
        )?;
        for g in groups {
            doc.h(4, format!("{} — by length", g.comparison));
            doc.table(tables::per_length(&index, g, level));
        }
    }

    confidence_section(&mut doc, &mut writer, &index, input.trajectories)?;

    let independence = index.independence_groups();
    if !independence.is_empty() {
        doc.h(2, "Independence reference");
        doc.p(
            "String EM of the position-query arms (Independent, TeacherForced) against the \
             product of their per-position accuracies at each length.",
        );
        for g in &independence {
            doc.h(3, format!("{} · {} · {}", g.model, g.domain, g.comparison));
            doc.table(tables::independence(&index, g, level));
        }
    }

    if !input.cells.is_empty() || !input.contrasts.is_empty() {
        doc.h(2, "Unit contrasts");
        doc.p(format!(
            "Declared cells and contrasts ([[stats.cells]], [[stats.contrasts]]). A contrast is \
             compared − reference EM averaged within each unit (a symbolic base or source, \
             else the item) and then over units; {ci} intervals resample units within strata \
             (length, repetition, placement); p is the exact two-sided sign-flip test of the \
             unit differences, Holm-adjusted within its family over every model."
        ));
        if !input.cells.is_empty() {
            doc.table(tables::cells(input.cells, level));
        }
        if !input.contrasts.is_empty() {
            doc.table(tables::contrasts(input.contrasts));
        }
    }

    // Manifests written before paper families existed have none.
    let paper_families: Vec<c2s_config::PaperFamilyEntry> = match input
        .manifest
        .and_then(|m| m.config.pointer("/stats/paper_families"))
    {
        Some(v) => serde_json::from_value(v.clone())
            .context("manifest.json: config.stats.paper_families")?,
        None => Vec::new(),
    };
    let mut families = holm::mcnemar_families(&input.cfg.families, input.rows);
    families.extend(holm::contrast_families(input.contrasts));
    if !families.is_empty() || !paper_families.is_empty() {
        holm::section(&mut doc, &families, &paper_families);
    }

    doc.h(2, "Trajectories per arm");
    doc.table(tables::arms_summary(input.trajectories));

    methods(&mut doc, input);
    finish(doc, writer, font_problem, out)
}

/// The figures that could not be rasterized, then report.md and report.html (both report
/// kinds end here).
fn finish(
    mut doc: Doc,
    writer: FigureWriter,
    font_problem: Option<String>,
    out: &Path,
) -> anyhow::Result<ReportOutput> {
    if !writer.png_problems.is_empty() {
        doc.h(2, "Figures not rasterized");
        doc.list(
            writer
                .png_problems
                .iter()
                .map(|p| ("PNG".to_string(), p.clone()))
                .collect(),
        );
    }

    let markdown = out.join("report.md");
    let html = out.join("report.html");
    fs::write(&markdown, doc.markdown())
        .with_context(|| format!("writing {}", markdown.display()))?;
    fs::write(&html, doc.html()).with_context(|| format!("writing {}", html.display()))?;
    Ok(ReportOutput {
        markdown,
        html,
        figure_files: writer.files,
        png_problems: font_problem
            .into_iter()
            .chain(writer.png_problems)
            .collect(),
    })
}

fn dir_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// Native EM and SCR by length for one model and domain: one series per group of arms (the
/// report's figure, also drawn by the live page).
pub fn by_length_figure(
    index: &MetricIndex<'_>,
    model: &str,
    domain: &str,
    groups: &[Group],
) -> ByLengthFigure {
    let lengths: Vec<u32> = groups
        .iter()
        .flat_map(|g| index.lengths(g, Metric::Both))
        .collect::<BTreeSet<u32>>()
        .into_iter()
        .collect();
    let series = |g: &Group, metric: Metric, label: String| Series {
        label,
        points: lengths
            .iter()
            .map(|&l| {
                let r = index.get(g, Some(l), metric);
                LengthPoint {
                    length: l,
                    value: r.and_then(|r| r.value),
                    ci: r.and_then(|r| r.ci_low.zip(r.ci_high)),
                }
            })
            .collect(),
    };
    // Native EM once per Native arm (the first comparison that has it).
    let mut seen = BTreeSet::new();
    let native = groups
        .iter()
        .filter(|g| seen.insert(g.native_arm().to_string()))
        .map(|g| series(g, Metric::NativeEm, format!("{} EM", g.native_arm())))
        .collect();
    let scr = groups
        .iter()
        .map(|g| series(g, Metric::Scr, format!("SCR {}", g.comparison)))
        .collect();
    ByLengthFigure {
        title: format!("{model} · {domain}"),
        lengths,
        native,
        scr,
    }
}

fn confidence_section(
    doc: &mut Doc,
    writer: &mut FigureWriter,
    index: &MetricIndex<'_>,
    trajectories: &[Trajectory],
) -> anyhow::Result<()> {
    let groups = index.calibration_groups();
    let mut members: BTreeMap<(&str, &str, &str), Vec<&Trajectory>> = BTreeMap::new();
    for t in trajectories.iter().filter(|t| t.confidence.is_some()) {
        members
            .entry((t.model.as_str(), t.domain.as_str(), t.arm.as_str()))
            .or_default()
            .push(t);
    }
    doc.h(2, "Confidence of completed strings");
    if groups.is_empty() && members.is_empty() {
        doc.p("No trajectory carries a confidence composite (generated contracts only).");
        return Ok(());
    }
    doc.p(
        "Confidence composites over the chosen steps of each completed string: product of \
         the chosen probabilities, their geometric mean, and the smallest top-choice \
         probability. Generated contracts carry none and are left out.",
    );
    let mut by_md: BTreeMap<(String, String), Vec<Group>> = BTreeMap::new();
    for g in groups {
        by_md
            .entry((g.model.clone(), g.domain.clone()))
            .or_default()
            .push(g);
    }
    for ((model, domain), arms) in &by_md {
        doc.h(3, format!("{model} · {domain}"));
        doc.table(tables::calibration(index, arms));
        for g in arms {
            let Some(pop) = members.get(&(model.as_str(), domain.as_str(), g.comparison.as_str()))
            else {
                continue;
            };
            let mut panels = Vec::new();
            for kind in ScoreKind::ALL {
                let r = calibration_report(pop.iter().copied(), kind)
                    .with_context(|| format!("confidence of {model}/{domain}/{}", g.comparison))?;
                panels.push((kind, r.reliability, r.n));
            }
            let arm = &g.comparison;
            writer.write(
                doc,
                &ReliabilityFigure {
                    title: format!("Reliability — {model} · {domain} · {arm}"),
                    panels,
                },
                &["reliability", model, domain, arm],
                format!("Reliability diagrams — {model} · {domain} · {arm}"),
                "Ten equal-width confidence bins; bars give the EM of the strings in each \
                 non-empty bin (count above), dots sit at the bin's mean confidence; the dashed \
                 diagonal is perfect calibration"
                    .to_string(),
            )?;
            writer.write(
                doc,
                &coverage_figure(
                    format!("Coverage–precision — {model} · {domain} · {arm}"),
                    pop,
                ),
                &["coverage-precision", model, domain, arm],
                format!("Coverage–precision — {model} · {domain} · {arm}"),
                "Strings sorted by confidence, most confident first (tied scores enter \
                 together); coverage = fraction answered, precision = EM among them. The \
                 dashed black line ranks by −length (shorter targets first), the grey line is \
                 the overall EM"
                    .to_string(),
            )?;
        }
    }
    Ok(())
}

/// A JSON scalar as text (`None` for null, objects and arrays).
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `YYYY-MM-DD HH:MM:SS UTC` of milliseconds since the Unix epoch.
pub fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The scalar fields of the manifest's model identity.
fn model_items(m: &Manifest) -> Vec<(String, String)> {
    match &m.model {
        Value::Object(o) => o
            .iter()
            .filter_map(|(k, v)| scalar(v).map(|v| (k.clone(), v)))
            .collect(),
        other => scalar(other)
            .map(|v| vec![("model".to_string(), v)])
            .unwrap_or_default(),
    }
}

fn header(doc: &mut Doc, input: &ReportInput<'_>, run_name: &str) {
    let cfg = input.cfg;
    let models: BTreeSet<&str> = input.rows.iter().map(|r| r.model.as_str()).collect();
    let domains: BTreeSet<&str> = input.rows.iter().map(|r| r.domain_str()).collect();
    doc.h(2, "Run");
    let mut run = vec![
        ("Run".to_string(), run_name.to_string()),
        ("Directory".to_string(), input.run_dir.display().to_string()),
    ];
    if !input.other_runs.is_empty() {
        run.push((
            "Counted with".to_string(),
            input
                .other_runs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
                + " (one comparison: Holm families and tables span every directory's models; \
                   the run header below is the first directory's)",
        ));
    }
    let Some(m) = input.manifest else {
        run.push((
            "Manifest".to_string(),
            "none (manifest.json absent): statistics use the default settings; the model \
             identity is the model label of the records"
                .to_string(),
        ));
        run.push((
            "Models".to_string(),
            models.iter().copied().collect::<Vec<_>>().join(", "),
        ));
        run.push((
            "Domains".to_string(),
            domains.iter().copied().collect::<Vec<_>>().join(", "),
        ));
        run.push(data_line(input));
        run.push(report_settings(cfg));
        doc.list(run);
        return;
    };
    run.push((
        "Models (records)".to_string(),
        models.iter().copied().collect::<Vec<_>>().join(", "),
    ));
    run.push(("Started".to_string(), utc(m.started_at_ms)));
    run.push(("Last written".to_string(), utc(m.updated_at_ms)));
    if m.resumed > 0 {
        run.push(("Resumed".to_string(), format!("{} times", m.resumed)));
    }
    run.push((
        "Domains".to_string(),
        domains.iter().copied().collect::<Vec<_>>().join(", "),
    ));
    run.push(data_line(input));
    let mut build = format!("choice2seq {}", m.crate_version);
    for part in [&m.rustc, &m.target, &m.profile].into_iter().flatten() {
        build.push_str(&format!(", {part}"));
    }
    run.push(("Written by".to_string(), build));
    doc.list(run);

    doc.h(3, "Model identity");
    let model = model_items(m);
    if model.is_empty() {
        doc.p(format!(
            "Models in the records: {}",
            models.iter().copied().collect::<Vec<_>>().join(", ")
        ));
    } else {
        doc.list(model);
    }

    doc.h(3, "Configuration");
    let c = &m.config;
    let mut items = Vec::new();
    if let Some(f) = scalar(&c["file"]) {
        items.push(("Config file".to_string(), f));
    }
    if let Some(e) = scalar(&c["model"]["engine"]) {
        let path = scalar(&c["model"]["path"]).unwrap_or_default();
        items.push(("Engine".to_string(), format!("{e} ({path})")));
    }
    if let (Some(lo), Some(hi)) = (
        scalar(&c["run"]["min_length"]),
        scalar(&c["run"]["max_length"]),
    ) {
        items.push(("Lengths".to_string(), format!("{lo}–{hi}")));
    }
    if let Some(layout) = scalar(&c["run"]["request_layout"]) {
        items.push(("Request layout".to_string(), layout));
    }
    if let Some(sources) = c["sources"].as_array() {
        let s: Vec<String> = sources
            .iter()
            .map(|s| {
                let kind = scalar(&s["kind"]).unwrap_or_else(|| "?".into());
                let what = scalar(&s["path"])
                    .or_else(|| scalar(&s["topic"]))
                    .or_else(|| scalar(&s["name"]))
                    .unwrap_or_default();
                match scalar(&s["limit"]) {
                    Some(l) => format!("{kind} {what} (limit {l})"),
                    None => format!("{kind} {what}"),
                }
            })
            .collect();
        items.push(("Sources".to_string(), s.join("; ")));
    }
    if let Some(arms) = c["arms"].as_array() {
        let a: Vec<String> = arms
            .iter()
            .map(|a| {
                let mut s = scalar(&a["arm"]).unwrap_or_else(|| "?".into());
                let mut details = Vec::new();
                if let (Some(set), Some(fill)) =
                    (scalar(&a["support"]["set"]), scalar(&a["support"]["fill"]))
                {
                    details.push(format!("support {set}/{fill}"));
                }
                for k in [
                    "contract",
                    "variant",
                    "template",
                    "order",
                    "layout",
                    "max_new_tokens",
                ] {
                    if let Some(v) = scalar(&a[k]) {
                        details.push(format!("{k} {v}"));
                    }
                }
                if !details.is_empty() {
                    s.push_str(&format!(" ({})", details.join(", ")));
                }
                s
            })
            .collect();
        items.push(("Arms".to_string(), a.join("; ")));
    }
    if let Some(comps) = c["comparisons"].as_array() {
        let v: Vec<String> = comps
            .iter()
            .filter_map(|p| {
                let p = p.as_array()?;
                Some(format!("{} vs {}", scalar(p.first()?)?, scalar(p.get(1)?)?))
            })
            .collect();
        if !v.is_empty() {
            items.push(("Comparisons".to_string(), v.join("; ")));
        }
    }
    items.extend(provenance_items(m));
    items.push(report_settings(cfg));
    doc.list(items);
}

/// The run statistics, seeds and input files a manifest records (both report kinds list them).
pub(crate) fn provenance_items(m: &Manifest) -> Vec<(String, String)> {
    let c = &m.config;
    let mut items = Vec::new();
    let st = &c["stats"];
    if let Some(d) = scalar(&st["bootstrap_draws"]) {
        items.push((
            "Run statistics".to_string(),
            format!(
                "{d} bootstrap draws, seed {}, level {}",
                scalar(&st["seed"]).unwrap_or_else(|| "–".into()),
                scalar(&st["level"]).unwrap_or_else(|| "–".into())
            ),
        ));
    }
    if !m.seeds.is_empty() {
        items.push((
            "Seeds".to_string(),
            m.seeds
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    if !m.sources.is_empty() {
        items.push((
            "Input files".to_string(),
            m.sources
                .iter()
                .map(|s| {
                    format!(
                        "{} {} (sha256 {})",
                        s.role,
                        s.path,
                        s.sha256.get(..12).unwrap_or(&s.sha256)
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
        ));
    }
    items
}

fn report_settings(cfg: &StatsConfig) -> (String, String) {
    (
        "This report".to_string(),
        format!(
            "{} bootstrap draws, seed {}, level {}",
            cfg.bootstrap_draws, cfg.seed, cfg.level
        ),
    )
}

fn data_line(input: &ReportInput<'_>) -> (String, String) {
    (
        "Data".to_string(),
        format!(
            "{} paired outcomes, {} trajectories",
            input.outcomes,
            input.trajectories.len()
        ),
    )
}

fn methods(doc: &mut Doc, input: &ReportInput<'_>) {
    let cfg = input.cfg;
    doc.h(2, "Methods");
    let families = if cfg.families.is_empty() {
        "the paper's primary Holm family (A.6): Native/code vs Serial/Full/code over every \
         model and domain; other comparisons unadjusted"
            .to_string()
    } else {
        cfg.families
            .iter()
            .map(|f| {
                let scope = match f.scope {
                    FamilyScope::PerModelDomain => "per model and domain",
                    FamilyScope::PerModel => "per model",
                    FamilyScope::PerDomain => "per domain",
                    FamilyScope::Global => "global",
                };
                format!("{} ({scope}: {})", f.name, f.comparisons.join(", "))
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    doc.list(vec![
        (
            "Metrics".to_string(),
            "recomputed offline from outcomes/ and trajectories/ (the same computation as \
             `choice2seq stats` and the live snapshots)"
                .to_string(),
        ),
        (
            "Intervals".to_string(),
            format!(
                "whole-item bootstrap stratified by length, {} draws, seed {}, level {}; \
                 conditional denominators are redrawn and a draw with an empty denominator is \
                 dropped; zero-success SCR cells use the exact Clopper–Pearson interval",
                cfg.bootstrap_draws, cfg.seed, cfg.level
            ),
        ),
        (
            "Tests".to_string(),
            format!("exact two-sided McNemar on the all-lengths table; {families}"),
        ),
        (
            "Undefined".to_string(),
            "a value with an empty denominator prints as “–” and is left out of the figures"
                .to_string(),
        ),
    ]);
}
