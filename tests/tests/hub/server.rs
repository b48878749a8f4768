//! A Hub-shaped HTTP server on 127.0.0.1 for the tests (std::net, one thread per connection,
//! `Connection: close`): `GET /api/models/{repo}/revision/{rev}` and
//! `GET /{repo}/resolve/{rev}/{file}` with the Hub's headers (`X-Repo-Commit`, `ETag`, and for
//! LFS files `X-Linked-Etag` = sha256 and `X-Linked-Size`, on a redirect to `/cdn/{repo}/{sha256}` as
//! the Hub redirects to its CDN) and its errors (`X-Error-Code`: `RepoNotFound`,
//! `RevisionNotFound`, `EntryNotFound`, `GatedRepo`).

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use sha2::{Digest, Sha256};

/// One repository with one commit.
#[derive(Debug, Clone, Default)]
pub struct FakeRepo {
    pub id: String,
    pub commit: String,
    /// Branches and tags that name the commit (the commit itself always does).
    pub revisions: Vec<String>,
    pub files: BTreeMap<String, Vec<u8>>,
    /// Files the listing names but `resolve` answers 404 "Entry not found" for.
    pub vanished: Vec<String>,
    /// Files served with one byte changed (their headers announce the true sha256).
    pub corrupted: Vec<String>,
    /// Gated: only `Authorization: Bearer <token>` gets in.
    pub token: Option<String>,
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// LFS files (weights) get `X-Linked-Etag`; others a git-blob-like ETag.
fn is_lfs(file: &str) -> bool {
    file.ends_with(".safetensors") || file.ends_with(".gguf")
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn error(status: u16, code: &str, body: &str) -> Answer {
        Answer {
            status,
            headers: vec![("X-Error-Code".into(), code.into())],
            body: body.as_bytes().to_vec(),
        }
    }
}

/// The running server; stopped (its port closed) on [`FakeHub::stop`] or drop.
pub struct FakeHub {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// Request lines seen, with whether an Authorization header came along.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl FakeHub {
    pub fn start(repos: Vec<FakeRepo>) -> FakeHub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding the fake hub");
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Vec::new()));
        let repos = Arc::new(repos);
        let thread = {
            let stop = stop.clone();
            let log = log.clone();
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let repos = repos.clone();
                    let log = log.clone();
                    std::thread::spawn(move || {
                        let _ = serve(stream, &repos, &log);
                    });
                }
            })
        };
        FakeHub {
            port,
            stop,
            thread: Some(thread),
            log,
        }
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Stop accepting and close the port.
    pub fn stop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.stop.store(true, Ordering::SeqCst);
            let _ = TcpStream::connect(("127.0.0.1", self.port));
            let _ = t.join();
        }
    }

    /// Requests whose line contains `part`.
    pub fn requests(&self, part: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(part))
            .count()
    }
}

impl Drop for FakeHub {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve(stream: TcpStream, repos: &[FakeRepo], log: &Mutex<Vec<String>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut authorization = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.trim().eq_ignore_ascii_case("authorization") {
                authorization = Some(v.trim().to_string());
            }
        }
    }
    let target = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    log.lock().unwrap().push(format!(
        "GET {target}{}",
        if authorization.is_some() {
            " +auth"
        } else {
            ""
        }
    ));
    let answer = route(&target, authorization.as_deref(), repos);
    let mut out = stream;
    write!(out, "HTTP/1.1 {} X\r\n", answer.status)?;
    for (k, v) in &answer.headers {
        write!(out, "{k}: {v}\r\n")?;
    }
    write!(
        out,
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        answer.body.len()
    )?;
    out.write_all(&answer.body)?;
    out.flush()
}

fn route(target: &str, authorization: Option<&str>, repos: &[FakeRepo]) -> Answer {
    if let Some(object) = target.strip_prefix("/cdn/") {
        // The CDN: `/cdn/{repo}/{sha256}`, the bytes of the repo's file with that sha256
        // (corrupted where the repo says so), with its own ETag, which the client must not
        // take for the Hub's.
        let (repo, sha) = object.rsplit_once('/').unwrap_or_default();
        for r in repos.iter().filter(|r| r.id == repo) {
            for (name, bytes) in &r.files {
                if sha256_hex(bytes) == sha {
                    let mut body = bytes.clone();
                    if r.corrupted.contains(name) {
                        if let Some(b) = body.last_mut() {
                            *b ^= 0xff;
                        }
                    }
                    return Answer {
                        status: 200,
                        headers: vec![("ETag".into(), "\"cdn-etag\"".into())],
                        body,
                    };
                }
            }
        }
        return Answer::error(404, "", "no such object");
    }
    let (repo_id, rest, api) = if let Some(p) = target.strip_prefix("/api/models/") {
        match p.split_once("/revision/") {
            Some((repo, rev)) => (repo.to_string(), rev.to_string(), true),
            None => return Answer::error(404, "", "not found"),
        }
    } else {
        let parts: Vec<&str> = target.trim_start_matches('/').splitn(4, '/').collect();
        if parts.len() < 4 || parts[2] != "resolve" {
            return Answer::error(404, "", "not found");
        }
        (
            format!("{}/{}", parts[0], parts[1]),
            parts[3].to_string(),
            false,
        )
    };
    let Some(repo) = repos.iter().find(|r| r.id == repo_id) else {
        return Answer::error(401, "RepoNotFound", "Repository not found");
    };
    if let Some(token) = &repo.token {
        if authorization != Some(&format!("Bearer {token}")) {
            let mut a = Answer::error(401, "GatedRepo", "gated");
            a.headers.push((
                "X-Error-Message".into(),
                format!("Access to model {} is restricted.", repo.id),
            ));
            return a;
        }
    }
    let (rev, file) = if api {
        (decode(&rest), String::new())
    } else {
        match rest.split_once('/') {
            Some((rev, file)) => (decode(rev), decode(file)),
            None => return Answer::error(404, "", "not found"),
        }
    };
    if rev != repo.commit && !repo.revisions.contains(&rev) {
        return Answer::error(
            404,
            "RevisionNotFound",
            &format!("{{\"error\":\"Invalid rev id: {rev}\"}}"),
        );
    }
    let commit = ("X-Repo-Commit".to_string(), repo.commit.clone());
    if api {
        let siblings: Vec<serde_json::Value> = repo
            .files
            .keys()
            .chain(repo.vanished.iter())
            .map(|f| serde_json::json!({ "rfilename": f }))
            .collect();
        let body = serde_json::json!({ "id": repo.id, "sha": repo.commit, "siblings": siblings });
        return Answer {
            status: 200,
            headers: vec![("Content-Type".into(), "application/json".into()), commit],
            body: body.to_string().into_bytes(),
        };
    }
    let Some(bytes) = repo.files.get(&file) else {
        return Answer::error(404, "EntryNotFound", "Entry not found");
    };
    let sha = sha256_hex(bytes);
    if is_lfs(&file) {
        Answer {
            status: 302,
            headers: vec![
                commit,
                ("ETag".into(), format!("\"{sha}\"")),
                ("X-Linked-Etag".into(), format!("\"{sha}\"")),
                ("X-Linked-Size".into(), bytes.len().to_string()),
                ("Location".into(), format!("/cdn/{}/{sha}", repo.id)),
            ],
            body: Vec::new(),
        }
    } else {
        Answer {
            status: 200,
            headers: vec![commit, ("ETag".into(), format!("W/\"{}\"", &sha[..40]))],
            body: bytes.clone(),
        }
    }
}
