//! The remote engine: models served behind an OpenAI-compatible HTTP API (vLLM, SGLang,
//! llama.cpp's server, hosted APIs), with the same jobs and outputs as a local engine.
//!
//! - **Scored contracts** use the loglikelihood method of lm-eval's `local-completions`: one
//!   `/completions` request per legal option, whose prompt is the chat prompt rendered on our
//!   side (the same text a local engine sees) followed by the option's tokens, with `echo` and
//!   `logprobs`, so the server returns the log-probability of every prompt token. The option's
//!   log-probability is the sum over its tokens; the conditional distribution over the options
//!   is their softmax, exactly as the local engines compute it. A server's prefix cache absorbs
//!   the prompt the options share. Each answer is checked: the server must count the prompt
//!   tokens our tokenizer counts (so that both tokenize alike) and its last tokens must spell
//!   the option.
//! - **Generated contracts** use `/chat/completions` with greedy decoding (temperature 0) and
//!   the arm's token budget, or `/completions` with our rendering when the request continues
//!   an assistant prefix (PrefixContinue) or `generation_endpoint = "completions"`.
//! - Every call retries on 429, 5xx, timeouts and connection errors with exponential backoff
//!   (backon's blocking retry: from `retry_backoff`, doubled per retry, at most 30 s, no
//!   jitter, `max_retries` retries, a warning each); a call that still fails is that job's
//!   error (a rejected trajectory, run again on resume).
//! - Request and response bodies are the serde structs of the `wire` module (what is sent, and
//!   only the fields read); an answer that lacks a field the engine needs, or sends it with the
//!   wrong type, is an error naming the URL and the field.
//!
//! [`probe`] learns what the server serves and whether it can score, before any work.

mod client;
mod wire;

#[cfg(test)]
use client::CallError;
use client::Client;
#[cfg(test)]
use client::{parse_retry_after, CallFailure};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use c2s_records::FinishReason;

use crate::engine::{
    normalize_logprobs, Engine, EngineStats, GenerateJob, GenerateOutput, ModelIdentity,
    PromptSpec, ScoreJob, ScoreOutput,
};
use crate::error::EngineError;
use crate::outage::OutageWatch;
use crate::tokenizer::ModelTokenizer;

/// Engine name prefix in identities: `openai/<server>`.
pub const OPENAI_ENGINE: &str = "openai";

/// Which endpoint generated contracts use (the configuration's own type).
pub use c2s_records::GenerationEndpoint;

/// How scored contracts are scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoringMethod {
    /// One `/completions` request per option with `echo` and prompt log-probabilities (the
    /// lm-eval loglikelihood method): exact for any option, one request per option.
    Echo,
    /// One request per job reading the top log-probabilities of the first generated token:
    /// used when every option is one token and the server returns all of them among its top
    /// `n`; any other job falls back to [`ScoringMethod::Echo`].
    TopLogprobs(u32),
    /// As [`ScoringMethod::TopLogprobs`]; a job whose options are not all among the top `n`
    /// asks a second time with llama.cpp's server sampling fields ([`wire::BiasedSampling`]):
    /// the options and the most probable token raised by a logit bias, their probabilities
    /// after the sampler chain read relative to one another. Each option's full-vocabulary
    /// log-probability is then the top token's (from the first answer) plus the log of its
    /// probability over the top token's: exact, without `echo` (which llama.cpp's server
    /// refuses). Jobs with a multi-token option fall back to [`ScoringMethod::Echo`].
    LogitBias(u32),
}

impl ScoringMethod {
    /// How many top log-probabilities the first request asks for (echo: one per token).
    fn top_count(self) -> u32 {
        match self {
            ScoringMethod::Echo => 1,
            ScoringMethod::TopLogprobs(n) | ScoringMethod::LogitBias(n) => n,
        }
    }
}

/// The bias that raises a job's options and its top token above every other token: logits
/// of one position differ by far less (a probability ratio of e^-100 is below f32's range),
/// and f32 adds it to logits of a few tens without losing their differences (its spacing at
/// 100 is 8e-6).
const RAISING_BIAS: f64 = 100.0;

