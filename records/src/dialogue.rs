//! Dialogue-state fields (paper §3.3, Appendix C, E.4): prefixes of task-oriented dialogues
//! with a service schema, and the per-turn state fields a model constructs.
//!
//! A *dialogue* is one test or development prefix: a service schema (intents and categorical
//! slots, every value with a stable id and a description), its *field order* (the active
//! intent and the categorical slots, "fixed before outcomes", seed 20261009), and its user
//! turns, each with the SYSTEM utterance before it, the USER utterance and the gold state
//! after it. "Initial intent is NONE, absent slots UNSET and explicit indifference DONTCARE.
//! Current gold state is reserved for scoring" (C.1).
//!
//! A *run* of a dialogue is one arm (Joint, Independent, Serial: C.2) under one prior-state
//! mode (HistoryRecompute, Oracle, Rollout: C.1); it yields one [`FieldTurn`] row per field
//! and user turn.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

/// The field holding the active intent.
pub const INTENT_FIELD: &str = "active_intent";
/// "Select the current active intent, or NONE if no intent is active" (E.4).
pub const NONE_INTENT: &str = "NONE";
/// "UNSET means no value is held" (E.4).
pub const UNSET: &str = "UNSET";
/// "DONTCARE means the user explicitly has no preference" (E.4).
pub const DONTCARE: &str = "DONTCARE";
/// C.2: "Field order uses seed 20261009".
pub const FIELD_ORDER_SEED: u64 = 20_261_009;

/// One legal value of a field: a stable id, the exact semantic value the model returns, and
/// its schema description ("Criteria use stable value IDs and the corresponding schema value
/// descriptions", E.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaValue {
    /// Stable id, unique within the service (`field:VALUE` for NONE, UNSET and DONTCARE).
    pub id: String,
    /// The exact semantic value: what an answer must match and gold states hold (never empty
    /// or padded; unique within its field).
    pub value: String,
    /// The schema description shown with the value.
    pub description: String,
}

/// A categorical slot of a service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoricalSlot {
    /// Field name: the slot's key in states and field queries.
    pub name: String,
    /// The schema description shown after `Field: name.`.
    pub description: String,
    /// The slot's own values in schema (display) order; UNSET and DONTCARE are added by
    /// [`DialogueService::legal_values`].
    pub values: Vec<SchemaValue>,
}

/// A service schema: what is displayed to the model as `schema`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DialogueService {
    /// Service name (`Movies`), shown as the schema's `service`.
    pub name: String,
    /// What the service offers ("Find movies, showtimes and tickets.").
    pub description: String,
    /// Intents in display order (NONE is added by [`DialogueService::legal_values`]).
    pub intents: Vec<SchemaValue>,
    /// Categorical slots in schema order, one field each.
    pub slots: Vec<CategoricalSlot>,
}

/// The description of the intent field shown after `Field: active_intent.`.
pub const INTENT_DESCRIPTION: &str = "The intent the user is currently pursuing with the service.";
const NONE_DESCRIPTION: &str = "No intent is active.";
const UNSET_DESCRIPTION: &str = "No value is held.";
const DONTCARE_DESCRIPTION: &str = "The user explicitly has no preference.";

impl DialogueService {
    /// The schema description of `field` (the text after `Field: name.`).
    pub fn field_description(&self, field: &str) -> Option<&str> {
        if field == INTENT_FIELD {
            return Some(INTENT_DESCRIPTION);
        }
        self.slots
            .iter()
            .find(|s| s.name == field)
            .map(|s| s.description.as_str())
    }

    /// The legal values of `field` in display order: NONE then the intents for the intent
    /// field; UNSET, DONTCARE, then the slot's values for a slot. The same order serves every
    /// arm ("The same field order and value order are reused across arms", E.4).
    pub fn legal_values(&self, field: &str) -> Option<Vec<SchemaValue>> {
        let special = |value: &str, description: &str| SchemaValue {
            id: format!("{field}:{value}"),
            value: value.to_string(),
            description: description.to_string(),
        };
        if field == INTENT_FIELD {
            let mut out = vec![special(NONE_INTENT, NONE_DESCRIPTION)];
            out.extend(self.intents.iter().cloned());
            return Some(out);
        }
        let slot = self.slots.iter().find(|s| s.name == field)?;
        let mut out = vec![
            special(UNSET, UNSET_DESCRIPTION),
            special(DONTCARE, DONTCARE_DESCRIPTION),
        ];
        out.extend(slot.values.iter().cloned());
        Some(out)
    }

