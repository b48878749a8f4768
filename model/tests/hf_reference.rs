//! The prefix engine and mistral.rs (native mode, f32, CPU) against transformers itself, on
//! tiny random-weight checkpoints that transformers wrote with `save_pretrained`: llama
//! (untied and tied), llama with `llama3` and `linear` RoPE scaling, qwen2, qwen3, and qwen3
//! with `yarn`.
//!
//! Fixtures: `fixtures/hf/<model>/` and `fixtures/hf/logprobs.json` (transformers' f32
//! log-softmax at every position of fixed token sequences), made by
//! `scripts/make-hf-fixtures.py` (torch and transformers versions recorded in the file; torch
//! is never needed here). Each checkpoint is also read in transformers 4's config layout
//! (`rope_theta` / `rope_scaling` at the top level instead of transformers 5's
//! `rope_parameters`): both must give the same numbers.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use c2s_model::engines::prefix::kernels::KernelFamily;
use c2s_model::engines::prefix::transformer::{SeqInput, Transformer};
use c2s_model::log_softmax;

/// Option distributions agree with transformers within this; log-probabilities within this
/// beyond the reference's own float32 rounding (`f32_error`: transformers' float32 forward
/// against its float64 forward of the same model, up to 1.2e-5 on these fixtures, so a bound
/// tighter than that would test the reference's rounding, not the engine).
const TOLERANCE: f64 = 1e-5;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf")
}

#[derive(serde::Deserialize)]
struct Reference {
    torch: String,
    transformers: String,
    models: std::collections::BTreeMap<String, ModelReference>,
}

#[derive(serde::Deserialize)]
struct ModelReference {
    legacy_config_fields: serde_json::Map<String, serde_json::Value>,
    f32_error: f64,
    cases: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    tokens: Vec<u32>,
    logprobs: Vec<Vec<f64>>,
}

