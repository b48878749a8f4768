//! The Choice2Seq pipeline as a library: what the `choice2seq` binary runs, for programs that
//! embed it (see `examples/`).
//!
//! - [`run`]: a run's lifecycle: a validated config in, a run directory out (the timely
//!   dataflow, the engine, resume, exit status).
//! - [`rundir`]: a run directory read back: records, recorded settings, recomputed metrics,
//!   for each protocol (items, candidate coverage, dialogue).
//! - [`report`]: report.md/report.html, figures, and the paper's exhibits.
//! - [`serve`]: the live monitor.
//! - [`bench`]: the benchmarks (`choice2seq bench`), which print measured figures.
//! - [`cli`]: the command line (argument parsing and printing only).

#![deny(missing_docs)]

pub mod bench;
pub mod cli;
pub mod report;
pub mod run;
pub mod rundir;
pub mod serve;