    /// Every field of the service: the intent field, then the slots in schema order.
    pub fn fields(&self) -> Vec<String> {
        let mut out = vec![INTENT_FIELD.to_string()];
        out.extend(self.slots.iter().map(|s| s.name.clone()));
        out
    }

    /// The state before the first user turn: intent NONE, every slot UNSET (C.1).
    pub fn initial_state(&self) -> DialogueState {
        let mut s = DialogueState::new();
        s.insert(INTENT_FIELD.to_string(), NONE_INTENT.to_string());
        for slot in &self.slots {
            s.insert(slot.name.clone(), UNSET.to_string());
        }
        s
    }
}

/// A dialogue state: field name → exact semantic value.
pub type DialogueState = BTreeMap<String, String>;

/// One user turn: the SYSTEM utterance before it (empty before the first user turn), the USER
/// utterance, and the gold state after it (reserved for scoring; Oracle also shows it as the
/// next turn's prior state).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DialogueTurn {
    /// The SYSTEM utterance before the user turn (empty before the first).
    #[serde(default)]
    pub system: String,
    /// The USER utterance (non-empty).
    pub user: String,
    /// The gold state after the turn: every field, each with a legal value.
    pub state: DialogueState,
}

/// Which split a dialogue comes from: "Twelve development prefixes are disjoint by split,
/// identifier and content" (C.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DialogueSplit {
    /// Development prefixes, disjoint from the test ones in id and content.
    Dev,
    /// Test prefixes: the split `choice2seq dialogue` reports.
    Test,
}

impl DialogueSplit {
    /// The split named `s` ([`DialogueSplit::as_str`]).
    pub fn parse(s: &str) -> Option<DialogueSplit> {
        [DialogueSplit::Dev, DialogueSplit::Test]
            .into_iter()
            .find(|x| x.as_str() == s)
    }
    /// The serialized name: `dev` or `test`.
    pub fn as_str(self) -> &'static str {
        match self {
            DialogueSplit::Dev => "dev",
            DialogueSplit::Test => "test",
        }
    }
}

/// A perturbed copy of a test dialogue (C.2's perturbation schedule): "Twelve test dialogues
/// receive one task-preserving paraphrase; six of these also receive one permutation of
/// displayed semantic values."
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Perturbation {
    /// The user utterances paraphrased; schema, values and gold states unchanged.
    Paraphrase,
    /// The displayed order of the schema's values permuted; texts and gold states unchanged.
    ValuePermutation,
}

impl Perturbation {
    /// The perturbation named `s` ([`Perturbation::as_str`]).
    pub fn parse(s: &str) -> Option<Perturbation> {
        [Perturbation::Paraphrase, Perturbation::ValuePermutation]
            .into_iter()
            .find(|x| x.as_str() == s)
    }
    /// The serialized name: `paraphrase` or `value_permutation`.
    pub fn as_str(self) -> &'static str {
        match self {
            Perturbation::Paraphrase => "paraphrase",
            Perturbation::ValuePermutation => "value_permutation",
        }
    }
}

/// One dialogue prefix of a bank.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dialogue {
    /// Id of the dialogue (non-empty; a perturbed copy has its own).
    pub dialogue_id: String,
    /// Which split the prefix belongs to.
    pub split: DialogueSplit,
    /// The one service of the prefix, shown as `schema`.
    pub service: DialogueService,
    /// Every field of the service in the seeded order shared by every arm.
    pub field_order: Vec<String>,
    /// User turns in order (at least one).
    pub turns: Vec<DialogueTurn>,
    /// Set on a perturbed copy: how it differs from `perturbation_of`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perturbation: Option<Perturbation>,
    /// The dialogue id this one perturbs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perturbation_of: Option<String>,
    /// Where it came from (generator, seed, template ids).
    #[serde(default)]
    pub origin: String,
}

