//! [`PrefixEngine`]: the fast CPU path. Prompts are rendered with the GGUF's chat template,
//! tokenized with the GGUF's tokenizer, matched against the prefix cache, and the uncached
//! suffixes of a whole batch run through one ragged forward pass.
//!
//! Scoring is exact: the full-vocabulary log-softmax (f64) at the prompt boundary, read at the
//! options' tokens; options of several tokens add the log-probabilities of their later tokens
//! (teacher-forced); the conditional distribution over the options is the softmax of those
//! sums, so every other continuation is masked.

use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

use self::cache::{PrefixCache, PrefixMatch, BLOCK};
use self::transformer::{LayerKv, SeqInput, Transformer, WeightDtype};
use crate::engine::{
    log_softmax, normalize_logprobs, ContinuousEngine, Engine, EngineStats, GenerateJob,
    GenerateOutput, ModelIdentity, PromptSpec, ScoreJob, ScoreOutput,
};
use crate::error::EngineError;
use crate::identity::{load_tokenizer, model_identity};
use crate::tokenizer::template::TemplateTime;
use crate::tokenizer::ModelTokenizer;

/// `$body(args…)` (an `#[inline(always)]` function of plain element loops) compiled for the
/// widest vectors the CPU has, chosen at run time: AVX-512 (F and BW), else AVX2, else as
/// compiled. Every instantiation runs the same operations (Rust fuses no multiply and add on
/// its own), so every CPU gets the same bits. Used as a function's whole body:
/// `fn f(x: &mut [f32]) { widest_vectors!(f_body(x: &mut [f32])) }`.
macro_rules! widest_vectors {
    ($body:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f,avx512bw")]
            unsafe fn avx512($($arg: $ty),*) $(-> $ret)? {
                $body($($arg),*)
            }
            #[target_feature(enable = "avx2")]
            unsafe fn avx2($($arg: $ty),*) $(-> $ret)? {
                $body($($arg),*)
            }
            if std::arch::is_x86_feature_detected!("avx512bw") {
                // SAFETY: the CPU has AVX-512F and AVX-512BW (BW implies F).
                return unsafe { avx512($($arg),*) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2.
                return unsafe { avx2($($arg),*) };
            }
        }
        $body($($arg),*)
    }};
}

pub mod bf16;
pub mod cache;
mod continuous;
mod forward;
pub use forward::{keep_freed_memory, return_freed_memory};
mod gguf_config;
pub mod hf_config;
pub mod kernels;
pub mod rope;
pub mod transformer;
pub mod vexp;
mod weights;

/// Settings of the prefix engine.
#[derive(Debug, Clone, Copy)]
pub struct PrefixEngineConfig {
    /// Reuse cached prefixes (off: every prompt is computed in full).
    pub prefix_reuse: bool,
    /// Byte budget of the prefix cache.
    pub cache_bytes: usize,
    /// Largest number of prompt tokens computed in one forward pass.
    pub max_batch_tokens: usize,
    /// What the chat template's `strftime_now` reports (None: the time of loading).
    pub template_time: Option<TemplateTime>,
    /// How the linear weights are held (f32 by default; bf16 is a named mode).
    pub dtype: WeightDtype,
}

impl Default for PrefixEngineConfig {
    fn default() -> Self {
        PrefixEngineConfig {
            prefix_reuse: true,
            cache_bytes: 1 << 30,
            max_batch_tokens: 4096,
            template_time: None,
            dtype: WeightDtype::F32,
        }
    }
}

/// The engine name in model identities (the f32 mode; [`prefix_engine_name`] for any).
pub const PREFIX_ENGINE: &str = "prefix/f32";

/// The engine name in model identities for weights held as `dtype`: `prefix/f32`,
/// `prefix/bf16`.
pub fn prefix_engine_name(dtype: WeightDtype) -> String {
    format!("prefix/{}", dtype.name())
}

/// The prefix engine: a [`Transformer`] on the CPU, the model's tokenizer and chat template,
/// and a [`PrefixCache`] of the keys and values of prompt blocks already computed, which every
/// later batch reuses.
pub struct PrefixEngine {
    model: Transformer,
    tokenizer: ModelTokenizer,
    cache: PrefixCache,
    identity: ModelIdentity,
    config: PrefixEngineConfig,
    stats: EngineStats,
    /// Jobs in flight under continuous batching ([`continuous`]).
    running: continuous::Running,
}

/// A prompt prepared for the model.
struct Prepared {
    tokens: Vec<u32>,
}

/// Result of prefilling one prompt.
struct Prefilled {
    kv: Vec<LayerKv>,
    last_logits: Vec<f32>,
    reused: usize,
}

