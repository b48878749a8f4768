//! `choice2seq run`: the run lifecycle — validate the config (exit 2 before any work), prepare
//! or resume the run directory, start timely workers (each with its own engine), feed items
//! with backpressure, commit Kafka offsets behind durable outputs, stop gracefully on Ctrl-C.

mod console;
mod coverage;
mod dataflow;
mod dialogue;
pub mod engine;
mod feed;
mod outputs;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context;

use c2s_config::RunConfig;
use c2s_model::service::ServiceStats;
use c2s_model::ModelIdentity;
use c2s_operators::live_stats::LiveTable;
use c2s_operators::Counters;

pub use outputs::ResumeState;

/// Options of `choice2seq run`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub config: PathBuf,
    pub run_dir: Option<PathBuf>,
    /// Arguments for timely (`-w`, `-n`, `-p`, `-h`).
    pub timely_args: Vec<String>,
    /// No progress bars (logs and the final summary only).
    pub quiet: bool,
}

/// State shared by every worker of this process.
pub struct Shared {
    pub cfg: RunConfig,
    /// The model's identity, computed once before the workers start.
    pub identity: ModelIdentity,
    pub run_dir: PathBuf,
    pub resume: ResumeState,
    pub runtime: tokio::runtime::Handle,
    pub counters: Arc<Counters>,
    pub live: Arc<Mutex<LiveTable>>,
    /// Set by Ctrl-C: stop feeding, finish what is in flight, close parts.
    pub stop: Arc<AtomicBool>,
    /// Set when a sink could not write.
    pub failed: Arc<AtomicBool>,
    pub quiet: bool,
    pub total_items: Option<u64>,
    /// Each worker's inference counters, added when the worker ends.
    pub engine_stats: Mutex<Vec<ServiceStats>>,
    /// The model's tokenizer when an arm needs D.9's token-matched padding.
    pub tokens: Option<c2s_protocol::TokenCounterRef>,
    /// What chat templates' `strftime_now` reports: the run's first start, as recorded in
    /// the manifest (a resumed run renders the prompts it rendered before).
    pub template_time: c2s_model::TemplateTime,
}

/// What a finished run measured.
#[derive(Debug, Clone)]
pub struct RunReport {
    pub exit: ExitCode,
    /// Seconds from the workers' start to their end (model loading included).
    pub elapsed: f64,
    pub requests: u64,
    pub trajectories: u64,
    /// Inference counters summed over this process's workers.
    pub engine: ServiceStats,
}

/// The model identity recorded in the manifest (computed once, before the workers start).
/// Reading the tokenizer here also refuses a model whose tokenizer cannot be built exactly
/// (an unknown pre-tokenizer, say) before any work.
pub fn model_identity(
    cfg: &RunConfig,
    template_time: c2s_model::TemplateTime,
) -> anyhow::Result<ModelIdentity> {
    let engine = match cfg.model.engine.as_str() {
        "simulated" => {
            return Ok(
                c2s_model::Engine::identity(&c2s_model::SimulatedEngine::new(cfg.run.option_seed))
                    .clone(),
            )
        }
        #[cfg(feature = "openai")]
        "openai" => return remote_identity(cfg, template_time),
        "prefix" => c2s_model::PREFIX_ENGINE.to_string(),
        #[cfg(feature = "mistralrs")]
        "mistralrs" => engine::mistralrs_settings(cfg).engine_name(),
        other => anyhow::bail!(
            "engine `{other}` is not compiled into this binary (build with the `mistralrs` feature)"
        ),
    };
    let tok = c2s_model::load_tokenizer(&cfg.model.path)
        .with_context(|| format!("reading {}", cfg.model.path.display()))?;
    Ok(c2s_model::model_identity(&cfg.model.path, &tok, &engine)?)
}

