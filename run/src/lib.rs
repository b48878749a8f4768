//! `c2s-run`: a run's lifecycle, what `choice2seq run` does — validate the config (exit 2
//! before any work), prepare or resume the run directory, start timely workers (each with its
//! own engine), feed items with backpressure, commit Kafka offsets behind durable outputs, stop
//! gracefully on Ctrl-C, and serve the live monitor while it runs.
//!
//! Layers: the top library crate, above `c2s-serve` (the live monitor's server), `c2s-rundir`
//! (resume reads the run directory back) and the dataflow crates (`c2s-operators`,
//! `c2s-model`, the sources and sinks); only the `choice2seq` binary sits above it.
//!
//! Layout: `shared` (the state every worker shares), `worker` (the driving loop and the sinks
//! every protocol ends in), one file per protocol's stages (`items`, `coverage`, `dialogue`),
//! `engine` (the configured engine), `hub` (a model by Hugging Face Hub id), `feed` (the
//! sources), `outputs` (sinks, resume, the manifest), `prompts` (the `prompts/` dataset: what
//! the model saw), `status` (exit status), `console` (progress), `live` (the live monitor of
//! this run: its `c2s_serve::Backend`). Imports run one way: the
//! protocols use `worker`, `shared` and `outputs`; nothing below imports this file.

#![deny(missing_docs)]

mod console;
mod coverage;
mod dialogue;
pub mod engine;
mod feed;
mod hub;
mod items;
mod live;
mod outputs;
mod prompts;
mod shared;
mod status;
mod worker;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::Context;

use c2s_config::{RunConfig, RunKind};
use c2s_model::service::ServiceStats;
use c2s_model::{AnswerTally, ModelIdentity};
use c2s_operators::live_stats::LiveTable;
use c2s_operators::sink_op::WriteHealth;
use c2s_operators::Counters;

pub(crate) use feed::PartitionProgress;
pub use outputs::{template_time, ResumeState};
pub(crate) use shared::{Shared, StopCause};

/// Options of `choice2seq run`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The run's TOML config file.
    pub config: PathBuf,
    /// `--run-dir`: where the outputs go; `None`: the config's `[output] dir`, else
    /// `runs/RUN_NAME`. An existing run directory is resumed.
    pub run_dir: Option<PathBuf>,
    /// How many timely workers and processes, and which process this is.
    pub topology: Topology,
    /// No progress bars (logs and the final summary only).
    pub quiet: bool,
    /// `--serve ADDR`: the live monitor's address (overrides the config's `[serve]`).
    pub serve: Option<std::net::SocketAddr>,
    /// `--serve-linger SECONDS` (overrides `[serve] linger_seconds`).
    pub serve_linger: Option<f64>,
    /// `--serve-token-env NAME` (overrides `[serve] token_env`).
    pub serve_token_env: Option<String>,
}

/// One timely worker of this process: the stages of the run's protocol.
fn worker_main(worker: &mut timely::worker::Worker, shared: &Arc<Shared>) -> anyhow::Result<()> {
    match shared.cfg.kind() {
        RunKind::Coverage(section) => coverage::coverage_worker_main(worker, shared, section),
        RunKind::Dialogue(section) => dialogue::dialogue_worker_main(worker, shared, section),
        RunKind::Items => items::item_worker_main(worker, shared),
    }
}

