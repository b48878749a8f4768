//! The pipeline end to end through the binary: the real model on a small panel, bad input,
//! bad configs, kill -9 and resume, worker counts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use c2s_e2e::{
    assert_live_final_equals_offline, bank_head, binary, model_path, repo_root, run, run_config,
    run_ok, text, write,
};
use c2s_sinks::{read_metrics, read_outcomes, read_rejects, read_requests, read_trajectories};

fn config(model: &Path, sources: &[&Path], arms: &str, engine: &str, extra: &str) -> String {
    let mut s = format!(
        "[model]\npath = {:?}\nengine = \"{engine}\"\n\n",
        model.display().to_string()
    );
    for p in sources {
        s.push_str(&format!(
            "[[sources]]\nkind = \"jsonl\"\npath = {:?}\n\n",
            p.display().to_string()
        ));
    }
    s.push_str(arms);
    s.push('\n');
    s.push_str(extra);
    s
}

const NATIVE_SERIAL: &str =
    "[[arms]]\narm = \"Native\"\n\n[[arms]]\narm = \"Serial\"\nsupport = \"Full\"\n";

#[test]
fn quickstart_panel_with_the_real_model() {
    let dir = tempfile::tempdir().unwrap();
    let a = bank_head(dir.path(), "arithmetic-dev.jsonl", 2);
    let l = bank_head(dir.path(), "lexical-dev.jsonl", 2);
    let cfg = write(
        dir.path(),
        "run.toml",
        &config(
            &model_path(),
            &[&a, &l],
            NATIVE_SERIAL,
            "prefix",
            "[stats]\nbootstrap_draws = 199\n",
        ),
    );
    let run_dir = dir.path().join("run");
    let stdout = run_ok(&cfg, &run_dir);
    assert!(stdout.contains("trajectories/*.parquet"), "{stdout}");
    let trajectories = read_trajectories(&run_dir.join("trajectories")).unwrap();
    assert_eq!(trajectories.len(), 8, "4 items × 2 arms");
    let outcomes = read_outcomes(&run_dir.join("outcomes")).unwrap();
    assert_eq!(outcomes.len(), 4);
    for o in &outcomes {
        assert_eq!(o.comparison, "Native/code vs Serial/Full/code");
        assert!(
            o.model
                .starts_with("SmolLM2-135M-Instruct.Q4_1@b179c9523d0e"),
            "{}",
            o.model
        );
    }
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    let calls: u32 = trajectories.iter().map(|t| t.calls).sum();
    assert_eq!(
        requests.len() as u32,
        calls,
        "one request row per model call"
    );
    for r in &requests {
        let p = r.probabilities.as_ref().expect("scored");
        assert_eq!(p.len(), r.option_codes.len());
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-6);
        assert!(r.validity.is_some());
    }
    let metrics = read_metrics(&run_dir.join("metrics")).unwrap();
    let last = metrics.iter().map(|m| m.metric.snapshot).max().unwrap();
    let scr: Vec<_> = metrics
        .iter()
        .filter(|m| {
            m.metric.snapshot == last && m.metric.metric == "scr" && m.metric.length.is_none()
        })
        .collect();
    assert_eq!(scr.len(), 2, "SCR over all lengths for each domain");
    assert!(read_rejects(&run_dir.join("rejects")).unwrap().is_empty());
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["model"]["file_sha256"],
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    );
    // A repeated run of the same config on a fresh directory gives the same outcomes.
    let run2 = dir.path().join("run2");
    let out = run_config(&cfg, &run2);
    assert!(out.status.success());
    let key = |v: Vec<c2s_sinks::OutcomeRow>| -> BTreeSet<(String, bool, bool)> {
        v.into_iter()
            .map(|o| (o.item_id, o.native_correct, o.serial_correct))
            .collect()
    };
    assert_eq!(
        key(outcomes),
        key(read_outcomes(&run2.join("outcomes")).unwrap())
    );
}

