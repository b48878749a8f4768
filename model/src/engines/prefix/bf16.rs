//! The prefix engine's bf16 weights (`dtype = "bf16"`, a named mode, never the default): every
//! linear weight held as bfloat16, packed once at load for the products, which run on the CPU's
//! bf16 dot-product units with f32 accumulation.
//!
//! **Numbers.** A weight is rounded once to bf16 at load (round to nearest, ties to even; a
//! subnormal becomes a signed zero). The activations entering a product are rounded the same
//! way, row by row. Each output element is then the f32 sum, over the depth in pairs
//! `(2p, 2p+1)`, of `acc += x[2p+1]·w[2p+1]; acc += x[2p]·w[2p]`: exactly what one AVX512-BF16
//! `vdpbf16ps` lane computes (Intel SDM: odd element first, each step an f32 FMA rounded to
//! nearest even). A product of two bf16 values is exact in f32, so the FMA equals a multiply
//! then an add, and the portable family (plain f32 arithmetic, vectorised for AVX2) gives the
//! same bits. The one exception is the hardware's flush of a subnormal partial sum to zero,
//! which needs values near 1e-38 and never occurs in a model's products. The AMX family
//! ([`amx`]) sums the same rounded products in f32, but each `tdpbf16ps` adds its 32 products in
//! the tile unit's own order and rounding (Intel's pseudocode shows a sequential order; the
//! unit measured here matches no sequential order bit for bit), so it agrees with the other
//! families to the rounding of an f32 sum, not bit for bit: a process uses one family
//! throughout (chosen once, or forced by `C2S_BF16_KERNELS`, as `C2S_GEMM_KERNELS` forces
//! the f32 families). Norms, RoPE and softmax stay f32. Attention's two products run on AMX
//! tiles where AMX is the family and the head width a multiple of 32 ([`attend_amx_rows`],
//! `amx/attention.rs`: queries, keys, values and probabilities rounded to bf16, as
//! transformers' bf16 forward holds them); elsewhere attention stays f32 (`forward.rs`), since
//! the vector families' attention products in bf16 measured no faster than the f32 gemm.
//!
//! **Layout.** A `k × n` weight (used as `x · W`) is cut into panels of [`PANEL`] columns;
//! inside a panel, depth pairs follow each other and each pair holds its 32 columns as
//! `(w[2p, c], w[2p+1, c])`: one 64-byte load gives the 16 bf16 pairs of one `vdpbf16ps`, and
//! a row's two activations `(x[2p], x[2p+1])` are one broadcast 32-bit word. The same panel is
//! two AMX tiles of 16 pairs × 16 columns at a row stride of 128 bytes. The depth is padded
//! with zeros to a whole number of AMX steps ([`STEP_PAIRS`] pairs), a last partial panel with
//! zero columns, and every panel starts on a cache line (a tile load whose rows cross lines
//! runs at about half speed, measured).
//!
//! **Batch invariance.** Every output element is reduced over the whole depth in one fixed
//! order, whatever the number of rows or the threads: a row's result never depends on the
//! other rows of the batch (the property the f32 path gets from `kernels.rs`'s fixed blocking).
//! In the AMX family too: the rows of a tile are independent lanes, whatever the tile's height.

mod amx;

use rayon::prelude::*;

use super::kernels::KernelChoiceError;

/// Columns of one packed panel: two 16-lane AVX-512 registers, or two AMX tiles.
pub const PANEL: usize = 32;

/// Depth pairs of one AMX step (a tile of 16 rows of 64 bytes); the packed depth is padded to
/// a multiple of it.
pub const STEP_PAIRS: usize = 16;

/// A bf16 buffer that starts on a cache line: the packed weights (so every panel, and every
/// AMX tile row, starts on a line) and the AMX activations.
type Lines = aligned_vec::AVec<u16, aligned_vec::ConstAlign<64>>;

/// `len` zeros on a cache line.
fn zeroed_lines(len: usize) -> Lines {
    aligned_vec::avec![[64] | 0u16; len]
}

/// Depth pairs held per panel for `pairs` pairs: a whole number of AMX steps.
fn padded_pairs(pairs: usize) -> usize {
    pairs.div_ceil(STEP_PAIRS) * STEP_PAIRS
}

/// Rows of one register tile: 24 accumulators of 16 lanes in the AVX-512 families, which
/// leaves 8 of the 32 registers for the panel's values and the broadcasts.
const TILE_ROWS: usize = 12;

/// `x` rounded to bf16 (nearest, ties to even). NaN stays a quiet NaN; a subnormal (or a value
/// that only rounding would lift out of the subnormals) becomes a zero of its sign, as the
/// bf16 units read it.
#[inline(always)]
pub fn to_bf16(x: f32) -> u16 {
    // Selects, not branches, so that a loop of conversions vectorises (with branches they were
    // a twelfth of a bf16 prefill).
    let bits = x.to_bits();
    let high = (bits >> 16) as u16;
    let rounded = (bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) >> 16) as u16;
    let nan = bits & 0x7fff_ffff > 0x7f80_0000;
    let subnormal = bits & 0x7f80_0000 == 0;
    let finite = if subnormal { high & 0x8000 } else { rounded };
    if nan {
        high | 0x0040
    } else {
        finite
    }
}

