//! Causal attention of one key/value head's group of query heads on AMX tiles, in one task
//! (no rayon inside: the forward pass already runs the groups in parallel).
//!
//! **Numbers.** As the bf16 products: the queries, keys and values are rounded to bf16 (as
//! transformers' bf16 forward holds them), each score is an f32 sum of exact bf16 products,
//! the scale and the softmax run in f32, and the probabilities are rounded to bf16 before
//! `P·V` (as torch's CPU flash attention does for a bf16 model), which sums in f32 again.
//!
//! **Causality.** The stacked query rows go in blocks of 32. A block computes scores only
//! against the 32-key panels its last visible position reaches, and `P·V` runs over the same
//! depth: a fresh prefill skips about half of both products. A row's masked scores inside a
//! computed panel are never read; its probabilities there are zeros. Every row is an
//! independent lane of both products, so a row's output does not depend on the others.
//!
//! **Layouts** (`super`'s): the keys are packed as the panels of `Kᵀ` (32 keys per panel,
//! depth pairs of the head's dimensions), the values as the panels of `V` (32 dimensions per
//! panel, depth pairs of positions); the queries and the probabilities are laid out tile by
//! tile (16 rows × 32 values per step).

use super::tiles::{block, release, TileConfig};
use super::{BLOCK_ROWS, TILE_ROWS};
use crate::engines::prefix::bf16::{round_into, to_bf16, zeroed_lines, Lines, PANEL, STEP_PAIRS};
use crate::engines::prefix::vexp::exp;

/// Values of one step of one 16-row tile: 16 rows × 32.
const STEP_VALUES: usize = TILE_ROWS * STEP_PAIRS * 2;

/// One group's attention: `queries` is `(rows × d)` (row `r` is new row `r % n` of its head,
/// at position `prefix_len + r % n`), `key(j)` and `value(j)` are position `j`'s `d` values for
/// `j < prefix_len + n`; writes `out` (`rows × d`).
///
/// # Safety
/// The process holds the tile grant; `d` is a multiple of 32.
#[allow(clippy::too_many_arguments)]
pub(in crate::engines::prefix::bf16) unsafe fn attend<'a>(
    queries: &[f32],
    n: usize,
    d: usize,
    prefix_len: usize,
    scale: f32,
    key: impl Fn(usize) -> &'a [f32],
    value: impl Fn(usize) -> &'a [f32],
    out: &mut [f32],
) {
    let rows = queries.len() / d;
    let t = prefix_len + n;
    assert!(d.is_multiple_of(PANEL) && out.len() == rows * d && n > 0);
    let t_pad = t.div_ceil(PANEL) * PANEL;
    let q_steps = d / PANEL;
    let p_steps = t_pad / PANEL;
    let q_tiles = tiled(queries, rows, d);
    let keys = key_panels(&key, t, t_pad, d);
    let values = value_panels(&value, t, t_pad, d);
    let mut scores = vec![0f32; BLOCK_ROWS * t_pad];
    let mut probs = zeroed_lines(rows.div_ceil(TILE_ROWS) * p_steps * STEP_VALUES);
    let mut loaded = 0;
    for r0 in (0..rows).step_by(BLOCK_ROWS) {
        let block_rows = BLOCK_ROWS.min(rows - r0);
        let two = block_rows > TILE_ROWS;
        // The last position any row of the block sees, and the 32-key panels that reach it.
        let reach = (r0..r0 + block_rows)
            .map(|r| prefix_len + r % n + 1)
            .max()
            .unwrap_or(t);
        let panels = reach.div_ceil(PANEL);
        if block_rows != loaded {
            TileConfig::for_rows(block_rows).load();
            loaded = block_rows;
        }
        // Scores of the block's rows against the reached panels, row stride `t_pad`.
        let q_tile_bytes = q_steps * STEP_VALUES * 2;
        let a = q_tiles
            .as_ptr()
            .cast::<u8>()
            .add(r0 / TILE_ROWS * q_tile_bytes);
        let panel_bytes = q_steps * STEP_PAIRS * PANEL * 4;
        for p in 0..panels {
            let b = keys.as_ptr().cast::<u8>().add(p * panel_bytes);
            let c = scores.as_mut_ptr().add(p * PANEL).cast();
            block(a, q_tile_bytes, b, q_steps, c, t_pad * 4, two);
        }
        // Softmax of each row over what it sees, rounded into the probabilities' tiles.
        for (i, row) in scores.chunks_exact_mut(t_pad).take(block_rows).enumerate() {
            let r = r0 + i;
            let seen = &mut row[..prefix_len + r % n + 1];
            let tile = &mut probs[r / TILE_ROWS * p_steps * STEP_VALUES..];
            softmax_into_tile(seen, scale, &mut tile[(r % TILE_ROWS) * PANEL..]);
        }
        // P·V over the reached depth, straight into the output rows.
        let p_tile_bytes = p_steps * STEP_VALUES * 2;
        let a = probs
            .as_ptr()
            .cast::<u8>()
            .add(r0 / TILE_ROWS * p_tile_bytes);
        let panel_bytes = t_pad / 2 * PANEL * 4;
        for p in 0..d / PANEL {
            let b = values.as_ptr().cast::<u8>().add(p * panel_bytes);
            let c = out.as_mut_ptr().add(r0 * d + p * PANEL).cast();
            block(a, p_tile_bytes, b, panels, c, d * 4, two);
        }
    }
    release();
}

