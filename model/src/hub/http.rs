//! The Hub's HTTP API, as `huggingface_hub` uses it:
//!
//! - `GET {endpoint}/api/models/{repo}/revision/{revision}` → `{"sha": commit, "siblings":
//!   [{"rfilename": …}]}`;
//! - `GET {endpoint}/{repo}/resolve/{commit}/{file}` → the file, with `X-Repo-Commit`, `ETag`
//!   (the git blob id), and for LFS files `X-Linked-Etag` (their sha256) and `X-Linked-Size`,
//!   often on a redirect to a CDN (followed without the token when it leaves the endpoint);
//! - errors carry `X-Error-Code` (`RepoNotFound`, `RevisionNotFound`, `EntryNotFound`,
//!   `GatedRepo`) and `X-Error-Message`.
//!
//! Files are downloaded by the resolved commit, streamed into `blobs/<etag>.<pid>.incomplete`
//! through sha256, and renamed into place only when the size and (LFS files) the sha256 match
//! what the Hub announced.

use std::io::{Read, Write};
use std::time::Duration;

use reqwest::blocking::{Client, Response};
use reqwest::header::{HeaderMap, LOCATION};
use reqwest::Url;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::{HubError, HubModel, HubSettings, RepoCache};

/// Redirects followed at most (the Hub: a renamed repository, then the CDN).
const MAX_REDIRECTS: usize = 10;

/// A revision's commit and the repository's files there.
#[derive(Debug, Clone)]
pub(crate) struct RevisionInfo {
    pub commit: String,
    pub siblings: Vec<String>,
}

#[derive(Deserialize)]
struct ApiRevision {
    sha: String,
    #[serde(default)]
    siblings: Vec<ApiSibling>,
}

#[derive(Deserialize)]
struct ApiSibling {
    rfilename: String,
}

/// The Hub's headers about a file, from the endpoint's own responses (not the CDN's).
#[derive(Debug, Default)]
struct FileMeta {
    commit: Option<String>,
    etag: Option<String>,
    linked_etag: Option<String>,
    linked_size: Option<u64>,
}

impl FileMeta {
    fn absorb(&mut self, headers: &HeaderMap) {
        let get = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(|v| v.trim().to_string())
        };
        self.commit = self.commit.take().or_else(|| get("x-repo-commit"));
        self.etag = self.etag.take().or_else(|| get("etag"));
        self.linked_etag = self.linked_etag.take().or_else(|| get("x-linked-etag"));
        self.linked_size = self
            .linked_size
            .or_else(|| get("x-linked-size").and_then(|s| s.parse().ok()));
    }
}

/// `"abc"`, `W/"abc"` → `abc`.
fn clean_etag(etag: &str) -> String {
    etag.trim()
        .trim_start_matches("W/")
        .trim_matches('"')
        .to_string()
}

/// Percent-encode one URL path segment (everything but RFC 3986's unreserved characters).
fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A file's path in a repository as URL path segments.
fn encode_path(file: &str) -> String {
    file.split('/')
        .map(encode_segment)
        .collect::<Vec<_>>()
        .join("/")
}

/// The Hub client: the endpoint, the token (sent to the endpoint only), no automatic
/// redirects.
pub(crate) struct HubClient {
    client: Client,
    endpoint: Url,
    base: String,
    token: Option<String>,
}

