//! Kafka sources against clusters that require what managed clusters require: SASL
//! authentication and TLS with a CA of their own.
//!
//! Tansu 0.6.0 cannot authenticate anyone (its in-memory storage keeps no SCRAM credentials,
//! it has no PLAIN, and its CLI cannot enable TLS), so a successful SASL session goes through
//! the SASL/PLAIN + TLS gateway of `c2s_testkit` in front of a plaintext tansu;
//! SCRAM runs against tansu's own `--authentication`, which refuses it.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use c2s_sources::{
    create_topic_with, KafkaConnection, KafkaItemSource, KafkaPublisher, SourceError, SourceRecord,
};
use c2s_testkit::gateway::GatewayPolicy;
use c2s_testkit::{Broker, SecuredBroker, TestCa};
use common::item_json;

const USER: &str = "alice";
const PASSWORD: &str = "pw-7f3a9c-never-logged";

fn items(range: std::ops::Range<usize>) -> Vec<(Option<String>, String)> {
    range
        .map(|i| (Some(format!("key-{i}")), item_json(&format!("k-{i}"))))
        .collect()
}

fn plain_users() -> Option<Vec<(String, String)>> {
    Some(vec![(USER.to_string(), PASSWORD.to_string())])
}

/// SASL/PLAIN as `USER` with `password`, over `protocol` (`sasl_plaintext` or `sasl_ssl`).
fn sasl(brokers: &str, protocol: &str, mechanism: &str, password: &str) -> KafkaConnection {
    KafkaConnection::new(brokers).with_properties([
        ("security.protocol".to_string(), protocol.to_string()),
        ("sasl.mechanism".to_string(), mechanism.to_string()),
        ("sasl.username".to_string(), USER.to_string()),
        ("sasl.password".to_string(), password.to_string()),
    ])
}

/// Poll until caught up with at least `min` records.
fn drain(source: &mut KafkaItemSource, min: usize) -> Vec<SourceRecord> {
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        got.extend(source.poll_batch(64, Duration::from_millis(100)));
        if got.len() >= min && source.caught_up() {
            return got;
        }
        assert!(
            Instant::now() < deadline,
            "the source did not catch up: {} records",
            got.len()
        );
    }
}

fn ids(records: &[SourceRecord]) -> BTreeSet<String> {
    records
        .iter()
        .map(|r| {
            let v: serde_json::Value =
                serde_json::from_str(r.payload.as_ref().expect("utf-8 payload")).expect("json");
            v["item_id"].as_str().expect("item_id").to_string()
        })
        .collect()
}

/// Every offset read, per partition, to commit.
fn next_offsets(records: &[SourceRecord]) -> Vec<(i32, i64)> {
    let mut next = std::collections::BTreeMap::new();
    for r in records {
        let k = r.kafka.as_ref().expect("kafka position");
        next.insert(k.partition, k.next_offset());
    }
    next.into_iter().collect()
}

/// Read, commit and resume through a connection; then the same cluster refuses a client
/// without credentials with an error naming the brokers.
fn read_commit_resume(cluster: &SecuredBroker, connection: &KafkaConnection) {
    assert!(create_topic_with(connection, "items", 2).expect("create topic"));
    let publisher = KafkaPublisher::connect_with(connection).expect("producer");
    publisher.publish("items", &items(0..10)).expect("produce");
    let mut source =
        KafkaItemSource::connect_with(connection, "items", "g", 0, 1).expect("connect");
    let first = drain(&mut source, 10);
    assert_eq!(ids(&first).len(), 10);
    source.commit(&next_offsets(&first)).expect("commit");
    drop(source);
    publisher.publish("items", &items(10..13)).expect("produce");
    let mut again =
        KafkaItemSource::connect_with(connection, "items", "g", 0, 1).expect("reconnect");
    let second = drain(&mut again, 3);
    assert_eq!(
        ids(&second),
        (10..13).map(|i| format!("k-{i}")).collect::<BTreeSet<_>>(),
        "committed records are not read again"
    );
    assert_eq!(cluster.gateway.refused(), 0);
}

#[test]
fn a_sasl_source_reads_commits_and_resumes() {
    let cluster = SecuredBroker::start(GatewayPolicy {
        plain_users: plain_users(),
        tls: None,
    });
    let connection = sasl(&cluster.addr, "sasl_plaintext", "PLAIN", PASSWORD);
    read_commit_resume(&cluster, &connection);
}

