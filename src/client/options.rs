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
    /// How long the venue's key set (certs) is trusted before it is fetched again.
    pub certs_ttl: Duration,
    /// The sign-in message's domain and URI must be exactly these (when set).
    pub expected_domain: Option<String>,
    pub expected_uri: Option<String>,
    /// Pacing of account requests to the venue's credit bucket.
    pub rate_limit: RateLimit,
    /// Check orders against the venue's instrument rules before sending.
    pub symbol_rules: bool,
    /// Rules older than this are read again before they refuse an order.
    pub symbol_rules_max_age: Duration,
    /// Put in front of every `cl_ord_id` the library generates.
    pub cl_ord_id_prefix: String,
    /// The WebSocket settings (`stream_url`, `order_stream_url`, `max_frame_bytes`, `stream_*`).
    pub stream: StreamOptions,
}

/// The `rate_limit` option: what to do with a request the venue's limits have no room for
/// yet — an account's credit bucket (45 credits a request, 1,000 credits/s refill, burst 900;
/// account requests) and the per-IP limit of the venue's host (50 requests/s; every request,
/// `per_ip_limit`). With `Wait` or `Refuse`, a venue 429 (an HTTP status, or the `code` of a
/// 2xx answer) empties the account's local bucket for its `Retry-After`, at most
/// `pacing::MAX_RETRY_AFTER_PAUSE` (10 s), or one request's refill without one. With any
/// mode, since the venue's limit is per IP, a 429 also pauses the per-IP limit of the
/// request's host, so that every pacing client of the process that sends to that host waits
/// or is refused instead of collecting 429s of its own: for the same time after a request
/// of no account (one window, 1.1 s, without a `Retry-After`), for at most one window after
/// an account's (whose 429 may be its own budget's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RateLimit {
    /// Send it (the venue answers 429 when the account is over its budget). It never waits
    /// and is never refused, but it is noted in its host's per-IP limit, which is shared
    /// process-wide: the pacing clients of the same host count it, and leave room for it, and
    /// a 429 it gets pauses them as their own would.
    #[default]
    Off,
    /// Wait until it fits, when the wait leaves the request at least half of the call's
    /// `total_timeout_ms`; refuse it as `Refuse` does otherwise.
    Wait,
    /// Refuse it locally with `PERPS_RATE_LIMITED`; nothing is sent.
    Refuse,
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
    /// An order-stream request whose outcome has not come this long after its frame was
    /// written is reported by a `request_timeout` event, its fate unknown (`None`: never).
    pub request_timeout: Option<Duration>,
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
            request_timeout: Some(Duration::from_secs(10)),
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
            certs_ttl: DEFAULT_CERTS_TTL,
            expected_domain: None,
            expected_uri: None,
            rate_limit: RateLimit::Off,
            symbol_rules: false,
            symbol_rules_max_age: crate::client::symbol_cache::DEFAULT_MAX_AGE,
            cl_ord_id_prefix: String::new(),
            stream: StreamOptions::default(),
        }
    }
}

/// The default lifetime of the cached key set: one hour.
pub const DEFAULT_CERTS_TTL: Duration = Duration::from_secs(3600);

/// The longest `certs_ttl_ms`: one week.
const MAX_CERTS_TTL_MS: u64 = 7 * 86_400_000;

const KNOWN: &[&str] = &[
    "connect_timeout_ms",
    "read_timeout_ms",
    "total_timeout_ms",
    "max_response_bytes",
    "user_agent",
    "ca_bundle_path",
    "allow_insecure_http",
    "certs_ttl_ms",
    "expected_domain",
    "expected_uri",
    "rate_limit",
    "symbol_rules",
    "symbol_rules_max_age_ms",
    "cl_ord_id_prefix",
    "stream_url",
    "order_stream_url",
    "max_frame_bytes",
    "stream_idle_timeout_ms",
    "stream_rotate_after_ms",
    "stream_reconnect_min_ms",
    "stream_reconnect_max_ms",
    "stream_max_connections",
    "stream_connects_per_minute",
    "stream_request_timeout_ms",
];

