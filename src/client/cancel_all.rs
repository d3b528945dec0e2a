//! `cancel_all`: cancel every open order of the account (or of a symbol, or whose
//! `cl_ord_id` has a prefix), then confirm that each one ended.
//!
//! The venue has no cancel-all (`venue-api.md` §2.3); market makers emulate it with an
//! open-orders snapshot and a batch cancel (§5). Two facts of the venue shape the flow: the
//! open-orders list keeps cancelled orders for ~15 s (§1.3), so only `query_order` tells
//! whether an order ended; and a new order may be invisible for a few seconds (§1.4), so an
//! order the engine sent may be missing from the list and a 404 for it proves nothing.
//!
//! Every request goes through `endpoint_answer`, as the public endpoint calls do: the same
//! parameter checks, pacing, signatures, and error mapping. Only cancels and reads are sent;
//! cancels are safe to repeat (a cancel of an order already gone is a 404), so a cancel that
//! may have been lost (a transport failure, a 5xx) is followed by another, never by anything
//! else.

use super::{Client, guarded};
use crate::endpoints::params::Params;
use crate::endpoints::{Auth, Endpoint, Kind, Param, Rule, Shape, Spec, Verb};
use crate::error::{Code, Error, Result};
use crate::redact::CallSecrets;
use crate::session::Session;
use serde::Serialize;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How long the confirmation waits by default: the open-orders list's own lag (§1.3), by
/// which time a cancel the venue accepted is long done.
const DEFAULT_CONFIRM_MS: i64 = 15_000;
/// The longest confirmation taken: five minutes. A shutdown that waits longer has a venue
/// problem no further waiting solves.
const MAX_CONFIRM_MS: i64 = 300_000;
/// Ids per `cancel_orders` request: a body of bounded size whatever the account holds.
const BATCH: usize = 100;
/// An order still open this long after its last cancel is cancelled again: the cancel was
/// lost (or refused); the venue ends a cancelled order well within it.
const RECANCEL_AFTER: Duration = Duration::from_secs(1);
/// The pause between two rounds of look-ups: a round of few orders asks again soon, without
/// spinning on the venue.
const ROUND_PAUSE: Duration = Duration::from_millis(200);
/// The most `query_open_orders` lists in one answer (its `limit`'s maximum, §1.4). It takes
/// no cursor: an account with more open orders is listed in part (`listing_truncated`).
const OPEN_ORDERS_PAGE: i64 = 1200;
/// The statuses of an order that ended: of `endpoints::ORDER_STATUSES`, those after which
/// the order can no longer trade (`cancelled`: the British spelling some venues write).
const ENDED: &[&str] = &["canceled", "cancelled", "filled", "rejected", "expired"];

/// The parameters, checked by the endpoint table's own rules (`endpoints::params`): unknown
/// names, `null`, wrong types, empty texts and lists are refused with the same messages.
static SPEC: Spec = Spec {
    name: "cancel_all",
    verb: Verb::Post,
    auth: Auth::Signed,
    params: &[
        Param { name: "symbol", kind: Kind::Symbol, required: false },
        Param { name: "cl_ord_id_prefix", kind: Kind::ClOrdId, required: false },
        Param { name: "cl_ord_id_list", kind: Kind::ClOrdIdList, required: false },
        Param { name: "confirm_ms", kind: Kind::Millis(MAX_CONFIRM_MS), required: false },
    ],
    rule: Rule::None,
    shape: Shape::AsSent,
};

/// One order to cancel, and what is known of it.
#[derive(Debug, Serialize)]
struct Target {
    order_id: Option<i64>,
    cl_ord_id: Option<String>,
    symbol: Option<String>,
    /// The venue's last word on the order ("open", "canceled", …), or this flow's: "gone"
    /// (404 for an order known to exist), "not_found" (never seen), "unknown" (not asked).
    status: String,
    confirmed: bool,
    /// Whether the order is known to exist (listed, or seen by a look-up): only then does a
    /// 404 mean it is gone rather than not visible yet.
    #[serde(skip)]
    known: bool,
    #[serde(skip)]
    cancelled_at: Option<Instant>,
}

impl Target {
    /// How requests name the order: its venue id when known (a `cl_ord_id` may have been
    /// used twice), else its `cl_ord_id`.
    fn key(&self) -> Value {
        match (self.order_id, &self.cl_ord_id) {
            (Some(id), _) => json!({ "order_id": id }),
            (None, cl) => json!({ "cl_ord_id": cl }),
        }
    }

