//! The unit contrasts and cells a run declares (`[[stats.contrasts]]`, `[[stats.cells]]`),
//! read from its manifest and computed from its trajectories.

use std::path::{Path, PathBuf};

use anyhow::Context;

use c2s_config::{CellEntry, ContrastEntry, SelectorEntry};
use c2s_records::Trajectory;
use c2s_sinks::read_manifest;
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
    let manifest = read_manifest(run_dir)
        .with_context(|| format!("reading {}/manifest.json", run_dir.display()))?;
    let Some(m) = manifest else {
        return Ok((vec![], vec![]));
    };
    let stats = &m.config["stats"];
    let field = |name: &str| match &stats[name] {
        serde_json::Value::Null => serde_json::Value::Array(vec![]),
        v => v.clone(),
    };
    let entries: Vec<ContrastEntry> =
        serde_json::from_value(field("contrasts")).with_context(|| {
            format!(
                "{}/manifest.json: config.stats.contrasts",
                run_dir.display()
            )
        })?;
    let cell_entries: Vec<CellEntry> = serde_json::from_value(field("cells"))
        .with_context(|| format!("{}/manifest.json: config.stats.cells", run_dir.display()))?;
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
