//! `choice2seq report RUN_DIR`: `report.md` and `report.html` with paper-style tables and
//! figures (SVG and PNG), from metrics recomputed offline (a directory holding only
//! `outcomes/` and `trajectories/` is enough; the manifest adds the header and the settings).
//!
//! Candidate-coverage runs (a `[coverage]` section in the manifest's config, or `decisions/`
//! without `outcomes/`) get the coverage report instead ([`c2s_report::coverage`]); a
//! report of coverage and other runs together is refused.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use c2s_report::coverage::{write_coverage_report, CoverageReportInput};
use c2s_report::{write_report, ReportInput, ReportOutput};
use c2s_rundir::coverage::{is_coverage_run, summary_of};
use c2s_rundir::LoadedRun;
use c2s_sinks::{read_manifest, read_rejects};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run directories (each needs outcomes/ and trajectories/, or decisions/ for coverage
    /// runs); several (e.g. one per model over the same items) give one report with the
    /// models side by side. Coverage and other runs cannot be mixed.
    #[arg(required = true)]
    pub run_dirs: Vec<PathBuf>,
    /// Output directory (default: RUN_DIR/report of the first run directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Bootstrap draws (default: the run's setting, else 9,999; coverage runs: else 2,000).
    #[arg(long)]
    pub draws: Option<u32>,
    /// Bootstrap seed (default: the run's setting).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Coverage runs: report an incomplete collection (marked partial) instead of refusing
    /// it.
    #[arg(long)]
    pub allow_incomplete: bool,
}

/// A coverage run: its manifest has a [coverage] section, or (without a manifest) it holds
/// `decisions/` and no `outcomes/`.
fn coverage_dir(dir: &Path) -> bool {
    is_coverage_run(dir)
        || (!dir.join("manifest.json").exists()
            && dir.join("decisions").is_dir()
            && !dir.join("outcomes").is_dir())
}

fn print_written(written: &ReportOutput) {
    println!("{}", written.markdown.display());
    println!("{}", written.html.display());
    for f in &written.figure_files {
        println!("{}", f.display());
    }
    for p in &written.png_problems {
        eprintln!("warning: {p}");
    }
}

fn list(dirs: &[&PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The coverage report of coverage run directories.
fn coverage_report(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let run_dir = &args.run_dirs[0];
    let collection = summary_of(
        &args.run_dirs,
        args.draws,
        args.seed,
        args.allow_incomplete,
        None,
    )?;
    let manifest = read_manifest(run_dir)
        .with_context(|| format!("reading {}/manifest.json", run_dir.display()))?;
    let mut rejects = 0;
    for dir in &args.run_dirs {
        rejects += read_rejects(&dir.join("rejects"))
            .with_context(|| format!("reading {}/rejects", dir.display()))?
            .len();
    }
    // The token replay needs the run's model file; a report without it says why.
    let token_audits: Vec<(String, Result<_, String>)> = args
        .run_dirs
        .iter()
        .map(|d| {
            let audit = c2s_rundir::token_audit(d).map_err(|e| format!("{e:#}"));
            (d.display().to_string(), audit)
        })
        .collect();
    let out = args.out.clone().unwrap_or_else(|| run_dir.join("report"));
    let written = write_coverage_report(
        &CoverageReportInput {
            run_dir,
            other_runs: &args.run_dirs[1..],
            manifest: manifest.as_ref(),
            summary: &collection.summary,
            plans: &collection.plans,
            incomplete: &collection.incomplete,
            rejects,
            token_audits: &token_audits,
        },
        &out,
    )?;
    print_written(&written);
    Ok(ExitCode::SUCCESS)
}

pub fn execute(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let dialogue: Vec<&PathBuf> = args
        .run_dirs
        .iter()
        .filter(|d| c2s_rundir::is_dialogue_run(d))
        .collect();
    if !dialogue.is_empty() {
        anyhow::bail!(
            "dialogue-state run(s) {}: their tables are printed by `choice2seq dialogue {}` (the report has no dialogue section)",
            list(&dialogue),
            list(&dialogue).replace(", ", " ")
        );
    }
    let (coverage, other): (Vec<&PathBuf>, Vec<&PathBuf>) =
        args.run_dirs.iter().partition(|d| coverage_dir(d));
    if !coverage.is_empty() && !other.is_empty() {
        anyhow::bail!(
            "cannot report candidate-coverage runs ({}) together with other runs ({}): give              only coverage run directories or only choice-sequence run directories",
            list(&coverage),
            list(&other)
        );
    }
    if !coverage.is_empty() {
        return coverage_report(&args);
    }
    let run_dir = &args.run_dirs[0];
    // Every directory must hold records, one as several (a mistyped path is refused).
    let run = LoadedRun::read_nonempty(&args.run_dirs)?.with_resampling(args.draws, args.seed);
    let rows = run.metric_rows()?;
    let manifest = read_manifest(run_dir)
        .with_context(|| format!("reading {}/manifest.json", run_dir.display()))?;
    let out = args.out.clone().unwrap_or_else(|| run_dir.join("report"));
    let (contrasts, cells) = run.contrast_tables()?;
    let written = write_report(
        &ReportInput {
            run_dir,
            other_runs: &args.run_dirs[1..],
            manifest: manifest.as_ref(),
            cfg: &run.stats,
            rows: &rows,
            trajectories: &run.trajectories,
            outcomes: run.outcomes.len(),
            contrasts: &contrasts,
            cells: &cells,
        },
        &out,
    )?;
    print_written(&written);
    Ok(ExitCode::SUCCESS)
}
