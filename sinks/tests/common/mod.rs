//! Sample records shared by the sink tests.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(dead_code)]

use std::fs::File;
use std::path::Path;

use arrow::record_batch::RecordBatch;
use c2s_records::MetricRow;
use c2s_records::{
    Answer, Confidence, Contract, Decoding, Domain, FinishReason, Membership, PairedOutcome,
    Request, RequestOption, Response, ResponseClass, StepRecord, StopCategory, StopOutcome,
    Trajectory,
};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

pub fn request(item: &str, step: u32, contract: Contract, decoding: Decoding) -> Request {
    let options: Vec<RequestOption> = ["3", "5", "7"]
        .iter()
        .zip(["A", "B", "C"])
        .map(|(v, c)| RequestOption {
            code: c.to_string(),
            value: v.to_string(),
        })
        .collect();
    let mut r = Request {
        request_id: String::new(),
        item_id: item.to_string(),
        arm: "Serial/UnionCall/code".into(),
        step,
        system: if step.is_multiple_of(2) {
            Some("Answer with one code.".to_string())
        } else {
            None
        },
        user: format!("{{\"question\":\"Q {item} {step}\",\"state\":{{\"prefix\":\"\"}}}}"),
        assistant_prefix: if step == 3 { Some("3".into()) } else { None },
        state: "{\"prefix\":\"\"}".to_string(),
        instruction: "Choose the next character.".to_string(),
        options,
        contract,
        decoding,
        closing_context: Vec::new(),
    };
    r.request_id = r.derive_id();
    r
}

pub fn scored_request(item: &str, step: u32) -> Request {
    request(item, step, Contract::ScoredCode, Decoding::Score)
}

pub fn generated_request(item: &str, step: u32) -> Request {
    request(
        item,
        step,
        Contract::GeneratedCharacter,
        Decoding::Greedy { max_new_tokens: 8 },
    )
}

pub fn scored_response(r: &Request) -> Response {
    Response {
        request_id: r.request_id.clone(),
        answer: Answer::Scored {
            probabilities: vec![0.125, 0.625, 0.25],
            raw: None,
        },
        prompt_tokens: 412,
        completion_tokens: 0,
        latency_ms: 12.345678,
        cached: false,
    }
}

pub fn generated_response(r: &Request, text: &str, truncated: bool) -> Response {
    Response {
        request_id: r.request_id.clone(),
        answer: Answer::Generated {
            text: text.to_string(),
            finish_reason: if truncated {
                FinishReason::Length
            } else {
                FinishReason::Stop
            },
            truncated,
        },
        prompt_tokens: 380,
        completion_tokens: 3,
        latency_ms: 81.5,
        cached: true,
    }
}

pub fn step(r: &Request, emitted: &str, class: ResponseClass) -> StepRecord {
    StepRecord {
        position: r.step,
        support: r.values().iter().map(|s| s.to_string()).collect(),
        filled: false,
        aborted: false,
        request_id: Some(r.request_id.clone()),
        emitted: emitted.to_string(),
        required: "5".to_string(),
        class: Some(class),
        probabilities: Some(vec![0.125, 0.625, 0.25]),
        chosen_probability: Some(0.625),
        top_probability: Some(0.625),
        prompt_tokens: 412,
        completion_tokens: 0,
        latency_ms: 12.5,
        matched_prompt_tokens: None,
    }
}

pub fn trajectory(item: &str, arm: &str, stop: bool, confidence: bool) -> Trajectory {
    let r = scored_request(item, 1);
    let mut filled = step(&r, "7", ResponseClass::StrictCorrect);
    filled.filled = true;
    filled.request_id = None;
    filled.class = None;
    filled.probabilities = None;
    filled.chosen_probability = None;
    filled.top_probability = None;
    Trajectory {
        item_id: item.to_string(),
        domain: if stop {
            Domain::Lexical
        } else {
            Domain::Arithmetic
        },
        length: 3,
        model: "qwen3-0.6b".to_string(),
        arm: c2s_records::LabeledArm::parse(arm).unwrap_or_else(|e| panic!("{e}")),
        support: Some(c2s_records::Support::UNION_CALL),
        output: "5#7".to_string(),
        correct: false,
        valid: false,
        fidelity: if stop { None } else { Some(true) },
        plan: if stop { None } else { Some("547".to_string()) },
        plan_origin: if stop {
            None
        } else {
            Some(c2s_records::PlanSource::Observed)
        },
        plan_differences: if stop { None } else { Some(2) },
        base_id: (!stop).then(|| "cr-L3-01".to_string()),
        operation: (!stop).then_some(c2s_records::Operation::Reverse),
        placement: (!stop).then_some(c2s_records::Placement::Late),
        repeated: (!stop).then_some(true),
        pattern: (!stop).then(|| "101".to_string()),
        membership: Membership::Malformed,
        recombination: false,
        stop: stop.then_some(StopOutcome {
            category: StopCategory::CapExhaustion,
            exact_completion: false,
            content_em: false,
            first_l_correct: true,
            cap_exhausted: true,
            content_error: false,
            steps: 6,
        }),
        aborted: stop,
        calls: 2,
        fills: 1,
        prompt_tokens: 824,
        completion_tokens: 0,
        latency_ms: 25.0,
        confidence: confidence.then_some(Confidence {
            product: 0.390625,
            geometric_mean: 0.625,
            min_top: 0.625,
            steps: 2,
        }),
        position_correct: vec![true, false, true],
        steps: vec![
            step(&r, "5", ResponseClass::StrictCorrect),
            step(&scored_request(item, 2), "#", ResponseClass::OtherInvalid),
            filled,
        ],
    }
}

pub fn outcome(item: &str, native: bool, serial: bool) -> PairedOutcome {
    PairedOutcome {
        item_id: item.to_string(),
        domain: Domain::Lexical,
        length: 5,
        model: "qwen3-0.6b".to_string(),
        native_arm: "Native/code".to_string(),
        serial_arm: "Serial/Full/code".to_string(),
        native_correct: native,
        serial_correct: serial,
        pattern: None,
    }
}

pub fn metric(snapshot: u64, length: Option<u32>, metric: &str) -> MetricRow {
    MetricRow {
        snapshot,
        model: "qwen3-0.6b".to_string(),
        domain: Some(Domain::Arithmetic),
        length,
        comparison: "Native/code vs Serial/Full/code".to_string(),
        metric: c2s_records::Metric::parse(metric).unwrap_or_else(|e| panic!("{e}")),
        value: length.map(|l| f64::from(l) / 10.0),
        numerator: length.map(u64::from),
        denominator: Some(10),
        ci_low: length.map(|_| 0.1),
        ci_high: None,
        ci_method: length.map(|_| "bootstrap_percentile".to_string()),
    }
}

/// Reads one Parquet file with the parquet crate alone.
pub fn read_parquet(path: &Path) -> Vec<RecordBatch> {
    let file = File::open(path).expect("open part");
    ParquetRecordBatchReaderBuilder::try_new(file)
        .expect("parquet footer")
        .build()
        .expect("reader")
        .collect::<Result<Vec<_>, _>>()
        .expect("batches")
}