/// `dst[i] = to_bf16(src[i])` for each `i` (up to the shorter length): [`to_bf16`]'s selects,
/// compiled for the widest vectors of the CPU (AVX-512 or AVX2), so the same bits at 16 or 8
/// values per step. Without it the activations' conversion was a tenth of a bf16 prefill.
pub fn round_into(src: &[f32], dst: &mut [u16]) {
    widest_vectors!(round_each(src: &[f32], dst: &mut [u16]))
}

#[inline(always)]
fn round_each(src: &[f32], dst: &mut [u16]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = to_bf16(s);
    }
}

/// `src` rounded to bf16 in chunks of `chunk` values, chunk `c` into `dst[c · stride..]` (the
/// last chunk may be shorter): a row of activations into its places in a tile-ordered block,
/// with one dispatch for the whole row ([`round_into`] per chunk of 32 was a twelfth of a
/// bf16 prefill, most of it the calls).
pub fn round_chunks_into(src: &[f32], chunk: usize, dst: &mut [u16], stride: usize) {
    assert!(
        chunk > 0 && chunk <= stride,
        "round_chunks_into: chunks of 1..=stride"
    );
    widest_vectors!(round_chunks(src: &[f32], chunk: usize, dst: &mut [u16], stride: usize))
}

#[inline(always)]
fn round_chunks(src: &[f32], chunk: usize, dst: &mut [u16], stride: usize) {
    for (c, values) in src.chunks(chunk).enumerate() {
        round_each(values, &mut dst[c * stride..c * stride + values.len()]);
    }
}

/// SiLU(gate) · up of each row of a product block whose 32 columns are 16 gate values then the
/// same 16 columns' up values (`GateUp::Interleaved`), rounded to bf16: `gate / (1 + e^-gate) ·
/// up`, the arithmetic of the f32 path's gated SiLU, compiled for the widest vectors.
fn gated_silu_block(block: &[[f32; PANEL]], values: &mut [[u16; 16]]) {
    widest_vectors!(gated_silu_rows(block: &[[f32; PANEL]], values: &mut [[u16; 16]]))
}

#[inline(always)]
fn gated_silu_rows(block: &[[f32; PANEL]], values: &mut [[u16; 16]]) {
    for (row, out) in block.iter().zip(values.iter_mut()) {
        let (gate, up) = row.split_at(16);
        for ((o, &g), &u) in out.iter_mut().zip(gate).zip(up) {
            *o = to_bf16(crate::engines::prefix::vexp::silu_gate(g, u));
        }
    }
}

/// The f32 value of a bf16 (exact).
pub fn from_bf16(b: u16) -> f32 {
    f32::from_bits((b as u32) << 16)
}

/// A family of bf16 product kernels. The three vector families compute the same bits (module
/// doc; the tests check it on every family of the machine they run on, and `vdpbf16ps`'s order
/// and rounding are the Intel SDM's description, checked on the CPUs tested here); AMX agrees
/// with them to f32 rounding. They differ in speed, which differs by CPU: on the Sapphire
/// Rapids cores measured here one `vdpbf16ps` (64 flops) issues every other cycle while two
/// f32 FMAs (64 flops) issue every cycle, so widening the bf16 values to f32 in registers is
/// twice as fast as the bf16 unit, and an AMX tile product (16 384 flops) is several times
/// faster again where the products have rows to fill its tiles.
/// [`Bf16Family::detected`] times the families on a small product and keeps the fastest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bf16Family {
    /// AMX tiles (`tdpbf16ps`; Sapphire Rapids and later), where the kernel grants the process
    /// the tile state (Linux: `arch_prctl(ARCH_REQ_XCOMP_PERM)`).
    Amx,
    /// AVX512-BF16's `vdpbf16ps` (Cooper Lake, Sapphire Rapids and later; Zen 4 and later).
    Avx512Bf16,
    /// AVX-512F: the bf16 pairs widened to f32 in registers (a shift and a mask), then f32 FMAs.
    Avx512Widen,
    /// Plain f32 arithmetic on the bf16 values, vectorised for AVX2/FMA where the CPU has it.
    Portable,
}

/// The environment variable that forces a bf16 family for the whole process.
pub const BF16_KERNELS_ENV: &str = "C2S_BF16_KERNELS";

