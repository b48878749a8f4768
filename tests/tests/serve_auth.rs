//! The live monitor's bearer token (`[serve] token_env`, `--serve-token-env`), end to end
//! with the real binary: every path but `/healthz` and `/readyz` needs the token (the
//! `Authorization: Bearer` header Prometheus' `authorization` setting sends, or the cookie a
//! browser gets from `?token=`); a monitor beyond loopback without one, or with a token
//! variable that is unset or empty, exits 2 before any work; and the token is written
//! nowhere: not in the run directory (manifest, Parquet parts, logs), not on stdout or stderr.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "serve/http.rs"]
mod http;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use c2s_e2e::{bank_head, binary, repo_root, run_ok, text, write};

/// The token of these tests: long and odd enough that finding it means it leaked.
const TOKEN: &str = "c2s-e2e-Zq9xT7k2-bearer-4f1c-never-written";
/// The variable that holds it.
const TOKEN_ENV: &str = "C2S_E2E_MONITOR_TOKEN";

/// Longest wait for the run to reach a state (a hung run fails the test instead of hanging).
const WAIT: Duration = Duration::from_secs(600);

/// A `choice2seq` process with its stdout and stderr kept (for the leak check), stderr's
/// lines also handed over as they come (for the monitor's address).
struct Process {
    child: Child,
    lines: mpsc::Receiver<String>,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Process {
    fn start(args: &[&str], token: Option<&str>) -> Process {
        let mut cmd = Command::new(binary());
        cmd.args(args)
            .current_dir(repo_root())
            .env_remove(TOKEN_ENV)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(t) = token {
            cmd.env(TOKEN_ENV, t);
        }
        let mut child = cmd.spawn().expect("starting choice2seq");
        let (tx, lines) = mpsc::channel();
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut out = child.stdout.take().expect("stdout");
        let mut err = child.stderr.take().expect("stderr");
        let (o, e) = (stdout.clone(), stderr.clone());
        let readers = vec![
            std::thread::spawn(move || {
                let _ = out.read_to_end(&mut o.lock().unwrap());
            }),
            std::thread::spawn(move || {
                let mut line = Vec::new();
                let mut byte = [0u8; 1];
                while let Ok(1) = err.read(&mut byte) {
                    e.lock().unwrap().push(byte[0]);
                    if byte[0] == b'\n' {
                        let _ = tx.send(String::from_utf8_lossy(&line).into_owned());
                        line.clear();
                    } else {
                        line.push(byte[0]);
                    }
                }
            }),
        ];
        Process {
            child,
            lines,
            stdout,
            stderr,
            readers,
        }
    }

    /// The monitor's `host:port` (a wildcard bind reached on loopback), from the line the
    /// process prints when it starts serving.
    fn address(&self) -> String {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if let Ok(line) = self.lines.recv_timeout(Duration::from_secs(1)) {
                if let Some(rest) = line.split("http://").nth(1) {
                    let addr = rest.split('/').next().unwrap();
                    return addr.replace("0.0.0.0", "127.0.0.1");
                }
            }
        }
        panic!("no monitor address; stderr: {}", self.stderr_text());
    }

    fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    fn signal(&self, name: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("kill")
            .success();
        assert!(ok, "kill -{name}");
    }

