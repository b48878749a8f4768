//! The paper's exhibits, each in the paper's own layout with the paper's published numbers
//! beside ours (`choice2seq reproduce EXHIBIT`). An exhibit names the panels it needs
//! (`config/panels/*.toml`) and writes its table from their run directories.
//!
//! One module per exhibit (or per group of exhibits read from one panel): Table 1
//! ([`table1`]), Tables 2 and B2 ([`semantic`]), Table 3 ([`table3`]), Table 4
//! ([`fresh_plan`]), Table B1 ([`whole_answer`]), Tables C1–C5 ([`dialogue`]), Table D1
//! ([`table_d1`]), Table D2 ([`repeats`]), Tables D3 and D4 ([`prompt_variants`]), Tables D5
//! and D6 ([`support`]), Table D7 ([`table_d7`], from the banks), Table D8
//! ([`twelve_character`]), Table D9 ([`padded`]), Table D10 ([`nested_binding`]), Tables D12
//! and D14 ([`calibration`]), Table D13 ([`cohorts`]), Table D15 ([`table_d15`]), Table D16
//! ([`table_d16`]), Table D17 ([`table_d17`]); Tables E1–E3 ([`contracts`]); the numbers of Figure 2 ([`by_length`]),
//! Figure 4 ([`fresh_plan`]), Figures 5 and 6 ([`binding`]), Figure 7
//! ([`matched_contracts`]), Figures 8 and 9 ([`dialogue`], Tables C2 and C4's differences),
//! Figure 10 ([`robustness`]), Figure 11 ([`union_gain`]), Figure 12
//! ([`support_controllers`]), Figure 13 ([`branch_factors`]), Figure 14 ([`independence`]),
//! Figure 15 ([`copy_fidelity`]), Figure 16 ([`copy_incorrect`]), Figures 17 and 18 ([`readout_grid`]), Figures 19
//! and 21 ([`calibration`]); the Native-to-position projection ([`projection`]) and the
//! candidate-only Native control ([`native_control`]). Every other exhibit's status is in the
//! exhibit table of docs/exhibits.md.

pub mod binding;
pub mod branch_factors;
pub mod by_length;
pub mod calibration;
pub mod cohorts;
pub mod contracts;
pub mod copy_fidelity;
pub mod copy_incorrect;
pub mod dialogue;
pub mod fresh_plan;
pub mod independence;
pub mod item_intervals;
pub mod matched_contracts;
pub mod native_control;
pub mod nested_binding;
pub mod padded;
pub mod projection;
pub mod prompt_variants;
pub mod readout_grid;
pub mod repeats;
pub mod robustness;
pub mod semantic;
pub mod support;
pub mod support_controllers;
pub mod table1;
pub mod table3;
pub mod table_d1;
pub mod table_d15;
pub mod table_d16;
pub mod table_d17;
pub mod table_d7;
pub mod twelve_character;
pub mod union_gain;
pub mod whole_answer;

use std::path::{Path, PathBuf};

use anyhow::Context;
use c2s_records::{PairedOutcome, Trajectory};
use c2s_stats::{CellRow, ContrastRow, MetricRow, StatsConfig};
use clap::ValueEnum;

use super::doc::Doc;
use super::tables::UNDEFINED;

