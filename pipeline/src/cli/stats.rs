//! `choice2seq stats RUN_DIR...`: every metric recomputed offline from `outcomes/` and
//! `trajectories/` (a directory holding only those two datasets is enough), with the settings
//! of the (first) run's manifest unless overridden. On one directory the result equals the
//! live final snapshot bit for bit: both are the same function of the same counts
//! (`c2s_stats::StatsCounts`). Several directories (e.g. one per model, over the same items)
//! are counted together, so cross-model Holm families — the paper's primary family, Native
//! vs Serial over every model and domain (A.6), is the default — and side-by-side tables are
//! formed over all of them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use c2s_records::{PairedOutcome, Trajectory};
use c2s_sinks::{read_manifest, read_paired_outcomes, read_trajectory_records};
use c2s_stats::{FamilyScope, HolmFamily, MetricRow, StatsConfig, StatsCounts};

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Run directories (each needs outcomes/ and trajectories/); several are counted
    /// together (e.g. one per model over the same items).
    #[arg(required = true)]
    pub run_dirs: Vec<PathBuf>,
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
    if let Some(c) = stats["calibration"].as_bool() {
        cfg.calibration = c;
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

/// The outcomes and trajectories of a run directory.
pub fn read_run(run_dir: &Path) -> anyhow::Result<(Vec<PairedOutcome>, Vec<Trajectory>)> {
    let outcomes = read_paired_outcomes(&run_dir.join("outcomes"))
        .with_context(|| format!("reading {}/outcomes/", run_dir.display()))?;
    let trajectories = read_trajectory_records(&run_dir.join("trajectories"))
        .with_context(|| format!("reading {}/trajectories/", run_dir.display()))?;
    Ok((outcomes, trajectories))
}

/// The records of several run directories, with a check that no (model, item) is counted
/// twice across them, and a warning when their paired items differ.
pub fn read_runs(run_dirs: &[PathBuf]) -> anyhow::Result<(Vec<PairedOutcome>, Vec<Trajectory>)> {
    let mut outcomes = Vec::new();
    let mut trajectories = Vec::new();
    let mut item_sets: Vec<(&Path, std::collections::BTreeSet<String>)> = Vec::new();
    for dir in run_dirs {
        let (o, t) = read_run(dir)?;
        if o.is_empty() && t.is_empty() {
            anyhow::bail!("{} holds no outcomes and no trajectories", dir.display());
        }
        item_sets.push((dir, o.iter().map(|x| x.item_id.clone()).collect()));
        outcomes.extend(o);
        trajectories.extend(t);
    }
    if let Some((first, items)) = item_sets.first() {
        for (dir, other) in &item_sets[1..] {
            if other != items {
                eprintln!(
                    "warning: {} and {} pair different items ({} and {} item ids): \
                     a cross-model comparison is over different samples",
                    first.display(),
                    dir.display(),
                    items.len(),
                    other.len()
                );
            }
        }
    }
    Ok((outcomes, trajectories))
}

/// Recompute every metric of one or more run directories.
pub fn recompute_runs(
    run_dirs: &[PathBuf],
    cfg: &StatsConfig,
    snapshot: u64,
) -> anyhow::Result<Vec<MetricRow>> {
    let (outcomes, trajectories) = read_runs(run_dirs)?;
    snapshot_of(&outcomes, &trajectories, cfg, snapshot)
}

/// Every metric of the records of one or more runs.
pub fn snapshot_of(
    outcomes: &[PairedOutcome],
    trajectories: &[Trajectory],
    cfg: &StatsConfig,
    snapshot: u64,
) -> anyhow::Result<Vec<MetricRow>> {
    let counts = StatsCounts::from_records(outcomes, trajectories)
        .context("counting the runs (an item repeated across directories?)")?;
    Ok(counts.snapshot(cfg, snapshot)?)
}

/// The settings of the first run directory; the others' are compared and differences
/// reported.
pub fn runs_stats_config(run_dirs: &[PathBuf]) -> anyhow::Result<StatsConfig> {
    let Some(first) = run_dirs.first() else {
        anyhow::bail!("no run directory given");
    };
    let (cfg, _) = run_stats_config(first)?;
    for dir in &run_dirs[1..] {
        let (other, _) = run_stats_config(dir)?;
        if other != cfg {
            eprintln!(
                "warning: {} was run with other statistics settings than {}; using the latter's",
                dir.display(),
                first.display()
            );
        }
    }
    Ok(cfg)
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into())
}

pub fn execute(args: StatsArgs) -> anyhow::Result<ExitCode> {
    let mut cfg = runs_stats_config(&args.run_dirs)?;
    if let Some(d) = args.draws {
        cfg.bootstrap_draws = d;
    }
    if let Some(s) = args.seed {
        cfg.seed = s;
    }
    let rows = recompute_runs(&args.run_dirs, &cfg, 0)?;
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
    let models: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.model.as_str()).collect();
    let several = models.len() > 1;
    let model_col = |m: &str| {
        if several {
            format!("{m:<24} ")
        } else {
            String::new()
        }
    };
    println!(
        "{}{:<10} {:<40} {:>6} {:<26} {:>9} {:>9} {:>9} {:>12}",
        model_col("model"),
        "domain",
        "comparison",
        "length",
        "metric",
        "value",
        "ci_low",
        "ci_high",
        "n/d"
    );
    for r in &rows {
        println!(
            "{}{:<10} {:<40} {:>6} {:<26} {:>9} {:>9} {:>9} {:>12}",
            model_col(&r.model),
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
