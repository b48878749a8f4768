//! The paper's exhibits, each in the paper's layout with its printed numbers beside ours
//! (`choice2seq reproduce EXHIBIT`).
//!
//! An exhibit is data first: `exhibits/NAME.toml` ([`registry`]) names its panels
//! (`config/panels/*.toml`, each run once per model), declares the row sets it reads from their
//! runs and the paper's tables (`[[sources]]`, [`sources`]: a population's groups of metric rows
//! with the metrics each carries, sums over trajectories, unit contrasts or cells, a printed
//! table reshaped), lays out its document (`[document]`, rendered by [`engine`] through
//! [`filters`]) and states what the paper's printed tables (`exhibits/NAME.tsv`, read by
//! [`paper`]) must satisfy (`[[checks]]`, [`checks`]). Every model's runs of a panel are read
//! together, so populations and Holm families span the models. Where an exhibit computes what a
//! declaration cannot say (a bootstrap over a population with rules, unit contrasts built here, a
//! paper table pivoted), its code, found by its name in [`CODE`], adds row sets and values to the
//! same [`engine::Frame`]:
//!
//! ```text
//! exhibits/figure17.toml ─panels─▶ runs ─readout_grid::figure17───▶ Frame { ours,
//!   │   └─[[sources]]: exhibits/figure17.tsv, a row per template ─▶         printed }
//!   └─[document]──────────────────────────────────────────────────▶ engine::layout ──▶ Doc
//! ```
//!
//! The modules hold one exhibit's computation, or several exhibits read from one panel (Tables
//! C1–C5 and Figures 8–9 in [`dialogue`]); docs/exhibits.md has the exhibit table, generated from
//! the specs.

mod binding;
mod branch_factors;
mod calibration;
pub mod checks;
mod contracts;
mod copy_incorrect;
mod dialogue;
mod engine;
mod filters;
mod independence;
mod item_intervals;
mod native_control;
mod paper;
mod projection;
mod prompt_variants;
mod readout_grid;
pub mod registry;
mod repeats;
mod robustness;
mod semantic;
mod sources;
mod support;
mod support_controllers;
pub mod table1;
mod table_d1;
mod table_d17;
mod table_d7;
mod twelve_character;
mod union_gain;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::Context;
pub use c2s_rundir::LoadedRun;

use super::doc::Doc;
use super::tables::UNDEFINED;

/// The code of an exhibit: its row sets ([`engine::Frame`]) from its panels' runs, given the
/// paper model the differences are taken against.
pub type Compute = fn(&[PanelRun], &str) -> anyhow::Result<engine::Frame>;

/// The code of each registered exhibit ([`registry`]), by the name of its spec.
pub const CODE: &[(&str, Compute)] = &[
    ("table2", semantic::table2),
    ("tableD1", table_d1::document),
    ("tableC1", dialogue::prior),
    ("tableC2", dialogue::prior),
    ("tableC3", dialogue::prior),
    ("tableC4", dialogue::matched),
    ("tableC5", dialogue::matched),
    ("tableD2", repeats::document),
    ("tableD3", |runs, _| prompt_variants::table_d3(runs)),
    ("tableD4", |runs, _| prompt_variants::table_d4(runs)),
    ("tableD7", |_, _| table_d7::document()),
    ("tableE1", |_, _| contracts::table_e1()),
    ("tableE2", |_, _| contracts::table_e2()),
    ("tableE3", |_, _| contracts::table_e3()),
    ("tableD8", twelve_character::document),
    ("tableD12", |runs, _| calibration::document(runs)),
    ("tableD14", |runs, _| calibration::document(runs)),
    ("tableD17", table_d17::document),
    ("figure5", binding::figure5),
    ("figure6", binding::figure6),
    ("figure8", dialogue::prior),
    ("figure9", dialogue::matched),
    ("figure10", robustness::figure10),
    ("figure11", union_gain::document),
    ("figure13", branch_factors::document),
    ("figure16", copy_incorrect::figure16),
    ("figure17", readout_grid::figure17),
    ("figure19", |runs, _| calibration::figure19(runs)),
    ("figure21", |runs, _| calibration::figure21(runs)),
    ("figure12", support_controllers::document),
    ("figure14", |runs, _| independence::document(runs)),
    ("projection", projection::document),
    ("native-control", native_control::document),
];

