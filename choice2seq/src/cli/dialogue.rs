//! `choice2seq dialogue RUN_DIR...`: the dialogue-state endpoints of one or more dialogue runs
//! (one per model over the same dialogues), recomputed from `dialogue_turns/`
//! (`c2s_stats::dialogue`): per arm and prior-state mode the dialogue-weighted mean-turn EM,
//! final-state and trajectory EM, mean field EM, format validity and request costs (Tables C1,
//! C4, C5), recoveries (Table C3), Oracle − Rollout and local − Joint paired differences with
//! dialogue and response-component intervals (Table C2, Figures 8–9), state retention (Table
//! C5), the Holm-corrected Serial − Joint sign tests, and the perturbation schedule.

use std::process::ExitCode;

use clap::Args;

use c2s_report::text::dialogue::summary_text;
use c2s_rundir::dialogue::summary_of;

/// The arguments of `choice2seq dialogue`.
#[derive(Debug, Args)]
pub struct DialogueArgs {
    /// The run directories and the shared reading flags (`--json`, `--draws`, `--seed`).
    #[command(flatten)]
    pub dirs: super::RunDirArgs,
}

/// Print the dialogue-state summary of the run directories (text, or JSON with `--json`).
pub fn execute(args: DialogueArgs) -> anyhow::Result<ExitCode> {
    let summary = summary_of(&args.dirs.run_dirs, args.dirs.draws, args.dirs.seed)?;
    if args.dirs.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", summary_text(&summary));
    }
    Ok(ExitCode::SUCCESS)
}
