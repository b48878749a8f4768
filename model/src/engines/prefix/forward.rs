//! The forward pass of [`Transformer`] over a ragged batch: the rows of many sequences (each
//! continuing its own cached prefix) go through the linear layers as one matrix, and attention
//! runs per sequence and head over its own keys and values. Every f32 product goes to the
//! `gemm` kernels (`kernels.rs`), every bf16 one to `bf16.rs`; the element-wise steps (norms,
//! RoPE, softmax, SiLU) run in parallel over rows with rayon. The model's structure and loading
//! are in `transformer.rs`.
//!
//! **Fused steps (bf16 mode).** A norm or the gated SiLU that feeds a product is a
//! [`LayerInput`]: the bf16 products make each such row as they round it into their tiles, and
//! on AMX the gate and up product computes SiLU(gate) · up as it stores each block and hands
//! the down projection its activations already in tile order ([`GateUp::Interleaved`]). The
//! attention writes each output row straight into its place. Each value is the same
//! arithmetic as the unfused steps', so the same bits; only the norms' sum of squares runs in
//! sixteen lanes in the bf16 mode ([`SumOrder`]). The f32 mode's results are unchanged by all
//! of this. Measured on the quickstart: docs/benchmarks.md.

use gemm::Parallelism;
use rayon::prelude::*;

use super::bf16::{
    attend_amx_rows, pack_kv_amx, Bf16Family, InputRows, PackedKv, TileWriter, TiledRows,
};
use super::kernels::{gemm_into, parallel, View};
use super::transformer::{GateUp, LayerKv, Matrix, RopeStyle, SeqInput, SeqOutput, Transformer};
use super::vexp::{exp_in_place, silu_gate};
use crate::error::EngineError;

impl Transformer {
    /// `out (rows × w.cols) = [out +] input (rows × w.rows) · w`, on every thread: the f32 gemm
    /// kernels, or the bf16 ones for a bf16 weight. Rows the input computes are written into
    /// `scratch` first, except on the bf16 products, which make them as they round them.
    fn matmul(
        &self,
        input: LayerInput<'_>,
        rows: usize,
        w: &Matrix,
        out: &mut [f32],
        accumulate: bool,
        scratch: &mut Vec<f32>,
    ) {
        match w {
            Matrix::F32 {
                data,
                rows: k,
                cols,
            } => {
                let x = match input {
                    LayerInput::Rows(x) => x,
                    computed => {
                        if scratch.len() < rows * k {
                            scratch.resize(rows * k, 0.0);
                        }
                        let x = &mut scratch[..rows * k];
                        x.par_chunks_mut(*k)
                            .enumerate()
                            .for_each(|(r, dst)| computed.row_into(r, dst));
                        x
                    }
                };
                gemm_into(
                    self.kernels,
                    out,
                    accumulate,
                    View::dense(x, rows, *k),
                    View::dense(data, *k, *cols),
                    1.0,
                    parallel(),
                )
            }
            Matrix::Bf16(m) => input.with_rows(|rows_of| {
                m.product_of(self.bf16_kernels, rows_of, rows, out, accumulate)
            }),
        }
    }
}

/// A linear layer's input rows as the forward pass has them: rows it holds, or rows it makes
/// from what it holds, one at a time (the RMS norm before a product, the gated SiLU before the
/// down projection). The bf16 products make such a row as they round it into their tiles, so
/// the f32 rows are never all written out and read back; the f32 products get them written
/// first. Either way a row is the same arithmetic, so the same bits.
#[derive(Clone, Copy)]
enum LayerInput<'a> {
    /// Rows held, row-major.
    Rows(&'a [f32]),
    /// The RMS norm of each row of `x` (rows as wide as `weight`), scaled by `weight`, its
    /// squares summed in `order`.
    Normed {
        x: &'a [f32],
        weight: &'a [f32],
        eps: f32,
        order: SumOrder,
    },
    /// SiLU(gate) · up of each row of `gu` (its `ffn` gate and `ffn` up values, in `order`).
    GatedSilu {
        gu: &'a [f32],
        ffn: usize,
        order: GateUp,
    },
}