impl Bf16Family {
    /// The family's name, as `C2S_BF16_KERNELS` and the benchmarks spell it.
    pub fn name(self) -> &'static str {
        match self {
            Bf16Family::Amx => "amx",
            Bf16Family::Avx512Bf16 => "avx512bf16",
            Bf16Family::Avx512Widen => "avx512",
            Bf16Family::Portable => "portable",
        }
    }

    /// Whether this CPU can run the family.
    pub fn is_available(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            Bf16Family::Avx512Bf16 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bf16")
            }
            #[cfg(target_arch = "x86_64")]
            Bf16Family::Avx512Widen => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            Bf16Family::Avx512Bf16 | Bf16Family::Avx512Widen => false,
            Bf16Family::Portable => true,
            Bf16Family::Amx => amx::is_available(),
        }
    }

    /// Every family this CPU can run.
    pub fn available() -> Vec<Bf16Family> {
        [
            Bf16Family::Amx,
            Bf16Family::Avx512Bf16,
            Bf16Family::Avx512Widen,
            Bf16Family::Portable,
        ]
        .into_iter()
        .filter(|f| f.is_available())
        .collect()
    }

    /// The fastest family of this CPU, timed once per process: the best of seven runs of a
    /// 128 × 1024 × 512 product on each (some tens of milliseconds in all). Only AMX's choice
    /// changes results, by f32 rounding (module doc).
    pub fn detected() -> Bf16Family {
        static FASTEST: std::sync::OnceLock<Bf16Family> = std::sync::OnceLock::new();
        *FASTEST.get_or_init(|| {
            let (m, k, n) = (128, 1024, 512);
            let (x, packed) = timing_operands(m, k, n);
            let mut out = vec![0f32; m * n];
            let mut best = (f64::INFINITY, Bf16Family::Portable);
            for family in Self::available() {
                packed.product(family, &x, m, &mut out, false);
                for _ in 0..7 {
                    let started = std::time::Instant::now();
                    packed.product(family, &x, m, &mut out, false);
                    let seconds = started.elapsed().as_secs_f64();
                    if seconds < best.0 {
                        best = (seconds, family);
                    }
                }
            }
            best.1
        })
    }

    /// The family a `C2S_BF16_KERNELS` value names (`None` or `auto`: the detected one); an
    /// unknown name or a family this CPU lacks is an error naming the variable.
    pub fn named(name: Option<&str>) -> Result<Bf16Family, KernelChoiceError> {
        let family = match name {
            None | Some("") | Some("auto") => return Ok(Self::detected()),
            Some("amx") => Bf16Family::Amx,
            Some("avx512bf16") => Bf16Family::Avx512Bf16,
            Some("avx512") => Bf16Family::Avx512Widen,
            Some("portable") => Bf16Family::Portable,
            Some(other) => {
                return Err(KernelChoiceError::Unknown {
                    variable: BF16_KERNELS_ENV,
                    value: other.to_string(),
                    kind: "bf16 kernel",
                    choices: "amx, avx512bf16, avx512, portable, auto",
                })
            }
        };
        if !family.is_available() {
            return Err(KernelChoiceError::unavailable(
                BF16_KERNELS_ENV,
                family.name(),
                Self::available().iter().map(|f| f.name()),
            ));
        }
        Ok(family)
    }

    /// The family of this process: `C2S_BF16_KERNELS` when set, else the detected one.
    pub fn from_env() -> Result<Bf16Family, KernelChoiceError> {
        Self::named(std::env::var(BF16_KERNELS_ENV).ok().as_deref())
    }
}

/// A `k × n` weight in bf16, packed in panels (module doc).
pub struct Bf16Matrix {
    data: Lines,
    /// Depth `k` (rows of the weight).
    pub rows: usize,
    /// Outputs `n` (columns of the weight).
    pub cols: usize,
    /// Depth pairs: `ceil(k / 2)`.
    pairs: usize,
}

