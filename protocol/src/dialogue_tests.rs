//! Tests of the dialogue controller (`dialogue.rs`): requests, strict scoring and the
//! Joint / Independent / Serial controllers, each rule with the passage it follows.

use super::*;
use c2s_records::{
    CategoricalSlot, DialogueService, DialogueSplit, DialogueTurn, FinishReason, SchemaValue,
    INTENT_FIELD,
};

fn dialogue() -> Dialogue {
    let v = |id: &str, value: &str| SchemaValue {
        id: id.into(),
        value: value.into(),
        description: format!("about {value}"),
    };
    let service = DialogueService {
        name: "Restaurants".into(),
        description: "Find and reserve restaurants".into(),
        intents: vec![
            v("intent:FindRestaurants", "FindRestaurants"),
            v("intent:ReserveRestaurant", "ReserveRestaurant"),
        ],
        slots: vec![CategoricalSlot {
            name: "price_range".into(),
            description: "Price range of the restaurant".into(),
            values: vec![
                v("price_range:cheap", "cheap"),
                v("price_range:pricey", "pricey"),
            ],
        }],
    };
    let state = |i: &str, p: &str| {
        let mut s = DialogueState::new();
        s.insert(INTENT_FIELD.into(), i.into());
        s.insert("price_range".into(), p.into());
        s
    };
    Dialogue {
        dialogue_id: "d1".into(),
        split: DialogueSplit::Test,
        service,
        field_order: vec!["price_range".into(), INTENT_FIELD.into()],
        turns: vec![
            DialogueTurn {
                system: String::new(),
                user: "I want a cheap place to eat.".into(),
                state: state("FindRestaurants", "cheap"),
            },
            DialogueTurn {
                system: "How about Luigi's, it's pricey?".into(),
                user: "No thanks. Book me a table at a cheap one.".into(),
                state: state("ReserveRestaurant", "cheap"),
            },
        ],
        perturbation: None,
        perturbation_of: None,
        origin: String::new(),
    }
}

/// A run of `d` under one spec, for model `m`.
fn run_of(
    d: Arc<Dialogue>,
    arm: DialogueArm,
    mode: PriorMode,
    contract: DialogueContract,
) -> DialogueRun {
    DialogueRun::new(d, spec(arm, mode, contract), "m".into())
}

fn spec(arm: DialogueArm, mode: PriorMode, contract: DialogueContract) -> DialogueSpec {
    DialogueSpec {
        arm,
        mode,
        contract,
    }
}

fn user(r: &Request) -> Value {
    serde_json::from_str(&r.user).unwrap()
}

fn generated(r: &Request, text: &str) -> Response {
    Response {
        request_id: r.request_id.clone(),
        answer: Answer::Generated {
            text: text.into(),
            finish_reason: FinishReason::Stop,
            truncated: false,
        },
        prompt_tokens: 100,
        completion_tokens: 10,
        latency_ms: 1.0,
        cached: false,
    }
}

fn scored(r: &Request, probabilities: Vec<f64>) -> Response {
    Response {
        request_id: r.request_id.clone(),
        answer: Answer::Scored {
            probabilities,
            raw: None,
        },
        prompt_tokens: 100,
        completion_tokens: 0,
        latency_ms: 1.0,
        cached: false,
    }
}

