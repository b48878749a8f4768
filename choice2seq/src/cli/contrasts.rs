//! `choice2seq contrasts RUN_DIR...`: the unit contrasts and cells a run declares
//! (`[[stats.contrasts]]`, `[[stats.cells]]`), recomputed from `trajectories/` — e.g. B.4's
//! letter-minus-digit Serial EM averaged within base, or D.7's factor contrasts and Table D8
//! cells. Contrasts need per-unit values, so they are computed here and in the report, not in
//! live snapshots (`c2s_stats::contrasts`).

use std::process::ExitCode;

use clap::Args;

use c2s_rundir::LoadedRun;

/// The arguments of `choice2seq contrasts`.
#[derive(Debug, Args)]
pub struct ContrastsArgs {
    /// The run directories and the shared reading flags (`--json`, `--draws`, `--seed`).
    #[command(flatten)]
    pub dirs: super::RunDirArgs,
}

fn fmt(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into())
}

/// Print the declared contrasts and cells of the run directories (a table, or JSON with
/// `--json`), under the first run's `[stats]` settings unless `--draws`/`--seed` override them.
pub fn execute(args: ContrastsArgs) -> anyhow::Result<ExitCode> {
    // Every directory must hold records, one as several (a mistyped path is refused).
    let run = LoadedRun::read_nonempty(&args.dirs.run_dirs)?
        .with_resampling(args.dirs.draws, args.dirs.seed);
    let (rows, cells) = run.contrast_tables()?;
    if args.dirs.json {
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
