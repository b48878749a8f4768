//! Every dataset survives a trip through a Parquet part: rows written by `PartWriter` are
//! read back with the parquet crate alone, in the documented schema, and decode to the same
//! rows.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs::File;

use arrow::array::{Array, AsArray, Float64Array};
use arrow::datatypes::{DataType, Float64Type};
use c2s_records::ResponseClass;
use c2s_sinks::{
    read_metrics, read_outcomes, read_paired_outcomes, read_rejects, read_requests,
    read_trajectories, read_trajectory_records, MetricsRow, OutcomeRow, PartConfig, PartWriter,
    RejectRow, RequestRow, Row, TrajectoryRow,
};
use common::*;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;

/// Writes `rows` as one part and reads it back with the parquet crate.
fn round_trip<R: Row + Clone + PartialEq + std::fmt::Debug>(rows: &[R]) -> Vec<R> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = PartWriter::<R>::open(dir.path(), 0, PartConfig::default()).expect("open");
    w.extend(rows.iter().cloned());
    let path = w.finish().expect("roll").expect("a part");
    assert_eq!(
        path,
        dir.path().join(R::DATASET).join("part-w0-000000.parquet")
    );

    let meta = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).expect("open"))
        .expect("footer")
        .metadata()
        .clone();
    assert_eq!(meta.file_metadata().num_rows() as usize, rows.len());
    for rg in meta.row_groups() {
        for c in rg.columns() {
            assert!(
                matches!(c.compression(), Compression::ZSTD(_)),
                "{} is {:?}",
                c.column_path(),
                c.compression()
            );
        }
    }
    let kv = meta
        .file_metadata()
        .key_value_metadata()
        .expect("key-value metadata");
    assert!(kv
        .iter()
        .any(|k| k.key == "c2s.dataset" && k.value.as_deref() == Some(R::DATASET)));

    let batches = read_parquet(&path);
    let mut back = Vec::new();
    for b in &batches {
        assert_eq!(
            b.schema().fields(),
            R::schema().fields(),
            "schema of {}",
            R::DATASET
        );
        back.extend(R::from_batch(b).expect("decode"));
    }
    assert_eq!(back, rows);
    back
}

fn request_rows() -> Vec<RequestRow> {
    let s1 = scored_request("ar-001", 1);
    let s2 = scored_request("ar-001", 2);
    let g1 = generated_request("lx-007", 1);
    let g3 = generated_request("lx-007", 3);
    vec![
        RequestRow::from((
            &s1,
            &scored_response(&s1),
            Some(&step(&s1, "5", ResponseClass::StrictCorrect)),
            "qwen3-0.6b",
        )),
        RequestRow::from_response(&s2, &scored_response(&s2), None, "qwen3-0.6b"),
        RequestRow::from_response(
            &g1,
            &generated_response(&g1, " 7\n", false),
            Some(&step(&g1, "7", ResponseClass::FormatValidWrong)),
            "qwen3-0.6b",
        ),
        RequestRow::from_response(
            &g3,
            &generated_response(&g3, "The answer", true),
            Some(&step(&g3, "#", ResponseClass::Truncated)),
            "qwen3-0.6b",
        ),
        RequestRow::failed(&g1, "qwen3-0.6b", "engine: out of memory", 3.0),
    ]
}

