//! Who may read the live monitor: with `[serve] token_env` (or `--serve-token-env NAME`) every
//! path but `/healthz` and `/readyz` needs the bearer token; without one only a loopback
//! address is served (`c2s_config::ServeSection::access`, checked before any work).
//!
//! A request is let through when it carries
//! - `Authorization: Bearer <token>` (curl, scripts, Prometheus' `authorization` setting), or
//! - the monitor's cookie, which a browser gets by opening any page once with `?token=<token>`:
//!   the answer is a `303` to the same URL without the token, setting an `HttpOnly`,
//!   `SameSite=Lax` cookie. The page's script then needs no token of its own (its fetches are
//!   same-origin, so they carry the cookie), the token leaves the address bar and the history,
//!   and no script can read the cookie. The cookie holds a digest of the token, not the token.
//!
//! Anything else is a `401` with `WWW-Authenticate: Bearer`. Tokens are compared as SHA-256
//! digests in constant time (`subtle`), so neither their bytes nor their length shows in the
//! time an answer takes. The server keeps only digests; it logs no request.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use clap::Args;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use c2s_config::{ServeAccess, ServeToken};

/// `--serve-token-env NAME`, shared by `run --serve` and `view`.
#[derive(Debug, Clone, Default, Args)]
pub struct ServeTokenArg {
    /// The environment variable holding the live monitor's bearer token (overrides [serve]
    /// token_env): every path but /healthz and /readyz then needs `Authorization: Bearer
    /// TOKEN` (a browser: open /?token=TOKEN once). Required to serve beyond loopback.
    #[arg(long = "serve-token-env", value_name = "NAME")]
    pub serve_token_env: Option<String>,
}

/// Paths orchestrators probe without credentials: they say only whether the run is healthy.
const OPEN_PATHS: [&str; 2] = ["/healthz", "/readyz"];

/// The query parameter a browser passes the token in once.
const TOKEN_PARAM: &str = "token";

/// Domain separation of the cookie's value from the token's own digest.
const COOKIE_CONTEXT: &[u8] = b"choice2seq live monitor cookie\n";

/// The check every request but [`OPEN_PATHS`] passes.
pub struct Gate {
    /// SHA-256 of the token.
    token: [u8; 32],
    /// The cookie's name: one per port, since browsers scope cookies by host, not port.
    cookie_name: String,
    /// The cookie's value (hex of a SHA-256 of the token), and its own digest.
    cookie_value: String,
    cookie_digest: [u8; 32],
}

fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

impl Gate {
    /// The gate of `access` for a monitor on `port` (`None`: open).
    pub fn new(access: &ServeAccess, port: u16) -> Option<Arc<Gate>> {
        match access {
            ServeAccess::Open => None,
            ServeAccess::Bearer(token) => Some(Arc::new(Gate::of(token, port))),
        }
    }

    fn of(token: &ServeToken, port: u16) -> Gate {
        let secret = token.expose().as_bytes();
        let cookie_value = hex::encode(sha256(&[COOKIE_CONTEXT, secret]));
        Gate {
            token: sha256(&[secret]),
            cookie_name: format!("c2s_monitor_{port}"),
            cookie_digest: sha256(&[cookie_value.as_bytes()]),
            cookie_value,
        }
    }

    fn is_token(&self, presented: &[u8]) -> bool {
        bool::from(sha256(&[presented]).ct_eq(&self.token))
    }

    fn has_cookie(&self, headers: &HeaderMap) -> bool {
        let mut found = false;
        for value in headers.get_all(header::COOKIE) {
            let Ok(text) = value.to_str() else { continue };
            for pair in text.split(';') {
                if let Some((name, value)) = pair.trim().split_once('=') {
                    if name == self.cookie_name {
                        // Every candidate is compared (no early exit on a match).
                        found |= bool::from(sha256(&[value.as_bytes()]).ct_eq(&self.cookie_digest));
                    }
                }
            }
        }
        found
    }

