//! Readers of part directories, for resume and for offline statistics. Every `*.parquet`
//! file of a dataset directory is read in name order; hidden files (the temporary names of
//! parts being written) and other names are ignored. A missing directory reads as empty.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use arrow::record_batch::RecordBatch;
use c2s_records::{PairedOutcome, Response, Trajectory};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;

use crate::columns::{next, Cols};
use crate::error::SinkError;
use crate::metrics::MetricsRow;
use crate::outcomes::OutcomeRow;
use crate::part::is_part_name;
use crate::rejects::RejectRow;
use crate::requests::{response_from_row, RequestRow};
use crate::row::Row;
use crate::trajectories::TrajectoryRow;

/// `run_dir/<R::DATASET>`.
pub fn dataset_dir<R: Row>(run_dir: &Path) -> PathBuf {
    run_dir.join(R::DATASET)
}

/// The complete parts (`*.parquet`, not hidden) of a dataset directory, sorted by name.
pub fn list_parts(dir: &Path) -> Result<Vec<PathBuf>, SinkError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(SinkError::io(dir, e)),
    };
    let mut parts = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| SinkError::io(dir, e))?;
        let name = entry.file_name();
        if name.to_str().is_some_and(is_part_name) {
            let path = entry.path();
            if path.is_file() {
                parts.push(path);
            }
        }
    }
    parts.sort();
    Ok(parts)
}

/// The record batches of one part, restricted to `columns` when given (columns absent from
/// the file are skipped; the row decoders decide whether that is an error).
fn read_batches(path: &Path, columns: Option<&[&str]>) -> Result<Vec<RecordBatch>, SinkError> {
    let file = File::open(path).map_err(|e| SinkError::io(path, e))?;
    let mut builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| SinkError::parquet(path, e))?;
    if let Some(columns) = columns {
        let schema = builder.schema().clone();
        let roots: Vec<usize> = columns
            .iter()
            .filter_map(|c| schema.index_of(c).ok())
            .collect();
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        builder = builder.with_projection(mask);
    }
    let reader = builder.build().map_err(|e| SinkError::parquet(path, e))?;
    reader
        .map(|b| b.map_err(|e| SinkError::arrow(path, e)))
        .collect()
}

/// The rows of one part file.
pub fn read_part<R: Row>(path: &Path) -> Result<Vec<R>, SinkError> {
    let mut rows = Vec::new();
    for batch in read_batches(path, None)? {
        rows.extend(R::from_batch(&batch).map_err(|source| SinkError::Column {
            path: path.to_path_buf(),
            source,
        })?);
    }
    Ok(rows)
}

/// The rows of every part of a dataset directory.
pub fn read_rows<R: Row>(dir: &Path) -> Result<Vec<R>, SinkError> {
    let mut rows = Vec::new();
    for path in list_parts(dir)? {
        rows.extend(read_part::<R>(&path)?);
    }
    Ok(rows)
}

/// Decodes a projected batch with `f`, attributing errors to `path`.
pub(crate) fn for_each_batch(
    dir: &Path,
    columns: &[&str],
    mut f: impl FnMut(&Path, &RecordBatch) -> Result<(), SinkError>,
) -> Result<(), SinkError> {
    for path in list_parts(dir)? {
        for batch in read_batches(&path, Some(columns))? {
            f(&path, &batch)?;
        }
    }
    Ok(())
}

pub(crate) fn column_error(path: &Path) -> impl Fn(crate::error::RowError) -> SinkError + '_ {
    move |source| SinkError::Column {
        path: path.to_path_buf(),
        source,
    }
}

/// Two string columns of every row of a dataset directory.
fn read_pairs(
    dir: &Path,
    schema_of: arrow::datatypes::SchemaRef,
    a: &str,
    b: &str,
) -> Result<BTreeSet<(String, String)>, SinkError> {
    let mut keys = BTreeSet::new();
    for_each_batch(dir, &[a, b], |path, batch| {
        let c = Cols::new(batch, schema_of.clone());
        let xs = c.utf8(a).map_err(column_error(path))?;
        let ys = c.utf8(b).map_err(column_error(path))?;
        keys.extend(xs.into_iter().zip(ys));
        Ok(())
    })?;
    Ok(keys)
}

