//! Stage 1 on each worker: the configured sources, split across workers. File sources are read
//! by every worker, each keeping every `peers`-th record (the records are then routed to their
//! item's owner by id); Kafka partitions are assigned explicitly, `partition % peers == index`.

use std::time::Duration;

use anyhow::Context;

use c2s_config::{RunConfig, Selection, SourceConfig};
use c2s_operators::messages::Incoming;
use c2s_sources::{read_jsonl, read_parquet_items, KafkaConnection, KafkaItemSource, SourceRecord};

/// A Kafka position fed in an epoch: (topic, partition, offset).
pub type Position = (String, i32, i64);

/// How often librdkafka reports its statistics (fresh high watermarks) to a monitored run.
const KAFKA_STATISTICS_MS: &str = "5000";

/// Where a Kafka source stands on one partition (what a live monitor shows).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartitionProgress {
    /// The next offset to read (one past the last record fed).
    pub next_offset: i64,
    /// The latest known high watermark (the offset the next message will get).
    pub high_watermark: i64,
    /// The group's committed offset: where the run started, then what it committed.
    pub committed: i64,
}

enum Source {
    Records {
        iter: Box<dyn Iterator<Item = SourceRecord>>,
        seen: usize,
    },
    Kafka {
        consumer: Box<KafkaItemSource>,
        continuous: bool,
        /// Committed offset per partition (the start position until the run commits).
        committed: std::collections::BTreeMap<i32, i64>,
    },
}

pub struct Feeder {
    sources: Vec<Source>,
    current: usize,
    index: usize,
    peers: usize,
}

fn to_incoming(r: SourceRecord) -> (Incoming, Option<Position>) {
    let pos = r.kafka.map(|k| (k.topic, k.partition, k.offset));
    (
        Incoming {
            source: r.source,
            location: r.location,
            payload: r.payload,
        },
        pos,
    )
}

/// The records of a file source after its selection and then its limit (`limit` counts
/// selected records). Unreadable records are always kept, so that they reach `rejects/`.
fn file_records(
    path: &std::path::Path,
    limit: Option<usize>,
    select: &Option<Selection>,
    parquet: bool,
) -> anyhow::Result<Box<dyn Iterator<Item = SourceRecord>>> {
    let records: Box<dyn Iterator<Item = SourceRecord>> = if parquet {
        Box::new(
            read_parquet_items(path, if select.is_some() { None } else { limit })
                .with_context(|| format!("opening {}", path.display()))?,
        )
    } else {
        Box::new(
            read_jsonl(path, if select.is_some() { None } else { limit })
                .with_context(|| format!("opening {}", path.display()))?,
        )
    };
    Ok(match select.clone() {
        None => records,
        Some(sel) => {
            let kept = records.filter(move |r| match &r.payload {
                Ok(text) => sel.keeps(text),
                Err(_) => true,
            });
            match limit {
                Some(n) => Box::new(kept.take(n)),
                None => Box::new(kept),
            }
        }
    })
}

/// Items of the bounded file sources, when all sources are bounded (for progress and ETA).
pub fn count_items(cfg: &RunConfig) -> Option<u64> {
    let mut total = 0u64;
    for s in &cfg.sources {
        let n = match s {
            SourceConfig::Jsonl {
                path,
                limit,
                select,
            } => file_records(path, *limit, select, false).ok()?.count(),
            SourceConfig::Parquet {
                path,
                limit,
                select,
            } => file_records(path, *limit, select, true).ok()?.count(),
            SourceConfig::Kafka { .. } => return None,
        };
        total += n as u64;
    }
    Some(total)
}

impl Feeder {
    /// `monitored`: a live monitor reads [`Feeder::kafka_progress`], so Kafka clients report
    /// their statistics (fresh high watermarks for the consumer lag).
    pub fn new(
        cfg: &RunConfig,
        index: usize,
        peers: usize,
        monitored: bool,
    ) -> anyhow::Result<Feeder> {
        let mut sources = Vec::new();
        for s in &cfg.sources {
            sources.push(match s {
                SourceConfig::Jsonl {
                    path,
                    limit,
                    select,
                } => Source::Records {
                    iter: file_records(path, *limit, select, false)?,
                    seen: 0,
                },
                SourceConfig::Parquet {
                    path,
                    limit,
                    select,
                } => Source::Records {
                    iter: file_records(path, *limit, select, true)?,
                    seen: 0,
                },
                SourceConfig::Kafka {
                    brokers,
                    topic,
                    group,
                    continuous,
                    ..
                } => {
                    let mut connection = kafka_connection(
                        s.kafka_client()
                            .context("a Kafka source without settings")?,
                    );
                    if monitored {
                        connection = connection.with_properties([(
                            "statistics.interval.ms".to_string(),
                            KAFKA_STATISTICS_MS.to_string(),
                        )]);
                    }
                    let consumer =
                        KafkaItemSource::connect_with(&connection, topic, group, index, peers)
                            .with_context(|| {
                                format!("connecting to Kafka topic {topic} at {brokers}")
                            })?;
                    Source::Kafka {
                        committed: consumer.positions().clone(),
                        consumer: Box::new(consumer),
                        continuous: *continuous,
                    }
                }
            });
        }
        Ok(Feeder {
            sources,
            current: 0,
            index,
            peers,
        })
    }

