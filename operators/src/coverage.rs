//! The candidate-coverage stages (the second protocol, `candidate-coverage-typed-decisions.txt`):
//! parse and validate cases against their task's catalogue (pairing rules, duplicates), expand
//! each case into its scored decisions, run them through the [`InferenceService`] beside
//! timely, and assemble [`Decision`] records. Nothing is lost: a case that cannot run becomes
//! a [`Reject`]; a request the engine fails becomes a decision with its error (missing, never
//! a rejection).

use std::collections::HashMap;
use std::sync::{mpsc, Arc};

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::Capability;
use timely::dataflow::StreamVec;

use c2s_model::InferenceService;
use c2s_protocol::coverage::{decision_specs, render_coverage_request};
use c2s_records::{
    parse_case, CoverageCase, CoverageCatalogue, CoverageSize, Decision, DecisionSpec, NameVariant,
    OptionLogprobs, Request, Response, ScoringRule,
};

use crate::messages::{Exchange, Incoming, Reject};
use crate::serial_loop::{split_events, StageEvent};
use crate::validate::{json_id, parse_records, Identified};
use crate::Counters;

/// A case with its provenance, on its owner worker.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LocatedCase {
    /// The parsed case, valid against its task's catalogue.
    pub case: CoverageCase,
    /// The source it was read from (as in [`Incoming::source`]).
    pub source: String,
    /// Where in that source (as in [`Incoming::location`]).
    pub location: String,
}

/// Which decisions every case runs (from `[coverage]`).
#[derive(Debug, Clone)]
pub struct DecisionPlan {
    /// Ordinary set sizes: each runs the case's present and absent set of that size.
    pub ks: Vec<CoverageSize>,
    /// Name variants every decision runs under.
    pub names: Vec<NameVariant>,
    /// Whether the none option is offered (last), one choice per entry.
    pub none: Vec<bool>,
    /// Also classify a test case over its task's full label set (without the none option).
    pub full_set: bool,
    /// How the options' token log-probabilities become the decision's probabilities.
    pub scoring: ScoringRule,
}

/// Why a decision's probabilities cannot be computed under a scoring rule (the decision keeps
/// the text as its error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecisionScoreError {
    /// The rule needs token log-probabilities and the answer has none.
    #[error(
        "scoring rule `{}` needs the options' token log-probabilities, which the engine did not return",
        .0.as_str()
    )]
    NoLogprobs(ScoringRule),
    /// An option of the answer has no token log-probability.
    #[error("scoring rule `{}`: an option has no token log-probability", .0.as_str())]
    MissingOption(ScoringRule),
}

/// A decision's probabilities under `rule` from the engine's answer: the engine's own
/// (summed) distribution for the default rule, else the rule applied to its token
/// log-probabilities.
pub fn decision_scores(
    rule: ScoringRule,
    probabilities: &[f64],
    raw: Option<&OptionLogprobs>,
) -> Result<Vec<f64>, DecisionScoreError> {
    if rule == ScoringRule::Summed {
        return Ok(probabilities.to_vec());
    }
    let raw = raw.ok_or(DecisionScoreError::NoLogprobs(rule))?;
    rule.probabilities(&raw.token_logprobs)
        .ok_or(DecisionScoreError::MissingOption(rule))
}

/// The task catalogues of a run.
pub type Catalogues = Arc<Vec<CoverageCatalogue>>;

fn catalogue<'a>(cats: &'a [CoverageCatalogue], task: &str) -> Option<&'a CoverageCatalogue> {
    cats.iter().find(|c| c.task == task)
}

impl Identified for LocatedCase {
    fn id(&self) -> &str {
        &self.case.case_id
    }
    fn into_reject(self, reason: String) -> Reject {
        Reject {
            source: self.source,
            location: self.location,
            item_id: Some(self.case.case_id),
            reason,
        }
    }
}

