//! Trading requests: the order, any other venue endpoint, and the server-time sync.
//! Every request is sent exactly once: nothing here retries.

use super::{Client, answers, guarded, json_object, require_2xx};
use crate::body_sign::BodySignature;
use crate::error::{Code, Error, Result};
use crate::order;
use crate::redact::CallSecrets;
use crate::session::{RequestOptions, Session};
use ureq::http::Method;

impl Client {
    /// Validate, serialise once, sign those bytes, POST `/api/new_order`. Never retried.
    pub fn new_order(&self, session: &Session, order_json: &str) -> Result<String> {
        guarded(session, None, |secrets| self.send_order(session, order_json, secrets))
    }

    fn send_order(&self, session: &Session, order_json: &str, secrets: &CallSecrets<'_>) -> Result<String> {
        let token = session.usable_token(self.venue_now_ms().div_euclid(1000))?;
        let body = order::validate(order_json)?;
        let body = Some(body.as_str().as_bytes());
        let reply = self.signed_request(session, &token, Method::POST, "/api/new_order", body, secrets)?;
        venue_result(reply, "new_order", secrets)
    }

    /// Any other venue endpoint under `perps_url`: bearer always; body signature whenever
    /// there is a body (sent byte for byte as given). Never retried.
    pub fn request(&self, session: &Session, method: &str, path: &str, body: Option<&str>) -> Result<String> {
        guarded(session, None, |secrets| self.send_request(session, method, path, body, secrets))
    }

    fn send_request(
        &self,
        session: &Session,
        method: &str,
        path: &str,
        body: Option<&str>,
        secrets: &CallSecrets<'_>,
    ) -> Result<String> {
        let method = parse_method(method)?;
        // Visible ASCII only: anything else is not a valid request target, and would be
        // refused by the venue only after the request was sent.
        if !path.starts_with('/') || !path.bytes().all(|b| b.is_ascii_graphic()) || path.contains('#') {
            return Err(Error::invalid_argument(format!(
                "path \"{}\" must start with '/' and contain no spaces, control or non-ASCII characters \
                 (percent-encode them) or '#' (e.g. \"/api/query_open_orders\")",
                crate::error::excerpt(path)
            )));
        }
        let token = session.usable_token(self.venue_now_ms().div_euclid(1000))?;
        let body = body.filter(|b| !b.is_empty()).map(str::as_bytes);
        let reply = self.signed_request(session, &token, method, path, body, secrets)?;
        venue_result(reply, path, secrets)
    }

    fn signed_request(
        &self,
        session: &Session,
        token: &str,
        method: Method,
        path: &str,
        body: Option<&[u8]>,
        secrets: &CallSecrets<'_>,
    ) -> Result<super::Reply> {
        let options: RequestOptions = session.request_options();
        let bearer = zeroize::Zeroizing::new(format!("Bearer {token}"));
        let signature: Option<BodySignature> = match body {
            Some(bytes) => Some(session.sign_body_now(bytes, self.venue_now_ms())?),
            None => None,
        };
        let mut headers: Vec<(&str, &str)> = Vec::with_capacity(9);
        headers.push(("authorization", bearer.as_str()));
        if let Some(sig) = &signature {
            headers.push(("content-type", "application/json"));
            headers.extend(sig.headers());
        }
        if let Some(id) = &options.session_id {
            headers.push(("x-session-id", id));
        }
        if let Some(vault) = &options.impersonate {
            headers.push(("x-impersonate", vault));
        }
        let url = format!("{}{path}", self.perps_url);
        let reply = self.send(method, &url, &headers, body)?;
        require_2xx(reply, path, secrets)
    }

    /// Read the venue's clock (`GET /api/kline/time`, Unix seconds) and keep the offset
    /// applied to every later `x-request-timestamp`. Returns the offset in milliseconds.
    pub fn sync_time(&self) -> Result<i64> {
        let started = crate::body_sign::now_ms();
        let reply = self.send(Method::GET, &format!("{}/api/kline/time", self.perps_url), &[], None)?;
        let finished = crate::body_sign::now_ms();
        let reply = require_2xx(reply, "kline/time", &CallSecrets::none())?;
        let seconds: i64 = reply.body.trim().parse().map_err(|_| {
            Error::bad_response("kline/time: the answer is not an integer number of seconds")
                .with_status(reply.status)
                .with_body(reply.body.clone())
        })?;
        // Before 1970 or after 9999 is not a clock (and would overflow the arithmetic).
        if !(0..=253_402_300_799).contains(&seconds) {
            return Err(Error::bad_response("kline/time: the venue's time is out of range")
                .with_status(reply.status)
                .with_body(reply.body));
        }
        // The venue's second was read somewhere during the round trip; its middle is the
        // best estimate, and +500 ms centres the truncated second.
        let offset = seconds * 1000 + 500 - (started + finished) / 2;
        self.clock_offset_ms.store(offset, std::sync::atomic::Ordering::Relaxed);
        Ok(offset)
    }
}

/// A 2xx answer from a trading endpoint: JSON whose `code`, when present, must be 0.
fn venue_result(reply: super::Reply, what: &str, secrets: &CallSecrets<'_>) -> Result<String> {
    let answer = json_object(&reply, what, secrets).map_err(|e| e.reached_venue(true))?;
    match answer.get("code") {
        None => Ok(reply.body),
        Some(code) if code.as_i64() == Some(0) => Ok(reply.body),
        // Not an integer ("0", null, 0.5…): the answer has the wrong shape and the order's
        // fate is unknown, so it is not reported as a refusal.
        Some(code) if code.as_i64().is_none() => Err(Error::bad_response(format!(
            "{what}: the venue's \"code\" is not an integer ({})",
            crate::error::excerpt(&secrets.redact(&code.to_string()))
        ))
        .with_status(reply.status)
        .reached_venue(true)
        .with_body(answers::redacted(reply, secrets).body)),
        Some(code) => {
            let message = answer.get("message").and_then(|m| m.as_str()).unwrap_or("");
            let message = crate::error::excerpt(&secrets.redact(message));
            Err(Error::new(Code::ApiError, format!("{what}: the venue refused with code {code}: {message}"))
                .with_status(reply.status)
                .with_body(answers::redacted(reply, secrets).body))
        }
    }
}

fn parse_method(method: &str) -> Result<Method> {
    match method {
        "GET" => Ok(Method::GET),
        "POST" => Ok(Method::POST),
        "PUT" => Ok(Method::PUT),
        "DELETE" => Ok(Method::DELETE),
        other => Err(Error::invalid_argument(format!(
            "method \"{}\" is not one of GET, POST, PUT, DELETE",
            crate::error::excerpt(other)
        ))),
    }
}
