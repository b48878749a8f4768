//! `choice2seq run CONFIG [--run-dir DIR] [-w N] [-n N] [-p I] [-h HOSTFILE] [--serve ADDR]
//! [--serve-token-env NAME]`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgAction, Args};

use c2s_run::{run, RunOptions, Topology};

/// Run (or resume) the pipeline described by a TOML config.
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct RunArgs {
    /// The run configuration (see config/reference.toml).
    pub config: PathBuf,
    /// Run directory (default: the config's output.dir). An existing directory is resumed.
    #[arg(long)]
    pub run_dir: Option<PathBuf>,
    /// Timely worker threads per process (each loads its own engine).
    #[arg(short = 'w', long = "workers", default_value_t = 1)]
    pub workers: usize,
    /// Number of timely processes.
    #[arg(short = 'n', long = "processes", default_value_t = 1)]
    pub processes: usize,
    /// Index of this process.
    #[arg(short = 'p', long = "process", default_value_t = 0)]
    pub process: usize,
    /// Timely host file (one host:port per line), for several processes.
    #[arg(short = 'h', long = "hostfile")]
    pub hostfile: Option<PathBuf>,
    /// No progress display.
    #[arg(long)]
    pub quiet: bool,
    /// Serve the live monitor (Prometheus /metrics, a live page at /) on PORT or HOST:PORT
    /// (a port alone binds 127.0.0.1; another address needs --serve-token-env); overrides
    /// the config's [serve] address.
    #[arg(long, value_name = "ADDR", value_parser = c2s_config::parse_serve_address)]
    pub serve: Option<std::net::SocketAddr>,
    /// Keep serving the final state this many seconds after the run ends (Ctrl-C ends the
    /// wait); overrides [serve] linger_seconds.
    #[arg(long, value_name = "SECONDS")]
    pub serve_linger: Option<f64>,
    #[command(flatten)]
    pub serve_token: c2s_serve::auth::ServeTokenArg,
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,
}

pub fn execute(args: RunArgs) -> anyhow::Result<ExitCode> {
    run(RunOptions {
        config: args.config,
        run_dir: args.run_dir,
        topology: Topology {
            workers: args.workers,
            processes: args.processes,
            process: args.process,
            hostfile: args.hostfile,
        },
        quiet: args.quiet,
        serve: args.serve,
        serve_linger: args.serve_linger,
        serve_token_env: args.serve_token.serve_token_env,
    })
}
