//! [`MistralRsEngine`]: the model run by mistral.rs 0.8.1, in one of two modes
//! ([`MistralRsMode`]):
//!
//! - **reference** (the CPU default): exact f32 weights (`CANDLE_DEQUANTIZE_ALL`), no prefix
//!   cache, an independent reference for [`crate::PrefixEngine`];
//! - **native** (the default of a `cuda` build, where it runs on GPU 0): weights in their own
//!   format — a quantized GGUF through mistral.rs's quantized kernels, or a Hugging Face
//!   directory's safetensors in bf16 (mistral.rs's automatic choice) or the configured
//!   f16/f32 —,
//!   PagedAttention on CUDA, mistral.rs's prefix cache, and scoring and generation batched.
//!   This is what mistral.rs is in the pipeline for.
//!
//! Both engines see identical tokens: prompts are rendered with the GGUF's chat template and
//! tokenized by our [`ModelTokenizer`], and the ids go to mistral.rs as
//! `RequestMessage::CompletionTokens` (mistral.rs's own GGUF tokenizer conversion splits digits
//! differently from the model's `smollm` pre-tokenizer).
//!
//! mistral.rs's own log-probabilities are base-10 and sampling-dependent, and it ignores
//! `logits_bias`, so neither is used. Every request instead carries a
//! [`CustomLogitsProcessor`] that sees the full-vocabulary logits of each decoding step:
//!
//! - scoring records the logits of the first step (the prompt boundary) and leaves them
//!   unchanged; the natural-log log-softmax is computed here in f64 over the full vocabulary;
//!   an option of several tokens adds the log-probability of each later token, read at the
//!   boundary of the prompt extended by the option's earlier tokens (teacher forcing by
//!   prefill);
//! - greedy generation picks the argmax (first maximum, as [`super::PrefixEngine`] does) and
//!   masks every other token, so the token sequence is known exactly. Generation ends at the
//!   tokenizer's stop ids or after the budget; the processor then ends the mistral.rs request
//!   with a forced stop token (mistral.rs's own EOS list is disabled).
//!
//! The processor also checks that the context mistral.rs decodes from is our prompt followed
//! by the tokens forced so far (at the first step, with the prefix cache on, the prompt's
//! uncached end).
//!
//! Two faults of mistral.rs 0.8.1 shape the requests:
//!
//! - On the CPU, decoding several sequences in one step computes wrong attention:
//!   `flash_attn_cpu_single_q` (the `q_len == 1` kernel) keeps its per-tile scratch by head
//!   only, not by batch row, so every row gets the attention output of the batch's last row.
//!   Prompt prefill (`q_len > 1`) is correct in batches. So scoring reads only prefill logits
//!   (many requests at once), and generation sends one request at a time.
//! - A sequence that finishes in its prompt step (`max_len` 1, or a stop token as the first
//!   token) is answered, then set back to "running" by the engine loop and keeps decoding
//!   unseen, next to later requests. So no request ends in its prompt step: scoring requests
//!   run a second, ignored step, and generation is stopped by the processor from step 1 on.
//!
//! (The CPU decode fault does not concern CUDA: there generation is batched.)
//!
//! Loading never touches the network: the GGUF is validated and hashed first, then handed to
//! mistral.rs from a private staging directory that holds only a link to it (mistral.rs would
//! otherwise pick up `generation_config.json`, `chat_template.json` and similar files lying
//! next to the model); a Hugging Face directory is handed over the same way, every file linked
//! and `config.json` rewritten in transformers 4's layout ([`hf_config_for_mistralrs`]). In
//! reference mode `CANDLE_DEQUANTIZE_ALL=1` is set before loading, so candle stores exact f32
//! weights instead of running its scalar Q4_1 kernel. Scores are always read from the raw
//! logits converted to f32 and normalized here in f64.
//!
//! mistral.rs runs its engine on its own thread; this struct owns a small tokio runtime to talk
//! to it and blocks on it, so it must be used from a plain OS thread, never from inside another
//! tokio runtime.

mod continuous;
mod staging;

use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::{Arc, Mutex, Once};