/// Parse and validate `incoming` as cases; returns (valid cases on their owner worker,
/// rejects). Duplicate case ids are checked against every id seen (`duplicate_window` = 0) or
/// the last `duplicate_window` ids.
pub fn validate_cases<'s>(
    incoming: StreamVec<'s, u64, Incoming>,
    catalogues: Catalogues,
    duplicate_window: usize,
) -> (StreamVec<'s, u64, LocatedCase>, StreamVec<'s, u64, Reject>) {
    parse_records(
        incoming,
        "ParseCases",
        move |text| {
            let case = parse_case(text).map_err(|e| (json_id(text, "case_id"), e.to_string()))?;
            let id = Some(case.case_id.clone());
            let Some(cat) = catalogue(&catalogues, &case.task) else {
                return Err((
                    id,
                    format!(
                        "field `task`: no catalogue for task `{}` in [coverage] catalogues",
                        case.task
                    ),
                ));
            };
            case.validate(cat).map_err(|e| (id, e.to_string()))?;
            Ok(case)
        },
        |case, source, location| LocatedCase {
            case,
            source,
            location,
        },
        duplicate_window,
        "case_id",
    )
}

/// What leaves the decision stage.
pub struct DecisionOutputs<'s> {
    /// One decision per scored request (with its error when the engine failed it).
    pub decisions: StreamVec<'s, u64, Decision>,
    /// Every answered request with its response (the `requests` dataset).
    pub exchanges: StreamVec<'s, u64, Exchange>,
    /// Cases that cannot run.
    pub rejects: StreamVec<'s, u64, Reject>,
}

type Event = StageEvent<Decision>;

struct Pending {
    case: Arc<CoverageCase>,
    spec: DecisionSpec,
    request: Request,
    task_labels: u32,
}

