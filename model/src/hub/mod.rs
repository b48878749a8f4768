//! Models by Hugging Face Hub id: resolve a repository's revision to its commit, download the
//! files a loader needs into the standard Hugging Face cache, and hand back the snapshot
//! directory (or GGUF file) that the existing loaders read.
//!
//! The cache is the one `huggingface_hub` (Python) and `hf-hub` (Rust) share:
//! `$HF_HUB_CACHE` (default `$HF_HOME/hub`, `HF_HOME` defaulting to `~/.cache/huggingface`)
//! `/models--OWNER--NAME/{blobs/<etag>, snapshots/<commit>/<file> → ../../blobs/<etag>,
//! refs/<revision>}`, so a model one tool downloaded is found by the others.
//!
//! Why not the `hf-hub` crate (0.4.3, already in the build through mistral.rs): its blocking
//! client downloads by revision rather than by the resolved commit (a branch that moves
//! between two files would mix commits), verifies no checksum, has no offline mode, finds
//! cached files only through `refs/<revision>` (not a commit revision), needs a `Range`
//! answer with `Content-Range` for metadata, and panics (`assert!`, `unwrap`) on some I/O
//! outcomes. What it would give — the cache layout and two HTTP requests — is the small part;
//! this module writes that part with reqwest (blocking, already built for the openai engine).
//!
//! | piece | file |
//! |---|---|
//! | settings (`HF_*` variables), the model named, the result, errors, [`resolve`] | here |
//! | the cache layout, which files a snapshot needs, offline resolution | `cache.rs` |
//! | the Hub's HTTP API: revision info, file downloads, sha256 verification | `http.rs` |

mod cache;
mod http;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::engine::HubIdentity;

pub use cache::RepoCache;

/// The public Hub.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// Where and how to reach the Hub (read from the environment at the edge, passed explicitly
/// everywhere else).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubSettings {
    /// API root, e.g. `https://huggingface.co` (`HF_ENDPOINT`).
    pub endpoint: String,
    /// The hub cache directory, holding `models--OWNER--NAME` (`HF_HUB_CACHE`, or
    /// `$HF_HOME/hub`).
    pub cache_dir: PathBuf,
    /// Sent as `Authorization: Bearer …` to the endpoint (`HF_TOKEN`, or the token file
    /// `huggingface-cli login` writes). Never written anywhere.
    pub token: Option<String>,
    /// Read the cache only (`HF_HUB_OFFLINE=1`).
    pub offline: bool,
}

impl HubSettings {
    /// The settings from this process's environment.
    pub fn from_env() -> HubSettings {
        HubSettings::from_lookup(&|name| std::env::var_os(name))
    }

    /// The settings from `env`: `HF_ENDPOINT`, `HF_HUB_CACHE`, `HF_HOME` (default
    /// `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`), `HF_TOKEN` (else the file
    /// `HF_TOKEN_PATH`, default `$HF_HOME/token`), `HF_HUB_OFFLINE` (`1`, `true`, `yes`, `on`).
    pub fn from_lookup(env: &dyn Fn(&str) -> Option<OsString>) -> HubSettings {
        let var = |name: &str| env(name).filter(|v| !v.is_empty());
        let endpoint = var("HF_ENDPOINT")
            .map(|v| v.to_string_lossy().trim_end_matches('/').to_string())
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
        let hf_home = var("HF_HOME").map(PathBuf::from).unwrap_or_else(|| {
            var("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .unwrap_or_else(|| PathBuf::from(".cache"))
                .join("huggingface")
        });
        let cache_dir = var("HF_HUB_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|| hf_home.join("hub"));
        let token = var("HF_TOKEN")
            .map(|t| t.to_string_lossy().trim().to_string())
            .or_else(|| {
                let file = var("HF_TOKEN_PATH")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| hf_home.join("token"));
                std::fs::read_to_string(file)
                    .ok()
                    .map(|t| t.trim().to_string())
            })
            .filter(|t| !t.is_empty());
        let offline = var("HF_HUB_OFFLINE").is_some_and(|v| {
            matches!(
                v.to_string_lossy().trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        });
        HubSettings {
            endpoint,
            cache_dir,
            token,
            offline,
        }
    }
}

/// A model on the Hub: a safetensors repository, or one GGUF file of a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubModel {
    /// `OWNER/NAME`.
    pub repo: String,
    /// Branch, tag or commit.
    pub revision: String,
    /// One file of the repository (a GGUF); `None`: the repository's safetensors directory.
    pub file: Option<String>,
}

impl std::fmt::Display for HubModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}", self.repo, self.revision)?;
        if let Some(file) = &self.file {
            write!(f, " (file {file})")?;
        }
        Ok(())
    }
}

