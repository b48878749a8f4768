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
//!
//! This file holds the model's structure (configuration, weights, keys and values, batch
//! inputs and outputs), its loading and the key/value block helpers; the forward pass itself
//! ([`Transformer::forward`]) and its row-wise steps are in `forward.rs`.

use std::path::{Path, PathBuf};

use candle_core::Device;

use super::bf16::{from_bf16, to_bf16, Bf16Family, Bf16Matrix};
use super::gguf_config::gguf_config;
use super::hf_config;
use super::kernels::KernelFamily;
use super::rope::RopeScaling;
pub use super::weights::interleave_rotary_rows;
use super::weights::{dense, hf_tensor_name, SafetensorsFiles};
pub use c2s_records::WeightDtype;

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

    /// The name GGUF `general.architecture` and Hugging Face `model_type` give it (what
    /// [`Arch::from_name`] reads).
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
    /// The block variant the weights belong to.
    pub arch: Arch,
    /// Decoder blocks, each with its own keys and values.
    pub n_layers: usize,
    /// Width of the residual stream: floats per position of the embedding and of every
    /// block's input and output.
    pub hidden: usize,
    /// Width of the MLP's intermediate: columns of each of the gate and up projections.
    pub ffn: usize,
    /// Query heads per layer.
    pub n_heads: usize,
    /// Key/value heads per layer, each shared by `n_heads / n_kv_heads` query heads
    /// (grouped-query attention); absent from the config: the class default, else `n_heads`.
    pub n_kv_heads: usize,
    /// Width of one attention head (0 in a config being read: hidden / heads).
    pub head_dim: usize,
    /// RoPE's base: before scaling, pair `i` of a head turns `theta^(-2i/head_dim)` radians
    /// per position.
    pub rope_theta: f32,
    /// How RoPE is scaled beyond the pretraining context.
    pub rope_scaling: RopeScaling,
    /// The ε added to the mean square in every RMS norm.
    pub rms_eps: f32,
    /// Tokens of the vocabulary: rows of the embedding, logits per position (0 in a config
    /// being read: the embedding's rows give it at load).
    pub vocab: usize,
    /// Longest sequence, in positions (prefix included), that the forward pass accepts: the
    /// trained context (GGUF `context_length`, `max_position_embeddings`) and the rows of the
    /// RoPE tables.
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

/// A weight of `rows × cols`, used as the right operand `x · W`.
pub(super) enum Matrix {
    /// Row-major f32.
    F32 {
        data: Vec<f32>,
        rows: usize,
        cols: usize,
    },
    /// bf16, packed for the bf16 kernels.
    Bf16(Bf16Matrix),
}

impl Matrix {
    pub(super) fn rows(&self) -> usize {
        match self {
            Matrix::F32 { rows, .. } => *rows,
            Matrix::Bf16(m) => m.rows,
        }
    }

    pub(super) fn cols(&self) -> usize {
        match self {
            Matrix::F32 { cols, .. } => *cols,
            Matrix::Bf16(m) => m.cols,
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Matrix::F32 { data, .. } => data.len() * 4,
            Matrix::Bf16(m) => m.bytes(),
        }
    }
}

/// The token embedding, `(vocab, hidden)` row-major, in the model's dtype.
pub(super) enum Embedding {
    F32(Vec<f32>),
    Bf16(Vec<u16>),
}

impl Embedding {
    /// Row `token` into `out` (`hidden` wide).
    pub(super) fn row_into(&self, token: usize, out: &mut [f32]) {
        let w = out.len();
        match self {
            Embedding::F32(e) => out.copy_from_slice(&e[token * w..(token + 1) * w]),
            Embedding::Bf16(e) => {
                for (o, &b) in out.iter_mut().zip(&e[token * w..(token + 1) * w]) {
                    *o = from_bf16(b);
                }
            }
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Embedding::F32(e) => e.len() * 4,
            Embedding::Bf16(e) => e.len() * 2,
        }
    }
}

