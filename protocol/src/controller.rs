//! Controllers: pure state machines that turn an (item, arm) into requests and, answer by
//! answer, into a trajectory. No model, no I/O: `start` gives the first requests, every
//! `on_response` gives the requests that became possible, `trajectory` the outcome.
//!
//! [`LocalController`] follows Algorithm 1 (Appendix A) line by line for the Full / Union /
//! Trie supports with Call / Fill rules; [`StopController`] runs the 51-option stopping track;
//! [`WholeAnswerController`] makes the single request of Native, NativeControl and
//! WholeGenerate.

use std::collections::BTreeMap;

use thiserror::Error;

use c2s_records::{
    position_union, Answer, Arm, ArmSpec, Contract, CopyControl, Evidence, FillRule, Item,
    Membership, Request, RequestOption, Response, ResponseClass, StepRecord, SupportSet,
    Trajectory, END, INVALID_MARKER,
};

use crate::intervention::{draft_prefix, intervention_position};
use crate::options::{candidate_binding, local_binding_over, stop_binding, OptionBinding};
use crate::outcome::{
    confidence, membership, position_correct, recombination, stop_outcome, Lexicon,
};
use crate::padding::{token_matched_request, TokenCounterRef};
use crate::prompts::{
    batch_answer_prefix, is_batch, is_readout, render_request, shows_codes,
    strips_outer_whitespace, StepState,
};
use crate::scoring::{parse_answer, ParsedAnswer, ScoringError};

/// Why a controller could not be built or could not take a response.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ControllerError {
    #[error("arm {arm}: {reason}")]
    InvalidSpec { arm: String, reason: String },
    #[error("response to unknown or already answered request {0}")]
    UnknownRequest(String),
    #[error("request {request_id}: {source}")]
    Scoring {
        request_id: String,
        source: ScoringError,
    },
    /// D.9's token control could not be built, or its realized match failed verification
    /// ("Every realized match is verified").
    #[error("arm {arm} step {step}: {reason}")]
    TokenMatch {
        arm: String,
        step: u32,
        reason: String,
    },
}

