//! Client options: parsed from the JSON the caller passes to `perps_client_new`.
//! Every option is optional; unknown options are refused so a typo is not silently ignored.

use crate::error::{Error, Result};
use serde_json::Value;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub struct ClientOptions {
    /// TCP + TLS connection set-up limit.
    pub connect_timeout: Duration,
    /// Longest wait for any single read from, or write to, the venue.
    pub read_timeout: Duration,
    /// Whole exchange limit (connect, send, receive).
    pub total_timeout: Duration,
    /// Largest response body accepted.
    pub max_response_bytes: u64,
    pub user_agent: String,
    /// PEM file of CA certificates to trust instead of the built-in WebPKI roots.
    pub ca_bundle_path: Option<String>,
    /// Allow plain `http://` to hosts other than loopback.
    pub allow_insecure_http: bool,
    /// The WebSocket settings (`stream_url`, `order_stream_url`, `max_frame_bytes`, `stream_*`).
    pub stream: StreamOptions,
}

/// The WebSocket options (src/stream/). URLs default to ones derived from `perps_url`.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamOptions {
    /// The market + account stream (`ws-stream`); `None`: `{perps_url as ws(s)}/ws-stream/v1`.
    pub stream_url: Option<String>,
    /// The order-entry stream (`ws-api`); `None`: `{perps_url as ws(s)}/ws-api/v1`.
    pub order_stream_url: Option<String>,
    /// Largest WebSocket frame or message accepted from the venue.
    pub max_frame_bytes: usize,
    /// A connection that receives nothing (not even the venue's 10 s pings) for this long is
    /// dead (half-open) and is replaced.
    pub idle_timeout: Duration,
    /// A connection is replaced after this long, before the venue's 24 h cap.
    pub rotate_after: Duration,
    /// Reconnection backoff: first delay and ceiling (each jittered).
    pub reconnect_min: Duration,
    pub reconnect_max: Duration,
    /// The venue's limits on WebSocket connections from one IP, enforced process-wide per
    /// venue host: open connections at once, and new connections in any 60 s.
    pub max_connections: usize,
    pub connects_per_minute: usize,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            stream_url: None,
            order_stream_url: None,
            max_frame_bytes: 1 << 20,
            idle_timeout: Duration::from_secs(30),
            rotate_after: Duration::from_secs(23 * 3600 + 50 * 60),
            reconnect_min: Duration::from_millis(250),
            reconnect_max: Duration::from_secs(30),
            max_connections: 10,
            connects_per_minute: 30,
        }
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connect_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(10),
            total_timeout: Duration::from_secs(15),
            max_response_bytes: 1 << 20,
            user_agent: format!("libperps/{}", env!("CARGO_PKG_VERSION")),
            ca_bundle_path: None,
            allow_insecure_http: false,
            stream: StreamOptions::default(),
        }
    }
}

const KNOWN: &[&str] = &[
    "connect_timeout_ms",
    "read_timeout_ms",
    "total_timeout_ms",
    "max_response_bytes",
    "user_agent",
    "ca_bundle_path",
    "allow_insecure_http",
    "stream_url",
    "order_stream_url",
    "max_frame_bytes",
    "stream_idle_timeout_ms",
    "stream_rotate_after_ms",
    "stream_reconnect_min_ms",
    "stream_reconnect_max_ms",
    "stream_max_connections",
    "stream_connects_per_minute",
];

