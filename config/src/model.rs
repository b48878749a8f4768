//! `[model]`: the model file and the engine that runs it, with each engine's own table
//! (`[model.mistralrs]`, `[model.openai]`). Every choice is an enum: an unknown name is a
//! config error naming the field and the names it could be.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::yes;
pub use c2s_records::{GenerationEndpoint, MistralRsMode};

/// `[model] engine`: what computes the model's answers. Matched in one place, where the
/// engine is built (`run/src/engine.rs`); everything else asks the questions below.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// Our batched f32 forward with prefix reuse (the default).
    #[default]
    Prefix,
    /// mistral.rs (`[model.mistralrs]`).
    Mistralrs,
    /// A model served behind an OpenAI-compatible API (`[model.openai]`).
    Openai,
    /// A seeded test double with no model file (tests only).
    Simulated,
}

impl EngineKind {
    /// The name as the config writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Prefix => "prefix",
            EngineKind::Mistralrs => "mistralrs",
            EngineKind::Openai => "openai",
            EngineKind::Simulated => "simulated",
        }
    }

    /// A served model: answers come over HTTP, the local file is only its tokenizer.
    pub fn is_remote(self) -> bool {
        self == EngineKind::Openai
    }

    /// The test double: no model file, no tokenizer.
    pub fn is_simulated(self) -> bool {
        self == EngineKind::Simulated
    }
}

/// A name that is not one of [`EngineKind`]'s (as the config and command-line flags write
/// them).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown engine `{name}` (prefix, mistralrs, openai, simulated)")]
pub struct UnknownEngine {
    /// The name as given.
    pub name: String,
}

impl std::str::FromStr for EngineKind {
    type Err = UnknownEngine;

    /// The name as the config writes it (command-line flags take the same names).
    fn from_str(name: &str) -> Result<Self, UnknownEngine> {
        [
            EngineKind::Prefix,
            EngineKind::Mistralrs,
            EngineKind::Openai,
            EngineKind::Simulated,
        ]
        .into_iter()
        .find(|e| e.as_str() == name)
        .ok_or_else(|| UnknownEngine {
            name: name.to_string(),
        })
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `[model.openai] scoring`: how scored contracts read option probabilities from a server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenAiScoring {
    /// One `/completions` request per option with prompt log-probabilities (the default;
    /// exact for any option).
    #[default]
    Echo,
    /// One request per decision reading the first token's top log-probabilities.
    TopLogprobs,
    /// As `TopLogprobs`; a decision whose options are not all among the top entries asks
    /// again with them raised by a logit bias and reads their post-sampling probabilities
    /// (llama.cpp's server, which refuses `echo`): exact, one or two requests per decision.
    LogitBias,
}

/// `[model.mistralrs] dtype`: weight/activation dtype of a Hugging Face directory in native
/// mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MistralRsDtype {
    /// mistral.rs's choice (bf16 where the device computes it).
    #[default]
    Auto,
    /// bfloat16: half of f32's memory, f32's exponent range.
    Bf16,
    /// IEEE half precision: half of f32's memory, a narrower range than bf16.
    F16,
    /// Single precision: twice the memory of the 16-bit dtypes.
    F32,
}

impl MistralRsDtype {
    /// The name as the config writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            MistralRsDtype::Auto => "auto",
            MistralRsDtype::Bf16 => "bf16",
            MistralRsDtype::F16 => "f16",
            MistralRsDtype::F32 => "f32",
        }
    }
}

