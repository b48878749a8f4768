//! The state every timely worker of this process shares: the validated config, the run
//! directory and what resume found, the model's identity, counters, the live table, and the
//! stop flag with its cause (Ctrl-C, identical failures, unwritable outputs).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use c2s_config::RunConfig;
use c2s_model::service::ServiceStats;
use c2s_model::{AnswerTally, ModelIdentity, OutageWatch};
use c2s_operators::live_stats::LiveTable;
use c2s_operators::sink_op::WriteHealth;
use c2s_operators::Counters;

use super::feed::PartitionProgress;
use super::outputs::ResumeState;

/// State shared by every worker of this process.
pub struct Shared {
    /// The run's validated config, with the command line's overrides applied.
    pub cfg: RunConfig,
    /// The model's identity, computed once before the workers start.
    pub identity: ModelIdentity,
    /// The run directory every process writes its parts into.
    pub run_dir: PathBuf,
    /// What the run directory already held (empty for a new run): what the sinks skip and
    /// the statistics start from.
    pub resume: ResumeState,
    /// The tokio runtime beside timely, which runs the model calls, the signal handler and
    /// the live monitor.
    pub runtime: tokio::runtime::Handle,
    /// Progress counters (requests, finished units, items in, rejects) for the console and
    /// the live monitor.
    pub counters: Arc<Counters>,
    /// The live statistics' latest tables, which the console prints and the monitor serves.
    pub live: Arc<Mutex<LiveTable>>,
    /// Set by Ctrl-C, SIGTERM or [`StopCause`]: stop feeding, finish what is in
    /// flight, close parts.
    pub stop: Arc<AtomicBool>,
    /// Why the run stopped before its sources ended (the first cause).
    pub stop_cause: Mutex<Option<StopCause>>,
    /// Whether the sinks can write (feeding pauses while one cannot).
    pub writes: Arc<WriteHealth>,
    /// A remote engine's outages (feeding pauses while one is on; `None`: a local engine).
    pub outages: Option<Arc<OutageWatch>>,
    /// What the engine answered and failed, over every worker of this process.
    pub tally: Arc<AnswerTally>,
    /// `--quiet`: no progress bar.
    pub quiet: bool,
    /// Items of the run's file sources, for the progress bar and the ETA; `None` when a
    /// source is unbounded (Kafka) or could not be counted.
    pub total_items: Option<u64>,
    /// Each worker's inference counters, added when the worker ends.
    pub engine_stats: Mutex<Vec<ServiceStats>>,
    /// How the `prompts/` dataset renders the run's prompts (`None`: the simulated engine
    /// renders none).
    pub prompts: Option<Arc<super::prompts::PromptRecorder>>,
    /// The model's tokenizer when an arm needs D.9's token-matched padding.
    pub tokens: Option<c2s_protocol::TokenCounterRef>,
    /// What chat templates' `strftime_now` reports: the run's first start, as recorded in
    /// the manifest (a resumed run renders the prompts it rendered before).
    pub template_time: c2s_model::TemplateTime,
    /// A live monitor serves this run (`--serve`): the workers publish what it reads.
    pub serving: bool,
    /// Items done (what the progress bar shows), published by the workers when serving.
    pub items_done: AtomicU64,
    /// When the first worker began feeding (the model is loaded).
    pub feeding_since: OnceLock<Instant>,
    /// Each Kafka partition's offsets, published by its feeder when serving.
    pub kafka: Mutex<BTreeMap<(String, i32), PartitionProgress>>,
}

/// Why a run stopped before its sources ended.
#[derive(Debug, Clone, PartialEq)]
pub enum StopCause {
    /// Ctrl-C (`SIGINT`) or `SIGTERM`.
    Signal(&'static str),
    /// The run's first requests all failed with one error.
    IdenticalFailures {
        /// The error every one of them failed with.
        message: String,
        /// How many consecutive requests failed with it (at least
        /// `[run] stop_after_identical_failures`).
        count: u64,
    },
    /// An output could not be written within `[output] max_write_wait_seconds`.
    OutputsUnwritable(String),
    /// The remote server could not be reached within `[inference] max_outage_seconds`.
    EngineOutage(String),
}

impl Shared {
    /// Stop the run (as Ctrl-C does: no new items, the items in flight finish) for `cause`;
    /// the first cause is the one reported.
    pub fn stop_because(&self, cause: StopCause) {
        let mut first = self.stop_cause.lock().unwrap_or_else(|p| p.into_inner());
        if first.is_none() {
            match &cause {
                StopCause::Signal(signal) => eprintln!(
                    "\nstopping ({signal}): no new items; finishing the items in flight and \
                     closing parts ({signal} again to abort)"
                ),
                StopCause::IdenticalFailures { message, count } => eprintln!(
                    "\nstopping: the first {count} model requests all failed with: {message}"
                ),
                StopCause::OutputsUnwritable(e) => {
                    eprintln!("\nstopping: outputs cannot be written: {e}")
                }
                StopCause::EngineOutage(e) => eprintln!(
                    "\nstopping: {e}; the requests in flight fail, and resuming with the same \
                     command runs them again"
                ),
            }
            *first = Some(cause);
        }
        self.stop.store(true, Ordering::SeqCst);
    }

    /// An outage of the remote server is on: feed no new items.
    pub fn outage_on(&self) -> bool {
        self.outages.as_ref().is_some_and(|w| w.active())
    }

    /// Called by every worker's driving loop: stop when the remote server was unreachable
    /// for too long, when the model has failed every request from the start with the same
    /// error, or when a sink gave up writing.
    pub fn watch_health(&self) {
        if let Some(watch) = self.outages.as_ref().filter(|w| w.gave_up()) {
            let cause = watch
                .outages()
                .last()
                .map(|o| o.cause.clone())
                .unwrap_or_default();
            self.stop_because(StopCause::EngineOutage(format!(
                "the server could not be reached for {:.0} s ([inference] max_outage_seconds); first fault: {cause}",
                watch.max_outage().as_secs_f64()
            )));
        }
        let limit = self.cfg.run.stop_after_identical_failures;
        if limit > 0 {
            if let Some((message, count)) = self.tally.leading() {
                if count >= limit {
                    self.stop_because(StopCause::IdenticalFailures { message, count });
                }
            }
        }
        if let Some(e) = self.writes.given_up() {
            self.stop_because(StopCause::OutputsUnwritable(e));
        }
    }
}
