//! Controller behaviour of the readout, copy, symbolic (twelve-character, binding), prefix
//! intervention, batch and padded arms, driven by scripted responders (no model); the other
//! arms are in `controllers.rs`.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use c2s_protocol::{Controller, ControllerConfig, ControllerError};
use c2s_records::{
    Answer, Arm, ArmSpec, Contract, CopyControl, Evidence, Item, Membership, OptionOrder, Request,
    ResponseClass, Support, Template, INVALID_MARKER,
};
use serde_json::Value;

mod common;
use common::*;

fn readout_spec(
    arm: Arm,
    template: Template,
    contract: Contract,
    order: OptionOrder,
    evidence: Evidence,
) -> ArmSpec {
    let mut spec = ArmSpec::new(arm).with_contract(contract);
    spec.template = Some(template);
    spec.order = order;
    spec.evidence = evidence;
    spec
}

fn user_of(req: &Request) -> Value {
    serde_json::from_str(&req.user).unwrap()
}

/// E.5: "User JSON has exactly state, question, choices, and response_format. All arms supply
/// copy_target, query_position, indexing set to one-based, and the complete
/// indexed_characters list. … Each ordered choices entry maps a displayed uppercase code to
/// option_name and criterion. Codes bind to characters once per parent. O0 to O2 permute
/// display order while preserving those bindings. Option names, response codes and character
/// criteria are distinct in the opaque condition." B.5: "each supply a target and one
/// preselected position".
#[test]
fn readout_asks_one_preselected_position_with_bound_opaque_choices() {
    let item = lexical();
    let p = c2s_protocol::query_position(&item, cfg().option_seed);
    assert!((1..=5).contains(&p));
    let mut bindings: Vec<Vec<(String, String, String)>> = Vec::new();
    for order in [
        OptionOrder::Reference,
        OptionOrder::Permuted(1),
        OptionOrder::Permuted(2),
    ] {
        for template in [Template::T0, Template::T1, Template::T2] {
            let spec = readout_spec(
                Arm::GoldCopy,
                template,
                Contract::GeneratedCharacter,
                order,
                Evidence::Indexed,
            );
            let (t, reqs) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
                generated(r, &"apple"[p as usize - 1..p as usize])
            });
            assert_eq!(reqs.len(), 1, "one request per item, not L");
            let r = &reqs[0];
            assert_eq!(r.step, p, "the query position is recorded as the step");
            assert_eq!(t.steps.len(), 1);
            assert_eq!(t.steps[0].position, p);
            assert!(t.correct && t.fidelity == Some(true), "{t:?}");
            assert_eq!(t.output.len(), 1);
            let u = user_of(r);
            let keys: Vec<&String> = u.as_object().unwrap().keys().collect();
            assert_eq!(keys, ["state", "question", "choices", "response_format"]);
            let state = state_of(r);
            assert_eq!(state["query_position"], p);
            assert_eq!(state["copy_target"], "apple");
            assert_eq!(state["indexing"], "one-based");
            assert_eq!(state["indexed_characters"].as_array().unwrap().len(), 5);
            assert!(state.get("query_character").is_none());
            let choices = u["choices"].as_object().unwrap();
            assert_eq!(choices.len(), 26);
            let entries: Vec<(String, String, String)> = choices
                .iter()
                .map(|(code, e)| {
                    let fields: Vec<&String> = e.as_object().unwrap().keys().collect();
                    assert_eq!(fields, ["option_name", "criterion"]);
                    (
                        code.clone(),
                        e["option_name"].as_str().unwrap().to_string(),
                        e["criterion"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            // Distinct codes, names and criteria, and no name equals a code or a criterion.
            for k in 0..3 {
                let set: std::collections::BTreeSet<&String> = entries
                    .iter()
                    .map(|e| match k {
                        0 => &e.0,
                        1 => &e.1,
                        _ => &e.2,
                    })
                    .collect();
                assert_eq!(set.len(), 26);
            }
            assert!(entries
                .iter()
                .all(|(c, n, v)| n != c && n != v && c.chars().all(|x| x.is_ascii_uppercase())));
            // Display order follows the request's options.
            let displayed: Vec<&String> = r.options.iter().map(|o| &o.code).collect();
            assert_eq!(displayed, entries.iter().map(|e| &e.0).collect::<Vec<_>>());
            let mut sorted = entries.clone();
            sorted.sort();
            bindings.push(sorted);
        }
    }
    // Same bindings (code → name → criterion) under every order and template …
    assert!(bindings.iter().all(|b| *b == bindings[0]));
    // … but O1 and O2 change the display order.
    let display = |order| {
        let spec = readout_spec(
            Arm::GoldCopy,
            Template::T0,
            Contract::GeneratedCode,
            order,
            Evidence::Direct,
        );
        let mut c = Controller::new(&item, spec, None, &cfg()).unwrap();
        let r = c.start().unwrap().remove(0);
        assert_eq!(
            state_of(&r)["query_character"],
            &"apple"[p as usize - 1..p as usize]
        );
        r.options.iter().map(|o| o.code.clone()).collect::<Vec<_>>()
    };
    let o0 = display(OptionOrder::Reference);
    assert_ne!(o0, display(OptionOrder::Permuted(1)));
    assert_ne!(o0, display(OptionOrder::Permuted(2)));
    assert_ne!(
        display(OptionOrder::Permuted(1)),
        display(OptionOrder::Permuted(2))
    );
}

/// The preselected position is a seeded rule independent of outcomes: fixed per (seed, item),
/// shared by GoldCopy and SelfPlanSpell readouts, and spread over positions across items.
#[test]
fn query_position_is_seeded_per_item() {
    let item = figure_one();
    let p = c2s_protocol::query_position(&item, 11);
    assert_eq!(p, c2s_protocol::query_position(&item, 11));
    let spec = readout_spec(
        Arm::SelfPlanSpell,
        Template::T2,
        Contract::GeneratedCode,
        OptionOrder::Reference,
        Evidence::Raw,
    );
    let mut c = Controller::new(&item, spec, Some("389".into()), &cfg()).unwrap();
    let reqs = c.start().unwrap();
    assert_eq!(reqs.len(), 1);
    assert_eq!(state_of(&reqs[0])["query_position"], p);
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..64 {
        let it = c2s_records::parse_item(
            &format!(
                r#"{{"item_id":"q{i}","domain":"arithmetic","problem":"p","target":"585",
                   "candidates":["585","589","385","389","485","489","685","689"]}}"#
            ),
            &Default::default(),
        )
        .unwrap();
        seen.insert(c2s_protocol::query_position(&it, 11));
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), [1, 2, 3]);
}