/// A served model's identity, after asking the server what it serves and whether it can
/// score: a scored arm on a server without prompt log-probabilities is refused here, before
/// any work, naming the missing capability.
#[cfg(feature = "openai")]
fn remote_identity(
    cfg: &RunConfig,
    template_time: c2s_model::TemplateTime,
) -> anyhow::Result<ModelIdentity> {
    let settings = engine::openai_settings(cfg)?;
    let info = c2s_model::probe_server(&settings)?;
    let mut scored: Vec<String> = cfg
        .arms
        .iter()
        .filter(|a| a.contract == c2s_records::Contract::ScoredCode)
        .map(c2s_records::ArmSpec::label)
        .collect();
    if cfg.coverage.is_some() {
        scored.push("[coverage] decisions".into());
    }
    if cfg
        .dialogue
        .as_ref()
        .is_some_and(|d| d.contract == "scored")
    {
        scored.push("[dialogue] scored fields".into());
    }
    if !info.prompt_logprobs && !scored.is_empty() {
        anyhow::bail!(
            "{} cannot score options: {}; scored arms need prompt log-probabilities: {}",
            settings.base_url,
            info.scoring_problem
                .as_deref()
                .unwrap_or("no prompt log-probabilities"),
            scored.join(", ")
        );
    }
    let tokenizer = engine::served_tokenizer(cfg, template_time)?;
    Ok(info.identity(tokenizer.as_ref()))
}

