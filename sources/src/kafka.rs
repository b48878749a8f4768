//! Kafka topics as item sources, and the small producer/admin helpers that feed them.
//!
//! Each worker of a run reads a fixed share of the topic's partitions
//! (`partition % peers == worker_index`), assigned explicitly: no consumer-group
//! subscription, so no broker-side rebalance can move partitions under a running pipeline.
//! The group is used only to store offsets: each partition starts at the group's committed
//! offset (or at the beginning), and offsets are committed synchronously by the pipeline once
//! the outputs derived from the records are durable (`commit`). Nothing is committed or stored
//! automatically.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::{ClientContext, DefaultClientContext};
use rdkafka::config::{ClientConfig, RDKafkaLogLevel};
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{BorrowedMessage, DeliveryResult, Message};
use rdkafka::metadata::Metadata;
use rdkafka::producer::{BaseProducer, Producer, ProducerContext};
use rdkafka::{Offset, TopicPartitionList};

use crate::kafka_outage::kafka_outages;
use crate::{KafkaPosition, SourceError, SourceRecord};

/// Time allowed to each blocking broker operation (metadata, offsets, commits, flushes).
pub const KAFKA_TIMEOUT: Duration = Duration::from_secs(10);

/// Where and how a Kafka client connects: the bootstrap brokers and the librdkafka properties
/// of the cluster's security settings (`security.protocol`, `sasl.*`, `ssl.*`) and any other
/// client property. `Debug` shows the property names, never their values (one is a password).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct KafkaConnection {
    brokers: String,
    properties: Vec<(String, String)>,
}

