//! The dataflow stages of the Choice2Seq pipeline (SPEC §2), one file each:
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

/// Progress counters shared with the console.
#[derive(Debug, Default)]
pub struct Counters {
    pub requests: AtomicU64,
    pub trajectories: AtomicU64,
    pub items_in: AtomicU64,
    pub rejects: AtomicU64,
}

impl Counters {
    pub fn add_request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    pub fn add_trajectory(&self) {
        self.trajectories.fetch_add(1, Ordering::Relaxed);
    }

    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}
