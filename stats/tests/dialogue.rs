//! Dialogue statistics (Appendix C) on hand-built `dialogue_turns/` rows, with values computed
//! by hand or by the Python snippets quoted next to them (numpy 2.4.6, scipy 1.17.1,
//! statsmodels 0.15.0).
//!
//! Rows are built from turn patterns: `T` = a correct turn (both fields correct), `F` = a
//! wrong turn whose intent field is correct and whose slot field is wrong. Each turn has two
//! fields (`active_intent`, `price_range`).

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use c2s_records::dialogue::{
    DialogueArm, DialogueContract, DialogueSpec, DialogueSplit, FieldFailure, FieldTurn,
    Perturbation, PriorMode,
};
use c2s_stats::dialogue::{
    response_components, score_dialogues, sign_flip_test, summarize_dialogues, ContrastKind,
    DialogueStatsOptions, DialogueSummary, SignTestSpec, SpecSummary, Stat, DIALOGUE_SEED,
    SIGN_TEST_DRAWS,
};
use c2s_stats::{holm, StatsError, DEFAULT_DRAWS};

const FIELDS: [&str; 2] = ["active_intent", "price_range"];

fn spec(arm: DialogueArm, mode: PriorMode) -> DialogueSpec {
    DialogueSpec {
        arm,
        mode,
        contract: DialogueContract::Generated,
    }
}

fn joint(mode: PriorMode) -> DialogueSpec {
    spec(DialogueArm::Joint, mode)
}

const HR: PriorMode = PriorMode::HistoryRecompute;

/// The rows of one dialogue run: Joint sends one request per turn (prompt tokens on the first
/// field), the local arms one per field.
fn run(model: &str, spec: DialogueSpec, dialogue: &str, pattern: &str) -> Vec<FieldTurn> {
    let turns = pattern.len() as u32;
    let mut out = Vec::new();
    for (t, c) in pattern.chars().enumerate() {
        let turn = t as u32 + 1;
        let turn_correct = c == 'T';
        for (f, field) in FIELDS.iter().enumerate() {
            let correct = turn_correct || f == 0;
            let (request_id, tokens) = if spec.arm == DialogueArm::Joint {
                (
                    format!("{model}|{}|{dialogue}|{turn}", spec.label()),
                    if f == 0 { 100 } else { 0 },
                )
            } else {
                (
                    format!("{model}|{}|{dialogue}|{turn}|{field}", spec.label()),
                    60,
                )
            };
            out.push(FieldTurn {
                dialogue_id: dialogue.into(),
                base_dialogue_id: dialogue.into(),
                perturbation: None,
                split: DialogueSplit::Test,
                service: "Restaurants".into(),
                spec,
                turn,
                turns,
                field: field.to_string(),
                field_index: f as u32,
                gold: "cheap".into(),
                predicted: Some(if correct { "cheap" } else { "pricey" }.into()),
                correct,
                failure: None,
                prompt_key: format!("key:{request_id}"),
                request_id,
                probabilities: Vec::new(),
                legal_values: Vec::new(),
                model: model.into(),
                prompt_tokens: tokens,
                completion_tokens: 10,
                latency_ms: 1.0,
                response: None,
                error: None,
                attempt: 0,
            });
        }
    }
    out
}

fn perturbed(mut rows: Vec<FieldTurn>, base: &str, kind: Perturbation) -> Vec<FieldTurn> {
    for r in &mut rows {
        r.base_dialogue_id = base.into();
        r.perturbation = Some(kind);
    }
    rows
}

fn options(draws: u32) -> DialogueStatsOptions {
    DialogueStatsOptions {
        draws,
        ..DialogueStatsOptions::default()
    }
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-12, "{a} vs {b}");
}

fn value(s: &Stat) -> f64 {
    s.value.expect("defined")
}

fn find<'a>(s: &'a DialogueSummary, model: &str, spec: DialogueSpec) -> &'a SpecSummary {
    s.specs
        .iter()
        .find(|x| x.model == model && x.spec == spec)
        .expect("spec summary")
}

