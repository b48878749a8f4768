//! The client against scripted servers on loopback: the bytes each request sends, the
//! retries (which errors, how many, the delays, the final message) and the errors that name a
//! missing or malformed field.

use std::io::Write;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use backon::BackoffBuilder;

use super::*;

/// One request as the server saw it: the path and the body.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// A server on loopback answering each request `(path, body)` with `respond`'s status and
/// JSON body; returns its base URL and the requests it saw.
fn serve(respond: impl Fn(&str, &str) -> (u16, String) + Send + 'static) -> (String, Seen) {
    serve_with_headers(move |path, body| {
        let (status, answer) = respond(path, body);
        (status, String::new(), answer)
    })
}

/// [`serve`] with extra header lines (each ending in `\r\n`) before the body.
fn serve_with_headers(
    respond: impl Fn(&str, &str) -> (u16, String, String) + Send + 'static,
) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}/v1", listener.local_addr().expect("address"));
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let (path, body) = super::tests::read_request(&mut stream);
            let (status, headers, answer) = respond(&path, &body);
            log.lock().expect("log").push((path, body));
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (url, seen)
}

fn settings(base_url: &str, max_retries: u32) -> OpenAiSettings {
    OpenAiSettings {
        base_url: base_url.to_string(),
        model: "m".into(),
        max_retries,
        retry_backoff: Duration::from_millis(1),
        timeout: Duration::from_secs(30),
        ..OpenAiSettings::default()
    }
}

fn info(base_url: &str) -> ServerInfo {
    ServerInfo {
        base_url: base_url.to_string(),
        model: "m".into(),
        model_entry: None,
        server: None,
        version: None,
        prompt_logprobs: true,
        scoring_problem: None,
        insecure_skip_verify: false,
    }
}

fn bodies(seen: &Seen, path: &str) -> Vec<String> {
    let seen = seen.lock().expect("log");
    seen.iter()
        .filter(|(p, _)| p == path)
        .map(|(_, b)| b.clone())
        .collect()
}

#[test]
fn the_delays_are_the_former_ones() {
    // The loop before backon: `retry_backoff`, doubled per retry, every delay at most 30 s.
    for (first, retries) in [(500u64, 8u32), (7000, 4), (45_000, 2), (0, 3), (250, 0)] {
        let s = OpenAiSettings {
            retry_backoff: Duration::from_millis(first),
            max_retries: retries,
            ..OpenAiSettings::default()
        };
        let client = Client::new(&s).expect("client");
        let mut former = Vec::new();
        let mut backoff = s.retry_backoff;
        for _ in 0..retries {
            former.push(backoff.min(Duration::from_secs(30)));
            backoff = backoff.saturating_mul(2).min(Duration::from_secs(30));
        }
        let delays: Vec<Duration> = client.backoff().build().collect();
        assert_eq!(
            delays, former,
            "retry_backoff {first} ms, {retries} retries"
        );
    }
}