    fn ended(&mut self, status: &str) {
        self.status = status.to_owned();
        self.confirmed = true;
    }
}

/// The JSON `cancel_all` returns (`perps_cancel_all` documents it).
#[derive(Debug, Serialize)]
struct Report<'a> {
    complete: bool,
    orders: &'a [Target],
    cancel_requests: u64,
    queries: u64,
    listing_truncated: bool,
}

/// One run: its requests and their counts.
struct Run<'a> {
    client: &'a Client,
    session: &'a Session,
    secrets: &'a CallSecrets<'a>,
    cancel_requests: u64,
    queries: u64,
    /// Set when a request was refused for the rate (the venue's 429, or the client's pacing):
    /// how long to pause before the next one. Asking on at once would only be refused again,
    /// and spend the account's credits that the engine's own requests need.
    pause: Option<Duration>,
}

impl Client {
    /// Cancel every open order that `params_json` selects and confirm each ended; returns the
    /// report JSON. Errors: invalid parameters (nothing sent), a failure of the open-orders
    /// listing (nothing cancelled), and a refused session (401/403, an expired or absent
    /// token) at any step — its message then says how many cancel requests were sent.
    pub fn cancel_all(&self, session: &Session, params_json: Option<&str>) -> Result<String> {
        let params = Params::parse(&SPEC, params_json)?;
        guarded(session, None, |secrets| {
            let mut run = Run { client: self, session, secrets, cancel_requests: 0, queries: 0, pause: None };
            run.cancel_all(&params)
        })
    }
}

