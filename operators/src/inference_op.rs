//! Stage 4, the inference operator: hands every request to the [`InferenceService`] on a tokio
//! runtime beside timely and never blocks the worker. It holds the request's capability while
//! the call is in flight (so the loop's frontier cannot pass it), and a sync activator wakes
//! it when answers arrive. Batching across items and steps happens in the service, which sees
//! every request in flight at once.

use std::collections::HashMap;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::Capability;
use timely::dataflow::StreamVec;
use timely::order::TotalOrder;
use timely::progress::Timestamp;

use c2s_records::Request;

use crate::messages::Answered;
use c2s_model::{EngineError, InferenceService};

use crate::sink_op::WriteHealth;

/// How often a held-back operator looks at the budget again.
const HOLD_CHECK: Duration = Duration::from_millis(100);

/// Answer every request of `requests` through `service` on `runtime`; the answers leave at
/// their request's time. While `writes` is over its byte budget, new requests wait unread; a
/// request cut off by an outage past the limit gives no answer (see the module notes).
pub fn inference<'s, T: Timestamp + TotalOrder>(
    requests: StreamVec<'s, T, Request>,
    service: InferenceService,
    runtime: tokio::runtime::Handle,
    writes: Arc<WriteHealth>,
) -> StreamVec<'s, T, Answered> {
    let scope = requests.scope();
    requests.unary_frontier::<CapacityContainerBuilder<Vec<Answered>>, _, _, _>(
        Pipeline,
        "Inference",
        move |initial, info| {
            // Only requests create work; the initial capability is not needed.
            drop(initial);
            let activator = scope.worker().sync_activator_for(info.address.to_vec());
            let recheck = scope.activator_for(info.address.clone());
            let mut holding = false;
            let (tx, rx) = mpsc::channel::<(u64, Option<Answered>)>();
            let mut in_flight: HashMap<u64, Capability<T>> = HashMap::new();
            let mut next_id: u64 = 0;
            move |(input, _frontier), output| {
                // Blocked outputs over their byte budget: the requests wait in the input (the
                // answers would only add rows that cannot be written).
                let over = writes.over_budget();
                if over != holding {
                    holding = over;
                    if over {
                        tracing::warn!(
                            "outputs cannot be written and hold {:.1} MiB, over [output] max_buffered_mb: model requests wait",
                            writes.held_bytes() as f64 / (1u64 << 20) as f64
                        );
                    } else {
                        tracing::warn!("outputs written again: model requests go on");
                    }
                }
                if holding {
                    recheck.activate_after(HOLD_CHECK);
                }
                // Held: the input is left unread (not drained), so its requests wait there.
                if !holding { input.for_each(|cap, data| {
                    let Some(cap) = cap.retain_least(output.output_index()) else {
                        return;
                    };
                    for request in data.drain(..) {
                        let id = next_id;
                        next_id += 1;
                        in_flight.insert(id, cap.clone());
                        let (tx, activator, service) =
                            (tx.clone(), activator.clone(), service.clone());
                        runtime.spawn(async move {
                            let item_id = request.item_id.clone();
                            let request_id = request.request_id.clone();
                            let reply = match service.call(request).await {
                                // The server stayed out past `max_outage_seconds`: the run
                                // stops, and the request is no failure to record; a resume
                                // sends it again.
                                Err(EngineError::Outage(_)) => None,
                                reply => Some(reply.map_err(|e| e.to_string())),
                            };
                            let answered = reply.map(|reply| Answered {
                                item_id,
                                request_id,
                                reply,
                            });
                            let _ = tx.send((id, answered));
                            let _ = activator.activate();
                        });
                    }
                }); }
                while let Ok((id, answered)) = rx.try_recv() {
                    // Unanswered (an outage past the limit), the capability is released all
                    // the same, so the stopping run can drain.
                    if let (Some(cap), Some(answered)) = (in_flight.remove(&id), answered) {
                        output.session(&cap).give(answered);
                    }
                }
            }
        },
    )
}
