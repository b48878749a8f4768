//! The bf16 products' tests: packing, rounding, the families' bits and AMX's agreement.
use super::*;
use rand::{Rng, SeedableRng};

fn random(len: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<f32> {
    (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

#[test]
fn rounding_is_to_nearest_even_and_flushes_subnormals() {
    assert_eq!(to_bf16(1.0), 0x3f80);
    // 1 + 2^-8 lies halfway between bf16 1 and 1 + 2^-7: ties go to the even one (1).
    assert_eq!(to_bf16(1.0 + 2f32.powi(-8)), 0x3f80);
    // 1 + 3·2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: even is 1 + 2^-6.
    assert_eq!(
        from_bf16(to_bf16(1.0 + 3.0 * 2f32.powi(-8))),
        1.0 + 2f32.powi(-6)
    );
    assert_eq!(
        from_bf16(to_bf16(1.0 + 2f32.powi(-8) + 2f32.powi(-20))),
        1.0 + 2f32.powi(-7)
    );
    assert_eq!(to_bf16(-2.5), 0xc020);
    assert_eq!(to_bf16(f32::MIN_POSITIVE / 4.0), 0x0000);
    assert_eq!(to_bf16(-f32::MIN_POSITIVE / 4.0), 0x8000);
    assert!(from_bf16(to_bf16(f32::NAN)).is_nan());
    assert_eq!(from_bf16(to_bf16(f32::INFINITY)), f32::INFINITY);
    assert_eq!(from_bf16(to_bf16(f32::MAX)), f32::INFINITY);
    for v in [0.1f32, -3.75, 1e-30, 12345.678] {
        let r = from_bf16(to_bf16(v));
        assert!((r - v).abs() <= v.abs() * 2f32.powi(-8), "{v} -> {r}");
    }
}

/// The sum of `vdpbf16ps`, written out element by element in f64 (exact for these sums of
/// a few thousand products, to the last bit of f32 only approximately): the kernels must
/// match it to f32 accuracy, and the vector families each other bit for bit (AMX rounds
/// inside a tile step in its own order: module doc).
#[test]
fn every_family_computes_the_product_of_the_rounded_values() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for &(m, k, n) in &[
        (1, 64, 1),
        (3, 577, 70),
        (9, 1100, 33),
        (17, 8, 96),
        (2, 1, 5),
        // AMX: whole 32 × 32 blocks; a tail block of 17 rows, two depth steps.
        (64, 96, 64),
        (49, 40, 40),
    ] {
        let x = random(m * k, &mut rng);
        let w = random(k * n, &mut rng);
        let packed = Bf16Matrix::from_row_major(&w, k, n);
        let mut results = Vec::new();
        for family in Bf16Family::available() {
            let mut out = vec![0f32; m * n];
            packed.product(family, &x, m, &mut out, false);
            for i in 0..m {
                for j in 0..n {
                    let want: f64 = (0..k)
                        .map(|t| {
                            from_bf16(to_bf16(x[i * k + t])) as f64
                                * from_bf16(to_bf16(w[t * n + j])) as f64
                        })
                        .sum();
                    let got = out[i * n + j] as f64;
                    assert!(
                        (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                        "{} ({m}×{k}×{n}) [{i},{j}]: {got} vs {want}",
                        family.name()
                    );
                }
            }
            results.push((family, out));
        }
        results.retain(|(family, _)| *family != Bf16Family::Amx);
        for (family, out) in &results[1..] {
            assert_eq!(
                out,
                &results[0].1,
                "{} and {} differ",
                family.name(),
                results[0].0.name()
            );
        }
    }
}

#[test]
fn accumulating_adds_the_product_and_rows_are_batch_invariant() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let (k, n) = (300, 70);
    let x = random(40 * k, &mut rng);
    let w = random(k * n, &mut rng);
    let packed = Bf16Matrix::from_row_major(&w, k, n);
    for family in Bf16Family::available() {
        let mut batch = vec![0f32; 40 * n];
        packed.product(family, &x, 40, &mut batch, false);
        let mut alone = vec![0f32; n];
        packed.product(family, &x[..k], 1, &mut alone, false);
        assert_eq!(&batch[..n], &alone[..], "{}", family.name());
        // Rows 17..20 in the middle of a block of 32, and alone in a tail of three.
        let mut three = vec![0f32; 3 * n];
        packed.product(family, &x[17 * k..20 * k], 3, &mut three, false);
        assert_eq!(&batch[17 * n..20 * n], &three[..], "{}", family.name());
        let mut acc = vec![1.5f32; n];
        packed.product(family, &x[..k], 1, &mut acc, true);
        for (a, b) in acc.iter().zip(&alone) {
            assert_eq!(*a, 1.5 + b);
        }
    }
}

#[test]
fn the_vectorised_rounding_gives_the_scalar_bits() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
    let mut values: Vec<f32> = (0..4099).map(|_| f32::from_bits(rng.random())).collect();
    values.extend([
        0.0,
        -0.0,
        f32::MIN_POSITIVE,
        -1e-39,
        1.0 + f32::EPSILON * 64.0,
        f32::MAX,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ]);
    let mut rounded = vec![0u16; values.len()];
    round_into(&values, &mut rounded);
    for (v, r) in values.iter().zip(&rounded) {
        assert_eq!(*r, to_bf16(*v), "{v:e} ({:#x})", v.to_bits());
    }
    // In chunks of 32 into places 40 apart (the gaps untouched), as a tile block's rows.
    let (chunk, stride) = (32, 40);
    let mut strided = vec![0xabcd_u16; values.len().div_ceil(chunk) * stride];
    round_chunks_into(&values, chunk, &mut strided, stride);
    for (i, v) in values.iter().enumerate() {
        assert_eq!(strided[i / chunk * stride + i % chunk], to_bf16(*v), "{i}");
    }
    let gaps = (0..strided.len()).filter(|j| j % stride >= chunk);
    assert!(gaps.into_iter().all(|j| strided[j] == 0xabcd));
}

#[test]
fn packing_from_rows_or_from_columns_is_the_same() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
    let (k, n) = (37, 45);
    let w = random(k * n, &mut rng);
    let columns: Vec<f32> = (0..n)
        .flat_map(|j| (0..k).map(|i| w[i * n + j]).collect::<Vec<_>>())
        .collect();
    let by_rows = Bf16Matrix::from_row_major(&w, k, n);
    let by_columns = Bf16Matrix::from_columns(k, n, |j| &columns[j * k..(j + 1) * k]);
    assert_eq!(by_rows.data.as_slice(), by_columns.data.as_slice());
}