impl std::fmt::Debug for KafkaConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaConnection")
            .field("brokers", &self.brokers)
            .field(
                "properties",
                &self.properties.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl KafkaConnection {
    /// A plaintext connection to `brokers` (`host:port[,host:port]`).
    pub fn new(brokers: &str) -> KafkaConnection {
        KafkaConnection {
            brokers: brokers.to_owned(),
            properties: Vec::new(),
        }
    }

    /// Add librdkafka properties (in order; a later one wins).
    pub fn with_properties(
        mut self,
        properties: impl IntoIterator<Item = (String, String)>,
    ) -> KafkaConnection {
        self.properties.extend(properties);
        self
    }

    /// The bootstrap brokers (`host:port[,host:port]`).
    pub fn brokers(&self) -> &str {
        &self.brokers
    }

    /// The client configuration: `defaults` (what this crate sets for the client's job, which
    /// the connection's properties may change), the connection's properties, then `fixed`
    /// (what the pipeline's correctness rests on: the brokers, offsets stored only by
    /// [`KafkaItemSource::commit`]).
    pub fn client_config(
        &self,
        defaults: &[(&str, String)],
        fixed: &[(&str, String)],
    ) -> ClientConfig {
        let mut config = ClientConfig::new();
        for (k, v) in defaults {
            config.set(*k, v);
        }
        for (k, v) in &self.properties {
            config.set(k, v);
        }
        config.set("bootstrap.servers", &self.brokers);
        for (k, v) in fixed {
            config.set(*k, v);
        }
        config
    }
}

/// A client context that keeps the last connection problem librdkafka reported (an
/// authentication failure, a TLS error, an unreachable broker), so that a call that fails or
/// times out can say why, and forwards librdkafka's log lines to `tracing`.
#[derive(Default)]
pub(crate) struct ConnectionProblems {
    last: Mutex<Option<String>>,
    /// The last refusal (authentication, TLS): waiting longer will not help, and it says more
    /// than the "all brokers are down" that follows it.
    refusal: Mutex<Option<String>>,
    refused: AtomicBool,
    /// Set when librdkafka reports that no broker connection is up (or one failed).
    pub(crate) gone: AtomicBool,
    /// High watermarks per (topic, partition) from librdkafka's statistics, when a client
    /// asks for them (`statistics.interval.ms`): fresh ones without a broker call.
    high_watermarks: Mutex<BTreeMap<(String, i32), i64>>,
}

/// The part of librdkafka's statistics JSON that is read: each partition's high watermark.
#[derive(serde::Deserialize)]
struct ClientStatistics {
    #[serde(default)]
    topics: std::collections::HashMap<String, TopicStatistics>,
}

#[derive(serde::Deserialize)]
struct TopicStatistics {
    #[serde(default)]
    partitions: std::collections::HashMap<i32, PartitionStatistics>,
}

#[derive(serde::Deserialize)]
struct PartitionStatistics {
    #[serde(default = "unknown_offset")]
    hi_offset: i64,
}

fn unknown_offset() -> i64 {
    -1
}

impl ConnectionProblems {
    /// Whether the cluster refused the client (authentication, TLS): waiting will not help.
    pub(crate) fn refused(&self) -> bool {
        self.refused.load(Ordering::SeqCst)
    }

    fn record(&self, problem: String) {
        if let Ok(mut last) = self.last.lock() {
            *last = Some(problem);
        }
    }

    /// The last refusal reported, else the last problem, if any.
    pub(crate) fn last(&self) -> Option<String> {
        let refusal = self.refusal.lock().ok().and_then(|r| r.clone());
        refusal.or_else(|| self.last.lock().ok().and_then(|l| l.clone()))
    }
}

impl ClientContext for ConnectionProblems {
    fn stats_raw(&self, statistics: &[u8]) {
        let parsed: ClientStatistics = match serde_json::from_slice(statistics) {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(target: "librdkafka", "unreadable statistics: {e}");
                return;
            }
        };
        let mut high = self
            .high_watermarks
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        for (topic, t) in parsed.topics {
            // Partition -1 is librdkafka's internal unassigned partition.
            for (partition, p) in t.partitions {
                if partition >= 0 && p.hi_offset >= 0 {
                    high.insert((topic.clone(), partition), p.hi_offset);
                }
            }
        }
    }

    fn log(&self, level: RDKafkaLogLevel, fac: &str, message: &str) {
        match level {
            RDKafkaLogLevel::Emerg
            | RDKafkaLogLevel::Alert
            | RDKafkaLogLevel::Critical
            | RDKafkaLogLevel::Error => {
                tracing::warn!(target: "librdkafka", "{fac}: {message}");
                self.record(message.to_owned());
            }
            RDKafkaLogLevel::Warning => tracing::warn!(target: "librdkafka", "{fac}: {message}"),
            RDKafkaLogLevel::Notice | RDKafkaLogLevel::Info => {
                tracing::info!(target: "librdkafka", "{fac}: {message}")
            }
            RDKafkaLogLevel::Debug => tracing::debug!(target: "librdkafka", "{fac}: {message}"),
        }
    }

    fn error(&self, error: KafkaError, reason: &str) {
        tracing::warn!(target: "librdkafka", "{error}: {reason}");
        let problem = format!("{reason} ({error})");
        if broker_gone(&error) {
            self.gone.store(true, Ordering::SeqCst);
        }
        if matches!(
            error.rdkafka_error_code(),
            Some(RDKafkaErrorCode::Authentication | RDKafkaErrorCode::SSL)
        ) {
            if let Ok(mut refusal) = self.refusal.lock() {
                *refusal = Some(problem.clone());
            }
            self.refused.store(true, Ordering::SeqCst);
        }
        self.record(problem);
    }
}

impl ConsumerContext for ConnectionProblems {}

impl ProducerContext for ConnectionProblems {
    type DeliveryOpaque = ();

    fn delivery(&self, _: &DeliveryResult<'_>, _: ()) {}
}

/// A failed call: with the connection problem librdkafka reported before it, when there was
/// one (a timed-out metadata request says nothing of a refused password).
pub(crate) fn kafka_err(
    brokers: &str,
    action: impl Into<String>,
    problem: Option<String>,
) -> impl FnOnce(KafkaError) -> SourceError {
    let brokers = brokers.to_owned();
    let action = action.into();
    move |source| match problem {
        Some(cause) => SourceError::KafkaConnection {
            brokers,
            action,
            cause,
            source: Box::new(source),
        },
        None => SourceError::Kafka {
            brokers,
            action,
            source: Box::new(source),
        },
    }
}

/// The cluster's metadata (of `topic` only, when given), asked in short slices of
/// [`KAFKA_TIMEOUT`]: a refusal the client reports meanwhile (credentials, a certificate it
/// cannot verify) ends the wait at once. `serve` hands the client's queued log and error
/// events to its context. A failure comes with the last connection problem reported.
fn cluster_metadata(
    client: &rdkafka::client::Client<ConnectionProblems>,
    topic: Option<&str>,
    serve: impl Fn(),
) -> Result<Metadata, (KafkaError, Option<String>)> {
    let deadline = Instant::now() + KAFKA_TIMEOUT;
    loop {
        let slice = deadline
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(500));
        match client.fetch_metadata(topic, slice) {
            Ok(m) => return Ok(m),
            Err(e) => {
                serve();
                let problems = client.context();
                if problems.refused() || Instant::now() >= deadline {
                    return Err((e, problems.last()));
                }
            }
        }
    }
}

