//! `[serve]`: the live monitor of a run (`choice2seq run --serve ADDR` does the same from the
//! command line): a Prometheus `/metrics` endpoint, a live page and its JSON, served read-only
//! over HTTP while the run goes on.
//!
//! The monitor shows every prompt, result and path of the run, so who may read it is part of
//! the section: `token_env` names an environment variable holding a bearer token (the token
//! itself is never in a config, so it never reaches a manifest). Without one, only a loopback
//! address may be served ([`ServeSection::access`]).

use std::ffi::OsString;
use std::net::{AddrParseError, IpAddr, Ipv4Addr, SocketAddr};

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use thiserror::Error;

/// Where the live monitor listens, and who may read it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServeSection {
    /// `host:port`; the loopback address unless another one is named (port 0: any free
    /// port, printed when the server starts).
    pub address: SocketAddr,
    /// Seconds the monitor goes on serving the final state after the run ends (Ctrl-C or
    /// SIGTERM ends the wait); the process then exits with the run's status.
    #[serde(default)]
    pub linger_seconds: f64,
    /// The environment variable holding the bearer token every request but `/healthz` and
    /// `/readyz` must carry (`--serve-token-env` overrides it). Required beyond loopback.
    #[serde(default)]
    pub token_env: Option<String>,
}

/// How the monitor is reached, as the manifest records it (`serve.auth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ServeAuth {
    /// No token: loopback only.
    None,
    /// `Authorization: Bearer <token>` (or the page's cookie, see the pipeline's serve module).
    Bearer,
}

/// The manifest records the section with `auth` (whether a token guards the monitor) and the
/// variable's name, never the token (which the section does not hold).
impl Serialize for ServeSection {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("ServeSection", 4)?;
        st.serialize_field("address", &self.address)?;
        st.serialize_field("linger_seconds", &self.linger_seconds)?;
        st.serialize_field("token_env", &self.token_env)?;
        st.serialize_field("auth", &self.auth())?;
        st.end()
    }
}

/// The bearer token, read from the environment variable `token_env` names. It is written
/// nowhere: `Debug` shows `[redacted]` and it has no `Display` or serialization.
#[derive(Clone, PartialEq, Eq)]
pub struct ServeToken(String);

impl ServeToken {
    /// The token itself, for the server's comparison only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ServeToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(crate::REDACTED)
    }
}

/// Who may read the monitor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServeAccess {
    /// Anyone who can connect (only on a loopback address).
    Open,
    /// Requests carrying this token.
    Bearer(ServeToken),
}

/// Why the monitor cannot be served as configured (the CLI exits 2 before any work).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ServeError {
    /// No `token_env`, and the address is not a loopback one.
    #[error(
        "serve: {address} is not a loopback address, and the live monitor serves every prompt, \
         result and path of the run: set `[serve] token_env` (or `--serve-token-env NAME`) to \
         an environment variable holding a bearer token, or serve on 127.0.0.1"
    )]
    OpenBeyondLoopback {
        /// The address the monitor would listen on.
        address: SocketAddr,
    },
    /// The token variable's name is empty or holds `=`, NUL or whitespace.
    #[error("serve: `[serve] token_env` (or `--serve-token-env`) `{name}` is not an environment variable name")]
    BadName {
        /// The name as given.
        name: String,
    },
    /// The token variable is not set.
    #[error(
        "serve: the environment variable `{name}` (`[serve] token_env` or `--serve-token-env`) \
         is not set; it must hold the monitor's bearer token"
    )]
    Unset {
        /// The variable's name.
        name: String,
    },
    /// The token variable is set to the empty string.
    #[error("serve: the environment variable `{name}` (`[serve] token_env` or `--serve-token-env`) is empty")]
    Empty {
        /// The variable's name.
        name: String,
    },
    /// The token is not valid UTF-8, or holds a character outside visible ASCII.
    #[error(
        "serve: the environment variable `{name}` (`[serve] token_env` or `--serve-token-env`) \
         holds characters a bearer token cannot carry: use visible ASCII without spaces (e.g. \
         `openssl rand -hex 32`)"
    )]
    BadToken {
        /// The variable's name (never its value).
        name: String,
    },
}

impl ServeSection {
    /// `bearer` when a token variable is named.
    pub fn auth(&self) -> ServeAuth {
        if self.token_env.is_some() {
            ServeAuth::Bearer
        } else {
            ServeAuth::None
        }
    }

    /// The checks of the section alone (while the file is read): a `token_env` that can be an
    /// environment variable's name. As (field, message).
    pub(crate) fn check(&self) -> Result<(), (String, String)> {
        match &self.token_env {
            Some(name) if !is_env_name(name) => Err((
                "serve.token_env".into(),
                format!("`{name}` is not an environment variable name (it names the variable holding the monitor's bearer token, never the token)"),
            )),
            _ => Ok(()),
        }
    }

