//! [`SimulatedEngine`]: a seeded test double that answers without a model, for fast pipeline
//! tests. Never used by the README's main command or by benchmarks.
//!
//! Scores are a deterministic function of (seed, prompt, option): a pseudo-random logit per
//! option. Generation answers one of the prompt's `allowed_values` (or `choices` codes), picked
//! the same way, so strict parsing succeeds.

use sha2::{Digest, Sha256};

use c2s_records::FinishReason;

use crate::engine::{
    normalize_logprobs, Engine, EngineStats, GenerateJob, GenerateOutput, ModelIdentity,
    PromptSpec, ScoreJob, ScoreOutput,
};
use crate::error::EngineError;

/// The test double: answers every job from a hash of (seed, prompt, option), with no model
/// and no latency.
pub struct SimulatedEngine {
    seed: u64,
    identity: ModelIdentity,
    stats: EngineStats,
}

impl SimulatedEngine {
    /// An engine whose answers are fixed by `seed` (the seed also shows in the model label,
    /// so runs with different seeds never share a label).
    pub fn new(seed: u64) -> SimulatedEngine {
        SimulatedEngine {
            seed,
            identity: ModelIdentity {
                name: "simulated".into(),
                path: "-".into(),
                // The seed's hex digits first, so that the model label (`simulated@` and the
                // first twelve digits) tells seeds apart.
                file_sha256: format!("{:0<64}", format!("{seed:x}")),
                tokenizer: "none".into(),
                chat_template_sha256: "-".into(),
                engine: "simulated (test double)".into(),
                remote: None,
                hub: None,
            },
            stats: EngineStats::default(),
        }
    }

    fn unit(&self, prompt: &PromptSpec, what: &str) -> f64 {
        let mut h = Sha256::new();
        h.update(self.seed.to_le_bytes());
        h.update(prompt.system.as_deref().unwrap_or("").as_bytes());
        h.update(prompt.user.as_bytes());
        h.update(prompt.assistant_prefix.as_deref().unwrap_or("").as_bytes());
        h.update(what.as_bytes());
        let d = h.finalize();
        let mut b = [0u8; 8];
        b.copy_from_slice(&d[..8]);
        (u64::from_le_bytes(b) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn prompt_len(p: &PromptSpec) -> u32 {
        (p.user.len() / 4) as u32 + 20
    }
}

impl Engine for SimulatedEngine {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    fn score(&mut self, jobs: &[ScoreJob]) -> Vec<Result<ScoreOutput, EngineError>> {
        jobs.iter()
            .map(|j| {
                let logprobs: Vec<f64> = j
                    .options
                    .iter()
                    .map(|o| -4.0 * self.unit(&j.prompt, o))
                    .collect();
                self.stats.prompt_tokens += u64::from(Self::prompt_len(&j.prompt));
                Ok(ScoreOutput {
                    probabilities: normalize_logprobs(&logprobs),
                    token_logprobs: logprobs.iter().map(|&l| vec![l]).collect(),
                    logprobs,
                    prompt_tokens: Self::prompt_len(&j.prompt),
                    reused_tokens: 0,
                    latency_ms: 0.0,
                })
            })
            .collect()
    }

    fn generate(&mut self, jobs: &[GenerateJob]) -> Vec<Result<GenerateOutput, EngineError>> {
        jobs.iter()
            .map(|j| {
                let user: serde_json::Value =
                    serde_json::from_str(&j.prompt.user).unwrap_or_default();
                let listed: Vec<String> = match (&user["allowed_values"], &user["choices"]) {
                    (serde_json::Value::Array(a), _) => a
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect(),
                    (_, serde_json::Value::Object(m)) => m.keys().cloned().collect(),
                    _ => vec![],
                };
                let text = if listed.is_empty() {
                    String::new()
                } else {
                    let i = (self.unit(&j.prompt, "gen") * listed.len() as f64) as usize;
                    listed[i.min(listed.len() - 1)].clone()
                };
                Ok(GenerateOutput {
                    text,
                    tokens: vec![],
                    finish_reason: FinishReason::Stop,
                    truncated: false,
                    prompt_tokens: Self::prompt_len(&j.prompt),
                    completion_tokens: 2,
                    reused_tokens: 0,
                    latency_ms: 0.0,
                })
            })
            .collect()
    }

    fn stats(&self) -> EngineStats {
        self.stats
    }
}
