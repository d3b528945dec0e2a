//! The trading host's endpoints, `/api/*` (also served under `/perps/api/*`).
//!
//! With `rate_limit`, every request first takes one of its IP address's 50 a second (429;
//! `server::route`, before this module). Each endpoint has an access level. Public ones need
//! nothing beyond that. Account reads need the bearer token (401), then credits (429 with
//! `rate_limit`). Body-signed POSTs are checked
//! in the venue's order: bearer token (401), credits (429), signature headers (400),
//! timestamp (403 "signature has expired"), Ed25519 signature (403), duplicate id (400,
//! strict mode only), Content-Type (400), body (400), then the endpoint's own rules.

mod account;
mod params;
mod public;
mod trade;

use std::thread::sleep;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::body_verify::{read_headers, verify};
use crate::http::{Incoming, Reply, error};
use crate::request_log::Notes;
use crate::state::{Session, Shared};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Public,
    Account,
    Signed,
}

const ENDPOINTS: &[(&str, &str, Access)] = &[
    ("new_order", "POST", Access::Signed),
    ("cancel_order", "POST", Access::Signed),
    ("cancel_orders", "POST", Access::Signed),
    ("change_leverage", "POST", Access::Signed),
    ("change_margin_mode", "POST", Access::Signed),
    ("transfer_margin", "POST", Access::Signed),
    ("query_order", "GET", Access::Account),
    ("query_orders", "GET", Access::Account),
    ("query_open_orders", "GET", Access::Account),
    ("query_trades", "GET", Access::Account),
    ("query_positions", "GET", Access::Account),
    ("query_balance", "GET", Access::Account),
    ("query_position_config", "GET", Access::Account),
    ("query_funding_history", "GET", Access::Account),
    ("query_symbol_info", "GET", Access::Public),
    ("query_symbol_price", "GET", Access::Public),
    ("query_symbol_market", "GET", Access::Public),
    ("query_market_overview", "GET", Access::Public),
    ("query_depth_book", "GET", Access::Public),
    ("query_recent_trades", "GET", Access::Public),
    ("query_funding_rates", "GET", Access::Public),
    ("kline/time", "GET", Access::Public),
    ("kline/history", "GET", Access::Public),
    ("health", "GET", Access::Public),
];

/// One request on its way through the handlers.
pub(crate) struct Ctx<'a> {
    pub shared: &'a Shared,
    pub inc: &'a Incoming,
    /// The client's address, for the per-IP rate limit (None when tiny_http does not know it).
    pub peer: Option<std::net::IpAddr>,
    /// For the request log.
    pub notes: Notes,
    /// What an accepted request did, for the request log (`order 10000000001 filled`).
    pub note: Option<String>,
}

impl<'a> Ctx<'a> {
    /// The request's query parameters, refused when one is not in `allowed` in strict mode
    /// only (the live venue ignores unknown ones).
    pub(crate) fn params(&self, allowed: &[&str]) -> Result<params::Params<'a>, Reply> {
        params::Params::only(self.inc, allowed, self.shared.config.strict)
    }
}

/// `/api/{name}`.
pub(crate) fn handle(ctx: &mut Ctx<'_>, name: &str) -> Reply {
    let Some(&(name, method, access)) = ENDPOINTS.iter().find(|(n, _, _)| *n == name) else {
        return error(404, format!("no endpoint {}", ctx.inc.path));
    };
    if ctx.inc.method != method {
        return error(405, format!("{} takes {method}", ctx.inc.path));
    }
    let shared = ctx.shared;
    if name == "new_order" {
        // The body has been read: from here on the order may have reached the venue.
        shared.state().stats.orders_received += 1;
    }
    let faults = shared.take_faults(name);
    if faults.slow_ms > 0 {
        sleep(Duration::from_millis(faults.slow_ms));
    }
    if faults.close_after_order {
        return Reply::CloseSilently;
    }
    if let Some(status) = faults.status {
        return error(status, format!("sandbox fault: HTTP {status}"));
    }
    if access == Access::Public {
        return public::handle(ctx, name);
    }
    let session = match bearer(shared, ctx.inc) {
        Ok(s) => s,
        Err(reply) => return reply,
    };
    if !shared.allow(&session.account) {
        return error(429, "rate limit: too many requests for this account");
    }
    if access == Access::Account {
        return account::handle(ctx, name, &session, &faults);
    }
    let (request_id, body) = match signed_body(ctx, &session) {
        Ok(checked) => checked,
        Err(reply) => return reply,
    };
    trade::handle(ctx, name, &session, body, &request_id, &faults)
}

/// `Authorization: Bearer <token>`, known and not expired; otherwise 401.
fn bearer(shared: &Shared, inc: &Incoming) -> Result<Session, Reply> {
    let value = inc.header("authorization").map_err(|m| error(401, m))?;
    let token = value
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| error(401, "missing bearer token"))?;
    shared.session(token).map_err(|m| error(401, m))
}

/// The body-signature checks (see the module doc); returns the `x-request-id` and the
/// body as a JSON object. Identical and repeated requests are noted and counted; only
/// strict mode refuses a repeated id.
fn signed_body(ctx: &mut Ctx<'_>, session: &Session) -> Result<(String, Map<String, Value>), Reply> {
    let (shared, inc) = (ctx.shared, ctx.inc);
    let strict = shared.config.strict;
    let now_ms = shared.clock.now_ms();
    let headers =
        read_headers(inc, now_ms, shared.config.timestamp_window_ms, strict).map_err(|(status, m)| error(status, m))?;
    let key = session.key.as_ref().map_err(|why| error(403, format!("invalid signature: {why}")))?;
    if !verify(key, &headers, &inc.body) {
        return Err(error(403, "invalid signature"));
    }
    let (notes, duplicate) = shared.note_signed(&session.account, &headers, now_ms);
    ctx.notes = notes;
    duplicate.map_or(Ok(()), |m| Err(error(400, m)))?;
    if !inc.is_json() {
        return Err(error(400, "Content-Type must be application/json"));
    }
    let body = inc.json_object().map_err(|m| error(400, m))?;
    Ok((headers.id.to_owned(), body))
}