#[test]
fn every_bad_item_class_goes_to_rejects_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let good = |id: &str| {
        format!(
            r#"{{"item_id":"{id}","domain":"arithmetic","problem":"What is 39 * 15?","target":"585","candidates":["585","589","385","389","485","489","685","689"]}}"#
        )
    };
    let lines = [
        good("ok-1"),
        "{not json".to_string(),
        good("ok-1"),
        r#"{"item_id":"few","domain":"arithmetic","problem":"p","target":"585","candidates":["585","589"]}"#.into(),
        r#"{"item_id":"uneq","domain":"arithmetic","problem":"p","target":"585","candidates":["585","589","385","389","485","489","685","6890"]}"#.into(),
        r#"{"item_id":"dup","domain":"arithmetic","problem":"p","target":"585","candidates":["585","585","385","389","485","489","685","689"]}"#.into(),
        r#"{"item_id":"nogold","domain":"arithmetic","problem":"p","target":"111","candidates":["585","589","385","389","485","489","685","689"]}"#.into(),
        r#"{"item_id":"ascii","domain":"lexical","problem":"a round fruit","target":"appl\u00e9","candidates":["appl\u00e9","angle","chair","crown","river","ratio","table","token"]}"#.into(),
        r#"{"item_id":"short","domain":"arithmetic","problem":"p","target":"58","candidates":["58","59","38","39","48","49","68","69"]}"#.into(),
        r#"{"item_id":"empty","domain":"arithmetic","problem":" ","target":"585","candidates":["585","589","385","389","485","489","685","689"]}"#.into(),
        r#"{"item_id":"dom","domain":"chemistry","problem":"p","target":"585","candidates":["585","589","385","389","485","489","685","689"]}"#.into(),
        good("ok-2"),
    ];
    let items = write(dir.path(), "items.jsonl", &(lines.join("\n") + "\n"));
    let cfg = write(
        dir.path(),
        "run.toml",
        &config(
            &model_path(),
            &[&items],
            "[[arms]]\narm = \"Native\"\n",
            "simulated",
            "",
        ),
    );
    let run_dir = dir.path().join("run");
    run_ok(&cfg, &run_dir);
    let rejects = read_rejects(&run_dir.join("rejects")).unwrap();
    let by_line: BTreeMap<String, (Option<String>, String)> = rejects
        .into_iter()
        .map(|r| {
            (
                r.location.rsplit(':').next().unwrap().to_string(),
                (r.item_id, r.reason),
            )
        })
        .collect();
    let expect = [
        ("2", None, "not valid JSON"),
        ("3", Some("ok-1"), "duplicate item_id"),
        ("4", Some("few"), "expected 8 candidates, found 2"),
        ("5", Some("uneq"), "unequal lengths"),
        ("6", Some("dup"), "duplicate candidate `585`"),
        (
            "7",
            Some("nogold"),
            "target `111` is not among the candidates",
        ),
        ("8", Some("ascii"), "non-ASCII text in target"),
        ("9", Some("short"), "length 2 out of range 3..=8"),
        ("10", Some("empty"), "empty problem"),
        ("11", Some("dom"), "unknown domain `chemistry`"),
    ];
    assert_eq!(by_line.len(), expect.len(), "{by_line:?}");
    for (line, id, reason) in expect {
        let (got_id, got_reason) = by_line
            .get(line)
            .unwrap_or_else(|| panic!("no reject for line {line}: {by_line:?}"));
        assert_eq!(got_id.as_deref(), id, "line {line}");
        assert!(got_reason.contains(reason), "line {line}: {got_reason}");
    }
    let ids: BTreeSet<String> = read_trajectories(&run_dir.join("trajectories"))
        .unwrap()
        .into_iter()
        .map(|t| t.item_id)
        .collect();
    assert_eq!(
        ids,
        BTreeSet::from(["ok-1".to_string(), "ok-2".to_string()])
    );
}