/// Lanes of the vectorised reductions (one AVX-512 register).
const LANES: usize = 16;

/// The softmax of one row of scores, scaled by `scale`, rounded to bf16 into its row of a
/// probabilities' tile (`tile[s·512 + c]` for value `32·s + c`): compiled for AVX-512 or AVX2
/// where the CPU has them (the same operations, so the same bits).
fn softmax_into_tile(scores: &mut [f32], scale: f32, tile: &mut [u16]) {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx512bw")]
        unsafe fn avx512(scores: &mut [f32], scale: f32, tile: &mut [u16]) {
            softmax_row(scores, scale, tile)
        }
        #[target_feature(enable = "avx2")]
        unsafe fn avx2(scores: &mut [f32], scale: f32, tile: &mut [u16]) {
            softmax_row(scores, scale, tile)
        }
        if std::arch::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU has AVX-512F and AVX-512BW.
            return unsafe { avx512(scores, scale, tile) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            return unsafe { avx2(scores, scale, tile) };
        }
    }
    softmax_row(scores, scale, tile)
}

/// [`softmax_into_tile`]'s three passes: scale and maximum, `exp(v − max)` and its sum, then
/// `v / sum` rounded. The maximum and the sum run in [`LANES`] lanes (a single running value
/// is a chain the compiler cannot vectorise; the maximum is exact in any order, the sum is
/// this attention's own order).
#[inline(always)]
fn softmax_row(scores: &mut [f32], scale: f32, tile: &mut [u16]) {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let mut chunks = scores.chunks_exact_mut(LANES);
    for chunk in &mut chunks {
        for (m, v) in lanes.iter_mut().zip(chunk) {
            *v *= scale;
            *m = m.max(*v);
        }
    }
    let mut max = lanes.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    for v in chunks.into_remainder() {
        *v *= scale;
        max = max.max(*v);
    }
    let mut sums = [0f32; LANES];
    let mut chunks = scores.chunks_exact_mut(LANES);
    for chunk in &mut chunks {
        for (s, v) in sums.iter_mut().zip(chunk) {
            *v = exp(*v - max);
            *s += *v;
        }
    }
    let mut sum: f32 = sums.iter().sum();
    for v in chunks.into_remainder() {
        *v = exp(*v - max);
        sum += *v;
    }
    let inv = 1.0 / sum;
    for (step, values) in scores.chunks(PANEL).enumerate() {
        let dst = &mut tile[step * STEP_VALUES..step * STEP_VALUES + values.len()];
        for (d, &v) in dst.iter_mut().zip(values) {
            *d = to_bf16(v * inv);
        }
    }
}