/// E.6: "Decoded responses are scored without case repair, whitespace trimming or code
/// mapping"; the required character's bound code fails the character contract (Table E3).
#[test]
fn readout_responses_are_not_trimmed_and_bound_codes_fail() {
    let item = figure_one();
    let p = c2s_protocol::query_position(&item, cfg().option_seed) as usize;
    let required = &"585"[p - 1..p];
    let spec = readout_spec(
        Arm::GoldCopy,
        Template::T0,
        Contract::GeneratedCharacter,
        OptionOrder::Reference,
        Evidence::Indexed,
    );
    let (t, _) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        generated(r, &format!(" {required}"))
    });
    assert!(!t.correct && !t.valid);
    assert_eq!(t.steps[0].class, Some(ResponseClass::ExtraText));
    let (t, _) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        let code = r
            .options
            .iter()
            .find(|o| o.value == required)
            .unwrap()
            .code
            .clone();
        generated(r, &code)
    });
    assert!(!t.correct);
    assert_eq!(t.steps[0].class, Some(ResponseClass::CorrectBoundCode));
    // The natural local contract (E.2) still removes outer whitespace.
    let serial = ArmSpec::new(Arm::Serial).with_contract(Contract::GeneratedCharacter);
    let (t, _) = run(Controller::new(&item, serial, None, &cfg()).unwrap(), |r| {
        let pos = state_of(r)["position"].as_u64().unwrap() as usize;
        generated(r, &format!(" {}\n", &"585"[pos - 1..pos]))
    });
    assert!(t.correct);
    // Readout shows every character: other supports are refused.
    let mut union = spec;
    union.support = Support::UNION_CALL;
    assert!(Controller::new(&item, union, None, &cfg()).is_err());
}