use candle_core::{Device, Tensor};
use mistralrs::core::{
    AutoDeviceMapParams, Constraint, CustomLogitsProcessor, DefaultSchedulerMethod,
    DeviceMapSetting, GGUFLoaderBuilder, GGUFSpecificConfig, Loader, MemoryGpuConfig, MistralRs,
    MistralRsBuilder, ModelDType, NormalLoaderBuilder, NormalRequest, NormalSpecificConfig,
    PagedAttentionConfig, PagedCacheType, Request, RequestMessage, Response, SamplingParams,
    SchedulerConfig, StopTokens, TokenSource,
};

use c2s_records::FinishReason;

use crate::engine::{
    ContinuousEngine, Engine, EngineStats, GenerateJob, GenerateOutput, ModelIdentity, PromptSpec,
    ScoreJob, ScoreOutput,
};
use crate::error::EngineError;
use crate::identity::model_identity;
use crate::tokenizer::template::TemplateTime;
use crate::tokenizer::ModelTokenizer;

pub use self::staging::hf_config_for_mistralrs;
use self::staging::Staging;

/// The `engine` field of the identity in reference mode.
pub const MISTRALRS_ENGINE: &str = "mistralrs-0.8.1/f32";

/// How mistral.rs runs the model (see the module notes; the configuration's own type).
pub use c2s_records::MistralRsMode;

/// The build's default mode: native on CUDA builds, reference otherwise.
pub fn default_mode() -> MistralRsMode {
    if cfg!(feature = "cuda") {
        MistralRsMode::Native
    } else {
        MistralRsMode::Reference
    }
}

/// Settings of [`MistralRsEngine`].
#[derive(Debug, Clone, PartialEq)]
pub struct MistralRsSettings {
    /// Reference (exact f32 weights, no prefix cache: an independent check of the prefix
    /// engine) or native (weights in their own format, batched, cached); [`default_mode`] is
    /// the build's default.
    pub mode: MistralRsMode,
    /// PagedAttention (native mode, CUDA devices only; mistral.rs has none on the CPU).
    pub paged_attention: bool,
    /// KV cache reserved by PagedAttention, in tokens.
    pub kv_cache_tokens: usize,
    /// Sequences scheduled together.
    pub max_sequences: usize,
    /// Sequences kept by mistral.rs's prefix cache (native mode; 0: off).
    pub prefix_cache: usize,
    /// `auto` (mistral.rs's choice: bf16 where the device computes it), `bf16`, `f16` or `f32`:
    /// the dtype of a Hugging Face directory's weights in native mode.
    pub dtype: String,
    /// What the chat template's `strftime_now` reports (None: the time of loading).
    pub template_time: Option<TemplateTime>,
}

impl Default for MistralRsSettings {
    fn default() -> Self {
        MistralRsSettings {
            mode: default_mode(),
            paged_attention: true,
            kv_cache_tokens: 65536,
            max_sequences: 64,
            prefix_cache: 64,
            dtype: "auto".into(),
            template_time: None,
        }
    }
}

impl MistralRsSettings {
    /// The exact CPU reference.
    pub fn reference() -> MistralRsSettings {
        MistralRsSettings {
            mode: MistralRsMode::Reference,
            ..Default::default()
        }
    }

    /// The device the model runs on: GPU 0 in a `cuda` build, else the CPU.
    fn device(&self) -> Result<Device, EngineError> {
        if cfg!(feature = "cuda") {
            Device::new_cuda(0).map_err(|e| EngineError::Model(format!("no CUDA device: {e}")))
        } else {
            Ok(Device::Cpu)
        }
    }

    /// The `engine` field of the model identity: what computed the answers.
    pub fn engine_name(&self) -> String {
        match self.mode {
            MistralRsMode::Reference => MISTRALRS_ENGINE.to_string(),
            MistralRsMode::Native => format!(
                "mistralrs-0.8.1/native-{}-{}",
                if cfg!(feature = "cuda") {
                    "cuda"
                } else {
                    "cpu"
                },
                self.dtype
            ),
        }
    }

    fn model_dtype(&self) -> ModelDType {
        match (self.mode, self.dtype.as_str()) {
            (MistralRsMode::Reference, _) | (_, "f32") => ModelDType::F32,
            (_, "bf16") => ModelDType::BF16,
            (_, "f16") => ModelDType::F16,
            _ => ModelDType::Auto,
        }
    }
}

/// GGUF architectures mistral.rs 0.8.1 runs.
const SUPPORTED_ARCHITECTURES: &[&str] = &[
    "llama",
    "mistral3",
    "phi2",
    "phi3",
    "starcoder2",
    "qwen2",
    "qwen3",
    "qwen3moe",
];

