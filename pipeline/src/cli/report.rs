//! `choice2seq report RUN_DIR`: `report.md` and `report.html` with paper-style tables and
//! figures (SVG and PNG), from metrics recomputed offline (a directory holding only
//! `outcomes/` and `trajectories/` is enough; the manifest adds the header and the settings).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::stats::{read_runs, runs_stats_config, snapshot_of};
use crate::report::{write_report, ReportInput};
use c2s_sinks::read_manifest;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run directories (each needs outcomes/ and trajectories/); several (e.g. one per model
    /// over the same items) give one report with the models side by side.
    #[arg(required = true)]
    pub run_dirs: Vec<PathBuf>,
    /// Output directory (default: RUN_DIR/report of the first run directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Bootstrap draws (default: the run's setting, else 9,999).
    #[arg(long)]
    pub draws: Option<u32>,
    /// Bootstrap seed (default: the run's setting).
    #[arg(long)]
    pub seed: Option<u64>,
}

pub fn execute(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let run_dir = &args.run_dirs[0];
    let mut cfg = runs_stats_config(&args.run_dirs)?;
    if let Some(d) = args.draws {
        cfg.bootstrap_draws = d;
    }
    if let Some(s) = args.seed {
        cfg.seed = s;
    }
    let (outcomes, trajectories) = read_runs(&args.run_dirs)?;
    let rows = snapshot_of(&outcomes, &trajectories, &cfg, 0)?;
    let outcomes = outcomes.len();
    let manifest = read_manifest(run_dir)
        .with_context(|| format!("reading {}/manifest.json", run_dir.display()))?;
    let out = args.out.clone().unwrap_or_else(|| run_dir.join("report"));
    let (contrasts, cells) = crate::cli::contrasts::tables_of(&args.run_dirs, &trajectories, &cfg)?;
    let written = write_report(
        &ReportInput {
            run_dir,
            other_runs: &args.run_dirs[1..],
            manifest: manifest.as_ref(),
            cfg: &cfg,
            rows: &rows,
            trajectories: &trajectories,
            outcomes,
            contrasts: &contrasts,
            cells: &cells,
        },
        &out,
    )?;
    println!("{}", written.markdown.display());
    println!("{}", written.html.display());
    for f in &written.figure_files {
        println!("{}", f.display());
    }
    for p in &written.png_problems {
        eprintln!("warning: {p}");
    }
    Ok(ExitCode::SUCCESS)
}