/// What a finished run measured.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The process's exit status: 0 completed (or stopped by a signal, to be resumed), 1 a
    /// worker error, an engine outage or unwritable outputs, 2 a config or user error found
    /// before any work, 3 too many failed model requests.
    pub exit: ExitCode,
    /// Seconds from the workers' start to their end (model loading included).
    pub elapsed: f64,
    /// Model requests this process counted, each once (`Counters::requests`); 0 when the run
    /// stopped before its workers started.
    pub requests: u64,
    /// Finished units of work this process counted: trajectories of an item run, decisions
    /// of a coverage run, dialogue runs of a dialogue run (`Counters::trajectories`).
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
    // Only a served model's tokenizer renders templates here.
    #[cfg(not(feature = "openai"))]
    let _ = template_time;
    let engine = match cfg.model.engine {
        c2s_config::EngineKind::Simulated => {
            return Ok(
                c2s_model::Engine::identity(&c2s_model::SimulatedEngine::new(cfg.run.option_seed))
                    .clone(),
            )
        }
        #[cfg(feature = "openai")]
        c2s_config::EngineKind::Openai => return remote_identity(cfg, template_time),
        c2s_config::EngineKind::Prefix => c2s_model::prefix_engine_name(cfg.model.dtype),
        #[cfg(feature = "mistralrs")]
        c2s_config::EngineKind::Mistralrs => engine::mistralrs_settings(cfg).engine_name(),
        #[allow(unreachable_patterns)] // every engine is compiled in by default
        other => anyhow::bail!(
            "engine `{other}` is not compiled into this binary (build with its cargo feature)"
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
        .is_some_and(|d| d.contract == c2s_records::DialogueContract::Scored)
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

/// `choice2seq run`: load the config, apply the command line's overrides (`--serve`,
/// `--serve-linger`, `--serve-token-env`, the topology) and [`execute`] it. A config,
/// override or topology error prints `error: …` and returns exit status 2 before any work.
pub fn run(opts: RunOptions) -> anyhow::Result<ExitCode> {
    // 1. The config: any error stops here, before any work, with exit status 2.
    let mut cfg = match c2s_config::load(&opts.config) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if let Some(address) = opts.serve {
        let (linger_seconds, token_env) = cfg
            .serve
            .take()
            .map_or((0.0, None), |s| (s.linger_seconds, s.token_env));
        cfg.serve = Some(c2s_config::ServeSection {
            address,
            linger_seconds,
            token_env,
        });
    }
    if let Some(name) = opts.serve_token_env {
        match cfg.serve.as_mut() {
            Some(serve) => serve.token_env = Some(name),
            None => {
                eprintln!("error: --serve-token-env needs --serve ADDR or a [serve] section");
                return Ok(ExitCode::from(2));
            }
        }
    }
    if let (Some(serve), Some(linger)) = (cfg.serve.as_mut(), opts.serve_linger) {
        serve.linger_seconds = linger;
    }
    if let Some(serve) = &cfg.serve {
        if !(serve.linger_seconds.is_finite() && serve.linger_seconds >= 0.0) {
            eprintln!(
                "error: serve linger {} is not a non-negative number of seconds",
                serve.linger_seconds
            );
            return Ok(ExitCode::from(2));
        }
    }
    let run_dir = opts
        .run_dir
        .clone()
        .or_else(|| cfg.output.dir.clone())
        .unwrap_or_else(|| PathBuf::from("runs").join(&cfg.run.name));
    let timely_config = match opts.topology.timely_config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    Ok(execute(cfg, run_dir, timely_config, opts.quiet)?.exit)
}

/// Run a loaded config into `run_dir` (new or resumed): the whole lifecycle after the config
/// checks. `choice2seq run` and `choice2seq bench inference` both come here, so the benchmark
/// measures the pipeline's own path.
pub fn execute(
    mut cfg: RunConfig,
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
    // A cluster shares one run directory (on a shared filesystem): one manifest, written by
    // process 0 only. Output parts carry the global worker index in their names.
    let process = match &timely_config.communication {
        timely::CommunicationConfig::Cluster { process, .. } => *process,
        _ => 0,
    };
    // Who may read the live monitor, settled before anything is written: a non-loopback
    // address without a token, or a token variable that is unset or empty, exits 2 here. In a
    // cluster process 0 serves (every process would bind the same address).
    let serve = cfg.serve.clone().filter(|_| process == 0);
    let access = match serve
        .as_ref()
        .map(|s| s.access(&|var| std::env::var_os(var)))
        .transpose()
    {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(report(ExitCode::from(2)));
        }
    };
    // 2. The run directory: new, or resumed.
    std::fs::create_dir_all(&run_dir).with_context(|| format!("creating {}", run_dir.display()))?;
    let mut resume = ResumeState::load(&run_dir).context("reading the existing run directory")?;
    // A model that cannot be read, or whose tokenizer cannot be built exactly, is a
    // configuration problem: exit 2 before any work.
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
    // A model by Hugging Face Hub id: downloaded (or found in the cache) here, before any
    // work; `[model] path` becomes its snapshot.
    let hub = match hub::resolve_hub_model(&mut cfg, quiet) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("error: model: {e:#}");
            return Ok(report(ExitCode::from(2)));
        }
    };
    let identity = match model_identity(&cfg, template_time) {
        Ok(i) => hub::with_hub(i, hub),
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
    let pinned = pinned.map(Arc::new);
    let prompts = prompts::PromptRecorder::new(&cfg, pinned.clone());
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
        if let Err(msg) = outputs::same_copy_plans(m, &cfg) {
            eprintln!(
                "error: {}: cannot resume with other copy plans: {msg}; use a new --run-dir",
                run_dir.display()
            );
            return Ok(report(ExitCode::from(2)));
        }
    }
    // The live monitor's port is taken before anything is written: a taken port stops here.
    let listener = match serve.as_ref().map(|serve| c2s_serve::bind(serve.address)) {
        Some(Ok(listener)) => Some(listener),
        Some(Err(e)) => {
            eprintln!("error: {e:#}");
            return Ok(report(ExitCode::from(2)));
        }
        None => None,
    };
    if process == 0 {
        outputs::write_manifest_for(&run_dir, &cfg, &identity, &resume, template_time)
            .context("writing manifest.json")?;
    }
    if let Some(recorder) = &prompts {
        let n = prompts::backfill(&run_dir, &cfg, recorder, &mut resume, process == 0)?;
        if n > 0 {
            eprintln!("recorded the prompts of {n} earlier requests that prompts/ lacked");
        }
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
    let cfg_serve = cfg.serve.clone();
    let max_write_wait = std::time::Duration::from_secs_f64(cfg.output.max_write_wait_seconds);
    let max_buffered_bytes = (cfg.output.max_buffered_mb * (1u64 << 20) as f64) as usize;
    // Only a remote server has outages (the engine waits for it through the watch).
    let outages = (cfg.model.engine == c2s_config::EngineKind::Openai).then(|| {
        Arc::new(c2s_model::OutageWatch::new(
            std::time::Duration::from_secs_f64(cfg.inference.max_outage_seconds),
        ))
    });
    // 3. The async runtime beside timely (model calls, Ctrl-C).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let stop = Arc::new(AtomicBool::new(false));
    let shared = Arc::new(Shared {
        cfg,
        identity,
        run_dir: run_dir.clone(),
        resume,
        runtime: runtime.handle().clone(),
        counters: Arc::new(Counters::default()),
        live: Arc::new(Mutex::new(LiveTable::default())),
        stop,
        stop_cause: Mutex::new(None),
        writes: Arc::new(WriteHealth::new(max_write_wait).with_max_held_bytes(max_buffered_bytes)),
        outages,
        tally: Arc::new(AnswerTally::default()),
        quiet,
        total_items,
        engine_stats: Mutex::new(Vec::new()),
        tokens,
        prompts,
        template_time,
        serving: listener.is_some(),
        items_done: AtomicU64::new(0),
        feeding_since: OnceLock::new(),
        kafka: Mutex::new(BTreeMap::new()),
    });
    let monitor = match listener.zip(access) {
        Some((listener, access)) => {
            let monitor = crate::live::LiveMonitor::new(shared.clone());
            match c2s_serve::start(listener, monitor.clone(), &access, runtime.handle()) {
                Ok(bound) => eprintln!(
                    "live monitor: http://{bound}/ (metrics: http://{bound}/metrics){}",
                    c2s_serve::auth::token_note(&access)
                ),
                Err(e) => {
                    eprintln!("error: {e:#}");
                    return Ok(report(ExitCode::from(2)));
                }
            }
            Some(monitor)
        }
        None => None,
    };
    let signals = runtime.spawn(stop_on_signals(shared.clone()));
    let started = std::time::Instant::now();
    let worker_shared = shared.clone();
    let guards = timely::execute(timely_config, move |worker| {
        worker_main(worker, &worker_shared)
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
    let mut outcome = status::outcome(&shared, &failures);
    if process == 0 {
        // The status is told on the terminal even when the manifest cannot take it (a full
        // disk); the run then failed to record its outputs.
        if let Err(e) = outputs::finish_manifest(&run_dir, outcome.status.clone()) {
            eprintln!("error: updating manifest.json: {e:#}");
            if outcome.status.state != c2s_sinks::RunState::Failed {
                outcome = status::Outcome::unrecorded(outcome.status, format!("{e:#}"));
            }
        }
    }
    // A lingering monitor shows the final state until the wait ends or a signal ends it: its
    // own signal listeners replace the run's before the final state is shown, so a signal
    // sent once the state says the run ended only ends the wait.
    let lingering = cfg_serve
        .filter(|s| s.linger_seconds > 0.0 && monitor.is_some())
        .map(|s| {
            let _context = runtime.enter();
            let listeners = LingerSignals::listen();
            signals.abort();
            (
                std::time::Duration::from_secs_f64(s.linger_seconds),
                listeners,
            )
        });
    if let Some(m) = &monitor {
        m.finish(outcome.status.clone());
    }
    console::summary(&shared, elapsed);
    for line in status::banner(&outcome.status, &shared.tally.counts()) {
        println!("{line}");
    }
    if let Some((time, listeners)) = lingering {
        eprintln!(
            "live monitor: serving the final state for {:.0} s (Ctrl-C or SIGTERM to exit now)",
            time.as_secs_f64()
        );
        runtime.block_on(listeners.wait(time));
    }
    for f in &failures {
        eprintln!("error: {f}");
    }
    if let Some(reason) = outcome
        .status
        .reason
        .as_ref()
        .filter(|_| outcome.status.state == c2s_sinks::RunState::Failed)
    {
        eprintln!("error: {reason}");
    }
    let mut engine = ServiceStats::default();
    for w in shared
        .engine_stats
        .lock()
        .map(|v| v.clone())
        .unwrap_or_default()
    {
        engine.add(&w);
    }
    Ok(RunReport {
        exit: outcome.exit,
        elapsed,
        requests: shared.counters.requests.load(Ordering::Relaxed),
        trajectories: shared.counters.trajectories.load(Ordering::Relaxed),
        engine,
    })
}

/// Ctrl-C and SIGTERM (what orchestrators, systemd and Kubernetes send) stop the run
/// gracefully: no new items, the items in flight finish, parts close. A second one aborts.
async fn stop_on_signals(shared: Arc<Shared>) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        tracing::warn!("cannot listen for Ctrl-C and SIGTERM: they end the run at once");
        return;
    };
    let (signal, _) = next_signal(&mut interrupt, &mut terminate).await;
    shared.stop_because(StopCause::Signal(signal));
    let (again, code) = next_signal(&mut interrupt, &mut terminate).await;
    eprintln!("aborted by {again}; closed parts are intact, resume with the same command");
    std::process::exit(code);
}

