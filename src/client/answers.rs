//! Where the venue's answers become errors: the HTTP status mapping (README, "Network error
//! mapping"), the venue's own reason quoted in the message, and a hint where one helps.
//!
//! This is where venue bodies become errors: each function here takes the secrets in play
//! for the call and redacts the venue's text before quoting it in a message (so the
//! quoted words, `error::venue_words`, are of the redacted text) or keeping it as the error's body. The
//! flows in `signin.rs` and `trading.rs` also pass every error through the same secrets
//! before it leaves the client (`super::guarded`), for anything quoted elsewhere.

use super::transport::Reply;
use crate::error::{Code, Error, Result, venue_words};
use crate::redact::CallSecrets;
use serde_json::Value;

/// A non-2xx answer is `PERPS_HTTP_STATUS` carrying the status and body.
/// `now_ms`: the venue's clock, for a `Retry-After` date ([`refusal`]).
pub(super) fn require_2xx(reply: Reply, what: &str, secrets: &CallSecrets<'_>, now_ms: i64) -> Result<Reply> {
    if (200..300).contains(&reply.status) {
        return Ok(reply);
    }
    let reply = redacted(reply, secrets);
    let error = refusal(&reply, what, now_ms);
    Err(error.with_body(reply.body))
}

/// The answer with the call's secrets cut out of its body.
pub(super) fn redacted(reply: Reply, secrets: &CallSecrets<'_>) -> Reply {
    let body = match secrets.redact(&reply.body) {
        std::borrow::Cow::Owned(body) => body,
        std::borrow::Cow::Borrowed(_) => reply.body,
    };
    Reply { body, ..reply }
}

/// The error for a non-2xx answer (already redacted), without its body (login's answer may
/// hold a token).
///
/// Whether the venue may have acted on the request: not for 3xx/4xx (it refused), possibly
/// for 5xx, and also for 1xx: an informational or protocol-switch answer that is all the
/// venue ever sent means it read the request and did not refuse it. Nor for a 4xx whose own
/// words leave the outcome open ([`leaves_outcome_open`]): HTTP 408 (a time-out: venue-api.md
/// §3.1 lists 408 among the venue's codes, which a gateway may answer once the request went
/// on behind it), or a body whose `code` is a server error or a time-out
/// (`answer::code_leaves_outcome_unknown`) — the same code under HTTP 200 may have reached
/// the venue, and "not reached" would have an engine place the order again.
///
/// `now_ms`: the venue's clock (`Client::venue_now_ms`), against which a `Retry-After`
/// written as a date — the venue's — is read.
pub(super) fn refusal(reply: &Reply, what: &str, now_ms: i64) -> Error {
    let status = reply.status;
    let reason = venue_reason(&reply.body);
    let hint = match status {
        100..=199 => " (an informational or protocol-switch answer: the venue read the request and did not refuse it)",
        300..=399 => " (redirects are never followed)",
        401 => " (token missing, invalid or expired: sign in again)",
        403 if is_timestamp_refusal(&reply.body) => {
            " (the request's timestamp is outside the venue's window: call perps_client_sync_time, then send again)"
        }
        403 => " (signature or permission refused)",
        408 => " (a time-out: the venue may have acted on the request)",
        400..=499 if leaves_outcome_open(reply) => {
            " (its code is a server error or a time-out: the venue may have acted on the request)"
        }
        404 if is_web_server_page(reply) => {
            " (a web server's page, not the venue's answer: the URL or its path prefix may be wrong; \
             check the client's base_url and perps_url)"
        }
        404 => " (not found)",
        429 => " (rate limited)",
        500..=599 => " (a server error: the venue may have acted on the request)",
        _ => "",
    };
    let quoted = reason.map(|r| format!(": \"{r}\"")).unwrap_or_default();
    let error = Error::new(Code::HttpStatus, format!("{what}: the venue answered HTTP {status}{hint}{quoted}"))
        .with_status(status)
        .reached_venue(leaves_outcome_open(reply));
    // 429 and 503 may say how long to wait (seconds or an HTTP date).
    match (status, &reply.retry_after) {
        (429 | 503, Some(value)) => match super::retry_after::millis(value, now_ms) {
            Some(ms) => error.with_retry_after_ms(ms),
            None => error,
        },
        _ => error,
    }
}

/// Whether a non-2xx answer leaves the request's outcome open ([`refusal`]): 1xx and 5xx,
/// HTTP 408, or a body whose `code` is a server error or a time-out — except under 401, 403
/// and 429, which refuse a request before it is acted on (its token, its signature or
/// timestamp, its rate), whatever code their body writes.
pub(super) fn leaves_outcome_open(reply: &Reply) -> bool {
    let status = reply.status;
    !(200..500).contains(&status)
        || status == 408
        || (!matches!(status, 401 | 403 | 429) && body_code_leaves_outcome_unknown(&reply.body))
}