impl Bf16Matrix {
    /// Pack `Wᵀ` given as its rows: the weight's column `j` is `column(j)`, a slice of `k`
    /// f32 values (a Hugging Face / GGUF linear weight is stored `(out, in)`, so its rows are
    /// the columns of `W` in `x · W`).
    pub fn from_columns<'a>(
        k: usize,
        n: usize,
        column: impl Fn(usize) -> &'a [f32] + Sync,
    ) -> Bf16Matrix {
        Self::packed(k, n, |first, cols, out| {
            let mut rounded = vec![0u16; k];
            for c in 0..cols {
                let col = column(first + c);
                debug_assert_eq!(col.len(), k);
                round_into(col, &mut rounded);
                for (i, &v) in rounded.iter().enumerate() {
                    out[((i / 2) * PANEL + c) * 2 + i % 2] = v;
                }
            }
        })
    }

    /// Pack `W` given as its rows: row `i` is `row(i)`, a slice of at least `n` f32 values.
    pub fn from_rows<'a>(
        k: usize,
        n: usize,
        row: impl Fn(usize) -> &'a [f32] + Sync,
    ) -> Bf16Matrix {
        Self::packed(k, n, |first, cols, out| {
            let mut rounded = [0u16; PANEL];
            for i in 0..k {
                round_into(&row(i)[first..first + cols], &mut rounded);
                let pair = &mut out[(i / 2) * PANEL * 2 + i % 2..];
                for (c, &v) in rounded[..cols].iter().enumerate() {
                    pair[c * 2] = v;
                }
            }
        })
    }

    /// A `k × n` weight whose panels `fill(first column, columns, panel)` writes, in parallel
    /// over the panels (each zeroed, on a cache line).
    fn packed(k: usize, n: usize, fill: impl Fn(usize, usize, &mut [u16]) + Sync) -> Bf16Matrix {
        let pairs = k.div_ceil(2);
        let panel_len = padded_pairs(pairs) * PANEL * 2;
        let mut data = zeroed_lines(n.div_ceil(PANEL) * panel_len);
        data.as_mut_slice()
            .par_chunks_mut(panel_len)
            .enumerate()
            .for_each(|(panel, out)| {
                let first = panel * PANEL;
                fill(first, PANEL.min(n - first), out)
            });
        Bf16Matrix {
            data,
            rows: k,
            cols: n,
            pairs,
        }
    }

    /// Pack a row-major `k × n` f32 matrix.
    pub fn from_row_major(w: &[f32], k: usize, n: usize) -> Bf16Matrix {
        assert_eq!(w.len(), k * n, "bf16 pack: shape");
        Self::from_rows(k, n, |i| &w[i * n..(i + 1) * n])
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.data.as_slice().len() * 2
    }

    /// Depth pairs held per panel: `pairs` rounded up to a multiple of [`STEP_PAIRS`].
    fn padded_pairs(&self) -> usize {
        padded_pairs(self.pairs)
    }

    /// `u16`s of one panel.
    fn panel_len(&self) -> usize {
        self.padded_pairs() * PANEL * 2
    }

    /// The weight's element `(i, j)` as f32 (its bf16 value): what the packing tests read.
    #[cfg(test)]
    fn get(&self, i: usize, j: usize) -> f32 {
        let (panel, c) = (j / PANEL, j % PANEL);
        from_bf16(
            self.data.as_slice()[panel * self.panel_len() + ((i / 2) * PANEL + c) * 2 + i % 2],
        )
    }

    /// `out (m × n, row-major) = [out +] x (m × k, row-major) · W`, on `family` and every rayon
    /// thread (panels are shared out among the threads).
    pub fn product(
        &self,
        family: Bf16Family,
        x: &[f32],
        m: usize,
        out: &mut [f32],
        accumulate: bool,
    ) {
        self.product_of(family, InputRows::Given(x), m, out, accumulate)
    }

    /// The feed-forward's middle on AMX: `self` is the fused gate and up weight with its
    /// columns interleaved by 16 (`GateUp::Interleaved`: panel `p` holds gate and up columns
    /// `16p..16p+16`), and each product block's SiLU(gate) · up goes, rounded to bf16, into
    /// `into` in tile order as it is computed. Each value is the same arithmetic as SiLU of
    /// the product's f32 outputs, rounded: the same bits. `None` (nothing done) off AMX or
    /// where the shape does not allow it (`ffn` not a multiple of 32).
    pub fn gated_silu_tiles(
        &self,
        family: Bf16Family,
        input: InputRows<'_>,
        m: usize,
        into: &mut TiledRows,
    ) -> Option<()> {
        let ffn = self.cols / 2;
        if family != Bf16Family::Amx || m == 0 || ffn == 0 || !ffn.is_multiple_of(PANEL) {
            return None;
        }
        if let InputRows::Given(x) = input {
            assert_eq!(x.len(), m * self.rows, "bf16 product: input shape");
        }
        let act = into.fit(m, ffn);
        let output = amx::TileOutput::GatedSilu { act, ffn };
        amx::product(self, amx::TileInput::Rows(input), m, output);
        Some(())
    }

    /// `out = [out +] rows · W` of rows already in tile order (of `W`'s depth); AMX only.
    pub fn product_of_tiles(&self, rows: &TiledRows, out: &mut [f32], accumulate: bool) {
        assert!(
            rows.width == self.padded_pairs() * 2 && self.rows == rows.width,
            "bf16 product: tiled rows of the weight's depth"
        );
        assert_eq!(
            out.len(),
            rows.rows * self.cols,
            "bf16 product: output shape"
        );
        let input = amx::TileInput::Tiled(rows.lines.as_slice());
        let output = amx::TileOutput::Store { out, accumulate };
        amx::product(self, input, rows.rows, output);
    }

    /// [`Bf16Matrix::product`] of `m` input rows given or computed ([`InputRows`]). On AMX a
    /// computed row is made in a per-thread buffer and rounded into the tiles at once; the
    /// other families first compute all the rows.
    pub fn product_of(
        &self,
        family: Bf16Family,
        input: InputRows<'_>,
        m: usize,
        out: &mut [f32],
        accumulate: bool,
    ) {
        let (k, n, pairs) = (self.rows, self.cols, self.pairs);
        if let InputRows::Given(x) = input {
            assert_eq!(x.len(), m * k, "bf16 product: input shape");
        }
        assert_eq!(out.len(), m * n, "bf16 product: output shape");
        assert!(
            family.is_available(),
            "bf16 product: {} kernels on a CPU without them",
            family.name()
        );
        if m == 0 || n == 0 {
            return;
        }
        if family == Bf16Family::Amx {
            let output = amx::TileOutput::Store { out, accumulate };
            return amx::product(self, amx::TileInput::Rows(input), m, output);
        }
        let computed;
        let x = match input {
            InputRows::Given(x) => x,
            InputRows::Computed(row) => {
                let mut rows = vec![0f32; m * k];
                rows.par_chunks_mut(k)
                    .enumerate()
                    .for_each(|(r, dst)| row(r, dst));
                computed = rows;
                &computed[..]
            }
        };
        // The activations rounded to bf16: as one 32-bit word per pair (low half: the even
        // element) for the bf16 units and the portable loop, or as f32 (even, odd) per pair for
        // the widening family.
        let widen = family == Bf16Family::Avx512Widen;
        let (mut xp, mut xf) = (Vec::new(), Vec::new());
        if widen {
            xf = vec![0f32; m * pairs * 2];
            xf.par_chunks_mut(pairs * 2)
                .zip(x.par_chunks(k))
                .for_each(|(dst, row)| {
                    for (d, &v) in dst.iter_mut().zip(row) {
                        *d = from_bf16(to_bf16(v));
                    }
                });
        } else {
            xp = vec![0u32; m * pairs];
            xp.par_chunks_mut(pairs)
                .zip(x.par_chunks(k))
                .for_each(|(dst, row)| {
                    for (p, d) in dst.iter_mut().enumerate() {
                        let lo = to_bf16(row[2 * p]) as u32;
                        let hi = row.get(2 * p + 1).map_or(0, |&v| to_bf16(v) as u32);
                        *d = lo | (hi << 16);
                    }
                });
        }
        let panel_len = self.panel_len();
        let out_ptr = SharedOut(out.as_mut_ptr());
        (0..n.div_ceil(PANEL)).into_par_iter().for_each(|panel| {
            let w = &self.data.as_slice()[panel * panel_len..(panel + 1) * panel_len];
            let cols = PANEL.min(n - panel * PANEL);
            let mut tile = [[0f32; PANEL]; TILE_ROWS];
            for r0 in (0..m).step_by(TILE_ROWS) {
                let rows = TILE_ROWS.min(m - r0);
                let xs = match widen {
                    true => Rows::Widened(&xf[2 * r0 * pairs..2 * (r0 + rows) * pairs]),
                    false => Rows::Pairs(&xp[r0 * pairs..(r0 + rows) * pairs]),
                };
                tile_product(family, xs, pairs, rows, w, &mut tile);
                for (r, t) in tile.iter().enumerate().take(rows) {
                    let base = (r0 + r) * n + panel * PANEL;
                    // SAFETY: each panel writes only its own columns `[panel·32, panel·32 +
                    // cols)` of each row, so no two threads touch the same element, and every
                    // index is inside `out` (m × n, checked above).
                    unsafe {
                        let dst = std::slice::from_raw_parts_mut(out_ptr.get().add(base), cols);
                        if accumulate {
                            for (d, v) in dst.iter_mut().zip(t) {
                                *d += v;
                            }
                        } else {
                            dst.copy_from_slice(&t[..cols]);
                        }
                    }
                }
            }
        });
    }
}

