//! `choice2seq`: the command line of the Choice2Seq pipeline.

use std::process::ExitCode;

use clap::Parser;

use choice2seq::cli;

/// Chat templates are code inside model files: the bytes each render allocates are counted
/// against its budget (`c2s_model::tokenizer::render_budget`).
#[global_allocator]
static ALLOCATOR: c2s_model::RenderBudgetAlloc = c2s_model::RenderBudgetAlloc::system();

fn main() -> ExitCode {
    // The binary is built for x86-64-v3 (.cargo/config.toml): say so on an older CPU rather
    // than die later on an illegal instruction (checked first, before any other work).
    #[cfg(target_arch = "x86_64")]
    if !(std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma"))
    {
        eprintln!(
            "error: this CPU lacks AVX2/FMA; choice2seq is built for x86-64-v3 (Haswell, Zen \
             or newer). Rebuild with RUSTFLAGS=\"-C target-cpu=native\" to run here."
        );
        return ExitCode::from(2);
    }
    // Before any thread allocates: the prefix engine's allocator settings hold for every
    // thread only when set first.
    c2s_model::engines::prefix::keep_freed_memory();
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