#[test]
fn bad_config_fields_stop_before_any_work_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let items = bank_head(dir.path(), "arithmetic-dev.jsonl", 1);
    let base = config(&model_path(), &[&items], NATIVE_SERIAL, "simulated", "");
    let cases = [
        (
            base.replace("support = \"Full\"", "support = \"Fulll\""),
            "arms[1].support",
        ),
        (
            base.replace("support = \"Full\"", "suport = \"Full\""),
            "suport",
        ),
        (
            base.replace(
                "arm = \"Serial\"",
                "arm = \"Independent\"\nsupport = \"TrieCall\"",
            )
            .replace("support = \"Full\"", ""),
            "arms[1]",
        ),
        (
            base.replace("engine = \"simulated\"", "engine = \"gpt\""),
            "model.engine",
        ),
        (format!("{base}\n[stats]\nlevel = 2.0\n"), "stats.level"),
        (
            format!("{base}\n[inference]\nmax_batch = 0\n"),
            "inference.max_batch",
        ),
        (
            base.replace(&items.display().to_string(), "/nonexistent.jsonl"),
            "sources[0].path",
        ),
        ("[model\n".to_string(), "bad.toml:1"),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let cfg = write(dir.path(), "bad.toml", text);
        let run_dir = dir.path().join(format!("run{i}"));
        let out = run_config(&cfg, &run_dir);
        let (_, stderr) = text_of(&out);
        assert_eq!(out.status.code(), Some(2), "case {i}: {stderr}");
        assert!(
            stderr.contains(needle),
            "case {i}: expected `{needle}` in {stderr}"
        );
        assert!(
            stderr.contains("bad.toml"),
            "case {i}: file named: {stderr}"
        );
        assert!(!run_dir.exists(), "case {i}: no work before validation");
    }
}

fn text_of(out: &std::process::Output) -> (String, String) {
    text(out)
}

#[test]
fn kill_9_then_resume_loses_and_repeats_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = bank_head(dir.path(), "arithmetic-dev.jsonl", 4);
    let l = bank_head(dir.path(), "lexical-dev.jsonl", 4);
    let cfg = write(
        dir.path(),
        "run.toml",
        &config(
            &model_path(),
            &[&a, &l],
            NATIVE_SERIAL,
            "prefix",
            "[inference]\nmax_active_items = 4\n\n[stats]\nbootstrap_draws = 99\n\n[output]\npart_rows = 1\npart_seconds = 0.2\n",
        ),
    );
    let run_dir = dir.path().join("run");
    let mut child = Command::new(binary())
        .args([
            "run",
            cfg.to_str().unwrap(),
            "--run-dir",
            run_dir.to_str().unwrap(),
            "--quiet",
        ])
        .current_dir(repo_root())
        .spawn()
        .unwrap();
    // Kill as soon as some trajectories are durable.
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let n = read_trajectories(&run_dir.join("trajectories"))
            .map(|t| t.len())
            .unwrap_or(0);
        if n >= 3 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it could be killed"
        );
        assert!(
            Instant::now() < deadline,
            "no trajectories after 10 minutes"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // SIGKILL: no chance to flush anything.
    child.kill().unwrap();
    child.wait().unwrap();
    let before = read_requests(&run_dir.join("requests")).unwrap();
    let before_keys: BTreeSet<String> = before.iter().map(|r| r.prompt_key.clone()).collect();
    let before_ids: BTreeSet<String> = before.iter().map(|r| r.request_id.clone()).collect();
    let out = run_config(&cfg, &run_dir);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("resuming"), "{stderr}");
    let trajectories = read_trajectories(&run_dir.join("trajectories")).unwrap();
    let keys: Vec<(String, String)> = trajectories
        .iter()
        .map(|t| (t.item_id.clone(), t.arm.clone()))
        .collect();
    let unique: BTreeSet<_> = keys.iter().cloned().collect();
    assert_eq!(keys.len(), unique.len(), "no duplicate (item_id, arm) rows");
    assert_eq!(unique.len(), 16, "8 items × 2 arms");
    let after = read_requests(&run_dir.join("requests")).unwrap();
    let ids: Vec<&String> = after.iter().map(|r| &r.request_id).collect();
    assert_eq!(
        ids.len(),
        ids.iter().collect::<BTreeSet<_>>().len(),
        "no duplicate request rows"
    );
    for r in after.iter().filter(|r| !before_ids.contains(&r.request_id)) {
        if before_keys.contains(&r.prompt_key) {
            assert!(
                r.cached,
                "request {} was computed again after the resume",
                r.request_id
            );
        }
    }
    let calls: u32 = trajectories.iter().map(|t| t.calls).sum();
    assert_eq!(after.len() as u32, calls);
    c2s_e2e::assert_every_prompt_once(&run_dir);
    assert_eq!(read_outcomes(&run_dir.join("outcomes")).unwrap().len(), 8);
    // The resumed run's statistics were seeded from what the killed run recorded: its final
    // snapshot covers all 8 items and equals the offline recomputation.
    assert_live_final_equals_offline(&run_dir);
    let live = c2s_e2e::live_final_snapshot(&run_dir);
    // Fields: model|domain|length|comparison|metric|value|numerator|denominator|…
    let items: u64 = live
        .iter()
        .map(|k| k.split('|').collect::<Vec<_>>())
        .filter(|f| f[2] == "null" && f[4] == "\"native_em\"")
        .map(|f| f[7].parse::<u64>().unwrap())
        .sum();
    assert_eq!(items, 8, "the final snapshot counts all 8 items: {live:#?}");
}

