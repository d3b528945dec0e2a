//! Everything the venue remembers, plus the parts that never change.
//!
//! Three locks: the sign-in and request-check state (`State`), the trading core (`Engine`)
//! and the request log; none is held while another is taken, and crypto runs outside them
//! (verification is done on copies), so each is held only for look-ups and bookkeeping.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::VerifyingKey;

use super::body_verify::SignedHeaders;
use super::clock::Clock;
use super::config::SandboxConfig;
use super::decimal::Dec;
use super::engine::Engine;
use super::es256::KeyRing;
use super::faults::{Faults, Stats};
use super::rate_limit::{Buckets, PER_ACCOUNT, PER_IP};
use super::replay::RecentlySeen;
use super::request_key;
use super::request_log::{Notes, RequestLog};
use super::tls::PeerMap;
use super::ws::Hub;

/// What a bearer token stands for.
#[derive(Clone)]
pub(crate) struct Session {
    /// Owner of orders, positions and rate-limit credits.
    pub account: String,
    /// The venue's `user` text (`bsc_0x…`).
    pub user: String,
    /// The key that must have signed request bodies: the `requestId` key given at sign-in,
    /// or the public key of an API credential. `Err` holds why a `requestId` accepted at
    /// sign-in names no key: every body signature of the session is then refused (403).
    pub key: Result<VerifyingKey, String>,
    /// Unix seconds on the venue clock; `None` for a credential without `exp`.
    pub expires_at: Option<i64>,
}

pub(crate) struct State {
    pub faults: Faults,
    pub stats: Stats,
    /// Client (address, port) pairs seen, to count connections (see `Stats::connections`).
    pub peers: HashSet<SocketAddr>,
    pub sessions: HashMap<String, Session>,
    /// Challenge nonces already used for a successful login.
    pub used_nonces: HashSet<String>,
    /// `x-request-id`s and body signatures seen within the timestamp window.
    pub seen_ids: RecentlySeen,
    pub seen_signatures: RecentlySeen,
    pub buckets: Buckets<String>,
    pub ip_buckets: Buckets<IpAddr>,
}

pub(crate) struct Shared {
    pub config: SandboxConfig,
    pub clock: Clock,
    /// Where tiny_http listens (in TLS mode, the loopback address behind the TLS front).
    pub listener: std::net::SocketAddr,
    /// TLS mode: the client address behind each relayed connection (keyed by the relay's
    /// address as tiny_http sees it).
    pub relayed: PeerMap,
    /// The WebSocket connections (the journal's sink).
    pub ws: Arc<Hub>,
    state: Mutex<State>,
    engine: Mutex<Engine>,
    log: Mutex<RequestLog>,
    keys: Mutex<KeyRing>,
}

impl Shared {
    pub(crate) fn new(config: SandboxConfig, listener: std::net::SocketAddr) -> Shared {
        let clock = Clock::new(config.clock_offset_ms);
        let sessions = config
            .api_keys
            .iter()
            .filter_map(|(token, key)| {
                let vk = request_key::from_base58(key)?;
                let session = Session {
                    account: format!("apikey:{key}"),
                    user: format!("apikey_{key}"),
                    key: Ok(vk),
                    expires_at: jwt_exp(token),
                };
                Some((token.clone(), session))
            })
            .collect();
        let window = config.timestamp_window_ms;
        let state = State {
            faults: Faults::default(),
            stats: Stats::default(),
            peers: HashSet::new(),
            sessions,
            used_nonces: HashSet::new(),
            seen_ids: RecentlySeen::new(window),
            seen_signatures: RecentlySeen::new(window),
            buckets: Buckets::new(PER_ACCOUNT),
            ip_buckets: Buckets::new(PER_IP),
        };
        let balance = Dec::parse(&config.starting_balance).expect("validated");
        let mut engine =
            Engine::new(config.parsed_symbols(), config.seed, balance, config.account_limits, clock.now_us());
        let ws = Arc::new(Hub::new(config.ws_timers, clock.now_us()));
        let hub = ws.clone();
        engine.journal().set_sink(Box::new(move |e| hub.route(e)));
        Shared {
            clock,
            config,
            listener,
            relayed: PeerMap::default(),
            ws,
            state: Mutex::new(state),
            engine: Mutex::new(engine),
            log: Mutex::new(RequestLog::default()),
            keys: Mutex::new(KeyRing::new()),
        }
    }