/// Longest `cl_ord_id_prefix`: with the 26-character generated part, ids stay within 42
/// characters (the venue accepted 46 live; order validation allows 64).
pub const MAX_CL_ORD_ID_PREFIX: usize = 16;

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
            return Err(unknown_option(unknown));
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
        if let Some(v) = map.get("certs_ttl_ms") {
            // 0 is allowed: fetch the key set for every sign-in.
            options.certs_ttl = match v.as_u64() {
                Some(n) if n <= MAX_CERTS_TTL_MS => Duration::from_millis(n),
                _ => {
                    return Err(Error::invalid_argument(format!(
                        "certs_ttl_ms must be an integer from 0 to {MAX_CERTS_TTL_MS} (one week)"
                    )));
                }
            };
        }
        if let Some(v) = map.get("rate_limit") {
            options.rate_limit = match v.as_str() {
                Some("off") => RateLimit::Off,
                Some("wait") => RateLimit::Wait,
                Some("refuse") => RateLimit::Refuse,
                _ => {
                    return Err(Error::invalid_argument(format!(
                        "rate_limit must be \"off\", \"wait\" or \"refuse\" (got {})",
                        crate::error::excerpt(&v.to_string())
                    )));
                }
            };
        }
        if let Some(v) = map.get("expected_domain") {
            options.expected_domain = Some(pin(v, "expected_domain", "e.g. \"standx.com\"")?);
        }
        if let Some(v) = map.get("expected_uri") {
            options.expected_uri = Some(pin(v, "expected_uri", "e.g. \"https://standx.com\"")?);
        }
        if let Some(v) = map.get("symbol_rules") {
            options.symbol_rules =
                v.as_bool().ok_or_else(|| Error::invalid_argument("symbol_rules must be true or false"))?;
        }
        if let Some(v) = map.get("symbol_rules_max_age_ms") {
            options.symbol_rules_max_age = millis(v, "symbol_rules_max_age_ms")?;
        }
        if let Some(v) = map.get("cl_ord_id_prefix") {
            let prefix = text(v, "cl_ord_id_prefix")?;
            if prefix.len() > MAX_CL_ORD_ID_PREFIX
                || !prefix.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                return Err(Error::invalid_argument(format!(
                    "cl_ord_id_prefix must be at most {MAX_CL_ORD_ID_PREFIX} letters, digits, '-' or '_' \
                     (got \"{}\")",
                    crate::error::excerpt(prefix)
                )));
            }
            options.cl_ord_id_prefix = prefix.to_owned();
        }
        parse_stream_options(&map, &mut options.stream)?;
        Ok(options)
    }
}

/// A pinned sign-in value: the exact text the message must carry.
fn pin(v: &Value, name: &str, example: &str) -> Result<String> {
    let text = text(v, name)?;
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::invalid_argument(format!(
            "{name} must be non-empty visible ASCII without spaces ({example})"
        )));
    }
    Ok(text.to_owned())
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
    if let Some(v) = map.get("stream_request_timeout_ms") {
        // 0: no deadline (the engine keeps its own).
        stream.request_timeout = match v.as_u64() {
            Some(0) => None,
            _ => Some(millis(v, "stream_request_timeout_ms").map_err(|_| {
                Error::invalid_argument("stream_request_timeout_ms must be an integer from 0 (none) to 3600000")
            })?),
        };
    }
    Ok(())
}

/// An unknown option: the known ones it may have meant (those sharing a word of three
/// letters or more with it, camel case split: `read_timeout` → `read_timeout_ms`, `rateLimit` →
/// `rate_limit`), else where they are listed: the whole list no longer fits an error
/// message's bound (512 bytes).
fn unknown_option(unknown: &str) -> Error {
    let words = |name: &str| -> Vec<String> {
        let spaced: String = name
            .chars()
            .flat_map(|c| if c.is_ascii_uppercase() { vec!['_', c.to_ascii_lowercase()] } else { vec![c] })
            .collect();
        spaced.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| w.len() >= 3).map(str::to_owned).collect()
    };
    let asked = words(unknown);
    let near: Vec<&str> = KNOWN
        .iter()
        .copied()
        .filter(|known| words(known).iter().any(|w| w != "stream" && asked.contains(w)))
        .take(6)
        .collect();
    let hint = if near.is_empty() {
        "the known options are listed in README \"Client options\" and at perps_client_new in perps.h".to_owned()
    } else {
        format!("did you mean {}? (README \"Client options\" lists them all)", near.join(", "))
    };
    Error::invalid_argument(format!("unknown client option \"{}\"; {hint}", crate::error::excerpt(unknown)))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_option_names_the_ones_it_may_mean_within_the_message_bound() {
        for (json, says) in [
            (
                r#"{"read_timeout":5}"#,
                "did you mean connect_timeout_ms, read_timeout_ms, total_timeout_ms, stream_idle_timeout_ms",
            ),
            (r#"{"rateLimit":"wait"}"#, "did you mean rate_limit?"),
            (r#"{"stream_request_timeout":1}"#, "stream_request_timeout_ms"),
            (r#"{"zz":1}"#, "listed in README \"Client options\""),
        ] {
            let e = ClientOptions::parse(Some(json)).unwrap_err();
            assert_eq!(e.code(), crate::error::Code::InvalidArgument);
            assert!(e.message().contains(says), "{json}: {}", e.message());
            assert!(e.message().len() <= 512, "{json}: {} bytes", e.message().len());
        }
        let long = format!(r#"{{"{}":1}}"#, "\\u0001".repeat(200) + "_timeout_rate_limit_url_bytes");
        assert!(ClientOptions::parse(Some(&long)).unwrap_err().message().len() <= 512);
    }
}
