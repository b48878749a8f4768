//! Kafka faults with the real broker (tansu), its log in an S3 store that outlives it: the
//! broker killed (SIGKILL) mid-run and started again on the same port. The source resumes
//! where it was, nothing lost or read twice, offsets committed to the end, the consumer lag
//! shown on /metrics meanwhile; the `[output.kafka]` sink waits for the broker and publishes
//! every outcome.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use c2s_e2e::{binary, model_path, repo_root, write};
use c2s_sinks::{read_outcomes, read_trajectories};
use c2s_sources::{create_topic, produce, KafkaItemSource};
use c2s_testkit::read_topic;
use c2s_testkit::restart::RestartableBroker;

#[path = "serve/http.rs"]
#[allow(dead_code)]
mod http;

/// Longest wait for any one thing the run should get to.
const WAIT: Duration = Duration::from_secs(180);

/// `choice2seq run` in the background with a live monitor; stderr lines kept.
struct Run {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Run {
    fn start(cfg: &Path, run_dir: &Path) -> (Run, String) {
        let mut child = Command::new(binary())
            .args(["run", cfg.to_str().unwrap(), "--run-dir"])
            .arg(run_dir)
            .args(["--quiet", "--serve", "127.0.0.1:0"])
            .current_dir(repo_root())
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting choice2seq");
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let l = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                l.lock().unwrap().push(line.clone());
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + WAIT;
        let addr = loop {
            assert!(
                Instant::now() < deadline,
                "no monitor address: {:?}",
                log.lock()
            );
            if let Ok(line) = rx.recv_timeout(Duration::from_secs(1)) {
                if let Some(rest) = line.split("http://").nth(1) {
                    break rest.split('/').next().unwrap().to_string();
                }
            }
        };
        (Run { child, log }, addr)
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    fn stderr(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// SIGTERM (drain), then the exit code.
    fn stop(&mut self) -> Option<i32> {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = self.child.wait().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        status.code()
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Wait until `ready` holds while the run goes on.
fn wait_for(run: &mut Run, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !ready() {
        assert!(
            run.alive(),
            "the run ended before {what}:\n{}",
            run.stderr()
        );
        assert!(
            Instant::now() < deadline,
            "no {what} after {WAIT:?}:\n{}",
            run.stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The first `n` items of the arithmetic dev bank as (item id, JSON line).
fn items(n: usize) -> Vec<(String, String)> {
    let bank =
        std::fs::read_to_string(repo_root().join("data/banks/arithmetic-dev.jsonl")).unwrap();
    let out: Vec<(String, String)> = bank
        .lines()
        .take(n)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["item_id"].as_str().unwrap().to_string(), l.to_string())
        })
        .collect();
    assert_eq!(out.len(), n, "the bank has {n} items");
    out
}

fn payloads(items: &[(String, String)]) -> Vec<(Option<String>, String)> {
    items.iter().map(|(_, l)| (None, l.clone())).collect()
}

/// The group's committed offsets summed over the topic's partitions (a client of its own).
fn committed(brokers: &str, topic: &str, group: &str) -> Option<i64> {
    let source = KafkaItemSource::connect(brokers, topic, group, 0, 1).ok()?;
    Some(source.positions().values().sum())
}

/// Value of the metric `name` summed over its series in a /metrics text.
fn metric_sum(text: &str, name: &str) -> Option<f64> {
    let values: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']))
        .filter_map(|l| l.rsplit(' ').next()?.parse().ok())
        .collect();
    (!values.is_empty()).then(|| values.iter().sum())
}

/// Scrape `/metrics` every 200 ms until `stop`: (seconds since start, lag, kafka outage).
fn scrape(
    addr: String,
    t0: Instant,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Vec<(f64, f64, f64)>> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        while !stop.load(Ordering::SeqCst) {
            if let Ok((200, body)) =
                std::panic::catch_unwind(|| http::request(&addr, "GET /metrics HTTP/1.1"))
            {
                let lag = metric_sum(&body, "c2s_kafka_consumer_lag_messages").unwrap_or(-1.0);
                let outage = metric_sum(&body, "c2s_kafka_outage").unwrap_or(-1.0);
                out.push((t0.elapsed().as_secs_f64(), lag, outage));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        out
    })
}

/// The broker is killed (SIGKILL) once the run has durable outcomes, with items still in
/// flight (the real model), and started again on the same port 8 s later with its log intact;
/// the other half of the items is produced after. Every item gets exactly one trajectory per arm, the group's committed offsets reach
/// the number of items, and /metrics shows the outage and the lag meanwhile.
#[test]
fn the_source_resumes_after_a_broker_restart_with_nothing_lost_or_repeated() {
    let mut broker = RestartableBroker::start_new();
    let b = broker.addr.clone();
    create_topic(&b, "items", 2).expect("topic");
    let all = items(24);
    let (first, second) = all.split_at(12);
    produce(&b, "items", &payloads(first)).expect("produce");

    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "restart.toml",
        &format!(
            "[model]\npath = {:?}\nengine = \"prefix\"\n\n[[sources]]\nkind = \"kafka\"\n\
             brokers = \"{b}\"\ntopic = \"items\"\ngroup = \"restart\"\ncontinuous = true\n\n\
             [[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n\n\
             [inference]\nmax_active_items = 4\n\n[stats]\nbootstrap_draws = 99\n\n\
             [output]\npart_rows = 2\npart_seconds = 0.2\n",
            model_path().display().to_string()
        ),
    );
    let run_dir = dir.path().join("run");
    let (mut run, addr) = Run::start(&cfg, &run_dir);
    let stop = Arc::new(AtomicBool::new(false));
    let t0 = Instant::now();
    let scraper = scrape(addr, t0, stop.clone());
    let trajectories = || read_trajectories(&run_dir.join("trajectories")).map_or(0, |t| t.len());
    wait_for(&mut run, "4 durable trajectories", || trajectories() >= 4);
    let before = trajectories();

    broker.kill();
    let down = Instant::now();
    let killed_at = t0.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_secs(8));
    assert!(
        run.alive(),
        "the run survives the outage:\n{}",
        run.stderr()
    );
    broker.start();
    let outage = down.elapsed().as_secs_f64();
    produce(&b, "items", &payloads(second)).expect("produce after the restart");

    wait_for(&mut run, "48 durable trajectories", || trajectories() >= 48);
    wait_for(&mut run, "offsets committed to 24", || {
        committed(&b, "items", "restart") == Some(24)
    });
    let code = run.stop();
    stop.store(true, Ordering::SeqCst);
    let scrapes = scraper.join().unwrap();
    let stderr = run.stderr();
    assert_eq!(code, Some(0), "{stderr}");

    let rows = read_trajectories(&run_dir.join("trajectories")).unwrap();
    let mut per_item: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut duplicates = 0;
    for t in &rows {
        if !per_item
            .entry(t.item_id.clone())
            .or_default()
            .insert(t.arm.clone())
        {
            duplicates += 1;
        }
    }
    let produced: BTreeSet<String> = all.iter().map(|(id, _)| id.clone()).collect();
    let lost: Vec<&String> = produced
        .iter()
        .filter(|id| per_item.get(*id).is_none_or(|arms| arms.len() != 2))
        .collect();
    let outcomes = read_outcomes(&run_dir.join("outcomes")).unwrap();
    let outcome_ids: BTreeSet<&String> = outcomes.iter().map(|o| &o.item_id).collect();
    let committed_end = committed(&b, "items", "restart");
    let lag_during: Vec<f64> = scrapes
        .iter()
        .filter(|(t, ..)| *t >= killed_at)
        .map(|s| s.1)
        .collect();
    let outage_seen = scrapes.iter().any(|s| s.2 >= 1.0);
    let max_lag = lag_during.iter().copied().fold(0.0, f64::max);
    eprintln!(
        "broker restart: outage {outage:.1} s survived; {} items produced ({} before, {} after \
         the restart), {} trajectories ({before} durable at the kill), {} outcomes, \
         duplicates={duplicates}, lost={}, committed offsets at the end={committed_end:?}, \
         /metrics scrapes={} (kafka outage gauge seen on: {outage_seen}, lag values after the \
         kill: {:?})",
        all.len(),
        first.len(),
        second.len(),
        rows.len(),
        outcomes.len(),
        lost.len(),
        scrapes.len(),
        dedup(&lag_during),
    );
    print_outage_lines(&stderr);
    assert_eq!(duplicates, 0, "no item × arm twice");
    assert!(
        lost.is_empty(),
        "every produced item has both arms: {lost:?}"
    );
    assert_eq!(rows.len(), 48);
    assert_eq!(outcomes.len(), 24, "one outcome per item");
    assert_eq!(outcome_ids.len(), 24);
    assert_eq!(per_item.len(), 24, "no item the topic did not hold");
    assert_eq!(committed_end, Some(24));
    assert!(
        outage_seen,
        "c2s_kafka_outage was 1 during the outage: {scrapes:?}\n{stderr}"
    );
    assert!(max_lag > 0.0, "the consumer lag is shown after the kill");
    assert!(
        stderr.contains("Kafka broker unreachable") && stderr.contains("Kafka broker back"),
        "{stderr}"
    );
}

/// The run's log lines about the broker's outage.
fn print_outage_lines(stderr: &str) {
    for line in stderr.lines().filter(|l| l.contains("Kafka broker")) {
        eprintln!("  run log: {line}");
    }
}

/// Consecutive repeats removed.
fn dedup(values: &[f64]) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for &v in values {
        if out.last() != Some(&v) {
            out.push(v);
        }
    }
    out
}

/// `[output.kafka]` while the broker is down: the broker is killed once the first outcome is
/// durable, with the run still working (the real model), and started again 5 s later; every
/// outcome reaches the topic (a jsonl source, so only the sink depends on the broker).
/// Delivery is at least once: a message whose acknowledgement the kill lost is sent again,
/// so it may appear twice, and then both copies must be the same message.
#[test]
fn the_outcome_sink_waits_for_the_broker_and_publishes_every_outcome() {
    let mut broker = RestartableBroker::start_new();
    let b = broker.addr.clone();
    let dir = tempfile::tempdir().unwrap();
    let items = c2s_e2e::bank_head(dir.path(), "arithmetic-dev.jsonl", 16);
    let cfg = write(
        dir.path(),
        "publish.toml",
        &format!(
            "[model]\npath = {:?}\nengine = \"prefix\"\n\n[[sources]]\nkind = \"jsonl\"\n\
             path = {:?}\n\n[[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\n\
             support = \"Full\"\n\n[inference]\nmax_active_items = 4\n\n\
             [stats]\nbootstrap_draws = 99\n\n[output]\npart_rows = 1\npart_seconds = 0.2\n\n\
             [output.kafka]\nbrokers = \"{b}\"\noutcomes_topic = \"c2s-outcomes\"\n\
             metrics_topic = \"c2s-metrics\"\n",
            model_path().display().to_string(),
            items.display().to_string()
        ),
    );
    let run_dir = dir.path().join("run");
    let (mut run, _addr) = Run::start(&cfg, &run_dir);
    wait_for(&mut run, "a durable outcome", || {
        read_outcomes(&run_dir.join("outcomes")).is_ok_and(|o| !o.is_empty())
    });
    broker.kill();
    let done_at_kill = read_outcomes(&run_dir.join("outcomes")).map_or(0, |o| o.len());
    assert!(done_at_kill < 16, "the run is still working at the kill");
    let down = Instant::now();
    std::thread::sleep(Duration::from_secs(5));
    assert!(
        run.alive(),
        "the run waits for the broker:\n{}",
        run.stderr()
    );
    broker.start();
    let outage = down.elapsed().as_secs_f64();
    let status = run.child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let stderr = run.stderr();
    assert_eq!(status.code(), Some(0), "{stderr}");
    let outcomes = read_outcomes(&run_dir.join("outcomes")).unwrap();
    assert_eq!(outcomes.len(), 16);
    let published = read_topic(&b, "c2s-outcomes", 64, Duration::from_secs(10));
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    let mut first: BTreeMap<String, &Vec<u8>> = BTreeMap::new();
    for (key, payload) in &published {
        let key = key.clone().unwrap_or_default();
        *count.entry(key.clone()).or_default() += 1;
        let original = first.entry(key.clone()).or_insert(payload);
        assert_eq!(
            *original, payload,
            "a repeat of `{key}` is the same message"
        );
    }
    let duplicates: usize = count.values().map(|c| c - 1).sum();
    let lost = outcomes
        .iter()
        .filter(|o| !count.contains_key(&o.item_id))
        .count();
    eprintln!(
        "sink outage: {outage:.1} s; {done_at_kill} outcomes durable at the kill, {} written \
         in all, {} messages published, duplicates={duplicates}, lost={lost}",
        outcomes.len(),
        published.len()
    );
    print_outage_lines(&stderr);
    // Whether the publisher itself met the outage depends on when a part closed: librdkafka
    // queues what is produced meanwhile and delivers it on reconnection. What must hold either
    // way is every outcome in the topic once; an outage it did meet must also end.
    let met = stderr.contains("Kafka broker unreachable (publishing to `c2s-");
    eprintln!("the publisher met the outage: {met}");
    assert!(
        !met || stderr.contains("Kafka broker back"),
        "the publisher's outage ended: {stderr}"
    );
    assert_eq!(lost, 0, "every outcome published");
    assert_eq!(count.len(), 16, "one key per outcome: {count:?}");
    assert_eq!(published.len(), 16 + duplicates);
}

/// The source itself across a restart: the outage is on while the broker is down (found by
/// reading), ends once the broker answers again, and the records after the restart follow
/// the ones before with no gap and no repeat.
#[test]
fn the_source_sees_the_outage_and_reads_on_from_its_positions() {
    let mut broker = RestartableBroker::start_new();
    let b = broker.addr.clone();
    create_topic(&b, "items", 1).expect("topic");
    let all = items(6);
    produce(&b, "items", &payloads(&all[..3])).expect("produce");
    let mut source = KafkaItemSource::connect(&b, "items", "unit", 0, 1).expect("source");
    let mut offsets = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while offsets.len() < 3 && Instant::now() < deadline {
        for r in source.poll_batch(10, Duration::from_millis(200)) {
            offsets.push(r.kafka.unwrap().offset);
        }
    }
    assert_eq!(offsets, [0, 1, 2]);
    let outages = c2s_sources::kafka_outages();
    let (count0, seconds0) = (outages.count(), outages.total_seconds());
    broker.kill();
    let down = Instant::now();
    let mut seen_on = None;
    while down.elapsed() < Duration::from_secs(5) {
        let got = source.poll_batch(10, Duration::from_millis(200));
        assert!(got.is_empty(), "nothing to read while the broker is down");
        if outages.active() && seen_on.is_none() {
            seen_on = Some(down.elapsed());
        }
        if seen_on.is_some() {
            assert!(
                outages.active(),
                "the outage stays on while the broker is down"
            );
        }
    }
    let seen_on = seen_on.expect("the outage is found while the broker is down");
    broker.start();
    produce(&b, "items", &payloads(&all[3..])).expect("produce after the restart");
    let deadline = Instant::now() + Duration::from_secs(60);
    while offsets.len() < 6 && Instant::now() < deadline {
        for r in source.poll_batch(10, Duration::from_millis(200)) {
            offsets.push(r.kafka.unwrap().offset);
        }
    }
    let back = Instant::now();
    while outages.active() && back.elapsed() < Duration::from_secs(10) {
        source.poll_batch(10, Duration::from_millis(200));
    }
    eprintln!(
        "source: outage found {:.2} s after the kill, {} outage(s), {:.1} s in all; offsets read \
         {offsets:?}",
        seen_on.as_secs_f64(),
        outages.count() - count0,
        outages.total_seconds() - seconds0
    );
    assert!(!outages.active(), "the outage ends once the broker answers");
    assert_eq!(offsets, [0, 1, 2, 3, 4, 5], "no gap, no repeat");
    source.commit(&[(0, 6)]).expect("commit after the restart");
    assert_eq!(committed(&b, "items", "unit"), Some(6));
}
