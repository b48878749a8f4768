//! The prefix engine with the real SmolLM2-135M model (scripts/fetch-model.sh installs it).

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::max_abs_diff;

use std::path::PathBuf;

use c2s_model::log_softmax;
use c2s_model::{
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
            out.extend(c.start().unwrap());
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
            &[c2s_model::tokenizer::ChatMessage {
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
    // Batch invariance: the products reduce every dot product in one fixed order, so a request
    // scored in a ragged batch over cached prefixes equals the same request alone and in full.
    assert_eq!(
        max_diff_single, 0.0,
        "batched + reused vs single: {max_diff_single}"
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
    let r = c.start().unwrap().remove(0);
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

/// Write the GGUF model out as a Hugging Face llama directory, the way checkpoints are
/// published: HF tensor names, query/key rows in `rotate_half` order (the inverse of llama.cpp's
/// conversion permutation, written out here independently of the loader), f32 safetensors,
/// config.json, tokenizer.json and tokenizer_config.json.
fn write_hf_directory(gguf: &std::path::Path, dir: &std::path::Path) {
    use candle_core::quantized::gguf_file;
    use candle_core::{DType, Device, Tensor};
    let mut file = std::fs::File::open(gguf).unwrap();
    let ct = gguf_file::Content::read(&mut file).unwrap();
    let meta = |k: &str| ct.metadata[k].to_u32().unwrap() as usize;
    let (hidden, n_heads, n_kv) = (
        meta("llama.embedding_length"),
        meta("llama.attention.head_count"),
        meta("llama.attention.head_count_kv"),
    );
    let head_dim = hidden / n_heads;
    let mut tensors = std::collections::HashMap::new();
    let names: Vec<String> = ct.tensor_infos.keys().cloned().collect();
    for name in names {
        let t = ct
            .tensor(&mut file, &name, &Device::Cpu)
            .unwrap()
            .dequantize(&Device::Cpu)
            .unwrap()
            .to_dtype(DType::F32)
            .unwrap();
        let hf = match name.as_str() {
            "token_embd.weight" => "model.embed_tokens.weight".to_string(),
            "output_norm.weight" => "model.norm.weight".to_string(),
            "output.weight" => "lm_head.weight".to_string(),
            n => {
                let (layer, part) = n.strip_prefix("blk.").unwrap().split_once('.').unwrap();
                // Hugging Face's names for GGUF's per-layer tensors.
                const LAYER_NAMES: [(&str, &str); 9] = [
                    ("attn_q", "self_attn.q_proj"),
                    ("attn_k", "self_attn.k_proj"),
                    ("attn_v", "self_attn.v_proj"),
                    ("attn_output", "self_attn.o_proj"),
                    ("attn_norm", "input_layernorm"),
                    ("ffn_norm", "post_attention_layernorm"),
                    ("ffn_gate", "mlp.gate_proj"),
                    ("ffn_up", "mlp.up_proj"),
                    ("ffn_down", "mlp.down_proj"),
                ];
                let stem = part.strip_suffix(".weight").unwrap();
                let (_, hf) = LAYER_NAMES.iter().find(|(g, _)| *g == stem).unwrap();
                let part = format!("{hf}.weight");
                format!("model.layers.{layer}.{part}")
            }
        };
        let heads = if name.ends_with("attn_q.weight") {
            Some(n_heads)
        } else if name.ends_with("attn_k.weight") {
            Some(n_kv)
        } else {
            None
        };
        let t = match heads {
            // GGUF row 2i + j of a head came from HF row j·(d/2) + i: put it back.
            Some(h) => {
                let (rows, cols) = t.dims2().unwrap();
                let w = t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                let half = head_dim / 2;
                let mut out = vec![0f32; w.len()];
                for head in 0..h {
                    for i in 0..half {
                        for j in 0..2 {
                            let hf_row = head * head_dim + j * half + i;
                            let gguf_row = head * head_dim + 2 * i + j;
                            out[hf_row * cols..(hf_row + 1) * cols]
                                .copy_from_slice(&w[gguf_row * cols..(gguf_row + 1) * cols]);
                        }
                    }
                }
                Tensor::from_vec(out, (rows, cols), &Device::Cpu).unwrap()
            }
            None => t,
        };
        tensors.insert(hf, t);
    }
    candle_core::safetensors::save(&tensors, dir.join("model.safetensors")).unwrap();
    let tok = c2s_model::load_tokenizer(gguf).unwrap();
    let config = serde_json::json!({
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": hidden,
        "intermediate_size": meta("llama.feed_forward_length"),
        "num_attention_heads": n_heads,
        "num_key_value_heads": n_kv,
        "num_hidden_layers": meta("llama.block_count"),
        "max_position_embeddings": meta("llama.context_length"),
        "rms_norm_eps": ct.metadata["llama.attention.layer_norm_rms_epsilon"].to_f32().unwrap(),
        "rope_theta": ct.metadata["llama.rope.freq_base"].to_f32().unwrap(),
        "tie_word_embeddings": true,
        "torch_dtype": "float32",
        "hidden_act": "silu",
        "vocab_size": tok.vocab_size(),
        "bos_token_id": 1,
        "eos_token_id": 2,
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    std::fs::write(dir.join("tokenizer.json"), tok.tokenizer_json().unwrap()).unwrap();
    let tok_config = serde_json::json!({
        "bos_token": tok.bos_token,
        "eos_token": {
            "content": tok.eos_token, "special": true, "lstrip": false, "rstrip": false,
            "normalized": false, "single_word": false
        },
        "chat_template": tok.chat_template().unwrap(),
    });
    std::fs::write(dir.join("tokenizer_config.json"), tok_config.to_string()).unwrap();
}

#[test]
fn a_hugging_face_directory_serves_the_same_model() {
    let dir = tempfile::tempdir().unwrap();
    let hf_dir = dir.path().join("SmolLM2-135M-Instruct-hf");
    std::fs::create_dir(&hf_dir).unwrap();
    write_hf_directory(&model_path(), &hf_dir);
    let mut gguf = engine(true);
    let mut hf = PrefixEngine::load(&hf_dir, PrefixEngineConfig::default())
        .expect("the directory loads offline");
    let (gi, hi) = (gguf.identity().clone(), hf.identity().clone());
    assert_eq!(hi.name, "SmolLM2-135M-Instruct-hf");
    assert_ne!(hi.file_sha256, gi.file_sha256);
    assert_eq!(hi.chat_template_sha256, gi.chat_template_sha256);
    assert!(
        hi.tokenizer.starts_with("hf tokenizer.json"),
        "{}",
        hi.tokenizer
    );
    let reqs = requests();
    let mut jobs: Vec<ScoreJob> = reqs.iter().map(score_job).collect();
    // Options of several tokens too.
    jobs.push(ScoreJob {
        prompt: jobs[0].prompt.clone(),
        options: vec!["585".into(), "589".into(), "hello world".into()],
    });
    for j in &jobs {
        assert_eq!(
            hf.prompt_tokens(&j.prompt).unwrap(),
            gguf.prompt_tokens(&j.prompt).unwrap(),
            "identical tokens"
        );
    }
    let (a, b) = (gguf.score(&jobs), hf.score(&jobs));
    let mut max_diff: f64 = 0.0;
    for (a, b) in a.iter().zip(&b) {
        let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
        max_diff = max_diff.max(max_abs_diff(&a.probabilities, &b.probabilities));
    }
    println!("GGUF vs Hugging Face directory: max |Δp| = {max_diff:.3e}");
    assert!(max_diff <= 1e-6, "max |Δp| = {max_diff}");
    let gen: Vec<GenerateJob> = jobs
        .iter()
        .take(2)
        .map(|j| GenerateJob {
            prompt: j.prompt.clone(),
            max_new_tokens: 8,
        })
        .collect();
    let (a, b) = (gguf.generate(&gen), hf.generate(&gen));
    for (a, b) in a.iter().zip(&b) {
        assert_eq!(a.as_ref().unwrap().tokens, b.as_ref().unwrap().tokens);
    }
    // mistral.rs in native mode reads the same directory as safetensors (the path the GPU
    // check takes with bf16 checkpoints; f32 here, on the CPU) and agrees.
    let mut native = c2s_model::MistralRsEngine::load_with(
        &hf_dir,
        &c2s_model::MistralRsSettings {
            mode: c2s_model::MistralRsMode::Native,
            dtype: "f32".into(),
            ..Default::default()
        },
        None,
    )
    .expect("mistral.rs loads the Hugging Face directory offline");
    assert!(
        native.identity().engine == "mistralrs-0.8.1/native-cpu-f32",
        "{}",
        native.identity().engine
    );
    let few: Vec<ScoreJob> = jobs.iter().rev().take(4).cloned().collect();
    let (a, b) = (hf.score(&few), native.score(&few));
    let mut max_native: f64 = 0.0;
    for (a, b) in a.iter().zip(&b) {
        let (a, b) = (a.as_ref().unwrap(), b.as_ref().expect("mistral.rs scores"));
        for (x, y) in a.probabilities.iter().zip(&b.probabilities) {
            max_native = max_native.max((x - y).abs());
        }
    }
    println!("prefix engine vs mistral.rs native on the directory: max |Δp| = {max_native:.3e}");
    assert!(max_native <= 1e-4, "max |Δp| = {max_native}");
    let (a, b) = (hf.generate(&gen), native.generate(&gen));
    for (a, b) in a.iter().zip(&b) {
        assert_eq!(
            a.as_ref().unwrap().tokens,
            b.as_ref().expect("mistral.rs generates").tokens
        );
    }
    // A directory without its config, or without a tokenizer, is named.
    std::fs::remove_file(hf_dir.join("config.json")).unwrap();
    match PrefixEngine::load(&hf_dir, PrefixEngineConfig::default()) {
        Err(EngineError::ModelFile { path, .. }) => assert!(path.ends_with("config.json")),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a directory without config.json loaded"),
    }
    std::fs::remove_file(hf_dir.join("tokenizer.json")).unwrap();
    match PrefixEngine::load(&hf_dir, PrefixEngineConfig::default()) {
        Err(EngineError::ModelFile { path, .. }) => assert!(path.ends_with("tokenizer.json")),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a directory without tokenizer.json loaded"),
    }
}
