//! Where the two WebSockets are and how to reach them: URLs (given or derived from
//! `perps_url`), the TLS configuration, and the supervision timers. Made once per client.
//!
//! Derived URLs keep `perps_url`'s path prefix: the venue serves `/ws-stream/v1` and
//! `/ws-api/v1` beside `/api` (`https://perps.standx.com/api/…` and
//! `wss://perps.standx.com/ws-stream/v1`), so a deployment that serves the API under a
//! prefix (`https://host/perps/api/…`) is expected to serve the streams under the same one
//! (`wss://host/perps/ws-stream/v1`). `stream_url` / `order_stream_url` override them.

use crate::client::options::{ClientOptions, StreamOptions};
use crate::client::url::{BaseUrl, Schemes, check_url_of};
use crate::error::Result;
use std::sync::{Arc, OnceLock};

#[derive(Debug)]
pub struct StreamSettings {
    pub stream_url: String,
    pub order_stream_url: String,
    /// The venue host of each URL as the connection limits count it (`limits.rs`): the key
    /// of the REST per-IP limit (`BaseUrl::host_and_port`: lower case, the default port
    /// written out, an IPv6 address canonical), so that `wss://Venue.example` and
    /// `wss://venue.example:443`, or `ws://[0::1]` and `ws://[::1]:80`, are one host.
    pub stream_host: String,
    pub order_stream_host: String,
    pub options: StreamOptions,
    pub connect_timeout: std::time::Duration,
    /// How long the venue may take to answer an auth frame or a write may stall.
    pub reply_timeout: std::time::Duration,
    pub user_agent: String,
    ca_bundle_path: Option<String>,
    tls: OnceLock<Arc<rustls::ClientConfig>>,
}

impl StreamSettings {
    /// `perps_url` is the client's checked trading URL.
    pub(crate) fn new(perps_url: &BaseUrl, options: &ClientOptions) -> Result<StreamSettings> {
        let insecure = options.allow_insecure_http;
        let stream = &options.stream;
        // A derived URL has the trading URL's host and port (https → wss and http → ws keep
        // the default port).
        let url_and_host = |given: &Option<String>, name: &str, path: &str| -> Result<(String, String)> {
            match given {
                Some(url) => check_ws_url(url, name, insecure).map(|url| (url.host_and_port(), url.text)),
                None => Ok((perps_url.host_and_port(), derive(&perps_url.text, path))),
            }
        };
        let (stream_host, stream_url) = url_and_host(&stream.stream_url, "stream_url", "/ws-stream/v1")?;
        let (order_stream_host, order_stream_url) =
            url_and_host(&stream.order_stream_url, "order_stream_url", "/ws-api/v1")?;
        Ok(StreamSettings {
            stream_url,
            order_stream_url,
            stream_host,
            order_stream_host,
            options: stream.clone(),
            connect_timeout: options.connect_timeout,
            reply_timeout: options.read_timeout,
            user_agent: options.user_agent.clone(),
            ca_bundle_path: options.ca_bundle_path.clone(),
            tls: OnceLock::new(),
        })
    }

    /// The rustls configuration, built on first use (REST-only callers never pay for it).
    pub fn tls(&self) -> Result<Arc<rustls::ClientConfig>> {
        if let Some(config) = self.tls.get() {
            return Ok(config.clone());
        }
        let config = super::tls::client_config(self.ca_bundle_path.as_deref())?;
        Ok(self.tls.get_or_init(|| config).clone())
    }
}

/// `https://h/p` → `wss://h/p{path}`, `http://h/p` → `ws://h/p{path}` (the URL was checked:
/// plain http only where allowed).
fn derive(perps_url: &str, path: &str) -> String {
    let rest = perps_url.strip_prefix("https://").map(|r| ("wss://", r));
    let (scheme, rest) =
        rest.or(perps_url.strip_prefix("http://").map(|r| ("ws://", r))).unwrap_or(("wss://", perps_url));
    format!("{scheme}{rest}{path}")
}

