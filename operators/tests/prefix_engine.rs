//! The prefix engine with the real SmolLM2-135M model (scripts/fetch-model.sh installs it).

use std::path::PathBuf;

use c2s_operators::inference::llama::log_softmax;
use c2s_operators::inference::{
    Engine, EngineError, GenerateJob, PrefixEngine, PrefixEngineConfig, PromptSpec, ScoreJob,
};
use c2s_protocol::{Controller, ControllerConfig};
use c2s_records::{Arm, ArmSpec, Contract, FinishReason, Item, Request, Support};

fn model_path() -> PathBuf {
    let p = std::path::PathBuf::from(
        // Cargo's runtime value first: a target directory shared with a checkout at another
        // path may hold this build with that path compiled in.
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../models/SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        p.exists(),
        "{} is missing: run scripts/fetch-model.sh (scripts/test.sh does)",
        p.display()
    );
    p
}

fn engine(prefix_reuse: bool) -> PrefixEngine {
    PrefixEngine::load(
        &model_path(),
        PrefixEngineConfig {
            prefix_reuse,
            ..Default::default()
        },
    )
    .expect("model loads offline")
}

fn items() -> Vec<Item> {
    let bank = |f: &str| -> Vec<Item> {
        let text = std::fs::read_to_string(
            std::path::PathBuf::from(
                // Cargo's runtime value first: a target directory shared with a checkout at another
                // path may hold this build with that path compiled in.
                std::env::var_os("CARGO_MANIFEST_DIR")
                    .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
            )
            .join("../data/banks")
            .join(f),
        )
        .expect("bank file");
        text.lines()
            .take(3)
            .map(|l| c2s_records::parse_item(l, &Default::default()).expect("valid item"))
            .collect()
    };
    let mut v = bank("arithmetic-dev.jsonl");
    v.extend(bank("lexical-dev.jsonl"));
    v
}

/// First requests of Native and Serial/Full for a few dev items.
fn requests() -> Vec<Request> {
    let cfg = ControllerConfig::default();
    let mut out = Vec::new();
    for it in items() {
        for spec in [
            ArmSpec::new(Arm::Native),
            ArmSpec::new(Arm::Serial).with_support(Support::FULL),
        ] {
            let mut c = Controller::new(&it, spec, None, &cfg).expect("controller");
            out.extend(c.start());
        }
    }
    out
}

fn score_job(r: &Request) -> ScoreJob {
    ScoreJob {
        prompt: PromptSpec::from_request(r),
        options: r.options.iter().map(|o| o.code.clone()).collect(),
    }
}

#[test]
fn tokenizer_and_template_follow_the_gguf() {
    let e = engine(true);
    let t = e.tokenizer();
    assert_eq!(
        t.encode("<|im_start|>").unwrap().len(),
        1,
        "control tokens are single ids"
    );
    assert_eq!(
        t.encode("585").unwrap().len(),
        3,
        "digits are split individually (smollm)"
    );
    let ids = t.encode("What is 39 * 15?").unwrap();
    assert_eq!(t.decode(&ids).unwrap(), "What is 39 * 15?");
    let text = t
        .render_chat(
            &[c2s_operators::inference::tokenizer::ChatMessage {
                role: "user".into(),
                content: "hi".into(),
            }],
            Some("58"),
        )
        .unwrap();
    assert_eq!(
        text,
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n58"
    );
    for code in ["A", "B", "J", "Z"] {
        assert_eq!(t.encode(code).unwrap().len(), 1, "code {code} is one token");
    }
    assert_eq!(
        e.identity().file_sha256,
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    );
}