pub fn run(opts: RunOptions) -> anyhow::Result<ExitCode> {
    // 1. The config: any error stops here, before any work, with exit status 2.
    let cfg = match c2s_config::load(&opts.config) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let run_dir = opts
        .run_dir
        .clone()
        .or_else(|| cfg.output.dir.clone())
        .unwrap_or_else(|| PathBuf::from("runs").join(&cfg.run.name));
    let timely_config = match timely_config(&opts.timely_args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: timely arguments: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    Ok(execute(cfg, run_dir, timely_config, opts.quiet)?.exit)
}

/// Run a loaded config into `run_dir` (new or resumed): the whole lifecycle after the config
/// checks. `choice2seq run` and `choice2seq bench inference` both come here, so the benchmark
/// measures the pipeline's own path.
pub fn execute(
    cfg: RunConfig,
    run_dir: PathBuf,
    timely_config: timely::Config,
    quiet: bool,
) -> anyhow::Result<RunReport> {
    let report = |exit: ExitCode| RunReport {
        exit,
        elapsed: 0.0,
        requests: 0,
        trajectories: 0,
        engine: ServiceStats::default(),
    };
    // 2. The run directory: new, or resumed.
    std::fs::create_dir_all(&run_dir).with_context(|| format!("creating {}", run_dir.display()))?;
    let resume = ResumeState::load(&run_dir).context("reading the existing run directory")?;
    // A model that cannot be read, or whose tokenizer cannot be built exactly, is a
    // configuration problem: exit 2 before any work.
    // A cluster shares one run directory (on a shared filesystem): one manifest, written by
    // process 0 only. Output parts carry the global worker index in their names.
    let process = match &timely_config.communication {
        timely::CommunicationConfig::Cluster { process, .. } => *process,
        _ => 0,
    };
    // Every process renders with process 0's template time: a new run's other processes take
    // it from the manifest process 0 writes before the cluster connects.
    let template_time = match if process == 0 || resume.manifest.is_some() {
        outputs::template_time(&resume)
    } else {
        outputs::await_template_time(&run_dir)
    } {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: manifest.json: {e:#}", run_dir.display());
            return Ok(report(ExitCode::from(2)));
        }
    };
    let identity = match model_identity(&cfg, template_time) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("error: model: {e:#}");
            return Ok(report(ExitCode::from(2)));
        }
    };
    if let Err(e) = engine::check_model_config(&cfg) {
        eprintln!("error: model: {e:#}");
        return Ok(report(ExitCode::from(2)));
    }
    // A chat template that cannot render the run's message shapes would fail every request:
    // that is a model error, found here with one probe conversation per shape.
    let pinned = match engine::run_tokenizer(&cfg, template_time) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: model: {e:#}");
            return Ok(report(ExitCode::from(2)));
        }
    };
    if let Some(tokenizer) = &pinned {
        if let Err(e) = engine::check_chat_template(&cfg, tokenizer) {
            eprintln!("error: model: {e:#}");
            return Ok(report(ExitCode::from(2)));
        }
    }
    let tokens = match engine::token_counter(&cfg, pinned) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: model: {e:#}");
            return Ok(report(ExitCode::from(2)));
        }
    };
    // A resumed run directory answers recorded model calls from `requests/` and skips recorded
    // trajectories: with another model that would mix two models' results in one run.
    if let Some(m) = &resume.manifest {
        if let Err(msg) = outputs::same_model(&m.model, &identity) {
            eprintln!(
                "error: {}: cannot resume with another model: {msg}; use a new --run-dir",
                run_dir.display()
            );
            return Ok(report(ExitCode::from(2)));
        }
        if let Err(msg) = outputs::same_copy_plans(&serde_json::to_value(m)?, &cfg) {
            eprintln!(
                "error: {}: cannot resume with other copy plans: {msg}; use a new --run-dir",
                run_dir.display()
            );
            return Ok(report(ExitCode::from(2)));
        }
    }
    if process == 0 {
        outputs::write_manifest_for(&run_dir, &cfg, &identity, &resume, template_time)
            .context("writing manifest.json")?;
    }
    if resume.is_resume() {
        eprintln!(
            "resuming {}: {} trajectories, {} requests, {} outcomes already recorded",
            run_dir.display(),
            resume.trajectory_keys.len(),
            resume.request_ids.len(),
            resume.outcome_keys.len()
        );
    }
    let total_items = feed::count_items(&cfg);
    // 3. The async runtime beside timely (model calls, Ctrl-C).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        runtime.spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\nstopping: no new items; finishing the items in flight and closing parts (Ctrl-C again to abort)");
                stop.store(true, Ordering::SeqCst);
                if tokio::signal::ctrl_c().await.is_ok() {
                    eprintln!("aborted; closed parts are intact, resume with the same command");
                    std::process::exit(130);
                }
            }
        });
    }
    let shared = Arc::new(Shared {
        cfg,
        identity,
        run_dir: run_dir.clone(),
        resume,
        runtime: runtime.handle().clone(),
        counters: Arc::new(Counters::default()),
        live: Arc::new(Mutex::new(LiveTable::default())),
        stop,
        failed: Arc::new(AtomicBool::new(false)),
        quiet,
        total_items,
        engine_stats: Mutex::new(Vec::new()),
        tokens,
        template_time,
    });
    let started = std::time::Instant::now();
    let worker_shared = shared.clone();
    let guards = timely::execute(timely_config, move |worker| {
        dataflow::worker_main(worker, &worker_shared)
    })
    .map_err(|e| anyhow::anyhow!("starting timely: {e}"))?;
    let mut failures = Vec::new();
    for (i, r) in guards.join().into_iter().enumerate() {
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failures.push(format!("worker {i}: {e:#}")),
            Err(e) => failures.push(format!("worker {i}: {e}")),
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    if process == 0 {
        outputs::finish_manifest(&run_dir).context("updating manifest.json")?;
    }
    console::summary(&shared, elapsed);
    let mut engine = ServiceStats::default();
    for w in shared
        .engine_stats
        .lock()
        .map(|v| v.clone())
        .unwrap_or_default()
    {
        engine.add(&w);
    }
    let finished = |exit| RunReport {
        exit,
        elapsed,
        requests: shared.counters.requests.load(Ordering::Relaxed),
        trajectories: shared.counters.trajectories.load(Ordering::Relaxed),
        engine,
    };
    if !failures.is_empty() || shared.failed.load(Ordering::SeqCst) {
        for f in &failures {
            eprintln!("error: {f}");
        }
        if shared.failed.load(Ordering::SeqCst) {
            eprintln!("error: some output parts could not be written (see the log)");
        }
        return Ok(finished(ExitCode::FAILURE));
    }
    Ok(finished(ExitCode::SUCCESS))
}

/// Timely's configuration from its own arguments (`-w`, `-n`, `-p`, `-h`).
fn timely_config(args: &[String]) -> Result<timely::Config, String> {
    timely::Config::from_args(args.iter().cloned())
}