    /// Up to `max` records for this worker, with Kafka positions.
    pub fn next_batch(&mut self, max: usize) -> anyhow::Result<Vec<(Incoming, Option<Position>)>> {
        let mut out = Vec::new();
        while out.len() < max && self.current < self.sources.len() {
            match &mut self.sources[self.current] {
                Source::Records { iter, seen } => match iter.next() {
                    Some(r) => {
                        let mine = *seen % self.peers == self.index;
                        *seen += 1;
                        if mine {
                            out.push(to_incoming(r));
                        }
                    }
                    None => self.current += 1,
                },
                Source::Kafka {
                    consumer,
                    continuous,
                    ..
                } => {
                    let got = consumer.poll_batch(max - out.len(), Duration::ZERO);
                    let empty = got.is_empty();
                    out.extend(got.into_iter().map(to_incoming));
                    if empty {
                        if !*continuous {
                            match consumer.try_caught_up() {
                                Ok(true) => self.current += 1,
                                Ok(false) => {}
                                // A broker that cannot be reached is waited for, at most
                                // KAFKA_MAX_OUTAGE.
                                Err(e) => {
                                    let outages = c2s_sources::kafka_outages();
                                    let cause = e.to_string();
                                    outages.down(consumer.brokers(), "reading watermarks", &cause);
                                    if outages.gave_up() {
                                        return Err(e).context("reading Kafka watermarks");
                                    }
                                }
                            }
                        }
                        break;
                    }
                }
            }
        }
        Ok(out)
    }

    /// Each assigned Kafka partition's offsets: (topic, partition, progress).
    pub fn kafka_progress(&self) -> Vec<(String, i32, PartitionProgress)> {
        let mut out = Vec::new();
        for s in &self.sources {
            if let Source::Kafka {
                consumer,
                committed,
                ..
            } = s
            {
                let high = consumer.high_watermarks();
                let done = consumer.committed();
                for &p in consumer.partitions() {
                    let next_offset = consumer.positions().get(&p).copied().unwrap_or(0);
                    out.push((
                        consumer.topic().to_string(),
                        p,
                        PartitionProgress {
                            next_offset,
                            high_watermark: high.get(&p).copied().unwrap_or(next_offset),
                            committed: committed
                                .get(&p)
                                .copied()
                                .max(done.get(&p).copied())
                                .unwrap_or(0),
                        },
                    ));
                }
            }
        }
        out
    }

    /// Every bounded source is read to its end.
    pub fn exhausted(&self) -> bool {
        self.current >= self.sources.len()
    }

    /// Notice a Kafka broker that does not answer commits (see `KafkaItemSource::watch`).
    pub fn watch(&self) {
        for s in &self.sources {
            if let Source::Kafka { consumer, .. } = s {
                consumer.watch();
            }
        }
    }

    /// Wait until every Kafka commit is made (at the end of the run).
    pub fn finish_commits(&mut self) -> anyhow::Result<()> {
        for s in &mut self.sources {
            if let Source::Kafka {
                consumer,
                committed,
                ..
            } = s
            {
                consumer.finish_commits()?;
                committed.extend(consumer.committed());
            }
        }
        Ok(())
    }

    /// Commit Kafka positions (the next offset after each fed message).
    pub fn commit(&mut self, positions: &[Position]) -> anyhow::Result<()> {
        for s in &mut self.sources {
            if let Source::Kafka {
                consumer,
                committed,
                ..
            } = s
            {
                let mut next: std::collections::BTreeMap<i32, i64> = Default::default();
                for (topic, p, o) in positions {
                    if topic == consumer.topic() {
                        let e = next.entry(*p).or_insert(o + 1);
                        *e = (*e).max(o + 1);
                    }
                }
                if !next.is_empty() {
                    // On the source's commit thread: a broker that cannot be reached is
                    // waited for there, while the pipeline goes on.
                    let offsets: Vec<(i32, i64)> = next.into_iter().collect();
                    consumer.commit_in_background(&offsets)?;
                }
                committed.extend(consumer.committed());
            }
        }
        Ok(())
    }
}

/// The sources crate's connection from a config's Kafka client settings.
pub fn kafka_connection(client: c2s_config::KafkaClientSettings) -> KafkaConnection {
    KafkaConnection::new(&client.brokers).with_properties(client.properties)
}
