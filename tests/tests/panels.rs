//! Smoke runs of every shipped panel config (`config/panels/`) on the dev banks: each config is
//! run as shipped except that its sources read the first items of the dev banks instead of the
//! test-bank panel, the bootstrap is short and, where a real model adds nothing, the engine is
//! the simulated one. One real-model run per new arm family (Table 3's WholeGenerate and
//! PrefixContinue; the readout grid) checks what the model actually receives.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use c2s_e2e::{repo_root, run_ok, write};
use c2s_sinks::{read_requests, read_trajectories};
use serde_json::Value;

#[path = "panels/reproduce.rs"]
mod reproduce;

/// `config/panels/NAME.toml` rewritten for a smoke run: dev banks, `items` items per source,
/// 99 bootstrap draws, the simulated engine unless `real_model`.
fn smoke_config(dir: &Path, name: &str, items: usize, real_model: bool) -> PathBuf {
    let root = repo_root();
    let text = std::fs::read_to_string(root.join(format!("config/panels/{name}.toml"))).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("select = ") {
            continue; // the panel's test-bank ids are not in the dev banks
        }
        if let Some(bank) = line
            .strip_prefix("path = \"data/banks/")
            .and_then(|b| b.strip_suffix("-test.jsonl\""))
        {
            let dev = root.join(format!("data/banks/{bank}-dev.jsonl"));
            out.push_str(&format!("path = \"{}\"\nlimit = {items}\n", dev.display()));
            continue;
        }
        if line.starts_with("path = \"data/banks/") {
            // A bank without a dev split (the binding panel's symbolic bases): its first items.
            out.push_str(&format!("{line}\nlimit = {items}\n"));
            continue;
        }
        if line.starts_with("bootstrap_draws") {
            out.push_str("bootstrap_draws = 99\n");
            continue;
        }
        if line == "[model]" && !real_model {
            out.push_str("[model]\nengine = \"simulated\"\n");
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if !out.contains("[stats]") {
        out.push_str("\n[stats]\nbootstrap_draws = 99\n");
    }
    write(dir, &format!("{name}.toml"), &out)
}

/// Run the smoke config; every (item, arm) must give one trajectory.
fn smoke(name: &str, items: usize, real_model: bool) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let config = smoke_config(dir.path(), name, items, real_model);
    let run_dir = dir.path().join("run");
    run_ok(&config, &run_dir);
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("manifest.json")).unwrap())
            .unwrap();
    let arms = manifest["config"]["arms"].as_array().unwrap().len();
    let sources = manifest["config"]["sources"].as_array().unwrap().len();
    let trajectories = read_trajectories(&run_dir.join("trajectories")).unwrap();
    assert_eq!(
        trajectories.len(),
        arms * sources * items,
        "{name}: one trajectory per item and arm"
    );
    (dir, run_dir)
}

#[test]
fn simulated_panels_run_end_to_end_on_the_dev_banks() {
    for name in [
        "table1-code",
        "table1-direct",
        "support",
        "support-union",
        "prompt-variants",
        "prompt-variants-direct",
        "option-orders",
        "copy",
        "fresh-plan",
        "stop",
        "whole-answer",
        "teacher-forced",
        "copy-incorrect-plans",
        "binding",
        "padded",
        "prefix-intervention",
    ] {
        let (_dir, run_dir) = smoke(name, 2, false);
        let requests = read_requests(&run_dir.join("requests")).unwrap();
        for r in &requests {
            let user: Value = serde_json::from_str(&r.user).unwrap();
            let first = user.as_object().unwrap().keys().next().cloned();
            assert_eq!(first.as_deref(), Some("state"), "{name}: paper layout");
            if name == "binding" {
                // B.5: names aligned with, or rebound away from, the criteria they name; the
                // second repeat (`/r1`) asks as the first.
                let arm = r.arm.strip_suffix("/r1").unwrap_or(&r.arm);
                for (_, entry) in user["choices"].as_object().unwrap() {
                    let name = entry["option_name"].as_str().unwrap();
                    let criterion = entry["criterion"].as_str().unwrap();
                    let states_it = name.ends_with(&format!("_{criterion}"));
                    if arm.ends_with("names-readable_aligned") {
                        assert!(states_it, "{name} / {criterion}");
                    } else if arm.ends_with("names-readable_conflicting") {
                        assert!(
                            !states_it && !name.starts_with("o_"),
                            "{name} / {criterion}"
                        );
                    } else {
                        assert!(name.starts_with("o_"), "{name}");
                    }
                }
            }
        }
    }
}