/// A dialogue that breaks a rule, with the field at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DialogueError {
    /// The dialogue at fault.
    pub dialogue_id: String,
    /// The dialogue field at fault (`field_order`, `turns[2].state`, …).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for DialogueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "dialogue `{}`: field `{}`: {}",
            self.dialogue_id, self.field, self.message
        )
    }
}

impl std::error::Error for DialogueError {}

impl Dialogue {
    /// Check the structural rules: unique names and value ids, a field order that holds every
    /// field once, at least one turn, and gold states holding exactly the fields, each with a
    /// legal value.
    pub fn validate(&self) -> Result<(), DialogueError> {
        let err = |field: &str, message: String| DialogueError {
            dialogue_id: self.dialogue_id.clone(),
            field: field.to_string(),
            message,
        };
        if self.dialogue_id.trim().is_empty() {
            return Err(err("dialogue_id", "empty".into()));
        }
        if self.service.intents.is_empty() {
            return Err(err("service.intents", "a service needs an intent".into()));
        }
        let fields = self.service.fields();
        let mut names = BTreeSet::new();
        for f in &fields {
            if !names.insert(f.as_str()) {
                return Err(err("service.slots", format!("field `{f}` appears twice")));
            }
        }
        let mut ids = BTreeSet::new();
        for f in &fields {
            let values = self.service.legal_values(f).unwrap_or_default();
            if values.len() < 2 {
                return Err(err(
                    "service.slots",
                    format!("field `{f}` has no value of its own"),
                ));
            }
            let mut seen = BTreeSet::new();
            for v in &values {
                if !ids.insert(v.id.clone()) {
                    return Err(err("service", format!("value id `{}` appears twice", v.id)));
                }
                if !seen.insert(v.value.as_str()) {
                    return Err(err(
                        "service",
                        format!("field `{f}` lists the value `{}` twice", v.value),
                    ));
                }
                if v.value.trim().is_empty() || v.value != v.value.trim() {
                    return Err(err(
                        "service",
                        format!("field `{f}`: value `{}` is empty or padded", v.value),
                    ));
                }
            }
        }
        let order: BTreeSet<&str> = self.field_order.iter().map(String::as_str).collect();
        if order != names || self.field_order.len() != fields.len() {
            return Err(err(
                "field_order",
                format!(
                    "must list every field once ({}), got {:?}",
                    fields.join(", "),
                    self.field_order
                ),
            ));
        }
        if self.turns.is_empty() {
            return Err(err("turns", "a dialogue needs a user turn".into()));
        }
        for (t, turn) in self.turns.iter().enumerate() {
            let at = format!("turns[{t}].state");
            if turn.user.trim().is_empty() {
                return Err(err(&format!("turns[{t}].user"), "empty utterance".into()));
            }
            let keys: BTreeSet<&str> = turn.state.keys().map(String::as_str).collect();
            if keys != names {
                return Err(err(
                    &at,
                    format!(
                        "must hold exactly the fields {:?}, got {:?}",
                        names,
                        turn.state.keys().collect::<Vec<_>>()
                    ),
                ));
            }
            for (f, v) in &turn.state {
                let legal = self.service.legal_values(f).unwrap_or_default();
                if !legal.iter().any(|l| &l.value == v) {
                    return Err(err(&at, format!("`{v}` is not a legal value of `{f}`")));
                }
            }
        }
        if self.perturbation.is_some() != self.perturbation_of.is_some() {
            return Err(err(
                "perturbation_of",
                "a perturbation names the dialogue it perturbs, and only then".into(),
            ));
        }
        Ok(())
    }

    /// The id of the dialogue whose statistics this one belongs to (itself unless perturbed).
    pub fn base_id(&self) -> &str {
        self.perturbation_of.as_deref().unwrap_or(&self.dialogue_id)
    }
}

/// A bank line that is not the JSON of a [`Dialogue`].
#[derive(Debug, thiserror::Error)]
#[error("not a dialogue: {source}")]
pub struct DialogueParseError {
    /// serde's reason, with the line's column.
    #[from]
    pub source: serde_json::Error,
}

