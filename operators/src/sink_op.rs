//! Stage 7, the sink operator: hands records to a rolling part writer and reports durability.
//!
//! The operator holds a capability for every epoch whose records are buffered but not yet in a
//! closed part file, and releases them when the part is renamed into place. A probe on its
//! (empty) output therefore passes an epoch only when that epoch's records are durable — the
//! pipeline commits Kafka offsets behind that probe.
//!
//! A part that cannot be written (a full disk, say) keeps its rows buffered and is retried with
//! a doubling delay (0.2 s up to 10 s). Meanwhile the sink counts as blocked in the process's
//! [`WriteHealth`], which the feeder reads to pause new items (and, once the blocked sinks
//! hold more than `[output] max_buffered_mb`, the inference operator to hold requests back), and it logs the failure once
//! when it starts, every 30 s while it lasts and once when writing works again. After
//! [`WriteHealth::max_wait`] without a successful write the sink gives up: the failure is
//! recorded, the buffered rows and every later record are dropped (they were never durable, so
//! a resumed run computes them again), and its epochs are released so the run can stop.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::Capability;
use timely::dataflow::StreamVec;

/// An error a sink's own code returns (the part writer's, the publisher's).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a [`RowSink`] could not buffer a record or close a part. Its text, which includes the
/// underlying error's, is what the operator logs and what [`WriteHealth::given_up`] keeps.
#[derive(Debug, thiserror::Error)]
pub enum RowSinkError {
    /// The part could not be written (a full disk, say): its rows stay buffered and the
    /// operator retries the write.
    #[error(transparent)]
    Write {
        /// The part writer's error, which names the file.
        source: BoxError,
    },
    /// The part was written, but publishing its rows failed: they are on disk and not
    /// published.
    #[error("publishing {dataset} rows to Kafka: {source}")]
    Publish {
        /// The dataset whose rows were being published (`requests`, `trajectories`, …).
        dataset: &'static str,
        /// The publisher's error.
        #[source]
        source: BoxError,
    },
}

/// A rolling writer of one dataset.
pub trait RowSink<D>: 'static {
    /// Buffer one record (the sink may drop records it already holds on disk).
    fn push(&mut self, record: D) -> Result<(), RowSinkError>;
    /// Records buffered and not yet written.
    fn buffered(&self) -> usize;
    /// Memory those records take, in bytes (may be computed on each call: asked only once
    /// per failed write).
    fn buffered_bytes(&self) -> usize;
    /// Whether the buffered records should be written now (row count or age).
    fn due(&self, now: Instant) -> bool;
    /// Write the buffered records as one complete part. On error they stay buffered.
    fn roll(&mut self) -> Result<(), RowSinkError>;
    /// Drop the buffered records (after giving up on writing them).
    fn discard(&mut self);
}

/// First delay between attempts to write a part that failed.
const FIRST_RETRY: Duration = Duration::from_millis(200);
/// Longest delay between attempts.
const MAX_RETRY: Duration = Duration::from_secs(10);
/// How often a lasting write failure is logged again.
const LOG_EVERY: Duration = Duration::from_secs(30);

/// Whether the sinks of a process can write: shared by every sink, read by the feeder (which
/// pauses while any sink is blocked) and by the run's final status.
#[derive(Debug)]
pub struct WriteHealth {
    /// Sinks whose latest write failed and that are retrying.
    blocked: AtomicUsize,
    /// Raised when records were lost: a record that could not be buffered, or a sink that
    /// gave up.
    failed: AtomicBool,
    /// The first failure that was given up on.
    error: Mutex<Option<String>>,
    max_wait: Duration,
    /// Parts closed and rows in them, per dataset (for a live monitor).
    closed: Mutex<BTreeMap<String, ClosedParts>>,
    /// Bytes buffered by each blocked sink (estimated from its latest failed write).
    held: Mutex<BTreeMap<String, usize>>,
    /// Above this many bytes held by blocked sinks, no model request is sent.
    max_held_bytes: usize,
}

/// What the sinks of one dataset have closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClosedParts {
    /// Part files closed (renamed into place).
    pub parts: u64,
    /// Rows in those parts.
    pub rows: u64,
}

