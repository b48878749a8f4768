//! The frozen banks through the binary: stats, byte-identical regeneration, bad lines.

use c2s_e2e::{repo_root, run, text};

#[test]
fn arithmetic_test_bank_has_the_frozen_quotas() {
    let out = run(&["bank", "stats", "data/banks/arithmetic-test.jsonl"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("items: 384"), "{stdout}");
    for l in 3..=8 {
        // L, items, K(0)=8 count, K(1)=2 count, partnered.
        let row = format!("{l:>3} {:>5} {:>8} {:>8} {:>10}", 64, 64, 64, 64);
        assert!(
            stdout.contains(&row),
            "missing per-length row {row:?} in\n{stdout}"
        );
        let cells = format!("{l:>3} {:>22} {:>22} {:>22} {:>22}", 16, 16, 16, 16);
        assert!(
            stdout.contains(&cells),
            "missing strata row {cells:?} in\n{stdout}"
        );
    }
    assert!(
        stdout.contains("structure totals: 192 balanced / 192 unbalanced"),
        "{stdout}"
    );
}

#[test]
fn lexical_banks_pair_every_arithmetic_item() {
    for split in ["test", "dev"] {
        let out = run(&[
            "bank",
            "stats",
            &format!("data/banks/lexical-{split}.jsonl"),
        ]);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{stderr}");
        let n = if split == "test" { 64 } else { 8 };
        for l in 3..=8 {
            let row = format!("{l:>3} {n:>5} {n:>8} {n:>8} {n:>10}");
            assert!(stdout.contains(&row), "missing {row:?} in\n{stdout}");
        }
    }
}

#[test]
fn bank_build_regenerates_the_committed_files_byte_for_byte() {
    let wordfreq = repo_root().join(".tools/wordfreq/large_en.msgpack.gz");
    assert!(
        wordfreq.exists() && std::path::Path::new("/usr/share/wordnet/data.noun").exists(),
        "bank sources missing: run scripts/fetch-sources.sh (scripts/test.sh does)"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let out_dir = dir.path().join("banks");
    let out = run(&[
        "bank",
        "build",
        "--out",
        out_dir.to_str().expect("utf-8 path"),
        "--wordfreq",
        wordfreq.to_str().expect("utf-8 path"),
    ]);
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    for f in [
        "arithmetic-test.jsonl",
        "lexical-test.jsonl",
        "arithmetic-dev.jsonl",
        "lexical-dev.jsonl",
        "provenance.json",
    ] {
        let fresh = std::fs::read(out_dir.join(f)).expect("rebuilt file");
        let committed =
            std::fs::read(repo_root().join("data/banks").join(f)).expect("committed file");
        assert!(fresh == committed, "{f} differs from the committed bank");
    }
}

#[test]
fn a_malformed_line_names_file_line_item_and_rule() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bad.jsonl");
    let good = r#"{"item_id":"a","domain":"arithmetic","problem":"What is 39 * 15?","target":"585","candidates":["585","589","385","389","485","489","685","689"]}"#;
    let bad = r#"{"item_id":"b","domain":"arithmetic","problem":"What is 39 * 15?","target":"585","candidates":["585","589","385","389","485","489","685"]}"#;
    std::fs::write(&path, format!("{good}\n\n{bad}\n")).expect("write");
    let out = run(&["bank", "stats", path.to_str().expect("utf-8 path")]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("bad.jsonl:3: item b: expected 8 candidates, found 7"),
        "{stderr}"
    );
}
