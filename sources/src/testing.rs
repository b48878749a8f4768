//! Test support: a real Kafka-compatible broker (tansu, in-memory storage) on a free loopback
//! port, started from the binary that `scripts/fetch-broker.sh` installs. Used by this crate's
//! tests and by the end-to-end tests.

use std::fs::File;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// A tansu broker (in-memory storage) on a free loopback port; killed on drop.
pub struct Broker {
    child: Child,
    pub addr: String,
    _dir: tempfile::TempDir,
}

impl Broker {
    pub fn start() -> Broker {
        Broker::start_with(&tansu_bin())
    }

    /// A broker from the tansu binary at `bin`.
    pub fn start_with(bin: &std::path::Path) -> Broker {
        let mut last = String::new();
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("no free loopback port")
                .port();
            let addr = format!("127.0.0.1:{port}");
            let url = format!("tcp://{addr}");
            let dir = tempfile::tempdir().expect("temp dir");
            let log_path = dir.path().join("tansu.log");
            let log = File::create(&log_path).expect("broker log file");
            let log_err = log.try_clone().expect("broker log file");
            let mut child = Command::new(bin)
                .args(["broker", "--storage-engine", "memory://tansu/"])
                .args(["--listener-url", &url, "--advertised-listener-url", &url])
                .stdin(Stdio::null())
                .stdout(log)
                .stderr(log_err)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if let Ok(Some(status)) = child.try_wait() {
                    last = format!(
                        "tansu exited with {status}: {}",
                        std::fs::read_to_string(&log_path).unwrap_or_default()
                    );
                    break;
                }
                if TcpStream::connect(&addr).is_ok() {
                    return Broker {
                        child,
                        addr,
                        _dir: dir,
                    };
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    last = format!("tansu did not listen on {addr} within 10 s");
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        panic!("cannot start a tansu broker: {last}");
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
    use rdkafka::config::ClientConfig;
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::message::Message;
    use rdkafka::{Offset, TopicPartitionList};
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("group.id", "c2s-test-reader")
        .set("enable.auto.commit", "false")
        .create()
        .expect("a Kafka consumer");
    let metadata = consumer
        .fetch_metadata(Some(topic), crate::KAFKA_TIMEOUT)
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