/// New tokens of a scoring request: its first step is recorded; it runs a second one only so
/// that it does not end in its prompt step (see [`Trace::observe`]).
const RECORD_MAX_LEN: usize = 2;

/// mistral.rs serving one GGUF model on the CPU with f32 weights; see the module notes.
pub struct MistralRsEngine {
    runtime: tokio::runtime::Runtime,
    runner: Arc<MistralRs>,
    tokenizer: ModelTokenizer,
    identity: ModelIdentity,
    stats: EngineStats,
    /// Generation one request at a time: batched one-token decoding is wrong on the CPU.
    decode_alone: bool,
    /// Jobs and mistral.rs requests in flight ([`continuous`]).
    flight: continuous::Flight,
}

/// What the logits processor does at each step of one request.
#[derive(Debug, Clone)]
enum Policy {
    /// Keep the first step's logits; change nothing.
    Record,
    /// Greedy decoding with a budget of new tokens and the ids that end generation.
    Greedy { budget: usize, stops: Arc<Vec<u32>> },
}

/// What the processor saw during one request.
#[derive(Debug)]
struct Trace {
    prompt: Arc<Vec<u32>>,
    policy: Policy,
    steps: usize,
    /// Record: the logits at the prompt boundary.
    first_logits: Option<Vec<f32>>,
    /// Greedy: the tokens forced so far (what mistral.rs decodes from).
    fed: Vec<u32>,
    /// Greedy: the generated tokens (stop token excluded) and why generation ended.
    generated: Vec<u32>,
    finish: Option<FinishReason>,
    error: Option<String>,
}

impl Trace {
    fn new(prompt: Arc<Vec<u32>>, policy: Policy) -> Trace {
        Trace {
            prompt,
            policy,
            steps: 0,
            first_logits: None,
            fed: Vec::new(),
            generated: Vec::new(),
            finish: None,
            error: None,
        }
    }

    fn fail(&mut self, msg: String) {
        if self.error.is_none() {
            self.error = Some(msg);
        }
    }

    /// One decoding step. Problems are recorded, never returned: an error from a logits
    /// processor makes mistral.rs skip the rest of its batch for that step.
    fn observe(&mut self, logits: &Tensor, context: &[u32]) -> Tensor {
        let step = self.steps;
        self.steps += 1;
        if self.error.is_some() {
            return logits.clone();
        }
        let (budget, stops) = match &self.policy {
            Policy::Record if step > 0 => return logits.clone(),
            Policy::Record => (0, None),
            Policy::Greedy { budget, stops } => (*budget, Some(stops.clone())),
        };
        let n = self.prompt.len();
        let consistent = if step == 0 {
            // mistral.rs's prefix cache (native mode) prefills only the uncached end of the
            // prompt, and the first step's context is that end.
            !context.is_empty() && self.prompt.ends_with(context)
        } else {
            // Earlier steps checked the prompt; here the tokens forced so far.
            context.len() == n + step && context[n..] == self.fed[..]
        };
        if !consistent {
            self.fail(format!(
                "mistral.rs decoded step {step} from a context of {} tokens that is not the \
                 prompt ({n} tokens) followed by the {} tokens forced so far",
                context.len(),
                self.fed.len()
            ));
            return logits.clone();
        }
        let values: Vec<f32> = match logits
            .to_dtype(candle_core::DType::F32)
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1())
        {
            Ok(v) => v,
            Err(e) => {
                self.fail(format!("reading the logits: {e}"));
                return logits.clone();
            }
        };
        let Some(stops) = stops else {
            self.first_logits = Some(values);
            return logits.clone();
        };
        // mistral.rs 0.8.1 resets a sequence that finishes in its prompt step to "running"
        // after answering it, and the orphan keeps decoding next to later requests. So no
        // request may end at step 0: mistral.rs is stopped by a forced stop token at step 1
        // or later, and the answer is read from here.
        let token = if self.finish.is_some() {
            stops[0]
        } else {
            let best = argmax(&values, |_| true);
            if stops.contains(&best) {
                self.finish = Some(FinishReason::Stop);
                if step == 0 {
                    argmax(&values, |t| !stops.contains(&t))
                } else {
                    best
                }
            } else {
                self.generated.push(best);
                if self.generated.len() >= budget {
                    self.finish = Some(FinishReason::Length);
                }
                best
            }
        };
        self.fed.push(token);
        let mut forced = vec![f32::NEG_INFINITY; values.len()];
        match forced.get_mut(token as usize) {
            Some(x) => *x = 0.0,
            None => {
                self.fail(format!(
                    "token {token} is outside the vocabulary of {} logits",
                    values.len()
                ));
                return logits.clone();
            }
        }
        match Tensor::from_vec(forced, logits.shape().clone(), logits.device()) {
            Ok(t) => t,
            Err(e) => {
                self.fail(format!("building the forced logits: {e}"));
                logits.clone()
            }
        }
    }
}

