//! A decoder-only transformer forward pass over GGUF (or Hugging Face) weights on the CPU, for
//! the `llama`, `qwen2` and `qwen3` architectures, built for ragged batches:
//! the rows of many sequences (each continuing its own cached prefix) go through the linear
//! layers as one matrix, and attention runs per sequence and head over its own keys and values.
//!
//! Why our own forward: candle 0.10's Q4_1 kernel is a scalar loop, its element-wise CPU ops run
//! on one thread, and mistral.rs batches only equal-length prompts with no usable prefix reuse on
//! CPU. Weights are dequantized to f32 at load (exact: the same values the quantized kernels
//! use); every matrix product goes straight to the `gemm` crate's kernels (the ones candle
//! calls; AVX2/FMA or AVX-512, chosen at run time: `kernels.rs`), and every element-wise step
//! (norms, RoPE, softmax, SiLU) runs in parallel over rows with rayon, so neither core waits on
//! the other.
//!
//! Keys and values are stored position-major, `(positions, kv_heads · head_dim)`, so a prefix
//! plus new rows is one append and a cached block is one contiguous slice.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::Device;
use gemm::Parallelism;
use rayon::prelude::*;

use super::gguf_config::gguf_config;
use super::hf_config;
use super::kernels::{gemm_into, parallel, KernelFamily, View};
use super::rope::RopeScaling;
pub use super::weights::interleave_rotary_rows;
use super::weights::{dense, hf_tensor_name};
use crate::error::EngineError;

/// The architectures this forward runs. They share the llama block (RMS norm, RoPE,
/// grouped-query attention, SiLU-gated MLP) and differ in small parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    /// Llama, SmolLM, Mistral-style dense models.
    Llama,
    /// Qwen2 / Qwen2.5: biases on the query, key and value projections.
    Qwen2,
    /// Qwen3 (dense): RMS norms on each query and key head before RoPE, no biases, and a head
    /// width that need not be hidden / heads.
    Qwen3,
}

impl Arch {
    /// From GGUF `general.architecture` or a Hugging Face `model_type`.
    pub fn from_name(name: &str) -> Option<Arch> {
        match name {
            "llama" => Some(Arch::Llama),
            "qwen2" => Some(Arch::Qwen2),
            "qwen3" => Some(Arch::Qwen3),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Arch::Llama => "llama",
            Arch::Qwen2 => "qwen2",
            Arch::Qwen3 => "qwen3",
        }
    }

    /// How RoPE pairs the dimensions of a head in this format's stored weights: llama.cpp
    /// permutes llama query/key rows at conversion so interleaved pairs rotate (and we permute
    /// Hugging Face llama weights likewise); Qwen weights are stored unpermuted in both
    /// formats and rotate the two halves (`rotate_half`, llama.cpp's NEOX mode).
    pub fn rope_style(self) -> RopeStyle {
        match self {
            Arch::Llama => RopeStyle::Interleaved,
            Arch::Qwen2 | Arch::Qwen3 => RopeStyle::Halves,
        }
    }
}

/// Which dimensions of a head RoPE rotates together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RopeStyle {
    /// Pairs (2i, 2i+1).
    Interleaved,
    /// Pairs (i, i + head_dim/2).
    Halves,
}

/// Hyper-parameters read from the GGUF metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct TransformerConfig {
    pub arch: Arch,
    pub n_layers: usize,
    pub hidden: usize,
    pub ffn: usize,
    pub n_heads: usize,
    pub n_kv_heads: usize,
    /// Width of one attention head (0 in a config being read: hidden / heads).
    pub head_dim: usize,
    pub rope_theta: f32,
    /// How RoPE is scaled beyond the pretraining context.
    pub rope_scaling: RopeScaling,
    pub rms_eps: f32,
    pub vocab: usize,
    pub context: usize,
}

impl TransformerConfig {
    /// Floats of K (or V) per token per layer.
    pub fn kv_width(&self) -> usize {
        self.n_kv_heads * self.head_dim
    }

    /// The head width as the forward pass uses it (`hidden / heads` when not given).
    fn head_width(&self) -> usize {
        match self.head_dim {
            0 => self.hidden / self.n_heads.max(1),
            d => d,
        }
    }