/// How to reach the server.
#[derive(Debug, Clone)]
pub struct OpenAiSettings {
    /// API root including the version, e.g. `http://127.0.0.1:8000/v1`.
    pub base_url: String,
    /// The served model name.
    pub model: String,
    /// Name of the environment variable holding the API key (never the key itself).
    pub api_key_env: Option<String>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Requests in flight at once per engine (each timely worker owns one engine).
    pub concurrency: usize,
    /// Retries after the first attempt (429, 5xx, timeouts, connection errors).
    pub max_retries: u32,
    /// First backoff; doubled per retry, at most 30 s.
    pub retry_backoff: Duration,
    /// Where generated contracts go: `/chat/completions` (the server renders the chat) or
    /// `/completions` with our rendering; a request with an assistant prefix always uses
    /// `/completions`.
    pub generation_endpoint: GenerationEndpoint,
    /// How scored contracts are scored (echo, or top log-probabilities of one token).
    pub scoring: ScoringMethod,
    /// `chat_template_kwargs` sent with chat completions (e.g. `{"enable_thinking": false}`).
    pub chat_template_kwargs: Option<Value>,
    /// Largest response body read; a longer one is an error (it is never read whole).
    pub max_response_bytes: u64,
    /// Accept any TLS certificate. Off unless set explicitly; [`probe`] warns when it is on.
    pub insecure_skip_verify: bool,
    /// The run's outage watch: an unreachable server is waited for, not a failed request
    /// (`None`: such faults are retried `max_retries` times, as for the probe).
    pub outages: Option<Arc<OutageWatch>>,
}

/// The default of [`OpenAiSettings::max_response_bytes`]: 16 MiB, far above any answer of a
/// scoring or generation request.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;

impl Default for OpenAiSettings {
    fn default() -> Self {
        OpenAiSettings {
            base_url: "http://127.0.0.1:8000/v1".into(),
            model: String::new(),
            api_key_env: None,
            timeout: Duration::from_secs(120),
            concurrency: 4,
            max_retries: 4,
            retry_backoff: Duration::from_millis(500),
            generation_endpoint: GenerationEndpoint::Chat,
            scoring: ScoringMethod::Echo,
            chat_template_kwargs: None,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            insecure_skip_verify: false,
            outages: None,
        }
    }
}

/// What the server reported and can do, learned once before any work.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ServerInfo {
    /// The API root the probe reached (the settings' `base_url`).
    pub base_url: String,
    /// The served model name requests ask for (the settings' `model`).
    pub model: String,
    /// The server's entry for the model in `GET /models` (its stable fields only).
    pub model_entry: Option<Value>,
    /// The `server` response header.
    pub server: Option<String>,
    /// `GET <root>/version` where the server has one (vLLM, SGLang, llama.cpp's `/props`
    /// is not asked).
    pub version: Option<Value>,
    /// `/completions` returns prompt log-probabilities with `echo` (scored contracts work).
    pub prompt_logprobs: bool,
    /// Why scoring is impossible, when it is.
    pub scoring_problem: Option<String>,
    /// TLS certificates were not verified (`insecure_skip_verify = true`); recorded in the
    /// manifest's model identity.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure_skip_verify: bool,
}

impl ServerInfo {
    /// The identity of the served model: its hash covers the base URL, served name and what
    /// the server reports (not its capabilities). Resuming a run against another served model
    /// is refused like another local model.
    pub fn identity(&self, tokenizer: Option<&ModelTokenizer>) -> ModelIdentity {
        let reported = json!({
            "base_url": self.base_url,
            "model": self.model,
            "model_entry": self.model_entry,
            "version": self.version,
        });
        let digest = Sha256::digest(reported.to_string().as_bytes());
        ModelIdentity {
            name: self.model.clone(),
            path: self.base_url.clone(),
            file_sha256: hex::encode(digest),
            tokenizer: tokenizer
                .map(|t| format!("{} vocab={}", t.kind, t.vocab_size()))
                .unwrap_or_else(|| "server-side".into()),
            chat_template_sha256: hex::encode(Sha256::digest(
                tokenizer
                    .and_then(ModelTokenizer::chat_template)
                    .unwrap_or("server-side")
                    .as_bytes(),
            )),
            engine: format!(
                "{OPENAI_ENGINE}/{}",
                self.server.as_deref().unwrap_or("unknown")
            ),
            // The whole probe, capabilities included: the manifest records what the server
            // could do, and each worker's engine starts from it without asking again.
            remote: serde_json::to_value(self).ok(),
            hub: None,
        }
    }

    /// The probe recorded in `identity` by [`ServerInfo::identity`].
    pub fn from_identity(identity: &ModelIdentity) -> Option<ServerInfo> {
        serde_json::from_value(identity.remote.clone()?).ok()
    }
}

