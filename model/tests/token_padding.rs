//! D.9's token control with SmolLM2's own tokenizer over the whole shipped panel: every
//! PaddedTokens request of the 96 copy parents (`data/panels/copy-96.txt`) has an exact match,
//! at the gold prefix and at a wrong one. "Punctuation, excluding answer symbols and index
//! numbers, matches the pinned tokenizer's full rendered Indexed request at the same prefix.
//! Every realized match is verified" (D.9).

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;

use c2s_model::tokenizer::ModelTokenizer;
use c2s_model::PromptSpec;
use c2s_protocol::{Controller, ControllerConfig, PromptTokenCounter, TokenCounterRef};
use c2s_records::{Answer, Arm, ArmSpec, CopyControl, Evidence, Item, Request, Response};

fn root() -> PathBuf {
    // Cargo's runtime value first: a target directory shared with a checkout at another path
    // may hold this build with that path compiled in.
    PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("..")
}

/// The counter the pipeline uses: the request rendered with the chat template, encoded.
struct Pinned(ModelTokenizer);

impl PromptTokenCounter for Pinned {
    fn prompt_tokens(&self, r: &Request) -> Result<u32, c2s_protocol::PromptTokensError> {
        self.0
            .prompt_tokens(&PromptSpec::from_request(r))
            .map(|t| t.len() as u32)
            .map_err(c2s_protocol::PromptTokensError::new)
    }
}

fn parents() -> Vec<Item> {
    let ids = std::fs::read_to_string(root().join("data/panels/copy-96.txt")).unwrap();
    let ids: std::collections::BTreeSet<&str> = ids.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for bank in ["arithmetic-test.jsonl", "lexical-test.jsonl"] {
        let text = std::fs::read_to_string(root().join("data/banks").join(bank)).unwrap();
        for line in text.lines() {
            let item = c2s_records::parse_item(line, &Default::default()).unwrap();
            if ids.contains(item.item_id.as_str()) {
                out.push(item);
            }
        }
    }
    out
}

/// A scored answer choosing `value`, with the engine's prompt count of `r`.
fn answer(r: &Request, value: &str, counter: &Pinned) -> Response {
    let n = r.options.len();
    let probabilities = (0..n)
        .map(|i| {
            if r.options[i].value == value {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    Response {
        request_id: r.request_id.clone(),
        answer: Answer::Scored {
            probabilities,
            raw: None,
        },
        prompt_tokens: counter.prompt_tokens(r).unwrap(),
        completion_tokens: 1,
        latency_ms: 0.0,
        cached: false,
    }
}

#[test]
fn every_padded_tokens_request_of_the_copy_panel_matches_exactly() {
    let path = root().join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        path.exists(),
        "{} is missing: run scripts/fetch-model.sh (scripts/test.sh does)",
        path.display()
    );
    let counter = Arc::new(Pinned(c2s_model::load_tokenizer(&path).unwrap()));
    let cfg = ControllerConfig {
        tokens: Some(TokenCounterRef(counter.clone())),
        ..Default::default()
    };
    let items = parents();
    assert_eq!(items.len(), 96);
    let mut spec = ArmSpec::new(Arm::GoldCopy);
    spec.evidence = Evidence::PaddedTokens;
    spec.copy_control = CopyControl::Serial;
    let mut matched = 0;
    for item in &items {
        // The gold prefix, and a prefix whose first character is wrong.
        for wrong_first in [false, true] {
            let mut c = Controller::new(item, spec, None, &cfg).unwrap();
            let mut queue = c
                .start()
                .unwrap_or_else(|e| panic!("{}: {e}", item.item_id));
            while let Some(r) = queue.pop() {
                let gold = item.target.chars().nth(r.step as usize - 1).unwrap();
                let value = if wrong_first && r.step == 1 {
                    r.options
                        .iter()
                        .find(|o| o.value != gold.to_string())
                        .unwrap()
                        .value
                        .clone()
                } else {
                    gold.to_string()
                };
                let resp = answer(&r, &value, &counter);
                queue = c
                    .on_response(&resp)
                    .unwrap_or_else(|e| panic!("{} step {}: {e}", item.item_id, r.step));
                matched += 1;
            }
            let t = c.trajectory("SmolLM2").unwrap();
            assert!(t
                .steps
                .iter()
                .all(|s| s.matched_prompt_tokens == Some(s.prompt_tokens)));
        }
    }
    assert_eq!(matched, 2 * items.iter().map(|i| i.length).sum::<usize>());
}
