//! Errors of the sinks. Every error that touches the file system names the path.

use std::path::PathBuf;

use arrow::error::ArrowError;
use parquet::errors::ParquetError;

/// A row (or a column of a batch) that does not fit its dataset's schema.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("column `{column}`: {message}")]
pub struct RowError {
    /// The column's name in the dataset's schema.
    pub column: String,
    /// What is wrong with it.
    pub message: String,
}

impl RowError {
    /// `message` about `column`.
    pub fn new(column: impl Into<String>, message: impl Into<String>) -> RowError {
        RowError {
            column: column.into(),
            message: message.into(),
        }
    }
}

/// Errors of the Parquet sinks, readers and the manifest.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// A file or directory that cannot be created, read, written, synced or renamed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// A part file that cannot be encoded or decoded as Parquet.
    #[error("{path}: parquet: {source}")]
    Parquet {
        /// The part file (its hidden temporary name while it is written).
        path: PathBuf,
        /// The Parquet library's error.
        #[source]
        source: ParquetError,
    },
    /// Rows that cannot be turned into a record batch, or a batch that cannot be read.
    #[error("{path}: arrow: {source}")]
    Arrow {
        /// The part file.
        path: PathBuf,
        /// Arrow's error.
        #[source]
        source: ArrowError,
    },
    /// A row of a part file (0-based within the file) that does not decode.
    #[error("{path}: row {row}: {source}")]
    Row {
        /// The part file.
        path: PathBuf,
        /// The row's index in the file (0-based).
        row: usize,
        /// The column that does not decode, and why.
        #[source]
        source: RowError,
    },
    /// A column of a part file that is missing or has the wrong type.
    #[error("{path}: {source}")]
    Column {
        /// The part file.
        path: PathBuf,
        /// The column, and what is wrong with it.
        #[source]
        source: RowError,
    },
    /// A JSON file (the manifest) that cannot be written or parsed.
    #[error("{path}: json: {source}")]
    Json {
        /// The JSON file.
        path: PathBuf,
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
    /// A refusal with no underlying error, told in words (a part that exists already, a part
    /// configuration that cannot work).
    #[error("{path}: {message}")]
    Invalid {
        /// The file or dataset directory concerned.
        path: PathBuf,
        /// Why it is refused.
        message: String,
    },
}

impl SinkError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> SinkError {
        SinkError::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn parquet(path: impl Into<PathBuf>, source: ParquetError) -> SinkError {
        SinkError::Parquet {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn arrow(path: impl Into<PathBuf>, source: ArrowError) -> SinkError {
        SinkError::Arrow {
            path: path.into(),
            source,
        }
    }

    /// The path the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            SinkError::Io { path, .. }
            | SinkError::Parquet { path, .. }
            | SinkError::Arrow { path, .. }
            | SinkError::Row { path, .. }
            | SinkError::Column { path, .. }
            | SinkError::Json { path, .. }
            | SinkError::Invalid { path, .. } => path,
        }
    }
}
