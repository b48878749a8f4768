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
//! **Layouts.** A key/value head's keys and values are packed once per call ([`PackedKv`]):
//! the keys as the panels of `Kᵀ` (`super`'s layout: 32 keys per panel, depth pairs of the
//! head's dimensions), the values as pair rows (positions `2q, 2q+1` of every dimension, one
//! row after the other, read by the tiles at a stride of one row). Both are laid out by
//! position, so a prefix's packing is the beginning of every longer sequence's: the forward
//! pass packs a prefix that several sequences continue once, and each sequence copies it and
//! packs only its own positions. The queries and the probabilities are laid out tile by tile
//! (16 rows × 32 values per step).

use super::tiles::{block, release, TileConfig, PANEL_ROW};
use super::{tile_block, tile_block_len, BLOCK_ROWS, TILE_ROWS};
use crate::engines::prefix::bf16::{
    round_into, to_bf16, zeroed_lines, InputRows, Lines, PANEL, STEP_PAIRS,
};
use crate::engines::prefix::vexp::exp;

/// Values of one step of one 16-row tile: 16 rows × 32.
const STEP_VALUES: usize = TILE_ROWS * STEP_PAIRS * 2;

/// One key/value head's keys and values of positions `0..positions`, packed for the tiles
/// (module doc).
pub struct PackedKv {
    /// `Kᵀ` in panels of 32 keys: pair `q` of key `c` is word `q·32 + c` of its panel.
    keys: Lines,
    /// Pair rows: positions `(2q, 2q+1)` of dimension `c` are word `q·d + c`.
    values: Lines,
    positions: usize,
    d: usize,
}

impl PackedKv {
    /// Pack `key(j)`, `value(j)` (position `j`'s `d` values, `d` a multiple of 32) for
    /// `j < positions`, copying what `prefix` (a packing of the first positions of the same
    /// keys and values) holds whole: its complete key panels and value pairs.
    pub(in crate::engines::prefix::bf16) fn pack<'a>(
        d: usize,
        positions: usize,
        key: impl Fn(usize) -> &'a [f32],
        value: impl Fn(usize) -> &'a [f32],
        prefix: Option<&PackedKv>,
    ) -> PackedKv {
        assert!(d.is_multiple_of(PANEL));
        let t_pad = positions.div_ceil(PANEL) * PANEL;
        let panel_len = d * PANEL;
        let mut keys = zeroed_lines(t_pad / PANEL * panel_len);
        let mut values = zeroed_lines(t_pad * d);
        let (mut first_key, mut first_pair) = (0, 0);
        if let Some(p) = prefix.filter(|p| p.d == d && p.positions <= positions) {
            let whole = p.positions / PANEL * panel_len;
            keys[..whole].copy_from_slice(&p.keys[..whole]);
            let pairs = p.positions / 2 * 2 * d;
            values[..pairs].copy_from_slice(&p.values[..pairs]);
            (first_key, first_pair) = (p.positions / PANEL * PANEL, p.positions / 2);
        }
        let packed = words(&mut keys);
        let mut rounded = vec![0u16; d];
        for j in first_key..positions {
            round_into(key(j), &mut rounded);
            let panel = &mut packed[j / PANEL * panel_len / 2..(j / PANEL + 1) * panel_len / 2];
            for (word, pair) in panel[j % PANEL..]
                .iter_mut()
                .step_by(PANEL)
                .zip(rounded.chunks_exact(2))
            {
                *word = pair[0] as u32 | (pair[1] as u32) << 16;
            }
        }
        let packed = words(&mut values);
        let (mut even, mut odd) = (vec![0u16; d], vec![0u16; d]);
        for q in first_pair..positions.div_ceil(2) {
            round_into(value(2 * q), &mut even);
            match 2 * q + 1 < positions {
                true => round_into(value(2 * q + 1), &mut odd),
                false => odd.fill(0),
            }
            for ((word, &lo), &hi) in packed[q * d..(q + 1) * d].iter_mut().zip(&even).zip(&odd) {
                *word = lo as u32 | (hi as u32) << 16;
            }
        }
        PackedKv {
            keys,
            values,
            positions,
            d,
        }
    }
}