/// `(item_id, arm)` of every trajectory written (the trajectories a resumed run skips).
pub fn read_trajectory_keys(dir: &Path) -> Result<BTreeSet<(String, String)>, SinkError> {
    read_pairs(dir, TrajectoryRow::schema(), "item_id", "arm")
}

/// Every trajectory row.
pub fn read_trajectories(dir: &Path) -> Result<Vec<TrajectoryRow>, SinkError> {
    read_rows(dir)
}

/// Every trajectory, decoded back into records (steps from `steps_json`).
pub fn read_trajectory_records(dir: &Path) -> Result<Vec<Trajectory>, SinkError> {
    let mut out = Vec::new();
    for path in list_parts(dir)? {
        for (row, t) in read_part::<TrajectoryRow>(&path)?.iter().enumerate() {
            out.push(t.to_trajectory().map_err(|source| SinkError::Row {
                path: path.clone(),
                row,
                source,
            })?);
        }
    }
    Ok(out)
}

/// Every paired outcome row.
pub fn read_outcomes(dir: &Path) -> Result<Vec<OutcomeRow>, SinkError> {
    read_rows(dir)
}

/// Every paired outcome, decoded back into records.
pub fn read_paired_outcomes(dir: &Path) -> Result<Vec<PairedOutcome>, SinkError> {
    let mut out = Vec::new();
    for path in list_parts(dir)? {
        for (row, o) in read_part::<OutcomeRow>(&path)?.iter().enumerate() {
            out.push(o.to_outcome().map_err(|source| SinkError::Row {
                path: path.clone(),
                row,
                source,
            })?);
        }
    }
    Ok(out)
}

/// `(item_id, comparison)` of every paired outcome written.
pub fn read_outcome_keys(dir: &Path) -> Result<BTreeSet<(String, String)>, SinkError> {
    read_pairs(dir, OutcomeRow::schema(), "item_id", "comparison")
}

/// Every request row.
pub fn read_requests(dir: &Path) -> Result<Vec<RequestRow>, SinkError> {
    read_rows(dir)
}

/// The first row of a dataset directory whose string column `key` is `value` and that
/// `matches`: only `key` is read from each part until a part holds `value`, then that part's
/// rows are decoded.
pub(crate) fn find_row<R: Row>(
    dir: &Path,
    key: &str,
    value: &str,
    matches: impl Fn(&R) -> bool,
) -> Result<Option<R>, SinkError> {
    for path in list_parts(dir)? {
        let mut holds = false;
        for batch in read_batches(&path, Some(&[key][..]))? {
            let c = Cols::new(&batch, R::schema());
            if c.utf8(key)
                .map_err(column_error(&path))?
                .iter()
                .any(|v| v == value)
            {
                holds = true;
                break;
            }
        }
        if holds {
            if let Some(row) = read_part::<R>(&path)?.into_iter().find(|r| matches(r)) {
                return Ok(Some(row));
            }
        }
    }
    Ok(None)
}

/// The row of request `request_id`, if recorded (a failed attempt and a later answer of the
/// same request are two rows: the first in file order is returned, an answered one first).
pub fn find_request(dir: &Path, request_id: &str) -> Result<Option<RequestRow>, SinkError> {
    let answered = find_row(dir, "request_id", request_id, |r: &RequestRow| {
        r.request_id == request_id && r.error.is_none()
    })?;
    match answered {
        Some(r) => Ok(Some(r)),
        None => find_row(dir, "request_id", request_id, |r: &RequestRow| {
            r.request_id == request_id
        }),
    }
}

/// Columns [`response_from_row`] needs (prompts are not read back).
const ANSWER_COLUMNS: &[&str] = &[
    "request_id",
    "prompt_key",
    "probabilities",
    "response_text",
    "finish_reason",
    "truncated",
    "prompt_tokens",
    "completion_tokens",
    "latency_ms",
    "cached",
    "error",
    "option_logprobs",
    "option_token_counts",
    "option_token_logprobs",
];