/// Ctrl-C and SIGTERM listeners that end a lingering monitor's wait.
struct LingerSignals(Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>);

impl LingerSignals {
    /// Listen (inside the runtime's context).
    fn listen() -> LingerSignals {
        use tokio::signal::unix::{signal, SignalKind};
        LingerSignals(
            signal(SignalKind::interrupt())
                .and_then(|i| Ok((i, signal(SignalKind::terminate())?)))
                .ok(),
        )
    }

    /// Wait `time`, or until Ctrl-C or SIGTERM.
    async fn wait(self, time: std::time::Duration) {
        match self.0 {
            Some((mut interrupt, mut terminate)) => {
                tokio::select! {
                    _ = tokio::time::sleep(time) => {}
                    _ = next_signal(&mut interrupt, &mut terminate) => {}
                }
            }
            None => tokio::time::sleep(time).await,
        }
    }
}

/// The next Ctrl-C or SIGTERM, with the exit code of a process that it ends.
async fn next_signal(
    interrupt: &mut tokio::signal::unix::Signal,
    terminate: &mut tokio::signal::unix::Signal,
) -> (&'static str, i32) {
    tokio::select! {
        _ = interrupt.recv() => ("Ctrl-C", 130),
        _ = terminate.recv() => ("SIGTERM", 143),
    }
}

