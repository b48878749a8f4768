//! The live monitor (`choice2seq run --serve`, `choice2seq view`) end to end.
//!
//! A continuous Kafka run with the real model is watched while it goes on: `/metrics` is
//! scraped throughout and every scrape is parsed by Python's `prometheus_client` (counters
//! never go down; the final gauges equal `choice2seq stats`); headless Chromium takes a
//! screenshot of the page after the first snapshot and after the end, and its DOM shows the
//! final SCR values; a path-traversal, method and header-size probe is refused while the run
//! goes on. `choice2seq view` serves finished item, coverage and dialogue runs.
//!
//! The Python parser and Chromium are installed by `scripts/test.sh` (`C2S_PYTHON`,
//! `C2S_CHROMIUM`); without them the checks that need them are skipped with a note, unless
//! `C2S_REQUIRE_PYARROW=1` (CI) makes that a failure.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "serve/http.rs"]
mod http;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use c2s_e2e::{binary, keyed, model_path, repo_root, run_ok, text, write};
use c2s_sources::{create_topic, produce};
use c2s_testkit::Broker;

/// Longest wait for the run to reach a state (a generous bound: a hung run fails the test
/// instead of hanging it).
const WAIT: Duration = Duration::from_secs(600);

fn required() -> bool {
    std::env::var("C2S_REQUIRE_PYARROW").is_ok_and(|v| v == "1")
}

