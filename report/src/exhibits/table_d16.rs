//! Table D16 (lexical output resource audit) from the support panel
//! (`config/panels/support.toml`): the lexical Serial trajectories of Full, TrieCall, TrieFill
//! and UnionCall counted by their `membership` class and `recombination` flag. Gold-synset
//! lemmas and outputs classed without a WordNet index (`outside`) are counted apart, in a note.
//! Counted on every item and on the qwen-192 subset, the paper's Qwen rows' parents (D.6,
//! [`support_controllers::Parents`]).

use std::collections::BTreeMap;

use c2s_records::{Domain, Membership, Trajectory};
use serde::Serialize;

use super::engine::Frame;
use super::support_controllers::Parents;
use super::{panel_ids, run_of, PanelRun, QWEN_192};

/// The controllers Table D16 prints, in its order.
pub const CONTROLLERS: [&str; 4] = ["Full", "TrieCall", "TrieFill", "UnionCall"];

/// Output counts of one (model, controller) row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Audit {
    /// Lexical Serial trajectories of the controller.
    pub items: u64,
    /// Gold / other candidate / malformed / other noun / other word / unindexed.
    pub counts: [u64; 6],
    /// Outputs that are another lemma of the gold synset (the paper found none); in a note.
    pub gold_synset_lemma: u64,
    /// Outputs classed without a WordNet index (`Membership::Outside`); in a note.
    pub outside: u64,
    /// Noncandidate outputs compatible with every position-wise union (may overlap classes).
    pub recombinations: u64,
}

/// One parents' audits: per (model, controller).
pub type Audits = BTreeMap<(String, &'static str), Audit>;

/// The lexical Serial trajectories' audit per (model, controller).
pub fn audits(trajectories: &[Trajectory]) -> Audits {
    let mut out = Audits::new();
    for t in trajectories.iter().filter(|t| t.domain == Domain::Lexical) {
        let Some(controller) = (t.arm.strip_prefix("Serial/"))
            .and_then(|rest| rest.split('/').next())
            .and_then(|c| CONTROLLERS.iter().find(|k| **k == c))
        else {
            continue;
        };
        let a = out.entry((t.model.clone(), controller)).or_default();
        a.items += 1;
        match t.membership {
            Membership::Gold => a.counts[0] += 1,
            Membership::OtherCandidate => a.counts[1] += 1,
            Membership::Malformed => a.counts[2] += 1,
            Membership::IndexedNoun => a.counts[3] += 1,
            Membership::IndexedWord => a.counts[4] += 1,
            Membership::Unindexed => a.counts[5] += 1,
            Membership::GoldSynsetLemma => a.gold_synset_lemma += 1,
            Membership::Outside => a.outside += 1,
        }
        a.recombinations += u64::from(t.recombination);
    }
    out
}

/// One of our rows: a (model, parents, controller)'s audit.
#[derive(Debug, Serialize)]
pub struct OurRow {
    /// The model label of the run's records.
    pub model: String,
    /// The parents counted on.
    pub parents: Parents,
    /// One of [`CONTROLLERS`].
    pub controller: &'static str,
    /// The row's output counts.
    #[serde(flatten)]
    pub audit: Audit,
}

/// Table D16's rows: ours on each parents, by model, parents and controller.
pub fn our_rows(ours: &[(Parents, Audits)]) -> Vec<OurRow> {
    let mut rows: Vec<OurRow> = (ours.iter())
        .flat_map(|(parents, audits)| {
            (audits.iter()).map(move |((model, controller), audit)| OurRow {
                model: model.clone(),
                parents: *parents,
                controller,
                audit: *audit,
            })
        })
        .collect();
    rows.sort_by_key(|r| {
        let rank = CONTROLLERS.iter().position(|c| *c == r.controller);
        (r.model.clone(), r.parents, rank)
    });
    rows
}

/// Read the support panel's run: Table D16's rows.
pub fn document(runs: &[PanelRun], _against: &str) -> anyhow::Result<Frame> {
    let run = run_of(runs, "support")?.load()?;
    let subset = run.restricted(&panel_ids(QWEN_192)?);
    let ours = our_rows(&[
        (Parents::All, audits(&run.trajectories)),
        (Parents::Qwen192, audits(&subset.trajectories)),
    ]);
    Ok(Frame::new().rows("ours", &ours))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exhibits::testing::laid_out;

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
        let ours = our_rows(&[(Parents::All, a.clone()), (Parents::Qwen192, a)]);
        let frame = Frame::new().rows("ours", &ours);
        let md = laid_out("tableD16", frame, "Jev");
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
