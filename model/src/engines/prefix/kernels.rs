//! The f32 matrix products of the forward pass, on the `gemm` crate's kernels, and which of its
//! kernel families runs them.
//!
//! One binary serves every x86-64-v3 machine (`.cargo/config.toml`): the AVX2/FMA kernels are
//! always there, the AVX-512 ones are compiled in (`gemm-f32/x86-v4`) and chosen at run time
//! where the CPU has AVX-512F. The family can also be forced, by [`KernelFamily`] in code (the
//! agreement tests run every family the machine has) or by `C2S_GEMM_KERNELS` (`avx2`,
//! `avx512`, `auto`) for a whole process: an AVX-512 host can so run exactly what an
//! AVX2-only host runs.
//!
//! Calling a family directly goes through `gemm_common::gemm::gemm_basic_generic` with
//! `gemm-f32`'s microkernels, the same instantiation `gemm::gemm` dispatches to (its
//! `gemm_def!`: AVX2/FMA packs of 8 floats, AVX-512 packs of 16), after the same
//! destination-major transpose `gemm::gemm` applies.

use gemm::Parallelism;
use gemm_common::simd::MixedSimd;

/// A family of f32 kernels of the `gemm` crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelFamily {
    /// 256-bit AVX2 with FMA (every x86-64-v3 CPU).
    Avx2Fma,
    /// 512-bit AVX-512F.
    Avx512,
    /// The crate's own choice (other architectures: NEON, scalar).
    CrateDispatch,
}

/// The environment variable that forces a family for the whole process.
pub const KERNELS_ENV: &str = "C2S_GEMM_KERNELS";

/// A kernel family forced by an environment variable (`C2S_GEMM_KERNELS`, `C2S_BF16_KERNELS`)
/// that this process cannot use: the error names the variable and its value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelChoiceError {
    /// The value names no family.
    #[error("{variable}={value}: unknown {kind} family ({choices})")]
    Unknown {
        /// The environment variable read (`C2S_GEMM_KERNELS` or `C2S_BF16_KERNELS`).
        variable: &'static str,
        /// Its value, as set.
        value: String,
        /// "kernel" or "bf16 kernel".
        kind: &'static str,
        /// The values the variable takes.
        choices: &'static str,
    },
    /// The family exists, but this CPU (or the OS's grant) cannot run it.
    #[error("{variable}={value}: this CPU cannot run the {family} kernels (it has: {available})")]
    Unavailable {
        /// The environment variable that forced the family.
        variable: &'static str,
        /// Its value, as set.
        value: String,
        /// The family's own name (what [`KernelFamily::name`] or `Bf16Family::name` gives).
        family: &'static str,
        /// The families it can run, comma-separated.
        available: String,
    },
}

impl KernelChoiceError {
    /// `variable` named `family` (by its own name), which this CPU cannot run; it can run
    /// `available`.
    pub(crate) fn unavailable<'a>(
        variable: &'static str,
        family: &'static str,
        available: impl Iterator<Item = &'a str>,
    ) -> KernelChoiceError {
        KernelChoiceError::Unavailable {
            variable,
            value: family.to_string(),
            family,
            available: available.collect::<Vec<_>>().join(", "),
        }
    }
}

