//! The inference stage (SPEC §2.4): engines that score prompts over their legal options or
//! generate greedily, and the batching service that feeds them.
//!
//! - [`prefix_engine::PrefixEngine`]: the fast CPU path — our own ragged-batch forward over
//!   the GGUF weights ([`llama`]) and a prefix cache ([`prefix_cache`]).
//! - [`mistralrs_engine::MistralRsEngine`]: the same model run by mistral.rs, as an
//!   independent reference (exact scores through a logits processor).
//! - [`simulated::SimulatedEngine`]: a seeded test double.
//! - [`service::InferenceService`]: batching, de-duplication and backpressure.

pub mod backend;
pub mod driver;
pub mod error;
pub mod llama;
pub mod mistralrs_engine;
pub mod prefix_cache;
pub mod prefix_engine;
pub mod service;
pub mod simulated;
pub mod tokenizer;

pub use backend::{
    Engine, EngineStats, GenerateJob, GenerateOutput, ModelIdentity, PromptSpec, ScoreJob,
    ScoreOutput,
};
pub use error::EngineError;
pub use mistralrs_engine::{MistralRsEngine, MISTRALRS_ENGINE};
pub use prefix_engine::{PrefixEngine, PrefixEngineConfig, PREFIX_ENGINE};
pub use service::{InferenceService, ServiceConfig};
pub use simulated::SimulatedEngine;
