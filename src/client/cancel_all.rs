//! `cancel_all`: cancel every open order of the account (or of a symbol, or whose
//! `cl_ord_id` has a prefix, or those named), then confirm that each one ended.
//!
//! The venue has no cancel-all (`venue-api.md` §2.3); market makers emulate it with an
//! open-orders snapshot and a batch cancel (§5). Two facts of the venue shape the flow: the
//! open-orders list keeps cancelled orders for ~15 s (§1.3), so only `query_order` tells
//! whether an order ended; and a new order may be invisible for a few seconds (§1.4), so an
//! order the engine sent may be missing from the list and a 404 for it proves nothing.
//!
//! Every request goes through `endpoint_answer`, as the public endpoint calls do: the same
//! parameter checks, pacing, signatures, and error mapping — and the run paces itself too
//! (`requests.rs`); the confirmation has several requests out at once (`confirm.rs`). The
//! listing alone may answer more than `max_response_bytes` (`requests::LISTING_MAX_BYTES`).
//! Only cancels and reads are sent; cancels are safe to repeat (a cancel of
//! an order already gone is a 404), so a cancel that may have been lost (a transport failure,
//! a 5xx) is followed by another, never by anything else.

mod confirm;
mod requests;
#[cfg(test)]
mod tests;

use super::{Client, guarded};
use crate::endpoints::params::Params;
use crate::endpoints::{Auth, Endpoint, Kind, Param, Rule, Shape, Spec, Verb};
use crate::error::{Error, Result};
use crate::session::Session;
use requests::{Run, worth_sending_again};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// How long the confirmation waits by default: the open-orders list's own lag (§1.3), by
/// which time a cancel the venue accepted is long done.
const DEFAULT_CONFIRM_MS: i64 = 15_000;
/// The longest confirmation taken: five minutes. A shutdown that waits longer has a venue
/// problem no further waiting solves.
const MAX_CONFIRM_MS: i64 = 300_000;
/// Ids per `cancel_orders` request: a body of bounded size whatever the account holds.
const BATCH: usize = 100;
/// Sends of one batch: one lost in passing (a transport failure, a 5xx, a 429) is sent
/// again whole — cancels are safe to repeat — before the confirmation falls back to
/// cancelling its orders one by one.
const BATCH_SENDS: u32 = 3;
/// An order still open this long after its last cancel is cancelled again: the cancel was
/// lost (or refused); the venue ends a cancelled order well within it.
const RECANCEL_AFTER: Duration = Duration::from_secs(1);
/// How long an order known to exist must stay unseen (404) to count as gone: the venue can
/// take seconds to show an order to `query_order` (§1.4; [LP] waits 10 s).
const GONE_AFTER: Duration = Duration::from_secs(3);
/// The pause between two rounds of look-ups: a round of few orders asks again soon, without
/// spinning on the venue.
const ROUND_PAUSE: Duration = Duration::from_millis(200);
/// The most `query_open_orders` lists in one answer (its `limit`'s maximum, §1.4). It takes
/// no cursor: an account with more open orders is listed in part (`listing_truncated`).
const OPEN_ORDERS_PAGE: usize = 1200;
/// The most `cl_ord_id`s a call may name: as many as the venue lists.
const MAX_NAMED: usize = OPEN_ORDERS_PAGE;
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
    /// (404s for an order known to exist), "not_found" (never seen), "unknown" (not asked).
    status: String,
    confirmed: bool,
    /// Whether the order is known to exist (listed, or seen by a look-up): only then do 404s
    /// mean it is gone rather than not visible yet.
    #[serde(skip)]
    known: bool,
    #[serde(skip)]
    cancelled_at: Option<Instant>,
    /// Since when the venue answers 404 for it (cleared when it shows it again).
    #[serde(skip)]
    unseen_since: Option<Instant>,
}

impl Target {
    fn named(cl_ord_id: &str) -> Target {
        Target {
            order_id: None,
            cl_ord_id: Some(cl_ord_id.to_owned()),
            symbol: None,
            status: "unknown".to_owned(),
            confirmed: false,
            known: false,
            cancelled_at: None,
            unseen_since: None,
        }
    }

