//! Controller behaviour of the search, fill, Native, copy-plan, stop and request arms, driven
//! by scripted responders (no model); the readout, symbolic, prefix-intervention, batch and
//! padded arms are in `readout_symbolic_controllers.rs`.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use c2s_protocol::{Controller, ControllerError};
use c2s_records::{
    Arm, ArmSpec, Contract, CopyControl, Evidence, Membership, ResponseClass, StopCategory,
    Support, END, INVALID_MARKER,
};
use proptest::prelude::*;
use serde_json::Value;

mod common;
use common::*;

#[test]
fn figure_one_union_supports() {
    let item = figure_one();
    let spec = ArmSpec::new(Arm::Serial).with_support(Support::UNION_CALL);
    let c = Controller::new(&item, spec, None, &cfg()).unwrap();
    let (t, reqs) = run(c, |r| scored(r, "5"));
    let mut supports: Vec<Vec<String>> = reqs
        .iter()
        .map(|r| {
            let mut v: Vec<String> = r.values().iter().map(|s| s.to_string()).collect();
            v.sort();
            v
        })
        .collect();
    supports.sort_by_key(|v| v.len());
    assert_eq!(
        supports,
        vec![
            vec!["8".to_string()],
            vec!["5".into(), "9".into()],
            vec!["3".into(), "4".into(), "5".into(), "6".into()]
        ]
    );
    // Answering "5" at position 2 is outside {8}? No: support {8} has only 8, so "5" is not
    // listed and the scored responder spreads mass uniformly → the sole option 8 is chosen.
    assert_eq!(t.output, "585");
    assert!(t.correct && t.valid);
    assert_eq!(t.calls, 3);
    assert_eq!(t.fills, 0);
}

#[test]
fn union_fill_fills_singletons_without_a_request() {
    let item = figure_one();
    let spec = ArmSpec::new(Arm::Serial).with_support(Support::UNION_FILL);
    let (t, reqs) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        scored(r, "5")
    });
    assert_eq!(reqs.len(), 2);
    assert_eq!(t.calls, 2);
    assert_eq!(t.fills, 1);
    assert!(t.steps[1].filled && t.steps[1].emitted == "8" && t.steps[1].probabilities.is_none());
    assert_eq!(t.output, "585");
    // Confidence uses the two called steps only: 0.9 * 0.9.
    let c = t.confidence.unwrap();
    assert!((c.product - 0.81).abs() < 1e-12);
    assert_eq!(c.steps, 2);
}

#[test]
fn full_fill_uses_union_singletons_and_full_alphabet_elsewhere() {
    let item = figure_one();
    let spec = ArmSpec::new(Arm::Serial).with_support(Support::FULL_FILL);
    let (t, reqs) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        scored(r, "7")
    });
    assert_eq!(reqs.len(), 2);
    assert!(reqs.iter().all(|r| r.options.len() == 10));
    assert_eq!(t.output, "787");
    assert_eq!(t.membership, Membership::Outside);
    assert!(!t.correct && t.valid);
}

#[test]
fn serial_sees_its_own_prefix_and_one_request_at_a_time() {
    let item = figure_one();
    let spec = ArmSpec::new(Arm::Serial);
    let mut c = Controller::new(&item, spec, None, &cfg()).unwrap();
    let first = c.start().unwrap();
    assert_eq!(first.len(), 1, "step t+1 waits for step t");
    assert_eq!(state_of(&first[0])["current_prefix"], "");
    assert_eq!(state_of(&first[0])["position"], 1);
    let second = c.on_response(&scored(&first[0], "3")).unwrap();
    assert_eq!(second.len(), 1);
    assert_eq!(
        state_of(&second[0])["current_prefix"],
        "3",
        "the model's own (wrong) prefix"
    );
    assert_eq!(state_of(&second[0])["position"], 2);
    // The same response twice is refused.
    assert!(matches!(
        c.on_response(&scored(&first[0], "3")),
        Err(ControllerError::UnknownRequest(_))
    ));
}

