//! Parquet bank files: one item per row, columns named like the item's JSON fields.
//!
//! Each row becomes the JSON object text of the item (columns in schema order, null values
//! left out) so that Parquet items are validated by exactly the same code as JSONL items and
//! Kafka messages. Strings, integers, floats, booleans, lists and structs map to their JSON
//! counterparts; binary values must be UTF-8; dictionary-encoded columns are decoded; other
//! logical types (decimals, dates, timestamps, …) are written as their display strings.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{
    DataType, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow::error::ArrowError;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use serde_json::{Map, Number, Value};
use thiserror::Error;

use crate::{SourceError, SourceRecord};

const BATCH_ROWS: usize = 1024;

/// Why a row of a Parquet items file gives no JSON item. It becomes the text of the record's
/// `Err` payload, after the row's location: that payload travels through the dataflow to the
/// run's `rejects/`, so [`ParquetRecords`] turns it into a string.
#[derive(Debug, Error)]
enum ParquetItemError {
    /// A top-level column of the row holds a value that cannot be written as JSON.
    #[error("column `{name}`: {source}")]
    Column {
        name: String,
        #[source]
        source: Box<ParquetItemError>,
    },
    /// A field of a struct value cannot be written as JSON.
    #[error("field `{name}`: {source}")]
    Field {
        name: String,
        #[source]
        source: Box<ParquetItemError>,
    },
    /// A binary value (items are text: it must be UTF-8).
    #[error("binary value is not UTF-8 ({source})")]
    NotUtf8 {
        #[source]
        source: std::str::Utf8Error,
    },
    /// A dictionary-encoded value that arrow cannot cast to its value type.
    #[error("cannot decode dictionary value: {source}")]
    Dictionary {
        #[source]
        source: ArrowError,
    },
    /// A value of a type with no JSON counterpart here that arrow cannot display either.
    #[error("cannot display {data_type} value: {source}")]
    UnsupportedType {
        data_type: DataType,
        #[source]
        source: ArrowError,
    },
    /// The row's JSON object could not be serialized.
    #[error("cannot write JSON: {source}")]
    Json {
        #[source]
        source: serde_json::Error,
    },
    /// The file cannot be decoded from this row on: no later row is read.
    #[error("cannot decode rows from here on: {source}")]
    Decode {
        #[source]
        source: ArrowError,
    },
}

/// Open a Parquet items file and iterate over its rows as JSON item records.
///
/// Locations are `path#row` with a 0-based row index (as in pyarrow and DuckDB's
/// `file_row_number`). A row holding a value that cannot be written as JSON becomes a record
/// whose payload is an error naming the row and column; a decoding error in the middle of the
/// file ends the iteration with one such record. `limit` caps the number of records.
pub fn read_parquet_items(
    path: impl AsRef<Path>,
    limit: Option<usize>,
) -> Result<ParquetRecords, SourceError> {
    let path = path.as_ref().to_path_buf();
    let file = File::open(&path).map_err(|source| SourceError::Open {
        path: path.clone(),
        source,
    })?;
    let parquet_err = |source| SourceError::Parquet {
        path: path.clone(),
        source,
    };
    let mut builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(parquet_err)?
        .with_batch_size(BATCH_ROWS);
    if let Some(limit) = limit {
        builder = builder.with_limit(limit);
    }
    let reader = builder.build().map_err(parquet_err)?;
    Ok(ParquetRecords {
        source: format!("parquet:{}", path.display()),
        display: path.display().to_string(),
        path,
        reader,
        batch: None,
        batch_row: 0,
        row: 0,
        limit,
        done: false,
    })
}

/// Rows of a Parquet items file as records; see [`read_parquet_items`].
pub struct ParquetRecords {
    path: PathBuf,
    source: String,
    display: String,
    reader: ParquetRecordBatchReader,
    batch: Option<RecordBatch>,
    batch_row: usize,
    /// Index in the file of the next row to deliver.
    row: usize,
    limit: Option<usize>,
    done: bool,
}

impl std::fmt::Debug for ParquetRecords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetRecords")
            .field("path", &self.path)
            .field("row", &self.row)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl ParquetRecords {
    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The record of the current row. An error becomes the payload's message here, after the
    /// location: the payload is data of the dataflow, written as text to the rejects.
    fn record(&mut self, payload: Result<String, ParquetItemError>) -> SourceRecord {
        let location = format!("{}#{}", self.display, self.row);
        let payload = payload.map_err(|e| format!("{location}: {e}"));
        let rec = SourceRecord {
            source: self.source.clone(),
            location,
            payload,
            kafka: None,
        };
        self.row += 1;
        rec
    }
}

impl Iterator for ParquetRecords {
    type Item = SourceRecord;

    fn next(&mut self) -> Option<SourceRecord> {
        loop {
            if self.done || self.limit.is_some_and(|l| self.row >= l) {
                return None;
            }
            if let Some(batch) = &self.batch {
                if self.batch_row < batch.num_rows() {
                    let payload = row_json(batch, self.batch_row);
                    self.batch_row += 1;
                    return Some(self.record(payload));
                }
            }
            self.batch = None;
            self.batch_row = 0;
            match self.reader.next() {
                None => {
                    self.done = true;
                    return None;
                }
                Some(Ok(batch)) => self.batch = Some(batch),
                Some(Err(e)) => {
                    self.done = true;
                    let decode = ParquetItemError::Decode { source: e };
                    return Some(self.record(Err(decode)));
                }
            }
        }
    }
}

