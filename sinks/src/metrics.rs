//! The `metrics` dataset: the rows of every statistics snapshot, with the time they were
//! written.

use std::sync::Arc;

use arrow::datatypes::{DataType, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use c2s_records::{Domain, Metric, MetricRow};

use crate::columns::{self as col, field, next, Cols};
use crate::error::RowError;
use crate::row::Row;

/// One row of `metrics/`: a [`MetricRow`] and `written_at_ms` (ms since the Unix epoch).
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsRow {
    /// The snapshot's metric (every column but `written_at_ms`).
    pub metric: MetricRow,
    /// When the row was written, in ms since the Unix epoch (one time per snapshot).
    pub written_at_ms: u64,
}

impl MetricsRow {
    /// `metric` stamped with `written_at_ms` (ms since the Unix epoch).
    pub fn new(metric: MetricRow, written_at_ms: u64) -> MetricsRow {
        MetricsRow {
            metric,
            written_at_ms,
        }
    }

    /// The row as a JSON object with the dataset's column names (the Kafka sink's message);
    /// undefined values are `null`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.metric).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("written_at_ms".into(), self.written_at_ms.into());
        }
        v
    }

    /// Every row of a snapshot, stamped with the same time.
    pub fn stamp(rows: impl IntoIterator<Item = MetricRow>, written_at_ms: u64) -> Vec<MetricsRow> {
        rows.into_iter()
            .map(|metric| MetricsRow::new(metric, written_at_ms))
            .collect()
    }
}

impl From<(&MetricRow, u64)> for MetricsRow {
    fn from((metric, written_at_ms): (&MetricRow, u64)) -> MetricsRow {
        MetricsRow::new(metric.clone(), written_at_ms)
    }
}

impl Row for MetricsRow {
    const DATASET: &'static str = "metrics";

    fn schema() -> SchemaRef {
        use DataType::{Float64, UInt32, UInt64, Utf8};
        Arc::new(Schema::new(vec![
            field("snapshot", UInt64, false),
            field("model", Utf8, false),
            field("domain", Utf8, false),
            field("length", UInt32, true),
            field("comparison", Utf8, false),
            field("metric", Utf8, false),
            field("value", Float64, true),
            field("numerator", UInt64, true),
            field("denominator", UInt64, true),
            field("ci_low", Float64, true),
            field("ci_high", Float64, true),
            field("ci_method", Utf8, true),
            field("written_at_ms", UInt64, false),
        ]))
    }

    fn to_batch(rows: &[Self]) -> Result<RecordBatch, ArrowError> {
        let m = || rows.iter().map(|r| &r.metric);
        let names: Vec<std::borrow::Cow<'static, str>> = m().map(|r| r.metric.name()).collect();
        RecordBatch::try_new(
            Self::schema(),
            vec![
                col::u64s(m().map(|r| r.snapshot)),
                col::utf8(m().map(|r| r.model.as_str())),
                // A `snapshot_error` row has no domain: the empty string.
                col::utf8(m().map(|r| r.domain.map_or("", Domain::as_str))),
                col::opt_u32s(m().map(|r| r.length)),
                col::utf8(m().map(|r| r.comparison.as_str())),
                col::utf8(names.iter().map(|n| n.as_ref())),
                col::opt_f64s(m().map(|r| r.value)),
                col::opt_u64s(m().map(|r| r.numerator)),
                col::opt_u64s(m().map(|r| r.denominator)),
                col::opt_f64s(m().map(|r| r.ci_low)),
                col::opt_f64s(m().map(|r| r.ci_high)),
                col::opt_utf8(m().map(|r| r.ci_method.as_deref())),
                col::u64s(rows.iter().map(|r| r.written_at_ms)),
            ],
        )
    }

    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, RowError> {
        let c = Cols::new(batch, Self::schema());
        let mut snapshot = c.u64("snapshot")?.into_iter();
        let mut model = c.utf8("model")?.into_iter();
        let mut domain = c.utf8("domain")?.into_iter();
        let mut length = c.opt_u32("length")?.into_iter();
        let mut comparison = c.utf8("comparison")?.into_iter();
        let mut metric = c.utf8("metric")?.into_iter();
        let mut value = c.opt_f64("value")?.into_iter();
        let mut numerator = c.opt_u64("numerator")?.into_iter();
        let mut denominator = c.opt_u64("denominator")?.into_iter();
        let mut ci_low = c.opt_f64("ci_low")?.into_iter();
        let mut ci_high = c.opt_f64("ci_high")?.into_iter();
        let mut ci_method = c.opt_utf8("ci_method")?.into_iter();
        let mut written_at_ms = c.u64("written_at_ms")?.into_iter();
        (0..c.len())
            .map(|_| {
                let domain_name: String = next(&mut domain);
                let domain =
                    match domain_name.as_str() {
                        "" => None,
                        d => Some(Domain::parse(d).ok_or_else(|| {
                            RowError::new("domain", format!("unknown domain `{d}`"))
                        })?),
                    };
                let metric_name: String = next(&mut metric);
                let metric = Metric::parse(&metric_name).map_err(|_| {
                    RowError::new("metric", format!("unknown metric `{metric_name}`"))
                })?;
                Ok(MetricsRow {
                    metric: MetricRow {
                        snapshot: next(&mut snapshot),
                        model: next(&mut model),
                        domain,
                        length: next(&mut length),
                        comparison: next(&mut comparison),
                        metric,
                        value: next(&mut value),
                        numerator: next(&mut numerator),
                        denominator: next(&mut denominator),
                        ci_low: next(&mut ci_low),
                        ci_high: next(&mut ci_high),
                        ci_method: next(&mut ci_method),
                    },
                    written_at_ms: next(&mut written_at_ms),
                })
            })
            .collect()
    }
}
