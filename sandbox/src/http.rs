//! The transport-independent view of one request (`Incoming`) and of its answer (`Reply`).
//!
//! Handlers see only these two types, so the venue logic does not depend on tiny_http and the
//! body is read exactly once, as raw bytes (the body signature covers those bytes).

use std::io::Read;

use serde_json::{Value, json};

/// Largest request body the sandbox reads; larger bodies get 413 without being read.
pub(crate) const MAX_BODY: usize = 1 << 20;

pub(crate) struct Incoming {
    pub method: String,
    /// The path without the query string, not percent-decoded.
    pub path: String,
    /// The query string as received (after `?`), for the request log.
    pub raw_query: String,
    /// Query pairs, percent-decoded, in order.
    pub query: Vec<(String, String)>,
    /// Header names lower-cased; values as received; order kept, duplicates kept.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

pub(crate) enum Reply {
    /// A JSON body with this HTTP status.
    Json(u16, Value),
    /// A JSON text already rendered (the bare integer of the server-time endpoint).
    Text(u16, String),
    /// A plain-text body (`GET /api/health` answers `OK`).
    Plain(u16, String),
    /// Close the TCP connection without writing a byte (the `close_after_order` fault).
    CloseSilently,
}

/// The venue's error shape: `{"code": <status>, "message": "…"}` with that HTTP status.
pub(crate) fn error(status: u16, message: impl Into<String>) -> Reply {
    Reply::Json(status, json!({"code": status, "message": message.into()}))
}

impl Reply {
    pub(crate) fn status(&self) -> u16 {
        match self {
            Reply::Json(s, _) | Reply::Text(s, _) | Reply::Plain(s, _) => *s,
            Reply::CloseSilently => 0,
        }
    }

    /// One line for the request log: the error message, a non-zero `code`'s message, or
    /// what an accepted request did (`note`, set by the handler).
    pub(crate) fn verdict(&self, note: Option<&str>) -> String {
        match self {
            Reply::CloseSilently => "connection closed without an answer (fault close_after_order)".into(),
            Reply::Json(status, v) => {
                let code = v.get("code").and_then(Value::as_i64).unwrap_or(0);
                let message = v.get("message").and_then(Value::as_str).unwrap_or_default();
                if *status >= 400 || code != 0 {
                    format!("refused: {message}")
                } else {
                    note.map_or_else(|| "ok".to_owned(), str::to_owned)
                }
            }
            Reply::Text(status, _) | Reply::Plain(status, _) => if *status >= 400 { "refused" } else { "ok" }.into(),
        }
    }
}

impl Incoming {
    /// Reads the request line, headers and body from tiny_http. A body over `MAX_BODY` is
    /// refused with 413 before reading it (tiny_http drains it so the connection stays usable).
    pub(crate) fn read(rq: &mut tiny_http::Request) -> Result<Incoming, Reply> {
        let headers: Vec<(String, String)> = rq
            .headers()
            .iter()
            .map(|h| (h.field.as_str().as_str().to_ascii_lowercase(), h.value.as_str().to_owned()))
            .collect();
        if rq.body_length().is_some_and(|n| n > MAX_BODY) {
            return Err(error(413, "request body too large"));
        }
        // tiny_http hands an upgrade request the raw socket as its "body": reading it to the
        // end would wait for the client to hang up. Upgrades are served on the WebSocket paths
        // only (`ws::upgrade`, before this); anywhere else, refuse at once.
        if headers.iter().any(|(name, value)| name == "connection" && value.to_ascii_lowercase().contains("upgrade")) {
            return Err(error(400, "connection upgrades are not supported"));
        }
        let mut body = Vec::new();
        let limit = u64::try_from(MAX_BODY).unwrap_or(u64::MAX) + 1;
        if rq.as_reader().take(limit).read_to_end(&mut body).is_err() {
            return Err(error(400, "could not read the request body"));
        }
        if body.len() > MAX_BODY {
            return Err(error(413, "request body too large"));
        }
        let url = rq.url();
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        Ok(Incoming {
            method: rq.method().as_str().to_owned(),
            path: path.to_owned(),
            raw_query: query.to_owned(),
            query: parse_query(query),
            headers,
            body,
        })
    }

    /// The one value of a header. A header sent twice is an error: a venue that signs over
    /// header values cannot guess which copy the client meant.
    pub(crate) fn header(&self, name: &str) -> Result<Option<&str>, String> {
        let mut found = self.headers.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str());
        match (found.next(), found.next()) {
            (v, None) => Ok(v),
            (Some(_), Some(_)) => Err(format!("header {name} is repeated")),
            (None, Some(_)) => unreachable!(),
        }
    }

    /// The one value of a query parameter; repeated is an error, like headers.
    pub(crate) fn query_param(&self, name: &str) -> Result<Option<&str>, String> {
        let mut found = self.query.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str());
        match (found.next(), found.next()) {
            (v, None) => Ok(v),
            _ => Err(format!("query parameter {name} is repeated")),
        }
    }

    /// True when Content-Type is `application/json`, parameters (charset) allowed.
    pub(crate) fn is_json(&self) -> bool {
        matches!(self.header("content-type"), Ok(Some(v))
            if v.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json")))
    }

    /// The body as a JSON object, or a message saying why not.
    pub(crate) fn json_object(&self) -> Result<serde_json::Map<String, Value>, String> {
        match serde_json::from_slice(&self.body) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err("request body must be a JSON object".into()),
            Err(e) => Err(format!("request body is not valid JSON: {e}")),
        }
    }
}

fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let hex = |i: usize| b.get(i).and_then(|&c| char::from(c).to_digit(16));
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if let (b'%', Some(h), Some(l)) = (b[i], hex(i + 1), hex(i + 2)) {
            out.push(u8::try_from(h * 16 + l).expect("two hex digits fit a byte"));
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