/// The timely topology of a run: worker threads per process, processes, this process's
/// index, and the processes' addresses (`-w`, `-n`, `-p`, `-h` of `choice2seq run`).
#[derive(Debug, Clone, Default)]
pub struct Topology {
    /// Worker threads per process (`-w`), each with its own engine; 0 counts as 1.
    pub workers: usize,
    /// Timely processes of the run (`-n`); 0 or 1: this process alone, and then `process`
    /// and `hostfile` are ignored.
    pub processes: usize,
    /// This process's index among them (`-p`), from 0; process 0 writes the manifest and
    /// serves the live monitor.
    pub process: usize,
    /// One `host:port` per line, a line per process; without it processes listen on
    /// `localhost:2101`, `localhost:2102`, … (timely's own default).
    pub hostfile: Option<PathBuf>,
}

/// A topology timely cannot run (`choice2seq run` prints it and exits 2, before any work).
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// `-p` is not the index of one of the `-n` processes (indices are 0-based).
    #[error("process index {process} is not below the {processes} processes")]
    ProcessIndex {
        /// This process's index (`-p`).
        process: usize,
        /// The number of processes (`-n`).
        processes: usize,
    },
    /// The hostfile (`-h`) could not be read.
    #[error("hostfile {}: {source}", path.display())]
    Hostfile {
        /// The hostfile.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The hostfile has fewer lines than processes: each process needs its `host:port`.
    #[error("hostfile {}: {addresses} addresses for {processes} processes", path.display())]
    FewAddresses {
        /// The hostfile.
        path: PathBuf,
        /// The lines it has.
        addresses: usize,
        /// The number of processes (`-n`).
        processes: usize,
    },
}