#[test]
fn dialogue_defaults_follow_the_paper_and_the_crate() {
    let o = DialogueStatsOptions::default();
    assert_eq!(o.draws, DEFAULT_DRAWS);
    assert_eq!(o.draws, 9_999);
    assert_eq!(o.seed, DIALOGUE_SEED);
    assert_eq!(DIALOGUE_SEED, 20_261_008);
    assert_eq!(o.sign_draws, SIGN_TEST_DRAWS);
    assert_eq!(SIGN_TEST_DRAWS, 99_999);
    assert_eq!(o.level, 0.95);
    assert_eq!(o.sign_tests, vec![SignTestSpec::SERIAL_MINUS_JOINT]);
}

/// "Mean-turn EM weights dialogues equally" (C.1): a 4-turn and an 8-turn dialogue weigh the
/// same. Counts and format validity of Table C5, an invalid and an engine-failed request.
#[test]
fn dialogue_weighting_endpoints_and_counts() {
    let s = joint(HR);
    let mut rows = run("m", s, "d1", "TTTT");
    rows.extend(run("m", s, "d2", "TFFTFFFT"));
    // d2 turn 2: invalid JSON (both fields fail). d3 turn 2: the engine failed, so d3 is
    // left out of the endpoints (a missing answer is not a wrong one) but its requests count.
    rows.extend(run("m", s, "d3", "TTTT"));
    for r in rows.iter_mut() {
        let failure = match (r.dialogue_id.as_str(), r.turn) {
            ("d2", 2) => FieldFailure::InvalidJson,
            ("d3", 2) => FieldFailure::EngineError,
            _ => continue,
        };
        r.failure = Some(failure);
        r.correct = false;
        r.predicted = None;
    }
    let sum = summarize_dialogues(&rows, &options(999)).unwrap();
    let x = find(&sum, "m", s);
    // d1: 4/4; d2: 3/8 → (1 + 3/8) / 2 = 0.6875 (turn-pooled 7/12 would be 0.583).
    close(value(&x.mean_turn), 0.6875);
    assert!((value(&x.mean_turn) - 7.0 / 12.0).abs() > 0.1);
    close(value(&x.final_state), 1.0);
    close(value(&x.trajectory), 0.5);
    // d1: 8/8 fields; d2: 16 fields, 5 wrong turns with one wrong field each, turn 2 with
    // both wrong (invalid JSON) → 10/16. Mean field (1 + 10/16) / 2 = 26/32.
    close(value(&x.mean_field), 26.0 / 32.0);
    let c = &x.counts;
    assert_eq!(
        (
            c.dialogues,
            c.user_turns,
            c.field_turns,
            c.incomplete_dialogues,
            c.engine_error_dialogues
        ),
        (2, 12, 24, 0, 1)
    );
    assert_eq!(
        (c.calls, c.input_tokens, c.physical_responses),
        (16, 1600, 16)
    );
    assert_eq!(
        (c.valid_requests, c.invalid_requests, c.missing_requests),
        (14, 1, 1)
    );
    close(c.valid_format.unwrap(), 14.0 / 15.0);
    assert_eq!(sum.left_out.len(), 1);
    assert_eq!(
        (sum.left_out[0].incomplete, sum.left_out[0].engine_errors),
        (0, 1)
    );
    assert_eq!(c.failures["invalid_json"], 1);
    assert_eq!(c.failures["engine_error"], 1);
    assert_eq!(x.recoveries.failed, 1);
    assert_eq!(x.recoveries.any_recovery, 1);
    assert_eq!(x.recoveries.final_recovery, 1);
    // Local arms send one request per field.
    let ind = spec(DialogueArm::Independent, HR);
    let sum = summarize_dialogues(&run("m", ind, "d1", "TFTT"), &options(99)).unwrap();
    let c = &find(&sum, "m", ind).counts;
    assert_eq!((c.calls, c.input_tokens, c.physical_responses), (8, 480, 8));
    close(c.valid_format.unwrap(), 1.0);
}