/// D.12, "Copying supplied incorrect targets": "Ninety-six parents … each receive matched
/// correct/incorrect targets under Raw and Indexed. … Records retain difference counts and
/// distinguish observed from constructed plans." IncorrectCopy shows only the supplied plan
/// (like gold Copy, no candidates), is scored by fidelity to it, and records how many
/// positions it differs from gold and where it came from.
#[test]
fn incorrect_copy_copies_a_supplied_wrong_target() {
    let item = figure_one();
    for (evidence, control) in [
        (Evidence::Raw, CopyControl::Independent),
        (Evidence::Indexed, CopyControl::Serial),
    ] {
        let mut spec = ArmSpec::new(Arm::IncorrectCopy);
        spec.evidence = evidence;
        spec.copy_control = control;
        let mut c = Controller::new(&item, spec, Some("489".into()), &cfg()).unwrap();
        c.set_plan_origin(c2s_records::PlanOrigin::Observed);
        let (t, reqs) = run(c, |r| {
            let s = state_of(r);
            assert_eq!(s["copy_target"], "489");
            assert!(s.get("candidates").is_none(), "the candidates are withheld");
            let p = s["position"].as_u64().unwrap() as usize;
            scored(r, &"489"[p - 1..p])
        });
        assert_eq!(reqs.len(), 3);
        assert_eq!(t.output, "489");
        assert_eq!(t.fidelity, Some(true));
        assert!(
            !t.correct,
            "a faithfully copied incorrect plan fails gold EM"
        );
        assert_eq!(
            t.plan_differences,
            Some(2),
            "489 differs from 585 at two positions"
        );
        assert_eq!(t.plan_origin.map(|o| o.as_str()), Some("observed"));
        assert!(t.arm.starts_with("IncorrectCopy/Full/code/"), "{}", t.arm);
    }
    let spec = ArmSpec::new(Arm::IncorrectCopy);
    // No plan, the gold plan, a plan of another length or outside the alphabet: refused.
    for (plan, needle) in [
        (None, "supplied incorrect target"),
        (Some("585"), "equals its gold target"),
        (Some("58"), "item length"),
        (Some("5x5"), "outside the arithmetic alphabet"),
    ] {
        let e = Controller::new(&item, spec, plan.map(str::to_string), &cfg()).unwrap_err();
        assert!(e.to_string().contains(needle), "{e}");
    }
    // A Fill rule would supply the candidates' character instead of the plan's; the readout
    // grid reads gold targets.
    let mut fill = ArmSpec::new(Arm::IncorrectCopy).with_support(Support::FULL_FILL);
    fill.evidence = Evidence::Raw;
    assert!(Controller::new(&item, fill, Some("489".into()), &cfg()).is_err());
    let mut readout = ArmSpec::new(Arm::IncorrectCopy);
    readout.template = Some(Template::T0);
    assert!(Controller::new(&item, readout, Some("489".into()), &cfg()).is_err());
    // Gold copy records a zero-difference gold plan.
    let (t, _) = run(
        Controller::new(&item, ArmSpec::new(Arm::GoldCopy), None, &cfg()).unwrap(),
        |r| {
            let s = state_of(r);
            let p = s["position"].as_u64().unwrap() as usize;
            scored(r, &"585"[p - 1..p])
        },
    );
    assert_eq!(
        (t.plan_differences, t.plan_origin.map(|o| o.as_str())),
        (Some(0), Some("gold"))
    );
}

/// A D.7 presentation: a twelve-character reversal over a–j with branches at positions 2/3.
fn twelve_early() -> Item {
    c2s_records::parse_item(
        r#"{"item_id":"tc-01-early","domain":"symbolic_letters","problem":"Reverse this string: jddibbhibieh",
           "target":"heibihbbiddj",
           "candidates":["hcibihbbiddj","hdibihbbiddj","hiibihbbiddj","hefbihbbiddj","heibihbbiddj","hifbihbbiddj","hcfbihbbiddj","hdfbihbbiddj"],
           "symbolic":{"panel":"twelve_character","base_id":"tc-01","operation":"reverse","source":"jddibbhibieh","placement":"early","repeated":true}}"#,
        &c2s_records::ItemPolicy { min_length: 3, max_length: 12 },
    )
    .unwrap()
}

