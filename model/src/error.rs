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
    /// A kernel family forced by the environment that this process cannot use.
    #[error(transparent)]
    Kernels(#[from] crate::engines::prefix::kernels::KernelChoiceError),
    /// A remote server could not be reached for longer than the run waits
    /// (`[inference] max_outage_seconds`): no failure of the model.
    #[error(transparent)]
    Outage(#[from] crate::outage::OutageExceeded),
}

impl EngineError {
    /// A problem with the model file (or directory) at `path`.
    pub fn model_file(path: &std::path::Path, reason: impl ToString) -> EngineError {
        EngineError::ModelFile {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }
}
