//! `c2s-rundir`: a run directory read back. A run directory is `manifest.json` plus Parquet
//! datasets (`c2s_sinks`); the readers here turn them into records and recomputed statistics
//! for every protocol, and serve the CLI's offline commands (`stats`, `contrasts`, `dialogue`,
//! `coverage`, `bank incorrect-plans`'s observed selections, `show`'s one request), the report,
//! the exhibits, resume (`c2s_run`'s outputs) and the live monitor.
//!
//! Layers: the lowest of the pipeline's crates (above `c2s-sinks`, `c2s-stats` and the other
//! library crates); `c2s-report`, `c2s-serve`, `c2s-run` and the `choice2seq` binary read run
//! directories through it.
//!
//! - [`paired`]: item runs' outcomes and trajectories, and their recomputed metrics;
//! - [`loaded`]: several models' runs of one panel read once, their metric rows and contrast
//!   tables recomputed once and shared ([`LoadedRun`]);
//! - [`coverage`], [`dialogue`]: candidate-coverage and dialogue runs;
//! - [`contrasts`]: the declared unit contrasts' tables;
//! - [`plans`]: the panels' items and observed selections;
//! - [`recorded`]: the settings a run recorded;
//! - [`request`]: one request as `choice2seq show` prints it.

#![deny(missing_docs)]

pub mod contrasts;
pub mod coverage;
pub mod dialogue;
pub mod loaded;
pub mod paired;
pub mod plans;
pub mod recorded;
pub mod request;

pub use contrasts::{declared, tables_of};
pub use coverage::{
    incompleteness, is_coverage_run, read_plan, read_run_decisions, run_coverage_config,
    summary_json, token_audit, Collection, RunPlan, TokenAudit,
};
pub use dialogue::{
    complete_runs, is_dialogue_run, latest_attempts, read_all_field_turns, run_dialogue_options,
};
pub use loaded::LoadedRun;
pub use paired::{
    read_run, read_runs, recompute_runs, run_stats_config, runs_stats_config, snapshot_of,
    stats_config_of,
};
pub use recorded::{recorded, recorded_config, RecordedConfig, RecordedRun};