/// A `choice2seq` process whose standard error is read line by line.
struct Process {
    child: Child,
    lines: mpsc::Receiver<String>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Process {
    fn start(args: &[&str]) -> Process {
        let mut child = Command::new(binary())
            .args(args)
            .current_dir(repo_root())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting choice2seq");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = mpsc::channel();
        let log = Arc::new(Mutex::new(Vec::new()));
        let l = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                l.lock().unwrap().push(line.clone());
                let _ = tx.send(line);
            }
        });
        Process { child, lines, log }
    }

    /// `choice2seq run CFG` into `run_dir`, quiet, serving its monitor on a free loopback port
    /// and lingering up to 600 s after the run ends.
    fn serve_run(cfg: &Path, run_dir: &Path) -> Process {
        Process::start(&[
            "run",
            &cfg.display().to_string(),
            "--run-dir",
            &run_dir.display().to_string(),
            "--quiet",
            "--serve",
            "127.0.0.1:0",
            "--serve-linger",
            "600",
        ])
    }

    /// The monitor's `host:port`, from the line the process prints when it starts serving.
    fn address(&self) -> String {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if let Ok(line) = self.lines.recv_timeout(Duration::from_secs(1)) {
                if let Some(rest) = line.split("http://").nth(1) {
                    return rest.split('/').next().unwrap().to_string();
                }
            }
        }
        panic!("no monitor address; stderr: {:?}", self.log.lock().unwrap());
    }

    fn signal(&self, name: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("kill")
            .success();
        assert!(ok, "kill -{name}");
    }

    fn wait(mut self) -> std::process::ExitStatus {
        let status = self.child.wait().expect("waiting for choice2seq");
        // Let the reader thread take the last lines.
        std::thread::sleep(Duration::from_millis(100));
        eprintln!("{}", self.log.lock().unwrap().join("\n"));
        status
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Poll `/api/state` until `done` holds for it.
fn wait_for(addr: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let state = http::get_json(addr, "/api/state");
        if done(&state) {
            return state;
        }
        assert!(Instant::now() < deadline, "waiting for {what}: {state:#}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Paired outcomes counted in the page's latest snapshot (Native EM denominators).
fn snapshot_outcomes(state: &Value) -> u64 {
    state["headline"]
        .as_array()
        .map(|h| {
            h.iter()
                .filter_map(|g| g["native_em"]["denominator"].as_u64())
                .sum()
        })
        .unwrap_or(0)
}

/// Where the test keeps its screenshots: `<target>/c2s-artifacts/serve/`.
fn artifacts() -> PathBuf {
    let dir = binary()
        .parent()
        .and_then(|d| d.parent())
        .expect("target directory")
        .join("c2s-artifacts/serve");
    std::fs::create_dir_all(&dir).expect("artifact directory");
    dir
}

/// Headless Chromium, when installed (`C2S_CHROMIUM` or `chromium` on the path).
fn chromium() -> Option<PathBuf> {
    let bin = std::env::var_os("C2S_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("chromium"));
    let found = Command::new(&bin)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            !required(),
            "Chromium is missing: run scripts/fetch-chromium.sh"
        );
        eprintln!("note: no Chromium (scripts/fetch-chromium.sh): page checks skipped");
    }
    found.then_some(bin)
}

/// Chromium on `url` with a fresh profile: a screenshot at `png` and the page's DOM after its
/// scripts ran (virtual time lets the page poll and draw).
fn browse(chromium: &Path, url: &str, png: &Path) -> String {
    let profile = tempfile::tempdir().unwrap();
    let common = |cmd: &mut Command| {
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1280,2400",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()));
    };
    let mut shot = Command::new(chromium);
    common(&mut shot);
    let out = shot
        .arg(format!("--screenshot={}", png.display()))
        .arg(url)
        .output()
        .expect("chromium --screenshot");
    assert!(png.is_file(), "no screenshot: {}", text(&out).1);
    let mut dom = Command::new(chromium);
    common(&mut dom);
    let out = dom
        .arg("--dump-dom")
        .arg(url)
        .output()
        .expect("chromium --dump-dom");
    let (html, err) = text(&out);
    assert!(out.status.success() && !html.is_empty(), "{err}");
    html
}

/// The SCR values the page marks up: key → value (`data-metric="scr"` elements).
fn dom_scr(html: &str) -> BTreeMap<String, Option<f64>> {
    let mut out = BTreeMap::new();
    for part in html.split("data-metric=\"scr\"").skip(1) {
        let attr = |name: &str| -> String {
            let start = part.find(&format!("{name}=\"")).expect(name) + name.len() + 2;
            let end = part[start..].find('"').unwrap() + start;
            part[start..end].replace("&amp;", "&")
        };
        let value = attr("data-value");
        out.insert(attr("data-key"), value.parse::<f64>().ok());
    }
    out
}

/// Each scrape parsed by Python's `prometheus_client` text parser: per scrape, the samples
/// as `name{labels}` → value. `None` without the parser (skipped with a note).
fn parse_scrapes(scrapes: &[String]) -> Option<Vec<BTreeMap<String, f64>>> {
    const SCRIPT: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for path in sys.argv[1:]:
    samples = {}
    with open(path) as f:
        for family in text_string_to_metric_families(f.read()):
            for s in family.samples:
                labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
                samples[f"{family.type}:{s.name}{{{labels}}}"] = s.value
    out.append(samples)
print(json.dumps(out))
"#;
    let python = std::env::var("C2S_PYTHON").unwrap_or_else(|_| "python3".into());
    let available = Command::new(&python)
        .args(["-c", "import prometheus_client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        assert!(
            !required(),
            "prometheus_client is missing: run scripts/fetch-pytools.sh"
        );
        eprintln!("note: no prometheus_client (scripts/fetch-pytools.sh): scrapes not parsed");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["-c".to_string(), SCRIPT.to_string()];
    for (i, s) in scrapes.iter().enumerate() {
        let p = dir.path().join(format!("scrape-{i:04}.txt"));
        std::fs::write(&p, s).unwrap();
        args.push(p.display().to_string());
    }
    let out = Command::new(&python).args(&args).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert!(
        out.status.success(),
        "the Prometheus parser refused a scrape: {stderr}"
    );
    Some(serde_json::from_str(&stdout).expect("parsed scrapes"))
}

/// A sample's key in [`parse_scrapes`]' maps.
fn sample(kind: &str, name: &str, labels: &[(&str, &str)]) -> String {
    let mut l: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    l.sort();
    format!("{kind}:{name}{{{}}}", l.join(","))
}

fn bank_lines(bank: &str, skip: usize, n: usize) -> Vec<(Option<String>, String)> {
    std::fs::read_to_string(repo_root().join("data/banks").join(bank))
        .expect("bank")
        .lines()
        .skip(skip)
        .take(n)
        .map(|l| (None, l.to_string()))
        .collect()
}

/// `choice2seq stats DIR --json`.
fn stats_json(dir: &Path) -> Vec<Value> {
    let out = c2s_e2e::run(&["stats", &dir.display().to_string(), "--json"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_str(&stdout).expect("stats --json")
}

#[test]
fn a_served_run_is_watched_live_scraped_and_probed() {
    let broker = Broker::start();
    let b = broker.addr.as_str();
    create_topic(b, "items", 2).expect("topic");
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "served.toml",
        &format!(
            "[run]\nname = \"served\"\n\n[model]\npath = {:?}\nengine = \"prefix\"\n\n\
             [[sources]]\nkind = \"kafka\"\nbrokers = \"{b}\"\ntopic = \"items\"\n\
             group = \"served\"\ncontinuous = true\n\n\
             [[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n\
             [stats]\nbootstrap_draws = 199\nsnapshot_every = 1\n",
            model_path().display().to_string()
        ),
    );
    let run_dir = dir.path().join("run");
    let run = Process::serve_run(&cfg, &run_dir);
    let addr = run.address();

    // Scrape /metrics every 100 ms until the run has ended.
    let stop = Arc::new(AtomicBool::new(false));
    let scraper = {
        let (addr, stop) = (addr.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut scrapes = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                scrapes.push(http::get(&addr, "/metrics"));
                std::thread::sleep(Duration::from_millis(100));
            }
            scrapes
        })
    };

    // Batch 1: two items of each domain and a malformed message.
    let mut first = bank_lines("arithmetic-dev.jsonl", 0, 2);
    first.extend(bank_lines("lexical-dev.jsonl", 0, 2));
    first.push((Some("bad".into()), "{\"item_id\": \"broken\",".into()));
    produce(b, "items", &first).expect("produce");
    let state = wait_for(&addr, "the first 4 items' snapshot", |s| {
        // Progress is published every 250 ms, apart from the snapshot: wait for both.
        snapshot_outcomes(s) == 4 && s["rejects"]["count"] == 1 && s["progress"]["items_done"] == 4
    });
    assert_eq!(state["state"], "running");
    assert_eq!(state["progress"]["items_done"], 4);
    let reason = state["rejects"]["recent"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("not valid JSON"), "{reason}");

    // The page after the first snapshot.
    let browser = chromium();
    let shots = artifacts();
    let early_dom = browser.as_ref().map(|c| {
        browse(
            c,
            &format!("http://{addr}/"),
            &shots.join("first-snapshot.png"),
        )
    });

    // Probes: nothing but the served paths, only GET (and HEAD), no huge headers.
    let probe = |raw: &str| http::request(&addr, raw).0;
    let host = format!("Host: {addr}");
    assert_eq!(
        probe(&format!("GET /../manifest.json HTTP/1.1\r\n{host}")),
        404
    );
    assert_eq!(
        probe(&format!("GET /manifest.json HTTP/1.1\r\n{host}")),
        404
    );
    assert_eq!(
        probe(&format!("GET /%2e%2e/manifest.json HTTP/1.1\r\n{host}")),
        404
    );
    assert_eq!(
        probe(&format!("GET /static/../../etc/passwd HTTP/1.1\r\n{host}")),
        404
    );
    assert_eq!(
        probe(&format!(
            "POST /metrics HTTP/1.1\r\n{host}\r\nContent-Length: 0"
        )),
        405
    );
    assert_eq!(probe(&format!("DELETE /api/state HTTP/1.1\r\n{host}")), 405);
    assert_eq!(
        probe(&format!("PUT / HTTP/1.1\r\n{host}\r\nContent-Length: 0")),
        405
    );
    let huge = format!(
        "GET /metrics HTTP/1.1\r\n{host}\r\nX-Filler: {}",
        "a".repeat(64 * 1024)
    );
    assert_eq!(probe(&huge), 431);
    assert_eq!(probe(&format!("GET /healthz HTTP/1.1\r\n{host}")), 200);
    assert_eq!(probe(&format!("GET /readyz HTTP/1.1\r\n{host}")), 200);

    // Batch 2: the run goes on after the probes.
    let mut second = bank_lines("arithmetic-dev.jsonl", 2, 2);
    second.extend(bank_lines("lexical-dev.jsonl", 2, 2));
    produce(b, "items", &second).expect("produce");
    wait_for(&addr, "all 8 items' snapshot", |s| {
        snapshot_outcomes(s) == 8
    });

    // The end: SIGTERM stops the continuous run; the monitor goes on with the final state.
    run.signal("TERM");
    let end = wait_for(&addr, "the final state", |s| s["state"] == "stopped");
    assert_eq!(end["status"]["exit_code"], 0, "{end:#}");
    stop.store(true, Ordering::SeqCst);
    let mut scrapes = scraper.join().expect("scraper");
    scrapes.push(http::get(&addr, "/metrics"));
    let final_dom = browser
        .as_ref()
        .map(|c| browse(c, &format!("http://{addr}/"), &shots.join("final.png")));
    let snapshot: Vec<Value> = serde_json::from_str(&http::get(&addr, "/api/snapshot")).unwrap();
    run.signal("TERM");
    let status = run.wait();
    assert!(status.success(), "exit {status}");

    // /api/snapshot is `choice2seq stats --json` of the directory.
    let stats = stats_json(&run_dir);
    assert_eq!(keyed(snapshot), keyed(stats.clone()));
    let scr: Vec<&Value> = stats
        .iter()
        .filter(|r| r["metric"] == "scr" && r["length"].is_null())
        .collect();
    assert_eq!(scr.len(), 2, "one SCR per domain");

    // The page's DOM shows the final SCR values; they changed since the first snapshot.
    if let (Some(early), Some(fin)) = (early_dom, final_dom) {
        let shown = dom_scr(&fin);
        for r in &scr {
            let key = format!(
                "{} · {} · {}",
                r["model"].as_str().unwrap(),
                r["domain"].as_str().unwrap(),
                r["comparison"].as_str().unwrap()
            );
            assert_eq!(
                shown.get(&key),
                Some(&r["value"].as_f64()),
                "{key}: {shown:?}"
            );
        }
        assert!(fin.contains("stopped"), "the final state is shown");
        assert!(
            fin.contains("not valid JSON"),
            "the reject's reason is shown"
        );
        // The values shown changed, not only a clock: the snapshot number moved on.
        let snapshot_number = |dom: &str| -> Option<u64> {
            let rest = &dom[dom.find("(snapshot ")? + "(snapshot ".len()..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        };
        assert!(
            snapshot_number(&early) < snapshot_number(&fin),
            "the page's snapshot moved on between the two moments: {:?} then {:?}",
            snapshot_number(&early),
            snapshot_number(&fin)
        );
        assert!(
            early.contains("(snapshot ") && fin.contains("(snapshot "),
            "both views show a snapshot"
        );
        eprintln!(
            "screenshots: {} and {}",
            shots.join("first-snapshot.png").display(),
            shots.join("final.png").display()
        );
    }

    // Every scrape parses; counters never go down; the final gauges equal the statistics.
    let Some(parsed) = parse_scrapes(&scrapes) else {
        return;
    };
    assert!(parsed.len() >= 3, "{} scrapes", parsed.len());
    for pair in parsed.windows(2) {
        for (key, before) in &pair[0] {
            // Counters, and every histogram sample (buckets, count, sum), only grow.
            if key.starts_with("counter:") || key.starts_with("histogram:") {
                if let Some(after) = pair[1].get(key) {
                    assert!(after >= before, "{key} went down: {before} → {after}");
                }
            }
        }
    }
    let last = parsed.last().unwrap();
    for r in &stats {
        let (Some(name), None) = (
            match r["metric"].as_str().unwrap() {
                "scr" => Some("c2s_scr"),
                "native_em" => Some("c2s_native_em"),
                "serial_em" => Some("c2s_serial_em"),
                _ => None,
            },
            r["length"].as_u64(),
        ) else {
            continue;
        };
        let labels = [
            ("model", r["model"].as_str().unwrap()),
            ("domain", r["domain"].as_str().unwrap()),
            ("comparison", r["comparison"].as_str().unwrap()),
        ];
        for (suffix, field) in [
            ("_ratio", "value"),
            ("_ci_lower_ratio", "ci_low"),
            ("_ci_upper_ratio", "ci_high"),
        ] {
            let key = sample("gauge", &format!("{name}{suffix}"), &labels);
            assert_eq!(last.get(&key).copied(), r[field].as_f64(), "{key}");
        }
    }
    let counter = |name: &str, labels: &[(&str, &str)]| {
        last.get(&sample("counter", name, labels))
            .copied()
            .unwrap_or_else(|| panic!("{name} {labels:?} missing"))
    };
    assert_eq!(
        counter("c2s_items_fed_total", &[]),
        9.0,
        "8 items and a malformed message"
    );
    assert_eq!(counter("c2s_items_finished_total", &[]), 8.0);
    assert_eq!(counter("c2s_records_rejected_total", &[]), 1.0);
    assert_eq!(
        counter("c2s_completed_total", &[("unit", "trajectory")]),
        16.0
    );
    assert!(counter("c2s_engine_requests_total", &[("outcome", "answered")]) > 0.0);
    assert!(
        counter(
            "c2s_parquet_parts_closed_total",
            &[("dataset", "trajectories")]
        ) >= 1.0
    );
    let committed: f64 = ["0", "1"]
        .iter()
        .map(|p| {
            last[&sample(
                "gauge",
                "c2s_kafka_committed_offset",
                &[("partition", p), ("topic", "items")],
            )]
        })
        .sum();
    assert_eq!(committed, 9.0, "every message committed");
    let lag: f64 = ["0", "1"]
        .iter()
        .map(|p| {
            last[&sample(
                "gauge",
                "c2s_kafka_consumer_lag_messages",
                &[("partition", p), ("topic", "items")],
            )]
        })
        .sum();
    assert_eq!(lag, 0.0);
    let latency = last[&sample("histogram", "c2s_engine_latency_seconds_count", &[])];
    assert_eq!(
        latency,
        counter("c2s_engine_requests_total", &[("outcome", "answered")]),
        "one latency per computed answer"
    );
    assert_eq!(
        last[&sample("gauge", "c2s_run_state", &[("state", "stopped")])],
        1.0
    );
}

/// `choice2seq view` serves finished runs of each kind with their own summaries, and
/// `/api/snapshot` of an item run is `choice2seq stats --json`.
#[test]
fn view_serves_finished_runs_of_all_three_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let root = repo_root();
    let items = write(
        dir.path(),
        "items.jsonl",
        &(bank_lines("arithmetic-dev.jsonl", 0, 6)
            .into_iter()
            .map(|(_, l)| l)
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"),
    );
    let item_cfg = write(
        dir.path(),
        "items.toml",
        &format!(
            "[model]\nengine = \"simulated\"\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n\
             [[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n\
             [stats]\nbootstrap_draws = 99\n",
            items.display().to_string()
        ),
    );
    let cases = write(
        dir.path(),
        "cases.jsonl",
        &(std::fs::read_to_string(root.join("data/banks/coverage-banking77.jsonl"))
            .unwrap()
            .lines()
            .take(2)
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"),
    );
    let coverage_cfg = write(
        dir.path(),
        "coverage.toml",
        &format!(
            "[model]\nengine = \"simulated\"\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n\
             [coverage]\ncatalogues = [{:?}]\nks = [2]\nfull_set = false\n",
            cases.display().to_string(),
            root.join("data/banks/coverage-banking77.catalogue.json")
                .display()
                .to_string()
        ),
    );
    let dialogues = write(
        dir.path(),
        "dialogues.jsonl",
        &(std::fs::read_to_string(root.join("data/banks/dialogue-synthetic.jsonl"))
            .unwrap()
            .lines()
            .take(2)
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"),
    );
    let dialogue_cfg = write(
        dir.path(),
        "dialogue.toml",
        &format!(
            "[model]\nengine = \"simulated\"\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n\
             [dialogue]\narms = [\"joint\"]\nmodes = [\"oracle\"]\n",
            dialogues.display().to_string()
        ),
    );
    let runs: Vec<(&str, PathBuf)> = [
        ("items", item_cfg),
        ("coverage", coverage_cfg),
        ("dialogue", dialogue_cfg),
    ]
    .into_iter()
    .map(|(kind, cfg)| {
        let run_dir = dir.path().join(kind);
        run_ok(&cfg, &run_dir);
        (kind, run_dir)
    })
    .collect();
    for (kind, run_dir) in &runs {
        let view = Process::start(&[
            "view",
            &run_dir.display().to_string(),
            "--serve",
            "127.0.0.1:0",
        ]);
        let addr = view.address();
        let state = http::get_json(&addr, "/api/state");
        assert_eq!(state["kind"], *kind, "{state:#}");
        assert_eq!(state["mode"], "view");
        assert_eq!(state["state"], "finished", "{state:#}");
        let snapshot: Value = http::get_json(&addr, "/api/snapshot");
        match *kind {
            "items" => {
                assert_eq!(
                    keyed(snapshot.as_array().unwrap().clone()),
                    keyed(stats_json(run_dir))
                );
                assert!(state["paired"]["rows"]
                    .as_array()
                    .is_some_and(|r| !r.is_empty()));
                let figures = http::get_json(&addr, "/api/figures");
                assert!(figures
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f["svg"].as_str().unwrap().starts_with("<svg")));
            }
            other => {
                let out = c2s_e2e::run(&[other, &run_dir.display().to_string(), "--json"]);
                let expected: Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(snapshot, expected, "{other}");
                assert!(state["summary_text"]
                    .as_str()
                    .is_some_and(|t| !t.is_empty()));
            }
        }
        let metrics = http::get(&addr, "/metrics");
        assert!(
            metrics.contains("c2s_view_runs{state=\"completed\"} 1"),
            "{metrics}"
        );
        assert_eq!(
            http::request(
                &addr,
                &format!("POST /api/state HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0")
            )
            .0,
            405
        );
    }
}

/// `GET /healthz` on a fresh connection: whether it was answered 200 (a full monitor closes
/// the connection instead).
fn healthz(addr: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    if s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut buf = String::new();
    let _ = s.read_to_string(&mut buf);
    buf.starts_with("HTTP/1.1 200")
}

/// Consumers of the live page that stop reading: 80 connections (more than the 64 the monitor
/// serves at once) ask for the snapshot while the run starts and never read a byte. The run
/// is not held up: it completes every trajectory; the monitor turns further clients away while
/// its slots are taken and answers again once the stalled connections time out, while the
/// stalled sockets are still open.
#[test]
fn stalled_consumers_hold_up_neither_the_run_nor_the_monitor_for_long() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let a = c2s_e2e::bank_head(dir.path(), "arithmetic-dev.jsonl", 4);
    let l = c2s_e2e::bank_head(dir.path(), "lexical-dev.jsonl", 4);
    let cfg = write(
        dir.path(),
        "stalled.toml",
        &format!(
            "[run]\nname = \"stalled\"\n\n[model]\npath = {:?}\nengine = \"prefix\"\n\n\
             [[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n\
             [[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n\
             [stats]\nbootstrap_draws = 99\nsnapshot_every = 1\n",
            model_path().display().to_string(),
            a.display().to_string(),
            l.display().to_string()
        ),
    );
    let run_dir = dir.path().join("run");
    let run = Process::serve_run(&cfg, &run_dir);
    let addr = run.address();
    let stalled_at = Instant::now();
    let stalled: Vec<std::net::TcpStream> = (0..80)
        .filter_map(|_| {
            let mut s = std::net::TcpStream::connect(&addr).ok()?;
            s.write_all(b"GET /api/snapshot HTTP/1.1\r\nHost: x\r\n\r\n")
                .ok()?;
            Some(s)
        })
        .collect();
    assert!(stalled.len() >= 64, "{} stalled connections", stalled.len());
    let turned_away = !healthz(&addr);
    // The run completes under them.
    let deadline = Instant::now() + WAIT;
    let completed = loop {
        let state = std::fs::read_to_string(run_dir.join("manifest.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|m| m["status"]["state"].as_str().map(str::to_string));
        if state.as_deref() == Some("completed") {
            break stalled_at.elapsed();
        }
        assert!(
            Instant::now() < deadline,
            "the run did not complete: {state:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    // The monitor serves again while the stalled sockets are still open.
    let answered = loop {
        if healthz(&addr) {
            break stalled_at.elapsed();
        }
        assert!(
            stalled_at.elapsed() < Duration::from_secs(120),
            "the monitor still turns clients away after 120 s"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    println!(
        "80 stalled consumers: further clients turned away at first: {turned_away}; the run completed after {completed:.1?}; /healthz answered again after {answered:.1?}"
    );
    let trajectories = c2s_sinks::read_trajectories(&run_dir.join("trajectories")).unwrap();
    assert_eq!(trajectories.len(), 16, "8 items × 2 arms");
    drop(stalled);
    run.signal("INT");
    assert!(run.wait().success());
}