    /// Multiply-add FLOPs (2 per multiply-add) of one prompt token in the linear layers
    /// (fused QKV, output projection, fused gate/up, down), without attention scores and the
    /// output head: the part of prefill that the gemm kernels' peak bounds.
    pub fn linear_flops_per_token(&self) -> f64 {
        let q = self.n_heads * self.head_width();
        let kv = self.n_kv_heads * self.head_width();
        let per_layer = self.hidden * (q + 2 * kv) + q * self.hidden + 3 * self.hidden * self.ffn;
        2.0 * (self.n_layers * per_layer) as f64
    }
}

/// A row-major f32 matrix of `rows × cols`, used as the right operand `x · W`.
struct Matrix {
    data: Vec<f32>,
    rows: usize,
    cols: usize,
}

struct Layer {
    attn_norm: Vec<f32>,
    /// Fused [wq; wk; wv]ᵀ: (hidden, q + 2·kv).
    wqkv: Matrix,
    /// Qwen2: the query, key and value biases, fused (q + 2·kv).
    qkv_bias: Option<Vec<f32>>,
    /// Qwen3: RMS-norm weights applied to each query head and each key head (head_dim).
    q_norm: Option<Vec<f32>>,
    k_norm: Option<Vec<f32>>,
    /// woᵀ: (hidden, hidden).
    wo: Matrix,
    ffn_norm: Vec<f32>,
    /// Fused [gate; up]ᵀ: (hidden, 2·ffn).
    wgu: Matrix,
    /// downᵀ: (ffn, hidden).
    wdown: Matrix,
}

/// The model: f32 weights, RoPE tables.
pub struct Transformer {
    pub config: TransformerConfig,
    /// (vocab, hidden).
    embed: Vec<f32>,
    /// Output head transposed: (hidden, vocab) (the embedding when tied).
    head: Matrix,
    output_norm: Vec<f32>,
    layers: Vec<Layer>,
    /// (context, head_dim / 2) each.
    cos: Vec<f32>,
    sin: Vec<f32>,
    /// The gemm kernel family of every product ([`KernelFamily::from_env`] at load).
    kernels: KernelFamily,
}

/// Keys and values of one sequence at one layer, position-major: `(positions, kv_width)`.
#[derive(Clone, Debug, Default)]
pub struct LayerKv {
    pub k: Vec<f32>,
    pub v: Vec<f32>,
}

/// One sequence of a ragged batch: new tokens continuing a cached prefix.
pub struct SeqInput<'a> {
    /// Keys/values of the prefix per layer (None: empty prefix).
    pub prefix: Option<&'a [LayerKv]>,
    /// Number of prefix positions.
    pub prefix_len: usize,
    /// The new tokens (at positions prefix_len..).
    pub tokens: &'a [u32],
    /// Rows (offsets into `tokens`) whose output logits are wanted.
    pub logit_rows: &'a [usize],
}

/// Result of one sequence of a ragged batch.
pub struct SeqOutput {
    /// Keys/values of prefix + new tokens, per layer.
    pub kv: Vec<LayerKv>,
    /// Logits (f32, full vocabulary) of each requested row, in `logit_rows` order.
    pub logits: Vec<Vec<f32>>,
}

/// `out (rows × w.cols) = [out +] x (rows × w.rows) · w`, on every thread.
fn matmul(
    kernels: KernelFamily,
    x: &[f32],
    rows: usize,
    w: &Matrix,
    out: &mut [f32],
    accumulate: bool,
) {
    gemm_into(
        kernels,
        out,
        accumulate,
        View::dense(x, rows, w.rows),
        View::dense(&w.data, w.rows, w.cols),
        1.0,
        parallel(),
    );
}

/// RMS norm of each `width`-wide row of `x` into `out`, in parallel over rows.
fn rms_norm(x: &[f32], weight: &[f32], eps: f32, out: &mut [f32]) {
    let width = weight.len();
    out.par_chunks_mut(width)
        .zip(x.par_chunks(width))
        .for_each(|(o, r)| {
            let ms = r.iter().map(|v| v * v).sum::<f32>() / width as f32;
            let scale = 1.0 / (ms + eps).sqrt();
            for ((o, v), w) in o.iter_mut().zip(r).zip(weight) {
                *o = v * scale * w;
            }
        });
}