/// How an RMS norm sums a row's squares.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum SumOrder {
    /// One running sum, value after value: the f32 mode's order, kept so that its results do
    /// not change.
    Sequential,
    /// Sixteen running sums (value `i` into lane `i % 16`), added lane after lane, then the
    /// values past the last whole 16: the bf16 mode's order. The same sum, rounded otherwise,
    /// and sixteen times shorter a chain of dependent additions (the one-sum chain was half
    /// of the fused norm-and-round, measured).
    Lanes,
}

impl LayerInput<'_> {
    /// `f` of these rows as a bf16 product takes them: held, or computed by [`Self::row_into`].
    fn with_rows<R>(self, f: impl FnOnce(InputRows<'_>) -> R) -> R {
        match self {
            LayerInput::Rows(x) => f(InputRows::Given(x)),
            computed => f(InputRows::Computed(&|r, dst| computed.row_into(r, dst))),
        }
    }

    /// Row `r` into `dst` (as wide as a row of the input).
    fn row_into(&self, r: usize, dst: &mut [f32]) {
        let width = dst.len();
        match *self {
            LayerInput::Rows(x) => dst.copy_from_slice(&x[r * width..(r + 1) * width]),
            LayerInput::Normed {
                x,
                weight,
                eps,
                order,
            } => {
                let row = &x[r * width..(r + 1) * width];
                widest_vectors!(normed_row(
                    row: &[f32],
                    weight: &[f32],
                    eps: f32,
                    order: SumOrder,
                    dst: &mut [f32]
                ))
            }
            LayerInput::GatedSilu { gu, ffn, order } => {
                let row = &gu[r * 2 * ffn..(r + 1) * 2 * ffn];
                match order {
                    GateUp::Stacked => {
                        let (gate, up) = row.split_at(ffn);
                        widest_vectors!(gated_silu_row(gate: &[f32], up: &[f32], dst: &mut [f32]))
                    }
                    GateUp::Interleaved => {
                        widest_vectors!(gated_silu_interleaved(row: &[f32], dst: &mut [f32]))
                    }
                }
            }
        }
    }
}

/// `dst = row · weight / √(mean(row²) + eps)`, the squares summed in `order` (the element-wise
/// steps give the same bits at any vector width).
#[inline(always)]
fn normed_row(row: &[f32], weight: &[f32], eps: f32, order: SumOrder, dst: &mut [f32]) {
    const LANES: usize = 16;
    let squares = match order {
        SumOrder::Sequential => row.iter().map(|v| v * v).sum::<f32>(),
        SumOrder::Lanes => {
            let whole = row.chunks_exact(LANES);
            let rest = whole.remainder().iter().map(|v| v * v).sum::<f32>();
            let mut lanes = [0f32; LANES];
            for chunk in whole {
                for (lane, v) in lanes.iter_mut().zip(chunk) {
                    *lane += v * v;
                }
            }
            lanes.iter().sum::<f32>() + rest
        }
    };
    let scale = 1.0 / (squares / row.len() as f32 + eps).sqrt();
    for ((o, v), w) in dst.iter_mut().zip(row).zip(weight) {
        *o = v * scale * w;
    }
}

/// [`gated_silu_row`] of a row whose values go sixteen gate values, then their sixteen up
/// values (`GateUp::Interleaved`).
#[inline(always)]
fn gated_silu_interleaved(row: &[f32], dst: &mut [f32]) {
    for (pair, dst) in row.chunks_exact(32).zip(dst.chunks_exact_mut(16)) {
        let (gate, up) = pair.split_at(16);
        gated_silu_row(gate, up, dst);
    }
}