fn reference() -> Reference {
    let text = std::fs::read_to_string(fixtures().join("logprobs.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Log-softmax at every position of `tokens`, from one forward pass of the prefix engine's
/// transformer.
fn prefix_logprobs(model: &Transformer, tokens: &[u32]) -> Vec<Vec<f64>> {
    let rows: Vec<usize> = (0..tokens.len()).collect();
    let out = model
        .forward(&[SeqInput {
            prefix: None,
            prefix_len: 0,
            tokens,
            logit_rows: &rows,
        }])
        .unwrap();
    out[0].logits.iter().map(|l| log_softmax(l)).collect()
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "vocabulary sizes differ");
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Softmax over the log-probabilities of `options` (the option distribution of a scored
/// request whose options are single tokens).
fn option_distribution(logprobs: &[f64], options: &[u32]) -> Vec<f64> {
    let picked: Vec<f64> = options.iter().map(|&o| logprobs[o as usize]).collect();
    c2s_model::normalize_logprobs(&picked)
}

/// Eight option tokens of a case (distinct ids from its sequence).
fn options_of(case: &Case) -> Vec<u32> {
    let mut o: Vec<u32> = Vec::new();
    for &t in &case.tokens {
        if !o.contains(&t) && o.len() < 8 {
            o.push(t);
        }
    }
    o
}

/// A copy of `dir` (weights linked) whose config.json is in transformers 4's layout.
fn legacy_copy(
    dir: &Path,
    fields: &serde_json::Map<String, serde_json::Value>,
) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name != "config.json" {
            std::os::unix::fs::symlink(entry.path(), tmp.path().join(&name)).unwrap();
        }
    }
    let mut config: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    config.remove("rope_parameters");
    for (k, v) in fields {
        config.insert(k.clone(), v.clone());
    }
    std::fs::write(
        tmp.path().join("config.json"),
        serde_json::to_string_pretty(&config).unwrap(),
    )
    .unwrap();
    tmp
}

/// The largest log-probability and option-probability differences.
/// Every gemm kernel family the CPU has is checked (AVX2/FMA, and AVX-512 where present).
fn check_prefix(name: &str, dir: &Path, m: &ModelReference, layout: &str) -> (f64, f64) {
    let mut model = Transformer::load(dir)
        .unwrap_or_else(|e| panic!("{name} ({layout}): the prefix engine cannot load it: {e}"));
    let (mut worst, mut worst_opt) = (0f64, 0f64);
    for family in KernelFamily::available() {
        model.set_kernels(family).unwrap();
        let (lp, opt) = check_family(name, &model, m, layout);
        worst = worst.max(lp);
        worst_opt = worst_opt.max(opt);
    }
    (worst, worst_opt)
}

fn check_family(name: &str, model: &Transformer, m: &ModelReference, layout: &str) -> (f64, f64) {
    let layout = format!("{layout}, {} kernels", model.kernels().name());
    let (mut worst, mut worst_opt) = (0f64, 0f64);
    for case in &m.cases {
        let got = prefix_logprobs(model, &case.tokens);
        assert_eq!(got.len(), case.logprobs.len());
        for (pos, (g, want)) in got.iter().zip(&case.logprobs).enumerate() {
            let d = max_abs_diff(g, want);
            assert!(
                d <= TOLERANCE + m.f32_error,
                "{name} ({layout}), length {}, position {pos}: log-probabilities differ by {d:e}",
                case.tokens.len()
            );
            let options = options_of(case);
            let d_opt = max_abs_diff(
                &option_distribution(g, &options),
                &option_distribution(want, &options),
            );
            assert!(
                d_opt <= TOLERANCE,
                "{name}: option distributions differ by {d_opt:e}"
            );
            worst = worst.max(d);
            worst_opt = worst_opt.max(d_opt);
        }
    }
    (worst, worst_opt)
}

#[test]
fn prefix_engine_equals_transformers_on_every_architecture_and_rope_type() {
    let r = reference();
    assert!(
        r.models.len() >= 7,
        "fixtures hold {} models",
        r.models.len()
    );
    let mut report = Vec::new();
    for (name, m) in &r.models {
        let dir = fixtures().join(name);
        let (lp, opt) = check_prefix(name, &dir, m, "transformers 5 config");
        let legacy = legacy_copy(&dir, &m.legacy_config_fields);
        let old = check_prefix(name, legacy.path(), m, "transformers 4 config");
        assert_eq!(
            (lp, opt),
            old,
            "{name}: the two config layouts give other numbers"
        );
        report.push(format!(
            "{name}: log p {lp:.1e} (the reference's own f32 error {:.1e}), options {opt:.1e}",
            m.f32_error
        ));
    }
    eprintln!(
        "prefix engine vs transformers {} (torch {}), largest differences: {}",
        r.transformers,
        r.torch,
        report.join(", ")
    );
}

/// A running generation's cache extended in place (`forward_extending`, one token per step
/// as the engine decodes) gives bit-identical logits and keys/values to continuing a copied
/// shared prefix (`forward`): the attention sees the same contiguous rows either way.
#[test]
fn extending_an_owned_cache_equals_continuing_a_shared_prefix() {
    use c2s_model::engines::prefix::transformer::LayerKv;
    let r = reference();
    for (name, m) in &r.models {
        let model = Transformer::load(&fixtures().join(name)).unwrap();
        let tokens = &m.cases[0].tokens;
        let split = tokens.len() / 2;
        let first: Vec<usize> = vec![split - 1];
        let prefilled = model
            .forward(&[SeqInput {
                prefix: None,
                prefix_len: 0,
                tokens: &tokens[..split],
                logit_rows: &first,
            }])
            .unwrap()
            .remove(0);
        let mut shared: Vec<LayerKv> = prefilled.kv.clone();
        let mut owned: Vec<LayerKv> = prefilled.kv;
        let one = [0usize];
        for (pos, t) in tokens.iter().enumerate().skip(split) {
            let step = std::slice::from_ref(t);
            let copied = model
                .forward(&[SeqInput {
                    prefix: Some(&shared),
                    prefix_len: pos,
                    tokens: step,
                    logit_rows: &one,
                }])
                .unwrap()
                .remove(0);
            let extended = model
                .forward_extending(
                    &[SeqInput {
                        prefix: None,
                        prefix_len: pos,
                        tokens: step,
                        logit_rows: &one,
                    }],
                    vec![owned],
                )
                .unwrap()
                .remove(0);
            assert_eq!(copied.logits, extended.logits, "{name}, position {pos}");
            for (a, b) in copied.kv.iter().zip(&extended.kv) {
                assert_eq!((&a.k, &a.v), (&b.k, &b.v), "{name}, position {pos}");
            }
            shared = copied.kv;
            owned = extended.kv;
        }
        // A shared prefix is refused on the extending path (its cache would be copied).
        assert!(model
            .forward_extending(
                &[SeqInput {
                    prefix: Some(&shared),
                    prefix_len: tokens.len(),
                    tokens: &tokens[..1],
                    logit_rows: &one,
                }],
                vec![owned],
            )
            .is_err());
    }
}

#[cfg(feature = "mistralrs")]
#[test]
fn mistralrs_native_equals_transformers_where_it_runs_the_model() {
    use c2s_model::{MistralRsEngine, MistralRsMode, MistralRsSettings};
    let r = reference();
    let settings = MistralRsSettings {
        mode: MistralRsMode::Native,
        dtype: "f32".into(),
        prefix_cache: 0,
        ..Default::default()
    };
    let mut report = Vec::new();
    for (name, m) in &r.models {
        let dir = fixtures().join(name);
        let loaded = MistralRsEngine::load_with(&dir, &settings, None);
        if name.contains("yarn") {
            // mistral.rs 0.8.1's Qwen3 has no RoPE scaling: refused, not run unscaled.
            let e = loaded
                .err()
                .expect("a yarn checkpoint is refused")
                .to_string();
            assert!(e.contains("RoPE scaling") && e.contains("ignore"), "{e}");
            continue;
        }
        let mut engine =
            loaded.unwrap_or_else(|e| panic!("{name}: mistral.rs cannot load it: {e}"));
        let (mut worst, mut worst_opt) = (0f64, 0f64);
        for case in &m.cases {
            let got = engine
                .next_token_logprobs_after(case.tokens.clone())
                .unwrap();
            let want = case.logprobs.last().unwrap();
            let d = max_abs_diff(&got, want);
            let options = options_of(case);
            let d_opt = max_abs_diff(
                &option_distribution(&got, &options),
                &option_distribution(want, &options),
            );
            assert!(
                d <= TOLERANCE + m.f32_error && d_opt <= TOLERANCE,
                "{name}, length {}: mistral.rs differs from transformers by {d:e} \
                 (options {d_opt:e})",
                case.tokens.len()
            );
            worst = worst.max(d);
            worst_opt = worst_opt.max(d_opt);
        }
        report.push(format!(
            "{name}: log p {worst:.1e}, options {worst_opt:.1e}"
        ));
    }
    eprintln!(
        "mistral.rs native f32 vs transformers: {}",
        report.join(", ")
    );
}

#[test]
fn a_checkpoint_whose_rope_cannot_be_honoured_is_refused_naming_the_field() {
    let dir = fixtures().join("llama3-scaling");
    let tmp = legacy_copy(
        &dir,
        &serde_json::json!({"rope_theta": 500000.0,
            "rope_scaling": {"rope_type": "longrope", "factor": 2.0}})
        .as_object()
        .cloned()
        .unwrap(),
    );
    let e = Transformer::load(tmp.path()).err().unwrap().to_string();
    assert!(
        e.contains("rope_scaling.rope_type") && e.contains("longrope"),
        "{e}"
    );
}
