//! The run manifest `RUN/manifest.json`: what a run is (resolved config, seeds, inputs with
//! their hashes, model identity, versions) and how often it was resumed. Written atomically
//! (temporary file, sync, rename, directory sync), so a reader never sees a partial one.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::SinkError;
use crate::fsutil::write_atomic;

/// File name of the manifest inside the run directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// Version of the manifest layout.
pub const MANIFEST_FORMAT: u32 = 1;

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// SHA-256 (hex) of a file's bytes.
pub fn file_sha256(path: &Path) -> Result<String, SinkError> {
    Ok(hash_file(path)?.0)
}

fn hash_file(path: &Path) -> Result<(String, u64), SinkError> {
    let mut f = File::open(path).map_err(|e| SinkError::io(path, e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(|e| SinkError::io(path, e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        bytes += n as u64;
    }
    Ok((hex::encode(h.finalize()), bytes))
}

/// An input file of the run (an item bank, a word list, a model file…) with its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    /// What the file is for (`bank`, `wordfreq`, `model`, …).
    pub role: String,
    /// The path as given in the configuration.
    pub path: String,
    /// SHA-256 of the file's bytes (lowercase hex).
    pub sha256: String,
    /// The file's size in bytes (those hashed).
    pub bytes: u64,
}

impl SourceFile {
    /// Hashes the file at `path`.
    pub fn hash(role: impl Into<String>, path: &Path) -> Result<SourceFile, SinkError> {
        let (sha256, bytes) = hash_file(path)?;
        Ok(SourceFile {
            role: role.into(),
            path: path.display().to_string(),
            sha256,
            bytes,
        })
    }
}

/// `RUN/manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`] of the writer.
    pub format: u32,
    /// The run name.
    pub run: String,
    /// When the run was first started (ms since the Unix epoch).
    pub started_at_ms: u64,
    /// When the manifest was last written (ms since the Unix epoch).
    pub updated_at_ms: u64,
    /// The resolved configuration.
    pub config: serde_json::Value,
    /// Named seeds (bank, bootstrap, option order, …).
    #[serde(default)]
    pub seeds: BTreeMap<String, u64>,
    /// Input files with their SHA-256.
    #[serde(default)]
    pub sources: Vec<SourceFile>,
    /// Model identity (name, files and their hashes, engine settings).
    pub model: serde_json::Value,
    /// What chat templates' `strftime_now` reported (RFC 3339, local time with its offset):
    /// the run's first start, reused on resume so prompts stay identical.
    #[serde(default)]
    pub chat_template_time: Option<String>,
    /// Version of the crates that wrote the run.
    pub crate_version: String,
    /// `rustc --version` of the build, when known.
    #[serde(default)]
    pub rustc: Option<String>,
    /// Target triple of the build, when known.
    #[serde(default)]
    pub target: Option<String>,
    /// Cargo profile of the build, when known.
    #[serde(default)]
    pub profile: Option<String>,
    /// How many times the run was resumed.
    #[serde(default)]
    pub resumed: u32,
    /// When each resume started (ms since the Unix epoch).
    #[serde(default)]
    pub resumed_at_ms: Vec<u64>,
    /// How the latest process of the run ended (absent in manifests of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
}

/// Where a run stands, as its latest `choice2seq run` recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// Written when a process starts: a manifest that still says so after the process is gone
    /// belongs to a killed run (resume it).
    Running,
    /// Every item was processed and the model did its job.
    Completed,
    /// Stopped by Ctrl-C or SIGTERM after finishing the items in flight (resume to go on).
    Stopped,
    /// The run could not do its job: see `reason` and `exit_code`.
    Failed,
}

/// The status of a run: its state and what its latest process counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStatus {
    /// Where the run stands: running, completed, stopped or failed.
    pub state: RunState,
    /// The process's exit status (absent while running).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<u8>,
    /// Why the run stopped or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Model requests the engine answered (each computed request once; answers replayed from
    /// an earlier attempt or shared by identical requests are not counted).
    pub requests_answered: u64,
    /// Model requests the engine failed, counted the same way (none of them is in
    /// `requests_answered`).
    pub requests_failed: u64,
    /// Records that went to `rejects/` (bad input, engine and controller failures).
    pub rejected: u64,
    /// Units completed by this process: trajectories, coverage decisions or dialogue runs.
    pub completed: u64,
    /// The most common engine error and how many requests failed with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub most_common_error: Option<String>,
    /// Requests that failed with `most_common_error` (0 when none failed).
    #[serde(default)]
    pub most_common_error_count: u64,
    /// Outages of a remote server this process waited for (`[inference]
    /// max_outage_seconds`), in order; the last one is still on while `state` is running.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outages: Vec<c2s_records::Outage>,
    /// When the status was written (ms since the Unix epoch).
    pub at_ms: u64,
}

impl RunStatus {
    /// The status of a process that has just started.
    pub fn running() -> RunStatus {
        RunStatus {
            state: RunState::Running,
            exit_code: None,
            reason: None,
            requests_answered: 0,
            requests_failed: 0,
            rejected: 0,
            completed: 0,
            most_common_error: None,
            most_common_error_count: 0,
            outages: Vec::new(),
            at_ms: now_ms(),
        }
    }
}

impl Manifest {
    /// A manifest for a new run started now, with this build's versions.
    pub fn new(
        run: impl Into<String>,
        config: serde_json::Value,
        model: serde_json::Value,
    ) -> Manifest {
        let now = now_ms();
        Manifest {
            format: MANIFEST_FORMAT,
            run: run.into(),
            started_at_ms: now,
            updated_at_ms: now,
            config,
            seeds: BTreeMap::new(),
            sources: Vec::new(),
            model,
            chat_template_time: None,
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            rustc: option_env!("C2S_SINKS_RUSTC_VERSION").map(str::to_string),
            target: option_env!("C2S_SINKS_TARGET").map(str::to_string),
            profile: option_env!("C2S_SINKS_PROFILE").map(str::to_string),
            resumed: 0,
            resumed_at_ms: Vec::new(),
            status: None,
        }
    }

    /// Records a resume at `now_ms`.
    pub fn mark_resumed(&mut self, now_ms: u64) {
        self.resumed += 1;
        self.resumed_at_ms.push(now_ms);
        self.updated_at_ms = now_ms;
    }

    /// The manifest path of a run directory.
    pub fn path(run_dir: &Path) -> PathBuf {
        run_dir.join(MANIFEST_FILE)
    }
}

/// Writes `RUN/manifest.json` atomically (pretty JSON, trailing newline).
pub fn write_manifest(run_dir: &Path, manifest: &Manifest) -> Result<PathBuf, SinkError> {
    let path = Manifest::path(run_dir);
    let mut bytes = serde_json::to_vec_pretty(manifest).map_err(|source| SinkError::Json {
        path: path.clone(),
        source,
    })?;
    bytes.push(b'\n');
    write_atomic(&path, &bytes)?;
    Ok(path)
}

/// Reads `RUN/manifest.json`; `None` when the run has none yet.
pub fn read_manifest(run_dir: &Path) -> Result<Option<Manifest>, SinkError> {
    let path = Manifest::path(run_dir);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(SinkError::io(&path, e)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|source| SinkError::Json { path, source })
}