/// `[model]`: the model and its engine.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    /// GGUF file, or a local Hugging Face directory (`config.json`, `*.safetensors`,
    /// `tokenizer.json`, `tokenizer_config.json`) for the prefix engine. With the `openai`
    /// engine: the served model's tokenizer and chat template (a GGUF or a directory with
    /// `tokenizer.json` and `tokenizer_config.json`), needed for scored contracts; may be left
    /// out for generated contracts through chat completions. `hf:OWNER/NAME[/FILE.gguf][@REV]`
    /// names a model on the Hugging Face Hub instead (read as `hf`, `hf_file`, `revision`).
    /// A run sets it to the resolved snapshot in the Hub cache before any work.
    #[serde(default)]
    pub path: PathBuf,
    /// A model on the Hugging Face Hub, `OWNER/NAME` (instead of `path`): downloaded into the
    /// Hugging Face cache (`$HF_HOME/hub`) and loaded from its snapshot directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hf: Option<String>,
    /// With `hf`: the branch, tag or commit (default `main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// With `hf`: one GGUF file of the repository (its path in the repository); unset: the
    /// repository is a Hugging Face safetensors directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hf_file: Option<String>,
    /// `prefix` (our batched forward with prefix reuse, the default), `mistralrs`, `openai`
    /// (a served model, `[model.openai]`), or `simulated` (a seeded test double, for tests
    /// only).
    #[serde(default)]
    pub engine: EngineKind,
    /// Prefix-cache budget in MiB (prefix engine).
    #[serde(default = "default_cache_mb")]
    pub cache_mb: usize,
    /// Reuse cached prompt prefixes (prefix engine; off: every prompt is computed in full,
    /// the one-at-a-time baseline of `bench inference`). Answers are the same either way.
    #[serde(default = "yes")]
    pub prefix_reuse: bool,
    /// How the prefix engine holds the linear weights: `f32` (default, exact) or `bf16` (a
    /// named mode: half the memory, products on the CPU's bf16 units; recorded in the model
    /// identity as `prefix/bf16`).
    #[serde(default)]
    pub dtype: c2s_records::WeightDtype,
    /// `[model.mistralrs]`: how the mistral.rs engine runs the model.
    #[serde(default)]
    pub mistralrs: MistralRsSection,
    /// `[model.openai]`: the server of the `openai` engine.
    #[serde(default)]
    pub openai: Option<OpenAiSection>,
}

/// `[model.openai]`: a model served behind an OpenAI-compatible API.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OpenAiSection {
    /// API root with its version, e.g. `http://127.0.0.1:8000/v1`.
    pub base_url: String,
    /// The served model name (as `GET /models` lists it).
    pub model: String,
    /// Name of the environment variable that holds the API key; the key itself is never
    /// written to outputs or the manifest.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Seconds before one request times out.
    #[serde(default = "default_timeout_s")]
    pub timeout_s: f64,
    /// Requests in flight at once per timely worker (each worker owns an engine).
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// Retries on 429, 5xx, timeouts and connection errors (exponential backoff).
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// First backoff in milliseconds (doubled per retry, at most 30 s).
    #[serde(default = "default_backoff_ms")]
    pub retry_backoff_ms: u64,
    /// `chat` (`/chat/completions`, the server's chat template; default) or `completions`
    /// (our rendering of the chat template, as for scoring) for generated contracts.
    #[serde(default)]
    pub generation_endpoint: GenerationEndpoint,
    /// Scored contracts: `echo` (default; one `/completions` request per option with prompt
    /// log-probabilities, exact for any option) or `top_logprobs` (one request per decision
    /// reading the first token's top `top_logprobs` log-probabilities, when every option is
    /// one token and all are returned; other decisions fall back to `echo`) or `logit_bias`
    /// (as `top_logprobs`, and a decision whose options are not all returned asks again with
    /// them and the top token raised by a logit bias, reading llama.cpp's post-sampling
    /// probabilities: exact for one-token options without `echo`, for llama.cpp's server).
    #[serde(default)]
    pub scoring: OpenAiScoring,
    /// How many top log-probabilities `top_logprobs` scoring asks for (vLLM's default cap is
    /// 20).
    #[serde(default = "default_top_logprobs")]
    pub top_logprobs: u32,
    /// Sent as `chat_template_kwargs` with chat completions (vLLM, SGLang): e.g.
    /// `{ enable_thinking = false }` for Qwen3 servers, as the paper disables thinking and as
    /// our own rendering does. Unset: not sent (hosted APIs reject unknown parameters).
    #[serde(default)]
    pub chat_template_kwargs: Option<serde_json::Value>,
    /// Largest response body read, in bytes (a longer one is an error naming the URL).
    #[serde(default = "default_max_response_bytes")]
    pub max_response_bytes: u64,
    /// Accept any TLS certificate (self-signed, expired, another host's). Off by default; when
    /// on, a warning is logged and the manifest's model identity records it.
    #[serde(default)]
    pub insecure_skip_verify: bool,
}

fn default_max_response_bytes() -> u64 {
    16 * 1024 * 1024
}

fn default_top_logprobs() -> u32 {
    20
}

fn default_timeout_s() -> f64 {
    120.0
}
fn default_concurrency() -> usize {
    4
}
fn default_retries() -> u32 {
    4
}
fn default_backoff_ms() -> u64 {
    500
}

