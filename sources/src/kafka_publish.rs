//! The `[output.kafka]` producer: publishes rows as messages and waits until they are
//! acknowledged, through broker outages of at most [`KAFKA_MAX_OUTAGE`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{DeliveryResult, Message};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer, ProducerContext};

use crate::kafka::{kafka_err, ConnectionProblems, KafkaConnection, KAFKA_TIMEOUT};
use crate::kafka_outage::{kafka_outages, KAFKA_MAX_OUTAGE};
use crate::SourceError;

/// Counts delivery reports of [`produce`], and keeps the client's connection problems.
#[derive(Default)]
struct DeliveryCounter {
    failed: AtomicUsize,
    first_error: Mutex<Option<String>>,
    problems: ConnectionProblems,
}

impl ClientContext for DeliveryCounter {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, message: &str) {
        self.problems.log(level, fac, message);
    }

    fn error(&self, error: KafkaError, reason: &str) {
        self.problems.error(error, reason);
    }
}

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
    /// A plaintext producer to `brokers`.
    pub fn connect(brokers: &str) -> Result<KafkaPublisher, SourceError> {
        Self::connect_with(&KafkaConnection::new(brokers))
    }

    /// A producer to the cluster of `connection`.
    pub fn connect_with(connection: &KafkaConnection) -> Result<KafkaPublisher, SourceError> {
        let brokers = connection.brokers();
        let producer: BaseProducer<DeliveryCounter> = connection
            .client_config(
                &[
                    ("client.id", "c2s-producer".into()),
                    ("acks", "all".into()),
                    // Not idempotent: with `enable.idempotence`, a tansu broker killed while a
                    // message was in flight lost it (1 of 16 outcomes, CI run of 2c50d15;
                    // its sequence state and its log disagree after the restart). Delivery
                    // is at least once: a message re-sent after a lost acknowledgement may
                    // appear twice, with the same key and payload.
                    ("linger.ms", "5".into()),
                    // A broker that restarts is found again within a second.
                    ("reconnect.backoff.max.ms", "1000".into()),
                    // Queued messages wait for a broker that cannot be reached.
                    (
                        "message.timeout.ms",
                        KAFKA_MAX_OUTAGE.as_millis().to_string(),
                    ),
                ],
                &[],
            )
            .create_with_context(DeliveryCounter::default())
            .map_err(kafka_err(brokers, "create producer", None))?;
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
                        let problem = ctx.problems.last();
                        return Err(
                            kafka_err(brokers, format!("produce to `{topic}`"), problem)(e),
                        );
                    }
                }
            }
            producer.poll(Duration::ZERO);
        }
        // A broker that cannot be reached is waited for: the messages stay queued and are
        // delivered once it is back, at most KAFKA_MAX_OUTAGE later. A cluster that refuses
        // the client (a wrong password, an untrusted certificate) is not an outage: its
        // error is returned at once.
        let start = Instant::now();
        loop {
            match producer.flush(Duration::from_secs(1)) {
                Ok(()) => break,
                Err(e) if ctx.problems.refused() => {
                    let action = format!("flush messages to `{topic}`");
                    return Err(kafka_err(brokers, action, ctx.problems.last())(e));
                }
                // The broker was reported lost (now or before, and nothing was delivered
                // since) and does not take the messages.
                Err(e) if start.elapsed() < KAFKA_MAX_OUTAGE => {
                    if ctx.problems.gone.load(Ordering::SeqCst) {
                        let cause = ctx.problems.last().unwrap_or_else(|| e.to_string());
                        let what = format!("publishing to `{topic}`");
                        kafka_outages().down(brokers, &what, &cause);
                    }
                }
                Err(e) => {
                    let problem = ctx.problems.last();
                    let action = format!("flush messages to `{topic}`");
                    return Err(kafka_err(brokers, action, problem)(e));
                }
            }
        }
        ctx.problems.gone.store(false, Ordering::SeqCst);
        kafka_outages().up(brokers, &format!("publishing to `{topic}`"));
        let failed = ctx.failed.load(Ordering::SeqCst);
        if failed > 0 {
            let mut first = ctx
                .first_error
                .lock()
                .ok()
                .and_then(|f| f.clone())
                .unwrap_or_default();
            if let Some(problem) = ctx.problems.last() {
                first = format!("{first} ({problem})");
            }
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
