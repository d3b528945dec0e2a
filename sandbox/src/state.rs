//! Everything the venue remembers, behind one mutex, plus the parts that never change.
//!
//! One lock is enough for a loopback test venue; crypto runs outside it (verification is
//! done on copies), so the lock is held only for map look-ups and counter bumps.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use ed25519_dalek::VerifyingKey;
use serde_json::Value;

use super::clock::Clock;
use super::config::{SandboxConfig, api_key_verifying_key};
use super::es256::KeyRing;
use super::faults::{Faults, Stats};
use super::rate_limit::Bucket;
use super::replay::ReplayGuard;

/// What a bearer token stands for.
#[derive(Clone)]
pub(crate) struct Session {
    /// Owner of orders and of rate-limit credits.
    pub account: String,
    /// The key that must have signed request bodies: the `requestId` key given at sign-in,
    /// or the public key of a web-site API credential.
    pub key: VerifyingKey,
    /// Unix seconds on the sandbox clock; `None` for API credentials (they do not expire).
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
    pub replay: ReplayGuard,
    /// Accepted orders per account, oldest first.
    pub orders: HashMap<String, Vec<Value>>,
    pub next_order_id: u64,
    pub buckets: HashMap<String, Bucket>,
}

pub(crate) struct Shared {
    pub config: SandboxConfig,
    pub clock: Clock,
    pub port: u16,
    state: Mutex<State>,
    keys: Mutex<KeyRing>,
}

impl Shared {
    pub(crate) fn new(config: SandboxConfig, port: u16) -> Shared {
        let sessions = config
            .api_keys
            .iter()
            .filter_map(|(token, key)| {
                let vk = api_key_verifying_key(key)?;
                let session = Session { account: format!("apikey:{key}"), key: vk, expires_at: None };
                Some((token.clone(), session))
            })
            .collect();
        let state = State {
            faults: Faults::default(),
            stats: Stats::default(),
            peers: HashSet::new(),
            sessions,
            used_nonces: HashSet::new(),
            replay: ReplayGuard::new(config.timestamp_window_ms),
            orders: HashMap::new(),
            next_order_id: 1,
            buckets: HashMap::new(),
        };
        Shared {
            clock: Clock::new(config.clock_offset_ms),
            config,
            port,
            state: Mutex::new(state),
            keys: Mutex::new(KeyRing::new()),
        }
    }

    /// The state. A handler that panicked while holding the lock leaves counters and maps
    /// consistent enough for a test venue, so poisoning is ignored rather than spread.
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn keys(&self) -> MutexGuard<'_, KeyRing> {
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn faults(&self) -> Faults {
        self.state().faults.clone()
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

    /// Takes one request's credits from `account` when rate limiting is on.
    pub(crate) fn allow(&self, account: &str) -> bool {
        if !self.config.rate_limit {
            return true;
        }
        let now = Instant::now();
        let mut st = self.state();
        st.buckets.entry(account.to_owned()).or_insert_with(|| Bucket::new(now)).take(now)
    }
}
