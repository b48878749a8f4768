//! `choice2seq bench inference --against prefix-bf16`: after (b) ran the panel with the
//! prefix engine's f32 weights, (c) runs it again with bf16 weights (`[model] dtype = "bf16"`)
//! on the same cores, and both are printed side by side: speeds, computed tokens, peak RSS,
//! the agreement of the option distributions on the requests both made (a bf16 choice that
//! differs leads a Serial trajectory elsewhere), and both kernels' measured limits on the
//! model's widest product. Returns (c), for `--against llama-server` to set beside.

use std::path::Path;

use anyhow::bail;
use c2s_model::engines::prefix::{bf16, kernels};
use c2s_model::WeightDtype;

use super::llamacpp::agreement;
use super::{
    print_header, print_row, run_mode_with, scored_probabilities, InferenceBench, ModeResult,
};

/// (b) must run the prefix engine with f32 weights from a model path.
pub(super) fn check(config: &Path) -> anyhow::Result<c2s_config::RunConfig> {
    let cfg = c2s_config::load(config).map_err(|e| anyhow::anyhow!("{e}"))?;
    if cfg.model.engine != c2s_config::EngineKind::Prefix || cfg.model.dtype != WeightDtype::F32 {
        bail!("--against prefix-bf16 compares the prefix engine's f32 weights with bf16 ones: (b) must run the prefix engine with dtype = \"f32\"");
    }
    if cfg.model.hf.is_some() {
        bail!("--against prefix-bf16 needs a model path (a Hub model: run it once, then give its snapshot directory)");
    }
    Ok(cfg)
}

pub(super) fn compare(
    bench: &InferenceBench,
    config: &Path,
    work: &Path,
    b: &ModeResult,
) -> anyhow::Result<ModeResult> {
    let cfg = check(config)?;
    eprintln!("(c) as (b), with bf16 weights …");
    let c = run_mode_with(bench, config, work.join("run-c"), false, None, &|cfg| {
        cfg.model.dtype = WeightDtype::Bf16
    })?;
    println!();
    println!("bf16 weights beside f32, same panel and cores:");
    print_header();
    print_row("(b) f32 weights", b);
    print_row("(c) bf16 weights", &c);
    let tps = |m: &ModeResult| {
        let e = &m.report.engine.engine;
        e.computed_tokens as f64 / e.forward_seconds.max(1e-9)
    };
    let (eb, ec) = (&b.report.engine.engine, &c.report.engine.engine);
    println!(
        "bf16 / f32: engine prompt tok/s {:.2}x, wall time {:.2}x, peak RSS {:.2}x; computed tokens {} and {}",
        tps(&c) / tps(b).max(1e-9),
        c.report.elapsed / b.report.elapsed.max(1e-9),
        c.peak_rss_kb as f64 / (b.peak_rss_kb as f64).max(1.0),
        eb.computed_tokens,
        ec.computed_tokens
    );
    let a = agreement(
        &scored_probabilities(&b.run_dir)?,
        &scored_probabilities(&c.run_dir)?,
    );
    println!(
        "agreement on the {} scored requests both made: argmax {}/{}, max |p_bf16 - p_f32| = {:.4}",
        a.compared, a.same_argmax, a.compared, a.max_abs_diff
    );
    let model = c2s_model::engines::prefix::transformer::Transformer::check_config(&cfg.model.path)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let (m, k, n) = (512, model.hidden, 2 * model.ffn);
    let f32_family = kernels::KernelFamily::from_env()?;
    let bf16_family = bf16::Bf16Family::from_env()?;
    let mut limits = vec![format!(
        "f32 {} {:.1}",
        f32_family.name(),
        kernels::product_gflops(f32_family, m, k, n, 1.0)
    )];
    for family in bf16::Bf16Family::available() {
        limits.push(format!(
            "bf16 {}{} {:.1}",
            family.name(),
            if family == bf16_family {
                " (chosen)"
            } else {
                ""
            },
            bf16::product_gflops(family, m, k, n, 1.0)
        ));
    }
    println!(
        "kernels on the widest product ({m}×{k}×{n}), GFLOP/s: {}",
        limits.join(", ")
    );
    Ok(c)
}
