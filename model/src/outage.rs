//! Outages of a remote engine. A server that cannot be reached for a while (a restart, an
//! out-of-memory kill, a rolling deploy: connection refused or reset, a timeout, HTTP
//! 408/429/502/503/504) is not a model that fails its requests, so such faults do not count as
//! failed requests. While an outage lasts, every call waits and retries; the run's feeder
//! reads [`OutageWatch::active`] and feeds no new items.
//!
//! The watch is shared by every call of a process. It logs an outage when it starts, every
//! [`LOG_EVERY`] while it lasts and when the server answers again, and keeps each outage for
//! the run's status (`manifest.json`) and its live monitor. A call gives up once the outage
//! has lasted `max_outage` (`[inference] max_outage_seconds`); the run then stops with its
//! directory resumable.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use c2s_records::Outage;

/// How often a lasting outage is logged again.
pub const LOG_EVERY: Duration = Duration::from_secs(30);

/// A call's outage lasted `[inference] max_outage_seconds`: the call gives up.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the server could not be reached for {seconds:.0} s (more than [inference] max_outage_seconds = {max:.0}); first fault: {cause}")]
pub struct OutageExceeded {
    /// How long the outage had lasted when the call gave up, in seconds.
    pub seconds: f64,
    /// The limit it passed (`max_outage_seconds`), in seconds.
    pub max: f64,
    /// The fault that opened the outage, as the call reported it.
    pub cause: String,
}

/// The outages of one process's remote engine (see the module doc).
#[derive(Debug)]
pub struct OutageWatch {
    max_outage: Duration,
    active: AtomicBool,
    gave_up: AtomicBool,
    state: Mutex<WatchState>,
}

#[derive(Debug, Default)]
struct WatchState {
    current: Option<Current>,
    past: Vec<Outage>,
    /// When the latest outage ended: a fault of an attempt begun before then belongs to it
    /// (a slow call that was already failing), and opens no new outage.
    last_recovery: Option<Instant>,
}

#[derive(Debug)]
struct Current {
    since: Instant,
    started_ms: u64,
    cause: String,
    faults: u64,
    logged: Instant,
}

impl Current {
    fn record(&self, recovered: bool) -> Outage {
        Outage {
            started_ms: self.started_ms,
            seconds: self.since.elapsed().as_secs_f64(),
            cause: self.cause.clone(),
            faults: self.faults,
            recovered,
        }
    }
}

impl OutageWatch {
    /// A watch whose calls give up after `max_outage` of outage.
    pub fn new(max_outage: Duration) -> OutageWatch {
        OutageWatch {
            max_outage,
            active: AtomicBool::new(false),
            gave_up: AtomicBool::new(false),
            state: Mutex::new(WatchState::default()),
        }
    }

    /// How long an outage may last before calls give up (`[inference] max_outage_seconds`).
    pub fn max_outage(&self) -> Duration {
        self.max_outage
    }

    /// An outage is on: no new work should be fed.
    pub fn active(&self) -> bool {
        self.active.load(Ordering::SeqCst)
    }

    /// Some call gave up ([`OutageExceeded`]): the run should stop.
    pub fn gave_up(&self) -> bool {
        self.gave_up.load(Ordering::SeqCst)
    }

