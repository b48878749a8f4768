//! `choice2seq coverage RUN_DIR...`: the candidate-coverage metrics of one or more coverage
//! runs (one per model over the same cases), recomputed from `decisions/` — ordinary accuracy,
//! the native rule's detection, false rejection, acceptance and error among accepted choices,
//! present/absent discrimination of each coverage score, calibrated thresholds with their
//! tested rates, the full-set-correct and shared-correct subsets, and the precision audits
//! (`c2s_stats::coverage`).

use std::process::ExitCode;

use clap::Args;

use c2s_records::ScoringRule;
use c2s_report::text::coverage::{plan_text, text, token_audit_text};
use c2s_rundir::coverage::{summary_json, summary_of, token_audit};

/// The arguments of `choice2seq coverage`.
#[derive(Debug, Args)]
pub struct CoverageArgs {
    /// The run directories and the shared reading flags (`--json`, `--draws`, `--seed`).
    #[command(flatten)]
    pub dirs: super::RunDirArgs,
    /// Also replay every request's tokenization with the run's model file (the document's
    /// "Exact ... tokenizer/sequence replay ... finds no option capping, span collisions,
    /// instruction shortening, or state truncation").
    #[arg(long)]
    pub tokens: bool,
    /// Read an incomplete collection (a run still in progress, failed requests): the
    /// figures are printed marked partial, missing decisions counted. Without it an
    /// incomplete collection is refused ("Validation rejects incomplete collections and
    /// duplicate predictions"); duplicates are refused always.
    #[arg(long)]
    pub allow_incomplete: bool,
    /// Recompute every decision's probabilities from its stored token log-probabilities
    /// under another scoring rule: summed (the default), mean_per_token, first_token.
    #[arg(long, value_parser = super::config_name::<ScoringRule>)]
    pub scoring: Option<ScoringRule>,
}

/// Print the coverage summary of the run directories with their plan audits (and, with
/// `--tokens`, the token replay): text, or JSON with `--json`. An incomplete collection read
/// with `--allow-incomplete` is marked partial and warned about on standard error.
pub fn execute(args: CoverageArgs) -> anyhow::Result<ExitCode> {
    let c = summary_of(
        &args.dirs.run_dirs,
        args.dirs.draws,
        args.dirs.seed,
        args.allow_incomplete,
        args.scoring,
    )?;
    if c.partial() {
        eprintln!(
            "warning: partial figures: {} planned decision(s) missing or failed, e.g. {}",
            c.incomplete.len(),
            c.incomplete[0]
        );
    }
    let audits = if args.tokens {
        args.dirs
            .run_dirs
            .iter()
            .map(|d| token_audit(d))
            .collect::<anyhow::Result<Vec<_>>>()?
    } else {
        Vec::new()
    };
    if args.dirs.json {
        let mut v = summary_json(&c)?;
        if args.tokens {
            v["token_audit"] = serde_json::to_value(&audits)?;
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        if c.partial() {
            println!(
                "PARTIAL: an incomplete collection ({} planned decisions missing or failed); every figure below covers what is there\n",
                c.incomplete.len()
            );
        }
        print!("{}", plan_text(&c.plans));
        println!();
        print!("{}", text(&c.summary));
        for a in &audits {
            print!("  {}", token_audit_text(a));
        }
    }
    Ok(ExitCode::SUCCESS)
}
