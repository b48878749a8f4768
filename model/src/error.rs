//! Errors of the inference stage.

use std::path::PathBuf;

use thiserror::Error;

/// Why an engine could not load its model or answer a job. Cloneable, so that one failure
/// can answer every job of a batch.
#[derive(Debug, Clone, Error)]
pub enum EngineError {
    /// A model file or directory is missing, unreadable or malformed (built by
    /// [`EngineError::model_file`]).
    #[error("model file {path}: {reason}")]
    ModelFile {
        /// The file or directory at fault.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The model cannot be used: its metadata, configuration, weights or chat template are
    /// wrong or unsupported, or the engine (device, runtime, server) cannot load it.
    #[error("model: {0}")]
    Model(String),
    /// The tokenizer failed to encode or decode.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// A forward pass or decoding step failed after the model loaded.
    #[error("compute: {0}")]
    Compute(String),
    /// One job cannot be answered as asked (no options, options that do not tokenize apart,
    /// a server's answer that does not fit the request); the other jobs go on.
    #[error("request: {0}")]
    Request(String),
    /// The engine's thread ended (or its state was poisoned) before answering.
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