#[test]
fn statuses_429_and_5xx_are_retried_until_an_answer() {
    let calls = Arc::new(Mutex::new(0));
    let count = Arc::clone(&calls);
    let (url, seen) = serve(move |_, _| {
        let mut n = count.lock().expect("count");
        *n += 1;
        match *n {
            1 => (429, r#"{"error":{"message":"slow down"}}"#.into()),
            2 => (503, "busy".into()),
            _ => (200, r#"{"data":[{"id":"m"}]}"#.into()),
        }
    });
    let client = Client::new(&settings(&url, 4)).expect("client");
    let answer = client.get::<wire::ModelList>("models").expect("answered");
    assert_eq!(answer.body.data[0].id(), Some("m"));
    assert_eq!(bodies(&seen, "/v1/models").len(), 3);
}

#[test]
fn the_last_retryable_error_counts_the_attempts() {
    let (url, seen) = serve(|_, _| (500, "boom".into()));
    let client = Client::new(&settings(&url, 2)).expect("client");
    let err = client
        .get::<wire::ModelList>("models")
        .err()
        .expect("fails")
        .to_string();
    assert_eq!(
        err,
        format!("{url}/models: HTTP 500 Internal Server Error: boom (after 3 attempts)")
    );
    assert_eq!(bodies(&seen, "/v1/models").len(), 3);
    // No retries: one attempt.
    let client = Client::new(&settings(&url, 0)).expect("client");
    let err = client
        .get::<wire::ModelList>("models")
        .err()
        .expect("fails")
        .to_string();
    assert!(err.ends_with("boom (after 1 attempts)"), "{err}");
}

#[test]
fn a_client_error_is_not_retried() {
    let (url, seen) = serve(|_, _| (400, r#"{"error":{"message":"bad"}}"#.into()));
    let client = Client::new(&settings(&url, 3)).expect("client");
    let err = client
        .get::<wire::ModelList>("models")
        .err()
        .expect("fails")
        .to_string();
    assert_eq!(
        err,
        format!(r#"{url}/models: HTTP 400 Bad Request: {{"error":{{"message":"bad"}}}}"#)
    );
    assert_eq!(bodies(&seen, "/v1/models").len(), 1);
}

#[test]
fn a_connection_error_is_retried() {
    // A port nothing listens on (bound, then closed).
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("a loopback port")
        .local_addr()
        .expect("address")
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let client = Client::new(&settings(&url, 1)).expect("client");
    let err = client
        .get::<wire::ModelList>("models")
        .err()
        .expect("fails")
        .to_string();
    assert!(
        err.starts_with(&format!("{url}/models: cannot connect")),
        "{err}"
    );
    assert!(err.ends_with("(after 2 attempts)"), "{err}");
}

#[test]
fn the_probe_sends_the_former_request() {
    let (url, seen) = serve(|path, _| {
        match path {
        "/v1/models" => (200, r#"{"object":"list","data":[{"id":"m","object":"model","created":5,"owned_by":"x"}]}"#.into()),
        "/v1/completions" => (200, r#"{"choices":[{"text":" Paris","logprobs":{"tokens":["The"," capital"],"token_logprobs":[null,-1.5],"top_logprobs":null}}],"usage":{"prompt_tokens":5,"completion_tokens":1}}"#.into()),
        _ => (404, r#"{"detail":"Not Found"}"#.into()),
    }
    });
    let info = probe(&settings(&url, 0)).expect("probed");
    assert!(info.prompt_logprobs, "{:?}", info.scoring_problem);
    assert_eq!(
        info.model_entry,
        Some(json!({"id": "m", "object": "model", "owned_by": "x"}))
    );
    assert_eq!(info.version, None);
    assert_eq!(
        bodies(&seen, "/v1/completions"),
        [
            r#"{"model":"m","prompt":"The capital of France is","max_tokens":1,"temperature":0.0,"echo":true,"logprobs":1}"#
        ]
    );
    assert_eq!(bodies(&seen, "/v1/models"), [""]);
    // Top log-probabilities: `echo` false, `logprobs` n.
    let top = OpenAiSettings {
        scoring: ScoringMethod::TopLogprobs(20),
        ..settings(&url, 0)
    };
    let info = probe(&top).expect("probed");
    assert!(!info.prompt_logprobs);
    assert_eq!(
        info.scoring_problem.as_deref(),
        Some("the server returned no top log-probabilities (/completions with logprobs)")
    );
    assert_eq!(
        bodies(&seen, "/v1/completions")[1],
        r#"{"model":"m","prompt":"The capital of France is","max_tokens":1,"temperature":0.0,"echo":false,"logprobs":20}"#
    );
}

#[test]
fn a_model_the_server_does_not_serve_is_refused() {
    let (url, _) = serve(|_, _| (200, r#"{"data":[{"id":"a"},{"id":"b"}]}"#.into()));
    let err = probe(&settings(&url, 0)).unwrap_err().to_string();
    assert!(err.contains("serves a, b, not `m`"), "{err}");
}

#[test]
fn chat_generation_sends_the_former_request() {
    let (url, seen) = serve(|_, _| {
        (
            200,
            r#"{"choices":[{"message":{"role":"assistant","content":"Paris."},"finish_reason":"length"}],"usage":{"prompt_tokens":12,"completion_tokens":3}}"#.into(),
        )
    });
    let s = OpenAiSettings {
        chat_template_kwargs: Some(json!({"enable_thinking": false})),
        ..settings(&url, 0)
    };
    let mut engine = OpenAiEngine::new(&s, info(&url), None, None).expect("engine");
    let job = GenerateJob {
        prompt: PromptSpec {
            system: Some("Be brief.".into()),
            user: "The capital of France?".into(),
            assistant_prefix: None,
        },
        max_new_tokens: 16,
    };
    let out = engine.generate(std::slice::from_ref(&job));
    let out = out[0].as_ref().expect("generated");
    assert_eq!(out.text, "Paris.");
    assert!(out.truncated);
    assert_eq!((out.prompt_tokens, out.completion_tokens), (12, 3));
    assert_eq!(
        bodies(&seen, "/v1/chat/completions"),
        [
            r#"{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"The capital of France?"}],"max_tokens":16,"temperature":0.0,"chat_template_kwargs":{"enable_thinking":false}}"#
        ]
    );
}

#[test]
fn an_answer_without_text_names_the_url_and_field() {
    let (url, _) = serve(|_, _| {
        (
            200,
            r#"{"choices":[{"message":{"role":"assistant","content":null}}]}"#.into(),
        )
    });
    let mut engine = OpenAiEngine::new(&settings(&url, 0), info(&url), None, None).expect("engine");
    let job = GenerateJob {
        prompt: PromptSpec {
            system: None,
            user: "Q?".into(),
            assistant_prefix: None,
        },
        max_new_tokens: 4,
    };
    let err = engine.generate(&[job])[0].clone().unwrap_err().to_string();
    assert!(err.contains(&format!("{url}/chat/completions")), "{err}");
    assert!(
        err.contains("no text (choices[0].message.content)"),
        "{err}"
    );
    assert!(err.contains(r#""content":null"#), "{err}");
}

#[test]
fn a_missing_or_malformed_field_is_named_with_the_url() {
    let (url, seen) = serve(|_, body| {
        let answer = if body.contains("missing") {
            r#"{"choices":[{"text":" A"}]}"#
        } else {
            r#"{"choices":[{"text":" A"}],"usage":{"prompt_tokens":"12","completion_tokens":1}}"#
        };
        (200, answer.into())
    });
    let top = OpenAiSettings {
        scoring: ScoringMethod::TopLogprobs(5),
        ..settings(&url, 0)
    };
    let engine = OpenAiEngine::new(&top, info(&url), None, None).expect("engine");
    let options = [" A".to_string()];
    let err = engine
        .top_logprobs("missing", 1, &options, &[330])
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!("request: {url}/completions: the server reported no usage.prompt_tokens")
    );
    let err = engine
        .top_logprobs("malformed", 1, &options, &[330])
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("{url}/completions")), "{err}");
    assert!(err.contains(r#""prompt_tokens":"12""#), "{err}");
    assert!(err.contains("invalid type"), "{err}");
    // The top-log-probability request itself.
    assert_eq!(
        bodies(&seen, "/v1/completions")[0],
        r#"{"model":"m","prompt":"missing","max_tokens":1,"temperature":0.0,"logprobs":5}"#
    );
}

/// `settings` with an outage watch of `max_outage`.
fn watched(
    url: &str,
    max_retries: u32,
    max_outage: Duration,
) -> (OpenAiSettings, Arc<OutageWatch>) {
    let watch = Arc::new(OutageWatch::new(max_outage));
    let settings = OpenAiSettings {
        outages: Some(Arc::clone(&watch)),
        retry_backoff: Duration::from_millis(10),
        ..settings(url, max_retries)
    };
    (settings, watch)
}

#[test]
fn an_unavailable_server_is_an_outage_waited_for_not_a_failed_request() {
    // 503 (with Retry-After), 502, 504, 408 and 429, more of them than max_retries allows,
    // then an answer.
    let calls = Arc::new(Mutex::new(0));
    let count = Arc::clone(&calls);
    let (url, seen) = serve_with_headers(move |_, _| {
        let mut n = count.lock().expect("count");
        *n += 1;
        let busy = |status: u16| (status, "Retry-After: 0\r\n".to_string(), "busy".to_string());
        match *n {
            1 => busy(503),
            2 => busy(502),
            3 => busy(504),
            4 => busy(408),
            5 => busy(429),
            _ => (200, String::new(), r#"{"data":[{"id":"m"}]}"#.into()),
        }
    });
    let (settings, watch) = watched(&url, 1, Duration::from_secs(60));
    let client = Client::new(&settings).expect("client");
    let answer = client.get::<wire::ModelList>("models").expect("answered");
    assert_eq!(answer.body.data[0].id(), Some("m"));
    assert_eq!(bodies(&seen, "/v1/models").len(), 6);
    let outages = watch.outages();
    assert_eq!(outages.len(), 1, "{outages:?}");
    assert_eq!(outages[0].faults, 5);
    assert!(outages[0].recovered);
    assert!(outages[0].cause.contains("HTTP 503"), "{outages:?}");
    assert!(!watch.active() && !watch.gave_up());
}

#[test]
fn a_refused_connection_is_an_outage_and_the_call_gives_up_after_max_outage() {
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("a loopback port")
        .local_addr()
        .expect("address")
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let (settings, watch) = watched(&url, 0, Duration::from_millis(300));
    let client = Client::new(&settings).expect("client");
    let err = client
        .get::<wire::ModelList>("models")
        .err()
        .expect("fails");
    let CallFailure::Outage(exceeded) = &err else {
        panic!("expected an outage, got {err}");
    };
    assert!(exceeded.cause.contains("cannot connect"), "{err}");
    assert!(err.to_string().contains("max_outage_seconds"), "{err}");
    assert!(watch.gave_up());
    assert!(
        watch.outages()[0].faults >= 2,
        "retried while the outage lasted"
    );
    // As an engine error it is an outage, not a failed request.
    assert!(matches!(EngineError::from(err), EngineError::Outage(_)));
}

#[test]
fn other_server_errors_and_client_errors_are_failed_requests_not_outages() {
    let (url, seen) = serve(|path, _| {
        if path.ends_with("/models") {
            (500, "boom".into())
        } else {
            (400, "bad".into())
        }
    });
    let (settings, watch) = watched(&url, 1, Duration::from_secs(60));
    let client = Client::new(&settings).expect("client");
    let err = client
        .get::<wire::ModelList>("models")
        .err()
        .expect("fails");
    assert!(
        matches!(&err, CallFailure::Failed(m) if m.ends_with("boom (after 2 attempts)")),
        "{err}"
    );
    assert_eq!(bodies(&seen, "/v1/models").len(), 2);
    let err = client
        .post::<Value>("completions", &serde_json::json!({}))
        .err()
        .expect("fails");
    assert!(
        matches!(&err, CallFailure::Failed(m) if m.contains("HTTP 400")),
        "{err}"
    );
    assert!(watch.outages().is_empty());
}

#[test]
fn a_body_cut_off_mid_answer_is_an_outage() {
    // Content-Length promises more than is sent, then the connection closes.
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}/v1", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { break };
            let _ = super::tests::read_request(&mut stream);
            let body = r#"{"data":[{"id":"m"}]}"#;
            let sent = if n == 0 { &body[..8] } else { body };
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{sent}",
                body.len()
            );
        }
    });
    let (settings, watch) = watched(&url, 0, Duration::from_secs(60));
    let client = Client::new(&settings).expect("client");
    let answer = client.get::<wire::ModelList>("models").expect("answered");
    assert_eq!(answer.body.data[0].id(), Some("m"));
    let outages = watch.outages();
    assert_eq!(outages.len(), 1);
    assert!(
        outages[0].cause.contains("reading the response"),
        "{outages:?}"
    );
}

#[test]
fn retry_after_is_seconds_or_an_http_date() {
    assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
    assert_eq!(parse_retry_after(" 0 "), Some(Duration::ZERO));
    assert_eq!(
        parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
        Some(Duration::ZERO),
        "a date in the past is no wait"
    );
    let later = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(120));
    let wait = parse_retry_after(&later).expect("a date");
    assert!(
        wait > Duration::from_secs(100) && wait <= Duration::from_secs(120),
        "{wait:?}"
    );
    assert_eq!(parse_retry_after("soon"), None);
}

/// llama.cpp's answer shape: `content[0]` with its top entries as log-probabilities, or with
/// `post_sampling_probs` as probabilities.
fn llamacpp_answer(entries: &[(u32, &str, f64)], post_sampling: bool) -> String {
    let (list, value) = if post_sampling {
        ("top_probs", "prob")
    } else {
        ("top_logprobs", "logprob")
    };
    let top: Vec<Value> = entries
        .iter()
        .map(|(id, token, v)| json!({"id": id, "token": token, value: v}))
        .collect();
    json!({
        "choices": [{"text": entries[0].1, "logprobs": {"content": [{list: top}]}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 1},
    })
    .to_string()
}

#[test]
fn logit_bias_scoring_reads_a_missing_option_relative_to_the_top_token() {
    // The top entries hold option A (330) and the top token X (500) but not option B (389):
    // the second request raises X, A and B and reads them relative to X.
    let (url, seen) = serve(|_, body| {
        let answer = if body.contains("post_sampling_probs") {
            llamacpp_answer(
                &[(500, " X", 0.6), (330, " A", 0.3), (389, " B", 0.1)],
                true,
            )
        } else {
            llamacpp_answer(&[(500, " X", -0.5), (330, " A", -1.2)], false)
        };
        (200, answer)
    });
    let settings = OpenAiSettings {
        scoring: ScoringMethod::LogitBias(2),
        ..settings(&url, 0)
    };
    let engine = OpenAiEngine::new(&settings, info(&url), None, None).expect("engine");
    let options = [" A".to_string(), " B".to_string()];
    let (logprobs, served) = engine
        .top_logprobs("Q?", 9, &options, &[330, 389])
        .expect("answered")
        .expect("every option read");
    assert_eq!(served, 9);
    // Both from the biased answer, anchored on X's -0.5: A's ratio 0.3/0.6, B's 0.1/0.6.
    assert!(
        (logprobs[0] - (-0.5 + 0.5f64.ln())).abs() < 1e-12,
        "{logprobs:?}"
    );
    assert!(
        (logprobs[1] - (-0.5 + (0.1f64 / 0.6).ln())).abs() < 1e-12,
        "{logprobs:?}"
    );
    let sent = bodies(&seen, "/v1/completions");
    assert_eq!(
        sent,
        [
            r#"{"model":"m","prompt":"Q?","max_tokens":1,"temperature":0.0,"logprobs":2}"#,
            r#"{"model":"m","prompt":"Q?","max_tokens":1,"temperature":1.0,"logprobs":3,"logit_bias":{"500":100.0,"330":100.0,"389":100.0},"samplers":["top_k"],"top_k":3,"post_sampling_probs":true}"#,
        ]
    );
}

#[test]
fn logit_bias_scoring_needs_the_post_sampling_probabilities() {
    // A server that ignores llama.cpp's sampling fields answers the second request as the
    // first: the probe says why it cannot score, and a decision is an error naming the field.
    let (url, _) = serve(|path, _| {
        if path.ends_with("/models") {
            return (200, r#"{"data":[{"id":"m"}]}"#.into());
        }
        (
            200,
            llamacpp_answer(&[(500, " X", -0.5), (330, " A", -1.2)], false),
        )
    });
    let settings = OpenAiSettings {
        scoring: ScoringMethod::LogitBias(2),
        ..settings(&url, 0)
    };
    let probed = probe(&settings).expect("probed");
    assert!(!probed.prompt_logprobs);
    let why = probed.scoring_problem.expect("a problem");
    assert!(why.starts_with("logit_bias scoring: "), "{why}");
    assert!(why.contains("top_probs"), "{why}");
    let engine = OpenAiEngine::new(&settings, info(&url), None, None).expect("engine");
    let err = engine
        .top_logprobs("Q?", 9, &[" A".into(), " B".into()], &[330, 389])
        .unwrap_err()
        .to_string();
    assert!(err.contains("post-sampling probabilities"), "{err}");
}

#[test]
fn top_logprobs_scoring_matches_options_by_id_where_the_server_sends_ids() {
    // Texts alone would match " A" twice; the ids tell the option's token from a lookalike.
    let (url, _) = serve(|_, _| {
        (
            200,
            llamacpp_answer(
                &[(331, " A", -0.2), (330, " A", -1.0), (389, " B", -2.0)],
                false,
            ),
        )
    });
    let settings = OpenAiSettings {
        scoring: ScoringMethod::TopLogprobs(3),
        ..settings(&url, 0)
    };
    let engine = OpenAiEngine::new(&settings, info(&url), None, None).expect("engine");
    let (logprobs, _) = engine
        .top_logprobs("Q?", 9, &[" A".into(), " B".into()], &[330, 389])
        .expect("answered")
        .expect("every option read");
    assert_eq!(logprobs, [-1.0, -2.0]);
}
