//! 100 forced drops of a market stream and of an order stream: 100 `reconnected` events
//! each, with the auth and every subscription sent again on each new connection, and no
//! thread or file descriptor left behind once the streams are freed. One test in its own
//! binary, so that no other test's threads or sockets blur the counts.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "common/ws_server.rs"]
mod ws_server;

use helpers::*;
use perps::stream::Stream;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Duration;
use ws_server::{Config, WsServer};

const DROPS: usize = 100;

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

fn fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Thread and fd counts once they have stayed the same for 200 ms (at most 5 s).
fn settled_counts() -> (usize, usize) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut last = (threads(), fds());
    let mut stable_since = std::time::Instant::now();
    while std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        let now = (threads(), fds());
        if now != last {
            (last, stable_since) = (now, std::time::Instant::now());
        } else if stable_since.elapsed() >= Duration::from_millis(200) {
            break;
        }
    }
    last
}

#[test]
fn a_hundred_forced_drops_give_a_hundred_reconnections_with_subscriptions_restored_and_no_leak() {
    let server = WsServer::start(Config::default());
    let client = client(&server.perps_url(), "{}");
    let session = session();
    // Warm-up: lazily created process state (TLS roots, the limiter's table) is not a leak.
    drop(Stream::open_market(client.clone(), None, r#"[{"channel":"price","symbol":"BTC-USD"}]"#).unwrap());
    server.wait_for(LONG, "the warm-up connection to close", |c| c.iter().all(|c| c.closed.load(Ordering::SeqCst)));
    // "Closed" is seen before the warm-up's threads (the stream's I/O thread, the test
    // venue's connection thread) have ended: count once the numbers have settled.
    let (threads_before, fds_before) = settled_counts();

    let subs = r#"[{"channel":"price","symbol":"BTC-USD"},{"channel":"depth_book","symbol":"ETH-USD"},{"channel":"order"},{"channel":"trade"}]"#;
    let market = Stream::open_market(client.clone(), Some(session.clone()), subs).unwrap();
    let orders = Stream::open_orders(client.clone(), session).unwrap();
    until(&market, LONG, "market connected", is_status("connected"));
    until(&orders, LONG, "orders connected", is_status("connected"));
    for round in 1..=DROPS {
        server.wait_for(LONG, "both streams live", |c| {
            let open: Vec<_> = c.iter().filter(|c| !c.closed.load(Ordering::SeqCst)).collect();
            open.len() == 2
                && open.iter().all(|c| c.authed.load(Ordering::SeqCst))
                && open.iter().filter(|c| c.is_market()).all(|c| c.subscriptions.lock().unwrap().len() == 4)
        });
        server.drop_all();
        let (up, _) = until(&market, LONG, "market reconnected", is_status("reconnected"));
        assert_eq!(up["connection"], round + 1);
        let (up, _) = until(&orders, LONG, "orders reconnected", is_status("reconnected"));
        assert_eq!(up["connection"], round + 1);
    }
    // Every market connection (1 + 100, after the warm-up) authenticated with the account
    // channels and subscribed to both public ones.
    server.wait_for(LONG, "the last subscriptions", |c| {
        c.iter().rfind(|c| c.is_market()).is_some_and(|c| c.subscriptions.lock().unwrap().len() == 4)
    });
    let conns = server.conns();
    let market_conns: Vec<_> = conns.iter().filter(|c| c.is_market()).skip(1).collect();
    assert_eq!(market_conns.len(), DROPS + 1);
    for conn in &market_conns {
        let frames = conn.frames();
        assert_eq!(
            frames[0]["auth"]["streams"],
            json!([{ "channel": "order" }, { "channel": "trade" }]),
            "conn {}",
            conn.id
        );
        let mut subs: Vec<_> = conn.subscriptions.lock().unwrap().clone();
        subs.sort();
        assert_eq!(subs.len(), 4, "conn {}: {subs:?}", conn.id);
    }
    let order_conns: Vec<_> = conns.iter().filter(|c| !c.is_market()).collect();
    assert_eq!(order_conns.len(), DROPS + 1);
    assert!(order_conns.iter().all(|c| c.frames()[0]["method"] == "auth:login"));
    // Still serving after all that.
    server.push("price", Some("BTC-USD"), json!({ "mark_price": "1" }));
    until(&market, LONG, "a push", is_channel("price"));

    drop((market, orders));
    server.wait_for(LONG, "every connection closed", |c| c.iter().all(|c| c.closed.load(Ordering::SeqCst)));
    // The I/O threads have been joined; give the test venue's own threads a moment to end.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while (threads() > threads_before || fds() > fds_before) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(threads(), threads_before, "threads left behind");
    assert_eq!(fds(), fds_before, "file descriptors left behind");
}
