//! `choice2seq`: the command line of the Choice2Seq pipeline, the top of its crates. The
//! binary parses arguments and prints; the work lives in the library crates below it:
//!
//! - `c2s-run`: a run's lifecycle (a validated config in, a run directory out) and its live
//!   monitor;
//! - `c2s-serve`: the live monitor's server, and `view` over run directories;
//! - `c2s-report`: report.md/report.html, figures, and the paper's exhibits;
//! - `c2s-rundir`: a run directory read back;
//!
//! over the dataflow and statistics crates (`c2s-operators`, `c2s-model`, `c2s-stats`, ...).
//! This library holds what only the binary needs:
//!
//! - [`cli`]: the command line (argument parsing and printing only).
//! - [`bench`]: the benchmarks (`choice2seq bench`), which print measured figures.

#![deny(missing_docs)]

pub mod bench;
pub mod cli;