/// Whether a refusal's JSON body names a `code` that leaves its outcome unknown (5xx, 408).
fn body_code_leaves_outcome_unknown(body: &str) -> bool {
    let Ok(Value::Object(answer)) = serde_json::from_str::<Value>(body.trim()) else { return false };
    crate::endpoints::answer::venue_code(answer.get("code"))
        .is_ok_and(|code| code.is_some_and(crate::endpoints::answer::code_leaves_outcome_unknown))
}

/// The venue's reason in an answer (`error::venue_words`): the `message` string of a JSON object (the
/// venue's error shape), else `msg` or `error`, else the first line of a text answer.
pub(crate) fn venue_reason(body: &str) -> Option<String> {
    let body = body.trim();
    if body.is_empty() {
        return None;
    }
    if let Ok(Value::Object(answer)) = serde_json::from_str::<Value>(body) {
        return crate::endpoints::answer::REASON_KEYS
            .iter()
            .find_map(|name| answer.get(*name).and_then(Value::as_str).filter(|m| !m.trim().is_empty()))
            .map(|m| venue_words(m.trim()));
    }
    if body.starts_with(['{', '[']) {
        return None; // JSON of another shape: nothing to quote
    }
    body.lines().next().map(|line| venue_words(line.trim()))
}

/// Whether an answer is a web server's or a proxy's page rather than the venue's answer
/// (JSON, plain text or empty), as for a wrong URL or path prefix: an HTML page
/// (`Content-Type: text/html`, or a body that starts with '<'), the bare text Go's
/// net/http answers for a path it has no route for ("404 page not found"), or words that
/// say no route matched the request ([`says_no_route`]).
pub(super) fn is_web_server_page(reply: &Reply) -> bool {
    let media_type = |value: &str| value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    reply.content_type.as_deref().is_some_and(|value| media_type(value) == "text/html")
        || reply.body.trim_start().starts_with('<')
        || reply.body.trim().eq_ignore_ascii_case("404 page not found")
        || venue_reason(&reply.body).is_some_and(|reason| says_no_route(&reason))
}

/// Whether the reason of an answer (its `message`, `msg` or `error`, or its first line:
/// [`venue_reason`], never text it merely echoes) is a gateway's or web framework's that found
/// no route for the request — Kong's `{"message":"no Route matched with those values"}`,
/// Envoy's `route_not_found`, Fastify's "Route POST:/api/x not found", Express's "Cannot POST
/// /api/x", an ingress's "default backend - 404", a server's "no endpoint /api/x" — rather
/// than the venue's word on an order: such a 404, during a deployment or with a wrong path
/// prefix, says nothing about the order, and taking it for "order not found" would have an
/// engine forget a live order (or place it again).
fn says_no_route(reason: &str) -> bool {
    const NO_ROUTE: [&str; 8] = [
        "no route",
        "route not found",
        "route_not_found",
        "no endpoint",
        "endpoint not found",
        "no handler",
        "no such path",
        "default backend",
    ];
    let reason = reason.to_ascii_lowercase();
    let cannot =
        ["get", "post", "put", "delete"].iter().any(|method| reason.starts_with(&format!("cannot {method} /")));
    NO_ROUTE.iter().any(|words| reason.contains(words))
        || (reason.starts_with("route ") && reason.contains("not found"))
        || cannot
}

/// The venue's refusal of a stale `x-request-timestamp` (HTTP 403 "signature has expired").
fn is_timestamp_refusal(body: &str) -> bool {
    let body = body.to_ascii_lowercase();
    body.contains("expired") && (body.contains("signature") || body.contains("timestamp"))
}