impl KernelFamily {
    /// The family's name, as `C2S_GEMM_KERNELS` and the logs spell it (`crate`: the crate's own
    /// dispatch, which the variable cannot force).
    pub fn name(self) -> &'static str {
        match self {
            KernelFamily::Avx2Fma => "avx2",
            KernelFamily::Avx512 => "avx512",
            KernelFamily::CrateDispatch => "crate",
        }
    }

    /// Whether this CPU can run the family.
    pub fn is_available(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            KernelFamily::Avx2Fma => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "x86_64")]
            KernelFamily::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            KernelFamily::Avx2Fma | KernelFamily::Avx512 => false,
            KernelFamily::CrateDispatch => true,
        }
    }

    /// Every family this CPU can run, widest first.
    pub fn available() -> Vec<KernelFamily> {
        [
            KernelFamily::Avx512,
            KernelFamily::Avx2Fma,
            KernelFamily::CrateDispatch,
        ]
        .into_iter()
        .filter(|f| f.is_available())
        .collect()
    }

    /// The widest family of this CPU (what `gemm::gemm` itself would pick).
    pub fn detected() -> KernelFamily {
        Self::available()
            .into_iter()
            .next()
            .unwrap_or(KernelFamily::CrateDispatch)
    }

    /// The family of this process: `C2S_GEMM_KERNELS` when set (an unknown name, or a family
    /// the CPU lacks, is an error naming the variable), else [`KernelFamily::detected`].
    pub fn from_env() -> Result<KernelFamily, KernelChoiceError> {
        Self::named(std::env::var(KERNELS_ENV).ok().as_deref())
    }

    /// The family a `C2S_GEMM_KERNELS` value names (`None`: unset).
    pub fn named(name: Option<&str>) -> Result<KernelFamily, KernelChoiceError> {
        let Some(name) = name else {
            return Ok(Self::detected());
        };
        let family = match name {
            "" | "auto" => return Ok(Self::detected()),
            "avx2" => KernelFamily::Avx2Fma,
            "avx512" => KernelFamily::Avx512,
            other => {
                return Err(KernelChoiceError::Unknown {
                    variable: KERNELS_ENV,
                    value: other.to_string(),
                    kind: "kernel",
                    choices: "avx2, avx512, auto",
                })
            }
        };
        if !family.is_available() {
            return Err(KernelChoiceError::unavailable(
                KERNELS_ENV,
                family.name(),
                Self::available().iter().map(|f| f.name()),
            ));
        }
        Ok(family)
    }

    /// `dst := alpha·dst + beta·lhs·rhs` (`alpha` read only with `read_dst`), on this family.
    ///
    /// # Safety
    /// As `gemm::gemm`: every operand pointer with its strides addresses valid memory for the
    /// given shapes, `dst` aliases no operand, the strides are non-negative, and the family is
    /// available on this CPU (the `try_new` below checks it and panics otherwise).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn gemm(
        self,
        m: usize,
        n: usize,
        k: usize,
        dst: *mut f32,
        dst_cs: isize,
        dst_rs: isize,
        read_dst: bool,
        lhs: *const f32,
        lhs_cs: isize,
        lhs_rs: isize,
        rhs: *const f32,
        rhs_cs: isize,
        rhs_rs: isize,
        alpha: f32,
        beta: f32,
        parallelism: Parallelism,
    ) {
        #[cfg(target_arch = "x86_64")]
        if self != KernelFamily::CrateDispatch {
            // gemm::gemm's normalization for non-negative strides: the microkernels prefer a
            // column-major destination, so a row-major one is computed as its transpose.
            let (m, n, dst_cs, dst_rs, lhs, lhs_cs, lhs_rs, rhs, rhs_cs, rhs_rs) =
                if dst_cs.abs() < dst_rs.abs() {
                    (
                        n, m, dst_rs, dst_cs, rhs, rhs_rs, rhs_cs, lhs, lhs_rs, lhs_cs,
                    )
                } else {
                    (
                        m, n, dst_cs, dst_rs, lhs, lhs_cs, lhs_rs, rhs, rhs_cs, rhs_rs,
                    )
                };
            // One instantiation of gemm's generic driver: `$kernels` (a gemm-f32 microkernel
            // module), its SIMD token `$simd` and its pack width `$n` (gemm_def!'s constants).
            macro_rules! family_gemm {
                ($($kernels:ident)::+, $simd:ty, $n:literal, $needs:literal) => {{
                    use $($kernels)::+ as kern;
                    let simd = <$simd as MixedSimd<f32, f32, f32, f32>>::try_new()
                        .expect(concat!($needs, " kernels on a CPU without ", $needs));
                    gemm_common::gemm::gemm_basic_generic::<
                        _,
                        f32,
                        $n,
                        { kern::MR_DIV_N * $n },
                        { kern::NR },
                        { kern::MR_DIV_N },
                        { kern::H_M },
                        { kern::H_N },
                    >(
                        simd,
                        m,
                        n,
                        k,
                        dst,
                        dst_cs,
                        dst_rs,
                        read_dst,
                        lhs,
                        lhs_cs,
                        lhs_rs,
                        rhs,
                        rhs_cs,
                        rhs_rs,
                        alpha,
                        beta,
                        false,
                        false,
                        false,
                        |a: f32, b: f32, c: f32| a * b + c,
                        &kern::UKR,
                        &kern::H_UKR,
                        false,
                        parallelism,
                    )
                }};
            }
            match self {
                KernelFamily::Avx512 => family_gemm!(
                    gemm_f32::microkernel::avx512f::f32,
                    gemm_common::simd::V4,
                    16,
                    "AVX-512F"
                ),
                _ => family_gemm!(
                    gemm_f32::microkernel::fma::f32,
                    gemm_common::simd::V3,
                    8,
                    "AVX2/FMA"
                ),
            }
            return;
        }
        gemm::gemm(
            m,
            n,
            k,
            dst,
            dst_cs,
            dst_rs,
            read_dst,
            lhs,
            lhs_cs,
            lhs_rs,
            rhs,
            rhs_cs,
            rhs_rs,
            alpha,
            beta,
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// The gemm parallelism of the big products: every rayon thread.
pub(super) fn parallel() -> Parallelism {
    match rayon::current_num_threads() {
        0 | 1 => Parallelism::None,
        n => Parallelism::Rayon(n),
    }
}

/// A read-only matrix view into a slice: element (i, j) at `offset + i·row_stride + j·col_stride`.
#[derive(Clone, Copy)]
pub(super) struct View<'a> {
    pub(super) data: &'a [f32],
    pub(super) offset: usize,
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) row_stride: usize,
    pub(super) col_stride: usize,
}

