//! The symbolic panels end to end with the real model: the COPY/REVERSE panel (A.5, B.4) and
//! the twelve-character crossed-factor panel (D.7), each on the first items of its frozen bank,
//! then `choice2seq contrasts` on the run.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use c2s_e2e::{repo_root, run, run_ok, text, write};
use c2s_sinks::{read_outcomes, read_requests, read_trajectories};
use serde_json::Value;

/// `config/panels/NAME.toml` on the first `items` items of its bank, 99 bootstrap draws.
fn smoke_config(dir: &Path, name: &str, items: usize) -> PathBuf {
    let text =
        std::fs::read_to_string(repo_root().join(format!("config/panels/{name}.toml"))).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("bootstrap_draws") {
            out.push_str("bootstrap_draws = 99\n");
            continue;
        }
        out.push_str(line);
        out.push('\n');
        if line.starts_with("path = \"data/banks/") {
            out.push_str(&format!("limit = {items}\n"));
        }
    }
    write(dir, &format!("{name}.toml"), &out)
}

fn contrasts_json(run_dir: &Path) -> Value {
    let out = run(&["contrasts", &run_dir.display().to_string(), "--json"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    serde_json::from_str(&stdout).unwrap()
}

/// D.7 on two sources (four presentations): "Each model makes 1,088 requests" over 64
/// presentations, i.e. 17 per presentation (Native 1, two-query arms 2 + 2, six-query arms
/// 6 + 6); the 26-letter arms offer 26 codes; fills use singleton unions only; the three factor
/// contrasts are formed over sources and share one Holm family.
#[test]
fn twelve_character_panel_runs_with_the_real_model() {
    let dir = tempfile::tempdir().unwrap();
    let config = smoke_config(dir.path(), "twelve-character", 4);
    let run_dir = dir.path().join("run");
    run_ok(&config, &run_dir);
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    assert_eq!(requests.len(), 4 * 17);
    for r in &requests {
        let state: Value = state_of(r);
        if r.arm.starts_with("Serial") {
            let expected = if r.arm.contains("/a-z") { 26 } else { 10 };
            assert_eq!(r.option_values.len(), expected, "{}", r.arm);
            assert!(state["candidates"].is_array() && state["problem"].is_string());
        }
    }
    let trajectories = read_trajectories(&run_dir.join("trajectories")).unwrap();
    assert_eq!(trajectories.len(), 4 * 5);
    for t in trajectories.iter().filter(|t| t.arm.starts_with("Serial")) {
        let queries = if t.arm.contains("query1,4,8,12") {
            6
        } else {
            2
        };
        assert_eq!(t.calls, queries, "{} {}", t.item_id, t.arm);
        assert_eq!(t.fills, 12 - queries);
        assert!(t.base_id.is_some() && t.placement.is_some());
    }
    let v = contrasts_json(&run_dir);
    let contrasts = v["contrasts"].as_array().unwrap();
    assert_eq!(contrasts.len(), 3);
    for c in contrasts {
        assert_eq!(c["units"].as_u64(), Some(2), "grouped by source: {c}");
        assert_eq!(c["family"].as_str(), Some("D.7 factors"));
        assert!(c["sign_p_holm"].as_f64().unwrap() >= c["sign_p"].as_f64().unwrap());
    }
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 8);
    for c in cells {
        assert_eq!(c["n"].as_u64(), Some(2), "{c}");
        assert!(c["native_correct"].as_u64().unwrap() <= 2);
    }
}

/// A.5 / B.4 on two bases (eight presentations): the four presentations of a base share their
/// candidates (under the bijection) and local order, each encoding offers ten local choices,
/// and the letter-minus-digit contrast averages both operations within each base.
#[test]
fn copy_reverse_panel_runs_with_the_real_model() {
    let dir = tempfile::tempdir().unwrap();
    let config = smoke_config(dir.path(), "copy-reverse", 8);
    let run_dir = dir.path().join("run");
    run_ok(&config, &run_dir);
    let trajectories = read_trajectories(&run_dir.join("trajectories")).unwrap();
    assert_eq!(trajectories.len(), 8 * 2);
    let bases: std::collections::BTreeSet<&str> = trajectories
        .iter()
        .filter_map(|t| t.base_id.as_deref())
        .collect();
    assert_eq!(bases.len(), 2);
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    for r in requests.iter().filter(|r| r.arm.starts_with("Serial")) {
        assert_eq!(r.option_values.len(), 10);
    }
    let v = contrasts_json(&run_dir);
    let contrasts = v["contrasts"].as_array().unwrap();
    assert_eq!(contrasts.len(), 2);
    for c in contrasts {
        assert_eq!(c["units"].as_u64(), Some(2), "{c}");
        let d = c["difference"].as_f64().unwrap();
        let (cm, rm) = (
            c["compared_mean"].as_f64().unwrap(),
            c["reference_mean"].as_f64().unwrap(),
        );
        assert!((d - (cm - rm)).abs() < 1e-12);
    }
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4);
    assert!(cells.iter().all(|c| c["n"].as_u64() == Some(2)));
    // The paired tables hold each encoding as its own domain.
    let stats = run(&["stats", &run_dir.display().to_string(), "--json"]);
    let rows: Value = serde_json::from_slice(&stats.stdout).unwrap();
    let domains: std::collections::BTreeSet<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["domain"].as_str())
        .collect();
    assert!(domains.contains("symbolic_digits") && domains.contains("symbolic_letters"));
}