/// Parse one bank line (JSON) as a dialogue.
pub fn parse_dialogue(line: &str) -> Result<Dialogue, DialogueParseError> {
    Ok(serde_json::from_str(line)?)
}

/// C.2's three arms of matched field construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DialogueArm {
    /// "Joint requests all fields together."
    Joint,
    /// "Independent requests each separately."
    Independent,
    /// "Serial also receives earlier field predictions for that turn."
    Serial,
}

impl DialogueArm {
    /// The arm named `s` ([`DialogueArm::as_str`]).
    pub fn parse(s: &str) -> Option<DialogueArm> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }
    /// The three arms: Joint, Independent, Serial.
    pub const ALL: [DialogueArm; 3] = [
        DialogueArm::Joint,
        DialogueArm::Independent,
        DialogueArm::Serial,
    ];
    /// The serialized name, the first part of a run label: `joint`, `independent` or `serial`.
    pub fn as_str(self) -> &'static str {
        match self {
            DialogueArm::Joint => "joint",
            DialogueArm::Independent => "independent",
            DialogueArm::Serial => "serial",
        }
    }
}

/// C.1's prior-state access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriorMode {
    /// "HistoryRecompute receives the transcript and schema."
    HistoryRecompute,
    /// "Oracle substitutes the gold prior state."
    Oracle,
    /// "Rollout receives its previous predicted state and the latest SYSTEM/USER exchange."
    Rollout,
}

impl PriorMode {
    /// The mode named `s` ([`PriorMode::as_str`]).
    pub fn parse(s: &str) -> Option<PriorMode> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }
    /// The three modes: HistoryRecompute, Oracle, Rollout.
    pub const ALL: [PriorMode; 3] = [
        PriorMode::HistoryRecompute,
        PriorMode::Oracle,
        PriorMode::Rollout,
    ];
    /// The serialized name, part of a run label: `history_recompute`, `oracle` or `rollout`.
    pub fn as_str(self) -> &'static str {
        match self {
            PriorMode::HistoryRecompute => "history_recompute",
            PriorMode::Oracle => "oracle",
            PriorMode::Rollout => "rollout",
        }
    }
}

/// How fields are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DialogueContract {
    /// Typed decisions: each field's exact distribution over its legal values, scored inside
    /// the JSON answer (the scored-model reading of "Jev returns multiple typed fields").
    /// A Joint request is read once per field at the opening of its answer (`{"field": "`),
    /// so each of its decisions depends on the one joint request alone: "Joint requests all
    /// fields together; Independent requests each separately; Serial also receives earlier
    /// field predictions for that turn. Neither local arm receives Joint's output" (C.2).
    /// Only Serial sees the turn's earlier predictions.
    Scored,
    /// A named, non-default alternative: the scored Joint answer decides its fields one after
    /// another inside one JSON object, each after the values already chosen for the earlier
    /// ones (`{"a": "x", "b": "`). That hands Joint the turn's earlier predictions, which E.4
    /// gives to Serial only ("Serial requests the current field and additionally includes
    /// partial_current_state containing its actual preceding field predictions"), and so moves
    /// Serial − Joint toward zero by construction. Independent and Serial read as `Scored`.
    ScoredSequential,
    /// Greedy strict JSON, 256 new tokens: "The response must parse as one JSON object with
    /// precisely the requested keys, each mapped to an exact legal string value" (E.4).
    Generated,
}

impl DialogueContract {
    /// The three contracts, the default first.
    pub const ALL: [DialogueContract; 3] = [
        DialogueContract::Scored,
        DialogueContract::ScoredSequential,
        DialogueContract::Generated,
    ];
    /// The contract named `s` ([`DialogueContract::as_str`]).
    pub fn parse(s: &str) -> Option<DialogueContract> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }
    /// The serialized name, the last part of a run label: `scored`, `scored_sequential` or
    /// `generated`.
    pub fn as_str(self) -> &'static str {
        match self {
            DialogueContract::Scored => "scored",
            DialogueContract::ScoredSequential => "scored_sequential",
            DialogueContract::Generated => "generated",
        }
    }
    /// Whether fields are decided by scoring their legal values (not by generated JSON).
    pub fn is_scored(self) -> bool {
        matches!(
            self,
            DialogueContract::Scored | DialogueContract::ScoredSequential
        )
    }
}