#[test]
fn worker_counts_do_not_change_outcomes_or_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let a = bank_head(dir.path(), "arithmetic-dev.jsonl", 12);
    let l = bank_head(dir.path(), "lexical-dev.jsonl", 12);
    let cfg = write(
        dir.path(),
        "run.toml",
        &config(
            &model_path(),
            &[&a, &l],
            NATIVE_SERIAL,
            "simulated",
            "[stats]\nbootstrap_draws = 499\n",
        ),
    );
    let mut results = Vec::new();
    for workers in ["1", "2"] {
        let run_dir = dir.path().join(format!("run-w{workers}"));
        let out = run(&[
            "run",
            cfg.to_str().unwrap(),
            "--run-dir",
            run_dir.to_str().unwrap(),
            "-w",
            workers,
            "--quiet",
        ]);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{stdout}\n{stderr}");
        let outcomes: BTreeSet<(String, bool, bool)> = read_outcomes(&run_dir.join("outcomes"))
            .unwrap()
            .into_iter()
            .map(|o| (o.item_id, o.native_correct, o.serial_correct))
            .collect();
        let metrics = read_metrics(&run_dir.join("metrics")).unwrap();
        let last = metrics.iter().map(|m| m.metric.snapshot).max().unwrap();
        let mut finals: Vec<String> = metrics
            .into_iter()
            .filter(|m| m.metric.snapshot == last)
            .map(|m| {
                let m = m.metric;
                format!(
                    "{}|{}|{:?}|{}|{:?}|{:?}|{:?}",
                    m.domain_str(),
                    m.comparison,
                    m.length,
                    m.metric,
                    m.value,
                    m.ci_low,
                    m.ci_high
                )
            })
            .collect();
        finals.sort();
        results.push((outcomes, finals));
    }
    assert_eq!(results[0].0.len(), 24);
    assert_eq!(
        results[0].0, results[1].0,
        "same outcomes with 1 and 2 workers"
    );
    assert_eq!(
        results[0].1, results[1].1,
        "same final metrics (intervals included) with 1 and 2 workers"
    );
}

/// A run directory resumes only with the model that produced it: recorded answers would
/// otherwise stand in for another model's.
#[test]
fn resuming_with_another_model_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let items = bank_head(dir.path(), "arithmetic-dev.jsonl", 2);
    let simulated = config(&model_path(), &[&items], NATIVE_SERIAL, "simulated", "");
    let cfg = write(dir.path(), "simulated.toml", &simulated);
    let run_dir = dir.path().join("run");
    run_ok(&cfg, &run_dir);
    let before = read_requests(&run_dir.join("requests")).unwrap().len();
    let manifest = std::fs::read_to_string(run_dir.join("manifest.json")).unwrap();
    let other = write(
        dir.path(),
        "real.toml",
        &simulated.replace("engine = \"simulated\"", "engine = \"prefix\""),
    );
    let out = run_config(&other, &run_dir);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(stderr.contains("another model"), "{stderr}");
    assert!(stderr.contains("file_sha256"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(run_dir.join("manifest.json")).unwrap(),
        manifest,
        "the manifest is untouched"
    );
    assert_eq!(
        read_requests(&run_dir.join("requests")).unwrap().len(),
        before
    );
    // The same model resumes (nothing left to do).
    run_ok(&cfg, &run_dir);
}

