//! Pipelined order entry (BENCHMARKS.md, "Streams"; issue 14 target: ≥ 10× the rate of
//! sequential REST orders): N orders on one order stream, each sent as soon as the previous
//! one is written (`Stream::new_order` returns without waiting for the venue), until the
//! venue's final reply of every one has come back — against N REST `new_order` calls, each
//! waiting for its answer, on the same client, session and in-process sandbox venue, in the
//! same run. Orders rest far below the mark, so the venue's matching is the same both ways.
//!
//! `cargo bench --bench pipelined_orders`; `-- --test` runs a short round (bench/smoke.sh).
//! Env: PERPS_BENCH_ORDERS (10000), PERPS_BENCH_ROUNDS (3; the ratio of each round is printed
//! and the median is the result).

use perps::client::Client;
use perps::client::options::ClientOptions;
use perps::session::Session;
use perps::stream::Stream;
use perps_sandbox::{Sandbox, SandboxConfig};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A buy far below the mark (65000): it rests, nothing fills.
fn order(n: usize) -> String {
    format!(
        r#"{{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"{}","time_in_force":"gtc","reduce_only":false}}"#,
        50_000 + n % 1000
    )
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Sequential REST orders per second.
fn rest_rate(client: &Client, session: &Session, orders: usize) -> f64 {
    let started = Instant::now();
    for n in 0..orders {
        let answer = client.new_order(session, &order(n)).expect("a REST order");
        assert!(answer.contains("\"code\":0"), "{answer}");
    }
    orders as f64 / started.elapsed().as_secs_f64()
}

/// Pipelined stream orders per second, from the first send to the last final reply; and the
/// rate at which the calls returned (the library's side: every order signed and written).
fn stream_rate(client: &Arc<Client>, session: &Arc<Session>, orders: usize) -> (f64, f64) {
    let stream = Stream::open_orders(client.clone(), session.clone()).expect("the order stream opens");
    // Past the connected status event: the stream is signed in.
    loop {
        let event = stream.next(Some(Duration::from_secs(10))).unwrap().expect("connected");
        if event.contains("\"state\":\"connected\"") {
            break;
        }
    }
    let started = Instant::now();
    let finals = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut finals = 0;
            while finals < orders {
                let event = stream.next(Some(Duration::from_secs(30))).unwrap().expect("a reply within 30 s");
                if event.contains("\"final\":true") {
                    assert!(event.contains("\"code\":0"), "{event}");
                    finals += 1;
                }
            }
            finals
        });
        for n in 0..orders {
            stream.new_order(&order(n)).expect("written");
        }
        let written = orders as f64 / started.elapsed().as_secs_f64();
        (reader.join().unwrap(), written)
    });
    let rate = finals.0 as f64 / started.elapsed().as_secs_f64();
    stream.close();
    (rate, finals.1)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--test");
    let orders = if quick { 200 } else { env_or("PERPS_BENCH_ORDERS", 10_000) };
    let rounds = if quick { 1 } else { env_or("PERPS_BENCH_ROUNDS", 3) };
    let venue = Sandbox::start(SandboxConfig { market_walk_ms: 0, ..SandboxConfig::default() }).expect("sandbox");
    let options = ClientOptions::parse(Some(r#"{"stream_connects_per_minute":1000}"#)).unwrap();
    let client = Arc::new(Client::new(&venue.url(), &venue.url(), options).unwrap());
    let credential = venue.issue_api_key(None).unwrap();
    let session = Arc::new(Session::from_api_key(&credential.token, &credential.private_key).unwrap());
    let mut ratios = Vec::new();
    for round in 1..=rounds {
        // Alternate which goes first, so neither always meets the fuller book.
        let (rest, (stream, written)) = if round % 2 == 1 {
            let rest = rest_rate(&client, &session, orders);
            (rest, stream_rate(&client, &session, orders))
        } else {
            let stream = stream_rate(&client, &session, orders);
            (rest_rate(&client, &session, orders), stream)
        };
        let ratio = stream / rest;
        println!(
            "pipelined orders, round {round}: {orders} on one order stream {stream:.0}/s (calls returned at {written:.0}/s), sequential REST {rest:.0}/s: {ratio:.2}×"
        );
        ratios.push(ratio);
    }
    ratios.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("pipelined orders: median ratio {:.2}× over {rounds} round(s) (target ≥ 10×)", ratios[rounds / 2]);
}