/// An exhibit of the paper that `reproduce` can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Exhibit {
    /// Table 1: paired correctness on 384 items per domain, code and direct interfaces.
    #[value(name = "table1")]
    Table1,
    /// Table 2: the semantic bridge's named fields, Native/Serial EM, joint counts, SCR.
    #[value(name = "table2")]
    Table2,
    /// Table B2: the semantic bridge per representation (named and binary), SCR with CIs.
    #[value(name = "tableB2")]
    TableB2,
    /// Table 3: Native, WholeGenerate, position queries and PrefixContinue on 96 items per
    /// domain: correct counts, valid trajectories, calls per item.
    #[value(name = "table3")]
    Table3,
    /// Table 4: Serial fidelity to fresh own plans, raw and indexed, and indexed gold EM.
    #[value(name = "table4")]
    Table4,
    /// Table B1: Native against whole-answer generation (64 new tokens): joint, lost, gained.
    #[value(name = "tableB1")]
    TableB1,
    /// Table C1: dialogue endpoints of the Joint arm per prior-state mode (Appendix C).
    #[value(name = "tableC1")]
    TableC1,
    /// Table C2: Oracle − Rollout differences with dialogue and component intervals.
    #[value(name = "tableC2")]
    TableC2,
    /// Table C3: failed trajectories and their recoveries.
    #[value(name = "tableC3")]
    TableC3,
    /// Table C4: every arm under the sign tests' mode, with the Serial − Joint sign tests.
    #[value(name = "tableC4")]
    TableC4,
    /// Table C5: retention against Joint, validity, calls and input tokens.
    #[value(name = "tableC5")]
    TableC5,
    /// Table D1: SCR on the population Native-correct under every row (D.1).
    #[value(name = "tableD1")]
    TableD1,
    /// Table D2: three identical Native requests and Serial trajectories per parent (D.2).
    #[value(name = "tableD2")]
    TableD2,
    /// Table D3: direct-output prompt variants v1–v3: Serial EM, SCR, change from v1.
    #[value(name = "tableD3")]
    TableD3,
    /// Table D4: mean and worst-template SCR with a parent bootstrap.
    #[value(name = "tableD4")]
    TableD4,
    /// Table D5: Full against UnionFill: both wrong, recovered, lost, both correct.
    #[value(name = "tableD5")]
    TableD5,
    /// Table D6: calls, forced positions and candidate membership under Full and UnionFill.
    #[value(name = "tableD6")]
    TableD6,
    /// Table D7: position-wise union sizes and Cartesian output spaces of the banks (no model
    /// call).
    #[value(name = "tableD7")]
    TableD7,
    /// Table D8: twelve-character reversal cells, correct and SCR counts.
    #[value(name = "tableD8")]
    TableD8,
    /// Table D9: Indexed against byte- and token-matched Padded copying.
    #[value(name = "tableD9")]
    TableD9,
    /// Table D10: the nested binding probe, literal against opaque names (D.11).
    #[value(name = "tableD10")]
    TableD10,
    /// Table D12: Product's AUROC and AP minus the negative-length ranking's, with paired item
    /// intervals (D.15).
    #[value(name = "tableD12")]
    TableD12,
    /// Table D13: the original lexical population under equal-length weights (D.15).
    #[value(name = "tableD13")]
    TableD13,
    /// Table D14: lexical Brier, ECE, AUROC and AP of the three confidence scores (D.14).
    #[value(name = "tableD14")]
    TableD14,
    /// Table D15: joint counts, SCR, SCR − Serial EM and the gain rate of Table 1's rows and
    /// the semantic bridge's.
    #[value(name = "tableD15")]
    TableD15,
    /// Table D16: the lexical output resource audit of Full, TrieCall, TrieFill and
    /// UnionCall (membership classes and recombinations).
    #[value(name = "tableD16")]
    TableD16,
    /// Table D17: generation budgets, observed maxima and truncations of Table 3's panel.
    #[value(name = "tableD17")]
    TableD17,
    /// Table E1: Serial and TeacherForced share instructions and canonical JSON state; only
    /// prefix sources differ (rendered by our request code, no model call).
    #[value(name = "tableE1")]
    TableE1,
    /// Table E2: the six T0–T2 system messages, ours against the paper's verbatim text.
    #[value(name = "tableE2")]
    TableE2,
    /// Table E3: E.6's two complete requests and our scorer's class of each printed response.
    #[value(name = "tableE3")]
    TableE3,
    /// Figure 2's numbers: Native accuracy and SCR per target length for each model and
    /// interface of Table 1.
    #[value(name = "figure2")]
    Figure2,
    /// Figure 4's numbers: raw and indexed fidelity to fresh own plans under Independent and
    /// Serial control, and the indexed gold EM (A.5, B.1).
    #[value(name = "figure4")]
    Figure4,
    /// Figure 5's numbers: (a) letter − digit Serial EM on matched COPY/REVERSE bases; (b) the
    /// extra option-name conflict loss (B.4, B.5).
    #[value(name = "figure5")]
    Figure5,
    /// Figure 6's numbers: accuracy at the queried position under Raw / Indexed / Direct
    /// evidence (B.5).
    #[value(name = "figure6")]
    Figure6,
    /// Figure 7's numbers: code against character output under Raw / Indexed / Direct evidence
    /// (B.6, the 864-request panel).
    #[value(name = "figure7")]
    Figure7,
    /// Figure 8's numbers: Oracle − Rollout per endpoint (Table C2's differences).
    #[value(name = "figure8")]
    Figure8,
    /// Figure 9's numbers: Serial − Joint per endpoint (Table C4's differences).
    #[value(name = "figure9")]
    Figure9,
    /// Figure 10's numbers: SCR and Serial EM change per natural-task setting (reference,
    /// option orders, prompt variants, repeats; D.2, D.3).
    #[value(name = "figure10")]
    Figure10,
    /// Figure 11's numbers: Native, Full and position-union Serial EM and the Union − Full
    /// paired gain (D.5).
    #[value(name = "figure11")]
    Figure11,
    /// Figure 12's numbers: Serial EM under TrieFill, TrieCall, UnionCall and Full beside
    /// Native (D.5).
    #[value(name = "figure12")]
    Figure12,
    /// Figure 13's numbers: twelve-character reversal factor effects (D.7).
    #[value(name = "figure13")]
    Figure13,
    /// Figure 14's numbers: string EM against the independence reference per length,
    /// Independent on 384 items per domain and TeacherForced on 60 (D.10).
    #[value(name = "figure14")]
    Figure14,
    /// Figure 15's numbers: complete copy fidelity under Independent / Serial / Batch and the
    /// indexing gain (D.11).
    #[value(name = "figure15")]
    Figure15,
    /// Figure 16's numbers: fidelity to correct and incorrect supplied targets (D.12).
    #[value(name = "figure16")]
    Figure16,
    /// Figure 17's numbers: character − code accuracy per template and option order (D.13).
    #[value(name = "figure17")]
    Figure17,
    /// Figure 18's numbers: template interactions of the character − code gap (D.13).
    #[value(name = "figure18")]
    Figure18,
    /// Figure 19's numbers: reliability bins of the three confidence scores with intervals
    /// (D.14).
    #[value(name = "figure19")]
    Figure19,
    /// Figure 21's numbers: screening precision at selected coverage for the three scores and
    /// the length ranking (D.15).
    #[value(name = "figure21")]
    Figure21,
    /// The Native-to-position projection (A.6, B.7): TV/JS and unsupported mass.
    #[value(name = "projection")]
    Projection,
    /// The candidate-only Native control (A.4): Native and NativeControl EM beside chance.
    #[value(name = "native-control")]
    NativeControl,
}

