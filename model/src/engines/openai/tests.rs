//! The remote engine's guards against a misbehaving server: the response size cap, the
//! doubled BOS, and TLS verification, against small servers on loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

use super::*;

/// Read one HTTP request (head and any body) from `stream`: its path and its body.
pub(super) fn read_request(stream: &mut impl Read) -> (String, String) {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    let _ = reader.read_line(&mut request_line);
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    let _ = reader.read_exact(&mut body);
    (path, String::from_utf8_lossy(&body).into_owned())
}

/// A server on loopback answering each connection with `respond` (which writes the whole
/// response); returns its base URL.
fn serve(respond: impl Fn(&mut TcpStream) + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}/v1", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            read_request(&mut stream);
            respond(&mut stream);
        }
    });
    url
}

fn settings(base_url: &str, max_response_bytes: u64) -> OpenAiSettings {
    OpenAiSettings {
        base_url: base_url.to_string(),
        model: "m".into(),
        max_retries: 0,
        max_response_bytes,
        timeout: Duration::from_secs(30),
        ..OpenAiSettings::default()
    }
}

fn fatal(result: Result<(Value, Option<String>), CallError>) -> String {
    match result {
        Ok((v, _)) => panic!("expected an error, got {v}"),
        Err(CallError::Retry(m) | CallError::Unavailable { message: m, .. }) => {
            panic!("expected a fatal error, got a retryable one: {m}")
        }
        Err(CallError::Fatal(m)) => m,
    }
}

#[test]
fn a_body_within_the_cap_is_read() {
    let url = serve(|s| {
        let body = r#"{"data":[{"id":"m"}]}"#;
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
    });
    let client = Client::new(&settings(&url, 1024)).expect("client");
    let Ok((v, _)) = client.attempt(&client.url("models"), None) else {
        panic!("the answer is read");
    };
    assert_eq!(v["data"][0]["id"], "m");
}

#[test]
fn an_announced_body_over_the_cap_is_an_error_naming_url_and_cap() {
    let url = serve(|s| {
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n"
        );
        let _ = s.write_all(&[b' '; 5000]);
    });
    let client = Client::new(&settings(&url, 1000)).expect("client");
    let target = client.url("models");
    let message = fatal(client.attempt(&target, None));
    assert!(message.contains(&target), "{message}");
    assert!(message.contains("max_response_bytes = 1000"), "{message}");
    assert!(message.contains("5000 bytes"), "{message}");
}

/// A body without a length that never ends: the client stops at the cap instead of
/// buffering it (the server would send 1 GiB).
#[test]
fn an_endless_body_is_cut_at_the_cap() {
    let url = serve(|s| {
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        );
        let chunk = [b' '; 64 * 1024];
        for _ in 0..(1 << 14) {
            let sent = write!(s, "{:x}\r\n", chunk.len())
                .and_then(|_| s.write_all(&chunk))
                .and_then(|_| s.write_all(b"\r\n"));
            if sent.is_err() {
                return;
            }
        }
    });
    let client = Client::new(&settings(&url, 256 * 1024)).expect("client");
    let target = client.url("completions");
    let message = fatal(client.attempt(&target, Some(&json!({"prompt": "x"}))));
    assert!(message.contains(&target), "{message}");
    assert!(
        message.contains("is longer, over [model.openai] max_response_bytes = 262144"),
        "{message}"
    );
}

#[test]
fn a_bos_the_server_adds_is_learned_once() {
    let mut known = None;
    check_prompt_tokens(&mut known, 11, 10, None).expect("a BOS the server adds");
    assert_eq!(known, Some(1));
    check_prompt_tokens(&mut known, 21, 20, None).expect("the same offset");
    let err = check_prompt_tokens(&mut known, 20, 20, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not tokenize like"), "{err}");
    let mut known = None;
    check_prompt_tokens(&mut known, 10, 10, Some("<s>")).expect("one BOS, ours");
    let err = check_prompt_tokens(&mut known, 12, 10, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not tokenize like"), "{err}");
}

#[test]
fn a_doubled_bos_is_an_error() {
    // Our prompt starts with the BOS (the chat template writes it) and the server counts one
    // token more: it put a second BOS before it.
    for mut known in [None, Some(1)] {
        let err = check_prompt_tokens(&mut known, 11, 10, Some("<|begin_of_text|>"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("second BOS"), "{err}");
        assert!(err.contains("`<|begin_of_text|>`"), "{err}");
        assert!(err.contains("11 prompt tokens"), "{err}");
    }
}

/// The error carries both counts; its message is the one the job's error reports.
#[test]
fn a_prompt_token_mismatch_reports_both_counts() {
    let err = check_prompt_tokens(&mut Some(0), 12, 10, None).unwrap_err();
    assert_eq!(
        err,
        PromptTokensError::Mismatch {
            server: 12,
            ours: 10
        }
    );
    assert_eq!(
        err.to_string(),
        "the server counts 12 prompt tokens where the local tokenizer counts 10: the served \
         model does not tokenize like [model] path"
    );
}

/// An HTTPS server whose certificate a test CA signed (no trust store holds it): refused by
/// default, accepted (and recorded in the probe) with `insecure_skip_verify`.
#[test]
fn tls_is_verified_unless_explicitly_skipped() {
    let config = c2s_testkit::TestCa::create().server_config();
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("https://{}/v1", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(tcp) = stream else { break };
            let Ok(conn) = rustls::ServerConnection::new(Arc::clone(&config)) else {
                break;
            };
            let mut tls = rustls::StreamOwned::new(conn, tcp);
            read_request(&mut tls);
            let body = r#"{"data":[{"id":"m"}]}"#;
            let _ = write!(
                tls,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = tls.flush();
        }
    });
    let verified = settings(&url, DEFAULT_MAX_RESPONSE_BYTES);
    let err = probe(&verified).unwrap_err().to_string();
    assert!(err.contains(&url), "{err}");
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    let insecure = OpenAiSettings {
        insecure_skip_verify: true,
        ..verified
    };
    let info = probe(&insecure).expect("accepted without verification");
    assert!(info.insecure_skip_verify);
    let identity = info.identity(None);
    let remote = identity.remote.expect("the probe in the identity");
    assert_eq!(remote["insecure_skip_verify"], true);
    // Verified servers record nothing (older manifests read the same).
    let plain = ServerInfo {
        insecure_skip_verify: false,
        ..info
    };
    assert!(serde_json::to_value(&plain).expect("json")["insecure_skip_verify"].is_null());
}
