//! Table D1: SCR on a common Native-correct population. The rows are every paired row of
//! Table 1's panels (`table1-code`, `table1-direct`: every model of each interface, all
//! `--model`s together, as the paper's population spans its models); per domain the population
//! is the items Native-correct in every row, and each row's SCR on it is retained / coverage
//! with a length-stratified bootstrap recomputed under D.1's seed ([`D1_SEED`]).

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Context;
use c2s_records::{PairedOutcome, Trajectory};
use c2s_stats::MetricRow;
use serde::Serialize;

use super::engine::Frame;
use super::table1::{domain_rank, Interface};
use super::{paper_domain, PanelRun};
use crate::tables::MetricIndex;

/// D.1: "Intervals use 99,999 length-stratified paired item bootstrap draws with seed
/// 20261008" (the draws are the panels' own, 99,999 unless `reproduce --draws` asks fewer).
pub const D1_SEED: u64 = 20_261_008;

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
#[derive(Debug, Clone, Serialize)]
pub struct OurRow {
    /// `MODEL (code)` or `MODEL (direct)`: the paired row's model and interface.
    pub label: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// Common Native-correct items / items every row holds, in the domain.
    pub coverage: (u64, u64),
    /// SCR (retained / Native correct) on the common population, with its interval; `None`
    /// when empty.
    pub scr: Option<MetricRow>,
    /// The share of bootstrap draws dropped for SCR (the ‡ of its cell).
    pub scr_bootstrap_dropped: Option<MetricRow>,
}

/// Per domain: the items every row holds, and those Native-correct in every row.
fn common_population(
    rows: &BTreeMap<RowKey, Vec<&PairedOutcome>>,
) -> BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> {
    let domains: BTreeSet<&str> = rows.values().flatten().map(|o| o.domain.as_str()).collect();
    let in_every_row = |domain: &str, native_correct_only: bool| -> BTreeSet<String> {
        (rows.values())
            .map(|outcomes| {
                (outcomes.iter())
                    .filter(|o| o.domain.as_str() == domain)
                    .filter(|o| o.native_correct || !native_correct_only)
                    .map(|o| o.item_id.clone())
                    .collect::<BTreeSet<String>>()
            })
            .reduce(|a, b| &a & &b)
            .unwrap_or_default()
    };
    (domains.into_iter())
        .map(|domain| {
            let all = in_every_row(domain, false);
            let correct = &in_every_row(domain, true) & &all;
            (domain.to_string(), (all, correct))
        })
        .collect()
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
                c2s_rundir::snapshot_of(&kept, &trajectories, &panel.stats, 0)?
            };
            let index = MetricIndex::new(&metrics);
            let group = index.paired_groups().into_iter().next();
            let get = |m| (group.as_ref()).and_then(|g| index.get(g, None, m).cloned());
            ours.push(OurRow {
                label: format!("{} ({})", key.model, key.interface),
                domain: paper_domain(domain).to_string(),
                coverage: (correct.len() as u64, all.len() as u64),
                scr: get("scr"),
                scr_bootstrap_dropped: get("scr_bootstrap_dropped"),
            });
        }
    }
    ours.sort_by_key(|r| (domain_rank(&r.domain), r.label.clone()));
    Ok(ours)
}

/// Table D1 from Table 1's `table1-code` and `table1-direct` panels' records.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
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
    Ok(Frame::new().rows("ours", &our_rows(&panels)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::laid_out;
    use crate::tables::{ratio, UNDEFINED};

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
        let cells: Vec<(&str, &str, (u64, u64), String)> = (ours.iter())
            .map(|r| (&*r.label, &*r.domain, r.coverage, ratio(r.scr.as_ref())))
            .collect();
        assert_eq!(
            cells,
            [
                ("m (code)", "math", (2, 3), "1/2".into()),
                ("m (direct)", "math", (2, 3), "0/2".into()),
                ("m (code)", "lexical", (0, 1), UNDEFINED.into()),
                ("m (direct)", "lexical", (0, 1), UNDEFINED.into()),
            ]
        );
        let md = laid_out("tableD1", Frame::new().rows("ours", &ours), "Qwen3.5-27B");
        for want in [
            "| Model | Domain | Coverage | Retained | SCR [95% CI] |",
            "| Jev | math | 367/384 | 118/367 | 32.2 [28.1, 36.2] |",
            "| m (code) | math | Qwen3.5-27B math | −28.9 | +39.6 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