#[test]
fn independent_issues_all_positions_without_prefix() {
    let item = lexical();
    let mut c = Controller::new(&item, ArmSpec::new(Arm::Independent), None, &cfg()).unwrap();
    let reqs = c.start().unwrap();
    assert_eq!(reqs.len(), 5);
    for (i, r) in reqs.iter().enumerate() {
        let s = state_of(r);
        assert_eq!(s["position"], i as u64 + 1);
        assert!(s.get("current_prefix").is_none());
        assert_eq!(r.options.len(), 26);
    }
    assert!(Controller::new(
        &item,
        ArmSpec::new(Arm::Independent).with_support(Support::TRIE_CALL),
        None,
        &cfg()
    )
    .is_err());
}

#[test]
fn teacher_forced_uses_gold_prefix() {
    let item = lexical();
    let mut c = Controller::new(&item, ArmSpec::new(Arm::TeacherForced), None, &cfg()).unwrap();
    let reqs = c.start().unwrap();
    let prefixes: Vec<String> = reqs
        .iter()
        .map(|r| state_of(r)["current_prefix"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(prefixes, ["", "a", "ap", "app", "appl"]);
    let instr: Value = serde_json::from_str(&reqs[0].user).unwrap();
    assert_eq!(instr["question"], c2s_protocol::prompts::text::SERIAL_V1);
}

#[test]
fn trie_restricts_to_candidate_continuations_and_aborts_on_malformed_prefix() {
    let item = lexical();
    let spec = ArmSpec::new(Arm::Serial)
        .with_support(Support::TRIE_CALL)
        .with_contract(Contract::GeneratedCharacter);
    // Position 1: answer "r" → next support is {i, a}; answer "x" (not listed) → INVALID.
    let (t, reqs) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        let p = state_of(r)["position"].as_u64().unwrap();
        generated(r, if p == 1 { "r" } else { "x" })
    });
    assert_eq!(reqs.len(), 2);
    let mut s2: Vec<&str> = reqs[1].values();
    s2.sort();
    assert_eq!(s2, ["a", "i"]);
    assert!(t.aborted);
    assert!(!t.valid && !t.correct);
    assert_eq!(t.output, format!("r{m}{m}{m}{m}", m = INVALID_MARKER));
    assert_eq!(t.calls, 2);
    assert_eq!(
        t.steps.iter().filter(|s| s.aborted).count(),
        3,
        "later positions logged with zero calls"
    );
    assert_eq!(t.steps[1].class, Some(ResponseClass::OtherInvalid));
    assert_eq!(t.membership, Membership::Malformed);
}

#[test]
fn trie_fill_completes_unique_prefix_without_calls() {
    let item = lexical();
    let spec = ArmSpec::new(Arm::Serial).with_support(Support::TRIE_FILL);
    let (t, reqs) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        let p = state_of(r)["position"].as_u64().unwrap();
        scored(r, if p == 1 { "t" } else { "o" })
    });
    // t → {a, o}: choose o → "to" → unique "token": three fills.
    assert_eq!(reqs.len(), 2);
    assert_eq!(t.output, "token");
    assert_eq!(t.fills, 3);
    assert_eq!(t.membership, Membership::OtherCandidate);
}