/// Check that `spec` is a protocol arm this crate can run.
pub fn validate_spec(spec: &ArmSpec) -> Result<(), String> {
    let arm = spec.arm;
    if spec.support.set == SupportSet::Trie && !arm.has_prefix() {
        return Err(format!("Trie support needs a prefix, but {arm} has none"));
    }
    if arm.is_copy()
        && spec.copy_control == CopyControl::Independent
        && spec.support.set == SupportSet::Trie
    {
        return Err("Trie support needs a prefix; independent copy control has none".into());
    }
    if arm.withholds_candidates() && spec.support.set != SupportSet::Full {
        return Err(format!(
            "{arm} withholds the candidates, so only Full support is defined"
        ));
    }
    if arm == Arm::SerialStop {
        if spec.support != c2s_records::Support::FULL {
            return Err("SerialStop uses the full 51-option alphabet (support Full)".into());
        }
        if !matches!(
            spec.contract,
            Contract::ScoredCode | Contract::GeneratedCode
        ) {
            return Err(
                "SerialStop needs a code contract: space, newline and tab cannot survive outer-whitespace removal"
                    .into(),
            );
        }
    }
    if arm == Arm::PrefixContinue
        && !matches!(
            spec.contract,
            Contract::GeneratedString | Contract::GeneratedCharacter
        )
    {
        return Err("PrefixContinue consumes generated text; use a generated contract".into());
    }
    if arm == Arm::WholeGenerate && spec.contract != Contract::GeneratedString {
        return Err(
            "WholeGenerate emits the complete answer; use the generated string contract".into(),
        );
    }
    if matches!(arm, Arm::Native | Arm::NativeControl)
        && spec.contract == Contract::GeneratedCharacter
    {
        return Err("Native selects a complete string; use a code or string contract".into());
    }
    if arm.is_local()
        && !matches!(arm, Arm::PrefixContinue)
        && !crate::prompts::asks_whole(spec)
        && spec.contract == Contract::GeneratedString
    {
        return Err("local steps answer one character; use a character or code contract".into());
    }
    if arm == Arm::IncorrectCopy && spec.support.fill == c2s_records::FillRule::Fill {
        return Err(
            "IncorrectCopy copies its supplied plan at every position: a Fill rule would supply the candidates' character instead"
                .into(),
        );
    }
    if arm == Arm::IncorrectCopy && spec.template.is_some() {
        return Err(
            "the readout grid (T0-T2) reads gold targets; IncorrectCopy has no readout".into(),
        );
    }
    if spec.template.is_some() && !arm.is_copy() {
        return Err(
            "readout templates T0-T2 apply to the copy arms (GoldCopy, IncorrectCopy, SelfPlanSpell)"
                .into(),
        );
    }
    if is_readout(spec)
        && matches!(
            spec.evidence,
            c2s_records::Evidence::Padded | c2s_records::Evidence::PaddedTokens
        )
    {
        return Err(
            "a readout template (T0-T2) takes raw, indexed or direct evidence (B.5); padded evidence is D.9's length control of the Copy arms"
                .into(),
        );
    }
    if spec.names != c2s_records::OptionNames::Opaque && !is_readout(spec) {
        return Err(
            "option names (B.5's binding conditions) apply to the readout grid: set a template T0-T2"
                .into(),
        );
    }
    if spec.max_new_tokens.is_some() && spec.contract == Contract::ScoredCode {
        return Err(
            "max_new_tokens applies to generated contracts; a scored code generates nothing".into(),
        );
    }
    if spec.max_new_tokens == Some(0) {
        return Err("max_new_tokens must be at least 1".into());
    }
    // E.5: the readout criteria are the whole local alphabet ("Each criterion description
    // specifies an output character"; E.6 lists all ten digits), asked at one position.
    if is_readout(spec) && spec.support != c2s_records::Support::FULL {
        return Err("the readout grid (T0-T2) shows every character: use support Full".into());
    }
    if spec.alphabet == c2s_records::LocalAlphabet::Lowercase
        && (!arm.is_local() || spec.support.set != SupportSet::Full)
    {
        return Err(
            "alphabet = \"lowercase\" widens Full support (D.7's a-z factor): use a local arm with support Full or FullFill"
                .into(),
        );
    }
    if !spec.also_query.is_empty() && spec.support.fill != c2s_records::FillRule::Fill {
        return Err(
            "also_query names positions a Fill rule would fill (D.7's six-query controllers); a Call support already queries every position"
                .into(),
        );
    }
    if arm != Arm::PrefixIntervention
        && (spec.draft != c2s_records::Draft::Correct
            || spec.readout != c2s_records::InterventionReadout::Character)
    {
        return Err("draft and readout are PrefixIntervention's settings (A.4)".into());
    }
    if arm == Arm::PrefixIntervention {
        if spec.support != c2s_records::Support::FULL {
            return Err(
                "PrefixIntervention asks one preselected position with every character: use support Full"
                    .into(),
            );
        }
        if crate::prompts::asks_whole(spec) && spec.contract == Contract::GeneratedCharacter {
            return Err(
                "the whole-answer readout selects a complete string; use a code or string contract"
                    .into(),
            );
        }
    }
    if arm.is_copy() && spec.copy_control == CopyControl::Batch {
        if spec.template.is_some() {
            return Err("the readout grid asks one position; Batch bundles every position".into());
        }
        if spec.support != c2s_records::Support::FULL {
            return Err(
                "Batch asks every position with the same options (D.11: \"the same supplied target, absolute-position question and option order\"): use support Full"
                    .into(),
            );
        }
    }
    if matches!(spec.evidence, Evidence::Padded | Evidence::PaddedTokens)
        && (!arm.is_copy() || spec.template.is_some())
    {
        return Err(
            "padded evidence is D.9's length control for copy arms (GoldCopy, IncorrectCopy, SelfPlanSpell) without a readout template"
                .into(),
        );
    }
    if spec.alphabet == c2s_records::LocalAlphabet::Lowercase && arm == Arm::SerialStop {
        return Err("SerialStop has its own 51-option alphabet".into());
    }
    Ok(())
}