/// `(prompt_key, Response)` of every answered request, in file order, for resume. Rows of
/// failed requests (`error` set) are skipped: those calls are repeated. A row that records
/// no answer without an error is an error.
pub fn read_request_answers(dir: &Path) -> Result<Vec<(String, Response)>, SinkError> {
    let mut out = Vec::new();
    for path in list_parts(dir)? {
        let mut offset = 0;
        for batch in read_batches(&path, Some(ANSWER_COLUMNS))? {
            let c = Cols::new(&batch, RequestRow::schema());
            let err = column_error(&path);
            let mut request_id = c.utf8("request_id").map_err(&err)?.into_iter();
            let mut prompt_key = c.utf8("prompt_key").map_err(&err)?.into_iter();
            let mut probabilities = c.opt_list_f64("probabilities").map_err(&err)?.into_iter();
            let mut response_text = c.opt_utf8("response_text").map_err(&err)?.into_iter();
            let mut finish_reason = c.opt_utf8("finish_reason").map_err(&err)?.into_iter();
            let mut truncated = c.opt_bool("truncated").map_err(&err)?.into_iter();
            let mut prompt_tokens = c.u32("prompt_tokens").map_err(&err)?.into_iter();
            let mut completion_tokens = c.u32("completion_tokens").map_err(&err)?.into_iter();
            let mut latency_ms = c.f64("latency_ms").map_err(&err)?.into_iter();
            let mut cached = c.bool("cached").map_err(&err)?.into_iter();
            let mut error = c.opt_utf8("error").map_err(&err)?.into_iter();
            let mut option_logprobs = c.opt_list_f64("option_logprobs").map_err(&err)?.into_iter();
            let mut option_token_counts = c
                .opt_list_u32("option_token_counts")
                .map_err(&err)?
                .into_iter();
            let mut option_token_logprobs = c
                .opt_list_f64("option_token_logprobs")
                .map_err(&err)?
                .into_iter();
            for i in 0..c.len() {
                let row = RequestRow {
                    request_id: next(&mut request_id),
                    prompt_key: next(&mut prompt_key),
                    probabilities: next(&mut probabilities),
                    response_text: next(&mut response_text),
                    finish_reason: next(&mut finish_reason),
                    truncated: next(&mut truncated),
                    prompt_tokens: next(&mut prompt_tokens),
                    completion_tokens: next(&mut completion_tokens),
                    latency_ms: next(&mut latency_ms),
                    cached: next(&mut cached),
                    error: next(&mut error),
                    option_logprobs: next(&mut option_logprobs),
                    option_token_counts: next(&mut option_token_counts),
                    option_token_logprobs: next(&mut option_token_logprobs),
                    ..RequestRow::default()
                };
                if row.error.is_some() {
                    continue;
                }
                out.push(response_from_row(&row).map_err(|source| SinkError::Row {
                    path: path.clone(),
                    row: offset + i,
                    source,
                })?);
            }
            offset += c.len();
        }
    }
    Ok(out)
}

/// Every metrics row.
pub fn read_metrics(dir: &Path) -> Result<Vec<MetricsRow>, SinkError> {
    read_rows(dir)
}

/// Every reject row.
pub fn read_rejects(dir: &Path) -> Result<Vec<RejectRow>, SinkError> {
    read_rows(dir)
}

/// The largest `snapshot` in a metrics directory (`None` when nothing was written), so that
/// a resumed run numbers its snapshots after it.
pub fn max_snapshot(metrics_dir: &Path) -> Result<Option<u64>, SinkError> {
    let mut max: Option<u64> = None;
    for_each_batch(metrics_dir, &["snapshot"], |path, batch| {
        let c = Cols::new(batch, MetricsRow::schema());
        for s in c.u64("snapshot").map_err(column_error(path))? {
            max = Some(max.map_or(s, |m| m.max(s)));
        }
        Ok(())
    })?;
    Ok(max)
}

/// Every coverage decision (the `decisions/` dataset).
pub fn read_decisions(dir: &Path) -> Result<Vec<c2s_records::Decision>, SinkError> {
    Ok(read_rows::<crate::DecisionRow>(dir)?
        .into_iter()
        .map(|r| r.0)
        .collect())
}

/// Every dialogue field turn (the `dialogue_turns/` dataset).
pub fn read_field_turns(dir: &Path) -> Result<Vec<c2s_records::FieldTurn>, SinkError> {
    Ok(read_rows::<crate::FieldTurnRow>(dir)?
        .into_iter()
        .map(|r| r.0)
        .collect())
}