/// Table C3: failed trajectories, any later recovery, final recovery.
#[test]
fn dialogue_recoveries_count_failed_any_and_final() {
    let s = joint(PriorMode::Rollout);
    let mut rows = Vec::new();
    for (i, p) in ["TTTT", "TFTF", "FFFT", "TTFF", "FTTT", "TFFF"]
        .iter()
        .enumerate()
    {
        rows.extend(run("m", s, &format!("d{i}"), p));
    }
    let sum = summarize_dialogues(&rows, &options(99)).unwrap();
    let r = find(&sum, "m", s).recoveries;
    // Failed: all but TTTT; any recovery: TFTF, FFFT, FTTT; final: FFFT, FTTT.
    assert_eq!(
        (r.dialogues, r.failed, r.any_recovery, r.final_recovery),
        (6, 5, 3, 2)
    );
}

// Fixture B, and the Python that scores it (endpoint order: trajectory, mean turn, final,
// mean field; a wrong turn keeps its intent field correct):
//
// ```python
// import numpy as np
// from scipy.stats import permutation_test
// B = {"jev": [...], "qwen": [...]}   # the (dialogue, joint, serial) patterns below
// def ends(p):
//     t = [c == "T" for c in p]; n = len(t)
//     return np.array([float(all(t)), sum(t) / n, float(t[-1]),
//                      sum(2 if c else 1 for c in t) / (2 * n)])
// for m, ds in B.items():
//     J = np.array([ends(j) for _, j, _ in ds]); S = np.array([ends(s) for _, _, s in ds])
//     print(J.mean(0), S.mean(0), (S - J).mean(0))
//     a = [sum(x == "T" and y == "T" for x, y in zip(j, s)) for _, j, s in ds]
//     b = [j.count("T") for _, j, _ in ds]; n = [len(j) for _, j, _ in ds]
//     print(sum(a), sum(b), sum(x / k for x, k in zip(a, n)) / sum(x / k for x, k in zip(b, n)))
//     res = permutation_test((S[:, 1], J[:, 1]),
//                            lambda x, y, axis: np.mean(x - y, axis=axis), vectorized=True,
//                            permutation_type='samples', n_resamples=np.inf,
//                            alternative='two-sided')
//     print(res.pvalue)
// ```
// jev:  joint [0.3, 0.7291666666666667, 0.9, 0.8645833333333333],
//       serial [0.1, 0.575, 0.7, 0.7875],
//       serial − joint [-0.2, -0.15416666666666667, -0.2, -0.07708333333333332],
//       retained 28/40, retention 0.6628571428571428, exact p 0.0625.
// qwen: serial − joint [0.0, 0.029166666666666664, 0.0, 0.014583333333333337],
//       retained 38/40, retention 0.9485714285714286, exact p 0.625.
const JEV: [(&str, &str, &str); 10] = [
    ("d01", "TTTT", "TTFT"),
    ("d02", "TTFTTT", "TFTTTT"),
    ("d03", "TFTFTTFT", "TFFFTTFT"),
    ("d04", "TTTT", "TFFT"),
    ("d05", "FFFT", "FFFT"),
    ("d06", "TTFTTT", "TFFTTT"),
    ("d07", "FTFT", "FTTF"),
    ("d08", "TTTTTTTT", "TTTTTTTT"),
    ("d09", "TTTF", "TFFF"),
    ("d10", "FTFTFT", "TFTFTF"),
];
const QWEN: [(&str, &str, &str); 10] = [
    ("d01", "TTTT", "TTTT"),
    ("d02", "TTFTTT", "TTTTTT"),
    ("d03", "TFTFTTFT", "TFTFTTFT"),
    ("d04", "TTTT", "TTFT"),
    ("d05", "FFFT", "FFTT"),
    ("d06", "TTFTTT", "TTFTTT"),
    ("d07", "FTFT", "FTFT"),
    ("d08", "TTTTTTTT", "TTTTTTTF"),
    ("d09", "TTTF", "TTTT"),
    ("d10", "FTFTFT", "FTFTFT"),
];