impl Run<'_> {
    fn cancel_all(&mut self, params: &Params) -> Result<String> {
        let text = |name| params.get(name).and_then(Value::as_str);
        let (symbol, prefix) = (text("symbol"), text("cl_ord_id_prefix"));
        let mut named: Vec<&str> = Vec::new();
        for id in params.get("cl_ord_id_list").and_then(Value::as_array).into_iter().flatten() {
            let id = id.as_str().expect("checked: a list of strings");
            if !named.contains(&id) {
                named.push(id);
            }
        }
        let confirm_ms = params.get("confirm_ms").and_then(Value::as_i64).unwrap_or(DEFAULT_CONFIRM_MS);

        let (rows, listing_truncated) = self.open_orders(symbol)?;
        let mut targets = Vec::new();
        for row in rows {
            let target = listed_target(&row)?;
            let cl = target.cl_ord_id.as_deref();
            // The filters choose among the listed orders; an order the caller named is a
            // target whatever they say.
            // A row that names no symbol was listed for the symbol asked for: it is of it.
            let chosen = symbol.is_none_or(|s| target.symbol.as_deref().is_none_or(|row| row == s))
                && prefix.is_none_or(|p| cl.is_some_and(|cl| cl.starts_with(p)));
            if chosen || cl.is_some_and(|cl| named.contains(&cl)) {
                targets.push(target);
            }
        }
        let listed_count = targets.len();
        for id in named {
            if !targets.iter().any(|t| t.cl_ord_id.as_deref() == Some(id)) {
                targets.push(Target {
                    order_id: None,
                    cl_ord_id: Some(id.to_owned()),
                    symbol: None,
                    status: "unknown".to_owned(),
                    confirmed: false,
                    known: false,
                    cancelled_at: None,
                });
            }
        }

        let (listed, unlisted) = targets.split_at(listed_count);
        let ids: Vec<i64> = listed.iter().filter_map(|t| t.order_id).collect();
        let cls: Vec<&str> = unlisted.iter().filter_map(|t| t.cl_ord_id.as_deref()).collect();
        for batch in ids.chunks(BATCH) {
            self.cancel_orders(json!({ "order_id_list": batch }))?;
        }
        for batch in cls.chunks(BATCH) {
            self.cancel_orders(json!({ "cl_ord_id_list": batch }))?;
        }
        let sent = Instant::now();
        for target in &mut targets {
            target.cancelled_at = Some(sent);
        }

        if confirm_ms > 0 {
            let deadline = sent + Duration::from_millis(confirm_ms.unsigned_abs());
            self.confirm(&mut targets, deadline)?;
        }
        let report = Report {
            complete: !listing_truncated && targets.iter().all(|t| t.confirmed),
            orders: &targets,
            cancel_requests: self.cancel_requests,
            queries: self.queries,
            listing_truncated,
        };
        Ok(serde_json::to_string(&report).expect("the report serialises"))
    }

    /// The open orders (of `symbol` when given), and whether the venue holds more than it
    /// listed. Any failure ends the run: nothing was cancelled yet.
    fn open_orders(&mut self, symbol: Option<&str>) -> Result<(Vec<Value>, bool)> {
        let mut params = json!({ "limit": OPEN_ORDERS_PAGE });
        if let Some(symbol) = symbol {
            params["symbol"] = json!(symbol);
        }
        let answer = self.client.endpoint_answer(
            Endpoint::QueryOpenOrders,
            Some(self.session),
            Some(&params.to_string()),
            self.secrets,
            None,
        )?;
        let answer: Value = serde_json::from_str(&answer).map_err(|e| listing_error(format!("not JSON ({e})")))?;
        let (rows, total) = match answer {
            Value::Array(rows) => (rows, None),
            Value::Object(mut page) => match page.remove("result") {
                Some(Value::Array(rows)) => (rows, page.get("total").and_then(Value::as_u64)),
                Some(Value::Null) => (Vec::new(), None),
                _ => return Err(listing_error("an object without a \"result\" list".to_owned())),
            },
            _ => return Err(listing_error("neither a list nor a page of orders".to_owned())),
        };
        let truncated = total.is_some_and(|total| total > rows.len() as u64);
        Ok((rows, truncated))
    }

    fn cancel_orders(&mut self, params: Value) -> Result<()> {
        // A batch that failed in passing (a transport failure, a 5xx) may still have reached
        // the venue: the confirmation finds out, and cancels again what is still open.
        self.send(Endpoint::CancelOrders, &params).map(drop)
    }

    /// Look each target up until it ended, cancelling again one still open a second after
    /// its last cancel, until `deadline`. Every target is looked up at least once.
    fn confirm(&mut self, targets: &mut [Target], deadline: Instant) -> Result<()> {
        let mut first_round = true;
        loop {
            for target in targets.iter_mut().filter(|t| !t.confirmed) {
                if !first_round && Instant::now() >= deadline {
                    return Ok(());
                }
                self.check(target)?;
                if self.pause.is_some() {
                    break;
                }
            }
            let now = Instant::now();
            // A round cut short by a rate refusal is not a round: the targets it did not
            // reach are still owed their first look-up — within the deadline (a venue that
            // refuses for the rate until then has had its chance).
            let cut_short = self.pause.is_some();
            first_round &= cut_short;
            if targets.iter().all(|t| t.confirmed) || (now >= deadline && (!first_round || cut_short)) {
                return Ok(());
            }
            let pause = self.pause.take().unwrap_or(ROUND_PAUSE);
            std::thread::sleep(pause.min(deadline.saturating_duration_since(now)).max(ROUND_PAUSE));
        }
    }

    fn check(&mut self, target: &mut Target) -> Result<()> {
        let answer = match self.send(Endpoint::QueryOrder, &target.key())? {
            Ok(answer) => answer,
            Err(e) if e.code() == Code::NotFound => {
                // Gone, for an order known to exist; for one never seen, maybe not visible
                // yet (§1.4): asked again until the deadline.
                if target.known {
                    target.ended("gone");
                } else {
                    target.status = "not_found".to_owned();
                }
                return Ok(());
            }
            Err(_) => return Ok(()),
        };
        let order: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
        let Some(status) = order.get("status").and_then(Value::as_str) else { return Ok(()) };
        if !target.known {
            target.known = true;
            target.order_id = order_id(&order);
            target.symbol = order.get("symbol").and_then(Value::as_str).map(str::to_owned);
        }
        if ENDED.contains(&status) {
            target.ended(status);
            return Ok(());
        }
        target.status = status.to_owned();
        if target.cancelled_at.is_none_or(|at| at.elapsed() >= RECANCEL_AFTER) {
            target.cancelled_at = Some(Instant::now());
            if let Err(e) = self.send(Endpoint::CancelOrder, &target.key())?
                && e.code() == Code::NotFound
                && target.known
            {
                target.ended("gone");
            }
        }
        Ok(())
    }

    /// Send one request. The outer error ends the run: the session is refused (every later
    /// request would be too), with what was already sent in its message. The inner one is a
    /// failure of this request alone.
    fn send(&mut self, endpoint: Endpoint, params: &Value) -> Result<Result<String>> {
        if endpoint == Endpoint::QueryOrder {
            self.queries += 1;
        } else {
            self.cancel_requests += 1;
        }
        let answer =
            self.client.endpoint_answer(endpoint, Some(self.session), Some(&params.to_string()), self.secrets, None);
        match answer {
            Err(e) if ends_the_run(&e) => {
                let sent = self.cancel_requests - u64::from(endpoint != Endpoint::QueryOrder);
                Err(if sent > 0 {
                    e.with_message_prefix(&format!(
                        "cancel_all stopped after {sent} cancel request(s) were sent (orders may have been \
                         cancelled; look them up): "
                    ))
                    .reached_venue(true)
                } else {
                    e
                })
            }
            Err(e) => {
                if e.code() == Code::RateLimited || e.http_status() == 429 {
                    let ms = e.retry_after_ms().unwrap_or(1000).clamp(0, MAX_RATE_PAUSE_MS);
                    self.pause = Some(Duration::from_millis(ms.unsigned_abs()));
                }
                Ok(Err(e))
            }
            answer => Ok(answer),
        }
    }
}

