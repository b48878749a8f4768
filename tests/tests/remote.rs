//! The `openai` engine against a real OpenAI-compatible server: llama.cpp's server through
//! llama-cpp-python 0.3.36 (`python -m llama_cpp.server`) on the default GGUF, started on
//! 127.0.0.1 by each test. The server is built from source (about 15 minutes on 2 cores), so
//! these tests are a second suite: `scripts/test-remote.sh` installs it and runs them
//! (`--ignored`); the default suite covers the engine's configuration checks.
//!
//! Scoring uses `scoring = "top_logprobs"`: llama-cpp-python's echo path sorts the vocabulary
//! at every prompt position in Python (about 16 s per 336-token request here), while one
//! top-log-probability list per decision takes a fraction of a second; a decision whose
//! options are not all among the listed tokens falls back to echo. llama.cpp's own server
//! (`llama-server`, `scripts/fetch-llama-server.sh`) refuses echo, so its test scores with
//! `scoring = "logit_bias"`.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "remote/fault_proxy.rs"]
mod fault_proxy;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use c2s_e2e::{model_path, repo_root, run_config, run_ok, text, write};
use c2s_sinks::{read_rejects, read_requests, read_trajectories};
use fault_proxy::{Fault, FaultProxy};

/// Top log-probabilities asked for per decision: llama-cpp-python detokenizes every listed
/// token in Python, so the whole vocabulary (49,152) costs about a second per request while
/// 2,000 cost a tenth; a decision whose options are not all listed falls back to echo.
const TOP: u32 = 2000;

