//! Kafka sources against a real broker (tansu, in memory, one per test).

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use c2s_records::{parse_item, ItemPolicy};
use c2s_sources::{create_topic, produce, KafkaItemSource, SourceError, SourceRecord};
use c2s_testkit::Broker;
use common::item_json;

const POLL: Duration = Duration::from_millis(100);

fn items(range: std::ops::Range<usize>) -> Vec<(Option<String>, String)> {
    range
        .map(|i| (Some(format!("key-{i}")), item_json(&format!("k-{i}"))))
        .collect()
}

/// Poll every source until all are caught up (and at least `min` records arrived).
fn drain(sources: &mut [&mut KafkaItemSource], min: usize) -> Vec<Vec<SourceRecord>> {
    let mut got: Vec<Vec<SourceRecord>> = sources.iter().map(|_| Vec::new()).collect();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        for (s, out) in sources.iter_mut().zip(got.iter_mut()) {
            out.extend(s.poll_batch(64, POLL));
        }
        let total: usize = got.iter().map(Vec::len).sum();
        if total >= min && sources.iter_mut().all(|s| s.caught_up()) {
            return got;
        }
        assert!(
            Instant::now() < deadline,
            "sources did not catch up: {total} records"
        );
    }
}

fn item_ids(records: &[SourceRecord]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            let text = r.payload.as_ref().expect("utf-8 payload");
            parse_item(text, &ItemPolicy::default())
                .expect("valid item")
                .item_id
        })
        .collect()
}

/// Offsets to commit after the first `n` records of a worker (per partition).
fn next_offsets(records: &[SourceRecord]) -> Vec<(i32, i64)> {
    let mut next = BTreeMap::new();
    for r in records {
        let k = r.kafka.as_ref().expect("kafka position");
        next.insert(k.partition, k.next_offset());
    }
    next.into_iter().collect()
}

#[test]
fn two_workers_split_partitions_commit_and_resume() {
    let broker = Broker::start();
    let b = broker.addr.as_str();
    assert!(create_topic(b, "items", 2).expect("create topic"));
    assert!(!create_topic(b, "items", 2).expect("topic exists"));
    produce(b, "items", &items(0..20)).expect("produce");

    let mut w0 = KafkaItemSource::connect(b, "items", "g1", 0, 2).expect("worker 0");
    let mut w1 = KafkaItemSource::connect(b, "items", "g1", 1, 2).expect("worker 1");
    assert_eq!(w0.partitions(), [0]);
    assert_eq!(w1.partitions(), [1]);
    let got = drain(&mut [&mut w0, &mut w1], 20);
    for (worker, records) in got.iter().enumerate() {
        assert!(!records.is_empty(), "worker {worker} got no records");
        for r in records {
            let k = r.kafka.as_ref().expect("kafka position");
            assert_eq!(k.partition, worker as i32);
            assert_eq!(k.topic, "items");
            assert_eq!(r.source, "kafka:items");
            assert_eq!(r.location, format!("items/{}@{}", k.partition, k.offset));
        }
    }
    let all: Vec<String> = got.iter().flat_map(|r| item_ids(r)).collect();
    let unique: BTreeSet<&String> = all.iter().collect();
    assert_eq!(all.len(), 20, "every message seen once");
    assert_eq!(unique.len(), 20);

    // Worker 0 made only its first two records durable; worker 1 all of its records.
    w0.commit(&next_offsets(&got[0][..2])).expect("commit w0");
    w1.commit(&next_offsets(&got[1])).expect("commit w1");
    assert!(matches!(
        w0.commit(&[(1, 1)]),
        Err(SourceError::NotAssigned { partition: 1, .. })
    ));
    drop((w0, w1));

    produce(b, "items", &items(20..26)).expect("produce more");
    let mut r0 = KafkaItemSource::connect(b, "items", "g1", 0, 2).expect("worker 0 again");
    let mut r1 = KafkaItemSource::connect(b, "items", "g1", 1, 2).expect("worker 1 again");
    let again = drain(&mut [&mut r0, &mut r1], 6);
    let first0 = again[0][0].kafka.as_ref().expect("position").offset;
    assert_eq!(
        first0,
        got[0][1].kafka.as_ref().expect("position").offset + 1
    );
    let seen_before: BTreeSet<String> = item_ids(&got[1]).into_iter().collect();
    for id in item_ids(&again[1]) {
        assert!(
            !seen_before.contains(&id),
            "{id} was committed but read again"
        );
    }
    let resumed: BTreeSet<String> = again.iter().flat_map(|r| item_ids(r)).collect();
    let expected: BTreeSet<String> = item_ids(&got[0][2..])
        .into_iter()
        .chain((20..26).map(|i| format!("k-{i}")))
        .collect();
    assert_eq!(resumed, expected);

    // A new group starts at the beginning; one worker alone reads both partitions.
    let mut fresh = KafkaItemSource::connect(b, "items", "g2", 0, 1).expect("fresh group");
    assert_eq!(fresh.partitions(), [0, 1]);
    let all = drain(&mut [&mut fresh], 26);
    assert_eq!(all[0].len(), 26);
}