impl ClientOptions {
    /// Parse the options JSON; `None` or an empty string means all defaults.
    pub fn parse(json: Option<&str>) -> Result<ClientOptions> {
        let mut options = ClientOptions::default();
        let Some(json) = json.filter(|j| !j.trim().is_empty()) else {
            return Ok(options);
        };
        // Parsed as any JSON first: a typed parse would quote a wrong-typed input in full.
        let value: Value = serde_json::from_str(json)
            .map_err(|e| Error::invalid_argument(format!("options_json is not a JSON object: {e}")))?;
        let Value::Object(map) = value else {
            return Err(Error::invalid_argument(
                "options_json is not a JSON object: write {\"name\": value, …} or pass NULL for the defaults",
            ));
        };
        if let Some(unknown) = map.keys().find(|k| !KNOWN.contains(&k.as_str())) {
            return Err(Error::invalid_argument(format!(
                "unknown client option \"{}\"; known options: {}",
                crate::error::excerpt(unknown),
                KNOWN.join(", ")
            )));
        }
        if let Some(v) = map.get("connect_timeout_ms") {
            options.connect_timeout = millis(v, "connect_timeout_ms")?;
        }
        if let Some(v) = map.get("read_timeout_ms") {
            options.read_timeout = millis(v, "read_timeout_ms")?;
        }
        if let Some(v) = map.get("total_timeout_ms") {
            options.total_timeout = millis(v, "total_timeout_ms")?;
        }
        if let Some(v) = map.get("max_response_bytes") {
            options.max_response_bytes = positive(v, "max_response_bytes", 1 << 30)?;
        }
        if let Some(v) = map.get("user_agent") {
            let ua = text(v, "user_agent")?;
            if ua.is_empty() || !ua.bytes().all(|b| (0x20..0x7f).contains(&b)) {
                return Err(Error::invalid_argument("user_agent must be non-empty printable ASCII"));
            }
            options.user_agent = ua.to_owned();
        }
        if let Some(v) = map.get("ca_bundle_path") {
            options.ca_bundle_path = Some(text(v, "ca_bundle_path")?.to_owned());
        }
        if let Some(v) = map.get("allow_insecure_http") {
            options.allow_insecure_http =
                v.as_bool().ok_or_else(|| Error::invalid_argument("allow_insecure_http must be true or false"))?;
        }
        parse_stream_options(&map, &mut options.stream)?;
        Ok(options)
    }
}

fn parse_stream_options(map: &serde_json::Map<String, Value>, stream: &mut StreamOptions) -> Result<()> {
    if let Some(v) = map.get("stream_url") {
        stream.stream_url = Some(text(v, "stream_url")?.to_owned());
    }
    if let Some(v) = map.get("order_stream_url") {
        stream.order_stream_url = Some(text(v, "order_stream_url")?.to_owned());
    }
    if let Some(v) = map.get("max_frame_bytes") {
        // At least 1 KiB: a depth_book push or an order reply must fit.
        let n = positive(v, "max_frame_bytes", 1 << 30)?;
        if n < 1024 {
            return Err(Error::invalid_argument("max_frame_bytes must be an integer from 1024 to 1073741824"));
        }
        stream.max_frame_bytes = n as usize;
    }
    if let Some(v) = map.get("stream_idle_timeout_ms") {
        stream.idle_timeout = millis(v, "stream_idle_timeout_ms")?;
    }
    if let Some(v) = map.get("stream_rotate_after_ms") {
        // Never past the venue's 24 h cap.
        stream.rotate_after = Duration::from_millis(positive(v, "stream_rotate_after_ms", 86_400_000)?);
    }
    if let Some(v) = map.get("stream_reconnect_min_ms") {
        stream.reconnect_min = millis(v, "stream_reconnect_min_ms")?;
    }
    if let Some(v) = map.get("stream_reconnect_max_ms") {
        stream.reconnect_max = millis(v, "stream_reconnect_max_ms")?;
    }
    if stream.reconnect_max < stream.reconnect_min {
        return Err(Error::invalid_argument("stream_reconnect_max_ms must not be less than stream_reconnect_min_ms"));
    }
    if let Some(v) = map.get("stream_max_connections") {
        stream.max_connections = positive(v, "stream_max_connections", 1000)? as usize;
    }
    if let Some(v) = map.get("stream_connects_per_minute") {
        stream.connects_per_minute = positive(v, "stream_connects_per_minute", 100_000)? as usize;
    }
    Ok(())
}

fn positive(v: &Value, name: &str, max: u64) -> Result<u64> {
    match v.as_u64() {
        Some(n) if n >= 1 && n <= max => Ok(n),
        _ => Err(Error::invalid_argument(format!("{name} must be an integer from 1 to {max}"))),
    }
}

fn millis(v: &Value, name: &str) -> Result<Duration> {
    positive(v, name, 3_600_000).map(Duration::from_millis)
}

fn text<'a>(v: &'a Value, name: &str) -> Result<&'a str> {
    v.as_str().ok_or_else(|| Error::invalid_argument(format!("{name} must be a string")))
}