    /// What to answer `headers` and `query` (on a path that needs the token).
    fn verdict(&self, headers: &HeaderMap, query: Option<&str>) -> Verdict {
        if let Some(value) = headers.get(header::AUTHORIZATION) {
            return match bearer(value.as_bytes()) {
                Some(token) if self.is_token(token) => Verdict::Pass,
                _ => Verdict::Refuse(Refusal::Invalid),
            };
        }
        if self.has_cookie(headers) {
            return Verdict::Pass;
        }
        match query.and_then(take_token) {
            Some((token, _)) if !self.is_token(&token) => Verdict::Refuse(Refusal::Invalid),
            Some((_, rest)) => Verdict::SetCookie { rest },
            None => Verdict::Refuse(Refusal::Missing),
        }
    }
}

/// What the gate answers a request.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Pass,
    /// A valid `?token=`: redirect to the URL without it (`rest`: the other parameters),
    /// setting the cookie.
    SetCookie {
        rest: String,
    },
    Refuse(Refusal),
}

/// Why a request is refused (RFC 6750's `error` for a token that does not match).
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    Missing,
    Invalid,
}

/// The token of an `Authorization: Bearer <token>` value (the scheme is case-insensitive).
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(6)?;
    if !scheme.eq_ignore_ascii_case(b"bearer") || !rest.starts_with(b" ") {
        return None;
    }
    Some(rest.trim_ascii())
}

/// The `token` parameter of `query`, percent-decoded, and the other parameters as written.
/// `+` stays `+` (a token has no spaces, and base64 tokens have plus signs).
fn take_token(query: &str) -> Option<(Vec<u8>, String)> {
    let mut token = None;
    let mut rest = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some((TOKEN_PARAM, value)) if token.is_none() => token = Some(percent_decode(value)),
            _ if pair.is_empty() => {}
            _ => rest.push(pair),
        }
    }
    token.map(|t| (t, rest.join("&")))
}

/// `%XX` escapes decoded; anything else as written (a malformed escape too: it then simply
/// does not match).
fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// What the start line adds about access (never the token).
pub fn token_note(access: &ServeAccess) -> &'static str {
    match access {
        ServeAccess::Open => "",
        ServeAccess::Bearer(_) => " (bearer token required; a browser opens /?token=TOKEN once)",
    }
}

/// The middleware: open paths pass, others need the token (or the cookie).
pub async fn guard(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if OPEN_PATHS.contains(&path) {
        return next.run(request).await;
    }
    match gate.verdict(request.headers(), request.uri().query()) {
        Verdict::Pass => next.run(request).await,
        Verdict::SetCookie { rest } => {
            // One leading slash: `//host` would be a protocol-relative redirect elsewhere.
            let mut location = format!("/{}", path.trim_start_matches(['/', '\\']));
            if !rest.is_empty() {
                location = format!("{location}?{rest}");
            }
            // Behind a TLS-terminating proxy the browser speaks HTTPS: the cookie says so.
            let secure = request
                .headers()
                .get("x-forwarded-proto")
                .is_some_and(|p| p.as_bytes().eq_ignore_ascii_case(b"https"));
            let cookie = format!(
                "{}={}; Path=/; HttpOnly; SameSite=Lax{}",
                gate.cookie_name,
                gate.cookie_value,
                if secure { "; Secure" } else { "" }
            );
            let mut r = StatusCode::SEE_OTHER.into_response();
            let h = r.headers_mut();
            if let (Ok(location), Ok(cookie)) = (
                HeaderValue::from_str(&location),
                HeaderValue::from_str(&cookie),
            ) {
                h.insert(header::LOCATION, location);
                h.insert(header::SET_COOKIE, cookie);
            }
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            h.insert(
                header::REFERRER_POLICY,
                HeaderValue::from_static("no-referrer"),
            );
            r
        }
        Verdict::Refuse(why) => unauthorized(why),
    }
}

