//! `choice2seq bench engine`: one engine on a fixed panel of real requests (the first requests
//! of Native and Serial/Full for dev items of both domains), in batches, with no dataflow
//! around it. Prints requests/s and prompt tokens/s, and can write every request's token ids,
//! option token ids and scored distribution as JSON lines — what `scripts/gpu-check.sh` compares
//! with a plain transformers loop on the same tokens.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;

use c2s_model::{Engine, PromptSpec, ScoreJob};
use c2s_protocol::{Controller, ControllerConfig};
use c2s_records::{Arm, ArmSpec, ItemPolicy, Request, Support};

/// Settings of one engine check.
#[derive(Debug, clap::Args)]
pub struct EngineCheck {
    /// Model: GGUF file or local Hugging Face directory.
    #[arg(long, default_value = "models/SmolLM2-135M-Instruct.Q4_1.gguf")]
    pub model: PathBuf,
    /// Engine: `prefix` or `mistralrs`.
    #[arg(long, default_value = "mistralrs")]
    pub engine: c2s_config::EngineKind,
    /// How the prefix engine holds its weights: `f32` (default) or `bf16` (the named bf16
    /// mode). The mistralrs engine takes no dtype here.
    #[arg(long, default_value = "f32", value_parser = crate::cli::config_name::<c2s_model::WeightDtype>)]
    pub dtype: c2s_model::WeightDtype,
    /// mistral.rs mode: `reference` or `native` (default: native in a cuda build).
    #[arg(long, value_parser = crate::cli::config_name::<c2s_config::MistralRsMode>)]
    pub mode: Option<c2s_config::MistralRsMode>,
    /// Dev items per domain (two requests each).
    #[arg(long, default_value_t = 24)]
    pub per_domain: usize,
    /// Bank directory.
    #[arg(long, default_value = "data/banks")]
    pub banks: PathBuf,
    /// Requests per engine call.
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// Rounds over the panel (figures of each are printed; the first warms caches and
    /// kernels).
    #[arg(long, default_value_t = 2)]
    pub rounds: usize,
    /// mistral.rs's prefix cache, in sequences (default: the engine's default; 0: off, so
    /// that every round computes every prompt cold, as a plain transformers loop does).
    #[arg(long)]
    pub prefix_cache: Option<usize>,
    /// Write every request's token ids and scores here (JSON lines).
    #[arg(long)]
    pub scores_out: Option<PathBuf>,
}

/// The panel's requests: Native and the first Serial/Full step of `per_domain` dev items of
/// each domain.
fn panel(banks: &Path, per_domain: usize) -> anyhow::Result<Vec<Request>> {
    let policy = ItemPolicy::default();
    let cfg = ControllerConfig::default();
    let mut out = Vec::new();
    for name in ["arithmetic-dev.jsonl", "lexical-dev.jsonl"] {
        let bank = c2s_banks::bank::read_bank(&banks.join(name), &policy)?;
        for item in bank.iter().take(per_domain) {
            for spec in [
                ArmSpec::new(Arm::Native),
                ArmSpec::new(Arm::Serial).with_support(Support::FULL),
            ] {
                out.extend(Controller::new(item, spec, None, &cfg)?.start()?);
            }
        }
    }
    Ok(out)
}

fn load(check: &EngineCheck) -> anyhow::Result<Box<dyn Engine>> {
    let path = &check.model;
    Ok(match check.engine {
        c2s_config::EngineKind::Prefix => {
            let config = c2s_model::PrefixEngineConfig {
                dtype: check.dtype,
                ..Default::default()
            };
            Box::new(
                c2s_model::PrefixEngine::load(path, config)
                    .with_context(|| format!("loading {}", path.display()))?,
            )
        }
        _ if check.dtype != c2s_model::WeightDtype::F32 => {
            anyhow::bail!(
                "--dtype {} is a mode of the prefix engine",
                check.dtype.name()
            )
        }
        #[cfg(feature = "mistralrs")]
        c2s_config::EngineKind::Mistralrs => {
            let mut settings = c2s_model::MistralRsSettings {
                mode: c2s_run::engine::mistralrs_mode(check.mode),
                ..Default::default()
            };
            if let Some(n) = check.prefix_cache {
                settings.prefix_cache = n;
            }
            Box::new(
                c2s_model::MistralRsEngine::load_with(path, &settings, None)
                    .with_context(|| format!("loading {} with mistral.rs", path.display()))?,
            )
        }
        other => anyhow::bail!("`bench engine` runs the prefix or mistralrs engine, not `{other}`"),
    })
}

pub fn run(check: EngineCheck) -> anyhow::Result<ExitCode> {
    let requests = panel(&check.banks, check.per_domain)?;
    let tokenizer = c2s_model::load_tokenizer(&check.model)
        .with_context(|| format!("reading the tokenizer of {}", check.model.display()))?;
    let jobs: Vec<ScoreJob> = requests
        .iter()
        .map(|r| ScoreJob {
            prompt: PromptSpec::from_request(r),
            options: r.options.iter().map(|o| o.code.clone()).collect(),
        })
        .collect();
    let t = Instant::now();
    let mut engine = load(&check)?;
    let load_s = t.elapsed().as_secs_f64();
    println!(
        "engine check: {} requests ({} dev items per domain, Native + Serial/Full step 1), model {}, engine {} ({}), loaded in {load_s:.1} s",
        jobs.len(),
        check.per_domain,
        check.model.display(),
        check.engine,
        engine.identity().engine
    );
    let mut outputs = Vec::new();
    for round in 0..check.rounds.max(1) {
        engine.clear_cache();
        let t = Instant::now();
        outputs.clear();
        for chunk in jobs.chunks(check.batch.max(1)) {
            outputs.extend(engine.score(chunk));
        }
        let secs = t.elapsed().as_secs_f64();
        let tokens: u64 = outputs
            .iter()
            .filter_map(|o| o.as_ref().ok())
            .map(|o| u64::from(o.prompt_tokens))
            .sum();
        println!(
            "round {round}: {:.1} s, {:.2} requests/s, {:.0} prompt tokens/s",
            secs,
            jobs.len() as f64 / secs.max(1e-9),
            tokens as f64 / secs.max(1e-9)
        );
    }
    let failed = outputs.iter().filter(|o| o.is_err()).count();
    if let Some(path) = &check.scores_out {
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        );
        for ((r, j), o) in requests.iter().zip(&jobs).zip(&outputs) {
            let row = match o {
                Ok(o) => serde_json::json!({
                    "request_id": r.request_id,
                    "prompt_ids": tokenizer.prompt_tokens(&j.prompt)?,
                    "options": j.options,
                    "option_ids": tokenizer.option_tokens(&j.options)?,
                    "probabilities": o.probabilities,
                    "logprobs": o.logprobs,
                }),
                Err(e) => serde_json::json!({"request_id": r.request_id, "error": e.to_string()}),
            };
            writeln!(f, "{row}")?;
        }
        f.flush()?;
        println!("scores: {}", path.display());
    }
    if failed > 0 {
        eprintln!("{failed} requests failed");
        for e in outputs.iter().filter_map(|o| o.as_ref().err()).take(3) {
            eprintln!("  {e}");
        }
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