/// SASL over TLS, the broker's certificate signed by a CA the test creates: what managed
/// clusters require.
#[test]
fn a_sasl_ssl_source_with_its_ca_reads_commits_and_resumes() {
    let ca = TestCa::create();
    let cluster = SecuredBroker::start(GatewayPolicy {
        plain_users: plain_users(),
        tls: Some(ca.server_config()),
    });
    let connection = sasl(&cluster.addr, "sasl_ssl", "PLAIN", PASSWORD).with_properties([(
        "ssl.ca.location".to_string(),
        ca.ca_pem().display().to_string(),
    )]);
    read_commit_resume(&cluster, &connection);
    // Without the CA (the system's CAs only) the broker's certificate is refused.
    let unverified = sasl(&cluster.addr, "sasl_ssl", "PLAIN", PASSWORD);
    let err = KafkaItemSource::connect_with(&unverified, "items", "g", 0, 1).unwrap_err();
    let shown = err.to_string();
    assert!(shown.contains(&cluster.addr), "{shown}");
    assert!(shown.contains("certificate verify failed"), "{shown}");
    assert!(!shown.contains(PASSWORD), "{shown}");
}

#[test]
fn a_wrong_password_is_a_clear_error_not_a_hang() {
    let cluster = SecuredBroker::start(GatewayPolicy {
        plain_users: plain_users(),
        tls: None,
    });
    let wrong = "not-the-password-1b2c";
    let connection = sasl(&cluster.addr, "sasl_plaintext", "PLAIN", wrong);
    let err = KafkaItemSource::connect_with(&connection, "items", "g", 0, 1).unwrap_err();
    assert!(
        matches!(err, SourceError::KafkaConnection { .. }),
        "{err:?}"
    );
    let shown = err.to_string();
    assert!(shown.contains(&cluster.addr), "{shown}");
    assert!(shown.contains("SASL authentication error"), "{shown}");
    assert!(shown.contains("invalid user name or password"), "{shown}");
    assert!(
        !shown.contains(wrong) && !shown.contains(PASSWORD),
        "{shown}"
    );
    assert!(cluster.gateway.refused() >= 1);
    // The sink's topic creation and its producer report the same.
    let err = create_topic_with(&connection, "out", 1)
        .unwrap_err()
        .to_string();
    assert!(err.contains("SASL authentication error"), "{err}");
    let publisher = KafkaPublisher::connect_with(&connection).expect("a producer is created");
    let err = publisher
        .publish("out", &items(0..1))
        .unwrap_err()
        .to_string();
    assert!(err.contains(&cluster.addr), "{err}");
    assert!(err.contains("SASL authentication error"), "{err}");
    // No credentials at all: the cluster closes the connection; still an error, not a hang.
    let err =
        KafkaItemSource::connect_with(&KafkaConnection::new(&cluster.addr), "items", "g", 0, 1)
            .unwrap_err()
            .to_string();
    assert!(err.contains(&cluster.addr), "{err}");
}

/// SCRAM (which librdkafka computes with OpenSSL) against tansu's own `--authentication`:
/// the exchange runs and the broker refuses the unknown user.
#[test]
fn scram_is_refused_by_a_broker_that_knows_no_user() {
    let broker = Broker::start_authenticated();
    for mechanism in ["SCRAM-SHA-256", "SCRAM-SHA-512"] {
        let connection = sasl(&broker.addr, "sasl_plaintext", mechanism, PASSWORD);
        let err = KafkaItemSource::connect_with(&connection, "items", "g", 0, 1).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains(&broker.addr), "{shown}");
        assert!(shown.contains("SASL"), "{shown}");
        assert!(shown.to_lowercase().contains("authentication"), "{shown}");
        assert!(!shown.contains(PASSWORD), "{shown}");
    }
}

/// The connection's properties reach librdkafka: a property it does not know is refused when
/// the client is created, naming the property.
#[test]
fn properties_reach_librdkafka() {
    let connection = KafkaConnection::new("127.0.0.1:1")
        .with_properties([("no.such.property".to_string(), "1".to_string())]);
    let err = KafkaItemSource::connect_with(&connection, "items", "g", 0, 1).unwrap_err();
    assert!(err.to_string().contains("no.such.property"), "{err}");
    let shown = format!("{:?}", sasl("b:1", "sasl_ssl", "PLAIN", PASSWORD));
    assert!(shown.contains("sasl.password"), "{shown}");
    assert!(!shown.contains(PASSWORD), "{shown}");
}