/// `x` (`rows × k`, `k` a multiple of 32) rounded to bf16 tile by tile: per 16 rows, per step
/// of 32 values, 16 rows of 32; rows past `rows` are zeros.
fn tiled(x: &[f32], rows: usize, k: usize) -> Lines {
    let steps = k / PANEL;
    let mut tiles = zeroed_lines(rows.div_ceil(TILE_ROWS) * steps * STEP_VALUES);
    for (r, row) in x.chunks_exact(k).enumerate() {
        let tile = &mut tiles[r / TILE_ROWS * steps * STEP_VALUES..];
        for (s, chunk) in row.chunks_exact(PANEL).enumerate() {
            let at = s * STEP_VALUES + (r % TILE_ROWS) * PANEL;
            round_into(chunk, &mut tile[at..at + PANEL]);
        }
    }
    tiles
}

/// The packed words (bf16 pairs, low half first) of a cache-line buffer of bf16 values.
fn words(lines: &mut Lines) -> &mut [u32] {
    // SAFETY: the buffer starts on a cache line and holds an even number of u16 (whole
    // panels and tiles), so it is that many u32 halves as many; u32 has no invalid values.
    let (head, words, tail) = unsafe { lines.as_mut_slice().align_to_mut::<u32>() };
    debug_assert!(head.is_empty() && tail.is_empty());
    words
}

/// `Kᵀ` (`d × t_pad`) packed in panels of 32 keys: pair `q` of key `c` is word `q·32 + c`.
fn key_panels<'a>(key: &impl Fn(usize) -> &'a [f32], t: usize, t_pad: usize, d: usize) -> Lines {
    let panel_words = d / 2 * PANEL;
    let mut panels = zeroed_lines(t_pad / PANEL * panel_words * 2);
    let packed = words(&mut panels);
    let mut rounded = vec![0u16; d];
    for (j, panel_key) in (0..t).zip((0..PANEL).cycle()) {
        round_into(key(j), &mut rounded);
        let panel = &mut packed[j / PANEL * panel_words..(j / PANEL + 1) * panel_words];
        for (word, pair) in panel[panel_key..]
            .iter_mut()
            .step_by(PANEL)
            .zip(rounded.chunks_exact(2))
        {
            *word = pair[0] as u32 | (pair[1] as u32) << 16;
        }
    }
    panels
}

/// `V` (`t_pad × d`) packed in panels of 32 dimensions: positions `(2q, 2q+1)` of dimension
/// `c` are word `q·32 + c`; positions past `t` are zeros.
fn value_panels<'a>(
    value: &impl Fn(usize) -> &'a [f32],
    t: usize,
    t_pad: usize,
    d: usize,
) -> Lines {
    let panel_words = t_pad / 2 * PANEL;
    let mut panels = zeroed_lines(d / PANEL * panel_words * 2);
    let packed = words(&mut panels);
    let (mut even, mut odd) = (vec![0u16; d], vec![0u16; d]);
    for q in 0..t.div_ceil(2) {
        round_into(value(2 * q), &mut even);
        match 2 * q + 1 < t {
            true => round_into(value(2 * q + 1), &mut odd),
            false => odd.fill(0),
        }
        for (p, (lo, hi)) in even
            .chunks_exact(PANEL)
            .zip(odd.chunks_exact(PANEL))
            .enumerate()
        {
            let row = &mut packed[p * panel_words + q * PANEL..p * panel_words + (q + 1) * PANEL];
            for ((word, &lo), &hi) in row.iter_mut().zip(lo).zip(hi) {
                *word = lo as u32 | (hi as u32) << 16;
            }
        }
    }
    panels
}

#[cfg(test)]
mod tests {
    use crate::engines::prefix::bf16::{attend_amx, from_bf16, to_bf16, Bf16Family};
    use rand::{Rng, SeedableRng};

    fn bf16(x: f32) -> f64 {
        from_bf16(to_bf16(x)) as f64
    }