impl WriteHealth {
    /// Sinks that retry a failed write for at most `max_wait` before giving up.
    pub fn new(max_wait: Duration) -> WriteHealth {
        WriteHealth {
            blocked: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
            max_wait,
            closed: Mutex::new(BTreeMap::new()),
            held: Mutex::new(BTreeMap::new()),
            max_held_bytes: usize::MAX,
        }
    }

    /// Caps the rows blocked sinks may hold: above `bytes`, [`WriteHealth::over_budget`]
    /// holds the model requests back (`[output] max_buffered_mb`).
    pub fn with_max_held_bytes(mut self, bytes: usize) -> WriteHealth {
        self.max_held_bytes = bytes;
        self
    }

    /// Bytes of rows held by sinks that cannot write, over all of them.
    pub fn held_bytes(&self) -> usize {
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .sum()
    }

    /// Blocked sinks hold more than the cap: new model requests wait (the items in flight
    /// would only add rows that cannot be written).
    pub fn over_budget(&self) -> bool {
        self.blocked() && self.held_bytes() > self.max_held_bytes
    }

    fn set_held(&self, label: &str, bytes: usize) {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if bytes == 0 {
            held.remove(label);
        } else {
            held.insert(label.to_string(), bytes);
        }
    }

    /// Parts closed and their rows, per dataset, over every sink of the process.
    pub fn closed_parts(&self) -> BTreeMap<String, ClosedParts> {
        self.closed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn part_closed(&self, dataset: &str, rows: usize) {
        let mut closed = self.closed.lock().unwrap_or_else(|p| p.into_inner());
        let c = closed.entry(dataset.to_string()).or_default();
        c.parts += 1;
        c.rows += rows as u64;
    }

    /// Some sink cannot write at present (new work should wait).
    pub fn blocked(&self) -> bool {
        self.blocked.load(Ordering::SeqCst) > 0
    }

    /// Records were lost (a sink gave up, or a record could not be buffered).
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }

    /// The first failure a sink gave up on.
    pub fn given_up(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// How long a sink retries a failed write before it gives up.
    pub fn max_wait(&self) -> Duration {
        self.max_wait
    }

    fn fail(&self) {
        self.failed.store(true, Ordering::SeqCst);
    }

    fn give_up(&self, error: String) {
        self.fail();
        let mut e = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if e.is_none() {
            *e = Some(error);
        }
    }
}

/// A sink retrying a failed write.
struct Retry {
    since: Instant,
    delay: Duration,
    next_at: Instant,
    attempts: u32,
    logged_at: Instant,
    /// Bytes per buffered row at the latest failed attempt (to estimate the rows since).
    bytes_per_row: f64,
}

/// Write `stream` through `sink`; write failures are retried and reported through `health`
/// (see the module notes).
pub fn sink<'s, D: Clone + 'static, S: RowSink<D>>(
    stream: StreamVec<'s, u64, D>,
    mut sink: S,
    name: &str,
    check_every: Duration,
    health: Arc<WriteHealth>,
) -> StreamVec<'s, u64, ()> {
    let scope = stream.scope();
    let label = name.to_string();
    stream.unary_frontier::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
        Pipeline,
        name,
        move |initial, info| {
            drop(initial);
            let activator = scope.activator_for(info.address.clone());
            let mut held: BTreeMap<u64, Capability<u64>> = BTreeMap::new();
            let mut retry: Option<Retry> = None;
            let mut gave_up = false;
            move |(input, frontier), output| {
                input.for_each(|cap, data| {
                    if gave_up {
                        data.clear();
                        return;
                    }
                    if let Some(c) = cap.retain_least(output.output_index()) {
                        held.entry(*c.time()).or_insert(c);
                    }
                    for d in data.drain(..) {
                        if let Err(e) = sink.push(d) {
                            tracing::error!("{label}: {e}");
                            health.fail();
                        }
                    }
                });
                let now = Instant::now();
                let finished = frontier.frontier().is_empty();
                let wanted = sink.buffered() > 0
                    && (finished || retry.is_some() || sink.due(now))
                    && retry.as_ref().is_none_or(|r| now >= r.next_at);
                if wanted {
                    let rows = sink.buffered();
                    let rolled = sink.roll();
                    // Written, but what follows the part failed (publishing its rows): nothing
                    // is left to retry, and what failed is lost.
                    let written = rolled.is_ok() || sink.buffered() == 0;
                    if written {
                        health.part_closed(&label, rows);
                    }
                    if let (Err(e), true) = (&rolled, written) {
                        tracing::error!("{label}: {e}");
                        health.fail();
                    }
                    match rolled {
                        Err(e) if !written => match retry.as_mut() {
                            None => {
                                tracing::error!(
                                    "{label}: {e}; retrying with backoff for up to {:.0} s, \
                                     new items wait",
                                    health.max_wait.as_secs_f64()
                                );
                                health.blocked.fetch_add(1, Ordering::SeqCst);
                                retry = Some(Retry {
                                    since: now,
                                    delay: FIRST_RETRY,
                                    next_at: now + FIRST_RETRY,
                                    attempts: 1,
                                    logged_at: now,
                                    bytes_per_row: sink.buffered_bytes() as f64
                                        / sink.buffered().max(1) as f64,
                                });
                            }
                            Some(r) => {
                                r.attempts += 1;
                                r.bytes_per_row =
                                    sink.buffered_bytes() as f64 / sink.buffered().max(1) as f64;
                                let waited = now.duration_since(r.since);
                                if waited >= health.max_wait {
                                    tracing::error!(
                                        "{label}: giving up after {} attempts over {:.0} s: {e}; \
                                         {} buffered rows are not written (resume the run once \
                                         there is room)",
                                        r.attempts,
                                        waited.as_secs_f64(),
                                        sink.buffered()
                                    );
                                    health.give_up(format!("{label}: {e}"));
                                    health.blocked.fetch_sub(1, Ordering::SeqCst);
                                    health.set_held(&label, 0);
                                    sink.discard();
                                    held.clear();
                                    retry = None;
                                    gave_up = true;
                                } else {
                                    r.delay = (r.delay * 2).min(MAX_RETRY);
                                    r.next_at = now + r.delay;
                                    if now.duration_since(r.logged_at) >= LOG_EVERY {
                                        r.logged_at = now;
                                        tracing::warn!(
                                            "{label}: still cannot write after {} attempts over \
                                             {:.0} s: {e}",
                                            r.attempts,
                                            waited.as_secs_f64()
                                        );
                                    }
                                }
                            }
                        },
                        _ => {
                            held.clear();
                            if let Some(r) = retry.take() {
                                health.blocked.fetch_sub(1, Ordering::SeqCst);
                                health.set_held(&label, 0);
                                tracing::warn!(
                                    "{label}: writing again after {} failed attempts over {:.0} s",
                                    r.attempts,
                                    now.duration_since(r.since).as_secs_f64()
                                );
                            }
                        }
                    }
                }
                if let Some(r) = &retry {
                    // What this blocked sink holds now: rows since the last attempt at the
                    // bytes per row measured then.
                    health.set_held(&label, (sink.buffered() as f64 * r.bytes_per_row) as usize);
                }
                if sink.buffered() == 0 {
                    // Nothing pending: epochs are durable as soon as the input has passed them.
                    held.clear();
                } else {
                    let wait = retry
                        .as_ref()
                        .map_or(check_every, |r| r.next_at.saturating_duration_since(now));
                    activator.activate_after(wait);
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use timely::dataflow::operators::{Input, Probe};
    use timely::dataflow::{InputHandle, ProbeHandle};

    /// A sink whose first `failures` rolls fail like a full disk.
    struct Flaky {
        buffered: Vec<u64>,
        written: Arc<Mutex<Vec<u64>>>,
        failures: Arc<AtomicU64>,
        rolls: Arc<AtomicU64>,
    }

    impl RowSink<u64> for Flaky {
        fn push(&mut self, record: u64) -> Result<(), RowSinkError> {
            self.buffered.push(record);
            Ok(())
        }
        fn buffered(&self) -> usize {
            self.buffered.len()
        }
        fn buffered_bytes(&self) -> usize {
            self.buffered.len() * 8
        }
        fn due(&self, _: Instant) -> bool {
            true
        }
        fn roll(&mut self) -> Result<(), RowSinkError> {
            self.rolls.fetch_add(1, Ordering::SeqCst);
            if self.failures.load(Ordering::SeqCst) > 0 {
                self.failures.fetch_sub(1, Ordering::SeqCst);
                return Err(RowSinkError::Write {
                    source: std::io::Error::from_raw_os_error(28).into(),
                });
            }
            self.written.lock().unwrap().append(&mut self.buffered);
            Ok(())
        }
        fn discard(&mut self) {
            self.buffered.clear();
        }
    }

    struct Outcome {
        written: Vec<u64>,
        rolls: u64,
        /// Whether the sink was blocked at some point while it ran.
        was_blocked: bool,
    }

    /// Write 0..10 through a sink that fails `failures` times, until its epochs are durable.
    fn run(failures: u64, health: Arc<WriteHealth>) -> Outcome {
        let written = Arc::new(Mutex::new(Vec::new()));
        let rolls = Arc::new(AtomicU64::new(0));
        let (w, r, h) = (written.clone(), rolls.clone(), health.clone());
        let was_blocked = timely::execute_directly(move |worker| {
            let mut input: InputHandle<u64, CapacityContainerBuilder<Vec<u64>>> =
                InputHandle::new();
            let probe: ProbeHandle<u64> = ProbeHandle::new();
            worker.dataflow::<u64, _, _>(|scope| {
                let sink_ = Flaky {
                    buffered: Vec::new(),
                    written: w.clone(),
                    failures: Arc::new(AtomicU64::new(failures)),
                    rolls: r.clone(),
                };
                sink(
                    scope.input_from(&mut input),
                    sink_,
                    "test",
                    Duration::from_millis(1),
                    h.clone(),
                )
                .probe_with(&probe);
            });
            for x in 0..10 {
                input.send(x);
            }
            input.advance_to(1);
            let mut blocked = false;
            while probe.less_than(&1) {
                worker.step_or_park(Some(Duration::from_millis(5)));
                blocked |= h.blocked();
            }
            blocked
        });
        let written = written.lock().unwrap().clone();
        Outcome {
            written,
            rolls: rolls.load(Ordering::SeqCst),
            was_blocked,
        }
    }

    #[test]
    fn a_failed_write_is_retried_until_it_succeeds() {
        let health = Arc::new(WriteHealth::new(Duration::from_secs(60)));
        let out = run(3, health.clone());
        assert_eq!(out.written, (0..10).collect::<Vec<_>>(), "nothing lost");
        assert_eq!(out.rolls, 4, "three failed attempts, then the write");
        assert!(out.was_blocked, "blocked while failing");
        assert!(!health.blocked(), "unblocked once written");
        assert!(!health.failed());
        assert_eq!(health.given_up(), None);
    }

    #[test]
    fn a_sink_gives_up_after_the_longest_wait_and_releases_its_epochs() {
        let health = Arc::new(WriteHealth::new(Duration::ZERO));
        let out = run(u64::MAX, health.clone());
        assert!(out.written.is_empty());
        assert_eq!(
            out.rolls, 2,
            "the first attempt, then the retry that gives up"
        );
        assert!(health.failed());
        assert!(!health.blocked());
        let e = health.given_up().expect("the failure is recorded");
        assert!(e.starts_with("test: No space left"), "{e}");
    }

    #[test]
    fn a_sink_that_works_is_never_blocked() {
        let health = Arc::new(WriteHealth::new(Duration::from_secs(60)));
        let out = run(0, health.clone());
        assert_eq!(out.written.len(), 10);
        assert!(!out.was_blocked && !health.failed());
        let closed = health.closed_parts();
        assert_eq!(closed["test"].rows, 10, "{closed:?}");
        assert_eq!(closed["test"].parts, out.rolls, "every roll closed a part");
    }
}