/// One run of a dialogue: arm × prior-state mode × contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DialogueSpec {
    /// Which fields each request asks.
    pub arm: DialogueArm,
    /// What the state shows of the turns before the current one.
    pub mode: PriorMode,
    /// How the fields are answered.
    pub contract: DialogueContract,
}

impl DialogueSpec {
    /// `joint/rollout/scored`: the `arm` of its requests.
    pub fn label(&self) -> String {
        format!(
            "{}/{}/{}",
            self.arm.as_str(),
            self.mode.as_str(),
            self.contract.as_str()
        )
    }
}

/// Why a field's answer counts as wrong without being a legal value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldFailure {
    /// "malformed JSON" (also several objects, or text around the object).
    InvalidJson,
    /// "Extra keys" (or a repeated key).
    ExtraKeys,
    /// A requested key is missing from the object.
    MissingKey,
    /// "illegal values": not exactly a legal string value of the field.
    IllegalValue,
    /// "truncation": the 256-token budget ran out.
    Truncated,
    /// The engine failed the request (recorded, never a model answer).
    EngineError,
}

impl FieldFailure {
    /// The serialized reason: `invalid_json`, `extra_keys`, `missing_key`, `illegal_value`,
    /// `truncated` or `engine_error`.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldFailure::InvalidJson => "invalid_json",
            FieldFailure::ExtraKeys => "extra_keys",
            FieldFailure::MissingKey => "missing_key",
            FieldFailure::IllegalValue => "illegal_value",
            FieldFailure::Truncated => "truncated",
            FieldFailure::EngineError => "engine_error",
        }
    }
    /// The failure named `s` ([`FieldFailure::as_str`]).
    pub fn parse(s: &str) -> Option<FieldFailure> {
        [
            FieldFailure::InvalidJson,
            FieldFailure::ExtraKeys,
            FieldFailure::MissingKey,
            FieldFailure::IllegalValue,
            FieldFailure::Truncated,
            FieldFailure::EngineError,
        ]
        .into_iter()
        .find(|f| f.as_str() == s)
    }
}

