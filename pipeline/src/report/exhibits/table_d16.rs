//! Table D16: "Most Full lexical outputs are absent from WordNet, while Trie completions stay
//! within the candidates. Counts list gold / other candidate / malformed / other noun / other
//! word / unindexed. No gold-synset alternatives were found. Recombinations are noncandidate
//! strings compatible with every position-wise union; they can overlap the resource
//! categories. This is an automated resource audit, not semantic adjudication."
//!
//! Columns as printed: Model, Controller, Items, Output counts, Recombinations; rows: the
//! lexical Serial trajectories of Full, TrieCall, TrieFill and UnionCall from the support
//! panel (`config/panels/support.toml`, 384 items per domain), counted from each trajectory's
//! `membership` and `recombination`. Gold-synset lemmas (a class the paper found empty) and
//! outputs classed without a WordNet index (`outside`) are counted in a note, not hidden in
//! another class.
//!
//! The paper's rows are on different parents per model (D.6: "Jev evaluates all 768 parents;
//! Qwen uses 192 selected by item hash before outcomes"; its Qwen rows have 96 lexical items),
//! so ours are counted on every item and on the qwen-192 subset
//! ([`support_controllers::Parents`]).

use std::collections::BTreeMap;

use c2s_records::{Domain, Membership, Trajectory};
use serde::{Deserialize, Serialize};

use super::paper::PaperTable;
use super::support_controllers::Parents;
use super::{panel_ids, run_of, PanelRun, QWEN_192};
use crate::report::doc::{Doc, Table};

/// The controllers Table D16 prints, in its order.
pub const CONTROLLERS: [&str; 4] = ["Full", "TrieCall", "TrieFill", "UnionCall"];

/// Output counts of one (model, controller) row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Audit {
    /// Lexical Serial trajectories of the controller.
    pub items: u64,
    /// Gold / other candidate / malformed / other noun / other word / unindexed.
    pub counts: [u64; 6],
    /// Outputs that are another lemma of the gold synset (the paper found none); in a note.
    pub gold_synset_lemma: u64,
    /// Outputs classed without a WordNet index (`Membership::Outside`); in a note.
    pub outside: u64,
    /// Noncandidate outputs compatible with every position-wise union (may overlap the
    /// classes).
    pub recombinations: u64,
}

/// One row of Table D16 as printed.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct PaperRow {
    /// The paper model (Jev or Qwen3.5-27B).
    pub model: String,
    /// One of [`CONTROLLERS`].
    pub controller: String,
    /// Lexical items of the row (384 for Jev, 96 for Qwen).
    pub items: u64,
    /// Gold / other candidate / malformed / other noun / other word / unindexed.
    pub counts: [u64; 6],
    /// Noncandidate strings compatible with every position-wise union.
    pub recombinations: u64,
}

/// Table D16 as printed.
pub static PAPER: PaperTable<PaperRow> = PaperTable::new("tableD16");

