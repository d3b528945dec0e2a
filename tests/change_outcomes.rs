//! The outcome of a change (an order, a cancel) when the venue's 2xx answer leaves it open,
//! through the C ABI against purpose-built servers on 127.0.0.1: an answer with no `code`
//! whose words do not say success, JSON that is neither an object nor an array, and an order
//! answer naming a `cl_ord_id` other than the one sent. Each is `PERPS_BAD_RESPONSE` that may
//! have reached the venue — never a success (a rejected quote believed resting) nor a plain
//! refusal (an order sent again) — while a read's answer, which has no code to give, is the
//! venue's answer as it is.

mod common;
#[path = "endpoint_calls/helpers.rs"]
mod helpers;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{Client, Failure, call, expect, new_order, request};
use helpers::*;
use perps::ffi::error::perps_code::*;
use rogue_server::{Rogue, Seen, json};

/// A client of a server that answers every request with `body`.
fn answering(body: &str) -> (Rogue, Client) {
    let text = body.to_owned();
    let rogue = Rogue::start(move |_, _| json(200, &text));
    let client = client_at(&rogue.url(), FAST);
    (rogue, client)
}

/// The order's `cl_ord_id` as the server received it.
fn sent_cl_ord_id(seen: &Seen) -> String {
    seen.json()["cl_ord_id"].as_str().expect("the order names its cl_ord_id").to_owned()
}

fn unknown(result: Result<String, Failure>, words: &str, what: &str) -> Failure {
    let f = expect(result, PERPS_BAD_RESPONSE, true);
    assert!(f.message.contains(words), "{what}: {f:?}");
    f
}

