//! Figure 12's numbers: "Preserving complete candidate consistency restores much of lexical
//! construction. Trie's valid outputs belong to Native's eight candidates; Call still queries
//! singletons, while Fill supplies them. Jev's domain contrast shrinks, but all local
//! conditions remain below Native (dashed reference). Panels use 384 Jev or 96 Qwen parents
//! per domain; intervals resample whole items within length."
//!
//! Bars as printed: complete-string EM (%) of Trie / fill, Trie / call, Union / call and Full
//! Serial per (model, domain), Native as the reference line. Ours come from the support panel
//! (`config/panels/support.toml`: Native against every Serial controller on 384 items per
//! domain), each controller's Serial EM from its paired comparison with Native, with the
//! run's length-stratified item-bootstrap interval.
//!
//! The paper's panels are on different parents per model (D.6: "Jev evaluates all 768
//! parents; Qwen uses 192 selected by item hash before outcomes (16 per domain/length)"), so
//! ours are computed twice: on every item of the run, set beside the Jev panels, and on the
//! qwen-192 subset ([`super::QWEN_192`], statistics recomputed on it), set beside the Qwen
//! panels ([`Parents`]).

use c2s_stats::MetricRow;
use serde::{Deserialize, Serialize};

use super::paper::PaperTable;
use super::{differences, panel_ids, paper_domain, pp_diff, run_of, PanelRun, QWEN_192};
use crate::report::doc::{Doc, Table};
use crate::report::tables::{estimate, MetricIndex, UNDEFINED};

/// Figure 12's bars, in its order: (label, support of the Serial arm).
pub const BARS: [(&str, &str); 4] = [
    ("Trie / fill", "TrieFill"),
    ("Trie / call", "TrieCall"),
    ("Union / call", "UnionCall"),
    ("Full Serial", "Full"),
];

/// One panel of Figure 12 as printed: complete-string EM (%) of the four bars.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct PaperPanel {
    /// The paper model (Jev or Qwen3.5-27B).
    pub model: String,
    /// `math` or `lexical`, as printed.
    pub domain: String,
    /// Parents of the panel (384 for Jev, 96 for Qwen).
    pub items: u64,
    /// EM in percent of the four bars, in [`BARS`] order.
    pub em: [f64; 4],
}

/// Figure 12's four panels as printed.
pub static PAPER: PaperTable<PaperPanel> = PaperTable::new("figure12");

/// The parents a row of ours is on, each set beside the paper's rows on the same parents
/// (D.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Parents {
    /// Every item of the run: the paper's Jev rows (384 per domain).
    All,
    /// The qwen-192 subset ([`QWEN_192`]): the paper's Qwen3.5-27B rows (96 per domain).
    Qwen192,
}

impl Parents {
    /// The parents as our tables print them (`all`, `qwen-192`).
    pub fn label(self) -> &'static str {
        match self {
            Parents::All => "all",
            Parents::Qwen192 => "qwen-192",
        }
    }

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
#[derive(Debug, Clone)]
pub struct OurPanel {
    /// The model label of the run's records.
    pub model: String,
    /// The domain as the paper prints it (`math`, `lexical`).
    pub domain: String,
    /// The parents the statistics were computed on.
    pub parents: Parents,
    /// Paired items of the first bar's comparison; `None` without its joint table.
    pub items: Option<u64>,
    /// Native EM in percent with its interval, the figure's dashed reference.
    pub native: String,
    /// Each bar of [`BARS`]: Serial EM as a fraction, and its cell in percent with the
    /// interval; `None` and "–" where the run lacks the controller.
    pub bars: [(Option<f64>, String); 4],
}

/// The Serial support of a `Native/… vs Serial/SUPPORT/…` comparison.
fn serial_support(comparison: &str) -> Option<&str> {
    let (_, serial) = comparison.split_once(" vs ")?;
    let mut parts = serial.split('/');
    (parts.next() == Some("Serial")).then_some(())?;
    parts.next()
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
        let panel = match out
            .iter()
            .position(|p| p.model == g.model && p.domain == domain)
        {
            Some(i) => &mut out[i],
            None => {
                let i = out.len();
                out.push(OurPanel {
                    model: g.model.clone(),
                    domain,
                    parents,
                    items: index.get(&g, None, "both").and_then(|r| r.denominator),
                    native: estimate(index.get(&g, None, "native_em"), None),
                    bars: std::array::from_fn(|_| (None, UNDEFINED.to_string())),
                });
                &mut out[i]
            }
        };
        panel.bars[bar] = (
            index.value(&g, None, "serial_em"),
            estimate(index.get(&g, None, "serial_em"), None),
        );
    }
    out
}

fn header(parents: bool) -> Vec<String> {
    let mut h = vec!["Model".to_string(), "Domain".into()];
    if parents {
        h.push("Parents".into());
    }
    h.push("Items".into());
    h.extend(BARS.iter().map(|(label, _)| label.to_string()));
    h.push("Native".into());
    h
}