#[test]
fn requests_round_trip() {
    let rows = request_rows();
    // Field values of the constructors.
    assert_eq!(rows[0].decoding, "score");
    assert_eq!(rows[0].contract, "scored_code");
    assert_eq!(rows[0].choice.as_deref(), Some("5"));
    assert_eq!(rows[0].validity.as_deref(), Some("strict_correct"));
    assert_eq!(
        rows[1].choice.as_deref(),
        Some("5"),
        "argmax without a step"
    );
    assert_eq!(rows[1].validity, None);
    assert_eq!(rows[2].decoding, "greedy:8");
    assert_eq!(rows[2].finish_reason.as_deref(), Some("stop"));
    assert_eq!(rows[2].truncated, Some(false));
    assert_eq!(rows[2].validity.as_deref(), Some("format_valid_wrong"));
    assert_eq!(rows[3].choice, None, "INVALID marker is no choice");
    assert_eq!(rows[3].validity.as_deref(), Some("truncated"));
    assert_eq!(rows[4].error.as_deref(), Some("engine: out of memory"));
    assert_eq!(rows[4].probabilities, None);
    let s1 = scored_request("ar-001", 1);
    assert_eq!(rows[0].prompt_key, s1.prompt_key());
    assert_eq!(rows[0].prompt_sha256, s1.prompt_sha256());
    assert_eq!(rows[0].option_codes, ["A", "B", "C"]);
    assert_eq!(rows[0].option_values, ["3", "5", "7"]);

    round_trip(&rows);

    // The list and nullable columns as another reader sees them.
    let batch = RequestRow::to_batch(&rows).expect("batch");
    let probs = batch
        .column_by_name("probabilities")
        .expect("column")
        .as_list::<i32>();
    assert!(probs.is_valid(0) && probs.is_null(2));
    let p0 = probs.value(0);
    let p0: &Float64Array = p0.as_primitive::<Float64Type>();
    assert_eq!(p0.values(), &[0.125, 0.625, 0.25]);
    assert_eq!(
        batch
            .schema()
            .field_with_name("truncated")
            .expect("field")
            .data_type(),
        &DataType::Boolean
    );
}

#[test]
fn generated_choice_without_step_is_strict() {
    let g = generated_request("lx-1", 1);
    let row = RequestRow::from_response(&g, &generated_response(&g, " 7 ", false), None, "m");
    assert_eq!(row.choice.as_deref(), Some("7"));
    let row = RequestRow::from_response(&g, &generated_response(&g, "7.", false), None, "m");
    assert_eq!(row.choice, None);
    let c = common::request(
        "lx-1",
        1,
        c2s_records::Contract::GeneratedCode,
        c2s_records::Decoding::Greedy { max_new_tokens: 8 },
    );
    let row = RequestRow::from_response(&c, &generated_response(&c, "C", false), None, "m");
    assert_eq!(
        row.choice.as_deref(),
        Some("7"),
        "code contract maps code to value"
    );
}

#[test]
fn trajectories_round_trip() {
    let ts = vec![
        trajectory("ar-001", "Serial/UnionCall/code", false, true),
        trajectory("lx-002", "SerialStop/Full/code", true, false),
    ];
    let rows: Vec<TrajectoryRow> = ts.iter().map(TrajectoryRow::from).collect();
    assert_eq!(rows[0].membership, "malformed");
    assert_eq!(rows[0].stop_category, None);
    assert_eq!(rows[0].confidence_steps, 2);
    assert_eq!(rows[1].stop_category.as_deref(), Some("cap_exhaustion"));
    assert_eq!(rows[1].confidence_product, None);
    assert_eq!(rows[1].confidence_steps, 0);
    let back = round_trip(&rows);
    for (row, t) in back.iter().zip(&ts) {
        assert_eq!(&row.to_trajectory().expect("decode"), t);
    }

    let dir = tempfile::tempdir().expect("tempdir");
    let mut w =
        PartWriter::<TrajectoryRow>::open(dir.path(), 3, PartConfig::default()).expect("open");
    w.extend(rows.clone());
    w.finish().expect("roll");
    let tdir = dir.path().join("trajectories");
    assert_eq!(read_trajectories(&tdir).expect("read"), rows);
    assert_eq!(read_trajectory_records(&tdir).expect("read"), ts);
}