    /// Attention of `rows` stacked query rows as the module doc defines it, in f64 from the
    /// bf16-rounded inputs (the probabilities rounded too).
    #[allow(clippy::too_many_arguments)]
    fn reference(
        queries: &[f32],
        n: usize,
        d: usize,
        prefix_len: usize,
        scale: f32,
        keys: &[f32],
        values: &[f32],
    ) -> Vec<f64> {
        let rows = queries.len() / d;
        let mut out = vec![0f64; rows * d];
        for r in 0..rows {
            let visible = prefix_len + r % n + 1;
            let q = &queries[r * d..(r + 1) * d];
            let scores: Vec<f64> = (0..visible)
                .map(|j| {
                    let k = &keys[j * d..(j + 1) * d];
                    q.iter()
                        .zip(k)
                        .map(|(&a, &b)| bf16(a) * bf16(b))
                        .sum::<f64>()
                        * scale as f64
                })
                .collect();
            let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = scores.iter().map(|s| (s - max).exp()).sum();
            for (j, s) in scores.iter().enumerate() {
                let p = bf16(((s - max).exp() / sum) as f32);
                for c in 0..d {
                    out[r * d + c] += p * bf16(values[j * d + c]);
                }
            }
        }
        out
    }

    #[test]
    fn tiles_compute_causal_attention_and_a_row_ignores_its_batch_and_its_prefix_split() {
        if !Bf16Family::Amx.is_available() {
            eprintln!("no AMX grant on this machine: the tile attention is not run");
            return;
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let (d, t, scale) = (64, 83, 0.125f32);
        let random = |len: usize, rng: &mut rand_chacha::ChaCha8Rng| -> Vec<f32> {
            (0..len).map(|_| rng.random_range(-1.5f32..1.5)).collect()
        };
        let keys = random(t * d, &mut rng);
        let values = random(t * d, &mut rng);
        // Three heads of `t` fresh rows, stacked (blocks of 32 straddle the heads).
        let queries = random(3 * t * d, &mut rng);
        let run = |queries: &[f32], n: usize, prefix_len: usize| {
            attend_amx(
                Bf16Family::Amx,
                queries,
                n,
                d,
                prefix_len,
                scale,
                |j| &keys[j * d..(j + 1) * d],
                |j| &values[j * d..(j + 1) * d],
            )
            .expect("AMX runs a head width of 64")
        };
        let fresh = run(&queries, t, 0);
        let want = reference(&queries, t, d, 0, scale, &keys, &values);
        for (i, (&got, &want)) in fresh.iter().zip(&want).enumerate() {
            assert!(
                (got as f64 - want).abs() < 2e-3,
                "element {i}: {got} against {want}"
            );
        }
        // The last 29 positions of each head after a 54-position prefix: the same bits.
        let (prefix_len, n) = (54, 29);
        let tail: Vec<f32> = (0..3)
            .flat_map(|h| queries[(h * t + prefix_len) * d..(h + 1) * t * d].to_vec())
            .collect();
        let after_prefix = run(&tail, n, prefix_len);
        for h in 0..3 {
            assert_eq!(
                &after_prefix[h * n * d..(h + 1) * n * d],
                &fresh[(h * t + prefix_len) * d..(h + 1) * t * d],
                "head {h}"
            );
        }
        // One head alone: the same bits as inside the stack of three.
        let alone = run(&queries[t * d..2 * t * d], t, 0);
        assert_eq!(&alone[..], &fresh[t * d..2 * t * d]);
        // Other head widths, or other families, are not run on tiles.
        assert!(run_none(&keys, &values));
    }

    fn run_none(keys: &[f32], values: &[f32]) -> bool {
        let q = vec![0.5f32; 48];
        let key = |j: usize| &keys[j * 48..(j + 1) * 48];
        let value = |j: usize| &values[j * 48..(j + 1) * 48];
        attend_amx(Bf16Family::Amx, &q, 1, 48, 0, 1.0, key, value).is_none()
            && attend_amx(Bf16Family::Portable, &q[..32], 1, 32, 0, 1.0, key, value).is_none()
    }
}
