//! Stage 3b, the Serial feedback loop: controllers turn tasks into requests; answers come back
//! around a timely feedback edge, and only then does a controller issue its next step (step
//! t+1 of a Serial trajectory after step t is answered and appended to its prefix).
//!
//! Timestamps inside the loop are `(epoch, round)`: a task enters at `(e, 0)`, every trip
//! through the inference operator and the feedback edge adds one round. Completed
//! trajectories, request logs and rejects leave the loop at their epoch, so downstream stages
//! see an epoch complete once every trajectory of its items is done.

use std::collections::HashMap;
use std::sync::Arc;

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::core::Partition;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::{ConnectLoop, Enter, Feedback, Leave};
use timely::dataflow::StreamVec;

use c2s_protocol::{Controller, ControllerConfig};
use c2s_records::{Request, Trajectory};

use crate::inference_op::inference;
use crate::messages::{Answered, Exchange, Reject, Task};
use crate::Counters;
use c2s_model::InferenceService;

/// What the controllers emit each time they advance.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
enum LoopEvent {
    Request(Request),
    Exchange(Box<Exchange>),
    Done(Box<Trajectory>),
    Reject(Reject),
}

struct ItemState {
    controllers: HashMap<String, Controller>,
    /// Tasks waiting for the plan of another arm.
    waiting: Vec<Task>,
    /// Request id → controller label.
    outstanding: HashMap<String, (String, Request)>,
    source: String,
}

/// The outputs of the loop, all at their item's epoch.
pub struct LoopOutputs<'s> {
    /// Completed trajectories, one per (item, arm).
    pub trajectories: StreamVec<'s, u64, Trajectory>,
    /// Every answered request with its response and step (the `requests` dataset).
    pub exchanges: StreamVec<'s, u64, Exchange>,
    /// Tasks their controller cannot run.
    pub rejects: StreamVec<'s, u64, Reject>,
}

/// Build the loop. `tasks` must already be on their item's owner worker.
pub fn serial_loop<'s>(
    tasks: StreamVec<'s, u64, Task>,
    service: InferenceService,
    runtime: tokio::runtime::Handle,
    cfg: ControllerConfig,
    counters: Arc<Counters>,
    writes: Arc<crate::sink_op::WriteHealth>,
) -> LoopOutputs<'s> {
    let outer = tasks.scope();
    let model = service.identity().label();
    let finished_items = service.clone();
    outer.scoped::<(u64, u32), _, _>("SerialLoop", move |inner| {
        let (handle, answers) = inner.feedback::<Vec<Answered>>((0, 1));
        let events = tasks
            .enter(inner)
            .binary::<_, CapacityContainerBuilder<Vec<LoopEvent>>, _, _, _, _>(
                answers,
                Pipeline,
                Pipeline,
                "Controllers",
                move |_, _| {
                    let mut items: HashMap<String, ItemState> = HashMap::new();
                    move |tasks_in, answers_in, output| {
                        tasks_in.for_each(|cap, data| {
                            let mut session = output.session(&cap);
                            for task in data.drain(..) {
                                let id = task.item.item_id.clone();
                                let state = items.entry(id.clone()).or_insert_with(|| ItemState {
                                    controllers: HashMap::new(),
                                    waiting: Vec::new(),
                                    outstanding: HashMap::new(),
                                    source: format!("controller:{}", task.spec.label()),
                                });
                                if task.plan_from.is_some() {
                                    state.waiting.push(task);
                                    continue;
                                }
                                for e in start_task(state, task, None, &cfg, &model) {
                                    session.give(e);
                                }
                            }
                        });
                        answers_in.for_each(|cap, data| {
                            let mut session = output.session(&cap);
                            for a in data.drain(..) {
                                let Some(state) = items.get_mut(&a.item_id) else {
                                    continue;
                                };
                                let events = advance(state, a, &cfg, &model, &counters);
                                for e in events {
                                    session.give(e);
                                }
                            }
                        });
                        // An item is done when no controller, waiting task or request is left;
                        // the service then forgets the answers only it asked for.
                        items.retain(|id, s| {
                            let done = s.controllers.is_empty()
                                && s.waiting.is_empty()
                                && s.outstanding.is_empty();
                            if done {
                                finished_items.finish_item(id);
                            }
                            !done
                        });
                    }
                },
            );
        let parts = events.partition::<CapacityContainerBuilder<Vec<LoopEvent>>, _, _>(4, |e| {
            let k = match &e {
                LoopEvent::Request(_) => 0,
                LoopEvent::Exchange(_) => 1,
                LoopEvent::Done(_) => 2,
                LoopEvent::Reject(_) => 3,
            };
            (k, e)
        });
        let [requests, exchanges, done, rejects] = crate::partitions(parts);
        let requests = requests.flat_map_events(|e| match e {
            LoopEvent::Request(r) => Some(r),
            _ => None,
        });
        inference(requests, service, runtime, writes).connect_loop(handle);
        LoopOutputs {
            trajectories: done
                .flat_map_events(|e| match e {
                    LoopEvent::Done(t) => Some(*t),
                    _ => None,
                })
                .leave(outer),
            exchanges: exchanges
                .flat_map_events(|e| match e {
                    LoopEvent::Exchange(x) => Some(*x),
                    _ => None,
                })
                .leave(outer),
            rejects: rejects
                .flat_map_events(|e| match e {
                    LoopEvent::Reject(r) => Some(r),
                    _ => None,
                })
                .leave(outer),
        }
    })
}