    /// How requests name the order: its venue id when known (a `cl_ord_id` may have been
    /// used twice), else its `cl_ord_id`.
    fn key(&self) -> Value {
        match (self.order_id, &self.cl_ord_id) {
            (Some(id), _) => json!({ "order_id": id }),
            (None, cl) => json!({ "cl_ord_id": cl }),
        }
    }

    /// Whether a look-up's answer is about this order: by id when both have one, else by
    /// `cl_ord_id`. An answer about another order (a venue's mistake, or a hostile one) says
    /// nothing about this one, and must not end it.
    fn is_answered_by(&self, order: &Value) -> bool {
        let cl = order.get("cl_ord_id").and_then(Value::as_str);
        match (self.order_id, order_id(order)) {
            (Some(ours), Some(theirs)) => ours == theirs,
            _ => cl.is_some() && cl == self.cl_ord_id.as_deref(),
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
    failed_cancel_requests: u64,
    queries: u64,
    listing_truncated: bool,
}

/// What the caller asked for.
struct Selection<'p> {
    symbol: Option<&'p str>,
    prefix: Option<&'p str>,
    /// The `cl_ord_id`s named, each once, in the caller's order.
    named: Vec<&'p str>,
}

impl Selection<'_> {
    /// Whether a listed order is chosen. The filters choose among the listed orders, and a
    /// named order is chosen whatever they say; named orders alone (no filter) choose only
    /// themselves — naming orders must never cancel every other order of the account.
    fn chooses(&self, target: &Target) -> bool {
        let cl = target.cl_ord_id.as_deref();
        let named = cl.is_some_and(|cl| self.named.contains(&cl));
        let filtered = self.symbol.is_some() || self.prefix.is_some() || self.named.is_empty();
        // A row that names no symbol was listed for the symbol asked for: it is of it.
        let of_symbol = self.symbol.is_none_or(|s| target.symbol.as_deref().is_none_or(|row| row == s));
        let of_prefix = self.prefix.is_none_or(|p| cl.is_some_and(|cl| cl.starts_with(p)));
        named || (filtered && of_symbol && of_prefix)
    }
}

impl Client {
    /// Cancel every open order that `params_json` selects and confirm each ended; returns the
    /// report JSON. Errors: invalid parameters (nothing sent), a failure of the open-orders
    /// listing (nothing cancelled), and a refused session (401/403, an expired or absent
    /// token) at any step — its message then says how many cancel requests were sent.
    pub fn cancel_all(&self, session: &Session, params_json: Option<&str>) -> Result<String> {
        let params = Params::parse(&SPEC, params_json)?;
        let text = |name| params.get(name).and_then(Value::as_str);
        let mut selection = Selection { symbol: text("symbol"), prefix: text("cl_ord_id_prefix"), named: Vec::new() };
        let list = params.get("cl_ord_id_list").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        if list.len() > MAX_NAMED {
            return Err(Error::invalid_argument(format!(
                "\"cl_ord_id_list\" names {} orders; at most {MAX_NAMED} (as many as the venue lists)",
                list.len()
            )));
        }
        let mut seen = HashSet::new();
        for id in list {
            let id = id.as_str().expect("checked: a list of strings");
            if seen.insert(id) {
                selection.named.push(id);
            }
        }
        let confirm_ms = params.get("confirm_ms").and_then(Value::as_i64).unwrap_or(DEFAULT_CONFIRM_MS);
        guarded(session, None, |secrets| Run::new(self, session, secrets).cancel_all(&selection, confirm_ms))
    }
}

