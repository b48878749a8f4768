//! Item sources: bank files (JSONL, Parquet) and Kafka topics (stage 1).
//!
//! Sources deliver *raw text records*; validation (`c2s_records::parse_item`) happens
//! downstream so that every source is checked by the same rules. A source never loses a
//! record: input it cannot read (a line that is not UTF-8, a Parquet value that cannot be
//! turned into JSON, a Kafka message without a usable payload) becomes a [`SourceRecord`]
//! whose `payload` is `Err(message)`, so that it reaches the run's `rejects/` with its
//! location. Failures that concern the whole source (a missing file, an unreachable broker)
//! are [`SourceError`]s.

#![deny(missing_docs)]

mod jsonl;
mod kafka;
mod kafka_commit;
mod kafka_outage;
mod kafka_publish;
pub mod local_broker;
mod parquet_items;

use std::path::PathBuf;

use thiserror::Error;

pub use jsonl::{read_jsonl, JsonlRecords};
pub use kafka::{create_topic, create_topic_with, KafkaConnection, KafkaItemSource, KAFKA_TIMEOUT};
pub use kafka_commit::SLOW_COMMIT;
pub use kafka_outage::{kafka_outages, KafkaOutages, KAFKA_MAX_OUTAGE};
pub use kafka_publish::{produce, KafkaPublisher};
pub use parquet_items::{read_parquet_items, ParquetRecords};

/// Where a Kafka record came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KafkaPosition {
    /// The topic the message was read from.
    pub topic: String,
    /// The partition's id in the topic (0-based).
    pub partition: i32,
    /// Offset of the message itself; commit `offset + 1` once it is durable.
    pub offset: i64,
}

impl KafkaPosition {
    /// The offset to commit once this record's outputs are durable.
    pub fn next_offset(&self) -> i64 {
        self.offset + 1
    }
}

/// One raw item record as delivered by a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRecord {
    /// The source, e.g. `jsonl:data/banks/x.jsonl`, `parquet:items.parquet`, `kafka:items`.
    pub source: String,
    /// The record's place in the source: `data/banks/x.jsonl:12` (1-based line),
    /// `items.parquet#0` (0-based row), `items/0@35` (topic/partition@offset).
    pub location: String,
    /// The item's JSON text, or why the record could not be read (the message names the
    /// location).
    pub payload: Result<String, String>,
    /// Topic, partition and offset for records read from Kafka.
    pub kafka: Option<KafkaPosition>,
}

/// A failure of a whole source (as opposed to one unreadable record).
#[derive(Debug, Error)]
pub enum SourceError {
    /// A bank file that cannot be opened.
    #[error("cannot open {}: {source}", path.display())]
    Open {
        /// The file, as the caller named it.
        path: PathBuf,
        /// Why the system refused to open it.
        #[source]
        source: std::io::Error,
    },
    /// A file whose Parquet metadata cannot be read or that no row reader can be built for.
    #[error("cannot read Parquet file {}: {source}", path.display())]
    Parquet {
        /// The file, as the caller named it.
        path: PathBuf,
        /// The Parquet reader's error.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// A Kafka call that failed with no connection problem reported before it.
    #[error("kafka ({brokers}): {action}: {source}")]
    Kafka {
        /// The bootstrap brokers (`host:port[,host:port]`).
        brokers: String,
        /// What was being done, e.g. `create consumer`, `fetch watermarks of items/0`.
        action: String,
        /// librdkafka's error.
        #[source]
        source: Box<rdkafka::error::KafkaError>,
    },
    /// A call that failed after the client reported a connection problem: the brokers refused
    /// the credentials or the TLS handshake, or could not be reached.
    #[error("kafka ({brokers}): {action}: {cause} ({source})")]
    KafkaConnection {
        /// The bootstrap brokers (`host:port[,host:port]`).
        brokers: String,
        /// What was being done, e.g. `fetch the cluster's metadata`.
        action: String,
        /// librdkafka's last report on the connection (never a secret).
        cause: String,
        /// librdkafka's error.
        #[source]
        source: Box<rdkafka::error::KafkaError>,
    },
    /// A topic missing from the cluster's metadata, unknown to the broker, or without
    /// partitions.
    #[error("kafka ({brokers}): topic `{topic}` does not exist or has no partitions")]
    TopicNotFound {
        /// The bootstrap brokers (`host:port[,host:port]`).
        brokers: String,
        /// The topic asked for.
        topic: String,
    },
    /// A topic whose metadata the broker reports with an error, or that shows fewer
    /// partitions than it was just created with once [`KAFKA_TIMEOUT`] is over.
    #[error("kafka ({brokers}): topic `{topic}`: {detail}")]
    TopicMetadata {
        /// The bootstrap brokers (`host:port[,host:port]`).
        brokers: String,
        /// The topic asked for.
        topic: String,
        /// The broker's error, or the partition counts that disagree.
        detail: String,
    },
    /// A worker index out of range: the index must be below the number of peers.
    #[error("kafka: worker index {worker_index} is not below the number of peers {peers}")]
    BadWorker {
        /// This worker's index among the peers (0-based).
        worker_index: usize,
        /// How many workers share the topic's partitions.
        peers: usize,
    },
    /// An offset to commit for a partition that this worker does not read.
    #[error("kafka: partition {topic}/{partition} is not assigned to this worker")]
    NotAssigned {
        /// The topic the source reads.
        topic: String,
        /// The partition's id, not among this worker's.
        partition: i32,
    },
    /// Messages whose delivery report was an error.
    #[error("kafka ({brokers}): {failed} of {total} messages to `{topic}` were not delivered; first error: {first}")]
    Produce {
        /// The bootstrap brokers (`host:port[,host:port]`).
        brokers: String,
        /// The topic produced to.
        topic: String,
        /// How many messages were not delivered.
        failed: usize,
        /// How many messages the call produced.
        total: usize,
        /// The first delivery error (`topic/partition: error`), followed by the last
        /// connection problem when one was reported.
        first: String,
    },
}