/// Create and start the controller of `task` (with `plan` for copy arms).
fn start_task(
    state: &mut ItemState,
    task: Task,
    plan: Option<String>,
    cfg: &ControllerConfig,
    model: &str,
) -> Vec<LoopEvent> {
    let label = task.spec.label();
    let mut events = Vec::new();
    let plan = plan.or_else(|| task.supplied_plan.as_ref().map(|p| p.plan.clone()));
    let started = Controller::new(&task.item, task.spec, plan, cfg).and_then(|mut c| {
        if let Some(p) = &task.supplied_plan {
            c.set_plan_origin(p.origin);
        }
        let first = c.start()?;
        Ok((c, first))
    });
    match started {
        Ok((c, first)) => {
            for r in first {
                state
                    .outstanding
                    .insert(r.request_id.clone(), (label.clone(), r.clone()));
                events.push(LoopEvent::Request(r));
            }
            if c.is_complete() {
                // Everything filled without a request (possible under Fill rules).
                if let Some(t) = c.trajectory(model) {
                    events.push(LoopEvent::Done(Box::new(t)));
                }
            } else {
                state.controllers.insert(label, c);
            }
        }
        Err(e) => events.push(LoopEvent::Reject(Reject {
            source: state.source.clone(),
            location: label,
            item_id: Some(task.item.item_id.clone()),
            reason: e.to_string(),
        })),
    }
    events
}