/// Rows of bf16 activations in AMX tile order (blocks of 16 rows, steps of 32 values), made by
/// [`Bf16Matrix::gated_silu_tiles`] for the next product ([`Bf16Matrix::product_of_tiles`]):
/// the feed-forward's SiLU(gate) · up, never written out in f32. Reused from pass to pass.
pub struct TiledRows {
    lines: Lines,
    /// Rows held.
    rows: usize,
    /// Values per row, a multiple of 32.
    width: usize,
}

impl Default for TiledRows {
    fn default() -> TiledRows {
        TiledRows {
            lines: zeroed_lines(0),
            rows: 0,
            width: 0,
        }
    }
}

impl TiledRows {
    /// The buffer for `rows` rows of `width` values (grown when too small; the places a
    /// product reads are all written before it reads them).
    fn fit(&mut self, rows: usize, width: usize) -> &mut [u16] {
        let len = rows.div_ceil(amx::TILE_ROWS) * amx::tile_block_len(width / 2);
        if self.lines.len() < len {
            self.lines = zeroed_lines(len);
        }
        (self.rows, self.width) = (rows, width);
        &mut self.lines.as_mut_slice()[..len]
    }
}

impl TiledRows {
    /// A writer of `rows` rows of `width` values (a multiple of 32) into this buffer, for
    /// threads that each write their own places.
    pub fn writer(&mut self, rows: usize, width: usize) -> TileWriter<'_> {
        assert!(width.is_multiple_of(PANEL), "tiled rows: whole steps");
        let block_len = amx::tile_block_len(width / 2);
        let lines = self.fit(rows, width);
        TileWriter {
            ptr: lines.as_mut_ptr(),
            len: lines.len(),
            block_len,
            _lines: std::marker::PhantomData,
        }
    }
}