/// The longest pause for a rate refusal; a `Retry-After` asking for more is cut to it (the
/// deadline still bounds the run).
const MAX_RATE_PAUSE_MS: i64 = 10_000;

/// A failure no later request can escape: the session's token is refused, expired or gone
/// (HTTP 401; 403: the venue refused the signature or its time), or the session cannot sign.
fn ends_the_run(e: &Error) -> bool {
    matches!(e.code(), Code::TokenExpired | Code::InvalidState | Code::InvalidArgument | Code::InvalidKey)
        || matches!(e.http_status(), 401 | 403)
}

/// A listed order as a target: its id is how it is cancelled, so a row without one makes the
/// listing unusable.
fn listed_target(row: &Value) -> Result<Target> {
    let text = |name| row.get(name).and_then(Value::as_str).map(str::to_owned);
    let Some(order_id) = order_id(row) else {
        let row = crate::error::excerpt(&row.to_string());
        return Err(listing_error(format!("an order without a positive integer \"id\" ({row})")));
    };
    Ok(Target {
        order_id: Some(order_id),
        cl_ord_id: text("cl_ord_id"),
        symbol: text("symbol"),
        status: text("status").unwrap_or_else(|| "open".to_owned()),
        confirmed: false,
        known: true,
        cancelled_at: None,
    })
}

/// An order's venue id: a positive integer, written as a number or a string of digits (the
/// venue's answers write numbers either way), read exactly — never through a float, which
/// would name another order above 2^53.
fn order_id(order: &Value) -> Option<i64> {
    crate::endpoints::answer::venue_code(order.get("id")).ok().flatten().filter(|id| *id > 0)
}

fn listing_error(why: String) -> Error {
    Error::bad_response(format!("cancel_all: query_open_orders answered {why}; nothing was cancelled"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ended_statuses_are_statuses_the_library_knows() {
        for status in ENDED {
            assert!(crate::endpoints::ORDER_STATUSES.contains(status), "{status}");
        }
        for open in ["open", "new", "partially_filled", "untriggered"] {
            assert!(!ENDED.contains(&open), "{open}");
        }
    }

    #[test]
    fn order_ids_are_read_exactly_as_numbers_or_digits() {
        for (row, id) in [
            (json!({ "id": 7 }), Some(7)),
            (json!({ "id": "9007199254740993" }), Some(9_007_199_254_740_993)),
            (json!({ "id": 9_007_199_254_740_993_i64 }), Some(9_007_199_254_740_993)),
            // A float would name another order above 2^53; zero and negatives are no ids.
            (serde_json::from_str(r#"{"id":9.007199254740993e15}"#).unwrap(), None),
            (json!({ "id": 0 }), None),
            (json!({ "id": "-3" }), None),
            (json!({ "id": "7a" }), None),
            (json!({}), None),
        ] {
            assert_eq!(order_id(&row), id, "{row}");
        }
    }

    #[test]
    fn a_listed_order_without_an_id_makes_the_listing_unusable() {
        let error = listed_target(&json!({ "cl_ord_id": "mm-1", "status": "open" })).unwrap_err();
        assert_eq!(error.code(), Code::BadResponse);
        assert!(error.message().contains("without a positive integer \"id\""), "{}", error.message());
        let target = listed_target(&json!({ "id": 7, "cl_ord_id": "mm-1", "symbol": "BTC-USD" })).unwrap();
        assert_eq!(target.key(), json!({ "order_id": 7 }));
    }
}
