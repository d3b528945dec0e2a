//! `perps_query_funding_history` through the C ABI: against the sandbox, which settles funding
//! from its own positions when told (`POST /_sandbox/funding`), each row is checked against
//! this file's own exact arithmetic on the positions the venue reported, and the balance
//! against the rows; `last_id` paging and the filters; against a purpose-built server, the
//! answer's two forms (the live bare array, the other lists' envelope) returned as sent and a
//! refusal inside an envelope; bad parameters refused with their code, nothing sent; the call
//! paced as an account request.

mod common;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{Client, Failure, Session, call, new_order, signin};
use perps::ffi::error::perps_code::*;
use perps_sandbox::{Sandbox, SandboxConfig};
use rogue_server::{Rogue, json as answer};
use serde_json::{Value, json};

const BSC_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

fn admin(venue: &Sandbox, what: &str) -> String {
    format!("http://127.0.0.1:{}/_sandbox/{what}", venue.port())
}

fn admin_post(venue: &Sandbox, what: &str, body: Value) -> Value {
    let mut reply = ureq::post(&admin(venue, what))
        .header("content-type", "application/json")
        .send(body.to_string())
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    serde_json::from_str(&reply.body_mut().read_to_string().unwrap()).unwrap()
}

/// The venue's request log, newest last.
fn requests(venue: &Sandbox) -> Vec<Value> {
    let mut reply = ureq::get(&admin(venue, "requests?last=1000")).call().unwrap();
    serde_json::from_str(&reply.body_mut().read_to_string().unwrap()).unwrap()
}

fn signed_in(venue: &Sandbox) -> (Client, Session) {
    let client = Client::new(&venue.base_url(), &venue.perps_url(), None).expect("client");
    let session = Session::new();
    signin(&client, &session, "bsc", BSC_KEY, 3600).expect("sign-in");
    (client, session)
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn rows(client: &Client, session: &Session, params: Option<&str>) -> Vec<Value> {
    let text = call(client, Some(session), "query_funding_history", params).unwrap_or_else(|f| panic!("{f:?}"));
    parse(&text).as_array().unwrap_or_else(|| panic!("the sandbox answers a bare array: {text}")).clone()
}

fn market(symbol: &str, side: &str, qty: &str) -> String {
    json!({"symbol": symbol, "side": side, "order_type": "market", "qty": qty, "time_in_force": "ioc",
           "reduce_only": false})
    .to_string()
}

/// A decimal string as an exact integer count of 10^-`places`.
fn scaled(text: &str, places: u32) -> i128 {
    let (negative, digits) = text.strip_prefix('-').map_or((false, text), |rest| (true, rest));
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    assert!(fraction.len() <= places as usize, "{text} has more than {places} decimals");
    let padded = format!("{fraction:0<width$}", width = places as usize);
    let n = whole.parse::<i128>().unwrap() * 10i128.pow(places) + padded.parse::<i128>().unwrap_or(0);
    if negative { -n } else { n }
}

/// What a position pays (negative) or receives at `rate`, in 10^-9 DUSD: −qty × mark × rate,
/// rounded half away from zero (the venue's money has nine decimals).
fn payment(qty: &str, mark: &str, rate: &str) -> i128 {
    let exact = -scaled(qty, 4) * scaled(mark, 4) * scaled(rate, 8); // 10^-16
    let unit = 10i128.pow(7);
    let rounded = (exact.abs() + unit / 2) / unit;
    if exact < 0 { -rounded } else { rounded }
}

fn text<'a>(v: &'a Value, field: &str) -> &'a str {
    v[field].as_str().unwrap_or_else(|| panic!("{field} in {v}"))
}

