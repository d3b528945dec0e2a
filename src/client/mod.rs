//! The client: the venue's two base URLs, one HTTP transport, the cached certificate set
//! and the clock offset. Shared by any number of sessions and threads.

mod answers;
mod cancel_all;
mod deadline_tcp;
mod endpoint_call;
pub mod options;
mod order_not_found;
pub mod pacing;
pub mod per_ip_limit;
mod request_pacing;
mod resolve;
mod retry_after;
mod sent_tracker;
mod signin;
pub(crate) mod symbol_cache;
mod symbol_fetch;
pub mod symbol_rules;
mod trading;
pub mod transport;
pub(crate) mod url;
mod venue_time;
mod write_coalescing;

// Read by the streams too: a refused WebSocket upgrade is an HTTP answer like any other.
pub(crate) use answers::venue_reason;
pub(crate) use retry_after::millis as retry_after_ms;

use crate::challenge::CertSet;
use crate::error::Result;
use crate::redact::{CallSecrets, Secrets};
use crate::session::Session;
use answers::{json_object, require_2xx};
use options::{ClientOptions, RateLimit};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use transport::{Reply, Transport};
use ureq::http::Method;

pub struct Client {
    base_url: String,
    perps_url: String,
    transport: Transport,
    /// The venue's key set and when it was fetched; trusted for `certs_ttl` at most.
    certs: Mutex<Option<(Arc<CertSet>, Instant)>>,
    certs_ttl: Duration,
    /// `expected_domain` / `expected_uri`: what the sign-in message must name.
    expected_domain: Option<String>,
    expected_uri: Option<String>,
    /// `base_url`'s host in lower case, `None` for loopback: the site an unpinned sign-in
    /// message must name (`site_binding.rs`).
    sign_in_host: Option<String>,
    /// Venue clock minus local clock, in milliseconds (0 until `sync_time`).
    clock_offset_ms: AtomicI64,
    rate_limit: RateLimit,
    /// The whole-exchange limit; pacing's waits count against it.
    total_timeout: std::time::Duration,
    buckets: pacing::Buckets,
    /// The per-IP limits of the hosts of `base_url` and `perps_url` (the same one when they
    /// share a host), shared process-wide.
    base_host: &'static per_ip_limit::HostWindow,
    perps_host: &'static per_ip_limit::HostWindow,
    /// `Some` when the `symbol_rules` option is on.
    symbols: Option<Arc<symbol_cache::SymbolCache>>,
    cl_ord_id_prefix: String,
    /// The two WebSockets' URLs, options and TLS configuration.
    stream: crate::stream::settings::StreamSettings,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.base_url)
            .field("perps_url", &self.perps_url)
            .field("clock_offset_ms", &self.clock_offset_ms())
            .field("rate_limit", &self.rate_limit)
            .field("symbol_rules", &self.symbols.is_some())
            .field("cl_ord_id_prefix", &self.cl_ord_id_prefix)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// `base_url` serves sign-in and certs, `perps_url` serves trading. Both are required:
    /// there is no default venue, so a test can never reach production by accident.
    pub fn new(base_url: &str, perps_url: &str, options: ClientOptions) -> Result<Client> {
        let base_url = url::check_url(base_url, "base_url", options.allow_insecure_http)?;
        let perps_url = url::check_url(perps_url, "perps_url", options.allow_insecure_http)?;
        let stream = crate::stream::settings::StreamSettings::new(&perps_url, &options)?;
        Ok(Client {
            base_host: per_ip_limit::for_host(&base_url.host_and_port()),
            perps_host: per_ip_limit::for_host(&perps_url.host_and_port()),
            sign_in_host: (!url::is_loopback(&base_url.host)).then(|| base_url.host.to_ascii_lowercase()),
            base_url: base_url.text,
            perps_url: perps_url.text,
            transport: Transport::new(&options)?,
            certs: Mutex::new(None),
            certs_ttl: options.certs_ttl,
            expected_domain: options.expected_domain,
            expected_uri: options.expected_uri,
            clock_offset_ms: AtomicI64::new(0),
            rate_limit: options.rate_limit,
            total_timeout: options.total_timeout,
            buckets: pacing::Buckets::default(),
            symbols: options
                .symbol_rules
                .then(|| Arc::new(symbol_cache::SymbolCache::new(options.symbol_rules_max_age))),
            cl_ord_id_prefix: options.cl_ord_id_prefix,
            stream,
        })
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub fn perps_url(&self) -> &str {
        &self.perps_url
    }

    /// The symbol rules kept when the `symbol_rules` option is on: the order stream checks
    /// its orders against them as REST does, and marks them stale on a refusal about them.
    pub(crate) fn symbol_cache(&self) -> Option<Arc<symbol_cache::SymbolCache>> {
        self.symbols.clone()
    }

    /// What every generated `cl_ord_id` starts with (option `cl_ord_id_prefix`).
    pub(crate) fn cl_ord_id_prefix(&self) -> &str {
        &self.cl_ord_id_prefix
    }

    /// The WebSockets' settings (src/stream/).
    pub fn stream_settings(&self) -> &crate::stream::settings::StreamSettings {
        &self.stream
    }

    pub fn clock_offset_ms(&self) -> i64 {
        self.clock_offset_ms.load(Ordering::Relaxed)
    }

    /// The venue's time in milliseconds: the local clock corrected by the synced offset.
    pub fn venue_now_ms(&self) -> i64 {
        crate::body_sign::now_ms() + self.clock_offset_ms()
    }

    /// The cached certificate set, fetched on first need, when older than `certs_ttl` (a
    /// key the venue withdrew stops being trusted), or when `refresh` is set. The flag says
    /// whether it was fetched by this call.
    fn certs(&self, refresh: bool, secrets: &CallSecrets<'_>) -> Result<(Arc<CertSet>, bool)> {
        if !refresh
            && let Some((certs, fetched)) = self.certs.lock().unwrap_or_else(PoisonError::into_inner).clone()
            && fetched.elapsed() < self.certs_ttl
        {
            return Ok((certs, false));
        }
        let reply =
            self.send(self.base_host, Method::GET, &format!("{}/v1/offchain/certs", self.base_url), &[], None)?;
        let reply = require_2xx(reply, "certs", secrets, self.venue_now_ms())?;
        let certs = Arc::new(CertSet::parse(&reply.body).map_err(|e| {
            let reply = answers::redacted(reply, secrets);
            e.with_status(reply.status).with_body(reply.body)
        })?);
        *self.certs.lock().unwrap_or_else(PoisonError::into_inner) = Some((certs.clone(), Instant::now()));
        Ok((certs, true))
    }

    /// Send one request that is not an account's (sign-in, certs, the venue's clock) to
    /// `url` on `host`, paced to the host's per-IP limit when `rate_limit` is on (a venue 429
    /// pauses that limit), noted in it when it is off.
    fn send(
        &self,
        host: &'static per_ip_limit::HostWindow,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<Reply> {
        let paced = self.pace(host, None, url, None)?;
        let pace_again = |left| self.pace_again(host, None, url, left);
        let bounds = transport::Bounds { total: paced.time_left, larger_answer: None };
        let reply = self.transport.send_within(method, url, headers, body, bounds, &pace_again)?;
        self.pause_on_429(&paced.limits, &reply);
        Ok(reply)
    }
}

