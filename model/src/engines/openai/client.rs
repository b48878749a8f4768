//! The HTTP client of the remote engine: one call with the settings' timeout and key, its
//! retries, the response body read under its size cap, and a typed answer decoded from it
//! with errors that name the URL and the field.
//!
//! A failed attempt is one of three kinds ([`CallError`]):
//! - **unavailable**: the server cannot be reached or says it cannot answer now (a connect
//!   error, a timeout, a reset or truncated body, HTTP 408, 429, 502, 503, 504). With an
//!   [`OutageWatch`] (the run's calls) this is an outage, not a failed request: the call
//!   retries with backoff, honouring `Retry-After`, for as long as the watch allows
//!   (`[inference] max_outage_seconds`). Without one (the probe before any work), it is
//!   retried `max_retries` times as below.
//! - **retryable**: any other 5xx, retried `max_retries` times with exponential backoff, then
//!   a failed request.
//! - **fatal**: any other 4xx, or an answer that is not the JSON expected: a failed request at
//!   once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use backon::{BackoffBuilder, ExponentialBuilder};
use serde::de::DeserializeOwned;
use serde::Serialize;
#[cfg(test)]
use serde_json::Value;

use super::OpenAiSettings;
use crate::error::EngineError;
use crate::outage::{OutageExceeded, OutageWatch};

/// An HTTP client with the settings' timeout, key and retry policy.
pub(super) struct Client {
    pub(super) http: reqwest::blocking::Client,
    pub(super) settings: OpenAiSettings,
    pub(super) api_key: Option<String>,
}

/// A failed attempt (see the module doc), with a message that names the server and the
/// cause.
pub(super) enum CallError {
    /// The server cannot be reached or cannot answer now; `retry_after` is its
    /// `Retry-After`.
    Unavailable {
        message: String,
        retry_after: Option<Duration>,
    },
    Retry(String),
    Fatal(String),
}

/// A call that failed: a failed request, or an outage that lasted too long.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(super) enum CallFailure {
    #[error("{0}")]
    Failed(String),
    #[error(transparent)]
    Outage(OutageExceeded),
}

impl From<CallFailure> for EngineError {
    fn from(failure: CallFailure) -> EngineError {
        match failure {
            CallFailure::Failed(m) => EngineError::Request(m),
            CallFailure::Outage(o) => EngineError::Outage(o),
        }
    }
}

impl Client {
    pub(super) fn new(settings: &OpenAiSettings) -> Result<Client, EngineError> {
        let api_key = match &settings.api_key_env {
            None => None,
            Some(var) => Some(std::env::var(var).map_err(|_| {
                EngineError::Model(format!(
                    "the API key variable `{var}` named by [model.openai] api_key_env is not set"
                ))
            })?),
        };
        let http = reqwest::blocking::Client::builder()
            .timeout(settings.timeout)
            .danger_accept_invalid_certs(settings.insecure_skip_verify)
            .build()
            .map_err(|e| EngineError::Model(format!("HTTP client: {e}")))?;
        Ok(Client {
            http,
            settings: settings.clone(),
            api_key,
        })
    }

