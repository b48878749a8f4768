//! Times one forward pass of the prefix engine's model and the matmuls it is made of.
//! `cargo run --release -p c2s-model --example forward_bench -- MODEL.gguf [f32|bf16]`

use std::time::Instant;

use c2s_model::engines::prefix::transformer::{SeqInput, Transformer, WeightDtype};
use candle_core::{Device, Tensor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "models/SmolLM2-135M-Instruct.Q4_1.gguf".into());
    let dtype = match std::env::args().nth(2).as_deref() {
        None | Some("f32") => WeightDtype::F32,
        Some("bf16") => WeightDtype::Bf16,
        Some(other) => return Err(format!("dtype {other}: f32 or bf16").into()),
    };
    let model = Transformer::load_as(std::path::Path::new(&path), dtype)?;
    println!(
        "{path}: {} weights, {} MiB",
        dtype.name(),
        model.weight_bytes() >> 20
    );
    // `C2S_FORWARD_ROUNDS=N`: N rounds of each prefill, then stop (for `perf record`).
    let rounds: usize = std::env::var("C2S_FORWARD_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0);
    if dtype == WeightDtype::Bf16 && rounds == 0 {
        use c2s_model::engines::prefix::bf16::{product_gflops, Bf16Family};
        let c = &model.config;
        for family in Bf16Family::available() {
            println!(
                "bf16 {} kernels, 256×{}×{}: {:.1} GFLOP/s",
                family.name(),
                c.hidden,
                2 * c.ffn,
                product_gflops(family, 256, c.hidden, 2 * c.ffn, 0.5)
            );
        }
        println!("bf16 kernels chosen: {}", model.bf16_kernels().name());
    }
    let tokens: Vec<u32> = (0..256u32).map(|i| 100 + i * 7).collect();
    for round in 0..rounds.max(3) {
        let t = Instant::now();
        let rows = [255usize];
        model.forward(&[SeqInput {
            prefix: None,
            prefix_len: 0,
            tokens: &tokens,
            logit_rows: &rows,
        }])?;
        let s = t.elapsed().as_secs_f64();
        println!(
            "round {round}: forward of 256 tokens {s:.3} s = {:.0} tok/s",
            256.0 / s
        );
    }
    // A batch like the pipeline's: 16 requests continuing one 240-token prefix with 60 new tokens.
    let prefix_tokens: Vec<u32> = (0..240u32).map(|i| 200 + i * 3).collect();
    let rows = [239usize];
    let prefix = model
        .forward(&[SeqInput {
            prefix: None,
            prefix_len: 0,
            tokens: &prefix_tokens,
            logit_rows: &rows,
        }])?
        .remove(0)
        .kv;
    let suffixes: Vec<Vec<u32>> = (0..16u32)
        .map(|s| (0..60u32).map(|i| 1000 + s * 61 + i).collect())
        .collect();
    let last = [59usize];
    for round in 0..rounds.max(2) {
        let seqs: Vec<SeqInput<'_>> = suffixes
            .iter()
            .map(|t| SeqInput {
                prefix: Some(&prefix),
                prefix_len: 240,
                tokens: t,
                logit_rows: &last,
            })
            .collect();
        let t = Instant::now();
        model.forward(&seqs)?;
        let s = t.elapsed().as_secs_f64();
        println!(
            "round {round}: 16 × 60 new tokens after a 240-token prefix: {s:.3} s = {:.0} tok/s",
            960.0 / s
        );
    }
    if rounds > 0 {
        return Ok(());
    }
    // Greedy decoding as the engine steps it: 8 running generations after 400-token prompts,
    // 32 tokens each, one token per sequence per forward pass. (a) each step copies the
    // sequence's whole cache ahead of the new row (`forward` with the cache as a shared
    // prefix, the engine's decode before `forward_extending`); (b) each step appends the row
    // to the cache the sequence owns (`forward_extending`). Same numbers, side by side.
    let prompt: Vec<u32> = (0..400u32).map(|i| 300 + i * 5).collect();
    let all_rows = [399usize];
    let prefilled = model
        .forward(&[SeqInput {
            prefix: None,
            prefix_len: 0,
            tokens: &prompt,
            logit_rows: &all_rows,
        }])?
        .remove(0)
        .kv;
    let one = [0usize];
    let steps = 32usize;
    let mut copied_s = 0.0;
    let mut extended_s = 0.0;
    for round in 0..2 {
        let mut caches: Vec<_> = (0..8).map(|_| prefilled.clone()).collect();
        let t = Instant::now();
        for step in 0..steps {
            let tok = [500 + step as u32];
            let seqs: Vec<SeqInput<'_>> = caches
                .iter()
                .map(|c| SeqInput {
                    prefix: Some(c.as_slice()),
                    prefix_len: 400 + step,
                    tokens: &tok,
                    logit_rows: &one,
                })
                .collect();
            let out = model.forward(&seqs)?;
            caches = out.into_iter().map(|o| o.kv).collect();
        }
        let a = t.elapsed().as_secs_f64();
        let mut caches: Vec<_> = (0..8).map(|_| prefilled.clone()).collect();
        let t = Instant::now();
        for step in 0..steps {
            let tok = [500 + step as u32];
            let seqs: Vec<SeqInput<'_>> = (0..8)
                .map(|_| SeqInput {
                    prefix: None,
                    prefix_len: 400 + step,
                    tokens: &tok,
                    logit_rows: &one,
                })
                .collect();
            let out = model.forward_extending(&seqs, std::mem::take(&mut caches))?;
            caches = out.into_iter().map(|o| o.kv).collect();
        }
        let b = t.elapsed().as_secs_f64();
        if round > 0 {
            copied_s = a;
            extended_s = b;
        }
    }
    let tokens = (8 * steps) as f64;
    println!(
        "decode, 8 × {steps} tokens after 400-token prompts: copying the cache {copied_s:.3} s \
         ({:.0} tok/s), extending it in place {extended_s:.3} s ({:.0} tok/s): {:.2}x",
        tokens / copied_s,
        tokens / extended_s,
        copied_s / extended_s
    );
    for (m, k, n) in [
        (256, 576, 960),
        (256, 576, 3072),
        (256, 1536, 576),
        (256, 576, 576),
        (960, 576, 960),
        (960, 576, 3072),
        (960, 1536, 576),
        (960, 576, 576),
    ] {
        let a = Tensor::randn(0f32, 1.0, (m, k), &Device::Cpu)?;
        let b = Tensor::randn(0f32, 1.0, (k, n), &Device::Cpu)?;
        let _ = a.matmul(&b)?;
        let t = Instant::now();
        let reps = 20;
        for _ in 0..reps {
            let _ = a.matmul(&b)?;
        }
        let s = t.elapsed().as_secs_f64() / reps as f64;
        println!(
            "matmul {m}x{k}x{n}: {:.2} ms, {:.1} GFLOP/s",
            s * 1e3,
            2.0 * (m * k * n) as f64 / s / 1e9
        );
    }
    for (m, k, n, chunk) in [
        (960, 576, 3072, 240),
        (960, 576, 3072, 128),
        (960, 576, 3072, 64),
        (960, 1536, 576, 240),
        (960, 1536, 576, 64),
    ] {
        let a = Tensor::randn(0f32, 1.0, (m, k), &Device::Cpu)?;
        let b = Tensor::randn(0f32, 1.0, (k, n), &Device::Cpu)?;
        let t = Instant::now();
        let reps = 10;
        for _ in 0..reps {
            let parts: Vec<Tensor> = (0..m / chunk)
                .map(|i| a.narrow(0, i * chunk, chunk).and_then(|x| x.matmul(&b)))
                .collect::<Result<_, _>>()?;
            let _ = Tensor::cat(&parts, 0)?;
        }
        let s = t.elapsed().as_secs_f64() / reps as f64;
        println!(
            "chunked {chunk} matmul {m}x{k}x{n}: {:.2} ms, {:.1} GFLOP/s",
            s * 1e3,
            2.0 * (m * k * n) as f64 / s / 1e9
        );
    }
    use candle_core::quantized::{GgmlDType, QMatMul, QTensor};
    use candle_core::Module;
    for dtype in [
        GgmlDType::Q8_0,
        GgmlDType::Q4_0,
        GgmlDType::Q4K,
        GgmlDType::Q4_1,
    ] {
        for (m, k, n) in [(256, 576, 3072), (256, 1536, 576)] {
            // A k-quant block spans 256 values: SmolLM2's 576 is not a whole number of them.
            if k % dtype.block_size() != 0 {
                println!(
                    "{dtype:?} qmatmul {m}x{k}x{n}: depth not a multiple of its {}-value blocks",
                    dtype.block_size()
                );
                continue;
            }
            let w = Tensor::randn(0f32, 1.0, (n, k), &Device::Cpu)?;
            let q = QMatMul::from_qtensor(QTensor::quantize(&w, dtype)?)?;
            let a = Tensor::randn(0f32, 1.0, (m, k), &Device::Cpu)?;
            let _ = q.forward(&a)?;
            let t = Instant::now();
            let reps = 5;
            for _ in 0..reps {
                let _ = q.forward(&a)?;
            }
            let s = t.elapsed().as_secs_f64() / reps as f64;
            println!(
                "{dtype:?} qmatmul {m}x{k}x{n}: {:.2} ms, {:.1} GOP/s",
                s * 1e3,
                2.0 * (m * k * n) as f64 / s / 1e9
            );
        }
    }
    println!("rayon threads: {}", candle_core::utils::get_num_threads());
    Ok(())
}