/// A flow that talks to the venue, run with the secrets in play for it (the session's token
/// and imported key, and the wallet key of `signin`): the flow redacts venue answers with
/// them where they become errors (`answers`), and every error leaves the client through them
/// once more, for anything quoted elsewhere (`crate::redact`). Nothing is built unless the
/// flow fails.
fn guarded<T>(
    session: &Session,
    wallet_key: Option<&str>,
    flow: impl FnOnce(&CallSecrets<'_>) -> Result<T>,
) -> Result<T> {
    // The table of the token the flow is about to send, taken now: another thread may sign
    // the session in again while the call is out, and the venue may quote the token it was
    // sent, not the newer one. A failure is redacted with both then.
    let at_start = session.secrets();
    let make = || {
        let tokens = Secrets::joined(at_start.clone(), session.secrets());
        let Some(key) = wallet_key else { return tokens };
        let mut secrets = Secrets::clone(&tokens);
        secrets.add_wallet_key(key);
        Arc::new(secrets)
    };
    let secrets = CallSecrets::new(&make);
    flow(&secrets).map_err(|error| secrets.redact_error(error))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Login;
    use zeroize::Zeroizing;

    fn login(token: &str) -> Login {
        Login { token: Zeroizing::new(token.to_owned()), chain: None, address: None, alias: None, expires_at: None }
    }

    #[test]
    fn a_token_replaced_during_a_call_is_still_redacted_from_its_failure() {
        let session = Session::new().unwrap();
        session.complete_login(login("token-sent-with-the-call-0123"));
        let error = guarded(&session, None, |_| -> Result<()> {
            // Another thread signs in again while the request is out; then the venue's
            // refusal quotes the token the request carried.
            session.complete_login(login("token-of-the-next-sign-in-4567"));
            Err(crate::error::Error::invalid_state("refused: token-sent-with-the-call-0123")
                .with_body("{\"echo\":\"token-sent-with-the-call-0123 token-of-the-next-sign-in-4567\"}"))
        })
        .unwrap_err();
        let texts = format!("{} {}", error.message(), error.body().unwrap());
        assert!(!texts.contains("token-sent") && !texts.contains("token-of-the-next"), "{texts}");
        assert_eq!(texts.matches(crate::redact::REDACTED).count(), 3, "{texts}");
    }
}