/// A resolved model: where its files are and which commit they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubSnapshot {
    /// The snapshot directory, or the GGUF file inside it: what a loader reads.
    pub path: PathBuf,
    /// The model as named.
    pub model: HubModel,
    /// The commit the revision resolved to.
    pub commit: String,
    /// Files downloaded by this call (empty: all were cached).
    pub downloaded: Vec<String>,
    /// Bytes downloaded by this call.
    pub downloaded_bytes: u64,
    /// Why the Hub was not asked (offline mode, or the endpoint could not be reached); `None`
    /// when it was.
    pub cache_only: Option<String>,
}

impl HubSnapshot {
    /// What the run's manifest records.
    pub fn identity(&self) -> HubIdentity {
        HubIdentity {
            repo: self.model.repo.clone(),
            revision: self.model.revision.clone(),
            commit: self.commit.clone(),
            file: self.model.file.clone(),
        }
    }

    /// A short name: the GGUF file's stem, or the repository's name.
    pub fn name(&self) -> String {
        match &self.model.file {
            Some(f) => Path::new(f)
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_else(|| f.clone()),
            None => self
                .model
                .repo
                .rsplit('/')
                .next()
                .unwrap_or(&self.model.repo)
                .to_string(),
        }
    }
}

/// Everything that can go wrong resolving a Hub model. Each names the repository and, where
/// it has one, the revision and file.
#[derive(Debug, Error)]
pub enum HubError {
    /// The configured repository id is not `OWNER/NAME` with letters, digits, `-`, `_` and
    /// `.` (checked before any request or cache path is built from it).
    #[error("`{0}` is not a Hub repository id OWNER/NAME")]
    BadRepoId(String),
    /// The Hub refused access (HTTP 401 or 403, or a gated-repository answer).
    #[error("{repo}: access denied (HTTP {status}): the repository is gated or private; {hint}")]
    Denied {
        /// `OWNER/NAME`.
        repo: String,
        /// The HTTP status of the refusal.
        status: u16,
        /// What to do about it (set or change `HF_TOKEN`), followed by the Hub's own message
        /// when it sent one.
        hint: String,
    },
    /// The endpoint has no such repository (or hides a private one behind a 404).
    #[error("{repo}: no such repository on {endpoint} (HTTP {status})")]
    RepoNotFound {
        /// `OWNER/NAME`.
        repo: String,
        /// The API root asked (`HF_ENDPOINT`).
        endpoint: String,
        /// The HTTP status of the answer.
        status: u16,
    },
    /// The repository has no branch, tag or commit of that name.
    #[error("{repo}: no revision `{revision}` (a branch, tag or commit of the repository)")]
    RevisionNotFound {
        /// `OWNER/NAME`.
        repo: String,
        /// The revision as configured.
        revision: String,
    },
    /// A file the model needs (the named GGUF, or a shard the weight index lists) is not in
    /// the repository at that revision.
    #[error("{repo}@{revision}: no file `{file}` in the repository")]
    FileNotFound {
        /// `OWNER/NAME`.
        repo: String,
        /// The revision as configured.
        revision: String,
        /// The missing file's path inside the repository.
        file: String,
    },
    /// A repository loaded as a safetensors directory lacks a required file or has an
    /// unreadable weight index.
    #[error("{repo}@{revision} is not a Hugging Face safetensors checkpoint: {problem} (for a GGUF file of the repository, name it with hf_file)")]
    NotACheckpoint {
        /// `OWNER/NAME`.
        repo: String,
        /// The revision as configured.
        revision: String,
        /// What is missing or malformed.
        problem: String,
    },
    /// The Hub was not asked and the cache cannot serve the revision.
    #[error("{repo}@{revision} is not in the Hugging Face cache {cache} ({problem}) and {why}")]
    NotCached {
        /// `OWNER/NAME`.
        repo: String,
        /// The revision as configured.
        revision: String,
        /// The repository's cache directory (`models--OWNER--NAME`).
        cache: PathBuf,
        /// What the cache lacks (the ref, the snapshot, a file).
        problem: String,
        /// Why the Hub was not asked (offline mode, an unreachable endpoint).
        why: String,
    },
    /// A downloaded LFS file's sha256 is not the one the Hub announced; the download is
    /// deleted, never cached.
    #[error("{repo}@{commit}: {file}: sha256 {actual} differs from the Hub's {expected}; the download was discarded")]
    Checksum {
        /// `OWNER/NAME`.
        repo: String,
        /// The resolved commit.
        commit: String,
        /// The file's path inside the repository.
        file: String,
        /// The sha256 the Hub announced (its `X-Linked-Etag`), lowercase hex.
        expected: String,
        /// The sha256 of the bytes received, lowercase hex.
        actual: String,
    },
    /// A download's length is not the one the Hub announced; the download is deleted.
    #[error("{repo}@{commit}: {file}: {got} bytes where the Hub announced {expected}; the download was discarded")]
    Size {
        /// `OWNER/NAME`.
        repo: String,
        /// The resolved commit.
        commit: String,
        /// The file's path inside the repository.
        file: String,
        /// Bytes announced (`X-Linked-Size`, else `Content-Length`).
        expected: u64,
        /// Bytes received.
        got: u64,
    },
    /// Any other unsuccessful HTTP answer.
    #[error("{url}: HTTP {status}: {message}")]
    Http {
        /// The URL asked.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The Hub's error message, or the answer's body.
        message: String,
    },
    /// An answer the client cannot use (bad JSON, a missing or malformed header, too many
    /// redirects, an interrupted download), or a bad `HF_ENDPOINT`.
    #[error("{url}: {message}")]
    Protocol {
        /// The URL asked (or the endpoint configured).
        url: String,
        /// What was wrong.
        message: String,
    },
    /// The endpoint could not be reached (connection refused, DNS, timeout) and the cache
    /// could not stand in for it.
    #[error("cannot reach {url} ({reason}), and the cache cannot stand in: {cache}")]
    Unreachable {
        /// The URL asked.
        url: String,
        /// The transport's error chain.
        reason: String,
        /// Why the cache could not serve the model (empty until [`resolve`] tried it).
        cache: String,
    },
    /// Reading or writing the cache failed.
    #[error("{path}: {source}")]
    Io {
        /// The cache file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl HubError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> HubError {
        HubError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A repository id the cache and URLs can hold: `OWNER/NAME`, each letters, digits, `-`, `_`,
/// `.` (neither `.` nor `..`).
fn check_repo_id(repo: &str) -> Result<(), HubError> {
    let ok = |s: &str| {
        !s.is_empty()
            && s != "."
            && s != ".."
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    match repo.split_once('/') {
        Some((owner, name)) if ok(owner) && ok(name) => Ok(()),
        _ => Err(HubError::BadRepoId(repo.to_string())),
    }
}

/// Resolve `model`: online, ask the Hub which commit the revision is, download what the
/// snapshot lacks (verifying sha256 of LFS files) and record `refs/<revision>`; offline, or
/// when the endpoint cannot be reached, use the cached snapshot of the revision.
pub fn resolve(model: &HubModel, settings: &HubSettings) -> Result<HubSnapshot, HubError> {
    check_repo_id(&model.repo)?;
    let cache = RepoCache::new(&settings.cache_dir, &model.repo);
    if settings.offline {
        return cache.resolve_offline(model, "HF_HUB_OFFLINE is set");
    }
    let client = http::HubClient::new(settings)?;
    let info = match client.revision_info(model) {
        Ok(info) => info,
        Err(HubError::Unreachable { url, reason, .. }) => {
            let why = format!("{url} cannot be reached ({reason})");
            return match cache.resolve_offline(model, &why) {
                Ok(snapshot) => {
                    tracing::warn!("{why}: using the cached snapshot {}", snapshot.commit);
                    Ok(snapshot)
                }
                Err(e) => Err(HubError::Unreachable {
                    url,
                    reason,
                    cache: match e {
                        HubError::NotCached { cache, problem, .. } => {
                            format!("{}: {problem}", cache.display())
                        }
                        other => other.to_string(),
                    },
                }),
            };
        }
        Err(e) => return Err(e),
    };
    let mut snapshot = HubSnapshot {
        path: cache.snapshot_dir(&info.commit),
        model: model.clone(),
        commit: info.commit.clone(),
        downloaded: Vec::new(),
        downloaded_bytes: 0,
        cache_only: None,
    };
    let fetch = |file: &str, snapshot: &mut HubSnapshot| -> Result<(), HubError> {
        if cache.has_file(&info.commit, file) {
            return Ok(());
        }
        let bytes = client.download(model, &info.commit, file, &cache)?;
        snapshot.downloaded.push(file.to_string());
        snapshot.downloaded_bytes += bytes;
        Ok(())
    };
    match &model.file {
        Some(file) => {
            if !info.siblings.is_empty() && !info.siblings.iter().any(|s| s == file) {
                return Err(HubError::FileNotFound {
                    repo: model.repo.clone(),
                    revision: model.revision.clone(),
                    file: file.clone(),
                });
            }
            fetch(file, &mut snapshot)?;
            snapshot.path = cache.snapshot_dir(&info.commit).join(file);
        }
        None => {
            let plan = cache::DirectoryPlan::from_siblings(model, &info.siblings)?;
            for file in &plan.files {
                fetch(file, &mut snapshot)?;
            }
            // Sharded weights: the index names the shards.
            if let Some(index) = &plan.index {
                fetch(index, &mut snapshot)?;
                let shards = cache.index_shards(&info.commit, index, model)?;
                for shard in &shards {
                    if !info.siblings.iter().any(|s| s == shard) {
                        return Err(HubError::FileNotFound {
                            repo: model.repo.clone(),
                            revision: model.revision.clone(),
                            file: shard.clone(),
                        });
                    }
                    fetch(shard, &mut snapshot)?;
                }
            }
        }
    }
    if model.revision != info.commit {
        cache.write_ref(&model.revision, &info.commit)?;
    }
    Ok(snapshot)
}
