//! `[serve]`: the live monitor of a run (`choice2seq run --serve ADDR` does the same from the
//! command line): a Prometheus `/metrics` endpoint, a live page and its JSON, served read-only
//! over HTTP while the run goes on.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use serde::{Deserialize, Serialize};

/// Where the live monitor listens.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServeSection {
    /// `host:port`; the loopback address unless another one is named (port 0: any free
    /// port, printed when the server starts).
    pub address: SocketAddr,
    /// Seconds the monitor goes on serving the final state after the run ends (Ctrl-C or
    /// SIGTERM ends the wait); the process then exits with the run's status.
    #[serde(default)]
    pub linger_seconds: f64,
}

/// A `--serve` argument: `PORT` (on 127.0.0.1) or `HOST:PORT`.
pub fn parse_serve_address(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse::<SocketAddr>().map_err(|_| {
        format!("`{text}` is not PORT or HOST:PORT with an IP address (e.g. 127.0.0.1:9100)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(parse_serve_address("localhost:80")
            .unwrap_err()
            .contains("not PORT or HOST:PORT"));
        assert!(parse_serve_address("99999").is_err());
    }
}