#[test]
fn native_scores_candidates_and_generated_native_is_strict() {
    let item = figure_one();
    let (t, reqs) = run(
        Controller::new(&item, ArmSpec::new(Arm::Native), None, &cfg()).unwrap(),
        |r| scored(r, "585"),
    );
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].options.len(), 8);
    assert_eq!(reqs[0].options[0].code, "A");
    assert!(t.correct && t.valid);
    assert_eq!(t.membership, Membership::Gold);
    let gen = ArmSpec::new(Arm::Native).with_contract(Contract::GeneratedString);
    let (t2, _) = run(Controller::new(&item, gen, None, &cfg()).unwrap(), |r| {
        generated(r, "The answer is 585")
    });
    assert!(!t2.correct && !t2.valid);
    assert_eq!(t2.steps[0].class, Some(ResponseClass::ExtraText));
    let (t3, _) = run(Controller::new(&item, gen, None, &cfg()).unwrap(), |r| {
        generated(r, " 585\n")
    });
    assert!(t3.correct && t3.valid);
    let ctl = ArmSpec::new(Arm::NativeControl);
    let (_, reqs) = run(Controller::new(&item, ctl, None, &cfg()).unwrap(), |r| {
        scored(r, "585")
    });
    assert!(state_of(&reqs[0]).get("problem").is_none());
}

#[test]
fn gold_copy_withholds_candidates_and_scores_fidelity() {
    let item = figure_one();
    let spec = ArmSpec::new(Arm::GoldCopy);
    let (t, reqs) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        let s = state_of(r);
        let p = s["position"].as_u64().unwrap() as usize;
        scored(r, &s["copy_target"].as_str().unwrap()[p - 1..p])
    });
    assert!(reqs.iter().all(|r| state_of(r).get("candidates").is_none()));
    assert_eq!(t.fidelity, Some(true));
    assert!(t.correct);
}

#[test]
fn self_plan_spell_copies_a_wrong_plan_faithfully() {
    let item = figure_one();
    for control in [CopyControl::Serial, CopyControl::Independent] {
        let mut spec = ArmSpec::new(Arm::SelfPlanSpell);
        spec.evidence = Evidence::Indexed;
        spec.copy_control = control;
        let c = Controller::new(&item, spec, Some("389".into()), &cfg()).unwrap();
        let (t, reqs) = run(c, |r| {
            let s = state_of(r);
            assert_eq!(s["indexed_characters"].as_array().unwrap().len(), 3);
            let p = s["position"].as_u64().unwrap() as usize;
            scored(r, &"389"[p - 1..p])
        });
        assert_eq!(reqs.len(), 3);
        assert_eq!(t.output, "389");
        assert_eq!(t.fidelity, Some(true), "faithful to the plan");
        assert!(!t.correct, "but the plan is wrong");
        assert_eq!(t.plan.as_deref(), Some("389"));
    }
    assert!(Controller::new(&item, ArmSpec::new(Arm::SelfPlanSpell), None, &cfg()).is_err());
}

#[test]
fn serial_stop_exact_completion_and_cap() {
    let item = figure_one();
    let spec = ArmSpec::new(Arm::SerialStop);
    let (t, reqs) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        let p = state_of(r)["position"].as_u64().unwrap() as usize;
        assert_eq!(r.options.len(), 51);
        scored(r, if p <= 3 { &"585"[p - 1..p] } else { END })
    });
    assert_eq!(reqs.len(), 4);
    assert_eq!(t.output, "585");
    assert!(t.correct);
    assert_eq!(
        t.stop.as_ref().unwrap().category,
        StopCategory::ExactCompletion
    );
    // Never END: the cap of L+3 = 6 requests ends the trajectory.
    let (t2, reqs2) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        scored(r, "5")
    });
    assert_eq!(reqs2.len(), 6);
    assert_eq!(
        t2.stop.as_ref().unwrap().category,
        StopCategory::CapExhaustion
    );
    assert!(t2.stop.as_ref().unwrap().cap_exhausted);
    // END right away.
    let (t3, _) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        scored(r, END)
    });
    assert_eq!(
        t3.stop.as_ref().unwrap().category,
        StopCategory::PrematureEnd
    );
    assert!(Controller::new(&item, spec.with_support(Support::UNION_CALL), None, &cfg()).is_err());
    assert!(Controller::new(
        &item,
        spec.with_contract(Contract::GeneratedCharacter),
        None,
        &cfg()
    )
    .is_err());
}