fn fixture_b() -> Vec<FieldTurn> {
    let serial = spec(DialogueArm::Serial, HR);
    let mut rows = Vec::new();
    for (model, ds) in [("jev", JEV), ("qwen", QWEN)] {
        for (d, j, s) in ds {
            rows.extend(run(model, joint(HR), d, j));
            rows.extend(run(model, serial, d, s));
        }
    }
    rows
}

/// Figure 9 and Table C5: Serial − Joint contrasts, state retention and the two-test Holm
/// family, against the Python values above.
#[test]
fn dialogue_serial_minus_joint_retention_and_sign_tests_match_python() {
    let serial = spec(DialogueArm::Serial, HR);
    let sum = summarize_dialogues(&fixture_b(), &options(1999)).unwrap();
    let j = find(&sum, "jev", joint(HR));
    close(value(&j.trajectory), 0.3);
    close(value(&j.mean_turn), 0.7291666666666667);
    close(value(&j.final_state), 0.9);
    close(value(&j.mean_field), 0.8645833333333333);
    let s = find(&sum, "jev", serial);
    close(value(&s.mean_turn), 0.575);

    assert_eq!(sum.contrasts.len(), 2);
    let c = &sum.contrasts[0];
    assert_eq!(
        (c.model.as_str(), c.kind),
        ("jev", ContrastKind::SerialMinusJoint)
    );
    assert_eq!((c.compared, c.reference), (serial, joint(HR)));
    assert_eq!(
        (c.dialogues, c.unpaired_dialogues, c.components),
        (10, 0, 10)
    );
    close(value(&c.trajectory.difference), -0.2);
    close(value(&c.mean_turn.difference), -0.15416666666666667);
    close(value(&c.final_state.difference), -0.2);
    close(value(&c.mean_field.difference), -0.07708333333333332);
    close(c.mean_turn.compared.unwrap(), 0.575);
    close(c.mean_turn.reference.unwrap(), 0.7291666666666667);
    for e in [&c.trajectory, &c.mean_turn, &c.final_state, &c.mean_field] {
        let v = value(&e.difference);
        assert!(e.difference.dialogue_ci.unwrap().contains(v));
        // No shared prompt: the components are the dialogues, so the draws are the same.
        assert_eq!(e.difference.dialogue_ci, e.difference.component_ci);
    }
    // Every Jev dialogue has Serial ≤ Joint mean-turn EM: no draw is positive.
    assert!(c.mean_turn.difference.dialogue_ci.unwrap().high <= 0.0);
    let q = &sum.contrasts[1];
    close(value(&q.mean_turn.difference), 0.029166666666666664);
    close(value(&q.mean_field.difference), 0.014583333333333337);

    assert_eq!(sum.retention.len(), 2);
    let r = &sum.retention[0];
    assert_eq!(
        (r.model.as_str(), r.local, r.joint),
        ("jev", serial, joint(HR))
    );
    assert_eq!((r.retained_turns, r.joint_correct_turns), (28, 40));
    close(value(&r.retention), 0.6628571428571428);
    assert!(r
        .retention
        .dialogue_ci
        .unwrap()
        .contains(0.6628571428571428));
    assert!(r.retention.dialogue_ci.unwrap().high <= 1.0);
    let r = &sum.retention[1];
    assert_eq!((r.retained_turns, r.joint_correct_turns), (38, 40));
    close(value(&r.retention), 0.9485714285714286);

    // Two Serial − Joint tests share a Holm correction.
    assert_eq!(sum.sign_tests.len(), 2);
    let (t0, t1) = (&sum.sign_tests[0], &sum.sign_tests[1]);
    assert_eq!((t0.model.as_str(), t1.model.as_str()), ("jev", "qwen"));
    assert_eq!((t0.family_size, t0.dialogues, t0.test.nonzero), (2, 10, 5));
    assert_eq!(t0.test.draws, 99_999);
    close(t0.test.mean_difference.unwrap(), -0.15416666666666667);
    close(t0.p_exact.unwrap(), 0.0625);
    close(t1.p_exact.unwrap(), 0.625);
    // Monte Carlo p within 5 standard errors of the exact p.
    for t in [t0, t1] {
        let p = t.p_exact.unwrap();
        let se = (p * (1.0 - p) / 99_999.0).sqrt();
        assert!((t.test.p_value - p).abs() < 5.0 * se, "{t:?}");
        close(t.test.p_value, (1 + t.test.extreme) as f64 / 100_000.0);
    }
    let adjusted = holm(&[t0.test.p_value, t1.test.p_value]).unwrap();
    assert_eq!((t0.p_holm, t1.p_holm), (adjusted[0], adjusted[1]));
    // statsmodels.stats.multitest.multipletests([0.0625, 0.625], method='holm')[1]
    // → [0.125, 0.625]
    let exact = holm(&[0.0625, 0.625]).unwrap();
    close(exact[0], 0.125);
    close(exact[1], 0.625);
    assert!((t0.p_holm - 0.125).abs() < 0.01 && (t1.p_holm - 0.625).abs() < 0.02);

    // The mode is a parameter: no Oracle runs, no test.
    let mut o = options(99);
    o.sign_tests = vec![SignTestSpec {
        mode: PriorMode::Oracle,
        ..SignTestSpec::SERIAL_MINUS_JOINT
    }];
    assert!(summarize_dialogues(&fixture_b(), &o)
        .unwrap()
        .sign_tests
        .is_empty());
}

