//! Table D1: "The arithmetic–lexical contrast persists on a common Native-correct population.
//! Coverage, retained counts and 95% item bootstrap intervals stratified by length are shown."
//! (D.1: "Qwen's code and character contracts yield different Native-correct populations;
//! shared-correct comparisons preserve the Jev/Qwen domain reversal".)
//!
//! The paper's rows are Jev (code interface) and Qwen3.5-27B (direct interface), each on the
//! items both got right under Native. Ours take every paired row of Table 1's two panels
//! (`table1-code`, `table1-direct`: each model of each interface) and keep, per domain, the
//! items Native-correct in every row; each row's SCR on that population is retained/coverage,
//! with a length-stratified bootstrap recomputed on it under D.1's seed ([`D1_SEED`]).
//!
//! Across models: `reproduce tableD1 --model A --model B` reads every model's runs of both
//! panels, so the rows are every model under each interface and the population is the items
//! all of them got right, as the paper's spans its models ("Table D1 compares models on a
//! common Native-correct population", A.1). With one model it is that model's code ∩ direct
//! items.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Context;
use c2s_records::{PairedOutcome, Trajectory};
use c2s_stats::MetricRow;
use serde::{Deserialize, Serialize};

use super::paper::PaperTable;
use super::table1::Interface;
use super::{differences, paper_domain, pp_diff, PanelRun};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{ratio, scr_cell, MetricIndex, UNDEFINED};

/// D.1: "Intervals use 99,999 length-stratified paired item bootstrap draws with seed
/// 20261008" (the draws are the panels' own, 99,999 unless `reproduce --draws` asks fewer).
pub const D1_SEED: u64 = 20_261_008;

/// One row of Table D1 as printed.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct PaperRow {
    /// The paper model (Jev: code interface; Qwen3.5-27B: direct interface).
    pub model: String,
    /// `math` or `lexical`, as printed.
    pub domain: String,
    /// Common Native-correct items / items.
    pub coverage: (u64, u64),
    /// Serial-correct items of the common Native-correct population.
    pub retained: u64,
    /// SCR [95% CI] in percent on that population, as printed.
    pub scr: (f64, f64, f64),
}

/// Table D1's four printed rows (exhibits/tableD1.tsv).
pub static PAPER: PaperTable<PaperRow> = PaperTable::new("tableD1");

/// A paired row of the exhibit: a model's Native/Serial comparison under one interface.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct RowKey {
    interface: &'static str,
    model: String,
    native_arm: String,
    serial_arm: String,
}

/// One panel's records with its interface.
pub struct PanelRecords {
    /// The panel's interface label (`code`, `direct`).
    pub interface: &'static str,
    /// The panel's paired Native/Serial outcomes, every model's.
    pub outcomes: Vec<PairedOutcome>,
    /// The panel's trajectories, from which SCR is recomputed on the common population.
    pub trajectories: Vec<Trajectory>,
    /// The panel's statistics settings with D.1's seed ([`D1_SEED`]).
    pub stats: c2s_stats::StatsConfig,
}

/// One of our rows.
#[derive(Debug, Clone)]
pub struct OurRow {
    /// `MODEL (code)` or `MODEL (direct)`: the paired row's model and interface.
    pub label: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// Common Native-correct items / items every row holds, in the domain.
    pub coverage: (u64, u64),
    /// Retained / Native correct on the common population, as printed.
    pub retained: String,
    /// SCR with its interval in percent on the common population, as printed.
    pub scr_ci: String,
    /// SCR as a fraction on the common population; `None` when empty.
    pub scr: Option<f64>,
}

/// Per domain: the items every row holds, and those Native-correct in every row.
fn common_population(
    rows: &BTreeMap<RowKey, Vec<&PairedOutcome>>,
) -> BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> {
    let mut per_domain: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> = BTreeMap::new();
    let domains: BTreeSet<String> = rows
        .values()
        .flatten()
        .map(|o| o.domain.as_str().to_string())
        .collect();
    for domain in domains {
        let mut all: Option<BTreeSet<String>> = None;
        let mut correct: Option<BTreeSet<String>> = None;
        for outcomes in rows.values() {
            let here: Vec<&&PairedOutcome> = outcomes
                .iter()
                .filter(|o| o.domain.as_str() == domain)
                .collect();
            let items: BTreeSet<String> = here.iter().map(|o| o.item_id.clone()).collect();
            let right: BTreeSet<String> = here
                .iter()
                .filter(|o| o.native_correct)
                .map(|o| o.item_id.clone())
                .collect();
            all = Some(match all {
                None => items,
                Some(a) => a.intersection(&items).cloned().collect(),
            });
            correct = Some(match correct {
                None => right,
                Some(c) => c.intersection(&right).cloned().collect(),
            });
        }
        let all = all.unwrap_or_default();
        let correct = correct
            .unwrap_or_default()
            .intersection(&all)
            .cloned()
            .collect();
        per_domain.insert(domain, (all, correct));
    }
    per_domain
}