/// The lexical Serial trajectories' audit per (model, controller).
pub fn audits(trajectories: &[Trajectory]) -> BTreeMap<(String, &'static str), Audit> {
    let mut out: BTreeMap<(String, &'static str), Audit> = BTreeMap::new();
    for t in trajectories.iter().filter(|t| t.domain == Domain::Lexical) {
        let mut parts = t.arm.split('/');
        if parts.next() != Some("Serial") {
            continue;
        }
        let Some(controller) = parts
            .next()
            .and_then(|c| CONTROLLERS.iter().find(|k| **k == c))
        else {
            continue;
        };
        let a = out.entry((t.model.clone(), controller)).or_default();
        a.items += 1;
        let class = match t.membership {
            Membership::Gold => Some(0),
            Membership::OtherCandidate => Some(1),
            Membership::Malformed => Some(2),
            Membership::IndexedNoun => Some(3),
            Membership::IndexedWord => Some(4),
            Membership::Unindexed => Some(5),
            Membership::GoldSynsetLemma => {
                a.gold_synset_lemma += 1;
                None
            }
            Membership::Outside => {
                a.outside += 1;
                None
            }
        };
        if let Some(i) = class {
            a.counts[i] += 1;
        }
        a.recombinations += u64::from(t.recombination);
    }
    out
}

const HEADER: [&str; 5] = [
    "Model",
    "Controller",
    "Items",
    "Output counts",
    "Recombinations",
];

fn counts_cell(c: &[u64; 6]) -> String {
    c.map(|n| n.to_string()).join("/")
}

fn controller_rank(c: &str) -> usize {
    CONTROLLERS
        .iter()
        .position(|k| *k == c)
        .unwrap_or(CONTROLLERS.len())
}

/// One parents' audits: per (model, controller).
pub type Audits = BTreeMap<(String, &'static str), Audit>;

/// Table D16's document: ours on each parents, and the paper's rows.
pub fn layout(ours: &[(Parents, Audits)]) -> anyhow::Result<Doc> {
    let paper_rows = PAPER.rows()?;
    let mut doc = Doc::new("Table D16: Lexical output resource audit");
    doc.p(
        "Counts list gold / other candidate / malformed / other noun / other word / \
         unindexed. Recombinations are noncandidate strings compatible with every \
         position-wise union; they can overlap the resource categories. This is an automated \
         resource audit, not semantic adjudication.",
    );
    let mut rows: Vec<(Parents, &(String, &'static str), &Audit)> = ours
        .iter()
        .flat_map(|(parents, audits)| audits.iter().map(move |(k, a)| (*parents, k, a)))
        .collect();
    rows.sort_by_key(|(parents, (m, c), _)| (m.clone(), *parents, controller_rank(c)));
    let mut notes = vec![
        "Lexical Serial trajectories of the support panel; classes from WordNet 3.0's indexes \
         (Debian's wordnet-base)."
            .to_string(),
        format!(
            "Parents: all = every item of the run (the paper's Jev rows); qwen-192 = the items \
             of {QWEN_192} (the paper's Qwen rows, D.6)."
        ),
    ];
    for (parents, (m, c), a) in &rows {
        if a.gold_synset_lemma > 0 || a.outside > 0 {
            notes.push(format!(
                "{m} {c} ({}): {} gold-synset lemma(s) and {} output(s) classed without a \
                 WordNet index are not in the six counts.",
                parents.label(),
                a.gold_synset_lemma,
                a.outside
            ));
        }
    }
    doc.h(2, "This run");
    let mut header = HEADER.map(String::from).to_vec();
    header.insert(1, "Parents".into());
    doc.table(Table {
        text_columns: 3,
        header,
        rows: rows
            .iter()
            .map(|(parents, (m, c), a)| {
                vec![
                    m.clone(),
                    parents.label().to_string(),
                    c.to_string(),
                    a.items.to_string(),
                    counts_cell(&a.counts),
                    a.recombinations.to_string(),
                ]
            })
            .collect(),
        notes,
    });
    doc.h(2, "The paper (Table D16)");
    doc.table(Table {
        text_columns: 2,
        header: HEADER.map(String::from).to_vec(),
        rows: paper_rows
            .iter()
            .map(|p| {
                vec![
                    p.model.to_string(),
                    p.controller.to_string(),
                    p.items.to_string(),
                    counts_cell(&p.counts),
                    p.recombinations.to_string(),
                ]
            })
            .collect(),
        notes: vec!["No gold-synset alternatives were found.".into()],
    });
    Ok(doc)
}

/// Read the support panel's run and lay out the table.
pub fn document(runs: &[PanelRun]) -> anyhow::Result<Doc> {
    let run = run_of(runs, "support")?.load()?;
    let subset = run.restricted(&panel_ids(QWEN_192)?);
    layout(&[
        (Parents::All, audits(&run.trajectories)),
        (Parents::Qwen192, audits(&subset.trajectories)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every printed row's counts add up to its items.
    #[test]
    fn the_papers_counts_partition_its_items() {
        for p in PAPER.rows().unwrap() {
            assert_eq!(
                p.counts.iter().sum::<u64>(),
                p.items,
                "{} {}",
                p.model,
                p.controller
            );
        }
    }

    fn trajectory(arm: &str, domain: Domain, membership: Membership, recomb: bool) -> Trajectory {
        serde_json::from_value(serde_json::json!({
            "item_id": "i", "domain": domain, "length": 3, "model": "m", "arm": arm,
            "support": "Full", "output": "abc", "correct": false, "valid": true,
            "membership": membership, "recombination": recomb, "aborted": false, "calls": 3,
            "fills": 0, "prompt_tokens": 0, "completion_tokens": 0, "latency_ms": 0.0,
            "steps": [], "position_correct": [],
        }))
        .expect("a test trajectory")
    }

    /// Each lexical Serial trajectory lands in one class of its controller's row; a
    /// recombination is counted beside its class; other arms and domains are not counted.
    #[test]
    fn audits_count_each_class_and_recombinations() {
        use Membership::*;
        let ts = vec![
            trajectory("Serial/Full/code", Domain::Lexical, Gold, false),
            trajectory("Serial/Full/code", Domain::Lexical, Unindexed, true),
            trajectory("Serial/Full/code", Domain::Lexical, Unindexed, false),
            trajectory("Serial/Full/code", Domain::Lexical, GoldSynsetLemma, false),
            trajectory("Serial/UnionCall/code", Domain::Lexical, IndexedNoun, true),
            trajectory("Serial/Full/code", Domain::Arithmetic, Outside, false),
            trajectory("Native/code", Domain::Lexical, Gold, false),
            trajectory("Serial/UnionFill/code", Domain::Lexical, Gold, false),
        ];
        let a = audits(&ts);
        assert_eq!(a.len(), 2);
        let full = a[&("m".to_string(), "Full")];
        assert_eq!(full.items, 4);
        assert_eq!(full.counts, [1, 0, 0, 0, 0, 2]);
        assert_eq!(full.gold_synset_lemma, 1);
        assert_eq!(full.recombinations, 1);
        let md = layout(&[(Parents::All, a.clone()), (Parents::Qwen192, a)])
            .unwrap()
            .markdown();
        for want in [
            "| Model | Parents | Controller | Items | Output counts | Recombinations |",
            "| m | all | Full | 4 | 1/0/0/0/0/2 | 1 |",
            "| m | all | UnionCall | 1 | 0/0/0/1/0/0 | 1 |",
            "| m | qwen-192 | UnionCall | 1 | 0/0/0/1/0/0 | 1 |",
            "| Model | Controller | Items | Output counts | Recombinations |",
            "| Jev | UnionCall | 384 | 92/9/0/11/1/271 | 283 |",
            "m Full (all): 1 gold-synset lemma(s)",
        ] {
            assert!(md.contains(want), "missing {want:?} in\n{md}");
        }
    }
}
