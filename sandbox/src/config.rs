//! How a sandbox is started.

use std::io;

use super::chain::base58_32;

/// Settings of one sandbox venue.
#[derive(Clone, Debug)]
pub struct SandboxConfig {
    /// TCP port on 127.0.0.1; 0 picks a free one (read it back with `Sandbox::port`).
    pub port: u16,
    /// Accepted distance, either side of the sandbox clock, of `x-request-timestamp` (ms).
    pub timestamp_window_ms: i64,
    /// The sandbox clock is the system clock plus this many milliseconds.
    pub clock_offset_ms: i64,
    /// Enforce the venue's per-account credits (45 a request, refill 1,000/s, burst 900) → 429.
    pub rate_limit: bool,
    /// Web-site API credentials: (API token, base58 Ed25519 public key that signs bodies).
    pub api_keys: Vec<(String, String)>,
    /// Threads answering requests.
    pub worker_threads: usize,
}

impl Default for SandboxConfig {
    fn default() -> SandboxConfig {
        SandboxConfig {
            port: 0,
            timestamp_window_ms: 30_000,
            clock_offset_ms: 0,
            rate_limit: false,
            api_keys: Vec::new(),
            worker_threads: 4,
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
        for (token, key) in &self.api_keys {
            if token.is_empty() {
                return invalid("an API token must not be empty".into());
            }
            if api_key_verifying_key(key).is_none() {
                return invalid(format!("API key {key:?} is not a base58 Ed25519 public key"));
            }
        }
        Ok(())
    }
}

/// A base58 Ed25519 public key (canonical base58, valid point, not of small order).
pub(crate) fn api_key_verifying_key(text: &str) -> Option<ed25519_dalek::VerifyingKey> {
    let key = ed25519_dalek::VerifyingKey::from_bytes(&base58_32(text)?).ok()?;
    (!key.is_weak()).then_some(key)
}