/// Figure 12's numbers: ours, the paper's bars, and the differences.
pub fn layout(ours: &[OurPanel], against: &str) -> anyhow::Result<Doc> {
    let paper_rows = PAPER.rows()?;
    let mut doc = Doc::new("Figure 12: Candidate-consistent controllers (numbers)");
    doc.p(
        "Complete-string EM (%) of Serial under four controllers. Trie's valid outputs belong \
         to Native's eight candidates; Call still queries singletons, while Fill supplies \
         them. Native is the reference.",
    );
    doc.h(2, "This run");
    doc.table(Table {
        text_columns: 3,
        header: header(true),
        rows: ours
            .iter()
            .map(|p| {
                let mut row = vec![
                    p.model.clone(),
                    p.domain.clone(),
                    p.parents.label().to_string(),
                    p.items
                        .map_or_else(|| UNDEFINED.to_string(), |n| n.to_string()),
                ];
                row.extend(p.bars.iter().map(|(_, cell)| cell.clone()));
                row.push(p.native.clone());
                row
            })
            .collect(),
        notes: vec![
            "Each controller's Serial EM with the run's length-stratified item-bootstrap \
             interval; Native EM from the same run (support panel)."
                .into(),
            format!(
                "Parents: all = every item of the run (the paper's Jev panels); qwen-192 = the \
                 items of {QWEN_192}, statistics recomputed on them (the paper's Qwen panels, \
                 D.6: \"Qwen uses 192 selected by item hash before outcomes\")."
            ),
        ],
    });
    doc.h(2, "The paper (Figure 12)");
    doc.table(Table {
        text_columns: 2,
        header: header(false),
        rows: paper_rows
            .iter()
            .map(|p| {
                let mut row = vec![
                    p.model.to_string(),
                    p.domain.to_string(),
                    p.items.to_string(),
                ];
                row.extend(p.em.iter().map(|v| format!("{v:.1}")));
                row.push("dashed line, not printed".into());
                row
            })
            .collect(),
        notes: vec![],
    });
    let mut diff_header = vec!["Model", "Domain", "Parents", "Paper panel"];
    let labels: Vec<String> = BARS.iter().map(|(l, _)| format!("Δ {l}")).collect();
    diff_header.extend(labels.iter().map(String::as_str));
    let (models, mut diff) = differences(
        &mut doc,
        paper_rows.iter().map(|p| p.model.as_str()),
        against,
        4,
        &diff_header,
    );
    for ours in ours {
        for m in models
            .iter()
            .filter(|m| Parents::of_paper_model(m) == ours.parents)
        {
            let paper = paper_rows
                .iter()
                .find(|p| p.model == *m && p.domain == ours.domain);
            let mut row = vec![
                ours.model.clone(),
                ours.domain.clone(),
                ours.parents.label().to_string(),
            ];
            match paper {
                Some(p) => {
                    row.push(format!("{} / {}", p.model, p.domain));
                    row.extend(
                        ours.bars
                            .iter()
                            .zip(p.em)
                            .map(|((v, _), printed)| pp_diff(*v, printed)),
                    );
                }
                None => {
                    row.push(format!("{m}: no such panel"));
                    row.extend(BARS.iter().map(|_| UNDEFINED.to_string()));
                }
            }
            diff.rows.push(row);
        }
    }
    diff.notes.push(
        "Percentage points, this run minus the paper's bar on the same parents (ours on all \
         items against Jev, ours on qwen-192 against Qwen3.5-27B)."
            .into(),
    );
    doc.table(diff);
    Ok(doc)
}

/// Read the support panel's run and lay out the numbers.
pub fn document(runs: &[PanelRun], against: &str) -> anyhow::Result<Doc> {
    let run = run_of(runs, "support")?.load()?;
    let subset = run.restricted(&panel_ids(QWEN_192)?);
    let mut ours = our_panels(&run.metric_rows()?, Parents::All);
    ours.extend(our_panels(&subset.metric_rows()?, Parents::Qwen192));
    layout(&ours, against)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::exhibits::testing::{self, paired_rows};

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
        assert_eq!(ours[0].bars[0].0, Some(0.5));
        assert_eq!(ours[0].bars[3].0, Some(0.125));
        assert_eq!(ours[0].bars[1].0, None);
        // D.6: "Jev evaluates all 768 parents; Qwen uses 192 selected by item hash": the
        // subset's rows are set beside the Qwen panels only, all items beside Jev's.
        ours.extend(our_panels(&rows, Parents::Qwen192));
        let md = layout(&ours, "Jev").unwrap().markdown();
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
        let md = layout(&ours, "Qwen3.5-27B").unwrap().markdown();
        assert!(
            md.contains("| m | lexical | qwen-192 | Qwen3.5-27B / lexical | −17.7 |"),
            "{md}"
        );
        assert!(!md.contains("| m | lexical | all | Qwen3.5-27B"), "{md}");
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
        let run = crate::report::exhibits::LoadedRun {
            run_dirs: vec![],
            stats: c2s_stats::StatsConfig::default(),
            outcomes: vec![],
            trajectories: vec![
                testing::trajectory(&listed, "arithmetic", 3, "Serial/Full/code", true),
                testing::trajectory("unlisted", "arithmetic", 3, "Serial/Full/code", true),
            ],
        };
        let subset = run.restricted(&ids);
        assert_eq!(subset.trajectories.len(), 1);
        assert_eq!(subset.trajectories[0].item_id, listed);
    }
}
