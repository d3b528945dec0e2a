//! The client: the venue's two base URLs, one HTTP transport, the cached certificate set
//! and the clock offset. Shared by any number of sessions and threads.

pub mod options;
mod sent_tracker;
mod signin;
mod trading;
pub mod transport;
mod write_coalescing;

use crate::challenge::CertSet;
use crate::error::{Error, Result};
use options::ClientOptions;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use transport::{Reply, Transport};
use ureq::http::Method;

pub struct Client {
    base_url: String,
    perps_url: String,
    transport: Transport,
    certs: Mutex<Option<Arc<CertSet>>>,
    /// Venue clock minus local clock, in milliseconds (0 until `sync_time`).
    clock_offset_ms: AtomicI64,
    /// The two WebSockets' URLs, options and TLS configuration.
    stream: crate::stream::settings::StreamSettings,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.base_url)
            .field("perps_url", &self.perps_url)
            .field("clock_offset_ms", &self.clock_offset_ms())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// `base_url` serves sign-in and certs, `perps_url` serves trading. Both are required:
    /// there is no default venue, so a test can never reach production by accident.
    pub fn new(base_url: &str, perps_url: &str, options: ClientOptions) -> Result<Client> {
        let base_url = check_url(base_url, "base_url", options.allow_insecure_http)?;
        let perps_url = check_url(perps_url, "perps_url", options.allow_insecure_http)?;
        let stream = crate::stream::settings::StreamSettings::new(&perps_url, &options)?;
        Ok(Client {
            base_url,
            perps_url,
            transport: Transport::new(&options)?,
            certs: Mutex::new(None),
            clock_offset_ms: AtomicI64::new(0),
            stream,
        })
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub fn perps_url(&self) -> &str {
        &self.perps_url
    }

    /// The WebSockets' settings (src/stream/).
    pub fn stream_settings(&self) -> &crate::stream::settings::StreamSettings {
        &self.stream
    }

    pub fn clock_offset_ms(&self) -> i64 {
        self.clock_offset_ms.load(Ordering::Relaxed)
    }

    /// The venue's time in milliseconds: the local clock corrected by the synced offset.
    pub fn venue_now_ms(&self) -> i64 {
        crate::body_sign::now_ms() + self.clock_offset_ms()
    }

    /// The cached certificate set, fetching it on first need (or when `refresh` is set).
    fn certs(&self, refresh: bool) -> Result<(Arc<CertSet>, bool)> {
        if !refresh && let Some(certs) = self.certs.lock().unwrap_or_else(PoisonError::into_inner).clone() {
            return Ok((certs, false));
        }
        let reply = self.send(Method::GET, &format!("{}/v1/offchain/certs", self.base_url), &[], None)?;
        let reply = require_2xx(reply, "certs")?;
        let certs =
            Arc::new(CertSet::parse(&reply.body).map_err(|e| e.with_status(reply.status).with_body(reply.body))?);
        *self.certs.lock().unwrap_or_else(PoisonError::into_inner) = Some(certs.clone());
        Ok((certs, true))
    }

    fn send(&self, method: Method, url: &str, headers: &[(&str, &str)], body: Option<&[u8]>) -> Result<Reply> {
        self.transport.send(method, url, headers, body)
    }
}

/// A non-2xx answer is `PERPS_HTTP_STATUS` carrying the status and body. Whether the venue
/// may have acted on the request: not for 3xx/4xx (it refused), possibly for 5xx.
fn require_2xx(reply: Reply, what: &str) -> Result<Reply> {
    if (200..300).contains(&reply.status) {
        return Ok(reply);
    }
    let hint = match reply.status {
        300..=399 => " (redirects are never followed)",
        401 => " (token missing, invalid or expired)",
        403 => " (signature or permission refused)",
        429 => " (rate limited)",
        _ => "",
    };
    Err(Error::new(crate::Code::HttpStatus, format!("{what}: the venue answered HTTP {}{hint}", reply.status))
        .with_status(reply.status)
        .reached_venue(reply.status >= 500)
        .with_body(reply.body))
}

/// Parse the venue's JSON answer as an object, or `PERPS_BAD_RESPONSE` with the body.
fn json_object(reply: &Reply, what: &str) -> Result<serde_json::Map<String, serde_json::Value>> {
    serde_json::from_str(&reply.body).map_err(|_| {
        Error::bad_response(format!("{what}: the venue's answer is not a JSON object"))
            .with_status(reply.status)
            .with_body(reply.body.clone())
    })
}

/// Validate a base URL: http(s), a host, no query or fragment; plain http only to loopback
/// unless allowed. Returns it without a trailing slash.
fn check_url(url: &str, name: &str, allow_insecure_http: bool) -> Result<String> {
    let url = url.trim();
    let shown = shown_url(url);
    let uri: ureq::http::Uri =
        url.parse().map_err(|_| Error::invalid_argument(format!("{name} {shown} is not a valid URL")))?;
    let scheme = uri.scheme_str().unwrap_or("");
    let Some(authority) = uri.authority() else {
        return Err(Error::invalid_argument(format!("{name} {shown} has no host (expected e.g. https://host)")));
    };
    if authority.as_str().contains('@') {
        return Err(Error::invalid_argument(format!("{name} must not contain credentials")));
    }
    if uri.query().is_some() || url.contains('#') {
        return Err(Error::invalid_argument(format!("{name} {shown} must not have a query or fragment")));
    }
    match scheme {
        "https" => {}
        "http" if allow_insecure_http || is_loopback(authority.host()) => {}
        "http" => {
            return Err(Error::invalid_argument(format!(
                "{name} {shown} is plain http to a non-loopback host: a bearer token must not cross a network in clear \
                 (use https, or set allow_insecure_http)"
            )));
        }
        _ => {
            return Err(Error::invalid_argument(format!(
                "{name} {shown} must start with https:// (or http:// for loopback)"
            )));
        }
    }
    Ok(url.trim_end_matches('/').to_owned())
}

/// A URL quoted in a message: cut short (an error never carries a huge input back), and not
/// shown at all when it may hold credentials (`user:password@`).
fn shown_url(url: &str) -> String {
    if url.contains('@') {
        "(not shown: it contains '@')".to_owned()
    } else {
        format!("\"{}\"", crate::error::excerpt(url))
    }
}

pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::check_url;

    #[test]
    fn urls_are_checked() {
        assert_eq!(check_url("https://api.example.com/", "u", false).unwrap(), "https://api.example.com");
        assert!(check_url("http://127.0.0.1:8080/auth", "u", false).is_ok());
        assert!(check_url("http://[::1]:8080", "u", false).is_ok());
        assert!(check_url("http://localhost:1", "u", false).is_ok());
        assert!(check_url("http://10.0.0.1", "u", false).is_err());
        assert!(check_url("http://10.0.0.1", "u", true).is_ok());
        assert!(check_url("ftp://x", "u", false).is_err());
        assert!(check_url("https://user:pw@x", "u", false).is_err());
        assert!(check_url("https://x/?a=1", "u", false).is_err());
        assert!(check_url("/relative", "u", false).is_err());
        assert!(check_url("", "u", false).is_err());
    }
}
