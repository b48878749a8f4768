//! Read a run directory: its manifest, its Parquet datasets as typed records, and every metric
//! recomputed from them, as `choice2seq stats` does (the same function of the same counts as
//! the live snapshot).
//!
//! ```sh
//! cargo run --release --example read_run_dir -- runs/quickstart
//! ```

use std::path::PathBuf;

use anyhow::Context;

fn main() -> anyhow::Result<()> {
    let run_dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "runs/quickstart".into()),
    );
    let manifest = c2s_sinks::read_manifest(&run_dir)?
        .with_context(|| format!("{} has no manifest.json", run_dir.display()))?;
    println!(
        "{}: {:?}, config {}",
        run_dir.display(),
        manifest.status.map(|s| s.state),
        manifest.config["file"]
    );
    // Typed records: paired Native/Serial outcomes and per-arm trajectories.
    let (outcomes, trajectories) = c2s_rundir::read_run(&run_dir)?;
    println!(
        "{} paired outcomes, {} trajectories",
        outcomes.len(),
        trajectories.len()
    );
    let both = outcomes
        .iter()
        .filter(|o| o.native_correct && o.serial_correct)
        .count();
    let native = outcomes.iter().filter(|o| o.native_correct).count();
    println!("SCR over every comparison and domain: {both}/{native}");
    // Every metric with the settings the run recorded (bootstrap draws, seed, Holm families).
    let (stats, _) = c2s_rundir::run_stats_config(&run_dir)?;
    let rows = c2s_rundir::recompute_runs(std::slice::from_ref(&run_dir), &stats, 0)?;
    for r in rows.iter().filter(|r| r.length.is_none()) {
        let interval = match (r.ci_low, r.ci_high) {
            (Some(lo), Some(hi)) => format!(" [{lo:.3}, {hi:.3}]"),
            _ => String::new(),
        };
        println!(
            "{:<10} {:<40} {:<22} {}{interval}",
            r.domain_str(),
            r.comparison,
            r.metric,
            r.value.map_or("-".into(), |v| format!("{v:.3}")),
        );
    }
    Ok(())
}
