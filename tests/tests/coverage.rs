//! Candidate coverage end to end (`candidate-coverage-typed-decisions.txt`): the shipped smoke
//! config on the real model, the requests it makes, `choice2seq coverage` on the run, resume,
//! bad cases and bad configs.

use std::collections::BTreeMap;
use std::path::Path;

use c2s_e2e::{repo_root, run, run_config, run_ok, text, write};
use c2s_sinks::{read_decisions, read_rejects, read_requests, RequestRow};
use serde_json::Value;

fn options_of(r: &RequestRow) -> Vec<Value> {
    let v: Value = serde_json::from_str(&r.user).unwrap();
    v["options"].as_array().unwrap().clone()
}

/// The smoke config: 6 Banking77 cases × the k = 4 pair × 2 name variants × with and without
/// none (48), plus the 3 test cases' full set under both names without none (6): 54 scored
/// requests on SmolLM2.
#[test]
fn coverage_smoke_runs_with_the_real_model() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let config = repo_root().join("config/coverage-smoke.toml");
    run_ok(&config, &run_dir);
    let decisions = read_decisions(&run_dir.join("decisions")).unwrap();
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    assert_eq!(decisions.len(), 54);
    assert_eq!(requests.len(), 54);
    for d in &decisions {
        assert!(d.error.is_none(), "{d:?}");
        // Scores are an exact distribution over the offered names.
        assert!((d.prob_sum() - 1.0).abs() < 1e-9, "{}", d.prob_sum());
        assert_eq!(d.labels.len(), d.spec.k + usize::from(d.spec.with_none));
        // "None is always last".
        assert_eq!(
            d.labels.last().map(String::as_str) == Some("none"),
            d.spec.with_none
        );
        assert_eq!(d.labels.contains(&d.reference), d.spec.set.covered());
    }
    let full: Vec<_> = decisions
        .iter()
        .filter(|d| d.spec.set == c2s_records::SetKind::Full)
        .collect();
    assert_eq!(full.len(), 3 * 2);
    assert!(full.iter().all(|d| d.spec.k == 77
        && !d.spec.with_none
        && d.split == c2s_records::CoverageSplit::Test));
    // "Present/absent candidate sets have the same ordinary count" and differ only by the
    // reference label; "Natural and neutral names retain the same option descriptions and
    // order".
    let by_arm: BTreeMap<(String, String), &RequestRow> = requests
        .iter()
        .map(|r| ((r.item_id.clone(), r.arm.clone()), r))
        .collect();
    for ((case, arm), r) in &by_arm {
        if let Some(rest) = arm.strip_prefix("present/") {
            let a = by_arm[&(case.clone(), format!("absent/{rest}"))];
            let differing: Vec<usize> = (0..r.option_values.len())
                .filter(|&i| r.option_values[i] != a.option_values[i])
                .collect();
            assert_eq!(differing.len(), 1, "{case} {arm}");
            assert_eq!(r.instruction_of(), a.instruction_of());
        }
        if arm.contains("/natural/") {
            let n = by_arm[&(case.clone(), arm.replace("/natural/", "/neutral/"))];
            assert_eq!(r.option_values, n.option_values);
            let desc = |x: &RequestRow| {
                options_of(x)
                    .iter()
                    .map(|o| o["description"].as_str().unwrap().to_string())
                    .collect::<Vec<_>>()
            };
            assert_eq!(desc(r), desc(n));
            assert_ne!(r.option_codes, n.option_codes);
        }
    }
    // The metrics: one cell per names variant and subset at k = 4, and a threshold row per
    // rule.
    let out = run(&["coverage", &run_dir.display().to_string(), "--json"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let cells = v["cells"].as_array().unwrap();
    let all: Vec<&Value> = cells.iter().filter(|c| c["subset"] == "all").collect();
    assert_eq!(all.len(), 2, "{cells:?}");
    for c in &all {
        assert_eq!(c["k"], 4);
        assert_eq!(c["texts"], 3);
        assert_eq!(c["false_rejection"]["n"], 3);
        assert_eq!(c["detection"]["n"], 3);
        assert_eq!(c["acceptance"]["n"], 6);
    }
    assert_eq!(v["full_set"].as_array().unwrap().len(), 2);
    assert!(v["thresholds"].as_array().unwrap().len() >= 2 * 4);
    let audit = &v["audit"]["prob_sums"][0];
    assert_eq!(audit["decisions"], 54);
    assert_eq!(audit["deviating"], 0);
    // The tokenization replay: every prompt intact, recorded lengths reproduced, no two
    // names with the same tokens ("no option capping, span collisions, instruction
    // shortening, or state truncation").
    let out = run(&[
        "coverage",
        &run_dir.display().to_string(),
        "--json",
        "--tokens",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let a = &v["token_audit"][0];
    assert_eq!(a["requests"], 54);
    assert_eq!(a["length_mismatches"], 0, "{a}");
    assert_eq!(a["not_intact"], 0, "{a}");
    assert_eq!(a["collisions"], 0, "{a}");
    assert!(a["max_prompt_tokens"].as_u64().unwrap() > 1000, "{a}");
    // Resume: the same command again adds nothing and asks the model nothing.
    let stdout = run_ok(&config, &run_dir);
    assert_eq!(
        read_decisions(&run_dir.join("decisions")).unwrap().len(),
        54
    );
    assert_eq!(read_requests(&run_dir.join("requests")).unwrap().len(), 54);
    assert!(stdout.contains("decisions"), "{stdout}");
}

trait Instruction {
    fn instruction_of(&self) -> String;
}

impl Instruction for RequestRow {
    fn instruction_of(&self) -> String {
        let v: Value = serde_json::from_str(&self.user).unwrap();
        v["question"].as_str().unwrap().to_string()
    }
}

fn simulated_config(dir: &Path, cases: &Path, extra: &str) -> std::path::PathBuf {
    let root = repo_root();
    write(
        dir,
        "coverage.toml",
        &format!(
            r#"
[run]
name = "coverage-bad"

[model]
engine = "simulated"

[[sources]]
kind = "jsonl"
path = "{}"

[coverage]
catalogues = ["{}"]
ks = [2]
full_set = false
{extra}
"#,
            cases.display(),
            root.join("data/banks/coverage-banking77.catalogue.json")
                .display()
        ),
    )
}

/// Bad cases go to the run's rejects, naming the line, the case and the field; good cases run.
#[test]
fn bad_cases_are_rejected_with_their_field_and_good_ones_run() {
    let dir = tempfile::tempdir().unwrap();
    let bank =
        std::fs::read_to_string(repo_root().join("data/banks/coverage-banking77.jsonl")).unwrap();
    let good: Value = serde_json::from_str(bank.lines().next().unwrap()).unwrap();
    let mut absent_holds_reference = good.clone();
    absent_holds_reference["case_id"] = "bad:1".into();
    let reference = good["reference"].clone();
    absent_holds_reference["sets"][0]["absent"][0] = reference;
    let mut unknown_task = good.clone();
    unknown_task["case_id"] = "bad:2".into();
    unknown_task["task"] = "trec".into();
    let lines = [
        good.to_string(),
        absent_holds_reference.to_string(),
        unknown_task.to_string(),
        "{not json".to_string(),
        good.to_string(),
    ];
    let cases = write(dir.path(), "cases.jsonl", &(lines.join("\n") + "\n"));
    let config = simulated_config(dir.path(), &cases, "");
    let run_dir = dir.path().join("run");
    run_ok(&config, &run_dir);
    let decisions = read_decisions(&run_dir.join("decisions")).unwrap();
    // One good case × the k = 2 pair × 2 names × 2 none choices.
    assert_eq!(decisions.len(), 8);
    let rejects = read_rejects(&run_dir.join("rejects")).unwrap();
    assert_eq!(rejects.len(), 4, "{rejects:?}");
    let find = |line: usize| {
        rejects
            .iter()
            .find(|r| r.location.ends_with(&format!(":{line}")))
            .unwrap_or_else(|| panic!("no reject at line {line}: {rejects:?}"))
    };
    assert_eq!(find(2).item_id.as_deref(), Some("bad:1"));
    assert!(find(2).reason.contains("sets[0]"), "{}", find(2).reason);
    assert!(find(3).reason.contains("task"), "{}", find(3).reason);
    assert!(find(4).reason.contains("not a coverage case"));
    assert!(find(5).reason.contains("duplicate case_id"));
}

/// A bad [coverage] section stops before any work with exit 2, naming the field.
#[test]
fn bad_coverage_configs_stop_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let cases = write(dir.path(), "cases.jsonl", "");
    for (extra, field) in [
        ("names = [\"plain\"]", "coverage.names"),
        ("quantize_decimals = 9", "coverage.quantize_decimals"),
        ("none = [true, true]", "coverage.none"),
        ("max_false_rejection = 1.5", "coverage.max_false_rejection"),
        ("\n[[arms]]\narm = \"Native\"", "arms"),
    ] {
        let config = simulated_config(dir.path(), &cases, extra);
        let out = run_config(&config, &dir.path().join("run"));
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{extra}: {stdout}\n{stderr}");
        assert!(stderr.contains(field), "{extra}: {stderr}");
        assert!(!dir.path().join("run").exists());
    }
}
