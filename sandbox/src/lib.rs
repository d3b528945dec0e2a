//! A sandbox venue: a paper-trading perpetual-futures venue on loopback that behaves like
//! the live one (`venue-api.md`, issues 13 and 17): wallet sign-in, body signatures, symbols
//! with the venue's rules, a seeded synthetic market per symbol, matching, positions,
//! balance and trades, every REST endpoint of the trading loop, both WebSockets (market and
//! account stream, order entry), the rate limit, and controls for rehearsals (faults, clock,
//! mark, funding, request log, WebSocket drops, stalls and timers). Its own crate: it shares no code with
//! the library (the `perps` crate), so the two cannot share a mistake.
//!
//! URLs (see `server`): everything at the root (`/v1/offchain/*`, `/api/*`) and under the
//! earlier prefixes (`/auth/v1/offchain/*`, `/perps/api/*`); the two WebSockets at
//! `/ws-stream/v1` and `/ws-api/v1` (and under `/perps`, see `ws`); admin at `/_sandbox/*`.
//! `sandbox/README.md` documents every endpoint, flag and behaviour.

mod admin;
mod api;
mod auth;
mod body_verify;
mod chain;
mod clock;
mod config;
mod decimal;
mod engine;
mod es256;
mod faults;
mod http;
mod market;
mod order_check;
mod random;
mod rate_limit;
mod replay;
mod request_key;
mod request_log;
mod rng;
mod server;
mod socket;
mod state;
mod symbols;
mod tls;
mod wallet_verify;
mod ws;

pub use config::{CancelOrdersAnswer, SandboxConfig};
pub use faults::{Faults, Stats};
pub use symbols::{MarketSpec, SymbolSpec};
pub use ws::{AckStyle, SeqScope, WsConnection, WsSubscription, WsTimers};

use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use decimal::Dec;
use engine::events::Event;
use state::{Session, Shared};

/// A running sandbox venue. Dropping it stops the workers, the listener and every client
/// connection, joins the threads and removes the CA file of TLS mode.
pub struct Sandbox {
    shared: Arc<Shared>,
    server: Option<Arc<tiny_http::Server>>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// The address clients connect to (the TLS front's in TLS mode).
    public: SocketAddr,
    ca_file: Option<PathBuf>,
    /// Copies of the listening sockets, closed only after the last scan of `drop`. The scan
    /// finds accepted connections by their local port; once a listener is closed, the kernel
    /// may give its port to a new outgoing connection of this same process (another
    /// sandbox's client, in a test binary), which the scan would then shut down. While a
    /// copy keeps the port bound, no outgoing connection can take it.
    port_guards: Vec<TcpListener>,
}

/// An API credential issued by the sandbox, as the venue's web site issues them: a
/// JWT-shaped token and the Ed25519 key that signs request bodies.
#[derive(Clone, Debug, Serialize)]
pub struct ApiCredential {
    /// The bearer token: an ES256 JWT whose `exp` the sandbox enforces (401 after it).
    pub token: String,
    /// The 32-byte Ed25519 seed, base58 (what the venue's web site hands out).
    pub private_key: String,
    /// Base58 of the public key (`requestId` in the token).
    pub public_key: String,
    /// Unix seconds on the venue clock.
    pub expires_at: i64,
}

// Tests share one sandbox between threads (or keep it in a static): keep it Send + Sync.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Sandbox>();
};

impl Sandbox {
    /// Binds `config.host:config.port`, starts `config.worker_threads` workers, the walk of
    /// the marks (`market_walk_ms` > 0) and, with `tls`, the TLS front.
    pub fn start(config: SandboxConfig) -> io::Result<Sandbox> {
        config.validate()?;
        let host: IpAddr = config.host.parse().expect("validated");
        let public_listener = TcpListener::bind((host, config.port))?;
        let public = public_listener.local_addr()?;
        // In TLS mode tiny_http listens on loopback behind the front.
        let (http_listener, front) = if config.tls {
            (TcpListener::bind(("127.0.0.1", 0))?, Some(public_listener))
        } else {
            (public_listener, None)
        };
        socket::set_nodelay_inherited(&http_listener);
        let inner = http_listener.local_addr()?;
        let mut port_guards = vec![http_listener.try_clone()?];
        if let Some(front) = &front {
            port_guards.push(front.try_clone()?);
        }
        let server = Arc::new(tiny_http::Server::from_listener(http_listener, None).map_err(io::Error::other)?);
        let (walk_ms, workers, tls_dir) = (config.market_walk_ms, config.worker_threads.max(1), config.tls_dir.clone());
        let shared = Arc::new(Shared::new(config, inner));
        let stop = Arc::new(AtomicBool::new(false));
        let mut sandbox = Sandbox {
            shared,
            server: Some(server.clone()),
            stop,
            threads: Vec::new(),
            public,
            ca_file: None,
            port_guards,
        };
        for i in 0..workers {
            let (server, shared, stop) = (server.clone(), sandbox.shared.clone(), sandbox.stop.clone());
            let worker = std::thread::Builder::new()
                .name(format!("perps-sandbox-{i}"))
                .spawn(move || server::work(&server, &shared, &stop))?;
            sandbox.threads.push(worker);
        }
        if walk_ms > 0 {
            let (shared, stop) = (sandbox.shared.clone(), sandbox.stop.clone());
            let walker = std::thread::Builder::new()
                .name("perps-sandbox-walk".into())
                .spawn(move || walk(&shared, &stop, Duration::from_millis(walk_ms)))?;
            sandbox.threads.push(walker);
        }
        if let Some(front) = front {
            let certificates = tls::generate(host)?;
            let dir = tls_dir.unwrap_or_else(std::env::temp_dir);
            sandbox.ca_file = Some(tls::write_ca(&dir, public.port(), &certificates.ca_pem)?);
            let peers = sandbox.shared.relayed.clone();
            sandbox.threads.push(tls::serve(front, inner, certificates.config, sandbox.stop.clone(), peers)?);
        }
        Ok(sandbox)
    }

