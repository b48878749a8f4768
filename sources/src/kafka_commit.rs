//! Offset commits, and a thread that makes them off the pipeline's thread.
//!
//! librdkafka's synchronous commit waits for the group coordinator: while the broker is down
//! it neither fails nor returns. Made on the pipeline's worker, it would stop the dataflow
//! (and the monitor's progress) for the whole outage without a word. The [`Committer`] makes
//! the commits in order on a thread of its own; a commit without an answer for
//! [`SLOW_COMMIT`] starts an outage, and one that fails is retried with backoff for at most
//! [`KAFKA_MAX_OUTAGE`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::{Offset, TopicPartitionList};

use crate::kafka::{kafka_err, ConnectionProblems};
use crate::kafka_outage::{kafka_outages, KAFKA_MAX_OUTAGE};
use crate::SourceError;

/// A commit without an answer for this long means the broker cannot be reached.
pub const SLOW_COMMIT: Duration = Duration::from_secs(2);

/// What offsets are committed for.
#[derive(Debug, Clone)]
pub(crate) struct CommitTarget {
    pub brokers: String,
    pub topic: String,
    pub group: String,
}

/// Commit `(partition, next_offset)` pairs synchronously; a broker that cannot be reached
/// (the commit fails) is retried with backoff for at most [`KAFKA_MAX_OUTAGE`].
pub(crate) fn commit_offsets(
    consumer: &BaseConsumer<ConnectionProblems>,
    target: &CommitTarget,
    offsets: &[(i32, i64)],
) -> Result<(), SourceError> {
    if offsets.is_empty() {
        return Ok(());
    }
    let brokers = target.brokers.as_str();
    let mut tpl = TopicPartitionList::with_capacity(offsets.len());
    let mut shown = String::new();
    for &(p, next) in offsets {
        let _ = write!(shown, " {}/{p}@{next}", target.topic);
        tpl.add_partition_offset(&target.topic, p, Offset::Offset(next))
            .map_err(kafka_err(brokers, format!("commit{shown}"), None))?;
    }
    let start = Instant::now();
    let mut backoff = Duration::from_millis(100);
    loop {
        match consumer.commit(&tpl, CommitMode::Sync) {
            Ok(()) => {
                kafka_outages().up(brokers, "committing offsets");
                return Ok(());
            }
            Err(e) if start.elapsed() < KAFKA_MAX_OUTAGE => {
                let cause = consumer.context().last().unwrap_or_else(|| e.to_string());
                kafka_outages().down(brokers, "committing offsets", &cause);
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
            Err(e) => {
                let action = format!("commit offsets{shown} for group `{}`", target.group);
                return Err(kafka_err(brokers, action, consumer.context().last())(e));
            }
        }
    }
}

fn lock(state: &Mutex<CommitState>) -> MutexGuard<'_, CommitState> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

#[derive(Default)]
struct CommitState {
    /// Offsets committed so far.
    committed: BTreeMap<i32, i64>,
    /// Since when the commit in progress waits for an answer.
    since: Option<Instant>,
    /// The error of a commit that gave up.
    failed: Option<SourceError>,
}

/// Commits made in order on a thread of their own (see the module's documentation).
pub(crate) struct Committer {
    target: CommitTarget,
    tx: Option<mpsc::Sender<Vec<(i32, i64)>>>,
    state: Arc<Mutex<CommitState>>,
    handle: Option<JoinHandle<()>>,
}

impl Committer {
    pub fn start(consumer: Arc<BaseConsumer<ConnectionProblems>>, target: CommitTarget) -> Self {
        let (tx, rx) = mpsc::channel::<Vec<(i32, i64)>>();
        let state = Arc::new(Mutex::new(CommitState::default()));
        let shared = Arc::clone(&state);
        let t = target.clone();
        let handle = std::thread::Builder::new()
            .name("c2s-kafka-commit".into())
            .spawn(move || {
                while let Ok(first) = rx.recv() {
                    // What queued meanwhile goes in the same commit: the highest per partition.
                    let mut next: BTreeMap<i32, i64> = BTreeMap::new();
                    for (p, o) in first.into_iter().chain(rx.try_iter().flatten()) {
                        let e = next.entry(p).or_insert(o);
                        *e = (*e).max(o);
                    }
                    let offsets: Vec<(i32, i64)> = next.into_iter().collect();
                    lock(&shared).since = Some(Instant::now());
                    let result = commit_offsets(&consumer, &t, &offsets);
                    let mut s = lock(&shared);
                    s.since = None;
                    match result {
                        Ok(()) => s.committed.extend(offsets),
                        Err(e) => {
                            s.failed = Some(e);
                            return;
                        }
                    }
                }
            })
            .ok();
        if handle.is_none() {
            tracing::warn!("kafka source: no commit thread; commits are made in place");
        }
        Committer {
            target,
            tx: handle.is_some().then_some(tx),
            state,
            handle,
        }
    }

    fn state(&self) -> MutexGuard<'_, CommitState> {
        lock(&self.state)
    }

    /// Queue a commit; the error of an earlier one that gave up, if any.
    pub fn send(&mut self, offsets: &[(i32, i64)]) -> Result<(), SourceError> {
        if let Some(e) = self.state().failed.take() {
            return Err(e);
        }
        self.check();
        match &self.tx {
            Some(tx) if tx.send(offsets.to_vec()).is_ok() => Ok(()),
            _ => match self.handle.take() {
                // The thread ended: it failed, or never started.
                Some(h) => {
                    let _ = h.join();
                    self.state().failed.take().map_or(Ok(()), Err)
                }
                None => Ok(()),
            },
        }
    }

    /// A commit without an answer for [`SLOW_COMMIT`] starts an outage.
    pub fn check(&self) {
        // A commit that began before the broker was back is timed from then: the client
        // needs a moment to find its coordinator again.
        let outages = kafka_outages();
        let waiting = self
            .state()
            .since
            .map(|t| outages.ended().map_or(t, |e| t.max(e)).elapsed());
        if let Some(w) = waiting.filter(|w| *w >= SLOW_COMMIT) {
            let cause = format!("no answer to an offset commit for {:.1} s", w.as_secs_f64());
            outages.down(&self.target.brokers, "committing offsets", &cause);
        }
    }

    /// Offsets committed so far.
    pub fn committed(&self) -> BTreeMap<i32, i64> {
        self.state().committed.clone()
    }

    /// Wait until the queued commits are made: at most [`KAFKA_MAX_OUTAGE`] (and a little)
    /// for a broker that cannot be reached.
    pub fn finish(mut self) -> Result<BTreeMap<i32, i64>, SourceError> {
        self.tx = None;
        let deadline = Instant::now() + KAFKA_MAX_OUTAGE + SLOW_COMMIT;
        if let Some(h) = self.handle.take() {
            while !h.is_finished() && Instant::now() < deadline {
                self.check();
                std::thread::sleep(Duration::from_millis(50));
            }
            if !h.is_finished() {
                return Err(SourceError::KafkaConnection {
                    brokers: self.target.brokers.clone(),
                    action: format!("commit offsets for group `{}`", self.target.group),
                    cause: format!(
                        "no answer from the broker for {} s",
                        KAFKA_MAX_OUTAGE.as_secs()
                    ),
                    source: Box::new(rdkafka::error::KafkaError::Canceled),
                });
            }
            let _ = h.join();
        }
        let mut s = self.state();
        match s.failed.take() {
            Some(e) => Err(e),
            None => Ok(s.committed.clone()),
        }
    }
}

impl Drop for Committer {
    /// The thread makes the commits queued and ends; nobody waits for it.
    fn drop(&mut self) {
        self.tx = None;
    }
}
