//! The inference layer of choice2seq: engines that score prompts over their legal
//! options or generate greedily, and the batching service that feeds them.
//!
//! | piece | module |
//! |---|---|
//! | the engine interface (jobs, outputs, identity) | [`engine`] |
//! | batching, de-duplication, backpressure | [`service`] |
//! | model identity (hashes of weights, tokenizer, template) | [`identity`] |
//! | model files checked before work (GGUF and safetensors headers) | [`model_files`] |
//! | tokenizers (GGUF metadata or `tokenizer.json`) and chat templates | [`tokenizer`] |
//! | models by Hugging Face Hub id, downloaded into the Hugging Face cache | `hub` |
//! | engines, one module each | [`engines`] |
//!
//! The dataflow (`c2s-operators`) depends on [`Engine`] and [`InferenceService`] only; the
//! mistral.rs engine is compiled here alone, behind the `mistralrs` feature (default on).

#![deny(missing_docs)]

pub mod engine;
pub mod engines;
pub mod error;
#[cfg(feature = "hub")]
pub mod hub;
pub mod identity;
pub mod model_files;
pub mod outage;
pub mod service;
pub mod tokenizer;

pub use c2s_records::WeightDtype;
pub use engine::{
    log_softmax, normalize_logprobs, ContinuousEngine, Engine, EngineAnswer, EngineJob,
    EngineStats, GenerateJob, GenerateOutput, HubIdentity, ModelIdentity, PromptSpec, ScoreJob,
    ScoreOutput,
};
#[cfg(feature = "mistralrs")]
pub use engines::mistralrs::{
    default_mode as mistralrs_default_mode, MistralRsEngine, MistralRsMode, MistralRsSettings,
    MISTRALRS_ENGINE,
};
#[cfg(feature = "openai")]
pub use engines::openai::{
    probe as probe_server, GenerationEndpoint, OpenAiEngine, OpenAiSettings, ScoringMethod,
    ServerInfo, OPENAI_ENGINE,
};
pub use engines::prefix::{prefix_engine_name, PrefixEngine, PrefixEngineConfig, PREFIX_ENGINE};
pub use engines::simulated::SimulatedEngine;
pub use error::EngineError;
pub use identity::{load_tokenizer, model_identity};
pub use model_files::check_model_files;
pub use outage::{Outage, OutageExceeded, OutageWatch};
pub use service::{AnswerTally, InferenceService, ServiceConfig, TallyCounts};
pub use tokenizer::render_budget::RenderBudgetAlloc;
pub use tokenizer::template::{ChatTemplate, TemplateTime, TemplateTimeError};
