//! The test venue of `tests/common/ws_server.rs` as a program, for the C and C++ stream
//! tests (`tests/c/run.sh`, `tests/cpp/run.sh` start it): prints its `perps_url`
//! (`http://127.0.0.1:PORT`, from which the client derives both stream URLs) on the first
//! line, then pings every 100 ms and pushes a `price` event on BTC-USD every 20 ms to its
//! subscribers, answers orders with an ack and a success, and exits after `SECONDS`
//! (first argument, default 600) or when its standard input closes.

#[path = "ws_server.rs"]
mod ws_server;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

fn main() {
    let seconds: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(600);
    let server = ws_server::WsServer::start(ws_server::Config {
        ping_every: Some(Duration::from_millis(100)),
        ..ws_server::Config::default()
    });
    println!("{}", server.perps_url());
    std::io::stdout().flush().unwrap();
    let stdin_closed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    std::thread::spawn({
        let stdin_closed = stdin_closed.clone();
        move || {
            let mut sink = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut sink);
            stdin_closed.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut n: u64 = 0;
    while Instant::now() < deadline && !stdin_closed.load(std::sync::atomic::Ordering::SeqCst) {
        n += 1;
        server.push("price", Some("BTC-USD"), serde_json::json!({ "mark_price": format!("65000.{n}") }));
        std::thread::sleep(Duration::from_millis(20));
    }
}