impl PrefixEngine {
    /// Load a GGUF file or a local Hugging Face directory (`config.json`, `*.safetensors`,
    /// `tokenizer.json`, `tokenizer_config.json`); nothing is fetched from the network.
    pub fn load(path: &Path, config: PrefixEngineConfig) -> Result<PrefixEngine, EngineError> {
        Self::load_with_identity(path, config, None)
    }

    /// [`PrefixEngine::load`] with the model's identity already computed by
    /// [`model_identity`] (the pipeline hashes the model once, not once per worker).
    pub fn load_with_identity(
        path: &Path,
        config: PrefixEngineConfig,
        identity: Option<ModelIdentity>,
    ) -> Result<PrefixEngine, EngineError> {
        let mut tokenizer = load_tokenizer(path)?;
        if let Some(t) = config.template_time {
            tokenizer.set_template_time(t)?;
        }
        let model = Transformer::load_as(path, config.dtype)?;
        match config.dtype {
            WeightDtype::F32 => tracing::info!(
                kernels = model.kernels().name(),
                "prefix engine: f32 products on the {} kernels",
                model.kernels().name()
            ),
            WeightDtype::Bf16 => tracing::info!(
                kernels = model.bf16_kernels().name(),
                weight_mib = model.weight_bytes() >> 20,
                "prefix engine: bf16 weights ({} MiB), products on the {} kernels",
                model.weight_bytes() >> 20,
                model.bf16_kernels().name()
            ),
        }
        let identity = match identity {
            Some(i) => i,
            None => model_identity(path, &tokenizer, &prefix_engine_name(config.dtype))?,
        };
        let c = &model.config;
        let bytes_per_token = c.n_layers * 2 * c.kv_width() * 4;
        Ok(PrefixEngine {
            cache: PrefixCache::new(config.cache_bytes, bytes_per_token, c.kv_width()),
            model,
            tokenizer,
            identity,
            config,
            stats: EngineStats::default(),
            running: continuous::Running::default(),
        })
    }

    /// The gemm kernel family the forward pass runs on.
    pub fn kernels(&self) -> kernels::KernelFamily {
        self.model.kernels()
    }

    /// The tokenizer and chat template prompts are rendered with (the GGUF's metadata, or the
    /// directory's `tokenizer.json` and `tokenizer_config.json`).
    pub fn tokenizer(&self) -> &ModelTokenizer {
        &self.tokenizer
    }

    /// Full-vocabulary logits at the prompt boundary, computed from scratch (no prefix cache):
    /// the reference that scoring is checked against.
    pub fn boundary_logits(&self, prompt: &PromptSpec) -> Result<Vec<f32>, EngineError> {
        let tokens = self.prompt_tokens(prompt)?;
        let rows = [tokens.len() - 1];
        let out = self.model.forward(&[SeqInput {
            prefix: None,
            prefix_len: 0,
            tokens: &tokens,
            logit_rows: &rows,
        }])?;
        out.into_iter()
            .next()
            .and_then(|o| o.logits.into_iter().next())
            .ok_or_else(|| EngineError::Compute("no logits".into()))
    }

    /// Render a prompt with the chat template and tokenize it.
    pub fn prompt_tokens(&self, p: &PromptSpec) -> Result<Vec<u32>, EngineError> {
        self.tokenizer.prompt_tokens(p)
    }