    /// The state. A handler that panicked while holding a lock leaves counters and maps
    /// consistent enough for a test venue, so poisoning is ignored rather than spread.
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn engine(&self) -> MutexGuard<'_, Engine> {
        self.engine.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn log(&self) -> MutexGuard<'_, RequestLog> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn keys(&self) -> MutexGuard<'_, KeyRing> {
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The faults acting on one request to `endpoint` (one-shot sets are used up here).
    pub(crate) fn take_faults(&self, endpoint: &str) -> Faults {
        self.state().faults.take(endpoint)
    }

    /// The counters, the WebSocket ones included.
    pub(crate) fn stats(&self) -> Stats {
        let mut stats = self.state().stats.clone();
        let c = &self.ws.counters;
        let n = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
        stats.ws_connections_opened = n(&c.opened);
        stats.ws_connections_refused = n(&c.refused);
        stats.ws_connections_open = self.ws.connections().len() as u64;
        stats.ws_frames_in = n(&c.frames_in);
        stats.ws_frames_out = n(&c.frames_out);
        stats.ws_pings = n(&c.pings);
        stats.ws_pongs = n(&c.pongs);
        stats
    }

    /// The client behind `peer` (tiny_http's view): in TLS mode, the address the TLS front
    /// relays for; otherwise `peer` itself.
    pub(crate) fn client_addr(&self, peer: SocketAddr) -> SocketAddr {
        self.relayed.lock().unwrap_or_else(|e| e.into_inner()).get(&peer).copied().unwrap_or(peer)
    }

    /// Counts one request and the connection it came on.
    pub(crate) fn note_request(&self, peer: Option<SocketAddr>) {
        let mut st = self.state();
        st.stats.requests += 1;
        if let Some(peer) = peer
            && st.peers.insert(peer)
        {
            st.stats.connections += 1;
        }
    }

    /// Takes one request's credits from `account` when rate limiting is on; a refusal is
    /// counted in `Stats::rate_limited`.
    pub(crate) fn allow(&self, account: &str) -> bool {
        if !self.config.rate_limit {
            return true;
        }
        let now = Instant::now();
        let mut st = self.state();
        let allowed = st.buckets.take(account.to_owned(), now);
        if !allowed {
            st.stats.rate_limited += 1;
        }
        allowed
    }

    /// Takes one request from the client address's 50 a second when rate limiting is on (a
    /// request whose address tiny_http does not know is not counted); a refusal is counted in
    /// `Stats::rate_limited_by_ip`.
    pub(crate) fn allow_ip(&self, ip: Option<IpAddr>) -> bool {
        let (true, Some(ip)) = (self.config.rate_limit, ip) else {
            return true;
        };
        let now = Instant::now();
        let mut st = self.state();
        let allowed = st.ip_buckets.take(ip, now);
        if !allowed {
            st.stats.rate_limited_by_ip += 1;
        }
        allowed
    }
}

impl Shared {
    /// Notes a verified body signature in the replay windows (REST and ws-api alike):
    /// identical and repeated requests are counted; the message is strict mode's refusal of
    /// a repeated `x-request-id`.
    pub(crate) fn note_signed(
        &self,
        account: &str,
        headers: &SignedHeaders<'_>,
        now_ms: i64,
    ) -> (Notes, Option<String>) {
        // Per account; UUIDs are one id in any letter case, other ids are compared as sent.
        let id = if uuid::Uuid::try_parse(headers.id).is_ok() {
            headers.id.to_ascii_lowercase()
        } else {
            headers.id.to_owned()
        };
        let id_key = format!("{account}\n{id}");
        let signature_key: String = headers.signature.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
        let mut st = self.state();
        let new_id = st.seen_ids.first_use(&id_key, now_ms);
        let new_signature = st.seen_signatures.first_use(&signature_key, now_ms);
        st.stats.repeated_request_ids += u64::from(!new_id);
        st.stats.identical_signed_requests += u64::from(!new_signature);
        let duplicate = (self.config.strict && !new_id).then(|| "duplicate x-request-id (strict mode)".to_owned());
        (Notes { identical_signed: !new_signature, repeated_request_id: !new_id }, duplicate)
    }

    /// The session a token stands for, if known and not expired; otherwise the refusal's
    /// message (`unknown token`, `token expired`).
    pub(crate) fn session(&self, token: &str) -> Result<Session, &'static str> {
        let session = self.state().sessions.get(token).cloned().ok_or("unknown token")?;
        let now = self.clock.now_ms().div_euclid(1000);
        if session.expires_at.is_some_and(|exp| exp <= now) {
            return Err("token expired");
        }
        Ok(session)
    }
}

/// The `exp` claim of a JWT-shaped token (three base64url parts, JSON payload), if any.
pub(crate) fn jwt_exp(token: &str) -> Option<i64> {
    let mut parts = token.split('.');
    let (_, payload, _, None) = (parts.next()?, parts.next()?, parts.next()?, parts.next()) else {
        return None;
    };
    let claims: serde_json::Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    claims.get("exp")?.as_i64()
}