/// Table C2 / Figure 8: Oracle − Rollout per arm; identical trajectory EM gives a zero
/// difference with a degenerate interval.
#[test]
fn dialogue_oracle_minus_rollout_by_hand() {
    let (o, r) = (joint(PriorMode::Oracle), joint(PriorMode::Rollout));
    let mut rows = Vec::new();
    for (d, po, pr) in [
        ("d1", "TFTT", "TFFF"),
        ("d2", "TTTT", "TTTT"),
        ("d3", "FTTT", "FFFF"),
        ("d4", "TFFT", "TFFF"),
    ] {
        rows.extend(run("m", o, d, po));
        rows.extend(run("m", r, d, pr));
    }
    let sum = summarize_dialogues(&rows, &options(999)).unwrap();
    assert_eq!(sum.contrasts.len(), 1);
    let c = &sum.contrasts[0];
    assert_eq!(c.kind, ContrastKind::OracleMinusRollout);
    assert_eq!((c.compared, c.reference), (o, r));
    // Trajectory: Oracle [0,1,0,0], Rollout [0,1,0,0].
    close(value(&c.trajectory.difference), 0.0);
    let zero = c.trajectory.difference;
    assert_eq!(
        (
            zero.dialogue_ci.unwrap().low,
            zero.dialogue_ci.unwrap().high
        ),
        (0.0, 0.0)
    );
    assert_eq!(zero.component_ci, zero.dialogue_ci);
    // Mean turn: [.75,1,.75,.5] − [.25,1,0,.25] → mean 0.375.
    close(value(&c.mean_turn.difference), 0.375);
    // Final: [1,1,1,1] − [0,1,0,0] → 0.75.
    close(value(&c.final_state.difference), 0.75);
    // Mean field: [7/8, 1, 7/8, 6/8] − [5/8, 1, 4/8, 5/8] → mean 0.1875.
    close(value(&c.mean_field.difference), 0.1875);
    assert!(sum.retention.is_empty() && sum.sign_tests.is_empty());
}

