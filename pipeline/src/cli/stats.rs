//! `choice2seq stats RUN_DIR`: every metric recomputed offline from `outcomes/` and
//! `trajectories/` (a directory holding only those two datasets is enough), with the settings
//! of the run's manifest unless overridden. The result equals the live final snapshot.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use c2s_operators::live_stats::snapshot_rows;
use c2s_sinks::{read_manifest, read_paired_outcomes, read_trajectory_records};
use c2s_stats::{FamilyScope, HolmFamily, MetricRow, StatsConfig};

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Run directory (needs outcomes/ and trajectories/).
    pub run_dir: PathBuf,
    /// Print every metric row as JSON (one array).
    #[arg(long)]
    pub json: bool,
    /// Bootstrap draws (default: the run's setting, else 9,999).
    #[arg(long)]
    pub draws: Option<u32>,
    /// Bootstrap seed (default: the run's setting).
    #[arg(long)]
    pub seed: Option<u64>,
}

/// The statistics settings a run was made with (from its manifest), or the defaults.
pub fn run_stats_config(run_dir: &Path) -> anyhow::Result<(StatsConfig, Option<u64>)> {
    let mut cfg = StatsConfig::default();
    let manifest = read_manifest(run_dir)
        .with_context(|| format!("reading {}/manifest.json", run_dir.display()))?;
    let Some(m) = manifest else {
        return Ok((cfg, None));
    };
    let stats = &m.config["stats"];
    if let Some(d) = stats["bootstrap_draws"].as_u64() {
        cfg.bootstrap_draws = d as u32;
    }
    if let Some(s) = stats["seed"].as_u64() {
        cfg.seed = s;
    }
    if let Some(l) = stats["level"].as_f64() {
        cfg.level = l;
    }
    if let Some(families) = stats["families"].as_array() {
        for f in families {
            cfg.families.push(HolmFamily {
                name: f["name"].as_str().unwrap_or_default().to_string(),
                comparisons: f["comparisons"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|c| c.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
                scope: match f["scope"].as_str() {
                    None => FamilyScope::default(),
                    Some(s) => FamilyScope::parse(s).with_context(|| {
                        format!(
                            "{}/manifest.json: config.stats.families: unknown scope `{s}`",
                            run_dir.display()
                        )
                    })?,
                },
            });
        }
    }
    Ok((cfg, Some(m.updated_at_ms)))
}

/// Recompute every metric of a run directory.
pub fn recompute(
    run_dir: &Path,
    cfg: &StatsConfig,
    snapshot: u64,
) -> anyhow::Result<Vec<MetricRow>> {
    let outcomes = read_paired_outcomes(&run_dir.join("outcomes")).context("reading outcomes/")?;
    let trajectories =
        read_trajectory_records(&run_dir.join("trajectories")).context("reading trajectories/")?;
    if outcomes.is_empty() && trajectories.is_empty() {
        anyhow::bail!(
            "{} holds no outcomes and no trajectories",
            run_dir.display()
        );
    }
    Ok(snapshot_rows(&outcomes, &trajectories, cfg, snapshot)?)
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into())
}

pub fn execute(args: StatsArgs) -> anyhow::Result<ExitCode> {
    let (mut cfg, _) = run_stats_config(&args.run_dir)?;
    if let Some(d) = args.draws {
        cfg.bootstrap_draws = d;
    }
    if let Some(s) = args.seed {
        cfg.seed = s;
    }
    let rows = recompute(&args.run_dir, &cfg, 0)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} metric rows ({} bootstrap draws, seed {}, level {})",
        rows.len(),
        cfg.bootstrap_draws,
        cfg.seed,
        cfg.level
    );
    println!(
        "{:<10} {:<40} {:>6} {:<26} {:>9} {:>9} {:>9} {:>12}",
        "domain", "comparison", "length", "metric", "value", "ci_low", "ci_high", "n/d"
    );
    for r in &rows {
        println!(
            "{:<10} {:<40} {:>6} {:<26} {:>9} {:>9} {:>9} {:>12}",
            r.domain,
            r.comparison,
            r.length
                .map(|l| l.to_string())
                .unwrap_or_else(|| "all".into()),
            r.metric,
            fmt_opt(r.value),
            fmt_opt(r.ci_low),
            fmt_opt(r.ci_high),
            match (r.numerator, r.denominator) {
                (Some(n), Some(d)) => format!("{n}/{d}"),
                _ => "-".into(),
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}