/// Rotate the pairs of one head's vector by the angles of its position: interleaved pairs
/// (2i, 2i+1) (llama.cpp's llama layout) or the halves (i, i + d/2) (`rotate_half`).
fn rope(h: &mut [f32], cos: &[f32], sin: &[f32], style: RopeStyle) {
    match style {
        RopeStyle::Interleaved => {
            for (i, pair) in h.chunks_exact_mut(2).enumerate() {
                let (x0, x1) = (pair[0], pair[1]);
                pair[0] = x0 * cos[i] - x1 * sin[i];
                pair[1] = x0 * sin[i] + x1 * cos[i];
            }
        }
        RopeStyle::Halves => {
            let (lo, hi) = h.split_at_mut(h.len() / 2);
            for (i, (x0, x1)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                let (a, b) = (*x0, *x1);
                *x0 = a * cos[i] - b * sin[i];
                *x1 = a * sin[i] + b * cos[i];
            }
        }
    }
}

/// RMS norm of one vector in place (Qwen3's per-head query/key norms).
fn rms_norm_in_place(x: &mut [f32], weight: &[f32], eps: f32) {
    let ms = x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32;
    let scale = 1.0 / (ms + eps).sqrt();
    for (v, w) in x.iter_mut().zip(weight) {
        *v = *v * scale * w;
    }
}

impl Transformer {
    /// Load a model: a GGUF file (architecture `llama`), or a local Hugging Face directory
    /// (`config.json` of a `LlamaForCausalLM`, `*.safetensors`). Every weight becomes f32.
    /// Read a model's configuration (a GGUF's metadata or a Hugging Face `config.json`)
    /// without its weights: what the forward pass cannot honour is refused here, naming the
    /// field (the pipeline checks this before any work).
    pub fn check_config(path: &Path) -> Result<TransformerConfig, EngineError> {
        if path.is_dir() {
            return hf_config::read(path).map(|c| c.config);
        }
        let mut file = std::fs::File::open(path).map_err(|e| EngineError::model_file(path, e))?;
        let ct = crate::model_files::read_gguf(&mut file, path)?;
        gguf_config(&ct, path)
    }

    pub fn load(path: &Path) -> Result<Transformer, EngineError> {
        if path.is_dir() {
            return Self::load_hf_dir(path);
        }
        let mut file = std::fs::File::open(path).map_err(|e| EngineError::model_file(path, e))?;
        let ct = crate::model_files::read_gguf(&mut file, path)?;
        let config = gguf_config(&ct, path)?;
        let tied = !ct.tensor_infos.contains_key("output.weight");
        let names: std::collections::HashSet<String> = ct.tensor_infos.keys().cloned().collect();
        let device = Device::Cpu;
        Self::build(
            config,
            tied,
            path,
            |name| names.contains(name),
            |name| {
                let q = ct
                    .tensor(&mut file, name, &device)
                    .map_err(|e| EngineError::model_file(path, format!("tensor `{name}`: {e}")))?;
                let t = q.dequantize(&device).map_err(|e| {
                    EngineError::model_file(path, format!("tensor `{name}` ({:?}): {e}", q.dtype()))
                })?;
                dense(name, &t)
            },
        )
    }

