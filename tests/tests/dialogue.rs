//! Dialogue-state fields end to end (Appendix C): the shipped smoke config on the real model,
//! the requests it makes, `choice2seq dialogue` on the run, resume, the generated (strict
//! JSON) contract, bad dialogues and bad configs.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use c2s_e2e::{repo_root, run, run_config, run_ok, text, write};
use c2s_records::{DialogueArm, DialogueContract, PriorMode};
use c2s_sinks::{read_field_turns, read_rejects, read_requests};
use serde_json::Value;

fn user(r: &c2s_sinks::RequestRow) -> Value {
    serde_json::from_str(&r.user).unwrap()
}

/// The smoke config: a four-turn Restaurants dialogue (two fields) and its paraphrase, under
/// 3 arms × 3 prior-state modes, scored: 2 dialogues × 9 runs × 4 turns × 2 fields = 144
/// rows.
#[test]
fn dialogue_smoke_runs_with_the_real_model() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let config = repo_root().join("config/dialogue-smoke.toml");
    run_ok(&config, &run_dir);
    let rows = read_field_turns(&run_dir.join("dialogue_turns")).unwrap();
    assert_eq!(rows.len(), 144);
    let keys: BTreeSet<_> = rows
        .iter()
        .map(|r| (&r.dialogue_id, r.spec.label(), r.turn, &r.field))
        .collect();
    assert_eq!(
        keys.len(),
        144,
        "one row per dialogue, spec, turn and field"
    );
    for r in &rows {
        assert!(r.error.is_none() && r.failure.is_none(), "{r:?}");
        // Scored typed decisions: an exact distribution over the field's legal values.
        let sum: f64 = r.probabilities.iter().sum();
        assert!((sum - 1.0).abs() < 1e-9, "{sum}");
        assert_eq!(r.probabilities.len(), r.legal_values.len());
        assert!(r.legal_values.contains(r.predicted.as_ref().unwrap()));
        assert_eq!(r.correct, r.predicted.as_deref() == Some(r.gold.as_str()));
        assert_eq!(r.spec.contract, DialogueContract::Scored);
    }
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    // Joint asks every field in one request; Independent and Serial one field each; Serial
    // also shows the turn's earlier predictions (E.4).
    for r in &requests {
        let u = user(r);
        let keys: Vec<&String> = u.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["state", "field_queries", "response_format"]);
        let n = u["field_queries"].as_array().unwrap().len();
        let state = u["state"].as_object().unwrap();
        if r.arm.starts_with("joint/") {
            assert_eq!(n, 2, "{}", r.arm);
        } else {
            assert_eq!(n, 1, "{}", r.arm);
        }
        assert_eq!(
            state.contains_key("partial_current_state"),
            r.arm.starts_with("serial/")
        );
        assert_eq!(
            state.contains_key("prior_state"),
            !r.arm.contains("/history_recompute/")
        );
        assert!(u["field_queries"][0]["query"]
            .as_str()
            .unwrap()
            .starts_with(c2s_protocol::dialogue::FIELD_INSTRUCTION));
    }
    // Oracle and Rollout see the same first turn: identical wire inputs share one response.
    let by_key: BTreeMap<(String, u32, String, String), &c2s_records::FieldTurn> = rows
        .iter()
        .map(|r| {
            (
                (
                    r.dialogue_id.clone(),
                    r.turn,
                    r.field.clone(),
                    r.spec.label(),
                ),
                r,
            )
        })
        .collect();
    for r in rows
        .iter()
        .filter(|r| r.turn == 1 && r.spec.mode == PriorMode::Oracle)
    {
        let rollout = by_key[&(
            r.dialogue_id.clone(),
            1,
            r.field.clone(),
            r.spec.label().replace("/oracle/", "/rollout/"),
        )];
        assert_eq!(r.prompt_key, rollout.prompt_key);
        assert_eq!(r.probabilities, rollout.probabilities);
    }
    // The paraphrase keeps the gold states of its base.
    for r in rows.iter().filter(|r| r.perturbation.is_some()) {
        let base = by_key[&(
            r.base_dialogue_id.clone(),
            r.turn,
            r.field.clone(),
            r.spec.label(),
        )];
        assert_eq!(r.gold, base.gold);
    }
    // The summary: one row per spec, retention and contrasts, one sign test.
    let out = run(&["dialogue", &run_dir.display().to_string(), "--json"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let specs = v["specs"].as_array().unwrap();
    assert_eq!(specs.len(), 9);
    for s in specs {
        assert_eq!(
            s["counts"]["dialogues"], 1,
            "the paraphrase is not a test dialogue"
        );
        assert_eq!(s["counts"]["user_turns"], 4);
        assert_eq!(s["counts"]["valid_format"], 1.0);
    }
    let joint = specs
        .iter()
        .find(|s| s["label"] == "joint/history_recompute/scored")
        .unwrap();
    assert_eq!(
        joint["counts"]["calls"], 4,
        "Joint: one logical request per turn"
    );
    let serial = specs
        .iter()
        .find(|s| s["label"] == "serial/history_recompute/scored")
        .unwrap();
    assert_eq!(
        serial["counts"]["calls"], 8,
        "Serial: one per field and turn"
    );
    assert_eq!(v["sign_tests"].as_array().unwrap().len(), 1);
    assert_eq!(v["retention"].as_array().unwrap().len(), 6);
    assert_eq!(v["perturbation_summary"].as_array().unwrap().len(), 9);
    assert!(v["models"][0]["shared_requests"].as_u64().unwrap() >= 6);
    let out = run(&["dialogue", &run_dir.display().to_string()]);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("mean turn EM"), "{stdout}");
    // Resume: the same command again adds nothing.
    run_ok(&config, &run_dir);
    assert_eq!(
        read_field_turns(&run_dir.join("dialogue_turns"))
            .unwrap()
            .len(),
        144
    );
    assert_eq!(
        read_requests(&run_dir.join("requests")).unwrap().len(),
        requests.len()
    );
    // The report points at `choice2seq dialogue`.
    let out = run(&["report", &run_dir.display().to_string()]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("choice2seq dialogue"), "{stderr}");
}

