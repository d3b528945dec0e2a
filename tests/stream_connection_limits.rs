//! The venue's WebSocket connection limits (10 open per IP, 30 new per minute), met locally
//! and counted process-wide per venue host — one host however its URL writes it (the case of
//! its name, its default port, the spelling of an IPv6 address, an IPv4-mapped address), as
//! the REST per-IP limit counts it.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "common/ws_server.rs"]
mod ws_server;

use helpers::*;
use perps::Code;
use perps::stream::Stream;
use ws_server::{Config, WsServer};

#[test]
fn urls_that_differ_only_in_the_case_of_the_host_share_one_limit() {
    let server = WsServer::start(Config::default());
    let port = server.perps_url().rsplit(':').next().unwrap().to_owned();
    let options = format!(
        r#"{{"stream_max_connections":1,"stream_url":"ws://localhost:{port}/ws-stream/v1",
            "order_stream_url":"ws://LocalHost:{port}/ws-api/v1"}}"#
    );
    let client = client(&server.perps_url(), &options);
    let market = Stream::open_market(client.clone(), None, r#"[{"channel":"price","symbol":"BTC-USD"}]"#).unwrap();
    let e = Stream::open_orders(client.clone(), session()).unwrap_err();
    assert_eq!(e.code(), Code::StreamLimit, "one host, one limit: {e}");
    assert_eq!(server.accepted(), 1, "nothing sent");
    drop(market);
    let orders = Stream::open_orders(client, session()).unwrap();
    until(&orders, LONG, "connected", is_status("connected"));
    assert_eq!(server.accepted(), 2);
}

#[test]
fn an_ipv4_mapped_ipv6_url_is_the_same_host_as_its_ipv4_address() {
    // `[::ffff:127.0.0.1]` reaches 127.0.0.1: the venue sees one client, so one limit. The
    // second open is refused before it connects (nothing sent), so no IPv6 socket is needed.
    let server = WsServer::start(Config::default());
    let port = server.perps_url().rsplit(':').next().unwrap().to_owned();
    for mapped in ["[::ffff:127.0.0.1]", "[0:0:0:0:0:FFFF:7f00:1]"] {
        let options = format!(
            r#"{{"stream_max_connections":1,"allow_insecure_http":true,
                "stream_url":"ws://127.0.0.1:{port}/ws-stream/v1",
                "order_stream_url":"ws://{mapped}:{port}/ws-api/v1"}}"#
        );
        let client = client(&server.perps_url(), &options);
        let market = Stream::open_market(client.clone(), None, r#"[{"channel":"price","symbol":"BTC-USD"}]"#).unwrap();
        let e = Stream::open_orders(client, session()).unwrap_err();
        assert_eq!(e.code(), Code::StreamLimit, "{mapped}: one host, one limit: {e}");
        drop(market);
    }
    assert_eq!(server.accepted(), 2, "only the market streams connected");
}

#[test]
fn a_stream_waiting_out_its_backoff_holds_no_connection_slot() {
    // One slot: the market stream's connection drops and it waits 3 s before reconnecting.
    // Meanwhile it has no connection, so the order stream may open in its place; the market
    // stream then waits for a slot, saying so once, and takes it when the order stream ends.
    let server = WsServer::start(Config::default());
    let options = r#"{"stream_max_connections":1,"stream_reconnect_min_ms":3000,"stream_reconnect_max_ms":3000}"#;
    let client = client(&server.perps_url(), options);
    let market = Stream::open_market(client.clone(), None, r#"[{"channel":"price","symbol":"BTC-USD"}]"#).unwrap();
    until(&market, LONG, "connected", is_status("connected"));
    server.drop_all();
    until(&market, LONG, "disconnected", is_status("disconnected"));
    let orders = Stream::open_orders(client, session()).expect("the slot is free during the backoff");
    until(&orders, LONG, "connected", is_status("connected"));
    // The market stream's backoff ends: no slot. One `reconnecting` event for the wait.
    std::thread::sleep(std::time::Duration::from_secs(5));
    drop(orders);
    let (_, before) = until(&market, LONG, "reconnected", is_status("reconnected"));
    let waits = before.iter().filter(|e| e["reason"] == "the venue's connection limit").count();
    assert_eq!(waits, 1, "one event for the wait, not one every 500 ms: {before:?}");
}
