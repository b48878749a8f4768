//! The engine interface: score a batch of prompts over their legal options, or generate
//! greedily for a batch of prompts. Engines are synchronous and own their model; the
//! [`super::service::InferenceService`] runs one on its own thread behind an async interface.

use serde::{Deserialize, Serialize};

use c2s_records::FinishReason;

use crate::error::EngineError;

/// What identifies the model that answered: file hash, tokenizer and chat template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelIdentity {
    /// Short name (file stem), e.g. `SmolLM2-135M-Instruct.Q4_1`.
    pub name: String,
    /// Path the model was loaded from.
    pub path: String,
    /// SHA-256 of the model file.
    pub file_sha256: String,
    /// Tokenizer description (model type, pre-tokenizer, vocabulary size).
    pub tokenizer: String,
    /// SHA-256 of the chat template source.
    pub chat_template_sha256: String,
    /// Which engine computed the answers (e.g. `prefix/f32`, `mistralrs-0.8.1/f32`,
    /// `openai/uvicorn`).
    pub engine: String,
    /// A served model: base URL, served name, the server's model entry and version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<serde_json::Value>,
    /// A model downloaded from the Hugging Face Hub: repository, revision and the commit it
    /// resolved to (a resumed run must resolve to the same commit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hub: Option<HubIdentity>,
}

/// Where a model from the Hugging Face Hub came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HubIdentity {
    /// `OWNER/NAME`.
    pub repo: String,
    /// The branch, tag or commit the config asked for.
    pub revision: String,
    /// The commit it resolved to.
    pub commit: String,
    /// The GGUF file of the repository; `None`: its safetensors directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl ModelIdentity {
    /// `name@sha12`: the `model` column of the outputs.
    pub fn label(&self) -> String {
        format!(
            "{}@{}",
            self.name,
            &self.file_sha256[..12.min(self.file_sha256.len())]
        )
    }
}

/// A chat prompt: optional system message, one user message, and text placed after the
/// assistant generation boundary.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PromptSpec {
    /// The system message; `None`: no system message is passed to the chat template.
    pub system: Option<String>,
    /// The user message, verbatim.
    pub user: String,
    /// Text appended after the rendered assistant generation boundary, so that scoring and
    /// generation continue it; `None`: the prompt ends at the boundary.
    pub assistant_prefix: Option<String>,
}

impl PromptSpec {
    /// The chat messages: the system message (if any), then the user message.
    pub fn messages(&self) -> Vec<crate::tokenizer::ChatMessage> {
        use crate::tokenizer::ChatMessage;
        let mut messages = Vec::new();
        if let Some(s) = &self.system {
            messages.push(ChatMessage {
                role: "system".into(),
                content: s.clone(),
            });
        }
        messages.push(ChatMessage {
            role: "user".into(),
            content: self.user.clone(),
        });
        messages
    }

    /// The prompt of a recorded request: its system message, user message and assistant
    /// prefix, copied as they are.
    pub fn from_request(r: &c2s_records::Request) -> PromptSpec {
        PromptSpec {
            system: r.system.clone(),
            user: r.user.clone(),
            assistant_prefix: r.assistant_prefix.clone(),
        }
    }
}

/// Score the continuations `options` (e.g. option codes) at the prompt boundary.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScoreJob {
    /// The prompt the options continue.
    pub prompt: PromptSpec,
    /// The continuations to score; the output's vectors follow this order.
    pub options: Vec<String>,
}

/// The answer to a [`ScoreJob`]: one score per option, in the job's option order.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreOutput {
    /// Natural-log probability of each option's token sequence under the full vocabulary
    /// (summed over its tokens).
    pub logprobs: Vec<f64>,
    /// Natural-log probability of each token of each option, in order (a closing end token
    /// included): `logprobs[i]` is their sum.
    pub token_logprobs: Vec<Vec<f64>>,
    /// The conditional distribution over the options (softmax of `logprobs`): every other
    /// continuation is masked.
    pub probabilities: Vec<f64>,
    /// Tokens of the rendered prompt (chat template and assistant prefix included).
    pub prompt_tokens: u32,
    /// Prompt tokens served from the prefix cache.
    pub reused_tokens: u32,
    /// Wall-clock milliseconds the engine spent answering the job (engines that score a
    /// batch at once report the batch's time); 0 for an answer served from the service's
    /// cache.
    pub latency_ms: f64,
}

impl ScoreOutput {
    /// The output of options scored token by token: the sums, and their softmax.
    pub fn from_token_logprobs(
        token_logprobs: Vec<Vec<f64>>,
        prompt_tokens: u32,
        reused_tokens: u32,
        latency_ms: f64,
    ) -> ScoreOutput {
        let logprobs: Vec<f64> = token_logprobs.iter().map(|t| t.iter().sum()).collect();
        ScoreOutput {
            probabilities: normalize_logprobs(&logprobs),
            logprobs,
            token_logprobs,
            prompt_tokens,
            reused_tokens,
            latency_ms,
        }
    }

    /// The raw scores an answer keeps (`None` when the token lists do not align).
    pub fn raw(&self) -> Option<c2s_records::OptionLogprobs> {
        (self.token_logprobs.len() == self.logprobs.len()).then(|| c2s_records::OptionLogprobs {
            logprobs: self.logprobs.clone(),
            token_logprobs: self.token_logprobs.clone(),
        })
    }
}