    /// The root, `http://127.0.0.1:PORT` (`https://` in TLS mode): both `base_url` and
    /// `perps_url` may be this (the venue's paths do not collide).
    pub fn url(&self) -> String {
        let scheme = if self.ca_file.is_some() { "https" } else { "http" };
        let host = match self.public.ip() {
            ip if ip.is_unspecified() => "127.0.0.1".to_owned(),
            IpAddr::V6(ip) => format!("[{ip}]"),
            IpAddr::V4(ip) => ip.to_string(),
        };
        format!("{scheme}://{host}:{}", self.public.port())
    }

    /// `{url}/auth`: prepare-signin, certs and login live under it (and at the root).
    pub fn base_url(&self) -> String {
        format!("{}/auth", self.url())
    }

    /// `{url}/perps`: the trading endpoints live under it (and at the root).
    pub fn perps_url(&self) -> String {
        format!("{}/perps", self.url())
    }

    /// `{url}/_sandbox`: the admin endpoints.
    pub fn admin_url(&self) -> String {
        format!("{}/_sandbox", self.url())
    }

    pub fn port(&self) -> u16 {
        self.public.port()
    }

    /// TLS mode: the PEM file of the CA that signed the server certificate (for a client's
    /// `ca_bundle_path`). Removed when the sandbox is dropped.
    pub fn ca_file(&self) -> Option<&Path> {
        self.ca_file.as_deref()
    }

    /// Replaces the whole fault set; it stays until replaced again (or used up: `times`).
    pub fn set_faults(&self, faults: Faults) {
        self.shared.state().faults = faults;
    }

    /// The fault set now in force (one-shot counts as left).
    pub fn faults(&self) -> Faults {
        self.shared.state().faults.clone()
    }

    /// Signs with a new ES256 key (new kid) from now on; certs serve only the new key.
    /// Challenges signed before still verify at login.
    pub fn rotate_key(&self) {
        self.shared.keys().rotate();
    }

    pub fn stats(&self) -> Stats {
        self.shared.stats()
    }

    /// The last `n` requests (admin requests excluded), oldest first: method, path, raw
    /// query, headers (bearer token and signature masked), body, status and verdict.
    pub fn requests(&self, n: usize) -> Vec<Value> {
        self.shared.log().last(n)
    }

    /// Moves a symbol's mark to `price` (on the tick): the book is rebuilt around it and
    /// resting orders it reached fill.
    pub fn set_mark(&self, symbol: &str, price: &str) -> Result<(), String> {
        set_mark(&self.shared, symbol, price).map(|_| ())
    }

    /// Settles funding now at `rate` (a decimal string; positive: longs pay shorts) on
    /// `symbol`, or on every symbol with `None`: every open position of every account pays
    /// or receives `qty × mark × rate`, rounded to nine decimals, from its wallet, and gets a
    /// `query_funding_history` row. Returns how many rows were written.
    pub fn settle_funding(&self, symbol: Option<&str>, rate: &str) -> Result<usize, String> {
        settle_funding(&self.shared, symbol, rate)
    }

    /// The venue clock becomes the system clock plus `offset_ms`, at once.
    pub fn set_clock_offset_ms(&self, offset_ms: i64) {
        self.shared.clock.set_offset_ms(offset_ms);
    }

    pub fn clock_offset_ms(&self) -> i64 {
        self.shared.clock.offset_ms()
    }

    /// Issues an API credential valid for `expires_seconds` (default 7 days, the venue's
    /// token lifetime).
    pub fn issue_api_key(&self, expires_seconds: Option<i64>) -> Result<ApiCredential, String> {
        issue_api_key(&self.shared, expires_seconds)
    }

    /// `ws://127.0.0.1:PORT/ws-stream/v1` (`wss://` in TLS mode): market data and, after an
    /// auth frame, the account channels. Also served under `/perps`.
    pub fn ws_stream_url(&self) -> String {
        format!("{}/ws-stream/v1", self.url().replacen("http", "ws", 1))
    }

