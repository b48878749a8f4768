//! Verbatim instructions and response contracts of Appendix E, and the rendering of a request
//! from state.
//!
//! Layout of every request: one user message holding a JSON object whose keys come in the
//! paper's order — `state`, `question` (the instruction), `choices` (code → criterion, when
//! codes are shown) or `allowed_values` (when a value itself is the answer), and
//! `response_format` ("a single user message contains JSON keys state, question,
//! allowed_values, and response_format", E.2; "User JSON has exactly state, question, choices,
//! and response_format", E.5). The state is the canonical JSON text ("State is the canonical
//! JSON string used by the other interfaces", E.2), except for PrefixContinue, whose state is
//! the object itself ("PrefixContinue places the state object there", E.3). The non-paper
//! layout [`RequestLayout::StateLast`] puts the state last instead; it is only used when a run
//! names it. Readout templates T0–T2 add a system message.

use serde_json::{json, Map, Value};

use c2s_records::{
    Arm, ArmSpec, Contract, CopyControl, Decoding, Evidence, InterventionReadout, Item,
    OptionNames, PromptVariant, Request, RequestLayout, RequestOption, Template, BUDGET_CHARACTER,
    BUDGET_STRING,
};

use crate::canonical::{canonicalize, to_canonical_string};
pub use crate::padding::{padding_for, PADDING_CHAR, PADDING_KEY};

/// E.1 / E.2 natural-task instructions.
pub mod text {
    /// Native and NativeControl's question (and PrefixIntervention's whole-answer readout's),
    /// wording V1.
    pub const NATIVE_V1: &str = "Select the complete correct answer from the provided candidates.";
    /// Native and NativeControl's question, wording V2.
    pub const NATIVE_V2: &str = "Which listed full answer correctly solves the problem?";
    /// Native and NativeControl's question, wording V3.
    pub const NATIVE_V3: &str =
        "Identify the correct complete solution among the candidate answers.";
    /// Independent's question, wording V1.
    pub const INDEPENDENT_V1: &str = "Solve the original problem. Select its true answer character at the specified one-based position, independently of other positions.";
    /// Independent's question, wording V2.
    pub const INDEPENDENT_V2: &str = "Which character occupies the specified one-based position of the answer to the original problem?";
    /// Independent's question, wording V3.
    pub const INDEPENDENT_V3: &str =
        "Determine the complete solution and identify the character at the specified position.";
    /// Serial and TeacherForced's question (and PrefixIntervention's character readout's),
    /// wording V1.
    pub const SERIAL_V1: &str = "Solve the original problem. Select its true answer character at the specified position. The current prefix is a draft and may contain errors; it does not change the original answer.";
    /// Serial and TeacherForced's question, wording V2.
    pub const SERIAL_V2: &str = "Given the possibly incorrect draft prefix, identify the original answer character at the specified position.";
    /// Serial and TeacherForced's question, wording V3.
    pub const SERIAL_V3: &str = "Use the draft history to determine the true solution character at this position; the draft may be wrong.";
    /// The copy arms' question (GoldCopy, IncorrectCopy, SelfPlanSpell), under every wording.
    pub const GOLD_COPY: &str =
        "Copy copy_target exactly. Select its character at the specified one-based position.";
    /// D.11's Batch bundles the position questions; the paper gives no text for the bundle,
    /// so this is GOLD_COPY's wording with every listed position (docs/protocol-choices.md).
    pub const GOLD_COPY_BATCH: &str =
        "Copy copy_target exactly. Select its character at each listed one-based position.";
    /// Batch response formats (ours, as GOLD_COPY_BATCH).
    pub const BATCH_CODE_RESPONSE_FORMAT: &str = "Output only a JSON object that maps each listed position to the single-character code of its selected choice.";
    /// The Batch response format where values, not codes, are answered.
    pub const BATCH_VALUE_RESPONSE_FORMAT: &str =
        "Output only a JSON object that maps each listed position to its selected value.";
    /// SerialStop's question, under every wording: the next character, or END.
    pub const SERIAL_STOP: &str = "Solve the original problem. Select the next character after current_prefix. Select END immediately after the complete answer.";
    /// E.3: shared by WholeGenerate and PrefixContinue.
    pub const COMPLETE_ANSWER: &str = "Solve the original problem and output only its complete answer, without explanation or markdown.";

    /// E.2 response contracts.
    pub const NATIVE_DIRECT_CONTRACT: &str =
        "Output only the requested complete string. No explanation or markdown.";
    /// The contract of a generated character without a readout template.
    pub const LOCAL_DIRECT_CONTRACT: &str =
        "Output only the single requested lowercase letter or digit.";
    /// E.3 response contract.
    pub const COMPLETE_ANSWER_CONTRACT: &str =
        "Output only the complete answer. No explanation or markdown.";

