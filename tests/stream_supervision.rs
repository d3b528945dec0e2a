//! Supervision of the library's streams through the C ABI against the sandbox venue, with the
//! sandbox's timers shortened: its pings answered over a long idle, a stalled (half-open)
//! connection found by the library's idle timeout and replaced, a dropped connection replaced
//! with its auth and subscriptions, the lifetime cap, rotation, `seq` under both countings, an
//! expired token ending the stream without a reconnect loop, and the venue's connection limits
//! met locally (`PERPS_STREAM_LIMIT`), never as the sandbox's 429. Each is checked against what
//! the sandbox saw: its open connections (`ws/connections`) and its counters (`stats`).

mod common;

use common::abi::{Client, Session, new_order};
use common::stream_abi::*;
use perps::ffi::error::perps_code::*;
use perps_sandbox::{Sandbox, SandboxConfig, SeqScope, WsConnection, WsTimers};
use serde_json::Value;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(10);
const BSC_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const RESTING_BUY: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"64000","time_in_force":"gtc","reduce_only":false}"#;
const CROSSING_BUY: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65100","time_in_force":"gtc","reduce_only":false}"#;

/// The venue's timers made short: pings every 100 ms (a client that does not answer is cut
/// after 500 ms), market pushes every 50 / 100 ms.
fn short_timers() -> WsTimers {
    WsTimers {
        ping_interval_ms: 100,
        pong_timeout_ms: 500,
        depth_book_interval_ms: 50,
        price_interval_ms: 100,
        ..WsTimers::default()
    }
}

fn venue_with(config: SandboxConfig) -> Sandbox {
    Sandbox::start(config).expect("sandbox starts")
}

fn venue() -> Sandbox {
    venue_with(SandboxConfig { ws_timers: short_timers(), ..SandboxConfig::default() })
}

/// A client with the given stream options and a session holding an API credential.
fn trader(venue: &Sandbox, options: &str) -> (Client, Session) {
    let client = Client::new(&venue.url(), &venue.url(), Some(options)).unwrap();
    let credential = venue.issue_api_key(None).unwrap();
    (client, Session::from_api_key(&credential.token, &credential.private_key).unwrap())
}

fn of(venue: &Sandbox, endpoint: &str) -> Vec<WsConnection> {
    venue.ws_connections().into_iter().filter(|c| c.endpoint == endpoint).collect()
}

fn subscriptions(conn: &WsConnection) -> Vec<String> {
    conn.subscriptions.iter().map(|s| format!("{}:{}", s.channel, s.symbol.as_deref().unwrap_or(""))).collect()
}