    /// An attempt begun at `attempt_began` met a transient fault: start the outage (or count
    /// it in the one on). `Ok(left)`: retry within `left`; `Err`: the outage has lasted
    /// `max_outage`, give up.
    pub fn fault(&self, attempt_began: Instant, cause: &str) -> Result<Duration, OutageExceeded> {
        let mut state = self.lock();
        let now = Instant::now();
        if state.current.is_none() {
            if state.last_recovery.is_some_and(|r| attempt_began < r) {
                // The server answered since this attempt began: retry without an outage.
                return Ok(self.max_outage);
            }
            tracing::warn!(
                "the server cannot be reached: {cause}; feeding paused, retrying for up to {:.0} s ([inference] max_outage_seconds)",
                self.max_outage.as_secs_f64()
            );
            state.current = Some(Current {
                since: now,
                started_ms: now_ms(),
                cause: cause.to_string(),
                faults: 0,
                logged: now,
            });
            self.active.store(true, Ordering::SeqCst);
        }
        let max = self.max_outage;
        let Some(current) = state.current.as_mut() else {
            return Ok(max);
        };
        current.faults += 1;
        let lasted = now.duration_since(current.since);
        if lasted >= max {
            self.gave_up.store(true, Ordering::SeqCst);
            return Err(OutageExceeded {
                seconds: lasted.as_secs_f64(),
                max: max.as_secs_f64(),
                cause: current.cause.clone(),
            });
        }
        if now.duration_since(current.logged) >= LOG_EVERY {
            current.logged = now;
            tracing::warn!(
                "the server has been unreachable for {:.0} s ({} failed attempts; latest: {cause}); still retrying",
                lasted.as_secs_f64(),
                current.faults
            );
        }
        Ok(max - lasted)
    }

    /// A call was answered: the outage on, if any, is over.
    pub fn answered(&self) {
        if !self.active() {
            return;
        }
        let mut state = self.lock();
        if let Some(current) = state.current.take() {
            let outage = current.record(true);
            tracing::warn!(
                "the server answers again after {:.1} s of outage ({} failed attempts); feeding resumed",
                outage.seconds,
                outage.faults
            );
            state.past.push(outage);
            state.last_recovery = Some(Instant::now());
            self.active.store(false, Ordering::SeqCst);
        }
    }

    /// Every outage so far, the one on (if any) last with `recovered: false`.
    pub fn outages(&self) -> Vec<Outage> {
        let state = self.lock();
        let mut all = state.past.clone();
        all.extend(state.current.as_ref().map(|c| c.record(false)));
        all
    }

    /// Seconds of outage so far, the one on included.
    pub fn total_seconds(&self) -> f64 {
        self.outages().iter().map(|o| o.seconds).sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, WatchState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_runs_from_the_first_fault_to_the_first_answer() {
        let watch = OutageWatch::new(Duration::from_secs(60));
        assert!(!watch.active());
        let began = Instant::now();
        let left = watch.fault(began, "cannot connect").unwrap();
        assert!(left <= Duration::from_secs(60));
        assert!(watch.active());
        watch.fault(Instant::now(), "HTTP 503").unwrap();
        let on = watch.outages();
        assert_eq!(on.len(), 1);
        assert_eq!(on[0].cause, "cannot connect", "the first fault names it");
        assert_eq!(on[0].faults, 2);
        assert!(!on[0].recovered);
        watch.answered();
        assert!(!watch.active());
        let done = watch.outages();
        assert_eq!(done.len(), 1);
        assert!(done[0].recovered);
        assert!(!watch.gave_up());
    }

    #[test]
    fn a_fault_of_an_attempt_begun_before_the_recovery_opens_no_outage() {
        let watch = OutageWatch::new(Duration::from_secs(60));
        let slow = Instant::now();
        watch.fault(Instant::now(), "reset").unwrap();
        watch.answered();
        watch.fault(slow, "timed out").unwrap();
        assert!(!watch.active());
        assert_eq!(watch.outages().len(), 1);
        // A fault of a later attempt is a new outage.
        watch.fault(Instant::now(), "cannot connect").unwrap();
        assert!(watch.active());
        assert_eq!(watch.outages().len(), 2);
    }

    #[test]
    fn a_call_gives_up_once_the_outage_lasted_max_outage() {
        let watch = OutageWatch::new(Duration::ZERO);
        let e = watch.fault(Instant::now(), "HTTP 502").unwrap_err();
        assert_eq!(e.cause, "HTTP 502");
        assert!(e.to_string().contains("max_outage_seconds"));
        assert!(watch.gave_up());
        assert!(watch.active(), "the outage is still on");
    }
}