/// Table 3 with the real model: WholeGenerate's state is the canonical JSON text, and
/// PrefixContinue's the state object without position or prefix (E.3).
#[test]
fn table3_runs_with_the_real_model() {
    let (_dir, run_dir) = smoke("table3", 1, true);
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for r in &requests {
        let user: Value = serde_json::from_str(&r.user).unwrap();
        let keys: Vec<&String> = user.as_object().unwrap().keys().collect();
        assert_eq!(keys[0], "state");
        let family = r.arm.split('/').next().unwrap().to_string();
        match family.as_str() {
            "PrefixContinue" => {
                let state = user["state"].as_object().unwrap();
                assert!(!state.contains_key("position") && !state.contains_key("current_prefix"));
            }
            _ => assert!(user["state"].is_string(), "{}", r.arm),
        }
        seen.insert(family);
    }
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        ["Native", "PrefixContinue", "Serial", "WholeGenerate"]
    );
}

/// The readout grid with the real model: one request per item and arm, at the item's one
/// preselected position, with opaque name/criterion choices (E.5).
#[test]
fn readout_grid_runs_with_the_real_model() {
    let (_dir, run_dir) = smoke("readout-grid", 1, true);
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    assert_eq!(requests.len(), 2 * 36);
    for r in &requests {
        let user: Value = serde_json::from_str(&r.user).unwrap();
        let state: Value = serde_json::from_str(user["state"].as_str().unwrap()).unwrap();
        assert_eq!(state["query_position"].as_u64(), Some(u64::from(r.step)));
        let positions: std::collections::BTreeSet<u32> = requests
            .iter()
            .filter(|q| q.item_id == r.item_id)
            .map(|q| q.step)
            .collect();
        assert_eq!(positions.len(), 1, "one preselected position per item");
        for (_, entry) in user["choices"].as_object().unwrap() {
            assert!(entry["option_name"].as_str().unwrap().starts_with("o_"));
            assert_eq!(entry["criterion"].as_str().unwrap().chars().count(), 1);
        }
    }
}

/// D.12 with the real model: `bank incorrect-plans` writes constructed plans for the first dev
/// items (no observed run), and the copy-incorrect panel copies them under Raw and Indexed
/// beside the gold targets. "Records retain difference counts and distinguish observed from
/// constructed plans"; comparisons of two copy arms pair fidelity.
#[test]
fn copy_incorrect_runs_with_the_real_model() {
    let dir = tempfile::tempdir().unwrap();
    let root = repo_root();
    let ids = ["arith-dev-3-01", "lex-dev-3-01"];
    let panel = write(dir.path(), "panel.txt", &ids.join("\n"));
    let plans = dir.path().join("plans.jsonl");
    let dev = |d: &str| {
        root.join(format!("data/banks/{d}-dev.jsonl"))
            .display()
            .to_string()
    };
    let out = c2s_e2e::run(&[
        "bank",
        "incorrect-plans",
        "--panel",
        &panel.display().to_string(),
        "--banks",
        &dev("arithmetic"),
        &dev("lexical"),
        "--out",
        &plans.display().to_string(),
    ]);
    let (stdout, stderr) = c2s_e2e::text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("arithmetic 0 observed / 1 constructed"),
        "{stdout}"
    );
    let config = smoke_config(dir.path(), "copy-incorrect", 1, true);
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "path = \"data/panels/copy-incorrect-96.jsonl\"",
        &format!("path = \"{}\"", plans.display()),
    );
    std::fs::write(&config, text).unwrap();
    let run_dir = dir.path().join("run");
    run_ok(&config, &run_dir);
    let trajectories = read_trajectories(&run_dir.join("trajectories")).unwrap();
    assert_eq!(trajectories.len(), 2 * 4, "two items × four arms");
    for t in &trajectories {
        let plan = t.plan.as_deref().unwrap();
        if t.arm.starts_with("IncorrectCopy/") {
            assert_eq!(t.plan_origin.as_deref(), Some("constructed"), "{}", t.arm);
            assert!(t.plan_differences.unwrap() >= 1);
            assert!(
                !t.correct || t.output != plan,
                "a copied wrong plan is not gold"
            );
        } else {
            assert_eq!(t.plan_origin.as_deref(), Some("gold"));
            assert_eq!(t.plan_differences, Some(0));
        }
        assert_eq!(t.fidelity, Some(t.valid && t.output == plan));
    }
    let outcomes = c2s_sinks::read_paired_outcomes(&run_dir.join("outcomes")).unwrap();
    assert_eq!(outcomes.len(), 2 * 2, "two comparisons × two items");
    for o in &outcomes {
        let side = |arm: &str| {
            trajectories
                .iter()
                .find(|t| t.arm == arm && t.item_id == o.item_id)
                .unwrap()
                .fidelity
                .unwrap()
        };
        assert_eq!(o.native_correct, side(&o.native_arm), "fidelity is paired");
        assert_eq!(o.serial_correct, side(&o.serial_arm));
    }
    // Without the plan file the config is refused before any work (exit 2).
    let bad = std::fs::read_to_string(&config)
        .unwrap()
        .replace(&plans.display().to_string(), "/nonexistent/plans.jsonl");
    let bad = write(dir.path(), "bad.toml", &bad);
    let out = c2s_e2e::run_config(&bad, &dir.path().join("run-bad"));
    assert_eq!(out.status.code(), Some(2));
    assert!(c2s_e2e::text(&out).1.contains("copy_plans.path"));
}

