//! Errors of the sinks. Every error that touches the file system names the path.

use std::path::PathBuf;

use arrow::error::ArrowError;
use parquet::errors::ParquetError;

/// A row (or a column of a batch) that does not fit its dataset's schema.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("column `{column}`: {message}")]
pub struct RowError {
    pub column: String,
    pub message: String,
}

impl RowError {
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
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: parquet: {source}")]
    Parquet {
        path: PathBuf,
        #[source]
        source: ParquetError,
    },
    #[error("{path}: arrow: {source}")]
    Arrow {
        path: PathBuf,
        #[source]
        source: ArrowError,
    },
    /// A row of a part file (0-based within the file) that does not decode.
    #[error("{path}: row {row}: {source}")]
    Row {
        path: PathBuf,
        row: usize,
        #[source]
        source: RowError,
    },
    /// A column of a part file that is missing or has the wrong type.
    #[error("{path}: {source}")]
    Column {
        path: PathBuf,
        #[source]
        source: RowError,
    },
    #[error("{path}: json: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
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
