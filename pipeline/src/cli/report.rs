//! `choice2seq report RUN_DIR`: `report.md` and `report.html` with paper-style tables and
//! figures (SVG and PNG), from metrics recomputed offline (a directory holding only
//! `outcomes/` and `trajectories/` is enough; the manifest adds the header and the settings).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use c2s_sinks::{read_manifest, read_paired_outcomes, read_trajectory_records};

use super::stats::{recompute, run_stats_config};
use crate::report::{write_report, ReportInput};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run directory (needs outcomes/ and trajectories/).
    pub run_dir: PathBuf,
    /// Output directory (default: RUN_DIR/report).
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
    let run_dir = &args.run_dir;
    let (mut cfg, _) = run_stats_config(run_dir)?;
    if let Some(d) = args.draws {
        cfg.bootstrap_draws = d;
    }
    if let Some(s) = args.seed {
        cfg.seed = s;
    }
    let rows = recompute(run_dir, &cfg, 0)?;
    let trajectories =
        read_trajectory_records(&run_dir.join("trajectories")).context("reading trajectories/")?;
    let outcomes = read_paired_outcomes(&run_dir.join("outcomes"))
        .context("reading outcomes/")?
        .len();
    let manifest = read_manifest(run_dir)
        .with_context(|| format!("reading {}/manifest.json", run_dir.display()))?;
    let out = args.out.clone().unwrap_or_else(|| run_dir.join("report"));
    let written = write_report(
        &ReportInput {
            run_dir,
            manifest: manifest.as_ref(),
            cfg: &cfg,
            rows: &rows,
            trajectories: &trajectories,
            outcomes,
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
