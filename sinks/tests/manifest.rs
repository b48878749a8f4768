//! The run manifest: atomic write, read back, resume count.

use c2s_sinks::{file_sha256, read_manifest, write_manifest, Manifest, SourceFile};
use serde_json::json;

#[test]
fn manifest_round_trip_and_resume() {
    let run = tempfile::tempdir().expect("tempdir");
    assert_eq!(read_manifest(run.path()).expect("none"), None);

    let bank = run.path().join("bank.jsonl");
    std::fs::write(&bank, b"abc").expect("write");
    let mut m = Manifest::new(
        "smoke",
        json!({"bank": "bank.jsonl", "stats": {"bootstrap_draws": 9999}}),
        json!({"name": "qwen3-0.6b", "sha256": "00"}),
    );
    m.seeds.insert("bank".into(), 20251);
    m.sources
        .push(SourceFile::hash("bank", &bank).expect("hash"));
    assert_eq!(
        m.sources[0].sha256,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(m.sources[0].bytes, 3);
    assert_eq!(file_sha256(&bank).expect("hash"), m.sources[0].sha256);
    assert_eq!(m.crate_version, env!("CARGO_PKG_VERSION"));
    assert!(
        m.rustc.as_deref().is_some_and(|v| v.starts_with("rustc ")),
        "{:?}",
        m.rustc
    );
    assert!(m.target.is_some());
    assert!(m.started_at_ms > 1_600_000_000_000);

    let path = write_manifest(run.path(), &m).expect("write");
    assert!(path.ends_with("manifest.json"));
    assert_eq!(read_manifest(run.path()).expect("read"), Some(m.clone()));

    m.mark_resumed(m.started_at_ms + 10);
    write_manifest(run.path(), &m).expect("rewrite");
    let back = read_manifest(run.path()).expect("read").expect("some");
    assert_eq!(back.resumed, 1);
    assert_eq!(back.resumed_at_ms, vec![m.started_at_ms + 10]);
    assert_eq!(back.updated_at_ms, m.started_at_ms + 10);

    // Only the manifest is left in the directory (no temporary file).
    let mut names: Vec<String> = std::fs::read_dir(run.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["bank.jsonl", "manifest.json"]);

    // Bad JSON names the file.
    std::fs::write(&path, b"{").expect("write");
    let e = read_manifest(run.path()).expect_err("bad json");
    assert!(e.to_string().contains("manifest.json"), "{e}");
    // A missing source file names the path.
    let e = SourceFile::hash("bank", &run.path().join("missing.jsonl")).expect_err("missing");
    assert!(e.to_string().contains("missing.jsonl"), "{e}");
}
