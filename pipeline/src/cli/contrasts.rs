//! `choice2seq contrasts RUN_DIR...`: the unit contrasts and cells a run declares
//! (`[[stats.contrasts]]`, `[[stats.cells]]`), recomputed from `trajectories/` — e.g. B.4's
//! letter-minus-digit Serial EM averaged within base, or D.7's factor contrasts and Table D8
//! cells. Contrasts need per-unit values, so they are computed here and in the report, not in
//! live snapshots (`c2s_stats::contrasts`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use c2s_config::{CellEntry, ContrastEntry, SelectorEntry};
use c2s_records::Trajectory;
use c2s_sinks::read_manifest;
use c2s_stats::{
    contrast_tables, CellRow, CellSpec, ContrastRow, ContrastSpec, Selector, StatsConfig,
};

use crate::cli::stats::{read_runs, runs_stats_config};

#[derive(Debug, Args)]
pub struct ContrastsArgs {
    /// Run directories (each needs trajectories/); several are read together (e.g. one per
    /// model over the same items) and share each family's Holm correction.
    #[arg(required = true)]
    pub run_dirs: Vec<PathBuf>,
    /// Print the contrasts and cells as JSON (`{"contrasts": [...], "cells": [...]}`).
    #[arg(long)]
    pub json: bool,
    /// Bootstrap draws (default: the run's setting).
    #[arg(long)]
    pub draws: Option<u32>,
    /// Bootstrap seed (default: the run's setting).
    #[arg(long)]
    pub seed: Option<u64>,
}

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

fn fmt(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into())
}

pub fn execute(args: ContrastsArgs) -> anyhow::Result<ExitCode> {
    let mut cfg = runs_stats_config(&args.run_dirs)?;
    if let Some(d) = args.draws {
        cfg.bootstrap_draws = d;
    }
    if let Some(s) = args.seed {
        cfg.seed = s;
    }
    let (_, trajectories) = read_runs(&args.run_dirs)?;
    let (rows, cells) = tables_of(&args.run_dirs, &trajectories, &cfg)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"contrasts": rows, "cells": cells}))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() && cells.is_empty() {
        println!("the run declares no [[stats.contrasts]] or [[stats.cells]]");
        return Ok(ExitCode::SUCCESS);
    }
    if !cells.is_empty() {
        println!(
            "{:<24} {:<28} {:>9} {:>12} {:>8} {:>10}",
            "model", "cell", "correct", "joint/native", "SCR", "SCR upper"
        );
        for c in &cells {
            println!(
                "{:<24} {:<28} {:>9} {:>12} {:>8} {:>10}",
                c.model,
                c.cell,
                format!("{}/{}", c.correct, c.n),
                match (c.both, c.native_correct) {
                    (Some(b), Some(n)) => format!("{b}/{n}"),
                    _ => "-".into(),
                },
                fmt(c.scr),
                fmt(c.scr_upper_zero),
            );
        }
        println!();
    }
    println!(
        "{:<24} {:<32} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "model",
        "contrast",
        "units",
        "compared",
        "reference",
        "diff",
        "ci_low",
        "ci_high",
        "sign_p",
        "holm_p"
    );
    for r in &rows {
        let e = &r.estimate;
        println!(
            "{:<24} {:<32} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            r.model,
            r.contrast,
            e.units,
            fmt(e.compared_mean),
            fmt(e.reference_mean),
            fmt(e.difference),
            fmt(e.ci_low),
            fmt(e.ci_high),
            fmt(e.sign_p),
            fmt(r.sign_p_holm),
        );
    }
    Ok(ExitCode::SUCCESS)
}