impl HubClient {
    pub fn new(settings: &HubSettings) -> Result<HubClient, HubError> {
        let endpoint = Url::parse(&settings.endpoint).map_err(|e| HubError::Protocol {
            url: settings.endpoint.clone(),
            message: format!("HF_ENDPOINT is not a URL: {e}"),
        })?;
        let mut builder = Client::builder();
        // A Hub on this machine (a mirror, a test) is never reached through a proxy.
        let loopback = endpoint.host_str().is_some_and(|h| {
            h == "localhost"
                || h.trim_matches(['[', ']'])
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        });
        if loopback {
            builder = builder.no_proxy();
        }
        let client = builder
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(30))
            // Per read of a body (reqwest's blocking client): a stalled download, not a long
            // one, times out.
            .timeout(Duration::from_secs(120))
            .user_agent(concat!("choice2seq/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| HubError::Protocol {
                url: settings.endpoint.clone(),
                message: format!("cannot build an HTTP client: {e}"),
            })?;
        Ok(HubClient {
            client,
            endpoint,
            base: settings.endpoint.trim_end_matches('/').to_string(),
            token: settings.token.clone(),
        })
    }

    fn same_origin(&self, url: &Url) -> bool {
        url.scheme() == self.endpoint.scheme()
            && url.host_str() == self.endpoint.host_str()
            && url.port_or_known_default() == self.endpoint.port_or_known_default()
    }

    /// `GET url`, following redirects; the token goes to the endpoint only, and the Hub's
    /// headers are read from the endpoint's responses only.
    fn get(&self, start: &str) -> Result<(Response, FileMeta), HubError> {
        let mut url = Url::parse(start).map_err(|e| HubError::Protocol {
            url: start.to_string(),
            message: e.to_string(),
        })?;
        let mut meta = FileMeta::default();
        for _ in 0..=MAX_REDIRECTS {
            let ours = self.same_origin(&url);
            let mut request = self.client.get(url.clone());
            if let (true, Some(token)) = (ours, &self.token) {
                request = request.bearer_auth(token);
            }
            let response = request.send().map_err(|e| send_error(url.as_str(), e))?;
            if ours {
                meta.absorb(response.headers());
            }
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|l| l.to_str().ok())
                .map(str::to_string);
            match location {
                Some(location) if response.status().is_redirection() => {
                    url = url.join(&location).map_err(|e| HubError::Protocol {
                        url: url.to_string(),
                        message: format!("a redirect to `{location}`: {e}"),
                    })?;
                }
                _ => return Ok((response, meta)),
            }
        }
        Err(HubError::Protocol {
            url: start.to_string(),
            message: format!("more than {MAX_REDIRECTS} redirects"),
        })
    }

    /// The commit `model.revision` is, and the repository's files there.
    pub fn revision_info(&self, model: &HubModel) -> Result<RevisionInfo, HubError> {
        let url = format!(
            "{}/api/models/{}/revision/{}",
            self.base,
            model.repo,
            encode_segment(&model.revision)
        );
        let (response, _) = self.get(&url)?;
        if !response.status().is_success() {
            return Err(self.status_error(&url, response, model, None));
        }
        let info: ApiRevision = response.json().map_err(|e| HubError::Protocol {
            url: url.clone(),
            message: format!("not a revision's JSON: {e}"),
        })?;
        let commit_ok = !info.sha.is_empty()
            && info.sha.len() <= 64
            && info.sha.bytes().all(|b| b.is_ascii_hexdigit());
        if !commit_ok {
            return Err(HubError::Protocol {
                url,
                message: format!("`{}` is not a commit id", info.sha),
            });
        }
        Ok(RevisionInfo {
            commit: info.sha.to_ascii_lowercase(),
            siblings: info.siblings.into_iter().map(|s| s.rfilename).collect(),
        })
    }

    /// Download `file` of `commit` into the cache (its blob, if new, and its snapshot link);
    /// the bytes downloaded (0 when the blob was already there).
    pub fn download(
        &self,
        model: &HubModel,
        commit: &str,
        file: &str,
        cache: &RepoCache,
    ) -> Result<u64, HubError> {
        let url = format!(
            "{}/{}/resolve/{}/{}",
            self.base,
            model.repo,
            commit,
            encode_path(file)
        );
        let (mut response, meta) = self.get(&url)?;
        if !response.status().is_success() {
            return Err(self.status_error(&url, response, model, Some(file)));
        }
        let protocol = |message: String| HubError::Protocol {
            url: url.clone(),
            message,
        };
        if let Some(c) = &meta.commit {
            if !c.eq_ignore_ascii_case(commit) {
                return Err(protocol(format!(
                    "X-Repo-Commit is {c}, not the resolved commit {commit}"
                )));
            }
        }
        let (etag, lfs) = match (&meta.linked_etag, &meta.etag) {
            (Some(e), _) => (clean_etag(e), true),
            (None, Some(e)) => (clean_etag(e), false),
            (None, None) => return Err(protocol("no ETag or X-Linked-Etag header".into())),
        };
        let etag_ok = !etag.is_empty()
            && etag.len() <= 128
            && etag
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !etag_ok {
            return Err(protocol(format!(
                "`{etag}` is not an ETag the cache can hold"
            )));
        }
        if lfs && !(etag.len() == 64 && etag.bytes().all(|b| b.is_ascii_hexdigit())) {
            return Err(protocol(format!("X-Linked-Etag `{etag}` is not a sha256")));
        }
        let expected_size = meta.linked_size.or(response.content_length());
        let blob = cache.blob_path(&etag);
        let mut bytes = 0;
        if !blob.is_file() {
            tracing::info!("downloading {}@{commit}: {file}", model.repo);
            let dir = blob.parent().unwrap_or(cache.root());
            std::fs::create_dir_all(dir).map_err(|e| HubError::io(dir, e))?;
            let tmp = dir.join(format!("{etag}.{}.incomplete", std::process::id()));
            let streamed = stream_to(&mut response, &tmp);
            let (got, sha256) = match streamed {
                Ok(done) => done,
                Err(e) => {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(match e {
                        StreamError::Read(e) => protocol(format!("download interrupted: {e}")),
                        StreamError::Write(e) => HubError::io(&tmp, e),
                    });
                }
            };
            let discard = |e: HubError| {
                let _ = std::fs::remove_file(&tmp);
                Err(e)
            };
            if let Some(expected) = expected_size.filter(|&n| n != got) {
                return discard(HubError::Size {
                    repo: model.repo.clone(),
                    commit: commit.to_string(),
                    file: file.to_string(),
                    expected,
                    got,
                });
            }
            if lfs && !sha256.eq_ignore_ascii_case(&etag) {
                return discard(HubError::Checksum {
                    repo: model.repo.clone(),
                    commit: commit.to_string(),
                    file: file.to_string(),
                    expected: etag,
                    actual: sha256,
                });
            }
            std::fs::rename(&tmp, &blob).map_err(|e| HubError::io(&blob, e))?;
            bytes = got;
        }
        cache.link(commit, file, &etag)?;
        Ok(bytes)
    }

    /// The error an unsuccessful answer means.
    fn status_error(
        &self,
        url: &str,
        response: Response,
        model: &HubModel,
        file: Option<&str>,
    ) -> HubError {
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let code = header("x-error-code").unwrap_or_default();
        let hub_message = header("x-error-message");
        let mut body = String::new();
        let _ = response.take(4096).read_to_string(&mut body);
        let message = hub_message.unwrap_or_else(|| body.trim().to_string());
        let repo = model.repo.clone();
        let revision = model.revision.clone();
        let file_missing = |file: &str| HubError::FileNotFound {
            repo: repo.clone(),
            revision: revision.clone(),
            file: file.to_string(),
        };
        match (code.as_str(), status, file) {
            ("RepoNotFound", ..) => HubError::RepoNotFound {
                repo,
                endpoint: self.base.clone(),
                status,
            },
            ("RevisionNotFound", ..) => HubError::RevisionNotFound { repo, revision },
            ("EntryNotFound", _, Some(f)) => file_missing(f),
            ("GatedRepo", ..) | (_, 401 | 403, _) => {
                let hint = match &self.token {
                    None => "set HF_TOKEN to a token with access (for a gated model, accept its terms on the Hub first)".to_string(),
                    Some(_) => "the token in HF_TOKEN has no access to it (accept the model's terms on the Hub, or use another token)".to_string(),
                };
                let hint = if message.is_empty() {
                    hint
                } else {
                    format!("{hint}; the Hub says: {message}")
                };
                HubError::Denied { repo, status, hint }
            }
            (_, 404, Some(f)) => file_missing(f),
            (_, 404, None) if message.to_ascii_lowercase().contains("rev") => {
                HubError::RevisionNotFound { repo, revision }
            }
            (_, 404, None) => HubError::RepoNotFound {
                repo,
                endpoint: self.base.clone(),
                status,
            },
            _ => HubError::Http {
                url: url.to_string(),
                status,
                message,
            },
        }
    }
}

