//! mistral.rs as an independent reference for the prefix engine: the same GGUF, the same
//! tokens, the same scores and greedy continuations.
//!
//! Needs the real model (`scripts/fetch-model.sh` installs it). Run with `--nocapture` to see
//! the measured agreement and latencies.

mod common;
use common::{argmax, max_abs_diff};

use std::path::{Path, PathBuf};
use std::time::Instant;

use c2s_model::{
    Engine, EngineError, GenerateJob, InferenceService, MistralRsEngine, PrefixEngine,
    PrefixEngineConfig, PromptSpec, ScoreJob, ServiceConfig,
};
use c2s_records::{Answer, Contract, Decoding, Request, RequestOption};

const TOLERANCE: f64 = 1e-4;

fn model_path() -> PathBuf {
    let path = std::path::PathBuf::from(
        // Cargo's runtime value first: a target directory shared with a checkout at another
        // path may hold this build with that path compiled in.
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("..")
    .join("models")
    .join("SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        path.is_file(),
        "model file {} is missing: run scripts/fetch-model.sh to install it",
        path.display()
    );
    path
}

fn codes() -> Vec<String> {
    ('A'..='J').map(|c| c.to_string()).collect()
}

/// A user message in the pipeline's JSON style: pick the code of one option.
fn pick_prompt(system: Option<&str>, question: &str, words: &[&str]) -> PromptSpec {
    let options: Vec<String> = codes()
        .iter()
        .zip(words)
        .map(|(c, w)| format!("{{\"code\":\"{c}\",\"text\":\"{w}\"}}"))
        .collect();
    PromptSpec {
        system: system.map(str::to_string),
        user: format!(
            "{{\"task\":\"{question}\",\"options\":[{}],\"answer\":\"Reply with the code (A-J) only.\"}}",
            options.join(",")
        ),
        assistant_prefix: None,
    }
}

fn score_prompts() -> Vec<PromptSpec> {
    vec![
        pick_prompt(
            None,
            "Which word names a fruit?",
            &[
                "chair", "river", "apple", "cloud", "hammer", "pencil", "window", "tiger",
                "candle", "shoe",
            ],
        ),
        pick_prompt(
            Some("You are a careful assistant. Answer with a single code."),
            "Which number is the largest?",
            &["12", "7", "305", "41", "99", "3", "150", "8", "27", "64"],
        ),
        pick_prompt(
            None,
            "Which animal can fly?",
            &[
                "cow", "horse", "sheep", "eagle", "pig", "goat", "dog", "cat", "fish", "snake",
            ],
        ),
    ]
}

#[test]
fn load_rejects_missing_and_corrupt_files() {
    let missing = Path::new("/nonexistent/c2s/model.gguf");
    match MistralRsEngine::load(missing) {
        Err(EngineError::ModelFile { path, .. }) => assert_eq!(path, missing),
        Err(e) => panic!("missing file: unexpected error {e}"),
        Ok(_) => panic!("missing file loaded"),
    }
    let dir = tempfile::tempdir().unwrap();
    let corrupt = dir.path().join("corrupt.gguf");
    std::fs::write(&corrupt, b"this is not a GGUF file at all").unwrap();
    match MistralRsEngine::load(&corrupt) {
        Err(EngineError::ModelFile { path, reason }) => {
            assert_eq!(path, corrupt);
            assert!(reason.contains("GGUF"), "{reason}");
        }
        Err(e) => panic!("corrupt file: unexpected error {e}"),
        Ok(_) => panic!("corrupt file loaded"),
    }
    // A directory is read as a Hugging Face model: one without its files is refused, naming
    // the missing file.
    match MistralRsEngine::load(dir.path()) {
        Err(EngineError::ModelFile { path, .. }) => {
            assert_eq!(path, dir.path().join("tokenizer.json"))
        }
        Err(e) => panic!("directory: unexpected error {e}"),
        Ok(_) => panic!("directory loaded"),
    }
}

#[test]
fn mistralrs_agrees_with_prefix_engine() {
    let path = model_path();
    let t0 = Instant::now();
    let mut mistral = MistralRsEngine::load(&path).expect("mistral.rs loads the GGUF offline");
    let mistral_load = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let mut prefix =
        PrefixEngine::load(&path, PrefixEngineConfig::default()).expect("prefix engine loads");
    let prefix_load = t0.elapsed().as_secs_f64();
    println!("load: mistral.rs {mistral_load:.2}s, prefix engine {prefix_load:.2}s");

    let mi = mistral.identity().clone();
    let pi = prefix.identity().clone();
    assert_eq!(mi.engine, "mistralrs-0.8.1/f32");
    assert_eq!(
        (&mi.name, &mi.path, &mi.file_sha256),
        (&pi.name, &pi.path, &pi.file_sha256)
    );
    assert_eq!(
        (&mi.tokenizer, &mi.chat_template_sha256),
        (&pi.tokenizer, &pi.chat_template_sha256)
    );

    // Scoring, one prompt at a time (per-prompt latency; the prefix cache is cleared so both
    // engines compute the whole prompt).
    let mut worst_prob = 0.0f64;
    let mut worst_logprob = 0.0f64;
    let mut worst_renorm = 0.0f64;
    for (i, prompt) in score_prompts().into_iter().enumerate() {
        let job = ScoreJob {
            prompt: prompt.clone(),
            options: codes(),
        };
        assert_eq!(
            mistral.prompt_tokens(&prompt).unwrap(),
            prefix.prompt_tokens(&prompt).unwrap()
        );
        let t = Instant::now();
        let m = mistral
            .score(std::slice::from_ref(&job))
            .remove(0)
            .expect("mistral.rs scores");
        let m_ms = t.elapsed().as_secs_f64() * 1e3;
        prefix.clear_cache();
        let t = Instant::now();
        let p = prefix
            .score(std::slice::from_ref(&job))
            .remove(0)
            .expect("prefix engine scores");
        let p_ms = t.elapsed().as_secs_f64() * 1e3;
        let d_prob = max_abs_diff(&m.probabilities, &p.probabilities);
        let d_logprob = max_abs_diff(&m.logprobs, &p.logprobs);

        // The full-vocabulary distribution, renormalized to the options' tokens.
        let full = mistral
            .next_token_logprobs(&prompt)
            .expect("full distribution");
        let total: f64 = full.iter().map(|l| l.exp()).sum();
        assert!(
            (total - 1.0).abs() < 1e-9,
            "full-vocabulary probabilities sum to {total}"
        );
        let ids: Vec<usize> = codes()
            .iter()
            .map(|c| {
                let t = mistral.tokenizer().encode(c).unwrap();
                assert_eq!(t.len(), 1, "code {c} is one token");
                t[0] as usize
            })
            .collect();
        let legal: Vec<f64> = ids.iter().map(|&t| full[t].exp()).collect();
        let mass: f64 = legal.iter().sum();
        let renorm: Vec<f64> = legal.iter().map(|p| p / mass).collect();
        let d_renorm =
            max_abs_diff(&renorm, &m.probabilities).max(max_abs_diff(&renorm, &p.probabilities));

        println!(
            "score prompt {i} ({} tokens): mistral.rs {m_ms:.1} ms, prefix engine {p_ms:.1} ms; \
             max |Δp| {d_prob:.3e}, max |Δlogp| {d_logprob:.3e}, renormalized vs scores {d_renorm:.3e}, \
             option mass {mass:.4}, argmax {}",
            m.prompt_tokens,
            codes()[argmax(&m.probabilities).unwrap()]
        );
        assert_eq!(m.prompt_tokens, p.prompt_tokens);
        worst_prob = worst_prob.max(d_prob);
        worst_logprob = worst_logprob.max(d_logprob);
        worst_renorm = worst_renorm.max(d_renorm);
    }
    println!(
        "scores: max |Δp| {worst_prob:.3e}, max |Δlogp| {worst_logprob:.3e}, renormalized {worst_renorm:.3e}"
    );
    assert!(
        worst_prob <= TOLERANCE,
        "probabilities differ by {worst_prob:e}"
    );
    assert!(
        worst_renorm <= TOLERANCE,
        "renormalized distribution differs by {worst_renorm:e}"
    );

    // Options of several tokens (digits are split: "A1" is two tokens), teacher-forced, and a
    // batch of jobs at once.
    let multi = ScoreJob {
        prompt: pick_prompt(
            None,
            "Which code is the answer? Codes are a letter and a digit.",
            &["x", "y", "z", "w", "v", "u", "t", "s", "r", "q"],
        ),
        options: vec!["A1".into(), "B2".into(), "C3".into(), "D".into()],
    };
    let batch = vec![
        multi.clone(),
        ScoreJob {
            prompt: score_prompts().remove(0),
            options: codes(),
        },
    ];
    let t = Instant::now();
    let m = mistral.score(&batch);
    let m_ms = t.elapsed().as_secs_f64() * 1e3;
    prefix.clear_cache();
    let t = Instant::now();
    let p = prefix.score(&batch);
    let p_ms = t.elapsed().as_secs_f64() * 1e3;
    for (k, (m, p)) in m.into_iter().zip(p).enumerate() {
        let (m, p) = (
            m.expect("mistral.rs scores"),
            p.expect("prefix engine scores"),
        );
        let d_prob = max_abs_diff(&m.probabilities, &p.probabilities);
        let d_logprob = max_abs_diff(&m.logprobs, &p.logprobs);
        println!("batch job {k}: max |Δp| {d_prob:.3e}, max |Δlogp| {d_logprob:.3e}");
        assert!(
            d_prob <= TOLERANCE,
            "batch job {k}: probabilities differ by {d_prob:e}"
        );
    }
    println!("batch of 2 jobs (one with multi-token options): mistral.rs {m_ms:.1} ms, prefix engine {p_ms:.1} ms");

    // Greedy generation with a budget of 8 tokens.
    let gen_prompts = [
        PromptSpec {
            system: None,
            user: "Name three colors.".into(),
            assistant_prefix: None,
        },
        PromptSpec {
            system: Some("You answer in JSON.".into()),
            user: "{\"question\":\"What is 2+2?\",\"format\":{\"answer\":\"number\"}}".into(),
            assistant_prefix: None,
        },
    ];
    for (i, prompt) in gen_prompts.iter().enumerate() {
        let job = GenerateJob {
            prompt: prompt.clone(),
            max_new_tokens: 8,
        };
        let t = Instant::now();
        let m = mistral
            .generate(std::slice::from_ref(&job))
            .remove(0)
            .expect("mistral.rs generates");
        let m_ms = t.elapsed().as_secs_f64() * 1e3;
        prefix.clear_cache();
        let t = Instant::now();
        let p = prefix
            .generate(std::slice::from_ref(&job))
            .remove(0)
            .expect("prefix engine generates");
        let p_ms = t.elapsed().as_secs_f64() * 1e3;
        println!(
            "generate prompt {i}: mistral.rs {m_ms:.1} ms {:?} ({:?}, {} tokens); prefix engine {p_ms:.1} ms {:?} ({:?}, {} tokens)",
            m.text, m.finish_reason, m.completion_tokens, p.text, p.finish_reason, p.completion_tokens
        );
        assert_eq!(m.tokens, p.tokens, "greedy tokens differ for prompt {i}");
        assert_eq!(m.text, p.text);
        assert_eq!(m.finish_reason, p.finish_reason);
        assert_eq!(m.truncated, p.truncated);
        assert_eq!(
            (m.prompt_tokens, m.completion_tokens),
            (p.prompt_tokens, p.completion_tokens)
        );
    }

    // Several jobs in one call, including a budget of one token (which ends at the first step).
    let jobs: Vec<GenerateJob> = gen_prompts
        .iter()
        .zip([1, 8])
        .map(|(prompt, budget)| GenerateJob {
            prompt: prompt.clone(),
            max_new_tokens: budget,
        })
        .collect();
    let m = mistral.generate(&jobs);
    let p = prefix.generate(&jobs);
    for (k, (m, p)) in m.into_iter().zip(p).enumerate() {
        let (m, p) = (
            m.expect("mistral.rs generates"),
            p.expect("prefix engine generates"),
        );
        assert_eq!(
            (&m.tokens, m.finish_reason, m.completion_tokens),
            (&p.tokens, p.finish_reason, p.completion_tokens),
            "generate batch job {k}"
        );
    }
}

/// A request of the batching service.
fn request(id: usize, prompt: &PromptSpec, options: &[String], decoding: Decoding) -> Request {
    Request {
        request_id: format!("r{id}"),
        item_id: format!("item{id}"),
        arm: "Native".into(),
        step: 0,
        system: prompt.system.clone(),
        user: prompt.user.clone(),
        assistant_prefix: prompt.assistant_prefix.clone(),
        state: String::new(),
        instruction: String::new(),
        options: options
            .iter()
            .map(|c| RequestOption {
                code: c.clone(),
                value: c.clone(),
            })
            .collect(),
        contract: if decoding == Decoding::Score {
            Contract::ScoredCode
        } else {
            Contract::GeneratedCode
        },
        decoding,
        closing_context: Vec::new(),
    }
}

/// mistral.rs behind the batching service runs continuously (each request handed over as it
/// comes, answers taken as they come; on the CPU a generation alone): a mix of scoring jobs
/// (two share their multi-token options' contexts) and generations sent at once gets the
/// prefix engine's answers.
#[test]
fn mistralrs_through_the_batching_service_answers_as_the_prefix_engine() {
    let path = model_path();
    let mistral = MistralRsEngine::load(&path).expect("mistral.rs loads the GGUF offline");
    let mut prefix =
        PrefixEngine::load(&path, PrefixEngineConfig::default()).expect("prefix engine loads");
    let multi: Vec<String> = vec!["A1".into(), "B2".into(), "C3".into(), "D".into()];
    let mut jobs: Vec<(PromptSpec, Vec<String>, Decoding)> = Vec::new();
    for p in score_prompts() {
        jobs.push((p.clone(), codes(), Decoding::Score));
        jobs.push((p, multi.clone(), Decoding::Score));
    }
    for (k, p) in score_prompts().into_iter().enumerate() {
        jobs.push((
            p,
            Vec::new(),
            Decoding::Greedy {
                max_new_tokens: [1, 5, 8][k],
            },
        ));
    }
    let requests: Vec<Request> = jobs
        .iter()
        .enumerate()
        .map(|(i, (p, o, d))| request(i, p, o, *d))
        .collect();
    let service = InferenceService::start(
        Box::new(mistral),
        ServiceConfig {
            max_batch: 4,
            linger: std::time::Duration::ZERO,
            ..Default::default()
        },
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let t = Instant::now();
    let replies = rt.block_on(service.call_all(requests));
    println!(
        "{} requests through the service: {:.1} ms",
        jobs.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    for (i, ((prompt, options, decoding), reply)) in jobs.iter().zip(replies).enumerate() {
        let reply = reply.unwrap_or_else(|e| panic!("request {i}: {e}"));
        match (decoding, reply.answer) {
            (Decoding::Score, Answer::Scored { probabilities, .. }) => {
                let p = prefix
                    .score(&[ScoreJob {
                        prompt: prompt.clone(),
                        options: options.clone(),
                    }])
                    .remove(0)
                    .unwrap();
                let d = max_abs_diff(&probabilities, &p.probabilities);
                assert!(d <= TOLERANCE, "request {i}: probabilities differ by {d:e}");
                assert_eq!(reply.prompt_tokens, p.prompt_tokens, "request {i}");
            }
            (Decoding::Greedy { max_new_tokens }, Answer::Generated { text, .. }) => {
                let p = prefix
                    .generate(&[GenerateJob {
                        prompt: prompt.clone(),
                        max_new_tokens: *max_new_tokens,
                    }])
                    .remove(0)
                    .unwrap();
                assert_eq!(text, p.text, "request {i}");
                assert_eq!(reply.completion_tokens, p.completion_tokens, "request {i}");
            }
            (_, answer) => panic!("request {i}: unexpected answer {answer:?}"),
        }
    }
    let stats = service.stats();
    assert!(stats.engine.forwards > 0);
}
