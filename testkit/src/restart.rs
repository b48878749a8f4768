//! A tansu broker that can be killed and started again on the same port with its log intact.
//!
//! The tansu 0.6.0 binary of `scripts/fetch-broker.sh` is built with its `dynostore` storage
//! only: `memory://` (lost with the process) and `s3://` (any S3 API). Its `sqlite://`,
//! `turso://` and `postgres://` engines answer "feature not enabled", and it has no `file://`
//! engine. So the log that must survive a broker restart lives in an S3 store of its own
//! process — moto's `moto_server` (PyPI `moto[server]`) on a loopback port — which outlives
//! every broker process started on it.

// Test support: a failed unwrap fails the test that called it (the workspace denies
// unwrap and expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use c2s_sources::local_broker::{free_port, BrokerSpec, BrokerStartError};

use super::tansu_bin;

/// The bucket the broker keeps its log in.
const BUCKET: &str = "tansu";

/// `moto_server`: on `PATH`, or in the Python environment of `scripts/fetch-pytools.sh`.
fn moto_server() -> PathBuf {
    let root = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    );
    let local = root.join("../.tools/pyenv/bin/moto_server");
    if local.is_file() {
        return local;
    }
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("moto_server"))
            .find(|p| p.is_file())
    });
    on_path.unwrap_or_else(|| {
        panic!(
            "moto_server not found on PATH nor at {}: `pip install 'moto[server]'` (the S3 store \
             a restartable tansu broker keeps its log in)",
            local.display()
        )
    })
}

/// An S3 store (moto) on a free loopback port with the broker's bucket; killed on drop.
pub struct S3Store {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    _dir: tempfile::TempDir,
}

impl S3Store {
    /// Start `moto_server` and create the broker's bucket; waits until it answers (30 s at
    /// most).
    pub fn start() -> S3Store {
        let bin = moto_server();
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port().expect("a free loopback port");
        let addr = format!("127.0.0.1:{port}");
        let log = std::fs::File::create(dir.path().join("moto.log")).expect("moto log");
        let log_err = log.try_clone().expect("moto log");
        let mut child = Command::new(&bin)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(&addr).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "moto_server exited with {status}: {}",
                    std::fs::read_to_string(dir.path().join("moto.log")).unwrap_or_default()
                );
            }
            assert!(
                Instant::now() < deadline,
                "moto_server did not listen on {addr}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let store = S3Store {
            child,
            endpoint: format!("http://{addr}"),
            _dir: dir,
        };
        // The server can listen before it answers: a failure to reach it (a connection reset,
        // seen once in CI under load) is retried until the deadline; any answer is final.
        let request = format!("PUT /{BUCKET} HTTP/1.1");
        let response = loop {
            match try_http_body(&addr, &request) {
                Ok(r) => break r,
                Err(e) if Instant::now() < deadline => {
                    eprintln!("moto_server not answering yet ({e}); retrying");
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(e) => panic!("moto_server on {addr} did not answer: {e}"),
            }
        };
        assert_eq!(
            status_of(&response),
            200,
            "creating bucket `{BUCKET}` in moto_server"
        );
        store
    }

    /// The environment that points tansu's S3 client at this store.
    fn env(&self) -> Vec<(String, String)> {
        [
            ("AWS_ENDPOINT", self.endpoint.as_str()),
            ("AWS_ALLOW_HTTP", "true"),
            ("AWS_ACCESS_KEY_ID", "test"),
            ("AWS_SECRET_ACCESS_KEY", "test"),
            ("AWS_DEFAULT_REGION", "us-east-1"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .to_vec()
    }

    /// How many objects the bucket holds (the broker's log segments, watermarks and metadata).
    pub fn objects(&self) -> usize {
        let addr = self.endpoint.trim_start_matches("http://");
        let body = http_body(addr, &format!("GET /{BUCKET}?list-type=2 HTTP/1.1"));
        body.matches("<Key>").count()
    }
}

impl Drop for S3Store {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The response to `request_line` (no body) as text.
fn http_body(addr: &str, request_line: &str) -> String {
    try_http_body(addr, request_line).expect("HTTP exchange with moto_server")
}

/// [`http_body`], an I/O failure returned.
fn try_http_body(addr: &str, request_line: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr)?;
    let request =
        format!("{request_line}\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes())?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    Ok(response)
}

/// The status code of an HTTP response.
fn status_of(response: &str) -> u16 {
    response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {response:?}"))
}

/// A tansu broker whose log lives in an [`S3Store`]: [`kill`](Self::kill) ends the process
/// (SIGKILL, no shutdown), [`start`](Self::start) starts a new one on the same address.
pub struct RestartableBroker {
    /// `127.0.0.1:PORT`, kept across restarts: what clients connect to.
    pub addr: String,
    store: S3Store,
    child: Option<Child>,
    dir: tempfile::TempDir,
}

impl RestartableBroker {
    /// A new S3 store and a broker on a free loopback port keeping its log there (five
    /// ports tried).
    pub fn start_new() -> RestartableBroker {
        let store = S3Store::start();
        let dir = tempfile::tempdir().expect("temp dir");
        let mut last = None;
        for _ in 0..5 {
            let addr = format!("127.0.0.1:{}", free_port().expect("a free loopback port"));
            match spawn_on(&addr, &store, &dir.path().join("tansu.log")) {
                Ok(child) => {
                    return RestartableBroker {
                        addr,
                        store,
                        child: Some(child),
                        dir,
                    }
                }
                Err(e) => last = Some(e),
            }
        }
        panic!("cannot start a tansu broker on S3 storage: {last:?}");
    }

    /// The broker's output, every process of it appended.
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("tansu.log")
    }

    /// The S3 store the log lives in.
    pub fn store(&self) -> &S3Store {
        &self.store
    }

    /// Kill the broker process (SIGKILL) and wait for it to exit.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start a broker again on the same address, on the same log; waits until it listens
    /// (retrying while the port is still held by the killed process's sockets).
    pub fn start(&mut self) {
        assert!(self.child.is_none(), "the broker is running");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match spawn_on(&self.addr, &self.store, &self.log_path()) {
                Ok(child) => {
                    self.child = Some(child);
                    return;
                }
                Err(e) if Instant::now() >= deadline => {
                    panic!("cannot restart the tansu broker on {}: {e}", self.addr)
                }
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }
}

impl Drop for RestartableBroker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A tansu broker on `addr` keeping its log in `store`.
fn spawn_on(addr: &str, store: &S3Store, log: &std::path::Path) -> Result<Child, BrokerStartError> {
    BrokerSpec {
        bin: &tansu_bin(),
        addr,
        advertised: addr,
        storage: &format!("s3://{BUCKET}/"),
        extra: &[],
        env: &store.env(),
    }
    .spawn(log)
}
