//! The dialogue-state stages (Appendix C): parse and validate dialogues (structure, legal
//! gold states, duplicates), then run every dialogue under every [`DialogueSpec`] through the
//! [`InferenceService`] beside timely, turn by turn, and emit its [`FieldTurn`] rows. Nothing
//! is lost: a dialogue that cannot run becomes a [`Reject`]; a request the engine fails
//! becomes rows with their error (`failure = engine_error`), never a rejection.

use std::collections::HashMap;
use std::sync::{mpsc, Arc};

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::Capability;
use timely::dataflow::StreamVec;

use c2s_model::InferenceService;
use c2s_protocol::dialogue::{DialogueRun, Pending};
use c2s_records::{parse_dialogue, Dialogue, DialogueSpec, FieldTurn, Response};

use crate::messages::{Exchange, Incoming, Reject};
use crate::serial_loop::{split_events, StageEvent};
use crate::validate::{json_id, parse_records, Identified};
use crate::Counters;

/// A dialogue with its provenance, on its owner worker.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LocatedDialogue {
    /// The parsed dialogue, valid (structure and gold states).
    pub dialogue: Dialogue,
    /// The source it was read from (as in [`Incoming::source`]).
    pub source: String,
    /// Where in that source (as in [`Incoming::location`]).
    pub location: String,
}

impl Identified for LocatedDialogue {
    fn id(&self) -> &str {
        &self.dialogue.dialogue_id
    }
    fn into_reject(self, reason: String) -> Reject {
        Reject {
            source: self.source,
            location: self.location,
            item_id: Some(self.dialogue.dialogue_id),
            reason,
        }
    }
}

/// Parse and validate `incoming` as dialogues; returns (valid dialogues, rejects).
pub fn validate_dialogues<'s>(
    incoming: StreamVec<'s, u64, Incoming>,
    duplicate_window: usize,
) -> (
    StreamVec<'s, u64, LocatedDialogue>,
    StreamVec<'s, u64, Reject>,
) {
    parse_records(
        incoming,
        "ParseDialogues",
        |text| {
            let d =
                parse_dialogue(text).map_err(|e| (json_id(text, "dialogue_id"), e.to_string()))?;
            d.validate()
                .map_err(|e| (Some(d.dialogue_id.clone()), e.to_string()))?;
            Ok(d)
        },
        |dialogue, source, location| LocatedDialogue {
            dialogue,
            source,
            location,
        },
        duplicate_window,
        "dialogue_id",
    )
}

/// What leaves the field-construction stage.
pub struct DialogueOutputs<'s> {
    /// The field rows of every decided user turn (the `dialogue_turns` dataset).
    pub turns: StreamVec<'s, u64, FieldTurn>,
    /// Every answered request with its response (the `requests` dataset).
    pub exchanges: StreamVec<'s, u64, Exchange>,
    /// Dialogues (or runs of one) that cannot run.
    pub rejects: StreamVec<'s, u64, Reject>,
}

type Event = StageEvent<FieldTurn>;

/// Run every dialogue under every spec: each run asks its ready requests (asynchronously,
/// holding the dialogue's capability while any is in flight) and emits a turn's rows when
/// the turn is decided. A dialogue's cached answers are released when all its runs finish.
pub fn construct_fields<'s>(
    dialogues: StreamVec<'s, u64, LocatedDialogue>,
    specs: Vec<DialogueSpec>,
    service: InferenceService,
    runtime: tokio::runtime::Handle,
    counters: Arc<Counters>,
) -> DialogueOutputs<'s> {
    let scope = dialogues.scope();
    let model = service.identity().label();
    let events = dialogues.unary_frontier::<CapacityContainerBuilder<Vec<Event>>, _, _, _>(
        Pipeline,
        "ConstructFields",
        move |initial, info| {
            drop(initial);
            let activator = scope.worker().sync_activator_for(info.address.to_vec());
            type Done = (u64, Result<Response, String>);
            let (tx, rx) = mpsc::channel::<Done>();
            // Runs by id, with the capability of their dialogue.
            let mut runs: HashMap<u64, (Capability<u64>, DialogueRun, LocatedSource)> =
                HashMap::new();
            let mut in_flight: HashMap<u64, (u64, Pending)> = HashMap::new();
            let mut open_runs: HashMap<String, usize> = HashMap::new();
            let mut next_run: u64 = 0;
            let mut next_request: u64 = 0;
            move |(input, _frontier), output| {
                let mut started: Vec<u64> = Vec::new();
                input.for_each(|cap, data| {
                    let Some(cap) = cap.retain_least(output.output_index()) else {
                        return;
                    };
                    for located in data.drain(..) {
                        let dialogue = Arc::new(located.dialogue);
                        for spec in &specs {
                            let id = next_run;
                            next_run += 1;
                            *open_runs.entry(dialogue.dialogue_id.clone()).or_insert(0) += 1;
                            runs.insert(
                                id,
                                (
                                    cap.clone(),
                                    DialogueRun::new(dialogue.clone(), *spec, model.clone()),
                                    LocatedSource {
                                        source: located.source.clone(),
                                        location: located.location.clone(),
                                    },
                                ),
                            );
                            started.push(id);
                        }
                    }
                });
                let mut ready = started;
                while let Ok((request_id, reply)) = rx.try_recv() {
                    let Some((run_id, pending)) = in_flight.remove(&request_id) else {
                        continue;
                    };
                    let Some((cap, run, _)) = runs.get_mut(&run_id) else {
                        continue;
                    };
                    let mut session = output.session(cap);
                    if let Ok(response) = &reply {
                        session.give(Event::Exchange(Box::new(Exchange {
                            request: pending.request.clone(),
                            response: response.clone(),
                            step: None,
                        })));
                    }
                    for row in run.take(pending, reply) {
                        session.give(Event::Record(Box::new(row)));
                    }
                    ready.push(run_id);
                }
                for run_id in ready {
                    let Some((cap, run, origin)) = runs.get_mut(&run_id) else {
                        continue;
                    };
                    match run.next_requests() {
                        Ok(requests) => {
                            for pending in requests {
                                let id = next_request;
                                next_request += 1;
                                counters.add_request();
                                let (tx, activator, service) =
                                    (tx.clone(), activator.clone(), service.clone());
                                let r = pending.request.clone();
                                runtime.spawn(async move {
                                    let reply = service.call(r).await.map_err(|e| e.to_string());
                                    let _ = tx.send((id, reply));
                                    let _ = activator.activate();
                                });
                                in_flight.insert(id, (run_id, pending));
                            }
                        }
                        Err(reason) => {
                            output.session(cap).give(Event::Reject(Reject {
                                source: origin.source.clone(),
                                location: origin.location.clone(),
                                item_id: Some(run.dialogue_id().to_string()),
                                reason: reason.to_string(),
                            }));
                            run.abandon();
                        }
                    }
                    if run.is_finished() && !in_flight.values().any(|(r, _)| *r == run_id) {
                        let dialogue_id = run.dialogue_id().to_string();
                        runs.remove(&run_id);
                        counters.add_trajectory();
                        if let Some(n) = open_runs.get_mut(&dialogue_id) {
                            *n -= 1;
                            if *n == 0 {
                                open_runs.remove(&dialogue_id);
                                service.finish_item(&dialogue_id);
                            }
                        }
                    }
                }
            }
        },
    );
    let (turns, exchanges, rejects) = split_events(events);
    DialogueOutputs {
        turns,
        exchanges,
        rejects,
    }
}

struct LocatedSource {
    source: String,
    location: String,
}