/// D.7: "The local alphabet (a–j or a–z) and number of queried positions (two or six) are
/// crossed with branch placement. Both branch positions are always queried; six-query
/// controllers also query positions 1,4,8,12. Other positions are filled only from singleton
/// candidate unions. These fills use no gold answer." — FullFill queries the two branch
/// positions; `also_query` adds 1, 4, 8, 12; `alphabet = lowercase` offers 26 letters.
#[test]
fn twelve_character_controllers_cross_alphabet_and_query_count() {
    let item = twelve_early();
    let six = c2s_records::QueryPositions::from_positions(&[1, 4, 8, 12]).unwrap();
    for (alphabet, also, options, queried) in [
        (
            c2s_records::LocalAlphabet::Domain,
            Default::default(),
            10,
            vec![2, 3],
        ),
        (
            c2s_records::LocalAlphabet::Lowercase,
            Default::default(),
            26,
            vec![2, 3],
        ),
        (
            c2s_records::LocalAlphabet::Domain,
            six,
            10,
            vec![1, 2, 3, 4, 8, 12],
        ),
        (
            c2s_records::LocalAlphabet::Lowercase,
            six,
            26,
            vec![1, 2, 3, 4, 8, 12],
        ),
    ] {
        let mut spec = ArmSpec::new(Arm::Serial).with_support(Support::FULL_FILL);
        spec.alphabet = alphabet;
        spec.also_query = also;
        c2s_protocol::validate_spec(&spec).unwrap();
        let gold: Vec<char> = item.target.chars().collect();
        let (t, reqs) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
            let pos = state_of(r)["position"].as_u64().unwrap() as usize;
            scored(r, &gold[pos - 1].to_string())
        });
        let mut asked: Vec<u32> = reqs.iter().map(|r| r.step).collect();
        asked.sort();
        assert_eq!(asked, queried, "{}", t.arm);
        assert!(reqs.iter().all(|r| r.options.len() == options), "{}", t.arm);
        // Serial keeps the problem, candidates and its actual prefix.
        for r in &reqs {
            let s = state_of(r);
            assert!(s["candidates"].is_array() && s["problem"].is_string());
            assert_eq!(
                s["current_prefix"].as_str().unwrap().len() + 1,
                s["position"].as_u64().unwrap() as usize
            );
        }
        assert_eq!(t.calls as usize, queried.len());
        assert_eq!(t.fills as usize, 12 - queried.len());
        assert!(t.correct, "{}", t.arm);
        assert_eq!(t.base_id.as_deref(), Some("tc-01"));
        assert_eq!(t.placement.map(|p| p.as_str()), Some("early"));
    }
}

/// An a–z answer outside a–j is a listed value of the 26-letter arm: a well-formed wrong
/// string, not a malformed one.
#[test]
fn lowercase_alphabet_answers_outside_the_source_symbols_are_well_formed() {
    let item = twelve_early();
    let mut spec = ArmSpec::new(Arm::Serial).with_support(Support::FULL_FILL);
    spec.alphabet = c2s_records::LocalAlphabet::Lowercase;
    let (t, _) = run(Controller::new(&item, spec, None, &cfg()).unwrap(), |r| {
        scored(r, "z")
    });
    assert_eq!(t.output, "hzzbihbbiddj");
    assert!(t.valid && !t.correct);
    assert_eq!(t.membership, Membership::Outside);
}

#[test]
fn widened_alphabet_and_extra_queries_are_refused_where_undefined() {
    let mut native = ArmSpec::new(Arm::Native);
    native.alphabet = c2s_records::LocalAlphabet::Lowercase;
    assert!(c2s_protocol::validate_spec(&native).is_err());
    let mut union = ArmSpec::new(Arm::Serial).with_support(Support::UNION_FILL);
    union.alphabet = c2s_records::LocalAlphabet::Lowercase;
    assert!(c2s_protocol::validate_spec(&union).is_err());
    let mut call = ArmSpec::new(Arm::Serial);
    call.also_query = c2s_records::QueryPositions::from_positions(&[1]).unwrap();
    assert!(c2s_protocol::validate_spec(&call).is_err());
}