/// Expand every case into its requests, ask the service (asynchronously, holding each
/// request's capability while it is in flight), and emit a decision per answer. A case's
/// cached answers are released once all of its decisions are in.
pub fn decide<'s>(
    cases: StreamVec<'s, u64, LocatedCase>,
    catalogues: Catalogues,
    plan: DecisionPlan,
    service: InferenceService,
    runtime: tokio::runtime::Handle,
    counters: Arc<Counters>,
) -> DecisionOutputs<'s> {
    let scope = cases.scope();
    let model = service.identity().label();
    let events = cases.unary_frontier::<CapacityContainerBuilder<Vec<Event>>, _, _, _>(
        Pipeline,
        "Decide",
        move |initial, info| {
            drop(initial);
            let activator = scope.worker().sync_activator_for(info.address.to_vec());
            type Done = (u64, Option<Result<Response, String>>, f64);
            let (tx, rx) = mpsc::channel::<Done>();
            let mut in_flight: HashMap<u64, (Capability<u64>, Pending)> = HashMap::new();
            let mut open_requests: HashMap<String, usize> = HashMap::new();
            let mut next_id: u64 = 0;
            move |(input, _frontier), output| {
                input.for_each(|cap, data| {
                    let Some(cap) = cap.retain_least(output.output_index()) else {
                        return;
                    };
                    for located in data.drain(..) {
                        let Some(cat) = catalogue(&catalogues, &located.case.task) else {
                            continue; // validated upstream
                        };
                        let case = Arc::new(located.case);
                        let task_labels = cat.labels.len() as u32;
                        let specs = decision_specs(
                            &case,
                            cat,
                            &plan.ks,
                            &plan.names,
                            &plan.none,
                            plan.full_set,
                        );
                        if specs.is_empty() {
                            output.session(&cap).give(Event::Reject(Reject {
                                source: located.source,
                                location: located.location,
                                item_id: Some(case.case_id.clone()),
                                reason: format!(
                                    "field `sets`: none of the sizes [{}] of [coverage] ks, and full_set is off",
                                    plan.ks
                                        .iter()
                                        .map(ToString::to_string)
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                ),
                            }));
                            continue;
                        }
                        let mut requests = Vec::with_capacity(specs.len());
                        let mut failed = None;
                        for spec in specs {
                            match render_coverage_request(&case, cat, &spec) {
                                Ok(r) => requests.push((spec, r)),
                                Err(e) => {
                                    failed = Some(e.to_string());
                                    break;
                                }
                            }
                        }
                        if let Some(reason) = failed {
                            output.session(&cap).give(Event::Reject(Reject {
                                source: located.source,
                                location: located.location,
                                item_id: Some(case.case_id.clone()),
                                reason,
                            }));
                            continue;
                        }
                        // A recurring case id (outside the duplicate window) may still be in flight.
                        *open_requests.entry(case.case_id.clone()).or_insert(0) += requests.len();
                        for (spec, request) in requests {
                            let id = next_id;
                            next_id += 1;
                            counters.add_request();
                            let (tx, activator, service) =
                                (tx.clone(), activator.clone(), service.clone());
                            let r = request.clone();
                            runtime.spawn(async move {
                                let started = std::time::Instant::now();
                                // An outage past the limit is no answer (None): the run
                                // stops and a resume asks again.
                                let reply = match service.call(r).await {
                                    Err(c2s_model::EngineError::Outage(_)) => None,
                                    reply => Some(reply.map_err(|e| e.to_string())),
                                };
                                let _ = tx.send((id, reply, started.elapsed().as_secs_f64() * 1e3));
                                let _ = activator.activate();
                            });
                            in_flight.insert(
                                id,
                                (
                                    cap.clone(),
                                    Pending {
                                        case: case.clone(),
                                        spec,
                                        request,
                                        task_labels,
                                    },
                                ),
                            );
                        }
                    }
                });
                while let Ok((id, reply, waited_ms)) = rx.try_recv() {
                    let Some((cap, p)) = in_flight.remove(&id) else {
                        continue;
                    };
                    let Some(reply) = reply else {
                        continue;
                    };
                    let mut session = output.session(&cap);
                    let (probabilities, raw, prompt_tokens, latency_ms, error) = match &reply {
                        Ok(r) => match &r.answer {
                            c2s_records::Answer::Scored { probabilities, raw } => {
                                match decision_scores(plan.scoring, probabilities, raw.as_ref()) {
                                    Ok(p) => (p, raw.clone(), r.prompt_tokens, r.latency_ms, None),
                                    Err(e) => (
                                        Vec::new(),
                                        None,
                                        r.prompt_tokens,
                                        r.latency_ms,
                                        Some(e.to_string()),
                                    ),
                                }
                            }
                            other => (
                                Vec::new(),
                                None,
                                r.prompt_tokens,
                                r.latency_ms,
                                Some(format!("expected a scored answer, got {other:?}")),
                            ),
                        },
                        Err(e) => (Vec::new(), None, 0, waited_ms, Some(e.clone())),
                    };
                    // Raw scores that do not align with the options are not kept.
                    let raw = raw.filter(|r| r.aligned(p.request.options.len()));
                    let error = error.or_else(|| {
                        (probabilities.len() != p.request.options.len()).then(|| {
                            format!(
                                "{} probabilities for {} options",
                                probabilities.len(),
                                p.request.options.len()
                            )
                        })
                    });
                    let decision = Decision {
                        case_id: p.case.case_id.clone(),
                        task: p.case.task.clone(),
                        split: p.case.split,
                        reference: p.case.reference.clone(),
                        spec: p.spec,
                        labels: p.request.options.iter().map(|o| o.value.clone()).collect(),
                        probabilities: if error.is_some() {
                            Vec::new()
                        } else {
                            probabilities
                        },
                        request_id: p.request.request_id.clone(),
                        model: model.clone(),
                        prompt_tokens,
                        latency_ms,
                        task_labels: Some(p.task_labels),
                        scoring: plan.scoring,
                        raw: if error.is_some() { None } else { raw },
                        error,
                    };
                    let response = reply.ok();
                    if let Some(response) = response {
                        session.give(Event::Exchange(Box::new(Exchange {
                            request: p.request,
                            response,
                            step: None,
                        })));
                    }
                    counters.add_trajectory();
                    session.give(Event::Record(Box::new(decision)));
                    if let Some(n) = open_requests.get_mut(&p.case.case_id) {
                        *n -= 1;
                        if *n == 0 {
                            open_requests.remove(&p.case.case_id);
                            service.finish_item(&p.case.case_id);
                        }
                    }
                }
            }
        },
    );
    let (decisions, exchanges, rejects) = split_events(events);
    DecisionOutputs {
        decisions,
        exchanges,
        rejects,
    }
}