/// Ask the server what it serves and whether it returns prompt log-probabilities. An
/// unreachable server, a rejected key or a model the server does not serve is an error.
pub fn probe(settings: &OpenAiSettings) -> Result<ServerInfo, EngineError> {
    if settings.insecure_skip_verify {
        tracing::warn!(
            "[model.openai] insecure_skip_verify = true: the TLS certificate of {} is NOT verified; anyone on the path can read and change requests and answers (the manifest records this)",
            settings.base_url
        );
    }
    // The probe runs before any work: an unreachable server is an error there, not an
    // outage to wait for.
    let settings = &OpenAiSettings {
        outages: None,
        ..settings.clone()
    };
    let client = Client::new(settings)?;
    let models = client
        .get::<wire::ModelList>("models")
        .map_err(|e| EngineError::Model(format!("listing the served models: {e}")))?;
    let server = models.server;
    let listed = models.body.data;
    let ids: Vec<&str> = listed.iter().filter_map(wire::ModelEntry::id).collect();
    let model_entry = listed
        .iter()
        .find(|m| m.id() == Some(settings.model.as_str()))
        .cloned();
    if model_entry.is_none() && !ids.is_empty() {
        return Err(EngineError::Model(format!(
            "{} serves {}, not `{}`",
            settings.base_url,
            ids.join(", "),
            settings.model
        )));
    }
    // Only the entry's stable fields identify the model.
    let model_entry = model_entry.map(wire::ModelEntry::stable);
    // vLLM and SGLang answer GET /version beside /v1; others do not (that is no error).
    let root = settings
        .base_url
        .trim_end_matches('/')
        .trim_end_matches("/v1")
        .to_string();
    let version = Client::new(&OpenAiSettings {
        base_url: root,
        max_retries: 0,
        ..settings.clone()
    })
    .ok()
    .and_then(|c| c.get::<Value>("version").ok())
    .map(|answer| answer.body);
    // Ask for what the configured scoring method reads: prompt log-probabilities (echo) or
    // the first generated token's top log-probabilities.
    let echo = settings.scoring == ScoringMethod::Echo;
    let prompt = "The capital of France is";
    let body = wire::CompletionRequest {
        model: &settings.model,
        prompt,
        max_tokens: 1,
        temperature: 0.0,
        echo: Some(echo),
        logprobs: Some(settings.scoring.top_count()),
        biased: None,
    };
    let what = if echo {
        "prompt log-probabilities (/completions with echo and logprobs)"
    } else {
        "top log-probabilities (/completions with logprobs)"
    };
    let answer = client.post::<wire::CompletionResponse>("completions", &body);
    let (prompt_logprobs, scoring_problem) = match answer {
        Err(e) => (false, Some(format!("asking for {what} failed: {e}"))),
        Ok(answer) => {
            let v = &answer.body;
            let ok = if echo {
                // The first prompt token has none; the second must.
                v.logprobs()
                    .and_then(|lp| lp.token_logprobs.as_ref())
                    .is_some_and(|t| t.len() >= 2 && t[1].is_some())
            } else {
                v.first_top_logprobs().is_some()
            };
            if !ok {
                (false, Some(format!("the server returned no {what}")))
            } else if let ScoringMethod::LogitBias(_) = settings.scoring {
                // The second request, on the two most probable tokens: it must return both,
                // in the ratio of their log-probabilities.
                match probe_biased(&client, &settings.model, prompt, v) {
                    Ok(()) => (true, None),
                    Err(e) => (false, Some(format!("logit_bias scoring: {e}"))),
                }
            } else {
                (true, None)
            }
        }
    };
    Ok(ServerInfo {
        base_url: settings.base_url.clone(),
        model: settings.model.clone(),
        model_entry,
        server,
        version,
        prompt_logprobs,
        scoring_problem,
        insecure_skip_verify: settings.insecure_skip_verify,
    })
}

/// The probe of [`ScoringMethod::LogitBias`]: the two most probable tokens of `first` (an
/// answer with top log-probabilities), raised, come back as the two post-sampling
/// probabilities, in the ratio of their log-probabilities in `first`.
fn probe_biased(
    client: &Client,
    model: &str,
    prompt: &str,
    first: &wire::CompletionResponse,
) -> Result<(), EngineError> {
    let top = first.first_top_logprobs().unwrap_or_default();
    let ids: Vec<u32> = top.iter().take(2).filter_map(|t| t.id).collect();
    let [a, b] = ids[..] else {
        return Err(EngineError::Request(
            "the server's top log-probabilities carry no token ids (llama.cpp's server sends them)"
                .into(),
        ));
    };
    let probs = biased_probabilities(client, model, prompt, &[a, b])?;
    let expected = top[0].logprob - top[1].logprob;
    let got = (probs[0] / probs[1]).ln();
    if (got - expected).abs() > 1e-3 {
        return Err(EngineError::Request(format!(
            "the raised tokens' post-sampling log-ratio is {got:.5}, their log-probabilities' {expected:.5}: the server does not apply logit_bias before post_sampling_probs"
        )));
    }
    Ok(())
}