#[test]
fn the_venues_pings_are_answered_so_a_long_idle_stays_connected() {
    let venue = venue();
    let (client, session) = trader(&venue, r#"{"stream_idle_timeout_ms":1000}"#);
    // Two streams on which nothing happens: only the venue's pings arrive.
    let account = Stream::market(&client, Some(&session), r#"[{"channel":"balance"}]"#).unwrap();
    let orders = Stream::orders(&client, &session).unwrap();
    account.until(WAIT, "connected", is_status("connected"));
    orders.until(WAIT, "connected", is_status("connected"));
    let before = venue.ws_connections();
    let pongs = venue.stats().ws_pongs;
    // Three idle timeouts of the library, six of the venue's pong timeouts.
    let idle = Duration::from_secs(3);
    for stream in [&account, &orders] {
        let events = stream.collect_for(idle / 2);
        assert!(events.is_empty(), "no disconnection, no event at all: {events:#?}");
    }
    let after = venue.ws_connections();
    let ids = |conns: &[WsConnection]| conns.iter().map(|c| c.id).collect::<Vec<_>>();
    assert_eq!(ids(&after), ids(&before), "the same two connections");
    assert!(after.iter().all(|c| c.age_ms >= idle.as_millis() as u64));
    let answered = venue.stats().ws_pongs - pongs;
    assert!(answered >= 2 * 20, "the venue received {answered} pongs from two connections in {idle:?}");
    // Still working: an order and its outcome.
    let sent = orders.new_order(RESTING_BUY).unwrap();
    orders.until(WAIT, "the outcome", reply_to(&sent["request_id"], true));
}

#[test]
fn a_stalled_connection_is_found_half_open_by_the_idle_timeout_and_replaced() {
    let venue = venue();
    let (client, session) = trader(&venue, r#"{"stream_idle_timeout_ms":600,"stream_reconnect_min_ms":20}"#);
    let subs = r#"[{"channel":"depth_book","symbol":"BTC-USD"},{"channel":"order"}]"#;
    let market = Stream::market(&client, Some(&session), subs).unwrap();
    market.until(WAIT, "connected", is_status("connected"));
    let expected = ["depth_book:BTC-USD", "order:"];
    let subscribed = |c: &WsConnection| c.authenticated && subscriptions(c) == expected;
    wait_until(WAIT, "subscribed", || venue.ws_connections().first().is_some_and(subscribed));
    let first = venue.ws_connections().pop().unwrap();
    assert_eq!(venue.ws_stall(Some(first.id), true), 1);
    let stalled_at = Instant::now();
    let (down, before) = market.until(WAIT, "disconnected", is_status("disconnected"));
    let detected = stalled_at.elapsed();
    assert!(down["reason"].as_str().unwrap().contains("half-open"), "{down}");
    // Not before the idle timeout (600 ms); after it, with seconds of slack for a loaded
    // machine: no detection at all fails `until` at 10 s, a detection left to a later timer
    // the bound.
    assert!(detected >= Duration::from_millis(500) && detected < Duration::from_secs(8), "found after {detected:?}");
    assert!(before.iter().all(|e| e["channel"] != "status"), "{before:#?}");
    let (up, _) = market.until(WAIT, "reconnected", is_status("reconnected"));
    assert_eq!(up["connection"], 2);
    // The venue: the stalled connection ended once the library hung up; the new one is
    // authenticated with the same subscriptions.
    wait_until(WAIT, "the venue lists only the new connection, subscribed again", || {
        let conns = venue.ws_connections();
        conns.len() == 1 && conns[0].id != first.id && subscribed(&conns[0])
    });
    let second = venue.ws_connections().pop().unwrap();
    assert!(!second.stalled);
    assert_eq!(venue.stats().ws_connections_open, 1);
    market.until(WAIT, "a push on the new connection", is_channel("depth_book"));
}

#[test]
fn a_dropped_connection_is_replaced_with_its_auth_and_subscriptions_restored() {
    let venue = venue();
    let (client, session) = trader(&venue, r#"{"stream_reconnect_min_ms":20}"#);
    let subs = r#"[{"channel":"price","symbol":"ETH-USD"},{"channel":"depth_book","symbol":"BTC-USD"},{"channel":"order"},{"channel":"trade"}]"#;
    let market = Stream::market(&client, Some(&session), subs).unwrap();
    let orders = Stream::orders(&client, &session).unwrap();
    let (connected, _) = orders.until(WAIT, "connected", is_status("connected"));
    market.until(WAIT, "connected", is_status("connected"));
    let expected = ["price:ETH-USD", "depth_book:BTC-USD", "order:", "trade:"];
    let market_ready =
        |c: &WsConnection| c.authenticated && sorted(subscriptions(c)) == sorted(expected.map(String::from).to_vec());
    wait_until(WAIT, "subscribed", || of(&venue, "ws-stream").first().is_some_and(market_ready));
    let before = venue.ws_connections();
    assert_eq!(before.len(), 2);

    assert_eq!(venue.ws_drop(None), 2, "a network loss, no close frame");
    for stream in [&market, &orders] {
        let (down, _) = stream.until(WAIT, "disconnected", is_status("disconnected"));
        assert_eq!(down["rotation"], false);
        let (_, between) = stream.until(WAIT, "reconnected", is_status("reconnected"));
        assert!(between.iter().any(is_status("reconnecting")), "{between:#?}");
    }
    // The auth and subscription frames follow the reconnection: the venue may read them a
    // moment later.
    wait_until(WAIT, "every subscription restored", || of(&venue, "ws-stream").first().is_some_and(market_ready));
    let after = venue.ws_connections();
    assert_eq!(after.len(), 2);
    assert!(after.iter().all(|c| before.iter().all(|b| b.id != c.id)), "{after:?}");
    wait_until(WAIT, "the order stream signed in again", || {
        of(&venue, "ws-api").first().is_some_and(|c| c.authenticated)
    });
    assert_eq!(of(&venue, "ws-api")[0].session_id.as_deref(), connected["session_id"].as_str(), "the same session_id");

    // Both work on their new connections: an order over the order stream, its account event.
    let sent = orders.new_order(RESTING_BUY).unwrap();
    orders.until(WAIT, "the outcome", reply_to(&sent["request_id"], true));
    let (event, _) = market.until(WAIT, "the order event", is_channel("order"));
    assert_eq!(event["data"]["cl_ord_id"], sent["cl_ord_id"]);
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

#[test]
fn the_venues_lifetime_cap_closes_the_connection_and_the_stream_reconnects() {
    let venue = venue_with(SandboxConfig {
        ws_timers: WsTimers { max_lifetime_ms: 600, ..short_timers() },
        ..SandboxConfig::default()
    });
    let (client, _) = trader(&venue, r#"{"stream_reconnect_min_ms":20}"#);
    let market = Stream::market(&client, None, r#"[{"channel":"price","symbol":"BTC-USD"}]"#).unwrap();
    market.until(WAIT, "connected", is_status("connected"));
    let first = venue.ws_connections().pop().unwrap();
    let (down, _) = market.until(WAIT, "disconnected", is_status("disconnected"));
    let reason = down["reason"].as_str().unwrap();
    // The venue's close code and the start of its reason (the library keeps an excerpt).
    assert!(reason.contains("code 1001") && reason.contains("connection lifet"), "{reason}");
    assert_eq!(down["rotation"], false);
    market.until(WAIT, "reconnected", is_status("reconnected"));
    venue.set_ws_timers(short_timers()); // no more cap
    // The subscription frames follow the reconnection: the venue may read them a moment later.
    wait_until(WAIT, "the subscription restored on a new connection", || {
        venue.ws_connections().iter().any(|c| c.id != first.id && subscriptions(c) == ["price:BTC-USD"])
    });
    market.until(WAIT, "a price on the new connection", is_channel("price"));
}

#[test]
fn connections_are_rotated_before_the_cap_without_a_backoff() {
    let venue = venue();
    let options = r#"{"stream_rotate_after_ms":500,"stream_reconnect_min_ms":30000,"stream_reconnect_max_ms":30000}"#;
    let (client, session) = trader(&venue, options);
    let market = Stream::market(&client, Some(&session), r#"[{"channel":"position"}]"#).unwrap();
    market.until(WAIT, "connected", is_status("connected"));
    let first = venue.ws_connections().pop().unwrap();
    let (down, _) = market.until(WAIT, "rotation", is_status("disconnected"));
    assert_eq!(down["rotation"], true, "{down}");
    let rotated = Instant::now();
    let (up, between) = market.until(WAIT, "reconnected", is_status("reconnected"));
    // A rotation that waited the backoff would take 30 s (`until` fails at 10 s first); a
    // healthy one, one connection's set-up: seconds of slack for a loaded machine.
    assert!(rotated.elapsed() < Duration::from_secs(8), "a rotation waits no backoff (30 s)");
    assert!(!between.iter().any(is_status("reconnecting")), "{between:#?}");
    assert_eq!(up["connection"], 2);
    wait_until(WAIT, "the old connection closed at the venue", || {
        venue.ws_connections().iter().all(|c| c.id != first.id)
    });
    wait_until(WAIT, "the new connection signed in and subscribed", || {
        venue.ws_connections().iter().any(|c| c.id != first.id && c.authenticated && subscriptions(c) == ["position:"])
    });
}

/// Every data event's (channel, symbol, seq), split by connection.
fn seqs_by_connection(events: &[Value]) -> Vec<Vec<(String, String, i64)>> {
    let mut out = vec![Vec::new()];
    for e in events {
        if is_status("reconnected")(e) {
            out.push(Vec::new());
        } else if let Some(seq) = e["seq"].as_i64() {
            let symbol = e["symbol"].as_str().unwrap_or("").to_owned();
            out.last_mut().unwrap().push((e["channel"].as_str().unwrap().to_owned(), symbol, seq));
        }
    }
    out
}

#[test]
fn seq_is_checked_without_false_alarms_whether_the_venue_counts_per_channel_or_per_connection() {
    for scope in [SeqScope::Channel, SeqScope::Connection] {
        let venue =
            venue_with(SandboxConfig { ws_seq_scope: scope, ws_timers: short_timers(), ..SandboxConfig::default() });
        let (client, session) = trader(&venue, r#"{"stream_reconnect_min_ms":20}"#);
        let subs = r#"[{"channel":"price","symbol":"BTC-USD"},{"channel":"price","symbol":"ETH-USD"},
            {"channel":"depth_book","symbol":"BTC-USD"},{"channel":"depth_book","symbol":"XAG-USD"},
            {"channel":"public_trade","symbol":"BTC-USD"},
            {"channel":"order"},{"channel":"trade"},{"channel":"position"},{"channel":"balance"}]"#;
        let market = Stream::market(&client, Some(&session), subs).unwrap();
        let mut events = market.collect_for(Duration::from_millis(400));
        for round in 0..4 {
            new_order(&client, &session, if round % 2 == 0 { CROSSING_BUY } else { RESTING_BUY }).unwrap();
            events.extend(market.collect_for(Duration::from_millis(150)));
            if round == 1 {
                venue.ws_drop(None);
                let (up, before) = market.until(WAIT, "reconnected", is_status("reconnected"));
                events.extend(before);
                events.push(up);
            }
        }
        events.extend(market.collect_for(Duration::from_millis(300)));
        let alarms: Vec<&Value> = events
            .iter()
            .filter(|e| is_status("gap")(e) || is_status("seq_regression")(e) || is_status("error")(e))
            .collect();
        assert!(alarms.is_empty(), "{scope:?}: {alarms:#?}");
        let connections = seqs_by_connection(&events);
        assert_eq!(connections.len(), 2, "{scope:?}: one reconnection");
        for pushes in &connections {
            assert!(pushes.iter().any(|p| p.0 == "trade") && pushes.iter().any(|p| p.0 == "depth_book"), "{pushes:?}");
            // The counting the venue used, seen from the events: per connection, one run
            // 2, 3, 4… (the auth answer took 1, and nothing was lost); per channel, each
            // channel's own run 1, 2, 3… (the account channels after the auth answer).
            match scope {
                SeqScope::Connection => {
                    let seqs: Vec<i64> = pushes.iter().map(|p| p.2).collect();
                    assert_eq!(seqs, (2..2 + seqs.len() as i64).collect::<Vec<_>>(), "{pushes:?}");
                }
                SeqScope::Channel => {
                    for channel in ["price", "depth_book", "order", "balance"] {
                        let seqs: Vec<i64> = pushes.iter().filter(|p| p.0 == channel).map(|p| p.2).collect();
                        assert_eq!(seqs, (1..=seqs.len() as i64).collect::<Vec<_>>(), "{channel}: {pushes:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn an_expired_api_token_ends_the_streams_with_a_failed_event_and_no_reconnect_loop() {
    let venue = venue();
    let credential = venue.issue_api_key(Some(2)).unwrap();
    let client = Client::new(&venue.url(), &venue.url(), Some(r#"{"stream_reconnect_min_ms":20}"#)).unwrap();
    let session = Session::from_api_key(&credential.token, &credential.private_key).unwrap();
    let market = Stream::market(&client, Some(&session), r#"[{"channel":"order"}]"#).unwrap();
    let orders = Stream::orders(&client, &session).unwrap();
    market.until(WAIT, "connected", is_status("connected"));
    orders.until(WAIT, "connected", is_status("connected"));
    // The credential's JWT carries its expiry: the connected streams go on until the venue
    // refuses (the token was sent at login; order frames carry none).
    assert_eq!(session.info()["token_expires_at"].as_i64(), Some(credential.expires_at));
    let now = perps::body_sign::now_ms() / 1000;
    std::thread::sleep(Duration::from_millis((credential.expires_at + 1 - now).max(0) as u64 * 1000));
    let sent = orders.new_order(RESTING_BUY).unwrap();
    let (refused, _) = orders.until(WAIT, "the refusal", reply_to(&sent["request_id"], true));
    assert_eq!((refused["code"].as_i64(), refused["message"].as_str()), (Some(401), Some("token expired")));

    // Dropped, neither reconnects: the token is past its exp, so nothing is sent with it.
    let opened = venue.stats().ws_connections_opened;
    venue.ws_drop(None);
    for stream in [&market, &orders] {
        let (failed, _) = stream.until(WAIT, "failed", is_status("failed"));
        assert_eq!(failed["code_name"], "PERPS_TOKEN_EXPIRED", "{failed}");
        assert!(failed["message"].as_str().unwrap().contains("new API credential"), "{failed}");
        let closed = stream.next(1000).unwrap_err();
        assert_eq!(closed.code, PERPS_STREAM_CLOSED);
        assert!(closed.message.contains("token expired"), "{closed:?}");
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(venue.stats().ws_connections_opened, opened, "no connection with the expired token");
}

#[test]
fn a_signed_in_token_past_its_expiry_ends_the_stream_before_connecting_again() {
    let venue = venue();
    let client = Client::new(&venue.url(), &venue.url(), Some(r#"{"stream_reconnect_min_ms":20}"#)).unwrap();
    let session = Session::new();
    common::abi::signin(&client, &session, "bsc", BSC_KEY, 2).unwrap();
    let expires_at = session.info()["token_expires_at"].as_i64().unwrap();
    let market = Stream::market(&client, Some(&session), r#"[{"channel":"balance"}]"#).unwrap();
    market.until(WAIT, "connected", is_status("connected"));
    let now = perps::body_sign::now_ms() / 1000;
    std::thread::sleep(Duration::from_millis((expires_at + 1 - now).max(0) as u64 * 1000));
    let opened = venue.stats().ws_connections_opened;
    venue.ws_drop(None);
    let (failed, _) = market.until(WAIT, "failed", is_status("failed"));
    assert_eq!(failed["code_name"], "PERPS_TOKEN_EXPIRED", "{failed}");
    assert_eq!(market.next(1000).unwrap_err().code, PERPS_STREAM_CLOSED);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(venue.stats().ws_connections_opened, opened, "the library did not even try");
}

#[test]
fn a_burst_of_opens_meets_the_limits_locally_never_the_venues_429() {
    // Both sides at the venue's limits: 10 open per IP, 30 new a minute.
    let venue = venue();
    let client = Client::new(&venue.url(), &venue.url(), None).unwrap();
    let subs = r#"[{"channel":"price","symbol":"BTC-USD"}]"#;
    let open_burst = |n: usize| -> Vec<Result<Stream, common::abi::Failure>> {
        std::thread::scope(|s| {
            let opens: Vec<_> = (0..n).map(|_| s.spawn(|| Stream::market(&client, None, subs))).collect();
            opens.into_iter().map(|o| o.join().unwrap()).collect()
        })
    };
    let closed_at_venue =
        |venue: &Sandbox| wait_until(WAIT, "the venue saw every close", || venue.ws_connections().is_empty());

    // 12 at once: 10 open, 2 refused here with nothing sent.
    let (opened, refused): (Vec<_>, Vec<_>) = open_burst(12).into_iter().partition(Result::is_ok);
    assert_eq!((opened.len(), refused.len()), (10, 2), "{refused:?}");
    for failure in refused.into_iter().map(Result::unwrap_err) {
        assert_eq!(failure.code, PERPS_STREAM_LIMIT, "{failure:?}");
        assert!(failure.message.contains("10 WebSocket connections"), "{failure:?}");
    }
    assert_eq!((venue.stats().ws_connections_open, venue.stats().ws_connections_refused), (10, 0));
    drop(opened);
    closed_at_venue(&venue);

    // 20 more within the minute (10 at a time), then the 31st is refused here.
    for _ in 0..2 {
        let batch = open_burst(10);
        assert!(batch.iter().all(Result::is_ok));
        drop(batch);
        closed_at_venue(&venue);
    }
    let failure = Stream::market(&client, None, subs).expect_err("the 31st new connection in a minute");
    assert_eq!(failure.code, PERPS_STREAM_LIMIT);
    assert!(failure.message.contains("in the last minute"), "{failure:?}");
    let stats = venue.stats();
    assert_eq!((stats.ws_connections_opened, stats.ws_connections_refused), (30, 0), "never the venue's 429");
}
