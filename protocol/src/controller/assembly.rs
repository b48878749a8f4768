//! Trajectory assembly shared by every controller: strict parsing of one response, its step
//! record, and the finished trajectory built from the steps.

use c2s_records::{
    Arm, ArmSpec, Item, LabeledArm, Membership, Request, Response, ResponseClass, StepRecord,
    Trajectory, INVALID_MARKER,
};

use crate::outcome::{confidence, membership, position_correct, recombination, Lexicon};
use crate::prompts::{shows_codes, strips_outer_whitespace};
use crate::scoring::{parse_answer, ParsedAnswer};

use super::{ControllerError, LexiconRef};

pub(super) fn parse(
    request: &Request,
    response: &Response,
    required: &str,
    spec: &ArmSpec,
) -> Result<ParsedAnswer, ControllerError> {
    parse_answer(
        request,
        &response.answer,
        required,
        shows_codes(spec),
        strips_outer_whitespace(spec),
    )
    .map_err(|source| ControllerError::Scoring {
        request_id: request.request_id.clone(),
        source,
    })
}

pub(super) fn step_record(
    position: u32,
    support: &[String],
    request: &Request,
    response: &Response,
    emitted: String,
    required: String,
    parsed: &ParsedAnswer,
) -> StepRecord {
    StepRecord {
        position,
        support: support.to_vec(),
        filled: false,
        aborted: false,
        request_id: Some(request.request_id.clone()),
        emitted,
        required,
        class: Some(parsed.class),
        probabilities: parsed.probabilities.clone(),
        chosen_probability: parsed.chosen_probability,
        top_probability: parsed.top_probability,
        prompt_tokens: response.prompt_tokens,
        completion_tokens: response.completion_tokens,
        latency_ms: response.latency_ms,
        matched_prompt_tokens: None,
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn assemble(
    item: &Item,
    spec: &ArmSpec,
    model: &str,
    output: String,
    steps: Vec<StepRecord>,
    aborted: bool,
    plan: Option<String>,
    stop: Option<c2s_records::StopOutcome>,
    lexicon: Option<LexiconRef>,
) -> Trajectory {
    let lexicon: Option<&dyn Lexicon> = lexicon.map(|l| l.0);
    let valid = !aborted
        && !output.contains(INVALID_MARKER)
        && steps
            .iter()
            .all(|s| s.filled || s.class.is_some_and(ResponseClass::is_valid));
    let correct = match &stop {
        Some(s) => s.exact_completion,
        None => valid && output == item.target,
    };
    let calls = steps.iter().filter(|s| s.is_call()).count() as u32;
    let fills = steps.iter().filter(|s| s.filled).count() as u32;
    Trajectory {
        item_id: item.item_id.clone(),
        domain: item.domain,
        length: item.length,
        model: model.to_string(),
        arm: LabeledArm::new(*spec),
        support: (!spec.arm.is_whole_answer()).then_some(spec.support),
        // SerialStop's output is its content track (the characters before END).
        membership: if aborted && spec.arm != Arm::SerialStop {
            Membership::Malformed
        } else {
            membership(item, &output, lexicon)
        },
        recombination: recombination(item, &output),
        fidelity: plan.as_ref().map(|p| valid && &output == p),
        plan_differences: plan.as_ref().map(|p| {
            p.chars()
                .zip(item.target.chars())
                .filter(|(a, b)| a != b)
                .count() as u32
        }),
        plan_origin: None,
        plan,
        base_id: item
            .symbolic
            .as_ref()
            .map(|m| m.base_id.clone())
            .or_else(|| item.semantic.as_ref().map(|m| m.fact_id.clone())),
        operation: item.symbolic.as_ref().map(|m| m.operation),
        placement: item.symbolic.as_ref().map(|m| m.placement),
        repeated: item.symbolic.as_ref().map(|m| m.repeated),
        pattern: item.semantic.as_ref().map(|m| m.pattern.clone()),
        stop,
        aborted,
        calls,
        fills,
        prompt_tokens: steps.iter().map(|s| u64::from(s.prompt_tokens)).sum(),
        completion_tokens: steps.iter().map(|s| u64::from(s.completion_tokens)).sum(),
        latency_ms: steps.iter().map(|s| s.latency_ms).sum(),
        confidence: confidence(&steps),
        position_correct: if spec.arm.is_whole_answer() {
            vec![]
        } else {
            position_correct(&item.target, &output)
        },
        correct,
        valid,
        output,
        steps,
    }
}