/// The post-sampling probabilities of `ids` after `prompt` (one request raising exactly them,
/// [`wire::BiasedSampling`]), in the order of `ids`; they sum to one. An error when the server
/// returns other tokens, misses one, or gives one no probability.
fn biased_probabilities(
    client: &Client,
    model: &str,
    prompt: &str,
    ids: &[u32],
) -> Result<Vec<f64>, EngineError> {
    let k = ids.len() as u32;
    let body = wire::CompletionRequest {
        model,
        prompt,
        max_tokens: 1,
        temperature: 1.0,
        echo: None,
        logprobs: Some(k),
        biased: Some(wire::BiasedSampling {
            logit_bias: ids
                .iter()
                .map(|id| (id.to_string(), json!(RAISING_BIAS)))
                .collect(),
            samplers: ["top_k"],
            top_k: k,
            post_sampling_probs: true,
        }),
    };
    let answer = client
        .post::<wire::CompletionResponse>("completions", &body)
        .map_err(EngineError::from)?;
    let first = answer
        .body
        .logprobs()
        .and_then(|lp| lp.content.first())
        .filter(|c| !c.top_probs.is_empty())
        .ok_or_else(|| {
            answer.missing("post-sampling probabilities (choices[0].logprobs.content[0].top_probs)")
        })?;
    ids.iter()
        .map(|&id| {
            first
                .top_probs
                .iter()
                .find(|e| e.id == Some(id))
                .and_then(|e| e.prob)
                .filter(|&p| p > 0.0)
                .ok_or_else(|| {
                    EngineError::Request(format!(
                        "{}: raised token {id} has no post-sampling probability (choices[0].logprobs.content[0].top_probs)",
                        answer.url
                    ))
                })
        })
        .collect()
}

/// The remote engine.
pub struct OpenAiEngine {
    client: Client,
    info: ServerInfo,
    identity: ModelIdentity,
    /// The served model's tokenizer and chat template (a local GGUF or Hugging Face
    /// directory): needed for scored contracts and for generation through `/completions`.
    tokenizer: Option<ModelTokenizer>,
    /// Server prompt tokens minus ours, learned from the first scored answer: 0, or 1 for a
    /// server that puts a BOS token before every prompt (one that does not start with BOS
    /// already). Any other difference is an error ([`check_prompt_tokens`]).
    bos_offset: Mutex<Option<i64>>,
    stats: Mutex<EngineStats>,
}

impl OpenAiEngine {
    /// An engine for the server [`probe`] described in `info`. `tokenizer`: the served
    /// model's, when known (scored contracts need it); `identity`: `None` derives it from
    /// `info` ([`ServerInfo::identity`]).
    pub fn new(
        settings: &OpenAiSettings,
        info: ServerInfo,
        tokenizer: Option<ModelTokenizer>,
        identity: Option<ModelIdentity>,
    ) -> Result<OpenAiEngine, EngineError> {
        let identity = identity.unwrap_or_else(|| info.identity(tokenizer.as_ref()));
        Ok(OpenAiEngine {
            client: Client::new(settings)?,
            info,
            identity,
            tokenizer,
            bos_offset: Mutex::new(None),
            stats: Mutex::new(EngineStats::default()),
        })
    }

    /// What the probe learned about the server: its model entry, version and whether it can
    /// score.
    pub fn info(&self) -> &ServerInfo {
        &self.info
    }

    fn tokenizer(&self, why: &str) -> Result<&ModelTokenizer, EngineError> {
        self.tokenizer.as_ref().ok_or_else(|| {
            EngineError::Request(format!(
                "{why} needs the served model's tokenizer and chat template ([model] path)"
            ))
        })
    }

    fn render(&self, prompt: &PromptSpec) -> Result<String, EngineError> {
        self.tokenizer("rendering the prompt")?
            .render_prompt(prompt)
    }