#[test]
fn settled_funding_comes_back_with_each_payment_and_the_balance_moved_by_it() {
    let venue = Sandbox::start(SandboxConfig::default()).expect("sandbox");
    let (client, session) = signed_in(&venue);
    new_order(&client, &session, &market("BTC-USD", "buy", "0.0100")).unwrap();
    new_order(&client, &session, &market("ETH-USD", "sell", "0.500")).unwrap();
    admin_post(&venue, "mark", json!({"symbol": "BTC-USD", "price": "65010.50"}));
    let positions = parse(&call(&client, Some(&session), "query_positions", None).unwrap());
    let positions = positions.as_array().unwrap().clone();
    assert_eq!(positions.len(), 2, "{positions:?}");
    let balance = |what: &str| {
        let b = parse(&call(&client, Some(&session), "query_balance", None).unwrap());
        scaled(text(&b, what), 9)
    };
    let before = balance("balance");

    let settled = admin_post(&venue, "funding", json!({"rate": "0.000125"}));
    assert_eq!(settled["rows"], 2, "{settled}");
    let got = rows(&client, &session, None);
    assert_eq!(got.len(), 2, "{got:?}");
    let mut total = 0;
    for row in &got {
        let p = positions.iter().find(|p| p["symbol"] == row["symbol"]).unwrap_or_else(|| panic!("{row}"));
        let expected = payment(text(p, "qty"), text(p, "mark_price"), "0.000125");
        assert_eq!(scaled(text(row, "qty"), 9), expected, "{row} for {p}");
        assert_eq!(
            (&row["asset"], &row["txn_type"], &row["user"]),
            (&json!("DUSD"), &json!("funding_fee"), &p["user"])
        );
        total += expected;
    }
    // The long pays at a positive rate, the short receives.
    let qty_of = |symbol: &str| text(got.iter().find(|r| r["symbol"] == symbol).unwrap(), "qty").to_owned();
    assert!(qty_of("BTC-USD").starts_with('-') && !qty_of("ETH-USD").starts_with('-'));
    assert_eq!(balance("balance") - before, total, "the balance moved by the rows, no more");
    assert!(got[0]["id"].as_u64() > got[1]["id"].as_u64(), "newest first");

    // What the venue received: one GET, the bearer, the query percent-encoded.
    let sent: Vec<Value> = requests(&venue)
        .into_iter()
        .filter(|r| r["path"].as_str().unwrap().ends_with("query_funding_history"))
        .collect();
    assert_eq!(sent.len(), 1);
    assert_eq!((&sent[0]["method"], &sent[0]["status"]), (&json!("GET"), &json!(200)));
    assert!(sent[0]["headers"].get("authorization").is_some(), "{}", sent[0]);
}