/// The semantic bridge (A.5, B.4) on its first four fact records, both encodings: three
/// two-option Serial decisions per output, Native over the eight patterns, the record as the
/// unit shared by both encodings with matched option orders, and SCR per representation.
#[test]
fn semantic_bridge_panel_runs_with_the_real_model() {
    let dir = tempfile::tempdir().unwrap();
    let config = smoke_config(dir.path(), "semantic-bridge", 8);
    let run_dir = dir.path().join("run");
    run_ok(&config, &run_dir);
    let trajectories = read_trajectories(&run_dir.join("trajectories")).unwrap();
    assert_eq!(trajectories.len(), 8 * 2);
    let units: std::collections::BTreeSet<&str> = trajectories
        .iter()
        .filter_map(|t| t.base_id.as_deref())
        .collect();
    assert_eq!(units.len(), 4, "{units:?}");
    // A.6: "Semantic bases use gold pattern": trajectories and paired outcomes carry the
    // record's gold pattern, the bootstrap stratum (the binary target itself).
    for t in &trajectories {
        let p = t
            .pattern
            .as_deref()
            .expect("a semantic trajectory has its pattern");
        assert!(
            p.len() == 3 && p.chars().all(|c| c == '0' || c == '1'),
            "{p}"
        );
    }
    let outcomes = read_outcomes(&run_dir.join("outcomes")).unwrap();
    assert_eq!(outcomes.len(), 8);
    for o in &outcomes {
        let t = trajectories
            .iter()
            .find(|t| t.item_id == o.item_id)
            .unwrap();
        assert_eq!(o.pattern, t.pattern);
    }
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    let mut orders: std::collections::BTreeMap<(String, u32), Vec<Vec<String>>> =
        Default::default();
    for r in &requests {
        if r.arm.starts_with("Serial") {
            assert_eq!(r.option_values.len(), 2, "three two-option decisions");
            assert!(r.step >= 1 && r.step <= 3);
            // The binary order mapped 0 → n, 1 → y is the named order.
            let mapped: Vec<String> = r
                .option_values
                .iter()
                .map(|v| match v.as_str() {
                    "0" => "n".to_string(),
                    "1" => "y".to_string(),
                    other => other.to_string(),
                })
                .collect();
            let fact = r.item_id.split('-').take(2).collect::<Vec<_>>().join("-");
            orders.entry((fact, r.step)).or_default().push(mapped);
        } else {
            assert_eq!(r.option_values.len(), 8, "Native: the eight patterns");
        }
    }
    for ((fact, step), o) in &orders {
        assert!(
            o.windows(2).all(|w| w[0] == w[1]),
            "{fact} step {step}: {o:?}"
        );
    }
    let stats = run(&["stats", &run_dir.display().to_string(), "--json"]);
    let rows: Value = serde_json::from_slice(&stats.stdout).unwrap();
    let domains: std::collections::BTreeSet<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["domain"].as_str())
        .collect();
    assert!(domains.contains("semantic_binary") && domains.contains("semantic_named"));
    let v = contrasts_json(&run_dir);
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    assert!(cells.iter().all(|c| c["n"].as_u64() == Some(4)));
    // The committed bank is what `choice2seq bank semantic` writes.
    let out = run(&[
        "bank",
        "semantic",
        "--out",
        &dir.path().display().to_string(),
    ]);
    assert!(out.status.success(), "{}", text(&out).1);
    for f in ["semantic-bridge.jsonl", "semantic-provenance.json"] {
        assert_eq!(
            std::fs::read(dir.path().join(f)).unwrap(),
            std::fs::read(repo_root().join("data/banks").join(f)).unwrap(),
            "{f}"
        );
    }
}

/// The committed symbolic banks are what `choice2seq bank symbolic` writes.
#[test]
fn bank_symbolic_rebuilds_the_committed_banks() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&[
        "bank",
        "symbolic",
        "--out",
        &dir.path().display().to_string(),
    ]);
    assert!(out.status.success(), "{:?}", text(&out));
    for name in [
        "copy-reverse.jsonl",
        "twelve-character.jsonl",
        "binding-symbolic.jsonl",
        "symbolic-provenance.json",
    ] {
        let built = std::fs::read(dir.path().join(name)).unwrap();
        let committed = std::fs::read(repo_root().join("data/banks").join(name)).unwrap();
        assert!(built == committed, "{name}");
    }
}

/// The state text of a recorded request (the user JSON's `state`).
fn state_text(r: &c2s_sinks::RequestRow) -> String {
    let user: Value = serde_json::from_str(&r.user).unwrap();
    user["state"].as_str().unwrap().to_string()
}

fn state_of(r: &c2s_sinks::RequestRow) -> Value {
    serde_json::from_str(&state_text(r)).unwrap()
}

/// The report shows the declared cells and contrasts beside the paired tables (simulated
/// engine: the section's presence and rows, not the model).
#[test]
fn report_shows_the_declared_unit_contrasts() {
    let dir = tempfile::tempdir().unwrap();
    let config = smoke_config(dir.path(), "copy-reverse", 8);
    let simulated = std::fs::read_to_string(&config)
        .unwrap()
        .replace("[model]", "[model]\nengine = \"simulated\"");
    std::fs::write(&config, simulated).unwrap();
    let run_dir = dir.path().join("run");
    run_ok(&config, &run_dir);
    let out_dir = dir.path().join("report");
    let out = run(&[
        "report",
        &run_dir.display().to_string(),
        "--out",
        &out_dir.display().to_string(),
    ]);
    assert!(out.status.success(), "{:?}", text(&out));
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    let section = md
        .split("## Unit contrasts")
        .nth(1)
        .expect("a Unit contrasts section");
    for name in [
        "letter - digit, Serial EM",
        "letter - digit, Native EM",
        "digits copy",
        "letters reverse",
    ] {
        assert!(section.contains(name), "{name} in the report");
    }
}