/// A WebSocket URL: `wss://`, or `ws://` to loopback (or anywhere with
/// `allow_insecure_http`): the auth frame carries the bearer token. The same rules as the
/// REST base URLs: used exactly as written or refused (`client::url`).
fn check_ws_url(url: &str, name: &str, allow_insecure: bool) -> Result<BaseUrl> {
    check_url_of(url, name, allow_insecure, Schemes::WebSocket)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(perps_url: &str, json: &str) -> Result<StreamSettings> {
        let options = ClientOptions::parse(Some(json))?;
        let perps_url = crate::client::url::check_url(perps_url, "perps_url", options.allow_insecure_http)?;
        StreamSettings::new(&perps_url, &options)
    }

    #[test]
    fn the_limits_count_a_host_however_its_url_writes_it() {
        let s = settings(
            "https://Perps.Example/api",
            r#"{"stream_url":"wss://Venue.example/x","order_stream_url":"wss://venue.example:443/y"}"#,
        )
        .unwrap();
        assert_eq!((s.stream_host.as_str(), s.order_stream_host.as_str()), ("venue.example:443", "venue.example:443"));
        // Derived: the trading URL's host, whichever scheme.
        let s = settings("https://Perps.Example:443/api", "{}").unwrap();
        assert_eq!((s.stream_host.as_str(), s.order_stream_host.as_str()), ("perps.example:443", "perps.example:443"));
        let s = settings("http://LOCALHOST/p", r#"{"order_stream_url":"ws://localhost:80/o"}"#).unwrap();
        assert_eq!((s.stream_host.as_str(), s.order_stream_host.as_str()), ("localhost:80", "localhost:80"));
        let s = settings("http://127.0.0.1:9000", "{}").unwrap();
        assert_eq!(s.stream_host, "127.0.0.1:9000");
    }

    #[test]
    fn urls_are_derived_from_perps_url_keeping_its_prefix() {
        let s = settings("https://perps.example", "{}").unwrap();
        assert_eq!(s.stream_url, "wss://perps.example/ws-stream/v1");
        assert_eq!(s.order_stream_url, "wss://perps.example/ws-api/v1");
        let s = settings("http://127.0.0.1:9000/perps", "{}").unwrap();
        assert_eq!(s.stream_url, "ws://127.0.0.1:9000/perps/ws-stream/v1");
        assert_eq!(s.order_stream_url, "ws://127.0.0.1:9000/perps/ws-api/v1");
    }

    #[test]
    fn given_urls_are_checked() {
        let s =
            settings("https://p.example", r#"{"stream_url":"wss://s.example/x","order_stream_url":"ws://[::1]:9/o"}"#)
                .unwrap();
        assert_eq!((s.stream_url.as_str(), s.order_stream_url.as_str()), ("wss://s.example/x", "ws://[::1]:9/o"));
        for (json, fragment) in [
            (r#"{"stream_url":"ws://10.0.0.1/x"}"#, "plain ws"),
            (r#"{"stream_url":"https://s.example"}"#, "must start with wss://"),
            (r#"{"order_stream_url":"wss://u:p@s.example"}"#, "credentials"),
            (r#"{"order_stream_url":"wss://s.example/#f"}"#, "fragment"),
            (r#"{"stream_url":""}"#, "stream_url"),
            // The REST URLs' rules: never silently changed (a dropped port would send the
            // auth frame, token included, to the default port).
            (r#"{"stream_url":"wss://s.example:99999/x"}"#, "port"),
            (r#"{"order_stream_url":"wss://s.example/x y"}"#, "space"),
            (r#"{"order_stream_url":"WSS://s.example/x"}"#, "lower case"),
        ] {
            let e = settings("https://p.example", json).unwrap_err();
            assert!(e.message().contains(fragment), "{json}: {}", e.message());
        }
        assert!(
            settings("https://p.example", r#"{"stream_url":"ws://10.0.0.1/x","allow_insecure_http":true}"#).is_ok()
        );
    }
}
