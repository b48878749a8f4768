//! The inference stage (SPEC §2.4): engines that score prompts over their legal options or
//! generate greedily, and the batching service that feeds them.
//!
//! - [`candle_engine::PrefixEngine`]: the fast CPU path — our own ragged-batch forward over
//!   the GGUF weights with candle (the tensor library under mistral.rs) and a prefix cache.
//! - [`mistralrs_engine::MistralRsEngine`]: the same model run by mistral.rs, as an
//!   independent reference (exact scores through a logits processor).
//! - [`simulated::SimulatedEngine`]: a seeded test double.
//! - [`service::InferenceService`]: batching, de-duplication and backpressure.

pub mod backend;
pub mod candle_engine;
pub mod driver;
pub mod error;
pub mod llama;
pub mod mistralrs_engine;
pub mod prefix_cache;
pub mod service;
pub mod simulated;
pub mod tokenizer;

pub use backend::{
    Engine, EngineStats, GenerateJob, GenerateOutput, ModelIdentity, PromptSpec, ScoreJob,
    ScoreOutput,
};
pub use candle_engine::{PrefixEngine, PrefixEngineConfig};
pub use error::EngineError;
pub use mistralrs_engine::MistralRsEngine;
pub use service::{InferenceService, ServiceConfig};
pub use simulated::SimulatedEngine;
