//! Run a panel from Rust: a config written in code, the pipeline's whole run (sources,
//! controllers, batched inference, pairing, live statistics, Parquet sinks) into a run
//! directory, then its final metrics read back.
//!
//! ```sh
//! cargo run --release --example run_panel                      # the seeded test double
//! cargo run --release --example run_panel -- models/SmolLM2-135M-Instruct.Q4_1.gguf
//! ```
//!
//! With a model path the prefix engine runs the real model (`scripts/fetch-model.sh` installs
//! the default one); without it the simulated engine answers, so the example runs anywhere.

use std::path::{Path, PathBuf};

use anyhow::Context;
use c2s_records::{Arm, Support};

fn main() -> anyhow::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let model = std::env::args().nth(1);
    let engine = match &model {
        Some(path) => format!("engine = \"prefix\"\npath = {path:?}"),
        None => "engine = \"simulated\"".to_string(),
    };
    // Four dev items of each domain under the paper's primary pairing: Native (select one of
    // eight codes) against Serial over the full alphabet (construct character by character).
    let (native, serial, full) = (Arm::Native, Arm::Serial, Support::FULL);
    let config = format!(
        r#"
[run]
name = "example"

[model]
{engine}

[[sources]]
kind = "jsonl"
path = "data/banks/arithmetic-dev.jsonl"
limit = 4

[[sources]]
kind = "jsonl"
path = "data/banks/lexical-dev.jsonl"
limit = 4

[[arms]]
arm = "{native}"

[[arms]]
arm = "{serial}"
support = "{full}"

[stats]
bootstrap_draws = 999
"#
    );
    // Relative paths resolve against the repository root; errors name file, line and field.
    let cfg = c2s_config::parse_in(&config, Path::new("example.toml"), &root)
        .context("the example's config")?;
    let mut cfg = cfg;
    for source in &mut cfg.sources {
        if let c2s_config::SourceConfig::Jsonl { path, .. } = source {
            *path = root.join(&*path);
        }
    }
    let run_dir: PathBuf = std::env::temp_dir().join(format!("c2s-example-{}", std::process::id()));
    let report = c2s_run::execute(cfg, run_dir.clone(), timely::Config::thread(), true)?;
    println!(
        "{} requests, {} trajectories in {:.1} s -> {}",
        report.requests,
        report.trajectories,
        report.elapsed,
        run_dir.display()
    );
    // The run directory reads back like any other: recompute the metrics from its records.
    let (stats, _) = c2s_rundir::run_stats_config(&run_dir)?;
    let rows = c2s_rundir::recompute_runs(std::slice::from_ref(&run_dir), &stats, 0)?;
    for r in rows
        .iter()
        .filter(|r| r.metric == "scr" && r.length.is_none())
    {
        println!(
            "{} {} {}: SCR {} ({}/{})",
            r.model,
            r.domain_str(),
            r.comparison,
            r.value.map_or("-".into(), |v| format!("{v:.3}")),
            r.numerator.unwrap_or(0),
            r.denominator.unwrap_or(0)
        );
    }
    std::fs::remove_dir_all(&run_dir).ok();
    Ok(())
}