/// Greedy generation with a budget of new tokens.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GenerateJob {
    /// The prompt generation continues.
    pub prompt: PromptSpec,
    /// The budget: generation stops after this many new tokens if no stop token came first.
    pub max_new_tokens: u32,
}

/// The answer to a [`GenerateJob`].
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateOutput {
    /// Decoded text of the generated tokens (stop token excluded).
    pub text: String,
    /// The generated token ids, in order (stop token excluded; a served model's text
    /// re-encoded locally, or empty without a local tokenizer).
    pub tokens: Vec<u32>,
    /// Why generation ended: a stop token, or the budget.
    pub finish_reason: FinishReason,
    /// The budget ran out before a stop token.
    pub truncated: bool,
    /// Tokens of the rendered prompt (chat template and assistant prefix included; a served
    /// model's count as its server reports it).
    pub prompt_tokens: u32,
    /// New tokens the model produced, a final stop token included.
    pub completion_tokens: u32,
    /// Prompt tokens served from the prefix cache.
    pub reused_tokens: u32,
    /// Wall-clock milliseconds from the job's start to its answer; 0 for an answer served
    /// from the service's cache.
    pub latency_ms: f64,
}

/// Counters an engine keeps (for benchmarks and logs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineStats {
    /// Prompt tokens requested.
    pub prompt_tokens: u64,
    /// Prompt tokens actually computed (the rest came from the prefix cache).
    pub computed_tokens: u64,
    /// Generated tokens.
    pub generated_tokens: u64,
    /// Forward passes (batched calls of the model).
    pub forwards: u64,
    /// Seconds spent in forward passes.
    pub forward_seconds: f64,
}

impl EngineStats {
    /// Add another engine's counters.
    pub fn add(&mut self, o: &EngineStats) {
        self.prompt_tokens += o.prompt_tokens;
        self.computed_tokens += o.computed_tokens;
        self.generated_tokens += o.generated_tokens;
        self.forwards += o.forwards;
        self.forward_seconds += o.forward_seconds;
    }
}

/// A model engine. Implementations must return exactly one result per job, in job order.
pub trait Engine: Send {
    /// The model that answers (recorded with every output).
    fn identity(&self) -> &ModelIdentity;
    /// Score each job's options; one result per job, in job order (a failed job fails alone).
    fn score(&mut self, jobs: &[ScoreJob]) -> Vec<Result<ScoreOutput, EngineError>>;
    /// Generate greedily for each job; one result per job, in job order.
    fn generate(&mut self, jobs: &[GenerateJob]) -> Vec<Result<GenerateOutput, EngineError>>;
    /// The counters since the engine was built (all zero for engines that keep none).
    fn stats(&self) -> EngineStats {
        EngineStats::default()
    }
    /// Forget cached prefixes (benchmarks measure cold paths with it).
    fn clear_cache(&mut self) {}
    /// The engine's continuous-batching interface, when it has one: the batching service then
    /// hands it each request as it comes and refills a finished request's slot at the next
    /// step, instead of waiting for a whole batch to end.
    fn continuous(&mut self) -> Option<&mut dyn ContinuousEngine> {
        None
    }
}

/// A job of either kind.
#[derive(Debug, Clone)]
pub enum EngineJob {
    /// Score the options at the prompt boundary.
    Score(ScoreJob),
    /// Generate greedily within the token budget.
    Generate(GenerateJob),
}

/// The answer to an [`EngineJob`].
#[derive(Debug, Clone)]
pub enum EngineAnswer {
    /// The answer to an [`EngineJob::Score`].
    Score(Result<ScoreOutput, EngineError>),
    /// The answer to an [`EngineJob::Generate`].
    Generate(Result<GenerateOutput, EngineError>),
}

/// Continuous batching: jobs join at any step and leave as soon as they are answered, so the
/// requests in flight stay at the service's batch size while work remains (a generation that
/// ends early frees its slot for the next request at once).
pub trait ContinuousEngine {
    /// Add a job; its answer comes from a later [`ContinuousEngine::step`] under `ticket`.
    fn begin(&mut self, ticket: u64, job: EngineJob);
    /// Jobs begun and not yet answered.
    fn in_flight(&self) -> usize;
    /// Advance every job by one step (new jobs are prefilled, generating ones decode one
    /// token) and return the answers of the jobs that finished, in any order.
    fn step(&mut self) -> Vec<(u64, EngineAnswer)>;
}

/// Softmax of natural-log scores.
pub fn normalize_logprobs(logprobs: &[f64]) -> Vec<f64> {
    let max = logprobs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if !max.is_finite() {
        let n = logprobs.len().max(1) as f64;
        return vec![1.0 / n; logprobs.len()];
    }
    let exps: Vec<f64> = logprobs.iter().map(|&l| (l - max).exp()).collect();
    let sum: f64 = exps.iter().sum();
    exps.iter().map(|e| e / sum).collect()
}

/// Natural-log softmax of `logits` in f64.
pub fn log_softmax(logits: &[f32]) -> Vec<f64> {
    let max = logits
        .iter()
        .fold(f64::NEG_INFINITY, |m, &x| m.max(f64::from(x)));
    let sum: f64 = logits.iter().map(|&x| (f64::from(x) - max).exp()).sum();
    let lse = max + sum.ln();
    logits.iter().map(|&x| f64::from(x) - lse).collect()
}