impl Exhibit {
    /// Every exhibit, in the order `reproduce all` writes them.
    pub const ALL: [Exhibit; 50] = [
        Exhibit::Table1,
        Exhibit::Table2,
        Exhibit::TableB2,
        Exhibit::TableC1,
        Exhibit::TableC2,
        Exhibit::TableC3,
        Exhibit::TableC4,
        Exhibit::TableC5,
        Exhibit::Table3,
        Exhibit::Table4,
        Exhibit::TableB1,
        Exhibit::TableD1,
        Exhibit::TableD2,
        Exhibit::TableD3,
        Exhibit::TableD4,
        Exhibit::TableD5,
        Exhibit::TableD6,
        Exhibit::TableD7,
        Exhibit::TableD8,
        Exhibit::TableD9,
        Exhibit::TableD10,
        Exhibit::TableD12,
        Exhibit::TableD13,
        Exhibit::TableD14,
        Exhibit::TableD15,
        Exhibit::TableD16,
        Exhibit::TableD17,
        Exhibit::TableE1,
        Exhibit::TableE2,
        Exhibit::TableE3,
        Exhibit::Figure2,
        Exhibit::Figure4,
        Exhibit::Figure5,
        Exhibit::Figure6,
        Exhibit::Figure7,
        Exhibit::Figure8,
        Exhibit::Figure9,
        Exhibit::Figure10,
        Exhibit::Figure11,
        Exhibit::Figure12,
        Exhibit::Figure13,
        Exhibit::Figure14,
        Exhibit::Figure15,
        Exhibit::Figure16,
        Exhibit::Figure17,
        Exhibit::Figure18,
        Exhibit::Figure19,
        Exhibit::Figure21,
        Exhibit::Projection,
        Exhibit::NativeControl,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Exhibit::Table1 => "table1",
            Exhibit::Table2 => "table2",
            Exhibit::TableB2 => "tableB2",
            Exhibit::Table3 => "table3",
            Exhibit::Table4 => "table4",
            Exhibit::TableB1 => "tableB1",
            Exhibit::TableC1 => "tableC1",
            Exhibit::TableC2 => "tableC2",
            Exhibit::TableC3 => "tableC3",
            Exhibit::TableC4 => "tableC4",
            Exhibit::TableC5 => "tableC5",
            Exhibit::TableD1 => "tableD1",
            Exhibit::TableD2 => "tableD2",
            Exhibit::TableD3 => "tableD3",
            Exhibit::TableD4 => "tableD4",
            Exhibit::TableD5 => "tableD5",
            Exhibit::TableD6 => "tableD6",
            Exhibit::TableD7 => "tableD7",
            Exhibit::TableE1 => "tableE1",
            Exhibit::TableE2 => "tableE2",
            Exhibit::TableE3 => "tableE3",
            Exhibit::TableD8 => "tableD8",
            Exhibit::TableD9 => "tableD9",
            Exhibit::TableD10 => "tableD10",
            Exhibit::TableD12 => "tableD12",
            Exhibit::TableD13 => "tableD13",
            Exhibit::TableD14 => "tableD14",
            Exhibit::TableD15 => "tableD15",
            Exhibit::TableD16 => "tableD16",
            Exhibit::TableD17 => "tableD17",
            Exhibit::Figure7 => "figure7",
            Exhibit::Figure2 => "figure2",
            Exhibit::Figure4 => "figure4",
            Exhibit::Figure5 => "figure5",
            Exhibit::Figure6 => "figure6",
            Exhibit::Figure8 => "figure8",
            Exhibit::Figure9 => "figure9",
            Exhibit::Figure10 => "figure10",
            Exhibit::Figure11 => "figure11",
            Exhibit::Figure13 => "figure13",
            Exhibit::Figure15 => "figure15",
            Exhibit::Figure16 => "figure16",
            Exhibit::Figure17 => "figure17",
            Exhibit::Figure18 => "figure18",
            Exhibit::Figure19 => "figure19",
            Exhibit::Figure21 => "figure21",
            Exhibit::Figure12 => "figure12",
            Exhibit::Figure14 => "figure14",
            Exhibit::Projection => "projection",
            Exhibit::NativeControl => "native-control",
        }
    }

    /// The config of a panel: `config/panels/NAME.toml`.
    pub fn panel_config(panel: &str) -> PathBuf {
        PathBuf::from(format!("config/panels/{panel}.toml"))
    }

    /// The panels the exhibit is computed from ([`Exhibit::panel_config`]).
    pub fn panels(self) -> &'static [&'static str] {
        match self {
            Exhibit::Table1 | Exhibit::TableD1 | Exhibit::Figure2 => {
                &["table1-code", "table1-direct"]
            }
            Exhibit::TableD12
            | Exhibit::TableD13
            | Exhibit::TableD14
            | Exhibit::Figure19
            | Exhibit::Figure21 => &["table1-code"],
            Exhibit::Table2 | Exhibit::TableB2 => &["semantic-bridge"],
            Exhibit::Table3 | Exhibit::TableD17 => &["table3"],
            // Computed from the banks themselves: no panel, no model call.
            Exhibit::TableD7 => &[],
            // Rendered and scored by the request code itself: no panel, no model call.
            Exhibit::TableE1 | Exhibit::TableE2 | Exhibit::TableE3 => &[],
            Exhibit::TableD15 => &["table1-code", "table1-direct", "semantic-bridge"],
            Exhibit::TableD16 | Exhibit::Figure12 => &["support"],
            // C.1's prior-state replay and C.2's matched construction are separate panels
            // (§3.3: "A separate replay compares transcript recomputation with predicted or
            // gold prior state").
            Exhibit::TableC1 | Exhibit::TableC2 | Exhibit::TableC3 | Exhibit::Figure8 => {
                &["dialogue-prior"]
            }
            Exhibit::TableC4 | Exhibit::TableC5 | Exhibit::Figure9 => &["dialogue-matched"],
            Exhibit::Table4 | Exhibit::Figure4 => &["fresh-plan"],
            Exhibit::TableB1 => &["whole-answer"],
            Exhibit::TableD2 => &["repeats"],
            Exhibit::TableD3 | Exhibit::TableD4 => &["prompt-variants-direct"],
            Exhibit::TableD5 | Exhibit::TableD6 => &["support-union"],
            Exhibit::TableD8 | Exhibit::Figure13 => &["twelve-character"],
            Exhibit::Figure5 => &["copy-reverse", "binding"],
            Exhibit::Figure6 => &["binding"],
            Exhibit::Figure10 => &["prompt-variants", "option-orders", "repeats"],
            Exhibit::Figure11 => &["support-union"],
            Exhibit::Figure15 => &["copy"],
            Exhibit::Figure16 => &["copy-incorrect"],
            Exhibit::Figure17 | Exhibit::Figure18 => &["readout-grid"],
            Exhibit::TableD9 => &["padded", "padded-tokens"],
            Exhibit::TableD10 => &["nested-binding"],
            Exhibit::Figure7 => &["matched-contracts"],
            Exhibit::Figure14 => &["independent-384", "teacher-forced"],
            Exhibit::Projection => &["independent-384"],
            Exhibit::NativeControl => &["native-control"],
        }
    }

    /// The exhibit's document from its panels' run directories.
    pub fn document(self, runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
        match self {
            Exhibit::Table1 => table1::document(runs, against),
            Exhibit::Table2 => semantic::table2(runs, against),
            Exhibit::TableB2 => semantic::table_b2(runs, against),
            Exhibit::Table3 => table3::document(runs, against),
            Exhibit::TableD1 => table_d1::document(runs, against),
            Exhibit::TableC1 => dialogue::table_c1(runs, against),
            Exhibit::TableC2 => dialogue::table_c2(runs),
            Exhibit::TableC3 => dialogue::table_c3(runs),
            Exhibit::TableC4 => dialogue::table_c4(runs),
            Exhibit::TableC5 => dialogue::table_c5(runs),
            Exhibit::Table4 => fresh_plan::document(runs, against),
            Exhibit::TableB1 => whole_answer::document(runs),
            Exhibit::TableD2 => repeats::document(runs),
            Exhibit::TableD3 => prompt_variants::table_d3(runs),
            Exhibit::TableD4 => prompt_variants::table_d4(runs),
            Exhibit::TableD5 => support::table_d5(runs, against),
            Exhibit::TableD6 => support::table_d6(runs, against),
            Exhibit::TableD7 => table_d7::document(),
            Exhibit::TableE1 => contracts::table_e1(),
            Exhibit::TableE2 => Ok(contracts::table_e2()),
            Exhibit::TableE3 => contracts::table_e3(),
            Exhibit::TableD8 => twelve_character::document(runs, against),
            Exhibit::TableD9 => padded::document(runs, against),
            Exhibit::TableD10 => nested_binding::document(runs, against),
            Exhibit::TableD12 => calibration::table_d12(runs),
            Exhibit::TableD13 => cohorts::document(runs),
            Exhibit::TableD14 => calibration::table_d14(runs),
            Exhibit::TableD15 => table_d15::document(runs, against),
            Exhibit::TableD16 => table_d16::document(runs),
            Exhibit::TableD17 => table_d17::document(runs),
            Exhibit::Figure7 => matched_contracts::document(runs),
            Exhibit::Figure2 => by_length::document(runs),
            Exhibit::Figure4 => fresh_plan::figure4(runs, against),
            Exhibit::Figure5 => binding::figure5(runs, against),
            Exhibit::Figure6 => binding::figure6(runs, against),
            Exhibit::Figure8 => dialogue::figure8(runs),
            Exhibit::Figure9 => dialogue::figure9(runs),
            Exhibit::Figure10 => robustness::figure10(runs, against),
            Exhibit::Figure11 => union_gain::document(runs, against),
            Exhibit::Figure13 => branch_factors::document(runs, against),
            Exhibit::Figure15 => copy_fidelity::figure15(runs, against),
            Exhibit::Figure16 => copy_incorrect::figure16(runs, against),
            Exhibit::Figure17 => readout_grid::figure17(runs, against),
            Exhibit::Figure18 => readout_grid::figure18(runs, against),
            Exhibit::Figure19 => calibration::figure19(runs),
            Exhibit::Figure21 => calibration::figure21(runs),
            Exhibit::Figure12 => support_controllers::document(runs, against),
            Exhibit::Figure14 => independence::document(runs),
            Exhibit::Projection => projection::document(runs),
            Exhibit::NativeControl => native_control::document(runs),
        }
    }
}