    /// Render and tokenize prompts. A prompt that fails keeps its place (one placeholder token)
    /// with its error beside it, so the batch's other prompts go on.
    fn prepare<'a>(
        &mut self,
        prompts: impl Iterator<Item = &'a PromptSpec>,
    ) -> (Vec<Prepared>, Vec<Option<EngineError>>) {
        let mut prepared = Vec::new();
        let mut errors = Vec::new();
        for p in prompts {
            let (tokens, error) = match self.prompt_tokens(p) {
                Ok(t) => (t, None),
                Err(e) => (vec![0], Some(e)),
            };
            self.stats.prompt_tokens += tokens.len() as u64;
            prepared.push(Prepared { tokens });
            errors.push(error);
        }
        (prepared, errors)
    }

    /// Prefill many prompts, reusing and extending the prefix cache. Prompts that share an
    /// uncached block with an earlier prompt of the same round wait for the next round, so a
    /// shared prefix is computed once.
    fn prefill(&mut self, prompts: &[Prepared]) -> Vec<Result<Prefilled, EngineError>> {
        let mut results: Vec<Option<Result<Prefilled, EngineError>>> =
            (0..prompts.len()).map(|_| None).collect();
        let mut pending: Vec<usize> = (0..prompts.len()).collect();
        while !pending.is_empty() {
            let mut round = Vec::new();
            let mut deferred = Vec::new();
            let mut claimed: HashSet<Vec<u32>> = HashSet::new();
            let mut round_tokens = 0;
            for &i in &pending {
                let tokens = &prompts[i].tokens;
                let m = if self.config.prefix_reuse {
                    self.cache.lookup(tokens, 1)
                } else {
                    PrefixMatch::none()
                };
                let new_tokens = tokens.len() - m.tokens;
                let first_block_end = m.tokens + BLOCK;
                let shares_uncached = self.config.prefix_reuse
                    && first_block_end < tokens.len()
                    && !claimed.insert(tokens[..first_block_end].to_vec());
                let over_budget =
                    !round.is_empty() && round_tokens + new_tokens > self.config.max_batch_tokens;
                if shares_uncached || over_budget {
                    deferred.push(i);
                } else {
                    round_tokens += new_tokens;
                    round.push((i, m));
                }
            }
            let prefixes: Vec<Result<Vec<LayerKv>, EngineError>> =
                round.iter().map(|(_, m)| self.cache.assemble(m)).collect();
            let last_rows: Vec<[usize; 1]> = round
                .iter()
                .map(|(i, m)| [prompts[*i].tokens.len() - m.tokens - 1])
                .collect();
            let mut seqs = Vec::with_capacity(round.len());
            let mut idx = Vec::with_capacity(round.len());
            for (((i, m), prefix), rows) in round.iter().zip(&prefixes).zip(&last_rows) {
                match prefix {
                    Ok(kv) => {
                        let tokens = &prompts[*i].tokens;
                        seqs.push(SeqInput {
                            prefix: (m.tokens > 0).then_some(kv.as_slice()),
                            prefix_len: m.tokens,
                            tokens: &tokens[m.tokens..],
                            logit_rows: rows,
                        });
                        idx.push(*i);
                    }
                    Err(e) => results[*i] = Some(Err(e.clone())),
                }
            }
            let started = Instant::now();
            let computed: usize = seqs.iter().map(|s| s.tokens.len()).sum();
            let out = self.model.forward(&seqs);
            self.stats.forwards += 1;
            self.stats.forward_seconds += started.elapsed().as_secs_f64();
            self.stats.computed_tokens += computed as u64;
            drop(seqs);
            match out {
                Ok(outs) => {
                    let matches: std::collections::HashMap<usize, &PrefixMatch> =
                        round.iter().map(|(i, m)| (*i, m)).collect();
                    for (i, out) in idx.iter().zip(outs) {
                        let m = matches[i];
                        let tokens = &prompts[*i].tokens;
                        if self.config.prefix_reuse {
                            if let Err(e) = self.cache.insert(tokens, m, &out.kv) {
                                results[*i] = Some(Err(e));
                                continue;
                            }
                        }
                        let last_logits = out.logits.into_iter().next().unwrap_or_default();
                        results[*i] = Some(Ok(Prefilled {
                            kv: out.kv,
                            last_logits,
                            reused: m.tokens,
                        }));
                    }
                }
                Err(e) => {
                    for i in idx {
                        results[i] = Some(Err(e.clone()));
                    }
                }
            }
            pending = deferred;
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or(Err(EngineError::Compute("prompt was not prefilled".into()))))
            .collect()
    }
}

fn argmax(logits: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &x) in logits.iter().enumerate() {
        if x > logits[best] {
            best = i;
        }
    }
    best as u32
}

/// Most key/value positions (prompt plus continuation, summed) in one forward pass of
/// multi-token option continuations (about 0.75 GB of f32 keys and values for SmolLM2).
const CONTINUATION_POSITIONS: usize = 16_384;