    /// E.5 response formats.
    pub const CODE_RESPONSE_FORMAT: &str =
        "Select one choice and output only its single-character code.";
    /// Used when more than 26 options need two-letter codes (the 51-option stopping track); the
    /// paper's single-character wording would be false there.
    pub const MULTI_CODE_RESPONSE_FORMAT: &str = "Select one choice and output only its code.";
    /// The response format of a generated character under a readout template.
    pub const CHARACTER_RESPONSE_FORMAT: &str =
        "Select one choice and output only the single character described by its criterion.";
    /// E.5 shared user question of the readout grid.
    pub const READOUT_QUESTION: &str = "Select the character of copy_target at the one-based query_position. Auxiliary representations, when present, encode the same target. Each criterion description specifies an output character. Select by the criterion description; option names identify criteria.";

    /// E.5 system messages.
    pub const T0_CODE: &str = "Return exactly ONE listed choice code, as a single uppercase letter. Do not output the option name or criterion value. Do not explain, reason aloud, add whitespace, punctuation, or any other text.";
    /// T0's system message where a character, not a code, is answered.
    pub const T0_CHARACTER: &str = "Return exactly ONE character described by the correct criterion: a lowercase letter or digit, as appropriate for the listed criteria. Do not output a choice code or option name. Do not explain, reason aloud, add whitespace, punctuation, or any other text.";
    /// T1's system message where a code is answered.
    pub const T1_CODE: &str = "Your entire response must be exactly one uppercase letter: the code of the selected choice. Use its criterion to decide. Omit the option name and criterion value. Include no explanation, reasoning, whitespace, punctuation, or additional text.";
    /// T1's system message where a character is answered.
    pub const T1_CHARACTER: &str = "Your entire response must be exactly one character: the lowercase letter or digit specified by the correct choice’s criterion. Omit the code and option name. Include no explanation, reasoning, whitespace, punctuation, or additional text.";
    /// T2's system message where a code is answered.
    pub const T2_CODE: &str = "Choose the option whose criterion answers the question. Reply with its single uppercase choice code alone. Your response must contain no other characters, explanation, or formatting.";
    /// T2's system message where a character is answered.
    pub const T2_CHARACTER: &str = "Choose the option whose criterion answers the question. Reply with the single lowercase letter or digit given by that criterion alone. Your response must contain no other characters, explanation, or formatting.";
}

/// Whether response codes are shown to the model (and so can be answered instead of a value).
pub fn shows_codes(spec: &ArmSpec) -> bool {
    matches!(
        spec.contract,
        Contract::ScoredCode | Contract::GeneratedCode
    ) || spec.template.is_some()
}

/// Copy arms with a readout template use the E.5 readout layout and ask one preselected
/// position per item ("Sixty parents per domain and twelve symbolic bases each supply a target
/// and one preselected position", B.5).
pub fn is_readout(spec: &ArmSpec) -> bool {
    spec.is_readout()
}

/// D.11's Batch: a copy arm whose L position questions are bundled into one request.
pub fn is_batch(spec: &ArmSpec) -> bool {
    spec.arm.is_copy() && spec.copy_control == CopyControl::Batch && spec.template.is_none()
}

/// The default greedy budget of a generated Batch answer: a JSON object of up to eight
/// fields (`{"1": "5", …}`, about seven tokens a field) with room to spare.
pub const BUDGET_BATCH: u32 = 96;

/// The assistant-side text before field `position` of a scored Batch answer: the JSON object
/// so far, with the codes chosen for the earlier fields, up to the opening quote of this
/// field's value (`{"1": "C", "2": "`). The next token is scored over the legal codes there.
pub fn batch_answer_prefix(codes: &[String], position: u32) -> String {
    let mut out = String::from("{");
    for (i, c) in codes.iter().enumerate() {
        out.push_str(&format!("\"{}\": \"{c}\", ", i + 1));
    }
    out.push_str(&format!("\"{position}\": \""));
    out
}

/// A.4's whole-answer readout: one complete string, chosen among the candidates.
pub fn asks_whole(spec: &ArmSpec) -> bool {
    spec.asks_whole()
}

/// Whether a generated response loses its outer whitespace before it is matched.
///
/// The natural direct-output contracts strip it: "After outer whitespace removal, scoring
/// requires an exact listed value and a complete response" (E.2); "Only outer whitespace is
/// stripped" (A.7). Copying does not: "Single-position generation allows eight tokens;
/// malformed output fails without trimming" (D.11), and the readout grid's "Decoded responses
/// are scored without case repair, whitespace trimming or code mapping" (E.6).
pub fn strips_outer_whitespace(spec: &ArmSpec) -> bool {
    !spec.arm.is_copy()
}

/// The opaque option name of the criterion `value` in the readout grid: `o_` and twelve hex
/// digits of a SHA-256 of the value. E.5: "Each ordered choices entry maps a displayed
/// uppercase code to option_name and criterion. Codes bind to characters once per parent. …
/// Option names, response codes and character criteria are distinct in the opaque
/// condition." The name depends on the criterion only, as in E.6, where `o_986b79d4b69d`
/// names the criterion 9 for both parents while the codes bound to it differ (C, F).
pub fn opaque_option_name(value: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("choice2seq opaque option name\0{value}").as_bytes());
    format!("o_{}", &hex::encode(digest)[..12])
}

/// The readable option name of the criterion `value` (B.5's readable conditions): `digit_5`,
/// `letter_a`. The paper names the conditions, not the names' spelling; these state the
/// character the criterion describes, so that a conflicting name contradicts its criterion.
pub fn readable_option_name(value: &str) -> String {
    match value.chars().next() {
        Some(c) if c.is_ascii_digit() => format!("digit_{value}"),
        _ => format!("letter_{value}"),
    }
}