#[test]
fn prefix_continue_appends_prefix_after_assistant_boundary() {
    let item = figure_one();
    let spec = ArmSpec::new(Arm::PrefixContinue).with_contract(Contract::GeneratedString);
    let (t, reqs) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        let prefix = r.assistant_prefix.clone().unwrap();
        let rest = &"585"[prefix.len()..];
        generated(r, rest)
    });
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[2].assistant_prefix.as_deref(), Some("58"));
    assert!(state_of(&reqs[0]).get("position").is_none());
    assert!(state_of(&reqs[0]).get("current_prefix").is_none());
    assert_eq!(t.output, "585");
    assert!(t.correct);
}

#[test]
fn whole_generate_records_outside_strings() {
    let item = figure_one();
    let spec = ArmSpec::new(Arm::WholeGenerate).with_contract(Contract::GeneratedString);
    let (t, _) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        generated(r, "589")
    });
    assert!(!t.correct && t.valid);
    assert_eq!(t.membership, Membership::OtherCandidate);
    let (t2, _) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        generated(r, "123")
    });
    assert_eq!(t2.membership, Membership::Outside);
    assert!(!t2.valid);
}

#[test]
fn requests_are_deterministic() {
    let item = lexical();
    let spec = ArmSpec::new(Arm::Serial).with_support(Support::UNION_CALL);
    let (_, a) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        scored(r, "a")
    });
    let (_, b) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        scored(r, "a")
    });
    assert_eq!(a, b);
}

proptest! {
    /// Every completed, valid Trie output is a candidate; Union outputs stay inside the
    /// position unions; any answer stream leaves a complete trajectory of length L.
    #[test]
    fn trie_outputs_are_candidates(choices in proptest::collection::vec(0usize..40, 8), fill in any::<bool>(), gen in any::<bool>()) {
        for item in [figure_one(), lexical()] {
            let support = if fill { Support::TRIE_FILL } else { Support::TRIE_CALL };
            let contract = if gen { Contract::GeneratedCharacter } else { Contract::ScoredCode };
            let spec = ArmSpec::new(Arm::Serial).with_support(support).with_contract(contract);
            let mut k = 0;
            let (t, _) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
                let pick = choices[k % choices.len()];
                k += 1;
                // Out-of-range picks produce an unlisted answer.
                let value = r.options.get(pick).map(|o| o.value.clone()).unwrap_or_else(|| "?".into());
                if gen { generated(r, &value) } else { scored(r, &value) }
            });
            prop_assert_eq!(t.output.chars().count(), item.length);
            if t.valid {
                prop_assert!(item.candidates.contains(&t.output));
            } else {
                prop_assert!(t.output.contains(INVALID_MARKER));
            }
            prop_assert_eq!(t.calls + t.fills + t.steps.iter().filter(|s| s.aborted).count() as u32, item.length as u32);
        }
    }

    #[test]
    fn union_outputs_stay_in_position_unions(choices in proptest::collection::vec(0usize..26, 8)) {
        let item = lexical();
        let spec = ArmSpec::new(Arm::Serial).with_support(Support::UNION_CALL);
        let mut k = 0;
        let (t, _) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
            let pick = choices[k % choices.len()] % r.options.len();
            k += 1;
            scored(r, &r.options[pick].value.clone())
        });
        prop_assert!(
            matches!(t.membership, Membership::Gold | Membership::OtherCandidate)
                || (t.membership == Membership::Outside && t.recombination)
        );
    }
}

#[test]
fn step_records_are_found_by_request_id() {
    let item = figure_one();
    let mut c = Controller::new(&item, ArmSpec::new(Arm::Serial), None, &cfg()).unwrap();
    let first = c.start().unwrap().remove(0);
    assert!(c.step_for(&first.request_id).is_none());
    c.on_response(&scored(&first, "5")).unwrap();
    let step = c.step_for(&first.request_id).unwrap();
    assert_eq!(step.position, 1);
    assert_eq!(step.emitted, "5");
}
