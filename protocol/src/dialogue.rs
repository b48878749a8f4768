//! Matched dialogue-state field construction (Appendix C, E.4): the request of every arm and
//! prior-state mode, strict JSON scoring, and [`DialogueRun`], the controller that walks one
//! dialogue turn by turn.
//!
//! Layout (E.4: "Qwen3.5-27B receives one user message JSON object with state,
//! field_queries, and response_format, with no added system message"): the user message is
//! a JSON object with exactly those three keys in that order. `state` holds `schema` and
//! `dialogue_history` ("Both states contain schema and dialogue_history"); under Oracle and
//! Rollout it also holds `prior_state` and the history is only the latest SYSTEM/USER
//! exchange ("Rollout receives its previous predicted state and the latest SYSTEM/USER
//! exchange; Oracle substitutes the gold prior state", C.1); Serial adds
//! `partial_current_state` ("its actual preceding field predictions for that turn", E.4).
//! Each entry of `field_queries` carries the verbatim field instruction "followed by the
//! literal suffix Field:, the field name, ., and its schema description", and the field's
//! legal values with their stable ids and descriptions ("Criteria use stable value IDs and
//! the corresponding schema value descriptions").
//!
//! The scored contract answers the same request with typed decisions: each field's exact
//! distribution over its legal values, scored inside the JSON answer after the assistant
//! boundary (`{"field": "` … ). A Joint request is read once per field at the opening of its
//! answer, so every decision depends on the one joint request alone ("Joint requests all
//! fields together; Independent requests each separately; Serial also receives earlier field
//! predictions for that turn", C.2). The named alternative `scored_sequential` writes one
//! Joint object left to right instead, each field decided after the values already chosen for
//! the earlier ones.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::{json, Map, Value};
use thiserror::Error;

use c2s_records::{
    Answer, Contract, Decoding, Dialogue, DialogueArm, DialogueContract, DialogueSpec,
    DialogueState, FieldFailure, FieldTurn, PriorMode, Request, RequestOption, Response,
    BUDGET_DIALOGUE,
};

/// E.4's current-state field decision, verbatim.
pub const FIELD_INSTRUCTION: &str = "Determine the current service state after the latest USER turn. Copy categorical values exactly from the schema. Preserve earlier user-provided slot values unless the user changes or cancels them. Ignore SYSTEM suggestions unless accepted by the user. UNSET means no value is held; DONTCARE means the user explicitly has no preference. Select the current active intent, or NONE if no intent is active. Return each requested field.";

/// E.4's dialogue JSON response contract, verbatim.
pub const DIALOGUE_RESPONSE: &str = "Return only one JSON object mapping precisely the requested fields to their exact semantic values, not option IDs. No explanation or markdown.";

/// The text of one field query: the instruction, then `Field: name. description`.
pub fn field_query(field: &str, description: &str) -> String {
    format!("{FIELD_INSTRUCTION} Field: {field}. {description}")
}

/// The schema as displayed: service, description, intents and slots with every value's id
/// and description, in the dialogue's display order.
pub fn schema_json(d: &Dialogue) -> Value {
    let values = |vs: &[c2s_records::SchemaValue]| {
        Value::Array(
            vs.iter()
                .map(|v| json!({"id": v.id, "value": v.value, "description": v.description}))
                .collect(),
        )
    };
    json!({
        "service": d.service.name,
        "description": d.service.description,
        "intents": values(&d.service.intents),
        "slots": d.service.slots.iter().map(|s| json!({
            "name": s.name,
            "description": s.description,
            "values": values(&s.values),
        })).collect::<Vec<_>>(),
    })
}

fn state_json(s: &DialogueState, order: &[String]) -> Value {
    let mut m = Map::new();
    for f in order {
        if let Some(v) = s.get(f) {
            m.insert(f.clone(), json!(v));
        }
    }
    Value::Object(m)
}

/// The SYSTEM/USER exchanges of turns `from..=turn` (an empty SYSTEM utterance is left out).
fn history(d: &Dialogue, from: usize, turn: usize) -> Value {
    let mut out = Vec::new();
    for t in &d.turns[from..=turn] {
        if !t.system.is_empty() {
            out.push(json!({"speaker": "SYSTEM", "text": t.system}));
        }
        out.push(json!({"speaker": "USER", "text": t.user}));
    }
    Value::Array(out)
}