/// C.1: "Six rows connect separate dialogues into 94 response-sharing components. Bootstrap
/// either resamples complete dialogues or these components, retaining the scores for
/// receiving dialogues."
#[test]
fn dialogue_shared_prompt_keys_form_components() {
    let (hr, or) = (joint(HR), joint(PriorMode::Oracle));
    let mut rows = Vec::new();
    for s in [hr, or] {
        rows.extend(run("m", s, "A", "TTTT"));
        rows.extend(run("m", s, "B", "FFFF"));
        rows.extend(run("m", s, "C", "TTTT"));
    }
    // B's first turn sends A's first-turn wire input, in both modes.
    for s in [hr, or] {
        let key = rows
            .iter()
            .find(|r| r.spec == s && r.dialogue_id == "A" && r.turn == 1)
            .unwrap()
            .prompt_key
            .clone();
        for r in rows
            .iter_mut()
            .filter(|r| r.spec == s && r.dialogue_id == "B" && r.turn == 1)
        {
            r.prompt_key = key.clone();
        }
    }
    let comps = response_components(&rows);
    assert_eq!(comps.components, 2);
    assert_eq!(comps.component_of["A"], comps.component_of["B"]);
    assert_ne!(comps.component_of["A"], comps.component_of["C"]);
    assert_eq!(comps.receiving_requests, 2);

    let sum = summarize_dialogues(&rows, &options(9_999)).unwrap();
    let m = &sum.models[0];
    assert_eq!(
        (
            m.logical_requests,
            m.physical_responses,
            m.shared_requests,
            m.receiving_requests
        ),
        (24, 22, 2, 2)
    );
    assert_eq!(
        (m.primary_dialogues, m.components, m.perturbed_dialogues),
        (3, 2, 0)
    );
    let x = find(&sum, "m", hr);
    assert_eq!(x.components, 2);
    assert_eq!(x.counts.physical_responses, 11);
    close(value(&x.mean_turn), 2.0 / 3.0);
    // Components {A,B} (scores 1, 0) and {C} (1): a draw is (1+0+1+0)/4 = 0.5 (p = 1/4),
    // (1+0+1)/3 (p = 1/2) or 1 (p = 1/4), so the 95% interval is [0.5, 1].
    let ci = x.mean_turn.component_ci.unwrap();
    assert_eq!((ci.low, ci.high), (0.5, 1.0));
    // Dialogues alone: all three draws B has p = 1/27 > 2.5%, so the low end is 0.
    let ci = x.mean_turn.dialogue_ci.unwrap();
    assert_eq!((ci.low, ci.high), (0.0, 1.0));
}

/// C.2: "Conditional denominators are redrawn." One dialogue holds half the Joint-correct
/// mass; draws without a Joint-correct turn are dropped and counted.
#[test]
fn dialogue_retention_redraws_denominators() {
    let ind = spec(DialogueArm::Independent, HR);
    let mut rows = Vec::new();
    rows.extend(run("m", joint(HR), "d00", "TTFF"));
    rows.extend(run("m", ind, "d00", "TFFF"));
    rows.extend(run("m", joint(HR), "d01", "TTTT"));
    rows.extend(run("m", ind, "d01", "TTTT"));
    for i in 2..10 {
        let d = format!("d{i:02}");
        rows.extend(run("m", joint(HR), &d, "FFFF"));
        rows.extend(run("m", ind, &d, "TTTT"));
    }
    let sum = summarize_dialogues(&rows, &options(9_999)).unwrap();
    let r = &sum.retention[0];
    assert_eq!(r.local, ind);
    assert_eq!(
        (r.dialogues, r.retained_turns, r.joint_correct_turns),
        (10, 5, 6)
    );
    // (1/4 + 4/4) / (2/4 + 4/4) = 5/6.
    close(value(&r.retention), 5.0 / 6.0);
    // A draw with k0 copies of d00 and k1 of d01 gives (k0/4 + k1)/(k0/2 + k1) ∈ [1/2, 1];
    // draws with neither are dropped: P = (8/10)^10 = 0.1074.
    let ci = r.retention.dialogue_ci.unwrap();
    assert!(
        ci.low >= 0.5 && ci.high <= 1.0 && ci.low < ci.high,
        "{ci:?}"
    );
    let share = f64::from(r.retention.dialogue_dropped) / 9_999.0;
    assert!((share - 0.8f64.powi(10)).abs() < 0.015, "{share}");
    assert_eq!(r.retention.component_dropped, r.retention.dialogue_dropped);
    // Independent − Joint mean turn: d00 −1/4, d01 0, eight dialogues +1 → (−0.25 + 8)/10.
    let c = &sum.contrasts[0];
    assert_eq!(c.kind, ContrastKind::IndependentMinusJoint);
    close(value(&c.mean_turn.difference), 0.775);
    // The default family tests Serial − Joint only.
    assert!(sum.sign_tests.is_empty());
}