/// Writes rows into a [`TiledRows`] from several threads.
pub struct TileWriter<'a> {
    ptr: *mut u16,
    len: usize,
    /// `u16`s of one block of 16 rows.
    block_len: usize,
    _lines: std::marker::PhantomData<&'a mut [u16]>,
}

// SAFETY: the writers' callers write disjoint places (`TileWriter::write`'s contract).
unsafe impl Send for TileWriter<'_> {}
unsafe impl Sync for TileWriter<'_> {}

impl TileWriter<'_> {
    /// Values `col..col + values.len()` of row `row`, rounded to bf16 into their tile places
    /// (`col` and the length multiples of 32).
    ///
    /// # Safety
    /// No other thread writes the same places meanwhile.
    pub unsafe fn write(&self, row: usize, col: usize, values: &[f32]) {
        const STEP: usize = PANEL;
        assert!(
            col.is_multiple_of(STEP) && values.len().is_multiple_of(STEP),
            "tiled rows: whole steps"
        );
        let block = row / amx::TILE_ROWS * self.block_len + row % amx::TILE_ROWS * STEP;
        let mut rounded = [0u16; 8 * STEP];
        for (c, chunk) in values.chunks(rounded.len()).enumerate() {
            round_into(chunk, &mut rounded);
            for (s, step) in rounded[..chunk.len()].chunks_exact(STEP).enumerate() {
                let at = block + (col / STEP + c * 8 + s) * amx::TILE_ROWS * STEP;
                assert!(at + STEP <= self.len, "tiled rows: inside the buffer");
                std::ptr::copy_nonoverlapping(step.as_ptr(), self.ptr.add(at), STEP);
            }
        }
    }
}

/// A product's input rows: held, or computed one at a time (a norm or an activation fused
/// into the rounding, so the f32 rows are never all written out and read back).
#[derive(Clone, Copy)]
pub enum InputRows<'a> {
    /// The `m × k` rows, row-major.
    Given(&'a [f32]),
    /// `row(r, dst)` writes row `r`'s `k` values into `dst`; the same row must give the same
    /// values whichever thread, buffer or batch computes it.
    Computed(&'a (dyn Fn(usize, &mut [f32]) + Sync)),
}

/// One key/value head's keys and values packed for the AMX attention ([`pack_kv_amx`]).
#[cfg(target_arch = "x86_64")]
pub use amx::attention::PackedKv;

/// One key/value head's keys and values packed for the AMX attention: none exists off x86-64.
#[cfg(not(target_arch = "x86_64"))]
pub enum PackedKv {}

/// Position `j`'s keys or values of one key/value head.
pub type HeadRows<'a> = &'a dyn Fn(usize) -> &'a [f32];

/// Pack one key/value head's keys and values of positions `0..positions` (`key(j)`,
/// `value(j)`: position `j`'s `d` values) for [`attend_amx_rows`], copying what `prefix` (the
/// packing of the same head's first positions, e.g. a prefix several sequences share) holds.
/// `None` where `family` is not AMX or `d` not a multiple of 32: attention then stays f32, as
/// in the other families (their attention products in bf16 measured no faster than the f32
/// gemm's).
pub fn pack_kv_amx<'a>(
    family: Bf16Family,
    d: usize,
    positions: usize,
    key: HeadRows<'a>,
    value: HeadRows<'a>,
    prefix: Option<&PackedKv>,
) -> Option<PackedKv> {
    if family != Bf16Family::Amx || d == 0 || !d.is_multiple_of(PANEL) || positions == 0 {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        Some(PackedKv::pack(d, positions, key, value, prefix))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (key, value, prefix);
        None
    }
}

