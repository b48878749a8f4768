//! Controllers: pure state machines that turn an (item, arm) into requests and, answer by
//! answer, into a trajectory. No model, no I/O: `start` gives the first requests, every
//! `on_response` gives the requests that became possible, `trajectory` the outcome.
//!
//! [`LocalController`] follows Algorithm 1 (Appendix A) line by line for the Full / Union /
//! Trie supports with Call / Fill rules; [`StopController`] runs the 51-option stopping track;
//! [`WholeAnswerController`] makes the single request of Native, NativeControl and
//! WholeGenerate.
//!
//! The parts: `spec` checks an arm spec before anything is built; `assembly` turns answered
//! steps into step records and the trajectory; `whole_answer`, `local` and `stop` hold one
//! controller each, and this module the shared settings, the error and the
//! [`Controller`] that dispatches to them.

mod assembly;
mod local;
mod spec;
mod stop;
mod whole_answer;

use thiserror::Error;

use c2s_records::{Arm, ArmSpec, Item, Request, Response, StepRecord, Trajectory};

use crate::intervention::{draft_prefix, intervention_position};
use crate::outcome::Lexicon;
use crate::padding::TokenCounterRef;
use crate::scoring::ScoringError;

pub use c2s_records::validate_spec;
pub use local::{query_position, LocalController};
pub use spec::full_alphabet;
pub use stop::StopController;
pub use whole_answer::WholeAnswerController;

/// Why a controller could not be built or could not take a response.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ControllerError {
    /// The arm spec, or the plan it needs, cannot make a controller for the item.
    #[error("arm {arm}: {reason}")]
    InvalidSpec {
        /// The arm's label.
        arm: String,
        /// What is wrong with the spec or plan.
        reason: String,
    },
    /// A response whose request id this controller is not waiting for.
    #[error("response to unknown or already answered request {0}")]
    UnknownRequest(String),
    /// A response that does not fit its request's contract.
    #[error("request {request_id}: {source}")]
    Scoring {
        /// The request answered.
        request_id: String,
        /// Why its answer could not be scored.
        source: ScoringError,
    },
    /// D.9's token control could not be built, or its realized match failed verification
    /// ("Every realized match is verified").
    #[error("arm {arm} step {step}: {reason}")]
    TokenMatch {
        /// The arm's label.
        arm: String,
        /// The step (position) whose request failed.
        step: u32,
        /// The numbers of the failed match or verification.
        reason: String,
    },
}

/// WordNet's lemma index for the lexical membership classes (D.17). Loaded once and kept for
/// the whole process, so a reference is all a controller needs (and the config stays `Copy`).
#[derive(Clone, Copy)]
pub struct LexiconRef(pub &'static dyn Lexicon);

impl std::fmt::Debug for LexiconRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LexiconRef")
    }
}

impl PartialEq for LexiconRef {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::addr_eq(self.0, other.0)
    }
}

impl Eq for LexiconRef {}

/// Settings shared by all controllers of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerConfig {
    /// Seed of option display orders and code bindings.
    pub option_seed: u64,
    /// WordNet's index for the lexical membership classes; without it a non-candidate lexical
    /// string is `Outside`.
    pub lexicon: Option<LexiconRef>,
    /// The run's pinned tokenizer, for D.9's token-matched padding (`padded-tokens` arms
    /// cannot run without it).
    pub tokens: Option<TokenCounterRef>,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            option_seed: 20261005,
            lexicon: None,
            tokens: None,
        }
    }
}

/// Any controller.
#[derive(Debug, Clone)]
pub enum Controller {
    /// Native, NativeControl, WholeGenerate and PrefixIntervention's whole-answer readout.
    Whole(WholeAnswerController),
    /// Every arm with one decision per position (Algorithm 1).
    Local(LocalController),
    /// SerialStop's 51-option stopping track.
    Stop(StopController),
}

impl Controller {
    /// Build the controller of `spec` for `item`. `plan` is the `copy_target` of SelfPlanSpell
    /// (the model's own Native choice); GoldCopy copies the target.
    pub fn new(
        item: &Item,
        spec: ArmSpec,
        plan: Option<String>,
        cfg: &ControllerConfig,
    ) -> Result<Controller, ControllerError> {
        validate_spec(&spec).map_err(|e| ControllerError::InvalidSpec {
            arm: spec.label(),
            reason: e.to_string(),
        })?;
        Ok(match spec.arm {
            Arm::Native | Arm::NativeControl | Arm::WholeGenerate => {
                Controller::Whole(WholeAnswerController::new(item, spec, cfg))
            }
            Arm::PrefixIntervention if crate::prompts::asks_whole(&spec) => {
                let position = intervention_position(item, cfg.option_seed);
                let mut c = WholeAnswerController::new(item, spec, cfg);
                c.draft = Some(draft_prefix(item, cfg.option_seed, position, spec.draft));
                Controller::Whole(c)
            }
            Arm::SerialStop => Controller::Stop(StopController::new(item, spec, cfg)),
            _ => Controller::Local(LocalController::new(item, spec, plan, cfg)?),
        })
    }

    /// Record where a supplied copy plan came from (copy arms; no effect elsewhere).
    pub fn set_plan_origin(&mut self, origin: c2s_records::PlanOrigin) {
        if let Controller::Local(c) = self {
            c.set_plan_origin(origin);
        }
    }

    /// The first requests. Fails only where a request cannot be built honestly (D.9's token
    /// control without an exact match).
    pub fn start(&mut self) -> Result<Vec<Request>, ControllerError> {
        match self {
            Controller::Whole(c) => Ok(c.start()),
            Controller::Local(c) => c.start(),
            Controller::Stop(c) => Ok(c.start()),
        }
    }

    /// Take the response to an outstanding request; returns the requests it made possible.
    pub fn on_response(&mut self, response: &Response) -> Result<Vec<Request>, ControllerError> {
        match self {
            Controller::Whole(c) => c.on_response(response),
            Controller::Local(c) => c.on_response(response),
            Controller::Stop(c) => c.on_response(response),
        }
    }

    /// Whether every request was answered and nothing more will be asked.
    pub fn is_complete(&self) -> bool {
        match self {
            Controller::Whole(c) => c.is_complete(),
            Controller::Local(c) => c.is_complete(),
            Controller::Stop(c) => c.is_complete(),
        }
    }

    /// The finished trajectory (None while requests are outstanding).
    pub fn trajectory(&self, model: &str) -> Option<Trajectory> {
        if !self.is_complete() {
            return None;
        }
        Some(match self {
            Controller::Whole(c) => c.trajectory(model),
            Controller::Local(c) => c.trajectory(model),
            Controller::Stop(c) => c.trajectory(model),
        })
    }

    /// The step record written for `request_id`, once its response was taken.
    pub fn step_for(&self, request_id: &str) -> Option<&StepRecord> {
        let id = Some(request_id);
        match self {
            Controller::Whole(c) => c.step.as_ref().filter(|s| s.request_id.as_deref() == id),
            Controller::Local(c) => c.steps.values().find(|s| s.request_id.as_deref() == id),
            Controller::Stop(c) => c.steps.iter().find(|s| s.request_id.as_deref() == id),
        }
    }

    /// The arm spec this controller runs.
    pub fn spec(&self) -> &ArmSpec {
        match self {
            Controller::Whole(c) => &c.spec,
            Controller::Local(c) => &c.spec,
            Controller::Stop(c) => &c.spec,
        }
    }
}