impl<'a> View<'a> {
    /// A contiguous row-major `rows × cols` matrix.
    pub(super) fn dense(data: &'a [f32], rows: usize, cols: usize) -> View<'a> {
        View {
            data,
            offset: 0,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// The same elements read transposed.
    pub(super) fn t(self) -> View<'a> {
        View {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// Every element lies inside the slice.
    fn in_bounds(&self) -> bool {
        self.rows == 0
            || self.cols == 0
            || self.offset + (self.rows - 1) * self.row_stride + (self.cols - 1) * self.col_stride
                < self.data.len()
    }
}

/// The depth of one `gemm` call: no deeper than the crate's smallest K block (512), so that
/// the crate reduces each call in one pass and the order of every dot product is fixed here.
pub(super) const K_BLOCK: usize = 512;

/// `out (m × n, row-major) = [out +] scale · lhs (m × k) · rhs (k × n)` on the `gemm` crate's
/// kernels; every view is bounds-checked first, so the one `unsafe` call below is sound.
///
/// Batch invariance: a row's result must not depend on which other rows share the product
/// (the rows of other sequences in a ragged batch, or a prefix computed earlier or now). The
/// crate picks its K blocking from m and n (`kc = min(k, 512)` for m, n ≤ 64, else from the
/// cache sizes) and switches to GEMV kernels for one row or one column; either changes the
/// order of the f32 additions and so the last bits (seen on AVX2: up to 3e-6 in probability
/// between one and two workers). Here the depth is split into fixed blocks of [`K_BLOCK`]
/// accumulated in order, and one-row or one-column products are padded to two, so every
/// element is reduced the same way whatever m is.
pub(super) fn gemm_into(
    kernels: KernelFamily,
    out: &mut [f32],
    accumulate: bool,
    lhs: View<'_>,
    rhs: View<'_>,
    scale: f32,
    parallelism: Parallelism,
) {
    let (m, k, n) = (lhs.rows, lhs.cols, rhs.cols);
    assert_eq!(rhs.rows, k, "gemm: inner dimensions");
    assert_eq!(out.len(), m * n, "gemm: output shape");
    assert!(lhs.in_bounds() && rhs.in_bounds(), "gemm: operand bounds");
    if m == 0 || n == 0 {
        return;
    }
    if m == 1 || n == 1 {
        // Two rows (a zero row) or two columns (a zero column) keep the tiled kernels.
        let (mp, np) = (m.max(2), n.max(2));
        let mut l = vec![0f32; mp * k];
        for i in 0..m {
            for j in 0..k {
                l[i * k + j] = lhs.data[lhs.offset + i * lhs.row_stride + j * lhs.col_stride];
            }
        }
        let padded_rhs;
        let r = if n == 1 {
            let mut r = vec![0f32; k * np];
            for i in 0..k {
                r[i * np] = rhs.data[rhs.offset + i * rhs.row_stride];
            }
            padded_rhs = r;
            View::dense(&padded_rhs, k, np)
        } else {
            rhs
        };
        let mut o = vec![0f32; mp * np];
        if accumulate {
            for i in 0..m {
                o[i * np..i * np + n].copy_from_slice(&out[i * n..(i + 1) * n]);
            }
        }
        gemm_blocked(
            kernels,
            &mut o,
            accumulate,
            View::dense(&l, mp, k),
            r,
            scale,
            parallelism,
        );
        for i in 0..m {
            out[i * n..(i + 1) * n].copy_from_slice(&o[i * np..i * np + n]);
        }
        return;
    }
    gemm_blocked(kernels, out, accumulate, lhs, rhs, scale, parallelism);
}

/// [`gemm_into`] for m, n ≥ 2: one crate call per depth block of at most [`K_BLOCK`], each
/// accumulating onto the last.
fn gemm_blocked(
    kernels: KernelFamily,
    out: &mut [f32],
    accumulate: bool,
    lhs: View<'_>,
    rhs: View<'_>,
    scale: f32,
    parallelism: Parallelism,
) {
    let (m, k, n) = (lhs.rows, lhs.cols, rhs.cols);
    if k == 0 {
        // An empty product adds nothing.
        if !accumulate {
            out.fill(0.0);
        }
        return;
    }
    for k0 in (0..k).step_by(K_BLOCK) {
        let kb = K_BLOCK.min(k - k0);
        let l = View {
            offset: lhs.offset + k0 * lhs.col_stride,
            cols: kb,
            ..lhs
        };
        let r = View {
            offset: rhs.offset + k0 * rhs.row_stride,
            rows: kb,
            ..rhs
        };
        let read_dst = accumulate || k0 > 0;
        // SAFETY: `out` is exactly m × n contiguous floats and, being a unique borrow, aliases
        // neither operand; the block views lie inside the operands checked by the caller.
        unsafe {
            kernels.gemm(
                m,
                n,
                kb,
                out.as_mut_ptr(),
                1,
                n as isize,
                read_dst,
                l.data.as_ptr().add(l.offset),
                l.col_stride as isize,
                l.row_stride as isize,
                r.data.as_ptr().add(r.offset),
                r.col_stride as isize,
                r.row_stride as isize,
                1.0,
                scale,
                parallelism,
            );
        }
    }
}

/// The threads every big product runs on (rayon's pool).
pub fn product_threads() -> usize {
    rayon::current_num_threads()
}

/// The speed of this family on an `m × k · k × n` product, in GFLOP/s (2·m·k·n per product):
/// the same blocked, padded product the forward pass runs, on every rayon thread, repeated
/// for at least `min_seconds` after one warm-up. The benchmark's measured f32 limit.
pub fn product_gflops(family: KernelFamily, m: usize, k: usize, n: usize, min_seconds: f64) -> f64 {
    // Fixed, non-trivial operands (values do not change f32 FMA speed).
    let lhs: Vec<f32> = (0..m * k)
        .map(|i| ((i % 97) as f32 - 48.0) / 97.0)
        .collect();
    let rhs: Vec<f32> = (0..k * n)
        .map(|i| ((i % 89) as f32 - 44.0) / 89.0)
        .collect();
    let mut out = vec![0f32; m * n];
    let once = |out: &mut [f32]| {
        gemm_into(
            family,
            out,
            false,
            View::dense(&lhs, m, k),
            View::dense(&rhs, k, n),
            1.0,
            parallel(),
        )
    };
    once(&mut out);
    let started = std::time::Instant::now();
    let mut runs = 0u64;
    while runs == 0 || started.elapsed().as_secs_f64() < min_seconds {
        once(&mut out);
        runs += 1;
    }
    let seconds = started.elapsed().as_secs_f64();
    2.0 * (m * k * n) as f64 * runs as f64 / seconds / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn random(len: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<f32> {
        (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect()
    }

    /// `x (m × k) · w (k × n)` on `family`.
    fn product(
        family: KernelFamily,
        x: &[f32],
        w: &[f32],
        m: usize,
        k: usize,
        n: usize,
    ) -> Vec<f32> {
        let mut out = vec![0f32; m * n];
        gemm_into(
            family,
            &mut out,
            false,
            View::dense(x, m, k),
            View::dense(w, k, n),
            1.0,
            parallel(),
        );
        out
    }

    /// Every family this CPU has computes the product (to f32 accuracy against f64), over
    /// shapes that cross the depth block and the one-row / one-column padding.
    #[test]
    fn every_available_family_computes_the_product() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for &(m, k, n) in &[
            (1, 64, 1),
            (1, 576, 192),
            (3, 1100, 17),
            (70, 513, 65),
            (2, 8, 1),
        ] {
            let x = random(m * k, &mut rng);
            let w = random(k * n, &mut rng);
            for family in KernelFamily::available() {
                let got = product(family, &x, &w, m, k, n);
                for i in 0..m {
                    for j in 0..n {
                        let want: f64 = (0..k)
                            .map(|t| x[i * k + t] as f64 * w[t * n + j] as f64)
                            .sum();
                        let d = (got[i * n + j] as f64 - want).abs();
                        assert!(
                            d <= 1e-4 * (1.0 + want.abs()),
                            "{} ({m}×{k}×{n}) [{i},{j}]: {} vs {want}",
                            family.name(),
                            got[i * n + j]
                        );
                    }
                }
            }
        }
    }

    /// Batch invariance on each family: a row's result is bit-identical whether it is computed
    /// alone, with two rows, or inside a batch of 70 (the fixed depth blocking and the
    /// padding of one-row products hold for every family).
    #[test]
    fn a_rows_result_does_not_depend_on_the_other_rows_on_any_family() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let (k, n) = (1100, 96);
        let x = random(70 * k, &mut rng);
        let w = random(k * n, &mut rng);
        for family in KernelFamily::available() {
            let batch = product(family, &x, &w, 70, k, n);
            let pair = product(family, &x[..2 * k], &w, 2, k, n);
            let alone = product(family, &x[..k], &w, 1, k, n);
            assert_eq!(
                &batch[..n],
                &alone[..],
                "{}: batch of 70 vs alone",
                family.name()
            );
            assert_eq!(
                &pair[..n],
                &alone[..],
                "{}: two rows vs alone",
                family.name()
            );
        }
    }

    /// `C2S_GEMM_KERNELS`: auto, avx2, avx512; an unknown name or a family the CPU lacks is an
    /// error that names the variable.
    #[test]
    fn the_environment_names_a_family() {
        assert_eq!(KernelFamily::named(None), Ok(KernelFamily::detected()));
        assert_eq!(
            KernelFamily::named(Some("auto")),
            Ok(KernelFamily::detected())
        );
        let e = KernelFamily::named(Some("avx3")).unwrap_err().to_string();
        assert!(e.contains(KERNELS_ENV) && e.contains("avx3"), "{e}");
        for (name, family) in [
            ("avx2", KernelFamily::Avx2Fma),
            ("avx512", KernelFamily::Avx512),
        ] {
            match KernelFamily::named(Some(name)) {
                Ok(f) => assert!(f == family && f.is_available()),
                Err(e) => assert!(
                    !family.is_available() && e.to_string().contains("cannot run"),
                    "{e}"
                ),
            }
        }
        #[cfg(target_arch = "x86_64")]
        assert!(
            KernelFamily::available().contains(&KernelFamily::Avx2Fma),
            "an x86-64-v3 build runs on AVX2/FMA CPUs only"
        );
    }
}