impl Topology {
    /// The timely configuration, built as timely's own argument parser builds it.
    fn timely_config(&self) -> Result<timely::Config, TopologyError> {
        use timely::CommunicationConfig;
        let communication = if self.processes > 1 {
            if self.process >= self.processes {
                return Err(TopologyError::ProcessIndex {
                    process: self.process,
                    processes: self.processes,
                });
            }
            let addresses: Vec<String> = match &self.hostfile {
                Some(file) => {
                    let text = std::fs::read_to_string(file).map_err(|source| {
                        TopologyError::Hostfile {
                            path: file.clone(),
                            source,
                        }
                    })?;
                    let lines: Vec<String> = text
                        .lines()
                        .take(self.processes)
                        .map(str::to_string)
                        .collect();
                    if lines.len() < self.processes {
                        return Err(TopologyError::FewAddresses {
                            path: file.clone(),
                            addresses: lines.len(),
                            processes: self.processes,
                        });
                    }
                    lines
                }
                None => (0..self.processes)
                    .map(|i| format!("localhost:{}", 2101 + i))
                    .collect(),
            };
            CommunicationConfig::Cluster {
                threads: self.workers.max(1),
                process: self.process,
                addresses,
                report: false,
                zerocopy: false,
            }
        } else if self.workers > 1 {
            CommunicationConfig::Process(self.workers)
        } else {
            CommunicationConfig::Thread
        };
        Ok(timely::Config {
            communication,
            worker: timely::WorkerConfig::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Topology, TopologyError};
    use std::path::PathBuf;

    /// What `choice2seq run` prints for a topology timely cannot run.
    #[test]
    fn topology_error_messages() {
        let index = Topology {
            workers: 1,
            processes: 2,
            process: 2,
            hostfile: None,
        };
        assert_eq!(
            index.timely_config().unwrap_err().to_string(),
            "process index 2 is not below the 2 processes"
        );
        let unread = TopologyError::Hostfile {
            path: PathBuf::from("hosts.txt"),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
        };
        assert_eq!(unread.to_string(), "hostfile hosts.txt: gone");
        let few = TopologyError::FewAddresses {
            path: PathBuf::from("hosts.txt"),
            addresses: 1,
            processes: 3,
        };
        assert_eq!(
            few.to_string(),
            "hostfile hosts.txt: 1 addresses for 3 processes"
        );
    }
}
