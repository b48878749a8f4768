//! [`StopController`]: SerialStop's 51-option stopping track, where the model ends the
//! string itself by choosing END.

use c2s_records::{ArmSpec, Item, Request, Response, StepRecord, Trajectory, END, INVALID_MARKER};

use crate::options::{stop_binding, OptionBinding};
use crate::outcome::stop_outcome;
use crate::prompts::{render_request, StepState};

use super::assembly::{assemble, parse, step_record};
use super::{ControllerConfig, ControllerError, LexiconRef};

/// SerialStop: the 51-option alphabet with END, at most L+3 requests (paper A.4).
#[derive(Debug, Clone)]
pub struct StopController {
    item: Item,
    pub(super) spec: ArmSpec,
    binding: OptionBinding,
    gold: Vec<char>,
    content: Vec<char>,
    pub(super) steps: Vec<StepRecord>,
    outstanding: Option<(Vec<String>, Request)>,
    ended: bool,
    started: bool,
    lexicon: Option<LexiconRef>,
}

impl StopController {
    /// The controller of `spec` for `item`, over the item's stop binding.
    pub fn new(item: &Item, spec: ArmSpec, cfg: &ControllerConfig) -> Self {
        StopController {
            item: item.clone(),
            binding: stop_binding(item, cfg.option_seed, spec.order),
            gold: item.target_chars(),
            spec,
            content: Vec::new(),
            steps: Vec::new(),
            outstanding: None,
            ended: false,
            started: false,
            lexicon: cfg.lexicon,
        }
    }

    /// The step cap: L + 3 requests.
    pub fn cap(&self) -> u32 {
        self.item.length as u32 + 3
    }

    fn next_request(&mut self) -> Vec<Request> {
        if self.ended || self.steps.len() as u32 >= self.cap() {
            return vec![];
        }
        let t = self.steps.len() + 1;
        let prefix: String = self.content.iter().collect();
        let support = self.binding.values();
        let request = render_request(
            &self.item,
            &self.spec,
            t as u32,
            &StepState {
                position: Some(t as u32),
                prefix: Some(&prefix),
                copy_target: None,
                padding: None,
            },
            self.binding.options.clone(),
            None,
        );
        self.outstanding = Some((support, request.clone()));
        vec![request]
    }

    fn required(&self, t: usize) -> String {
        self.gold
            .get(t - 1)
            .map(|c| c.to_string())
            .unwrap_or_else(|| END.to_string())
    }

    /// The first request (empty once started).
    pub fn start(&mut self) -> Vec<Request> {
        if self.started {
            return vec![];
        }
        self.started = true;
        self.next_request()
    }

    /// Take the response to the outstanding request; returns the next request, none after
    /// END or at the step cap.
    pub fn on_response(&mut self, response: &Response) -> Result<Vec<Request>, ControllerError> {
        let (support, request) = match self.outstanding.take() {
            Some((s, r)) if r.request_id == response.request_id => (s, r),
            other => {
                self.outstanding = other;
                return Err(ControllerError::UnknownRequest(response.request_id.clone()));
            }
        };
        let t = self.steps.len() + 1;
        let required = self.required(t);
        let parsed = parse(&request, response, &required, &self.spec)?;
        let z = match &parsed.value {
            Some(v) if support.contains(v) => v.clone(),
            _ => INVALID_MARKER.to_string(),
        };
        if z == END {
            self.ended = true;
        } else {
            self.content.extend(z.chars());
        }
        self.steps.push(step_record(
            t as u32, &support, &request, response, z, required, &parsed,
        ));
        Ok(self.next_request())
    }

    /// Whether started and no request is outstanding (END chosen or the cap reached).
    pub fn is_complete(&self) -> bool {
        self.started && self.outstanding.is_none()
    }

    /// The trajectory of `model`, with its stopping outcome.
    pub fn trajectory(&self, model: &str) -> Trajectory {
        let content: String = self.content.iter().collect();
        let stop = stop_outcome(
            &self.item.target,
            &content,
            self.ended,
            self.steps.len() as u32,
            self.cap(),
        );
        assemble(
            &self.item,
            &self.spec,
            model,
            content,
            self.steps.clone(),
            false,
            None,
            Some(stop),
            self.lexicon,
        )
    }
}