/// Partitions of `topic` in `metadata` (sorted ids).
fn topic_partitions(
    metadata: Result<Metadata, (KafkaError, Option<String>)>,
    brokers: &str,
    topic: &str,
) -> Result<Vec<i32>, SourceError> {
    let metadata = match metadata {
        Ok(m) => m,
        Err((e, problem)) => {
            let action = format!("fetch metadata of topic `{topic}`");
            return Err(kafka_err(brokers, action, problem)(e));
        }
    };
    let not_found = || SourceError::TopicNotFound {
        brokers: brokers.to_owned(),
        topic: topic.to_owned(),
    };
    let t = metadata
        .topics()
        .iter()
        .find(|t| t.name() == topic)
        .ok_or_else(not_found)?;
    if let Some(err) = t.error() {
        let code = RDKafkaErrorCode::from(err);
        if code == RDKafkaErrorCode::UnknownTopicOrPartition {
            return Err(not_found());
        }
        return Err(SourceError::TopicMetadata {
            brokers: brokers.to_owned(),
            topic: topic.to_owned(),
            detail: code.to_string(),
        });
    }
    let mut ids: Vec<i32> = t.partitions().iter().map(|p| p.id()).collect();
    if ids.is_empty() {
        return Err(not_found());
    }
    ids.sort_unstable();
    Ok(ids)
}

/// A share of a Kafka topic's partitions, read as item records.
pub struct KafkaItemSource {
    consumer: Arc<BaseConsumer<ConnectionProblems>>,
    brokers: String,
    topic: String,
    group: String,
    source: String,
    /// Assigned partitions, sorted.
    partitions: Vec<i32>,
    /// Next offset to read per assigned partition (committed offset or low watermark at
    /// start, then one past the last message delivered).
    positions: BTreeMap<i32, i64>,
    /// Last known high watermark per assigned partition.
    high: BTreeMap<i32, i64>,
    wakeup: Option<Arc<dyn Fn() + Send + Sync>>,
    /// When the broker was last probed during an outage.
    probed: Option<Instant>,
    /// The thread of [`commit_in_background`](Self::commit_in_background), once started.
    committer: Option<crate::kafka_commit::Committer>,
    /// What the committer had committed when it finished.
    finished_commits: BTreeMap<i32, i64>,
}

impl std::fmt::Debug for KafkaItemSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaItemSource")
            .field("brokers", &self.brokers)
            .field("topic", &self.topic)
            .field("group", &self.group)
            .field("partitions", &self.partitions)
            .field("positions", &self.positions)
            .finish_non_exhaustive()
    }
}

impl KafkaItemSource {
    /// Connect to `brokers` (e.g. `127.0.0.1:9092`, plaintext) and assign this worker's
    /// partitions of `topic`: see [`connect_with`](Self::connect_with).
    pub fn connect(
        brokers: &str,
        topic: &str,
        group: &str,
        worker_index: usize,
        peers: usize,
    ) -> Result<Self, SourceError> {
        Self::connect_with(
            &KafkaConnection::new(brokers),
            topic,
            group,
            worker_index,
            peers,
        )
    }