impl Run<'_> {
    fn cancel_all(&self, selection: &Selection<'_>, confirm_ms: i64) -> Result<String> {
        let (rows, listing_truncated) = self.open_orders(selection.symbol)?;
        let mut targets = Vec::new();
        let mut listed_ids = HashSet::new();
        for row in rows {
            let target = listed_target(&row)?;
            // A row listed twice is one order, cancelled and reported once.
            if selection.chooses(&target) && listed_ids.insert(target.order_id) {
                targets.push(target);
            }
        }
        let listed_count = targets.len();
        for id in &selection.named {
            if !targets.iter().any(|t| t.cl_ord_id.as_deref() == Some(id)) {
                targets.push(Target::named(id));
            }
        }

        let (listed, unlisted) = targets.split_at(listed_count);
        let ids: Vec<i64> = listed.iter().filter_map(|t| t.order_id).collect();
        let cls: Vec<&str> = unlisted.iter().filter_map(|t| t.cl_ord_id.as_deref()).collect();
        for batch in ids.chunks(BATCH) {
            self.cancel_batch(&json!({ "order_id_list": batch }))?;
        }
        for batch in cls.chunks(BATCH) {
            self.cancel_batch(&json!({ "cl_ord_id_list": batch }))?;
        }
        let sent = Instant::now();
        for target in &mut targets {
            target.cancelled_at = Some(sent);
        }

        if confirm_ms > 0 {
            let deadline = sent + Duration::from_millis(confirm_ms.unsigned_abs());
            self.confirm(&mut targets, deadline)?;
        }
        let counts = self.counts();
        let report = Report {
            complete: !listing_truncated && targets.iter().all(|t| t.confirmed),
            orders: &targets,
            cancel_requests: counts.cancel_requests,
            failed_cancel_requests: counts.failed_cancel_requests,
            queries: counts.queries,
            listing_truncated,
        };
        Ok(serde_json::to_string(&report).expect("the report serialises"))
    }

    /// The open orders (of `symbol` when given), and whether the venue may hold more than it
    /// listed. Any failure ends the run: nothing was cancelled yet.
    fn open_orders(&self, symbol: Option<&str>) -> Result<(Vec<Value>, bool)> {
        let mut params = json!({ "limit": OPEN_ORDERS_PAGE });
        if let Some(symbol) = symbol {
            params["symbol"] = json!(symbol);
        }
        // Any failure of the listing ends the run: nothing was sent before it.
        let answer = self.send(Endpoint::QueryOpenOrders, &params, None)??;
        let answer: Value = serde_json::from_str(&answer).map_err(|e| listing_error(format!("not JSON ({e})")))?;
        let (rows, total) = match answer {
            Value::Array(rows) => (rows, None),
            Value::Object(mut page) => match page.remove("result") {
                Some(Value::Array(rows)) => (rows, page.remove("total")),
                Some(Value::Null) => (Vec::new(), page.remove("total")),
                _ => return Err(listing_error("an object without a \"result\" list".to_owned())),
            },
            _ => return Err(listing_error("neither a list nor a page of orders".to_owned())),
        };
        let truncated = may_hold_more(rows.len(), total.as_ref());
        Ok((rows, truncated))
    }

    /// Cancel a batch, sending it again (up to `BATCH_SENDS` in all) while its failure leaves
    /// it unsent or unknown. A batch still failed is left to the confirmation, which cancels
    /// its orders one by one.
    fn cancel_batch(&self, params: &Value) -> Result<()> {
        for send in 1..=BATCH_SENDS {
            // A rate refusal's pause — this batch's, or the one before's last send's — is
            // waited out first: a send the halted run would not make must not count as one.
            if let Some(pause) = self.take_pause() {
                std::thread::sleep(pause);
            }
            match self.send(Endpoint::CancelOrders, params, None)? {
                Ok(_) => return Ok(()),
                Err(e) if send < BATCH_SENDS && worth_sending_again(&e) => {
                    if !self.halted() {
                        std::thread::sleep(ROUND_PAUSE);
                    }
                }
                Err(_) => return Ok(()),
            }
        }
        Ok(())
    }
}

/// Whether the venue may hold more open orders than the `listed` rows it answered: its
/// `total` says so (a number or a string of digits), or cannot be read, or the page is full
/// (`OPEN_ORDERS_PAGE` rows: more may be there, and a full page with no `total` says nothing
/// of them).
fn may_hold_more(listed: usize, total: Option<&Value>) -> bool {
    let total_says_more = match total {
        None | Some(Value::Null) => false,
        Some(total) => match crate::endpoints::answer::venue_code(Some(total)) {
            Ok(Some(total)) => total > listed as i64,
            _ => true,
        },
    };
    total_says_more || listed >= OPEN_ORDERS_PAGE
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
        unseen_since: None,
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
