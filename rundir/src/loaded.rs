//! Several models' run directories of one panel, read once: their records in memory
//! ([`LoadedRun`]), their metric rows and contrast tables recomputed on first use and shared by
//! the clones (the exhibits' panels, `report`, `contrasts`).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use anyhow::Context;
use c2s_records::{PairedOutcome, Trajectory};
use c2s_stats::{CellRow, ContrastRow, MetricRow, StatsConfig};

/// One panel's records in memory, every model's together.
#[derive(Debug, Clone)]
pub struct LoadedRun {
    /// The run directories read, one per model.
    pub run_dirs: Vec<PathBuf>,
    /// The statistics settings of the first run (the panel config's).
    pub stats: StatsConfig,
    /// The paired Native/Serial outcomes of every run.
    pub outcomes: Vec<PairedOutcome>,
    /// The trajectories of every run, every arm.
    pub trajectories: Vec<Trajectory>,
    /// What is recomputed from the records (bootstraps included), once, shared by the clones.
    derived: Arc<Derived>,
}

/// A loaded run's statistics, computed on first use.
#[derive(Debug, Default)]
struct Derived {
    metric_rows: OnceLock<Vec<MetricRow>>,
    contrast_tables: OnceLock<(Vec<ContrastRow>, Vec<CellRow>)>,
}

impl LoadedRun {
    /// The records of every model's run in `run_dirs` and the statistics settings of the first
    /// (the same panel config, so the same settings; a difference is reported,
    /// [`crate::runs_stats_config`]). One directory is read alone ([`crate::read_run`]: a run
    /// without records yet reads as empty); several are read as `report` reads them
    /// ([`crate::read_runs`], with its check that they pair the same items).
    pub fn read(run_dirs: &[PathBuf]) -> anyhow::Result<LoadedRun> {
        LoadedRun::read_with(run_dirs, || match run_dirs {
            [one] => crate::read_run(one),
            several => crate::read_runs(several),
        })
    }

    /// [`LoadedRun::read`], but one directory is read as several are ([`crate::read_runs`]),
    /// so a directory holding no outcomes and no trajectories (a mistyped path) is refused
    /// rather than read as an empty run: the CLI's `report` and `contrasts` read their
    /// arguments so.
    pub fn read_nonempty(run_dirs: &[PathBuf]) -> anyhow::Result<LoadedRun> {
        LoadedRun::read_with(run_dirs, || crate::read_runs(run_dirs))
    }

    /// The settings of `run_dirs` (read first, as the commands always have), then the records
    /// `records` reads.
    fn read_with(
        run_dirs: &[PathBuf],
        records: impl FnOnce() -> anyhow::Result<(Vec<PairedOutcome>, Vec<Trajectory>)>,
    ) -> anyhow::Result<LoadedRun> {
        let stats = crate::runs_stats_config(run_dirs)?;
        let (outcomes, trajectories) = records()?;
        Ok(LoadedRun::from_records(
            run_dirs.to_vec(),
            stats,
            outcomes,
            trajectories,
        ))
    }

    /// Records already in memory, read from `run_dirs` (the contrasts' declarations are read
    /// from the first), under the settings `stats`; nothing computed yet.
    pub fn from_records(
        run_dirs: Vec<PathBuf>,
        stats: StatsConfig,
        outcomes: Vec<PairedOutcome>,
        trajectories: Vec<Trajectory>,
    ) -> LoadedRun {
        LoadedRun {
            run_dirs,
            stats,
            outcomes,
            trajectories,
            derived: Arc::default(),
        }
    }

    /// The run with its bootstrap draws and seed overridden where given (the CLI's `--draws`,
    /// `--seed`), the others kept; what was computed under the old settings is dropped.
    pub fn with_resampling(self, draws: Option<u32>, seed: Option<u64>) -> LoadedRun {
        let mut stats = self.stats;
        if let Some(d) = draws {
            stats.bootstrap_draws = d;
        }
        if let Some(s) = seed {
            stats.seed = s;
        }
        LoadedRun::from_records(self.run_dirs, stats, self.outcomes, self.trajectories)
    }

    /// The run directories, for messages.
    pub fn display(&self) -> String {
        let dirs: Vec<String> = self
            .run_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        dirs.join(", ")
    }

    /// The run's metric rows, recomputed with its statistics settings.
    pub fn metric_rows(&self) -> anyhow::Result<Vec<MetricRow>> {
        if let Some(rows) = self.derived.metric_rows.get() {
            return Ok(rows.clone());
        }
        let rows = crate::paired::snapshot_of(&self.outcomes, &self.trajectories, &self.stats, 0)
            .with_context(|| format!("metrics of {}", self.display()))?;
        Ok(self.derived.metric_rows.get_or_init(|| rows).clone())
    }

    /// The run on the items `ids` holds only: the same records, fewer items (statistics
    /// recomputed from them by [`LoadedRun::metric_rows`]).
    pub fn restricted(&self, ids: &BTreeSet<String>) -> LoadedRun {
        LoadedRun {
            run_dirs: self.run_dirs.clone(),
            stats: self.stats.clone(),
            outcomes: (self.outcomes.iter())
                .filter(|o| ids.contains(&o.item_id))
                .cloned()
                .collect(),
            trajectories: (self.trajectories.iter())
                .filter(|t| ids.contains(&t.item_id))
                .cloned()
                .collect(),
            derived: Arc::default(),
        }
    }

    /// The run's declared unit contrasts and cells (`[[stats.contrasts]]`, `[[stats.cells]]`).
    pub fn contrast_tables(&self) -> anyhow::Result<(Vec<ContrastRow>, Vec<CellRow>)> {
        if let Some(tables) = self.derived.contrast_tables.get() {
            return Ok(tables.clone());
        }
        let tables = crate::contrasts::tables_of(&self.run_dirs, &self.trajectories, &self.stats)
            .with_context(|| format!("contrasts of {}", self.display()))?;
        Ok(self.derived.contrast_tables.get_or_init(|| tables).clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory with no manifest and no records: the panel reading takes it as an empty
    /// run, the CLI's refuses it.
    #[test]
    fn one_directory_without_records_is_empty_for_a_panel_and_refused_by_the_cli() {
        let dir = std::env::temp_dir().join(format!("c2s-loaded-none-{}", std::process::id()));
        let dirs = vec![dir.clone()];
        let run = LoadedRun::read(&dirs).unwrap();
        assert!(run.outcomes.is_empty() && run.trajectories.is_empty());
        assert_eq!(run.stats, StatsConfig::default());
        assert_eq!(run.display(), dir.display().to_string());
        let err = LoadedRun::read_nonempty(&dirs).unwrap_err();
        assert!(
            format!("{err:#}").contains("holds no outcomes and no trajectories"),
            "{err:#}"
        );
    }

    /// `--draws`/`--seed` override what they name and nothing else.
    #[test]
    fn resampling_overrides_the_draws_and_seed_given() {
        let stats = StatsConfig::default();
        let run = LoadedRun::from_records(vec![], stats.clone(), vec![], vec![]);
        let same = run.clone().with_resampling(None, None);
        assert_eq!(same.stats, stats);
        let seeded = run.clone().with_resampling(None, Some(stats.seed + 1));
        assert_eq!(seeded.stats.seed, stats.seed + 1);
        assert_eq!(seeded.stats.bootstrap_draws, stats.bootstrap_draws);
        let drawn = run.with_resampling(Some(7), None);
        assert_eq!(drawn.stats.bootstrap_draws, 7);
        assert_eq!(drawn.stats.seed, stats.seed);
    }
}
