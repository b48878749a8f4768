//! The unit contrasts and cells a run declares (`[[stats.contrasts]]`, `[[stats.cells]]`),
//! read from its manifest and computed from its trajectories.

use std::path::{Path, PathBuf};

use c2s_config::SelectorEntry;
use c2s_records::Trajectory;
use c2s_stats::{
    contrast_tables, CellRow, CellSpec, ContrastRow, ContrastSpec, Selector, StatsConfig,
};

fn selector(
    arm: &str,
    domain: &Option<String>,
    placement: &Option<String>,
    operation: &Option<String>,
) -> Selector {
    Selector {
        arm: arm.to_string(),
        domain: domain.clone(),
        placement: placement.clone(),
        operation: operation.clone(),
    }
}

/// The contrasts and cells declared in a run's manifest: its resolved config's
/// `stats.contrasts` and `stats.cells`, read with the config crate's own types (so a manifest
/// that does not hold them in that shape is an error, not a silent default).
pub fn declared(run_dir: &Path) -> anyhow::Result<(Vec<ContrastSpec>, Vec<CellSpec>)> {
    let Some(stats) = super::recorded_config(run_dir)?.stats else {
        return Ok((vec![], vec![]));
    };
    let (entries, cell_entries) = (stats.contrasts, stats.cells);
    let side = |v: &[SelectorEntry]| -> Vec<Selector> {
        v.iter()
            .map(|s| selector(&s.arm, &s.domain, &s.placement, &s.operation))
            .collect()
    };
    let contrasts = entries
        .iter()
        .map(|c| ContrastSpec {
            name: c.name.clone(),
            compared: side(&c.compared),
            reference: side(&c.reference),
            family: c.family.clone(),
            difference_of_differences: c.difference_of_differences,
            endpoint: c.endpoint,
        })
        .collect();
    let cells = cell_entries
        .iter()
        .map(|c| CellSpec {
            name: c.name.clone(),
            select: selector(&c.arm, &c.domain, &c.placement, &c.operation),
            native: c.native.clone(),
        })
        .collect();
    Ok((contrasts, cells))
}

/// The contrast and cell tables of `trajectories` under the first run's declarations, with
/// the statistics settings the caller resolved (draws, seed, level).
pub fn tables_of(
    run_dirs: &[PathBuf],
    trajectories: &[Trajectory],
    cfg: &StatsConfig,
) -> anyhow::Result<(Vec<ContrastRow>, Vec<CellRow>)> {
    let Some(first) = run_dirs.first() else {
        anyhow::bail!("no run directory given");
    };
    let (contrasts, cells) = declared(first)?;
    Ok(contrast_tables(
        trajectories,
        &contrasts,
        &cells,
        cfg.bootstrap_draws,
        cfg.seed,
        cfg.level,
    )?)
}
