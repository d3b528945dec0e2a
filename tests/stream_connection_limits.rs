//! The venue's WebSocket connection limits (10 open per IP, 30 new per minute), met locally
//! and counted process-wide per venue host — one host however its URL writes it (the case of
//! its name, its default port), as the REST per-IP limit counts it.

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