/// A resumed run copies the plans it started with: another plan file under the same run
/// directory is refused before any work (exit 2), as another model is.
#[test]
fn resume_with_other_copy_plans_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = repo_root();
    let plans = dir.path().join("plans.jsonl");
    std::fs::write(
        &plans,
        "{\"item_id\":\"arith-dev-3-01\",\"plan\":\"759\",\"origin\":\"constructed\"}\n",
    )
    .unwrap();
    let config = write(
        dir.path(),
        "plans.toml",
        &format!(
            "[model]\nengine = \"simulated\"\n\n[[sources]]\nkind = \"jsonl\"\npath = \"{}\"\nlimit = 1\n\n[copy_plans]\npath = \"{}\"\n\n[[arms]]\narm = \"IncorrectCopy\"\n",
            root.join("data/banks/arithmetic-dev.jsonl").display(),
            plans.display()
        ),
    );
    let run_dir = dir.path().join("run");
    run_ok(&config, &run_dir);
    let t = read_trajectories(&run_dir.join("trajectories")).unwrap();
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].plan.as_deref(), Some("759"));
    std::fs::write(
        &plans,
        "{\"item_id\":\"arith-dev-3-01\",\"plan\":\"259\",\"origin\":\"constructed\"}\n",
    )
    .unwrap();
    let out = c2s_e2e::run_config(&config, &run_dir);
    let (_, stderr) = c2s_e2e::text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot resume with other copy plans"),
        "{stderr}"
    );
}