/// An exhibit `reproduce` can write: its spec ([`registry::ExhibitSpec`]) and its code.
#[derive(Debug, Clone, Copy)]
pub struct Exhibit {
    spec: &'static registry::ExhibitSpec,
    /// None for an exhibit whose rows its spec's `[[sources]]` declare.
    compute: Option<Compute>,
}

impl PartialEq for Exhibit {
    fn eq(&self, other: &Exhibit) -> bool {
        self.spec.name == other.spec.name
    }
}

impl Eq for Exhibit {}

impl Exhibit {
    /// Every registered exhibit, in the order `reproduce all` writes them.
    pub fn all() -> anyhow::Result<Vec<Exhibit>> {
        registry::specs()?.iter().map(Exhibit::of).collect()
    }

    /// The exhibit `name` (`table1`, `figure14`, …).
    pub fn named(name: &str) -> anyhow::Result<Exhibit> {
        let specs = registry::specs()?;
        match specs.iter().find(|s| s.name == name) {
            Some(spec) => Exhibit::of(spec),
            None => {
                let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
                anyhow::bail!(
                    "`{name}` is not an exhibit: one of {}, or all",
                    names.join(", ")
                )
            }
        }
    }

    fn of(spec: &'static registry::ExhibitSpec) -> anyhow::Result<Exhibit> {
        let compute = CODE.iter().find(|(name, _)| *name == spec.name);
        anyhow::ensure!(
            compute.is_some() || !spec.sources.is_empty(),
            "exhibits/{}.toml: no code computes it and it declares no `[[sources]]`",
            spec.name
        );
        Ok(Exhibit {
            spec,
            compute: compute.map(|(_, compute)| *compute),
        })
    }

    /// The exhibit's name, its spec's file stem (`table1`, `figure14`, …).
    pub fn name(self) -> &'static str {
        &self.spec.name
    }

    /// The config of a panel: `config/panels/NAME.toml`.
    pub fn panel_config(panel: &str) -> PathBuf {
        PathBuf::from(format!("config/panels/{panel}.toml"))
    }

    /// The panels the exhibit is computed from ([`Exhibit::panel_config`]).
    pub fn panels(self) -> Vec<&'static str> {
        self.spec.panels.iter().map(String::as_str).collect()
    }

    /// The exhibit's document from its panels' run directories: its rows, laid out by its spec.
    pub fn document(self, runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
        let mut frame = match self.compute {
            Some(compute) => compute(runs, against)?,
            None => engine::Frame::new(),
        };
        let env = filters::environment();
        let context = || format!("exhibits/{}.toml", self.spec.name);
        for source in &self.spec.sources {
            let rows = source.rows(runs, &env).with_context(context)?;
            frame = source.add_to(frame, rows, &env).with_context(context)?;
        }
        // Our intervals' level, as every header of ours names it (`[{{ ci_level }} CI]`): the
        // recorded settings of the first panel's first run (a panel's runs share their config).
        if let Some(dir) = runs.first().and_then(|r| r.run_dirs.first()) {
            let (stats, _) = c2s_rundir::run_stats_config(dir).with_context(context)?;
            frame = frame.var("ci_level", filters::ci_level(stats.level));
        }
        engine::layout(&self.spec.name, &self.spec.document, frame, against)
    }
}

/// One panel an exhibit reads: the panel's config stem and its run directories, one per model
/// (`reproduce --model A --model B`): the exhibit computes every model's rows from their
/// records together, so Holm families and populations that span models span them here too.
#[derive(Debug, Clone)]
pub struct PanelRun {
    /// The panel's config stem (`config/panels/NAME.toml`).
    pub panel: &'static str,
    /// The panel's run directory for each model, in `--model` order.
    pub run_dirs: Vec<PathBuf>,
    /// The records once read, shared by the clones (every exhibit of `reproduce all` that
    /// reads the panel, an exhibit's declared sources and its code).
    loaded: Arc<OnceLock<LoadedRun>>,
}

