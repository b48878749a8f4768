//! Rolling parts: atomic visibility, roll triggers, and sequence numbers across restarts.

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use c2s_sinks::{
    list_parts, parse_part_file_name, part_file_name, read_rejects, PartConfig, PartWriter,
    RejectRow, SinkError,
};
use common::read_parquet;

fn reject(i: usize) -> RejectRow {
    RejectRow::new(
        "banks/big.jsonl",
        format!("banks/big.jsonl:{i}"),
        Some(format!("item-{i:08}")),
        // Long, poorly compressible text so that parts take a while to write.
        format!(
            "{:x}{}",
            (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            "x".repeat(i % 97)
        ),
    )
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn part_names_parse() {
    assert_eq!(part_file_name(3, 42), "part-w3-000042.parquet");
    assert_eq!(
        parse_part_file_name("part-w3-000042.parquet"),
        Some((3, 42))
    );
    assert_eq!(
        parse_part_file_name("part-w12-1234567.parquet"),
        Some((12, 1_234_567))
    );
    assert_eq!(parse_part_file_name(".part-w3-000042.parquet.tmp"), None);
    assert_eq!(parse_part_file_name("part-w-000042.parquet"), None);
    assert_eq!(parse_part_file_name("part-w3-00004a.parquet"), None);
}

/// While one thread writes parts, another lists the directory and reads every name that a
/// `*.parquet` glob matches: each must be a complete Parquet file with whole parts only.
#[test]
fn parts_are_never_visible_half_written() {
    const PART_ROWS: usize = 4_000;
    const PARTS: usize = 25;
    let run = tempfile::tempdir().expect("tempdir");
    let dir = run.path().join("rejects");
    let cfg = PartConfig {
        part_rows: PART_ROWS,
        part_seconds: 3600.0,
        zstd_level: 3,
    };
    let mut w = PartWriter::<RejectRow>::open(run.path(), 0, cfg).expect("open");

    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let done = done.clone();
        let dir = dir.clone();
        std::thread::spawn(move || {
            let (mut listings, mut reads, mut temps_seen) = (0usize, 0usize, 0usize);
            let mut verified = BTreeSet::new();
            loop {
                let finished = done.load(Ordering::SeqCst);
                listings += 1;
                for name in names(&dir) {
                    if name.ends_with(".tmp") {
                        temps_seen += 1;
                    }
                    // Any glob `*.parquet` (hidden names included) must match complete parts.
                    if !name.ends_with(".parquet") {
                        continue;
                    }
                    assert!(!name.starts_with('.'), "temporary name matched: {name}");
                    if !verified.insert(name.clone()) {
                        continue;
                    }
                    let rows: usize = read_parquet(&dir.join(&name))
                        .iter()
                        .map(|b| b.num_rows())
                        .sum();
                    assert_eq!(rows, PART_ROWS, "{name} is incomplete");
                    reads += 1;
                }
                if finished {
                    break;
                }
            }
            (listings, reads, temps_seen)
        })
    };

    let mut written = 0;
    for p in 0..PARTS {
        for i in 0..PART_ROWS {
            w.push(reject(p * PART_ROWS + i));
            if w.maybe_roll(Instant::now()).expect("roll").is_some() {
                written += 1;
            }
        }
    }
    assert_eq!(
        w.finish().expect("finish"),
        None,
        "nothing left after exact parts"
    );
    done.store(true, Ordering::SeqCst);
    let (listings, reads, temps_seen) = watcher.join().expect("watcher");
    eprintln!("listings {listings}, parts verified {reads}, temporary names seen {temps_seen}");
    assert_eq!(written, PARTS);
    assert_eq!(reads, PARTS, "the watcher verified every part");
    assert_eq!(list_parts(&dir).expect("list").len(), PARTS);
    assert!(names(&dir).iter().all(|n| !n.ends_with(".tmp")));
    assert_eq!(read_rejects(&dir).expect("read").len(), PARTS * PART_ROWS);
}

#[test]
fn rolls_by_rows_and_by_time() {
    let run = tempfile::tempdir().expect("tempdir");
    let cfg = PartConfig {
        part_rows: 3,
        part_seconds: 5.0,
        zstd_level: 1,
    };
    let mut w = PartWriter::<RejectRow>::open(run.path(), 0, cfg).expect("open");
    let t0 = Instant::now();
    assert_eq!(
        w.maybe_roll(t0 + Duration::from_secs(60)).expect("roll"),
        None,
        "empty"
    );
    w.push_at(reject(0), t0);
    w.push_at(reject(1), t0 + Duration::from_secs(1));
    assert!(!w.due(t0 + Duration::from_secs(4)));
    assert_eq!(
        w.maybe_roll(t0 + Duration::from_secs(4)).expect("roll"),
        None
    );
    // Time since the *first* buffered row.
    let p = w.maybe_roll(t0 + Duration::from_secs(5)).expect("roll");
    assert!(p.is_some_and(|p| p.ends_with("rejects/part-w0-000000.parquet")));
    assert_eq!(w.buffered(), 0);
    for i in 2..5 {
        w.push_at(reject(i), t0 + Duration::from_secs(10));
    }
    assert!(w.due(t0 + Duration::from_secs(10)), "three rows buffered");
    assert!(w
        .maybe_roll(t0 + Duration::from_secs(10))
        .expect("roll")
        .is_some());
    w.push(reject(5));
    let last = w.finish().expect("finish");
    assert!(last.is_some_and(|p| p.ends_with("part-w0-000002.parquet")));
    assert_eq!(w.written(), (3, 6));
    let rows = read_rejects(&run.path().join("rejects")).expect("read");
    assert_eq!(rows, (0..6).map(reject).collect::<Vec<_>>());
}

#[test]
fn sequence_continues_after_restart() {
    let run = tempfile::tempdir().expect("tempdir");
    let dir = run.path().join("rejects");
    let cfg = PartConfig::default();
    {
        let mut w = PartWriter::<RejectRow>::open(run.path(), 0, cfg).expect("open");
        assert_eq!(w.next_seq(), 0);
        w.push(reject(0));
        w.roll().expect("roll");
        w.push(reject(1));
        w.roll().expect("roll");
        let mut w1 = PartWriter::<RejectRow>::open(run.path(), 1, cfg).expect("open");
        w1.push(reject(100));
        w1.finish().expect("roll");
    }
    let before: Vec<(String, Vec<u8>)> = names(&dir)
        .into_iter()
        .map(|n| {
            let bytes = fs::read(dir.join(&n)).expect("read");
            (n, bytes)
        })
        .collect();
    assert_eq!(
        before.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        [
            "part-w0-000000.parquet",
            "part-w0-000001.parquet",
            "part-w1-000000.parquet"
        ]
    );

    // A killed run left an unfinished temporary part of worker 0 (and one of worker 1).
    fs::write(dir.join(".part-w0-000002.parquet.tmp"), b"PAR1 half").expect("write");
    fs::write(dir.join(".part-w1-000001.parquet.tmp"), b"PAR1 half").expect("write");
    assert_eq!(
        list_parts(&dir).expect("list").len(),
        3,
        "readers ignore temporary names"
    );
    assert_eq!(read_rejects(&dir).expect("read").len(), 3);

    // Restart.
    let mut w = PartWriter::<RejectRow>::open(run.path(), 0, cfg).expect("reopen");
    assert_eq!(w.next_seq(), 2);
    assert!(
        !dir.join(".part-w0-000002.parquet.tmp").exists(),
        "own stale temp removed"
    );
    assert!(
        dir.join(".part-w1-000001.parquet.tmp").exists(),
        "other worker's temp kept"
    );
    w.push(reject(2));
    let p = w.finish().expect("roll").expect("part");
    assert!(p.ends_with("part-w0-000002.parquet"));
    let w1 = PartWriter::<RejectRow>::open(run.path(), 1, cfg).expect("reopen");
    assert_eq!(w1.next_seq(), 1);

    // Earlier parts are untouched.
    for (n, bytes) in &before {
        assert_eq!(&fs::read(dir.join(n)).expect("read"), bytes, "{n} changed");
    }
    let rows = read_rejects(&dir).expect("read");
    assert_eq!(rows, vec![reject(0), reject(1), reject(2), reject(100)]);
}

#[test]
fn bad_settings_and_bad_parts_name_the_path() {
    let run = tempfile::tempdir().expect("tempdir");
    let bad = PartConfig {
        part_rows: 0,
        ..PartConfig::default()
    };
    let e = PartWriter::<RejectRow>::open(run.path(), 0, bad).expect_err("zero rows");
    assert!(e.to_string().contains("rejects"), "{e}");
    let bad = PartConfig {
        part_seconds: f64::NAN,
        ..PartConfig::default()
    };
    assert!(PartWriter::<RejectRow>::open(run.path(), 0, bad).is_err());

    // A file that is not Parquet under a part name.
    let dir = run.path().join("rejects");
    fs::create_dir_all(&dir).expect("mkdir");
    fs::write(dir.join("part-w9-000000.parquet"), b"not parquet").expect("write");
    let e = read_rejects(&dir).expect_err("corrupt part");
    assert!(matches!(e, SinkError::Parquet { .. }), "{e:?}");
    assert!(e.to_string().contains("part-w9-000000.parquet"), "{e}");

    // A part of another dataset: a required column is missing.
    let other = tempfile::tempdir().expect("tempdir");
    let mut w = PartWriter::<c2s_sinks::OutcomeRow>::open(other.path(), 0, PartConfig::default())
        .expect("open");
    w.push(c2s_sinks::OutcomeRow::from(&common::outcome(
        "a", true, false,
    )));
    let p = w.finish().expect("roll").expect("part");
    let e = c2s_sinks::read_part::<RejectRow>(&p).expect_err("wrong dataset");
    assert!(
        e.to_string().contains("column `source`: missing column"),
        "{e}"
    );

    // A missing directory reads as empty.
    assert!(read_rejects(&run.path().join("nope"))
        .expect("empty")
        .is_empty());
}