fn python() -> PathBuf {
    std::env::var_os("C2S_LLAMA_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".tools/llamacpp/bin/python"))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` on 127.0.0.1:port: the status line, if anything answered.
fn http_status(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut buf = String::new();
    s.read_to_string(&mut buf).ok()?;
    buf.lines().next().map(str::to_string)
}

/// A llama.cpp server on the default GGUF, killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(port: u16, alias: &str, extra: &[&str]) -> Server {
        let python = python();
        assert!(
            python.exists(),
            "{} is missing: run scripts/test-remote.sh (it installs llama-cpp-python[server])",
            python.display()
        );
        let mut cmd = Command::new(python);
        cmd.args(["-m", "llama_cpp.server", "--model"])
            .arg(model_path())
            .args(["--model_alias", alias, "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .args(["--n_ctx", "4096", "--n_threads", "2"])
            .args(extra);
        Server::spawn(cmd, port)
    }

    /// llama.cpp's own server (`scripts/fetch-llama-server.sh`, or `$C2S_LLAMA_SERVER`) on the
    /// default GGUF with `slots` parallel slots and its prompt cache.
    fn start_llama_server(port: u16, alias: &str, slots: usize) -> Server {
        let bin = std::env::var_os("C2S_LLAMA_SERVER")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join(".tools/llama-server/bin/llama-server"));
        assert!(
            bin.exists(),
            "{} is missing: run scripts/test-remote.sh (it builds llama-server)",
            bin.display()
        );
        let mut cmd = Command::new(bin);
        cmd.arg("--model")
            .arg(model_path())
            .args(["--alias", alias, "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .args(["--threads", "2", "--parallel", &slots.to_string()])
            .args(["--ctx-size", &(slots * 4096).to_string()]);
        Server::spawn(cmd, port)
    }

    /// Start `cmd` and wait until the server answers `/v1/models` (at most 120 s).
    fn spawn(mut cmd: Command, port: u16) -> Server {
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting the llama.cpp server");
        let server = Server { child, port };
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(120) {
            if http_status(port, "/v1/models")
                .is_some_and(|l| l.contains(" 200") || l.contains(" 401"))
            {
                return server;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        panic!("the llama.cpp server did not answer on port {port} within 120 s");
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `choice2seq run CONFIG --run-dir RUN_DIR --quiet` in the background, its standard error
/// going to `log` (a file: a pipe nobody reads could fill up and stall the run).
fn spawn_run(cfg: &Path, run_dir: &Path, log: &Path) -> Child {
    Command::new(c2s_e2e::binary())
        .args(["run", &cfg.display().to_string(), "--run-dir"])
        .arg(run_dir)
        .arg("--quiet")
        .current_dir(repo_root())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

/// A config on `per_domain` dev items of each domain with `arms` (TOML), served by `openai`
/// (a TOML `[model.openai]` body) or the local prefix engine when `openai` is `None`.
fn config(dir: &Path, name: &str, per_domain: usize, arms: &str, openai: Option<&str>) -> PathBuf {
    let root = repo_root();
    let engine = match openai {
        Some(body) => format!("engine = \"openai\"\n\n[model.openai]\n{body}\n"),
        None => String::new(),
    };
    let limit = if per_domain == 0 {
        String::new()
    } else {
        format!("limit = {per_domain}\n")
    };
    let text = format!(
        r#"[run]
name = "{name}"

[model]
path = "{model}"
{engine}
[[sources]]
kind = "jsonl"
path = "{root}/data/banks/arithmetic-dev.jsonl"
{limit}
[[sources]]
kind = "jsonl"
path = "{root}/data/banks/lexical-dev.jsonl"
{limit}
{arms}

[stats]
bootstrap_draws = 99
"#,
        model = model_path().display(),
        root = root.display(),
    );
    write(dir, &format!("{name}.toml"), &text)
}

const NATIVE_SERIAL: &str = "[[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\n";

/// The quickstart panel (96 dev items, Native and Serial, 624 requests) through the server
/// and through the local f32 engine: the scored distributions agree within what llama.cpp's
/// quantized kernels change, with the same argmax almost everywhere.
#[test]
#[ignore = "needs the llama.cpp server: scripts/test-remote.sh"]
fn quickstart_through_the_server_agrees_with_the_local_engine() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(free_port(), "smollm2", &[]);
    let openai = format!(
        "base_url = \"{}\"\nmodel = \"smollm2\"\nscoring = \"top_logprobs\"\ntop_logprobs = {TOP}\nconcurrency = 2",
        server.url()
    );
    run_remote_and_local(dir.path(), &openai);
}

/// The quickstart panel through llama.cpp's own server with 4 parallel slots and
/// `scoring = "logit_bias"` (the server refuses echo: options outside the top entries are read
/// raised by a logit bias, relative to the top token), against the local f32 engine: every
/// decision scored, the distributions within what llama.cpp's quantized kernels change.
#[test]
#[ignore = "needs llama-server: scripts/test-remote.sh"]
fn llama_servers_logit_bias_scoring_agrees_with_the_local_engine() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_llama_server(free_port(), "smollm2", 4);
    let openai = format!(
        "base_url = \"{}\"\nmodel = \"smollm2\"\nscoring = \"logit_bias\"\nconcurrency = 4",
        server.url()
    );
    run_remote_and_local(dir.path(), &openai);
    assert!(read_rejects(&dir.path().join("run-remote/rejects"))
        .unwrap()
        .is_empty());
}

/// The quickstart panel (Native and Serial on every dev item) into `DIR/run-remote` through
/// the server of `openai` (a `[model.openai]` body), then into `DIR/run-local` through the
/// local engine, each timed; the two must agree ([`assert_agrees`]).
fn run_remote_and_local(dir: &Path, openai: &str) {
    let remote = config(dir, "remote", 0, NATIVE_SERIAL, Some(openai));
    let local = config(dir, "local", 0, NATIVE_SERIAL, None);
    let timed = |cfg: &Path, run: &str| {
        let t = Instant::now();
        run_ok(cfg, &dir.join(run));
        t.elapsed().as_secs_f64()
    };
    let remote_s = timed(&remote, "run-remote");
    let local_s = timed(&local, "run-local");
    assert_agrees(dir, remote_s, local_s);
}

/// The requests of `DIR/run-remote` against those of `DIR/run-local` with the same prompt:
/// at least 300 compared, the same argmax on 98%, max |Δp| under 0.15 (llama.cpp's
/// quantized-activation kernels against exact f32 scores).
fn assert_agrees(dir: &Path, remote_s: f64, local_s: f64) {
    let key = |r: &c2s_sinks::RequestRow| (r.item_id.clone(), r.arm.clone(), r.user.clone());
    let remote_rows = read_requests(&dir.join("run-remote/requests")).unwrap();
    let local_rows: std::collections::HashMap<_, _> =
        read_requests(&dir.join("run-local/requests"))
            .unwrap()
            .into_iter()
            .map(|r| (key(&r), r))
            .collect();
    let (mut compared, mut same_argmax, mut max_dp) = (0usize, 0usize, 0f64);
    for r in &remote_rows {
        let Some(l) = local_rows.get(&key(r)) else {
            continue;
        };
        let (Some(p), Some(q)) = (&r.probabilities, &l.probabilities) else {
            continue;
        };
        compared += 1;
        for (a, b) in p.iter().zip(q) {
            max_dp = max_dp.max((a - b).abs());
        }
        let argmax = |v: &[f64]| {
            (0..v.len())
                .max_by(|&i, &j| v[i].total_cmp(&v[j]))
                .unwrap_or(0)
        };
        same_argmax += usize::from(argmax(p) == argmax(q));
    }
    let n = remote_rows.len();
    println!(
        "server: {n} requests in {remote_s:.1} s ({:.2} requests/s); local prefix engine: {} requests in {local_s:.1} s ({:.2} requests/s)",
        n as f64 / remote_s,
        local_rows.len(),
        local_rows.len() as f64 / local_s
    );
    println!(
        "agreement on {compared} requests with the same prompt: max |Δp| = {max_dp:.4}, same argmax {same_argmax}/{compared}"
    );
    assert!(compared >= 300, "{compared} shared requests");
    assert!(
        same_argmax as f64 >= 0.98 * compared as f64,
        "argmax agreement {same_argmax}/{compared}"
    );
    assert!(max_dp < 0.15, "max |Δp| = {max_dp}");
}

/// A run through the [`fault_proxy`] against a clean run on the same server: connections
/// killed, a stretch of 503s with `Retry-After`, a stall past the timeout, a body cut off
/// halfway, and the server itself killed and restarted behind the proxy (502s meanwhile). The
/// run waits the outages out and completes with the clean run's outcomes, no failed request,
/// no request or trajectory written twice, and its outages in the manifest's status.
#[test]
#[ignore = "needs the llama.cpp server: scripts/test-remote.sh"]
fn outages_of_every_kind_leave_the_outcomes_of_a_clean_run() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = free_port();
    let mut server = Some(Server::start(upstream, "smollm2", &[]));
    let openai = |url: &str| {
        format!(
            "base_url = \"{url}\"\nmodel = \"smollm2\"\nscoring = \"top_logprobs\"\ntop_logprobs = {TOP}\nconcurrency = 2\nmax_retries = 1\nretry_backoff_ms = 200\ntimeout_s = 10"
        )
    };
    let clean_cfg = config(
        dir.path(),
        "clean",
        6,
        NATIVE_SERIAL,
        Some(&openai(&server.as_ref().unwrap().url())),
    );
    let clean_dir = dir.path().join("run-clean");
    run_ok(&clean_cfg, &clean_dir);

    // Which call gets which fault: single faults early, a 6 s window of 503s from call 16,
    // and (below) the server restarted once 34 calls went by.
    let mut window: Option<Instant> = None;
    let schedule: fault_proxy::Schedule = Box::new(move |n, now| match n {
        3 | 40 => Fault::Kill,
        8 => Fault::Stall(Duration::from_secs(12)),
        12 | 45 => Fault::Truncate,
        n if n >= 16 && window.is_none_or(|w| now.duration_since(w) < Duration::from_secs(6)) => {
            window.get_or_insert(now);
            Fault::Unavailable
        }
        _ => Fault::Pass,
    });
    let proxy = FaultProxy::start(upstream, schedule);
    let cfg = config(
        dir.path(),
        "faults",
        6,
        NATIVE_SERIAL,
        Some(&openai(&proxy.url())),
    );
    let run_dir = dir.path().join("run-faults");
    let began = Instant::now();
    let log = dir.path().join("faults.log");
    let mut run = spawn_run(&cfg, &run_dir, &log);
    let mut restarted = None;
    let status = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status;
        }
        if restarted.is_none() && proxy.counts().calls >= 34 {
            // The server goes down under the proxy and comes back on the same port.
            let down = Instant::now();
            drop(server.take());
            std::thread::sleep(Duration::from_secs(3));
            server = Some(Server::start(upstream, "smollm2", &[]));
            restarted = Some(down.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let wall = began.elapsed();
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(status.success(), "the run completes: {stderr}");
    let counts = proxy.counts();
    let restarted = restarted.expect("the run got past call 34");
    println!("proxy: {counts:?}; server down for {restarted:.1?}; run took {wall:.1?}");
    assert!(
        counts.killed == 2 && counts.truncated == 2 && counts.stalled == 1,
        "{counts:?}"
    );
    assert!(
        counts.unavailable >= 3 && counts.bad_gateway >= 1,
        "{counts:?}"
    );

    // Outcomes equal to the clean run; nothing failed, nothing twice.
    let trajectory_key = |t: &c2s_sinks::TrajectoryRow| (t.item_id.clone(), t.arm.clone());
    let outcomes = |dir: &Path| {
        let rows = read_trajectories(&dir.join("trajectories")).unwrap();
        let map: BTreeMap<_, _> = rows
            .iter()
            .map(|t| (trajectory_key(t), (t.output.clone(), t.correct, t.valid)))
            .collect();
        assert_eq!(
            map.len(),
            rows.len(),
            "a trajectory written twice in {}",
            dir.display()
        );
        map
    };
    let (clean, faulted) = (outcomes(&clean_dir), outcomes(&run_dir));
    assert_eq!(clean.len(), 12 * 2);
    assert_eq!(faulted, clean, "outcomes differ from the clean run");
    let request_key =
        |r: &c2s_sinks::RequestRow| (r.item_id.clone(), r.arm.clone(), r.user.clone());
    let requests = |dir: &Path| {
        let rows = read_requests(&dir.join("requests")).unwrap();
        let map: BTreeMap<_, _> = rows
            .iter()
            .map(|r| (request_key(r), r.probabilities.clone()))
            .collect();
        assert_eq!(
            map.len(),
            rows.len(),
            "a request written twice in {}",
            dir.display()
        );
        map
    };
    let (clean_requests, faulted_requests) = (requests(&clean_dir), requests(&run_dir));
    assert_eq!(
        faulted_requests.keys().collect::<Vec<_>>(),
        clean_requests.keys().collect::<Vec<_>>()
    );
    let max_dp = faulted_requests
        .iter()
        .filter_map(|(k, p)| Some((p.as_ref()?, clean_requests[k].as_ref()?)))
        .flat_map(|(p, q)| p.iter().zip(q).map(|(a, b)| (a - b).abs()))
        .fold(0f64, f64::max);
    println!(
        "{} trajectories and {} requests, as in the clean run; max |Δp| against it = {max_dp:.2e}",
        faulted.len(),
        faulted_requests.len()
    );
    assert!(
        read_rejects(&run_dir.join("rejects")).unwrap().is_empty(),
        "no failed request"
    );

    let manifest = c2s_sinks::read_manifest(&run_dir).unwrap().unwrap();
    let status = manifest.status.expect("a status");
    assert_eq!(status.requests_failed, 0);
    let outages = &status.outages;
    assert!(
        outages.len() >= 3 && outages.iter().all(|o| o.recovered),
        "{outages:?}"
    );
    let longest = outages.iter().map(|o| o.seconds).fold(0f64, f64::max);
    let faults: u64 = outages.iter().map(|o| o.faults).sum();
    println!(
        "manifest: {} outages, {faults} faulted attempts, longest {longest:.1} s, {:.1} s in all",
        outages.len(),
        outages.iter().map(|o| o.seconds).sum::<f64>()
    );
    assert!(
        longest >= 3.0,
        "the restart is one outage of seconds: {outages:?}"
    );
}

/// A server down for longer than `[inference] max_outage_seconds`: the run waits that long,
/// stops with exit 1 naming the outage, and its directory resumes against the restarted
/// server to every trajectory, none written twice and no failed request left behind.
#[test]
#[ignore = "needs the llama.cpp server: scripts/test-remote.sh"]
fn an_outage_past_the_limit_exits_1_and_the_run_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let server = Server::start(port, "smollm2", &[]);
    let openai = format!(
        "base_url = \"{}\"\nmodel = \"smollm2\"\nscoring = \"top_logprobs\"\ntop_logprobs = {TOP}\nmax_retries = 1\nretry_backoff_ms = 100\ntimeout_s = 30",
        server.url()
    );
    let arms = format!("{NATIVE_SERIAL}\n[inference]\nmax_outage_seconds = 6\n");
    let cfg = config(dir.path(), "killed", 4, &arms, Some(&openai));
    let run_dir = dir.path().join("run");
    let log = dir.path().join("killed.log");
    let mut run = spawn_run(&cfg, &run_dir, &log);
    // Let some requests through, then kill the server for good.
    std::thread::sleep(Duration::from_secs(8));
    drop(server);
    let down = Instant::now();
    let status = run.wait().unwrap();
    let waited = down.elapsed();
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("max_outage_seconds"), "{stderr}");
    println!("the run gave up {waited:.1?} after the server died");
    assert!(waited >= Duration::from_secs(6), "it waited the limit out");
    let manifest = c2s_sinks::read_manifest(&run_dir).unwrap().unwrap();
    let status = manifest.status.expect("a status");
    assert_eq!(status.exit_code, Some(1));
    assert!(
        status.outages.last().is_some_and(|o| !o.recovered),
        "{:?}",
        status.outages
    );
    assert!(
        read_rejects(&run_dir.join("rejects")).unwrap().is_empty(),
        "an outage fails no request"
    );
    let before = read_trajectories(&run_dir.join("trajectories"))
        .unwrap()
        .len();
    assert!(before < 16, "{before} trajectories before the server died");
    let _server = Server::start(port, "smollm2", &[]);
    run_ok(&cfg, &run_dir);
    let trajectories = read_trajectories(&run_dir.join("trajectories")).unwrap();
    let keys: std::collections::BTreeSet<_> = trajectories
        .iter()
        .map(|t| (t.item_id.clone(), t.arm.clone()))
        .collect();
    assert_eq!(
        keys.len(),
        8 * 2,
        "every (item, arm) completed after the resume"
    );
    assert_eq!(trajectories.len(), keys.len(), "nothing written twice");
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    let request_keys: std::collections::BTreeSet<_> = requests
        .iter()
        .map(|r| (r.item_id.clone(), r.arm.clone(), r.user.clone()))
        .collect();
    assert_eq!(
        request_keys.len(),
        requests.len(),
        "no request written twice"
    );
}

/// Clear errors before any work (exit 2): nothing listening, a rejected key, a model the
/// server does not serve, a timeout, a server that cannot score under a scored arm, and a
/// resume against another served model. The API key never reaches the outputs.
#[test]
#[ignore = "needs the llama.cpp server: scripts/test-remote.sh"]
fn bad_servers_keys_and_models_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let native = "[[arms]]\narm = \"Native\"\n";
    let refused = |name: &str, arms: &str, openai: &str, needles: &[&str]| {
        let cfg = config(dir.path(), name, 1, arms, Some(openai));
        let out = run_config(&cfg, &dir.path().join(format!("run-{name}")));
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        for n in needles {
            assert!(stderr.contains(n), "{name}: `{n}` not in {stderr}");
        }
    };
    // Nothing listening.
    let dead = free_port();
    refused(
        "nothing",
        native,
        &format!("base_url = \"http://127.0.0.1:{dead}/v1\"\nmodel = \"smollm2\"\nmax_retries = 0"),
        &["cannot connect", &dead.to_string()],
    );
    let server = Server::start(free_port(), "smollm2", &["--api_key", "c2s-test-secret"]);
    let url = server.url();
    // No key, then a wrong model name, then a timeout.
    refused(
        "nokey",
        native,
        &format!("base_url = \"{url}\"\nmodel = \"smollm2\""),
        &["401", "api_key_env"],
    );
    std::env::set_var("C2S_TEST_KEY", "c2s-test-secret");
    let keyed = |extra: &str| {
        format!(
            "base_url = \"{url}\"\nmodel = \"smollm2\"\napi_key_env = \"C2S_TEST_KEY\"\nscoring = \"top_logprobs\"\ntop_logprobs = {TOP}\n{extra}"
        )
    };
    refused(
        "model",
        native,
        &keyed("").replace("model = \"smollm2\"", "model = \"nope\""),
        &["serves smollm2, not `nope`"],
    );
    refused(
        "timeout",
        native,
        &keyed("timeout_s = 0.001\nmax_retries = 0"),
        &["timed out"],
    );
    // With the key: a run completes and the key is nowhere in its outputs.
    let cfg = config(dir.path(), "keyed", 1, native, Some(&keyed("")));
    let run_dir = dir.path().join("run-keyed");
    run_ok(&cfg, &run_dir);
    let manifest = std::fs::read_to_string(run_dir.join("manifest.json")).unwrap();
    assert!(manifest.contains(&url) && manifest.contains("\"remote\""));
    for entry in walk(&run_dir) {
        let bytes = std::fs::read(&entry).unwrap();
        let found = bytes
            .windows(b"c2s-test-secret".len())
            .any(|w| w == b"c2s-test-secret");
        assert!(!found, "the API key is in {}", entry.display());
    }
    // Another served model (or a server that cannot score) under the same run directory.
    let other = Server::start(free_port(), "smollm2-other", &["--logits_all", "false"]);
    let other_cfg = |arms: &str| {
        config(
            dir.path(),
            "other",
            1,
            arms,
            Some(&format!(
                "base_url = \"{}\"\nmodel = \"smollm2-other\"\nscoring = \"top_logprobs\"\ntop_logprobs = {TOP}",
                other.url()
            )),
        )
    };
    let out = run_config(&other_cfg(native), &dir.path().join("run-other"));
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot score options") && stderr.contains("Native/code"),
        "{stderr}"
    );
    let generated = "[[arms]]\narm = \"WholeGenerate\"\nmax_new_tokens = 8\n";
    run_ok(&other_cfg(generated), &dir.path().join("run-generated"));
    let out = run_config(&other_cfg(generated), &run_dir);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot resume with another model"),
        "{stderr}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