    /// Wait for the exit; the status, stdout and stderr.
    fn wait(mut self) -> (std::process::ExitStatus, Vec<u8>, Vec<u8>) {
        let status = self.child.wait().expect("waiting for choice2seq");
        for r in std::mem::take(&mut self.readers) {
            let _ = r.join();
        }
        let out = std::mem::take(&mut *self.stdout.lock().unwrap());
        let err = std::mem::take(&mut *self.stderr.lock().unwrap());
        (status, out, err)
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET path` with extra request header lines: status, response head, body.
fn get(addr: &str, path: &str, headers: &[String]) -> (u16, String, String) {
    let mut raw = format!("GET {path} HTTP/1.1\r\nHost: {addr}");
    for h in headers {
        raw.push_str("\r\n");
        raw.push_str(h);
    }
    http::exchange(addr, &raw)
}

fn bearer(token: &str) -> Vec<String> {
    vec![format!("Authorization: Bearer {token}")]
}

/// A response header's value (names are case-insensitive).
fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_string())
    })
}

/// Every file under `dir` that contains `needle`.
fn files_containing(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut files = 0;
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("reading the run directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files += 1;
                let bytes = std::fs::read(&path).expect("reading a file");
                if bytes.windows(needle.len()).any(|w| w == needle) {
                    found.push(path);
                }
            }
        }
    }
    assert!(
        files > 3,
        "the run directory holds its outputs ({files} files)"
    );
    found
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// A simulated-engine item run of two items, with `extra` appended to its config (`name`).
fn item_config(dir: &Path, name: &str, extra: &str) -> PathBuf {
    let items = bank_head(dir, "arithmetic-dev.jsonl", 2);
    write(
        dir,
        name,
        &format!(
            "[run]\nname = \"guarded\"\n\n[model]\nengine = \"simulated\"\n\n\
             [[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n\
             [[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n\
             [stats]\nbootstrap_draws = 99\n{extra}",
            items.display().to_string()
        ),
    )
}

#[test]
fn a_token_guards_every_path_but_health_and_is_written_nowhere() {
    let dir = tempfile::tempdir().unwrap();
    // Beyond loopback (every interface), as a cluster node would serve it, with the token's
    // variable named in the config.
    let cfg = item_config(
        dir.path(),
        "run.toml",
        &format!(
            "\n[serve]\naddress = \"0.0.0.0:0\"\nlinger_seconds = 600\ntoken_env = \"{TOKEN_ENV}\"\n"
        ),
    );
    let run_dir = dir.path().join("run");
    let rd = run_dir.display().to_string();
    let run = Process::start(
        &[
            "run",
            &cfg.display().to_string(),
            "--run-dir",
            &rd,
            "--quiet",
        ],
        Some(TOKEN),
    );
    let addr = run.address();
    let port = addr.rsplit(':').next().unwrap().to_string();

    // The run ends; the lingering monitor serves its final state.
    let deadline = Instant::now() + WAIT;
    let state = loop {
        let (status, _, body) = get(&addr, "/api/state", &bearer(TOKEN));
        assert_eq!(status, 200, "{body}");
        let state: Value = serde_json::from_str(&body).unwrap();
        if state["state"] == "completed" {
            break state;
        }
        assert!(Instant::now() < deadline, "waiting for the end: {state:#}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(state["mode"], "live");
    let requests = c2s_sinks::read_requests(&run_dir.join("requests")).unwrap();
    let id = &requests.first().expect("a request").request_id;
    let guarded = [
        "/metrics".to_string(),
        "/api/state".into(),
        "/api/snapshot".into(),
        "/api/figures".into(),
        "/".into(),
        "/app.js".into(),
        "/style.css".into(),
        format!("/request/{id}"),
        format!("/api/request/{id}"),
    ];

    // No token, a wrong one, another scheme: 401 with a Bearer challenge, and no content.
    for path in guarded.iter().map(String::as_str).chain(["/no-such-path"]) {
        for (headers, error) in [
            (vec![], false),
            (bearer("not-the-token"), true),
            (bearer(&format!("{TOKEN}x")), true),
            (vec![format!("Authorization: Basic {TOKEN}")], true),
        ] {
            let (status, head, body) = get(&addr, path, &headers);
            assert_eq!(status, 401, "{path} {headers:?}: {body}");
            let challenge = header(&head, "www-authenticate").expect("a challenge");
            assert!(challenge.starts_with("Bearer"), "{challenge}");
            assert_eq!(challenge.contains("invalid_token"), error, "{challenge}");
            assert!(
                !body.contains("c2s_") && !body.contains(id.as_str()),
                "{body}"
            );
        }
    }
    // The token (as Prometheus sends it: `authorization: { credentials: ... }`): 200.
    for path in &guarded {
        let (status, _, body) = get(&addr, path, &bearer(TOKEN));
        assert_eq!(status, 200, "{path}: {body}");
    }
    let (_, _, metrics) = get(&addr, "/metrics", &bearer(TOKEN));
    assert!(metrics.contains("c2s_run_info"), "{metrics}");
    let (_, _, page) = get(&addr, &format!("/request/{id}"), &bearer(TOKEN));
    assert!(page.contains(id.as_str()), "{page}");
    assert_eq!(get(&addr, "/no-such-path", &bearer(TOKEN)).0, 404);
    // Health and readiness stay open for orchestrators.
    assert_eq!(http::get(&addr, "/healthz"), "ok\n");
    assert_eq!(
        http::request(&addr, &format!("GET /readyz HTTP/1.1\r\nHost: {addr}")).0,
        200
    );

    // A browser: `?token=` once, then a cookie that holds no token.
    let (status, head, _) = get(&addr, &format!("/?token={TOKEN}"), &[]);
    assert_eq!(status, 303, "{head}");
    assert_eq!(header(&head, "location").as_deref(), Some("/"));
    let set_cookie = header(&head, "set-cookie").expect("a cookie");
    assert!(
        set_cookie.starts_with(&format!("c2s_monitor_{port}="))
            && set_cookie.contains("HttpOnly")
            && set_cookie.contains("SameSite=Lax"),
        "{set_cookie}"
    );
    assert!(!set_cookie.contains(TOKEN), "{set_cookie}");
    let cookie = vec![format!("Cookie: {}", set_cookie.split(';').next().unwrap())];
    for path in &guarded {
        assert_eq!(get(&addr, path, &cookie).0, 200, "{path} with the cookie");
    }
    let (status, head, _) = get(&addr, &format!("/request/{id}?token={TOKEN}&x=1"), &[]);
    assert_eq!(status, 303);
    assert_eq!(
        header(&head, "location"),
        Some(format!("/request/{id}?x=1")),
        "the token leaves the URL"
    );
    assert_eq!(get(&addr, "/?token=wrong", &[]).0, 401);
    assert_eq!(
        get(&addr, "/", &[format!("Cookie: c2s_monitor_{port}={TOKEN}")]).0,
        401,
        "the token is not the cookie"
    );
    // Headless Chromium follows the redirect and its page's script reads the state.
    if let Some(dom) = browse(&format!("http://{addr}/?token={TOKEN}")) {
        eprintln!("the page in Chromium: {} bytes of DOM", dom.len());
        assert!(
            dom.contains(r#"<span id="state" class="state completed">completed</span>"#),
            "the page shows the final state: {}",
            dom.chars().take(4000).collect::<String>()
        );
        assert!(!dom.contains(TOKEN));
    }

    // The end of the wait; then the token is nowhere.
    run.signal("TERM");
    let (status, stdout, stderr) = run.wait();
    let stderr_text = String::from_utf8_lossy(&stderr);
    assert!(status.success(), "exit {status}: {stderr_text}");
    assert!(
        stderr_text.contains("bearer token required"),
        "{stderr_text}"
    );
    assert!(!contains(&stdout, TOKEN), "the token on stdout");
    assert!(!contains(&stderr, TOKEN), "the token on stderr");
    let leaked = files_containing(&run_dir, TOKEN.as_bytes());
    assert!(leaked.is_empty(), "the token in {leaked:?}");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["config"]["serve"]["auth"], "bearer",
        "{manifest:#}"
    );
    assert_eq!(manifest["config"]["serve"]["token_env"], TOKEN_ENV);
}

/// Headless Chromium's DOM of `url` after its scripts ran (`None` without Chromium).
fn browse(url: &str) -> Option<String> {
    let bin = std::env::var_os("C2S_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("chromium"));
    let found = Command::new(&bin)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("C2S_REQUIRE_PYARROW").map_or(true, |v| v != "1"),
            "Chromium is missing: run scripts/fetch-chromium.sh"
        );
        eprintln!("note: no Chromium (scripts/fetch-chromium.sh): the browser check is skipped");
        return None;
    }
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(&bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(url)
        .output()
        .expect("chromium --dump-dom");
    let (html, err) = text(&out);
    assert!(out.status.success() && !html.is_empty(), "{err}");
    Some(html)
}

/// `choice2seq ARGS` with the token's variable set to `token` (or unset): exit status and
/// stderr.
fn refused(args: &[&str], token: Option<&str>) -> (Option<i32>, String) {
    let mut cmd = Command::new(binary());
    cmd.args(args)
        .current_dir(repo_root())
        .env_remove(TOKEN_ENV);
    if let Some(t) = token {
        cmd.env(TOKEN_ENV, t);
    }
    let out = cmd.output().expect("running choice2seq");
    let (stdout, stderr) = text(&out);
    assert!(stdout.is_empty(), "nothing on stdout: {stdout}");
    (out.status.code(), stderr)
}

#[test]
fn a_monitor_beyond_loopback_without_a_usable_token_exits_2_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let plain = item_config(dir.path(), "run.toml", "");
    let cfg = plain.display().to_string();
    let run_dir = dir.path().join("run");
    let rd = run_dir.display().to_string();
    let run = |extra: &[&str], token: Option<&str>| {
        let mut args = vec!["run", cfg.as_str(), "--run-dir", rd.as_str(), "--quiet"];
        args.extend_from_slice(extra);
        let (code, stderr) = refused(&args, token);
        assert_eq!(code, Some(2), "{extra:?}: {stderr}");
        assert!(!run_dir.exists(), "{extra:?}: nothing written");
        stderr
    };
    for address in ["0.0.0.0:0", "[::]:0"] {
        let stderr = run(&["--serve", address], None);
        assert!(
            stderr.contains("[serve] token_env") && stderr.contains("--serve-token-env"),
            "{stderr}"
        );
    }
    let stderr = run(
        &["--serve", "0.0.0.0:0", "--serve-token-env", TOKEN_ENV],
        None,
    );
    assert!(
        stderr.contains(TOKEN_ENV) && stderr.contains("not set"),
        "{stderr}"
    );
    let stderr = run(
        &["--serve", "127.0.0.1:0", "--serve-token-env", TOKEN_ENV],
        Some(""),
    );
    assert!(
        stderr.contains(TOKEN_ENV) && stderr.contains("empty"),
        "{stderr}"
    );
    let stderr = run(&["--serve-token-env", TOKEN_ENV], Some(TOKEN));
    assert!(stderr.contains("--serve"), "{stderr}");
    // The config's section, overridden by neither flag.
    let exposed = item_config(
        dir.path(),
        "exposed.toml",
        "\n[serve]\naddress = \"0.0.0.0:0\"\n",
    );
    let (code, stderr) = refused(
        &["run", &exposed.display().to_string(), "--run-dir", &rd],
        None,
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("[serve] token_env"), "{stderr}");
    assert!(!run_dir.exists());

    // `view` refuses the same, before reading anything; with the token it serves beyond
    // loopback, guarded.
    run_ok(&plain, &run_dir);
    let (code, stderr) = refused(&["view", &rd, "--serve", "0.0.0.0:0"], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--serve-token-env"), "{stderr}");
    let (code, stderr) = refused(
        &[
            "view",
            &rd,
            "--serve",
            "0.0.0.0:0",
            "--serve-token-env",
            TOKEN_ENV,
        ],
        None,
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(TOKEN_ENV), "{stderr}");
    let view = Process::start(
        &[
            "view",
            &rd,
            "--serve",
            "0.0.0.0:0",
            "--serve-token-env",
            TOKEN_ENV,
        ],
        Some(TOKEN),
    );
    let addr = view.address();
    assert_eq!(get(&addr, "/api/state", &[]).0, 401);
    let (status, _, body) = get(&addr, "/api/state", &bearer(TOKEN));
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["mode"],
        "view"
    );
    assert_eq!(get(&addr, "/healthz", &[]).0, 200);
    view.signal("INT");
    let (_, stdout, stderr) = view.wait();
    assert!(!contains(&stdout, TOKEN) && !contains(&stderr, TOKEN));
    // A loopback view needs no token, as before.
    let open = Process::start(&["view", &rd, "--serve", "127.0.0.1:0"], None);
    let addr = open.address();
    assert_eq!(http::get_json(&addr, "/api/state")["mode"], "view");
}