    pub(super) fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.settings.base_url.trim_end_matches('/'))
    }

    /// One attempt, its answer read as JSON: the body and the `server` header (the tests'
    /// view of [`Client::attempt_as`]).
    #[cfg(test)]
    pub(super) fn attempt(
        &self,
        url: &str,
        body: Option<&Value>,
    ) -> Result<(Value, Option<String>), CallError> {
        self.attempt_as(url, body)
            .map(|answer| (answer.body, answer.server))
    }

    /// One attempt, its answer decoded as `T`. A transport failure, 429 or 5xx is retryable;
    /// any other failure, an answer that is not JSON or not a `T` included, is not.
    pub(super) fn attempt_as<T: DeserializeOwned, B: Serialize + ?Sized>(
        &self,
        url: &str,
        body: Option<&B>,
    ) -> Result<Answer<T>, CallError> {
        let mut req = match body {
            Some(b) => self.http.post(url).json(b),
            None => self.http.get(url),
        };
        if let Some(k) = &self.api_key {
            req = req.bearer_auth(k);
        }
        let resp = req.send().map_err(|e| {
            // The causes too: a refused TLS certificate is only named by them.
            let mut shown = e.to_string();
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                shown = format!("{shown}: {c}");
                cause = c.source();
            }
            let what = if e.is_timeout() {
                format!("timed out after {:?}", self.settings.timeout)
            } else if e.is_connect() {
                format!("cannot connect: {shown}")
            } else {
                shown
            };
            let message = format!("{url}: {what}");
            if e.is_builder() {
                CallError::Fatal(message)
            } else {
                // Refused, reset, closed or timed out: the server is not there now.
                CallError::Unavailable {
                    message,
                    retry_after: None,
                }
            }
        })?;
        let status = resp.status();
        let server = resp
            .headers()
            .get(reqwest::header::SERVER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let text = read_body(resp, url, self.settings.max_response_bytes)?;
        if status.is_success() {
            let body = serde_json::from_str(&text).map_err(|e| {
                CallError::Fatal(if e.is_data() {
                    format!(
                        "{url}: unexpected response ({e}) after `{}`",
                        before_error(&text, &e)
                    )
                } else {
                    format!("{url}: the response is not JSON ({e}): {text:.200}")
                })
            })?;
            return Ok(Answer {
                url: url.to_string(),
                body,
                text,
                server,
            });
        }
        let detail = format!("{url}: HTTP {status}: {text:.300}");
        if matches!(status.as_u16(), 408 | 429 | 502 | 503 | 504) {
            return Err(CallError::Unavailable {
                message: detail,
                retry_after,
            });
        }
        if status.is_server_error() {
            return Err(CallError::Retry(detail));
        }
        if status.as_u16() == 401 || status.as_u16() == 403 {
            let hint = match &self.settings.api_key_env {
                Some(v) => format!("check the key in ${v}"),
                None => "the server wants an API key: set [model.openai] api_key_env".into(),
            };
            return Err(CallError::Fatal(format!("{detail} ({hint})")));
        }
        Err(CallError::Fatal(detail))
    }

    /// The delays between attempts: `retry_backoff`, doubled per retry, at most
    /// [`MAX_BACKOFF`], without jitter; `max_retries` of them.
    pub(super) fn backoff(&self) -> ExponentialBuilder {
        ExponentialBuilder::new()
            .with_min_delay(self.settings.retry_backoff.min(MAX_BACKOFF))
            .with_factor(2.0)
            .with_max_delay(MAX_BACKOFF)
            .with_max_times(self.settings.max_retries as usize)
    }

    /// A call and its retries (the module doc): an unavailable server is waited for while
    /// the settings' [`OutageWatch`] allows, other 5xx are retried [`Client::backoff`]'s
    /// times with a warning each, and the last failure's message says how many attempts
    /// were made.
    pub(super) fn call<T: DeserializeOwned, B: Serialize + ?Sized>(
        &self,
        path: &str,
        body: Option<&B>,
    ) -> Result<Answer<T>, CallFailure> {
        let url = self.url(path);
        let watch: Option<&Arc<OutageWatch>> = self.settings.outages.as_ref();
        let mut bounded = self.backoff().build();
        let mut outage_delay = self.settings.retry_backoff.min(MAX_BACKOFF);
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let began = Instant::now();
            let fault = match self.attempt_as(&url, body) {
                Ok(answer) => {
                    watch.inspect(|w| w.answered());
                    return Ok(answer);
                }
                Err(fault) => fault,
            };
            let (message, retry_after) = match fault {
                CallError::Fatal(m) => {
                    // The server answered: it is there.
                    watch.inspect(|w| w.answered());
                    return Err(CallFailure::Failed(m));
                }
                CallError::Unavailable {
                    message,
                    retry_after,
                } => {
                    if let Some(w) = watch {
                        let left = w.fault(began, &message).map_err(CallFailure::Outage)?;
                        let wait = retry_after.unwrap_or(outage_delay).min(left);
                        outage_delay = (outage_delay * 2).min(MAX_BACKOFF);
                        tracing::debug!("{message}; retrying in {wait:?}");
                        std::thread::sleep(wait);
                        continue;
                    }
                    (message, retry_after)
                }
                CallError::Retry(m) => (m, None),
            };
            match bounded.next() {
                Some(delay) => {
                    let delay = retry_after.map_or(delay, |r| r.min(MAX_BACKOFF));
                    tracing::warn!("{message}; retrying in {delay:?}");
                    std::thread::sleep(delay);
                }
                None => {
                    return Err(CallFailure::Failed(format!(
                        "{message} (after {attempts} attempts)"
                    )))
                }
            }
        }
    }

    /// `GET <path>`, decoded as `T`.
    pub(super) fn get<T: DeserializeOwned>(&self, path: &str) -> Result<Answer<T>, CallFailure> {
        self.call::<T, ()>(path, None)
    }

    /// `POST <path>` with the JSON `body`, decoded as `T`.
    pub(super) fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> Result<Answer<T>, CallFailure> {
        self.call(path, Some(body))
    }
}

/// `Retry-After`: delay-seconds, or an HTTP date (RFC 9110 §10.2.3); a date in the past is
/// no wait.
pub(super) fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// Longest backoff between two attempts.
pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// A successful call: the decoded body, its text and URL (for messages) and the `server`
/// header.
pub(super) struct Answer<T> {
    pub(super) url: String,
    pub(super) body: T,
    pub(super) text: String,
    pub(super) server: Option<String>,
}

impl<T> Answer<T> {
    /// The error for a field the answer lacks (absent, or `null`): names the URL and the field.
    pub(super) fn missing(&self, field: &str) -> EngineError {
        EngineError::Request(format!("{}: the server reported no {field}", self.url))
    }

    /// The error for an answer without generated text in `field`: shows the answer.
    pub(super) fn no_text(&self, field: &str) -> EngineError {
        EngineError::Request(format!(
            "{}: the server returned no text ({field}): {:.300}",
            self.url, self.text
        ))
    }
}

/// Up to 80 bytes of `text` before where decoding it failed with `e`: the field it stopped at.
pub(super) fn before_error<'t>(text: &'t str, e: &serde_json::Error) -> &'t str {
    // serde_json counts lines from 1 and columns in bytes from the start of the line.
    let line_start: usize = text
        .split('\n')
        .take(e.line().saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    let mut end = (line_start + e.column()).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut start = end.saturating_sub(80);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..end]
}

/// A response body read up to `cap` bytes: a longer one (announced or found while reading) is
/// an error naming the URL and the cap, read no further.
pub(super) fn read_body(
    resp: reqwest::blocking::Response,
    url: &str,
    cap: u64,
) -> Result<String, CallError> {
    use std::io::Read as _;
    let over = |what: String| {
        CallError::Fatal(format!(
            "{url}: the response body {what}, over [model.openai] max_response_bytes = {cap}"
        ))
    };
    if let Some(len) = resp.content_length().filter(|&len| len > cap) {
        return Err(over(format!("has {len} bytes")));
    }
    let mut body = Vec::new();
    resp.take(cap.saturating_add(1))
        .read_to_end(&mut body)
        .map_err(|e| CallError::Unavailable {
            // Reset or cut off mid-body: the server went away.
            message: format!("{url}: reading the response: {e}"),
            retry_after: None,
        })?;
    if body.len() as u64 > cap {
        return Err(over("is longer".into()));
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}
