// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;

use c2s_records::{parse_item, ItemPolicy};
use c2s_sources::{read_jsonl, SourceError};
use common::item_json;

fn bank(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    f.write_all(bytes).expect("write bank");
    f
}

fn sample() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(item_json("a").as_bytes());
    b.extend_from_slice(b"\n\n   \t\n");
    b.extend_from_slice(item_json("b").as_bytes());
    b.extend_from_slice(b"\n{\"item_id\": \"bad\xff\xfe\"}\n");
    b.extend_from_slice(item_json("c").as_bytes());
    b.extend_from_slice(b"\r\n");
    b.extend_from_slice(item_json("d").as_bytes()); // no final newline
    b
}

#[test]
fn blank_lines_are_skipped_but_counted() {
    let f = bank(&sample());
    let path = f.path().display().to_string();
    let records: Vec<_> = read_jsonl(f.path(), None).expect("open").collect();
    let locations: Vec<_> = records.iter().map(|r| r.location.clone()).collect();
    assert_eq!(
        locations,
        [1, 4, 5, 6, 7].map(|n| format!("{path}:{n}")).to_vec()
    );
    for r in &records {
        assert_eq!(r.source, format!("jsonl:{path}"));
        assert!(r.kafka.is_none());
    }
    let ids: Vec<_> = records
        .iter()
        .filter_map(|r| r.payload.as_ref().ok())
        .map(|p| {
            parse_item(p, &ItemPolicy::default())
                .expect("valid item")
                .item_id
        })
        .collect();
    assert_eq!(ids, ["a", "b", "c", "d"]);
}

#[test]
fn invalid_utf8_line_becomes_an_error_record() {
    let f = bank(&sample());
    let path = f.path().display().to_string();
    let bad: Vec<_> = read_jsonl(f.path(), None)
        .expect("open")
        .filter(|r| r.payload.is_err())
        .collect();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].location, format!("{path}:5"));
    let msg = bad[0].payload.as_ref().unwrap_err();
    assert!(msg.contains(&format!("{path}:5")), "{msg}");
    assert!(msg.contains("UTF-8"), "{msg}");
}

#[test]
fn limit_caps_records() {
    let f = bank(&sample());
    let path = f.path().display().to_string();
    let records: Vec<_> = read_jsonl(f.path(), Some(2)).expect("open").collect();
    assert_eq!(records.len(), 2);
    assert_eq!(records[1].location, format!("{path}:4"));
    assert_eq!(read_jsonl(f.path(), Some(0)).expect("open").count(), 0);
    assert_eq!(read_jsonl(f.path(), Some(99)).expect("open").count(), 5);
}

#[test]
fn byte_order_mark_and_empty_file() {
    let mut b = b"\xEF\xBB\xBF".to_vec();
    b.extend_from_slice(item_json("bom").as_bytes());
    let f = bank(&b);
    let records: Vec<_> = read_jsonl(f.path(), None).expect("open").collect();
    assert_eq!(records.len(), 1);
    let payload = records[0].payload.as_ref().expect("utf-8");
    assert_eq!(
        parse_item(payload, &ItemPolicy::default())
            .expect("valid")
            .item_id,
        "bom"
    );
    let empty = bank(b"");
    assert_eq!(read_jsonl(empty.path(), None).expect("open").count(), 0);
}

#[test]
fn missing_file_names_the_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("nope.jsonl");
    let err = read_jsonl(&path, None).unwrap_err();
    assert!(matches!(err, SourceError::Open { .. }));
    assert!(err.to_string().contains("nope.jsonl"), "{err}");
}