/// One task's buffers, kept for its next call (attention runs once per sequence, key/value
/// head and layer: zeroing fresh ones was a fortieth of a bf16 prefill in `memset`). Every
/// place a call reads it writes first, so nothing is cleared between calls.
#[derive(Default)]
struct Buffers {
    /// The queries in tile order.
    queries: Vec<u16>,
    /// One block's scores, row stride `t_pad`.
    scores: Vec<f32>,
    /// The probabilities in tile order.
    probs: Vec<u16>,
    /// One block's outputs, row stride `d`.
    out: Vec<f32>,
}

thread_local! {
    static BUFFERS: std::cell::RefCell<Buffers> = std::cell::RefCell::new(Buffers::default());
}

/// The first `len` values of `buf`, grown with zeros to hold them (never shrunk).
fn at_least<T: Copy + Default>(buf: &mut Vec<T>, len: usize) -> &mut [T] {
    if buf.len() < len {
        buf.resize(len, T::default());
    }
    &mut buf[..len]
}

/// One group's attention: `queries` is `rows` rows of `d` (row `r` is new row `r % n` of its
/// head, at position `prefix_len + r % n`) over `kv`'s `prefix_len + n` positions; output row
/// `r` goes to `emit(r, values)`.
///
/// # Safety
/// The process holds the tile grant.
pub(in crate::engines::prefix::bf16) unsafe fn attend(
    queries: InputRows<'_>,
    rows: usize,
    n: usize,
    prefix_len: usize,
    scale: f32,
    kv: &PackedKv,
    emit: &mut dyn FnMut(usize, &[f32]),
) {
    BUFFERS.with(|cell| {
        // This thread's buffers, or fresh ones where they are in use.
        let (mut held, mut fresh) = (cell.try_borrow_mut().ok(), Buffers::default());
        let buffers: &mut Buffers = held.as_deref_mut().unwrap_or(&mut fresh);
        let d = kv.d;
        let t = prefix_len + n;
        assert!(kv.positions == t && n > 0);
        if let InputRows::Given(q) = queries {
            assert_eq!(q.len(), rows * d, "attention: query shape");
        }
        let t_pad = t.div_ceil(PANEL) * PANEL;
        let q_steps = d / PANEL;
        let p_steps = t_pad / PANEL;
        // 64-byte alignment of the tile buffers: `Vec<u16>` is not aligned, so each buffer is
        // over-allocated by a line and used from its first aligned element.
        let q_len = rows.div_ceil(TILE_ROWS) * tile_block_len(d / 2);
        let q_tiles = aligned(at_least(&mut buffers.queries, q_len + 32), q_len);
        tiled(queries, rows, d, q_tiles);
        let scores = at_least(&mut buffers.scores, BLOCK_ROWS * t_pad);
        let probs_len = rows.div_ceil(TILE_ROWS) * p_steps * STEP_VALUES;
        let probs = aligned(at_least(&mut buffers.probs, probs_len + 32), probs_len);
        let block_out = at_least(&mut buffers.out, BLOCK_ROWS * d);
        let (keys, values) = (&kv.keys, &kv.values);
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
            let panel_bytes = d * PANEL * 2;
            for p in 0..panels {
                let b = keys.as_ptr().cast::<u8>().add(p * panel_bytes);
                let c = scores.as_mut_ptr().add(p * PANEL).cast();
                block(a, q_tile_bytes, b, PANEL_ROW, q_steps, c, t_pad * 4, two);
            }
            // Softmax of each row over what it sees, rounded into the probabilities' tiles, zeros
            // up to the reached depth.
            for (i, row) in scores.chunks_exact_mut(t_pad).take(block_rows).enumerate() {
                let r = r0 + i;
                let seen = prefix_len + r % n + 1;
                let tile = &mut probs[r / TILE_ROWS * p_steps * STEP_VALUES..];
                let tile = &mut tile[(r % TILE_ROWS) * PANEL..];
                softmax_into_tile(row, seen, scale, tile);
                // Zeros from the softmax's last vector to the reached depth, step by step.
                let mut v = seen.div_ceil(LANES) * LANES;
                while v < panels * PANEL {
                    let end = (v / PANEL + 1) * PANEL;
                    let at = v / PANEL * STEP_VALUES;
                    tile[at + v % PANEL..at + PANEL].fill(0);
                    v = end;
                }
            }
            // P·V over the reached depth into the block's outputs: dimensions 32p.. of each pair
            // row.
            let p_tile_bytes = p_steps * STEP_VALUES * 2;
            let a = probs
                .as_ptr()
                .cast::<u8>()
                .add(r0 / TILE_ROWS * p_tile_bytes);
            for p in 0..d / PANEL {
                let b = values.as_ptr().cast::<u8>().add(p * PANEL_ROW);
                let c = block_out.as_mut_ptr().add(p * PANEL).cast();
                block(a, p_tile_bytes, b, d * 4, panels, c, d * 4, two);
            }
            for (i, values) in block_out.chunks_exact(d).take(block_rows).enumerate() {
                emit(r0 + i, values);
            }
        }
        release();
    })
}

