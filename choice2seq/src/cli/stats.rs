//! `choice2seq stats RUN_DIR...`: every metric recomputed offline from `outcomes/` and
//! `trajectories/` (a directory holding only those two datasets is enough), with the settings
//! of the (first) run's manifest unless overridden. On one directory the result equals the
//! live final snapshot bit for bit: both are the same function of the same counts
//! (`c2s_stats::StatsCounts`). Several directories (e.g. one per model, over the same items)
//! are counted together, so cross-model Holm families — the paper's primary family, Native
//! vs Serial over every model and domain (A.6), is the default — and side-by-side tables are
//! formed over all of them.

use std::process::ExitCode;

use clap::Args;

use c2s_rundir::paired::{recompute_runs, runs_stats_config};

/// The arguments of `choice2seq stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The run directories and the shared reading flags (`--json`, `--draws`, `--seed`).
    #[command(flatten)]
    pub dirs: super::RunDirArgs,
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into())
}

/// Print every metric row of the run directories (a table, or JSON with `--json`), under the
/// first run's `[stats]` settings unless `--draws`/`--seed` override them.
pub fn execute(args: StatsArgs) -> anyhow::Result<ExitCode> {
    let mut cfg = runs_stats_config(&args.dirs.run_dirs)?;
    if let Some(d) = args.dirs.draws {
        cfg.bootstrap_draws = d;
    }
    if let Some(s) = args.dirs.seed {
        cfg.seed = s;
    }
    let rows = recompute_runs(&args.dirs.run_dirs, &cfg, 0)?;
    if args.dirs.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} metric rows ({} bootstrap draws, seed {}, level {})",
        rows.len(),
        cfg.bootstrap_draws,
        cfg.seed,
        cfg.level
    );
    let models: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.model.as_str()).collect();
    let several = models.len() > 1;
    let model_col = |m: &str| {
        if several {
            format!("{m:<24} ")
        } else {
            String::new()
        }
    };
    println!(
        "{}{:<10} {:<40} {:>6} {:<26} {:>9} {:>9} {:>9} {:>12}",
        model_col("model"),
        "domain",
        "comparison",
        "length",
        "metric",
        "value",
        "ci_low",
        "ci_high",
        "n/d"
    );
    for r in &rows {
        println!(
            "{}{:<10} {:<40} {:>6} {:<26} {:>9} {:>9} {:>9} {:>12}",
            model_col(&r.model),
            r.domain_str(),
            r.comparison,
            r.length
                .map(|l| l.to_string())
                .unwrap_or_else(|| "all".into()),
            r.metric,
            fmt_opt(r.value),
            fmt_opt(r.ci_low),
            fmt_opt(r.ci_high),
            match (r.numerator, r.denominator) {
                (Some(n), Some(d)) => format!("{n}/{d}"),
                _ => "-".into(),
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}