/// A.5: "COPY/REVERSE and digit/letter encodings create four presentations per base, with
/// shared geometry and matched order": the letter presentation's local codes bind the images
/// of the digit presentation's values (the binding is seeded by the base).
#[test]
fn symbolic_presentations_of_a_base_have_matched_local_order() {
    let digits = c2s_records::parse_item(
        r#"{"item_id":"cr-L3-01-copy-digits","domain":"symbolic_digits","problem":"Copy this string exactly: 585",
           "target":"585","candidates":["585","589","385","389","485","489","685","689"],
           "symbolic":{"panel":"copy_reverse","base_id":"cr-L3-01","operation":"copy","source":"585","placement":"late","repeated":true}}"#,
        &Default::default(),
    )
    .unwrap();
    let letters = c2s_records::parse_item(
        r#"{"item_id":"cr-L3-01-reverse-letters","domain":"symbolic_letters","problem":"Reverse this string: fif",
           "target":"fif","candidates":["fif","fij","dif","dij","eif","eij","gif","gij"],
           "symbolic":{"panel":"copy_reverse","base_id":"cr-L3-01","operation":"reverse","source":"fif","placement":"late","repeated":true}}"#,
        &Default::default(),
    )
    .unwrap();
    let spec = ArmSpec::new(Arm::Serial);
    let first = |item: &Item| {
        let mut c = Controller::new(item, spec, None, &cfg()).unwrap();
        c.start().unwrap().remove(0)
    };
    let (d, l) = (first(&digits), first(&letters));
    let image: Vec<String> = d
        .options
        .iter()
        .map(|o| ((b'a' + o.value.parse::<u8>().unwrap()) as char).to_string())
        .collect();
    let letter_values: Vec<String> = l.options.iter().map(|o| o.value.clone()).collect();
    assert_eq!(letter_values, image);
}

/// B.5: "Sixty parents per domain and twelve symbolic bases each supply a target and one
/// preselected position"; A.5: "The single position panel has 120 natural parents and twelve
/// symbolic COPY bases with two encodings: 144 records, 132 independent clusters" and "A
/// second mapping to etaoinshrd uses twelve fixed bases." On the shipped readout bases, the a–j
/// and etaoinshrd presentations of a base are asked the same position, and their choices bind
/// the same codes to the images of the same digits, under the same names up to the mapping,
/// in every name condition (the base is the parent).
#[test]
fn binding_encodings_of_a_base_share_position_codes_and_names() {
    use c2s_records::{Domain, OptionNames};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/banks/binding-symbolic.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let items: Vec<Item> = text
        .lines()
        .map(|l| c2s_records::parse_item(l, &Default::default()).unwrap())
        .collect();
    assert_eq!(items.len(), 24);
    // The digit each letter encodes.
    let digit = |domain: Domain, v: &str| {
        let c = v.chars().next().unwrap();
        domain.alphabet().iter().position(|&a| a == c).unwrap()
    };
    let names_digits = |domain: Domain, name: &str| -> String {
        // `letter_x` states x; an opaque name is kept (it names the criterion itself).
        match name.strip_prefix("letter_") {
            Some(v) => format!("digit {}", digit(domain, v)),
            None => name.to_string(),
        }
    };
    for pair in items.chunks(2) {
        let (letters, etaoin) = (&pair[0], &pair[1]);
        assert_eq!(letters.domain, Domain::SymbolicLetters);
        assert_eq!(etaoin.domain, Domain::SymbolicEtaoin);
        let p = c2s_protocol::query_position(letters, cfg().option_seed);
        assert_eq!(p, c2s_protocol::query_position(etaoin, cfg().option_seed));
        for names in [
            OptionNames::Opaque,
            OptionNames::OpaqueRemapped,
            OptionNames::ReadableAligned,
            OptionNames::ReadableConflicting,
        ] {
            let mut spec = readout_spec(
                Arm::GoldCopy,
                Template::T0,
                Contract::ScoredCode,
                OptionOrder::Reference,
                Evidence::Raw,
            );
            spec.names = names;
            let view = |item: &Item| {
                let mut c = Controller::new(item, spec, None, &cfg()).unwrap();
                let r = c.start().unwrap().remove(0);
                assert_eq!(r.step, p);
                let u = user_of(&r);
                let choices: Vec<(String, usize, String)> = u["choices"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(code, e)| {
                        let criterion = e["criterion"].as_str().unwrap();
                        let name = e["option_name"].as_str().unwrap();
                        (
                            code.clone(),
                            digit(item.domain, criterion),
                            match names {
                                // Opaque names hash the criterion: compare which criterion's
                                // opaque name it is, as a digit.
                                OptionNames::Opaque | OptionNames::OpaqueRemapped => {
                                    let named = item
                                        .domain
                                        .alphabet()
                                        .iter()
                                        .position(|a| {
                                            c2s_protocol::prompts::opaque_option_name(
                                                &a.to_string(),
                                            ) == name
                                        })
                                        .unwrap();
                                    format!("digit {named}")
                                }
                                _ => names_digits(item.domain, name),
                            },
                        )
                    })
                    .collect();
                assert_eq!(choices.len(), 10, "ten local choices");
                choices
            };
            assert_eq!(
                view(letters),
                view(etaoin),
                "{} / {} under {names:?}",
                letters.item_id,
                etaoin.item_id
            );
        }
    }
}