    /// Connect to the cluster and assign this worker's partitions of `topic`: those with
    /// `partition % peers == worker_index`. Each starts at `group`'s committed offset, or at
    /// the beginning of the partition when none was committed. A cluster that refuses the
    /// connection (authentication, TLS) is an error that names the brokers and the refusal.
    pub fn connect_with(
        connection: &KafkaConnection,
        topic: &str,
        group: &str,
        worker_index: usize,
        peers: usize,
    ) -> Result<Self, SourceError> {
        if worker_index >= peers {
            return Err(SourceError::BadWorker {
                worker_index,
                peers,
            });
        }
        let brokers = connection.brokers();
        let consumer: BaseConsumer<ConnectionProblems> = connection
            .client_config(
                &[
                    ("client.id", format!("c2s-{group}-w{worker_index}")),
                    ("fetch.wait.max.ms", "100".into()),
                    // A broker that restarts is found again within a second.
                    ("reconnect.backoff.max.ms", "1000".into()),
                ],
                &[
                    ("group.id", group.to_owned()),
                    ("enable.auto.commit", "false".into()),
                    ("enable.auto.offset.store", "false".into()),
                    ("auto.offset.reset", "earliest".into()),
                    ("enable.partition.eof", "false".into()),
                ],
            )
            .create_with_context(ConnectionProblems::default())
            .map_err(kafka_err(brokers, "create consumer", None))?;
        // Nothing is assigned yet: polling only serves the client's queued log and error
        // events, which tell why a call failed.
        let serve = || {
            for _ in 0..256 {
                let _ = consumer.poll(Duration::ZERO);
            }
        };
        let problem = || {
            serve();
            consumer.context().last()
        };
        let all = topic_partitions(
            cluster_metadata(consumer.client(), Some(topic), serve),
            brokers,
            topic,
        )?;
        let partitions: Vec<i32> = all
            .into_iter()
            .filter(|&p| usize::try_from(p).is_ok_and(|p| p % peers == worker_index))
            .collect();

        let mut tpl = TopicPartitionList::with_capacity(partitions.len());
        for &p in &partitions {
            tpl.add_partition(topic, p);
        }
        let committed = if partitions.is_empty() {
            BTreeMap::new()
        } else {
            consumer
                .committed_offsets(tpl, KAFKA_TIMEOUT)
                .map_err(|e| {
                    kafka_err(
                        brokers,
                        format!("fetch committed offsets of group `{group}` on `{topic}`"),
                        problem(),
                    )(e)
                })?
                .elements()
                .iter()
                .filter_map(|e| match e.offset() {
                    Offset::Offset(o) if o >= 0 => Some((e.partition(), o)),
                    _ => None,
                })
                .collect()
        };

        let mut assignment = TopicPartitionList::with_capacity(partitions.len());
        let mut positions = BTreeMap::new();
        let mut high = BTreeMap::new();
        for &p in &partitions {
            let (lo, hi) = consumer
                .fetch_watermarks(topic, p, KAFKA_TIMEOUT)
                .map_err(|e| {
                    kafka_err(
                        brokers,
                        format!("fetch watermarks of {topic}/{p}"),
                        problem(),
                    )(e)
                })?;
            let start = committed.get(&p).copied();
            let offset = start.map_or(Offset::Beginning, Offset::Offset);
            assignment
                .add_partition_offset(topic, p, offset)
                .map_err(kafka_err(brokers, format!("assign {topic}/{p}"), None))?;
            positions.insert(p, start.unwrap_or(lo));
            high.insert(p, hi);
        }
        consumer.assign(&assignment).map_err(kafka_err(
            brokers,
            format!("assign partitions of `{topic}`"),
            None,
        ))?;
        tracing::info!(
            brokers,
            topic,
            group,
            worker_index,
            peers,
            ?positions,
            "kafka source assigned"
        );
        Ok(KafkaItemSource {
            consumer: Arc::new(consumer),
            brokers: brokers.to_owned(),
            topic: topic.to_owned(),
            group: group.to_owned(),
            source: format!("kafka:{topic}"),
            partitions,
            positions,
            high,
            wakeup: None,
            probed: None,
            committer: None,
            finished_commits: BTreeMap::new(),
        })
    }

    /// The bootstrap brokers.
    pub fn brokers(&self) -> &str {
        &self.brokers
    }