/// The generated contract on the real model: every response is scored strictly ("Extra keys,
/// malformed JSON, illegal values and truncation fail without repair", E.4), and the recorded
/// failure is what re-parsing the recorded text gives. One-turn prefix of a bank dialogue
/// (256 new tokens per request are slow on a CPU), Joint and Serial under Rollout.
#[test]
fn generated_dialogue_fields_are_scored_strictly() {
    let dir = tempfile::tempdir().unwrap();
    let root = repo_root();
    let bank = std::fs::read_to_string(root.join("data/banks/dialogue-synthetic.jsonl")).unwrap();
    let mut d: Value = bank
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|d| d["dialogue_id"] == "sgdsyn:test:restaurants:002")
        .unwrap();
    d["dialogue_id"] = "restaurants-002-first-turn".into();
    d["turns"].as_array_mut().unwrap().truncate(1);
    let dialogues = write(dir.path(), "one-turn.jsonl", &format!("{d}\n"));
    let config = write(
        dir.path(),
        "generated.toml",
        &format!(
            r#"
[run]
name = "dialogue-generated-smoke"

[model]
path = "{}"

[[sources]]
kind = "jsonl"
path = "{}"

[dialogue]
arms = ["joint", "serial"]
modes = ["rollout"]
contract = "generated"
"#,
            root.join("models/SmolLM2-135M-Instruct.Q4_1.gguf")
                .display(),
            dialogues.display()
        ),
    );
    let run_dir = dir.path().join("run");
    run_ok(&config, &run_dir);
    let rows = read_field_turns(&run_dir.join("dialogue_turns")).unwrap();
    assert_eq!(rows.len(), 2 * 2);
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    assert_eq!(
        requests.len(),
        1 + 2,
        "one Joint request, one Serial request per field"
    );
    for r in &requests {
        assert_eq!(r.decoding, "greedy:256");
    }
    for r in &rows {
        let text = r.response.as_deref().unwrap();
        let fields: Vec<String> = if r.spec.arm == DialogueArm::Joint {
            d["field_order"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap().to_string())
                .collect()
        } else {
            vec![r.field.clone()]
        };
        let legal = |f: &str| {
            rows.iter()
                .find(|x| x.field == f)
                .map(|x| x.legal_values.clone())
                .unwrap_or_default()
        };
        let truncated = r.failure == Some(c2s_records::FieldFailure::Truncated);
        if truncated {
            assert_eq!(
                r.completion_tokens == 256,
                r.field_index == 0 || r.spec.arm != DialogueArm::Joint
            );
        }
        let parsed =
            c2s_protocol::dialogue::parse_dialogue_response(text, truncated, &fields, &legal);
        match parsed {
            Ok(state) => {
                assert_eq!(r.predicted.as_ref(), Some(&state[&r.field]));
                assert!(r.failure.is_none());
            }
            Err(f) => {
                assert_eq!(r.failure, Some(f), "{text}");
                assert!(r.predicted.is_none() && !r.correct);
            }
        }
    }
}