/// What one request asks: the dialogue, its turn (zero-based), the fields requested, the
/// prior state shown (Oracle, Rollout) and the partial current state (Serial).
pub struct FieldRequest<'a> {
    /// The dialogue asked about.
    pub dialogue: &'a Dialogue,
    /// The arm, prior-state mode and contract.
    pub spec: DialogueSpec,
    /// The turn whose current state is asked (zero-based).
    pub turn: usize,
    /// The fields requested, in the order they are asked.
    pub fields: &'a [String],
    /// The prior state shown; required unless the mode is history_recompute.
    pub prior: Option<&'a DialogueState>,
    /// Serial's predictions so far this turn (`None` shows an empty partial state).
    pub partial: Option<&'a DialogueState>,
}

/// Why a dialogue request could not be rendered.
#[derive(Debug, Error)]
pub enum DialogueRequestError {
    /// An Oracle or Rollout request was asked without the prior state it shows.
    #[error("{mode} needs a prior state")]
    MissingPrior {
        /// The prior-state mode's name (`oracle` or `rollout`).
        mode: &'static str,
    },
    /// A requested field is neither the intent field nor one of the service's slots.
    #[error("`{field}` is not a field of service `{service}`")]
    UnknownField {
        /// The field asked for.
        field: String,
        /// The dialogue's service.
        service: String,
    },
    /// The user message could not be written as JSON.
    #[error(transparent)]
    Serialize(#[from] serde_json::Error),
}

/// Render the request; for the scored contract also the index (in `fields`) of the field being
/// decided and the values already chosen for the fields before it in the same answer
/// (sequential Joint; empty otherwise, and then nothing is written before the decided field).
pub fn render_dialogue_request(
    r: &FieldRequest<'_>,
    scored_field: Option<(usize, &[String])>,
) -> Result<Request, DialogueRequestError> {
    let d = r.dialogue;
    let mut state = Map::new();
    state.insert("schema".into(), schema_json(d));
    if r.spec.mode != PriorMode::HistoryRecompute {
        let prior = r.prior.ok_or(DialogueRequestError::MissingPrior {
            mode: r.spec.mode.as_str(),
        })?;
        state.insert("prior_state".into(), state_json(prior, &d.field_order));
        state.insert("dialogue_history".into(), history(d, r.turn, r.turn));
    } else {
        state.insert("dialogue_history".into(), history(d, 0, r.turn));
    }
    if r.spec.arm == DialogueArm::Serial {
        let partial = r.partial.cloned().unwrap_or_default();
        state.insert(
            "partial_current_state".into(),
            state_json(&partial, &d.field_order),
        );
    }
    let mut queries = Vec::with_capacity(r.fields.len());
    for f in r.fields {
        let Some(description) = d.service.field_description(f) else {
            return Err(DialogueRequestError::UnknownField {
                field: f.clone(),
                service: d.service.name.clone(),
            });
        };
        let values = d.service.legal_values(f).unwrap_or_default();
        queries.push(json!({
            "field": f,
            "query": field_query(f, description),
            "values": values.iter().map(|v| json!({"id": v.id, "value": v.value, "description": v.description})).collect::<Vec<_>>(),
        }));
    }
    let state = Value::Object(state);
    let mut user = Map::new();
    user.insert("state".into(), state.clone());
    user.insert("field_queries".into(), Value::Array(queries));
    user.insert("response_format".into(), json!(DIALOGUE_RESPONSE));
    let user = serde_json::to_string(&Value::Object(user))?;
    let turn = r.turn as u32 + 1;
    let (options, assistant_prefix, contract, decoding, step) = match scored_field {
        Some((i, chosen)) => {
            let field = &r.fields[i];
            let values = d.service.legal_values(field).unwrap_or_default();
            // The code is the value with its closing quote, as the answer writes it, so that
            // a value that is a prefix of another ("Economy", "Economy extra") stays choosable.
            let options = values
                .iter()
                .map(|v| RequestOption {
                    code: closed_value(&v.value),
                    value: v.value.clone(),
                })
                .collect();
            let field_index = d.field_order.iter().position(|f| f == field).unwrap_or(0);
            (
                options,
                Some(scored_answer_prefix(&r.fields[..i], chosen, field)),
                Contract::ScoredCode,
                Decoding::Score,
                turn * 1000 + field_index as u32 + 1,
            )
        }
        None => {
            let step = match r.fields {
                [one] if r.spec.arm != DialogueArm::Joint => {
                    turn * 1000
                        + d.field_order.iter().position(|f| f == one).unwrap_or(0) as u32
                        + 1
                }
                _ => turn * 1000,
            };
            (
                Vec::new(),
                None,
                Contract::GeneratedString,
                Decoding::Greedy {
                    max_new_tokens: BUDGET_DIALOGUE,
                },
                step,
            )
        }
    };
    let mut request = Request {
        request_id: String::new(),
        item_id: d.dialogue_id.clone(),
        arm: r.spec.label(),
        step,
        system: None,
        user,
        assistant_prefix,
        state: serde_json::to_string(&state).unwrap_or_default(),
        instruction: FIELD_INSTRUCTION.to_string(),
        options,
        contract,
        decoding,
        closing_context: Vec::new(),
    };
    request.request_id = request.derive_id();
    Ok(request)
}

/// A value as the scored answer continues after its opening quote: JSON-escaped, with the
/// closing quote (`Economy"`).
pub fn closed_value(value: &str) -> String {
    let quoted = serde_json::to_string(value).unwrap_or_default();
    quoted[1..].to_string()
}

/// The assistant-side text before `field`'s value in a scored answer: the JSON object so far
/// (`{"active_intent": "FindRestaurants", "price_range": "`).
pub fn scored_answer_prefix(earlier: &[String], chosen: &[String], field: &str) -> String {
    let mut out = String::from("{");
    for (f, v) in earlier.iter().zip(chosen) {
        out.push_str(&serde_json::to_string(f).unwrap_or_default());
        out.push_str(": ");
        out.push_str(&serde_json::to_string(v).unwrap_or_default());
        out.push_str(", ");
    }
    let key = serde_json::to_string(field).unwrap_or_default();
    out.push_str(&key);
    out.push_str(": \"");
    out
}

/// A JSON object read with its keys in order and repeats kept (serde_json's map would keep
/// only the last of a repeated key, which strict scoring must see).
struct OrderedObject(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for OrderedObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedObject;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<OrderedObject, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Value>()? {
                    out.push((k, v));
                }
                Ok(OrderedObject(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Strict scoring of a generated dialogue response (E.4): "The response must parse as one
/// JSON object with precisely the requested keys, each mapped to an exact legal string
/// value. Extra keys, malformed JSON, illegal values and truncation fail without repair."
/// Any violation fails the whole response (every requested field), since the response as a
/// whole breaks the contract; JSON's own whitespace around the object is allowed, anything
/// else (a code fence, a second object, prose) is malformed.
pub fn parse_dialogue_response(
    text: &str,
    truncated: bool,
    fields: &[String],
    legal: &dyn Fn(&str) -> Vec<String>,
) -> Result<DialogueState, FieldFailure> {
    if truncated {
        return Err(FieldFailure::Truncated);
    }
    let obj: OrderedObject = serde_json::from_str(text).map_err(|_| FieldFailure::InvalidJson)?;
    let mut out = DialogueState::new();
    for (k, v) in obj.0 {
        if !fields.contains(&k) || out.contains_key(&k) {
            return Err(FieldFailure::ExtraKeys);
        }
        let Value::String(s) = v else {
            return Err(FieldFailure::IllegalValue);
        };
        out.insert(k, s);
    }
    if out.len() != fields.len() {
        return Err(FieldFailure::MissingKey);
    }
    for (k, v) in &out {
        if !legal(k).contains(v) {
            return Err(FieldFailure::IllegalValue);
        }
    }
    Ok(out)
}

/// A field's outcome inside a turn.
#[derive(Debug, Clone)]
struct FieldAnswer {
    predicted: Result<String, FieldFailure>,
    probabilities: Vec<f64>,
    request: Request,
    response: Option<Response>,
    error: Option<String>,
    /// Whether this row carries its request's tokens (Joint: the first field only).
    counts_tokens: bool,
}

/// A request in flight and what it decides.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The physical request to send.
    pub request: Request,
    /// Fields the response answers (generated); the one field scored (scored).
    pub fields: Vec<String>,
    /// Whether this is the first physical request of its logical request.
    first_of_logical: bool,
    /// The logical request id its rows carry.
    logical_id: String,
}

/// The controller of one dialogue under one [`DialogueSpec`]: which requests to send, and the
/// [`FieldTurn`] rows their answers make. Turns run in order (Rollout needs the previous
/// predicted state); within a turn, Independent asks every field at once, Serial one field
/// after another with the predictions so far, Joint one request (scored: read once per field,
/// all at once; scored_sequential: its fields decided one after another inside that answer).
pub struct DialogueRun {
    dialogue: Arc<Dialogue>,
    spec: DialogueSpec,
    model: String,
    turn: usize,
    /// The state before the current turn as this run sees it (Rollout: its own predictions).
    predicted_prior: DialogueState,
    answers: BTreeMap<String, FieldAnswer>,
    in_flight: usize,
    /// Sequential scored Joint: the values chosen so far in this turn's answer.
    joint_chosen: Vec<String>,
    joint_logical: Option<String>,
    /// Scored Joint: latency and completion tokens of the turn's scoring requests (one
    /// logical request: its row carries their sums).
    joint_latency_ms: f64,
    joint_completion_tokens: u32,
    finished: bool,
}

impl DialogueRun {
    /// The run of `dialogue` under `spec` for `model`, before its first turn, the prior state
    /// the service's initial one.
    pub fn new(dialogue: Arc<Dialogue>, spec: DialogueSpec, model: String) -> DialogueRun {
        let prior = dialogue.service.initial_state();
        DialogueRun {
            dialogue,
            spec,
            model,
            turn: 0,
            predicted_prior: prior,
            answers: BTreeMap::new(),
            in_flight: 0,
            joint_chosen: Vec::new(),
            joint_logical: None,
            joint_latency_ms: 0.0,
            joint_completion_tokens: 0,
            finished: false,
        }
    }

    /// The id of the dialogue this run walks.
    pub fn dialogue_id(&self) -> &str {
        &self.dialogue.dialogue_id
    }

    /// Whether the last turn is done or the run was abandoned.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Stop the run (its dialogue could not be rendered; it was rejected).
    pub fn abandon(&mut self) {
        self.finished = true;
    }

    fn prior(&self) -> DialogueState {
        match self.spec.mode {
            PriorMode::HistoryRecompute => DialogueState::new(),
            PriorMode::Rollout => self.predicted_prior.clone(),
            PriorMode::Oracle => {
                if self.turn == 0 {
                    self.dialogue.service.initial_state()
                } else {
                    self.dialogue.turns[self.turn - 1].state.clone()
                }
            }
        }
    }

    /// The partial current state of a Serial request: the predictions made so far this turn
    /// (a failed prediction is left out: there is no value to show).
    fn partial(&self) -> DialogueState {
        self.answers
            .iter()
            .filter_map(|(f, a)| a.predicted.as_ref().ok().map(|v| (f.clone(), v.clone())))
            .collect()
    }

    fn render(
        &self,
        fields: &[String],
        scored: Option<(usize, &[String])>,
    ) -> Result<Request, DialogueRequestError> {
        let prior = self.prior();
        let partial = self.partial();
        render_dialogue_request(
            &FieldRequest {
                dialogue: &self.dialogue,
                spec: self.spec,
                turn: self.turn,
                fields,
                prior: (self.spec.mode != PriorMode::HistoryRecompute).then_some(&prior),
                partial: (self.spec.arm == DialogueArm::Serial).then_some(&partial),
            },
            scored,
        )
    }

    /// The requests that can be sent now (empty while answers are awaited or when finished).
    pub fn next_requests(&mut self) -> Result<Vec<Pending>, DialogueRequestError> {
        if self.finished || self.in_flight > 0 {
            return Ok(Vec::new());
        }
        let order = self.dialogue.field_order.clone();
        let open: Vec<String> = order
            .iter()
            .filter(|f| !self.answers.contains_key(*f))
            .cloned()
            .collect();
        let Some(next) = open.first().cloned() else {
            return Ok(Vec::new());
        };
        let scored = self.spec.contract.is_scored();
        let mut out = Vec::new();
        match self.spec.arm {
            DialogueArm::Joint if self.spec.contract == DialogueContract::ScoredSequential => {
                let i = order.len() - open.len();
                let chosen = self.joint_chosen.clone();
                let request = self.render(&order, Some((i, &chosen)))?;
                let first = i == 0;
                if first {
                    self.joint_logical = Some(request.request_id.clone());
                }
                out.push(Pending {
                    logical_id: self.joint_logical.clone().unwrap_or_default(),
                    request,
                    fields: vec![next],
                    first_of_logical: first,
                });
            }
            DialogueArm::Joint if scored => {
                // One logical request (every field asked), read at the answer's opening once
                // per field: no chosen value of this turn is written before any field's
                // value. Its rows carry the first field's request id; its tokens count once.
                let mut logical = None;
                for f in &open {
                    let i = order.iter().position(|o| o == f).unwrap_or(0);
                    let request = self.render(&order, Some((i, &[])))?;
                    let first = logical.is_none();
                    let logical_id = logical
                        .get_or_insert_with(|| request.request_id.clone())
                        .clone();
                    out.push(Pending {
                        logical_id,
                        request,
                        fields: vec![f.clone()],
                        first_of_logical: first,
                    });
                }
            }
            DialogueArm::Joint => {
                let request = self.render(&order, None)?;
                out.push(Pending {
                    logical_id: request.request_id.clone(),
                    request,
                    fields: order.clone(),
                    first_of_logical: true,
                });
            }
            DialogueArm::Independent | DialogueArm::Serial => {
                let asked: Vec<String> = if self.spec.arm == DialogueArm::Independent {
                    open
                } else {
                    vec![next]
                };
                for f in asked {
                    let one = [f.clone()];
                    let request = if scored {
                        self.render(&one, Some((0, &[])))?
                    } else {
                        self.render(&one, None)?
                    };
                    out.push(Pending {
                        logical_id: request.request_id.clone(),
                        request,
                        fields: vec![f],
                        first_of_logical: true,
                    });
                }
            }
        }
        self.in_flight = out.len();
        Ok(out)
    }

    /// Take the answer of `pending`; returns the rows of every turn it completes.
    pub fn take(&mut self, pending: Pending, reply: Result<Response, String>) -> Vec<FieldTurn> {
        self.in_flight = self.in_flight.saturating_sub(1);
        let d = self.dialogue.clone();
        let legal = |f: &str| -> Vec<String> {
            d.service
                .legal_values(f)
                .unwrap_or_default()
                .into_iter()
                .map(|v| v.value)
                .collect()
        };
        let mut request = pending.request.clone();
        request.request_id = pending.logical_id.clone();
        match &reply {
            Err(e) => {
                for f in &pending.fields {
                    self.answers.insert(
                        f.clone(),
                        FieldAnswer {
                            predicted: Err(FieldFailure::EngineError),
                            probabilities: Vec::new(),
                            request: request.clone(),
                            response: None,
                            error: Some(e.clone()),
                            counts_tokens: false,
                        },
                    );
                }
            }
            Ok(r) => match &r.answer {
                Answer::Scored { probabilities, .. } => {
                    let field = &pending.fields[0];
                    let values = legal(field);
                    let best = crate::scoring::argmax_first(probabilities);
                    let (predicted, error) = match best {
                        Some(b) if probabilities.len() == values.len() => {
                            (Ok(values[b].clone()), None)
                        }
                        _ => (
                            Err(FieldFailure::EngineError),
                            Some(format!(
                                "{} probabilities for {} values",
                                probabilities.len(),
                                values.len()
                            )),
                        ),
                    };
                    if let Ok(v) = &predicted {
                        self.joint_chosen.push(v.clone());
                    }
                    self.joint_latency_ms += r.latency_ms;
                    self.joint_completion_tokens += r.completion_tokens;
                    self.answers.insert(
                        field.clone(),
                        FieldAnswer {
                            predicted,
                            probabilities: probabilities.clone(),
                            request: request.clone(),
                            response: Some(r.clone()),
                            error,
                            counts_tokens: pending.first_of_logical,
                        },
                    );
                }
                Answer::Generated {
                    text, truncated, ..
                } => {
                    let parsed = parse_dialogue_response(text, *truncated, &pending.fields, &legal);
                    for (i, f) in pending.fields.iter().enumerate() {
                        let predicted = match &parsed {
                            Ok(s) => Ok(s[f].clone()),
                            Err(e) => Err(*e),
                        };
                        self.answers.insert(
                            f.clone(),
                            FieldAnswer {
                                predicted,
                                probabilities: Vec::new(),
                                request: request.clone(),
                                response: Some(r.clone()),
                                error: None,
                                counts_tokens: i == 0,
                            },
                        );
                    }
                }
            },
        }
        // A sequential scored Joint answer that failed a field cannot go on writing its object.
        if self.spec.arm == DialogueArm::Joint
            && self.spec.contract == DialogueContract::ScoredSequential
            && self.answers.values().any(|a| a.predicted.is_err())
        {
            for f in d.field_order.iter() {
                if !self.answers.contains_key(f) {
                    self.answers.insert(
                        f.clone(),
                        FieldAnswer {
                            predicted: Err(FieldFailure::EngineError),
                            probabilities: Vec::new(),
                            request: request.clone(),
                            response: None,
                            error: Some("an earlier field of the same answer failed".into()),
                            counts_tokens: false,
                        },
                    );
                }
            }
        }
        if self.in_flight > 0 || self.answers.len() < d.field_order.len() {
            return Vec::new();
        }
        self.finish_turn()
    }

    fn finish_turn(&mut self) -> Vec<FieldTurn> {
        let d = self.dialogue.clone();
        let turn = &d.turns[self.turn];
        let mut rows = Vec::with_capacity(d.field_order.len());
        let mut next_prior = self.predicted_prior.clone();
        for (i, f) in d.field_order.iter().enumerate() {
            let Some(a) = self.answers.remove(f) else {
                continue;
            };
            let gold = turn.state.get(f).cloned().unwrap_or_default();
            let predicted = a.predicted.as_ref().ok().cloned();
            if let Some(v) = &predicted {
                next_prior.insert(f.clone(), v.clone());
            }
            let joint_scored =
                self.spec.arm == DialogueArm::Joint && self.spec.contract.is_scored();
            let (prompt_tokens, completion_tokens, latency_ms, response) = match &a.response {
                Some(r) if a.counts_tokens && joint_scored => (
                    r.prompt_tokens,
                    self.joint_completion_tokens,
                    self.joint_latency_ms,
                    None,
                ),
                Some(r) if a.counts_tokens => (
                    r.prompt_tokens,
                    r.completion_tokens,
                    r.latency_ms,
                    generated_text(r),
                ),
                Some(r) => (0, 0, 0.0, generated_text(r)),
                None => (0, 0, 0.0, None),
            };
            rows.push(FieldTurn {
                dialogue_id: d.dialogue_id.clone(),
                base_dialogue_id: d.base_id().to_string(),
                perturbation: d.perturbation,
                split: d.split,
                service: d.service.name.clone(),
                spec: self.spec,
                turn: self.turn as u32 + 1,
                turns: d.turns.len() as u32,
                field: f.clone(),
                field_index: i as u32,
                correct: predicted.as_deref() == Some(gold.as_str()),
                gold,
                predicted,
                failure: a.predicted.err(),
                request_id: a.request.request_id.clone(),
                prompt_key: a.request.prompt_key(),
                probabilities: a.probabilities,
                legal_values: d
                    .service
                    .legal_values(f)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|v| v.value)
                    .collect(),
                model: self.model.clone(),
                prompt_tokens,
                completion_tokens,
                latency_ms,
                response,
                error: a.error,
                attempt: 0,
            });
        }
        // Rollout carries its own predictions forward (a failed field keeps the value it was
        // shown); the other modes do not read it.
        self.predicted_prior = next_prior;
        self.joint_chosen.clear();
        self.joint_logical = None;
        self.joint_latency_ms = 0.0;
        self.joint_completion_tokens = 0;
        self.turn += 1;
        if self.turn >= d.turns.len() {
            self.finished = true;
        }
        rows
    }
}

fn generated_text(r: &Response) -> Option<String> {
    match &r.answer {
        Answer::Generated { text, .. } => Some(text.clone()),
        Answer::Scored { .. } => None,
    }
}

/// Every spec of a run: arms × modes × contracts.
pub fn dialogue_specs(
    arms: &[DialogueArm],
    modes: &[PriorMode],
    contract: DialogueContract,
) -> Vec<DialogueSpec> {
    let mut out = Vec::new();
    for &arm in arms {
        for &mode in modes {
            out.push(DialogueSpec {
                arm,
                mode,
                contract,
            });
        }
    }
    out
}

#[cfg(test)]
#[path = "dialogue_tests.rs"]
mod tests;