    /// The topic read.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The consumer group whose offsets are used.
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The partitions assigned to this worker (possibly none when there are more workers than
    /// partitions).
    pub fn partitions(&self) -> &[i32] {
        &self.partitions
    }

    /// Next offset to read per assigned partition.
    pub fn positions(&self) -> &BTreeMap<i32, i64> {
        &self.positions
    }

    /// The latest known high watermark per assigned partition: from the start, from the
    /// last check for the end of a bounded topic, or from librdkafka's statistics when the
    /// connection asks for them (`statistics.interval.ms`), whichever is the highest. No
    /// broker call.
    pub fn high_watermarks(&self) -> BTreeMap<i32, i64> {
        let mut high = self.high.clone();
        let reported = self
            .consumer
            .context()
            .high_watermarks
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        for ((topic, partition), &h) in reported.iter() {
            if topic == &self.topic {
                if let Some(known) = high.get_mut(partition) {
                    *known = (*known).max(h);
                }
            }
        }
        high
    }

    /// Call `f` whenever messages become available after the consumer queue was empty (the
    /// pipeline passes its operator's activator). `f` is also called once now, and again by
    /// [`poll_batch`](Self::poll_batch) when it stopped at `max` with messages possibly left.
    pub fn set_wakeup(&mut self, f: impl Fn() + Send + Sync + 'static) {
        let f: Arc<dyn Fn() + Send + Sync> = Arc::new(f);
        let g = Arc::clone(&f);
        match Arc::get_mut(&mut self.consumer) {
            Some(consumer) => consumer.set_nonempty_callback(move || g()),
            None => tracing::warn!("kafka source: no wakeup once commits have started"),
        }
        f();
        self.wakeup = Some(f);
    }

    /// Up to `max` records, waiting at most `timeout` for the first one. A message without a
    /// payload or with a payload that is not UTF-8 becomes a record whose payload is an error
    /// naming topic, partition and offset. Consumer errors (broker down, …) are logged; the
    /// client reconnects by itself and fetches again from its positions. A broker that cannot
    /// be reached starts an outage ([`kafka_outages`](crate::kafka_outages)), which ends when
    /// it answers again.
    pub fn poll_batch(&mut self, max: usize, timeout: Duration) -> Vec<SourceRecord> {
        let mut out = Vec::new();
        let deadline = Instant::now() + timeout;
        while out.len() < max {
            let wait = if out.is_empty() {
                deadline.saturating_duration_since(Instant::now())
            } else {
                Duration::ZERO
            };
            match self.consumer.poll(wait) {
                None => break,
                Some(Ok(msg)) => {
                    let rec = record_of(&self.source, &msg);
                    if let Some(pos) = &rec.kafka {
                        let next = self.positions.entry(pos.partition).or_insert(0);
                        *next = (*next).max(pos.next_offset());
                    }
                    out.push(rec);
                }
                Some(Err(e)) => {
                    // The context has logged the error with librdkafka's reason. The client
                    // reconnects by itself and fetches again from its positions.
                    tracing::debug!(brokers = %self.brokers, topic = %self.topic, "kafka consumer: {e}");
                    if broker_gone(&e) {
                        self.consumer.context().gone.store(true, Ordering::SeqCst);
                    }
                    if wait.is_zero() {
                        break;
                    }
                }
            }
        }
        if let Some(c) = &self.committer {
            c.check();
        }
        // librdkafka reports a lost broker as an error event (to the context, sometimes also
        // through `poll`), possibly late: the broker is asked before an outage starts. While
        // one is on, the broker is asked again (at most once a second) until it answers.
        let outages = kafka_outages();
        if outages.active() {
            if out.is_empty() {
                self.probe();
            }
        } else if self.consumer.context().gone.swap(false, Ordering::SeqCst)
            && !self.broker_answers()
        {
            let cause = self.consumer.context().last().unwrap_or_default();
            outages.down(&self.brokers, "reading", &cause);
        }
        if out.len() >= max && max > 0 {
            if let Some(wakeup) = &self.wakeup {
                wakeup();
            }
        }
        out
    }

    /// Commit `(partition, next_offset)` pairs for the group, synchronously. `next_offset` is
    /// the offset of the next record to read (one past the last durable one).
    pub fn commit(&self, offsets: &[(i32, i64)]) -> Result<(), SourceError> {
        self.check_assigned(offsets)?;
        crate::kafka_commit::commit_offsets(&self.consumer, &self.commit_target(), offsets)
    }

    /// Commit `(partition, next_offset)` pairs on a thread of this source's own, in order,
    /// a broker that cannot be reached waited for there (at most [`KAFKA_MAX_OUTAGE`](crate::KAFKA_MAX_OUTAGE)): the
    /// caller goes on meanwhile. Returns the error of an earlier commit that gave up.
    /// [`committed`](Self::committed) tells what is committed, [`finish_commits`](
    /// Self::finish_commits) waits for the rest.
    pub fn commit_in_background(&mut self, offsets: &[(i32, i64)]) -> Result<(), SourceError> {
        self.check_assigned(offsets)?;
        if offsets.is_empty() {
            return Ok(());
        }
        if self.committer.is_none() {
            self.committer = Some(crate::kafka_commit::Committer::start(
                Arc::clone(&self.consumer),
                self.commit_target(),
            ));
        }
        match &mut self.committer {
            Some(c) => c.send(offsets),
            None => Ok(()),
        }
    }

    /// Start an outage when a commit in the background has waited for an answer for
    /// [`SLOW_COMMIT`](crate::SLOW_COMMIT) (cheap: the pipeline calls it on every turn).
    pub fn watch(&self) {
        if let Some(c) = &self.committer {
            c.check();
        }
    }

    /// The offsets committed in the background so far (none before the first).
    pub fn committed(&self) -> BTreeMap<i32, i64> {
        let mut done = self.finished_commits.clone();
        if let Some(c) = &self.committer {
            done.extend(c.committed());
        }
        done
    }

    /// Wait until every commit in the background is done (at most [`KAFKA_MAX_OUTAGE`](crate::KAFKA_MAX_OUTAGE) of
    /// a broker that cannot be reached).
    pub fn finish_commits(&mut self) -> Result<(), SourceError> {
        if let Some(c) = self.committer.take() {
            self.finished_commits.extend(c.finish()?);
        }
        Ok(())
    }

    fn commit_target(&self) -> crate::kafka_commit::CommitTarget {
        crate::kafka_commit::CommitTarget {
            brokers: self.brokers.clone(),
            topic: self.topic.clone(),
            group: self.group.clone(),
        }
    }

    fn check_assigned(&self, offsets: &[(i32, i64)]) -> Result<(), SourceError> {
        match offsets.iter().find(|(p, _)| !self.partitions.contains(p)) {
            Some(&(partition, _)) => Err(SourceError::NotAssigned {
                topic: self.topic.clone(),
                partition,
            }),
            None => Ok(()),
        }
    }

    /// While an outage is on: whether the broker answers again (asked at most once a
    /// second), which ends the outage and shows the lag as it recovers.
    fn probe(&mut self) {
        if self
            .probed
            .is_some_and(|t| t.elapsed() < Duration::from_secs(1))
        {
            return;
        }
        if self.broker_answers() {
            kafka_outages().up(&self.brokers, "watermarks");
        }
    }

    /// Whether the broker answers a request for the high watermarks now (within a second
    /// each); the answers update the known ones. librdkafka may hand out an error event
    /// ("all brokers are down") well after the broker is back: an outage starts only when
    /// the broker does not answer.
    fn broker_answers(&mut self) -> bool {
        self.probed = Some(Instant::now());
        let wait = Duration::from_secs(1);
        if self.partitions.is_empty() {
            return self
                .consumer
                .fetch_metadata(Some(&self.topic), wait)
                .is_ok();
        }
        for &p in &self.partitions {
            match self.consumer.fetch_watermarks(&self.topic, p, wait) {
                Ok((_, hi)) => {
                    self.high.insert(p, hi);
                }
                Err(_) => return false,
            }
        }
        true
    }

    /// Whether every assigned partition has been read up to its high watermark (for bounded
    /// runs). Broker errors count as "not caught up" and are logged.
    pub fn caught_up(&mut self) -> bool {
        match self.try_caught_up() {
            Ok(done) => done,
            Err(e) => {
                tracing::warn!("{e}");
                false
            }
        }
    }

    /// [`caught_up`](Self::caught_up), with broker errors returned. The broker is asked for
    /// fresh high watermarks only when the known ones have all been reached.
    pub fn try_caught_up(&mut self) -> Result<bool, SourceError> {
        let behind = |s: &Self| {
            s.partitions.iter().any(|p| {
                s.positions.get(p).copied().unwrap_or(0) < s.high.get(p).copied().unwrap_or(0)
            })
        };
        if behind(self) {
            return Ok(false);
        }
        for &p in &self.partitions {
            let (_, hi) = self
                .consumer
                .fetch_watermarks(&self.topic, p, KAFKA_TIMEOUT)
                .map_err(|e| {
                    kafka_err(
                        &self.brokers,
                        format!("fetch watermarks of {}/{p}", self.topic),
                        self.consumer.context().last(),
                    )(e)
                })?;
            self.high.insert(p, hi);
        }
        kafka_outages().up(&self.brokers, "watermarks");
        Ok(!behind(self))
    }
}

fn record_of(source: &str, msg: &BorrowedMessage<'_>) -> SourceRecord {
    let pos = KafkaPosition {
        topic: msg.topic().to_owned(),
        partition: msg.partition(),
        offset: msg.offset(),
    };
    let location = format!("{}/{}@{}", pos.topic, pos.partition, pos.offset);
    let payload = match msg.payload() {
        None => Err(format!("{location}: message has no payload (null value)")),
        Some(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => Ok(text.to_owned()),
            Err(e) => Err(format!(
                "{location}: payload is not valid UTF-8 (invalid byte at position {})",
                e.valid_up_to()
            )),
        },
    };
    SourceRecord {
        source: source.to_owned(),
        location,
        payload,
        kafka: Some(pos),
    }
}

/// Whether a consumer error says the broker cannot be reached (it is down or restarting).
pub(crate) fn broker_gone(e: &KafkaError) -> bool {
    matches!(
        e.rdkafka_error_code(),
        Some(RDKafkaErrorCode::AllBrokersDown | RDKafkaErrorCode::BrokerTransportFailure)
    )
}

/// [`create_topic`] on a plaintext cluster.
pub fn create_topic(brokers: &str, topic: &str, partitions: i32) -> Result<bool, SourceError> {
    create_topic_with(&KafkaConnection::new(brokers), topic, partitions)
}

/// Whether the cluster answers a metadata request; a refusal (authentication, TLS) or no
/// answer is an error naming the brokers and librdkafka's reason.
fn check_reachable(connection: &KafkaConnection) -> Result<(), SourceError> {
    let brokers = connection.brokers();
    let probe: BaseProducer<ConnectionProblems> = connection
        .client_config(&[("client.id", "c2s-admin".into())], &[])
        .create_with_context(ConnectionProblems::default())
        .map_err(kafka_err(brokers, "create a client", None))?;
    let serve = || {
        for _ in 0..256 {
            probe.poll(Duration::ZERO);
        }
    };
    match cluster_metadata(probe.client(), None, serve) {
        Ok(_) => Ok(()),
        Err((e, problem)) => Err(kafka_err(brokers, "fetch the cluster's metadata", problem)(
            e,
        )),
    }
}

/// Create `topic` with `partitions` partitions (replication factor 1) and wait until its
/// metadata shows them. Returns `false` when the topic already existed (it is left as is).
pub fn create_topic_with(
    connection: &KafkaConnection,
    topic: &str,
    partitions: i32,
) -> Result<bool, SourceError> {
    check_reachable(connection)?;
    let brokers = connection.brokers();
    let admin: AdminClient<DefaultClientContext> = connection
        .client_config(&[("client.id", "c2s-admin".into())], &[])
        .create()
        .map_err(kafka_err(brokers, "create admin client", None))?;
    let new = NewTopic::new(topic, partitions, TopicReplication::Fixed(1));
    let opts = AdminOptions::new()
        .request_timeout(Some(KAFKA_TIMEOUT))
        .operation_timeout(Some(KAFKA_TIMEOUT));
    let action = format!("create topic `{topic}` with {partitions} partitions");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| SourceError::Kafka {
            brokers: brokers.to_owned(),
            action: action.clone(),
            source: Box::new(KafkaError::AdminOpCreation(format!(
                "cannot start a runtime: {e}"
            ))),
        })?;
    let results = runtime
        .block_on(admin.create_topics([&new], &opts))
        .map_err(kafka_err(brokers, action.clone(), None))?;
    let mut created = true;
    for result in results {
        match result {
            Ok(_) => {}
            Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => created = false,
            Err((_, code)) => {
                return Err(kafka_err(brokers, action, None)(KafkaError::AdminOp(code)));
            }
        }
    }
    // Wait until the broker reports the partitions, so that producers and consumers started
    // right after see the whole topic.
    let deadline = Instant::now() + KAFKA_TIMEOUT;
    loop {
        let metadata = admin
            .inner()
            .fetch_metadata(Some(topic), KAFKA_TIMEOUT)
            .map_err(|e| (e, None));
        match topic_partitions(metadata, brokers, topic) {
            Ok(ids) if !created || ids.len() >= usize::try_from(partitions).unwrap_or(0) => {
                return Ok(created);
            }
            Ok(_) | Err(SourceError::TopicNotFound { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(ids) => {
                return Err(SourceError::TopicMetadata {
                    brokers: brokers.to_owned(),
                    topic: topic.to_owned(),
                    detail: format!(
                        "created with {partitions} partitions but the broker reports {}",
                        ids.len()
                    ),
                });
            }
            Err(e) => return Err(e),
        }
    }
}