/// The option name of each of `values` (the displayed criteria) under `names` for the parent
/// `unit` (an item id; a symbolic item's base, [`crate::options::binding_unit`]). B.5:
/// "Opaque, opaque remapped, readable aligned and readable conflicting names retain the
/// character descriptions. A permutation with no fixed points rebinds names. Gold follows
/// descriptions." The rebinding permutation is a cyclic shift, by 1..n−1 places chosen from a
/// SHA-256 of the parent, of the criteria in `canonical` order (the domain alphabet; values
/// outside it follow, sorted): it has no fixed point and is the same for every display order
/// of the parent (codes and names bind once per parent). For the natural domains the
/// canonical order is the sorted order; for the symbolic encodings it is the digit order, so
/// the two encodings of a base rebind the images of the same criteria (A.5: "shared geometry
/// and matched order").
pub fn option_names(
    names: OptionNames,
    unit: &str,
    canonical: &[char],
    values: &[String],
) -> Vec<String> {
    let base = |v: &str| match names {
        OptionNames::Opaque | OptionNames::OpaqueRemapped => opaque_option_name(v),
        OptionNames::ReadableAligned | OptionNames::ReadableConflicting => readable_option_name(v),
    };
    let rank = |v: &String| {
        let mut chars = v.chars();
        let index = match (chars.next(), chars.next()) {
            (Some(c), None) => canonical.iter().position(|&a| a == c),
            _ => None,
        };
        (index.unwrap_or(canonical.len()), v.clone())
    };
    let mut sorted: Vec<&String> = values.iter().collect();
    sorted.sort_by_key(|v| rank(v));
    sorted.dedup();
    let n = sorted.len();
    if !names.remapped() || n < 2 {
        return values.iter().map(|v| base(v)).collect();
    }
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("choice2seq option-name rebinding\0{unit}").as_bytes());
    let mut word = [0u8; 8];
    word.copy_from_slice(&digest[..8]);
    let shift = 1 + (u64::from_le_bytes(word) % (n as u64 - 1)) as usize;
    values
        .iter()
        .map(|v| {
            let i = sorted.iter().position(|s| *s == v).unwrap_or(0);
            base(sorted[(i + shift) % n])
        })
        .collect()
}

/// The instruction (question) of `spec`.
pub fn instruction(spec: &ArmSpec) -> &'static str {
    use text::*;
    if is_readout(spec) {
        return READOUT_QUESTION;
    }
    if is_batch(spec) {
        return GOLD_COPY_BATCH;
    }
    // A.4's readouts: the whole answer is asked with the Native question, a local character
    // with the Serial question (the draft is the `current_prefix` either way).
    let arm = match (spec.arm, spec.readout) {
        (Arm::PrefixIntervention, InterventionReadout::Whole) => Arm::Native,
        (Arm::PrefixIntervention, InterventionReadout::Character) => Arm::Serial,
        (arm, _) => arm,
    };
    match (arm, spec.variant) {
        (Arm::Native | Arm::NativeControl, PromptVariant::V1) => NATIVE_V1,
        (Arm::Native | Arm::NativeControl, PromptVariant::V2) => NATIVE_V2,
        (Arm::Native | Arm::NativeControl, PromptVariant::V3) => NATIVE_V3,
        (Arm::Independent, PromptVariant::V1) => INDEPENDENT_V1,
        (Arm::Independent, PromptVariant::V2) => INDEPENDENT_V2,
        (Arm::Independent, PromptVariant::V3) => INDEPENDENT_V3,
        // TeacherForced shares the Serial instruction (E.1).
        (Arm::Serial | Arm::TeacherForced, PromptVariant::V1) => SERIAL_V1,
        (Arm::Serial | Arm::TeacherForced, PromptVariant::V2) => SERIAL_V2,
        (Arm::Serial | Arm::TeacherForced, PromptVariant::V3) => SERIAL_V3,
        (Arm::GoldCopy | Arm::IncorrectCopy | Arm::SelfPlanSpell, _) => GOLD_COPY,
        (Arm::SerialStop, _) => SERIAL_STOP,
        (Arm::WholeGenerate | Arm::PrefixContinue, _) => COMPLETE_ANSWER,
        // Mapped above.
        (Arm::PrefixIntervention, _) => SERIAL_V1,
    }
}

/// The response-format text of `spec` with `n_options` displayed options.
pub fn response_format(spec: &ArmSpec, n_options: usize) -> &'static str {
    use text::*;
    if is_batch(spec) {
        return match spec.contract {
            Contract::ScoredCode | Contract::GeneratedCode => BATCH_CODE_RESPONSE_FORMAT,
            _ => BATCH_VALUE_RESPONSE_FORMAT,
        };
    }
    match spec.contract {
        Contract::ScoredCode | Contract::GeneratedCode => {
            if n_options > 26 {
                MULTI_CODE_RESPONSE_FORMAT
            } else {
                CODE_RESPONSE_FORMAT
            }
        }
        Contract::GeneratedCharacter if spec.template.is_some() => CHARACTER_RESPONSE_FORMAT,
        Contract::GeneratedCharacter => LOCAL_DIRECT_CONTRACT,
        Contract::GeneratedString => match spec.arm {
            Arm::WholeGenerate | Arm::PrefixContinue => COMPLETE_ANSWER_CONTRACT,
            _ => NATIVE_DIRECT_CONTRACT,
        },
    }
}

