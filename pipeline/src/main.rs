//! `choice2seq`: the command line of the Choice2Seq pipeline.

mod cli;
mod report;
mod run;
mod serve;

use std::process::ExitCode;

use clap::Parser;

/// Chat templates are code inside model files: the bytes each render allocates are counted
/// against its budget (`c2s_model::tokenizer::render_budget`).
#[global_allocator]
static ALLOCATOR: c2s_model::RenderBudgetAlloc = c2s_model::RenderBudgetAlloc::system();

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    cli::init_tracing(args.verbose);
    match cli::dispatch(args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
