//! Venue answers that two JSON readers read differently. A `code` named twice
//! (`{"code":0,"code":400}`), or a `success` (`{"success":true,"success":false}`), is read as
//! its last by serde_json and as its first by cJSON and many others: the library and the engine reading the same answer could then disagree on
//! whether an order was accepted — a refusal reported as not reached (the engine places the
//! order again) while its own reader sees success, or the reverse. Every path that judges a
//! REST answer's `code` refuses such an answer as `PERPS_BAD_RESPONSE` that may have reached
//! the venue, in the same way.

mod common;
#[path = "server_faults/helpers.rs"]
mod helpers;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{call, expect, new_order, request};
use helpers::*;
use perps::ffi::error::perps_code::*;
use rogue_server::{Rogue, json};

/// Answers naming a key that states the outcome twice, and the key.
const TWICE: [(&str, &str); 5] = [
    (r#"{"code":0,"code":400}"#, "code"),
    (r#"{"code":400,"code":0}"#, "code"),
    (r#"{"code":0,"\u0063ode":10001}"#, "code"),
    (r#"{"success":true,"success":false}"#, "success"),
    (r#"{"success":false,"code":0,"\u0073uccess":true}"#, "success"),
];

fn venue(body: &'static str) -> Rogue {
    Rogue::start(move |_, _| json(200, body))
}

#[test]
fn an_order_answer_that_names_code_or_success_twice_is_ambiguous_whichever_comes_first() {
    for (body, key) in TWICE {
        let f = order_against(move |_, _| json(200, body), FAST, PERPS_BAD_RESPONSE, true, 1);
        assert!(f.message.contains(&format!("\"{key}\" more than once")), "{body}: {f:?}");
        assert_eq!(f.body.as_deref(), Some(body), "the venue's answer is attached");
        assert!(f.request_id.is_some(), "{f:?}");
    }
}

#[test]
fn every_other_path_that_judges_a_code_refuses_it_the_same_way() {
    for (body, key) in TWICE {
        let twice = format!("\"{key}\" more than once");
        let rogue = venue(body);
        let client = client_at(&rogue.url(), FAST);
        let session = api_session();
        let cancel = call(&client, Some(&session), "cancel_order", Some(r#"{"order_id":7}"#));
        let f = expect(cancel, PERPS_BAD_RESPONSE, true);
        assert!(f.message.contains(&twice), "cancel_order {body}: {f:?}");
        let f = expect(request(&client, &session, "GET", "/api/health", None), PERPS_BAD_RESPONSE, true);
        assert!(f.message.contains(&twice), "perps_request {body}: {f:?}");
        // The depth book read its first `code`, the other calls their last.
        let book: &'static str = Box::leak(format!(r#"{},"bids":[],"asks":[]}}"#, body.trim_end_matches('}')).into());
        let rogue = venue(book);
        let client = client_at(&rogue.url(), FAST);
        let depth = call(&client, None, "query_depth_book", Some(r#"{"symbol":"BTC-USD"}"#));
        let f = expect(depth, PERPS_BAD_RESPONSE, true);
        assert!(f.message.contains(&twice), "query_depth_book {book}: {f:?}");
    }
    // One `code` and one nested in `data` is not a duplicate.
    let rogue = venue(r#"{"code":0,"data":{"code":1,"bids":[],"asks":[]}}"#);
    let client = client_at(&rogue.url(), FAST);
    call(&client, None, "query_depth_book", Some(r#"{"symbol":"BTC-USD"}"#)).unwrap();
    new_order(&client, &api_session(), ORDER).unwrap();
}