/// The optional system message (readout templates T0–T2).
pub fn system_message(spec: &ArmSpec) -> Option<&'static str> {
    use text::*;
    let code = matches!(
        spec.contract,
        Contract::ScoredCode | Contract::GeneratedCode
    );
    spec.template.map(|t| match (t, code) {
        (Template::T0, true) => T0_CODE,
        (Template::T0, false) => T0_CHARACTER,
        (Template::T1, true) => T1_CODE,
        (Template::T1, false) => T1_CHARACTER,
        (Template::T2, true) => T2_CODE,
        (Template::T2, false) => T2_CHARACTER,
    })
}

/// What a local step knows: position, prefix and copy evidence.
#[derive(Debug, Clone, Default)]
pub struct StepState<'a> {
    /// One-based position (None for whole-answer arms and PrefixContinue).
    pub position: Option<u32>,
    /// Prefix shown in `current_prefix` (None when the arm shows no prefix).
    pub prefix: Option<&'a str>,
    /// `copy_target` of copy arms.
    pub copy_target: Option<&'a str>,
    /// The token-matched padding of D.9's token control (`Evidence::PaddedTokens`).
    pub padding: Option<&'a str>,
}

/// The state object of `spec` for `item` at `step` (E.1, E.2, E.5; Table E1).
pub fn state_value(item: &Item, spec: &ArmSpec, step: &StepState<'_>) -> Value {
    let mut s = Map::new();
    // Gold Copy withholds the candidates; the Native control withholds the problem.
    let with_candidates = !spec.arm.withholds_candidates();
    let with_problem = spec.arm != Arm::NativeControl;
    if with_candidates && !is_readout(spec) {
        s.insert("candidates".into(), json!(item.candidates));
    }
    if with_problem && !is_readout(spec) {
        s.insert("problem".into(), json!(item.problem));
    }
    if !is_readout(spec) {
        s.insert("target_length".into(), json!(item.length));
    }
    if is_readout(spec) {
        // B.5: "Raw provides string and position; Indexed adds the position table; Direct
        // also supplies the extracted character". E.5's "All arms supply copy_target,
        // query_position, indexing set to one-based, and the complete indexed_characters
        // list" is the readout grid (D.13), whose arms are all Indexed or Direct.
        let target = step.copy_target.unwrap_or_default();
        s.insert("copy_target".into(), json!(target));
        s.insert("query_position".into(), json!(step.position.unwrap_or(0)));
        if matches!(spec.evidence, Evidence::Indexed | Evidence::Direct) {
            s.insert("indexing".into(), json!("one-based"));
            s.insert("indexed_characters".into(), indexed_characters(target));
        }
        if spec.evidence == Evidence::Direct {
            s.insert(
                "query_character".into(),
                json!(query_character(target, step.position)),
            );
        }
        return Value::Object(s);
    }
    if let Some(p) = step.position {
        s.insert("position".into(), json!(p));
    }
    if is_batch(spec) {
        // Every position is asked in the one bundled request.
        s.insert(
            "positions".into(),
            json!((1..=item.length).collect::<Vec<_>>()),
        );
    }
    if let Some(prefix) = step.prefix {
        s.insert("current_prefix".into(), json!(prefix));
    }
    if let Some(target) = step.copy_target {
        s.insert("copy_target".into(), json!(target));
        match spec.evidence {
            Evidence::Raw => {}
            Evidence::Padded => {
                let padding = padding_for(item, spec, step);
                s.insert(PADDING_KEY.into(), json!(padding));
            }
            // The token match needs the tokenizer: the controller searches the padding
            // (crate::padding::token_matched_request) and passes it in the step.
            Evidence::PaddedTokens => {
                s.insert(PADDING_KEY.into(), json!(step.padding.unwrap_or_default()));
            }
            Evidence::Indexed | Evidence::Direct => {
                s.insert("indexing".into(), json!("one-based"));
                s.insert("indexed_characters".into(), indexed_characters(target));
                if spec.evidence == Evidence::Direct {
                    s.insert(
                        "query_character".into(),
                        json!(query_character(target, step.position)),
                    );
                }
            }
        }
    }
    Value::Object(s)
}

fn indexed_characters(target: &str) -> Value {
    Value::Array(
        target
            .chars()
            .enumerate()
            .map(|(i, c)| json!({"position": i + 1, "character": c.to_string()}))
            .collect(),
    )
}

fn query_character(target: &str, position: Option<u32>) -> String {
    position
        .and_then(|p| target.chars().nth(p.saturating_sub(1) as usize))
        .map(|c| c.to_string())
        .unwrap_or_default()
}