pub(super) struct Layer {
    pub(super) attn_norm: Vec<f32>,
    /// Fused [wq; wk; wv]ᵀ: (hidden, q + 2·kv).
    pub(super) wqkv: Matrix,
    /// Qwen2: the query, key and value biases, fused (q + 2·kv).
    pub(super) qkv_bias: Option<Vec<f32>>,
    /// Qwen3: RMS-norm weights applied to each query head and each key head (head_dim).
    pub(super) q_norm: Option<Vec<f32>>,
    pub(super) k_norm: Option<Vec<f32>>,
    /// woᵀ: (hidden, hidden).
    pub(super) wo: Matrix,
    pub(super) ffn_norm: Vec<f32>,
    /// Fused [gate; up]ᵀ: (hidden, 2·ffn), its columns in `gate_up`'s order.
    pub(super) wgu: Matrix,
    /// The order of `wgu`'s output columns.
    pub(super) gate_up: GateUp,
    /// downᵀ: (ffn, hidden).
    pub(super) wdown: Matrix,
}

/// The order of the fused gate and up projections' output columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum GateUp {
    /// All `ffn` gate columns, then all `ffn` up columns.
    Stacked,
    /// Sixteen gate columns, then the same sixteen up columns, and so on (the bf16 mode, when
    /// `ffn` is a multiple of 32): each 32-column panel of the product holds both halves of
    /// sixteen SiLU(gate) · up values, so the AMX product computes them as it stores its
    /// block, and the f32 gate and up rows are never written out.
    Interleaved,
}

impl GateUp {
    /// Output column of gate column `j` (`up`: of up column `j`) among `2·ffn`.
    pub(super) fn column(self, ffn: usize, j: usize, up: bool) -> usize {
        match self {
            GateUp::Stacked => j + if up { ffn } else { 0 },
            GateUp::Interleaved => j / 16 * 32 + j % 16 + if up { 16 } else { 0 },
        }
    }
}

/// The model: weights (f32, or bf16 in the bf16 mode), RoPE tables.
pub struct Transformer {
    /// The hyper-parameters, with `head_dim` and `vocab` filled in at load.
    pub config: TransformerConfig,
    /// (vocab, hidden).
    pub(super) embed: Embedding,
    /// Output head transposed: (hidden, vocab) (the embedding when tied).
    pub(super) head: Matrix,
    pub(super) output_norm: Vec<f32>,
    pub(super) layers: Vec<Layer>,
    /// (context, head_dim / 2) each.
    pub(super) cos: Vec<f32>,
    pub(super) sin: Vec<f32>,
    /// The gemm kernel family of every f32 product ([`KernelFamily::from_env`] at load).
    pub(super) kernels: KernelFamily,
    /// The bf16 kernel family of the bf16 mode's products ([`Bf16Family::from_env`] at load).
    pub(super) bf16_kernels: Bf16Family,
}

/// Keys and values of one sequence at one layer, position-major: `(positions, kv_width)`.
#[derive(Clone, Debug, Default)]
pub struct LayerKv {
    /// Keys as attention reads them (bias, Qwen3's head norm and RoPE at their position
    /// applied), `(positions, kv_width)` row-major, heads side by side within a position.
    pub k: Vec<f32>,
    /// Values (bias applied), in the same `(positions, kv_width)` layout as `k`.
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

    /// The model at `path` with f32 weights.
    pub fn load(path: &Path) -> Result<Transformer, EngineError> {
        Self::load_as(path, WeightDtype::F32)
    }