#[test]
fn outcomes_round_trip() {
    let os = vec![
        outcome("a", true, true),
        outcome("b", true, false),
        outcome("c", false, true),
        outcome("d", false, false),
    ];
    let rows: Vec<OutcomeRow> = os.iter().map(OutcomeRow::from).collect();
    assert_eq!(rows[0].comparison, "Native/code vs Serial/Full/code");
    round_trip(&rows);

    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = PartWriter::<OutcomeRow>::open(dir.path(), 0, PartConfig::default()).expect("open");
    w.extend(rows.clone());
    w.finish().expect("roll");
    let odir = dir.path().join("outcomes");
    assert_eq!(read_outcomes(&odir).expect("read"), rows);
    assert_eq!(read_paired_outcomes(&odir).expect("read"), os);
}

#[test]
fn metrics_round_trip() {
    let rows = MetricsRow::stamp(
        vec![
            metric(3, Some(4), "scr"),
            metric(3, None, "scr"),
            metric(3, Some(8), "native_em"),
        ],
        1_760_000_000_123,
    );
    round_trip(&rows);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = PartWriter::<MetricsRow>::open(dir.path(), 0, PartConfig::default()).expect("open");
    w.extend(rows.clone());
    w.finish().expect("roll");
    assert_eq!(
        read_metrics(&dir.path().join("metrics")).expect("read"),
        rows
    );
}

#[test]
fn rejects_round_trip() {
    let rows = vec![
        RejectRow::new(
            "banks/dev.jsonl",
            "banks/dev.jsonl:17",
            Some("ar-17".into()),
            "8 candidates required, got 7",
        ),
        RejectRow::new(
            "kafka:items",
            "items/2@4411",
            None,
            "invalid JSON: expected value at line 1",
        ),
    ];
    round_trip(&rows);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = PartWriter::<RejectRow>::open(dir.path(), 0, PartConfig::default()).expect("open");
    w.extend(rows.clone());
    w.finish().expect("roll");
    assert_eq!(
        read_rejects(&dir.path().join("rejects")).expect("read"),
        rows
    );
}

#[test]
fn request_reader_reads_all_parts() {
    let rows = request_rows();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = PartWriter::<RequestRow>::open(dir.path(), 0, PartConfig::default()).expect("open");
    for r in &rows {
        w.push(r.clone());
        w.roll().expect("roll");
    }
    assert_eq!(w.next_seq(), rows.len() as u64);
    assert_eq!(
        read_requests(&dir.path().join("requests")).expect("read"),
        rows
    );
}

#[test]
fn empty_batches_have_the_schema() {
    assert_eq!(RequestRow::to_batch(&[]).expect("batch").num_columns(), 28);
    assert_eq!(
        TrajectoryRow::to_batch(&[]).expect("batch").num_columns(),
        39
    );
    assert_eq!(OutcomeRow::to_batch(&[]).expect("batch").num_columns(), 10);
    assert_eq!(MetricsRow::to_batch(&[]).expect("batch").num_columns(), 13);
    assert_eq!(RejectRow::to_batch(&[]).expect("batch").num_columns(), 4);
}