    /// Run `n` calls with at most `concurrency` in flight; results in call order.
    fn run_calls<T: Send>(&self, n: usize, call: impl Fn(usize) -> T + Sync) -> Vec<T> {
        let next = AtomicUsize::new(0);
        let workers = self.client.settings.concurrency.clamp(1, n.max(1));
        let mut results: Vec<(usize, T)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    s.spawn(|| {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= n {
                                break done;
                            }
                            done.push((i, call(i)));
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| {
                    h.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
        results.sort_by_key(|(i, _)| *i);
        results.into_iter().map(|(_, r)| r).collect()
    }

    /// Log-probability of `option_tokens` after `prompt_text` (one echo request): the sum and
    /// each token's.
    fn option_logprob(
        &self,
        prompt_text: &str,
        prompt_tokens: usize,
        option: &str,
        option_tokens: &[u32],
    ) -> Result<(f64, Vec<f64>, u64), EngineError> {
        let tok = self.tokenizer("scoring")?;
        let option_text = tok.decode(option_tokens)?;
        let prompt = format!("{prompt_text}{option_text}");
        let body = wire::CompletionRequest {
            model: &self.info.model,
            prompt: &prompt,
            max_tokens: 1,
            temperature: 0.0,
            echo: Some(true),
            logprobs: Some(1),
            biased: None,
        };
        let answer = self
            .client
            .post::<wire::CompletionResponse>("completions", &body)
            .map_err(EngineError::from)?;
        let choice_logprobs = answer.body.logprobs();
        let logprobs = choice_logprobs
            .and_then(|lp| lp.token_logprobs.as_deref())
            .ok_or_else(|| {
                answer.missing("prompt log-probabilities (choices[0].logprobs.token_logprobs)")
            })?;
        let tokens: &[String] = choice_logprobs.map_or(&[], |lp| &lp.tokens);
        let usage = answer.body.usage.unwrap_or_default();
        let server_prompt = usage
            .prompt_tokens
            .ok_or_else(|| answer.missing("usage.prompt_tokens"))?;
        let generated = usage
            .completion_tokens
            .ok_or_else(|| answer.missing("usage.completion_tokens"))?;
        // max_tokens is 1: at most one generated entry follows the prompt's.
        let generated = generated.min(1) as usize;
        self.same_tokenization(
            server_prompt,
            prompt_tokens + option_tokens.len(),
            prompt_text,
        )?;
        let k = option_tokens.len();
        let end = logprobs.len().saturating_sub(generated);
        if end < k + 1 {
            return Err(EngineError::Request(format!(
                "the server returned {} prompt log-probabilities for a prompt of {server_prompt} tokens",
                logprobs.len()
            )));
        }
        let mut sum = 0.0;
        let mut per_token = Vec::with_capacity(k);
        for lp in &logprobs[end - k..end] {
            let lp = lp.ok_or_else(|| {
                EngineError::Request(format!(
                    "{}: a null log-probability inside the option (choices[0].logprobs.token_logprobs)",
                    answer.url
                ))
            })?;
            sum += lp;
            per_token.push(lp);
        }
        // The scored tokens must spell the option (an end-of-turn token closing it may show
        // as its text or as nothing).
        if tokens.len() != logprobs.len() {
            return Err(EngineError::Request(format!(
                "the server returned {} tokens for {} log-probabilities: cannot check which tokens were scored",
                tokens.len(),
                logprobs.len()
            )));
        }
        let spelled: String = tokens[end - k..end].concat();
        let rest = spelled.strip_prefix(option);
        let closing = tok.decode(&option_tokens[k.saturating_sub(1)..])?;
        if !matches!(rest, Some(r) if r.is_empty() || r == closing) {
            return Err(EngineError::Request(format!(
                "the server's last prompt tokens spell `{spelled}`, not the option `{option}`"
            )));
        }
        Ok((sum, per_token, server_prompt))
    }

    /// Same tokenization: the server counts the prompt tokens ours counts (plus a BOS it adds
    /// itself, learned once from the first answer), and adds no BOS before a prompt
    /// `prompt_text` that starts with one.
    fn same_tokenization(
        &self,
        server: u64,
        ours: usize,
        prompt_text: &str,
    ) -> Result<(), EngineError> {
        let bos = self
            .tokenizer
            .as_ref()
            .map(|t| t.bos_token.as_str())
            .filter(|b| !b.is_empty() && prompt_text.starts_with(b));
        let mut known = self.bos_offset.lock().map_err(|_| EngineError::Stopped)?;
        check_prompt_tokens(&mut known, server, ours, bos)
            .map_err(|e| EngineError::Request(e.to_string()))
    }

    /// Log-probabilities of single-token `options` (their ids `option_ids`) from the top
    /// log-probabilities of the first generated token, and the server's prompt tokens. With
    /// [`ScoringMethod::LogitBias`], options missing from the top entries are read from a
    /// second, biased request ([`biased_probabilities`]); otherwise `None` when the server did
    /// not return every option among them. An entry is an option's when its id is the option's
    /// token (servers that send ids) or its text the option's.
    fn top_logprobs(
        &self,
        prompt_text: &str,
        prompt_tokens: usize,
        options: &[String],
        option_ids: &[u32],
    ) -> Result<Option<(Vec<f64>, u64)>, EngineError> {
        let scoring = self.client.settings.scoring;
        let body = wire::CompletionRequest {
            model: &self.info.model,
            prompt: prompt_text,
            max_tokens: 1,
            temperature: 0.0,
            echo: None,
            logprobs: Some(scoring.top_count()),
            biased: None,
        };
        let answer = self
            .client
            .post::<wire::CompletionResponse>("completions", &body)
            .map_err(EngineError::from)?;
        let server_prompt = answer
            .body
            .usage
            .and_then(|u| u.prompt_tokens)
            .ok_or_else(|| answer.missing("usage.prompt_tokens"))?;
        self.same_tokenization(server_prompt, prompt_tokens, prompt_text)?;
        let Some(top) = answer.body.first_top_logprobs() else {
            return Ok(None);
        };
        let found: Option<Vec<f64>> = options
            .iter()
            .zip(option_ids)
            .map(|(o, &id)| {
                top.iter()
                    .find(|t| t.id.map_or(t.text == *o, |t_id| t_id == id))
                    .map(|t| t.logprob)
            })
            .collect();
        if found.is_some() || !matches!(scoring, ScoringMethod::LogitBias(_)) {
            return Ok(found.map(|lp| (lp, server_prompt)));
        }
        // The top token anchors the options' probabilities to the full vocabulary.
        let anchor = &top[0];
        let anchor_id = anchor
            .id
            .ok_or_else(|| answer.missing("the top token's id (choices[0].logprobs.content)"))?;
        let mut raised: Vec<u32> = vec![anchor_id];
        raised.extend(option_ids.iter().filter(|&&id| id != anchor_id));
        let probs = biased_probabilities(&self.client, &self.info.model, prompt_text, &raised)?;
        let logprobs = option_ids
            .iter()
            .map(|id| {
                let at = raised.iter().position(|r| r == id).unwrap_or(0);
                anchor.logprob + (probs[at] / probs[0]).ln()
            })
            .collect();
        Ok(Some((logprobs, server_prompt)))
    }

    fn generate_one(&self, job: &GenerateJob) -> Result<GenerateOutput, EngineError> {
        let started = Instant::now();
        let via_completions = job.prompt.assistant_prefix.is_some()
            || self.client.settings.generation_endpoint == GenerationEndpoint::Completions;
        // The text, finish reason and usage of the first choice.
        let (text, finish, usage) = if via_completions {
            let prompt = self.render(&job.prompt)?;
            let body = wire::CompletionRequest {
                model: &self.info.model,
                prompt: &prompt,
                max_tokens: job.max_new_tokens,
                temperature: 0.0,
                echo: None,
                logprobs: None,
                biased: None,
            };
            let answer = self
                .client
                .post::<wire::CompletionResponse>("completions", &body)
                .map_err(EngineError::from)?;
            let choice = answer.body.choices.first();
            let text = choice
                .and_then(|c| c.text.clone())
                .ok_or_else(|| answer.no_text("choices[0].text"))?;
            let finish = choice.and_then(|c| c.finish_reason.clone());
            (text, finish, answer.body.usage)
        } else {
            let messages = job.prompt.messages();
            let body = wire::ChatRequest {
                model: &self.info.model,
                messages: messages
                    .iter()
                    .map(|m| wire::ChatMessage {
                        role: &m.role,
                        content: &m.content,
                    })
                    .collect(),
                max_tokens: job.max_new_tokens,
                temperature: 0.0,
                chat_template_kwargs: self.client.settings.chat_template_kwargs.as_ref(),
            };
            let answer = self
                .client
                .post::<wire::ChatResponse>("chat/completions", &body)
                .map_err(EngineError::from)?;
            let choice = answer.body.choices.first();
            let text = choice
                .and_then(|c| c.message.as_ref()?.content.clone())
                .ok_or_else(|| answer.no_text("choices[0].message.content"))?;
            let finish = choice.and_then(|c| c.finish_reason.clone());
            (text, finish, answer.body.usage)
        };
        let truncated = finish.as_deref() == Some("length");
        let usage = usage.unwrap_or_default();
        let prompt_tokens = usage.prompt_tokens.unwrap_or(0) as u32;
        let completion_tokens = usage.completion_tokens.unwrap_or(0) as u32;
        let tokens = match &self.tokenizer {
            Some(t) => t.encode(&text).unwrap_or_default(),
            None => Vec::new(),
        };
        if let Ok(mut s) = self.stats.lock() {
            s.prompt_tokens += u64::from(prompt_tokens);
            s.computed_tokens += u64::from(prompt_tokens);
            s.generated_tokens += u64::from(completion_tokens);
            s.forwards += 1;
            s.forward_seconds += started.elapsed().as_secs_f64();
        }
        Ok(GenerateOutput {
            text,
            tokens,
            finish_reason: if truncated {
                FinishReason::Length
            } else {
                FinishReason::Stop
            },
            truncated,
            prompt_tokens,
            completion_tokens,
            reused_tokens: 0,
            latency_ms: started.elapsed().as_secs_f64() * 1e3,
        })
    }
}

/// Why a server's count of prompt tokens does not fit ours ([`check_prompt_tokens`]): its
/// scores would not be those of the prompt a local engine scores.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum PromptTokensError {
    /// Our prompt starts with the BOS token and the server counts one token more: it put a
    /// second BOS before it.
    #[error("the server counts {server} prompt tokens where the local tokenizer counts {ours} for a prompt that already starts with the BOS token `{bos}`: the server adds a second BOS, so the model reads two and scores differently from a local run; have the server add no BOS to /completions prompts (llama.cpp: a model whose tokenizer.ggml.add_bos_token is false; vLLM: add_special_tokens false), or use a chat template that does not write it")]
    SecondBos {
        /// The server's count (`usage.prompt_tokens`).
        server: u64,
        /// Our tokenizer's count.
        ours: usize,
        /// The BOS token's text.
        bos: String,
    },
    /// The counts differ by other than the one BOS the server was learned to add.
    #[error("the server counts {server} prompt tokens where the local tokenizer counts {ours}: the served model does not tokenize like [model] path")]
    Mismatch {
        /// The server's count (`usage.prompt_tokens`).
        server: u64,
        /// Our tokenizer's count.
        ours: usize,
    },
}

/// Whether the server's count of prompt tokens, `server`, fits ours: equal, or one more for a
/// BOS the server adds (learned once into `known`). `leading_bos` is the BOS token when our
/// prompt already starts with it: then one more is a second BOS, which the model would read
/// and which changes every probability, so it is an error.
fn check_prompt_tokens(
    known: &mut Option<i64>,
    server: u64,
    ours: usize,
    leading_bos: Option<&str>,
) -> Result<(), PromptTokensError> {
    let offset = server as i64 - ours as i64;
    if let (1, Some(bos)) = (offset, leading_bos) {
        return Err(PromptTokensError::SecondBos {
            server,
            ours,
            bos: bos.to_string(),
        });
    }
    match *known {
        None if offset == 0 || offset == 1 => *known = Some(offset),
        Some(k) if k == offset => {}
        _ => return Err(PromptTokensError::Mismatch { server, ours }),
    }
    Ok(())
}

/// A decision scored from one top-log-probability list: the options' log-probabilities, the
/// server's prompt tokens and the call's milliseconds.
type DirectScore = Result<(Vec<f64>, u64, f64), EngineError>;

/// One option scored by echo: log-probability, its tokens' log-probabilities, the server's
/// prompt tokens, milliseconds.
type OptionScore = Result<(f64, Vec<f64>, u64, f64), EngineError>;

impl Engine for OpenAiEngine {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    fn score(&mut self, jobs: &[ScoreJob]) -> Vec<Result<ScoreOutput, EngineError>> {
        if !self.info.prompt_logprobs {
            let why = self
                .info
                .scoring_problem
                .clone()
                .unwrap_or_else(|| "the server cannot score".into());
            return jobs
                .iter()
                .map(|_| Err(EngineError::Request(why.clone())))
                .collect();
        }
        // Render every prompt and tokenize every option first; then one call per option.
        struct Prepared {
            text: String,
            prompt_tokens: usize,
            options: Vec<Vec<u32>>,
        }
        let prepared: Vec<Result<Prepared, EngineError>> = jobs
            .iter()
            .map(|j| {
                let tok = self.tokenizer("scoring")?;
                let text = self.render(&j.prompt)?;
                Ok(Prepared {
                    prompt_tokens: tok.encode(&text)?.len(),
                    options: tok.option_tokens(&j.options)?,
                    text,
                })
            })
            .collect();
        let started = Instant::now();
        // Top log-probabilities first where they can serve (single-token options).
        let mut direct: Vec<Option<DirectScore>> = jobs.iter().map(|_| None).collect();
        let scoring = self.client.settings.scoring;
        if scoring != ScoringMethod::Echo {
            // Top entries can hold every option only when there are no more options than
            // entries; the biased second request holds any number.
            let fits = |options: usize| {
                matches!(scoring, ScoringMethod::LogitBias(_))
                    || options <= scoring.top_count() as usize
            };
            let eligible: Vec<usize> = prepared
                .iter()
                .enumerate()
                .filter(|(j, p)| {
                    p.as_ref().is_ok_and(|p| {
                        p.options.iter().all(|t| t.len() == 1) && fits(jobs[*j].options.len())
                    })
                })
                .map(|(j, _)| j)
                .collect();
            let answers = self.run_calls(eligible.len(), |i| {
                let j = eligible[i];
                let p = prepared[j].as_ref().map_err(Clone::clone)?;
                let t = Instant::now();
                let ids: Vec<u32> = p.options.iter().map(|t| t[0]).collect();
                self.top_logprobs(&p.text, p.prompt_tokens, &jobs[j].options, &ids)
                    .map(|r| r.map(|(lp, served)| (lp, served, t.elapsed().as_secs_f64() * 1e3)))
            });
            for (j, a) in eligible.into_iter().zip(answers) {
                // Not every option returned: this job falls back to echo scoring.
                direct[j] = a.transpose();
                if direct[j].is_none() {
                    tracing::info!(
                        "an option is not among the top log-probabilities: scoring by echo"
                    );
                }
            }
        }
        let calls: Vec<(usize, usize)> = prepared
            .iter()
            .enumerate()
            .filter(|(j, _)| direct[*j].is_none())
            .filter_map(|(j, p)| p.as_ref().ok().map(|p| (j, p.options.len())))
            .flat_map(|(j, n)| (0..n).map(move |o| (j, o)))
            .collect();
        let answers = self.run_calls(calls.len(), |i| {
            let (j, o) = calls[i];
            let p = prepared[j].as_ref().map_err(Clone::clone)?;
            let t = Instant::now();
            self.option_logprob(&p.text, p.prompt_tokens, &jobs[j].options[o], &p.options[o])
                .map(|(lp, tokens, served)| (lp, tokens, served, t.elapsed().as_secs_f64() * 1e3))
        });
        let elapsed = started.elapsed().as_secs_f64();
        let mut per_job: Vec<Vec<OptionScore>> = jobs.iter().map(|_| Vec::new()).collect();
        for ((j, _), a) in calls.iter().zip(answers) {
            per_job[*j].push(a);
        }
        let mut served_tokens = 0u64;
        let direct_calls = direct.iter().filter(|d| d.is_some()).count();
        let out: Vec<Result<ScoreOutput, EngineError>> = prepared
            .into_iter()
            .zip(per_job)
            .zip(direct)
            .map(|((p, answers), direct)| {
                let p = p?;
                if let Some(d) = direct {
                    let (logprobs, served, ms) = d?;
                    served_tokens += served;
                    return Ok(ScoreOutput {
                        probabilities: normalize_logprobs(&logprobs),
                        // Single-token options: each one's token is itself.
                        token_logprobs: logprobs.iter().map(|&l| vec![l]).collect(),
                        logprobs,
                        prompt_tokens: p.prompt_tokens as u32,
                        reused_tokens: 0,
                        latency_ms: ms,
                    });
                }
                let mut logprobs = Vec::with_capacity(answers.len());
                let mut token_logprobs = Vec::with_capacity(answers.len());
                let mut latency = 0.0f64;
                for a in answers {
                    let (lp, tokens, served, ms) = a?;
                    served_tokens += served;
                    latency = latency.max(ms);
                    logprobs.push(lp);
                    token_logprobs.push(tokens);
                }
                Ok(ScoreOutput {
                    probabilities: normalize_logprobs(&logprobs),
                    logprobs,
                    token_logprobs,
                    prompt_tokens: p.prompt_tokens as u32,
                    reused_tokens: 0,
                    latency_ms: latency,
                })
            })
            .collect();
        if let Ok(mut s) = self.stats.lock() {
            s.prompt_tokens += served_tokens;
            s.computed_tokens += served_tokens;
            s.generated_tokens += (calls.len() + direct_calls) as u64;
            s.forwards += (calls.len() + direct_calls) as u64;
            s.forward_seconds += elapsed;
        }
        out
    }

    fn generate(&mut self, jobs: &[GenerateJob]) -> Vec<Result<GenerateOutput, EngineError>> {
        self.run_calls(jobs.len(), |i| self.generate_one(&jobs[i]))
    }

    fn stats(&self) -> EngineStats {
        self.stats.lock().map(|s| *s).unwrap_or_default()
    }
}

#[cfg(test)]
mod client_tests;
#[cfg(test)]
mod tests;
