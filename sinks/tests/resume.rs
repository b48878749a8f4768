//! Readers used by a resumed run: answers of completed requests, completed trajectories and
//! outcomes, and the last metrics snapshot.

mod common;

use c2s_records::{Answer, ResponseClass};
use c2s_sinks::{
    max_snapshot, read_outcome_keys, read_request_answers, read_trajectory_keys, response_from_row,
    MetricsRow, OutcomeRow, PartConfig, PartWriter, RequestRow, TrajectoryRow,
};
use common::*;

#[test]
fn response_from_row_reproduces_scored_responses() {
    let r = scored_request("ar-9", 2);
    let resp = scored_response(&r);
    let row = RequestRow::from_response(&r, &resp, None, "m");
    let (key, back) = response_from_row(&row).expect("answer");
    assert_eq!(key, r.prompt_key());
    assert_eq!(back, resp);
}

#[test]
fn response_from_row_reproduces_generated_responses() {
    let r = generated_request("lx-9", 1);
    for (text, truncated) in [(" 5\n", false), ("", false), ("The answer is", true)] {
        let resp = generated_response(&r, text, truncated);
        let row = RequestRow::from_response(
            &r,
            &resp,
            Some(&step(&r, "5", ResponseClass::StrictCorrect)),
            "m",
        );
        let (key, back) = response_from_row(&row).expect("answer");
        assert_eq!(key, r.prompt_key());
        assert_eq!(back, resp);
    }
}

#[test]
fn response_from_row_rejects_rows_without_an_answer() {
    let r = generated_request("lx-9", 1);
    let failed = RequestRow::failed(&r, "m", "timeout", 30_000.0);
    assert!(response_from_row(&failed).is_err());
    let mut row = RequestRow::from_response(&r, &generated_response(&r, "5", false), None, "m");
    row.finish_reason = None;
    let e = response_from_row(&row).expect_err("no finish reason");
    assert_eq!(e.column, "finish_reason");
    row.finish_reason = Some("eos".into());
    assert!(response_from_row(&row).is_err());
}

#[test]
fn request_answers_read_back_through_parquet() {
    let run = tempfile::tempdir().expect("tempdir");
    let s = scored_request("ar-1", 1);
    let g = generated_request("lx-1", 1);
    let rs = scored_response(&s);
    let rg = generated_response(&g, "7", false);
    let mut w = PartWriter::<RequestRow>::open(run.path(), 0, PartConfig::default()).expect("open");
    w.push(RequestRow::from_response(&s, &rs, None, "m"));
    w.push(RequestRow::failed(&g, "m", "engine error", 1.0));
    w.roll().expect("roll");
    w.push(RequestRow::from_response(&g, &rg, None, "m"));
    w.finish().expect("roll");

    let answers = read_request_answers(&run.path().join("requests")).expect("read");
    assert_eq!(
        answers,
        vec![(s.prompt_key(), rs.clone()), (g.prompt_key(), rg.clone())],
        "failed requests are skipped"
    );
    assert!(matches!(answers[0].1.answer, Answer::Scored { .. }));
}

#[test]
fn keys_and_snapshots() {
    let run = tempfile::tempdir().expect("tempdir");
    assert_eq!(
        max_snapshot(&run.path().join("metrics")).expect("empty"),
        None
    );

    let mut tw =
        PartWriter::<TrajectoryRow>::open(run.path(), 0, PartConfig::default()).expect("open");
    tw.push(TrajectoryRow::from(&trajectory(
        "a",
        "Native/code",
        false,
        true,
    )));
    tw.push(TrajectoryRow::from(&trajectory(
        "a",
        "Serial/Full/code",
        false,
        true,
    )));
    tw.roll().expect("roll");
    tw.push(TrajectoryRow::from(&trajectory(
        "b",
        "Native/code",
        false,
        false,
    )));
    tw.finish().expect("roll");
    let keys = read_trajectory_keys(&run.path().join("trajectories")).expect("keys");
    let expected: Vec<(String, String)> = [
        ("a", "Native/code"),
        ("a", "Serial/Full/code"),
        ("b", "Native/code"),
    ]
    .iter()
    .map(|(i, a)| (i.to_string(), a.to_string()))
    .collect();
    assert_eq!(keys.into_iter().collect::<Vec<_>>(), expected);

    let mut ow =
        PartWriter::<OutcomeRow>::open(run.path(), 1, PartConfig::default()).expect("open");
    ow.push(OutcomeRow::from(&outcome("a", true, true)));
    ow.push(OutcomeRow::from(&outcome("b", true, false)));
    ow.finish().expect("roll");
    let keys = read_outcome_keys(&run.path().join("outcomes")).expect("keys");
    assert_eq!(keys.len(), 2);
    assert!(keys.contains(&(
        "b".to_string(),
        "Native/code vs Serial/Full/code".to_string()
    )));

    let mut mw =
        PartWriter::<MetricsRow>::open(run.path(), 0, PartConfig::default()).expect("open");
    mw.extend(MetricsRow::stamp(
        vec![metric(1, None, "scr"), metric(7, Some(3), "scr")],
        5,
    ));
    mw.roll().expect("roll");
    mw.extend(MetricsRow::stamp(vec![metric(4, None, "scr")], 6));
    mw.finish().expect("roll");
    assert_eq!(
        max_snapshot(&run.path().join("metrics")).expect("max"),
        Some(7)
    );
}
