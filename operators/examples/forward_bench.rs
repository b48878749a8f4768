//! Times one forward pass of the prefix engine's model and the matmuls it is made of.
//! `cargo run --release -p c2s-operators --example forward_bench -- MODEL.gguf`

use std::time::Instant;

use c2s_operators::inference::llama::{LlamaModel, SeqInput};
use candle_core::{Device, Tensor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "models/SmolLM2-135M-Instruct.Q4_1.gguf".into());
    let model = LlamaModel::load(std::path::Path::new(&path))?;
    let tokens: Vec<u32> = (0..256u32).map(|i| 100 + i * 7).collect();
    for round in 0..3 {
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
    for (m, k, n) in [
        (256, 576, 960),
        (256, 576, 3072),
        (256, 1536, 576),
        (256, 576, 576),
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
    use candle_core::quantized::{GgmlDType, QMatMul, QTensor};
    use candle_core::Module;
    for dtype in [
        GgmlDType::Q8_0,
        GgmlDType::Q4_0,
        GgmlDType::Q4K,
        GgmlDType::Q4_1,
    ] {
        for (m, k, n) in [(256, 576, 3072), (256, 1536, 576)] {
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
