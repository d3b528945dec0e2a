//! Injected failures and the counters tests read. Both are plain data, settable from Rust
//! (`Sandbox::set_faults`, `Sandbox::stats`) and over HTTP (`/_sandbox/faults`,
//! `/_sandbox/stats`) with the same field names.

use serde::{Deserialize, Serialize};

/// Failures the sandbox injects until the set is replaced. The default injects nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    /// prepare-signin answers a JWT whose signature does not verify.
    pub challenge_bad_signature: bool,
    /// prepare-signin answers a JWT signed by a key whose kid the certs never serve.
    pub challenge_unknown_kid: bool,
    /// prepare-signin answers a JWT already expired (iat = now − 300, exp = iat + 180).
    pub challenge_expired: bool,
    /// login succeeds but answers another wallet address than the one signed in.
    pub login_wrong_address: bool,
    /// certs answers HTTP 503.
    pub certs_down: bool,
    /// Trading endpoints (not `kline/time`) answer this HTTP status with a JSON error body.
    pub status: Option<u16>,
    /// new_order answers HTTP 200 with `{"code":400,…}` (a rejection; not counted accepted).
    pub order_code_nonzero: bool,
    /// Trading endpoints (not `kline/time`) wait this long before answering.
    pub slow_ms: u64,
    /// new_order reads and counts the request, then closes the connection with no response.
    pub close_after_order: bool,
}

/// Counters since the sandbox started. Requests to `/_sandbox/*` are not counted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Every `POST /perps/api/new_order` whose body was read, whatever happened next.
    pub orders_received: u64,
    /// new_order answered `code` 0.
    pub orders_accepted: u64,
    /// HTTP requests received.
    pub requests: u64,
    /// Distinct client (address, port) pairs seen: tiny_http does not report accepted
    /// connections, and a TCP connection is identified by its client port while it lives.
    pub connections: u64,
}