impl PanelRun {
    /// The panel `panel`'s runs in `run_dirs`, one per model, not read yet.
    pub fn new(panel: &'static str, run_dirs: Vec<PathBuf>) -> PanelRun {
        PanelRun {
            panel,
            run_dirs,
            loaded: Arc::default(),
        }
    }

    /// The records of every model's run and the statistics settings of the first (the same
    /// panel config, so the same settings; a difference is reported), read once: an exhibit
    /// computes its metric rows, contrasts and its own tables from this.
    pub fn load(&self) -> anyhow::Result<LoadedRun> {
        if let Some(loaded) = self.loaded.get() {
            return Ok(loaded.clone());
        }
        let loaded = LoadedRun::read(&self.run_dirs)?;
        Ok(self.loaded.get_or_init(|| loaded).clone())
    }
}

/// D.6: "Jev evaluates all 768 parents; Qwen uses 192 selected by item hash before outcomes
/// (16 per domain/length)": the support panel's Qwen rows (Figure 12, Table D16) are on this
/// list, the same 192 parents as Table 3's ("On the same 192 Qwen parents", D.8).
pub const QWEN_192: &str = "data/panels/qwen-192.txt";

/// The item ids of a panel list (`data/panels/*.txt`, relative to the working directory as
/// the panel configs are).
pub fn panel_ids(path: &str) -> anyhow::Result<std::collections::BTreeSet<String>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    let ids = c2s_config::read_id_list(&text)
        .map_err(|(line, message)| anyhow::anyhow!("{path}:{line}: {message}"))?;
    Ok(ids.into_iter().collect())
}

/// The level the paper's asterisks mark: "asterisks mark Holm p < 0.05 after correction".
pub const HOLM_ALPHA: f64 = 0.05;

/// Whether a Holm-corrected p earns the paper's asterisk (`None`: no p).
pub fn holm_significant(holm_p: Option<f64>) -> Option<bool> {
    holm_p.map(|p| p < HOLM_ALPHA)
}

/// A formatted p-value cell with the paper's asterisk (` *`) where `holm_p` is below
/// [`HOLM_ALPHA`].
pub fn starred(cell: String, holm_p: Option<f64>) -> String {
    if holm_significant(holm_p) == Some(true) {
        format!("{cell} *")
    } else {
        cell
    }
}

/// k of n: a count with its denominator (fidelity, correct strings).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    /// Successes (faithful copies, correct strings).
    pub k: u64,
    /// Trials counted.
    pub n: u64,
}

impl Count {
    /// Counts one trial, a success when `hit`.
    pub fn add(&mut self, hit: bool) {
        self.k += u64::from(hit);
        self.n += 1;
    }

    /// k / n; `None` for n = 0.
    pub fn rate(&self) -> Option<f64> {
        (self.n > 0).then(|| self.k as f64 / self.n as f64)
    }

    /// `k/n`, or "–" for n = 0.
    pub fn cell(&self) -> String {
        if self.n == 0 {
            UNDEFINED.to_string()
        } else {
            format!("{}/{}", self.k, self.n)
        }
    }
}

/// The run of `panel` among an exhibit's runs.
pub fn run_of<'a>(runs: &'a [PanelRun], panel: &str) -> anyhow::Result<&'a PanelRun> {
    runs.iter()
        .find(|r| r.panel == panel)
        .with_context(|| format!("the exhibit needs a run of the panel `{panel}`"))
}

/// The kind of an arm label (`Serial/Full/code` → Serial); `None` for a string that is not
/// an arm label.
pub fn kind_of(label: &str) -> Option<c2s_records::Arm> {
    c2s_records::ArmSpec::from_label(label)
        .ok()
        .map(|spec| spec.arm)
}

