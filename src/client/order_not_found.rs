//! Whether a 404 is the venue's "order not found" (venue-api.md §1.3, §3.1: HTTP 404 "order
//! not found" for an order gone, or not visible yet), which the endpoint calls report as
//! `PERPS_NOT_FOUND`. An engine takes that for "gone" and stops managing the order, so it is
//! given on positive evidence only: the venue's own words, read where the venue writes them,
//! say an order is missing.
//!
//! What counts is the answer's reason — the string under `message`, `msg`, `error` or
//! `detail`, or the first line of a text answer — never text it merely carries along: a
//! framework's 404 echoes the request's path (`/api/cancel_order`, `/api/query_order`, both
//! with "order" in them) in a `path` field, a link, or its words ("Endpoint POST
//! /api/cancel_order not found"). Paths are cut out of the reason, and "order" must stand as a
//! word of its own (`cancel_order` is not one). So an empty 404 (Envoy, Caddy), a bare "Not
//! Found" (AWS API Gateway, FastAPI, Spring, Micronaut — with a JSON `code` 404 or without),
//! or a gateway's "no route" words, during a deployment or behind a wrong path prefix, say
//! nothing about the order, which may be live: `PERPS_HTTP_STATUS`.

use super::answers::{is_web_server_page, leaves_outcome_open};
use super::transport::Reply;
use serde_json::Value;

/// Where a JSON answer's reason may be.
const REASON_KEYS: [&str; 4] = ["message", "msg", "error", "detail"];
/// Words that name an order (an identifier of one counts: "cl_ord_id not found").
const ORDER_WORDS: [&str; 5] = ["order", "orders", "cl_ord_id", "order_id", "order_not_found"];
/// Words that say something is missing.
const MISSING: [&str; 7] = ["not found", "not_found", "not exist", "doesn't exist", "no such", "unknown", "notfound"];

/// See the module's docs.
pub(super) fn says_order_not_found(reply: &Reply) -> bool {
    if reply.status != 404 || is_web_server_page(reply) || leaves_outcome_open(reply) {
        return false;
    }
    let body = reply.body.trim();
    match serde_json::from_str::<Value>(body) {
        Ok(Value::Object(answer)) => {
            let reasons: Vec<&str> =
                REASON_KEYS.iter().filter_map(|key| answer.get(*key).and_then(Value::as_str)).collect();
            let coded_404 = crate::endpoints::answer::venue_code(answer.get("code")) == Ok(Some(404));
            // The venue's JSON 404 with no words at all: its code says it.
            (coded_404 && reasons.iter().all(|reason| reason.trim().is_empty()))
                || reasons.iter().any(|reason| names_a_missing_order(reason))
        }
        Ok(_) => false,
        Err(_) => body.lines().next().is_some_and(names_a_missing_order),
    }
}

/// Whether a reason names an order, as a word of its own outside any path, and says it is
/// missing.
fn names_a_missing_order(reason: &str) -> bool {
    let reason = without_paths(&reason.to_ascii_lowercase());
    let words = reason.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
    let mut named = false;
    for word in words {
        named |= ORDER_WORDS.contains(&word);
    }
    named && MISSING.iter().any(|missing| reason.contains(missing))
}

/// The text with every path-like token (from a '/' to the next white space or quote) cut out.
fn without_paths(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_path = false;
    for c in text.chars() {
        if c == '/' {
            in_path = true;
        } else if in_path && (c.is_whitespace() || c == '"' || c == '\'') {
            in_path = false;
        }
        if !in_path {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(body: &str) -> Reply {
        Reply { status: 404, body: body.to_owned(), retry_after: None, content_type: None }
    }

    #[test]
    fn only_the_venues_word_on_an_order_is_order_not_found() {
        for venue in [
            r#"{"code":404,"message":"order not found"}"#,
            r#"{"code":404}"#,
            r#"{"code":"404","message":""}"#,
            "order not found",
            "Order not found\nmore",
            r#"{"detail":"Order not found"}"#,
            r#"{"message":"unknown order"}"#,
            r#"{"msg":"order does not exist"}"#,
            r#"{"error":"order_not_found"}"#,
            r#"{"message":"cl_ord_id not found"}"#,
            r#"{"message":"no such order: 123"}"#,
        ] {
            assert!(says_order_not_found(&reply(venue)), "{venue}");
        }
        for other in [
            "",
            r#"{"message":"Not Found"}"#,
            r#"{"code":404,"message":"Not Found"}"#,
            r#"{"detail":"Not Found"}"#,
            r#"{"timestamp":"2026-11-29T12:00:00Z","status":404,"error":"Not Found","path":"/api/cancel_order"}"#,
            r#"{"message":"Not Found","_links":{"self":{"href":"/api/cancel_order"}}}"#,
            "Endpoint POST /api/cancel_order not found",
            "Path /api/query_order not found",
            "Not Found: /api/cancel_order",
            "Unknown route: POST /api/cancel_order",
            "Not Found\n/api/cancel_order",
            r#"{"detail":"Route /api/cancel_order not found"}"#,
            r#"{"message":"handler cancel_order not found"}"#,
            r#"{"message":"no Route matched with those values"}"#,
            "<html>order not found</html>",
            r#"{"code":500,"message":"order not found"}"#,
            r#"{"message":"order not found","code":503}"#,
            "[\"order not found\"]",
        ] {
            assert!(!says_order_not_found(&reply(other)), "{other}");
        }
        assert!(!says_order_not_found(&Reply { status: 400, ..reply("order not found") }));
    }
}