/// The Full-support alphabet of `spec` on `item`: the domain's, or the 26 lowercase letters
/// (D.7's a–z arms).
pub fn full_alphabet(item: &Item, spec: &ArmSpec) -> &'static [char] {
    match spec.alphabet {
        c2s_records::LocalAlphabet::Domain => item.domain.alphabet(),
        c2s_records::LocalAlphabet::Lowercase => &c2s_records::LETTERS,
    }
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
    Whole(WholeAnswerController),
    Local(LocalController),
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
        validate_spec(&spec).map_err(|reason| ControllerError::InvalidSpec {
            arm: spec.label(),
            reason,
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
    pub fn set_plan_origin(&mut self, origin: &str) {
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

    pub fn on_response(&mut self, response: &Response) -> Result<Vec<Request>, ControllerError> {
        match self {
            Controller::Whole(c) => c.on_response(response),
            Controller::Local(c) => c.on_response(response),
            Controller::Stop(c) => c.on_response(response),
        }
    }

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

    pub fn spec(&self) -> &ArmSpec {
        match self {
            Controller::Whole(c) => &c.spec,
            Controller::Local(c) => &c.spec,
            Controller::Stop(c) => &c.spec,
        }
    }
}

fn parse(
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

fn step_record(
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
fn assemble(
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
        arm: spec.label(),
        support: if spec.arm.is_whole_answer() {
            "-".into()
        } else {
            spec.support.name().into()
        },
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
        operation: item
            .symbolic
            .as_ref()
            .map(|m| m.operation.as_str().to_string()),
        placement: item
            .symbolic
            .as_ref()
            .map(|m| m.placement.as_str().to_string()),
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

/// Native, NativeControl and WholeGenerate: one request.
#[derive(Debug, Clone)]
pub struct WholeAnswerController {
    item: Item,
    spec: ArmSpec,
    binding: OptionBinding,
    request: Option<Request>,
    step: Option<StepRecord>,
    output: String,
    lexicon: Option<LexiconRef>,
    /// PrefixIntervention's whole-answer readout: the draft shown as `current_prefix`.
    draft: Option<String>,
}

impl WholeAnswerController {
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

    pub fn is_complete(&self) -> bool {
        self.step.is_some()
    }

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

/// Independent, Serial, TeacherForced, GoldCopy, SelfPlanSpell and PrefixContinue: one
/// decision per position under a Full / Union / Trie support with a Call / Fill rule.
#[derive(Debug, Clone)]
pub struct LocalController {
    item: Item,
    spec: ArmSpec,
    binding: OptionBinding,
    gold: Vec<char>,
    candidates: Vec<Vec<char>>,
    /// `copy_target` of copy arms.
    plan: Option<Vec<char>>,
    /// Where the plan came from (recorded in the trajectory).
    plan_origin: Option<String>,
    /// Steps depend on earlier answers (the model's own prefix).
    sequential: bool,
    /// The one preselected position of a readout arm ([`query_position`]) or of the prefix
    /// intervention ([`intervention_position`]); `None`: every position is decided.
    readout_position: Option<usize>,
    /// PrefixIntervention: the supplied draft shown as the prefix (A.4).
    draft: Option<Vec<char>>,
    /// D.11's Batch: every position in one bundled request (scored: fields decided in order
    /// in one answer; generated: one strict JSON object).
    batch: bool,
    /// Scored Batch: the codes chosen for the fields so far (the answer's JSON prefix).
    batch_codes: Vec<String>,
    /// ŷ: the constructed prefix (sequential arms).
    prefix: Vec<char>,
    /// Next position to decide (1-based), sequential arms.
    next_position: usize,
    steps: BTreeMap<u32, StepRecord>,
    outstanding: BTreeMap<String, (u32, Vec<String>, Request)>,
    /// D.9's token control: the Indexed token count each outstanding request matched.
    token_targets: BTreeMap<String, u32>,
    aborted: bool,
    started: bool,
    lexicon: Option<LexiconRef>,
    tokens: Option<TokenCounterRef>,
}

impl LocalController {
    pub fn new(
        item: &Item,
        spec: ArmSpec,
        plan: Option<String>,
        cfg: &ControllerConfig,
    ) -> Result<Self, ControllerError> {
        let plan = match spec.arm {
            Arm::GoldCopy => Some(item.target.clone()),
            Arm::SelfPlanSpell => Some(plan.ok_or_else(|| ControllerError::InvalidSpec {
                arm: spec.label(),
                reason: "SelfPlanSpell needs the model's Native choice as its plan".into(),
            })?),
            Arm::IncorrectCopy => {
                let p = plan.ok_or_else(|| ControllerError::InvalidSpec {
                    arm: spec.label(),
                    reason: format!(
                        "IncorrectCopy needs a supplied incorrect target for item {} ([copy_plans] has none)",
                        item.item_id
                    ),
                })?;
                // D.12 copies "supplied incorrect targets": a plan equal to gold is a GoldCopy.
                if p == item.target {
                    return Err(ControllerError::InvalidSpec {
                        arm: spec.label(),
                        reason: format!(
                            "the supplied plan `{p}` of item {} equals its gold target; IncorrectCopy needs an incorrect one",
                            item.item_id
                        ),
                    });
                }
                Some(p)
            }
            _ => None,
        };
        if let Some(p) = &plan {
            if p.chars().count() != item.length {
                return Err(ControllerError::InvalidSpec {
                    arm: spec.label(),
                    reason: format!("plan `{p}` does not have the item length {}", item.length),
                });
            }
            // Under Full support every step offers the domain alphabet: a plan character
            // outside it could never be copied.
            let alphabet = full_alphabet(item, &spec);
            if let Some(c) = p.chars().find(|c| !alphabet.contains(c)) {
                return Err(ControllerError::InvalidSpec {
                    arm: spec.label(),
                    reason: format!(
                        "plan `{p}` has `{c}`, outside the {} alphabet",
                        item.domain.as_str()
                    ),
                });
            }
        }
        let plan_origin = match spec.arm {
            Arm::GoldCopy => Some("gold".to_string()),
            Arm::SelfPlanSpell => Some("self".to_string()),
            Arm::IncorrectCopy => Some("supplied".to_string()),
            _ => None,
        };
        let intervention = (spec.arm == Arm::PrefixIntervention)
            .then(|| intervention_position(item, cfg.option_seed));
        let readout_position = match intervention {
            Some(p) => Some(p as usize),
            None => is_readout(&spec).then(|| query_position(item, cfg.option_seed) as usize),
        };
        let draft = intervention.map(|p| {
            draft_prefix(item, cfg.option_seed, p, spec.draft)
                .chars()
                .collect()
        });
        let sequential = match spec.arm {
            // The readout asks one position with no draft (E.5 state: copy_target,
            // query_position, indexing, indexed_characters).
            _ if readout_position.is_some() => false,
            Arm::Serial | Arm::PrefixContinue => true,
            Arm::GoldCopy | Arm::IncorrectCopy | Arm::SelfPlanSpell => match spec.copy_control {
                CopyControl::Serial => true,
                CopyControl::Independent => false,
                // A scored Batch decides its fields one after another inside one answer.
                CopyControl::Batch => spec.contract == Contract::ScoredCode,
            },
            _ => false,
        };
        Ok(LocalController {
            gold: item.target_chars(),
            candidates: item.candidate_chars(),
            binding: local_binding_over(
                item,
                full_alphabet(item, &spec),
                cfg.option_seed,
                spec.order,
            ),
            item: item.clone(),
            plan: plan.map(|p| p.chars().collect()),
            plan_origin,
            spec,
            sequential,
            readout_position,
            draft,
            batch: is_batch(&spec),
            batch_codes: Vec::new(),
            prefix: Vec::new(),
            next_position: 1,
            steps: BTreeMap::new(),
            outstanding: BTreeMap::new(),
            token_targets: BTreeMap::new(),
            aborted: false,
            started: false,
            lexicon: cfg.lexicon,
            tokens: cfg.tokens.clone(),
        })
    }

    /// Value the step at `t` should produce: the plan's character for copy arms, else gold.
    fn required(&self, t: usize) -> char {
        match &self.plan {
            Some(p) => p[t - 1],
            None => self.gold[t - 1],
        }
    }

    /// The prefix the support and the state see at position `t`: the model's own (sequential),
    /// the gold prefix (TeacherForced), none otherwise.
    fn visible_prefix(&self, t: usize) -> Option<Vec<char>> {
        if let Some(d) = &self.draft {
            return Some(d.clone());
        }
        if self.batch {
            // The bundle shows no draft: earlier fields are in the answer, not the state.
            return None;
        }
        if self.sequential {
            Some(self.prefix.clone())
        } else if self.spec.arm == Arm::TeacherForced {
            Some(self.gold[..t - 1].to_vec())
        } else {
            None
        }
    }

    /// Algorithm 1, lines 4–9: V ← Σ; Union: {a_t : a ∈ A}; Trie: {a_t : a ∈ A, a_<t = ŷ}.
    /// Returned in the displayed order of the item's binding.
    pub fn support(&self, t: usize, prefix: Option<&[char]>) -> Vec<String> {
        let chars: Vec<char> = match self.spec.support.set {
            SupportSet::Full => full_alphabet(&self.item, &self.spec).to_vec(),
            SupportSet::Union => position_union(&self.candidates, t - 1),
            SupportSet::Trie => {
                let p = prefix.unwrap_or(&[]);
                let mut v = Vec::new();
                for a in &self.candidates {
                    if a[..t - 1] == *p && !v.contains(&a[t - 1]) {
                        v.push(a[t - 1]);
                    }
                }
                v
            }
        };
        let as_strings: Vec<String> = chars.iter().map(|c| c.to_string()).collect();
        self.binding
            .filter(&as_strings)
            .into_iter()
            .map(|o| o.value)
            .collect()
    }

    /// Algorithm 1, line 13: the singleton to fill, if the Fill rule applies. FullFill fills
    /// singletons of the position union and keeps the full alphabet elsewhere.
    ///
    /// Positions in `also_query` are queried all the same (D.7: "six-query controllers also
    /// query positions 1,4,8,12. Other positions are filled only from singleton candidate
    /// unions").
    fn fill_value(&self, t: usize, support: &[String]) -> Option<String> {
        if self.spec.support.fill != FillRule::Fill || self.spec.also_query.contains(t) {
            return None;
        }
        match self.spec.support.set {
            SupportSet::Full => {
                let u = position_union(&self.candidates, t - 1);
                (u.len() == 1).then(|| u[0].to_string())
            }
            SupportSet::Union | SupportSet::Trie => {
                (support.len() == 1).then(|| support[0].clone())
            }
        }
    }

    /// The request of position `t` (0: a generated Batch's one request). D.9's token control
    /// searches its padding with the run's tokenizer and remembers the count it matched.
    fn request_for(
        &mut self,
        t: usize,
        support: &[String],
        prefix: Option<&[char]>,
    ) -> Result<Request, ControllerError> {
        let options: Vec<RequestOption> = self.binding.filter(support);
        let prefix_text: Option<String> = prefix.map(|p| p.iter().collect());
        let plan_text: Option<String> = self.plan.as_ref().map(|p| p.iter().collect());
        let continue_arm = self.spec.arm == Arm::PrefixContinue;
        let step = if self.batch {
            StepState {
                position: None,
                prefix: None,
                copy_target: plan_text.as_deref(),
                padding: None,
            }
        } else {
            StepState {
                position: (!continue_arm).then_some(t as u32),
                prefix: if continue_arm {
                    None
                } else {
                    prefix_text.as_deref()
                },
                copy_target: plan_text.as_deref(),
                padding: None,
            }
        };
        let assistant_prefix = if self.batch {
            (self.spec.contract == Contract::ScoredCode)
                .then(|| batch_answer_prefix(&self.batch_codes, t as u32))
        } else if continue_arm {
            prefix_text.clone()
        } else {
            None
        };
        let render = |spec: &ArmSpec, padding: Option<&str>| {
            let step = StepState {
                padding,
                ..step.clone()
            };
            render_request(
                &self.item,
                spec,
                t as u32,
                &step,
                options.clone(),
                assistant_prefix.clone(),
            )
        };
        if self.spec.evidence != Evidence::PaddedTokens {
            return Ok(render(&self.spec, None));
        }
        let token_error = |reason: String| ControllerError::TokenMatch {
            arm: self.spec.label(),
            step: t as u32,
            reason,
        };
        let counter = self
            .tokens
            .as_ref()
            .ok_or_else(|| token_error("padded-tokens needs the run's tokenizer".into()))?;
        let matched = token_matched_request(counter.0.as_ref(), |evidence, padding| {
            let mut spec = self.spec;
            spec.evidence = evidence;
            render(&spec, Some(padding))
        })
        .map_err(token_error)?;
        self.token_targets
            .insert(matched.request.request_id.clone(), matched.target);
        Ok(matched.request)
    }

    fn fill_step(&self, t: usize, support: &[String], value: String) -> StepRecord {
        StepRecord {
            position: t as u32,
            support: support.to_vec(),
            filled: true,
            aborted: false,
            request_id: None,
            required: self.required(t).to_string(),
            emitted: value,
            class: None,
            probabilities: None,
            chosen_probability: None,
            top_probability: None,
            prompt_tokens: 0,
            completion_tokens: 0,
            latency_ms: 0.0,
            matched_prompt_tokens: None,
        }
    }

    /// Algorithm 1, lines 10–12: an empty support ends the trajectory as INVALID; the remaining
    /// positions are logged with zero calls.
    fn abort_from(&mut self, t: usize) {
        self.aborted = true;
        for pos in t..=self.item.length {
            self.steps.insert(
                pos as u32,
                StepRecord {
                    position: pos as u32,
                    support: vec![],
                    filled: false,
                    aborted: true,
                    request_id: None,
                    emitted: INVALID_MARKER.to_string(),
                    required: self.required(pos).to_string(),
                    class: None,
                    probabilities: None,
                    chosen_probability: None,
                    top_probability: None,
                    prompt_tokens: 0,
                    completion_tokens: 0,
                    latency_ms: 0.0,
                    matched_prompt_tokens: None,
                },
            );
        }
        self.next_position = self.item.length + 1;
    }

    /// Sequential arms: decide positions until one needs the model (or the string is done).
    fn advance(&mut self) -> Result<Vec<Request>, ControllerError> {
        while self.next_position <= self.item.length {
            let t = self.next_position;
            let prefix = self.visible_prefix(t);
            let support = self.support(t, prefix.as_deref());
            if support.is_empty() {
                self.abort_from(t);
                return Ok(vec![]);
            }
            if let Some(z) = self.fill_value(t, &support) {
                let step = self.fill_step(t, &support, z.clone());
                self.steps.insert(t as u32, step);
                self.prefix.extend(z.chars());
                self.next_position += 1;
                continue;
            }
            let request = self.request_for(t, &support, prefix.as_deref())?;
            self.outstanding.insert(
                request.request_id.clone(),
                (t as u32, support, request.clone()),
            );
            return Ok(vec![request]);
        }
        Ok(vec![])
    }

    pub fn start(&mut self) -> Result<Vec<Request>, ControllerError> {
        if self.started {
            return Ok(vec![]);
        }
        self.started = true;
        if self.sequential {
            return self.advance();
        }
        if self.batch {
            // Generated Batch: one request for every position (step 0), answered by one JSON
            // object.
            let support = self.support(1, None);
            let request = self.request_for(0, &support, None)?;
            self.outstanding
                .insert(request.request_id.clone(), (0, support, request.clone()));
            return Ok(vec![request]);
        }
        let mut requests = Vec::new();
        for t in self.positions() {
            let prefix = self.visible_prefix(t);
            let support = self.support(t, prefix.as_deref());
            if support.is_empty() {
                // Cannot happen without a prefix or with the gold prefix, but stay total.
                self.abort_from(t);
                requests.clear();
                self.outstanding.clear();
                return Ok(requests);
            }
            if let Some(z) = self.fill_value(t, &support) {
                let step = self.fill_step(t, &support, z);
                self.steps.insert(t as u32, step);
                continue;
            }
            let request = self.request_for(t, &support, prefix.as_deref())?;
            self.outstanding.insert(
                request.request_id.clone(),
                (t as u32, support, request.clone()),
            );
            requests.push(request);
        }
        Ok(requests)
    }

    pub fn on_response(&mut self, response: &Response) -> Result<Vec<Request>, ControllerError> {
        let Some((t, support, request)) = self.outstanding.remove(&response.request_id) else {
            return Err(ControllerError::UnknownRequest(response.request_id.clone()));
        };
        // D.9: "Every realized match is verified": the engine's own count of the prompt it
        // was sent must equal the Indexed count the padding was searched for.
        let matched = self.token_targets.remove(&response.request_id);
        if let Some(target) = matched {
            if response.prompt_tokens != target {
                return Err(ControllerError::TokenMatch {
                    arm: self.spec.label(),
                    step: t,
                    reason: format!(
                        "the engine counted {} prompt tokens for request {}, but the padding matched the Indexed request's {target}",
                        response.prompt_tokens, response.request_id
                    ),
                });
            }
        }
        if self.batch && t == 0 {
            self.take_batch_answer(&request, response, &support);
            if let Some(first) = self.steps.get_mut(&1) {
                first.matched_prompt_tokens = matched;
            }
            return Ok(vec![]);
        }
        let required = self.required(t as usize).to_string();
        let parsed = if self.spec.arm == Arm::PrefixContinue {
            parse_continuation(&request, response, &support, &required)
        } else {
            parse(&request, response, &required, &self.spec)?
        };
        // Algorithm 1, lines 18–20: an answer outside V becomes the INVALID marker.
        let z = match &parsed.value {
            Some(v) if support.contains(v) => v.clone(),
            _ => INVALID_MARKER.to_string(),
        };
        let mut step = step_record(
            t,
            &support,
            &request,
            response,
            z.clone(),
            required,
            &parsed,
        );
        step.matched_prompt_tokens = matched;
        self.steps.insert(t, step);
        if self.batch {
            // The answer so far shows the chosen field's code, as the model would write it.
            let code = request
                .options
                .iter()
                .find(|o| o.value == z)
                .map(|o| o.code.clone())
                .unwrap_or_else(|| INVALID_MARKER.to_string());
            self.batch_codes.push(code);
        }
        if self.sequential {
            // Line 21: ŷ ← ŷ ∥ z.
            self.prefix.extend(z.chars());
            self.next_position += 1;
            return self.advance();
        }
        Ok(vec![])
    }

    /// The positions this controller decides: the readout's one preselected position, or
    /// 1..=L.
    fn positions(&self) -> Vec<usize> {
        match self.readout_position {
            Some(p) => vec![p],
            None => (1..=self.item.length).collect(),
        }
    }

    pub fn is_complete(&self) -> bool {
        self.started && self.outstanding.is_empty() && self.steps.len() == self.positions().len()
    }

    pub fn output(&self) -> String {
        self.steps.values().map(|s| s.emitted.as_str()).collect()
    }

    pub fn trajectory(&self, model: &str) -> Trajectory {
        let mut t = assemble(
            &self.item,
            &self.spec,
            model,
            self.output(),
            self.steps.values().cloned().collect(),
            self.aborted,
            self.plan.as_ref().map(|p| p.iter().collect()),
            None,
            self.lexicon,
        );
        if let Some(p) = self.readout_position {
            self.score_readout(&mut t, p);
        }
        t.plan_origin = self.plan_origin.clone();
        t
    }

    /// Record where a supplied plan came from (`observed`, `constructed`, …).
    pub fn set_plan_origin(&mut self, origin: &str) {
        if self.plan.is_some() {
            self.plan_origin = Some(origin.to_string());
        }
    }
}

impl LocalController {
    /// A generated Batch answer: one JSON object mapping every position ("1".."L") to a
    /// listed value (or, with codes shown, a listed code). Strict: text that is not one JSON
    /// object, a missing or extra key, or a truncated answer fails every position; a field
    /// whose value is not listed fails that position. Nothing is trimmed or repaired beyond
    /// JSON's own whitespace. The one call is recorded on position 1.
    fn take_batch_answer(&mut self, request: &Request, response: &Response, support: &[String]) {
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
    fn score_readout(&self, t: &mut Trajectory, position: usize) {
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

/// PrefixContinue consumes the first character of the generated suffix.
fn parse_continuation(
    request: &Request,
    response: &Response,
    support: &[String],
    required: &str,
) -> ParsedAnswer {
    let _ = request;
    let (value, class) = match &response.answer {
        Answer::Generated { text, .. } => match text.chars().next() {
            None => (None, ResponseClass::Empty),
            Some(c) => {
                let s = c.to_string();
                if !support.contains(&s) {
                    (None, ResponseClass::OtherInvalid)
                } else if s == required {
                    (Some(s), ResponseClass::StrictCorrect)
                } else {
                    (Some(s), ResponseClass::FormatValidWrong)
                }
            }
        },
        Answer::Scored { .. } => (None, ResponseClass::OtherInvalid),
    };
    ParsedAnswer {
        value,
        class,
        probabilities: None,
        chosen_probability: None,
        top_probability: None,
    }
}

/// SerialStop: the 51-option alphabet with END, at most L+3 requests (paper A.4).
#[derive(Debug, Clone)]
pub struct StopController {
    item: Item,
    spec: ArmSpec,
    binding: OptionBinding,
    gold: Vec<char>,
    content: Vec<char>,
    steps: Vec<StepRecord>,
    outstanding: Option<(Vec<String>, Request)>,
    ended: bool,
    started: bool,
    lexicon: Option<LexiconRef>,
}

impl StopController {
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

    pub fn start(&mut self) -> Vec<Request> {
        if self.started {
            return vec![];
        }
        self.started = true;
        self.next_request()
    }

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

    pub fn is_complete(&self) -> bool {
        self.started && self.outstanding.is_none()
    }

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