#[test]
fn scores_are_exact_distributions_over_the_legal_options() {
    let reqs = requests();
    let jobs: Vec<ScoreJob> = reqs.iter().map(score_job).collect();
    let mut batched = engine(true);
    let out = batched.score(&jobs);
    let mut plain = engine(false);
    let mut max_diff_single: f64 = 0.0;
    let mut max_diff_vocab: f64 = 0.0;
    for (j, o) in jobs.iter().zip(&out) {
        let o = o.as_ref().expect("scored");
        assert_eq!(
            o.probabilities.len(),
            j.options.len(),
            "exactly the legal options"
        );
        let sum: f64 = o.probabilities.iter().sum();
        assert!((sum - 1.0).abs() < 1e-6, "sum {sum}");
        // One request at a time, no prefix reuse.
        let single = plain
            .score(std::slice::from_ref(j))
            .remove(0)
            .expect("scored");
        for (a, b) in o.probabilities.iter().zip(&single.probabilities) {
            max_diff_single = max_diff_single.max((a - b).abs());
        }
        // Full-vocabulary log-softmax of the last prompt position, renormalized to the legal
        // option tokens.
        let logits = plain.boundary_logits(&j.prompt).expect("logits");
        let ls = log_softmax(&logits);
        let tok = plain.tokenizer();
        let legal: Vec<f64> = j
            .options
            .iter()
            .map(|c| ls[tok.encode(c).unwrap()[0] as usize].exp())
            .collect();
        let z: f64 = legal.iter().sum();
        for (p, q) in o.probabilities.iter().zip(legal.iter().map(|x| x / z)) {
            max_diff_vocab = max_diff_vocab.max((p - q).abs());
        }
    }
    eprintln!("max |batched+reuse − single| = {max_diff_single:.2e}; max |engine − full-vocab renormalized| = {max_diff_vocab:.2e}");
    assert!(
        max_diff_single <= 1e-4,
        "batched vs single: {max_diff_single}"
    );
    assert!(
        max_diff_vocab <= 1e-4,
        "vs full vocabulary: {max_diff_vocab}"
    );
    assert!(
        batched.stats().computed_tokens < batched.stats().prompt_tokens,
        "prefixes were reused"
    );
}

#[test]
fn greedy_generation_is_repeatable_and_budgeted() {
    let item = &items()[0];
    let spec = ArmSpec::new(Arm::Native).with_contract(Contract::GeneratedString);
    let mut c = Controller::new(item, spec, None, &ControllerConfig::default()).unwrap();
    let r = c.start().remove(0);
    let job = GenerateJob {
        prompt: PromptSpec::from_request(&r),
        max_new_tokens: 32,
    };
    let mut e = engine(true);
    let a = e.generate(std::slice::from_ref(&job)).remove(0).unwrap();
    let b = e.generate(std::slice::from_ref(&job)).remove(0).unwrap();
    let mut fresh = engine(false);
    let c2 = fresh
        .generate(std::slice::from_ref(&job))
        .remove(0)
        .unwrap();
    assert_eq!(a.text, b.text);
    assert_eq!(a.text, c2.text);
    assert!(a.completion_tokens <= 33);
    let short = GenerateJob {
        prompt: job.prompt.clone(),
        max_new_tokens: 1,
    };
    let s = e.generate(&[short]).remove(0).unwrap();
    assert!(s.tokens.len() <= 1);
    if s.finish_reason == FinishReason::Length {
        assert!(s.truncated);
    }
    eprintln!("greedy Native answer: {:?} ({:?})", a.text, a.finish_reason);
}

#[test]
fn missing_and_corrupt_model_files_are_named() {
    let err = PrefixEngine::load(
        std::path::Path::new("/nonexistent/model.gguf"),
        Default::default(),
    )
    .err()
    .expect("missing file fails");
    assert!(matches!(err, EngineError::ModelFile { .. }));
    assert!(err.to_string().contains("/nonexistent/model.gguf"));
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("corrupt.gguf");
    std::fs::write(&bad, b"this is not a gguf file at all").unwrap();
    let err = PrefixEngine::load(&bad, Default::default())
        .err()
        .expect("corrupt file fails");
    assert!(err.to_string().contains("corrupt.gguf"), "{err}");
    assert!(err.to_string().contains("GGUF"), "{err}");
}
