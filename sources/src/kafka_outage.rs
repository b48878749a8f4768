//! Kafka broker outages: the broker cannot be reached (killed, restarting, network down).
//!
//! The clients wait for it rather than fail: the source keeps its in-memory positions (the
//! consumer fetches from them again once the broker is back, so nothing is read twice or
//! skipped) and retries its offset commits; the `[output.kafka]` publisher keeps its messages
//! queued and librdkafka delivers them once the broker is back. Each for at most
//! [`KAFKA_MAX_OUTAGE`]; then the operation fails as before.
//!
//! One record per process (a process runs one pipeline): [`kafka_outages`]. Its start and end
//! are logged, and the live monitor shows it (`c2s_kafka_outage*` on `/metrics`).

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a broker that cannot be reached is waited for by a commit or a publication.
pub const KAFKA_MAX_OUTAGE: Duration = Duration::from_secs(300);

#[derive(Debug, Default)]
struct State {
    /// The outage on: since when, and what found it.
    since: Option<Instant>,
    /// Outages so far, the one on included.
    count: u64,
    /// Seconds of the outages that ended.
    ended_seconds: f64,
    /// When the last one ended.
    ended: Option<Instant>,
}

/// The outages of the Kafka brokers this process talks to.
#[derive(Debug, Default)]
pub struct KafkaOutages {
    state: Mutex<State>,
}

/// This process's record of Kafka outages.
pub fn kafka_outages() -> &'static KafkaOutages {
    static OUTAGES: OnceLock<KafkaOutages> = OnceLock::new();
    OUTAGES.get_or_init(KafkaOutages::default)
}

impl KafkaOutages {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `what` (e.g. "committing offsets") failed for want of the broker at `brokers`: an
    /// outage starts unless one is on.
    pub fn down(&self, brokers: &str, what: &str, cause: &str) {
        let mut s = self.state();
        if s.since.is_none() {
            s.since = Some(Instant::now());
            s.count += 1;
            tracing::warn!(
                brokers,
                "Kafka broker unreachable ({what}: {cause}); waiting for it up to {} s, positions \
                 kept",
                KAFKA_MAX_OUTAGE.as_secs()
            );
        }
    }

    /// `what` succeeded: the outage on, if any, ends.
    pub fn up(&self, brokers: &str, what: &str) {
        let mut s = self.state();
        if let Some(since) = s.since.take() {
            let seconds = since.elapsed().as_secs_f64();
            s.ended_seconds += seconds;
            s.ended = Some(Instant::now());
            tracing::warn!(brokers, "Kafka broker back after {seconds:.1} s ({what})");
        }
    }

    /// When the last outage ended.
    pub fn ended(&self) -> Option<Instant> {
        self.state().ended
    }

    /// Whether an outage is on.
    pub fn active(&self) -> bool {
        self.state().since.is_some()
    }

    /// How long the outage on has lasted.
    pub fn current(&self) -> Option<Duration> {
        self.state().since.map(|s| s.elapsed())
    }

    /// Outages so far, the one on included.
    pub fn count(&self) -> u64 {
        self.state().count
    }

    /// Seconds without the broker so far, the outage on included.
    pub fn total_seconds(&self) -> f64 {
        let s = self.state();
        s.ended_seconds + s.since.map_or(0.0, |t| t.elapsed().as_secs_f64())
    }

    /// Whether the outage on has lasted longer than [`KAFKA_MAX_OUTAGE`].
    pub fn gave_up(&self) -> bool {
        self.current().is_some_and(|d| d > KAFKA_MAX_OUTAGE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_counts_from_down_to_up() {
        let o = KafkaOutages::default();
        assert!(!o.active());
        o.up("b", "nothing on");
        assert_eq!(o.count(), 0);
        o.down("b", "commit", "all brokers down");
        o.down("b", "commit", "again: the same outage");
        assert!(o.active() && !o.gave_up());
        assert_eq!(o.count(), 1);
        std::thread::sleep(Duration::from_millis(20));
        o.up("b", "commit");
        assert!(!o.active());
        let total = o.total_seconds();
        assert!(total >= 0.02, "{total}");
        assert_eq!(o.total_seconds(), total, "no time counts once it is over");
    }
}
