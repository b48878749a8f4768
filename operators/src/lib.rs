//! The dataflow stages of the Choice2Seq pipeline, one file each:
//!
//! | stage | file |
//! |---|---|
//! | 2. candidate checks | [`validate`] |
//! | 3a. controller expansion | [`expand`] |
//! | 3b. Serial feedback loop (controllers) | [`serial_loop`] |
//! | 4. batched inference (operator; engines and batcher in `c2s-model`) | [`inference_op`] |
//! | 6a. Native/Serial pairing | [`pairing`] |
//! | 6b. incremental paired statistics | [`live_stats`] |
//! | 7. Parquet sinks (operator; writers in `c2s-sinks`) | [`sink_op`] |
//! | candidate coverage: case checks, decisions (the second protocol) | [`coverage`] |
//! | dialogue-state fields: dialogue checks, field construction (Appendix C) | [`dialogue`] |
//!
//! Sources (stage 1) live in `c2s-sources`; trajectory assembly (stage 5) is done by the
//! controllers of `c2s-protocol` when a trajectory completes inside the loop.

#![deny(missing_docs)]

use std::sync::atomic::{AtomicU64, Ordering};

pub mod coverage;
pub mod dialogue;
pub mod expand;
pub mod inference_op;
pub mod live_stats;
pub mod messages;
pub mod pairing;
pub mod serial_loop;
pub mod sink_op;
pub mod validate;

/// Rejected records the counters keep for a live monitor (the latest ones).
pub const RECENT_REJECTS: usize = 50;

/// Progress counters shared with the console.
#[derive(Debug, Default)]
pub struct Counters {
    /// Model requests, each counted once (the item loop counts a request when its answer
    /// comes back, the coverage and dialogue stages when they send it).
    pub requests: AtomicU64,
    /// Finished units of work: trajectories of an item run, decisions of a coverage run,
    /// dialogue runs (a dialogue under one spec) of a dialogue run.
    pub trajectories: AtomicU64,
    /// Records handed to the dataflow (items and records that will be rejected).
    pub items_in: AtomicU64,
    /// Records rejected (every one, while `recent_rejects` keeps only the latest).
    pub rejects: AtomicU64,
    /// The latest [`RECENT_REJECTS`] rejects, oldest first.
    pub recent_rejects: std::sync::Mutex<std::collections::VecDeque<messages::Reject>>,
}

impl Counters {
    /// Count a rejected record and keep it among the recent ones.
    pub fn add_reject(&self, reject: &messages::Reject) {
        self.rejects.fetch_add(1, Ordering::Relaxed);
        let mut recent = self
            .recent_rejects
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if recent.len() >= RECENT_REJECTS {
            recent.pop_front();
        }
        recent.push_back(reject.clone());
    }

    /// Count one model request.
    pub fn add_request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Count one finished trajectory (or decision, or dialogue run).
    pub fn add_trajectory(&self) {
        self.trajectories.fetch_add(1, Ordering::Relaxed);
    }

    /// The current value of one of the counters (a relaxed read: a live figure, not a
    /// synchronisation point).
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

/// The `N` streams of timely's `partition(N, …)`, in partition order (it returns them as a
/// vector of that length), so that each is named where it is taken.
pub(crate) fn partitions<const N: usize, S>(streams: Vec<S>) -> [S; N] {
    match streams.try_into() {
        Ok(streams) => streams,
        Err(streams) => unreachable!("partition({N}) gave {} streams", streams.len()),
    }
}
