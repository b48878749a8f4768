//! Errors of the inference stage.

use std::path::PathBuf;

use thiserror::Error;

#[derive(Debug, Clone, Error)]
pub enum EngineError {
    #[error("model file {path}: {reason}")]
    ModelFile { path: PathBuf, reason: String },
    #[error("model: {0}")]
    Model(String),
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    #[error("compute: {0}")]
    Compute(String),
    #[error("request: {0}")]
    Request(String),
    #[error("the inference engine stopped")]
    Stopped,
}
