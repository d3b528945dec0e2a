//! The library's two streams through the C ABI against the sandbox venue (an independent
//! implementation of the venue's WebSockets): the market channels, the account stream after
//! REST orders, a fill by the mark and a cancel, and order entry on the order stream in every
//! ack style, with the account event before the ack and REST results routed by
//! `x-session-id`. Every assertion that can be is checked against what the sandbox saw: its
//! open connections (`ws/connections`), its journal of account events, its request log, its
//! REST answers. Supervision, `seq`, expiry and connection limits: `tests/stream_supervision.rs`.

mod common;

use common::abi::{Client, Session, call, new_order};
use common::stream_abi::*;
use perps::ffi::error::perps_code;
use perps_sandbox::{AckStyle, Sandbox, SandboxConfig, WsTimers};
use serde_json::{Value, json};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(10);
/// Rests below the mark (65000): a buy far from it.
const RESTING_BUY: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"64000","time_in_force":"alo","reduce_only":false}"#;
/// A post-only sell below the mark would cross the book: the venue rejects it after its ack.
const CROSSING_ALO_SELL: &str = r#"{"symbol":"BTC-USD","side":"sell","order_type":"limit","qty":"0.01","price":"64000","time_in_force":"alo","reduce_only":false}"#;

fn venue(config: SandboxConfig) -> Sandbox {
    Sandbox::start(SandboxConfig {
        ws_timers: WsTimers { depth_book_interval_ms: 50, price_interval_ms: 100, ..WsTimers::default() },
        ..config
    })
    .expect("sandbox starts")
}

