//! The second model family on its real weights: Qwen2.5-Coder-0.5B-Instruct (GGUF Q4_K_M,
//! `qwen2`, ChatML), installed by scripts/fetch-qwen.sh. The prefix engine and mistral.rs see
//! the same tokens and agree on the option distributions of a panel of real requests (Native
//! and the first Serial/Full step of dev items of both domains), and generate the same greedy
//! tokens.
//!
//! These tests take minutes on 2 cores (mistral.rs computes an f32 0.5B model without prefix
//! reuse), so they are run by `bash scripts/test-qwen.sh`, not by the default suite; the default
//! suite covers the qwen2/qwen3 code paths on small random-weight models
//! (tests/architectures.rs) and the Qwen tokenizer against llama.cpp (tests/tokenizers.rs).

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{argmax, max_abs_diff};

use std::path::PathBuf;
use std::time::Instant;

use c2s_model::{
    Engine, GenerateJob, MistralRsEngine, PrefixEngine, PrefixEngineConfig, PromptSpec, ScoreJob,
};
use c2s_protocol::{Controller, ControllerConfig};
use c2s_records::{Arm, ArmSpec, Item, Request, Support};

const TOLERANCE: f64 = 1e-4;

fn root() -> PathBuf {
    PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("..")
}

fn qwen_path() -> PathBuf {
    let p = root().join("models/Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf");
    assert!(
        p.exists(),
        "{} is missing: run scripts/fetch-qwen.sh",
        p.display()
    );
    p
}

/// Items of both dev banks: `per_bank` of each.
fn items(per_bank: usize) -> Vec<Item> {
    let mut out = Vec::new();
    for f in ["arithmetic-dev.jsonl", "lexical-dev.jsonl"] {
        let text = std::fs::read_to_string(root().join("data/banks").join(f)).expect("bank");
        out.extend(
            text.lines()
                .step_by(7)
                .take(per_bank)
                .map(|l| c2s_records::parse_item(l, &Default::default()).expect("valid item")),
        );
    }
    out
}

/// First requests of Native and Serial/Full.
fn requests(per_bank: usize) -> Vec<Request> {
    let cfg = ControllerConfig::default();
    let mut out = Vec::new();
    for it in items(per_bank) {
        for spec in [
            ArmSpec::new(Arm::Native),
            ArmSpec::new(Arm::Serial).with_support(Support::FULL),
        ] {
            out.extend(
                Controller::new(&it, spec, None, &cfg)
                    .expect("controller")
                    .start()
                    .expect("first requests"),
            );
        }
    }
    out
}

#[test]
#[ignore = "minutes on 2 cores: bash scripts/test-qwen.sh"]
fn prefix_engine_and_mistralrs_agree_on_qwen() {
    let path = qwen_path();
    let mut prefix = PrefixEngine::load(&path, PrefixEngineConfig::default()).expect("loads");
    let mut mistral = MistralRsEngine::load(&path).expect("mistral.rs loads");
    assert_eq!(
        prefix.identity().file_sha256,
        mistral.identity().file_sha256
    );
    assert!(prefix.identity().tokenizer.contains("pre=qwen2"));
    let reqs = requests(4);
    let jobs: Vec<ScoreJob> = reqs
        .iter()
        .map(|r| ScoreJob {
            prompt: PromptSpec::from_request(r),
            options: r.options.iter().map(|o| o.code.clone()).collect(),
        })
        .collect();
    let tokens: u64 = jobs
        .iter()
        .map(|j| prefix.prompt_tokens(&j.prompt).unwrap().len() as u64)
        .sum();
    for j in &jobs {
        assert_eq!(
            prefix.prompt_tokens(&j.prompt).unwrap(),
            mistral.prompt_tokens(&j.prompt).unwrap()
        );
    }
    let t = Instant::now();
    let p = prefix.score(&jobs);
    let p_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let m = mistral.score(&jobs);
    let m_s = t.elapsed().as_secs_f64();
    let mut worst = 0.0f64;
    let mut same_argmax = 0;
    for (k, (p, m)) in p.into_iter().zip(m).enumerate() {
        let (p, m) = (p.expect("prefix scores"), m.expect("mistral.rs scores"));
        let d = max_abs_diff(&p.probabilities, &m.probabilities);
        same_argmax += usize::from(argmax(&p.probabilities) == argmax(&m.probabilities));
        println!("job {k} ({}): max |Δp| {d:.2e}", reqs[k].request_id);
        worst = worst.max(d);
    }
    println!(
        "qwen panel: {} score requests, {tokens} prompt tokens; max |Δp| {worst:.2e}; argmax equal {same_argmax}/{}; prefix engine {p_s:.1} s ({:.0} prompt tok/s), mistral.rs {m_s:.1} s ({:.0} prompt tok/s)",
        jobs.len(),
        jobs.len(),
        tokens as f64 / p_s,
        tokens as f64 / m_s
    );
    assert!(worst <= TOLERANCE, "max |Δp| {worst:e}");
    let gen: Vec<GenerateJob> = jobs
        .iter()
        .take(2)
        .map(|j| GenerateJob {
            prompt: j.prompt.clone(),
            max_new_tokens: 8,
        })
        .collect();
    let p = prefix.generate(&gen);
    let m = mistral.generate(&gen);
    for (k, (p, m)) in p.into_iter().zip(m).enumerate() {
        let (p, m) = (
            p.expect("prefix generates"),
            m.expect("mistral.rs generates"),
        );
        println!("generate {k}: {:?}", p.text);
        assert_eq!(p.tokens, m.tokens, "greedy tokens of job {k}");
    }
}
