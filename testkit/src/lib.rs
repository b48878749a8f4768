//! Test support, a dev-dependency of the crates whose tests need a real Kafka-compatible
//! broker: tansu (in-memory storage) on a free loopback port, started from the binary that
//! `scripts/fetch-broker.sh` installs; the same broker behind a SASL/PLAIN and TLS
//! [`gateway`]; one that can be killed and started again with its log intact ([`restart`]);
//! a test CA; and [`read_topic`], every message of a topic. Nothing here ships in the
//! `choice2seq` binary.

#![deny(missing_docs)]
// Test support: a failed unwrap fails the test that called it (the workspace denies
// unwrap and expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod gateway;
pub mod restart;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use c2s_sources::local_broker::LocalBroker;
use c2s_sources::{KafkaConnection, KAFKA_TIMEOUT};

/// The tansu binary fetched by `scripts/fetch-broker.sh`.
pub fn tansu_bin() -> PathBuf {
    let bin = std::path::PathBuf::from(
        // Cargo's runtime value first: a target directory shared with a checkout at another
        // path may hold this build with that path compiled in.
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../.tools/tansu/tansu");
    assert!(
        bin.is_file(),
        "tansu broker binary not found at {}; run scripts/fetch-broker.sh first",
        bin.display()
    );
    bin
}

/// A tansu broker (in-memory storage) on a free loopback port; killed on drop. What the
/// product's own [`LocalBroker`] is, with the constructors tests use (a failure to start
/// fails the test).
pub struct Broker(LocalBroker);

impl std::ops::Deref for Broker {
    type Target = LocalBroker;

    fn deref(&self) -> &LocalBroker {
        &self.0
    }
}

impl Broker {
    /// A plain broker from [`tansu_bin`].
    pub fn start() -> Broker {
        Broker::start_with(&tansu_bin())
    }

    /// A broker that requires SASL authentication (`--authentication`). Tansu 0.6.0's
    /// in-memory storage keeps no SCRAM credentials and it offers no PLAIN, so it refuses
    /// every client: a broker to test refusals with.
    pub fn start_authenticated() -> Broker {
        Broker::spawn(&tansu_bin(), &["--authentication"], None)
    }

    /// A broker that advertises `advertised` (`host:port`, a gateway in front of it) as its
    /// address in metadata.
    pub fn start_advertising(advertised: &str) -> Broker {
        Broker::spawn(&tansu_bin(), &[], Some(advertised))
    }

    /// A broker from the tansu binary at `bin`.
    pub fn start_with(bin: &Path) -> Broker {
        Broker::spawn(bin, &[], None)
    }

    fn spawn(bin: &Path, extra: &[&str], advertised: Option<&str>) -> Broker {
        match LocalBroker::start(bin, extra, advertised) {
            Ok(broker) => Broker(broker),
            Err(e) => panic!("cannot start a tansu broker: {e}"),
        }
    }
}

/// A broker behind a [`gateway::Gateway`] that requires what `policy` says: clients connect
/// to `addr` (the gateway, which the broker advertises).
pub struct SecuredBroker {
    /// The gateway's `127.0.0.1:PORT`, what clients connect to.
    pub addr: String,
    /// The gateway, which counts the authentications it refused.
    pub gateway: gateway::Gateway,
    _broker: Broker,
}

impl SecuredBroker {
    /// A broker and its gateway on a free loopback port.
    pub fn start(policy: gateway::GatewayPolicy) -> SecuredBroker {
        let listener = TcpListener::bind("127.0.0.1:0").expect("gateway port");
        let addr = listener.local_addr().expect("gateway address").to_string();
        let broker = Broker::start_advertising(&addr);
        let gateway = gateway::Gateway::start(listener, broker.addr.clone(), policy);
        SecuredBroker {
            addr,
            gateway,
            _broker: broker,
        }
    }
}

/// A test certificate authority and a broker certificate it signed for 127.0.0.1 and
/// localhost, made with the `openssl` command (scripts/build-deps.sh installs it).
pub struct TestCa {
    dir: tempfile::TempDir,
}

impl TestCa {
    /// A new CA and broker certificate (valid for 2 days) in a temporary directory.
    pub fn create() -> TestCa {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(dir.path())
                .output()
                .expect("the openssl command (scripts/build-deps.sh installs it)");
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let subject_alt = "subjectAltName=IP:127.0.0.1,DNS:localhost";
        std::fs::write(dir.path().join("ext.cnf"), format!("{subject_alt}\n")).expect("ext");
        run(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=c2s test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
        ]);
        run(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            "broker.key",
            "-out",
            "broker.csr",
        ]);
        run(&[
            "x509",
            "-req",
            "-in",
            "broker.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
            "-out",
            "broker.pem",
        ]);
        TestCa { dir }
    }

    /// The CA certificate (PEM): what `ssl_ca_location` names.
    pub fn ca_pem(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// The broker's TLS server configuration.
    pub fn server_config(&self) -> std::sync::Arc<rustls::ServerConfig> {
        gateway::tls_server_config(
            &self.dir.path().join("broker.pem"),
            &self.dir.path().join("broker.key"),
        )
    }
}

/// Every message of `topic` from its beginning, as (key, value): reads all partitions until
/// `expected` messages arrived or nothing new came for `idle`.
pub fn read_topic(
    brokers: &str,
    topic: &str,
    expected: usize,
    idle: Duration,
) -> Vec<(Option<String>, Vec<u8>)> {
    read_topic_with(&KafkaConnection::new(brokers), topic, expected, idle)
}

/// [`read_topic`] through `connection` (a cluster with security settings).
pub fn read_topic_with(
    connection: &KafkaConnection,
    topic: &str,
    expected: usize,
    idle: Duration,
) -> Vec<(Option<String>, Vec<u8>)> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::message::Message;
    use rdkafka::{Offset, TopicPartitionList};
    let consumer: BaseConsumer = connection
        .client_config(
            &[],
            &[
                ("group.id", "c2s-test-reader".into()),
                ("enable.auto.commit", "false".into()),
            ],
        )
        .create()
        .expect("a Kafka consumer");
    let metadata = consumer
        .fetch_metadata(Some(topic), KAFKA_TIMEOUT)
        .expect("topic metadata");
    let mut tpl = TopicPartitionList::new();
    for t in metadata.topics() {
        for p in t.partitions() {
            tpl.add_partition_offset(topic, p.id(), Offset::Beginning)
                .expect("partition offset");
        }
    }
    consumer.assign(&tpl).expect("assign partitions");
    let mut out = Vec::new();
    let mut last = Instant::now();
    while out.len() < expected && last.elapsed() < idle {
        match consumer.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                out.push((
                    m.key().map(|k| String::from_utf8_lossy(k).to_string()),
                    m.payload().unwrap_or_default().to_vec(),
                ));
                last = Instant::now();
            }
            Some(Err(e)) => panic!("reading `{topic}`: {e}"),
            None => {}
        }
    }
    out
}
