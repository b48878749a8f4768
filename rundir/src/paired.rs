//! The records of item runs: their paired outcomes and trajectories, the statistics settings
//! their manifests recorded, and every metric recomputed from them (`choice2seq stats`, the
//! report, the exhibits, resume).

use std::path::{Path, PathBuf};

use anyhow::Context;

use c2s_config::StatsSection;
use c2s_records::{PairedOutcome, Trajectory};
use c2s_sinks::{read_paired_outcomes, read_trajectory_records};
use c2s_stats::{HolmFamily, MetricRow, StatsConfig, StatsCounts};

/// The statistics settings a run was made with (from its manifest), or the defaults.
pub fn run_stats_config(run_dir: &Path) -> anyhow::Result<(StatsConfig, Option<u64>)> {
    let Some(run) = super::recorded(run_dir)? else {
        return Ok((StatsConfig::default(), None));
    };
    let stats = match &run.config.stats {
        Some(stats) => stats_config_of(stats),
        None => StatsConfig::default(),
    };
    Ok((stats, Some(run.manifest.updated_at_ms)))
}

/// The statistics settings of a config's `[stats]`.
pub fn stats_config_of(stats: &StatsSection) -> StatsConfig {
    StatsConfig {
        bootstrap_draws: stats.bootstrap_draws,
        seed: stats.seed,
        level: stats.level,
        families: stats
            .families
            .iter()
            .map(|f| HolmFamily {
                name: f.name.clone(),
                comparisons: f.comparisons.clone(),
                scope: f.scope,
            })
            .collect(),
        threads: 0,
        calibration: stats.calibration,
    }
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