/// `dst = SiLU(gate) · up`, element by element ([`silu_gate`]).
#[inline(always)]
fn gated_silu_row(gate: &[f32], up: &[f32], dst: &mut [f32]) {
    for ((a, &g), &u) in dst.iter_mut().zip(gate).zip(up) {
        *a = silu_gate(g, u);
    }
}

/// Keeps the memory a forward pass frees in the allocator for the next pass (glibc; once per
/// process, set when a model is built; a binary calls it first thing, before any thread
/// allocates, since a thread keeps the arena it started with). A pass allocates its
/// activations, tile-ordered copies and every sequence's keys and values afresh, megabytes
/// each: by default glibc maps such blocks anew (or trims the heap's top) and the kernel
/// faults and zeroes every page again on first touch, which was a tenth of a bf16 prefill in
/// page faults alone. With a high mapping threshold, no trimming and a padded heap top, the
/// pages stay mapped and are reused. One arena: the rayon threads' own arenas are heaps of at
/// most 64 MiB, so a larger block there is mapped anew whatever the threshold, and a thread's
/// heap shrinks when its top frees (measured: the kernel's page clearing fell from 7.8% of a
/// bf16 quickstart's samples to 0.05%). The resident size is then the largest pass's working
/// set, which the prefix cache's budget already dominates.
pub fn keep_freed_memory() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only changes glibc's allocation thresholds; any values are valid.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
            libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 30);
            libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
            libc::mallopt(libc::M_TOP_PAD, 256 << 20);
        }
    });
}

