//! `c2s-serve`: the live monitor, a read-only HTTP server inside a run (`choice2seq run --serve
//! ADDR`) or over run directories (`choice2seq view RUN_DIR... --serve ADDR`).
//!
//! Layers: above `c2s-report` (whose tables and figures the page shows) and `c2s-rundir`;
//! below `c2s-run`, whose live monitor (`c2s_run`'s `LiveMonitor`) is a [`Backend`] of this
//! server. It knows nothing of a running run: what it serves comes through [`Backend`].
//!
//! - the server ([`bind`], [`start`], [`router`]) and its [`Backend`];
//! - [`auth`]: the bearer token; [`metrics`]: the Prometheus exposition; [`figures`] and
//!   [`state`]: the page's figures and tables; [`view`]: the [`Backend`] of run directories
//!   (`choice2seq view`).
//!
//! - `GET /metrics`: Prometheus text exposition (format 0.0.4, written by `prometheus-client`);
//! - `GET /`: a page that updates itself by polling `/api/state` (no CDN: its HTML, CSS and
//!   script are compiled into the binary);
//! - `GET /api/state`: what the page shows, as JSON;
//! - `GET /api/snapshot`: the latest metric snapshot's rows, in the shape `choice2seq stats
//!   --json` prints;
//! - `GET /api/figures`: the latest snapshot's figures as SVG, drawn by the report's figure
//!   code;
//! - `GET /healthz`, `GET /readyz`: for orchestrators;
//! - `GET /request/ID` (a page) and `GET /api/request/ID` (JSON): one request of the run, as
//!   `choice2seq show RUN ID` prints it — the prompt the model read (`prompts/`), the options
//!   with their token ids, the answer (a 404 for an unknown id). The page's "Open a request"
//!   box leads there. These read the run directory's `requests/` and `prompts/` parts (only
//!   complete ones, on a blocking thread); the id is a key looked up in them, never a path.
//!
//! With a bearer token (`[serve] token_env`, `--serve-token-env`) every path but `/healthz`
//! and `/readyz` needs it ([`auth`]); without one the run refuses a non-loopback address
//! before any work.
//!
//! Nothing is writable and no path maps to a file: any other path is a 404 (whatever the
//! method), another method on a known path a 405, request headers over 16 KiB a 431 (hyper's
//! HTTP/1 limit), and a client that sends its headers too slowly is dropped. The server runs
//! on the run's tokio runtime and reads only what the run publishes (atomic counters, the
//! snapshot thread's latest view, small locked copies); figures are drawn on blocking threads,
//! never on the runtime's worker, which also serves the model calls.

#![deny(missing_docs)]

pub mod auth;
pub mod figures;
pub mod metrics;
mod page;
pub mod state;
pub mod view;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;

pub use figures::FigureSvg;

/// Largest request head (request line and headers) accepted; larger ones get a 431.
const MAX_HEADER_BYTES: usize = 16 * 1024;
/// Time a client has to send its request head.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once; further ones are closed at once.
const MAX_CONNECTIONS: usize = 64;
/// How long one connection is kept: then it is closed once its response in progress is
/// written (clients reconnect for the next request), so a consumer that stops reading holds
/// one of the [`MAX_CONNECTIONS`] slots for a bounded time.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);
/// How long a response in progress at [`CONNECTION_LIFETIME`] may take to be written before
/// the connection is dropped (a stalled reader).
const FINISH_TIMEOUT: Duration = Duration::from_secs(30);

/// What the server shows: a running run (`c2s_run`'s live monitor) or run directories
/// ([`view::DirectoryView`]).
pub trait Backend: Send + Sync + 'static {
    /// The Prometheus text exposition.
    fn metrics(&self) -> String;
    /// What the page shows.
    fn state(&self) -> serde_json::Value;
    /// The latest snapshot's metric rows as JSON (`None`: no snapshot yet).
    fn snapshot_json(&self) -> Option<String>;
    /// The latest snapshot's figures. May take a while: called on a blocking thread.
    fn figures(&self) -> Vec<FigureSvg>;
    /// `Err(why)` when the run has failed.
    fn healthy(&self) -> Result<(), Unavailable>;
    /// `Err(why)` while the run cannot be watched yet (the model is loading).
    fn ready(&self) -> Result<(), Unavailable>;
    /// The run directories served (where `/request/ID` looks).
    fn run_dirs(&self) -> Vec<std::path::PathBuf>;
}

