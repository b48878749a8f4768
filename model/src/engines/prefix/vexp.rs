//! `exp` over a slice of f32, vectorised: the softmax of attention and the SiLU of the MLP call
//! it for every score and every hidden unit, where libm's scalar `expf` was 5.9% of a prefill
//! profile.
//!
//! The method is Cephes' `expf` (S. L. Moshier, *Methods and Programs for Mathematical
//! Functions*, 1989): `exp(x) = 2^n · exp(r)` with `n = round(x / ln 2)` and `r = x − n·ln 2`
//! (ln 2 split in two parts so that `r` is exact), `exp(r)` by its degree-7 minimax polynomial
//! on `|r| ≤ ln 2 / 2`, and `2^n` built in the exponent bits. Its relative error is within
//! 2ε (ε = 2^-23; the test measures it against f64 over the whole range). Written without branches, it compiles to
//! vector code; its AVX-512 and AVX2 instantiations (`widest_vectors!`) run the same operations (Rust never
//! fuses a multiply and an add on its own), so every CPU gets the same bits.
//!
//! Inputs are clamped to `[-87.3, 88.3]`, which keeps `n` in `[-126, 127]`: below, the result
//! would be subnormal (the clamp returns ≈ 1.2e-38 instead, nothing beside the softmax's 1 at
//! its maximum); above 88.3 it returns e^88.3 ≈ 2.2e38, where the true value overflows from
//! 88.72 on (SiLU's `x / (1 + e^{-x})` is then a tiny negative instead of -0). NaN stays NaN.

/// `x ← exp(x)` for every element.
pub fn exp_in_place(xs: &mut [f32]) {
    widest_vectors!(exp_slice(xs: &mut [f32]))
}

#[inline(always)]
fn exp_slice(xs: &mut [f32]) {
    for x in xs.iter_mut() {
        *x = exp(*x);
    }
}

/// SiLU(gate) · up = `gate / (1 + e^-gate) · up` with this module's [`exp`]: the feed-forward's
/// gated activation, one definition for the f32 rows and the bf16 products' epilogue (so both
/// give the same bits).
#[inline(always)]
pub(crate) fn silu_gate(gate: f32, up: f32) -> f32 {
    gate / (1.0 + exp(-gate)) * up
}

/// Cephes' `expf` without branches (module doc).
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Adding and removing 1.5 · 2^23 rounds to the nearest integer (ties to even).
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.3, 88.3);
    let t = x * std::f32::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let mut p = 1.987_569_1e-4_f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5; // Cephes: 5.0000001201e-1, which is 0.5 in f32
    let y = p * (r * r) + r + 1.0;
    // 2^n from `t`'s bits: t = 1.5 · 2^23 + n has the bits 0x4B40_0000 + n. (`n as i32` is a
    // saturating cast, which does not vectorise: it cost a tenth of a bf16 prefill.)
    y * f32::from_bits(((t.to_bits() as i32 - 0x4B40_0000 + 127) as u32) << 23)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_within_two_epsilon_of_the_true_value() {
        let mut xs: Vec<f32> = (0..2_000_001)
            .map(|i| -87.3 + (88.3 + 87.3) * i as f32 / 2_000_000.0)
            .collect();
        xs.extend([0.0, -0.0, 1.0, -1.0, 1e-8, -1e-8, 0.5, 20.0, -20.0]);
        let mut got = xs.clone();
        exp_in_place(&mut got);
        let mut scalar = xs.clone();
        exp_slice(&mut scalar);
        for ((&x, &y), &s) in xs.iter().zip(&got).zip(&scalar) {
            assert_eq!(
                y.to_bits(),
                s.to_bits(),
                "vector and scalar code differ at {x}"
            );
            let want = (x as f64).exp();
            let ulp = (want as f32).abs() * f32::EPSILON;
            assert!(
                ((y as f64) - want).abs() <= 2.0 * ulp as f64,
                "exp({x}) = {y}, want {want}"
            );
        }
    }

    #[test]
    fn out_of_range_inputs_are_clamped_and_nan_stays_nan() {
        let mut xs = [
            -1000.0f32,
            f32::NEG_INFINITY,
            1000.0,
            f32::INFINITY,
            f32::NAN,
        ];
        exp_in_place(&mut xs);
        assert!(xs[0] > 0.0 && xs[0] < 1.3e-38 && xs[1] == xs[0]);
        assert!(xs[2].is_finite() && xs[2] > 1e38 && xs[3] == xs[2]);
        assert!(xs[4].is_nan());
    }
}