/// Returns the memory [`keep_freed_memory`] keeps to the OS now (glibc's `malloc_trim`): a
/// benchmark measuring one engine's peak after another's in the same process calls it first.
pub fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of glibc's heaps.
    unsafe {
        libc::malloc_trim(0);
    }
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
    /// Run a ragged batch. Every sequence continues its own prefix; the linear layers see all
    /// new rows at once. A sequence's output keys and values are its prefix's, copied, then its
    /// new rows' (the prefix stays with its owner, e.g. the prefix cache).
    pub fn forward(&self, seqs: &[SeqInput<'_>]) -> Result<Vec<SeqOutput>, EngineError> {
        self.run(seqs, (0..seqs.len()).map(|_| None).collect())
    }

    /// Run a ragged batch of sequences that own their keys and values (running generations):
    /// `caches[i]` is sequence i's prefix (its `prefix` is `None`, its `prefix_len` the cache's
    /// positions). Each cache is extended in place by the new rows and returned as the output's
    /// `kv`, so a generated token appends its row instead of copying the whole cache again. The
    /// attention sees the same contiguous keys and values as [`Transformer::forward`], so the
    /// results are identical.
    pub fn forward_extending(
        &self,
        seqs: &[SeqInput<'_>],
        caches: Vec<Vec<LayerKv>>,
    ) -> Result<Vec<SeqOutput>, EngineError> {
        if caches.len() != seqs.len() || seqs.iter().any(|s| s.prefix.is_some()) {
            return Err(EngineError::Compute(
                "forward_extending: one owned cache per sequence, and no shared prefix".into(),
            ));
        }
        self.run(seqs, caches.into_iter().map(Some).collect())
    }

    /// The forward pass; `owned[i]`, when present, is sequence i's prefix, extended in place.
    fn run(
        &self,
        seqs: &[SeqInput<'_>],
        mut owned: Vec<Option<Vec<LayerKv>>>,
    ) -> Result<Vec<SeqOutput>, EngineError> {
        let c = &self.config;
        let kv_width = c.kv_width();
        for (s, own) in seqs.iter().zip(&owned) {
            let prefix = s.prefix.or(own.as_deref());
            if s.prefix_len + s.tokens.len() > c.context {
                return Err(EngineError::Model(format!(
                    "sequence of {} tokens exceeds the model context of {}",
                    s.prefix_len + s.tokens.len(),
                    c.context
                )));
            }
            let have = prefix.map(|p| p.len()).unwrap_or(0);
            if s.prefix_len > 0 && have != c.n_layers {
                return Err(EngineError::Compute(format!(
                    "prefix of {} positions has {have} layers, the model {}",
                    s.prefix_len, c.n_layers
                )));
            }
            if let Some(p) = prefix.filter(|_| s.prefix_len > 0) {
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
            self.embed.row_into(t, row);
        }
        let order = match self.is_bf16() {
            true => SumOrder::Lanes,
            false => SumOrder::Sequential,
        };
        // The f32 products' computed input rows (the bf16 ones make them as they round them).
        let mut scratch = Vec::new();
        let mut qkv = vec![0f32; total * qkv_width];
        // The attention's outputs: f32 rows (allocated when a layer needs them), or on AMX
        // the output projection's activations in tile order.
        let mut attn = Vec::new();
        let mut attn_tiles = TiledRows::default();
        // The f32 gate and up rows (allocated when a layer needs them), or their SiLU values
        // in tile order on AMX.
        let mut gu = Vec::new();
        let mut gated_tiles = TiledRows::default();
        let mut kv_out: Vec<Vec<LayerKv>> = vec![Vec::with_capacity(c.n_layers); seqs.len()];
        let scale = 1.0 / (c.head_dim as f32).sqrt();
        let group = c.n_heads / c.n_kv_heads;
        let (shared_prefixes, shared_prefix_of) = self.shared_prefixes(seqs);
        for (li, layer) in self.layers.iter().enumerate() {
            let normed = LayerInput::Normed {
                x: &x,
                weight: &layer.attn_norm,
                eps: c.rms_eps,
                order,
            };
            self.matmul(normed, total, &layer.wqkv, &mut qkv, false, &mut scratch);
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
            // Each sequence's keys and values: its prefix (an owned cache's layer, taken; a
            // shared prefix's, copied), then its new rows.
            let layer_kv: Vec<LayerKv> = seqs
                .par_iter()
                .zip(starts.par_iter())
                .zip(owned.par_iter_mut())
                .map(|((s, &start), own)| {
                    let n = s.tokens.len();
                    let (mut k, mut v) = match own {
                        Some(cache) => {
                            let LayerKv { k, v } = std::mem::take(&mut cache[li]);
                            (k, v)
                        }
                        None => {
                            let cap = (s.prefix_len + n) * kv_width;
                            let mut k = Vec::with_capacity(cap);
                            let mut v = Vec::with_capacity(cap);
                            if let Some(p) = s.prefix.filter(|_| s.prefix_len > 0) {
                                k.extend_from_slice(&p[li].k);
                                v.extend_from_slice(&p[li].v);
                            }
                            (k, v)
                        }
                    };
                    for row in
                        qkv[start * qkv_width..(start + n) * qkv_width].chunks_exact(qkv_width)
                    {
                        k.extend_from_slice(&row[q_width..q_width + kv_width]);
                        v.extend_from_slice(&row[q_width + kv_width..]);
                    }
                    LayerKv { k, v }
                })
                .collect();
            // Attention per (sequence, key/value head), in parallel: scores = q·Kᵀ for the
            // group's query heads at once, causal softmax, output = P·V, written to each head's
            // columns of the sequence's rows.
            let tasks: Vec<(usize, usize)> = (0..seqs.len())
                .flat_map(|si| (0..c.n_kv_heads).map(move |g| (si, g)))
                .filter(|&(si, _)| !seqs[si].tokens.is_empty())
                .collect();
            // A shared prefix's keys and values at this layer, packed once per key/value head
            // for all the sequences that continue it.
            let shared: Vec<Option<Vec<PackedKv>>> = shared_prefixes
                .par_iter()
                .map(|&(p, len)| {
                    (0..c.n_kv_heads)
                        .map(|g| self.pack_head(&p[li], g, len, None))
                        .collect()
                })
                .collect();
            // Each task writes its group's columns of its sequence's rows of the outputs: f32
            // rows, or on AMX the output projection's tile-ordered bf16 activations.
            let wo_tiles = match &layer.wo {
                Matrix::Bf16(wo)
                    if self.bf16_kernels == Bf16Family::Amx && c.head_dim.is_multiple_of(32) =>
                {
                    Some(wo)
                }
                _ => None,
            };
            if wo_tiles.is_none() && attn.is_empty() {
                attn = vec![0f32; total * q_width];
            }
            let attn_out = match wo_tiles {
                Some(_) => AttnOut::Tiles(attn_tiles.writer(total, q_width)),
                None => AttnOut::Rows(AttnRows::new(&mut attn)),
            };
            tasks.par_iter().for_each(|&(si, g)| {
                let s = &seqs[si];
                let prefix = shared_prefix_of[si]
                    .and_then(|i| shared[i].as_ref())
                    .map(|heads| &heads[g]);
                let n = s.tokens.len();
                let d = c.head_dim;
                // Stacked row r is head g·group + r / n at new row r % n.
                let mut emit = |r: usize, values: &[f32]| {
                    let (hq, i) = (g * group + r / n, r % n);
                    // SAFETY: row `starts[si] + i` is this sequence's, columns of head `hq`
                    // of this task's group: no other task writes them.
                    unsafe { attn_out.write(starts[si] + i, q_width, hq * d, values) };
                };
                self.attend_group(
                    &qkv[starts[si] * qkv_width..],
                    qkv_width,
                    &layer_kv[si],
                    s.prefix_len,
                    n,
                    g,
                    scale,
                    prefix,
                    &mut emit,
                );
            });
            for (si, kv) in layer_kv.into_iter().enumerate() {
                kv_out[si].push(kv);
            }
            // Residual connections are fused into the products (out += …).
            match wo_tiles {
                Some(wo) => wo.product_of_tiles(&attn_tiles, &mut x, true),
                None => {
                    let attn_rows = LayerInput::Rows(&attn);
                    self.matmul(attn_rows, total, &layer.wo, &mut x, true, &mut scratch);
                }
            }
            let normed = LayerInput::Normed {
                x: &x,
                weight: &layer.ffn_norm,
                eps: c.rms_eps,
                order,
            };
            // On AMX the gate and up product hands its SiLU values, in bf16 tile order, to the
            // down projection; elsewhere the f32 gate and up rows are written, then read.
            if let (Matrix::Bf16(wgu), Matrix::Bf16(wdown), GateUp::Interleaved) =
                (&layer.wgu, &layer.wdown, layer.gate_up)
            {
                let done = normed.with_rows(|rows| {
                    wgu.gated_silu_tiles(self.bf16_kernels, rows, total, &mut gated_tiles)
                });
                if done.is_some() {
                    wdown.product_of_tiles(&gated_tiles, &mut x, true);
                    continue;
                }
            }
            if gu.is_empty() {
                gu = vec![0f32; total * 2 * c.ffn];
            }
            self.matmul(normed, total, &layer.wgu, &mut gu, false, &mut scratch);
            let gated = LayerInput::GatedSilu {
                gu: &gu,
                ffn: c.ffn,
                order: layer.gate_up,
            };
            self.matmul(gated, total, &layer.wdown, &mut x, true, &mut scratch);
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
            let normed = LayerInput::Normed {
                x: &sel,
                weight: &self.output_norm,
                eps: c.rms_eps,
                order,
            };
            let mut logits = vec![0f32; n * c.vocab];
            self.matmul(normed, n, &self.head, &mut logits, false, &mut scratch);
            logits_rows = logits.chunks_exact(c.vocab).map(<[f32]>::to_vec).collect();
        }
        let mut outputs = Vec::with_capacity(seqs.len());
        let mut rows = logits_rows.into_iter();
        for ((s, kv), own) in seqs.iter().zip(kv_out).zip(&owned) {
            let kv = if s.tokens.is_empty() && own.is_none() {
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

    /// On AMX tiles, the prefixes (the same cached keys and values, of the same length) that
    /// two or more sequences of the batch continue, and for each sequence the index of its
    /// own among them: each layer packs such a prefix once for all its sequences. Empty (and
    /// every index `None`) elsewhere.
    #[allow(clippy::type_complexity)]
    fn shared_prefixes<'p>(
        &self,
        seqs: &[SeqInput<'p>],
    ) -> (Vec<(&'p [LayerKv], usize)>, Vec<Option<usize>>) {
        if !self.is_bf16() {
            return (Vec::new(), vec![None; seqs.len()]);
        }
        let prefix_of: Vec<Option<(&'p [LayerKv], usize)>> = seqs
            .iter()
            .map(|s| {
                let p = s
                    .prefix
                    .filter(|_| s.prefix_len > 0 && !s.tokens.is_empty())?;
                Some((p, s.prefix_len))
            })
            .collect();
        let same = |a: &(&[LayerKv], usize), b: &(&[LayerKv], usize)| {
            a.0.as_ptr() == b.0.as_ptr() && a.1 == b.1
        };
        let mut shared: Vec<(&'p [LayerKv], usize)> = Vec::new();
        let of_seq = prefix_of
            .iter()
            .map(|p| {
                let p = (*p)?;
                // A prefix only one sequence continues is packed by that sequence's own call.
                if prefix_of.iter().flatten().filter(|q| same(q, &p)).count() < 2 {
                    return None;
                }
                Some(shared.iter().position(|q| same(q, &p)).unwrap_or_else(|| {
                    shared.push(p);
                    shared.len() - 1
                }))
            })
            .collect();
        (shared, of_seq)
    }

    /// Key/value head `g`'s keys and values of `kv`'s first `positions` positions, packed for
    /// the AMX attention (copying `prefix`'s packing of its first positions); `None` where it
    /// does not run (`bf16::pack_kv_amx`).
    fn pack_head(
        &self,
        kv: &LayerKv,
        g: usize,
        positions: usize,
        prefix: Option<&PackedKv>,
    ) -> Option<PackedKv> {
        let d = self.config.head_dim;
        let kv_width = self.config.kv_width();
        let span = |j: usize| j * kv_width + g * d..j * kv_width + (g + 1) * d;
        let key = |j: usize| &kv.k[span(j)];
        let value = |j: usize| &kv.v[span(j)];
        pack_kv_amx(self.bf16_kernels, d, positions, &key, &value, prefix)
    }

    /// Attention of key/value head `g`'s group of query heads over one sequence: `q` starts at
    /// the sequence's first new row (row stride `q_stride`), `kv` holds `prefix_len + n`
    /// positions. The group's queries are stacked into one matrix, head after head, so each
    /// product packs the head's keys (or values) once for the whole group (every row of a
    /// product is reduced on its own, so stacking changes no bit). On AMX tiles, `shared` is
    /// this head's packing of the sequence's prefix when other sequences of the batch continue
    /// it too. Stacked output row `r` (head `g·group + r / n`, new row `r % n`) goes to
    /// `emit(r, values)`.
    #[allow(clippy::too_many_arguments)]
    fn attend_group(
        &self,
        q: &[f32],
        q_stride: usize,
        kv: &LayerKv,
        prefix_len: usize,
        n: usize,
        g: usize,
        scale: f32,
        shared: Option<&PackedKv>,
        emit: &mut dyn FnMut(usize, &[f32]),
    ) {
        let c = &self.config;
        let d = c.head_dim;
        let kv_width = c.kv_width();
        let group = c.n_heads / c.n_kv_heads;
        let t = prefix_len + n;
        assert!(
            kv.k.len() == t * kv_width && kv.v.len() == t * kv_width,
            "attention: keys and values of {t} positions"
        );
        let rows = group * n;
        let query = |r: usize| {
            let (hq, i) = (g * group + r / n, r % n);
            &q[i * q_stride + hq * d..i * q_stride + (hq + 1) * d]
        };
        // The bf16 mode on AMX runs the group on tiles (`bf16/amx/attention.rs`), reading each
        // query row where it is.
        if self.is_bf16() {
            if let Some(packed) = self.pack_head(kv, g, t, shared) {
                let row = |r: usize, dst: &mut [f32]| dst.copy_from_slice(query(r));
                let queries = InputRows::Computed(&row);
                return attend_amx_rows(queries, rows, n, prefix_len, scale, &packed, emit);
            }
        }
        let mut queries = Vec::with_capacity(rows * d);
        for r in 0..rows {
            queries.extend_from_slice(query(r));
        }
        // This head's columns of every position's keys and values.
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
        let mut scores = vec![0f32; rows * t];
        gemm_into(
            self.kernels,
            &mut scores,
            false,
            View::dense(&queries, rows, d),
            keys.t(),
            scale,
            Parallelism::None,
        );
        // Causal softmax: row r is new row r % n (position prefix_len + r % n), which sees
        // positions 0..=prefix_len + r % n.
        for (r, row) in scores.chunks_exact_mut(t).enumerate() {
            let visible = prefix_len + r % n + 1;
            let (seen, masked) = row.split_at_mut(visible);
            let max = seen.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            for v in seen.iter_mut() {
                *v -= max;
            }
            exp_in_place(seen);
            let sum: f32 = seen.iter().sum();
            let inv = 1.0 / sum;
            for v in seen.iter_mut() {
                *v *= inv;
            }
            masked.fill(0.0);
        }
        let mut out = vec![0f32; rows * d];
        gemm_into(
            self.kernels,
            &mut out,
            false,
            View::dense(&scores, rows, t),
            values,
            1.0,
            Parallelism::None,
        );
        for (r, values) in out.chunks_exact(d).enumerate() {
            emit(r, values);
        }
    }
}

/// Where the attention's output rows go: f32 rows, or bf16 tile-ordered rows for the output
/// projection on AMX (the same values rounded as its product would round them: the same bits).
enum AttnOut<'a> {
    Rows(AttnRows),
    Tiles(TileWriter<'a>),
}

impl AttnOut<'_> {
    /// Row `row`'s values `col..` (`width` per row).
    ///
    /// # Safety
    /// No other thread reads or writes these places meanwhile.
    unsafe fn write(&self, row: usize, width: usize, col: usize, values: &[f32]) {
        match self {
            AttnOut::Rows(rows) => rows.write(row * width + col, values),
            AttnOut::Tiles(tiles) => tiles.write(row, col, values),
        }
    }
}

/// The attention outputs `(rows × q_width)`, written by the parallel (sequence, key/value
/// head) tasks, each only its own sequence's rows and its own group's columns.
struct AttnRows {
    ptr: *mut f32,
    len: usize,
}

// SAFETY: the tasks write disjoint elements (see `AttnRows::write`'s callers); the buffer
// outlives them (it is borrowed for the `AttnRows`' life).
unsafe impl Sync for AttnRows {}
unsafe impl Send for AttnRows {}

impl AttnRows {
    fn new(attn: &mut [f32]) -> AttnRows {
        AttnRows {
            ptr: attn.as_mut_ptr(),
            len: attn.len(),
        }
    }

    /// `values` into the outputs from element `offset` on.
    ///
    /// # Safety
    /// No other thread reads or writes these elements meanwhile.
    unsafe fn write(&self, offset: usize, values: &[f32]) {
        assert!(
            offset + values.len() <= self.len,
            "attention output inside its rows"
        );
        std::ptr::copy_nonoverlapping(values.as_ptr(), self.ptr.add(offset), values.len());
    }
}
