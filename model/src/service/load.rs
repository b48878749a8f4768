//! What the batching service tells a live monitor: requests in flight, batch sizes, engine
//! latencies and the engine's counters. Kept apart from the service's maps (a [`ServiceProbe`]
//! holds only this and the in-flight semaphore), so that a probe held by the process's
//! [`AnswerTally`](super::AnswerTally) keeps nothing else alive and forms no reference cycle.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;

use crate::engine::EngineStats;

use super::ServiceStats;

/// Upper bounds of the engine latency buckets, in seconds: Prometheus' default buckets,
/// extended to a minute (a long generation on a CPU).
pub const LATENCY_BUCKETS_SECONDS: [f64; 13] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// Observations counted in fixed buckets: `counts[i]` counts the values in
/// `(bounds[i-1], bounds[i]]`, and the last count those above every bound.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Buckets {
    /// One count per bucket, plus the overflow bucket last (empty before the first
    /// observation).
    pub counts: Vec<u64>,
    /// The sum of every observed value, in the observations' unit (seconds for latencies).
    pub sum: f64,
}

impl Buckets {
    fn observe(&mut self, bounds: &[f64], value: f64) {
        if self.counts.len() != bounds.len() + 1 {
            self.counts = vec![0; bounds.len() + 1];
        }
        let i = bounds.partition_point(|&b| b < value);
        self.counts[i] += 1;
        self.sum += value;
    }

    /// Observations counted.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// The load of one service at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServiceLoad {
    /// The service's counters: the engine's as of its latest batch, and de-duplicated
    /// requests.
    pub stats: ServiceStats,
    /// Distinct requests handed to the engine thread and not answered yet.
    pub in_flight: usize,
    /// Requests per engine batch (a continuous engine: in the engine at each step), by size.
    pub batch_sizes: BTreeMap<usize, u64>,
    /// The engine's latency of each computed answer, in seconds
    /// ([`LATENCY_BUCKETS_SECONDS`]).
    pub latency: Buckets,
}

/// The counters a service keeps for [`ServiceProbe`]s.
#[derive(Debug, Default)]
pub(super) struct LoadShared {
    pub(super) deduplicated: AtomicU64,
    counts: Mutex<LoadCounts>,
}

#[derive(Debug, Default)]
struct LoadCounts {
    engine: EngineStats,
    batch_sizes: BTreeMap<usize, u64>,
    latency: Buckets,
}

impl LoadShared {
    /// One engine batch (or step) of `batch` requests has ended with `latencies_ms` (the
    /// computed answers) and the engine's counters `engine`.
    pub(super) fn batch(
        &self,
        engine: EngineStats,
        batch: usize,
        latencies_ms: impl Iterator<Item = f64>,
    ) {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        c.engine = engine;
        if batch > 0 {
            *c.batch_sizes.entry(batch).or_default() += 1;
        }
        for ms in latencies_ms {
            c.latency.observe(&LATENCY_BUCKETS_SECONDS, ms / 1000.0);
        }
    }

    pub(super) fn deduplicated(&self) -> u64 {
        self.deduplicated.load(Ordering::Relaxed)
    }
}

/// A read-only view of one service's load, for monitoring.
#[derive(Clone)]
pub struct ServiceProbe {
    pub(super) load: Arc<LoadShared>,
    pub(super) permits: Arc<Semaphore>,
    pub(super) capacity: usize,
}

impl std::fmt::Debug for ServiceProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceProbe")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl ServiceProbe {
    /// The service's load now (a finished service's final counters, nothing in flight).
    pub fn load(&self) -> ServiceLoad {
        let c = self.load.counts.lock().unwrap_or_else(|p| p.into_inner());
        ServiceLoad {
            stats: ServiceStats {
                engine: c.engine,
                deduplicated: self.load.deduplicated(),
            },
            in_flight: self
                .capacity
                .saturating_sub(self.permits.available_permits()),
            batch_sizes: c.batch_sizes.clone(),
            latency: c.latency.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_count_each_value_under_its_upper_bound() {
        let mut b = Buckets::default();
        for v in [0.001, 0.005, 0.006, 61.0, 2.0] {
            b.observe(&LATENCY_BUCKETS_SECONDS, v);
        }
        assert_eq!(b.count(), 5);
        assert_eq!(b.counts[0], 2, "0.001 and 0.005 are ≤ 0.005");
        assert_eq!(b.counts[1], 1);
        assert_eq!(b.counts[8], 1, "2.0 is in (1, 2.5]");
        assert_eq!(b.counts[13], 1, "61 s is above every bound");
        assert!((b.sum - 63.012).abs() < 1e-9);
    }
}