    /// A Hugging Face directory: `config.json` and the `*.safetensors` weights. Hugging Face
    /// llama checkpoints rotate the two halves of each head (`rotate_half`); llama.cpp's
    /// conversion permutes the query and key rows so that interleaved pairs rotate instead.
    /// The same permutation is applied here to llama weights, so one forward pass serves both
    /// formats (Qwen weights rotate their halves in both formats and are used as stored).
    fn load_hf_dir(dir: &Path) -> Result<Transformer, EngineError> {
        let hf_config::HfModelConfig {
            config,
            tie_word_embeddings,
        } = hf_config::read(dir)?;
        let arch = config.arch;
        let mut shards: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| EngineError::model_file(dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
            .collect();
        shards.sort();
        if shards.is_empty() {
            return Err(EngineError::model_file(
                dir,
                "no *.safetensors weights in the directory",
            ));
        }
        let mut tensors: HashMap<String, candle_core::Tensor> = HashMap::new();
        for shard in &shards {
            let part = candle_core::safetensors::load(shard, &Device::Cpu).map_err(|e| {
                EngineError::model_file(shard, format!("not a readable safetensors file: {e}"))
            })?;
            tensors.extend(part);
        }
        let (n_heads, n_kv_heads) = (config.n_heads, config.n_kv_heads);
        let has_head = tensors.contains_key("lm_head.weight");
        if !tie_word_embeddings && !has_head {
            return Err(EngineError::model_file(
                dir,
                "`tie_word_embeddings` is false but the safetensors files hold no \
                 `lm_head.weight` (transformers would fill it with random values)",
            ));
        }
        let tied = tie_word_embeddings;
        let as_stored = arch.rope_style() == RopeStyle::Halves;
        let present = |name: &str| tensors.contains_key(&hf_tensor_name(name));
        Self::build(config, tied, dir, present, |name| {
            let hf_name = hf_tensor_name(name);
            let t = tensors.get(&hf_name).ok_or_else(|| {
                EngineError::model_file(
                    dir,
                    format!("tensor `{hf_name}` missing from the safetensors files"),
                )
            })?;
            let (data, rows, cols) = dense(&hf_name, t)?;
            if as_stored {
                return Ok((data, rows, cols));
            }
            let heads = if name.ends_with(".attn_q.weight") {
                n_heads
            } else if name.ends_with(".attn_k.weight") {
                n_kv_heads
            } else {
                return Ok((data, rows, cols));
            };
            Ok((interleave_rotary_rows(&data, rows, cols, heads), rows, cols))
        })
    }

    /// Assemble the model from its weights, named as in GGUF files (`blk.{i}.attn_q.weight`, …)
    /// and read by `get` as row-major (rows, cols) f32 matrices. `config` comes without
    /// `head_dim` and `vocab`, which are derived here.
    fn build(
        mut config: TransformerConfig,
        tied: bool,
        path: &Path,
        present: impl Fn(&str) -> bool,
        mut get: impl FnMut(&str) -> Result<(Vec<f32>, usize, usize), EngineError>,
    ) -> Result<Transformer, EngineError> {
        let kernels = KernelFamily::from_env().map_err(EngineError::Model)?;
        let TransformerConfig {
            n_layers,
            hidden,
            ffn,
            n_heads,
            n_kv_heads,
            ..
        } = config;
        let head_dim = match config.head_dim {
            0 if n_heads > 0 => hidden / n_heads,
            d => d,
        };
        if n_heads == 0
            || n_kv_heads == 0
            || !n_heads.is_multiple_of(n_kv_heads)
            || (config.head_dim == 0 && !hidden.is_multiple_of(n_heads))
            || head_dim == 0
            || !head_dim.is_multiple_of(2)
        {
            return Err(EngineError::Model(format!(
                "{}: unsupported head layout ({n_heads} heads, {n_kv_heads} KV heads, head width {head_dim}, hidden {hidden})",
                path.display()
            )));
        }
        // Stack weights (each (out_i, in)) and transpose to (in, Σ out_i) for `x · W`.
        let stacked_t = |parts: Vec<(Vec<f32>, usize, usize)>| -> Result<Matrix, EngineError> {
            let cols_in = parts.first().map(|p| p.2).unwrap_or(0);
            let rows_out: usize = parts.iter().map(|p| p.1).sum();
            let mut data = vec![0f32; cols_in * rows_out];
            let mut base = 0;
            for (w, r, c) in &parts {
                if *c != cols_in {
                    return Err(EngineError::Model("fused weights disagree in width".into()));
                }
                for i in 0..*r {
                    for j in 0..*c {
                        data[j * rows_out + base + i] = w[i * c + j];
                    }
                }
                base += r;
            }
            Ok(Matrix {
                data,
                rows: cols_in,
                cols: rows_out,
            })
        };
        let (embed, vocab, embed_width) = get("token_embd.weight")?;
        if embed_width != hidden {
            return Err(EngineError::Model(format!(
                "token embedding width {embed_width} differs from the hidden size {hidden}"
            )));
        }
        // Tied embeddings when there is no separate output matrix.
        let head = if tied {
            stacked_t(vec![(embed.clone(), vocab, hidden)])?
        } else {
            stacked_t(vec![get("output.weight")?])?
        };
        if head.rows != hidden || head.cols != vocab {
            return Err(EngineError::Model(format!(
                "{}: the output head is not (vocabulary × hidden)",
                path.display()
            )));
        }
        let output_norm = get("output_norm.weight")?.0;
        let mut layers = Vec::with_capacity(n_layers);
        for i in 0..n_layers {
            let p = |n: &str| format!("blk.{i}.{n}.weight");
            let wqkv = stacked_t(vec![
                get(&p("attn_q"))?,
                get(&p("attn_k"))?,
                get(&p("attn_v"))?,
            ])?;
            let wgu = stacked_t(vec![get(&p("ffn_gate"))?, get(&p("ffn_up"))?])?;
            let bias = |n: &str| format!("blk.{i}.{n}.bias");
            // Each architecture's own parts must be there, and no part it does not use.
            let wants_bias = config.arch == Arch::Qwen2;
            let wants_norms = config.arch == Arch::Qwen3;
            let has_bias = present(&bias("attn_q"));
            let has_norms = present(&p("attn_q_norm"));
            if has_bias != wants_bias || has_norms != wants_norms {
                return Err(EngineError::model_file(
                    path,
                    format!(
                        "layer {i}: a {} model {} query/key/value biases and {} per-head \
                         query/key norms, but this file {} biases and {} norms",
                        config.arch.name(),
                        if wants_bias { "has" } else { "has no" },
                        if wants_norms { "has" } else { "has no" },
                        if has_bias { "has" } else { "has no" },
                        if has_norms { "has" } else { "has no" },
                    ),
                ));
            }
            let qkv_bias = if wants_bias {
                let mut b = get(&bias("attn_q"))?.0;
                b.extend(get(&bias("attn_k"))?.0);
                b.extend(get(&bias("attn_v"))?.0);
                Some(b)
            } else {
                None
            };
            let (q_norm, k_norm) = if wants_norms {
                (
                    Some(get(&p("attn_q_norm"))?.0),
                    Some(get(&p("attn_k_norm"))?.0),
                )
            } else {
                (None, None)
            };
            let layer = Layer {
                attn_norm: get(&p("attn_norm"))?.0,
                wqkv,
                qkv_bias,
                q_norm,
                k_norm,
                wo: stacked_t(vec![get(&p("attn_output"))?])?,
                ffn_norm: get(&p("ffn_norm"))?.0,
                wgu,
                wdown: stacked_t(vec![get(&p("ffn_down"))?])?,
            };
            let q_width = n_heads * head_dim;
            let kv_width = n_kv_heads * head_dim;
            if layer.wqkv.rows != hidden
                || layer.wqkv.cols != q_width + 2 * kv_width
                || layer.wo.rows != q_width
                || layer.wo.cols != hidden
                || layer.wgu.rows != hidden
                || layer.wgu.cols != 2 * ffn
                || layer.wdown.rows != ffn
                || layer.wdown.cols != hidden
                || layer.attn_norm.len() != hidden
                || layer.ffn_norm.len() != hidden
                || layer
                    .qkv_bias
                    .as_ref()
                    .is_some_and(|b| b.len() != q_width + 2 * kv_width)
                || [&layer.q_norm, &layer.k_norm]
                    .iter()
                    .any(|n| n.as_ref().is_some_and(|n| n.len() != head_dim))
            {
                return Err(EngineError::Model(format!(
                    "{}: layer {i} weights do not match the configured shapes",
                    path.display()
                )));
            }
            layers.push(layer);
        }
        // RoPE tables: one angle per pair and position. Llama-3.1-style GGUFs carry per-pair
        // frequency divisors (`rope_freqs.weight`), applied as llama.cpp does.
        let half = head_dim / 2;
        let factors = if present("rope_freqs.weight") {
            let (f, _, _) = get("rope_freqs.weight")?;
            if f.len() != half {
                return Err(EngineError::model_file(
                    path,
                    format!("`rope_freqs.weight` has {} entries, not {half}", f.len()),
                ));
            }
            f
        } else {
            vec![1.0; half]
        };
        let (inv, table_scale) = config
            .rope_scaling
            .inverse_frequencies(config.rope_theta, head_dim);
        let inv: Vec<f32> = inv.iter().zip(&factors).map(|(f, d)| f / d).collect();
        let mut cos = Vec::with_capacity(config.context * half);
        let mut sin = Vec::with_capacity(config.context * half);
        for pos in 0..config.context {
            for f in &inv {
                let a = pos as f32 * f;
                cos.push(a.cos() * table_scale);
                sin.push(a.sin() * table_scale);
            }
        }
        config.head_dim = head_dim;
        config.vocab = vocab;
        Ok(Transformer {
            config,
            embed,
            head,
            output_norm,
            layers,
            cos,
            sin,
            kernels,
        })
    }

    /// The gemm kernel family every product runs on.
    pub fn kernels(&self) -> KernelFamily {
        self.kernels
    }

    /// Run every product on `family` from now on (the agreement tests run each family the
    /// machine has); a family this CPU lacks is refused.
    pub fn set_kernels(&mut self, family: KernelFamily) -> Result<(), EngineError> {
        if !family.is_available() {
            return Err(EngineError::Model(format!(
                "this CPU cannot run the {} kernels",
                family.name()
            )));
        }
        self.kernels = family;
        Ok(())
    }

    /// Run a ragged batch. Every sequence continues its own prefix; the linear layers see all
    /// new rows at once.
    pub fn forward(&self, seqs: &[SeqInput<'_>]) -> Result<Vec<SeqOutput>, EngineError> {
        let c = &self.config;
        let kv_width = c.kv_width();
        for s in seqs {
            if s.prefix_len + s.tokens.len() > c.context {
                return Err(EngineError::Model(format!(
                    "sequence of {} tokens exceeds the model context of {}",
                    s.prefix_len + s.tokens.len(),
                    c.context
                )));
            }
            let have = s.prefix.map(|p| p.len()).unwrap_or(0);
            if s.prefix_len > 0 && have != c.n_layers {
                return Err(EngineError::Compute(format!(
                    "prefix of {} positions has {have} layers, the model {}",
                    s.prefix_len, c.n_layers
                )));
            }
            if let Some(p) = s.prefix.filter(|_| s.prefix_len > 0) {
                if p.iter()
                    .any(|l| l.k.len() != s.prefix_len * kv_width || l.v.len() != l.k.len())
                {
                    return Err(EngineError::Compute(format!(
                        "prefix keys/values do not hold {} positions",
                        s.prefix_len
                    )));
                }
            }
            for &r in s.logit_rows {
                if r >= s.tokens.len() {
                    return Err(EngineError::Compute(format!(
                        "logit row {r} outside {} new tokens",
                        s.tokens.len()
                    )));
                }
            }
            if let Some(&t) = s.tokens.iter().find(|&&t| t as usize >= c.vocab) {
                return Err(EngineError::Compute(format!(
                    "token id {t} outside the vocabulary of {}",
                    c.vocab
                )));
            }
        }
        let total: usize = seqs.iter().map(|s| s.tokens.len()).sum();
        let hidden = c.hidden;
        let q_width = c.n_heads * c.head_dim;
        let qkv_width = q_width + 2 * kv_width;
        let half = c.head_dim / 2;
        // Batch row of each sequence's first new token, and each row's position.
        let mut starts = Vec::with_capacity(seqs.len());
        let mut positions = Vec::with_capacity(total);
        for s in seqs {
            starts.push(positions.len());
            positions.extend(s.prefix_len..s.prefix_len + s.tokens.len());
        }
        let mut x = vec![0f32; total * hidden];
        for (row, &t) in x
            .chunks_exact_mut(hidden)
            .zip(seqs.iter().flat_map(|s| s.tokens.iter()))
        {
            let t = t as usize;
            row.copy_from_slice(&self.embed[t * hidden..(t + 1) * hidden]);
        }
        let mut h = vec![0f32; total * hidden];
        let mut qkv = vec![0f32; total * qkv_width];
        let mut attn = vec![0f32; total * q_width];
        let mut gu = vec![0f32; total * 2 * c.ffn];
        let mut act = vec![0f32; total * c.ffn];
        let mut kv_out: Vec<Vec<LayerKv>> = vec![Vec::with_capacity(c.n_layers); seqs.len()];
        let scale = 1.0 / (c.head_dim as f32).sqrt();
        let group = c.n_heads / c.n_kv_heads;
        for (li, layer) in self.layers.iter().enumerate() {
            rms_norm(&x, &layer.attn_norm, c.rms_eps, &mut h);
            matmul(self.kernels, &h, total, &layer.wqkv, &mut qkv, false);
            // Per row: the biases (Qwen2), the per-head query/key norms (Qwen3), then RoPE on
            // the query and key heads at the row's position.
            let style = c.arch.rope_style();
            qkv.par_chunks_mut(qkv_width)
                .zip(positions.par_iter())
                .for_each(|(row, &pos)| {
                    if let Some(b) = &layer.qkv_bias {
                        for (x, b) in row.iter_mut().zip(b) {
                            *x += b;
                        }
                    }
                    let (q, rest) = row.split_at_mut(q_width);
                    let k = &mut rest[..kv_width];
                    if let (Some(qn), Some(kn)) = (&layer.q_norm, &layer.k_norm) {
                        for head in q.chunks_exact_mut(c.head_dim) {
                            rms_norm_in_place(head, qn, c.rms_eps);
                        }
                        for head in k.chunks_exact_mut(c.head_dim) {
                            rms_norm_in_place(head, kn, c.rms_eps);
                        }
                    }
                    let cos = &self.cos[pos * half..(pos + 1) * half];
                    let sin = &self.sin[pos * half..(pos + 1) * half];
                    for head in q.chunks_exact_mut(c.head_dim) {
                        rope(head, cos, sin, style);
                    }
                    for head in k.chunks_exact_mut(c.head_dim) {
                        rope(head, cos, sin, style);
                    }
                });
            // Each sequence's keys and values: its prefix, then its new rows.
            let layer_kv: Vec<LayerKv> = seqs
                .par_iter()
                .zip(starts.par_iter())
                .map(|(s, &start)| {
                    let n = s.tokens.len();
                    let prefix = s.prefix.filter(|_| s.prefix_len > 0).map(|p| &p[li]);
                    let cap = (s.prefix_len + n) * kv_width;
                    let mut k = Vec::with_capacity(cap);
                    let mut v = Vec::with_capacity(cap);
                    if let Some(p) = prefix {
                        k.extend_from_slice(&p.k);
                        v.extend_from_slice(&p.v);
                    }
                    for row in
                        qkv[start * qkv_width..(start + n) * qkv_width].chunks_exact(qkv_width)
                    {
                        k.extend_from_slice(&row[q_width..q_width + kv_width]);
                        v.extend_from_slice(&row[q_width + kv_width..]);
                    }
                    LayerKv { k, v }
                })
                .collect();
            // Attention per (sequence, query head), in parallel: scores = q·Kᵀ, causal softmax,
            // output = P·V, written to the head's columns of the sequence's rows.
            let tasks: Vec<(usize, usize)> = (0..seqs.len())
                .flat_map(|si| (0..c.n_heads).map(move |hq| (si, hq)))
                .filter(|&(si, _)| !seqs[si].tokens.is_empty())
                .collect();
            let head_outputs: Vec<Vec<f32>> = tasks
                .par_iter()
                .map(|&(si, hq)| {
                    let s = &seqs[si];
                    self.attend_head(
                        &qkv[starts[si] * qkv_width..],
                        qkv_width,
                        &layer_kv[si],
                        s.prefix_len,
                        s.tokens.len(),
                        hq,
                        hq / group,
                        scale,
                    )
                })
                .collect();
            for (&(si, hq), out) in tasks.iter().zip(&head_outputs) {
                let d = c.head_dim;
                for (i, o) in out.chunks_exact(d).enumerate() {
                    let row = starts[si] + i;
                    attn[row * q_width + hq * d..row * q_width + (hq + 1) * d].copy_from_slice(o);
                }
            }
            for (si, kv) in layer_kv.into_iter().enumerate() {
                kv_out[si].push(kv);
            }
            // Residual connections are fused into the products (out += …).
            matmul(self.kernels, &attn, total, &layer.wo, &mut x, true);
            rms_norm(&x, &layer.ffn_norm, c.rms_eps, &mut h);
            matmul(self.kernels, &h, total, &layer.wgu, &mut gu, false);
            let ffn = c.ffn;
            act.par_chunks_mut(ffn)
                .zip(gu.par_chunks(2 * ffn))
                .for_each(|(a, g)| {
                    for ((a, &gate), &up) in a.iter_mut().zip(&g[..ffn]).zip(&g[ffn..]) {
                        *a = gate / (1.0 + (-gate).exp()) * up;
                    }
                });
            matmul(self.kernels, &act, total, &layer.wdown, &mut x, true);
        }
        // Output head only for the requested rows.
        let mut wanted = Vec::new();
        for (s, &start) in seqs.iter().zip(&starts) {
            wanted.extend(s.logit_rows.iter().map(|&r| start + r));
        }
        let mut logits_rows: Vec<Vec<f32>> = Vec::new();
        if !wanted.is_empty() {
            let n = wanted.len();
            let mut sel = vec![0f32; n * hidden];
            for (dst, &r) in sel.chunks_exact_mut(hidden).zip(&wanted) {
                dst.copy_from_slice(&x[r * hidden..(r + 1) * hidden]);
            }
            let mut normed = vec![0f32; n * hidden];
            rms_norm(&sel, &self.output_norm, c.rms_eps, &mut normed);
            let mut logits = vec![0f32; n * c.vocab];
            matmul(self.kernels, &normed, n, &self.head, &mut logits, false);
            logits_rows = logits.chunks_exact(c.vocab).map(<[f32]>::to_vec).collect();
        }
        let mut outputs = Vec::with_capacity(seqs.len());
        let mut rows = logits_rows.into_iter();
        for (s, kv) in seqs.iter().zip(kv_out) {
            let kv = if s.tokens.is_empty() {
                s.prefix
                    .filter(|_| s.prefix_len > 0)
                    .map(<[LayerKv]>::to_vec)
                    .unwrap_or_default()
            } else {
                kv
            };
            let logits = (0..s.logit_rows.len())
                .filter_map(|_| rows.next())
                .collect();
            outputs.push(SeqOutput { kv, logits });
        }
        Ok(outputs)
    }

    /// Attention of one query head over one sequence: `q` starts at the sequence's first new
    /// row (row stride `q_stride`), `kv` holds `prefix_len + n` positions. Returns the head's
    /// output, `(n, head_dim)` row-major.
    #[allow(clippy::too_many_arguments)]
    fn attend_head(
        &self,
        q: &[f32],
        q_stride: usize,
        kv: &LayerKv,
        prefix_len: usize,
        n: usize,
        hq: usize,
        g: usize,
        scale: f32,
    ) -> Vec<f32> {
        let c = &self.config;
        let d = c.head_dim;
        let kv_width = c.kv_width();
        let t = prefix_len + n;
        assert!(
            kv.k.len() == t * kv_width && kv.v.len() == t * kv_width,
            "attention: keys and values of {t} positions"
        );
        // This head's columns: queries of the new rows, keys and values of every position.
        let queries = View {
            data: q,
            offset: hq * d,
            rows: n,
            cols: d,
            row_stride: q_stride,
            col_stride: 1,
        };
        let keys = View {
            data: &kv.k,
            offset: g * d,
            rows: t,
            cols: d,
            row_stride: kv_width,
            col_stride: 1,
        };
        let values = View {
            data: &kv.v,
            ..keys
        };
        let mut scores = vec![0f32; n * t];
        gemm_into(
            self.kernels,
            &mut scores,
            false,
            queries,
            keys.t(),
            scale,
            Parallelism::None,
        );
        // Causal softmax: row i (position prefix_len + i) sees positions 0..=prefix_len + i.
        for (i, row) in scores.chunks_exact_mut(t).enumerate() {
            let visible = prefix_len + i + 1;
            let (seen, masked) = row.split_at_mut(visible);
            let max = seen.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            let mut sum = 0f32;
            for v in seen.iter_mut() {
                *v = (*v - max).exp();
                sum += *v;
            }
            let inv = 1.0 / sum;
            for v in seen.iter_mut() {
                *v *= inv;
            }
            masked.fill(0.0);
        }
        let mut out = vec![0f32; n * d];
        gemm_into(
            self.kernels,
            &mut out,
            false,
            View::dense(&scores, n, t),
            values,
            1.0,
            Parallelism::None,
        );
        out
    }

    /// Keys/values of positions `start..start+len` of a sequence's KV (`kv_width` floats per
    /// position), copied compactly.
    pub fn slice_kv(
        kv: &[LayerKv],
        start: usize,
        len: usize,
        kv_width: usize,
    ) -> Result<Vec<LayerKv>, EngineError> {
        let w = kv_width;
        kv.iter()
            .map(|l| {
                let (a, b) = (start * w, (start + len) * w);
                if b > l.k.len() || b > l.v.len() {
                    return Err(EngineError::Compute(format!(
                        "keys/values of positions {start}..{} requested from {} positions",
                        start + len,
                        l.k.len() / w.max(1)
                    )));
                }
                Ok(LayerKv {
                    k: l.k[a..b].to_vec(),
                    v: l.v[a..b].to_vec(),
                })
            })
            .collect()
    }

    /// Concatenate per-layer KV blocks along positions.
    pub fn concat_kv(blocks: &[&[LayerKv]]) -> Result<Vec<LayerKv>, EngineError> {
        let Some(first) = blocks.first() else {
            return Ok(vec![]);
        };
        if blocks.iter().any(|b| b.len() != first.len()) {
            return Err(EngineError::Compute(
                "cached blocks disagree in layer count".into(),
            ));
        }
        Ok((0..first.len())
            .map(|li| {
                let n: usize = blocks.iter().map(|b| b[li].k.len()).sum();
                let mut k = Vec::with_capacity(n);
                let mut v = Vec::with_capacity(n);
                for b in blocks {
                    k.extend_from_slice(&b[li].k);
                    v.extend_from_slice(&b[li].v);
                }
                LayerKv { k, v }
            })
            .collect())
    }
}
