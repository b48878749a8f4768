//! A throwaway Kafka-compatible broker on this machine: the tansu binary that
//! `scripts/fetch-broker.sh` installs, started on a free loopback port and killed on drop.
//! `choice2seq bench soak` feeds its run through one; the test support crate (`c2s-testkit`)
//! builds its brokers (plain, behind a TLS/SASL gateway, restartable) on [`BrokerSpec`].

use std::fs::File;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Why a broker did not start.
#[derive(Debug, thiserror::Error)]
pub enum BrokerStartError {
    /// No loopback socket could be bound to find a free port.
    #[error("no free loopback port: {0}")]
    Port(std::io::Error),
    /// The broker's log file, or the temporary directory meant to hold it, cannot be made.
    #[error("the broker's log {path}: {source}")]
    Log {
        /// The log file, or the system's temporary directory.
        path: PathBuf,
        /// Why it cannot be created or opened.
        source: std::io::Error,
    },
    /// The broker binary cannot be run.
    #[error("cannot start {bin}: {source}")]
    Spawn {
        /// The tansu binary.
        bin: PathBuf,
        /// Why the process did not start.
        source: std::io::Error,
    },
    /// The broker process exited before it listened.
    #[error("tansu exited with {status}: {log}")]
    Exited {
        /// The process's exit status.
        status: ExitStatus,
        /// The broker's log so far (empty when it cannot be read).
        log: String,
    },
    /// The broker did not accept connections within 10 s; the process was killed.
    #[error("tansu did not listen on {addr} within 10 s")]
    NotListening {
        /// The `host:port` it was to listen on.
        addr: String,
    },
}

/// A free loopback port (free when asked: another process may take it after).
pub fn free_port() -> Result<u16, BrokerStartError> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(BrokerStartError::Port)
}

/// How to start one tansu broker process.
pub struct BrokerSpec<'a> {
    /// The tansu binary.
    pub bin: &'a Path,
    /// `host:port` it listens on.
    pub addr: &'a str,
    /// `host:port` it advertises in metadata.
    pub advertised: &'a str,
    /// `--storage-engine` URL.
    pub storage: &'a str,
    /// More arguments to `tansu broker`, after the storage and listener ones.
    pub extra: &'a [&'a str],
    /// Environment variables (name, value) added to the process's (e.g. the S3 client's).
    pub env: &'a [(String, String)],
}

impl BrokerSpec<'_> {
    /// Start the broker, its output appended to `log_path`, and wait until it listens: the
    /// child, or why it did not start (it exited, or did not listen within 10 s).
    pub fn spawn(&self, log_path: &Path) -> Result<Child, BrokerStartError> {
        let log_error = |source| BrokerStartError::Log {
            path: log_path.to_path_buf(),
            source,
        };
        let log = File::options()
            .create(true)
            .append(true)
            .open(log_path)
            .map_err(log_error)?;
        let log_err = log.try_clone().map_err(log_error)?;
        let mut child = Command::new(self.bin)
            .args(["broker", "--storage-engine", self.storage])
            .args(["--listener-url", &format!("tcp://{}", self.addr)])
            .args([
                "--advertised-listener-url",
                &format!("tcp://{}", self.advertised),
            ])
            .args(self.extra)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .map_err(|source| BrokerStartError::Spawn {
                bin: self.bin.to_path_buf(),
                source,
            })?;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(BrokerStartError::Exited {
                    status,
                    log: std::fs::read_to_string(log_path).unwrap_or_default(),
                });
            }
            if TcpStream::connect(self.addr).is_ok() {
                return Ok(child);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(BrokerStartError::NotListening {
                    addr: self.addr.to_string(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A tansu broker (in-memory storage) on a free loopback port; killed on drop.
pub struct LocalBroker {
    child: Child,
    /// `127.0.0.1:PORT`, what clients connect to.
    pub addr: String,
    _dir: tempfile::TempDir,
}

impl LocalBroker {
    /// Start the tansu binary `bin` with `extra` arguments, advertising `advertised` (a
    /// gateway in front of it) or its own address. A port taken between choosing and
    /// listening is tried again with another, up to five times.
    pub fn start(
        bin: &Path,
        extra: &[&str],
        advertised: Option<&str>,
    ) -> Result<LocalBroker, BrokerStartError> {
        let mut attempt = 1;
        loop {
            let addr = format!("127.0.0.1:{}", free_port()?);
            let dir = tempfile::tempdir().map_err(|source| BrokerStartError::Log {
                path: std::env::temp_dir(),
                source,
            })?;
            let spec = BrokerSpec {
                bin,
                addr: &addr,
                advertised: advertised.unwrap_or(&addr),
                storage: "memory://tansu/",
                extra,
                env: &[],
            };
            match spec.spawn(&dir.path().join("tansu.log")) {
                Ok(child) => {
                    return Ok(LocalBroker {
                        child,
                        addr,
                        _dir: dir,
                    })
                }
                Err(e) if attempt == 5 => return Err(e),
                Err(_) => attempt += 1,
            }
        }
    }
}

impl Drop for LocalBroker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