/// Our rows: each paired row's SCR on the common Native-correct population of its domain.
pub fn our_rows(panels: &[PanelRecords]) -> anyhow::Result<Vec<OurRow>> {
    let mut rows: BTreeMap<RowKey, Vec<&PairedOutcome>> = BTreeMap::new();
    for p in panels {
        for o in &p.outcomes {
            rows.entry(RowKey {
                interface: p.interface,
                model: o.model.clone(),
                native_arm: o.native_arm.clone(),
                serial_arm: o.serial_arm.clone(),
            })
            .or_default()
            .push(o);
        }
    }
    let population = common_population(&rows);
    let mut ours = Vec::new();
    for (key, outcomes) in &rows {
        let panel = panels
            .iter()
            .find(|p| p.interface == key.interface)
            .context("a row without its panel")?;
        for (domain, (all, correct)) in &population {
            let kept: Vec<PairedOutcome> = outcomes
                .iter()
                .filter(|o| o.domain.as_str() == domain && correct.contains(&o.item_id))
                .map(|o| (*o).clone())
                .collect();
            let trajectories: Vec<Trajectory> = panel
                .trajectories
                .iter()
                .filter(|t| {
                    t.model == key.model
                        && (t.arm == key.native_arm || t.arm == key.serial_arm)
                        && correct.contains(&t.item_id)
                })
                .cloned()
                .collect();
            let metrics: Vec<MetricRow> = if kept.is_empty() {
                Vec::new()
            } else {
                crate::rundir::snapshot_of(&kept, &trajectories, &panel.stats, 0)?
            };
            let index = MetricIndex::new(&metrics);
            let group = index.paired_groups().into_iter().next();
            let scr_row = group.as_ref().and_then(|g| index.get(g, None, "scr"));
            ours.push(OurRow {
                label: format!("{} ({})", key.model, key.interface),
                domain: paper_domain(domain).to_string(),
                coverage: (correct.len() as u64, all.len() as u64),
                retained: ratio(scr_row),
                scr_ci: group
                    .as_ref()
                    .map_or(UNDEFINED.to_string(), |g| scr_cell(&index, g, None)),
                scr: scr_row.and_then(|r| r.value),
            });
        }
    }
    // The paper's order: domain, then row.
    ours.sort_by(|a, b| {
        (domain_rank(&a.domain), &a.label).cmp(&(domain_rank(&b.domain), &b.label))
    });
    Ok(ours)
}

fn domain_rank(domain: &str) -> usize {
    match domain {
        "math" => 0,
        "lexical" => 1,
        _ => 2,
    }
}

fn header() -> Vec<String> {
    ["Model", "Domain", "Coverage", "Retained", "SCR [95% CI]"]
        .map(String::from)
        .to_vec()
}

/// Table D1's document: ours, the paper's, and the differences.
pub fn layout(ours: &[OurRow], against: &str) -> anyhow::Result<Doc> {
    let printed = PAPER.rows()?;
    let mut doc = Doc::new("Table D1: SCR on a common Native-correct population");
    doc.p(
        "Coverage, retained counts and 95% item bootstrap intervals stratified by length are \
         shown. The population of a domain is the items Native-correct in every row.",
    );
    doc.h(2, "This run");
    doc.table(Table {
        text_columns: 2,
        header: header(),
        rows: ours
            .iter()
            .map(|r| {
                vec![
                    r.label.clone(),
                    r.domain.clone(),
                    format!("{}/{}", r.coverage.0, r.coverage.1),
                    r.retained.clone(),
                    r.scr_ci.clone(),
                ]
            })
            .collect(),
        notes: vec![
            "Rows: every model of table1-code (code) and table1-direct (direct); Retained is \
             Serial-correct / coverage."
                .into(),
        ],
    });
    doc.h(2, "The paper (Table D1)");
    doc.table(Table {
        text_columns: 2,
        header: header(),
        rows: printed
            .iter()
            .map(|p| {
                vec![
                    p.model.to_string(),
                    p.domain.to_string(),
                    format!("{}/{}", p.coverage.0, p.coverage.1),
                    format!("{}/{}", p.retained, p.coverage.0),
                    format!("{:.1} [{:.1}, {:.1}]", p.scr.0, p.scr.1, p.scr.2),
                ]
            })
            .collect(),
        notes: vec!["Jev under the code interface, Qwen3.5-27B under the direct one.".into()],
    });
    let (models, mut diff) = differences(
        &mut doc,
        printed.iter().map(|p| p.model.as_str()),
        against,
        3,
        &["Model", "Domain", "Paper row", "Δ Coverage", "Δ SCR"],
    );
    for r in ours {
        for p in printed
            .iter()
            .filter(|p| models.contains(&p.model.as_str()) && p.domain == r.domain)
        {
            let coverage = (r.coverage.1 > 0).then(|| r.coverage.0 as f64 / r.coverage.1 as f64);
            diff.rows.push(vec![
                r.label.clone(),
                r.domain.clone(),
                format!("{} {}", p.model, p.domain),
                pp_diff(coverage, 100.0 * p.coverage.0 as f64 / p.coverage.1 as f64),
                pp_diff(r.scr, p.scr.0),
            ]);
        }
    }
    diff.notes
        .push("Percentage points, this run minus the paper's row of the same domain.".into());
    doc.table(diff);
    Ok(doc)
}

