//! The `rejects` dataset: bad input that was skipped (the run goes on).

use std::sync::Arc;

use arrow::datatypes::{DataType, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;

use crate::columns::{self as col, field, next, Cols};
use crate::error::RowError;
use crate::row::Row;

/// One row of `rejects/`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RejectRow {
    /// Where the input came from: a bank file, a Kafka topic, a generator name.
    pub source: String,
    /// Where in the source: `path:line`, `topic/partition@offset`, a row index.
    pub location: String,
    /// The item id, when it could be read.
    pub item_id: Option<String>,
    /// Why the input was rejected.
    pub reason: String,
}

impl RejectRow {
    /// A row from its four columns.
    pub fn new(
        source: impl Into<String>,
        location: impl Into<String>,
        item_id: Option<String>,
        reason: impl Into<String>,
    ) -> RejectRow {
        RejectRow {
            source: source.into(),
            location: location.into(),
            item_id,
            reason: reason.into(),
        }
    }
}

impl Row for RejectRow {
    const DATASET: &'static str = "rejects";

    fn schema() -> SchemaRef {
        use DataType::Utf8;
        Arc::new(Schema::new(vec![
            field("source", Utf8, false),
            field("location", Utf8, false),
            field("item_id", Utf8, true),
            field("reason", Utf8, false),
        ]))
    }

    fn to_batch(rows: &[Self]) -> Result<RecordBatch, ArrowError> {
        RecordBatch::try_new(
            Self::schema(),
            vec![
                col::utf8(rows.iter().map(|r| r.source.as_str())),
                col::utf8(rows.iter().map(|r| r.location.as_str())),
                col::opt_utf8(rows.iter().map(|r| r.item_id.as_deref())),
                col::utf8(rows.iter().map(|r| r.reason.as_str())),
            ],
        )
    }

    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, RowError> {
        let c = Cols::new(batch, Self::schema());
        let mut source = c.utf8("source")?.into_iter();
        let mut location = c.utf8("location")?.into_iter();
        let mut item_id = c.opt_utf8("item_id")?.into_iter();
        let mut reason = c.utf8("reason")?.into_iter();
        Ok((0..c.len())
            .map(|_| RejectRow {
                source: next(&mut source),
                location: next(&mut location),
                item_id: next(&mut item_id),
                reason: next(&mut reason),
            })
            .collect())
    }
}