/// First maximum among the allowed tokens (the rule of [`super::PrefixEngine`]).
fn argmax(values: &[f32], allowed: impl Fn(u32) -> bool) -> u32 {
    let mut best: Option<(u32, f32)> = None;
    for (i, &x) in values.iter().enumerate() {
        let i = i as u32;
        if allowed(i) && best.is_none_or(|(_, b)| x > b) {
            best = Some((i, x));
        }
    }
    best.map_or(0, |(i, _)| i)
}

/// One request to mistral.rs.
struct Pending {
    prompt: Arc<Vec<u32>>,
    policy: Policy,
    max_len: usize,
    stop: Option<Vec<u32>>,
}

/// A request mistral.rs answered.
struct Finished {
    trace: Trace,
    finish_reason: String,
}

/// Read the GGUF header: tokenizer and architecture. Errors name the file.
fn read_gguf(path: &Path) -> Result<(ModelTokenizer, String), EngineError> {
    let mut file =
        std::fs::File::open(path).map_err(|e| EngineError::model_file(path, e.to_string()))?;
    let ct = crate::model_files::read_gguf(&mut file, path)?;
    let arch = ct
        .metadata
        .get("general.architecture")
        .and_then(|v| v.to_string().ok())
        .cloned()
        .ok_or_else(|| {
            EngineError::model_file(path, "GGUF metadata `general.architecture` missing")
        })?;
    let tokenizer = ModelTokenizer::from_gguf(&ct)?;
    if !SUPPORTED_ARCHITECTURES.contains(&arch.as_str()) {
        return Err(EngineError::model_file(
            path,
            format!("architecture `{arch}` is not supported by mistral.rs 0.8.1 GGUF loading"),
        ));
    }
    Ok((tokenizer, arch))
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

impl MistralRsEngine {
    /// Load a model as the exact CPU reference (f32 weights, no caching). The file is checked
    /// (exists, is a GGUF with a supported architecture and a usable tokenizer, or a Hugging
    /// Face directory) before mistral.rs sees it.
    pub fn load(path: &Path) -> Result<MistralRsEngine, EngineError> {
        Self::load_with(path, &MistralRsSettings::reference(), None)
    }

    /// Load a model with `settings`; `identity` is the model's identity when already computed
    /// by [`model_identity`] (the pipeline hashes the model once, not once per worker).
    pub fn load_with(
        path: &Path,
        settings: &MistralRsSettings,
        identity: Option<ModelIdentity>,
    ) -> Result<MistralRsEngine, EngineError> {
        let meta =
            std::fs::metadata(path).map_err(|e| EngineError::model_file(path, e.to_string()))?;
        let mut tokenizer = if meta.is_dir() {
            crate::identity::load_tokenizer(path)?
        } else {
            read_gguf(path)?.0
        };
        if let Some(t) = settings.template_time {
            tokenizer.set_template_time(t)?;
        }
        let identity = match identity {
            Some(i) => i,
            None => model_identity(path, &tokenizer, &settings.engine_name())?,
        };
        let canonical = std::fs::canonicalize(path)
            .map_err(|e| EngineError::model_file(path, e.to_string()))?;
        let native = settings.mode == MistralRsMode::Native;
        if !native {
            // candle reads this once per thread, at the first quantized matmul it builds.
            static DEQUANTIZE: Once = Once::new();
            DEQUANTIZE.call_once(|| std::env::set_var("CANDLE_DEQUANTIZE_ALL", "1"));
        }
        let device = settings.device()?;
        let paged = (native && settings.paged_attention && device.is_cuda())
            .then(|| {
                PagedAttentionConfig::new(
                    None,
                    MemoryGpuConfig::ContextSize(settings.kv_cache_tokens),
                    PagedCacheType::Auto,
                )
                .map_err(|e| EngineError::Model(format!("PagedAttention settings: {e}")))
            })
            .transpose()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| EngineError::Model(format!("tokio runtime: {e}")))?;
        let dtype = settings.model_dtype();
        let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // No tokenizer model id and a local file or directory: mistral.rs reads only local
            // files and never calls the HF hub.
            let (loader, _staging): (Box<dyn Loader>, Option<Staging>) = if meta.is_dir() {
                let staging = Staging::hf_dir(&canonical)?;
                let loader = NormalLoaderBuilder::new(
                    NormalSpecificConfig::default(),
                    None,
                    None,
                    Some(staging.dir.to_string_lossy().to_string()),
                    false,
                    None,
                )
                .build(None)
                .map_err(|e| EngineError::model_file(path, format!("mistral.rs: {e:#}")))?;
                (loader, Some(staging))
            } else {
                let file_name = canonical
                    .file_name()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_else(|| "model.gguf".into());
                let staging = Staging::new(&canonical, &file_name)?;
                let loader = GGUFLoaderBuilder::new(
                    None,
                    None,
                    staging.dir.to_string_lossy().to_string(),
                    vec![file_name],
                    GGUFSpecificConfig::default(),
                    false,
                    None,
                )
                .build();
                (loader, Some(staging))
            };
            let pipeline = loader
                .load_model_from_hf(
                    None,
                    TokenSource::None,
                    &dtype,
                    &device,
                    true,
                    DeviceMapSetting::Auto(AutoDeviceMapParams::default_text()),
                    None,
                    paged,
                )
                .map_err(|e| {
                    EngineError::Model(format!("mistral.rs could not load the model: {e:#}"))
                })?;
            let max_sequences = settings.max_sequences.max(1);
            let scheduler = runtime.block_on(async {
                let cache = pipeline.lock().await.get_metadata().cache_config.clone();
                match cache {
                    Some(config) if native && settings.paged_attention => {
                        SchedulerConfig::PagedAttentionMeta {
                            max_num_seqs: max_sequences,
                            config,
                        }
                    }
                    _ => SchedulerConfig::DefaultScheduler {
                        // The config holds at least one sequence.
                        method: DefaultSchedulerMethod::Fixed(
                            NonZeroUsize::new(max_sequences).unwrap_or(NonZeroUsize::MIN),
                        ),
                    },
                }
            });
            let mut builder = MistralRsBuilder::new(pipeline, scheduler, false, None)
                // Generation stops at our stop ids, given with each request.
                .with_disable_eos_stop(true);
            builder = if native && settings.prefix_cache > 0 {
                builder.with_prefix_cache_n(settings.prefix_cache)
            } else {
                builder.with_no_prefix_cache(true)
            };
            Ok::<_, EngineError>(runtime.block_on(builder.build()))
        }));
        let runner = match loaded {
            Ok(r) => r?,
            Err(p) => {
                return Err(EngineError::Model(format!(
                    "mistral.rs panicked while loading the model: {}",
                    panic_message(p)
                )))
            }
        };
        Ok(MistralRsEngine {
            runtime,
            runner,
            tokenizer,
            identity,
            stats: EngineStats::default(),
            decode_alone: device.is_cpu(),
            flight: continuous::Flight::default(),
        })
    }

    /// The model's own tokenizer and chat template (not mistral.rs's conversion), which
    /// renders and tokenizes every prompt this engine sends.
    pub fn tokenizer(&self) -> &ModelTokenizer {
        &self.tokenizer
    }

    /// Render a prompt with the chat template and tokenize it (as [`super::PrefixEngine`]).
    pub fn prompt_tokens(&self, p: &PromptSpec) -> Result<Vec<u32>, EngineError> {
        self.tokenizer.prompt_tokens(p)
    }

    /// Natural-log probabilities of every vocabulary token at the prompt boundary.
    pub fn next_token_logprobs(&mut self, prompt: &PromptSpec) -> Result<Vec<f64>, EngineError> {
        let tokens = self.prompt_tokens(prompt)?;
        self.next_token_logprobs_after(tokens)
    }

    /// Natural-log probabilities of every vocabulary token after the token ids `tokens`
    /// (reference checks on fixed token sequences).
    pub fn next_token_logprobs_after(&mut self, tokens: Vec<u32>) -> Result<Vec<f64>, EngineError> {
        self.distribution_after(tokens)
            .map(|d| Arc::try_unwrap(d).unwrap_or_else(|d| d.as_ref().clone()))
    }
}