/// Feed one answer to its controller; start waiting copy tasks when their plan is ready.
fn advance(
    state: &mut ItemState,
    a: Answered,
    cfg: &ControllerConfig,
    model: &str,
    counters: &Counters,
) -> Vec<LoopEvent> {
    let mut events = Vec::new();
    let Some((label, request)) = state.outstanding.remove(&a.request_id) else {
        return events;
    };
    counters.add_request();
    let response = match a.reply {
        Ok(r) => r,
        Err(e) => {
            // The model call failed: this trajectory cannot be completed honestly.
            state.controllers.remove(&label);
            state.outstanding.retain(|_, (l, _)| l != &label);
            events.push(LoopEvent::Reject(Reject {
                source: "inference".into(),
                location: format!("{label} step {}", request.step),
                item_id: Some(a.item_id),
                reason: e,
            }));
            return events;
        }
    };
    let Some(controller) = state.controllers.get_mut(&label) else {
        return events;
    };
    match controller.on_response(&response) {
        Ok(next) => {
            let step = controller.step_for(&request.request_id).cloned();
            events.push(LoopEvent::Exchange(Box::new(Exchange {
                request,
                response,
                step,
            })));
            for r in next {
                state
                    .outstanding
                    .insert(r.request_id.clone(), (label.clone(), r.clone()));
                events.push(LoopEvent::Request(r));
            }
        }
        Err(e) => {
            state.controllers.remove(&label);
            events.push(LoopEvent::Reject(Reject {
                source: "controller".into(),
                location: format!("{label} step {}", request.step),
                item_id: Some(a.item_id),
                reason: e.to_string(),
            }));
            return events;
        }
    }
    let complete = state
        .controllers
        .get(&label)
        .is_some_and(Controller::is_complete);
    if complete {
        let Some(controller) = state.controllers.remove(&label) else {
            return events;
        };
        if let Some(t) = controller.trajectory(model) {
            counters.add_trajectory();
            // Copy tasks waiting for this arm's choice start now.
            let (ready, still): (Vec<Task>, Vec<Task>) = std::mem::take(&mut state.waiting)
                .into_iter()
                .partition(|w| w.plan_from.as_deref() == Some(label.as_str()));
            state.waiting = still;
            for task in ready {
                if t.valid {
                    let plan = Some(t.output.clone());
                    events.extend(start_task(
                        state,
                        Task {
                            plan_from: None,
                            ..task
                        },
                        plan,
                        cfg,
                        model,
                    ));
                } else {
                    events.push(LoopEvent::Reject(Reject {
                        source: "controller".into(),
                        location: task.spec.label(),
                        item_id: Some(task.item.item_id.clone()),
                        reason: format!(
                            "no plan to copy: {label} produced no valid choice (`{}`)",
                            t.output
                        ),
                    }));
                }
            }
            events.push(LoopEvent::Done(Box::new(t)));
        }
    }
    events
}

/// What an asynchronous model stage emits: its records (decisions, dialogue rows), the model
/// exchanges for `requests/`, and rejects.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) enum StageEvent<R> {
    Record(Box<R>),
    Exchange(Box<crate::messages::Exchange>),
    Reject(crate::messages::Reject),
}

/// Split a stage's events into (records, exchanges, rejects).
#[allow(clippy::type_complexity)]
pub(crate) fn split_events<'s, T, R>(
    events: StreamVec<'s, T, StageEvent<R>>,
) -> (
    StreamVec<'s, T, R>,
    StreamVec<'s, T, crate::messages::Exchange>,
    StreamVec<'s, T, crate::messages::Reject>,
)
where
    T: timely::progress::Timestamp,
    R: Clone + 'static,
{
    use timely::dataflow::operators::core::Partition;
    let parts = events.partition::<CapacityContainerBuilder<Vec<StageEvent<R>>>, _, _>(3, |e| {
        let k = match &e {
            StageEvent::Record(_) => 0,
            StageEvent::Exchange(_) => 1,
            StageEvent::Reject(_) => 2,
        };
        (k, e)
    });
    let [records, exchanges, rejects] = crate::partitions(parts);
    (
        records.flat_map_events(|e| match e {
            StageEvent::Record(r) => Some(*r),
            _ => None,
        }),
        exchanges.flat_map_events(|e| match e {
            StageEvent::Exchange(x) => Some(*x),
            _ => None,
        }),
        rejects.flat_map_events(|e| match e {
            StageEvent::Reject(r) => Some(r),
            _ => None,
        }),
    )
}

/// `flat_map` over a stream's records, keeping times.
pub(crate) trait FlatMapEvents<'s, T: timely::progress::Timestamp, D> {
    fn flat_map_events<D2: Clone + 'static, F: FnMut(D) -> Option<D2> + 'static>(
        self,
        f: F,
    ) -> StreamVec<'s, T, D2>;
}

impl<'s, T: timely::progress::Timestamp, D: Clone + 'static> FlatMapEvents<'s, T, D>
    for StreamVec<'s, T, D>
{
    fn flat_map_events<D2: Clone + 'static, F: FnMut(D) -> Option<D2> + 'static>(
        self,
        mut f: F,
    ) -> StreamVec<'s, T, D2> {
        self.unary::<CapacityContainerBuilder<Vec<D2>>, _, _, _>(Pipeline, "Select", move |_, _| {
            move |input, output| {
                input.for_each(|cap, data| {
                    let mut session = output.session(&cap);
                    for d in data.drain(..) {
                        if let Some(x) = f(d) {
                            session.give(x);
                        }
                    }
                });
            }
        })
    }
}
