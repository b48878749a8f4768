//! The [`Row`] trait: a dataset's row type, its Arrow schema and its batch conversions.

use arrow::datatypes::SchemaRef;
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;

use crate::error::RowError;

/// Version of the on-disk schemas, stored in every part's key-value metadata
/// (`c2s.schema_version`) next to the dataset name (`c2s.dataset`).
pub const SCHEMA_VERSION: &str = "1";

/// A row of one Parquet dataset of a run directory.
pub trait Row: Sized {
    /// The dataset's directory under the run directory (`requests`, `trajectories`, …).
    const DATASET: &'static str;

    /// The Arrow schema of the dataset (snake_case columns; see `SCHEMAS.md`).
    fn schema() -> SchemaRef;

    /// Rows as one record batch in [`Row::schema`].
    fn to_batch(rows: &[Self]) -> Result<RecordBatch, ArrowError>;

    /// Rows of a record batch. Columns are matched by name; a column of another type is cast
    /// to the schema's type; a missing nullable column reads as nulls.
    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, RowError>;
}