/// A.4: "The prefix intervention preselects one position per item and crosses correct/error
/// drafts with readout of the whole answer or a local character. An error draft flips one
/// preceding character." One request per arm: the draft is `current_prefix`; the character
/// readout asks the Serial question at the preselected position over the local alphabet, the
/// whole readout the Native question over the eight candidates; both drafts of an item share
/// the position.
#[test]
fn prefix_intervention_crosses_drafts_and_readouts() {
    use c2s_records::{Draft, InterventionReadout};
    let item = lexical();
    let position = c2s_protocol::intervention::intervention_position(&item, 11);
    let mut prefixes = Vec::new();
    for readout in [InterventionReadout::Character, InterventionReadout::Whole] {
        for draft in [Draft::Correct, Draft::Error] {
            let mut spec = ArmSpec::new(Arm::PrefixIntervention);
            spec.draft = draft;
            spec.readout = readout;
            let gold_char = item.target.chars().nth(position as usize - 1).unwrap();
            let (t, reqs) =
                run(
                    Controller::new(&item, spec, None, &cfg()).unwrap(),
                    |r| match readout {
                        InterventionReadout::Character => scored(r, &gold_char.to_string()),
                        InterventionReadout::Whole => scored(r, "apple"),
                    },
                );
            assert_eq!(reqs.len(), 1, "{}", t.arm);
            let state = state_of(&reqs[0]);
            let prefix = state["current_prefix"].as_str().unwrap().to_string();
            assert_eq!(prefix.len() as u32, position - 1);
            match draft {
                Draft::Correct => assert_eq!(prefix, item.target[..prefix.len()]),
                Draft::Error => {
                    let diffs = prefix
                        .chars()
                        .zip(item.target.chars())
                        .filter(|(a, b)| a != b)
                        .count();
                    assert_eq!(diffs, 1, "{prefix}");
                }
            }
            prefixes.push((readout, draft, prefix));
            match readout {
                InterventionReadout::Character => {
                    assert_eq!(reqs[0].options.len(), 26);
                    assert_eq!(state["position"].as_u64(), Some(u64::from(position)));
                    assert!(reqs[0].instruction.starts_with(
                        "Solve the original problem. Select its true answer character"
                    ));
                    assert_eq!(t.output, gold_char.to_string());
                }
                InterventionReadout::Whole => {
                    assert_eq!(reqs[0].options.len(), 8);
                    assert!(state.get("position").is_none());
                    assert_eq!(
                        reqs[0].instruction,
                        "Select the complete correct answer from the provided candidates."
                    );
                    assert_eq!(t.output, "apple");
                }
            }
            assert!(t.correct, "{}", t.arm);
            assert!(t.arm.starts_with("PrefixIntervention/"));
        }
    }
    // Both readouts of a draft show the same draft.
    assert_eq!(prefixes[0].2, prefixes[2].2);
    assert_eq!(prefixes[1].2, prefixes[3].2);
    let mut other = ArmSpec::new(Arm::Serial);
    other.draft = Draft::Error;
    assert!(c2s_protocol::validate_spec(&other).is_err());
}

fn batch_spec(contract: Contract) -> ArmSpec {
    let mut spec = ArmSpec::new(Arm::GoldCopy).with_contract(contract);
    spec.copy_control = CopyControl::Batch;
    spec
}

