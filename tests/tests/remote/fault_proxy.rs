//! A fault-injecting HTTP proxy for the remote suite: it stands between the `openai` engine
//! and the llama.cpp server and, following a schedule over the scoring calls (POSTs) it sees,
//! passes a call through or breaks it the ways a real deployment does:
//!
//! - **kill**: reads the request, then closes the connection without a word (a crashed
//!   worker, a reset stream);
//! - **unavailable**: answers `503 Service Unavailable` with `Retry-After: 1` (an overloaded
//!   or restarting backend behind a load balancer), for every call inside a time window;
//! - **stall**: holds the connection past the client's timeout, then closes it;
//! - **truncate**: forwards the server's answer but cuts the body off halfway (the announced
//!   `Content-Length` is never reached);
//! - an upstream that refuses connections (the server itself killed and restarted) is
//!   answered `502 Bad Gateway`, as nginx or Caddy would.
//!
//! Each connection carries one exchange (`Connection: close` both ways), so every attempt of
//! the client is one numbered call. Other methods (the engine's `GET /v1/models` probe) always
//! pass. The proxy counts what it did, so the test can print and check it.

// Test and example code: a failed unwrap fails the run (the workspace denies unwrap and
// expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the proxy does with one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    Pass,
    Kill,
    Unavailable,
    Stall(Duration),
    Truncate,
}

/// What the proxy did, by kind.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    /// POSTs seen (every attempt of the client).
    pub calls: usize,
    /// POSTs forwarded and answered in full.
    pub passed: usize,
    pub killed: usize,
    pub unavailable: usize,
    pub stalled: usize,
    pub truncated: usize,
    /// Calls answered 502 because the server refused the connection.
    pub bad_gateway: usize,
}

/// Decides a call's fault from its number (0-based, POSTs only) and the state it keeps
/// (e.g. when a 503 window opened).
pub type Schedule = Box<dyn FnMut(usize, Instant) -> Fault + Send>;

/// A running proxy on 127.0.0.1; stops accepting when dropped.
pub struct FaultProxy {
    pub port: u16,
    counts: Arc<Mutex<Counts>>,
    stop: Arc<AtomicBool>,
}

impl FaultProxy {
    /// Starts a proxy in front of `127.0.0.1:upstream`.
    pub fn start(upstream: u16, schedule: Schedule) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding the proxy");
        let port = listener.local_addr().unwrap().port();
        let counts = Arc::new(Mutex::new(Counts::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let schedule = Arc::new(Mutex::new(schedule));
        {
            let (counts, stop) = (counts.clone(), stop.clone());
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let (counts, schedule) = (counts.clone(), schedule.clone());
                    std::thread::spawn(move || {
                        let _ = exchange(conn, upstream, &counts, &schedule);
                    });
                }
            });
        }
        FaultProxy { port, counts, stop }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub fn counts(&self) -> Counts {
        self.counts.lock().unwrap().clone()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// One request read off a connection: its head (request line and headers, without the blank
/// line) and body.
struct Request {
    method: String,
    head: String,
    body: Vec<u8>,
}

/// Reads a head up to the blank line, then `Content-Length` bytes of body, or (an answer
/// without one, `to_eof`) everything up to the end of the stream.
fn read_message(stream: &mut TcpStream, to_eof: bool) -> std::io::Result<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut byte)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&byte[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut body = buf[head_end + 4..].to_vec();
    let length = match header(&head, "content-length").and_then(|v| v.parse::<usize>().ok()) {
        Some(n) => n,
        None if to_eof => usize::MAX,
        None => 0,
    };
    while body.len() < length {
        let n = stream.read(&mut byte)?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&byte[..n]);
    }
    Ok((head, body))
}

/// A header's value in a head (case-insensitive name).
fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().skip(1).find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The head with any `Connection` header replaced by `Connection: close`.
fn closing(head: &str) -> String {
    let mut lines: Vec<&str> = head
        .split("\r\n")
        .filter(|l| {
            !l.split_once(':')
                .is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case("connection"))
        })
        .collect();
    lines.push("Connection: close");
    lines.join("\r\n") + "\r\n\r\n"
}

fn exchange(
    mut client: TcpStream,
    upstream: u16,
    counts: &Mutex<Counts>,
    schedule: &Mutex<Schedule>,
) -> std::io::Result<()> {
    let (head, body) = read_message(&mut client, false)?;
    let request = Request {
        method: head.split(' ').next().unwrap_or("").to_string(),
        head,
        body,
    };
    let fault = if request.method == "POST" {
        let n = {
            let mut c = counts.lock().unwrap();
            c.calls += 1;
            c.calls - 1
        };
        (schedule.lock().unwrap())(n, Instant::now())
    } else {
        Fault::Pass
    };
    let count = |f: fn(&mut Counts)| f(&mut counts.lock().unwrap());
    match fault {
        Fault::Kill => {
            count(|c| c.killed += 1);
            return client.shutdown(Shutdown::Both);
        }
        Fault::Unavailable => {
            count(|c| c.unavailable += 1);
            let text = "the backend is restarting";
            return write!(
                client,
                "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
        }
        Fault::Stall(d) => {
            count(|c| c.stalled += 1);
            std::thread::sleep(d);
            return client.shutdown(Shutdown::Both);
        }
        Fault::Pass | Fault::Truncate => {}
    }
    let mut server = match TcpStream::connect(("127.0.0.1", upstream)) {
        Ok(s) => s,
        Err(_) => {
            count(|c| c.bad_gateway += 1);
            let text = "upstream refused the connection";
            return write!(
                client,
                "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    };
    server.write_all(closing(&request.head).as_bytes())?;
    server.write_all(&request.body)?;
    let (answer_head, answer_body) = match read_message(&mut server, true) {
        Ok(m) => m,
        Err(_) => {
            // The server died while answering: the client sees the connection drop.
            count(|c| c.bad_gateway += 1);
            return client.shutdown(Shutdown::Both);
        }
    };
    client.write_all(closing(&answer_head).as_bytes())?;
    if fault == Fault::Truncate {
        count(|c| c.truncated += 1);
        client.write_all(&answer_body[..answer_body.len() / 2])?;
        return client.shutdown(Shutdown::Both);
    }
    client.write_all(&answer_body)?;
    if request.method == "POST" {
        count(|c| c.passed += 1);
    }
    client.shutdown(Shutdown::Both)
}
