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
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::{ClientContext, DefaultClientContext};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{BorrowedMessage, DeliveryResult, Message};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer, ProducerContext};
use rdkafka::{Offset, TopicPartitionList};

use crate::{KafkaPosition, SourceError, SourceRecord};

/// Time allowed to each blocking broker operation (metadata, offsets, commits, flushes).
pub const KAFKA_TIMEOUT: Duration = Duration::from_secs(10);

fn kafka_err(brokers: &str, action: impl Into<String>) -> impl FnOnce(KafkaError) -> SourceError {
    let brokers = brokers.to_owned();
    let action = action.into();
    move |source| SourceError::Kafka {
        brokers,
        action,
        source: Box::new(source),
    }
}

/// Partitions of `topic` as the broker reports them (sorted ids).
fn topic_partitions<C: ClientContext>(
    client: &rdkafka::client::Client<C>,
    brokers: &str,
    topic: &str,
) -> Result<Vec<i32>, SourceError> {
    let metadata = client
        .fetch_metadata(Some(topic), KAFKA_TIMEOUT)
        .map_err(kafka_err(
            brokers,
            format!("fetch metadata of topic `{topic}`"),
        ))?;
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
    consumer: BaseConsumer,
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
    /// Connect to `brokers` (e.g. `127.0.0.1:9092`) and assign this worker's partitions of
    /// `topic`: those with `partition % peers == worker_index`. Each starts at `group`'s
    /// committed offset, or at the beginning of the partition when none was committed.
    pub fn connect(
        brokers: &str,
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
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", brokers)
            .set("group.id", group)
            .set("client.id", format!("c2s-{group}-w{worker_index}"))
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("auto.offset.reset", "earliest")
            .set("enable.partition.eof", "false")
            .set("fetch.wait.max.ms", "100")
            .create()
            .map_err(kafka_err(brokers, "create consumer"))?;
        let all = topic_partitions(consumer.client(), brokers, topic)?;
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
                .map_err(kafka_err(
                    brokers,
                    format!("fetch committed offsets of group `{group}` on `{topic}`"),
                ))?
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
            let (lo, hi) =
                consumer
                    .fetch_watermarks(topic, p, KAFKA_TIMEOUT)
                    .map_err(kafka_err(
                        brokers,
                        format!("fetch watermarks of {topic}/{p}"),
                    ))?;
            let start = committed.get(&p).copied();
            let offset = start.map_or(Offset::Beginning, Offset::Offset);
            assignment
                .add_partition_offset(topic, p, offset)
                .map_err(kafka_err(brokers, format!("assign {topic}/{p}")))?;
            positions.insert(p, start.unwrap_or(lo));
            high.insert(p, hi);
        }
        consumer.assign(&assignment).map_err(kafka_err(
            brokers,
            format!("assign partitions of `{topic}`"),
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
            consumer,
            brokers: brokers.to_owned(),
            topic: topic.to_owned(),
            group: group.to_owned(),
            source: format!("kafka:{topic}"),
            partitions,
            positions,
            high,
            wakeup: None,
        })
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

    /// Call `f` whenever messages become available after the consumer queue was empty (the
    /// pipeline passes its operator's activator). `f` is also called once now, and again by
    /// [`poll_batch`](Self::poll_batch) when it stopped at `max` with messages possibly left.
    pub fn set_wakeup(&mut self, f: impl Fn() + Send + Sync + 'static) {
        let f: Arc<dyn Fn() + Send + Sync> = Arc::new(f);
        let g = Arc::clone(&f);
        self.consumer.set_nonempty_callback(move || g());
        f();
        self.wakeup = Some(f);
    }

    /// Up to `max` records, waiting at most `timeout` for the first one. A message without a
    /// payload or with a payload that is not UTF-8 becomes a record whose payload is an error
    /// naming topic, partition and offset. Consumer errors (broker down, …) are logged; the
    /// client retries by itself.
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
                    tracing::warn!(brokers = %self.brokers, topic = %self.topic, "kafka consumer: {e}");
                    if wait.is_zero() {
                        break;
                    }
                }
            }
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
        if offsets.is_empty() {
            return Ok(());
        }
        let mut tpl = TopicPartitionList::with_capacity(offsets.len());
        let mut shown = String::new();
        for &(p, next) in offsets {
            if !self.partitions.contains(&p) {
                return Err(SourceError::NotAssigned {
                    topic: self.topic.clone(),
                    partition: p,
                });
            }
            let _ = write!(shown, " {}/{p}@{next}", self.topic);
            tpl.add_partition_offset(&self.topic, p, Offset::Offset(next))
                .map_err(kafka_err(&self.brokers, format!("commit{shown}")))?;
        }
        self.consumer
            .commit(&tpl, CommitMode::Sync)
            .map_err(kafka_err(
                &self.brokers,
                format!("commit offsets{shown} for group `{}`", self.group),
            ))
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
                .map_err(kafka_err(
                    &self.brokers,
                    format!("fetch watermarks of {}/{p}", self.topic),
                ))?;
            self.high.insert(p, hi);
        }
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