/// C.2's perturbation schedule: each perturbed copy against its base; perturbed and dev rows
/// stay out of the primary endpoints.
#[test]
fn dialogue_perturbations_and_dev_rows_stay_separate() {
    let s = joint(HR);
    let mut rows = run("m", s, "d1", "TTFT");
    rows.extend(run("m", s, "d2", "TTTT"));
    rows.extend(perturbed(
        run("m", s, "d1-para", "TFFT"),
        "d1",
        Perturbation::Paraphrase,
    ));
    rows.extend(perturbed(
        run("m", s, "d1-perm", "TTFT"),
        "d1",
        Perturbation::ValuePermutation,
    ));
    let mut dev = run("m", s, "dev1", "FFFF");
    for r in &mut dev {
        r.split = DialogueSplit::Dev;
    }
    rows.extend(dev);
    let sum = summarize_dialogues(&rows, &options(199)).unwrap();
    assert_eq!(sum.excluded_dev_rows, 8);
    let x = find(&sum, "m", s);
    assert_eq!(x.counts.dialogues, 2);
    close(value(&x.mean_turn), 0.875);
    let m = &sum.models[0];
    assert_eq!(
        (
            m.logical_requests,
            m.primary_dialogues,
            m.perturbed_dialogues,
            m.components
        ),
        (16, 2, 2, 2)
    );
    assert_eq!(sum.perturbations.len(), 2);
    let p = &sum.perturbations[0];
    assert_eq!(
        (p.dialogue_id.as_str(), p.kind, p.turns, p.agreeing_turns),
        ("d1-para", Perturbation::Paraphrase, 4, 3)
    );
    close(p.agreement.unwrap(), 0.75);
    close(p.base_mean_turn, 0.75);
    close(p.perturbed_mean_turn, 0.5);
    let v = &sum.perturbations[1];
    assert_eq!(v.kind, Perturbation::ValuePermutation);
    close(v.agreement.unwrap(), 1.0);
    assert_eq!(sum.perturbation_summary.len(), 2);
    let ps = &sum.perturbation_summary[0];
    assert_eq!(
        (ps.kind, ps.dialogues, ps.turns, ps.agreeing_turns),
        (Perturbation::Paraphrase, 1, 4, 3)
    );
}

/// The sign-flip p-value against scipy's exact permutation test, and the plus-one formula.
#[test]
fn dialogue_sign_flip_matches_scipy_and_plus_one() {
    // ```python
    // d = np.array([0.3, -0.1, 0.25, 0.5, 0.125, -0.2, 0.4, 0.0, 0.35, -0.05, 0.6, 0.15,
    //               -0.3, 0.45])
    // permutation_test((d, np.zeros_like(d)), lambda x, y, axis: np.mean(x - y, axis=axis),
    //                  vectorized=True, permutation_type='samples', n_resamples=np.inf,
    //                  alternative='two-sided').pvalue
    // ```
    // → 0.037353515625
    let d = [
        0.3, -0.1, 0.25, 0.5, 0.125, -0.2, 0.4, 0.0, 0.35, -0.05, 0.6, 0.15, -0.3, 0.45,
    ];
    let t = sign_flip_test(&d, 99_999, DIALOGUE_SEED).unwrap();
    let exact: f64 = 0.037353515625;
    assert!((t.p_value - exact).abs() < 5.0 * (exact * (1.0 - exact) / 99_999.0).sqrt());
    assert_eq!((t.n, t.nonzero), (14, 13));
    close(t.mean_difference.unwrap(), d.iter().sum::<f64>() / 14.0);
    assert_eq!(t, sign_flip_test(&d, 99_999, DIALOGUE_SEED).unwrap());
    assert_ne!(t.extreme, sign_flip_test(&d, 99_999, 1).unwrap().extreme);
    // All differences zero: every draw ties the statistic, p = (1 + B)/(1 + B) = 1.
    let z = sign_flip_test(&[0.0; 9], 999, 3).unwrap();
    assert_eq!((z.extreme, z.p_value), (999, 1.0));
    // One nonzero difference: |T*| = |T_obs| in every draw (float ties within tolerance).
    let one = sign_flip_test(&[0.0, 1.0 / 3.0, 0.0], 500, 3).unwrap();
    assert_eq!((one.extreme, one.p_value), (500, 1.0));
    // Float ties: sign patterns whose exact sums tie the observed |T| but whose float sums
    // fall just below it must count as extreme.
    // ```python
    // from fractions import Fraction as F; import itertools
    // d = [0.1, 0.2, -0.3, 0.7, 0.4, -0.6]; fd = [F(str(x)) for x in d]
    // obs = abs(sum(fd))  # 1/2
    // sum(abs(sum(a * b for a, b in zip(s, fd))) >= obs
    //     for s in itertools.product([1, -1], repeat=6)) / 64   # 0.71875 (46/64)
    // # scipy permutation_test(..., n_resamples=np.inf).pvalue → 0.71875 as well;
    // # comparing the float sums without a tolerance gives 0.65625 instead.
    // ```
    let ties = sign_flip_test(&[0.1, 0.2, -0.3, 0.7, 0.4, -0.6], 99_999, 5).unwrap();
    let exact: f64 = 0.71875;
    let se = (exact * (1.0 - exact) / 99_999.0).sqrt();
    assert!((ties.p_value - exact).abs() < 5.0 * se, "{ties:?}");
    // Large observed statistic: p = (1 + extreme)/(1 + B) ≥ 1/(1 + B).
    let far = sign_flip_test(&[1.0; 30], 999, 3).unwrap();
    assert_eq!(far.extreme, 0);
    close(far.p_value, 1.0 / 1000.0);
}