/// E.4: "one user message JSON object with state, field_queries, and response_format";
/// each query is the instruction "followed by the literal suffix Field:, the field name,
/// ., and its schema description"; "Joint requests all fields. Independent requests only
/// the current field. Both states contain schema and dialogue_history."
#[test]
fn requests_follow_the_field_contract() {
    let d = Arc::new(dialogue());
    let mut joint = run_of(
        d.clone(),
        DialogueArm::Joint,
        PriorMode::HistoryRecompute,
        DialogueContract::Generated,
    );
    let reqs = joint.next_requests().unwrap();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0].request;
    assert!(r.system.is_none());
    let u = user(r);
    let keys: Vec<&String> = u.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["state", "field_queries", "response_format"]);
    let state_keys: Vec<&String> = u["state"].as_object().unwrap().keys().collect();
    assert_eq!(state_keys, ["schema", "dialogue_history"]);
    assert_eq!(u["response_format"], DIALOGUE_RESPONSE);
    let queries = u["field_queries"].as_array().unwrap();
    assert_eq!(queries.len(), 2, "Joint asks every field, in field order");
    assert_eq!(queries[0]["field"], "price_range");
    assert_eq!(
        queries[0]["query"],
        format!("{FIELD_INSTRUCTION} Field: price_range. Price range of the restaurant")
    );
    let values: Vec<&str> = queries[0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["UNSET", "DONTCARE", "cheap", "pricey"]);
    assert_eq!(queries[1]["values"][0]["value"], "NONE");
    assert_eq!(
        r.decoding,
        Decoding::Greedy {
            max_new_tokens: 256
        }
    );
    // No empty SYSTEM utterance before the first user turn.
    assert_eq!(u["state"]["dialogue_history"].as_array().unwrap().len(), 1);

    let mut independent = run_of(
        d,
        DialogueArm::Independent,
        PriorMode::HistoryRecompute,
        DialogueContract::Generated,
    );
    let reqs = independent.next_requests().unwrap();
    assert_eq!(reqs.len(), 2, "Independent asks each field separately");
    for p in &reqs {
        assert_eq!(
            user(&p.request)["field_queries"].as_array().unwrap().len(),
            1
        );
        assert_eq!(
            user(&p.request)["state"],
            u["state"],
            "same visible history and schema"
        );
    }
}