/// A cluster: the same config as one process and as two processes on localhost (`-n 2 -p 0/1
/// -h hosts`, the real model) gives identical outcomes and final metrics. The two processes
/// share one run directory: one manifest (process 0's), parts named by global worker index,
/// each process feeding only its share of the file sources.
#[test]
fn two_processes_equal_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let a = bank_head(dir.path(), "arithmetic-dev.jsonl", 3);
    let l = bank_head(dir.path(), "lexical-dev.jsonl", 3);
    let cfg = write(
        dir.path(),
        "run.toml",
        &config(
            &model_path(),
            &[&a, &l],
            NATIVE_SERIAL,
            "prefix",
            "[stats]\nbootstrap_draws = 199\n",
        ),
    );
    let one = dir.path().join("one");
    run_ok(&cfg, &one);

    // Two free local ports for the processes' rendezvous.
    let ports: Vec<u16> = (0..2)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect::<Vec<_>>()
        .iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect();
    let hosts = write(
        dir.path(),
        "hosts",
        &format!("127.0.0.1:{}\n127.0.0.1:{}\n", ports[0], ports[1]),
    );
    let two = dir.path().join("two");
    let children: Vec<std::process::Child> = (0..2)
        .map(|p| {
            Command::new(binary())
                .args([
                    "run",
                    cfg.to_str().unwrap(),
                    "--run-dir",
                    two.to_str().unwrap(),
                    "--quiet",
                    "-n",
                    "2",
                    "-p",
                    &p.to_string(),
                    "-h",
                    hosts.to_str().unwrap(),
                ])
                .current_dir(repo_root())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (p, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "process {p}: {stdout}\n{stderr}");
    }
    let outcomes = |d: &Path| -> BTreeSet<(String, String, bool, bool)> {
        read_outcomes(&d.join("outcomes"))
            .unwrap()
            .into_iter()
            .map(|o| (o.item_id, o.comparison, o.native_correct, o.serial_correct))
            .collect()
    };
    assert_eq!(outcomes(&one).len(), 6);
    assert_eq!(outcomes(&one), outcomes(&two));
    // Both processes wrote parts into the one directory; trajectories are not repeated.
    let parts: BTreeSet<String> = std::fs::read_dir(two.join("trajectories"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".parquet"))
        .collect();
    assert!(parts.iter().any(|n| n.starts_with("part-w0-")), "{parts:?}");
    assert!(parts.iter().any(|n| n.starts_with("part-w1-")), "{parts:?}");
    assert_eq!(
        read_trajectories(&two.join("trajectories")).unwrap().len(),
        12
    );
    assert!(two.join("manifest.json").exists());
    // A prompt goes to the process that owns its key: written once over both.
    c2s_e2e::assert_every_prompt_once(&two);
    assert_eq!(
        c2s_e2e::live_final_snapshot(&one),
        c2s_e2e::live_final_snapshot(&two),
        "same final metrics with one and two processes"
    );
    assert_live_final_equals_offline(&two);
}

/// `[run] duplicate_id_window`: by default a repeated item id is rejected however far apart;
/// with a window of 1 only an immediate repeat is, and the run goes on with the repeat.
#[test]
fn duplicate_id_window_bounds_the_duplicate_check() {
    let dir = tempfile::tempdir().unwrap();
    let bank =
        std::fs::read_to_string(repo_root().join("data/banks/arithmetic-dev.jsonl")).unwrap();
    let lines: Vec<&str> = bank.lines().take(2).collect();
    // A, B, A: the repeat of A is two ids later.
    let items = write(
        dir.path(),
        "items.jsonl",
        &format!("{}\n{}\n{}\n", lines[0], lines[1], lines[0]),
    );
    for (window, rejected) in [(0usize, 1usize), (1, 0)] {
        let cfg = write(
            dir.path(),
            &format!("w{window}.toml"),
            &config(
                &model_path(),
                &[&items],
                "[[arms]]\narm = \"Native\"\n",
                "simulated",
                "",
            )
            .replacen(
                "[model]",
                &format!("[run]\nduplicate_id_window = {window}\n\n[model]"),
                1,
            ),
        );
        let run_dir = dir.path().join(format!("run-w{window}"));
        run_ok(&cfg, &run_dir);
        let rejects = read_rejects(&run_dir.join("rejects")).unwrap();
        assert_eq!(rejects.len(), rejected, "window {window}: {rejects:?}");
        if rejected == 1 {
            assert!(rejects[0].reason.contains("duplicate item_id"));
        }
    }
}
