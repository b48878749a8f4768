//! A minimal HTTP/1.1 client over a raw socket: requests are sent exactly as written (a
//! path-traversal probe is not normalized away, as a browser or curl would).

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Status code and body of one request (`raw`: the whole request head, without the final
/// blank line).
pub fn request(addr: &str, raw: &str) -> (u16, String) {
    let (status, _, body) = exchange(addr, raw);
    (status, body)
}

/// Status code, response head (status line and headers) and body of one request.
pub fn exchange(addr: &str, raw: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).expect("connecting to the monitor");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // A server that answers before reading everything (431) closes with our bytes unread,
    // and the reset that follows can drop its answer from a socket nobody reads yet: so the
    // request is written on another thread while this one reads.
    let mut writer = s.try_clone().expect("cloning the socket");
    let request = format!("{raw}\r\nConnection: close\r\n\r\n");
    let sending = std::thread::spawn(move || {
        let _ = writer.write_all(request.as_bytes());
    });
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let _ = sending.join();
    let text = String::from_utf8_lossy(&buf).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {text:?}"));
    let (head, body) = text
        .split_once("\r\n\r\n")
        .map(|(h, b)| (h.to_string(), b.to_string()))
        .unwrap_or((text.clone(), String::new()));
    (status, head, body)
}

/// `GET path` that must answer 200; its body.
pub fn get(addr: &str, path: &str) -> String {
    let (status, body) = request(addr, &format!("GET {path} HTTP/1.1\r\nHost: {addr}"));
    assert_eq!(status, 200, "GET {path}: {body}");
    body
}

/// `GET path` as JSON.
pub fn get_json(addr: &str, path: &str) -> serde_json::Value {
    serde_json::from_str(&get(addr, path)).unwrap_or_else(|e| panic!("GET {path}: {e}"))
}