/// One field of one user turn of one dialogue run: the `dialogue_turns/` row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldTurn {
    /// Id of the dialogue (a perturbed copy's own id).
    pub dialogue_id: String,
    /// The unperturbed dialogue's id (equal to `dialogue_id` unless perturbed).
    pub base_dialogue_id: String,
    /// How the dialogue differs from its base (`None` unless perturbed).
    pub perturbation: Option<Perturbation>,
    /// The dialogue's split.
    pub split: DialogueSplit,
    /// Name of the dialogue's service.
    pub service: String,
    /// The run: arm × prior-state mode × contract.
    pub spec: DialogueSpec,
    /// One-based user turn.
    pub turn: u32,
    /// User turns of the dialogue.
    pub turns: u32,
    /// The field answered.
    pub field: String,
    /// Zero-based position of the field in the dialogue's field order.
    pub field_index: u32,
    /// The field's gold value after the turn.
    pub gold: String,
    /// The value the model gave (a legal value), or none when it failed.
    pub predicted: Option<String>,
    /// Whether `predicted` equals `gold` (false when the answer failed).
    pub correct: bool,
    /// Why no legal value was given (`None` exactly when `predicted` is set).
    pub failure: Option<FieldFailure>,
    /// The logical request that answered this field (one per turn for Joint, one per field
    /// otherwise).
    pub request_id: String,
    /// SHA-256 of what the model saw (equal keys share one response: C.1's shared rows).
    pub prompt_key: String,
    /// Scored contract: the field's distribution over `legal_values` (display order).
    pub probabilities: Vec<f64>,
    /// The field's legal values (their `value` strings) in display order.
    pub legal_values: Vec<String>,
    /// The model that was asked: its name and the first twelve hex digits of its file's
    /// SHA-256 (`name@0123456789ab`).
    pub model: String,
    /// Prompt tokens of the request (for Joint, counted on the turn's first field only).
    pub prompt_tokens: u32,
    /// Completion tokens of the request, on the same rows as `prompt_tokens` (0 on the others).
    pub completion_tokens: u32,
    /// Recorded request time in milliseconds, on the same rows as `prompt_tokens` (0 on the
    /// others).
    pub latency_ms: f64,
    /// The generated response text (generated contract; Joint: on every field of the turn).
    pub response: Option<String>,
    /// An engine error.
    pub error: Option<String>,
    /// When the writing process started (ms since the Unix epoch): a resumed run writes a
    /// dialogue run again in full unless it was complete, and readers keep each run's latest
    /// attempt.
    #[serde(default)]
    pub attempt: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn service() -> DialogueService {
        let v = |id: &str, value: &str| SchemaValue {
            id: id.into(),
            value: value.into(),
            description: format!("about {value}"),
        };
        DialogueService {
            name: "Restaurants".into(),
            description: "Find restaurants".into(),
            intents: vec![v("intent:FindRestaurants", "FindRestaurants")],
            slots: vec![CategoricalSlot {
                name: "price_range".into(),
                description: "Price".into(),
                values: vec![
                    v("price_range:cheap", "cheap"),
                    v("price_range:pricey", "pricey"),
                ],
            }],
        }
    }

    fn dialogue() -> Dialogue {
        let s = service();
        let mut st = s.initial_state();
        st.insert(INTENT_FIELD.into(), "FindRestaurants".into());
        Dialogue {
            dialogue_id: "d1".into(),
            split: DialogueSplit::Test,
            field_order: vec!["price_range".into(), INTENT_FIELD.into()],
            service: s,
            turns: vec![DialogueTurn {
                system: String::new(),
                user: "Find me a place to eat.".into(),
                state: st,
            }],
            perturbation: None,
            perturbation_of: None,
            origin: String::new(),
        }
    }

    /// "Initial intent is NONE, absent slots UNSET and explicit indifference DONTCARE" (C.1).
    #[test]
    fn initial_state_and_legal_values() {
        let s = service();
        let init = s.initial_state();
        assert_eq!(init[INTENT_FIELD], NONE_INTENT);
        assert_eq!(init["price_range"], UNSET);
        let legal: Vec<String> = s
            .legal_values("price_range")
            .unwrap()
            .into_iter()
            .map(|v| v.value)
            .collect();
        assert_eq!(legal, ["UNSET", "DONTCARE", "cheap", "pricey"]);
        let intents: Vec<String> = s
            .legal_values(INTENT_FIELD)
            .unwrap()
            .into_iter()
            .map(|v| v.value)
            .collect();
        assert_eq!(intents, ["NONE", "FindRestaurants"]);
        assert!(s.legal_values("area").is_none());
    }

    #[test]
    fn validation_names_the_field() {
        assert!(dialogue().validate().is_ok());
        let mut d = dialogue();
        d.field_order.pop();
        assert_eq!(d.validate().unwrap_err().field, "field_order");
        let mut d = dialogue();
        d.turns[0].state.insert("price_range".into(), "free".into());
        let e = d.validate().unwrap_err();
        assert_eq!(e.field, "turns[0].state");
        assert!(e.to_string().contains("`free`"), "{e}");
        let mut d = dialogue();
        d.turns[0].state.remove("price_range");
        assert_eq!(d.validate().unwrap_err().field, "turns[0].state");
        let mut d = dialogue();
        d.perturbation = Some(Perturbation::Paraphrase);
        assert_eq!(d.validate().unwrap_err().field, "perturbation_of");
        let line = serde_json::to_string(&dialogue()).unwrap();
        assert_eq!(parse_dialogue(&line).unwrap(), dialogue());
        assert!(parse_dialogue("{")
            .unwrap_err()
            .to_string()
            .contains("not a dialogue"));
    }

    #[test]
    fn a_line_that_is_no_dialogue_says_so() {
        let err = parse_dialogue("3").unwrap_err();
        let serde = serde_json::from_str::<Dialogue>("3").unwrap_err();
        assert_eq!(err.to_string(), format!("not a dialogue: {serde}"));
        assert!(std::error::Error::source(&err).is_some());
    }
}