/// Whether a pairing's second arm is of `kind` (Serial, WholeGenerate).
pub fn pairs_with(comparison: &str, kind: c2s_records::Arm) -> bool {
    c2s_records::comparison_arms(comparison).is_some_and(|(_, s)| kind_of(s) == Some(kind))
}

/// A bank's domain as Tables B1 and D4 print it (`Arithmetic`, `Lexical`).
pub fn capitalized(domain: &str) -> String {
    match paper_domain(domain) {
        "math" => "Arithmetic".into(),
        "lexical" => "Lexical".into(),
        other => other.into(),
    }
}

/// The domain as the paper's tables print it.
pub fn paper_domain(domain: &str) -> &str {
    match domain {
        "arithmetic" => "math",
        d => d,
    }
}

/// Ours minus the paper's, in percentage points with a sign (`ours` a fraction, `paper` a
/// percentage as printed).
pub fn pp_diff(ours: Option<f64>, paper: f64) -> String {
    match ours {
        None => UNDEFINED.to_string(),
        Some(v) => {
            let d = 100.0 * v - paper;
            if d < 0.0 {
                format!("−{:.1}", -d)
            } else {
                format!("+{d:.1}")
            }
        }
    }
}

/// One decimal with a true minus sign and no plus (`−1.2`, `3.4`), as the paper prints.
pub fn signed1(v: f64) -> String {
    if v < 0.0 {
        format!("−{:.1}", -v)
    } else {
        format!("{v:.1}")
    }
}

/// A signed difference with two decimals and a true minus sign (`+0.50`, `−2.50`).
pub fn signed2(d: f64) -> String {
    if d < 0.0 {
        format!("−{:.2}", -d)
    } else {
        format!("+{d:.2}")
    }
}

/// A printed value with its interval, `v [lo, hi]`.
pub fn printed_interval((v, lo, hi): (f64, f64, f64)) -> String {
    format!("{} [{}, {}]", signed1(v), signed1(lo), signed1(hi))
}

/// A fraction's estimate with its optional interval, in percent (`54.2 [43.8, 64.6]`).
pub fn percent_interval(d: Option<(f64, Option<f64>, Option<f64>)>) -> String {
    match d {
        None => UNDEFINED.to_string(),
        Some((d, Some(lo), Some(hi))) => printed_interval((100.0 * d, 100.0 * lo, 100.0 * hi)),
        Some((d, _, _)) => signed1(100.0 * d),
    }
}

/// The distinct values of `items` in first-seen order (the models of our rows).
pub fn distinct<'a>(items: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for m in items {
        if !out.contains(&m) {
            out.push(m);
        }
    }
    out
}

/// Write `doc` as `out/NAME.md` and `out/NAME.html`; returns both paths.
pub fn write(doc: &Doc, out: &Path, name: &str) -> anyhow::Result<(PathBuf, PathBuf)> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let md = out.join(format!("{name}.md"));
    let html = out.join(format!("{name}.html"));
    std::fs::write(&md, doc.markdown()).with_context(|| format!("writing {}", md.display()))?;
    std::fs::write(&html, doc.html()).with_context(|| format!("writing {}", html.display()))?;
    Ok((md, html))
}

/// The paper models an exhibit's differences are taken against: `against` where the exhibit
/// prints a row of it, else every model it prints (in the exhibit's order).
pub fn compared_models<'a>(printed: &[&'a str], against: &str) -> Vec<&'a str> {
    let models = distinct(printed.iter().copied());
    if let Some(m) = models.iter().find(|m| **m == against) {
        return vec![m];
    }
    models
}

#[cfg(test)]
mod declared;

/// Metric rows of small simulated runs, for the exhibits' layout tests.
#[cfg(test)]
pub(crate) mod testing {
    use c2s_records::Trajectory;
    use c2s_stats::MetricRow;

    /// The exhibit `name`'s document, as its spec lays out `frame`, in Markdown.
    pub fn laid_out(name: &str, frame: super::engine::Frame, against: &str) -> String {
        let exhibit = super::Exhibit::named(name).expect("a registered exhibit");
        let frame = frame.var("ci_level", super::filters::ci_level(0.95));
        super::engine::layout(name, &exhibit.spec.document, frame, against)
            .expect("the layout")
            .markdown()
    }

