//! The prefix engine's `qwen2` and `qwen3` code paths (and `llama` with quantized weights of
//! several GGUF types), checked against mistral.rs on small random-weight models that this test
//! writes itself: the same tokens, the same option distributions, the same greedy tokens.
//!
//! The models borrow the shipped SmolLM2 GGUF's vocabulary (so mistral.rs can load them); the
//! weights are seeded random values stored as Q8_0, Q4_K, Q6_K and F32 tensors, so the
//! dequantization of each of those types is exercised too.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::max_abs_diff;

use std::path::{Path, PathBuf};

use candle_core::quantized::{gguf_file, GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use rand::{Rng, SeedableRng};

use c2s_model::{
    Engine, EngineError, GenerateJob, MistralRsEngine, PrefixEngine, PrefixEngineConfig,
    PromptSpec, ScoreJob,
};

const TOLERANCE: f64 = 1e-4;

fn smollm2_path() -> PathBuf {
    let p = PathBuf::from(
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

/// The shape of a test model.
#[derive(Clone, Copy)]
struct Shape {
    arch: &'static str,
    hidden: usize,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    ffn: usize,
    layers: usize,
    /// GGUF type of the big matrices.
    dtype: GgmlDType,
}

/// Write a random-weight GGUF of `shape` with the SmolLM2 tokenizer (pre-tokenizer `pre`).
fn write_model(dir: &Path, shape: Shape, pre: &str, seed: u64) -> PathBuf {
    write_model_parts(dir, shape, pre, seed, true)
}

/// As [`write_model`]; without `arch_parts` the Qwen biases / head norms are left out.
fn write_model_parts(dir: &Path, shape: Shape, pre: &str, seed: u64, arch_parts: bool) -> PathBuf {
    let mut src = std::fs::File::open(smollm2_path()).unwrap();
    let base = gguf_file::Content::read(&mut src).unwrap();
    let vocab = match base.metadata.get("tokenizer.ggml.tokens").unwrap() {
        gguf_file::Value::Array(a) => a.len(),
        _ => panic!("no tokens"),
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let dev = Device::Cpu;
    let mut random = |dims: &[usize], scale: f32, dtype: GgmlDType| -> QTensor {
        let n: usize = dims.iter().product();
        let data: Vec<f32> = (0..n).map(|_| rng.random_range(-scale..scale)).collect();
        let t = Tensor::from_vec(data, dims, &dev).unwrap();
        QTensor::quantize(&t, dtype).unwrap()
    };
    let ones = |n: usize| {
        QTensor::quantize(
            &Tensor::ones(n, candle_core::DType::F32, &dev).unwrap(),
            GgmlDType::F32,
        )
        .unwrap()
    };
    let Shape {
        arch,
        hidden,
        heads,
        kv_heads,
        head_dim,
        ffn,
        layers,
        dtype,
    } = shape;
    let q = heads * head_dim;
    let kv = kv_heads * head_dim;
    let mut tensors: Vec<(String, QTensor)> = vec![
        (
            "token_embd.weight".into(),
            random(&[vocab, hidden], 1.0, GgmlDType::Q8_0),
        ),
        ("output_norm.weight".into(), ones(hidden)),
    ];
    for i in 0..layers {
        let p = |n: &str| format!("blk.{i}.{n}");
        tensors.push((p("attn_norm.weight"), ones(hidden)));
        tensors.push((p("ffn_norm.weight"), ones(hidden)));
        tensors.push((p("attn_q.weight"), random(&[q, hidden], 0.15, dtype)));
        tensors.push((p("attn_k.weight"), random(&[kv, hidden], 0.15, dtype)));
        tensors.push((p("attn_v.weight"), random(&[kv, hidden], 0.15, dtype)));
        tensors.push((
            p("attn_output.weight"),
            random(&[hidden, q], 0.1, GgmlDType::Q6K),
        ));
        tensors.push((p("ffn_gate.weight"), random(&[ffn, hidden], 0.1, dtype)));
        tensors.push((p("ffn_up.weight"), random(&[ffn, hidden], 0.1, dtype)));
        tensors.push((
            p("ffn_down.weight"),
            random(&[hidden, ffn], 0.1, GgmlDType::Q6K),
        ));
        if arch == "qwen2" && arch_parts {
            tensors.push((p("attn_q.bias"), random(&[q], 0.5, GgmlDType::F32)));
            tensors.push((p("attn_k.bias"), random(&[kv], 0.5, GgmlDType::F32)));
            tensors.push((p("attn_v.bias"), random(&[kv], 0.5, GgmlDType::F32)));
        }
        if arch == "qwen3" && arch_parts {
            tensors.push((
                p("attn_q_norm.weight"),
                random(&[head_dim], 1.5, GgmlDType::F32),
            ));
            tensors.push((
                p("attn_k_norm.weight"),
                random(&[head_dim], 1.5, GgmlDType::F32),
            ));
        }
    }
    use gguf_file::Value;
    let k = |s: &str| format!("{arch}.{s}");
    let mut meta: Vec<(String, Value)> = vec![
        ("general.architecture".into(), Value::String(arch.into())),
        ("general.name".into(), Value::String(format!("tiny-{arch}"))),
        (k("block_count"), Value::U32(layers as u32)),
        (k("embedding_length"), Value::U32(hidden as u32)),
        (k("feed_forward_length"), Value::U32(ffn as u32)),
        (k("attention.head_count"), Value::U32(heads as u32)),
        (k("attention.head_count_kv"), Value::U32(kv_heads as u32)),
        (k("attention.key_length"), Value::U32(head_dim as u32)),
        (k("attention.value_length"), Value::U32(head_dim as u32)),
        (k("rope.freq_base"), Value::F32(1_000_000.0)),
        (k("rope.dimension_count"), Value::U32(head_dim as u32)),
        (k("attention.layer_norm_rms_epsilon"), Value::F32(1e-6)),
        (k("context_length"), Value::U32(2048)),
        ("tokenizer.ggml.pre".into(), Value::String(pre.into())),
    ];
    for (key, v) in &base.metadata {
        if key.starts_with("tokenizer.") && key != "tokenizer.ggml.pre" {
            meta.push((key.clone(), v.clone()));
        }
    }
    let path = dir.join(format!("tiny-{arch}-{pre}.gguf"));
    let mut f = std::fs::File::create(&path).unwrap();
    let meta_refs: Vec<(&str, &Value)> = meta.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let tensor_refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(k, v)| (k.as_str(), v)).collect();
    gguf_file::write(&mut f, &meta_refs, &tensor_refs).unwrap();
    path
}

fn prompts() -> Vec<PromptSpec> {
    let user = |state: &str, q: &str| {
        format!(
            "{{\"state\":\"{state}\",\"question\":\"{q}\",\"choices\":[{{\"code\":\"A\",\"option_name\":\"3\"}},{{\"code\":\"B\",\"option_name\":\"7\"}}],\"response_format\":\"Select one choice and output only its code.\"}}"
        )
    };
    vec![
        PromptSpec {
            system: None,
            user: user("{\\\"current_prefix\\\":\\\"12\\\"}", "What is 12 * 34?"),
            assistant_prefix: None,
        },
        PromptSpec {
            system: Some("Answer with one code.".into()),
            user: user("{\\\"position\\\":2}", "Which word means a young dog?"),
            assistant_prefix: None,
        },
        PromptSpec {
            system: None,
            user: "Continue the answer.".into(),
            assistant_prefix: Some("40".into()),
        },
    ]
}

fn options() -> Vec<String> {
    ["A", "B", "C", "D", "E", "F", "G", "H"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Both engines on one model: identical tokens, scores within TOLERANCE, identical greedy
/// continuations; returns the largest |Δp|.
fn compare_engines(path: &Path) -> f64 {
    let mut prefix = PrefixEngine::load(path, PrefixEngineConfig::default())
        .unwrap_or_else(|e| panic!("prefix engine loads {}: {e}", path.display()));
    let mut mistral = MistralRsEngine::load(path)
        .unwrap_or_else(|e| panic!("mistral.rs loads {}: {e}", path.display()));
    let jobs: Vec<ScoreJob> = prompts()
        .into_iter()
        .map(|prompt| ScoreJob {
            prompt,
            options: options(),
        })
        .collect();
    for j in &jobs {
        assert_eq!(
            prefix.prompt_tokens(&j.prompt).unwrap(),
            mistral.prompt_tokens(&j.prompt).unwrap()
        );
    }
    let p = prefix.score(&jobs);
    let m = mistral.score(&jobs);
    let mut worst = 0.0f64;
    for (k, (p, m)) in p.into_iter().zip(m).enumerate() {
        let (p, m) = (p.expect("prefix scores"), m.expect("mistral.rs scores"));
        let d = max_abs_diff(&p.probabilities, &m.probabilities);
        let spread = p.probabilities.iter().cloned().fold(0.0, f64::max);
        println!(
            "{}: job {k}: max |Δp| {d:.2e} (top option p = {spread:.3})",
            path.display()
        );
        worst = worst.max(d);
    }
    assert!(worst <= TOLERANCE, "{}: |Δp| {worst:e}", path.display());
    let gen: Vec<GenerateJob> = prompts()
        .into_iter()
        .map(|prompt| GenerateJob {
            prompt,
            max_new_tokens: 6,
        })
        .collect();
    let p = prefix.generate(&gen);
    let m = mistral.generate(&gen);
    for (k, (p, m)) in p.into_iter().zip(m).enumerate() {
        let (p, m) = (
            p.expect("prefix generates"),
            m.expect("mistral.rs generates"),
        );
        assert_eq!(p.tokens, m.tokens, "{}: greedy job {k}", path.display());
        assert_eq!(p.finish_reason, m.finish_reason);
    }
    worst
}

const QWEN2: Shape = Shape {
    arch: "qwen2",
    hidden: 256,
    heads: 4,
    kv_heads: 2,
    head_dim: 64,
    ffn: 512,
    layers: 2,
    dtype: GgmlDType::Q4K,
};

/// Qwen3 with a head width that is not hidden / heads (as in Qwen3-0.6B).
const QWEN3: Shape = Shape {
    arch: "qwen3",
    hidden: 256,
    heads: 4,
    kv_heads: 2,
    head_dim: 128,
    ffn: 512,
    layers: 2,
    dtype: GgmlDType::Q8_0,
};

const LLAMA: Shape = Shape {
    arch: "llama",
    hidden: 256,
    heads: 4,
    kv_heads: 1,
    head_dim: 64,
    ffn: 512,
    layers: 2,
    dtype: GgmlDType::Q6K,
};

#[test]
fn qwen2_random_model_agrees_across_engines() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_model(dir.path(), QWEN2, "qwen2", 1);
    compare_engines(&path);
}

#[test]
fn qwen3_random_model_agrees_across_engines() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_model(dir.path(), QWEN3, "qwen2", 2);
    compare_engines(&path);
}

#[test]
fn llama_random_model_with_k_quants_agrees_across_engines() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_model(dir.path(), LLAMA, "smollm", 3);
    compare_engines(&path);
}

#[test]
fn unknown_pre_tokenizer_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_model(dir.path(), QWEN2, "tekken-2099", 4);
    for result in [
        PrefixEngine::load(&path, PrefixEngineConfig::default()).map(|_| ()),
        MistralRsEngine::load(&path).map(|_| ()),
        c2s_model::load_tokenizer(&path).map(|_| ()),
    ] {
        match result {
            Err(EngineError::Model(msg)) => {
                assert!(msg.contains("`tekken-2099`"), "{msg}");
                assert!(msg.contains("not supported"), "{msg}");
            }
            Err(e) => panic!("unexpected error: {e}"),
            Ok(()) => panic!("a model with an unknown pre-tokenizer loaded"),
        }
    }
}

#[test]
fn a_model_missing_its_architecture_parts_is_refused() {
    // A "qwen2" file without q/k/v biases is not a qwen2 model: refused, naming the parts.
    let dir = tempfile::tempdir().unwrap();
    let path = write_model_parts(dir.path(), QWEN2, "qwen2", 5, false);
    match PrefixEngine::load(&path, PrefixEngineConfig::default()) {
        Err(EngineError::ModelFile { reason, .. }) => {
            assert!(
                reason.contains("qwen2 model has query/key/value biases"),
                "{reason}"
            );
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(_) => panic!("a qwen2 model without biases loaded"),
    }
}