    /// Who may read the monitor, with `env` looking up environment variables: the token
    /// `token_env` names, or nobody but loopback clients without one. Errors name the setting.
    pub fn access(
        &self,
        env: &dyn Fn(&str) -> Option<OsString>,
    ) -> Result<ServeAccess, ServeError> {
        let Some(name) = &self.token_env else {
            // `is_loopback` is false for 0.0.0.0, ::, and IPv4-mapped IPv6 addresses: all of
            // them can be reached from elsewhere, so all need a token.
            return if self.address.ip().is_loopback() {
                Ok(ServeAccess::Open)
            } else {
                Err(ServeError::OpenBeyondLoopback {
                    address: self.address,
                })
            };
        };
        let named = || name.clone();
        if !is_env_name(name) {
            return Err(ServeError::BadName { name: named() });
        }
        let value = env(name).ok_or_else(|| ServeError::Unset { name: named() })?;
        let token = value
            .into_string()
            .map_err(|_| ServeError::BadToken { name: named() })?;
        if token.is_empty() {
            return Err(ServeError::Empty { name: named() });
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ServeError::BadToken { name: named() });
        }
        Ok(ServeAccess::Bearer(ServeToken(token)))
    }
}

/// A name `std::env::var` can look up (and a shell can export).
fn is_env_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0']) && !name.chars().any(char::is_whitespace)
}

/// A `--serve` argument that is neither a port nor an IP socket address (a host name is not
/// resolved).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("`{text}` is not PORT or HOST:PORT with an IP address (e.g. 127.0.0.1:9100)")]
pub struct ServeAddressError {
    /// The argument, trimmed.
    pub text: String,
    /// Why it is not a `HOST:PORT` socket address.
    #[source]
    pub source: AddrParseError,
}

/// A `--serve` argument: `PORT` (on 127.0.0.1) or `HOST:PORT`.
pub fn parse_serve_address(text: &str) -> Result<SocketAddr, ServeAddressError> {
    let text = text.trim();
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse::<SocketAddr>()
        .map_err(|source| ServeAddressError {
            text: text.to_string(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "t0k3n-that-must-not-leak";

    fn env(var: &str) -> Option<OsString> {
        match var {
            "C2S_TOKEN" => Some(TOKEN.into()),
            "EMPTY" => Some(OsString::new()),
            "SPACED" => Some("two words".into()),
            _ => None,
        }
    }

    fn section(address: &str, token_env: Option<&str>) -> ServeSection {
        ServeSection {
            address: address.parse().unwrap(),
            linger_seconds: 0.0,
            token_env: token_env.map(String::from),
        }
    }

    #[test]
    fn a_port_alone_binds_the_loopback_address() {
        assert_eq!(
            parse_serve_address("9100").unwrap(),
            "127.0.0.1:9100".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(
            parse_serve_address("0.0.0.0:80").unwrap(),
            "0.0.0.0:80".parse::<SocketAddr>().unwrap()
        );
        let e = parse_serve_address(" localhost:80 ").unwrap_err();
        assert_eq!(
            e.to_string(),
            "`localhost:80` is not PORT or HOST:PORT with an IP address (e.g. 127.0.0.1:9100)"
        );
        assert!(
            std::error::Error::source(&e).is_some(),
            "the parse error is kept"
        );
        assert!(parse_serve_address("99999").is_err());
    }

    #[test]
    fn without_a_token_only_loopback_addresses_are_served() {
        for open in ["127.0.0.1:0", "127.8.9.10:9100", "[::1]:9100"] {
            assert_eq!(section(open, None).access(&env), Ok(ServeAccess::Open));
        }
        for exposed in [
            "0.0.0.0:9100",
            "[::]:9100",
            "192.168.1.5:9100",
            "[::ffff:127.0.0.1]:9100",
        ] {
            let e = section(exposed, None).access(&env).unwrap_err();
            assert!(matches!(e, ServeError::OpenBeyondLoopback { .. }), "{e}");
            let text = e.to_string();
            assert!(
                text.contains("[serve] token_env") && text.contains("--serve-token-env"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_token_is_read_from_the_named_variable_and_never_shown() {
        for address in ["0.0.0.0:9100", "127.0.0.1:0"] {
            let access = section(address, Some("C2S_TOKEN")).access(&env).unwrap();
            let ServeAccess::Bearer(token) = &access else {
                panic!("{access:?}");
            };
            assert_eq!(token.expose(), TOKEN);
            assert!(!format!("{access:?}").contains(TOKEN));
        }
        let s = section("0.0.0.0:9100", Some("C2S_TOKEN"));
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["auth"], "bearer");
        assert_eq!(json["token_env"], "C2S_TOKEN");
        assert!(!json.to_string().contains(TOKEN));
        assert_eq!(
            serde_json::to_value(section("127.0.0.1:1", None)).unwrap()["auth"],
            "none"
        );
    }

    #[test]
    fn an_unset_empty_or_unusable_token_variable_is_named() {
        let err = |name: &str| {
            section("0.0.0.0:9100", Some(name))
                .access(&env)
                .unwrap_err()
        };
        assert_eq!(
            err("C2S_ABSENT"),
            ServeError::Unset {
                name: "C2S_ABSENT".into()
            }
        );
        assert!(err("C2S_ABSENT").to_string().contains("`C2S_ABSENT`"));
        assert_eq!(
            err("EMPTY"),
            ServeError::Empty {
                name: "EMPTY".into()
            }
        );
        assert_eq!(
            err("SPACED"),
            ServeError::BadToken {
                name: "SPACED".into()
            }
        );
        assert!(matches!(err("A=B"), ServeError::BadName { .. }));
        assert!(matches!(err(""), ServeError::BadName { .. }));
    }
}
