//! Helpers of the end-to-end tests in `tests/tests/`: where the `choice2seq` binary and the
//! repository are.

// Test support: a failed unwrap fails the test that called it (the workspace denies
// unwrap and expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The repository root.
pub fn repo_root() -> PathBuf {
    std::path::PathBuf::from(
        // Cargo's runtime value first: a target directory shared with a checkout at another
        // path may hold this build with that path compiled in.
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .parent()
    .map(PathBuf::from)
    .unwrap_or_else(|| PathBuf::from("."))
}

/// The release binary beside this test executable (`scripts/test.sh` builds it first).
pub fn binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> → target/<profile>/choice2seq
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .map(PathBuf::from)
        .expect("target directory");
    let bin = dir.join("choice2seq");
    assert!(
        bin.exists(),
        "{} is missing: build it first with `cargo build --release --bins` (scripts/test.sh does)",
        bin.display()
    );
    bin
}

/// Run the binary with `args` from the repository root.
pub fn run(args: &[&str]) -> Output {
    Command::new(binary())
        .args(args)
        .current_dir(repo_root())
        .output()
        .expect("running choice2seq")
}

/// `choice2seq run CONFIG --run-dir RUN_DIR --quiet`.
pub fn run_config(config: &std::path::Path, run_dir: &std::path::Path) -> Output {
    run(&[
        "run",
        &config.display().to_string(),
        "--run-dir",
        &run_dir.display().to_string(),
        "--quiet",
    ])
}

/// [`run_config`], which must succeed; its standard output.
pub fn run_ok(config: &std::path::Path, run_dir: &std::path::Path) -> String {
    let out = run_config(config, run_dir);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stdout
}

/// Standard output and error as text.
pub fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Copy the part files of `datasets` from one run directory into another.
pub fn copy_datasets(from: &std::path::Path, to: &std::path::Path, datasets: &[&str]) {
    for d in datasets {
        std::fs::create_dir_all(to.join(d)).expect("creating a dataset directory");
        for e in std::fs::read_dir(from.join(d)).expect("reading a dataset directory") {
            let e = e.expect("a directory entry");
            std::fs::copy(e.path(), to.join(d).join(e.file_name())).expect("copying a part");
        }
    }
}

/// Write `text` to `dir/name` and return the path.
pub fn write(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("writing a test file");
    p
}

/// The first `n` lines of a committed bank, as a JSONL file in `dir`.
pub fn bank_head(dir: &std::path::Path, bank: &str, n: usize) -> PathBuf {
    let text = std::fs::read_to_string(repo_root().join("data/banks").join(bank)).expect("bank");
    let head: Vec<&str> = text.lines().take(n).collect();
    write(dir, bank, &(head.join("\n") + "\n"))
}

/// The default model's path (scripts/fetch-model.sh installs it).
pub fn model_path() -> PathBuf {
    let p = repo_root().join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        p.exists(),
        "{} missing: run scripts/fetch-model.sh (scripts/test.sh does)",
        p.display()
    );
    p
}

/// The fields of a metric row that a recomputation must reproduce (the snapshot number and
/// write time left out), as a sorted list of strings.
pub fn keyed(rows: impl IntoIterator<Item = serde_json::Value>) -> Vec<String> {
    let mut keys: Vec<String> = rows
        .into_iter()
        .map(|v| {
            format!(
                "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
                v["model"],
                v["domain"],
                v["length"],
                v["comparison"],
                v["metric"],
                v["value"],
                v["numerator"],
                v["denominator"],
                v["ci_low"],
                v["ci_high"],
                v["ci_method"]
            )
        })
        .collect();
    keys.sort();
    keys
}

/// The rows of the last metric snapshot a run wrote to `metrics/`, keyed.
pub fn live_final_snapshot(run_dir: &std::path::Path) -> Vec<String> {
    let metrics = c2s_sinks::read_metrics(&run_dir.join("metrics")).expect("reading metrics/");
    let last = metrics
        .iter()
        .map(|m| m.metric.snapshot)
        .max()
        .expect("at least one snapshot");
    keyed(
        metrics
            .into_iter()
            .filter(|m| m.metric.snapshot == last)
            .map(|m| serde_json::to_value(&m.metric).expect("a metric row as JSON")),
    )
}

/// `choice2seq stats DIR... --json`, keyed.
pub fn offline_stats(dirs: &[&std::path::Path]) -> Vec<String> {
    let mut args = vec!["stats".to_string()];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    args.push("--json".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&args);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout).expect("stats --json");
    keyed(rows)
}

/// The live final snapshot of `run_dir` equals `choice2seq stats` on it, row for row and bit
/// for bit.
pub fn assert_live_final_equals_offline(run_dir: &std::path::Path) {
    let live = live_final_snapshot(run_dir);
    let offline = offline_stats(&[run_dir]);
    let only_live: Vec<&String> = live.iter().filter(|k| !offline.contains(k)).collect();
    let only_offline: Vec<&String> = offline.iter().filter(|k| !live.contains(k)).collect();
    assert!(
        only_live.is_empty() && only_offline.is_empty(),
        "live only: {only_live:#?}\noffline only: {only_offline:#?}"
    );
    assert_eq!(live.len(), offline.len());
}

/// `prompts/` holds each distinct prompt of `requests/` exactly once, with its text.
pub fn assert_every_prompt_once(run_dir: &std::path::Path) {
    let prompts = c2s_sinks::read_prompts(&run_dir.join("prompts")).expect("reading prompts/");
    let keys: std::collections::BTreeSet<&String> =
        prompts.iter().map(|p| &p.prompt_sha256).collect();
    assert_eq!(keys.len(), prompts.len(), "a prompt written twice");
    assert!(
        prompts.iter().all(|p| p.prompt.is_some()),
        "a prompt without text"
    );
    let requests = c2s_sinks::read_requests(&run_dir.join("requests")).expect("reading requests/");
    let wanted: std::collections::BTreeSet<&String> =
        requests.iter().map(|r| &r.prompt_sha256).collect();
    assert_eq!(keys, wanted, "prompts/ and the requests' prompts differ");
}
