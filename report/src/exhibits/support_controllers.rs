//! Figure 12's numbers from the support panel (`config/panels/support.toml`): each Serial
//! controller's EM from its paired comparison with Native (Native the reference), with the
//! run's length-stratified item-bootstrap interval. The paper's panels are on different parents
//! per model (D.6: Jev all items, Qwen 192 selected by item hash), so ours are computed on every
//! item and on the qwen-192 subset ([`super::QWEN_192`], statistics recomputed), each set beside
//! the paper's panels on the same parents ([`Parents`]).

use c2s_records::{comparison_arms, Arm, ArmSpec, Support};
use c2s_stats::MetricRow;
use minijinja::{context, Value};
use serde::Serialize;

use super::engine::Frame;
use super::{compared_models, panel_ids, paper, paper_domain, run_of, PanelRun, QWEN_192};
use crate::tables::MetricIndex;

/// Figure 12's bars, in its order: (label, support of the Serial arm).
pub const BARS: [(&str, Support); 4] = [
    ("Trie / fill", Support::TRIE_FILL),
    ("Trie / call", Support::TRIE_CALL),
    ("Union / call", Support::UNION_CALL),
    ("Full Serial", Support::FULL),
];

/// The parents a row of ours is on, set beside the paper's rows on the same parents (D.6);
/// printed `all`, `qwen-192`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Parents {
    /// Every item of the run: the paper's Jev rows (384 per domain).
    #[serde(rename = "all")]
    All,
    /// The qwen-192 subset ([`QWEN_192`]): the paper's Qwen3.5-27B rows (96 per domain).
    #[serde(rename = "qwen-192")]
    Qwen192,
}

impl Parents {
    /// The parents of a paper model's rows.
    pub fn of_paper_model(model: &str) -> Parents {
        if model == "Qwen3.5-27B" {
            Parents::Qwen192
        } else {
            Parents::All
        }
    }
}

/// One (model, domain) of ours: Native's EM cell, then each bar's (EM, its cell).
#[derive(Debug, Clone, Serialize)]
pub struct OurPanel {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// The parents the statistics were computed on.
    pub parents: Parents,
    /// Paired items of the first bar's comparison; `None` without its joint table.
    pub items: Option<u64>,
    /// Native EM with its interval, the figure's dashed reference.
    pub native: Option<MetricRow>,
    /// Each bar of [`BARS`]: Serial EM with its interval; `None` without it.
    pub bars: [Option<MetricRow>; 4],
}

/// The Serial support of a `Native/… vs Serial/SUPPORT/…` comparison.
fn serial_support(comparison: &str) -> Option<Support> {
    let (_, serial) = comparison_arms(comparison)?;
    let spec = ArmSpec::from_label(serial).ok()?;
    (spec.arm == Arm::Serial).then_some(spec.support)
}

/// Our panels from the support run's metric rows on `parents`.
pub fn our_panels(rows: &[MetricRow], parents: Parents) -> Vec<OurPanel> {
    let index = MetricIndex::new(rows);
    let mut out: Vec<OurPanel> = Vec::new();
    for g in index.paired_groups() {
        let Some(bar) = serial_support(&g.comparison)
            .and_then(|s| BARS.iter().position(|(_, support)| *support == s))
        else {
            continue;
        };
        let domain = paper_domain(&g.domain).to_string();
        let i = match (out.iter()).position(|p| p.model == g.model && p.domain == domain) {
            Some(i) => i,
            None => {
                out.push(OurPanel {
                    model: g.model.clone(),
                    domain,
                    parents,
                    items: index.get(&g, None, "both").and_then(|r| r.denominator),
                    native: index.get(&g, None, "native_em").cloned(),
                    bars: Default::default(),
                });
                out.len() - 1
            }
        };
        out[i].bars[bar] = index.get(&g, None, "serial_em").cloned();
    }
    out
}

/// One of ours set beside a compared paper model's panel on the same parents (D.6).
#[derive(Debug, Serialize)]
pub struct Beside<'a> {
    /// Our row.
    #[serde(flatten)]
    pub ours: &'a OurPanel,
    /// The paper model whose panel on the row's domain it is compared with.
    pub paper_model: &'a str,
}

/// Figure 12's rows: ours; each of ours once per compared paper model on its parents
/// (`beside`: the models [`super::compared_models`] takes with `against`, in the paper's order);
/// and the paper's panels, each with its model as `paper_model` (`printed`).
pub fn frame(ours: &[OurPanel], against: &str) -> anyhow::Result<Frame> {
    let paper = paper::records("figure12")?;
    let models: Vec<String> = (paper.iter())
        .filter_map(|panel| panel.get_attr("model").ok()?.as_str().map(String::from))
        .collect();
    let models: Vec<&str> = models.iter().map(String::as_str).collect();
    let compared = compared_models(&models, against);
    let beside: Vec<Beside> = (ours.iter())
        .flat_map(|row| {
            (compared.iter())
                .filter(|m| Parents::of_paper_model(m) == row.parents)
                .map(move |m| Beside {
                    ours: row,
                    paper_model: m,
                })
        })
        .collect();
    let printed: Vec<Value> = (paper.into_iter())
        .map(|panel| {
            let paper_model = panel.get_attr("model").unwrap_or_default();
            context! { paper_model, ..panel }
        })
        .collect();
    Ok((Frame::new().rows("ours", ours))
        .rows("beside", &beside)
        .rows("printed", &printed))
}

