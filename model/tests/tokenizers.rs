//! Exact tokenization: our tokenizers against token ids computed by an independent
//! implementation (llama.cpp through llama-cpp-python; the tool and version are recorded in
//! each fixture, and `scripts/make-token-fixtures.py` regenerates them).
//!
//! - `smollm2.json`: the shipped SmolLM2 GGUF (`pre = smollm`);
//! - `qwen2.json`: the Qwen2.5-Coder GGUF (`pre = qwen2`, fetched by scripts/fetch-qwen.sh);
//! - `smollm2-vocab-pre-*.json`: SmolLM2's vocabulary with `tokenizer.ggml.pre` replaced by
//!   `gpt-2`, `llama-bpe` and `qwen2`, so each pre-tokenizer's regex is checked on its own;
//! - `bpe-tiny.gguf` + `bpe-tiny-pre-*.json`: a small byte-level BPE vocabulary with
//!   multi-digit tokens (SmolLM2's and Qwen's have none), where the four pre-tokenizers' digit
//!   rules give different ids;
//! - `spm-tiny.gguf` + `spm-tiny.json`: a small SentencePiece (`tokenizer.ggml.model = llama`)
//!   vocabulary, for Llama-2/Mistral/Gemma-style GGUFs.
//!
//! Each corpus holds the rendered prompts of the quickstart panel and edge cases (digits, JSON
//! escapes, runs of spaces, tabs and newlines, non-ASCII text, contractions, special tokens).

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file;
use serde::Deserialize;

use c2s_model::tokenizer::ModelTokenizer;

fn root() -> PathBuf {
    PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
}

fn fixture_dir() -> PathBuf {
    root().join("tests/fixtures/tokens")
}

fn model(name: &str, script: &str) -> PathBuf {
    let p = root().join("../models").join(name);
    assert!(
        p.exists(),
        "{} is missing: run {script} (scripts/test.sh does)",
        p.display()
    );
    p
}

#[derive(Deserialize)]
struct Fixture {
    tool: String,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    text: String,
    ids: Vec<u32>,
}

fn read_fixture(name: &str) -> Fixture {
    let path = fixture_dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

/// Every case of the fixture tokenizes to the same ids.
fn check(tok: &ModelTokenizer, fixture: &str) {
    let f = read_fixture(fixture);
    assert!(!f.cases.is_empty(), "{fixture} has no cases");
    let mut failures = Vec::new();
    for (i, c) in f.cases.iter().enumerate() {
        let ours = tok.encode(&c.text).expect("encodes");
        if ours != c.ids {
            failures.push(format!(
                "case {i} {:?}:\n  ours      {:?}\n  reference {:?}",
                c.text.chars().take(120).collect::<String>(),
                ours,
                c.ids
            ));
        }
    }
    println!(
        "{fixture}: {} cases, {} differ (reference: {})",
        f.cases.len(),
        failures.len(),
        f.tool
    );
    assert!(
        failures.is_empty(),
        "{fixture}: {} of {} cases differ from {}:\n{}",
        failures.len(),
        f.cases.len(),
        f.tool,
        failures.join("\n")
    );
}

fn gguf_content(path: &Path) -> gguf_file::Content {
    let mut f = std::fs::File::open(path).unwrap();
    gguf_file::Content::read(&mut f).unwrap()
}

#[test]
fn smollm2_tokens_equal_llama_cpp() {
    let path = model("SmolLM2-135M-Instruct.Q4_1.gguf", "scripts/fetch-model.sh");
    check(&c2s_model::load_tokenizer(&path).unwrap(), "smollm2.json");
}

#[test]
fn qwen2_tokens_equal_llama_cpp() {
    let path = model(
        "Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf",
        "scripts/fetch-qwen.sh",
    );
    let tok = c2s_model::load_tokenizer(&path).unwrap();
    assert!(tok.kind.contains("pre=qwen2"), "{}", tok.kind);
    check(&tok, "qwen2.json");
}

/// A GGUF's vocabulary under another pre-tokenizer name: each regex on its own.
fn vocab_with_pre(path: &Path, pre: &str) -> ModelTokenizer {
    let mut vocab = ModelTokenizer::gguf_vocab(&gguf_content(path)).unwrap();
    vocab.pre = Some(pre.to_string());
    ModelTokenizer::from_vocab(&vocab, None, String::new(), String::new(), 0).unwrap()
}

fn smollm2_vocab_with_pre(pre: &str) -> ModelTokenizer {
    vocab_with_pre(
        &model("SmolLM2-135M-Instruct.Q4_1.gguf", "scripts/fetch-model.sh"),
        pre,
    )
}

#[test]
fn digit_rules_of_every_pre_tokenizer_equal_llama_cpp() {
    let path = fixture_dir().join("bpe-tiny.gguf");
    for pre in ["gpt-2", "smollm", "llama-bpe", "qwen2"] {
        check(
            &vocab_with_pre(&path, pre),
            &format!("bpe-tiny-pre-{pre}.json"),
        );
    }
}

#[test]
fn gpt2_pre_tokenizer_equals_llama_cpp() {
    check(
        &smollm2_vocab_with_pre("gpt-2"),
        "smollm2-vocab-pre-gpt-2.json",
    );
}

#[test]
fn llama3_pre_tokenizer_equals_llama_cpp() {
    check(
        &smollm2_vocab_with_pre("llama-bpe"),
        "smollm2-vocab-pre-llama-bpe.json",
    );
}

#[test]
fn qwen2_pre_tokenizer_equals_llama_cpp() {
    check(
        &smollm2_vocab_with_pre("qwen2"),
        "smollm2-vocab-pre-qwen2.json",
    );
}

#[test]
fn sentencepiece_tokens_equal_llama_cpp() {
    let path = fixture_dir().join("spm-tiny.gguf");
    let tok = c2s_model::load_tokenizer(&path).unwrap();
    assert_eq!(tok.kind, "gguf llama");
    check(&tok, "spm-tiny.json");
}

#[test]
fn unknown_or_missing_pre_tokenizer_is_refused() {
    let ct = gguf_content(&model(
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        "scripts/fetch-model.sh",
    ));
    let mut vocab = ModelTokenizer::gguf_vocab(&ct).unwrap();
    vocab.pre = Some("chameleon".into());
    let err = ModelTokenizer::from_vocab(&vocab, None, String::new(), "x".into(), 0)
        .err()
        .expect("an unknown pre-tokenizer is refused");
    let msg = err.to_string();
    assert!(
        msg.contains("`chameleon`") && msg.contains("not supported"),
        "{msg}"
    );
    vocab.pre = None;
    let msg = ModelTokenizer::from_vocab(&vocab, None, String::new(), "x".into(), 0)
        .err()
        .expect("a missing pre-tokenizer is refused")
        .to_string();
    assert!(msg.contains("tokenizer.ggml.pre"), "{msg}");
    vocab.pre = Some("smollm".into());
    vocab.model = "rwkv".into();
    let msg = ModelTokenizer::from_vocab(&vocab, None, String::new(), "x".into(), 0)
        .err()
        .expect("an unknown tokenizer model is refused")
        .to_string();
    assert!(
        msg.contains("`rwkv`") && msg.contains("tokenizer.ggml.model"),
        "{msg}"
    );
}