#[test]
fn last_id_pages_toward_older_rows_and_the_filters_apply() {
    let venue = Sandbox::start(SandboxConfig::default()).expect("sandbox");
    let (client, session) = signed_in(&venue);
    new_order(&client, &session, &market("BTC-USD", "buy", "0.0010")).unwrap();
    new_order(&client, &session, &market("ETH-USD", "buy", "0.100")).unwrap();
    for rate in ["0.0001", "-0.0002", "0.0003"] {
        admin_post(&venue, "funding", json!({"symbol": "BTC-USD", "rate": rate}));
    }
    admin_post(&venue, "funding", json!({"symbol": "ETH-USD", "rate": "0.0004"}));
    let all = rows(&client, &session, None);
    assert_eq!(all.len(), 4);
    let ids: Vec<u64> = all.iter().map(|r| r["id"].as_u64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");
    assert_eq!(all[0]["symbol"], "ETH-USD");

    // Pages of three, each from the previous page's last id, make up the whole list.
    let mut paged = Vec::new();
    let mut params = json!({"limit": 3});
    loop {
        let page = rows(&client, &session, Some(&params.to_string()));
        assert!(page.len() <= 3);
        let Some(last) = page.last() else { break };
        params["last_id"] = last["id"].clone();
        paged.extend(page);
    }
    assert_eq!(paged, all);
    assert_eq!(rows(&client, &session, Some(r#"{"limit":1}"#)), all[..1]);

    let btc = rows(&client, &session, Some(r#"{"symbol":"BTC-USD"}"#));
    assert_eq!(btc, all[1..]);
    // One BTC-USD row was received (the negative rate), two paid.
    let signs: Vec<bool> = btc.iter().map(|r| text(r, "qty").starts_with('-')).collect();
    assert_eq!(signs, [true, false, true]);
    // A window: `start` at the newest row's time, written without an offset (UTC) as the
    // library allows; the library sends it with `Z`.
    let newest = text(&all[0], "created_at").trim_end_matches('Z').to_owned();
    let window = rows(&client, &session, Some(&json!({"start": newest}).to_string()));
    assert_eq!(window, all[..1]);
    let none = rows(&client, &session, Some(r#"{"start":"2099-01-01","end":"2099-01-02"}"#));
    assert!(none.is_empty());
    let query = requests(&venue)
        .into_iter()
        .rev()
        .find(|r| r["path"].as_str().unwrap().ends_with("query_funding_history"))
        .unwrap();
    assert_eq!(query["query"], "start=2099-01-01T00%3A00%3A00Z&end=2099-01-02T00%3A00%3A00Z", "{query}");
}

#[test]
fn bad_parameters_are_refused_and_nothing_is_sent() {
    let venue = Sandbox::start(SandboxConfig::default()).expect("sandbox");
    let (client, session) = signed_in(&venue);
    let count = || requests(&venue).len();
    let before = count();
    for (params, fragment) in [
        (r#"{"limit":0}"#, r#"query_funding_history: "limit" is 0; expected an integer from 1 to 500"#),
        (r#"{"limit":501}"#, "expected an integer from 1 to 500"),
        (r#"{"last_id":-1}"#, "expected an integer from 0 to"),
        (r#"{"last_id":"30000000001"}"#, r#""last_id" must be a JSON integer, not a string"#),
        (r#"{"start":"2026-01-02T00:00:01Z","end":"2026-01-02"}"#, r#""start" (2026-01-02T00:00:01Z) is after "end""#),
        (r#"{"end":"2026-02-30"}"#, "not a day of the calendar"),
        (r#"{"from":"2026-01-02"}"#, r#"unknown parameter "from""#),
        (r#"{"side":"buy"}"#, r#"unknown parameter "side""#),
        (r#"{"symbol":""}"#, r#""symbol" is empty"#),
        (r#"{"symbol":null}"#, r#""symbol" is null"#),
        ("[]", "params_json must be a JSON object"),
    ] {
        let f = call(&client, Some(&session), "query_funding_history", Some(params)).expect_err(params);
        assert_eq!(f.code, PERPS_INVALID_ARGUMENT, "{params}: {f:?}");
        assert!(f.message.contains(fragment), "{params}: {f:?}");
        assert!(!f.may_have_reached_venue && f.request_id.is_none() && f.http_status == 0, "{f:?}");
    }
    let f = call(&client, None, "query_funding_history", None).expect_err("no session");
    assert_eq!(f.code, PERPS_INVALID_ARGUMENT);
    assert!(f.message.contains("session is NULL"), "{f:?}");
    let f = call(&client, Some(&Session::new()), "query_funding_history", None).expect_err("no token");
    assert_eq!(f.code, PERPS_INVALID_STATE);
    assert_eq!(count(), before, "nothing reached the venue");
    // An unknown symbol is the venue's refusal (HTTP 400), not the library's.
    let f = call(&client, Some(&session), "query_funding_history", Some(r#"{"symbol":"DOGE-USD"}"#)).unwrap_err();
    assert_eq!((f.code, f.http_status), (PERPS_HTTP_STATUS, 400), "{f:?}");
    assert!(f.message.contains("invalid symbol DOGE-USD"), "{f:?}");
    assert_eq!(count(), before + 1);
}

#[test]
fn both_answer_forms_come_back_as_sent_and_a_refusal_in_an_envelope_is_an_error() {
    let bare = r#"[{"id":30000000002,"user":"bsc_0xabc","asset":"DUSD","symbol":"BTC-USD","qty":"-0.081263125","txn_type":"funding_fee","created_at":"2026-01-02T08:00:00.000001Z","updated_at":"2026-01-02T08:00:00.000001Z"},{"id":30000000001,"user":"bsc_0xabc","asset":"DUSD","symbol":"ETH-USD","qty":"0.1875","txn_type":"funding_fee","created_at":"2026-01-02T00:00:00Z","updated_at":"2026-01-02T00:00:00Z"}]"#;
    let envelope = r#"{"code":0,"message":"success","page_size":1,"result":[{"id":7,"user":"u","asset":"DUSD","symbol":"BTC-USD","qty":-0.5,"txn_type":"funding","transact_time":"2026-01-02T08:00:00Z","created_at":"2026-01-02T08:00:00Z","updated_at":"2026-01-02T08:00:00Z"}],"total":9}"#;
    for body in [bare, envelope, "[]", r#"{"page_size":0,"result":[],"total":0}"#] {
        let sent = body.to_owned();
        let rogue = Rogue::start(move |_, _| answer(200, &sent));
        let client = Client::new(&format!("{}/auth", rogue.url()), &format!("{}/perps", rogue.url()), None).unwrap();
        let session = Session::from_api_key("rogue-token", &bs58::encode([3u8; 32]).into_string()).unwrap();
        let got = call(&client, Some(&session), "query_funding_history", Some(r#"{"symbol":"BTC-USD","limit":2}"#));
        assert_eq!(got.unwrap(), body, "returned as the venue sent it");
        let seen = rogue.seen();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].target, "/perps/api/query_funding_history?symbol=BTC-USD&limit=2");
        assert_eq!(seen[0].header("authorization"), Some("Bearer rogue-token"));
    }
    let rogue = Rogue::start(|_, _| answer(200, r#"{"code":401,"message":"token expired","result":[]}"#));
    let client = Client::new(&format!("{}/auth", rogue.url()), &format!("{}/perps", rogue.url()), None).unwrap();
    let session = Session::from_api_key("rogue-token", &bs58::encode([3u8; 32]).into_string()).unwrap();
    let f = call(&client, Some(&session), "query_funding_history", None).unwrap_err();
    assert_eq!(f.code, PERPS_API_ERROR, "{f:?}");
    assert!(f.message.contains("query_funding_history: the venue refused with code 401: token expired"), "{f:?}");
}

#[test]
fn it_is_paced_as_an_account_request() {
    let rogue = Rogue::start(|_, _| answer(200, "[]"));
    let options = r#"{"rate_limit":"refuse"}"#;
    let client =
        Client::new(&format!("{}/auth", rogue.url()), &format!("{}/perps", rogue.url()), Some(options)).unwrap();
    let session = Session::from_api_key("rogue-token", &bs58::encode([4u8; 32]).into_string()).unwrap();
    let started = std::time::Instant::now();
    let mut outcomes: Vec<Result<String, Failure>> = Vec::new();
    while !outcomes.last().is_some_and(Result::is_err) && outcomes.len() < 400 {
        outcomes.push(call(&client, Some(&session), "query_funding_history", None));
    }
    // The account's burst (20 less a reserve of 2), plus a refill (one per 45 ms) a slow
    // machine may let in; then a refusal, not sent.
    let passed = outcomes.len() - 1;
    let refills = (started.elapsed().as_millis() / 45) as usize;
    assert!((18..=18 + refills).contains(&passed), "{passed} passed");
    let f = outcomes.pop().unwrap().unwrap_err();
    assert_eq!(f.code, PERPS_RATE_LIMITED, "{f:?}");
    assert_eq!(rogue.seen().len(), passed, "the refused call was not sent");
    // Market data is not an account request: it still goes.
    call(&client, None, "query_symbol_price", Some(r#"{"symbol":"BTC-USD"}"#)).unwrap();
    assert_eq!(rogue.seen().len(), passed + 1);
}