/// Table D1 from Table 1's `table1-code` and `table1-direct` panels' records.
pub fn document(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let mut panels = Vec::new();
    for run in runs {
        let loaded = run.load()?;
        panels.push(PanelRecords {
            interface: Interface::of_panel(run.panel)?.label(),
            outcomes: loaded.outcomes,
            trajectories: loaded.trajectories,
            stats: c2s_stats::StatsConfig {
                seed: D1_SEED,
                ..loaded.stats
            },
        });
    }
    layout(&our_rows(&panels)?, against)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_rows_are_consistent() {
        for p in PAPER.rows().unwrap() {
            let scr = 100.0 * p.retained as f64 / p.coverage.0 as f64;
            assert!((scr - p.scr.0).abs() < 0.06, "{} {}", p.model, p.domain);
        }
    }

    fn outcome(
        item: &str,
        domain: c2s_records::Domain,
        native: bool,
        serial: bool,
    ) -> PairedOutcome {
        PairedOutcome {
            item_id: item.into(),
            domain,
            length: 3,
            model: "m".into(),
            native_arm: "Native/code".into(),
            serial_arm: "Serial/Full/code".into(),
            native_correct: native,
            serial_correct: serial,
            pattern: None,
        }
    }

    /// The population is the items Native-correct under both interfaces; each row's SCR is its
    /// Serial-correct share of that population.
    #[test]
    fn rows_are_computed_on_the_common_native_correct_population() {
        use c2s_records::Domain::{Arithmetic, Lexical};
        let code = vec![
            outcome("a1", Arithmetic, true, true),
            outcome("a2", Arithmetic, true, false),
            outcome("a3", Arithmetic, false, true),
            outcome("l1", Lexical, true, false),
        ];
        let direct = vec![
            outcome("a1", Arithmetic, true, false),
            outcome("a2", Arithmetic, true, false),
            outcome("a3", Arithmetic, true, true),
            outcome("l1", Lexical, false, false),
        ];
        let stats = c2s_stats::StatsConfig {
            bootstrap_draws: 99,
            ..c2s_stats::StatsConfig::default()
        };
        let panels = [
            PanelRecords {
                interface: "code",
                outcomes: code,
                trajectories: Vec::new(),
                stats: stats.clone(),
            },
            PanelRecords {
                interface: "direct",
                outcomes: direct,
                trajectories: Vec::new(),
                stats,
            },
        ];
        let ours = our_rows(&panels).unwrap();
        let cells: Vec<(String, String, (u64, u64), String)> = ours
            .iter()
            .map(|r| {
                (
                    r.label.clone(),
                    r.domain.clone(),
                    r.coverage,
                    r.retained.clone(),
                )
            })
            .collect();
        assert_eq!(
            cells,
            [
                (
                    "m (code)".to_string(),
                    "math".to_string(),
                    (2, 3),
                    "1/2".to_string()
                ),
                ("m (direct)".into(), "math".into(), (2, 3), "0/2".into()),
                (
                    "m (code)".into(),
                    "lexical".into(),
                    (0, 1),
                    UNDEFINED.into()
                ),
                (
                    "m (direct)".into(),
                    "lexical".into(),
                    (0, 1),
                    UNDEFINED.into()
                ),
            ]
        );
        let md = layout(&ours, "Qwen3.5-27B").unwrap().markdown();
        for want in [
            "| Model | Domain | Coverage | Retained | SCR [95% CI] |",
            "| Jev | math | 367/384 | 118/367 | 32.2 [28.1, 36.2] |",
            "| m (code) | math | Qwen3.5-27B math | −28.9 | +39.6 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
