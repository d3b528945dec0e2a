//! How a sandbox is started.

use std::io;
use std::path::PathBuf;

use super::decimal::Dec;
use super::request_key;
use super::symbols::{Symbol, SymbolSpec};
use super::ws::{AckStyle, SeqScope, WsTimers};

/// The two documented answers of `cancel_orders` (venue-api.md §6, item 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CancelOrdersAnswer {
    /// `{"code":0,"message":"success","request_id":…}` (the newest docs).
    #[default]
    Envelope,
    /// `[]` (the older docs).
    EmptyArray,
}

/// Settings of one sandbox venue.
#[derive(Clone, Debug)]
pub struct SandboxConfig {
    /// Address to listen on; an unspecified address (`0.0.0.0`, `::`) listens everywhere and
    /// the URLs then name 127.0.0.1.
    pub host: String,
    /// TCP port; 0 picks a free one (read it back with `Sandbox::port`).
    pub port: u16,
    /// Serve HTTPS with a certificate for 127.0.0.1/localhost made at start-up by a CA that is
    /// written to a PEM file (`Sandbox::ca_file`), to pass to a client as `ca_bundle_path`.
    pub tls: bool,
    /// Where the CA file goes (default: the system's temporary directory).
    pub tls_dir: Option<PathBuf>,
    /// Accepted distance, either side of the venue clock, of `x-request-timestamp` (ms).
    pub timestamp_window_ms: i64,
    /// The venue clock is the system clock plus this many milliseconds (changeable while
    /// running: `Sandbox::set_clock_offset_ms`).
    pub clock_offset_ms: i64,
    /// Enforce the venue's request limits → HTTP 429: per-account credits on account
    /// endpoints (45 a request, refill 1,000/s, burst 900) and 50 requests a second per IP
    /// address on every HTTP endpoint (WebSocket handshakes have their own limits).
    pub rate_limit: bool,
    /// Refuse what the live venue accepts but the documentation forbids (see the README's
    /// "Strict mode"): repeated or non-UUID `x-request-id`, a missing
    /// `x-request-sign-version`, a Solana `input` that is not the whole payload, a `requestId`
    /// that is not base58, a market order without `time_in_force`.
    pub strict: bool,
    /// Enforce per-account limits the venue lists: `max_open_orders` and
    /// `max_position_size` of each symbol, and the available margin of the account.
    pub account_limits: bool,
    /// Web-site API credentials: (API token, base58 Ed25519 public key that signs bodies).
    /// A JWT-shaped token's `exp` claim (Unix seconds), if any, is honoured.
    pub api_keys: Vec<(String, String)>,
    /// The instruments (default: BTC-USD, ETH-USD, XAG-USD; `SymbolSpec::defaults`).
    pub symbols: Vec<SymbolSpec>,
    /// Seed of the synthetic markets (book sizes, shuffles, walk).
    pub seed: u64,
    /// Milliseconds between two steps of the marks' walk; 0 = the marks move only when told
    /// (`Sandbox::set_mark`), which tests use for determinism. The binary's default walks.
    pub market_walk_ms: u64,
    /// Every account's balance before its first trade (DUSD, decimal string).
    pub starting_balance: String,
    /// Which documented answer `cancel_orders` gives.
    pub cancel_orders_answer: CancelOrdersAnswer,
    /// Print one line per request on standard error.
    pub log: bool,
    /// Threads answering requests.
    pub worker_threads: usize,
    /// The WebSocket timers (server ping, pong timeout, lifetime cap, market push cadence);
    /// changeable while running (`Sandbox::set_ws_timers`).
    pub ws_timers: WsTimers,
    /// Open WebSocket connections allowed per client IP (both endpoints together; the venue's
    /// 10); 0 = no limit. Beyond it the handshake is refused with HTTP 429.
    pub ws_max_connections_per_ip: usize,
    /// New WebSocket connections allowed per client IP in any 60 s (the venue's 30); 0 = no
    /// limit. Beyond it the handshake is refused with HTTP 429 and `Retry-After`.
    pub ws_max_new_connections_per_minute: usize,
    /// `data.code` of a successful ws-stream auth answer: 200 (the docs) or 0 (seen live).
    pub ws_auth_code: i64,
    /// The ws-api gateway ack: `status` or `message` carries `"accepted"`, or they alternate.
    pub ws_ack_style: AckStyle,
    /// ws-api (and `x-session-id`) orders: the account events are written on the account
    /// streams before the ack is written (the live ordering seen by [WJ]); otherwise the ack
    /// is written before the order reaches the engine.
    pub ws_event_before_ack: bool,
    /// What a ws-stream `seq` counts: per channel (default) or per connection.
    pub ws_seq_scope: SeqScope,
}

impl Default for SandboxConfig {
    fn default() -> SandboxConfig {
        SandboxConfig {
            host: "127.0.0.1".into(),
            port: 0,
            tls: false,
            tls_dir: None,
            timestamp_window_ms: 30_000,
            clock_offset_ms: 0,
            rate_limit: false,
            strict: false,
            account_limits: false,
            api_keys: Vec::new(),
            symbols: SymbolSpec::defaults(),
            seed: 1,
            market_walk_ms: 0,
            starting_balance: "100000".into(),
            cancel_orders_answer: CancelOrdersAnswer::Envelope,
            log: false,
            worker_threads: 4,
            ws_timers: WsTimers::default(),
            ws_max_connections_per_ip: 10,
            ws_max_new_connections_per_minute: 30,
            ws_auth_code: 200,
            ws_ack_style: AckStyle::Status,
            ws_event_before_ack: false,
            ws_seq_scope: SeqScope::Channel,
        }
    }
}

impl SandboxConfig {
    /// Refuses settings the sandbox cannot honour, before any socket is opened.
    pub(crate) fn validate(&self) -> io::Result<()> {
        let invalid = |m: String| Err(io::Error::new(io::ErrorKind::InvalidInput, m));
        if self.timestamp_window_ms < 0 {
            return invalid("timestamp_window_ms must not be negative".into());
        }
        if self.host.parse::<std::net::IpAddr>().is_err() {
            return invalid(format!("host {:?} is not an IP address", self.host));
        }
        for (token, key) in &self.api_keys {
            if token.is_empty() {
                return invalid("an API token must not be empty".into());
            }
            if request_key::from_base58(key).is_none() {
                return invalid(format!("API key {key:?} is not a base58 Ed25519 public key"));
            }
        }
        if self.symbols.is_empty() {
            return invalid("at least one symbol is needed".into());
        }
        for (i, spec) in self.symbols.iter().enumerate() {
            if let Err(m) = Symbol::from_spec(spec) {
                return invalid(m);
            }
            if self.symbols[..i].iter().any(|s| s.symbol == spec.symbol) {
                return invalid(format!("symbol {} is listed twice", spec.symbol));
            }
        }
        if ![0, 200].contains(&self.ws_auth_code) {
            return invalid(format!("ws_auth_code {} must be 200 (the docs) or 0 (seen live)", self.ws_auth_code));
        }
        match Dec::parse(&self.starting_balance) {
            Ok(d) if !d.is_negative() => {}
            _ => return invalid(format!("starting_balance {:?} must be a decimal string ≥ 0", self.starting_balance)),
        }
        Ok(())
    }

    pub(crate) fn parsed_symbols(&self) -> Vec<Symbol> {
        self.symbols.iter().map(|s| Symbol::from_spec(s).expect("validated")).collect()
    }
}