/// D.9 with the real model: "Nonindexed punctuation matches Indexed's serialized-state
/// character and UTF-8 byte length at the same prefix". At every step the Padded state is as
/// long as the Indexed state (prefixes are each arm's own, but of the same length), holds the
/// Raw fields plus `padding`, and no position table; the contrasts pair the two by parent.
#[test]
fn padded_panel_runs_with_the_real_model() {
    let (_dir, run_dir) = smoke("padded", 1, true);
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    let mut checked = 0;
    for p in requests.iter().filter(|r| r.arm.contains("/padded/")) {
        let indexed = requests
            .iter()
            .find(|r| r.item_id == p.item_id && r.step == p.step && r.arm.contains("/indexed/"))
            .expect("the Indexed step of the same parent");
        let (ps, is) = (state_text(p), state_text(indexed));
        assert_eq!(ps.len(), is.len(), "{ps}");
        assert_eq!(ps.chars().count(), is.chars().count());
        let state: Value = state_of(p);
        assert!(state["padding"].as_str().unwrap().chars().all(|c| c == '.'));
        assert!(state.get("indexed_characters").is_none());
        checked += 1;
    }
    assert!(checked >= 2 * 3, "every step of both parents");
    let out = c2s_e2e::run(&["contrasts", &run_dir.display().to_string(), "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let contrasts = v["contrasts"].as_array().unwrap();
    assert_eq!(contrasts.len(), 2);
    assert!(contrasts.iter().all(|c| c["units"].as_u64() == Some(1)));
}

/// D.9's token control with the real model: "Punctuation, excluding answer symbols and index
/// numbers, matches the pinned tokenizer's full rendered Indexed request at the same prefix.
/// Every realized match is verified; generated prefixes remain arm-specific." Every answered
/// PaddedTokens step records the Indexed count it matched and the engine counted exactly that;
/// where the Indexed arm's own request has the same prefix (always at position 1) the two
/// prompts have the same token count; the state is Raw's plus a run of dots.
#[test]
fn padded_tokens_panel_runs_with_the_real_model() {
    let (_dir, run_dir) = smoke("padded-tokens", 1, true);
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    let mut verified = 0;
    for t in read_trajectories(&run_dir.join("trajectories")).unwrap() {
        let padded = t.arm.contains("/padded-tokens/");
        for s in t.steps().unwrap().iter().filter(|s| s.is_call()) {
            if padded {
                assert_eq!(s.matched_prompt_tokens, Some(s.prompt_tokens), "{}", t.arm);
                verified += 1;
            } else {
                assert_eq!(s.matched_prompt_tokens, None);
            }
        }
    }
    assert!(verified >= 2 * 3, "every step of both parents");
    let mut common = 0;
    for p in requests
        .iter()
        .filter(|r| r.arm.contains("/padded-tokens/"))
    {
        let find = |evidence: &str| {
            requests
                .iter()
                .find(|r| r.item_id == p.item_id && r.step == p.step && r.arm.contains(evidence))
                .expect("the same step of the same parent")
        };
        let (indexed, raw) = (find("/indexed/"), find("/raw/"));
        let state = state_of(p);
        let pad = state["padding"].as_str().unwrap();
        assert!(pad.chars().all(|c| c == '.'), "{pad}");
        assert!(state.get("indexed_characters").is_none());
        assert_eq!(
            p.option_values, indexed.option_values,
            "options and order are fixed"
        );
        if state_of(indexed)["current_prefix"] == state["current_prefix"] {
            assert_eq!(p.prompt_tokens, indexed.prompt_tokens, "{}", p.user);
            assert!(p.prompt_sha256 != indexed.prompt_sha256);
            common += 1;
        }
        if state_of(raw)["current_prefix"] == state["current_prefix"] {
            let mut with_pad = state_of(raw);
            with_pad["padding"] = Value::from(pad);
            assert_eq!(with_pad, state, "Raw's state plus the padding");
        }
    }
    assert!(common >= 2, "position 1 of both parents");
    let out = c2s_e2e::run(&["contrasts", &run_dir.display().to_string(), "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let contrasts = v["contrasts"].as_array().unwrap();
    assert_eq!(contrasts.len(), 2);
    assert!(contrasts.iter().all(|c| c["units"].as_u64() == Some(1)));
}

/// A.4 with the real model: one request per (item, arm); the four intervention arms of an
/// item ask one shared preselected position, the error draft differs from the correct one in
/// exactly one character, and the whole readout offers the eight candidates.
#[test]
fn prefix_intervention_runs_with_the_real_model() {
    let (_dir, run_dir) = smoke("prefix-intervention", 1, true);
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    assert_eq!(requests.len(), 2 * 5);
    for item in ["arith-dev-3-01", "lex-dev-3-01"] {
        let of = |arm: &str| {
            let r = requests
                .iter()
                .find(|r| r.item_id == item && r.arm == arm)
                .unwrap_or_else(|| panic!("{item} {arm}"));
            let state: Value = state_of(r);
            (r.clone(), state)
        };
        let (c, cs) = of("PrefixIntervention/Full/code/draft-correct");
        let (e, es) = of("PrefixIntervention/Full/code/draft-error");
        let (w, ws) = of("PrefixIntervention/whole/code/draft-error");
        assert_eq!(cs["position"], es["position"]);
        assert_eq!(c.step, e.step);
        let (cp, ep) = (
            cs["current_prefix"].as_str().unwrap(),
            es["current_prefix"].as_str().unwrap(),
        );
        assert_eq!(cp.len(), ep.len());
        assert_eq!(
            cp.chars().zip(ep.chars()).filter(|(a, b)| a != b).count(),
            1
        );
        assert_eq!(ws["current_prefix"].as_str(), Some(ep));
        assert_eq!(w.option_values.len(), 8);
    }
}

/// D.11's Batch with the real model (scored codes): each field of a parent is decided inside
/// one bundled answer — every request of the arm carries the same user message and a growing
/// assistant prefix holding the codes chosen before — and fidelity is paired with Independent.
#[test]
fn copy_batch_runs_with_the_real_model() {
    let (_dir, run_dir) = smoke("copy", 1, true);
    let requests = read_requests(&run_dir.join("requests")).unwrap();
    let batch: Vec<_> = requests
        .iter()
        .filter(|r| r.arm == "GoldCopy/Full/code/raw/batch")
        .collect();
    assert_eq!(batch.len(), 2 * 3, "L = 3 fields for each of two parents");
    for r in &batch {
        let first = batch
            .iter()
            .find(|q| q.item_id == r.item_id && q.step == 1)
            .unwrap();
        assert_eq!(r.user, first.user, "one bundled question per parent");
        let prefix = r.assistant_prefix.as_deref().unwrap();
        assert!(prefix.ends_with(&format!("\"{}\": \"", r.step)), "{prefix}");
        let state: Value = state_of(r);
        assert_eq!(state["positions"].as_array().unwrap().len(), 3);
    }
    let trajectories = read_trajectories(&run_dir.join("trajectories")).unwrap();
    let t = trajectories
        .iter()
        .find(|t| t.arm == "GoldCopy/Full/code/raw/batch")
        .unwrap();
    assert_eq!(t.calls, 3);
    assert!(t.fidelity.is_some());
}

/// The state text of a recorded request (the user JSON's `state`).
fn state_text(r: &c2s_sinks::RequestRow) -> String {
    let user: Value = serde_json::from_str(&r.user).unwrap();
    user["state"].as_str().unwrap().to_string()
}

fn state_of(r: &c2s_sinks::RequestRow) -> Value {
    serde_json::from_str(&state_text(r)).unwrap()
}
