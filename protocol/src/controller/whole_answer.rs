//! [`WholeAnswerController`]: the single request of Native, NativeControl and WholeGenerate
//! (and of PrefixIntervention's whole-answer readout).

use c2s_records::{
    Answer, ArmSpec, Item, Request, Response, StepRecord, Trajectory, INVALID_MARKER,
};

use crate::options::{candidate_binding, OptionBinding};
use crate::prompts::{render_request, StepState};

use super::assembly::{assemble, parse, step_record};
use super::{ControllerConfig, ControllerError, LexiconRef};

/// Native, NativeControl and WholeGenerate: one request.
#[derive(Debug, Clone)]
pub struct WholeAnswerController {
    item: Item,
    pub(super) spec: ArmSpec,
    binding: OptionBinding,
    request: Option<Request>,
    pub(super) step: Option<StepRecord>,
    output: String,
    lexicon: Option<LexiconRef>,
    /// PrefixIntervention's whole-answer readout: the draft shown as `current_prefix`.
    pub(super) draft: Option<String>,
}

impl WholeAnswerController {
    /// The controller of `spec` for `item`, over the item's candidate binding.
    pub fn new(item: &Item, spec: ArmSpec, cfg: &ControllerConfig) -> Self {
        WholeAnswerController {
            item: item.clone(),
            binding: candidate_binding(item, cfg.option_seed, spec.order),
            spec,
            request: None,
            step: None,
            output: String::new(),
            lexicon: cfg.lexicon,
            draft: None,
        }
    }

    /// The one request (empty once made).
    pub fn start(&mut self) -> Vec<Request> {
        if self.request.is_some() || self.step.is_some() {
            return vec![];
        }
        let step = StepState {
            prefix: self.draft.as_deref(),
            ..StepState::default()
        };
        let r = render_request(
            &self.item,
            &self.spec,
            0,
            &step,
            self.binding.options.clone(),
            None,
        );
        self.request = Some(r.clone());
        vec![r]
    }

    /// Take the response to the one request; nothing follows it.
    pub fn on_response(&mut self, response: &Response) -> Result<Vec<Request>, ControllerError> {
        let request = match &self.request {
            Some(r) if r.request_id == response.request_id && self.step.is_none() => r.clone(),
            _ => return Err(ControllerError::UnknownRequest(response.request_id.clone())),
        };
        let parsed = parse(&request, response, &self.item.target, &self.spec)?;
        // A failed generated answer keeps its stripped text for the membership audit.
        let output = match (&parsed.value, &response.answer) {
            (Some(v), _) => v.clone(),
            (None, Answer::Generated { text, .. }) => text.trim().to_string(),
            (None, Answer::Scored { .. }) => String::new(),
        };
        let emitted = parsed
            .value
            .clone()
            .unwrap_or_else(|| INVALID_MARKER.to_string());
        self.step = Some(step_record(
            0,
            &self.binding.values(),
            &request,
            response,
            emitted,
            self.item.target.clone(),
            &parsed,
        ));
        self.output = output;
        Ok(vec![])
    }

    /// Whether the one request was answered.
    pub fn is_complete(&self) -> bool {
        self.step.is_some()
    }

    /// The trajectory of `model` from its one step.
    pub fn trajectory(&self, model: &str) -> Trajectory {
        assemble(
            &self.item,
            &self.spec,
            model,
            self.output.clone(),
            self.step.iter().cloned().collect(),
            false,
            None,
            None,
            self.lexicon,
        )
    }
}
