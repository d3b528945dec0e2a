//! `new_order` validation table: what is accepted, what is refused and with which words,
//! and the exact body that will be signed and sent.

use perps::order::validate;

const BASE: &str = r#""symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000.5","time_in_force":"gtc","reduce_only":false"#;

fn with(extra: &str) -> String {
    if extra.is_empty() { format!("{{{BASE}}}") } else { format!("{{{BASE},{extra}}}") }
}

fn without(field: &str) -> String {
    let mut v: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&with("")).unwrap();
    v.remove(field);
    serde_json::Value::Object(v).to_string()
}

fn replaced(field: &str, json_value: &str) -> String {
    let mut v: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&with("")).unwrap();
    v.insert(field.to_owned(), serde_json::from_str(json_value).unwrap());
    serde_json::Value::Object(v).to_string()
}

#[test]
fn accepted_orders_serialise_compactly_in_documented_order() {
    let cases: Vec<(String, &str)> = vec![
        (with(""), r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000.5","time_in_force":"gtc","reduce_only":false}"#),
        // Field order in the input does not matter; whitespace is dropped.
        (r#"{ "reduce_only": true, "time_in_force": "ioc", "qty": "1", "order_type": "market", "side": "sell", "symbol": "ETH-USD" }"#.into(),
         r#"{"symbol":"ETH-USD","side":"sell","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":true}"#),
        (with(r#""cl_ord_id":"my-order-1","margin_mode":"isolated","leverage":20,"tp_price":"70000","sl_price":"60000.25""#),
         r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000.5","time_in_force":"gtc","reduce_only":false,"cl_ord_id":"my-order-1","margin_mode":"isolated","leverage":20,"tp_price":"70000","sl_price":"60000.25"}"#),
        (replaced("time_in_force", r#""alo""#), r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000.5","time_in_force":"alo","reduce_only":false}"#),
        (with(r#""margin_mode":"cross""#), r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000.5","time_in_force":"gtc","reduce_only":false,"margin_mode":"cross"}"#),
        // Decimals keep the caller's text exactly (no float round trip).
        (replaced("qty", r#""1.50""#), r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"1.50","price":"65000.5","time_in_force":"gtc","reduce_only":false}"#),
        (replaced("price", r#""0.000000001""#), r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"0.000000001","time_in_force":"gtc","reduce_only":false}"#),
        // A reduce-only market exit.
        (r#"{"symbol":"BTC-USD","side":"sell","order_type":"market","qty":"0.5","time_in_force":"ioc","reduce_only":true}"#.into(),
         r#"{"symbol":"BTC-USD","side":"sell","order_type":"market","qty":"0.5","time_in_force":"ioc","reduce_only":true}"#),
        // JSON escapes in names and values are decoded, and the body is written without them.
        (r#"{"\u0073ymbol":"BTC\u002dUSD","side":"buy","order_type":"market","qty":"1","time_in_force":"ioc","reduce\u005fonly":false}"#.into(),
         r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":false}"#),
    ];
    for (input, expected) in cases {
        let body = validate(&input).unwrap_or_else(|e| panic!("{input} refused: {e}"));
        assert_eq!(body.as_str(), expected, "input {input}");
        // Serialising the serialised body again changes nothing.
        assert_eq!(validate(body.as_str()).unwrap().as_str(), expected);
    }
}

#[test]
fn refused_orders_name_the_problem() {
    let cases: Vec<(String, &str)> = vec![
        ("".into(), "not valid JSON"),
        ("not json".into(), "not valid JSON"),
        ("[1,2]".into(), "must be a JSON object"),
        ("\"order\"".into(), "must be a JSON object"),
        ("null".into(), "must be a JSON object"),
        (format!("{} trailing", with("")), "trailing characters"),
        (without("symbol"), "missing required field \"symbol\""),
        (without("side"), "missing required field \"side\""),
        (without("order_type"), "missing required field \"order_type\""),
        (without("qty"), "missing required field \"qty\""),
        // A limit order needs its time in force; a market order may omit it (accepted below).
        (without("time_in_force"), "missing required field \"time_in_force\""),
        (without("reduce_only"), "missing required field \"reduce_only\""),
        (without("price"), "\"price\" is required for a limit order"),
        (with(r#""reduceOnly":true"#), "unknown field \"reduceOnly\" (did you mean \"reduce_only\"?)"),
        (with(r#""stop_price":"1""#), "unknown field \"stop_price\""),
        (with(r#""reduce_only":true"#), "duplicate field \"reduce_only\""),
        // The same name spelled with an escape is the same field.
        (with(r#""reduce\u005fonly":true"#), "duplicate field \"reduce_only\""),
        (replaced("qty", "0.01"), "\"qty\" must be a decimal string like \"0.01\", not a JSON number"),
        (replaced("price", "65000"), "\"price\" must be a decimal string like \"0.01\", not a JSON number"),
        (replaced("qty", r#""0""#), "must be greater than zero"),
        (replaced("qty", r#""0.000""#), "must be greater than zero"),
        (replaced("qty", r#""-1""#), "not a plain decimal"),
        (replaced("qty", r#""1e3""#), "not a plain decimal"),
        (replaced("qty", r#""1.""#), "not a plain decimal"),
        (replaced("qty", r#"".5""#), "not a plain decimal"),
        (replaced("qty", r#"" 1""#), "not a plain decimal"),
        (replaced("qty", r#""1,5""#), "not a plain decimal"),
        (replaced("qty", r#""NaN""#), "not a plain decimal"),
        (replaced("qty", r#""007""#), "leading zeros"),
        (replaced("qty", r#""""#), "not a plain decimal"),
        (replaced("price", &format!("\"{}\"", "9".repeat(41))), "too long"),
        (replaced("side", r#""BUY""#), "\"side\" is \"BUY\"; expected one of \"buy\", \"sell\""),
        (replaced("side", r#""long""#), "expected one of \"buy\", \"sell\""),
        (replaced("order_type", r#""stop""#), "expected one of \"limit\", \"market\""),
        (replaced("time_in_force", r#""fok""#), "expected one of \"gtc\", \"ioc\", \"alo\""),
        (replaced("time_in_force", "1"), "\"time_in_force\" must be a string"),
        // Required on a market order too (the documents list it as required); never defaulted.
        (
            r#"{"symbol":"BTC-USD","side":"sell","order_type":"market","qty":"0.5","reduce_only":true}"#.into(),
            "missing required field \"time_in_force\" (\"gtc\", \"ioc\" or \"alo\"",
        ),
        (replaced("reduce_only", r#""false""#), "\"reduce_only\" must be true or false (got a string)"),
        (replaced("reduce_only", "0"), "must be true or false (got a number)"),
        (replaced("reduce_only", "null"), "\"reduce_only\" is null"),
        (replaced("symbol", r#""""#), "\"symbol\" is empty"),
        (replaced("symbol", r#""BTC USD""#), "\"symbol\" contains a character that is not allowed"),
        (replaced("symbol", "42"), "\"symbol\" must be a string"),
        (with(r#""leverage":"10""#), "\"leverage\" must be a JSON integer ≥ 1"),
        (with(r#""leverage":0"#), "\"leverage\" must be a JSON integer ≥ 1"),
        (with(r#""leverage":-3"#), "\"leverage\" must be a JSON integer ≥ 1"),
        (with(r#""leverage":2.5"#), "\"leverage\" must be a JSON integer ≥ 1"),
        (with(r#""margin_mode":"hedged""#), "expected one of \"cross\", \"isolated\""),
        (with(r#""tp_price":70000"#), "\"tp_price\" must be a decimal string"),
        (with(r#""sl_price":"-1""#), "\"sl_price\" is \"-1\": not a plain decimal"),
        (with(r#""cl_ord_id":"""#), "\"cl_ord_id\" is empty"),
        (with(&format!("\"cl_ord_id\":\"{}\"", "x".repeat(65))), "longer than 64"),
        (with(r#""cl_ord_id":null"#), "\"cl_ord_id\" is null"),
        // The venue's JSON would give these back escaped: the id could not be looked up.
        (with(r#""cl_ord_id":"mm\"q""#), "\"cl_ord_id\" contains a quote or a backslash"),
        (with(r#""cl_ord_id":"mm\\b""#), "\"cl_ord_id\" contains a quote or a backslash"),
        (with(r#""cl_ord_id":"mm\u0022q""#), "\"cl_ord_id\" contains a quote or a backslash"),
    ];
    assert!(cases.len() >= 25);
    for (input, fragment) in cases {
        let e = validate(&input).expect_err(&input);
        assert_eq!(e.code(), perps::Code::InvalidOrder, "{input}");
        assert!(e.message().contains(fragment), "input {input}: message {:?} lacks {fragment:?}", e.message());
    }
}

#[test]
fn huge_or_hostile_field_names_are_cut_short_in_messages() {
    let name = "k".repeat(10_000);
    let e = validate(&with(&format!("\"{name}\":1"))).unwrap_err();
    assert!(e.message().len() < 200, "message is {} bytes", e.message().len());
}

#[test]
fn control_characters_in_quoted_values_are_escaped_in_messages() {
    // A NUL cannot cross the C ABI and a newline or bidi override would forge or hide log text:
    // the message shows them escaped, the same in Rust as through `perps_order_serialize`.
    for (value, shown) in [
        (r#""\u0000""#, r"\u{0}"),
        (r#""a\nb""#, r"a\nb"),
        (r#""\u202ebuy""#, r"\u{202e}buy"),
        (r#""\u001b[31m""#, r"\u{1b}[31m"),
    ] {
        let e = validate(&replaced("side", value)).unwrap_err();
        let expected = format!("\"side\" is \"{shown}\"; expected one of");
        assert!(e.message().starts_with(&expected), "{value}: {:?}", e.message());
        assert!(!e.message().chars().any(|c| c.is_control()), "{value}: {:?}", e.message());
    }
}

#[test]
fn a_generated_cl_ord_id_takes_its_documented_place_and_a_given_one_is_kept() {
    use perps::order::validate_with_id;
    let (body, id) = validate_with_id(&with(""), || Ok("gen-1".to_owned())).unwrap();
    assert_eq!(id, "gen-1");
    assert_eq!(
        body.as_str(),
        r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000.5","time_in_force":"gtc","reduce_only":false,"cl_ord_id":"gen-1"}"#
    );
    let given = with(r#""cl_ord_id":"mine","leverage":5"#);
    let (body, id) = validate_with_id(&given, || panic!("no id is generated when one is given")).unwrap();
    assert_eq!(id, "mine");
    assert_eq!(body.as_str(), validate(&given).unwrap().as_str());
    assert_eq!(body.field("qty"), Some("0.01"));
    assert_eq!(body.field("leverage"), Some("5"));
    assert_eq!(body.field("tp_price"), None);
    // An invalid order is refused before any id is made.
    assert!(validate_with_id(&without("qty"), || panic!("not for an invalid order")).is_err());
}