/// The first `len` values of `buf` from its first element on a cache line (`buf` has 32
/// values to spare).
fn aligned(buf: &mut [u16], len: usize) -> &mut [u16] {
    let skip = buf.as_ptr().align_offset(64);
    &mut buf[skip..skip + len]
}

/// Lanes of the vectorised reductions (one AVX-512 register).
const LANES: usize = 16;

/// The softmax of the first `seen` scores of `row`, scaled by `scale`, rounded to bf16 into its
/// row of a probabilities' tile (`tile[s·512 + c]` for value `32·s + c`; the row's later places
/// get zeros up to the next multiple of [`LANES`]): compiled for AVX-512 or AVX2 where the CPU
/// has them (the same operations, so the same bits). `row` is a whole row of the block's
/// scores, so it holds `seen` rounded up to [`LANES`].
fn softmax_into_tile(row: &mut [f32], seen: usize, scale: f32, tile: &mut [u16]) {
    widest_vectors!(softmax_row(row: &mut [f32], seen: usize, scale: f32, tile: &mut [u16]))
}

/// [`softmax_into_tile`]'s three passes over whole vectors of [`LANES`] (the places past
/// `seen` set to −∞, whose probability is an exact zero): scale and maximum, `exp(v − max)`
/// and its sum, then `v / sum` rounded. The maximum and the sum run in lanes (a single running
/// value is a chain the compiler cannot vectorise; the maximum is exact in any order, the sum
/// is this attention's own order). A scalar tail for the last partial vector had been a third
/// of the softmax.
#[inline(always)]
fn softmax_row(row: &mut [f32], seen: usize, scale: f32, tile: &mut [u16]) {
    let scores = &mut row[..seen.div_ceil(LANES) * LANES];
    scores[seen..].fill(f32::NEG_INFINITY);
    let mut lanes = [f32::NEG_INFINITY; LANES];
    for chunk in scores.chunks_exact_mut(LANES) {
        for (m, v) in lanes.iter_mut().zip(chunk) {
            *v *= scale;
            *m = m.max(*v);
        }
    }
    let max = lanes.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    let mut sums = [0f32; LANES];
    for chunk in scores.chunks_exact_mut(LANES) {
        for (s, v) in sums.iter_mut().zip(chunk) {
            // `exp` clamps −∞ to a tiny positive value: the padding is selected to zero.
            let e = exp(*v - max);
            *v = if *v == f32::NEG_INFINITY { 0.0 } else { e };
            *s += *v;
        }
    }
    let sum: f32 = sums.iter().sum();
    let inv = 1.0 / sum;
    for (step, values) in scores.chunks(PANEL).enumerate() {
        let dst = &mut tile[step * STEP_VALUES..step * STEP_VALUES + values.len()];
        for (d, &v) in dst.iter_mut().zip(values) {
            *d = to_bf16(v * inv);
        }
    }
}

