//! A security front for the test broker: SASL/PLAIN authentication and TLS in front of a
//! plaintext tansu, as a managed cluster's listener would require them.
//!
//! Why not tansu itself: tansu 0.6.0 as shipped stores no SCRAM credentials in its in-memory
//! engine (the only one compiled in), offers no PLAIN mechanism, and its CLI refuses `--cert`
//! together with `--key`; so a broker started with `--authentication` accepts no client at all
//! (the tests use that refusal for SCRAM). The gateway speaks the broker side of the Kafka
//! SASL exchange (SaslHandshake, SaslAuthenticate with PLAIN), closes any other request that
//! arrives before authentication, as a broker does, and forwards everything else to the
//! broker, whose advertised listener is the gateway's address.

// Test support: a failed unwrap fails the test that called it (the workspace denies
// unwrap and expect outside tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

const API_VERSIONS: i16 = 18;
const SASL_HANDSHAKE: i16 = 17;
const SASL_AUTHENTICATE: i16 = 36;
const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
const SASL_AUTHENTICATION_FAILED: i16 = 58;
/// Larger frames are refused (the tests send small batches).
const MAX_FRAME: usize = 64 << 20;

/// What the gateway requires of clients.
#[derive(Clone, Default)]
pub struct GatewayPolicy {
    /// SASL/PLAIN users (name, password); `None`: no authentication.
    pub plain_users: Option<Vec<(String, String)>>,
    /// TLS with this server configuration; `None`: plaintext.
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

/// A TLS server configuration from PEM files (certificate chain and private key).
pub fn tls_server_config(cert_pem: &Path, key_pem: &Path) -> Arc<rustls::ServerConfig> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert_pem)
        .and_then(|c| c.collect())
        .unwrap_or_else(|e| panic!("reading {}: {e}", cert_pem.display()));
    let key = PrivateKeyDer::from_pem_file(key_pem)
        .unwrap_or_else(|e| panic!("reading {}: {e}", key_pem.display()));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
    .unwrap_or_else(|e| panic!("TLS server configuration: {e}"));
    Arc::new(config)
}

/// The running gateway: accepts on `addr` until dropped.
pub struct Gateway {
    /// `127.0.0.1:PORT` of its listener, what clients connect to.
    pub addr: String,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
    /// SASL authentications refused so far.
    refused: Arc<AtomicUsize>,
}

