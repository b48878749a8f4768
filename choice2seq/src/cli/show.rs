//! `choice2seq show RUN REQUEST_ID`: one request of a run — the prompt the model read, the
//! options with their token ids, the probabilities or generated text, and the answer.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use c2s_rundir::request::{request_view, view_json, view_text, LookupError};

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Run directory.
    pub run_dir: PathBuf,
    /// The request's `request_id` (as in requests/).
    pub request_id: String,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn execute(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let view = match request_view(&args.run_dir, &args.request_id) {
        Ok(v) => v,
        Err(e @ (LookupError::NoRun(_) | LookupError::NoRequest { .. })) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
        Err(LookupError::Read(e)) => return Err(e),
    };
    if args.json {
        super::print_out(&(serde_json::to_string_pretty(&view_json(&view))? + "\n"))?;
    } else {
        super::print_out(&view_text(&view))?;
    }
    Ok(ExitCode::SUCCESS)
}