/// A request on its way: what its processor saw, where its answer comes.
struct Submitted {
    trace: Arc<Mutex<Trace>>,
    answer: Result<tokio::sync::mpsc::Receiver<Response>, EngineError>,
}

async fn submit(
    runner: &MistralRs,
    sender: &tokio::sync::mpsc::Sender<Request>,
    p: Pending,
) -> Submitted {
    let trace = Arc::new(Mutex::new(Trace::new(p.prompt.clone(), p.policy)));
    let seen = trace.clone();
    let processor: Arc<dyn CustomLogitsProcessor> = Arc::new(
        move |logits: &Tensor, context: &[u32]| -> candle_core::Result<Tensor> {
            let mut t = seen.lock().unwrap_or_else(|e| e.into_inner());
            Ok(t.observe(logits, context))
        },
    );
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let request = NormalRequest {
        messages: RequestMessage::CompletionTokens(p.prompt.to_vec()),
        sampling_params: SamplingParams {
            max_len: Some(p.max_len),
            stop_toks: p.stop.map(StopTokens::Ids),
            ..SamplingParams::deterministic()
        },
        response: tx,
        return_logprobs: false,
        is_streaming: false,
        id: runner.next_request_id(),
        constraint: Constraint::None,
        suffix: None,
        tools: None,
        tool_choice: None,
        logits_processors: Some(vec![processor]),
        return_raw_logits: false,
        web_search_options: None,
        model_id: None,
        truncate_sequence: false,
    };
    let answer = match sender.send(Request::Normal(Box::new(request))).await {
        Ok(()) => Ok(rx),
        Err(_) => Err(EngineError::Compute("the mistral.rs engine is gone".into())),
    };
    Submitted { trace, answer }
}

