//! The request log, for users rehearsing: what reached the venue and what it made of it.
//!
//! The last `KEEP` requests (admin requests excluded) are kept with method, path, raw query,
//! headers, body, status and verdict; `GET /_sandbox/requests?last=N` and
//! `Sandbox::requests(n)` read them; `--log` also prints one line per request on stderr.
//! Secrets are masked before anything is kept: the bearer token (`Authorization`), the body
//! signature, cookies and any header or JSON field that carries a token or a private key.

use std::collections::VecDeque;

use serde_json::{Map, Value, json};

use crate::clock::iso8601_utc_ms;

/// Requests kept.
const KEEP: usize = 1000;
/// Body bytes kept per request; a longer body is cut and marked.
const BODY_KEPT: usize = 4096;
const MASK: &str = "<masked>";

/// Headers whose whole value is a secret.
const SECRET_HEADERS: &[&str] = &["x-request-signature", "cookie", "set-cookie", "proxy-authorization"];
/// JSON body fields whose value is a secret (admin answers never enter the log; these are
/// for clients that send credentials where they should not).
const SECRET_FIELDS: &[&str] = &["token", "private_key", "privateKey", "secret", "api_secret"];

/// One request as received, before the verdict.
pub(crate) struct Entry {
    pub at_ms: i64,
    pub method: String,
    pub path: String,
    pub query: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// What the venue noticed about a request beyond its answer.
#[derive(Default, Debug, Clone, Copy)]
pub(crate) struct Notes {
    /// The same signed request (same signature) was seen before within the window.
    pub identical_signed: bool,
    /// The `x-request-id` was seen before within the window.
    pub repeated_request_id: bool,
}

#[derive(Default)]
pub(crate) struct RequestLog {
    next_seq: u64,
    kept: VecDeque<Value>,
}

impl RequestLog {
    /// Records a finished request; returns the stderr line for `--log`.
    pub(crate) fn record(&mut self, e: &Entry, status: u16, verdict: &str, notes: Notes) -> String {
        self.next_seq += 1;
        let headers: Map<String, Value> =
            e.headers.iter().map(|(k, v)| (k.clone(), json!(mask_header(k, v)))).collect();
        let line = format!(
            "perps-sandbox: {} {} {}{} {status} {verdict}{}{}",
            iso8601_utc_ms(e.at_ms),
            e.method,
            e.path,
            if e.query.is_empty() { String::new() } else { format!("?{}", e.query) },
            if notes.identical_signed { " [identical signed request]" } else { "" },
            if notes.repeated_request_id && !notes.identical_signed { " [repeated x-request-id]" } else { "" },
        );
        let entry = json!({
            "seq": self.next_seq,
            "time": iso8601_utc_ms(e.at_ms),
            "method": e.method,
            "path": e.path,
            "query": e.query,
            "headers": headers,
            "body": mask_body(&e.body),
            "status": status,
            "verdict": verdict,
            "identical_signed_request": notes.identical_signed,
            "repeated_request_id": notes.repeated_request_id,
        });
        if self.kept.len() == KEEP {
            self.kept.pop_front();
        }
        self.kept.push_back(entry);
        line
    }

    /// The last `n` requests, oldest first.
    pub(crate) fn last(&self, n: usize) -> Vec<Value> {
        self.kept.iter().skip(self.kept.len().saturating_sub(n)).cloned().collect()
    }
}

fn mask_header(name: &str, value: &str) -> String {
    if name == "authorization" {
        // Keep the scheme, so a rehearsal shows whether "Bearer" was sent.
        return match value.split_once(' ') {
            Some((scheme, _)) => format!("{scheme} {MASK}"),
            None => MASK.into(),
        };
    }
    if SECRET_HEADERS.contains(&name) { MASK.into() } else { value.to_owned() }
}

/// The body as text (bytes that are not UTF-8 replaced), JSON secret fields masked,
/// cut to `BODY_KEPT` bytes.
fn mask_body(body: &[u8]) -> String {
    let text = match serde_json::from_slice::<Value>(body) {
        Ok(mut v) if has_secret(&v) => {
            mask_fields(&mut v);
            v.to_string()
        }
        _ => String::from_utf8_lossy(body).into_owned(),
    };
    if text.len() <= BODY_KEPT {
        return text;
    }
    let mut cut = BODY_KEPT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes)", &text[..cut], body.len())
}

fn has_secret(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, v)| SECRET_FIELDS.contains(&k.as_str()) || has_secret(v)),
        Value::Array(a) => a.iter().any(has_secret),
        _ => false,
    }
}

fn mask_fields(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                if SECRET_FIELDS.contains(&k.as_str()) {
                    *v = json!(MASK);
                } else {
                    mask_fields(v);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(mask_fields),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_and_the_log_is_bounded() {
        let mut log = RequestLog::default();
        let entry = Entry {
            at_ms: 0,
            method: "POST".into(),
            path: "/api/new_order".into(),
            query: String::new(),
            headers: vec![
                ("authorization".into(), "Bearer eyJ.secret.token".into()),
                ("x-request-signature".into(), "c2lnbmF0dXJl".into()),
                ("x-request-id".into(), "abc".into()),
            ],
            body: br#"{"symbol":"BTC-USD","nested":{"token":"leak"}}"#.to_vec(),
        };
        let line = log.record(&entry, 200, "accepted", Notes { identical_signed: true, repeated_request_id: true });
        assert!(line.contains("POST /api/new_order 200 accepted [identical signed request]"), "{line}");
        let kept = &log.last(5)[0];
        let text = kept.to_string();
        assert!(!text.contains("secret.token") && !text.contains("c2lnbmF0dXJl") && !text.contains("leak"), "{text}");
        assert_eq!(kept["headers"]["authorization"], "Bearer <masked>");
        assert_eq!(kept["headers"]["x-request-id"], "abc");
        for _ in 0..KEEP + 5 {
            log.record(&entry, 200, "ok", Notes::default());
        }
        assert_eq!(log.last(usize::MAX).len(), KEEP);
        assert_eq!(log.last(2).len(), 2);
        assert_eq!(log.last(1)[0]["seq"], json!(KEEP as u64 + 6));
    }
}