#[test]
fn dialogue_deterministic_and_serializable() {
    let rows = fixture_b();
    let mut o = options(499);
    o.threads = 1;
    let a = summarize_dialogues(&rows, &o).unwrap();
    o.threads = 2;
    let b = summarize_dialogues(&rows, &o).unwrap();
    assert_eq!(a.specs, b.specs);
    assert_eq!(a.contrasts, b.contrasts);
    assert_eq!(a.sign_tests, b.sign_tests);
    let mut reversed = rows.clone();
    reversed.reverse();
    let c = summarize_dialogues(&reversed, &o).unwrap();
    assert_eq!(a.contrasts, c.contrasts);
    assert_eq!(a.retention, c.retention);
    let json = serde_json::to_value(&a).unwrap();
    assert_eq!(json["specs"][0]["spec"]["arm"], "joint");
    assert!(json["contrasts"][0]["mean_turn"]["difference"]["dialogue_ci"]["low"].is_number());
}

#[test]
fn dialogue_bad_input_is_an_error() {
    let mut rows = run("m", joint(HR), "d1", "TT");
    rows.push(rows[0].clone());
    assert!(matches!(
        summarize_dialogues(&rows, &options(9)),
        Err(StatsError::DuplicateItem { .. })
    ));
    assert!(score_dialogues(&rows).is_err());
    rows.pop();
    assert_eq!(
        summarize_dialogues(&rows, &options(0)).unwrap_err(),
        StatsError::ZeroDraws
    );
    let mut o = options(9);
    o.level = 1.0;
    assert_eq!(
        summarize_dialogues(&rows, &o).unwrap_err(),
        StatsError::InvalidLevel(1.0)
    );
    // An incomplete dialogue is counted and left out, not refused.
    let mut two = rows.clone();
    two.extend(run("m", joint(HR), "d2", "TF"));
    two.retain(|r| !(r.dialogue_id == "d1" && r.turn == 1));
    let sum = summarize_dialogues(&two, &options(9)).unwrap();
    assert_eq!(sum.specs[0].counts.incomplete_dialogues, 1);
    assert_eq!(sum.specs[0].counts.dialogues, 1);
    rows.retain(|r| r.turn != 1);
    let sum = summarize_dialogues(&rows, &options(9)).unwrap();
    assert!(sum.specs.is_empty(), "no scored run");
    assert_eq!(sum.left_out[0].incomplete, 1);
    assert!(summarize_dialogues(&[], &options(9))
        .unwrap()
        .specs
        .is_empty());
}