fn simulated_config(dir: &Path, dialogues: &Path, extra: &str) -> std::path::PathBuf {
    write(
        dir,
        "dialogue.toml",
        &format!(
            r#"
[run]
name = "dialogue-bad"

[model]
engine = "simulated"

[[sources]]
kind = "jsonl"
path = "{}"

[dialogue]
arms = ["joint"]
modes = ["oracle"]
{extra}
"#,
            dialogues.display(),
        ),
    )
}

/// Bad dialogues go to the run's rejects, naming the line, the dialogue and the field; good
/// dialogues run.
#[test]
fn bad_dialogues_are_rejected_with_their_field_and_good_ones_run() {
    let dir = tempfile::tempdir().unwrap();
    let bank =
        std::fs::read_to_string(repo_root().join("data/banks/dialogue-synthetic.jsonl")).unwrap();
    let good: Value = serde_json::from_str(bank.lines().next().unwrap()).unwrap();
    let mut illegal_gold = good.clone();
    illegal_gold["dialogue_id"] = "bad:1".into();
    illegal_gold["turns"][0]["state"]["active_intent"] = "Dance".into();
    let mut bad_order = good.clone();
    bad_order["dialogue_id"] = "bad:2".into();
    bad_order["field_order"] = serde_json::json!(["active_intent"]);
    let lines = [
        good.to_string(),
        illegal_gold.to_string(),
        bad_order.to_string(),
        "{not json".to_string(),
        good.to_string(),
    ];
    let dialogues = write(dir.path(), "dialogues.jsonl", &(lines.join("\n") + "\n"));
    let config = simulated_config(dir.path(), &dialogues, "");
    let run_dir = dir.path().join("run");
    run_ok(&config, &run_dir);
    let rows = read_field_turns(&run_dir.join("dialogue_turns")).unwrap();
    let turns = good["turns"].as_array().unwrap().len();
    let fields = good["field_order"].as_array().unwrap().len();
    assert_eq!(rows.len(), turns * fields);
    let rejects = read_rejects(&run_dir.join("rejects")).unwrap();
    assert_eq!(rejects.len(), 4, "{rejects:?}");
    let find = |line: usize| {
        rejects
            .iter()
            .find(|r| r.location.ends_with(&format!(":{line}")))
            .unwrap_or_else(|| panic!("no reject at line {line}: {rejects:?}"))
    };
    assert_eq!(find(2).item_id.as_deref(), Some("bad:1"));
    assert!(
        find(2).reason.contains("turns[0].state"),
        "{}",
        find(2).reason
    );
    assert!(find(2).reason.contains("`Dance`"), "{}", find(2).reason);
    assert!(find(3).reason.contains("field_order"), "{}", find(3).reason);
    assert!(find(4).reason.contains("not a dialogue"));
    assert!(find(5).reason.contains("duplicate dialogue_id"));
}

/// A bad [dialogue] section stops before any work with exit 2, naming the field.
#[test]
fn bad_dialogue_configs_stop_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let dialogues = write(dir.path(), "dialogues.jsonl", "");
    for (extra, field) in [
        ("contract = \"json\"", "dialogue.contract"),
        ("sign_test_mode = \"gold\"", "dialogue.sign_test_mode"),
        ("sign_test_draws = 0", "dialogue.sign_test_draws"),
        ("\n[[arms]]\narm = \"Native\"", "dialogue"),
    ] {
        let config = simulated_config(dir.path(), &dialogues, extra);
        let out = run_config(&config, &dir.path().join("run"));
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{extra}: {stdout}\n{stderr}");
        assert!(stderr.contains(field), "{extra}: {stderr}");
        assert!(!dir.path().join("run").exists());
    }
    // The sign test's mode must be one the run has (Serial and Joint both run).
    let config = write(
        dir.path(),
        "mode.toml",
        &format!(
            "[run]\nname = \"d\"\n[model]\nengine = \"simulated\"\n[[sources]]\nkind = \"jsonl\"\npath = \"{}\"\n[dialogue]\narms = [\"joint\", \"serial\"]\nmodes = [\"oracle\"]\nsign_test_mode = \"rollout\"\n",
            dialogues.display()
        ),
    );
    let out = run_config(&config, &dir.path().join("run"));
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("dialogue.sign_test_mode"), "{stderr}");
    let config = write(
        dir.path(),
        "dup.toml",
        &format!(
            "[run]\nname = \"d\"\n[model]\nengine = \"simulated\"\n[[sources]]\nkind = \"jsonl\"\npath = \"{}\"\n[dialogue]\narms = [\"joint\", \"joint\"]\n",
            dialogues.display()
        ),
    );
    let out = run_config(&config, &dir.path().join("run"));
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("dialogue.arms"), "{stderr}");
}