/// One panel an exhibit reads: the panel's config stem and its run directories, one per model
/// (`reproduce --model A --model B`): the exhibit computes every model's rows from their
/// records together, so Holm families and populations that span models span them here too.
#[derive(Debug, Clone)]
pub struct PanelRun {
    pub panel: &'static str,
    pub run_dirs: Vec<PathBuf>,
}

impl PanelRun {
    /// The records of every model's run and the statistics settings of the first (the same
    /// panel config, so the same settings; a difference is reported), read once: an exhibit
    /// computes its metric rows, contrasts and its own tables from this.
    pub fn load(&self) -> anyhow::Result<LoadedRun> {
        let stats = crate::rundir::runs_stats_config(&self.run_dirs)?;
        // Several models' runs are read as `report` reads them (with its check that they pair
        // the same items).
        let (outcomes, trajectories) = match self.run_dirs.as_slice() {
            [one] => crate::rundir::read_run(one)?,
            several => crate::rundir::read_runs(several)?,
        };
        Ok(LoadedRun {
            run_dirs: self.run_dirs.clone(),
            stats,
            outcomes,
            trajectories,
        })
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

/// One panel's records in memory, every model's together.
#[derive(Clone)]
pub struct LoadedRun {
    pub run_dirs: Vec<PathBuf>,
    pub stats: StatsConfig,
    pub outcomes: Vec<PairedOutcome>,
    pub trajectories: Vec<Trajectory>,
}

impl LoadedRun {
    /// The run directories, for messages.
    pub fn display(&self) -> String {
        let dirs: Vec<String> = self
            .run_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        dirs.join(", ")
    }

    /// The run's metric rows, recomputed with its statistics settings.
    pub fn metric_rows(&self) -> anyhow::Result<Vec<MetricRow>> {
        crate::rundir::snapshot_of(&self.outcomes, &self.trajectories, &self.stats, 0)
            .with_context(|| format!("metrics of {}", self.display()))
    }

    /// The run on the items `ids` holds only: the same records, fewer items (statistics
    /// recomputed from them by [`LoadedRun::metric_rows`]).
    pub fn restricted(&self, ids: &std::collections::BTreeSet<String>) -> LoadedRun {
        LoadedRun {
            run_dirs: self.run_dirs.clone(),
            stats: self.stats.clone(),
            outcomes: (self.outcomes.iter())
                .filter(|o| ids.contains(&o.item_id))
                .cloned()
                .collect(),
            trajectories: (self.trajectories.iter())
                .filter(|t| ids.contains(&t.item_id))
                .cloned()
                .collect(),
        }
    }

    /// The run's declared unit contrasts and cells (`[[stats.contrasts]]`, `[[stats.cells]]`).
    pub fn contrast_tables(&self) -> anyhow::Result<(Vec<ContrastRow>, Vec<CellRow>)> {
        crate::rundir::tables_of(&self.run_dirs, &self.trajectories, &self.stats)
            .with_context(|| format!("contrasts of {}", self.display()))
    }
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
    pub k: u64,
    pub n: u64,
}

impl Count {
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

/// Opens an exhibit's differences section: the heading "This run minus the paper (MODELS)"
/// for the paper models compared ([`compared_models`] of the printed rows' models) and an
/// empty table with `header`, its first `text_columns` columns text.
pub fn differences<'a>(
    doc: &mut Doc,
    printed: impl IntoIterator<Item = &'a str>,
    against: &str,
    text_columns: usize,
    header: &[&str],
) -> (Vec<&'a str>, super::doc::Table) {
    let printed: Vec<&str> = printed.into_iter().collect();
    let models = compared_models(&printed, against);
    doc.h(
        2,
        format!("This run minus the paper ({})", models.join(", ")),
    );
    let table = super::doc::Table {
        text_columns,
        header: header.iter().map(|h| h.to_string()).collect(),
        ..super::doc::Table::default()
    };
    (models, table)
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

/// Metric rows of small simulated runs, for the exhibits' layout tests.
#[cfg(test)]
pub(crate) mod testing {
    use c2s_records::Trajectory;
    use c2s_stats::MetricRow;

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
                domain,
                None,
                "Native/code vs Serial/Full/code",
                metric,
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