/// Counts delivery reports of [`produce`].
#[derive(Default)]
struct DeliveryCounter {
    failed: AtomicUsize,
    first_error: Mutex<Option<String>>,
}

impl ClientContext for DeliveryCounter {}

impl ProducerContext for DeliveryCounter {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((e, msg)) = result {
            self.failed.fetch_add(1, Ordering::SeqCst);
            if let Ok(mut first) = self.first_error.lock() {
                first.get_or_insert_with(|| format!("{}/{}: {e}", msg.topic(), msg.partition()));
            }
        }
    }
}

/// A producer kept open across batches: the `[output.kafka]` sink publishes every closed part of
/// `outcomes/` and `metrics/` through one.
pub struct KafkaPublisher {
    brokers: String,
    producer: BaseProducer<DeliveryCounter>,
}

impl KafkaPublisher {
    pub fn connect(brokers: &str) -> Result<KafkaPublisher, SourceError> {
        let producer: BaseProducer<DeliveryCounter> = ClientConfig::new()
            .set("bootstrap.servers", brokers)
            .set("client.id", "c2s-producer")
            .set("acks", "all")
            .set("linger.ms", "5")
            .set("message.timeout.ms", KAFKA_TIMEOUT.as_millis().to_string())
            .create_with_context(DeliveryCounter::default())
            .map_err(kafka_err(brokers, "create producer"))?;
        Ok(KafkaPublisher {
            brokers: brokers.to_owned(),
            producer,
        })
    }

    /// Produce `payloads` (optional key, value) to `topic` and wait until every message is
    /// acknowledged. Keys choose the partition (librdkafka's default partitioner); messages
    /// without a key are spread over partitions.
    pub fn publish<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        topic: &str,
        payloads: &[(Option<K>, V)],
    ) -> Result<(), SourceError> {
        let brokers = self.brokers.as_str();
        let producer = &self.producer;
        let ctx = producer.context();
        ctx.failed.store(0, Ordering::SeqCst);
        if let Ok(mut first) = ctx.first_error.lock() {
            *first = None;
        }
        let deadline = Instant::now() + KAFKA_TIMEOUT;
        for (key, value) in payloads {
            let mut record: BaseRecord<'_, [u8], [u8]> =
                BaseRecord::to(topic).payload(value.as_ref());
            if let Some(k) = key {
                record = record.key(k.as_ref());
            }
            loop {
                match producer.send(record) {
                    Ok(()) => break,
                    Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back))
                        if Instant::now() < deadline =>
                    {
                        record = back;
                        producer.poll(Duration::from_millis(50));
                    }
                    Err((e, _)) => {
                        return Err(kafka_err(brokers, format!("produce to `{topic}`"))(e));
                    }
                }
            }
            producer.poll(Duration::ZERO);
        }
        producer
            .flush(KAFKA_TIMEOUT)
            .map_err(kafka_err(brokers, format!("flush messages to `{topic}`")))?;
        let failed = ctx.failed.load(Ordering::SeqCst);
        if failed > 0 {
            let first = ctx
                .first_error
                .lock()
                .ok()
                .and_then(|f| f.clone())
                .unwrap_or_default();
            return Err(SourceError::Produce {
                brokers: brokers.to_owned(),
                topic: topic.to_owned(),
                failed,
                total: payloads.len(),
                first,
            });
        }
        Ok(())
    }
}

/// Produce `payloads` (optional key, value) to `topic` once, with a producer of its own (see
/// [`KafkaPublisher::publish`]).
pub fn produce<K: AsRef<[u8]>, V: AsRef<[u8]>>(
    brokers: &str,
    topic: &str,
    payloads: &[(Option<K>, V)],
) -> Result<(), SourceError> {
    KafkaPublisher::connect(brokers)?.publish(topic, payloads)
}

/// Create `topic` with `partitions` partitions (replication factor 1) and wait until its
/// metadata shows them. Returns `false` when the topic already existed (it is left as is).
pub fn create_topic(brokers: &str, topic: &str, partitions: i32) -> Result<bool, SourceError> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("client.id", "c2s-admin")
        .create()
        .map_err(kafka_err(brokers, "create admin client"))?;
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
        .map_err(kafka_err(brokers, action.clone()))?;
    let mut created = true;
    for result in results {
        match result {
            Ok(_) => {}
            Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => created = false,
            Err((_, code)) => {
                return Err(kafka_err(brokers, action)(KafkaError::AdminOp(code)));
            }
        }
    }
    // Wait until the broker reports the partitions, so that producers and consumers started
    // right after see the whole topic.
    let deadline = Instant::now() + KAFKA_TIMEOUT;
    loop {
        match topic_partitions(admin.inner(), brokers, topic) {
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