/// Why `/healthz` or `/readyz` answers 503: its text is the response body (a newline
/// added).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    /// The run's sinks gave up writing its outputs (`c2s_operators::sink_op::WriteHealth`).
    #[error("outputs could not be written: {given_up}")]
    WritesFailed {
        /// The write failure the sinks gave up on (empty if none was recorded).
        given_up: String,
    },
    /// The run finished in the `failed` state.
    #[error("{}", reason.as_deref().unwrap_or("the run failed"))]
    RunFailed {
        /// Why, as the run's final status records it; `None`: it records no reason.
        reason: Option<String>,
    },
    /// The served run directories could not be read the last time they were read.
    #[error("{error}")]
    Unreadable {
        /// The read error with its causes (`{:#}`).
        error: String,
    },
    /// The run is still loading its model: nothing to watch yet.
    #[error("starting: loading the model")]
    Loading,
}

type Shared = Arc<dyn Backend>;

/// Bind `addr` (port 0 picks a free one). Done before a run writes anything, so a taken
/// port is an error before any work.
pub fn bind(addr: SocketAddr) -> anyhow::Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind(addr)
        .with_context(|| format!("binding the live monitor to {addr}"))?;
    listener
        .set_nonblocking(true)
        .context("a non-blocking listener")?;
    Ok(listener)
}

/// Serve `backend` on `listener` (from [`bind`]) on `runtime` until the runtime stops, to
/// the clients `access` lets in. Returns the bound address.
pub fn start(
    listener: std::net::TcpListener,
    backend: Shared,
    access: &c2s_config::ServeAccess,
    runtime: &tokio::runtime::Handle,
) -> anyhow::Result<SocketAddr> {
    let bound = listener.local_addr().context("the bound address")?;
    let listener = {
        let _guard = runtime.enter();
        tokio::net::TcpListener::from_std(listener).context("registering the listener")?
    };
    let gate = auth::Gate::new(access, bound.port());
    runtime.spawn(accept_loop(listener, router(backend, gate)));
    Ok(bound)
}

/// The routes; anything else is a 404 that reads nothing. With a `gate`, every request (the
/// fallback's too) passes it first.
pub fn router(backend: Shared, gate: Option<Arc<auth::Gate>>) -> Router {
    let routes = Router::new()
        .route("/", get(index))
        .route("/app.js", get(script))
        .route("/style.css", get(style))
        .route("/metrics", get(prometheus))
        .route("/api/state", get(state))
        .route("/api/snapshot", get(snapshot))
        .route("/api/figures", get(figure_list))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/request/{*id}", get(request_page))
        .route("/api/request/{*id}", get(request_json))
        .fallback(not_found)
        .with_state(backend);
    match gate {
        Some(gate) => routes.layer(axum::middleware::from_fn_with_state(gate, auth::guard)),
        None => routes,
    }
}

async fn accept_loop(listener: tokio::net::TcpListener, app: Router) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .max_header_size(MAX_HEADER_BYTES);
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                // Out of file descriptors, say: wait rather than spin.
                tracing::warn!("live monitor: accepting a connection: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            continue;
        };
        let connection =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            let ended = tokio::select! {
                ended = connection.as_mut() => ended,
                _ = tokio::time::sleep(CONNECTION_LIFETIME) => {
                    connection.as_mut().graceful_shutdown();
                    tokio::time::timeout(FINISH_TIMEOUT, connection)
                        .await
                        .unwrap_or(Ok(()))
                }
            };
            if let Err(e) = ended {
                tracing::debug!("live monitor: connection: {e}");
            }
            drop(slot);
        });
    }
}

/// A response with the headers every answer carries: no caching, no sniffing, no framing, no
/// referrer, and scripts, styles and fetches only from this server.
fn respond(status: StatusCode, content_type: &'static str, body: impl Into<String>) -> Response {
    let mut r = (status, body.into()).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
             img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
        ),
    );
    r
}

const JSON: &str = "application/json";
const TEXT: &str = "text/plain; charset=utf-8";

async fn index() -> Response {
    respond(StatusCode::OK, "text/html; charset=utf-8", page::INDEX_HTML)
}

async fn script() -> Response {
    respond(
        StatusCode::OK,
        "text/javascript; charset=utf-8",
        page::APP_JS,
    )
}

async fn style() -> Response {
    respond(StatusCode::OK, "text/css; charset=utf-8", page::STYLE_CSS)
}

async fn prometheus(State(b): State<Shared>) -> Response {
    respond(StatusCode::OK, metrics::CONTENT_TYPE, b.metrics())
}

async fn state(State(b): State<Shared>) -> Response {
    respond(StatusCode::OK, JSON, b.state().to_string())
}

