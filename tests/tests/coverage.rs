//! Candidate coverage end to end (`candidate-coverage-typed-decisions.txt`): the shipped smoke
//! config on the real model, the requests it makes, `choice2seq coverage` on the run, resume,
//! bad cases and bad configs.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use c2s_e2e::{model_path, repo_root, run, run_config, run_ok, text, write};
use c2s_protocol::coverage::QUESTION;
use c2s_records::CoverageCatalogue;
use c2s_sinks::{read_decisions, read_rejects, read_requests, RequestRow};
use serde_json::Value;

fn catalogue(task: &str) -> CoverageCatalogue {
    let path = repo_root().join(format!("data/banks/coverage-{task}.catalogue.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn plan_audit(run_dir: &Path) -> Value {
    let text = std::fs::read_to_string(run_dir.join("coverage_plan_audit.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Softmax of natural-log scores.
fn softmax(x: &[f64]) -> Vec<f64> {
    let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = x.iter().map(|v| (v - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|v| v / s).collect()
}

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
    // No catalogue metadata but the options' names and descriptions reaches a request: the
    // catalogue's text kind ("customer-service messages to a bank") once did.
    let cat = catalogue("banking77");
    for r in &requests {
        assert!(!r.user.contains(&cat.text_kind), "{}", r.user);
        assert!(!r.user.contains(&cat.source), "{}", r.user);
        assert_eq!(r.instruction_of(), QUESTION);
        // The engine's raw log-likelihoods are kept, per option and per token.
        let lp = r.option_logprobs.as_ref().expect("option_logprobs");
        let counts = r.option_token_counts.as_ref().expect("option_token_counts");
        assert_eq!(lp.len(), r.option_codes.len());
        assert_eq!(counts.len(), r.option_codes.len());
        assert_eq!(
            r.option_token_logprobs.as_ref().unwrap().len() as u32,
            counts.iter().sum::<u32>()
        );
        for (p, q) in softmax(lp).iter().zip(r.probabilities.as_ref().unwrap()) {
            assert!((p - q).abs() < 1e-9, "{p} {q}");
        }
    }
    // The plan audit, written before the run: the smoke plan's totals and clean checks.
    let plan = plan_audit(&run_dir);
    assert_eq!(plan["cases"], 6);
    assert_eq!(plan["requests"], 54);
    assert_eq!(plan["pairs"], 6 * 2 * 2);
    assert_eq!(plan["test_requests"], 3 * 10);
    for check in [
        "name_variant_mismatches",
        "pair_mismatches",
        "none_not_last",
        "metadata_leaks",
        "duplicate_texts",
    ] {
        assert_eq!(plan["checks"][check], 0, "{check}: {plan}");
    }
    assert_eq!(plan["document"][0]["value"], 889);
    for d in &decisions {
        assert!(d.error.is_none(), "{d:?}");
        let raw = d.raw.as_ref().expect("raw scores");
        assert!(raw.aligned(d.labels.len()));
        assert_eq!(d.task_labels, Some(77));
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
    for c in &all {
        // Error among accepted, pooled and named apart on present and absent sets.
        let (p, a, pooled) = (
            &c["error_among_accepted_present"],
            &c["error_among_accepted_absent"],
            &c["error_among_accepted"],
        );
        assert_eq!(
            p["n"].as_u64().unwrap() + a["n"].as_u64().unwrap(),
            pooled["n"]
        );
        assert_eq!(
            a["successes"], a["n"],
            "every accepted absent set is an error"
        );
    }
    assert_eq!(v["full_set"].as_array().unwrap().len(), 2);
    // Thresholds tested on all test texts and both subsets: 5 rules × 2 names × 3 subsets.
    assert_eq!(v["thresholds"].as_array().unwrap().len(), 5 * 2 * 3);
    let audit = &v["audit"]["prob_sums"][0];
    assert_eq!(audit["decisions"], 54);
    assert_eq!(audit["deviating"], 0);
    assert_eq!(audit["with_raw_scores"], 54);
    assert_eq!(audit["choice_not_raw_argmax"], 0);
    // Both sets of every pair were scored under the same closing rule.
    let pairs = &v["audit"]["pair_closing"][0];
    assert_eq!(pairs["pairs"], 24);
    assert_eq!(pairs["mismatched"], 0);
    // How often another scoring rule changes the choice: both other rules, every decision.
    let changes = v["audit"]["rule_changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2);
    assert!(changes.iter().all(|r| r["decisions"] == 54));
    assert!(v["audit"]["largest_renormalization_change"].is_object());
    assert_eq!(v["partial"], false);
    assert_eq!(v["plan_audit"][0]["audit"]["cases"], 6);
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
    assert_eq!(a["options_capped"], 0, "{a}");
    assert_eq!(a["token_count_mismatches"], 0, "{a}");
    assert!(a["max_prompt_tokens"].as_u64().unwrap() > 1000, "{a}");
    // The whole metrics under another rule, from the stored token log-probabilities.
    let out = run(&[
        "coverage",
        &run_dir.display().to_string(),
        "--json",
        "--scoring",
        "mean_per_token",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let m: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(m["audit"]["rule_changes"][0]["recorded"], "mean_per_token");
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
    // Two `ks` keys would be a TOML error: the default applies only when `extra` sets none.
    let ks = if extra.contains("ks =") {
        ""
    } else {
        "ks = [2]"
    };
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
{ks}
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

/// The pair's closing rule with the real model: `todo_list` prefixes `todo_list_update`, so a
/// present set offering both is closed with the end token; its absent twin (the reference
/// replaced by `weather`) has no prefix of its own, and is closed too, because the pair's
/// names are closed together. The shared option `todo_list` gets the same tokens in both.
#[test]
fn a_pair_is_closed_together_when_only_one_set_has_a_prefixing_name() {
    let dir = tempfile::tempdir().unwrap();
    let case = serde_json::json!({
        "case_id": "clinc150:test:9999",
        "task": "clinc150",
        "split": "test",
        "text": "put buy milk on my todo list",
        "reference": "todo_list_update",
        "sets": [{
            "k": 2,
            "present": ["todo_list_update", "todo_list"],
            "absent": ["weather", "todo_list"],
        }],
    });
    let cases = write(dir.path(), "cases.jsonl", &format!("{case}\n"));
    let config = write(
        dir.path(),
        "pair.toml",
        &format!(
            r#"
[run]
name = "coverage-pair"

[model]
path = "{}"

[[sources]]
kind = "jsonl"
path = "{}"

[coverage]
catalogues = ["{}"]
ks = [2]
names = ["natural"]
none = [false]
full_set = false
"#,
            model_path().display(),
            cases.display(),
            repo_root()
                .join("data/banks/coverage-clinc150.catalogue.json")
                .display()
        ),
    );
    let run_dir = dir.path().join("run");
    run_ok(&config, &run_dir);
    let decisions = read_decisions(&run_dir.join("decisions")).unwrap();
    assert_eq!(decisions.len(), 2);
    let counts = |set: c2s_records::SetKind| {
        let d = decisions.iter().find(|d| d.spec.set == set).unwrap();
        let raw = d.raw.as_ref().unwrap();
        d.labels
            .iter()
            .cloned()
            .zip(raw.token_logprobs.iter().map(Vec::len))
            .collect::<BTreeMap<String, usize>>()
    };
    let present = counts(c2s_records::SetKind::Present);
    let absent = counts(c2s_records::SetKind::Absent);
    assert_eq!(
        present["todo_list"], absent["todo_list"],
        "{present:?} {absent:?}"
    );
    let out = run(&[
        "coverage",
        &run_dir.display().to_string(),
        "--json",
        "--tokens",
        "--draws",
        "10",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let a = &v["token_audit"][0];
    // Both requests closed; the absent one only because of its pair.
    assert_eq!(a["closed_with_end_token"], 2, "{a}");
    assert_eq!(a["closed_by_the_pair_only"], 1, "{a}");
    assert_eq!(a["token_count_mismatches"], 0, "{a}");
    assert_eq!(v["audit"]["pair_closing"][0]["mismatched"], 0);
}

fn simulated_run(dir: &Path, cases: &[Value], extra: &str) -> std::path::PathBuf {
    let lines: Vec<String> = cases.iter().map(Value::to_string).collect();
    let file = write(dir, "cases.jsonl", &(lines.join("\n") + "\n"));
    let config = simulated_config(dir, &file, extra);
    let run_dir = dir.join("run");
    run_ok(&config, &run_dir);
    run_dir
}

/// The first `n` test cases of the Banking77 bank.
fn bank_cases(n: usize) -> Vec<Value> {
    let bank =
        std::fs::read_to_string(repo_root().join("data/banks/coverage-banking77.jsonl")).unwrap();
    bank.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|c| c["split"] == "test")
        .take(n)
        .collect()
}

/// "Validation rejects incomplete collections and duplicate predictions": `choice2seq
/// coverage` refuses a collection that lacks planned decisions, naming case and cell, unless
/// --allow-incomplete (then the figures are marked partial); duplicate decisions are refused
/// always.
#[test]
fn incomplete_collections_and_duplicates_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = simulated_run(dir.path(), &bank_cases(1), "");
    let coverage = |extra: &[&str]| {
        let mut args = vec!["coverage".to_string(), run_dir.display().to_string()];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run(&args)
    };
    assert!(coverage(&["--draws", "10"]).status.success());
    // A planned case without decisions: an interrupted run.
    let path = run_dir.join("coverage_plan_audit.json");
    let mut plan: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut group = plan["planned"][0].clone();
    group["cases"] = serde_json::json!(["banking77:test:9999"]);
    plan["planned"].as_array_mut().unwrap().push(group);
    std::fs::write(&path, plan.to_string()).unwrap();
    let out = coverage(&["--draws", "10"]);
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}");
    assert!(stderr.contains("incomplete collection"), "{stderr}");
    assert!(
        stderr.contains("case banking77:test:9999 cell banking77 present/k2/natural/plain"),
        "{stderr}"
    );
    assert!(stderr.contains("--allow-incomplete"), "{stderr}");
    let out = coverage(&["--draws", "10", "--allow-incomplete", "--json"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["partial"], true);
    assert_eq!(v["incomplete"].as_array().unwrap().len(), 8);
    let out = coverage(&["--draws", "10", "--allow-incomplete"]);
    assert!(text(&out).0.starts_with("PARTIAL"), "{}", text(&out).0);
    // The same decisions twice: a duplicate prediction, named.
    let out = run(&[
        "coverage",
        &run_dir.display().to_string(),
        &run_dir.display().to_string(),
        "--allow-incomplete",
    ]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("duplicate decision: case"), "{stderr}");
    let parts: Vec<_> = std::fs::read_dir(run_dir.join("decisions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    std::fs::copy(&parts[0], run_dir.join("decisions/part-w0-000099.parquet")).unwrap();
    let out = coverage(&["--allow-incomplete"]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("is answered twice"), "{stderr}");
}

/// `ks = ["all_but_reference"]` runs the pair of size L − 1 (76 of Banking77's 77 labels):
/// the absent set is every label but the reference; the cell is marked. A named scoring rule
/// is recorded with every decision.
#[test]
fn all_but_reference_and_a_named_scoring_rule_run() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = simulated_run(
        dir.path(),
        &bank_cases(2),
        "ks = [\"all_but_reference\"]\nnames = [\"neutral\"]\nnone = [true]\nscoring = \"first_token\"",
    );
    let decisions = read_decisions(&run_dir.join("decisions")).unwrap();
    assert_eq!(decisions.len(), 2 * 2);
    for d in &decisions {
        assert_eq!(d.spec.k, 76);
        assert!(d.all_but_reference());
        assert_eq!(d.scoring, c2s_records::ScoringRule::FirstToken);
        if d.spec.set == c2s_records::SetKind::Absent {
            let mut labels = d.labels.clone();
            labels.push(d.reference.clone());
            labels.sort();
            labels.dedup();
            assert_eq!(labels.len(), 78, "every label, the reference and none");
        }
    }
    let out = run(&[
        "coverage",
        &run_dir.display().to_string(),
        "--json",
        "--draws",
        "10",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["cells"][0]["all_but_reference"], true);
    assert_eq!(v["plan_audit"][0]["audit"]["tasks"][0]["ks"][0], 76);
    let out = run(&["coverage", &run_dir.display().to_string(), "--draws", "10"]);
    assert!(
        text(&out).0.contains("k=76 (all but reference)"),
        "{}",
        text(&out).0
    );
}