    /// The model at `path` with its linear weights held as `dtype`.
    pub fn load_as(path: &Path, dtype: WeightDtype) -> Result<Transformer, EngineError> {
        if path.is_dir() {
            return Self::load_hf_dir(path, dtype);
        }
        let mut file = std::fs::File::open(path).map_err(|e| EngineError::model_file(path, e))?;
        let ct = crate::model_files::read_gguf(&mut file, path)?;
        let config = gguf_config(&ct, path)?;
        let tied = !ct.tensor_infos.contains_key("output.weight");
        let names: std::collections::HashSet<String> = ct.tensor_infos.keys().cloned().collect();
        let device = Device::Cpu;
        Self::build(
            config,
            dtype,
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
    fn load_hf_dir(dir: &Path, dtype: WeightDtype) -> Result<Transformer, EngineError> {
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
        let tensors = SafetensorsFiles::open(&shards)?;
        let (n_heads, n_kv_heads) = (config.n_heads, config.n_kv_heads);
        let has_head = tensors.contains("lm_head.weight");
        if !tie_word_embeddings && !has_head {
            return Err(EngineError::model_file(
                dir,
                "`tie_word_embeddings` is false but the safetensors files hold no \
                 `lm_head.weight` (transformers would fill it with random values)",
            ));
        }
        let tied = tie_word_embeddings;
        let as_stored = arch.rope_style() == RopeStyle::Halves;
        let present = |name: &str| tensors.contains(&hf_tensor_name(name));
        Self::build(config, dtype, tied, dir, present, |name| {
            let hf_name = hf_tensor_name(name);
            let (data, rows, cols) = tensors.get(&hf_name).map_err(|e| match e {
                EngineError::Model(why) => EngineError::model_file(dir, why),
                other => other,
            })?;
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
        dtype: WeightDtype,
        tied: bool,
        path: &Path,
        present: impl Fn(&str) -> bool,
        mut get: impl FnMut(&str) -> Result<(Vec<f32>, usize, usize), EngineError>,
    ) -> Result<Transformer, EngineError> {
        super::forward::keep_freed_memory();
        let kernels = KernelFamily::from_env()?;
        // Only a bf16 model times (or reads from the environment) its bf16 kernels.
        let bf16_kernels = match dtype {
            WeightDtype::Bf16 => Bf16Family::from_env()?,
            WeightDtype::F32 => Bf16Family::Portable,
        };
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
        // Stack weights (each (out_i, in)) and transpose to (in, Σ out_i) for `x · W`: in f32
        // row-major, or packed in bf16 straight from the parts' rows.
        // The bf16 mode's gate and up columns interleave (`GateUp::Interleaved`).
        let gate_up = match dtype {
            WeightDtype::Bf16 if ffn.is_multiple_of(32) => GateUp::Interleaved,
            _ => GateUp::Stacked,
        };
        let stacked_in =
            |parts: Vec<(Vec<f32>, usize, usize)>, order: GateUp| -> Result<Matrix, EngineError> {
                let cols_in = parts.first().map(|p| p.2).unwrap_or(0);
                let rows_out: usize = parts.iter().map(|p| p.1).sum();
                if parts.iter().any(|(_, _, c)| *c != cols_in) {
                    return Err(EngineError::Model("fused weights disagree in width".into()));
                }
                if dtype == WeightDtype::Bf16 {
                    // Output j is row (j - base) of the part that holds it; interleaved, gate row
                    // and up row j are the outputs `order.column` names.
                    let mut owner = Vec::with_capacity(rows_out);
                    for (p, (_, r, _)) in parts.iter().enumerate() {
                        owner.extend((0..*r).map(|i| (p, i)));
                    }
                    if order == GateUp::Interleaved && parts.len() == 2 {
                        let ffn = parts[0].1;
                        for j in 0..ffn {
                            owner[order.column(ffn, j, false)] = (0, j);
                            owner[order.column(ffn, j, true)] = (1, j);
                        }
                    }
                    return Ok(Matrix::Bf16(Bf16Matrix::from_columns(
                        cols_in,
                        rows_out,
                        |j| {
                            let (p, i) = owner[j];
                            &parts[p].0[i * cols_in..(i + 1) * cols_in]
                        },
                    )));
                }
                let mut data = vec![0f32; cols_in * rows_out];
                let mut base = 0;
                for (w, r, c) in &parts {
                    for i in 0..*r {
                        for j in 0..*c {
                            data[j * rows_out + base + i] = w[i * c + j];
                        }
                    }
                    base += r;
                }
                Ok(Matrix::F32 {
                    data,
                    rows: cols_in,
                    cols: rows_out,
                })
            };
        let stacked_t = |parts| stacked_in(parts, GateUp::Stacked);
        let (embed, vocab, embed_width) = get("token_embd.weight")?;
        if embed_width != hidden {
            return Err(EngineError::Model(format!(
                "token embedding width {embed_width} differs from the hidden size {hidden}"
            )));
        }
        let embed_bf16 = |e: &[f32]| Embedding::Bf16(e.iter().map(|&v| to_bf16(v)).collect());
        // Tied embeddings when there is no separate output matrix.
        let (head, embed) = if tied {
            let store = match dtype {
                WeightDtype::F32 => Embedding::F32(embed.clone()),
                WeightDtype::Bf16 => embed_bf16(&embed),
            };
            (stacked_t(vec![(embed, vocab, hidden)])?, store)
        } else {
            let store = match dtype {
                WeightDtype::F32 => Embedding::F32(embed),
                WeightDtype::Bf16 => {
                    let store = embed_bf16(&embed);
                    // The f32 table goes before the head is read: one f32 tensor at a time.
                    drop(embed);
                    store
                }
            };
            (stacked_t(vec![get("output.weight")?])?, store)
        };
        if head.rows() != hidden || head.cols() != vocab {
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
            let (gate, up) = (get(&p("ffn_gate"))?, get(&p("ffn_up"))?);
            if gate.1 != ffn || up.1 != ffn {
                return Err(EngineError::Model(format!(
                    "{}: layer {i} weights do not match the configured shapes",
                    path.display()
                )));
            }
            let wgu = stacked_in(vec![gate, up], gate_up)?;
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
                gate_up,
                wdown: stacked_t(vec![get(&p("ffn_down"))?])?,
            };
            let q_width = n_heads * head_dim;
            let kv_width = n_kv_heads * head_dim;
            if layer.wqkv.rows() != hidden
                || layer.wqkv.cols() != q_width + 2 * kv_width
                || layer.wo.rows() != q_width
                || layer.wo.cols() != hidden
                || layer.wgu.rows() != hidden
                || layer.wgu.cols() != 2 * ffn
                || layer.wdown.rows() != ffn
                || layer.wdown.cols() != hidden
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
            bf16_kernels,
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

    /// The bf16 kernel family of the bf16 mode's products.
    pub fn bf16_kernels(&self) -> Bf16Family {
        self.bf16_kernels
    }

    /// Run the bf16 products on `family` (the agreement tests run every family the CPU has).
    pub fn set_bf16_kernels(&mut self, family: Bf16Family) -> Result<(), EngineError> {
        if !family.is_available() {
            return Err(EngineError::Model(format!(
                "this CPU cannot run the {} bf16 kernels",
                family.name()
            )));
        }
        self.bf16_kernels = family;
        Ok(())
    }

    /// Whether the linear weights are held in bf16 (the bf16 mode).
    pub(super) fn is_bf16(&self) -> bool {
        self.layers
            .first()
            .is_some_and(|l| matches!(l.wqkv, Matrix::Bf16(_)))
    }

    /// Bytes of the weights (embedding, output head, every layer's matrices and norms).
    pub fn weight_bytes(&self) -> usize {
        let vec = |v: &Option<Vec<f32>>| v.as_ref().map_or(0, |v| v.len() * 4);
        self.embed.bytes()
            + self.head.bytes()
            + self.output_norm.len() * 4
            + self
                .layers
                .iter()
                .map(|l| {
                    l.wqkv.bytes()
                        + l.wo.bytes()
                        + l.wgu.bytes()
                        + l.wdown.bytes()
                        + (l.attn_norm.len() + l.ffn_norm.len()) * 4
                        + vec(&l.qkv_bias)
                        + vec(&l.q_norm)
                        + vec(&l.k_norm)
                })
                .sum::<usize>()
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