/// A client on the venue (`perps_url` with or without the `/perps` prefix: the stream URLs are
/// derived from it) and a session holding one of the venue's API credentials.
fn trader(venue: &Sandbox, prefixed: bool) -> (Client, Session) {
    let perps_url = if prefixed { venue.perps_url() } else { venue.url() };
    let client = Client::new(&venue.url(), &perps_url, Some(r#"{"stream_reconnect_min_ms":20}"#)).unwrap();
    let credential = venue.issue_api_key(None).unwrap();
    (client, Session::from_api_key(&credential.token, &credential.private_key).unwrap())
}

fn decimal(v: &Value) -> f64 {
    v.as_str().unwrap_or_else(|| panic!("not a decimal string: {v}")).parse().unwrap()
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// The venue's journal of account events (`GET /_sandbox/events`) on these channels.
fn journal(venue: &Sandbox, channels: &[&str]) -> Vec<Value> {
    venue.events_since(0).into_iter().filter(|e| channels.contains(&e["channel"].as_str().unwrap())).collect()
}

#[test]
fn market_channels_price_a_sorted_depth_book_and_the_public_trade_of_a_fill() {
    let venue = venue(SandboxConfig::default());
    let (client, session) = trader(&venue, true);
    let subs = r#"[{"channel":"price","symbol":"BTC-USD"},{"channel":"depth_book","symbol":"BTC-USD"},{"channel":"public_trade","symbol":"BTC-USD"}]"#;
    let market = Stream::market(&client, None, subs).unwrap();
    let (connected, _) = market.until(WAIT, "connected", is_status("connected"));
    assert_eq!(connected["stream"], "market");
    assert_eq!(connected["url"], format!("{}/ws-stream/v1", venue.perps_url().replacen("http", "ws", 1)));
    // The venue's side: one connection, on the prefixed path, not authenticated, the three
    // subscriptions (sent after the handshake: the venue may read them a moment later).
    wait_until(WAIT, "three subscriptions", || {
        venue.ws_connections().first().is_some_and(|c| c.subscriptions.len() == 3)
    });
    let conns = venue.ws_connections();
    assert_eq!(conns.len(), 1, "{conns:?}");
    assert_eq!(
        (conns[0].endpoint, conns[0].path.as_str(), conns[0].authenticated),
        ("ws-stream", "/perps/ws-stream/v1", false)
    );
    let subscribed: Vec<(String, Option<String>)> =
        conns[0].subscriptions.iter().map(|s| (s.channel.clone(), s.symbol.clone())).collect();
    let btc = Some("BTC-USD".to_owned());
    assert_eq!(
        subscribed,
        [("depth_book".into(), btc.clone()), ("price".into(), btc.clone()), ("public_trade".into(), btc.clone())]
    );

    // price: the venue's mark, as its REST answer gives it.
    let rest_price = parse(&call(&client, None, "query_symbol_price", Some(r#"{"symbol":"BTC-USD"}"#)).unwrap());
    let (price, _) = market.until(WAIT, "price", is_channel("price"));
    assert_eq!((price["symbol"].as_str(), price["data"]["symbol"].as_str()), (Some("BTC-USD"), Some("BTC-USD")));
    assert_eq!(price["data"]["mark_price"], rest_price["mark_price"]);
    assert!(price["received_ns"].as_i64().unwrap() > 1_700_000_000_000_000_000);

    // depth_book: the venue sends its ten levels a side shuffled; the events have them
    // sorted (bids high to low, asks low to high), the same levels REST gives (the mark is
    // still, so the book is the same), straddling the mark.
    let rest_book = parse(&call(&client, None, "query_depth_book", Some(r#"{"symbol":"BTC-USD"}"#)).unwrap());
    for _ in 0..5 {
        let (book, _) = market.until(WAIT, "depth_book", is_channel("depth_book"));
        let (bids, asks) = (book["data"]["bids"].as_array().unwrap(), book["data"]["asks"].as_array().unwrap());
        assert_eq!((bids.len(), asks.len()), (10, 10));
        assert!(bids.windows(2).all(|w| decimal(&w[0][0]) > decimal(&w[1][0])), "bids high to low: {bids:?}");
        assert!(asks.windows(2).all(|w| decimal(&w[0][0]) < decimal(&w[1][0])), "asks low to high: {asks:?}");
        assert!(decimal(&bids[0][0]) < 65000.0 && 65000.0 < decimal(&asks[0][0]));
        assert_eq!(book["data"]["bids"], rest_book["bids"], "the same levels, in the same order, as REST");
        assert_eq!(book["data"]["asks"], rest_book["asks"]);
    }

    // public_trade: a REST order that crosses the book fills; its print arrives.
    let crossing = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65100","time_in_force":"gtc","reduce_only":false}"#;
    new_order(&client, &session, crossing).unwrap();
    let (print, _) = market.until(WAIT, "public_trade", is_channel("public_trade"));
    let fills = journal(&venue, &["trade"]);
    assert_eq!(fills.len(), 1, "{fills:?}");
    assert_eq!(print["symbol"], "BTC-USD");
    assert_eq!((print["data"]["side"].as_str(), print["data"]["is_buyer_taker"].as_bool()), (Some("buy"), Some(true)));
    assert_eq!(
        (&print["data"]["price"], &print["data"]["qty"]),
        (&fills[0]["data"]["price"], &fills[0]["data"]["qty"])
    );
}

#[test]
fn the_account_stream_follows_a_rest_order_a_fill_by_the_mark_and_a_cancel() {
    let venue = venue(SandboxConfig::default());
    let (client, session) = trader(&venue, false);
    let subs = r#"[{"channel":"order"},{"channel":"position"},{"channel":"balance"},{"channel":"trade"}]"#;
    let account = Stream::market(&client, Some(&session), subs).unwrap();
    account.until(WAIT, "connected", is_status("connected"));
    let conns = venue.ws_connections();
    assert_eq!(conns.len(), 1);
    assert!(conns[0].authenticated, "the auth frame was accepted");
    let channels: Vec<&str> = conns[0].subscriptions.iter().map(|s| s.channel.as_str()).collect();
    assert_eq!(channels, ["balance", "order", "position", "trade"], "subscribed through auth.streams");

    let filled = parse(&new_order(&client, &session, &RESTING_BUY.replace("64000", "64900")).unwrap());
    let cancelled = parse(&new_order(&client, &session, &RESTING_BUY.replace("64000", "64800")).unwrap());
    assert_eq!((filled["code"].as_i64(), cancelled["code"].as_i64()), (Some(0), Some(0)));
    venue.set_mark("BTC-USD", "64850").unwrap(); // through the 64900 bid, not the 64800 one
    let open = parse(&call(&client, Some(&session), "query_open_orders", None).unwrap());
    let open = open["result"].as_array().unwrap();
    assert_eq!(open.len(), 1, "the 64900 bid filled: {open:?}");
    let cancel_id = open[0]["id"].as_i64().unwrap();
    call(&client, Some(&session), "cancel_order", Some(&format!(r#"{{"order_id":{cancel_id}}}"#))).unwrap();

    let (cancel_event, mut events) = account.until(WAIT, "the cancel's order event", |e| {
        e["channel"] == "order" && e["data"]["id"] == cancel_id && e["data"]["status"] == "canceled"
    });
    events.push(cancel_event);
    events.extend(account.drain(Duration::from_millis(300))); // the cancel's balance push
    events.retain(|e| e["channel"] != "status");

    // One event per entry of the venue's journal, in its order, each with the venue's data:
    // order and trade as REST shows them, position with the documented fields, balance as the
    // wallet record whose version is the journal's seq.
    let journal = journal(&venue, &["order", "position", "balance", "trade"]);
    let got: Vec<&str> = events.iter().map(|e| e["channel"].as_str().unwrap()).collect();
    let want: Vec<&str> = journal.iter().map(|e| e["channel"].as_str().unwrap()).collect();
    assert_eq!(got, want, "the channels, in the journal's order");
    let mut seqs = std::collections::HashMap::new();
    for (event, entry) in events.iter().zip(&journal) {
        assert!(event.get("symbol").is_none(), "account pushes carry no top-level symbol: {event}");
        let seq = seqs.entry(event["channel"].as_str().unwrap()).or_insert(0);
        *seq += 1;
        assert_eq!(event["seq"], *seq, "seq counts per channel on the connection: {event}");
        let (data, venue_data) = (&event["data"], &entry["data"]);
        match event["channel"].as_str().unwrap() {
            "order" | "trade" => assert_eq!(data, venue_data),
            "position" => {
                for key in ["id", "symbol", "qty", "entry_price", "realized_pnl", "leverage", "margin_mode"] {
                    assert_eq!(data[key], venue_data[key], "position.{key}");
                }
                assert!(data.get("mark_price").is_none() && data.get("upnl").is_none(), "{data}");
            }
            _ => {
                assert_eq!(data["version"], entry["seq"]);
                assert_eq!(decimal(&data["total"]), decimal(&venue_data["balance"]));
                assert_eq!(decimal(&data["locked"]), decimal(&venue_data["locked"]));
            }
        }
    }
    // What happened, as the events tell it.
    let order_states: Vec<(i64, &str)> = events
        .iter()
        .filter(|e| e["channel"] == "order")
        .map(|e| (e["data"]["id"].as_i64().unwrap(), e["data"]["status"].as_str().unwrap()))
        .collect();
    let filled_id = order_states[0].0;
    assert_eq!(
        order_states,
        [(filled_id, "open"), (cancel_id, "open"), (filled_id, "filled"), (cancel_id, "canceled")]
    );
    let trade = events.iter().find(|e| e["channel"] == "trade").unwrap();
    assert_eq!(trade["data"]["order_id"].as_i64(), Some(filled_id));
    assert_eq!((decimal(&trade["data"]["price"]), decimal(&trade["data"]["qty"])), (64900.0, 0.01));
    let position = events.iter().find(|e| e["channel"] == "position").unwrap();
    let rest_positions =
        parse(&call(&client, Some(&session), "query_positions", Some(r#"{"symbol":"BTC-USD"}"#)).unwrap());
    assert_eq!(decimal(&position["data"]["qty"]), 0.01);
    assert_eq!(position["data"]["qty"], rest_positions[0]["qty"], "the position REST reports");
}

/// The venue's view of one order, by `cl_ord_id`.
fn venue_order(client: &Client, session: &Session, cl_ord_id: &Value) -> Value {
    parse(&call(client, Some(session), "query_order", Some(&json!({ "cl_ord_id": cl_ord_id }).to_string())).unwrap())
}

/// An order stream's replies to one request: the ack (`final` false), then the outcome.
fn ack_then_outcome(orders: &Stream, sent: &Value) -> (Value, Value) {
    let (ack, before) = orders.until(WAIT, "the ack", is_channel("order_response"));
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(
        (&ack["request_id"], &ack["final"], &ack["matched"]),
        (&sent["request_id"], &json!(false), &json!(true))
    );
    assert_eq!((ack["code"].as_i64(), ack["message"].as_str()), (Some(0), Some("accepted")));
    let (outcome, before) = orders.until(WAIT, "the outcome", is_channel("order_response"));
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(
        (&outcome["request_id"], &outcome["final"], &outcome["matched"]),
        (&sent["request_id"], &json!(true), &json!(true))
    );
    (ack, outcome)
}

#[test]
fn order_stream_new_and_cancel_give_the_ack_then_the_outcome_in_every_ack_style() {
    for (style, keys) in [
        (AckStyle::Status, ["status", "status"]),
        (AckStyle::Message, ["message", "message"]),
        (AckStyle::Alternate, ["status", "message"]),
    ] {
        let venue = venue(SandboxConfig { ws_ack_style: style, ..SandboxConfig::default() });
        let (client, session) = trader(&venue, style == AckStyle::Message);
        let orders = Stream::orders(&client, &session).unwrap();
        let (connected, _) = orders.until(WAIT, "connected", is_status("connected"));
        assert_eq!(connected["stream"], "order");
        let conns = venue.ws_connections();
        assert_eq!(conns.len(), 1);
        assert_eq!((conns[0].endpoint, conns[0].authenticated), ("ws-api", true), "auth:login accepted");
        assert_eq!(conns[0].session_id.as_deref(), connected["session_id"].as_str(), "the stream's session_id");

        // A resting order: accepted, then success; the venue has it open.
        let sent = orders.new_order(RESTING_BUY).unwrap();
        let (ack, outcome) = ack_then_outcome(&orders, &sent);
        assert_eq!(ack["frame"][keys[0]], "accepted", "{style:?}: the word under {}: {ack}", keys[0]);
        assert_eq!((ack["method"].as_str(), &ack["cl_ord_id"]), (Some("order:new"), &sent["cl_ord_id"]));
        assert_eq!((outcome["code"].as_i64(), outcome["message"].as_str()), (Some(0), Some("success")));
        assert_eq!(outcome["cl_ord_id"], sent["cl_ord_id"]);
        let placed = venue_order(&client, &session, &sent["cl_ord_id"]);
        assert_eq!(
            (placed["status"].as_str(), placed["price"].as_str().map(|p| p.parse::<f64>().unwrap())),
            (Some("open"), Some(64000.0))
        );

        // Its cancel by cl_ord_id: accepted, then success; the venue shows it cancelled.
        let cancel = orders.cancel_order(&json!({ "cl_ord_id": sent["cl_ord_id"] }).to_string()).unwrap();
        assert_eq!(cancel["cl_ord_id"], sent["cl_ord_id"]);
        let (ack, outcome) = ack_then_outcome(&orders, &cancel);
        assert_eq!(ack["frame"][keys[1]], "accepted", "{style:?}: {ack}");
        assert_eq!(ack["method"], "order:cancel");
        assert_eq!((outcome["code"].as_i64(), outcome["message"].as_str()), (Some(0), Some("success")));
        assert_eq!(venue_order(&client, &session, &sent["cl_ord_id"])["status"], "canceled");

        // A cancel of a gone order, by id: accepted, then the venue's 404.
        let gone = orders.cancel_order(&format!(r#"{{"order_id":{}}}"#, placed["id"])).unwrap();
        let (_, outcome) = ack_then_outcome(&orders, &gone);
        assert_eq!((outcome["code"].as_i64(), outcome["message"].as_str()), (Some(404), Some("order not found")));
        assert_eq!(outcome["order_id"], placed["id"]);

        // A post-only order that would cross: accepted, then "alo order rejected".
        let sent = orders.new_order(CROSSING_ALO_SELL).unwrap();
        let (_, outcome) = ack_then_outcome(&orders, &sent);
        assert_eq!((outcome["code"].as_i64(), outcome["message"].as_str()), (Some(400), Some("alo order rejected")));
        assert_eq!(outcome["cl_ord_id"], sent["cl_ord_id"]);

        // The venue read the login and four requests, and wrote eight replies after the login's.
        let conn = &venue.ws_connections()[0];
        assert_eq!((conn.frames_in, conn.frames_out), (5, 9), "{conn:?}");
        assert!(orders.drain(Duration::from_millis(200)).is_empty(), "one ack and one outcome per request");
    }
}

#[test]
fn the_account_event_arrives_before_the_ack_when_the_venue_sends_it_first() {
    for event_first in [true, false] {
        let venue = venue(SandboxConfig { ws_event_before_ack: event_first, ..SandboxConfig::default() });
        let (client, session) = trader(&venue, false);
        let account = Stream::market(&client, Some(&session), r#"[{"channel":"order"}]"#).unwrap();
        let orders = Stream::orders(&client, &session).unwrap();
        account.until(WAIT, "connected", is_status("connected"));
        orders.until(WAIT, "connected", is_status("connected"));
        // The venue writes the two frames in the order asked for; which of the two
        // connections' threads reads first is the scheduler's choice on a loaded machine, so
        // a few orders are allowed for the order to show.
        let mut seen = Vec::new();
        for _ in 0..5 {
            let sent = orders.new_order(RESTING_BUY).unwrap();
            let (ack, outcome) = ack_then_outcome(&orders, &sent);
            let (event, _) = account.until(WAIT, "the order event", is_channel("order"));
            assert_eq!(
                (&event["data"]["cl_ord_id"], event["data"]["status"].as_str()),
                (&sent["cl_ord_id"], Some("open"))
            );
            let (event_ns, ack_ns) = (event["received_ns"].as_i64().unwrap(), ack["received_ns"].as_i64().unwrap());
            assert!(outcome["received_ns"].as_i64().unwrap() >= ack_ns);
            seen.push((event_ns, ack_ns));
            if (event_ns <= ack_ns) == event_first {
                break;
            }
        }
        let (event_ns, ack_ns) = *seen.last().unwrap();
        let which = if event_first { "the account event" } else { "the ack" };
        assert_eq!(event_ns <= ack_ns, event_first, "{which} was received first in none of {seen:?}");
    }
}

#[test]
fn rest_orders_sent_with_the_sessions_x_session_id_report_on_the_order_stream() {
    let venue = venue(SandboxConfig::default());
    let (client, session) = trader(&venue, false);
    common::abi::code(|e| perps::ffi::session::perps_session_set_session_id(session.0, c"engine-7".as_ptr(), e))
        .unwrap();
    let orders = Stream::orders(&client, &session).unwrap();
    let (connected, _) = orders.until(WAIT, "connected", is_status("connected"));
    assert_eq!(
        (connected["session_id"].as_str(), connected["session_id_from_session"].as_bool()),
        (Some("engine-7"), Some(true))
    );
    assert_eq!(venue.ws_connections()[0].session_id.as_deref(), Some("engine-7"));

    for (order, outcome_message) in [(RESTING_BUY, "success"), (CROSSING_ALO_SELL, "alo order rejected")] {
        let answer = parse(&new_order(&client, &session, order).unwrap());
        assert_eq!(
            (answer["code"].as_i64(), answer["message"].as_str()),
            (Some(0), Some("success")),
            "REST: submitted"
        );
        let logged = venue.requests(1).pop().unwrap();
        assert_eq!(logged["path"], "/api/new_order");
        let header = |name: &str| {
            let headers = logged["headers"].as_object().unwrap();
            headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str().unwrap().to_owned())
        };
        assert_eq!(header("x-session-id").as_deref(), Some("engine-7"), "{logged}");
        assert_eq!(header("x-request-id").as_deref(), answer["request_id"].as_str());
        // Its two frames on the order stream, keyed by the REST answer's request_id; no
        // request of this stream: passed through, unmatched.
        let (ack, _) = orders.until(WAIT, "the REST order's ack", is_channel("order_response"));
        let (outcome, _) = orders.until(WAIT, "the REST order's outcome", is_channel("order_response"));
        for (frame, is_final) in [(&ack, false), (&outcome, true)] {
            assert_eq!(
                (&frame["request_id"], &frame["final"], &frame["matched"]),
                (&answer["request_id"], &json!(is_final), &json!(false))
            );
            assert!(frame["method"].is_null() && frame["cl_ord_id"].is_null(), "{frame}");
        }
        assert_eq!(outcome["message"], outcome_message);
    }
}

#[test]
fn with_symbol_rules_on_the_order_stream_refuses_what_rest_refuses_and_sends_nothing() {
    let venue = venue(SandboxConfig::default());
    let client = Client::new(&venue.url(), &venue.url(), Some(r#"{"symbol_rules":true}"#)).unwrap();
    let credential = venue.issue_api_key(None).unwrap();
    let session = Session::from_api_key(&credential.token, &credential.private_key).unwrap();
    let orders = Stream::orders(&client, &session).unwrap();
    orders.until(WAIT, "connected", is_status("connected"));
    let frames_before = venue.stats().ws_frames_in;
    let off_tick = RESTING_BUY.replace(r#""price":"64000""#, r#""price":"64000.123""#);
    let refused = orders.new_order(&off_tick).unwrap_err();
    assert_eq!(refused.code, perps_code::PERPS_INVALID_ORDER, "{}", refused.message);
    assert!(refused.message.contains("tick"), "{}", refused.message);
    assert!(refused.cl_ord_id.is_some(), "the refused order's cl_ord_id");
    assert_eq!(rest_refusal(&client, &session, &off_tick), refused.message, "the REST call refuses it alike");
    assert_eq!(venue.stats().ws_frames_in, frames_before, "nothing written to the order stream");
    // An order the rules allow goes out as before.
    let sent = orders.new_order(RESTING_BUY).unwrap();
    let (_, outcome) = ack_then_outcome(&orders, &sent);
    assert_eq!(outcome["code"], 0, "{outcome}");
}

fn rest_refusal(client: &Client, session: &Session, order: &str) -> String {
    let refused = new_order(client, session, order).unwrap_err();
    assert_eq!(refused.code, perps_code::PERPS_INVALID_ORDER, "{}", refused.message);
    refused.message
}
