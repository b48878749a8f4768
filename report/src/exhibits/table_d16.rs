//! Table D16 (lexical output resource audit) from the support panel
//! (`config/panels/support.toml`): the lexical Serial trajectories of Full, TrieCall, TrieFill
//! and UnionCall counted by their `membership` class and `recombination` flag. Gold-synset
//! lemmas and outputs classed without a WordNet index (`outside`) are counted apart, in a note.
//! Counted on every item and on the qwen-192 subset, the paper's Qwen rows' parents (D.6,
//! [`super::support_controllers::Parents`]). Its rows are declared in exhibits/tableD16.toml
//! (`[[sources]]`: the panel's trajectories summed per model and controller on each subset);
//! this module holds its tests.

#[cfg(test)]
mod tests {
    use c2s_records::{Domain, Membership, Trajectory};
    use minijinja::Value;

    use crate::exhibits::engine::{environment, Frame};
    use crate::exhibits::sources::PanelRecords;
    use crate::exhibits::testing::laid_out;
    use crate::exhibits::Exhibit;

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
        let panel = || {
            vec![PanelRecords {
                panel: "support".into(),
                metric_rows: vec![],
                trajectories: ts.clone(),
            }]
        };
        let subsets = [
            ("all".to_string(), panel()),
            ("qwen-192".to_string(), panel()),
        ];
        let exhibit = Exhibit::named("tableD16").expect("a registered exhibit");
        let source = &exhibit.spec.sources[0];
        let ours = (source.rows_of_subsets(&subsets, &environment())).expect("the rows");
        assert_eq!(ours.len(), 4);
        let full = &ours[0];
        let at = |key: &str| full.get_attr(key).unwrap();
        assert_eq!(at("controller"), Value::from("Full"));
        assert_eq!(at("n"), Value::from(4));
        let counts = [
            "gold",
            "other_candidate",
            "malformed",
            "other_noun",
            "other_word",
        ];
        let counts: Vec<Value> = (counts.iter().chain(&["unindexed"]))
            .map(|k| at(k))
            .collect();
        assert_eq!(counts, [1, 0, 0, 0, 0, 2].map(Value::from));
        assert_eq!(at("gold_synset_lemma"), Value::from(1));
        assert_eq!(at("recombinations"), Value::from(1));
        let md = laid_out("tableD16", Frame::new().values("ours", ours), "Jev");
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