/// D.11: "Batch bundles these questions: native multi-field decisions for Jev/StartLux,
/// strict JSON for Qwen." Scored: one bundled user message for every field, the fields decided
/// in order inside one answer (each request's assistant prefix is the JSON answer so far, with
/// the codes chosen before); the state lists every position and shows no draft.
#[test]
fn scored_batch_decides_the_fields_in_order_inside_one_answer() {
    let item = figure_one();
    let c = Controller::new(&item, batch_spec(Contract::ScoredCode), None, &cfg()).unwrap();
    let (t, reqs) = run(c, |r| {
        let p = r.step as usize;
        scored(r, &item.target[p - 1..p])
    });
    assert_eq!(reqs.len(), 3);
    assert!(
        reqs.iter().all(|r| r.user == reqs[0].user),
        "one bundled question"
    );
    let state = state_of(&reqs[0]);
    assert_eq!(state["positions"], serde_json::json!([1, 2, 3]));
    assert!(state.get("position").is_none() && state.get("current_prefix").is_none());
    assert_eq!(state["copy_target"], "585");
    assert_eq!(
        reqs[0].instruction,
        "Copy copy_target exactly. Select its character at each listed one-based position."
    );
    let code_of = |r: &Request, v: &str| {
        r.options
            .iter()
            .find(|o| o.value == v)
            .unwrap()
            .code
            .clone()
    };
    assert_eq!(reqs[0].assistant_prefix.as_deref(), Some("{\"1\": \""));
    assert_eq!(
        reqs[2].assistant_prefix.clone().unwrap(),
        format!(
            "{{\"1\": \"{}\", \"2\": \"{}\", \"3\": \"",
            code_of(&reqs[0], "5"),
            code_of(&reqs[1], "8")
        )
    );
    assert!(t.correct && t.fidelity == Some(true));
    assert_eq!(t.calls, 3);
    assert!(t.arm.ends_with("/raw/batch"));
}

/// Generated Batch: one request answered by one strict JSON object; anything else fails.
#[test]
fn generated_batch_is_one_strict_json_answer() {
    let item = figure_one();
    let spec = batch_spec(Contract::GeneratedCharacter);
    let answer = |text: &'static str, truncated: bool| {
        let c = Controller::new(&item, spec, None, &cfg()).unwrap();
        run(c, move |r| {
            let mut g = generated(r, text);
            if let Answer::Generated { truncated: t, .. } = &mut g.answer {
                *t = truncated;
            }
            g
        })
    };
    let (t, reqs) = answer("{\"1\": \"5\", \"2\": \"8\", \"3\": \"5\"}", false);
    assert_eq!(reqs.len(), 1);
    assert!(matches!(
        reqs[0].decoding,
        c2s_records::Decoding::Greedy { max_new_tokens: 96 }
    ));
    assert!(t.correct && t.valid);
    assert_eq!((t.calls, t.steps.len()), (1, 3));
    assert!(reqs[0].user.contains(
        "Output only a JSON object that maps each listed position to its selected value."
    ));
    // A wrong listed value is a valid wrong string.
    let (t, _) = answer("{\"1\": \"5\", \"2\": \"8\", \"3\": \"9\"}", false);
    assert!(t.valid && !t.correct);
    assert_eq!(t.output, "589");
    // A value that is not listed fails its position.
    let (t, _) = answer("{\"1\": \"5\", \"2\": \"eight\", \"3\": \"5\"}", false);
    assert!(!t.valid);
    assert_eq!(t.output, format!("5{INVALID_MARKER}5"));
    for bad in [
        "{\"1\": \"5\", \"2\": \"8\", \"3\": \"5\", \"4\": \"0\"}", // extra key
        "{\"1\": \"5\", \"2\": \"8\"}",                             // missing key
        "585",                                                      // not an object
        "{\"1\": \"5\", \"2\": \"8\", \"3\": \"5\"} done",          // trailing text
    ] {
        let (t, _) = answer(bad, false);
        assert!(!t.valid && !t.correct, "{bad}");
        assert!(
            t.steps
                .iter()
                .all(|s| s.class == Some(ResponseClass::OtherInvalid)),
            "{bad}"
        );
    }
    let (t, _) = answer("{\"1\": \"5\", \"2\"", true);
    assert!(t
        .steps
        .iter()
        .all(|s| s.class == Some(ResponseClass::Truncated)));
}

/// A stand-in tokenizer for D.9's token control: every character of the user message is a
/// token, except that runs of dots merge four at a time (so the padding is not its own
/// length in tokens).
struct CharTokens;

impl c2s_protocol::PromptTokenCounter for CharTokens {
    fn prompt_tokens(&self, r: &Request) -> Result<u32, c2s_protocol::PromptTokensError> {
        let mut n = 0u32;
        let mut dots = 0u32;
        for c in r.user.chars() {
            if c == '.' {
                dots += 1;
                continue;
            }
            n += dots.div_ceil(4) + 1;
            dots = 0;
        }
        Ok(n + dots.div_ceil(4))
    }
}