/// The JSON object text of one row; null columns are left out.
fn row_json(batch: &RecordBatch, row: usize) -> Result<String, ParquetItemError> {
    let schema = batch.schema();
    let mut obj = Map::new();
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        if column.is_null(row) {
            continue;
        }
        let value = value_at(column.as_ref(), row).map_err(|e| ParquetItemError::Column {
            name: field.name().clone(),
            source: Box::new(e),
        })?;
        obj.insert(field.name().clone(), value);
    }
    serde_json::to_string(&Value::Object(obj)).map_err(|source| ParquetItemError::Json { source })
}

fn float(x: f64) -> Value {
    // JSON has no NaN or infinities; validation reports the field as mistyped.
    Number::from_f64(x).map_or(Value::Null, Value::Number)
}

fn utf8(bytes: &[u8]) -> Result<Value, ParquetItemError> {
    std::str::from_utf8(bytes)
        .map(|s| Value::String(s.to_owned()))
        .map_err(|source| ParquetItemError::NotUtf8 { source })
}

fn elements(array: &dyn Array) -> Result<Value, ParquetItemError> {
    (0..array.len())
        .map(|i| value_at(array, i))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// Key of a map entry as a JSON object key.
fn key_text(value: Value) -> String {
    match value {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// The JSON value of `array[row]`.
fn value_at(array: &dyn Array, row: usize) -> Result<Value, ParquetItemError> {
    if array.is_null(row) {
        return Ok(Value::Null);
    }
    let value = match array.data_type() {
        DataType::Null => Value::Null,
        DataType::Boolean => Value::Bool(array.as_boolean().value(row)),
        DataType::Int8 => array.as_primitive::<Int8Type>().value(row).into(),
        DataType::Int16 => array.as_primitive::<Int16Type>().value(row).into(),
        DataType::Int32 => array.as_primitive::<Int32Type>().value(row).into(),
        DataType::Int64 => array.as_primitive::<Int64Type>().value(row).into(),
        DataType::UInt8 => array.as_primitive::<UInt8Type>().value(row).into(),
        DataType::UInt16 => array.as_primitive::<UInt16Type>().value(row).into(),
        DataType::UInt32 => array.as_primitive::<UInt32Type>().value(row).into(),
        DataType::UInt64 => array.as_primitive::<UInt64Type>().value(row).into(),
        DataType::Float16 => float(array.as_primitive::<Float16Type>().value(row).to_f64()),
        DataType::Float32 => float(f64::from(array.as_primitive::<Float32Type>().value(row))),
        DataType::Float64 => float(array.as_primitive::<Float64Type>().value(row)),
        DataType::Utf8 => array.as_string::<i32>().value(row).into(),
        DataType::LargeUtf8 => array.as_string::<i64>().value(row).into(),
        DataType::Utf8View => array.as_string_view().value(row).into(),
        DataType::Binary => utf8(array.as_binary::<i32>().value(row))?,
        DataType::LargeBinary => utf8(array.as_binary::<i64>().value(row))?,
        DataType::BinaryView => utf8(array.as_binary_view().value(row))?,
        DataType::FixedSizeBinary(_) => utf8(array.as_fixed_size_binary().value(row))?,
        DataType::List(_) => elements(array.as_list::<i32>().value(row).as_ref())?,
        DataType::LargeList(_) => elements(array.as_list::<i64>().value(row).as_ref())?,
        DataType::FixedSizeList(..) => elements(array.as_fixed_size_list().value(row).as_ref())?,
        DataType::ListView(_) => elements(array.as_list_view::<i32>().value(row).as_ref())?,
        DataType::LargeListView(_) => elements(array.as_list_view::<i64>().value(row).as_ref())?,
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let mut obj = Map::new();
            for (field, column) in fields.iter().zip(s.columns()) {
                if column.is_null(row) {
                    continue;
                }
                let v = value_at(column.as_ref(), row).map_err(|e| ParquetItemError::Field {
                    name: field.name().clone(),
                    source: Box::new(e),
                })?;
                obj.insert(field.name().clone(), v);
            }
            Value::Object(obj)
        }
        DataType::Map(..) => {
            let entries = array.as_map().value(row);
            let (keys, values) = (entries.column(0), entries.column(1));
            let mut obj = Map::new();
            for i in 0..entries.len() {
                let k = key_text(value_at(keys.as_ref(), i)?);
                obj.insert(k, value_at(values.as_ref(), i)?);
            }
            Value::Object(obj)
        }
        DataType::Dictionary(_, value_type) => {
            let one = arrow::compute::cast(&array.slice(row, 1), value_type)
                .map_err(|source| ParquetItemError::Dictionary { source })?;
            value_at(one.as_ref(), 0)?
        }
        _ => {
            let formatter =
                ArrayFormatter::try_new(array, &FormatOptions::default()).map_err(|source| {
                    ParquetItemError::UnsupportedType {
                        data_type: array.data_type().clone(),
                        source,
                    }
                })?;
            Value::String(formatter.value(row).to_string())
        }
    };
    Ok(value)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, BinaryArray, Int32Array, StructArray};
    use arrow::datatypes::Field;

    use super::*;

    #[test]
    fn an_unreadable_value_names_its_column_and_field() {
        let binary: ArrayRef = Arc::new(BinaryArray::from(vec![&b"ok"[..], &[0xff][..]]));
        let field = Arc::new(Field::new("b", DataType::Binary, false));
        let nested: ArrayRef = Arc::new(StructArray::from(vec![(field, binary)]));
        let numbers: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
        let batch = RecordBatch::try_from_iter([("n", numbers), ("s", nested)]).unwrap();
        assert_eq!(row_json(&batch, 0).unwrap(), r#"{"n":1,"s":{"b":"ok"}}"#);
        let e = row_json(&batch, 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "column `s`: field `b`: binary value is not UTF-8 (invalid utf-8 sequence of 1 bytes \
             from index 0)"
        );
    }
}