/// "Serial requests the current field and additionally includes partial_current_state
/// containing its actual preceding field predictions for that turn" (E.4).
#[test]
fn serial_shows_the_predictions_so_far() {
    let d = Arc::new(dialogue());
    let mut run = run_of(
        d,
        DialogueArm::Serial,
        PriorMode::HistoryRecompute,
        DialogueContract::Generated,
    );
    let first = run.next_requests().unwrap().remove(0);
    assert_eq!(
        user(&first.request)["state"]["partial_current_state"],
        json!({})
    );
    assert!(
        run.next_requests().unwrap().is_empty(),
        "one field at a time"
    );
    let r = generated(&first.request, r#"{"price_range": "pricey"}"#);
    assert!(run.take(first, Ok(r)).is_empty());
    let second = run.next_requests().unwrap().remove(0);
    let u = user(&second.request);
    assert_eq!(
        u["state"]["partial_current_state"],
        json!({"price_range": "pricey"})
    );
    assert_eq!(u["field_queries"][0]["field"], INTENT_FIELD);
    let r = generated(&second.request, r#"{"active_intent": "FindRestaurants"}"#);
    let rows = run.take(second, Ok(r));
    assert_eq!(rows.len(), 2);
    assert!(!rows[0].correct && rows[0].predicted.as_deref() == Some("pricey"));
    assert!(rows[1].correct);
    assert_eq!(rows[0].turn, 1);
}

/// "Rollout receives its previous predicted state and the latest SYSTEM/USER exchange;
/// Oracle substitutes the gold prior state" (C.1). Their first turns are the same wire
/// input ("identical wire inputs share 124 rows").
#[test]
fn rollout_carries_predictions_and_oracle_the_gold_state() {
    let d = Arc::new(dialogue());
    let mk = |mode| {
        run_of(
            d.clone(),
            DialogueArm::Joint,
            mode,
            DialogueContract::Generated,
        )
    };
    let (mut rollout, mut oracle) = (mk(PriorMode::Rollout), mk(PriorMode::Oracle));
    let (r1, o1) = (
        rollout.next_requests().unwrap().remove(0),
        oracle.next_requests().unwrap().remove(0),
    );
    assert_eq!(r1.request.prompt_key(), o1.request.prompt_key());
    assert_ne!(r1.request.request_id, o1.request.request_id);
    let u = user(&r1.request);
    assert_eq!(
        u["state"]["prior_state"],
        json!({"price_range": "UNSET", "active_intent": "NONE"})
    );
    let wrong = r#"{"price_range": "pricey", "active_intent": "FindRestaurants"}"#;
    assert_eq!(
        rollout
            .take(r1.clone(), Ok(generated(&r1.request, wrong)))
            .len(),
        2
    );
    assert_eq!(
        oracle
            .take(o1.clone(), Ok(generated(&o1.request, wrong)))
            .len(),
        2
    );
    let r2 = rollout.next_requests().unwrap().remove(0);
    let o2 = oracle.next_requests().unwrap().remove(0);
    let (ur, uo) = (user(&r2.request), user(&o2.request));
    assert_eq!(ur["state"]["prior_state"]["price_range"], "pricey");
    assert_eq!(uo["state"]["prior_state"]["price_range"], "cheap");
    let history = ur["state"]["dialogue_history"].as_array().unwrap();
    assert_eq!(history.len(), 2, "only the latest SYSTEM/USER exchange");
    assert_eq!(history[0]["speaker"], "SYSTEM");
    let right = r#"{"price_range": "cheap", "active_intent": "ReserveRestaurant"}"#;
    let rows = rollout.take(r2.clone(), Ok(generated(&r2.request, right)));
    assert!(rows.iter().all(|r| r.correct && r.turn == 2));
    assert!(rollout.is_finished());
}

/// "The response must parse as one JSON object with precisely the requested keys, each
/// mapped to an exact legal string value. Extra keys, malformed JSON, illegal values and
/// truncation fail without repair" (E.4).
#[test]
fn strict_json_scoring() {
    let fields = vec!["price_range".to_string(), INTENT_FIELD.to_string()];
    let legal = |f: &str| -> Vec<String> {
        if f == INTENT_FIELD {
            vec!["NONE".into(), "FindRestaurants".into()]
        } else {
            vec!["UNSET".into(), "cheap".into()]
        }
    };
    let p = |t: &str| parse_dialogue_response(t, false, &fields, &legal);
    let ok = p(r#" {"active_intent": "NONE", "price_range": "cheap"}
"#)
    .unwrap();
    assert_eq!(ok["price_range"], "cheap");
    assert_eq!(
        p(r#"{"active_intent": "NONE"}"#),
        Err(FieldFailure::MissingKey)
    );
    assert_eq!(
        p(r#"{"active_intent": "NONE", "price_range": "cheap", "x": "y"}"#),
        Err(FieldFailure::ExtraKeys)
    );
    assert_eq!(
        p(r#"{"active_intent": "NONE", "price_range": "cheap", "price_range": "cheap"}"#),
        Err(FieldFailure::ExtraKeys),
        "a repeated key is not precisely the requested keys"
    );
    assert_eq!(
        p(r#"{"active_intent": "none", "price_range": "cheap"}"#),
        Err(FieldFailure::IllegalValue),
        "no case repair"
    );
    assert_eq!(
        p(r#"{"active_intent": "NONE", "price_range": " cheap"}"#),
        Err(FieldFailure::IllegalValue)
    );
    assert_eq!(
        p(r#"{"active_intent": "NONE", "price_range": 1}"#),
        Err(FieldFailure::IllegalValue)
    );
    assert_eq!(
        p("```json\n{\"active_intent\": \"NONE\", \"price_range\": \"cheap\"}\n```"),
        Err(FieldFailure::InvalidJson)
    );
    assert_eq!(
        p(r#"{"active_intent": "NONE", "price_range": "cheap"} {}"#),
        Err(FieldFailure::InvalidJson)
    );
    assert_eq!(
        p(r#"Answer: {"active_intent": "NONE", "price_range": "cheap"}"#),
        Err(FieldFailure::InvalidJson)
    );
    assert_eq!(
        parse_dialogue_response(
            r#"{"active_intent": "NONE", "price_range": "cheap"}"#,
            true,
            &fields,
            &legal
        ),
        Err(FieldFailure::Truncated)
    );
}

/// C.2: "Joint requests all fields together; Independent requests each separately; Serial
/// also receives earlier field predictions for that turn." E.4: "Joint requests all
/// fields. … Serial requests the current field and additionally includes
/// partial_current_state containing its actual preceding field predictions for that
/// turn." So a scored Joint request asks every field and no field's decision sees
/// another's chosen value: each is read at the answer's opening, all at once.
#[test]
fn scored_joint_reads_every_field_from_the_one_joint_request() {
    let d = Arc::new(dialogue());
    let mut run = run_of(
        d.clone(),
        DialogueArm::Joint,
        PriorMode::HistoryRecompute,
        DialogueContract::Scored,
    );
    let asked = run.next_requests().unwrap();
    assert_eq!(asked.len(), 2, "every field is read at once");
    assert!(run.next_requests().unwrap().is_empty());
    let (a, b) = (asked[0].clone(), asked[1].clone());
    assert_eq!(
        a.request.assistant_prefix.as_deref(),
        Some(r#"{"price_range": ""#)
    );
    assert_eq!(
        b.request.assistant_prefix.as_deref(),
        Some(r#"{"active_intent": ""#),
        "no value of this turn is written before the field's own"
    );
    assert_eq!(user(&a.request), user(&b.request), "one joint request");
    let queries = |r: &Request| {
        let u: Value = serde_json::from_str(&r.user).unwrap();
        u["field_queries"].as_array().unwrap().len()
    };
    assert_eq!(queries(&b.request), 2, "the request asks every field");
    let state: Value = serde_json::from_str(&a.request.user).unwrap();
    assert!(
        state["state"].get("partial_current_state").is_none(),
        "only Serial receives the turn's earlier predictions"
    );
    assert!(run
        .take(a.clone(), Ok(scored(&a.request, vec![0.1, 0.1, 0.7, 0.1])))
        .is_empty());
    let rows = run.take(b.clone(), Err("engine down".into()));
    assert_eq!(rows.len(), 2);
    assert!(rows[0].correct, "a failed field leaves the others decided");
    assert_eq!(rows[1].failure, Some(FieldFailure::EngineError));
    assert!(
        rows.iter().all(|r| r.request_id == a.request.request_id),
        "one logical request"
    );
    assert_eq!(rows[0].prompt_tokens, 100);
}

/// The named alternative `scored_sequential`: the Joint answer decides its fields one
/// after another inside one JSON object; every field of a failed response fails.
#[test]
fn sequential_scored_joint_writes_one_answer_and_failures_fail_the_turn() {
    let d = Arc::new(dialogue());
    let mut run = run_of(
        d.clone(),
        DialogueArm::Joint,
        PriorMode::HistoryRecompute,
        DialogueContract::ScoredSequential,
    );
    let a = run.next_requests().unwrap().remove(0);
    assert_eq!(
        a.request.assistant_prefix.as_deref(),
        Some(r#"{"price_range": ""#)
    );
    assert_eq!(a.request.values(), ["UNSET", "DONTCARE", "cheap", "pricey"]);
    let logical = a.request.request_id.clone();
    assert!(run
        .take(a.clone(), Ok(scored(&a.request, vec![0.1, 0.1, 0.7, 0.1])))
        .is_empty());
    let b = run.next_requests().unwrap().remove(0);
    assert_eq!(
        b.request.assistant_prefix.as_deref(),
        Some(r#"{"price_range": "cheap", "active_intent": ""#)
    );
    assert_eq!(
        user(&a.request),
        user(&b.request),
        "one request, one user message"
    );
    let rows = run.take(b.clone(), Ok(scored(&b.request, vec![0.4, 0.6, 0.0])));
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r.correct && r.request_id == logical));
    assert_eq!(rows[0].prompt_tokens, 100);
    assert_eq!(
        rows[1].prompt_tokens, 0,
        "one logical request's tokens counted once"
    );

    let mut gen = run_of(
        d,
        DialogueArm::Joint,
        PriorMode::HistoryRecompute,
        DialogueContract::Generated,
    );
    let g = gen.next_requests().unwrap().remove(0);
    let rows = gen.take(
        g.clone(),
        Ok(generated(&g.request, r#"{"price_range": "cheap"}"#)),
    );
    assert!(rows
        .iter()
        .all(|r| !r.correct && r.failure == Some(FieldFailure::MissingKey)));
    let g = gen.next_requests().unwrap().remove(0);
    let rows = gen.take(g, Err("engine down".into()));
    assert!(rows
        .iter()
        .all(|r| r.failure == Some(FieldFailure::EngineError) && r.error.is_some()));
    assert!(gen.is_finished());
}

/// A request that cannot be rendered is refused with its reason: Oracle and Rollout show a
/// prior state, and only the service's fields can be asked.
#[test]
fn unrenderable_requests_say_why() {
    let d = dialogue();
    let fields = vec!["price_range".to_string()];
    let ask = |mode: PriorMode, fields: &[String]| {
        render_dialogue_request(
            &FieldRequest {
                dialogue: &d,
                spec: spec(DialogueArm::Independent, mode, DialogueContract::Generated),
                turn: 0,
                fields,
                prior: None,
                partial: None,
            },
            None,
        )
        .unwrap_err()
    };
    let err = ask(PriorMode::Oracle, &fields);
    assert!(matches!(err, DialogueRequestError::MissingPrior { .. }));
    assert_eq!(err.to_string(), "oracle needs a prior state");
    let err = ask(PriorMode::HistoryRecompute, &["cuisine".to_string()]);
    assert_eq!(
        err.to_string(),
        "`cuisine` is not a field of service `Restaurants`"
    );
}
