//! Stage 7, the sink operator: hands records to a rolling part writer and reports durability.
//!
//! The operator holds a capability for every epoch whose records are buffered but not yet in a
//! closed part file, and releases them when the part is renamed into place. A probe on its
//! (empty) output therefore passes an epoch only when that epoch's records are durable — the
//! pipeline commits Kafka offsets behind that probe.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::Capability;
use timely::dataflow::StreamVec;

/// A rolling writer of one dataset.
pub trait RowSink<D>: 'static {
    /// Buffer one record (the sink may drop records it already holds on disk).
    fn push(&mut self, record: D) -> Result<(), String>;
    /// Records buffered and not yet written.
    fn buffered(&self) -> usize;
    /// Whether the buffered records should be written now (row count or age).
    fn due(&self, now: Instant) -> bool;
    /// Write the buffered records as one complete part.
    fn roll(&mut self) -> Result<(), String>;
}

/// Write `stream` through `sink`. `failed` is raised (and the error logged) when writing fails.
pub fn sink<'s, D: Clone + 'static, S: RowSink<D>>(
    stream: StreamVec<'s, u64, D>,
    mut sink: S,
    name: &str,
    check_every: Duration,
    failed: Arc<AtomicBool>,
) -> StreamVec<'s, u64, ()> {
    let scope = stream.scope();
    let label = name.to_string();
    stream.unary_frontier::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
        Pipeline,
        name,
        move |initial, info| {
            drop(initial);
            let activator = scope.activator_for(info.address.clone());
            let mut held: BTreeMap<u64, Capability<u64>> = BTreeMap::new();
            move |(input, frontier), output| {
                input.for_each(|cap, data| {
                    if let Some(c) = cap.retain_least(output.output_index()) {
                        held.entry(*c.time()).or_insert(c);
                    }
                    for d in data.drain(..) {
                        if let Err(e) = sink.push(d) {
                            tracing::error!("{label}: {e}");
                            failed.store(true, Ordering::SeqCst);
                        }
                    }
                });
                let finished = frontier.frontier().is_empty();
                if sink.buffered() > 0 && (finished || sink.due(Instant::now())) {
                    match sink.roll() {
                        Ok(()) => held.clear(),
                        Err(e) => {
                            tracing::error!("{label}: {e}");
                            failed.store(true, Ordering::SeqCst);
                        }
                    }
                }
                if sink.buffered() == 0 {
                    // Nothing pending: epochs are durable as soon as the input has passed them.
                    held.clear();
                } else {
                    activator.activate_after(check_every);
                }
            }
        },
    )
}