/// `rows` rows of `k` values (`k` a multiple of 32) rounded to bf16 in tile order into `tiles`,
/// as the products' activations (`tile_activations`), block after block in this task.
fn tiled(x: InputRows<'_>, rows: usize, k: usize, tiles: &mut [u16]) {
    let block_len = tile_block_len(k / 2);
    for (b, block) in tiles.chunks_mut(block_len).enumerate() {
        let first = b * TILE_ROWS;
        tile_block(x, first..rows.min(first + TILE_ROWS), k, block);
    }
}

/// The packed words (bf16 pairs, low half first) of a cache-line buffer of bf16 values.
fn words(lines: &mut Lines) -> &mut [u32] {
    // SAFETY: the buffer starts on a cache line and holds an even number of u16 (whole
    // panels and tiles), so it is that many u32 halves as many; u32 has no invalid values.
    let (head, words, tail) = unsafe { lines.as_mut_slice().align_to_mut::<u32>() };
    debug_assert!(head.is_empty() && tail.is_empty());
    words
}

#[cfg(test)]
mod tests {
    use super::PackedKv;
    use crate::engines::prefix::bf16::{
        attend_amx_rows, from_bf16, pack_kv_amx, to_bf16, Bf16Family, InputRows,
    };

    /// The outputs `(rows × d)` of [`attend_amx_rows`] over `queries` (rows of `d`).
    fn attend_amx(
        queries: &[f32],
        d: usize,
        n: usize,
        prefix_len: usize,
        scale: f32,
        kv: &PackedKv,
    ) -> Vec<f32> {
        let mut out = vec![0f32; queries.len()];
        let rows = queries.len() / d;
        let mut emit = |r: usize, values: &[f32]| out[r * d..(r + 1) * d].copy_from_slice(values);
        attend_amx_rows(
            InputRows::Given(queries),
            rows,
            n,
            prefix_len,
            scale,
            kv,
            &mut emit,
        );
        out
    }
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
        let key = |j: usize| &keys[j * d..(j + 1) * d];
        let value = |j: usize| &values[j * d..(j + 1) * d];
        let run = |queries: &[f32], n: usize, prefix_len: usize| {
            let packed = pack_kv_amx(Bf16Family::Amx, d, prefix_len + n, &key, &value, None)
                .expect("AMX runs a head width of 64");
            attend_amx(queries, d, n, prefix_len, scale, &packed)
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
        let key = |j: usize| &keys[j * 48..(j + 1) * 48];
        let value = |j: usize| &values[j * 48..(j + 1) * 48];
        pack_kv_amx(Bf16Family::Amx, 48, 2, &key, &value, None).is_none()
            && pack_kv_amx(Bf16Family::Portable, 32, 2, &key, &value, None).is_none()
    }

    #[test]
    fn a_packing_that_copies_its_prefix_is_the_packing_from_scratch() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
        let (d, t) = (64, 83);
        let keys: Vec<f32> = (0..t * d).map(|_| rng.random_range(-2f32..2.0)).collect();
        let values: Vec<f32> = (0..t * d).map(|_| rng.random_range(-2f32..2.0)).collect();
        let key = |j: usize| &keys[j * d..(j + 1) * d];
        let value = |j: usize| &values[j * d..(j + 1) * d];
        let whole = PackedKv::pack(d, t, key, value, None);
        for prefix_len in [1, 2, 31, 32, 33, 54, 64, 82, 83] {
            let prefix = PackedKv::pack(d, prefix_len, key, value, None);
            let copied = PackedKv::pack(d, t, key, value, Some(&prefix));
            assert_eq!(
                copied.keys.as_slice(),
                whole.keys.as_slice(),
                "keys, {prefix_len}"
            );
            assert_eq!(
                copied.values.as_slice(),
                whole.values.as_slice(),
                "values, {prefix_len}"
            );
        }
    }
}
