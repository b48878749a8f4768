//! Shared by the controller tests: two items, scripted responses and a driver.

// Test code: a failed unwrap fails the test that called it (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Each test binary uses some of these helpers.
#![allow(dead_code)]

use c2s_protocol::{Controller, ControllerConfig};
use c2s_records::{Answer, FinishReason, Item, Request, Response, Trajectory};
use serde_json::Value;

pub fn figure_one() -> Item {
    c2s_records::parse_item(
        r#"{"item_id":"fig1","domain":"arithmetic","problem":"What is 39 * 15?","target":"585",
           "candidates":["585","589","385","389","485","489","685","689"]}"#,
        &Default::default(),
    )
    .unwrap()
}

pub fn lexical() -> Item {
    c2s_records::parse_item(
        r#"{"item_id":"lex1","domain":"lexical","problem":"a round fruit","target":"apple",
           "candidates":["apple","angle","chair","crown","river","ratio","table","token"]}"#,
        &Default::default(),
    )
    .unwrap()
}

/// A scored answer putting probability 0.9 on `value` (if listed) and the rest spread evenly.
pub fn scored(req: &Request, value: &str) -> Response {
    let n = req.options.len();
    let probabilities = match req.options.iter().position(|o| o.value == value) {
        Some(i) if n > 1 => (0..n)
            .map(|j| if j == i { 0.9 } else { 0.1 / (n - 1) as f64 })
            .collect(),
        Some(_) => vec![1.0],
        None => vec![1.0 / n as f64; n],
    };
    Response {
        request_id: req.request_id.clone(),
        answer: Answer::Scored {
            probabilities,
            raw: None,
        },
        prompt_tokens: 100,
        completion_tokens: 1,
        latency_ms: 1.0,
        cached: false,
    }
}

pub fn generated(req: &Request, text: &str) -> Response {
    Response {
        request_id: req.request_id.clone(),
        answer: Answer::Generated {
            text: text.into(),
            finish_reason: FinishReason::Stop,
            truncated: false,
        },
        prompt_tokens: 100,
        completion_tokens: 2,
        latency_ms: 1.0,
        cached: false,
    }
}

/// Drive a controller to completion; `answer(request) -> response`.
pub fn run(
    mut c: Controller,
    mut answer: impl FnMut(&Request) -> Response,
) -> (Trajectory, Vec<Request>) {
    let mut queue = c.start().unwrap();
    let mut seen = Vec::new();
    while let Some(req) = queue.pop() {
        let resp = answer(&req);
        seen.push(req);
        queue.extend(c.on_response(&resp).unwrap());
    }
    assert!(c.is_complete());
    (c.trajectory("test-model").unwrap(), seen)
}

pub fn state_of(req: &Request) -> Value {
    serde_json::from_str(&req.state).unwrap()
}

pub fn cfg() -> ControllerConfig {
    ControllerConfig {
        option_seed: 11,
        ..Default::default()
    }
}