#[test]
fn packing_keeps_every_element() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let (k, n) = (7, 37);
    let w = random(k * n, &mut rng);
    let packed = Bf16Matrix::from_row_major(&w, k, n);
    for i in 0..k {
        for j in 0..n {
            assert_eq!(packed.get(i, j), from_bf16(to_bf16(w[i * n + j])));
        }
    }
    // Two panels of 16 pairs (4 padded to one AMX step) of 32 columns of 2 bf16.
    assert_eq!(packed.bytes(), 2 * STEP_PAIRS * PANEL * 2 * 2);
}

#[test]
fn the_environment_names_a_family() {
    assert_eq!(Bf16Family::named(None), Ok(Bf16Family::detected()));
    assert_eq!(
        Bf16Family::named(Some("portable")),
        Ok(Bf16Family::Portable)
    );
    let e = Bf16Family::named(Some("amx2")).unwrap_err().to_string();
    assert!(e.contains(BF16_KERNELS_ENV) && e.contains("amx2"), "{e}");
    for name in ["amx", "avx512bf16", "avx512"] {
        match Bf16Family::named(Some(name)) {
            Ok(f) => assert!(f.is_available() && f.name() == name),
            Err(e) => assert!(e.to_string().contains("cannot run"), "{e}"),
        }
    }
}

/// On AMX, the fused paths give the unfused products' bits: rows written into tile order by
/// several writers, then multiplied, equal the product of the rows; the gate and up product's
/// SiLU values in tile order, then the down product, equal SiLU of the f32 gate and up outputs,
/// rounded, then the down product. 45 rows: a partial block of 32 and a partial tile of 16.
#[test]
fn the_fused_tile_paths_give_the_unfused_bits() {
    if !Bf16Family::Amx.is_available() {
        eprintln!("no AMX grant on this machine: the fused tile paths are not run");
        return;
    }
    let family = Bf16Family::Amx;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(31);
    let (m, k, ffn, n) = (45, 64, 96, 40);
    let x = random(m * k, &mut rng);
    // Written into tiles half a row at a time, against the rows given.
    let w = Bf16Matrix::from_row_major(&random(k * n, &mut rng), k, n);
    let mut tiles = TiledRows::default();
    let writer = tiles.writer(m, k);
    for (r, row) in x.chunks_exact(k).enumerate() {
        // SAFETY: one thread writes every place once.
        unsafe {
            writer.write(r, k / 2, &row[k / 2..]);
            writer.write(r, 0, &row[..k / 2]);
        }
    }
    let (mut given, mut tiled) = (vec![0f32; m * n], vec![0f32; m * n]);
    w.product(family, &x, m, &mut given, false);
    w.product_of_tiles(&tiles, &mut tiled, false);
    assert_eq!(given, tiled);
    // The gate and up weight's panels hold sixteen gate columns, then their sixteen up ones.
    let wgu = Bf16Matrix::from_row_major(&random(k * 2 * ffn, &mut rng), k, 2 * ffn);
    let wdown = Bf16Matrix::from_row_major(&random(ffn * n, &mut rng), ffn, n);
    let mut gu = vec![0f32; m * 2 * ffn];
    wgu.product(family, &x, m, &mut gu, false);
    let act: Vec<f32> = gu
        .chunks_exact(32)
        .flat_map(|pair| {
            let (gate, up) = pair.split_at(16);
            gate.iter().zip(up).map(|(&g, &u)| {
                let e = crate::engines::prefix::vexp::exp(-g);
                from_bf16(to_bf16(g / (1.0 + e) * u))
            })
        })
        .collect();
    let mut unfused = vec![1f32; m * n];
    wdown.product(family, &act, m, &mut unfused, true);
    let mut gated = TiledRows::default();
    assert_eq!(
        wgu.gated_silu_tiles(family, InputRows::Given(&x), m, &mut gated),
        Some(())
    );
    let mut fused = vec![1f32; m * n];
    wdown.product_of_tiles(&gated, &mut fused, true);
    assert_eq!(unfused, fused);
    // Other families, or a width that is no whole number of steps, are not fused.
    let odd = Bf16Matrix::from_row_major(&random(k * 2 * 40, &mut rng), k, 80);
    assert_eq!(
        odd.gated_silu_tiles(family, InputRows::Given(&x), m, &mut gated),
        None
    );
    assert_eq!(
        wgu.gated_silu_tiles(Bf16Family::Portable, InputRows::Given(&x), m, &mut gated),
        None
    );
}