/// `[model.mistralrs]`: settings of the mistral.rs engine.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MistralRsSection {
    /// `reference`: exact f32 weights on the CPU, no caching (the CPU default);
    /// `native`: weights in their own format, PagedAttention (CUDA) and mistral.rs's prefix
    /// cache, batched scoring and generation (the default of a `cuda` build).
    /// Unset: chosen by the build.
    pub mode: Option<MistralRsMode>,
    /// PagedAttention on a CUDA device (native mode).
    pub paged_attention: bool,
    /// Tokens of KV cache PagedAttention reserves on the GPU.
    pub kv_cache_tokens: usize,
    /// Sequences mistral.rs schedules together.
    pub max_sequences: usize,
    /// Sequences whose KV caches mistral.rs's prefix cache keeps (native mode; 0: off).
    pub prefix_cache: usize,
    /// Weight/activation dtype of a Hugging Face directory in native mode: `auto` (mistral.rs's
    /// choice: bf16 where the device computes it), `bf16`, `f16` or `f32`. GGUF weights keep
    /// their quantized format.
    pub dtype: MistralRsDtype,
}

impl Default for MistralRsSection {
    fn default() -> Self {
        MistralRsSection {
            mode: None,
            paged_attention: true,
            kv_cache_tokens: 65536,
            max_sequences: 64,
            prefix_cache: 64,
            dtype: MistralRsDtype::Auto,
        }
    }
}

fn default_cache_mb() -> usize {
    1024
}

impl ModelSection {
    /// Check the engine's own table and the model file (relative to `base`); errors are
    /// (field, message). A `path = "hf:…"` is rewritten as `hf`, `hf_file` and `revision`.
    pub(crate) fn check(&mut self, base: &Path) -> Result<(), (String, String)> {
        self.check_hub()?;
        match (&self.openai, self.engine.is_remote()) {
            (None, true) => {
                return Err((
                    "model.openai".into(),
                    "the openai engine needs [model.openai] with base_url and model".into(),
                ))
            }
            (Some(_), false) => {
                return Err((
                    "model.openai".into(),
                    format!(
                        "[model.openai] is set but the engine is `{}` (set engine = \"openai\")",
                        self.engine
                    ),
                ))
            }
            (Some(o), true) => o.check()?,
            (None, false) => {}
        }
        if self.dtype != c2s_records::WeightDtype::F32 && self.engine != EngineKind::Prefix {
            return Err((
                "model.dtype".into(),
                format!(
                    "`{}` is a mode of the prefix engine, but the engine is `{}` (mistral.rs has \
                     [model.mistralrs] dtype)",
                    self.dtype.name(),
                    self.engine
                ),
            ));
        }
        let no_path = self.path.as_os_str().is_empty() && self.hf.is_none();
        if no_path && !self.engine.is_remote() && !self.engine.is_simulated() {
            return Err(("model.path".into(), "missing".into()));
        }
        if !self.engine.is_simulated()
            && self.hf.is_none()
            && !no_path
            && !base.join(&self.path).exists()
        {
            return Err((
                "model.path".into(),
                format!(
                    "{} does not exist (scripts/fetch-model.sh installs the default model)",
                    self.path.display()
                ),
            ));
        }
        let m = &self.mistralrs;
        if m.max_sequences == 0 || m.kv_cache_tokens == 0 {
            return Err((
                "model.mistralrs".into(),
                "max_sequences and kv_cache_tokens must be at least 1".into(),
            ));
        }
        Ok(())
    }

    /// The engine reads `[model] path`: the model's files, or a served model's tokenizer and
    /// chat template only. False for the simulated engine and for a served model without a
    /// path; where it is true, prompts are rendered (and tokens counted) in this process.
    pub fn reads_model_path(&self) -> bool {
        !self.engine.is_simulated() && (!self.path.as_os_str().is_empty() || self.hf.is_some())
    }
}

impl OpenAiSection {
    fn check(&self) -> Result<(), (String, String)> {
        let problem =
            if !(self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
                Some((
                    "model.openai.base_url",
                    format!("`{}` is not an http(s) URL", self.base_url),
                ))
            } else if self.model.is_empty() {
                Some(("model.openai.model", "is empty".to_string()))
            } else if self.concurrency == 0 {
                Some(("model.openai.concurrency", "must be at least 1".to_string()))
            } else if self.timeout_s.is_nan() || self.timeout_s <= 0.0 {
                Some(("model.openai.timeout_s", "must be positive".to_string()))
            } else if self.max_response_bytes == 0 {
                Some((
                    "model.openai.max_response_bytes",
                    "must be at least 1".to_string(),
                ))
            } else if self.top_logprobs == 0 {
                Some((
                    "model.openai.top_logprobs",
                    "must be at least 1".to_string(),
                ))
            } else {
                None
            };
        match problem {
            Some((field, message)) => Err((field.into(), message)),
            None => Ok(()),
        }
    }
}
