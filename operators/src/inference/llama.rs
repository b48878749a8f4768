//! A llama-architecture forward pass over GGUF weights with candle, built for ragged batches:
//! the rows of many sequences (each continuing its own cached prefix) go through the linear
//! layers as one matrix, and attention runs per sequence over its own keys and values.
//!
//! Why our own forward: candle 0.10's Q4_1 kernel is a scalar loop and mistral.rs batches only
//! equal-length prompts with no usable prefix reuse on CPU. Weights are dequantized to f32 at
//! load (exact: the same values the quantized kernels use), so prefill runs on the `gemm`
//! crate's AVX2/FMA kernels.

use std::path::Path;

use candle_core::quantized::gguf_file;
use candle_core::{DType, Device, Tensor};
use rayon::prelude::*;

use super::error::EngineError;

/// Hyper-parameters read from the GGUF metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct LlamaConfig {
    pub n_layers: usize,
    pub hidden: usize,
    pub ffn: usize,
    pub n_heads: usize,
    pub n_kv_heads: usize,
    pub head_dim: usize,
    pub rope_theta: f32,
    pub rms_eps: f32,
    pub vocab: usize,
    pub context: usize,
}

impl LlamaConfig {
    /// Floats of K (or V) per token per layer.
    pub fn kv_width(&self) -> usize {
        self.n_kv_heads * self.head_dim
    }
}

struct Layer {
    attn_norm: Tensor,
    /// Fused [wq; wk; wv]ᵀ: (hidden, q + 2·kv).
    wqkv_t: Tensor,
    /// woᵀ: (hidden, hidden).
    wo_t: Tensor,
    ffn_norm: Tensor,
    /// Fused [gate; up]ᵀ: (hidden, 2·ffn).
    wgu_t: Tensor,
    /// downᵀ: (ffn, hidden).
    wdown_t: Tensor,
}

/// The model: f32 weights, RoPE tables.
pub struct LlamaModel {
    pub config: LlamaConfig,
    embed: Tensor,
    /// embedᵀ for the tied output head: (hidden, vocab).
    head_t: Tensor,
    output_norm: Tensor,
    layers: Vec<Layer>,
    cos: Tensor,
    sin: Tensor,
    device: Device,
}

