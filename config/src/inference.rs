//! `[inference]`: batching, flow control and how long a remote server's outage is waited for.

use serde::{Deserialize, Serialize};

/// `[inference]`: batching and flow control.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct InferenceSection {
    /// Most requests per engine batch.
    pub max_batch: usize,
    /// Most distinct requests queued or computing (backpressure).
    pub max_in_flight: usize,
    /// Milliseconds the engine waits to fill a batch.
    pub linger_ms: u64,
    /// Most items whose trajectories are in progress at once.
    pub max_active_items: usize,
    /// Answer identical requests once per run (off only for baseline measurements).
    pub dedup: bool,
    /// How the batching service drives an engine that can batch continuously.
    pub batching: Batching,
    /// How long a remote server (`[model.openai]`) that cannot be reached — refused or reset
    /// connections, timeouts, HTTP 408/429/502/503/504 — is waited for, with feeding paused,
    /// before the run stops (exit 1, its directory resumable). Such faults are an outage, not
    /// failed requests.
    pub max_outage_seconds: f64,
}

/// `[inference] batching`: how requests reach an engine that batches continuously (the
/// prefix engine, mistral.rs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Batching {
    /// Each request joins as it comes and leaves once answered (the default).
    #[default]
    Continuous,
    /// A batch at a time: what is queued runs together and the next batch waits for the
    /// whole batch (the baseline of measurements).
    Batch,
}

impl Batching {
    /// The name as the config writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Batching::Continuous => "continuous",
            Batching::Batch => "batch",
        }
    }
}

impl Default for InferenceSection {
    fn default() -> Self {
        InferenceSection {
            max_batch: 32,
            max_in_flight: 256,
            linger_ms: 2,
            max_active_items: 64,
            dedup: true,
            batching: Batching::Continuous,
            max_outage_seconds: 900.0,
        }
    }
}

impl InferenceSection {
    /// Every bound is at least 1; errors are (field, message).
    pub(crate) fn check(&self) -> Result<(), (String, String)> {
        for (field, v) in [
            ("max_batch", self.max_batch),
            ("max_in_flight", self.max_in_flight),
            ("max_active_items", self.max_active_items),
        ] {
            if v == 0 {
                return Err((format!("inference.{field}"), "must be at least 1".into()));
            }
        }
        if !(self.max_outage_seconds.is_finite() && self.max_outage_seconds >= 0.0) {
            return Err((
                "inference.max_outage_seconds".into(),
                format!(
                    "must be a finite, non-negative number of seconds, got {}",
                    self.max_outage_seconds
                ),
            ));
        }
        Ok(())
    }
}
