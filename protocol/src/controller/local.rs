//! [`LocalController`]: Algorithm 1 (Appendix A), one decision per position under a Full /
//! Union / Trie support with a Call / Fill rule, and PrefixContinue's reading of a generated
//! suffix. D.11's Batch answer and the readout grid's one position are in `batch_readout`.

mod batch_readout;

use std::collections::BTreeMap;

use c2s_records::{
    position_union, Answer, Arm, ArmSpec, Contract, CopyControl, Evidence, FillRule, Item,
    PlanOrigin, PlanSource, Request, RequestOption, Response, ResponseClass, StepRecord,
    SupportSet, Trajectory, INVALID_MARKER,
};

use crate::intervention::{draft_prefix, intervention_position};
use crate::options::{local_binding_over, OptionBinding};
use crate::padding::{token_matched_request, TokenCounterRef};
use crate::prompts::{batch_answer_prefix, is_batch, is_readout, render_request, StepState};
use crate::scoring::ParsedAnswer;

use super::assembly::{assemble, parse, step_record};
use super::spec::full_alphabet;
use super::{ControllerConfig, ControllerError, LexiconRef};

pub use batch_readout::query_position;

/// Independent, Serial, TeacherForced, GoldCopy, SelfPlanSpell and PrefixContinue: one
/// decision per position under a Full / Union / Trie support with a Call / Fill rule.
#[derive(Debug, Clone)]
pub struct LocalController {
    item: Item,
    pub(super) spec: ArmSpec,
    binding: OptionBinding,
    gold: Vec<char>,
    candidates: Vec<Vec<char>>,
    /// `copy_target` of copy arms.
    plan: Option<Vec<char>>,
    /// Where the plan came from (recorded in the trajectory).
    plan_origin: Option<PlanSource>,
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
    pub(super) steps: BTreeMap<u32, StepRecord>,
    outstanding: BTreeMap<String, (u32, Vec<String>, Request)>,
    /// D.9's token control: the Indexed token count each outstanding request matched.
    token_targets: BTreeMap<String, u32>,
    aborted: bool,
    started: bool,
    lexicon: Option<LexiconRef>,
    tokens: Option<TokenCounterRef>,
}

impl LocalController {
    /// Build the controller; fails where a copy arm lacks its plan or the plan cannot be
    /// copied (wrong length, a character outside the alphabet, IncorrectCopy's plan equal
    /// to gold).
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
            Arm::GoldCopy => Some(PlanSource::Gold),
            Arm::SelfPlanSpell => Some(PlanSource::OwnChoice),
            Arm::IncorrectCopy => Some(PlanSource::Supplied),
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
        .map_err(|e| token_error(e.to_string()))?;
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

    /// The first requests (empty once started). Fails where D.9's token control has no exact
    /// match.
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

    /// Take the response to an outstanding request; returns the requests it made possible.
    /// Fails on an unknown request, an unscorable answer, or an engine prompt count that
    /// differs from the token-matched target.
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

    /// Whether started, nothing is outstanding and every decided position has its step.
    pub fn is_complete(&self) -> bool {
        self.started && self.outstanding.is_empty() && self.steps.len() == self.positions().len()
    }

    /// The emitted values of the steps so far, in position order.
    pub fn output(&self) -> String {
        self.steps.values().map(|s| s.emitted.as_str()).collect()
    }

    /// The trajectory of `model` from the steps so far (with the readout scored and the
    /// plan's origin recorded).
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
        t.plan_origin = self.plan_origin;
        t
    }

    /// Record where a supplied plan came from (`observed`, `constructed`).
    pub fn set_plan_origin(&mut self, origin: PlanOrigin) {
        if self.plan.is_some() {
            self.plan_origin = Some(origin.into());
        }
    }
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