fn token_cfg() -> ControllerConfig {
    ControllerConfig {
        tokens: Some(c2s_protocol::TokenCounterRef(std::sync::Arc::new(
            CharTokens,
        ))),
        ..cfg()
    }
}

/// D.9's token control: "Punctuation, excluding answer symbols and index numbers, matches the
/// pinned tokenizer's full rendered Indexed request at the same prefix. Every realized match
/// is verified; generated prefixes remain arm-specific." Each PaddedTokens request has the
/// token count of the Indexed request rendered at its own prefix; its state is Raw's plus a
/// run of dots; the engine's count is checked against the match; without the tokenizer the
/// arm does not start.
#[test]
fn padded_tokens_match_the_indexed_request_at_the_same_prefix() {
    let item = figure_one();
    let mut spec = ArmSpec::new(Arm::GoldCopy);
    spec.evidence = Evidence::PaddedTokens;
    spec.copy_control = CopyControl::Serial;
    let mut indexed = spec;
    indexed.evidence = Evidence::Indexed;
    let mut raw = spec;
    raw.evidence = Evidence::Raw;
    let cfg = token_cfg();
    let count = |r: &Request| c2s_protocol::PromptTokenCounter::prompt_tokens(&CharTokens, r);
    // A wrong second answer makes the prefix the arm's own, not gold's.
    let mut c = Controller::new(&item, spec, None, &cfg).unwrap();
    let mut queue = c.start().unwrap();
    let mut asked = 0;
    while let Some(req) = queue.pop() {
        let s = state_of(&req);
        let prefix = s["current_prefix"].as_str().unwrap().to_string();
        let p = s["position"].as_u64().unwrap() as usize;
        // The Indexed request at the same position and prefix, from its own controller.
        let mut ic = Controller::new(&item, indexed, None, &cfg).unwrap();
        let mut iq = ic.start().unwrap();
        for t in 1..p {
            let value = prefix[t - 1..t].to_string();
            iq = ic.on_response(&scored(&iq[0], &value)).unwrap();
        }
        let reference = &iq[0];
        assert_eq!(state_of(reference)["current_prefix"], prefix.as_str());
        assert_eq!(
            count(&req).unwrap(),
            count(reference).unwrap(),
            "{}",
            req.user
        );
        assert_eq!(
            req.options, reference.options,
            "options and order are fixed"
        );
        assert_eq!(req.instruction, reference.instruction);
        let pad = s["padding"].as_str().unwrap().to_string();
        assert!(!pad.is_empty() && pad.chars().all(|ch| ch == '.'));
        assert!(s.get("indexed_characters").is_none());
        let mut plain = Controller::new(&item, raw, None, &cfg).unwrap();
        let mut rq = plain.start().unwrap();
        for t in 1..p {
            rq = plain
                .on_response(&scored(&rq[0], &prefix[t - 1..t]))
                .unwrap();
        }
        let mut with_pad = state_of(&rq[0]);
        with_pad["padding"] = Value::from(pad);
        assert_eq!(with_pad, s, "Raw's state plus the padding, nothing else");
        let value = if p == 2 { "0" } else { &"585"[p - 1..p] };
        let mut resp = scored(&req, value);
        resp.prompt_tokens = count(&req).unwrap();
        queue.extend(c.on_response(&resp).unwrap());
        asked += 1;
    }
    assert_eq!(asked, 3);
    let t = c.trajectory("test-model").unwrap();
    assert_eq!(t.output, "505");
    for s in &t.steps {
        assert_eq!(s.matched_prompt_tokens, Some(s.prompt_tokens));
    }
    // Verification: an engine that counts the prompt differently fails the trajectory.
    let mut c = Controller::new(&item, spec, None, &cfg).unwrap();
    let first = c.start().unwrap().remove(0);
    let mut resp = scored(&first, "5");
    resp.prompt_tokens = count(&first).unwrap() + 1;
    let err = c.on_response(&resp).unwrap_err();
    assert!(matches!(err, ControllerError::TokenMatch { .. }), "{err}");
    assert!(err.to_string().contains("the engine counted"), "{err}");
    // Without the run's tokenizer nothing is asked.
    let mut c = Controller::new(&item, spec, None, &self::cfg()).unwrap();
    assert!(matches!(c.start(), Err(ControllerError::TokenMatch { .. })));
}
