//! The two [`LocalController`] shapes that are not one request per step: D.11's generated
//! Batch (every position answered by one JSON object) and the readout grid (one preselected
//! position, [`query_position`]).

use c2s_records::{
    Answer, Item, Request, Response, ResponseClass, StepRecord, Trajectory, INVALID_MARKER,
};

use crate::prompts::shows_codes;

use super::LocalController;

impl LocalController {
    /// A generated Batch answer: one JSON object mapping every position ("1".."L") to a
    /// listed value (or, with codes shown, a listed code). Strict: text that is not one JSON
    /// object, a missing or extra key, or a truncated answer fails every position; a field
    /// whose value is not listed fails that position. Nothing is trimmed or repaired beyond
    /// JSON's own whitespace. The one call is recorded on position 1.
    pub(super) fn take_batch_answer(
        &mut self,
        request: &Request,
        response: &Response,
        support: &[String],
    ) {
        let length = self.item.length;
        let mut fields: Vec<(Option<String>, ResponseClass)> = Vec::with_capacity(length);
        let whole_failure = |class| vec![(None, class); length];
        let codes_shown = shows_codes(&self.spec);
        match &response.answer {
            Answer::Generated {
                truncated: true, ..
            } => fields = whole_failure(ResponseClass::Truncated),
            Answer::Generated { text, .. } if text.trim().is_empty() => {
                fields = whole_failure(ResponseClass::Empty)
            }
            Answer::Generated { text, .. } => {
                match serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text) {
                    Ok(map)
                        if map.len() == length
                            && (1..=length).all(|p| map.contains_key(&p.to_string())) =>
                    {
                        for p in 1..=length {
                            let raw = map[&p.to_string()].as_str();
                            let value = raw.and_then(|v| {
                                request
                                    .options
                                    .iter()
                                    .find(|o| {
                                        if codes_shown {
                                            o.code == v
                                        } else {
                                            o.value == v
                                        }
                                    })
                                    .map(|o| o.value.clone())
                            });
                            let class = match &value {
                                Some(v) if *v == self.required(p).to_string() => {
                                    ResponseClass::StrictCorrect
                                }
                                Some(_) => ResponseClass::FormatValidWrong,
                                None => ResponseClass::OtherInvalid,
                            };
                            fields.push((value, class));
                        }
                    }
                    _ => fields = whole_failure(ResponseClass::OtherInvalid),
                }
            }
            Answer::Scored { .. } => fields = whole_failure(ResponseClass::OtherInvalid),
        }
        for (i, (value, class)) in fields.into_iter().enumerate() {
            let p = i + 1;
            let first = p == 1;
            self.steps.insert(
                p as u32,
                StepRecord {
                    position: p as u32,
                    support: support.to_vec(),
                    filled: false,
                    aborted: false,
                    request_id: first.then(|| request.request_id.clone()),
                    emitted: value.unwrap_or_else(|| INVALID_MARKER.to_string()),
                    required: self.required(p).to_string(),
                    class: Some(class),
                    probabilities: None,
                    chosen_probability: None,
                    top_probability: None,
                    prompt_tokens: if first { response.prompt_tokens } else { 0 },
                    completion_tokens: if first { response.completion_tokens } else { 0 },
                    latency_ms: if first { response.latency_ms } else { 0.0 },
                    matched_prompt_tokens: None,
                },
            );
        }
    }

    /// A readout trajectory: its output is the one character emitted at `position`; `correct`
    /// compares it with the target's character there and `fidelity` with the supplied
    /// copy_target's; `position_correct` holds that one comparison. Membership is computed on
    /// that one-character output like any other (so it is `malformed`, wrong length: the
    /// readout constructs no string).
    pub(super) fn score_readout(&self, t: &mut Trajectory, position: usize) {
        let emitted = t.output.clone();
        let at = |chars: &[char]| chars[position - 1].to_string();
        t.correct = t.valid && emitted == at(&self.gold);
        t.fidelity = self.plan.as_ref().map(|p| t.valid && emitted == at(p));
        t.position_correct = vec![t.correct];
    }
}

/// The one preselected position of an item in the readout grid (1-based), by a seeded rule
/// that sees no outcome: uniform over 1..=L from a generator keyed by the option seed and the
/// item's binding unit (the item id; a symbolic item's base), so every readout arm of a run
/// (templates T0–T2, orders O0–O2, evidence, code and character contracts) asks the same
/// position of the same item, and the two encodings of a symbolic base the same position.
/// B.5: "Sixty parents per domain and twelve symbolic bases each supply a target and one
/// preselected position"; D.13: "three templates and three orders at one preselected
/// position". Recorded as the step `position` of the trajectory and the request, and as
/// `query_position` in the state.
pub fn query_position(item: &Item, option_seed: u64) -> u32 {
    use rand::Rng;
    let unit = crate::options::binding_unit(item);
    let mut rng = crate::options::labelled_rng(option_seed, &["query_position", unit]);
    rng.random_range(1..=item.length as u32)
}