/// Parse the venue's JSON answer as an object, or `PERPS_BAD_RESPONSE` with the (redacted)
/// body.
pub(super) fn json_object(
    reply: &Reply,
    what: &str,
    secrets: &CallSecrets<'_>,
) -> Result<serde_json::Map<String, Value>> {
    serde_json::from_str(&reply.body).map_err(|_| {
        Error::bad_response(format!("{what}: the venue's answer is not a JSON object"))
            .with_status(reply.status)
            .with_body(secrets.redact(&reply.body).into_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: u16, body: &str) -> Reply {
        Reply { status, body: body.to_owned(), retry_after: None, content_type: None }
    }

    #[test]
    fn an_html_404_is_a_page_not_the_venues_answer() {
        let html = |content_type: Option<&str>, body: &str| Reply {
            content_type: content_type.map(str::to_owned),
            ..reply(404, body)
        };
        for page in [
            html(None, "<html>404 page not found</html>"),
            html(None, " \r\n\t<!DOCTYPE html><title>x</title>"),
            html(Some("text/html; charset=utf-8"), "404 page not found"),
            html(Some(" Text/HTML"), ""),
            html(Some("text/plain; charset=utf-8"), "404 page not found\n"),
            html(Some("application/json"), r#"{"message":"no Route matched with those values"}"#),
            html(None, "route_not_found"),
            html(None, r#"{"code":404,"message":"no endpoint /api/cancel_order"}"#),
            html(None, r#"{"message":"Route POST:/api/cancel_order not found","error":"Not Found"}"#),
            html(None, "Cannot POST /api/cancel_order"),
            html(None, "default backend - 404"),
        ] {
            assert!(is_web_server_page(&page), "{page:?}");
            let e = refusal(&page, "/api/query_order", 0);
            assert!(
                e.message()
                    .contains("the URL or its path prefix may be wrong; check the client's base_url and perps_url"),
                "{}",
                e.message()
            );
        }
        for venue in [
            html(None, r#"{"code":404,"message":"order not found"}"#),
            html(Some("application/json"), r#"{"message":"order not found"}"#),
            html(Some("text/plain"), "order not found"),
            html(None, ""),
            html(Some("text/htmlx"), "not found"),
            // Echoed text is not the reason: a cl_ord_id may spell anything.
            html(None, r#"{"message":"order not found","cl_ord_id":"x-route_not_found"}"#),
            html(None, r#"{"code":404,"message":"no such order"}"#),
        ] {
            assert!(!is_web_server_page(&venue), "{venue:?}");
            assert!(refusal(&venue, "x", 0).message().contains("HTTP 404 (not found)"));
        }
    }

    #[test]
    fn the_first_non_empty_reason_is_quoted() {
        // An empty `message` hides no `msg`.
        assert_eq!(venue_reason(r#"{"message":"","msg":"busy"}"#).as_deref(), Some("busy"));
    }

    #[test]
    fn the_venue_reason_is_quoted_with_a_hint() {
        let e = refusal(&reply(403, r#"{"code":403,"message":"signature has expired"}"#), "/api/new_order", 0);
        assert!(e.message().contains("perps_client_sync_time"), "{}", e.message());
        assert!(e.message().ends_with(": \"signature has expired\""), "{}", e.message());
        let e = refusal(&reply(403, r#"{"code":403,"message":"Invalid signature"}"#), "x", 0);
        assert!(!e.message().contains("sync_time") && e.message().contains("Invalid signature"));
        let e = refusal(&reply(502, "<html>Bad Gateway</html>\nmore"), "x", 0);
        assert!(e.message().ends_with(": \"<html>Bad Gateway</html>\"") && e.may_have_reached_venue());
        assert_eq!(refusal(&reply(400, ""), "x", 0).message(), "x: the venue answered HTTP 400");
        assert_eq!(refusal(&reply(400, "[1,2]"), "x", 0).message(), "x: the venue answered HTTP 400");
        assert!(refusal(&reply(101, ""), "x", 0).may_have_reached_venue());
        assert!(!refusal(&reply(404, ""), "x", 0).may_have_reached_venue());
        // A time-out, or a body naming a server error or a time-out: the outcome is open.
        assert!(refusal(&reply(408, ""), "x", 0).may_have_reached_venue());
        for body in [r#"{"code":503,"message":"busy"}"#, r#"{"code":"408"}"#, r#"{"code":500}"#] {
            assert!(refusal(&reply(400, body), "x", 0).may_have_reached_venue(), "{body}");
        }
        for body in [r#"{"code":400}"#, r#"{"code":5e2}"#, "500", r#"[{"code":500}]"#] {
            assert!(!refusal(&reply(400, body), "x", 0).may_have_reached_venue(), "{body}");
        }
        // 401, 403 and 429 refuse before anything is acted on, whatever code the body writes.
        for status in [401, 403, 429] {
            assert!(!refusal(&reply(status, r#"{"code":500}"#), "x", 0).may_have_reached_venue(), "{status}");
        }
        // The venue's whole reason up to 200 characters, escaped; beyond, cut and marked.
        let long = format!(r#"{{"message":"{}\n\u202e"}}"#, "é".repeat(60));
        assert!(
            refusal(&reply(400, &long), "x", 0).message().ends_with(&format!("\"{}\\n\\u{{202e}}\"", "é".repeat(60)))
        );
        let longer = format!(r#"{{"message":"{}"}}"#, "é".repeat(300));
        assert!(refusal(&reply(400, &longer), "x", 0).message().ends_with(&format!("\"{}…\"", "é".repeat(200))));
    }
}
