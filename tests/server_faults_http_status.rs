//! Server faults, through the C ABI: the HTTP status answers of a rogue server on 127.0.0.1
//! (tests/common/rogue_server.rs) — 5xx, 4xx refusals, unreadable error bodies, 1xx before
//! the final answer, redirects (never followed, the bearer stays home), a kept-alive
//! connection the server closed, and the same mapping for generic requests. Each test
//! asserts the documented `perps_code` and `may_have_reached_venue` (README, "Network error
//! mapping") and that the server read the order at most once. Split from
//! `tests/server_faults.rs` (transport faults) to keep each file to one family of faults.

mod common;
#[path = "server_faults/helpers.rs"]
mod helpers;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{Session, expect, new_order, prepare, request};
use helpers::*;
use perps::ffi::error::perps_code::*;
use rogue_server::{Rogue, Step, json, ms, response};
use std::time::Duration;

#[test]
fn http_5xx_with_and_without_body_may_have_reached() {
    for status in [500u16, 502, 503, 504] {
        for body in ["", r#"{"code":500,"message":"internal"}"#, "<html>gateway</html>"] {
            let text = body.to_owned();
            let f = order_against(move |_, _| json(status, &text), FAST, PERPS_HTTP_STATUS, true, 1);
            assert_eq!(f.http_status, status);
            assert_eq!(f.body.as_deref().unwrap_or(""), body);
            assert!(f.message.contains(&format!("HTTP {status}")), "{f:?}");
        }
    }
}

#[test]
fn http_4xx_refusals_with_and_without_body_not_reached() {
    for status in [400u16, 401, 403, 404, 429] {
        for body in ["", r#"{"code":1,"message":"refused"}"#] {
            let text = body.to_owned();
            let f = order_against(move |_, _| json(status, &text), FAST, PERPS_HTTP_STATUS, false, 1);
            assert_eq!(f.http_status, status);
            assert_eq!(f.body.as_deref().unwrap_or(""), body);
        }
    }
}

#[test]
fn error_status_with_an_unreadable_body_keeps_its_status() {
    // A refusal whose body is not UTF-8, or too large, is still a refusal (HTTP 4xx, not
    // reached); a 5xx stays "may have reached".
    for (status, reached) in [(401u16, false), (403, false), (429, false), (503, true)] {
        let f = order_against(
            move |_, _| {
                vec![Step::Write(response(status, &["Content-Type: text/html"], b"<p>Zugriff verweigert \xe4</p>"))]
            },
            FAST,
            PERPS_HTTP_STATUS,
            reached,
            1,
        );
        assert_eq!(f.http_status, status, "{f:?}");
        let big = "x".repeat(4096);
        let f = order_against(
            move |_, _| json(status, &big),
            r#"{"read_timeout_ms":2000,"max_response_bytes":1024}"#,
            PERPS_HTTP_STATUS,
            reached,
            1,
        );
        assert_eq!(f.http_status, status, "{f:?}");
    }
}

#[test]
fn informational_answer_before_the_final_one() {
    // 103 Early Hints, then the real answer: the 1xx must not be taken for the result.
    let mut both = b"HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n".to_vec();
    both.extend(response(200, &["Content-Type: application/json"], br#"{"code":0,"message":"success"}"#));
    let rogue = Rogue::start(move |_, _| vec![Step::Write(both.clone())]);
    let client = client_at(&rogue.url(), FAST);
    let answer = new_order(&client, &api_session(), ORDER).expect("the 1xx is skipped, the 200 is the answer");
    assert!(answer.contains("success"));
    assert_eq!(rogue.count(NEW_ORDER), 1);
}

#[test]
fn redirects_are_not_followed_and_the_bearer_stays_home() {
    let elsewhere = Rogue::start(|_, _| json(200, r#"{"code":0}"#));
    for status in [301u16, 302, 303, 307, 308] {
        let location = format!("Location: {}/perps/api/new_order", elsewhere.url());
        let rogue = Rogue::start(move |_, _| {
            vec![Step::Write(response(status, &[location.as_str(), "Content-Type: application/json"], b"{}"))]
        });
        let f = order_against_server(&rogue, FAST, PERPS_HTTP_STATUS, false, 1);
        assert_eq!(f.http_status, status);
        assert!(f.message.contains("redirects are never followed"), "{f:?}");
        let order = &rogue.seen()[0];
        assert_eq!(order.header("authorization"), Some(format!("Bearer {API_TOKEN}").as_str()));
        // Sign-in requests are not followed either.
        let client = client_at(&rogue.url(), FAST);
        expect(prepare(&client, &Session::new(), "bsc", BSC_ADDRESS), PERPS_HTTP_STATUS, false);
        // A generic GET with the bearer.
        expect(request(&client, &api_session(), "GET", "/api/query_open_orders", None), PERPS_HTTP_STATUS, false);
    }
    assert_eq!(elsewhere.accepted(), 0, "the redirect target saw no connection at all");
    assert!(elsewhere.seen().is_empty());
}

#[test]
fn a_closed_keep_alive_connection_is_not_a_duplicate() {
    // The server answers, keeps quiet about closing, then closes the idle connection.
    // The next order goes out once, on a new connection.
    let rogue = Rogue::start(|_, _| vec![Step::Write(response(200, &[], br#"{"code":0}"#)), ms(50), Step::Close]);
    let client = client_at(&rogue.url(), FAST);
    let session = api_session();
    for n in 1..=3 {
        new_order(&client, &session, ORDER).expect("the closed pooled connection is detected, not reused");
        assert_eq!(rogue.count(NEW_ORDER), n);
        std::thread::sleep(Duration::from_millis(150));
    }
    assert_eq!(rogue.accepted(), 3);
}

#[test]
fn generic_requests_follow_the_same_mapping() {
    let client_for = |rogue: &Rogue| client_at(&rogue.url(), FAST);
    let rogue = Rogue::start(|_, _| json(503, r#"{"code":503}"#));
    let f = expect(
        request(&client_for(&rogue), &api_session(), "GET", "/api/query_open_orders", None),
        PERPS_HTTP_STATUS,
        true,
    );
    assert_eq!(f.http_status, 503);
    let rogue = Rogue::start(|_, _| vec![Step::Reset]);
    expect(
        request(&client_for(&rogue), &api_session(), "POST", "/api/cancel_order", Some(r#"{"order_id":1}"#)),
        PERPS_TRANSPORT,
        true,
    );
    assert_eq!(rogue.count("/api/cancel_order"), 1, "a cancel is not retried either");
    let rogue = Rogue::start(|_, _| [vec![ms(1000)], json(200, "{}")].concat());
    expect(
        request(&client_for(&rogue), &api_session(), "GET", "/api/query_order?order_id=1", None),
        PERPS_TIMEOUT,
        true,
    );
    assert_eq!(rogue.count("/api/query_order"), 1, "a read is not retried either");
}