impl Engine for PrefixEngine {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    fn score(&mut self, jobs: &[ScoreJob]) -> Vec<Result<ScoreOutput, EngineError>> {
        let started = Instant::now();
        let (prepared, mut errors) = self.prepare(jobs.iter().map(|j| &j.prompt));
        let mut options = Vec::with_capacity(jobs.len());
        for (i, j) in jobs.iter().enumerate() {
            let opts = match self.tokenizer.option_tokens(&j.options) {
                Ok(o) => o,
                Err(e) => {
                    errors[i] = errors[i].take().or(Some(e));
                    vec![]
                }
            };
            options.push(opts);
        }
        let prefilled = self.prefill(&prepared);
        // Later tokens of multi-token options, teacher-forced after the prompt.
        let mut extra_inputs: Vec<(usize, usize, Vec<u32>, Vec<usize>)> = Vec::new();
        for (i, opts) in options.iter().enumerate() {
            if errors[i].is_some() || prefilled[i].is_err() {
                continue;
            }
            for (k, o) in opts.iter().enumerate() {
                if o.len() > 1 {
                    let toks = o[..o.len() - 1].to_vec();
                    let rows = (0..toks.len()).collect();
                    extra_inputs.push((i, k, toks, rows));
                }
            }
        }
        // Each later token's log-probability, in order.
        let mut extra_logprob: std::collections::HashMap<(usize, usize), Vec<f64>> =
            Default::default();
        // Every continuation copies its prompt's keys and values inside the forward pass, so
        // the continuations run in chunks of bounded total positions: the 78 options of a
        // 1,600-token prompt would otherwise hold 78 copies of its cache at once. The engine
        // is batch-invariant, so chunking changes no score.
        let mut chunk_start = 0;
        while chunk_start < extra_inputs.len() {
            let mut chunk_end = chunk_start;
            let mut positions = 0;
            while chunk_end < extra_inputs.len() {
                let (i, _, toks, _) = &extra_inputs[chunk_end];
                let n = prepared[*i].tokens.len() + toks.len();
                if chunk_end > chunk_start && positions + n > CONTINUATION_POSITIONS {
                    break;
                }
                positions += n;
                chunk_end += 1;
            }
            let chunk = &extra_inputs[chunk_start..chunk_end];
            chunk_start = chunk_end;
            let seqs: Vec<SeqInput<'_>> = chunk
                .iter()
                .map(|(i, _, toks, rows)| {
                    let p = prefilled[*i]
                        .as_ref()
                        .map(|p| p.kv.as_slice())
                        .unwrap_or(&[]);
                    SeqInput {
                        prefix: Some(p),
                        prefix_len: prepared[*i].tokens.len(),
                        tokens: toks,
                        logit_rows: rows,
                    }
                })
                .collect();
            match self.model.forward(&seqs) {
                Ok(outs) => {
                    for ((i, k, _, _), out) in chunk.iter().zip(outs) {
                        let o = &options[*i][*k];
                        let lps: Vec<f64> = out
                            .logits
                            .iter()
                            .enumerate()
                            .map(|(j, row)| log_softmax(row)[o[j + 1] as usize])
                            .collect();
                        extra_logprob.insert((*i, *k), lps);
                    }
                }
                Err(e) => {
                    for (i, _, _, _) in chunk {
                        errors[*i] = Some(e.clone());
                    }
                }
            }
        }
        let latency_ms = started.elapsed().as_secs_f64() * 1e3;
        prefilled
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                if let Some(e) = errors[i].take() {
                    return Err(e);
                }
                let p = p?;
                let ls = log_softmax(&p.last_logits);
                let token_logprobs: Vec<Vec<f64>> = options[i]
                    .iter()
                    .enumerate()
                    .map(|(k, o)| {
                        let mut t = vec![ls[o[0] as usize]];
                        t.extend(extra_logprob.get(&(i, k)).into_iter().flatten());
                        t
                    })
                    .collect();
                let logprobs: Vec<f64> = token_logprobs
                    .iter()
                    .map(|t| t[0] + t[1..].iter().sum::<f64>())
                    .collect();
                Ok(ScoreOutput {
                    probabilities: normalize_logprobs(&logprobs),
                    logprobs,
                    token_logprobs,
                    prompt_tokens: prepared[i].tokens.len() as u32,
                    reused_tokens: p.reused as u32,
                    latency_ms,
                })
            })
            .collect()
    }

    /// The jobs run as steps of continuous batching ([`continuous`]) until every one is
    /// answered.
    fn generate(&mut self, jobs: &[GenerateJob]) -> Vec<Result<GenerateOutput, EngineError>> {
        let mut run = continuous::Running::generations(jobs);
        let mut answers: Vec<Option<Result<GenerateOutput, EngineError>>> =
            (0..jobs.len()).map(|_| None).collect();
        while !run.is_empty() {
            for (ticket, answer) in self.generation_step(&mut run) {
                answers[ticket as usize] = Some(answer);
            }
        }
        answers
            .into_iter()
            .map(|a| a.unwrap_or(Err(EngineError::Compute("sequence lost".into()))))
            .collect()
    }

    fn stats(&self) -> EngineStats {
        self.stats
    }

    fn clear_cache(&mut self) {
        self.cache.clear();
    }

    fn continuous(&mut self) -> Option<&mut dyn ContinuousEngine> {
        Some(self)
    }
}