    /// `ws://127.0.0.1:PORT/ws-api/v1` (`wss://` in TLS mode): order entry. Also served under
    /// `/perps`.
    pub fn ws_api_url(&self) -> String {
        format!("{}/ws-api/v1", self.url().replacen("http", "ws", 1))
    }

    /// The open WebSocket connections: id, endpoint, peer, session_id, authenticated,
    /// subscriptions, stalled, age, frames.
    pub fn ws_connections(&self) -> Vec<WsConnection> {
        self.shared.ws.connections()
    }

    /// Ends WebSocket connections at once, without a close frame (a network loss as the
    /// client sees it): the one with `id`, or every one with `None`. Returns how many.
    pub fn ws_drop(&self, id: Option<u64>) -> usize {
        self.shared.ws.drop_connections(id)
    }

    /// Stalls WebSocket connections (`stall` true) or resumes them: a stalled connection is
    /// neither read nor written and its timers stop, but its socket stays open (half-open as
    /// the client sees it) until the client hangs up. The one with `id`, or every one with
    /// `None`. Returns how many.
    pub fn ws_stall(&self, id: Option<u64>, stall: bool) -> usize {
        self.shared.ws.stall(id, stall)
    }

    /// The WebSocket timers in force.
    pub fn ws_timers(&self) -> WsTimers {
        self.shared.ws.timers()
    }

    /// New WebSocket timers, at once, for open connections too
    /// (`WsTimers { ping_interval_ms: 100, ..venue.ws_timers() }`).
    pub fn set_ws_timers(&self, timers: WsTimers) {
        self.shared.ws.set_timers(timers);
    }

    /// The trading core's recorded state changes with a sequence number above `seq`
    /// (`{"seq","account","channel","symbol","data"}`; the journal keeps the last 10,000).
    pub fn events_since(&self, seq: u64) -> Vec<Value> {
        events_json(&self.shared.engine().events_since(seq))
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        // No worker is left to upgrade a connection: end the WebSocket ones.
        self.shared.ws.stop();
        // Dropping the last Arc closes the listener (tiny_http wakes its accept thread).
        self.server.take();
        // tiny_http keeps a kept-alive connection's thread reading until the client hangs up;
        // shutting the sockets down ends those threads and tells clients the venue is gone
        // (in TLS mode, the relays end with their inner connection; the client side too).
        socket::shutdown_connections(self.shared.listener, None);
        if self.ca_file.is_some() {
            socket::shutdown_connections(self.public, None);
        }
        // Only now may the ports be reused.
        self.port_guards.clear();
        if let Some(path) = self.ca_file.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The walk of the marks: one step of every symbol each `every`.
fn walk(shared: &Shared, stop: &AtomicBool, every: Duration) {
    let mut next = Instant::now() + every;
    while !stop.load(Ordering::SeqCst) {
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(50)));
            continue;
        }
        next += every;
        let now_us = shared.clock.now_us();
        shared.engine().walk(now_us);
    }
}

fn set_mark(shared: &Shared, symbol: &str, price: &str) -> Result<Vec<Event>, String> {
    let price = Dec::parse(price).map_err(|_| format!("price {price:?} is not a decimal string"))?;
    shared.engine().set_mark(symbol, price, shared.clock.now_us()).map_err(|r| r.message)
}

fn settle_funding(shared: &Shared, symbol: Option<&str>, rate: &str) -> Result<usize, String> {
    let rate = Dec::parse(rate).map_err(|_| format!("rate {rate:?} is not a decimal string"))?;
    shared.engine().settle_funding(symbol, rate, shared.clock.now_us()).map_err(|r| r.message)
}

fn issue_api_key(shared: &Shared, expires_seconds: Option<i64>) -> Result<ApiCredential, String> {
    let lifetime = expires_seconds.unwrap_or(604_800);
    if lifetime <= 0 {
        return Err("expires_seconds must be a positive integer".into());
    }
    let seed = random::bytes::<32>();
    let public = bs58::encode(ed25519_dalek::SigningKey::from_bytes(&seed).verifying_key().to_bytes()).into_string();
    let now = shared.clock.now_ms().div_euclid(1000);
    let expires_at = now.checked_add(lifetime).ok_or("expires_seconds is too large")?;
    let user = format!("apikey_{public}");
    let token = shared.keys().sign(&json!({
        "sub": user, "requestId": public, "iat": now, "exp": expires_at, "jti": random::hex::<8>(), "kind": "api",
    }));
    let session = Session {
        account: format!("apikey:{public}"),
        user,
        key: Ok(request_key::from_base58(&public).ok_or("the generated key is not valid")?),
        expires_at: Some(expires_at),
    };
    shared.state().sessions.insert(token.clone(), session);
    Ok(ApiCredential { token, private_key: bs58::encode(seed).into_string(), public_key: public, expires_at })
}

fn events_json(events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .map(|e| json!({"seq": e.seq, "account": e.account, "channel": e.channel.as_str(), "symbol": e.symbol, "data": e.data}))
        .collect()
}