async fn snapshot(State(b): State<Shared>) -> Response {
    match b.snapshot_json() {
        Some(json) => respond(StatusCode::OK, JSON, json),
        None => respond(
            StatusCode::NOT_FOUND,
            JSON,
            r#"{"error":"no metric snapshot yet"}"#,
        ),
    }
}

async fn figure_list(State(b): State<Shared>) -> Response {
    match tokio::task::spawn_blocking(move || b.figures()).await {
        Ok(figs) => respond(
            StatusCode::OK,
            JSON,
            serde_json::to_string(&figs).unwrap_or_else(|_| "[]".into()),
        ),
        Err(e) => respond(StatusCode::INTERNAL_SERVER_ERROR, TEXT, format!("{e}")),
    }
}

async fn healthz(State(b): State<Shared>) -> Response {
    match b.healthy() {
        Ok(()) => respond(StatusCode::OK, TEXT, "ok\n"),
        Err(why) => respond(StatusCode::SERVICE_UNAVAILABLE, TEXT, format!("{why}\n")),
    }
}

async fn readyz(State(b): State<Shared>) -> Response {
    match b.ready() {
        Ok(()) => respond(StatusCode::OK, TEXT, "ready\n"),
        Err(why) => respond(StatusCode::SERVICE_UNAVAILABLE, TEXT, format!("{why}\n")),
    }
}

/// Request `id` of the served runs, read on a blocking thread; an unknown id is a 404.
async fn lookup(
    b: Shared,
    id: String,
    content_type: &'static str,
) -> Result<c2s_rundir::request::RequestView, Response> {
    use c2s_rundir::request::{find_in, LookupError};
    let dirs = b.run_dirs();
    let failed = |status: StatusCode, message: String| {
        let body = if content_type == JSON {
            serde_json::json!({ "error": message }).to_string()
        } else {
            format!("{message}\n")
        };
        respond(status, content_type, body)
    };
    match tokio::task::spawn_blocking(move || find_in(&dirs, &id)).await {
        Ok(Ok(view)) => Ok(view),
        Ok(Err(e @ (LookupError::NoRun(_) | LookupError::NoRequest { .. }))) => {
            Err(failed(StatusCode::NOT_FOUND, e.to_string()))
        }
        Ok(Err(e)) => Err(failed(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
        Err(e) => Err(failed(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
    }
}

async fn request_json(State(b): State<Shared>, Path(id): Path<String>) -> Response {
    match lookup(b, id, JSON).await {
        Ok(v) => respond(
            StatusCode::OK,
            JSON,
            c2s_rundir::request::view_json(&v).to_string(),
        ),
        Err(r) => r,
    }
}

async fn request_page(State(b): State<Shared>, Path(id): Path<String>) -> Response {
    use c2s_report::doc::html_escape;
    const HTML: &str = "text/html; charset=utf-8";
    match lookup(b, id.clone(), TEXT).await {
        Ok(v) => respond(
            StatusCode::OK,
            HTML,
            format!(
                "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
                 <title>request {id}</title><link rel=\"stylesheet\" href=\"/style.css\">\
                 </head><body><header><h1>Request</h1> <a href=\"/\">the live page</a> \
                 <a href=\"/api/request/{path}\">JSON</a></header><main>\
                 <pre id=\"request\">{text}</pre></main></body></html>\n",
                id = html_escape(&id),
                path = html_escape(&path_escape(&id)),
                text = html_escape(&c2s_rundir::request::view_text(&v)),
            ),
        ),
        Err(r) => r,
    }
}

/// `id` as a URL path: bytes other than unreserved characters, `/` and `:` percent-encoded.
fn path_escape(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

async fn not_found() -> Response {
    respond(StatusCode::NOT_FOUND, TEXT, "not found\n")
}

#[cfg(test)]
mod tests {
    use super::Unavailable;

    /// The 503 bodies of `/healthz` and `/readyz`.
    #[test]
    fn unavailable_messages() {
        let cases = [
            (
                Unavailable::WritesFailed {
                    given_up: "disk full".into(),
                },
                "outputs could not be written: disk full",
            ),
            (
                Unavailable::RunFailed {
                    reason: Some("model: gone".into()),
                },
                "model: gone",
            ),
            (Unavailable::RunFailed { reason: None }, "the run failed"),
            (
                Unavailable::Unreadable {
                    error: "reading runs/a: no such file".into(),
                },
                "reading runs/a: no such file",
            ),
            (Unavailable::Loading, "starting: loading the model"),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }
}