#[test]
fn malformed_messages_become_error_records() {
    let broker = Broker::start();
    let b = broker.addr.as_str();
    create_topic(b, "raw", 2).expect("create topic");
    produce(
        b,
        "raw",
        &[
            (
                Some("x".to_string()),
                b"{\"item_id\": \"\xff\xfe\"}".to_vec(),
            ),
            (Some("y".to_string()), item_json("fine").into_bytes()),
        ],
    )
    .expect("produce");
    // A message without a value (a tombstone).
    {
        use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
        let p: BaseProducer = rdkafka::ClientConfig::new()
            .set("bootstrap.servers", b)
            .create()
            .expect("producer");
        p.send(BaseRecord::<str, [u8]>::to("raw").key("z").partition(1))
            .map_err(|(e, _)| e)
            .expect("send tombstone");
        p.flush(Duration::from_secs(10)).expect("flush");
    }

    let mut src = KafkaItemSource::connect(b, "raw", "g", 0, 1).expect("connect");
    let got = drain(&mut [&mut src], 3).remove(0);
    assert_eq!(got.len(), 3);
    let bad: Vec<&SourceRecord> = got.iter().filter(|r| r.payload.is_err()).collect();
    assert_eq!(bad.len(), 2, "{got:?}");
    for r in bad {
        let k = r.kafka.as_ref().expect("kafka position");
        let at = format!("raw/{}@{}", k.partition, k.offset);
        assert_eq!(r.location, at);
        let msg = r.payload.as_ref().unwrap_err();
        assert!(msg.contains(&at), "{msg}");
        assert!(msg.contains("UTF-8") || msg.contains("no payload"), "{msg}");
    }
    assert!(got
        .iter()
        .any(|r| r.payload.as_ref().is_ok_and(|p| p.contains("fine"))));
}

#[test]
fn wakeup_fires_when_messages_arrive() {
    let broker = Broker::start();
    let b = broker.addr.as_str();
    create_topic(b, "wake", 2).expect("create topic");
    let mut src = KafkaItemSource::connect(b, "wake", "g", 0, 1).expect("connect");
    let calls = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&calls);
    src.set_wakeup(move || {
        c.fetch_add(1, Ordering::SeqCst);
    });
    assert_eq!(calls.load(Ordering::SeqCst), 1, "called once when set");
    assert!(src.poll_batch(10, Duration::ZERO).is_empty());
    assert!(src.caught_up());

    produce(b, "wake", &items(0..3)).expect("produce");
    let deadline = Instant::now() + Duration::from_secs(10);
    while calls.load(Ordering::SeqCst) < 2 {
        assert!(Instant::now() < deadline, "no wakeup after produce");
        std::thread::sleep(Duration::from_millis(10));
    }
    let got = drain(&mut [&mut src], 3).remove(0);
    assert_eq!(got.len(), 3);
    // A batch cut at `max` wakes the consumer again.
    produce(b, "wake", &items(3..6)).expect("produce");
    let before = calls.load(Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut n = 0;
    while n < 3 {
        assert!(Instant::now() < deadline, "messages did not arrive");
        n += src.poll_batch(1, POLL).len();
    }
    assert!(calls.load(Ordering::SeqCst) > before);
}

#[test]
fn connect_errors_are_named() {
    let broker = Broker::start();
    let b = broker.addr.as_str();
    let err = KafkaItemSource::connect(b, "absent", "g", 0, 1).unwrap_err();
    assert!(matches!(err, SourceError::TopicNotFound { .. }), "{err}");
    assert!(err.to_string().contains("absent"), "{err}");
    let err = KafkaItemSource::connect(b, "absent", "g", 2, 2).unwrap_err();
    assert!(matches!(err, SourceError::BadWorker { .. }), "{err}");
    // A worker beyond the partition count gets nothing, and is trivially caught up.
    create_topic(b, "small", 1).expect("create topic");
    let mut idle = KafkaItemSource::connect(b, "small", "g", 1, 2).expect("connect");
    assert!(idle.partitions().is_empty());
    assert!(idle.caught_up());
    assert!(idle.poll_batch(10, Duration::from_millis(10)).is_empty());
}

#[test]
fn source_and_errors_can_move_between_threads() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync + 'static>() {}
    send::<KafkaItemSource>();
    send_sync::<SourceError>();
    send_sync::<SourceRecord>();
    assert!(std::mem::size_of::<SourceError>() <= 128);
}
