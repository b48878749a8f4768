//! `choice2seq bank build | stats | check`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;

use c2s_banks::bank::{bank_stats, build_banks, read_bank, write_banks, Sources, DEFAULT_SEED};
use c2s_records::ItemPolicy;

#[derive(Debug, Subcommand)]
pub enum BankCommand {
    /// Regenerate the frozen banks (byte-identical for the same seed and sources).
    Build {
        /// Output directory.
        #[arg(long, default_value = "data/banks")]
        out: PathBuf,
        /// Generator seed.
        #[arg(long, default_value_t = DEFAULT_SEED)]
        seed: u64,
        /// WordNet 3.0 database directory (Debian package `wordnet-base`).
        #[arg(long, default_value = "/usr/share/wordnet")]
        wordnet: PathBuf,
        /// wordfreq 3.1.1 `large_en.msgpack.gz` (scripts/fetch-sources.sh installs it).
        #[arg(long, default_value = ".tools/wordfreq/large_en.msgpack.gz")]
        wordfreq: PathBuf,
    },
    /// Print per-length counts, strata and geometry of a JSONL bank.
    Stats {
        /// Bank file (JSONL, one item per line).
        file: PathBuf,
    },
}

pub fn run(cmd: BankCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BankCommand::Build {
            out,
            seed,
            wordnet,
            wordfreq,
        } => {
            for (what, path) in [
                ("WordNet directory", &wordnet),
                ("wordfreq file", &wordfreq),
            ] {
                if !path.exists() {
                    anyhow::bail!(
                        "{what} {} not found; run scripts/fetch-sources.sh first",
                        path.display()
                    );
                }
            }
            let sources = Sources {
                wordnet_dir: wordnet,
                wordfreq_file: wordfreq,
            };
            let mut banks = build_banks(&sources, seed).context("building the banks")?;
            write_banks(&mut banks, &out).context("writing the banks")?;
            println!(
                "wrote {} arithmetic-test, {} lexical-test, {} arithmetic-dev, {} lexical-dev items to {}",
                banks.arithmetic_test.len(),
                banks.lexical_test.len(),
                banks.arithmetic_dev.len(),
                banks.lexical_dev.len(),
                out.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        BankCommand::Stats { file } => {
            let items = read_bank(&file, &ItemPolicy::default())?;
            println!("{}", file.display());
            print!("{}", bank_stats(&items));
            Ok(ExitCode::SUCCESS)
        }
    }
}