async fn collect(s: Submitted) -> Result<Finished, EngineError> {
    let mut rx = s.answer?;
    let finish_reason = match rx.recv().await {
        None => Err(EngineError::Compute(
            "mistral.rs dropped the request (its engine thread stopped)".into(),
        )),
        Some(Response::CompletionDone(r)) => r
            .choices
            .first()
            .map(|c| c.finish_reason.clone())
            .ok_or_else(|| EngineError::Compute("mistral.rs returned no choice".into())),
        Some(Response::ValidationError(e)) => Err(EngineError::Request(format!("mistral.rs: {e}"))),
        Some(Response::InternalError(e)) => Err(EngineError::Compute(format!("mistral.rs: {e}"))),
        Some(Response::CompletionModelError(e, _)) | Some(Response::ModelError(e, _)) => {
            Err(EngineError::Compute(format!("mistral.rs: {e}")))
        }
        Some(_) => Err(EngineError::Compute(
            "mistral.rs sent an unexpected response kind".into(),
        )),
    }?;
    drop(rx);
    // The answer is the last thing mistral.rs does with a request; take what the processor saw.
    let trace = {
        let mut t = s.trace.lock().unwrap_or_else(|e| e.into_inner());
        let fresh = Trace::new(t.prompt.clone(), t.policy.clone());
        std::mem::replace(&mut *t, fresh)
    };
    match trace.error {
        Some(e) => Err(EngineError::Compute(format!("mistral.rs run: {e}"))),
        None => Ok(Finished {
            trace,
            finish_reason,
        }),
    }
}

impl Engine for MistralRsEngine {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    fn score(&mut self, jobs: &[ScoreJob]) -> Vec<Result<ScoreOutput, EngineError>> {
        self.score_all(jobs)
    }

    fn generate(&mut self, jobs: &[GenerateJob]) -> Vec<Result<GenerateOutput, EngineError>> {
        self.generate_all(jobs)
    }

    /// `forwards` counts the rounds in which requests were handed to mistral.rs and
    /// `forward_seconds` the time spent waiting for its answers (mistral.rs schedules its own
    /// forward passes inside).
    fn stats(&self) -> EngineStats {
        self.stats
    }

    /// mistral.rs batches continuously itself: each job is handed over as it begins
    /// ([`continuous`]).
    fn continuous(&mut self) -> Option<&mut dyn ContinuousEngine> {
        Some(self)
    }
}