/// A coverage decision (answered, and failed) survives a part, and its derived columns are
/// the record's own choice, rejection and scores.
#[test]
fn decisions_round_trip() {
    use c2s_records::{CoverageSplit, Decision, DecisionSpec, NameVariant, SetKind};
    use c2s_sinks::DecisionRow;
    let answered = Decision {
        case_id: "banking77:test:0001".into(),
        task: "banking77".into(),
        split: CoverageSplit::Test,
        reference: "card_arrival".into(),
        spec: DecisionSpec {
            set: SetKind::Absent,
            k: 2,
            names: NameVariant::Neutral,
            with_none: true,
        },
        labels: vec!["a".into(), "b".into(), "none".into()],
        probabilities: vec![0.25, 0.15, 0.6],
        request_id: "r1".into(),
        model: "m@0123".into(),
        prompt_tokens: 200,
        latency_ms: 12.5,
        error: None,
        task_labels: Some(77),
        scoring: c2s_records::ScoringRule::MeanPerToken,
        raw: Some(c2s_records::OptionLogprobs {
            logprobs: vec![-1.5, -2.0, -0.5],
            token_logprobs: vec![vec![-1.0, -0.5], vec![-2.0], vec![-0.25, -0.125, -0.125]],
        }),
    };
    let failed = Decision {
        probabilities: vec![],
        request_id: "r2".into(),
        error: Some("engine: out of context".into()),
        raw: None,
        spec: DecisionSpec {
            set: SetKind::Full,
            k: 77,
            names: NameVariant::Natural,
            with_none: false,
        },
        split: CoverageSplit::Calibration,
        ..answered.clone()
    };
    let rows = vec![DecisionRow(answered.clone()), DecisionRow(failed)];
    assert_eq!(round_trip(&rows), rows);
    let batch = DecisionRow::to_batch(&rows).unwrap();
    let col = |name: &str| batch.column(batch.schema().index_of(name).unwrap()).clone();
    assert_eq!(col("choice").as_string::<i32>().value(0), "none");
    assert!(col("rejected").as_boolean().value(0));
    assert!(col("choice").is_null(1));
    assert!(col("probabilities").is_null(1));
    let max_prob = col("max_prob");
    let max_prob = max_prob.as_primitive::<Float64Type>();
    assert!((max_prob.value(0) - 0.625).abs() < 1e-12);
    assert_eq!(
        col("arm").as_string::<i32>().value(0),
        "absent/k2/neutral/none"
    );
}

/// The raw-score columns were added later: a part without them (an older run) reads them as
/// null, its decisions as scored by summing; a scored answer with raw scores survives
/// `requests/` and comes back for resume.
#[test]
fn raw_scores_round_trip_and_older_parts_read_them_as_null() {
    use c2s_records::{Answer, CoverageSplit, Decision, DecisionSpec, NameVariant, SetKind};
    use c2s_sinks::{response_from_row, DecisionRow};
    let raw = c2s_records::OptionLogprobs {
        logprobs: vec![-0.75, -2.0, -1.0],
        token_logprobs: vec![vec![-0.5, -0.25], vec![-2.0], vec![-1.0]],
    };
    let d = Decision {
        case_id: "c".into(),
        task: "t".into(),
        split: CoverageSplit::Test,
        reference: "a".into(),
        spec: DecisionSpec {
            set: SetKind::Present,
            k: 2,
            names: NameVariant::Natural,
            with_none: true,
        },
        labels: vec!["a".into(), "b".into(), "none".into()],
        probabilities: vec![0.5, 0.2, 0.3],
        request_id: "r".into(),
        model: "m".into(),
        prompt_tokens: 3,
        latency_ms: 1.0,
        error: None,
        task_labels: Some(5),
        scoring: c2s_records::ScoringRule::Summed,
        raw: Some(raw.clone()),
    };
    let rows = vec![DecisionRow(d.clone())];
    assert_eq!(round_trip(&rows), rows);
    let batch = DecisionRow::to_batch(&rows).unwrap();
    let old: Vec<usize> = (0..batch.num_columns())
        .filter(|&i| {
            ![
                "task_labels",
                "scoring",
                "option_logprobs",
                "option_token_counts",
                "option_token_logprobs",
            ]
            .contains(&batch.schema().field(i).name().as_str())
        })
        .collect();
    let older = DecisionRow::from_batch(&batch.project(&old).unwrap()).unwrap();
    assert_eq!(older[0].0.raw, None);
    assert_eq!(older[0].0.task_labels, None);
    assert_eq!(older[0].0.scoring, c2s_records::ScoringRule::Summed);
    assert_eq!(older[0].0.probabilities, d.probabilities);

    let request = scored_request("c", 1);
    let mut response = scored_response(&request);
    response.answer = Answer::Scored {
        probabilities: vec![0.125, 0.625, 0.25],
        raw: Some(raw.clone()),
    };
    let row = RequestRow::from_response(&request, &response, None, "m");
    assert_eq!(row.option_token_counts, Some(vec![2, 1, 1]));
    let rows = vec![row];
    let back = round_trip(&rows);
    assert_eq!(back, rows);
    let (_, resumed) = response_from_row(&back[0]).unwrap();
    assert_eq!(resumed.answer, response.answer);
    let batch = RequestRow::to_batch(&rows).unwrap();
    let old: Vec<usize> = (0..batch.num_columns())
        .filter(|&i| {
            !batch.schema().field(i).name().starts_with("option_token")
                && batch.schema().field(i).name() != "option_logprobs"
        })
        .collect();
    let older = RequestRow::from_batch(&batch.project(&old).unwrap()).unwrap();
    let (_, resumed) = response_from_row(&older[0]).unwrap();
    assert!(matches!(resumed.answer, Answer::Scored { raw: None, .. }));
}