/// Read the support panel's run and compute the rows.
pub fn document(runs: &[PanelRun], against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "support")?.load()?;
    let subset = run.restricted(&panel_ids(QWEN_192)?);
    let mut ours = our_panels(&run.metric_rows()?, Parents::All);
    ours.extend(our_panels(&subset.metric_rows()?, Parents::Qwen192));
    frame(&ours, against)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::{self, laid_out, paired_rows};

    fn comparison(rows: Vec<MetricRow>, serial: &str) -> Vec<MetricRow> {
        rows.into_iter()
            .map(|r| MetricRow {
                comparison: format!("Native/code vs {serial}"),
                ..r
            })
            .collect()
    }

    /// Each controller's bar is its comparison's Serial EM; controllers Figure 12 does not
    /// draw (FullFill, UnionFill) are left out.
    #[test]
    fn the_layout_has_the_papers_bars_and_differences() {
        let mut rows = comparison(
            paired_rows("m", "lexical", [2, 2, 2, 2], (0.1, 0.9)),
            "Serial/TrieFill/code",
        );
        rows.extend(comparison(
            paired_rows("m", "lexical", [1, 3, 0, 4], (0.0, 0.5)),
            "Serial/Full/code",
        ));
        rows.extend(comparison(
            paired_rows("m", "lexical", [4, 0, 4, 0], (0.5, 1.0)),
            "Serial/UnionFill/code",
        ));
        let mut ours = our_panels(&rows, Parents::All);
        assert_eq!(ours.len(), 1);
        let value = |bar: &Option<MetricRow>| bar.as_ref().and_then(|r| r.value);
        assert_eq!(value(&ours[0].bars[0]), Some(0.5));
        assert_eq!(value(&ours[0].bars[3]), Some(0.125));
        assert_eq!(value(&ours[0].bars[1]), None);
        // D.6: "Jev evaluates all 768 parents; Qwen uses 192 selected by item hash": the
        // subset's rows are set beside the Qwen panels only, all items beside Jev's.
        ours.extend(our_panels(&rows, Parents::Qwen192));
        let md = laid_out("figure12", frame(&ours, "Jev").unwrap(), "Jev");
        for want in [
            "| Model | Domain | Parents | Items | Trie / fill | Trie / call | Union / call | Full Serial | Native |",
            "| m | lexical | all | 8 | 50.0 | – | – | 12.5 | 50.0 |",
            "| m | lexical | qwen-192 | 8 | 50.0 | – | – | 12.5 | 50.0 |",
            "| Model | Domain | Items | Trie / fill | Trie / call | Union / call | Full Serial | Native |",
            "| Jev | lexical | 384 | 81.8 | 82.0 | 24.0 | 1.8 | dashed line, not printed |",
            "| m | lexical | all | Jev / lexical | −31.8 | – | – | +10.7 |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert!(!md.contains("| m | lexical | qwen-192 | Jev"), "{md}");
        let md = laid_out(
            "figure12",
            frame(&ours, "Qwen3.5-27B").unwrap(),
            "Qwen3.5-27B",
        );
        assert!(
            md.contains("| m | lexical | qwen-192 | Qwen3.5-27B / lexical | −17.7 |"),
            "{md}"
        );
        assert!(!md.contains("| m | lexical | all | Qwen3.5-27B"), "{md}");
    }

    /// Each row is set beside every compared model's panel on its parents, and says so where
    /// that model prints no panel of its domain; models on other parents are left out.
    #[test]
    fn a_compared_model_without_the_domains_panel_says_so() {
        let rows = comparison(
            paired_rows("m", "semantic_binary", [2, 2, 2, 2], (0.1, 0.9)),
            "Serial/TrieFill/code",
        );
        let mut ours = our_panels(&rows, Parents::All);
        ours.extend(our_panels(&rows, Parents::Qwen192));
        let md = laid_out("figure12", frame(&ours, "StartLux").unwrap(), "StartLux");
        for want in [
            "## This run minus the paper (Jev, Qwen3.5-27B)",
            "| m | semantic_binary | all | Jev: no such panel | – | – | – | – |",
            "| m | semantic_binary | qwen-192 | Qwen3.5-27B: no such panel | – | – | – | – |",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
        assert!(
            !md.contains("| m | semantic_binary | all | Qwen3.5-27B"),
            "{md}"
        );
        let md = laid_out("figure12", frame(&ours, "Jev").unwrap(), "Jev");
        assert!(
            md.contains("| m | semantic_binary | all | Jev: no such panel |"),
            "{md}"
        );
        assert!(
            !md.contains("| m | semantic_binary | qwen-192 | Jev"),
            "{md}"
        );
    }

    /// D.6: "Qwen uses 192 selected by item hash before outcomes (16 per domain/length)". The
    /// list holds 192 items, 96 per bank, and a run restricted to it keeps only their records.
    #[test]
    fn the_qwen_parents_are_the_192_listed_items() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let ids = panel_ids(&format!("{root}/{QWEN_192}")).unwrap();
        assert_eq!(ids.len(), 192);
        let bank =
            std::fs::read_to_string(format!("{root}/data/banks/arithmetic-test.jsonl")).unwrap();
        let math = ids
            .iter()
            .filter(|id| bank.contains(&format!("\"item_id\":\"{id}\"")))
            .count();
        assert_eq!(math, 96);
        let listed = ids.iter().next().unwrap().clone();
        let run = crate::exhibits::LoadedRun::from_records(
            vec![],
            c2s_stats::StatsConfig::default(),
            vec![],
            vec![
                testing::trajectory(&listed, "arithmetic", 3, "Serial/Full/code", true),
                testing::trajectory("unlisted", "arithmetic", 3, "Serial/Full/code", true),
            ],
        );
        let subset = run.restricted(&ids);
        assert_eq!(subset.trajectories.len(), 1);
        assert_eq!(subset.trajectories[0].item_id, listed);
    }
}
