//! Opens a run's datasets with pyarrow (and DuckDB / polars when installed) through a
//! `*.parquet` glob while a temporary part lies next to the complete ones. Skipped with a
//! note when `python3` cannot import pyarrow, unless `C2S_REQUIRE_PYARROW=1` (CI) makes
//! that a failure.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;

use c2s_records::ResponseClass;
use c2s_sinks::{
    MetricsRow, OutcomeRow, PartConfig, PartWriter, PromptRow, RejectRow, RequestRow, Row,
    TrajectoryRow,
};
use common::*;

const SCRIPT: &str = r#"
import glob, json, os, sys
import pyarrow.dataset as ds

run = sys.argv[1]
out = {}
for name in ["requests", "trajectories", "outcomes", "metrics", "rejects", "prompts"]:
    files = sorted(glob.glob(os.path.join(run, name, "*.parquet")))
    table = ds.dataset(files, format="parquet").to_table()
    out[name] = {"files": len(files), "rows": table.num_rows, "columns": table.column_names}
# Directory discovery ignores hidden files as well.
out["metrics_dir_rows"] = ds.dataset(os.path.join(run, "metrics"), format="parquet").to_table().num_rows
req = ds.dataset(sorted(glob.glob(os.path.join(run, "requests", "*.parquet")))).to_table().to_pylist()
first = req[0]
out["request0"] = {k: first[k] for k in ["probabilities", "option_codes", "validity", "truncated", "system", "step"]}
met = ds.dataset(os.path.join(run, "metrics"), format="parquet").to_table()
out["metric_types"] = {f.name: str(f.type) for f in met.schema}
DATASETS = ["requests", "trajectories", "outcomes", "metrics", "rejects", "prompts"]
out["prompt_types"] = {f.name: str(f.type) for f in ds.dataset(os.path.join(run, "prompts"), format="parquet").schema}
try:
    import duckdb
    con = duckdb.connect()
    out["duckdb"] = {
        name: con.execute(
            "select count(*) from read_parquet('%s')" % os.path.join(run, name, "*.parquet")
        ).fetchall()[0][0]
        for name in DATASETS
    }
except ImportError:
    pass
try:
    import polars as pl
    out["polars"] = {
        name: pl.scan_parquet(os.path.join(run, name, "*.parquet")).collect().height
        for name in DATASETS
    }
except ImportError:
    pass
print(json.dumps(out))
"#;

fn pyarrow_available() -> bool {
    Command::new(std::env::var("C2S_PYTHON").unwrap_or_else(|_| "python3".into()))
        .args(["-c", "import pyarrow.dataset"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn write<R: Row>(run: &Path, rows: Vec<R>, parts: usize) {
    let mut w = PartWriter::<R>::open(run, 0, PartConfig::default()).expect("open");
    let per = rows.len().div_ceil(parts).max(1);
    for (i, r) in rows.into_iter().enumerate() {
        w.push(r);
        if (i + 1).is_multiple_of(per) {
            w.roll().expect("roll");
        }
    }
    w.finish().expect("finish");
    // A part being written by another worker at this moment.
    std::fs::write(
        run.join(R::DATASET).join(".part-w1-000000.parquet.tmp"),
        b"PAR1 incomplete",
    )
    .expect("write temp");
}

#[test]
fn pyarrow_reads_every_dataset() {
    if !pyarrow_available() {
        if std::env::var("C2S_REQUIRE_PYARROW").is_ok_and(|v| v == "1") {
            panic!("C2S_REQUIRE_PYARROW=1 but `python3 -c 'import pyarrow'` fails");
        }
        eprintln!("note: skipping pyarrow_reads_every_dataset: python3 cannot import pyarrow");
        return;
    }
    let run = tempfile::tempdir().expect("tempdir");
    let s = scored_request("ar-1", 2);
    let g = generated_request("lx-1", 1);
    write(
        run.path(),
        vec![
            RequestRow::from_response(
                &s,
                &scored_response(&s),
                Some(&step(&s, "5", ResponseClass::StrictCorrect)),
                "m",
            ),
            RequestRow::from_response(&g, &generated_response(&g, "7", true), None, "m"),
            RequestRow::failed(&g, "m", "boom", 1.0),
        ],
        2,
    );
    write(
        run.path(),
        vec![
            TrajectoryRow::from(&trajectory("a", "Serial/Full/code", false, true)),
            TrajectoryRow::from(&trajectory("b", "SerialStop/Full/code", true, false)),
        ],
        2,
    );
    write(
        run.path(),
        (0..10u32)
            .map(|i| {
                OutcomeRow::from(&outcome(
                    &format!("i{i}"),
                    i.is_multiple_of(2),
                    i.is_multiple_of(3),
                ))
            })
            .collect(),
        3,
    );
    write(
        run.path(),
        MetricsRow::stamp(
            (0..6).map(|i| {
                metric(
                    i / 2,
                    if i.is_multiple_of(2) { None } else { Some(4) },
                    "scr",
                )
            }),
            1,
        ),
        3,
    );
    write(
        run.path(),
        vec![RejectRow::new("bank", "bank:1", None, "bad")],
        1,
    );

    write(
        run.path(),
        vec![
            PromptRow::rendered(
                s.prompt_sha256(),
                "<|im_start|>user\nQ<|im_end|>\n".into(),
                7,
            ),
            PromptRow::by_server(g.prompt_sha256()),
        ],
        2,
    );

    let out = Command::new(std::env::var("C2S_PYTHON").unwrap_or_else(|_| "python3".into()))
        .arg("-c")
        .arg(SCRIPT)
        .arg(run.path())
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    eprintln!("{v:#}");

    let check = |name: &str, rows: u64, files: u64, schema: arrow::datatypes::SchemaRef| {
        assert_eq!(v[name]["rows"], rows, "{name} rows");
        assert_eq!(v[name]["files"], files, "{name} files");
        let cols: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        assert_eq!(
            v[name]["columns"],
            serde_json::json!(cols),
            "{name} columns"
        );
    };
    check("requests", 3, 2, RequestRow::schema());
    check("trajectories", 2, 2, TrajectoryRow::schema());
    check("outcomes", 10, 3, OutcomeRow::schema());
    check("metrics", 6, 3, MetricsRow::schema());
    check("rejects", 1, 1, RejectRow::schema());
    check("prompts", 2, 2, PromptRow::schema());
    assert_eq!(v["prompt_types"]["n_tokens"], "uint32");
    assert_eq!(v["prompt_types"]["prompt"], "string");
    assert_eq!(v["metrics_dir_rows"], 6);
    assert_eq!(
        v["request0"],
        serde_json::json!({
            "probabilities": [0.125, 0.625, 0.25],
            "option_codes": ["A", "B", "C"],
            "validity": "strict_correct",
            "truncated": null,
            "system": "Answer with one code.",
            "step": 2,
        })
    );
    assert_eq!(v["metric_types"]["length"], "uint32");
    assert_eq!(v["metric_types"]["snapshot"], "uint64");
    let counts = serde_json::json!({
        "requests": 3, "trajectories": 2, "outcomes": 10, "metrics": 6, "rejects": 1,
        "prompts": 2,
    });
    for reader in ["duckdb", "polars"] {
        match v.get(reader) {
            Some(n) => assert_eq!(n, &counts, "{reader} row counts"),
            None => eprintln!("note: {reader} not installed; not checked"),
        }
    }
}
