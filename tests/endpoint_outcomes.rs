//! What the endpoint calls give back, through the C ABI against purpose-built servers on
//! 127.0.0.1 (tests/common/rogue_server.rs): venue refusals mapped to their codes with the
//! ids the request carried (x-request-id, cl_ord_id, Retry-After), time-outs that are never
//! retried, the cl_ord_id on every answer of `new_order`, and a `code` read the same way on
//! every path. Split from `tests/endpoint_calls.rs` (the requests each call sends and the
//! answer shapes) to keep one concern per file.

mod common;
#[path = "endpoint_calls/helpers.rs"]
mod helpers;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{Client, Failure, Session, call, expect, new_order, request};
use helpers::*;
use perps::ffi::error::perps_code::{self, *};
use rogue_server::{Rogue, Step, json, ms, response};
use serde_json::Value;

#[test]
fn venue_refusals_map_to_their_codes_with_the_ids_sent() {
    let cases: Vec<(u16, &[&str], &str, perps_code, bool)> = vec![
        (404, &[], r#"{"code":404,"message":"order not found"}"#, PERPS_NOT_FOUND, false),
        (404, &["Content-Type: text/plain"], "order not found", PERPS_NOT_FOUND, false),
        (404, &[], r#"{"detail":"Order not found"}"#, PERPS_NOT_FOUND, false),
        (404, &[], r#"{"code":"404"}"#, PERPS_NOT_FOUND, false),
        // A web server's page (a wrong URL or path prefix, a proxy): not the venue's "order
        // not found", which would make an engine resend a live order.
        (404, &[], "\n <html>404 page not found</html>", PERPS_HTTP_STATUS, false),
        (404, &["Content-Type: text/html; charset=utf-8"], "404 page not found", PERPS_HTTP_STATUS, false),
        // A gateway's or a framework's word that no route matched (Kong, Envoy, a server's
        // "no endpoint"): not the venue's word on the order either.
        (404, &[], r#"{"message":"no Route matched with those values"}"#, PERPS_HTTP_STATUS, false),
        (404, &["Content-Type: text/plain"], "route_not_found", PERPS_HTTP_STATUS, false),
        (404, &[], r#"{"code":404,"message":"no endpoint /api/cancel_order"}"#, PERPS_HTTP_STATUS, false),
        // A time-out, or a refusal whose code is a server error: the outcome is open.
        (408, &[], r#"{"code":408,"message":"request timeout"}"#, PERPS_HTTP_STATUS, true),
        (400, &[], r#"{"code":503,"message":"upstream busy"}"#, PERPS_HTTP_STATUS, true),
        // A 404 whose body says the outcome is open is no "order not found".
        (404, &[], r#"{"code":500,"message":"internal"}"#, PERPS_HTTP_STATUS, true),
        (404, &[], r#"{"code":"503"}"#, PERPS_HTTP_STATUS, true),
        (403, &[], r#"{"code":408,"message":"signature has expired"}"#, PERPS_HTTP_STATUS, false),
        (429, &["Retry-After: 2"], r#"{"code":429,"message":"rate limit"}"#, PERPS_HTTP_STATUS, false),
        (400, &[], r#"{"code":400,"message":"bad"}"#, PERPS_HTTP_STATUS, false),
        (401, &[], "", PERPS_HTTP_STATUS, false),
        (502, &[], "<html>bad gateway</html>", PERPS_HTTP_STATUS, true),
        (503, &["Retry-After: 1"], "", PERPS_HTTP_STATUS, true),
        (200, &[], r#"{"code":10001,"message":"position not found"}"#, PERPS_API_ERROR, false),
        // The venue's 404 written as a code under HTTP 200 (a 200 can carry a code, §3.1).
        (200, &[], r#"{"code":404,"message":"order not found"}"#, PERPS_NOT_FOUND, false),
        (200, &[], r#"{"code":"404","message":"order not found"}"#, PERPS_NOT_FOUND, false),
        // A code as a string of digits is read as the number it spells.
        (200, &[], r#"{"code":"10001","message":"position not found"}"#, PERPS_API_ERROR, false),
        (200, &[], r#"{"code":0.5}"#, PERPS_BAD_RESPONSE, true),
        (200, &[], r#"{"code":"ok"}"#, PERPS_BAD_RESPONSE, true),
        (200, &[], "not json", PERPS_BAD_RESPONSE, true),
        (200, &[], "42", PERPS_BAD_RESPONSE, true),
    ];
    for (status, headers, body, code, reached) in cases {
        for (name, params) in [("cancel_order", r#"{"order_id":1}"#), ("query_order", r#"{"order_id":1}"#)] {
            let (h, text): (Vec<String>, String) = (headers.iter().map(|s| s.to_string()).collect(), body.to_owned());
            let rogue = Rogue::start(move |_, _| {
                let refs: Vec<&str> = h.iter().map(String::as_str).collect();
                vec![Step::Write(response(status, &refs, text.as_bytes()))]
            });
            let client = client_at(&rogue.url(), FAST);
            let f = expect(call(&client, Some(&api_session(SEED)), name, Some(params)), code, reached);
            let seen = rogue.seen();
            assert_eq!(seen.len(), 1, "{name} {status}: never retried");
            assert_eq!(f.http_status, status, "{name}: {f:?}");
            assert_eq!(f.body.as_deref().unwrap_or(""), body, "{name}: the venue's body is kept");
            assert!(f.message.contains(name), "{name}: {f:?}");
            // The x-request-id sent: only a body-signed request has one.
            assert_eq!(f.request_id.as_deref(), seen[0].header("x-request-id"), "{name} {status}");
            assert_eq!(f.request_id.is_some(), name == "cancel_order");
            assert_eq!(f.cl_ord_id, None, "only a failed new_order names a cl_ord_id");
            let retry = headers
                .iter()
                .find_map(|h| h.strip_prefix("Retry-After: "))
                .map_or(-1, |seconds| seconds.parse::<i64>().unwrap() * 1000);
            assert_eq!(f.retry_after_ms, retry, "{name} {status}");
            if code == PERPS_API_ERROR {
                assert!(f.message.contains("code 10001") && f.message.contains("position not found"), "{f:?}");
            }
            if status == 404 && code == PERPS_HTTP_STATUS && !reached {
                assert!(f.message.contains("the URL or its path prefix may be wrong"), "{f:?}");
            }
        }
    }
    // A 404 that says nothing of an order — an empty body (Envoy, Caddy), a framework's bare
    // "Not Found" (AWS API Gateway, FastAPI, Spring, with a code 404 or not), one that only
    // echoes the request's path (`/api/cancel_order`) — is no "order not found": the order may
    // be live behind a gateway in a deployment.
    // (More shapes in `order_not_found`'s unit test.)
    for body in [
        "",
        r#"{"code":404,"message":"Not Found"}"#,
        r#"{"status":404,"error":"Not Found","path":"/api/cancel_order"}"#,
        "Endpoint POST /api/cancel_order not found",
    ] {
        for (name, params) in [("cancel_order", r#"{"order_id":1}"#), ("query_order", r#"{"order_id":1}"#)] {
            let text = body.to_owned();
            let rogue = Rogue::start(move |_, _| vec![Step::Write(response(404, &[], text.as_bytes()))]);
            let client = client_at(&rogue.url(), FAST);
            let f = expect(call(&client, Some(&api_session(SEED)), name, Some(params)), PERPS_HTTP_STATUS, false);
            assert_eq!((f.http_status, f.body.as_deref().unwrap_or("")), (404, body), "{name}");
        }
    }
    // Retry-After as an HTTP date, ten seconds ahead of now.
    let date = httpdate_in(10);
    let rogue = Rogue::start(move |_, _| vec![Step::Write(response(429, &[&format!("Retry-After: {date}")], b"{}"))]);
    let client = client_at(&rogue.url(), FAST);
    let f = expect(call(&client, Some(&api_session(SEED)), "query_balance", None), PERPS_HTTP_STATUS, false);
    assert!((8_000..=10_000).contains(&f.retry_after_ms), "{f:?}");
}

/// An IMF-fixdate `seconds` from now (written here, not by the library).
fn httpdate_in(seconds: i64) -> String {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64 + seconds;
    let (days, rem) = (t.div_euclid(86_400), t.rem_euclid(86_400));
    let (year, month, day) = common::civil_from_days(days);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    format!(
        "{weekday}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        months[month as usize - 1],
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[test]
fn timeouts_carry_the_ids_and_are_never_retried() {
    let rogue = Rogue::start(|_, _| vec![ms(1500)]);
    let client =
        client_at(&rogue.url(), r#"{"read_timeout_ms":200,"total_timeout_ms":400,"cl_ord_id_prefix":"mm-7_"}"#);
    let session = api_session(SEED);
    // An order without cl_ord_id: the generated one, as sent, is on the error.
    let f = expect(new_order(&client, &session, ORDER), PERPS_TIMEOUT, true);
    let seen = rogue.seen();
    assert_eq!(seen.len(), 1);
    let sent = seen[0].json();
    let id = sent["cl_ord_id"].as_str().unwrap();
    assert_eq!(f.cl_ord_id.as_deref(), Some(id));
    assert!(id.starts_with("mm-7_") && id.len() == 5 + 26, "{id}");
    assert_eq!(f.request_id.as_deref(), seen[0].header("x-request-id"));
    assert_signed(&seen[0], SEED);
    // The caller's own cl_ord_id is kept.
    let mine = ORDER.replace('}', r#","cl_ord_id":"mine-1"}"#);
    let f = expect(new_order(&client, &session, &mine), PERPS_TIMEOUT, true);
    assert_eq!(f.cl_ord_id.as_deref(), Some("mine-1"));
    // Endpoint calls time out the same way; a GET has no x-request-id.
    let f = expect(
        call(&client, Some(&session), "cancel_orders", Some(r#"{"cl_ord_id_list":["mine-1"]}"#)),
        PERPS_TIMEOUT,
        true,
    );
    assert_eq!(f.request_id.as_deref(), rogue.seen()[2].header("x-request-id"));
    let f =
        expect(call(&client, Some(&session), "query_order", Some(r#"{"cl_ord_id":"mine-1"}"#)), PERPS_TIMEOUT, true);
    assert_eq!(f.request_id, None);
    assert_eq!(rogue.seen().len(), 4, "each call sent once");
    // Nothing sent: no x-request-id, but the order's cl_ord_id is still there to look for.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let closed = client_at(&format!("http://127.0.0.1:{port}"), FAST);
    let f = expect(new_order(&closed, &session, ORDER), PERPS_TRANSPORT, false);
    assert_eq!(f.request_id, None);
    assert_eq!(f.cl_ord_id.as_ref().map(String::len), Some(26));
}

#[test]
fn answers_of_new_order_carry_the_cl_ord_id() {
    let rogue = Rogue::start(|_, _| json(200, r#"{"code":0,"message":"success","request_id":"v-1"}"#));
    let client = client_at(&rogue.url(), FAST);
    let session = api_session(SEED);
    let mut ids = std::collections::HashSet::new();
    for i in 0..50 {
        let answer: Value = serde_json::from_str(&new_order(&client, &session, ORDER).unwrap()).unwrap();
        let sent = rogue.seen()[i].json();
        assert_eq!(answer["cl_ord_id"], sent["cl_ord_id"]);
        assert_eq!(answer["request_id"], "v-1");
        assert!(ids.insert(answer["cl_ord_id"].as_str().unwrap().to_owned()));
    }
}

#[test]
fn perps_request_placing_an_order_fails_with_the_cl_ord_id_its_body_names() {
    // As `perps_new_order`: the caller can look the order up before resending it. The body
    // goes out byte for byte, and no cl_ord_id is made up for a body without one.
    let session = api_session(SEED);
    let mine = ORDER.replace('}', r#","cl_ord_id":"mine-2"}"#);
    let refusals = [
        (vec![ms(1500)], PERPS_TIMEOUT, true),
        (json(200, r#"{"code":400,"message":"invalid qty"}"#), PERPS_API_ERROR, false),
        (json(200, r#"{"code":503,"message":"busy"}"#), PERPS_API_ERROR, true),
        (json(200, r#"{"code":1e-400}"#), PERPS_BAD_RESPONSE, true),
        (vec![Step::Write(response(502, &[], b"bad gateway"))], PERPS_HTTP_STATUS, true),
    ];
    for (steps, code, reached) in refusals {
        let rogue = Rogue::start(move |_, _| steps.clone());
        let client = client_at(&rogue.url(), r#"{"read_timeout_ms":200,"total_timeout_ms":400}"#);
        for path in ["/api/new_order", "/api/new_order?x=1"] {
            let f = expect(request(&client, &session, "POST", path, Some(&mine)), code, reached);
            assert_eq!(f.cl_ord_id.as_deref(), Some("mine-2"), "{path} {code:?}: {f:?}");
        }
        assert_eq!(rogue.seen()[0].body, mine.as_bytes(), "the body is sent as given");
        // No cl_ord_id named (or not as one string): none is reported.
        for body in [
            ORDER.to_owned(),
            ORDER.replace('}', r#","cl_ord_id":7}"#),
            format!("{},\"cl_ord_id\":\"b\"}}", &mine[..mine.len() - 1]),
        ] {
            let f = expect(request(&client, &session, "POST", "/api/new_order", Some(&body)), code, reached);
            assert_eq!(f.cl_ord_id, None, "{body}: {f:?}");
        }
        // Other paths name no order placed.
        let f = expect(
            request(&client, &session, "POST", "/api/cancel_order", Some(r#"{"cl_ord_id":"mine-2"}"#)),
            code,
            reached,
        );
        assert_eq!(f.cl_ord_id, None, "{f:?}");
    }
}

/// The same answer read by every path that reads a `code`: an endpoint call, the depth book,
/// `new_order` and `perps_request`.
fn on_every_path(client: &Client, session: &Session) -> [Result<String, Failure>; 4] {
    [
        call(client, Some(session), "cancel_order", Some(r#"{"order_id":1}"#)),
        call(client, None, "query_depth_book", Some(r#"{"symbol":"X"}"#)),
        new_order(client, session, ORDER),
        request(client, session, "POST", "/api/cancel_order", Some(r#"{"order_id":1}"#)),
    ]
}

#[test]
fn a_code_is_read_as_a_plain_integer_or_a_string_of_digits() {
    // Success as an integer or a string of digits, and null is no code: for the endpoint
    // calls (the depth book too), new_order and perps_request alike.
    for success in [
        r#"{"code":"0","message":"success","request_id":"r"}"#,
        r#"{"code":0,"message":"success","request_id":"r"}"#,
        r#"{"code":null,"message":"success","request_id":"r"}"#,
    ] {
        let text = success.to_owned();
        let rogue = Rogue::start(move |seen, _| {
            if seen.path().ends_with("query_depth_book") {
                json(200, &text.replace('}', r#","asks":[],"bids":[]}"#))
            } else {
                json(200, &text)
            }
        });
        let client = client_at(&rogue.url(), FAST);
        let session = api_session(SEED);
        for (name, params) in [("cancel_order", r#"{"order_id":1}"#), ("query_order", r#"{"order_id":1}"#)] {
            assert_eq!(call(&client, Some(&session), name, Some(params)).unwrap(), success, "{name}");
        }
        call(&client, None, "query_depth_book", Some(r#"{"symbol":"X"}"#)).unwrap();
        let answer: Value = serde_json::from_str(&new_order(&client, &session, ORDER).unwrap()).unwrap();
        assert_eq!(answer["request_id"], "r", "{success}");
        assert!(answer["cl_ord_id"].is_string());
        request(&client, &session, "POST", "/api/cancel_order", Some(r#"{"order_id":1}"#)).unwrap();
        assert_eq!(rogue.seen().len(), 5);
    }
    // A refusal's code as a string: PERPS_API_ERROR naming the code, from every path.
    let rogue = Rogue::start(|_, _| json(200, r#"{"code":"400","message":"invalid order qty","asks":[]}"#));
    let client = client_at(&rogue.url(), FAST);
    let session = api_session(SEED);
    for result in on_every_path(&client, &session) {
        let f = expect(result, PERPS_API_ERROR, false);
        assert!(f.message.contains("refused with code 400: invalid order qty"), "{f:?}");
    }
    // A code of another shape: the outcome is unknown (it may have been a success).
    let rogue = Rogue::start(|_, _| json(200, r#"{"code":"0.0","message":"success","asks":[]}"#));
    let client = client_at(&rogue.url(), FAST);
    for result in on_every_path(&client, &session) {
        let f = expect(result, PERPS_BAD_RESPONSE, true);
        assert!(f.message.contains(r#""code" is not an integer"#) && f.message.contains(r#"(\"0.0\")"#), "{f:?}");
    }
    // A code whose value is 0 (or 200, or a refusal's) but that is not written as a plain
    // integer — an exponent (1e-400 underflows to 0 in a reader that rounds), a fraction, a
    // negative zero: never a success, nor a refusal that did not reach the venue.
    for code in ["1e-400", "-0", "0.0", "-0.0", "0e0", "200.0", "2e2", "\"-0\"", "400.0"] {
        let text = format!(r#"{{"code":{code},"message":"success","request_id":"r","asks":[],"bids":[]}}"#);
        let rogue = Rogue::start(move |_, _| json(200, &text));
        let client = client_at(&rogue.url(), FAST);
        for result in on_every_path(&client, &session) {
            let f = expect(result, PERPS_BAD_RESPONSE, true);
            assert!(f.message.contains(r#""code" is not an integer"#), "{code}: {f:?}");
        }
        let f = expect(
            request(&client, &session, "POST", "/api/new_order", Some(r#"{"symbol":"BTC-USD"}"#)),
            PERPS_BAD_RESPONSE,
            true,
        );
        assert!(f.message.contains("new_order"), "{code}: {f:?}");
    }
}

#[test]
fn a_refusal_stated_by_success_false_or_in_msg_is_read_on_every_path() {
    let session = api_session(SEED);
    // `"success": false` with no code: a refusal (never an order reported placed), with the
    // venue's words; not reached, as a refusal by code.
    let rogue = Rogue::start(|_, _| json(200, r#"{"success":false,"message":"insufficient balance","asks":[]}"#));
    let client = client_at(&rogue.url(), FAST);
    for result in on_every_path(&client, &session) {
        let f = expect(result, PERPS_API_ERROR, false);
        assert!(f.message.contains(r#"refused ("success": false, no code): insufficient balance"#), "{f:?}");
    }
    // The reason under `msg` (as the venue's WebSocket answers write it) or `error`.
    for key in ["msg", "error"] {
        let text = format!(r#"{{"code":400,"{key}":"order already filled","asks":[]}}"#);
        let rogue = Rogue::start(move |_, _| json(200, &text));
        let client = client_at(&rogue.url(), FAST);
        for result in on_every_path(&client, &session) {
            let f = expect(result, PERPS_API_ERROR, false);
            assert!(f.message.contains("refused with code 400: order already filled"), "{key}: {f:?}");
        }
    }
    // A success code beside `"success": false`: ambiguous, its outcome unknown.
    let text = r#"{"code":0,"success":false,"message":"success","asks":[],"bids":[]}"#;
    let rogue = Rogue::start(move |_, _| json(200, text));
    let client = client_at(&rogue.url(), FAST);
    for result in on_every_path(&client, &session) {
        let f = expect(result, PERPS_BAD_RESPONSE, true);
        assert!(f.message.contains("ambiguous"), "{f:?}");
    }
    // `"success": true` is no refusal.
    let text = r#"{"success":true,"message":"success","request_id":"r","asks":[],"bids":[]}"#;
    let rogue = Rogue::start(move |_, _| json(200, text));
    let client = client_at(&rogue.url(), FAST);
    for result in on_every_path(&client, &session) {
        result.unwrap();
    }
}

#[test]
fn perps_request_returns_any_json_the_venue_answers_and_plain_text_to_a_read() {
    // Arrays are answers (funding history, recent trades, cancel_orders' `[]`; venue-api.md
    // §1.3–1.5), as is `/api/health`'s plain `OK` to a GET: returned exactly as sent.
    let body = |path: &str| match path {
        "/api/query_funding_history" => r#"[{"id":1,"symbol":"BTC-USD","funding_rate":"0.0001"}]"#,
        "/api/query_recent_trades" => r#" [ ] "#,
        "/api/health" => "OK",
        "/api/count" => "42",
        "/api/page" => "<html><body>a proxy's page</body></html>",
        _ => "[]",
    };
    let rogue = Rogue::start(move |seen, _| {
        let path = seen.path().trim_start_matches("/perps").to_owned();
        let content_type =
            if path == "/api/health" { "Content-Type: text/plain" } else { "Content-Type: application/json" };
        vec![Step::Write(response(200, &[content_type], body(&path).as_bytes()))]
    });
    let client = client_at(&rogue.url(), FAST);
    let session = api_session(SEED);
    for path in ["/api/query_funding_history?symbol=BTC-USD", "/api/query_recent_trades", "/api/health", "/api/count"] {
        let answer = request(&client, &session, "GET", path, None).unwrap();
        assert_eq!(answer, body(path.split('?').next().unwrap()), "{path}");
    }
    assert_eq!(
        request(&client, &session, "POST", "/api/cancel_orders", Some(r#"{"order_id_list":[1]}"#)).unwrap(),
        "[]"
    );
    // A web page is no venue's answer, and a write answered with no JSON has an unknown effect.
    let f = expect(request(&client, &session, "GET", "/api/page", None), PERPS_BAD_RESPONSE, true);
    assert!(f.message.contains("the venue's answer is not JSON"), "{f:?}");
    let f = expect(request(&client, &session, "POST", "/api/health", Some("{}")), PERPS_BAD_RESPONSE, true);
    assert!(f.message.contains("the venue's answer is not JSON") && f.body.as_deref() == Some("OK"), "{f:?}");
    assert_eq!(rogue.seen().len(), 7);
}