/// Decoding of `spec`: scoring, or greedy with the arm's budget — by default the SPEC's (8 per
/// character, 32 per string: "Direct queries allow eight new tokens per character, 32 per
/// string", A.7), else the panel's own (`max_new_tokens`, e.g. B.3's 64).
pub fn decoding(spec: &ArmSpec) -> Decoding {
    let default = match spec.contract {
        Contract::ScoredCode => return Decoding::Score,
        _ if is_batch(spec) => BUDGET_BATCH,
        Contract::GeneratedCode | Contract::GeneratedCharacter => BUDGET_CHARACTER,
        Contract::GeneratedString => {
            if spec.arm.is_whole_answer() || spec.arm == Arm::PrefixContinue || asks_whole(spec) {
                BUDGET_STRING
            } else {
                BUDGET_CHARACTER
            }
        }
    };
    Decoding::Greedy {
        max_new_tokens: spec.max_new_tokens.unwrap_or(default),
    }
}

/// Render a complete request. `options` are the displayed options (display order, codes
/// bound); `assistant_prefix` is placed after the generation boundary (PrefixContinue).
pub fn render_request(
    item: &Item,
    spec: &ArmSpec,
    step_number: u32,
    step: &StepState<'_>,
    options: Vec<RequestOption>,
    assistant_prefix: Option<String>,
) -> Request {
    let state_object = state_value(item, spec, step);
    let state = to_canonical_string(&state_object);
    let question = instruction(spec);
    // E.3: "WholeGenerate places canonical JSON text in the user object's state field.
    // PrefixContinue places the state object there". Every other arm follows E.2: "State is
    // the canonical JSON string used by the other interfaces".
    let state_field = if spec.arm == Arm::PrefixContinue {
        canonicalize(&state_object)
    } else {
        json!(state)
    };
    let mut user = Map::new();
    if spec.layout == RequestLayout::Paper {
        user.insert("state".into(), state_field.clone());
    }
    user.insert("question".into(), json!(question));
    if shows_codes(spec) {
        // Codes in display order, each bound to its criterion; the readout grid adds the
        // option name to every entry (E.5).
        let readout = is_readout(spec);
        let values: Vec<String> = options.iter().map(|o| o.value.clone()).collect();
        let names = option_names(
            spec.names,
            crate::options::binding_unit(item),
            item.domain.alphabet(),
            &values,
        );
        let mut choices = Map::new();
        for (o, name) in options.iter().zip(names) {
            let entry = if readout {
                json!({"option_name": name, "criterion": o.value})
            } else {
                json!(o.value)
            };
            choices.insert(o.code.clone(), entry);
        }
        user.insert("choices".into(), Value::Object(choices));
    } else if !matches!(spec.arm, Arm::WholeGenerate | Arm::PrefixContinue) {
        user.insert(
            "allowed_values".into(),
            Value::Array(options.iter().map(|o| json!(o.value)).collect()),
        );
    }
    user.insert(
        "response_format".into(),
        json!(response_format(spec, options.len())),
    );
    if spec.layout == RequestLayout::StateLast {
        user.insert("state".into(), state_field);
    }
    let user_text = serde_json::to_string(&Value::Object(user)).unwrap_or_default();
    let mut request = Request {
        request_id: String::new(),
        item_id: item.item_id.clone(),
        arm: spec.label(),
        step: step_number,
        system: system_message(spec).map(str::to_string),
        user: user_text,
        assistant_prefix,
        state,
        instruction: question.to_string(),
        options,
        contract: spec.contract,
        decoding: decoding(spec),
        closing_context: Vec::new(),
    };
    request.request_id = request.derive_id();
    request
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{candidate_binding, local_binding};
    use c2s_records::{OptionOrder, Support};

    fn item() -> Item {
        c2s_records::parse_item(
            r#"{"item_id":"x","domain":"arithmetic","problem":"What is 39 * 15?","target":"585",
               "candidates":["585","589","385","389","485","489","685","689"]}"#,
            &Default::default(),
        )
        .unwrap()
    }

    /// Paper E.2: "a single user message contains JSON keys state, question, allowed_values,
    /// and response_format. State is the canonical JSON string used by the other
    /// interfaces"; E.5: "User JSON has exactly state, question, choices, and
    /// response_format".
    #[test]
    fn serial_state_is_canonical_and_first() {
        let it = item();
        let spec = ArmSpec::new(Arm::Serial).with_support(Support::FULL);
        let b = local_binding(&it, 1, OptionOrder::Reference);
        let r = render_request(
            &it,
            &spec,
            2,
            &StepState {
                position: Some(2),
                prefix: Some("5"),
                copy_target: None,
                padding: None,
            },
            b.options.clone(),
            None,
        );
        assert_eq!(
            r.state,
            r#"{"candidates":["585","589","385","389","485","489","685","689"],"current_prefix":"5","position":2,"problem":"What is 39 * 15?","target_length":3}"#
        );
        let v: Value = serde_json::from_str(&r.user).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["state", "question", "choices", "response_format"]);
        assert!(r.user.starts_with(r#"{"state":"{\"candidates\":"#));
        assert_eq!(v["question"], text::SERIAL_V1);
        assert_eq!(v["state"], json!(r.state));
        assert_eq!(v["response_format"], text::CODE_RESPONSE_FORMAT);
        assert_eq!(v["choices"].as_object().unwrap().len(), 10);
        assert_eq!(r.decoding, Decoding::Score);
        assert!(r.system.is_none());
        assert!(r.request_id.starts_with("x:Serial/Full/code:2:"));
    }

    fn user_keys(r: &Request) -> Vec<String> {
        let v: Value = serde_json::from_str(&r.user).unwrap();
        v.as_object().unwrap().keys().cloned().collect()
    }

    /// Every arm shares the paper layout by default: `state` first, then `question`, then
    /// `choices` or `allowed_values`, then `response_format` (E.2, E.5). The state-last layout
    /// is a named non-default option and shows in the arm label.
    #[test]
    fn every_arm_uses_the_paper_layout_unless_state_last_is_named() {
        let it = item();
        let step = StepState {
            position: Some(1),
            prefix: Some(""),
            copy_target: Some("585"),
            padding: None,
        };
        let options = local_binding(&it, 1, OptionOrder::Reference).options;
        for arm in c2s_records::Arm::ALL {
            let mut spec = ArmSpec::new(arm);
            if matches!(arm, Arm::WholeGenerate | Arm::PrefixContinue) {
                spec.contract = Contract::GeneratedString;
            }
            let r = render_request(&it, &spec, 1, &step, options.clone(), None);
            let keys = user_keys(&r);
            assert_eq!(keys.first().map(String::as_str), Some("state"), "{arm}");
            assert_eq!(keys[1], "question", "{arm}");
            assert_eq!(keys.last().map(String::as_str), Some("response_format"));
            spec.layout = RequestLayout::StateLast;
            let r = render_request(&it, &spec, 1, &step, options.clone(), None);
            let keys = user_keys(&r);
            assert_eq!(keys.first().map(String::as_str), Some("question"), "{arm}");
            assert_eq!(keys.last().map(String::as_str), Some("state"), "{arm}");
            assert!(spec.label().ends_with("/state-last"));
        }
        let native = ArmSpec::new(Arm::Native).with_contract(Contract::GeneratedString);
        let b = candidate_binding(&it, 1, OptionOrder::Reference);
        let r = render_request(&it, &native, 0, &StepState::default(), b.options, None);
        assert_eq!(
            user_keys(&r),
            ["state", "question", "allowed_values", "response_format"]
        );
    }

    /// E.3: "WholeGenerate places canonical JSON text in the user object's state field.
    /// PrefixContinue places the state object there and appends generated_prefix after the
    /// assistant generation boundary. Its state excludes absolute position and current-prefix
    /// fields." D.8: "PrefixContinue uses structured state".
    #[test]
    fn prefix_continue_places_the_state_object_and_whole_generate_its_text() {
        let it = item();
        let spec = ArmSpec::new(Arm::PrefixContinue).with_contract(Contract::GeneratedString);
        // The controller gives PrefixContinue no position and no prefix in its state.
        let r = render_request(
            &it,
            &spec,
            2,
            &StepState::default(),
            vec![],
            Some("5".into()),
        );
        let v: Value = serde_json::from_str(&r.user).unwrap();
        assert!(v["state"].is_object(), "state is an object: {}", r.user);
        let keys: Vec<&String> = v["state"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["candidates", "problem", "target_length"]);
        assert_eq!(to_canonical_string(&v["state"]), r.state);
        assert_eq!(r.assistant_prefix.as_deref(), Some("5"));
        assert_eq!(user_keys(&r), ["state", "question", "response_format"]);
        assert_eq!(v["question"], text::COMPLETE_ANSWER);
        assert_eq!(v["response_format"], text::COMPLETE_ANSWER_CONTRACT);
        let whole = ArmSpec::new(Arm::WholeGenerate).with_contract(Contract::GeneratedString);
        let r = render_request(&it, &whole, 0, &StepState::default(), vec![], None);
        let v: Value = serde_json::from_str(&r.user).unwrap();
        assert_eq!(
            v["state"],
            json!(r.state),
            "WholeGenerate: canonical JSON text"
        );
    }

    #[test]
    fn states_follow_table_e1_per_arm() {
        let it = item();
        let keys = |arm: Arm, st: StepState<'_>| -> Vec<String> {
            let v = state_value(&it, &ArmSpec::new(arm), &st);
            v.as_object().unwrap().keys().cloned().collect()
        };
        assert_eq!(
            keys(Arm::Native, StepState::default()),
            ["candidates", "problem", "target_length"]
        );
        assert_eq!(
            keys(Arm::NativeControl, StepState::default()),
            ["candidates", "target_length"]
        );
        assert_eq!(
            keys(
                Arm::Independent,
                StepState {
                    position: Some(1),
                    ..Default::default()
                }
            ),
            ["candidates", "problem", "target_length", "position"]
        );
        assert_eq!(
            keys(
                Arm::GoldCopy,
                StepState {
                    position: Some(1),
                    prefix: Some(""),
                    copy_target: Some("585"),
                    padding: None,
                }
            ),
            [
                "problem",
                "target_length",
                "position",
                "current_prefix",
                "copy_target"
            ]
        );
        let mut indexed = ArmSpec::new(Arm::SelfPlanSpell);
        indexed.evidence = Evidence::Direct;
        let v = state_value(
            &it,
            &indexed,
            &StepState {
                position: Some(3),
                prefix: Some("58"),
                copy_target: Some("589"),
                padding: None,
            },
        );
        assert_eq!(v["query_character"], "9");
        assert_eq!(
            v["indexed_characters"][2],
            json!({"position": 3, "character": "9"})
        );
        assert_eq!(v["candidates"].as_array().unwrap().len(), 8);
    }

    /// B.5: "Raw provides string and position; Indexed adds the position table; Direct also
    /// supplies the extracted character." The binding panel's three evidence levels differ
    /// exactly so; the readout grid's Indexed and Direct arms carry E.5's complete table.
    #[test]
    fn readout_states_carry_what_each_evidence_level_supplies() {
        let it = item();
        let step = StepState {
            position: Some(2),
            prefix: None,
            copy_target: Some("589"),
            padding: None,
        };
        let state = |evidence: Evidence| {
            let mut spec = ArmSpec::new(Arm::GoldCopy);
            spec.template = Some(c2s_records::Template::T0);
            spec.evidence = evidence;
            assert!(is_readout(&spec));
            state_value(&it, &spec, &step)
        };
        let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
        let raw = state(Evidence::Raw);
        assert_eq!(keys(&raw), ["copy_target", "query_position"]);
        assert_eq!(raw, json!({"copy_target": "589", "query_position": 2}));
        let indexed = state(Evidence::Indexed);
        assert_eq!(
            keys(&indexed),
            [
                "copy_target",
                "query_position",
                "indexing",
                "indexed_characters"
            ]
        );
        assert_eq!(indexed["indexing"], "one-based");
        assert_eq!(
            indexed["indexed_characters"],
            json!([
                {"position": 1, "character": "5"},
                {"position": 2, "character": "8"},
                {"position": 3, "character": "9"}
            ])
        );
        let direct = state(Evidence::Direct);
        assert_eq!(
            keys(&direct),
            [
                "copy_target",
                "query_position",
                "indexing",
                "indexed_characters",
                "query_character"
            ]
        );
        assert_eq!(direct["query_character"], "8");
        // Each level adds to the one before and changes nothing of it.
        for (smaller, larger) in [(&raw, &indexed), (&indexed, &direct)] {
            for (k, v) in smaller.as_object().unwrap() {
                assert_eq!(&larger[k], v, "{k}");
            }
        }
    }

    /// D.9: "Nonindexed punctuation matches Indexed's serialized-state character and UTF-8
    /// byte length at the same prefix." The Padded state is the Raw state plus `padding`, and
    /// its canonical text is exactly as long as Indexed's at every step and prefix, for copy
    /// targets of every main-panel length.
    #[test]
    fn padded_state_matches_the_indexed_length_at_the_same_prefix() {
        let it = item();
        for arm in [Arm::GoldCopy, Arm::SelfPlanSpell] {
            for target in ["585", "58512", "12345678", "000000"] {
                for t in 1..=target.len() {
                    for prefix in [&target[..t - 1], &"9999999"[..t - 1]] {
                        let step = StepState {
                            position: Some(t as u32),
                            prefix: Some(prefix),
                            copy_target: Some(target),
                            padding: None,
                        };
                        let mut spec = ArmSpec::new(arm);
                        spec.evidence = Evidence::Indexed;
                        let indexed = to_canonical_string(&state_value(&it, &spec, &step));
                        spec.evidence = Evidence::Padded;
                        let v = state_value(&it, &spec, &step);
                        let padded = to_canonical_string(&v);
                        assert_eq!(padded.len(), indexed.len(), "{padded} vs {indexed}");
                        assert_eq!(padded.chars().count(), indexed.chars().count());
                        let pad = v["padding"].as_str().unwrap();
                        assert!(!pad.is_empty() && pad.chars().all(|c| c == PADDING_CHAR));
                        assert!(v.get("indexed_characters").is_none());
                        spec.evidence = Evidence::Raw;
                        let mut raw = state_value(&it, &spec, &step);
                        raw["padding"] = json!(pad);
                        assert_eq!(raw, v, "Raw plus the padding, nothing else");
                    }
                }
            }
        }
    }

    #[test]
    fn contracts_choose_texts_and_budgets() {
        let it = item();
        let native = ArmSpec::new(Arm::Native).with_contract(Contract::GeneratedString);
        let b = candidate_binding(&it, 1, OptionOrder::Reference);
        let r = render_request(
            &it,
            &native,
            0,
            &StepState::default(),
            b.options.clone(),
            None,
        );
        let v: Value = serde_json::from_str(&r.user).unwrap();
        assert_eq!(v["response_format"], text::NATIVE_DIRECT_CONTRACT);
        assert_eq!(v["allowed_values"].as_array().unwrap().len(), 8);
        assert_eq!(r.decoding, Decoding::Greedy { max_new_tokens: 32 });
        let local = ArmSpec::new(Arm::Serial).with_contract(Contract::GeneratedCharacter);
        assert_eq!(response_format(&local, 10), text::LOCAL_DIRECT_CONTRACT);
        assert_eq!(decoding(&local), Decoding::Greedy { max_new_tokens: 8 });
        let mut t2 = local;
        t2.template = Some(Template::T2);
        assert_eq!(system_message(&t2), Some(text::T2_CHARACTER));
        assert_eq!(response_format(&t2, 10), text::CHARACTER_RESPONSE_FORMAT);
        assert!(shows_codes(&t2));
        for (v, s) in [
            (PromptVariant::V1, text::NATIVE_V1),
            (PromptVariant::V2, text::NATIVE_V2),
            (PromptVariant::V3, text::NATIVE_V3),
        ] {
            let mut n = ArmSpec::new(Arm::Native);
            n.variant = v;
            assert_eq!(instruction(&n), s);
        }
        // B.3: "with thinking disabled and 64 new tokens"; E.3: "Both allow 32 new tokens".
        let mut whole = ArmSpec::new(Arm::WholeGenerate).with_contract(Contract::GeneratedString);
        assert_eq!(decoding(&whole), Decoding::Greedy { max_new_tokens: 32 });
        whole.max_new_tokens = Some(64);
        assert_eq!(decoding(&whole), Decoding::Greedy { max_new_tokens: 64 });
        let mut tf = ArmSpec::new(Arm::TeacherForced);
        tf.variant = PromptVariant::V3;
        assert_eq!(instruction(&tf), text::SERIAL_V3);
    }

    /// B.5 / D.11: "Opaque, opaque remapped, readable aligned and readable conflicting names
    /// retain the character descriptions. A permutation with no fixed points rebinds names.
    /// Gold follows descriptions."
    #[test]
    fn option_name_conditions_rebind_without_fixed_points() {
        let digits: Vec<String> = ('0'..='9').map(|c| c.to_string()).collect();
        let mut shuffled = digits.clone();
        shuffled.rotate_left(3);
        for id in ["arith-test-3-01", "arith-test-5-11", "lex-test-8-02"] {
            let opaque = option_names(OptionNames::Opaque, id, &c2s_records::DIGITS, &digits);
            let aligned = option_names(
                OptionNames::ReadableAligned,
                id,
                &c2s_records::DIGITS,
                &digits,
            );
            assert_eq!(aligned[5], "digit_5");
            assert_eq!(opaque[9], opaque_option_name("9"));
            for (names, base) in [
                (OptionNames::OpaqueRemapped, &opaque),
                (OptionNames::ReadableConflicting, &aligned),
            ] {
                let remapped = option_names(names, id, &c2s_records::DIGITS, &digits);
                // A permutation of the same names …
                let mut a = remapped.clone();
                let mut b = base.clone();
                a.sort();
                b.sort();
                assert_eq!(a, b);
                // … with no fixed point …
                assert!(remapped.iter().zip(base.iter()).all(|(r, o)| r != o));
                // … bound to criteria, not to display positions.
                let again = option_names(names, id, &c2s_records::DIGITS, &shuffled);
                for (v, n) in shuffled.iter().zip(&again) {
                    let i = digits.iter().position(|d| d == v).unwrap();
                    assert_eq!(*n, remapped[i]);
                }
            }
        }
        let letters = ["a".to_string(), "b".to_string()];
        assert_eq!(
            option_names(
                OptionNames::ReadableConflicting,
                "x",
                &c2s_records::LETTERS,
                &letters
            ),
            ["letter_b", "letter_a"]
        );
    }

    /// A.5: "COPY/REVERSE and digit/letter encodings create four presentations per base, with
    /// shared geometry and matched order. The main bijection maps digits 0 through 9 to letters
    /// a through j. A second mapping to etaoinshrd uses twelve fixed bases." The rebinding of a
    /// base's criteria commutes with the mappings: under either letter encoding, the name
    /// rebound to the image of digit d is the image of the digit presentation's.
    #[test]
    fn rebinding_of_a_base_is_the_image_under_either_letter_encoding() {
        use c2s_records::{Domain, DIGITS};
        let image = |domain: Domain, v: &str| {
            let d = v.parse::<usize>().unwrap();
            domain.alphabet()[d].to_string()
        };
        let digits: Vec<String> = DIGITS.iter().map(|c| c.to_string()).collect();
        for unit in ["cr-L3-01", "cr-L5-07", "cr-L8-19"] {
            let rebound = option_names(OptionNames::ReadableConflicting, unit, &DIGITS, &digits);
            for domain in [Domain::SymbolicLetters, Domain::SymbolicEtaoin] {
                // Displayed in a seeded order; names follow criteria, not positions.
                let mut values: Vec<String> = digits.iter().map(|v| image(domain, v)).collect();
                values.rotate_left(4);
                let names = option_names(
                    OptionNames::ReadableConflicting,
                    unit,
                    domain.alphabet(),
                    &values,
                );
                for (v, name) in values.iter().zip(&names) {
                    let d = domain.alphabet().iter().position(|c| c.to_string() == *v);
                    let digit_name = &rebound[d.unwrap()];
                    let digit = digit_name.strip_prefix("digit_").unwrap();
                    assert_eq!(
                        *name,
                        format!("letter_{}", image(domain, digit)),
                        "{unit} {v}"
                    );
                    assert_ne!(*name, format!("letter_{v}"), "no fixed point");
                }
            }
        }
    }
}