/// Per layer: keys and values of one sequence, each (n_kv_heads, T, head_dim).
#[derive(Clone)]
pub struct LayerKv {
    pub k: Tensor,
    pub v: Tensor,
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

fn meta_u32(ct: &gguf_file::Content, key: &str) -> Result<u32, EngineError> {
    ct.metadata
        .get(key)
        .ok_or_else(|| EngineError::Model(format!("GGUF metadata `{key}` missing")))?
        .to_u32()
        .map_err(|e| EngineError::Model(format!("GGUF metadata `{key}`: {e}")))
}

fn meta_f32(ct: &gguf_file::Content, key: &str, default: f32) -> f32 {
    ct.metadata
        .get(key)
        .and_then(|v| v.to_f32().ok())
        .unwrap_or(default)
}

/// The device of the model: the first CUDA GPU in a `cuda` build, else the CPU.
fn model_device() -> Result<Device, EngineError> {
    if cfg!(feature = "cuda") {
        Device::new_cuda(0).map_err(|e| EngineError::Model(format!("no CUDA device: {e}")))
    } else {
        Ok(Device::Cpu)
    }
}

fn cerr(e: candle_core::Error) -> EngineError {
    EngineError::Compute(e.to_string())
}

impl LlamaModel {
    /// Load a GGUF file (architecture `llama`), dequantizing every weight to f32.
    pub fn load(path: &Path) -> Result<LlamaModel, EngineError> {
        let mut file = std::fs::File::open(path).map_err(|e| EngineError::ModelFile {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let ct = gguf_file::Content::read(&mut file).map_err(|e| EngineError::ModelFile {
            path: path.to_path_buf(),
            reason: format!("not a readable GGUF file: {e}"),
        })?;
        Self::from_content(&ct, &mut file, path)
    }

    fn from_content(
        ct: &gguf_file::Content,
        file: &mut std::fs::File,
        path: &Path,
    ) -> Result<LlamaModel, EngineError> {
        let arch = ct
            .metadata
            .get("general.architecture")
            .and_then(|v| v.to_string().ok())
            .cloned()
            .unwrap_or_default();
        if arch != "llama" {
            return Err(EngineError::Model(format!(
                "{}: architecture `{arch}` is not supported (expected llama)",
                path.display()
            )));
        }
        let n_layers = meta_u32(ct, "llama.block_count")? as usize;
        let hidden = meta_u32(ct, "llama.embedding_length")? as usize;
        let ffn = meta_u32(ct, "llama.feed_forward_length")? as usize;
        let n_heads = meta_u32(ct, "llama.attention.head_count")? as usize;
        let n_kv_heads = meta_u32(ct, "llama.attention.head_count_kv")
            .map(|v| v as usize)
            .unwrap_or(n_heads);
        let head_dim = hidden / n_heads;
        let context = meta_u32(ct, "llama.context_length").unwrap_or(8192) as usize;
        let rope_theta = meta_f32(ct, "llama.rope.freq_base", 10000.0);
        let rms_eps = meta_f32(ct, "llama.attention.layer_norm_rms_epsilon", 1e-5);
        let device = model_device()?;
        let mut get = |name: &str| -> Result<Tensor, EngineError> {
            let q = ct
                .tensor(file, name, &device)
                .map_err(|e| EngineError::ModelFile {
                    path: path.to_path_buf(),
                    reason: format!("tensor `{name}`: {e}"),
                })?;
            q.dequantize(&device)
                .and_then(|t| t.to_dtype(DType::F32))
                .map_err(cerr)
        };
        let embed = get("token_embd.weight")?;
        let vocab = embed.dim(0).map_err(cerr)?;
        // Tied embeddings when there is no separate output matrix.
        let head = if ct.tensor_infos.contains_key("output.weight") {
            get("output.weight")?
        } else {
            embed.clone()
        };
        let head_t = head.t().and_then(|t| t.contiguous()).map_err(cerr)?;
        let output_norm = get("output_norm.weight")?;
        let mut layers = Vec::with_capacity(n_layers);
        for i in 0..n_layers {
            let p = |n: &str| format!("blk.{i}.{n}.weight");
            let wq = get(&p("attn_q"))?;
            let wk = get(&p("attn_k"))?;
            let wv = get(&p("attn_v"))?;
            let wqkv_t = Tensor::cat(&[&wq, &wk, &wv], 0)
                .and_then(|t| t.t())
                .and_then(|t| t.contiguous())
                .map_err(cerr)?;
            let wgu_t = Tensor::cat(&[&get(&p("ffn_gate"))?, &get(&p("ffn_up"))?], 0)
                .and_then(|t| t.t())
                .and_then(|t| t.contiguous())
                .map_err(cerr)?;
            let t = |w: Tensor| w.t().and_then(|t| t.contiguous()).map_err(cerr);
            layers.push(Layer {
                attn_norm: get(&p("attn_norm"))?,
                wqkv_t,
                wo_t: t(get(&p("attn_output"))?)?,
                ffn_norm: get(&p("ffn_norm"))?,
                wgu_t,
                wdown_t: t(get(&p("ffn_down"))?)?,
            });
        }
        // RoPE tables (interleaved pairs, as llama.cpp's GGUF conversion expects).
        let half = head_dim / 2;
        let inv: Vec<f32> = (0..half)
            .map(|i| 1.0 / rope_theta.powf(2.0 * i as f32 / head_dim as f32))
            .collect();
        let mut cos = Vec::with_capacity(context * half);
        let mut sin = Vec::with_capacity(context * half);
        for pos in 0..context {
            for f in &inv {
                let a = pos as f32 * f;
                cos.push(a.cos());
                sin.push(a.sin());
            }
        }
        let cos = Tensor::from_vec(cos, (context, half), &device).map_err(cerr)?;
        let sin = Tensor::from_vec(sin, (context, half), &device).map_err(cerr)?;
        Ok(LlamaModel {
            config: LlamaConfig {
                n_layers,
                hidden,
                ffn,
                n_heads,
                n_kv_heads,
                head_dim,
                rope_theta,
                rms_eps,
                vocab,
                context,
            },
            embed,
            head_t,
            output_norm,
            layers,
            cos,
            sin,
            device,
        })
    }

    /// Run a ragged batch. Every sequence continues its own prefix; the linear layers see all
    /// new rows at once.
    pub fn forward(&self, seqs: &[SeqInput<'_>]) -> Result<Vec<SeqOutput>, EngineError> {
        let c = &self.config;
        let total: usize = seqs.iter().map(|s| s.tokens.len()).sum();
        if total == 0 {
            return Ok(seqs
                .iter()
                .map(|s| SeqOutput {
                    kv: s.prefix.map(|p| p.to_vec()).unwrap_or_default(),
                    logits: vec![],
                })
                .collect());
        }
        for s in seqs {
            if s.prefix_len + s.tokens.len() > c.context {
                return Err(EngineError::Model(format!(
                    "sequence of {} tokens exceeds the model context of {}",
                    s.prefix_len + s.tokens.len(),
                    c.context
                )));
            }
        }
        let ids: Vec<u32> = seqs.iter().flat_map(|s| s.tokens.iter().copied()).collect();
        let positions: Vec<u32> = seqs
            .iter()
            .flat_map(|s| (s.prefix_len..s.prefix_len + s.tokens.len()).map(|p| p as u32))
            .collect();
        let dev = &self.device;
        let ids_t = Tensor::from_vec(ids, total, dev).map_err(cerr)?;
        let pos_t = Tensor::from_vec(positions, total, dev).map_err(cerr)?;
        let cos = self.cos.index_select(&pos_t, 0).map_err(cerr)?;
        let sin = self.sin.index_select(&pos_t, 0).map_err(cerr)?;
        let mut x = self.embed.index_select(&ids_t, 0).map_err(cerr)?;
        let q_width = c.n_heads * c.head_dim;
        let kv_width = c.kv_width();
        let mut kv_out: Vec<Vec<LayerKv>> = vec![Vec::with_capacity(c.n_layers); seqs.len()];
        let masks: Vec<Tensor> = seqs
            .iter()
            .map(|s| {
                if s.tokens.len() > 1 {
                    self.causal_mask(s.prefix_len, s.tokens.len())
                } else {
                    Tensor::zeros(1, DType::F32, &self.device).map_err(cerr)
                }
            })
            .collect::<Result<_, _>>()?;
        let scale = 1.0 / (c.head_dim as f64).sqrt();
        for (li, layer) in self.layers.iter().enumerate() {
            let h = candle_nn::ops::rms_norm(&x, &layer.attn_norm, c.rms_eps).map_err(cerr)?;
            let qkv = h.matmul(&layer.wqkv_t).map_err(cerr)?;
            let q = qkv.narrow(1, 0, q_width).map_err(cerr)?;
            let k = qkv.narrow(1, q_width, kv_width).map_err(cerr)?;
            let v = qkv.narrow(1, q_width + kv_width, kv_width).map_err(cerr)?;
            // (rows, heads·d) → (1, heads, rows, d) for rope_i with per-row positions.
            let to_heads = |t: &Tensor, heads: usize| -> Result<Tensor, EngineError> {
                t.reshape((total, heads, c.head_dim))
                    .and_then(|t| t.transpose(0, 1))
                    .and_then(|t| t.contiguous())
                    .and_then(|t| t.unsqueeze(0))
                    .map_err(cerr)
            };
            let q = candle_nn::rotary_emb::rope_i(&to_heads(&q, c.n_heads)?, &cos, &sin)
                .and_then(|t| t.squeeze(0))
                .map_err(cerr)?;
            let k = candle_nn::rotary_emb::rope_i(&to_heads(&k, c.n_kv_heads)?, &cos, &sin)
                .and_then(|t| t.squeeze(0))
                .map_err(cerr)?;
            let v = to_heads(&v, c.n_kv_heads)?.squeeze(0).map_err(cerr)?;
            // Attention per sequence over its prefix and its new rows; sequences are
            // independent, so they run in parallel (each one's small matmuls would leave a core
            // idle).
            let mut starts = Vec::with_capacity(seqs.len());
            let mut row = 0;
            for s in seqs {
                starts.push(row);
                row += s.tokens.len();
            }
            let per_seq: Vec<Result<(Tensor, LayerKv), EngineError>> = seqs
                .par_iter()
                .zip(starts.par_iter())
                .zip(masks.par_iter())
                .map(|((s, &row), mask)| self.attend(li, s, row, &q, &k, &v, mask, scale))
                .collect();
            let mut outs = Vec::with_capacity(seqs.len());
            for (si, r) in per_seq.into_iter().enumerate() {
                let (o, kv) = r?;
                outs.push(o);
                kv_out[si].push(kv);
            }
            let attn = Tensor::cat(&outs, 0).map_err(cerr)?;
            x = (x + attn.matmul(&layer.wo_t).map_err(cerr)?).map_err(cerr)?;
            let h = candle_nn::ops::rms_norm(&x, &layer.ffn_norm, c.rms_eps).map_err(cerr)?;
            let gu = h.matmul(&layer.wgu_t).map_err(cerr)?;
            let gate = gu.narrow(1, 0, c.ffn).map_err(cerr)?;
            let up = gu.narrow(1, c.ffn, c.ffn).map_err(cerr)?;
            let act = (candle_nn::ops::silu(&gate).map_err(cerr)? * up).map_err(cerr)?;
            x = (x + act.matmul(&layer.wdown_t).map_err(cerr)?).map_err(cerr)?;
        }
        // Output head only for the requested rows.
        let mut wanted = Vec::new();
        let mut row = 0;
        for s in seqs {
            for &r in s.logit_rows {
                if r >= s.tokens.len() {
                    return Err(EngineError::Compute(format!(
                        "logit row {r} outside {} new tokens",
                        s.tokens.len()
                    )));
                }
                wanted.push((row + r) as u32);
            }
            row += s.tokens.len();
        }
        let mut logits_rows: Vec<Vec<f32>> = Vec::new();
        if !wanted.is_empty() {
            let n_wanted = wanted.len();
            let idx = Tensor::from_vec(wanted, n_wanted, dev).map_err(cerr)?;
            let h = x.index_select(&idx, 0).map_err(cerr)?;
            let h = candle_nn::ops::rms_norm(&h, &self.output_norm, c.rms_eps).map_err(cerr)?;
            logits_rows = h
                .matmul(&self.head_t)
                .and_then(|t| t.to_vec2::<f32>())
                .map_err(cerr)?;
        }
        let mut outputs = Vec::with_capacity(seqs.len());
        let mut rows = logits_rows.into_iter();
        for (s, kv) in seqs.iter().zip(kv_out) {
            let logits = (0..s.logit_rows.len())
                .filter_map(|_| rows.next())
                .collect();
            outputs.push(SeqOutput { kv, logits });
        }
        Ok(outputs)
    }

    /// Attention of one sequence's new rows (starting at batch row `row`) over its prefix and
    /// its new rows, at layer `li`. Returns the attention output (n, heads·d) and the
    /// sequence's keys and values after this layer.
    #[allow(clippy::too_many_arguments)]
    fn attend(
        &self,
        li: usize,
        s: &SeqInput<'_>,
        row: usize,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        mask: &Tensor,
        scale: f64,
    ) -> Result<(Tensor, LayerKv), EngineError> {
        let c = &self.config;
        let n = s.tokens.len();
        let q_width = c.n_heads * c.head_dim;
        let qs = q.narrow(1, row, n).map_err(cerr)?;
        let ks = k.narrow(1, row, n).map_err(cerr)?;
        let vs = v.narrow(1, row, n).map_err(cerr)?;
        let (kf, vf) = match s.prefix {
            Some(p) if s.prefix_len > 0 => (
                Tensor::cat(&[&p[li].k, &ks], 1).map_err(cerr)?,
                Tensor::cat(&[&p[li].v, &vs], 1).map_err(cerr)?,
            ),
            _ => (
                ks.contiguous().map_err(cerr)?,
                vs.contiguous().map_err(cerr)?,
            ),
        };
        let group = c.n_heads / c.n_kv_heads;
        // (heads, n, d) → (kv_heads, group·n, d): query heads of one KV head together.
        let qg = qs
            .contiguous()
            .and_then(|t| t.reshape((c.n_kv_heads, group * n, c.head_dim)))
            .map_err(cerr)?;
        let mut scores = qg
            .matmul(&kf.t().map_err(cerr)?)
            .and_then(|t| t * scale)
            .map_err(cerr)?;
        // A single new row may attend to every position: no mask needed.
        if n > 1 {
            scores = scores.broadcast_add(mask).map_err(cerr)?;
        }
        let probs = candle_nn::ops::softmax_last_dim(&scores).map_err(cerr)?;
        let o = probs
            .matmul(&vf)
            .and_then(|t| t.reshape((c.n_heads, n, c.head_dim)))
            .and_then(|t| t.transpose(0, 1))
            .and_then(|t| t.reshape((n, q_width)))
            .map_err(cerr)?;
        Ok((o, LayerKv { k: kf, v: vf }))
    }

    /// Additive causal mask of `n` new rows after `prefix` positions, repeated for each query
    /// head of a KV group: (group·n, prefix + n).
    fn causal_mask(&self, prefix: usize, n: usize) -> Result<Tensor, EngineError> {
        let group = self.config.n_heads / self.config.n_kv_heads;
        let cols = prefix + n;
        let mut m = vec![0f32; group * n * cols];
        for g in 0..group {
            for i in 0..n {
                let row = (g * n + i) * cols;
                for j in (prefix + i + 1)..cols {
                    m[row + j] = f32::NEG_INFINITY;
                }
            }
        }
        Tensor::from_vec(m, (group * n, cols), &self.device).map_err(cerr)
    }

    /// Keys/values of positions `start..start+len` of a sequence's KV, copied compactly.
    pub fn slice_kv(kv: &[LayerKv], start: usize, len: usize) -> Result<Vec<LayerKv>, EngineError> {
        kv.iter()
            .map(|l| {
                Ok(LayerKv {
                    k: l.k
                        .narrow(1, start, len)
                        .and_then(|t| t.contiguous())
                        .map_err(cerr)?,
                    v: l.v
                        .narrow(1, start, len)
                        .and_then(|t| t.contiguous())
                        .map_err(cerr)?,
                })
            })
            .collect()
    }

    /// Concatenate per-layer KV blocks along positions.
    pub fn concat_kv(blocks: &[&[LayerKv]]) -> Result<Vec<LayerKv>, EngineError> {
        let Some(first) = blocks.first() else {
            return Ok(vec![]);
        };
        (0..first.len())
            .map(|li| {
                let ks: Vec<&Tensor> = blocks.iter().map(|b| &b[li].k).collect();
                let vs: Vec<&Tensor> = blocks.iter().map(|b| &b[li].v).collect();
                Ok(LayerKv {
                    k: Tensor::cat(&ks, 1).map_err(cerr)?,
                    v: Tensor::cat(&vs, 1).map_err(cerr)?,
                })
            })
            .collect()
    }
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
