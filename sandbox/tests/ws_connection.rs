//! Connection management of both WebSockets with short timers: the server's pings, the 408
//! close without Pongs, the lifetime cap, the per-IP limits, the admin controls (drop,
//! stall, timers, listing, counters) over HTTP and in Rust, TLS, and the binary's flags.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::ws::{Client, Ended, request};
use common::{Trader, exchange};
use perps_sandbox::{Sandbox, SandboxConfig, WsTimers};
use serde_json::{Value, json};
use tungstenite::Message;

const WAIT: Duration = Duration::from_secs(5);

fn with_timers(timers: WsTimers) -> Sandbox {
    Sandbox::start(SandboxConfig { ws_timers: timers, ..Default::default() }).unwrap()
}

fn admin(sb: &Sandbox, method: &str, path: &str, body: &str) -> (u16, Value) {
    exchange(&common::agent(), method, &format!("{}/{path}", sb.admin_url()), &[], body)
}

/// Waits until the sandbox lists `n` WebSocket connections.
fn wait_listed(sb: &Sandbox, n: usize) {
    let deadline = Instant::now() + WAIT;
    while sb.ws_connections().len() != n {
        assert!(Instant::now() < deadline, "expected {n} connections: {:?}", sb.ws_connections());
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn pings_come_at_the_interval_and_answered_ones_keep_the_connection() {
    let sb = with_timers(WsTimers { ping_interval_ms: 50, pong_timeout_ms: 300, ..WsTimers::default() });
    let mut c = Client::connect(&sb.ws_stream_url());
    let (seen, ended) = c.until_end(Duration::from_millis(800));
    assert!(ended.is_none(), "tungstenite answers every ping, so the connection stays: {ended:?}");
    let pings = seen.iter().filter(|m| matches!(m, Message::Ping(_))).count();
    assert!((5..=17).contains(&pings), "about one ping per 50 ms in 800 ms: {pings}");
    let stats = sb.stats();
    assert!(stats.ws_pings >= pings as u64 && stats.ws_pongs >= 1, "{stats:?}");
}

#[test]
fn no_pong_closes_with_the_venues_408_frame() {
    let sb = with_timers(WsTimers { ping_interval_ms: 50, pong_timeout_ms: 300, ..WsTimers::default() });
    let mut c = Client::connect(&sb.ws_stream_url());
    // Not reading means not answering the pings.
    std::thread::sleep(Duration::from_millis(500));
    let (_, ended) = c.until_end(WAIT);
    match ended {
        Some(Ended::Closed(code, reason)) => {
            assert_eq!(code, 1008);
            let body: Value = serde_json::from_str(&reason).unwrap();
            assert_eq!(
                body,
                json!({"code": 408, "message": "disconnecting due to not receive Pong within 5 minute period"})
            );
        }
        other => panic!("expected the 408 close frame, got {other:?}"),
    }
    wait_listed(&sb, 0);
}

#[test]
fn the_lifetime_cap_closes_and_can_be_shortened_while_running() {
    let sb = with_timers(WsTimers { max_lifetime_ms: 300, ..WsTimers::default() });
    let started = Instant::now();
    let mut c = Client::connect(&sb.ws_api_url());
    let (_, ended) = c.until_end(WAIT);
    let Some(Ended::Closed(1001, reason)) = ended else { panic!("expected a 1001 close, got {ended:?}") };
    assert!(reason.contains("lifetime"), "{reason}");
    assert!(started.elapsed() >= Duration::from_millis(290), "{:?}", started.elapsed());

    // A long cap, shortened over HTTP for the connection already open.
    let sb = common::sandbox();
    let mut c = Client::connect(&sb.ws_stream_url());
    wait_listed(&sb, 1);
    assert_eq!(admin(&sb, "GET", "ws/timers", "").1, json!(WsTimers::default()));
    let (status, timers) = admin(&sb, "POST", "ws/timers", r#"{"max_lifetime_ms": 100, "price_interval_ms": 20}"#);
    assert_eq!(status, 200);
    assert_eq!(
        (&timers["max_lifetime_ms"], &timers["price_interval_ms"], &timers["ping_interval_ms"]),
        (&json!(100), &json!(20), &json!(10_000))
    );
    assert_eq!(sb.ws_timers().max_lifetime_ms, 100);
    let (_, ended) = c.until_end(WAIT);
    assert!(matches!(ended, Some(Ended::Closed(1001, _))), "{ended:?}");
    assert_eq!(admin(&sb, "POST", "ws/timers", r#"{"ping_every": 1}"#).0, 400);
    assert_eq!(admin(&sb, "POST", "ws/timers", r#"{"ping_interval_ms": -1}"#).0, 400);
}

#[test]
fn connection_limits_per_ip_refuse_the_handshake_with_429() {
    let config =
        SandboxConfig { ws_max_connections_per_ip: 3, ws_max_new_connections_per_minute: 5, ..Default::default() };
    let sb = Sandbox::start(config).unwrap();
    let mut open: Vec<Client> = vec![
        Client::connect(&sb.ws_stream_url()),
        Client::connect(&sb.ws_api_url()),
        Client::connect(&sb.ws_stream_url()),
    ];
    let refused = |url: &str| match Client::try_connect(url) {
        Err(tungstenite::Error::Http(response)) => {
            let body: Value = serde_json::from_slice(response.body().as_deref().unwrap()).unwrap();
            let retry = response.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
            (response.status().as_u16(), body, retry)
        }
        Ok(_) => panic!("connected beyond the limit"),
        Err(e) => panic!("unexpected error {e}"),
    };
    let (status, body, retry) = refused(&sb.ws_api_url());
    assert_eq!((status, &body["code"], retry), (429, &json!(429), None));
    assert!(body["message"].as_str().unwrap().contains("3 open, the limit is 3"), "{body}");
    // One closes: room for two more new ones this minute (5 in all).
    for _ in 0..2 {
        drop(open.pop());
        wait_listed(&sb, 2);
        open.push(Client::connect(&sb.ws_stream_url()));
    }
    drop(open.pop());
    wait_listed(&sb, 2);
    let (status, body, retry) = refused(&sb.ws_stream_url());
    assert_eq!(status, 429);
    assert!(body["message"].as_str().unwrap().contains("5 in the last minute"), "{body}");
    let retry: u64 = retry.expect("Retry-After").parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    let stats = sb.stats();
    assert_eq!((stats.ws_connections_opened, stats.ws_connections_refused, stats.ws_connections_open), (5, 2, 2));
}

#[test]
fn drop_and_stall_over_http_and_in_rust() {
    let sb = with_timers(WsTimers { ping_interval_ms: 50, price_interval_ms: 30, ..WsTimers::default() });
    let t = Trader::with_api_key(&sb);
    let mut stream = Client::connect(&sb.ws_stream_url());
    stream.send(&json!({"subscribe": {"channel": "price", "symbol": "BTC-USD"}}));
    stream.next_json(WAIT).expect("a price");
    let mut api = Client::connect(&sb.ws_api_url());
    api.send(&request("s-1", "login", "auth:login", &json!({"token": t.token})));
    assert_eq!(api.next_json(WAIT).unwrap()["code"], 0);

    let (status, listed) = admin(&sb, "GET", "ws/connections", "");
    assert_eq!(status, 200);
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(
        (&listed[0]["endpoint"], &listed[0]["subscriptions"]),
        (&json!("ws-stream"), &json!([{"channel": "price", "symbol": "BTC-USD"}]))
    );
    assert_eq!(
        (&listed[1]["endpoint"], &listed[1]["session_id"], &listed[1]["authenticated"]),
        (&json!("ws-api"), &json!("s-1"), &json!(true))
    );
    assert!(listed[0]["peer"].as_str().unwrap().starts_with("127.0.0.1:"));
    let stream_id = listed[0]["id"].as_u64().unwrap();

    // Stall everything: nothing is read or written (no price, no ping), nothing is closed.
    assert_eq!(admin(&sb, "POST", "ws/stall", "").1, json!({"stalled": 2}));
    assert!(sb.ws_connections().iter().all(|c| c.stalled));
    let _ = stream.until_end(Duration::from_millis(100));
    let (quiet, ended) = stream.until_end(Duration::from_millis(400));
    assert!(quiet.is_empty() && ended.is_none(), "a stalled connection is silent and open: {quiet:?} {ended:?}");
    api.send(&request("s-1", "while-stalled", "auth:login", &json!({"token": t.token})));
    assert!(api.next_json(Duration::from_millis(300)).is_none(), "nor does it answer");
    // Resumed: the queued request is answered and pushes flow again.
    assert_eq!(sb.ws_stall(None, false), 2);
    assert_eq!(api.next_json(WAIT).unwrap()["request_id"], "while-stalled");
    stream.next_json(WAIT).expect("prices again");

    // Stall one (Rust), drop one by id (HTTP), then all.
    assert_eq!(sb.ws_stall(Some(stream_id), true), 1);
    assert_eq!(sb.ws_connections().iter().filter(|c| c.stalled).count(), 1);
    assert_eq!(admin(&sb, "POST", "ws/drop", &json!({"id": stream_id}).to_string()).1, json!({"dropped": 1}));
    let (_, ended) = stream.until_end(WAIT);
    assert!(matches!(ended, Some(Ended::Dropped(_))), "dropped without a close frame: {ended:?}");
    wait_listed(&sb, 1);
    assert_eq!(admin(&sb, "POST", "ws/drop", "{}").1, json!({"dropped": 1}));
    let (_, ended) = api.until_end(WAIT);
    assert!(matches!(ended, Some(Ended::Dropped(_))), "{ended:?}");
    wait_listed(&sb, 0);
    assert_eq!(sb.ws_drop(None), 0);
    // A stalled connection ends when its client hangs up (nobody can tell it apart then).
    let gone = Client::connect(&sb.ws_stream_url());
    wait_listed(&sb, 1);
    assert_eq!(sb.ws_stall(None, true), 1);
    drop(gone);
    wait_listed(&sb, 0);
    assert_eq!(admin(&sb, "POST", "ws/stall", r#"{"id":1,"stal":true}"#).0, 400);
    assert_eq!(admin(&sb, "GET", "ws/drop", "").0, 405);
}

#[test]
fn wss_in_tls_mode() {
    let sb = Sandbox::start(SandboxConfig { tls: true, ..Default::default() }).unwrap();
    let token = sb.issue_api_key(None).unwrap().token;
    assert!(sb.ws_stream_url().starts_with("wss://127.0.0.1:"));
    let ca = sb.ca_file().unwrap();
    let mut stream = Client::connect_tls(&sb.ws_stream_url(), ca);
    stream.send(&json!({"auth": {"token": token, "streams": [{"channel": "balance"}]}}));
    assert_eq!(stream.next_json(WAIT).unwrap()["data"]["code"], 200);
    stream.send(&json!({"subscribe": {"channel": "depth_book", "symbol": "ETH-USD"}}));
    let book = stream.expect(WAIT, "depth_book", |v| v["channel"] == "depth_book");
    assert_eq!(book["data"]["asks"].as_array().unwrap().len(), 10);
    let mut api = Client::connect_tls(&format!("{}/perps/ws-api/v1", sb.url().replace("https", "wss")), ca);
    api.send(&request("tls-session", "login", "auth:login", &json!({"token": token})));
    assert_eq!(api.next_json(WAIT).unwrap()["code"], 0);
    let listed = sb.ws_connections();
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|c| c.peer.starts_with("127.0.0.1:")), "{listed:?}");
    assert_eq!(sb.ws_drop(None), 2);
    assert!(matches!(stream.until_end(WAIT).1, Some(Ended::Dropped(_))));
}

#[test]
fn the_binary_takes_the_ws_flags() {
    let bin = env!("CARGO_BIN_EXE_perps-sandbox");
    let mut child = Command::new(bin)
        .args(["--walk-ms", "0", "--ws-ping-interval-ms", "40", "--ws-ack-style", "message", "--ws-auth-code", "0"])
        .args(["--ws-max-connections-per-ip", "1", "--exit-on-stdin-eof"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url: Value = serde_json::from_str(&line).unwrap();
    let url = url["url"].as_str().unwrap().replace("http", "ws");
    let mut c = Client::connect(&format!("{url}/ws-stream/v1"));
    assert!(matches!(Client::try_connect(&format!("{url}/ws-api/v1")), Err(tungstenite::Error::Http(_))), "one per IP");
    let (seen, _) = c.until_end(Duration::from_millis(300));
    assert!(seen.iter().filter(|m| matches!(m, Message::Ping(_))).count() >= 3, "{seen:?}");
    c.send(&json!({"auth": {"token": "x"}}));
    assert_eq!(c.next_json(WAIT).unwrap()["data"]["code"], 401);
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    for bad in [["--ws-ack-style", "loud"], ["--ws-auth-code", "1"], ["--ws-seq-scope", "global"]] {
        let out = Command::new(bin).args(bad).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}
