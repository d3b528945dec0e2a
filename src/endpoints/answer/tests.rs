//! Tests of `endpoints::answer`.
use super::*;

/// The check of a read's answer.
fn check(body: &str) -> Result<(), Refusal> {
    super::check(body, Answering::Read)
}

#[test]
fn a_change_answered_with_no_code_is_a_success_only_when_nothing_says_otherwise() {
    let change = |body: &str| super::check(body, Answering::Change);
    for fine in [
        "{}",
        "[]",
        r#"{"request_id":"r"}"#,
        r#"{"message":"success","request_id":"r"}"#,
        r#"{"code":null,"msg":"OK"}"#,
        r#"{"success":true,"message":"success"}"#,
        r#"{"code":0,"message":"order placed"}"#,
        r#"{"message":" "}"#,
    ] {
        assert_eq!(change(fine), Ok(()), "{fine}");
    }
    for unknown in [
        r#"{"message":"order not found","request_id":"r"}"#,
        r#"{"code":null,"message":"alo order rejected"}"#,
        r#"{"error":"insufficient margin"}"#,
        r#"{"success":"false","message":"x"}"#,
        r#"{"success":"false"}"#,
        r#"{"success":1}"#,
        r#"{"success":true,"status":"x","message":"order placed"}"#,
    ] {
        assert!(
            matches!(change(unknown), Err(Refusal::Shape(m)) if m.contains("no \"code\" and does not say success")),
            "{unknown}: {:?}",
            change(unknown)
        );
        // A read's answer has no code to give (an order object): only a change's is judged so.
        assert_eq!(check(unknown), Ok(()), "{unknown}");
    }
    // What the answer states by its code or `"success": false` is read as for a read.
    assert_eq!(change(r#"{"code":400,"message":"bad"}"#), Err(Refusal::Code(400, "bad".into())));
    assert_eq!(change(r#"{"success":false,"msg":"no"}"#), Err(Refusal::Unsuccessful("no".into())));
}

#[test]
fn answers_are_checked_not_rewritten() {
    assert_eq!(check(r#"{"code":0,"message":"success","request_id":"r"}"#), Ok(()));
    assert_eq!(check("[]"), Ok(()));
    assert_eq!(check(r#"{"page_size":1,"result":[{"id":1}],"total":1}"#), Ok(()));
    assert_eq!(check(r#"{"code":400,"message":"bad"}"#), Err(Refusal::Code(400, "bad".into())));
    for (twice, key) in [
        (r#"{"code":0,"code":400}"#, "code"),
        (r#"{"code":400,"code":0}"#, "code"),
        (r#"{"code":0,"\u0063ode":0}"#, "code"),
        (r#"{"success":true,"success":false}"#, "success"),
        (r#"{"success":false,"code":0,"\u0073uccess":true}"#, "success"),
        (r#"{"success":true,"code":0,"success":true}"#, "success"),
    ] {
        let ambiguous = Refusal::Shape(named_twice_message(key));
        assert_eq!(check(twice), Err(ambiguous.clone()), "{twice}");
        assert_eq!(outcome_named_twice(twice), Some(key), "{twice}");
        let book = format!("{},\"bids\":[],\"asks\":[]}}", twice.trim_end_matches('}'));
        assert_eq!(sort_depth_book(&book), Err(ambiguous), "{book}");
    }
    assert_eq!(outcome_named_twice(r#"{"code":0,"success":true,"data":{"code":1,"success":false}}"#), None);
    assert_eq!(
        refused_with_code("cancel_order", 4294967296, ""),
        "cancel_order: the venue refused with code 4294967296"
    );
    assert_eq!(refused_with_code("x", 400, "bad"), "x: the venue refused with code 400: bad");
    assert!(matches!(check(r#"{"code":0.5}"#), Err(Refusal::Shape(m)) if m.contains("not an integer")));
    assert!(matches!(check("\"ok\""), Err(Refusal::Shape(_))));
    assert!(matches!(check("{"), Err(Refusal::Shape(_))));
    assert!(matches!(check("{} x"), Err(Refusal::Shape(_))));
}

#[test]
fn codes_are_read_as_plain_integers_or_strings_of_digits() {
    let read = |text: &str| venue_code(Some(&serde_json::from_str(text).unwrap()));
    for (text, code) in [
        ("0", 0),
        ("400", 400),
        ("-1", -1),
        ("\"0\"", 0),
        ("\"400\"", 400),
        ("\"-1\"", -1),
        ("\"007\"", 7),
        ("9223372036854775807", i64::MAX),
        ("\"-9223372036854775808\"", i64::MIN),
    ] {
        assert_eq!(read(text), Ok(Some(code)), "{text}");
    }
    assert_eq!(venue_code(None), Ok(None));
    assert_eq!(read("null"), Ok(None));
    for bad in [
        // Not written as a plain integer, whatever its value: never a success.
        "1e-400",
        "-0",
        "-0.0",
        "0.0",
        "0e0",
        "0E5",
        "200.0",
        "2e2",
        "400.0",
        "4e2",
        "\"-0\"",
        "\"-000\"",
        "0.5",
        "1e300",
        "9223372036854775808",
        "18446744073709551615",
        "\"\"",
        "\"-\"",
        "\"+1\"",
        "\" 0\"",
        "\"0.0\"",
        "\"9223372036854775808\"",
        "\"ok\"",
        "true",
        "[0]",
        "{\"code\":0}",
    ] {
        assert!(read(bad).is_err_and(|m| m.contains("\"code\" is not an integer")), "{bad}");
    }
    // The same reading for every answer: `check` and the depth book.
    assert_eq!(check(r#"{"code":"0","message":"success"}"#), Ok(()));
    for unplain in [r#"{"code":0.0}"#, r#"{"code":1e-400}"#, r#"{"code":-0}"#, r#"{"code":"-0"}"#, r#"{"code":4e2}"#] {
        assert!(matches!(check(unplain), Err(Refusal::Shape(m)) if m.contains("not an integer")), "{unplain}");
        let book = format!("{},\"bids\":[],\"asks\":[]}}", unplain.trim_end_matches('}'));
        assert!(matches!(sort_depth_book(&book), Err(Refusal::Shape(_))), "{book}");
    }
    assert_eq!(check(r#"{"code":null,"message":"success"}"#), Ok(()));
    assert_eq!(check(r#"{"code":"400","message":"bad"}"#), Err(Refusal::Code(400, "bad".into())));
    // 200, as the WebSocket auth answers write success: an accepted order is never
    // reported as refused and unsent.
    assert_eq!(check(r#"{"code":200,"message":"success"}"#), Ok(()));
    assert_eq!(check(r#"{"code":"200"}"#), Ok(()));
    assert_eq!(check(r#"{"code":201,"message":"created"}"#), Err(Refusal::Code(201, "created".into())));
    // 202, the gateway ack's code: taken for processing, no outcome stated — never a refusal
    // (an accepted order reported refused would be placed again), nor a success.
    for accepted in [r#"{"code":202,"status":"accepted","message":"request accepted"}"#, r#"{"code":"202"}"#] {
        assert!(matches!(check(accepted), Err(Refusal::Shape(m)) if m.contains("202")), "{accepted}");
        let changed = super::check(accepted, Answering::Change);
        assert!(matches!(changed, Err(Refusal::Shape(m)) if m.contains("202")), "{accepted}");
    }
    assert!(sort_depth_book(r#"{"code":"0","asks":[],"bids":[]}"#).is_ok());
    assert!(sort_depth_book(r#"{"code":null,"asks":[],"bids":[]}"#).is_ok());
    assert!(sort_depth_book(r#"{"code":200,"asks":[],"bids":[]}"#).is_ok());
    assert_eq!(sort_depth_book(r#"{"code":"3","message":"no"}"#), Err(Refusal::Code(3, "no".into())));
    assert!(
        matches!(sort_depth_book(r#"{"code":"x","asks":[]}"#), Err(Refusal::Shape(m)) if m.ends_with(r#"(\"x\")"#))
    );
}

#[test]
fn success_false_with_no_code_is_a_refusal_and_beside_a_success_code_ambiguous() {
    let unsuccessful = |words: &str| Err(Refusal::Unsuccessful(words.into()));
    assert_eq!(check(r#"{"success":false,"msg":"no"}"#), unsuccessful("no"));
    assert_eq!(check(r#"{"code":null,"success":false,"message":" ","error":"e"}"#), unsuccessful("e"));
    assert_eq!(check(r#"{"success":false,"code":"400","message":"bad"}"#), Err(Refusal::Code(400, "bad".into())));
    for ambiguous in [r#"{"code":"200","success":false}"#, r#"{"success":false,"code":0}"#] {
        assert!(matches!(check(ambiguous), Err(Refusal::Shape(m)) if m.contains("ambiguous")), "{ambiguous}");
    }
    // Only the boolean false states a refusal.
    for fine in [r#"{"success":true}"#, r#"{"success":"false"}"#, r#"{"success":null,"code":0}"#] {
        assert_eq!(check(fine), Ok(()), "{fine}");
    }
    assert_eq!(sort_depth_book(r#"{"success":false,"msg":"no"}"#), Err(Refusal::Unsuccessful("no".into())));
}

#[test]
fn depth_levels_are_sorted_by_value_and_keep_their_text() {
    let body = r#"{"asks":[["10.25","1"],["9.5","2"],[9.75,3]],"bids":[["9","1"],["10","2"],["8.99999","3"]],"symbol":"X","extra":{"a":1}}"#;
    let sorted = sort_depth_book(body).unwrap();
    assert_eq!(
        sorted,
        r#"{"asks":[["9.5","2"],[9.75,3],["10.25","1"]],"bids":[["10","2"],["9","1"],["8.99999","3"]],"symbol":"X","extra":{"a":1}}"#
    );
    let wrapped = format!(r#"{{"code":0,"data":{body}}}"#);
    assert!(sort_depth_book(&wrapped).unwrap().contains(r#""asks":[["9.5","2"],[9.75,3],["10.25","1"]]"#));
    assert!(
        matches!(sort_depth_book(r#"{"asks":[["x","1"]],"bids":[]}"#), Err(Refusal::Shape(m)) if m.contains("level 0 of \"asks\""))
    );
    assert!(matches!(sort_depth_book(r#"{"symbol":"X"}"#), Err(Refusal::Shape(_))));
    assert_eq!(sort_depth_book(r#"{"code":3,"message":"no"}"#), Err(Refusal::Code(3, "no".into())));
    // Levels as objects, spaces, escaped keys: sorted, kept.
    assert_eq!(
        sort_depth_book(r#"{"b\u0069ds":[ {"price":"1","qty":"1"} , {"price":2,"qty":"1"} ],"asks":null}"#).unwrap(),
        r#"{"bids":[{"price":2,"qty":"1"},{"price":"1","qty":"1"}],"asks":[]}"#
    );
}

#[test]
fn depth_levels_are_read_as_the_stream_reads_them() {
    // A price written with an escape is that price; objects with px/sz; quantities of zero.
    assert_eq!(
        sort_depth_book(r#"{"asks":[["\u0032","1"],{"px":"1.5","sz":"0"}],"bids":[]}"#).unwrap(),
        r#"{"asks":[{"px":"1.5","sz":"0"},["\u0032","1"]],"bids":[]}"#
    );
    for (book, words) in [
        (
            r#"{"asks":[["1","2"],["2","NaN"]],"bids":[]}"#,
            r#"level 1 of "asks": quantity "NaN" is not a decimal of zero or more"#,
        ),
        (r#"{"asks":[],"bids":[["1",null]]}"#, r#"level 0 of "bids": quantity "null""#),
        (r#"{"asks":[],"bids":[["1","-1"]]}"#, r#"quantity "-1""#),
        (r#"{"asks":[["1"]],"bids":[]}"#, r#"level 0 of "asks" has no quantity"#),
        (r#"{"asks":[{"price":"1"}],"bids":[]}"#, r#"level 0 of "asks" has no quantity"#),
        (r#"{"asks":[{"price":"1","px":"1","qty":"1"}],"bids":[]}"#, "names its price twice"),
        (r#"{"asks":[["x","-1"]],"bids":[]}"#, r#"level 0 of "asks": price "x" is not a decimal"#),
        (r#"{"asks":[["2","1"]],"asks":[["1","1"]],"bids":[]}"#, r#""asks" is named twice"#),
        (r#"{"data":{"asks":[],"bids":[],"bids":[["1","1"]]}}"#, r#""bids" is named twice"#),
        // One side: refused naming the other, as the stream refuses such a push.
        (r#"{"data":{"bids":[],"symbol":"X"}}"#, r#"the book has no "asks""#),
        (r#"{"asks":[["1","1"]]}"#, r#"the book has no "bids""#),
    ] {
        match sort_depth_book(book) {
            Err(Refusal::Shape(message)) => assert!(message.contains(words), "{book}: {message}"),
            other => panic!("{book}: {other:?}"),
        }
    }
}

#[test]
fn an_envelopes_null_result_is_the_empty_list_and_nothing_else_changes() {
    assert_eq!(check_list(r#"{"result":null}"#), Ok(Some(r#"{"result":[]}"#.to_owned())));
    assert_eq!(
        check_list("{\"page_size\":0, \"res\\u0075lt\" : null ,\"note\":\"null\"}"),
        Ok(Some("{\"page_size\":0, \"res\\u0075lt\" : [] ,\"note\":\"null\"}".to_owned()))
    );
    for as_sent in [
        r#"{"result":[],"next":null}"#,
        r#"{"data":null}"#,
        r#"[null]"#,
        r#"{"result":{"rows":null}}"#,
        // Named twice: left as sent, not guessed at.
        r#"{"result":null,"result":[]}"#,
    ] {
        assert_eq!(check_list(as_sent), Ok(None), "{as_sent}");
    }
    assert!(check_list(r#"{"code":400,"result":null}"#).is_err());
}