/// Causal attention of one key/value head's group of query heads on AMX tiles
/// (`amx/attention.rs`): `rows` query rows of `d`, given or computed ([`InputRows`]; a
/// computed row is rounded into the tiles at once), row `r` being new row `r % n` of its head
/// at position `prefix_len + r % n`, over `kv`'s `prefix_len + n` positions. Each output row
/// goes to `emit(r, values)` as it is done (straight to its place: no `(rows × d)` buffer is
/// written and copied again).
pub fn attend_amx_rows(
    queries: InputRows<'_>,
    rows: usize,
    n: usize,
    prefix_len: usize,
    scale: f32,
    kv: &PackedKv,
    emit: &mut dyn FnMut(usize, &[f32]),
) {
    #[cfg(target_arch = "x86_64")]
    {
        // A packing exists only for the AMX family, chosen only with the grant.
        assert!(amx::is_available(), "bf16 attention: AMX without the grant");
        // SAFETY: the grant is held (asserted).
        unsafe { amx::attention::attend(queries, rows, n, prefix_len, scale, kv, emit) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (queries, rows, n, prefix_len, scale, emit);
        match *kv {}
    }
}

/// The output pointer, shared by the panel threads (which write disjoint columns).
#[derive(Clone, Copy)]
struct SharedOut(*mut f32);
// SAFETY: the threads write disjoint elements (see `product`).
unsafe impl Send for SharedOut {}
unsafe impl Sync for SharedOut {}
impl SharedOut {
    fn get(self) -> *mut f32 {
        self.0
    }
}

/// A register tile's rows of activations, rounded to bf16.
#[derive(Clone, Copy)]
enum Rows<'a> {
    /// One 32-bit word per pair (low half: the even element), for the bf16 units and the
    /// portable loop.
    Pairs(&'a [u32]),
    /// f32 (even, odd) per pair, for the widening family.
    Widened(&'a [f32]),
}

/// One register tile: `tile[r][c] = Σ_p` (pair `p` of row `r`) · (pair `p` of column `c`), for
/// `rows ≤ 12` rows of `xs` (`pairs` pairs each, in the family's form) against one packed
/// panel `w`.
fn tile_product(
    family: Bf16Family,
    xs: Rows<'_>,
    pairs: usize,
    rows: usize,
    w: &[u16],
    tile: &mut [[f32; PANEL]; TILE_ROWS],
) {
    // One instantiation of an AVX-512 kernel per tile height (1 to 12 rows).
    #[cfg(target_arch = "x86_64")]
    macro_rules! by_rows {
        ($kernel:ident, $x:expr, $($n:literal)*) => {
            match rows {
                // SAFETY: the family is available (checked in `product`); the activations hold
                // `rows · pairs` pairs and `w` a whole panel of `pairs` pairs (the kernels
                // assert both).
                $($n => unsafe { avx512::$kernel::<$n>($x, pairs, w, tile) },)*
                _ => unreachable!("a tile has 1 to 12 rows"),
            }
        };
    }
    match (family, xs) {
        (Bf16Family::Amx, _) => unreachable!("AMX products run in `amx::product`"),
        #[cfg(target_arch = "x86_64")]
        (Bf16Family::Avx512Bf16, Rows::Pairs(xs)) => by_rows!(tile, xs, 1 2 3 4 5 6 7 8 9 10 11 12),
        #[cfg(target_arch = "x86_64")]
        (Bf16Family::Avx512Widen, Rows::Widened(xf)) => {
            by_rows!(tile_widen, xf, 1 2 3 4 5 6 7 8 9 10 11 12)
        }
        (_, Rows::Pairs(xs)) => portable::tile(xs, pairs, rows, w, tile),
        (_, Rows::Widened(_)) => unreachable!("only the widening family widens its rows"),
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{PANEL, TILE_ROWS};
    use std::arch::x86_64::*;

    /// `R` rows against one panel: 2·R accumulators of 16 lanes, one `vdpbf16ps` per
    /// accumulator and depth pair.
    ///
    /// # Safety
    /// The CPU has AVX-512F and AVX512-BF16; `xs.len() ≥ R · pairs`, `w.len() ≥ pairs · 64`.
    #[target_feature(enable = "avx512f,avx512bf16")]
    pub(super) unsafe fn tile<const R: usize>(
        xs: &[u32],
        pairs: usize,
        w: &[u16],
        tile: &mut [[f32; PANEL]; TILE_ROWS],
    ) {
        assert!(xs.len() >= R * pairs && w.len() >= pairs * PANEL * 2);
        let mut acc = [[_mm512_setzero_ps(); 2]; R];
        let (xp, wp) = (xs.as_ptr(), w.as_ptr());
        for p in 0..pairs {
            let w0: __m512bh = std::mem::transmute(_mm512_loadu_si512(wp.add(p * 64).cast()));
            let w1: __m512bh = std::mem::transmute(_mm512_loadu_si512(wp.add(p * 64 + 32).cast()));
            for (r, a) in acc.iter_mut().enumerate() {
                let x: __m512bh =
                    std::mem::transmute(_mm512_set1_epi32(*xp.add(r * pairs + p) as i32));
                a[0] = _mm512_dpbf16_ps(a[0], x, w0);
                a[1] = _mm512_dpbf16_ps(a[1], x, w1);
            }
        }
        for (t, a) in tile.iter_mut().zip(&acc) {
            _mm512_storeu_ps(t.as_mut_ptr(), a[0]);
            _mm512_storeu_ps(t.as_mut_ptr().add(16), a[1]);
        }
    }

    /// `R` rows against one panel on f32 FMAs: each 32-bit word of the panel widens to its
    /// even element (`word << 16`) and its odd one (`word & 0xffff0000`), and each accumulator
    /// adds the odd product, then the even one, as `vdpbf16ps` does.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `xf.len() ≥ 2 · R · pairs`, `w.len() ≥ pairs · 64`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn tile_widen<const R: usize>(
        xf: &[f32],
        pairs: usize,
        w: &[u16],
        tile: &mut [[f32; PANEL]; TILE_ROWS],
    ) {
        assert!(xf.len() >= 2 * R * pairs && w.len() >= pairs * PANEL * 2);
        let mut acc = [[_mm512_setzero_ps(); 2]; R];
        let (xp, wp) = (xf.as_ptr(), w.as_ptr());
        let high = _mm512_set1_epi32(0xffff_0000u32 as i32);
        for p in 0..pairs {
            let v0 = _mm512_loadu_si512(wp.add(p * 64).cast());
            let v1 = _mm512_loadu_si512(wp.add(p * 64 + 32).cast());
            let even = [
                _mm512_castsi512_ps(_mm512_slli_epi32::<16>(v0)),
                _mm512_castsi512_ps(_mm512_slli_epi32::<16>(v1)),
            ];
            let odd = [
                _mm512_castsi512_ps(_mm512_and_si512(v0, high)),
                _mm512_castsi512_ps(_mm512_and_si512(v1, high)),
            ];
            for (r, a) in acc.iter_mut().enumerate() {
                let x0 = _mm512_set1_ps(*xp.add(2 * (r * pairs + p)));
                let x1 = _mm512_set1_ps(*xp.add(2 * (r * pairs + p) + 1));
                for h in 0..2 {
                    a[h] = _mm512_fmadd_ps(x1, odd[h], a[h]);
                    a[h] = _mm512_fmadd_ps(x0, even[h], a[h]);
                }
            }
        }
        for (t, a) in tile.iter_mut().zip(&acc) {
            _mm512_storeu_ps(t.as_mut_ptr(), a[0]);
            _mm512_storeu_ps(t.as_mut_ptr().add(16), a[1]);
        }
    }
}

mod portable {
    use super::{from_bf16, PANEL, TILE_ROWS};

    /// The same sums as `vdpbf16ps` in plain f32 (module doc of `bf16`), vectorised for AVX2
    /// where the CPU has it.
    pub(super) fn tile(
        xs: &[u32],
        pairs: usize,
        rows: usize,
        w: &[u16],
        tile: &mut [[f32; PANEL]; TILE_ROWS],
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA.
            return unsafe { tile_avx2(xs, pairs, rows, w, tile) };
        }
        tile_any(xs, pairs, rows, w, tile)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn tile_avx2(
        xs: &[u32],
        pairs: usize,
        rows: usize,
        w: &[u16],
        tile: &mut [[f32; PANEL]; TILE_ROWS],
    ) {
        tile_any(xs, pairs, rows, w, tile)
    }

    #[inline(always)]
    fn tile_any(
        xs: &[u32],
        pairs: usize,
        rows: usize,
        w: &[u16],
        tile: &mut [[f32; PANEL]; TILE_ROWS],
    ) {
        for t in tile.iter_mut().take(rows) {
            *t = [0.0; PANEL];
        }
        let (mut even, mut odd) = ([0f32; PANEL], [0f32; PANEL]);
        for p in 0..pairs {
            let wp = &w[p * PANEL * 2..(p + 1) * PANEL * 2];
            for c in 0..PANEL {
                even[c] = from_bf16(wp[2 * c]);
                odd[c] = from_bf16(wp[2 * c + 1]);
            }
            for (r, t) in tile.iter_mut().enumerate().take(rows) {
                let word = xs[r * pairs + p];
                let (x0, x1) = (from_bf16(word as u16), from_bf16((word >> 16) as u16));
                for c in 0..PANEL {
                    // Odd element first, as `vdpbf16ps`; each product is exact in f32.
                    t[c] += x1 * odd[c];
                    t[c] += x0 * even[c];
                }
            }
        }
    }
}

/// Fixed, non-trivial operands of an `m × k · k × n` timing (values do not change the speed).
fn timing_operands(m: usize, k: usize, n: usize) -> (Vec<f32>, Bf16Matrix) {
    let x = (0..m * k)
        .map(|i| ((i % 97) as f32 - 48.0) / 97.0)
        .collect();
    let w: Vec<f32> = (0..k * n)
        .map(|i| ((i % 89) as f32 - 44.0) / 89.0)
        .collect();
    (x, Bf16Matrix::from_row_major(&w, k, n))
}

/// The speed of `family` on an `m × k · k × n` product with bf16 weights, in GFLOP/s (2·m·k·n
/// per product), on every rayon thread, repeated for at least `min_seconds` after one warm-up:
/// the benchmark's measured bf16 limit, beside `kernels::product_gflops`.
pub fn product_gflops(family: Bf16Family, m: usize, k: usize, n: usize, min_seconds: f64) -> f64 {
    let (x, packed) = timing_operands(m, k, n);
    let mut out = vec![0f32; m * n];
    packed.product(family, &x, m, &mut out, false);
    let started = std::time::Instant::now();
    let mut runs = 0u64;
    while runs == 0 || started.elapsed().as_secs_f64() < min_seconds {
        packed.product(family, &x, m, &mut out, false);
        runs += 1;
    }
    2.0 * (m * k * n) as f64 * runs as f64 / started.elapsed().as_secs_f64() / 1e9
}

#[cfg(test)]
mod tests;
