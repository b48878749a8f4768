//! The `outcomes` dataset: one row per paired Native/Serial outcome of an item.

use std::sync::Arc;

use arrow::datatypes::{DataType, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use c2s_records::comparison_label;
use c2s_records::{Domain, PairedOutcome};

use crate::columns::{self as col, field, next, Cols};
use crate::error::RowError;
use crate::row::Row;

/// One row of `outcomes/`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OutcomeRow {
    /// The item both trajectories ran.
    pub item_id: String,
    /// `arithmetic` or `lexical`.
    pub domain: String,
    /// Target length L.
    pub length: u32,
    /// Model name.
    pub model: String,
    /// Arm label of the selecting (left, reference) side.
    pub native_arm: String,
    /// Arm label of the constructing (right, compared) side.
    pub serial_arm: String,
    /// `<native_arm> vs <serial_arm>` (as `c2s_records::comparison_label`).
    pub comparison: String,
    /// The native side succeeded: exact match, or for a comparison of copy arms fidelity to
    /// the plan.
    pub native_correct: bool,
    /// The serial side succeeded (same rule as `native_correct`).
    pub serial_correct: bool,
    /// Semantic-bridge items: the gold pattern, their bootstrap stratum (A.6).
    pub pattern: Option<String>,
}

impl OutcomeRow {
    /// The row as a JSON object with the dataset's column names (the Kafka sink's message).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "item_id": self.item_id,
            "domain": self.domain,
            "length": self.length,
            "model": self.model,
            "native_arm": self.native_arm,
            "serial_arm": self.serial_arm,
            "comparison": self.comparison,
            "native_correct": self.native_correct,
            "serial_correct": self.serial_correct,
        });
        // Only semantic-bridge outcomes carry a pattern; other messages keep their keys.
        if let Some(p) = &self.pattern {
            v["pattern"] = serde_json::json!(p);
        }
        v
    }
}

impl From<&PairedOutcome> for OutcomeRow {
    fn from(o: &PairedOutcome) -> OutcomeRow {
        OutcomeRow {
            item_id: o.item_id.clone(),
            domain: o.domain.as_str().to_string(),
            length: u32::try_from(o.length).unwrap_or(u32::MAX),
            model: o.model.clone(),
            native_arm: o.native_arm.clone(),
            serial_arm: o.serial_arm.clone(),
            comparison: comparison_label(&o.native_arm, &o.serial_arm),
            native_correct: o.native_correct,
            serial_correct: o.serial_correct,
            pattern: o.pattern.clone(),
        }
    }
}

impl OutcomeRow {
    /// The paired outcome this row records (for offline statistics).
    pub fn to_outcome(&self) -> Result<PairedOutcome, RowError> {
        let domain = Domain::parse(&self.domain)
            .ok_or_else(|| RowError::new("domain", format!("unknown domain `{}`", self.domain)))?;
        Ok(PairedOutcome {
            item_id: self.item_id.clone(),
            domain,
            length: self.length as usize,
            model: self.model.clone(),
            native_arm: self.native_arm.clone(),
            serial_arm: self.serial_arm.clone(),
            native_correct: self.native_correct,
            serial_correct: self.serial_correct,
            pattern: self.pattern.clone(),
        })
    }
}

impl Row for OutcomeRow {
    const DATASET: &'static str = "outcomes";

    fn schema() -> SchemaRef {
        use DataType::{Boolean, UInt32, Utf8};
        Arc::new(Schema::new(vec![
            field("item_id", Utf8, false),
            field("domain", Utf8, false),
            field("length", UInt32, false),
            field("model", Utf8, false),
            field("native_arm", Utf8, false),
            field("serial_arm", Utf8, false),
            field("comparison", Utf8, false),
            field("native_correct", Boolean, false),
            field("serial_correct", Boolean, false),
            field("pattern", Utf8, true),
        ]))
    }

    fn to_batch(rows: &[Self]) -> Result<RecordBatch, ArrowError> {
        RecordBatch::try_new(
            Self::schema(),
            vec![
                col::utf8(rows.iter().map(|r| r.item_id.as_str())),
                col::utf8(rows.iter().map(|r| r.domain.as_str())),
                col::u32s(rows.iter().map(|r| r.length)),
                col::utf8(rows.iter().map(|r| r.model.as_str())),
                col::utf8(rows.iter().map(|r| r.native_arm.as_str())),
                col::utf8(rows.iter().map(|r| r.serial_arm.as_str())),
                col::utf8(rows.iter().map(|r| r.comparison.as_str())),
                col::bools(rows.iter().map(|r| r.native_correct)),
                col::bools(rows.iter().map(|r| r.serial_correct)),
                col::opt_utf8(rows.iter().map(|r| r.pattern.as_deref())),
            ],
        )
    }

    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, RowError> {
        let c = Cols::new(batch, Self::schema());
        let mut item_id = c.utf8("item_id")?.into_iter();
        let mut domain = c.utf8("domain")?.into_iter();
        let mut length = c.u32("length")?.into_iter();
        let mut model = c.utf8("model")?.into_iter();
        let mut native_arm = c.utf8("native_arm")?.into_iter();
        let mut serial_arm = c.utf8("serial_arm")?.into_iter();
        let mut comparison = c.utf8("comparison")?.into_iter();
        let mut native_correct = c.bool("native_correct")?.into_iter();
        let mut serial_correct = c.bool("serial_correct")?.into_iter();
        let mut pattern = c.opt_utf8("pattern")?.into_iter();
        Ok((0..c.len())
            .map(|_| OutcomeRow {
                item_id: next(&mut item_id),
                domain: next(&mut domain),
                length: next(&mut length),
                model: next(&mut model),
                native_arm: next(&mut native_arm),
                serial_arm: next(&mut serial_arm),
                comparison: next(&mut comparison),
                native_correct: next(&mut native_correct),
                serial_correct: next(&mut serial_correct),
                pattern: next(&mut pattern),
            })
            .collect())
    }
}