    /// The exhibit `name`'s document, its declared row sets read from `panels` and `frame`
    /// holding what its code adds, in Markdown.
    pub fn declared(
        name: &str,
        panels: &[super::sources::PanelRecords],
        frame: super::engine::Frame,
        against: &str,
    ) -> String {
        declared_with_tables(name, panels, &[], frame, against)
    }

    /// [`declared`], its contrasts and cells sets read from `tables`.
    pub fn declared_with_tables(
        name: &str,
        panels: &[super::sources::PanelRecords],
        tables: &[super::sources::PanelTables],
        mut frame: super::engine::Frame,
        against: &str,
    ) -> String {
        use super::sources::Records;
        let exhibit = super::Exhibit::named(name).expect("a registered exhibit");
        let env = super::filters::environment();
        for source in &exhibit.spec.sources {
            let rows = match source.from {
                Records::Contrasts | Records::Cells => source.rows_of_tables(tables, &env),
                Records::Paper => source.rows(&[], &env),
                _ => source.rows_of(panels, &env),
            };
            let rows = rows.expect("the declared rows");
            frame = source.add_to(frame, rows, &env).expect("the set");
        }
        let frame = frame.var("ci_level", super::filters::ci_level(0.95));
        super::engine::layout(name, &exhibit.spec.document, frame, against)
            .expect("the layout")
            .markdown()
    }

    /// Metric rows as the one panel `panel` holds them.
    pub fn panel_metrics(panel: &str, metric_rows: Vec<MetricRow>) -> super::sources::PanelRecords {
        super::sources::PanelRecords {
            panel: panel.into(),
            metric_rows,
            trajectories: Vec::new(),
        }
    }

    /// A trajectory of model `m` on `arm` for item `item` of `domain` (its bank's name, e.g.
    /// `arithmetic`) and target length `length`, correct or not; tests set further fields.
    pub fn trajectory(
        item: &str,
        domain: &str,
        length: usize,
        arm: &str,
        correct: bool,
    ) -> Trajectory {
        serde_json::from_value(serde_json::json!({
            "item_id": item, "domain": domain, "length": length, "model": "m", "arm": arm,
            "support": "Full", "output": "1", "correct": correct, "valid": true,
            "membership": "Outside", "aborted": false, "calls": 1, "fills": 0,
            "prompt_tokens": 0, "completion_tokens": 0, "latency_ms": 0.0,
            "position_correct": [], "steps": [],
        }))
        .expect("a test trajectory")
    }

    /// One paired group's rows: joint counts (both / Native only / Serial only / neither) with
    /// their EMs and the SCR with the interval `ci`.
    pub fn paired_rows(
        model: &str,
        domain: &str,
        joint: [u64; 4],
        ci: (f64, f64),
    ) -> Vec<MetricRow> {
        let n: u64 = joint.iter().sum();
        let row = |metric: &str, num: u64, den: u64| MetricRow {
            value: (den > 0).then(|| num as f64 / den as f64),
            numerator: Some(num),
            denominator: Some(den),
            ..MetricRow::empty(
                0,
                model,
                c2s_records::Domain::parse(domain),
                None,
                "Native/code vs Serial/Full/code",
                c2s_records::Metric::parse(metric).unwrap(),
            )
        };
        let mut rows: Vec<MetricRow> = ["both", "native_only", "serial_only", "neither"]
            .iter()
            .zip(joint)
            .map(|(m, c)| row(m, c, n))
            .collect();
        rows.push(row("native_em", joint[0] + joint[1], n));
        rows.push(row("serial_em", joint[0] + joint[2], n));
        rows.push(MetricRow {
            ci_low: Some(ci.0),
            ci_high: Some(ci.1),
            ..row("scr", joint[0], joint[0] + joint[1])
        });
        rows
    }
}
