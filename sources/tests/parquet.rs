// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryArray, DictionaryArray, ListBuilder, RecordBatch, StringArray, StringBuilder,
    UInt32Array, UInt32Builder,
};
use arrow::datatypes::Int32Type;
use c2s_records::{parse_item, ItemPolicy};
use c2s_sources::{read_parquet_items, SourceError};
use parquet::arrow::ArrowWriter;

const CANDIDATES: [&str; 8] = ["585", "589", "385", "389", "485", "489", "685", "689"];

fn write(path: &std::path::Path, batch: &RecordBatch) {
    let file = std::fs::File::create(path).expect("create parquet");
    let mut w = ArrowWriter::try_new(file, batch.schema(), None).expect("writer");
    w.write(batch).expect("write batch");
    w.close().expect("close writer");
}

/// Three items: `length` null in one row, `k_vector` only in one row, `domain`
/// dictionary-encoded, and `partner_id` null everywhere.
fn items_batch() -> RecordBatch {
    let n = 3;
    let mut candidates = ListBuilder::new(StringBuilder::new());
    let mut k_vector = ListBuilder::new(UInt32Builder::new());
    for i in 0..n {
        for c in CANDIDATES {
            candidates.values().append_value(c);
        }
        candidates.append(true);
        if i == 1 {
            k_vector.values().append_slice(&[8, 2, 2, 1]);
            k_vector.append(true);
        } else {
            k_vector.append(false);
        }
    }
    let domain: DictionaryArray<Int32Type> = ["arithmetic"; 3].into_iter().collect();
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "item_id",
            Arc::new(StringArray::from(vec!["p-0", "p-1", "p-2"])),
        ),
        ("domain", Arc::new(domain)),
        (
            "problem",
            Arc::new(StringArray::from(vec!["What is 39 x 15?"; 3])),
        ),
        ("target", Arc::new(StringArray::from(vec!["585"; 3]))),
        ("candidates", Arc::new(candidates.finish())),
        (
            "length",
            Arc::new(UInt32Array::from(vec![Some(3), None, Some(3)])),
        ),
        ("k_vector", Arc::new(k_vector.finish())),
        (
            "partner_id",
            Arc::new(StringArray::from(vec![None::<&str>; 3])),
        ),
    ];
    RecordBatch::try_from_iter(columns).expect("batch")
}

#[test]
fn parquet_rows_round_trip_to_valid_items() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("items.parquet");
    write(&path, &items_batch());
    let shown = path.display().to_string();

    let records: Vec<_> = read_parquet_items(&path, None).expect("open").collect();
    assert_eq!(records.len(), 3);
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r.source, format!("parquet:{shown}"));
        assert_eq!(r.location, format!("{shown}#{i}"));
        assert!(r.kafka.is_none());
        let text = r.payload.as_ref().expect("row as JSON");
        assert!(!text.contains("partner_id"), "nulls are left out: {text}");
        let item = parse_item(text, &ItemPolicy::default()).expect("valid item");
        assert_eq!(item.item_id, format!("p-{i}"));
        assert_eq!(item.candidates, CANDIDATES);
        assert_eq!(item.length, 3);
        assert_eq!(item.k_vector, [8, 2, 2, 1]);
    }
    assert!(records[1]
        .payload
        .as_ref()
        .is_ok_and(|t| t.contains("\"k_vector\":[8,2,2,1]")));

    let limited: Vec<_> = read_parquet_items(&path, Some(2)).expect("open").collect();
    assert_eq!(limited.len(), 2);
    assert_eq!(limited[1].location, format!("{shown}#1"));
}

#[test]
fn unreadable_value_becomes_an_error_record() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bad.parquet");
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("item_id", Arc::new(StringArray::from(vec!["x-0", "x-1"]))),
        (
            "note",
            Arc::new(BinaryArray::from(vec![&b"fine"[..], &b"\xff\xfe"[..]])),
        ),
    ];
    write(&path, &RecordBatch::try_from_iter(columns).expect("batch"));
    let records: Vec<_> = read_parquet_items(&path, None).expect("open").collect();
    assert_eq!(records.len(), 2);
    assert_eq!(
        records[0].payload.as_deref(),
        Ok(r#"{"item_id":"x-0","note":"fine"}"#)
    );
    let msg = records[1].payload.as_ref().unwrap_err();
    let shown = path.display().to_string();
    assert!(msg.contains(&format!("{shown}#1")), "{msg}");
    assert!(msg.contains("`note`"), "{msg}");
    // Validation downstream then rejects the row that was read, naming the rule.
    let ok = records[0].payload.as_ref().expect("row 0");
    assert!(parse_item(ok, &ItemPolicy::default()).is_err());
}

#[test]
fn missing_or_non_parquet_files_name_the_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("missing.parquet");
    let err = read_parquet_items(&missing, None).unwrap_err();
    assert!(matches!(err, SourceError::Open { .. }));
    assert!(err.to_string().contains("missing.parquet"), "{err}");

    let junk = dir.path().join("junk.parquet");
    std::fs::write(&junk, common::item_json("j")).expect("write junk");
    let err = read_parquet_items(&junk, None).unwrap_err();
    assert!(matches!(err, SourceError::Parquet { .. }));
    assert!(err.to_string().contains("junk.parquet"), "{err}");
}
