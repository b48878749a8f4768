//! `choice2seq contrasts RUN_DIR...`: the unit contrasts and cells a run declares
//! (`[[stats.contrasts]]`, `[[stats.cells]]`), recomputed from `trajectories/` — e.g. B.4's
//! letter-minus-digit Serial EM averaged within base, or D.7's factor contrasts and Table D8
//! cells. Contrasts need per-unit values, so they are computed here and in the report, not in
//! live snapshots (`c2s_stats::contrasts`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use c2s_records::Trajectory;
use c2s_sinks::read_manifest;
use c2s_stats::{contrast_tables, CellRow, CellSpec, ContrastRow, ContrastSpec, Selector};

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

fn selector(v: &serde_json::Value) -> Selector {
    let opt = |k: &str| v[k].as_str().map(str::to_string);
    Selector {
        arm: v["arm"].as_str().unwrap_or_default().to_string(),
        domain: opt("domain"),
        placement: opt("placement"),
        operation: opt("operation"),
    }
}

/// The contrasts and cells declared in a run's manifest (its resolved config).
pub fn declared(run_dir: &Path) -> anyhow::Result<(Vec<ContrastSpec>, Vec<CellSpec>)> {
    let manifest = read_manifest(run_dir)
        .with_context(|| format!("reading {}/manifest.json", run_dir.display()))?;
    let Some(m) = manifest else {
        return Ok((vec![], vec![]));
    };
    let stats = &m.config["stats"];
    let side = |v: &serde_json::Value| -> Vec<Selector> {
        v.as_array()
            .map(|a| a.iter().map(selector).collect())
            .unwrap_or_default()
    };
    let contrasts = stats["contrasts"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| ContrastSpec {
                    name: c["name"].as_str().unwrap_or_default().to_string(),
                    compared: side(&c["compared"]),
                    reference: side(&c["reference"]),
                    family: c["family"].as_str().map(str::to_string),
                })
                .collect()
        })
        .unwrap_or_default();
    let cells = stats["cells"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| CellSpec {
                    name: c["name"].as_str().unwrap_or_default().to_string(),
                    select: selector(c),
                    native: c["native"].as_str().map(str::to_string),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok((contrasts, cells))
}

/// The contrast and cell tables of `trajectories` under the first run's declarations and
/// statistics settings.
pub fn tables_of(
    run_dirs: &[PathBuf],
    trajectories: &[Trajectory],
    draws: Option<u32>,
    seed: Option<u64>,
) -> anyhow::Result<(Vec<ContrastRow>, Vec<CellRow>)> {
    let Some(first) = run_dirs.first() else {
        anyhow::bail!("no run directory given");
    };
    let (contrasts, cells) = declared(first)?;
    let cfg = runs_stats_config(run_dirs)?;
    Ok(contrast_tables(
        trajectories,
        &contrasts,
        &cells,
        draws.unwrap_or(cfg.bootstrap_draws),
        seed.unwrap_or(cfg.seed),
        cfg.level,
    )?)
}

fn fmt(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into())
}

pub fn execute(args: ContrastsArgs) -> anyhow::Result<ExitCode> {
    let (_, trajectories) = read_runs(&args.run_dirs)?;
    let (rows, cells) = tables_of(&args.run_dirs, &trajectories, args.draws, args.seed)?;
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
