//! Command-line interface: argument parsing and dispatch to the subcommands.

mod bank;
pub mod contrasts;
pub mod coverage;
pub mod dialogue;
mod model;
mod report;
mod reproduce;
mod run;
mod show;
pub mod stats;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// The arguments every offline reader of run directories shares (`stats`, `contrasts`,
/// `coverage`, `dialogue`).
#[derive(Debug, Args)]
pub struct RunDirArgs {
    /// Run directories; several (e.g. one per model over the same items) are read together
    /// and share their Holm families.
    #[arg(required = true)]
    pub run_dirs: Vec<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Bootstrap draws (default: the run's [stats] setting).
    #[arg(long)]
    pub draws: Option<u32>,
    /// Bootstrap seed (default: the run's [stats] setting).
    #[arg(long)]
    pub seed: Option<u64>,
}

/// Choice2Seq: does a model that selects the right answer among eight candidates also
/// construct it one character at a time?
#[derive(Debug, Parser)]
#[command(name = "choice2seq", version, about)]
pub struct Cli {
    /// More log output (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands of `choice2seq`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build, check and summarize the frozen item banks.
    #[command(subcommand)]
    Bank(bank::BankCommand),
    /// Run (or resume) the pipeline on a config: items in, paired outcomes and metrics out.
    Run(run::RunArgs),
    /// Recompute every metric of a run offline from outcomes/ and trajectories/ (each run
    /// directory needs both).
    Stats(stats::StatsArgs),
    /// The unit contrasts and cells a run declares ([[stats.contrasts]], [[stats.cells]]),
    /// with unit-bootstrap intervals and exact sign-flip tests.
    Contrasts(contrasts::ContrastsArgs),
    /// Candidate-coverage metrics of coverage runs (decisions/): accuracy, detection, false
    /// rejection, discrimination, calibrated thresholds, subsets and precision audits.
    Coverage(coverage::CoverageArgs),
    /// Dialogue-state endpoints of dialogue runs (dialogue_turns/): mean-turn, final and
    /// trajectory EM, paired differences, retention, sign tests, perturbations (Appendix C).
    Dialogue(dialogue::DialogueArgs),
    /// Write report.md and report.html with tables and figures (SVG, PNG) of a run.
    Report(report::ReportArgs),
    /// Run the panels an exhibit of the paper needs (reusing complete runs) and write the
    /// exhibit in the paper's layout with the paper's numbers beside ours.
    Reproduce(reproduce::ReproduceArgs),
    /// Serve the live page (and /metrics) over run directories, finished or running: item,
    /// coverage or dialogue runs.
    View(c2s_serve::view::ViewArgs),
    /// Benchmarks that print measured figures.
    #[command(subcommand)]
    Bench(crate::bench::BenchCommand),
    /// Print one request of a run: the prompt the model read (prompts/), the options with
    /// their token ids, the probabilities or generated text, and the answer.
    Show(show::ShowArgs),
    /// Inspect a model (identity, tokenization, the prompt text it is sent) or export its
    /// tokenizer.
    #[command(subcommand)]
    Model(model::ModelCommand),
}

/// A flag's value named as a config names it: any choice that deserializes from its config
/// name (`#[serde(rename_all = …)]`), so flags and configs take the same names and a flag
/// needs no parser of its own (`value_parser = config_name::<T>`).
pub(crate) fn config_name<T: serde::de::DeserializeOwned>(
    name: &str,
) -> Result<T, ConfigNameError> {
    use serde::de::IntoDeserializer;
    T::deserialize(IntoDeserializer::<serde::de::value::Error>::into_deserializer(name)).map_err(
        |source| ConfigNameError {
            value: name.to_string(),
            source,
        },
    )
}

/// A flag's value that is no config name of its choice ([`config_name`]). Its text is serde's,
/// which names the value and the names it could be; clap prints it after the flag.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{source}")]
pub(crate) struct ConfigNameError {
    /// The value given on the command line.
    pub value: String,
    /// serde's refusal (an unknown variant, say).
    #[source]
    pub source: serde::de::value::Error,
}

/// Write `text` to standard output; a closed pipe (`… | head`) ends the output quietly.
pub(crate) fn print_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Send log records to standard error at `warn`, or `info` with `-v` and `debug` with `-vv`;
/// a `RUST_LOG` filter overrides the level. A second call keeps the first subscriber.
pub fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Run the parsed command line's subcommand; its exit status, or an error that `main` prints
/// and exits 1 with.
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Bank(cmd) => bank::run(cmd),
        Command::Bench(cmd) => crate::bench::run(cmd),
        Command::Model(cmd) => model::run(cmd),
        Command::Run(args) => run::execute(args),
        Command::Stats(args) => stats::execute(args),
        Command::Show(args) => show::execute(args),
        Command::Contrasts(args) => contrasts::execute(args),
        Command::Coverage(args) => coverage::execute(args),
        Command::Dialogue(args) => dialogue::execute(args),
        Command::Report(args) => report::execute(args),
        Command::Reproduce(args) => reproduce::execute(args),
        Command::View(args) => c2s_serve::view::execute(args),
    }
}

#[cfg(test)]
mod tests {
    use super::config_name;
    use c2s_config::{Batching, MistralRsMode};
    use c2s_records::{RequestLayout, ScoringRule};

    /// Flags take the names configs take; an unknown name is refused with the names it could be.
    #[test]
    fn flags_take_the_config_names() {
        assert_eq!(
            config_name::<RequestLayout>("state_last"),
            Ok(RequestLayout::StateLast)
        );
        assert_eq!(config_name::<Batching>("batch"), Ok(Batching::Batch));
        assert_eq!(
            config_name::<MistralRsMode>("native"),
            Ok(MistralRsMode::Native)
        );
        assert_eq!(
            config_name::<ScoringRule>("mean_per_token"),
            Ok(ScoringRule::MeanPerToken)
        );
        let err = config_name::<RequestLayout>("state-last")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("state-last") && err.contains("state_last"),
            "{err}"
        );
    }

    /// A refused name keeps the value and serde's text, which is what clap prints.
    #[test]
    fn config_name_error_message() {
        let err = config_name::<Batching>("bulk").unwrap_err();
        assert_eq!(err.value, "bulk");
        assert_eq!(err.to_string(), err.source.to_string());
        assert!(
            err.to_string().starts_with("unknown variant `bulk`"),
            "{err}"
        );
    }
}