/// The typed columns are strings only here: a value read back that names no arm, support,
/// plan origin, operation or placement is an error naming the column and the value.
#[test]
fn a_bad_typed_string_is_an_error_naming_its_column() {
    let t = trajectory("ar-001", "Serial/UnionCall/code", false, true);
    let row = TrajectoryRow::from(&t);
    assert_eq!(row.support, "UnionCall");
    assert_eq!(row.plan_origin.as_deref(), Some("observed"));
    assert_eq!(row.operation.as_deref(), Some("reverse"));
    assert_eq!(row.placement.as_deref(), Some("late"));
    let bad = |edit: fn(&mut TrajectoryRow), column: &str, value: &str| {
        let mut r = row.clone();
        edit(&mut r);
        let e = r.to_trajectory().expect_err("a bad value");
        assert_eq!(e.column, column, "{e}");
        assert!(e.message.contains(value), "{e}");
    };
    bad(|r| r.arm = "Serial/Bogus/code".into(), "arm", "Bogus");
    bad(|r| r.support = "full".into(), "support", "full");
    bad(
        |r| r.plan_origin = Some("stolen".into()),
        "plan_origin",
        "stolen",
    );
    bad(
        |r| r.operation = Some("rotate".into()),
        "operation",
        "rotate",
    );
    bad(
        |r| r.placement = Some("middle".into()),
        "placement",
        "middle",
    );
    let mut whole = trajectory("ar-001", "Native/code", false, true);
    whole.support = None;
    let row = TrajectoryRow::from(&whole);
    assert_eq!(row.support, "-");
    assert_eq!(row.to_trajectory().expect("decode"), whole);
}

/// A `snapshot_error` row has no domain (the empty string in the column); a metric name that
/// is no metric is an error naming the column and the value.
#[test]
fn metric_rows_read_their_domain_and_metric_typed() {
    use arrow::array::{ArrayRef, StringArray};
    use arrow::record_batch::RecordBatch;
    use c2s_records::{Metric, MetricRow};
    let error = MetricRow::empty(4, "", None, None, "boom", Metric::SnapshotError);
    let rows = MetricsRow::stamp(vec![error, metric(4, None, "position_accuracy_3")], 1);
    let back = round_trip(&rows);
    assert_eq!(back[0].metric.domain, None);
    assert_eq!(back[1].metric.metric, Metric::PositionAccuracy(3));
    let batch = MetricsRow::to_batch(&rows).expect("batch");
    let column = |name: &str| batch.schema().index_of(name).expect("column");
    for (name, value) in [("metric", "bogus_metric"), ("domain", "astrology")] {
        let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
        columns[column(name)] = std::sync::Arc::new(StringArray::from(vec![value, value]));
        let bad = RecordBatch::try_new(batch.schema(), columns).expect("batch");
        let e = MetricsRow::from_batch(&bad).expect_err("a bad value");
        assert_eq!(e.column, name, "{e}");
        assert!(e.message.contains(value), "{e}");
    }
}