fn unauthorized(why: Refusal) -> Response {
    let challenge = match why {
        Refusal::Missing => r#"Bearer realm="choice2seq""#,
        Refusal::Invalid => r#"Bearer realm="choice2seq", error="invalid_token""#,
    };
    let mut r = (
        StatusCode::UNAUTHORIZED,
        "401 unauthorized: this live monitor needs its bearer token: send `Authorization: \
         Bearer TOKEN`, or open /?token=TOKEN once in a browser (percent-encoded)\n",
    )
        .into_response();
    let h = r.headers_mut();
    h.insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "s3cr3t+/token=";

    fn gate() -> Gate {
        let access = c2s_config::ServeSection {
            address: "0.0.0.0:1".parse().unwrap(),
            linger_seconds: 0.0,
            token_env: Some("T".into()),
        }
        .access(&|_| Some(TOKEN.into()))
        .unwrap();
        let ServeAccess::Bearer(token) = access else {
            panic!("a token")
        };
        Gate::of(&token, 9100)
    }

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(k.clone(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn the_bearer_header_passes_only_with_the_token() {
        let g = gate();
        let auth = |v: &str| g.verdict(&headers(&[(header::AUTHORIZATION, v)]), None);
        assert_eq!(auth(&format!("Bearer {TOKEN}")), Verdict::Pass);
        assert_eq!(auth(&format!("bearer  {TOKEN}")), Verdict::Pass);
        for wrong in [
            "Bearer nope".to_string(),
            format!("Bearer {TOKEN}x"),
            format!("Basic {TOKEN}"),
            format!("Bearer{TOKEN}"),
            "Bearer".into(),
        ] {
            assert_eq!(auth(&wrong), Verdict::Refuse(Refusal::Invalid), "{wrong}");
        }
        assert_eq!(
            g.verdict(&HeaderMap::new(), None),
            Verdict::Refuse(Refusal::Missing)
        );
        // A wrong header is not rescued by a right query token.
        assert_eq!(
            g.verdict(
                &headers(&[(header::AUTHORIZATION, "Bearer x")]),
                Some("token=s3cr3t%2B%2Ftoken%3D")
            ),
            Verdict::Refuse(Refusal::Invalid)
        );
    }

    #[test]
    fn a_query_token_sets_a_cookie_that_holds_no_token() {
        let g = gate();
        for q in ["token=s3cr3t%2B%2Ftoken%3D", "token=s3cr3t+/token="] {
            assert_eq!(
                g.verdict(&HeaderMap::new(), Some(q)),
                Verdict::SetCookie {
                    rest: String::new()
                },
                "{q}"
            );
        }
        assert_eq!(
            g.verdict(
                &HeaderMap::new(),
                Some("a=1&token=s3cr3t%2b%2ftoken%3d&b=2")
            ),
            Verdict::SetCookie {
                rest: "a=1&b=2".into()
            }
        );
        assert_eq!(
            g.verdict(&HeaderMap::new(), Some("token=wrong")),
            Verdict::Refuse(Refusal::Invalid)
        );
        assert!(!g.cookie_value.contains("s3cr3t"));
        let cookie = |v: &str| g.verdict(&headers(&[(header::COOKIE, v)]), None);
        let right = format!("c2s_monitor_9100={}", g.cookie_value);
        assert_eq!(cookie(&right), Verdict::Pass);
        assert_eq!(cookie(&format!("other=1; {right}; x=y")), Verdict::Pass);
        assert_eq!(
            cookie(&format!("c2s_monitor_9101={}", g.cookie_value)),
            Verdict::Refuse(Refusal::Missing)
        );
        assert_eq!(
            cookie("c2s_monitor_9100=00"),
            Verdict::Refuse(Refusal::Missing)
        );
        assert_eq!(
            cookie(&format!("c2s_monitor_9100={TOKEN}")),
            Verdict::Refuse(Refusal::Missing),
            "the token itself is not the cookie"
        );
    }

    #[test]
    fn percent_decoding_keeps_what_is_not_an_escape() {
        assert_eq!(percent_decode("a%41%zz%4"), b"aA%zz%4");
        assert_eq!(percent_decode("+%2B"), b"++");
    }
}