impl Gateway {
    /// Serve `listener`, forwarding authenticated requests to the broker at `upstream`.
    pub fn start(listener: TcpListener, upstream: String, policy: GatewayPolicy) -> Gateway {
        let addr = listener.local_addr().expect("gateway address").to_string();
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let stop = Arc::new(AtomicBool::new(false));
        let refused = Arc::new(AtomicUsize::new(0));
        let (s, r) = (Arc::clone(&stop), Arc::clone(&refused));
        let accept = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let (upstream, policy, r) = (upstream.clone(), policy.clone(), r.clone());
                        std::thread::spawn(move || {
                            let _ = serve(client, &upstream, &policy, &r);
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Gateway {
            addr,
            stop,
            accept: Some(accept),
            refused,
        }
    }

    /// How many SASL authentications the gateway refused.
    pub fn refused(&self) -> usize {
        self.refused.load(Ordering::SeqCst)
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// One client connection, until either side closes it.
fn serve(
    client: TcpStream,
    upstream: &str,
    policy: &GatewayPolicy,
    refused: &AtomicUsize,
) -> std::io::Result<()> {
    client.set_nonblocking(false)?;
    client.set_nodelay(true)?;
    let mut client: Box<dyn Stream> = match &policy.tls {
        Some(config) => {
            let conn = rustls::ServerConnection::new(Arc::clone(config)).map_err(io_err)?;
            Box::new(rustls::StreamOwned::new(conn, client))
        }
        None => Box::new(client),
    };
    let mut broker = TcpStream::connect(upstream)?;
    broker.set_nodelay(true)?;
    let mut authenticated = policy.plain_users.is_none();
    loop {
        let frame = read_frame(&mut client)?;
        let header = RequestHeader::parse(&frame)?;
        match header.api_key {
            SASL_HANDSHAKE if policy.plain_users.is_some() => {
                let mechanism = read_string(&frame, header.body)?.0;
                let code = if mechanism == "PLAIN" {
                    0
                } else {
                    UNSUPPORTED_SASL_MECHANISM
                };
                let mut body = code.to_be_bytes().to_vec();
                body.extend(1i32.to_be_bytes());
                put_string(&mut body, "PLAIN");
                write_frame(&mut client, header.correlation_id, &body)?;
                if code != 0 {
                    return Ok(());
                }
            }
            SASL_AUTHENTICATE if policy.plain_users.is_some() => {
                let token = read_bytes(&frame, header.body)?;
                let ok = plain_ok(token, policy.plain_users.as_deref().unwrap_or_default());
                let mut body = if ok { 0i16 } else { SASL_AUTHENTICATION_FAILED }
                    .to_be_bytes()
                    .to_vec();
                if ok {
                    body.extend((-1i16).to_be_bytes());
                } else {
                    put_string(
                        &mut body,
                        "Authentication failed: invalid user name or password",
                    );
                }
                body.extend(0i32.to_be_bytes());
                if header.api_version >= 1 {
                    body.extend(0i64.to_be_bytes());
                }
                write_frame(&mut client, header.correlation_id, &body)?;
                if !ok {
                    refused.fetch_add(1, Ordering::SeqCst);
                    return Ok(());
                }
                authenticated = true;
            }
            API_VERSIONS => forward(&mut broker, &mut client, &frame)?,
            _ if !authenticated => return Ok(()),
            _ => forward(&mut broker, &mut client, &frame)?,
        }
    }
}

/// Send one request to the broker and its response back to the client.
fn forward(broker: &mut TcpStream, client: &mut dyn Stream, frame: &[u8]) -> std::io::Result<()> {
    broker.write_all(&(frame.len() as u32).to_be_bytes())?;
    broker.write_all(frame)?;
    let response = read_frame(broker)?;
    client.write_all(&(response.len() as u32).to_be_bytes())?;
    client.write_all(&response)?;
    client.flush()
}

/// `\0user\0password` (an empty authorization id) against the users.
fn plain_ok(token: &[u8], users: &[(String, String)]) -> bool {
    let parts: Vec<&[u8]> = token.split(|&b| b == 0).collect();
    match parts.as_slice() {
        [_, user, password] => users
            .iter()
            .any(|(u, p)| u.as_bytes() == *user && p.as_bytes() == *password),
        _ => false,
    }
}

struct RequestHeader {
    api_key: i16,
    api_version: i16,
    correlation_id: i32,
    /// Where the request body starts (after the client id; the SASL requests are not flexible).
    body: usize,
}

impl RequestHeader {
    fn parse(frame: &[u8]) -> std::io::Result<RequestHeader> {
        let i16_at = |at: usize| -> std::io::Result<i16> {
            Ok(i16::from_be_bytes(
                field(frame, at, 2)?.try_into().map_err(io_err)?,
            ))
        };
        let api_key = i16_at(0)?;
        let api_version = i16_at(2)?;
        let correlation_id = i32::from_be_bytes(field(frame, 4, 4)?.try_into().map_err(io_err)?);
        let client_id_len = i16_at(8)?;
        let body = 10 + usize::try_from(client_id_len).unwrap_or(0);
        Ok(RequestHeader {
            api_key,
            api_version,
            correlation_id,
            body,
        })
    }
}

fn field(frame: &[u8], at: usize, len: usize) -> std::io::Result<&[u8]> {
    frame
        .get(at..at + len)
        .ok_or_else(|| io_err("a truncated Kafka request"))
}

fn read_string(frame: &[u8], at: usize) -> std::io::Result<(String, usize)> {
    let len = i16::from_be_bytes(field(frame, at, 2)?.try_into().map_err(io_err)?);
    let len = usize::try_from(len).map_err(io_err)?;
    let text = String::from_utf8_lossy(field(frame, at + 2, len)?).into_owned();
    Ok((text, at + 2 + len))
}

fn read_bytes(frame: &[u8], at: usize) -> std::io::Result<&[u8]> {
    let len = i32::from_be_bytes(field(frame, at, 4)?.try_into().map_err(io_err)?);
    field(frame, at + 4, usize::try_from(len).map_err(io_err)?)
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as i16).to_be_bytes());
    out.extend(s.as_bytes());
}

fn read_frame(stream: &mut dyn Read) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(io_err("a Kafka frame over 64 MiB"));
    }
    let mut frame = vec![0u8; len];
    stream.read_exact(&mut frame)?;
    Ok(frame)
}

/// A response: size, correlation id (response header v0), body.
fn write_frame(stream: &mut dyn Write, correlation_id: i32, body: &[u8]) -> std::io::Result<()> {
    stream.write_all(&((body.len() + 4) as u32).to_be_bytes())?;
    stream.write_all(&correlation_id.to_be_bytes())?;
    stream.write_all(body)?;
    stream.flush()
}

fn io_err(e: impl ToString) -> std::io::Error {
    std::io::Error::other(e.to_string())
}