#[test]
fn a_change_answered_with_no_code_and_other_words_has_an_unknown_outcome() {
    // Every documented answer to an order or a cancel carries a code; one without, whose
    // words do not say success, is a refusal by its words and a success by its missing code.
    for body in [
        r#"{"message":"alo order rejected","request_id":"r"}"#,
        r#"{"code":null,"msg":"insufficient margin"}"#,
        r#"{"error":"insufficient margin"}"#,
        r#"{"success":"false"}"#,
        r#"{"success":true,"message":"order placed"}"#,
    ] {
        let (rogue, client) = answering(body);
        let session = api_session(SEED);
        let f = unknown(new_order(&client, &session, ORDER), "does not say success", body);
        assert_eq!(f.cl_ord_id.as_deref(), Some(sent_cl_ord_id(&rogue.seen()[0]).as_str()), "{body}");
        assert_eq!(f.body.as_deref(), Some(body));
        for (name, params) in [("cancel_order", r#"{"order_id":1}"#), ("cancel_orders", r#"{"order_id_list":[1]}"#)] {
            let f = unknown(call(&client, Some(&session), name, Some(params)), "does not say success", name);
            assert!(f.request_id.is_some(), "{name} {body}: {f:?}");
        }
        for path in ["/api/cancel_order", "/api/new_order"] {
            let sent = request(&client, &session, "POST", path, Some(r#"{"order_id":1}"#));
            unknown(sent, "does not say success", path);
        }
        // A read's answer has no code to give: the same object from a GET is the venue's answer.
        assert_eq!(request(&client, &session, "GET", "/api/query_balance", None).unwrap(), body);
        assert_eq!(call(&client, Some(&session), "query_order", Some(r#"{"order_id":1}"#)).unwrap(), body);
        assert_eq!(rogue.seen().len(), 7, "each request sent once");
    }
    // Words of success, or none, with no code: a success, as the order stream reads them.
    for body in [r#"{"message":"success","request_id":"r"}"#, r#"{"msg":"OK"}"#, r#"{"success":true,"request_id":"r"}"#]
    {
        let (_rogue, client) = answering(body);
        assert_eq!(call(&client, Some(&api_session(SEED)), "cancel_order", Some(r#"{"order_id":1}"#)).unwrap(), body);
    }
}

#[test]
fn a_change_answered_with_json_of_no_object_or_array_has_an_unknown_outcome() {
    for body in ["null", "false", "0", r#""rate limited""#] {
        let (_rogue, client) = answering(body);
        let session = api_session(SEED);
        let sent = request(&client, &session, "POST", "/api/cancel_order", Some(r#"{"order_id":1}"#));
        let f = unknown(sent, "neither a JSON object nor an array", body);
        assert_eq!(f.body.as_deref(), Some(body));
        // A read may be answered so (`/api/kline/time` answers a bare number).
        assert_eq!(request(&client, &session, "GET", "/api/kline/time", None).unwrap(), body);
    }
}

#[test]
fn a_change_answered_with_an_array_naming_a_refusal_has_an_unknown_outcome() {
    for body in [r#"[{"order_id":1,"code":500,"message":"busy"}]"#, r#"[{"cl_ord_id":"a","error":"order not found"}]"#]
    {
        let (_rogue, client) = answering(body);
        let session = api_session(SEED);
        let params = Some(r#"{"order_id_list":[1]}"#);
        unknown(call(&client, Some(&session), "cancel_orders", params), "does not say success", body);
        let sent = request(&client, &session, "POST", "/api/cancel_orders", Some(r#"{"order_id_list":[1]}"#));
        unknown(sent, "does not say success", body);
    }
    // The documented `[]`, and per-order statuses without an error, are the venue's answer.
    for body in ["[]", r#"[{"order_id":1,"status":"canceled"}]"#] {
        let (_rogue, client) = answering(body);
        let params = Some(r#"{"order_id_list":[1]}"#);
        assert_eq!(call(&client, Some(&api_session(SEED)), "cancel_orders", params).unwrap(), body);
    }
}

#[test]
fn an_order_answer_naming_another_cl_ord_id_has_an_unknown_outcome() {
    // The venue's own id, null, empty, a number: the caller would look the order up, or
    // cancel it, by an id it was not sent with. The error names the one sent.
    for named in [r#""venue-said""#, "null", r#""""#, "7"] {
        let (rogue, client) = answering(&format!(r#"{{"code":0,"message":"success","cl_ord_id":{named}}}"#));
        let f = unknown(new_order(&client, &api_session(SEED), ORDER), "other than the one sent", named);
        assert_eq!(f.cl_ord_id.as_deref(), Some(sent_cl_ord_id(&rogue.seen()[0]).as_str()), "{named}");
        assert!(f.body.as_deref().unwrap().contains(named), "{named}: {f:?}");
    }
    // Named twice, the second time right: readers keeping the first copy see another id.
    let rogue = Rogue::start(|seen, _| {
        json(200, &format!(r#"{{"code":0,"cl_ord_id":"x","cl_ord_id":"{}"}}"#, sent_cl_ord_id(seen)))
    });
    let client = client_at(&rogue.url(), FAST);
    unknown(new_order(&client, &api_session(SEED), ORDER), "names a cl_ord_id twice", "twice");
    assert_eq!(rogue.seen().len(), 1, "never retried");
    // An order placed through perps_request, its body naming its cl_ord_id: the same rule.
    let (_rogue, client) = answering(r#"{"code":0,"cl_ord_id":"venue-said"}"#);
    let body = r#"{"symbol":"BTC-USD","cl_ord_id":"mine-1"}"#;
    let f =
        unknown(request(&client, &api_session(SEED), "POST", "/api/new_order", Some(body)), "other than", "request");
    assert_eq!(f.cl_ord_id.as_deref(), Some("mine-1"));
    let (_rogue, client) = answering(r#"{"code":0,"cl_ord_id":"mine-1"}"#);
    assert!(request(&client, &api_session(SEED), "POST", "/api/new_order", Some(body)).is_ok());
}

#[test]
fn a_change_answered_with_the_accepted_code_202_has_an_unknown_outcome() {
    // 202 is the code of the order stream's gateway ack in a doc-derived client's fixture
    // (venue-api.md §6.2): "taken for processing". On a change it states no outcome, so it is
    // neither a refusal that did not reach the venue (the order would be placed again) nor a
    // success.
    for body in [
        r#"{"session_id":"s","request_id":"r","code":202,"status":"accepted","message":"request accepted"}"#,
        r#"{"code":"202","request_id":"r"}"#,
    ] {
        let (rogue, client) = answering(body);
        let session = api_session(SEED);
        let f = unknown(new_order(&client, &session, ORDER), "202", body);
        assert_eq!(f.cl_ord_id.as_deref(), Some(sent_cl_ord_id(&rogue.seen()[0]).as_str()), "{body}");
        assert_eq!(f.body.as_deref(), Some(body));
        for (name, params) in [
            ("cancel_order", r#"{"order_id":1}"#),
            ("cancel_orders", r#"{"order_id_list":[1]}"#),
            ("change_leverage", r#"{"symbol":"BTC-USD","leverage":5}"#),
        ] {
            let f = unknown(call(&client, Some(&session), name, Some(params)), "202", name);
            assert!(f.request_id.is_some(), "{name} {body}: {f:?}");
        }
        unknown(request(&client, &session, "POST", "/api/cancel_order", Some(r#"{"order_id":1}"#)), "202", body);
        assert_eq!(rogue.seen().len(), 5, "each request sent once");
    }
}