/// A request that got no answer: the endpoint is unreachable (connection refused, DNS, a
/// timeout), or something else went wrong.
fn send_error(url: &str, e: reqwest::Error) -> HubError {
    // The sources say what happened; reqwest's own message repeats the URL.
    let mut causes = Vec::new();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        causes.push(s.to_string());
        source = s.source();
    }
    let reason = if causes.is_empty() {
        e.to_string()
    } else {
        causes.join(": ")
    };
    if e.is_connect() || e.is_timeout() {
        HubError::Unreachable {
            url: url.to_string(),
            reason,
            cache: String::new(),
        }
    } else {
        HubError::Protocol {
            url: url.to_string(),
            message: reason,
        }
    }
}

enum StreamError {
    Read(std::io::Error),
    Write(std::io::Error),
}

/// Copy `body` into a new file `path`: the bytes copied and their sha256 (hex).
fn stream_to(body: &mut impl Read, path: &std::path::Path) -> Result<(u64, String), StreamError> {
    let mut out = std::fs::File::create(path).map_err(StreamError::Write)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = match body.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(StreamError::Read(e)),
        };
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n]).map_err(StreamError::Write)?;
        total += n as u64;
    }
    out.sync_all().map_err(StreamError::Write)?;
    Ok((total, hex::encode(hasher.finalize())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_etags_are_encoded_as_the_hub_reads_them() {
        assert_eq!(encode_segment("refs/pr/1"), "refs%2Fpr%2F1");
        assert_eq!(encode_path("q4/a b.gguf"), "q4/a%20b.gguf");
        assert_eq!(clean_etag("W/\"abc-1\""), "abc-1");
        assert_eq!(clean_etag("\"abc\""), "abc");
    }
}
