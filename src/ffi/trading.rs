//! The trading loop's endpoint calls, one export per venue endpoint, all of one shape:
//!
//! ```c
//! char *perps_X(perps_client *c, const perps_session *s, const char *params_json, perps_error **err);
//! ```
//!
//! Each export is a line calling [`call`] with its entry of the endpoint table
//! (`endpoints::Endpoint`); cbindgen reads only plain functions, hence no macro.
//! `perps_cancel_all`, a flow over several endpoints, has the same shape and goes through
//! [`run`], as [`call`] does.

use crate::client::Client;
use crate::endpoints::Endpoint;
use crate::ffi::client::perps_client;
use crate::ffi::error::perps_error;
use crate::ffi::handles::{borrow, borrow_or_null};
use crate::ffi::session::perps_session;
use crate::ffi::strings::{arg_opt_str, to_c_string};
use crate::session::Session;
use std::ffi::c_char;

/// The shared body of every export: borrow the handles (the session may be NULL; the core
/// refuses that for account endpoints), read `params_json` (NULL for none), call.
fn call(
    endpoint: Endpoint,
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    run(c, s, params_json, err, |client, session, params| client.call(endpoint, session, params))
}

/// Borrow the handles and `params_json` (NULL for none) as [`call`] does, and run `flow` with
/// them; its answer becomes the returned string, its error `*err`.
fn run(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
    flow: impl FnOnce(&Client, Option<&Session>, Option<&str>) -> crate::Result<String>,
) -> *mut c_char {
    ffi_boundary!(err, {
        let client = &borrow(c, "client")?.inner;
        let session = borrow_or_null(s, "session")?.map(|s| &*s.inner);
        let params = arg_opt_str(params_json, "params_json")?;
        to_c_string(flow(client, session, params)?)
    })
}

/// POST `/api/cancel_order` (body-signed): cancel one order. `params_json`:
/// `{"order_id": <int64>}` or `{"cl_ord_id": "<text>"}` (at least one). Returns the venue's
/// JSON (`{"code":0,"message":"success","request_id":…}` = the cancel was accepted, not yet
/// done). An order already gone: `PERPS_NOT_FOUND` (HTTP 404, or `code` 404). Never retried.
/// Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_cancel_order(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::CancelOrder, c, s, params_json, err)
}

/// POST `/api/cancel_orders` (body-signed): cancel several orders. `params_json`:
/// `{"order_id_list": [<int64>, …]}` and/or `{"cl_ord_id_list": ["<text>", …]}` (non-empty
/// lists; at least one of them). Returns the venue's JSON as sent: `[]` or
/// `{"code":0,"message":"success","request_id":…}` (the documents show both). Never retried.
/// Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_cancel_orders(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::CancelOrders, c, s, params_json, err)
}

/// Cancel every open order that `params_json` selects, then confirm each one ended — the
/// venue has no cancel-all. `params_json` (NULL or "" = `{}`: every open order of the
/// account), all optional:
/// - `"symbol"`: only orders of this symbol (e.g. "BTC-USD");
/// - `"cl_ord_id_prefix"`: only orders whose `cl_ord_id` starts with this (non-empty) text;
/// - `"cl_ord_id_list"`: a non-empty array of at most 1200 `cl_ord_id`s — orders the engine
///   sent, which the venue may not list yet. Alone, it selects only those orders; beside
///   `symbol` or `cl_ord_id_prefix`, they are cancelled whatever the filters say;
/// - `"confirm_ms"`: how long to confirm, an integer 0..300000 (default 15000; 0 = send the
///   cancels and do not confirm).
///
/// Steps: (1) GET `/api/query_open_orders` (`symbol` when given, `limit` 1200, the most it
/// lists; it has no cursor; its answer may take up to 16 MiB, or the client's
/// `max_response_bytes` when larger — 1200 long rows can pass the default 1 MiB) and keep the
/// selected orders (a row listed twice once); (2) the named `cl_ord_id`s it does not list are
/// added; (3) POST `/api/cancel_orders`: the listed ones by `order_id_list`, the others by
/// `cl_ord_id_list`, 100 ids a request, a batch that failed in passing (transport, 5xx, 429)
/// sent again, three sends at most; (4) unless
/// `confirm_ms` is 0, GET `/api/query_order` for each (an answer about another order — its
/// `id`, or else its `cl_ord_id`, not this one's — counts for nothing) until it has ended
/// (`canceled`, `cancelled`, `filled`, `rejected`, `expired`) or, for an order known to
/// exist (listed, or seen by a look-up), until the venue has answered 404 for 3 s (gone: it
/// can take seconds to show an order); one still open a second after its last cancel is
/// cancelled again with POST `/api/cancel_order`; this goes on until every order ended or
/// `confirm_ms` passed, counted from when the cancels were sent — each look-up and re-cancel
/// is held to that deadline too, so a venue that stops answering cannot make the call last
/// longer. A named order never seen gets 404s while the venue does not show it yet: it is
/// asked for until the deadline and reported `"not_found"`. Up to 8 look-ups and re-cancels
/// are out at once (one at a time, the venue's 100–250 ms round trip would allow 4–10 a
/// second); half as many after each rate refusal, down to one, and the orders the venue said
/// nothing of are asked for first in the next round. The run paces itself — each request starts at its turn: a burst of 10 requests,
/// then 20 a second, under the venue's ~22 an account — and for a rate refusal every request
/// pauses (those out finish) for its `Retry-After` (1 s without one, 10 s at most), whatever
/// the client's `rate_limit` (which also applies). Only cancels are repeated (they are
/// harmless: a cancel of an order that ended is a 404).
///
/// Returns the report (free it with `perps_string_free`):
/// ```json
/// {"complete": true, "orders": [{"order_id": 123, "cl_ord_id": "mm-1", "symbol": "BTC-USD",
///   "status": "canceled", "confirmed": true}], "cancel_requests": 1,
///  "failed_cancel_requests": 0, "queries": 1, "listing_truncated": false}
/// ```
/// - `complete`: every order confirmed ended, and the listing was whole; with `confirm_ms`
///   0, true only when there was nothing to cancel.
/// - `orders`: one per order cancelled, listed ones first in the venue's order, then the
///   named ones not listed. `order_id` (int64, or null for a named order never seen),
///   `cl_ord_id` (or null), `symbol` (or null when never seen), `confirmed` (it ended), and
///   `status`: the venue's last word on it — "canceled"/"cancelled", "filled", "rejected",
///   "expired" (ended), "open" or any other word the venue uses (still open at the deadline)
///   — or `"gone"` (404s for 3 s for an order known to exist: ended), `"not_found"` (a named
///   order never seen: not confirmed), `"unknown"` (a named order not looked up:
///   `confirm_ms` 0). Without confirmation a listed order keeps the status it was listed with.
/// - `cancel_requests`: `cancel_orders` batches (each send) and `cancel_order` re-cancels
///   made; `failed_cancel_requests`: how many of them failed (with `confirm_ms` 0, the sign
///   that the venue may not have them); `queries`: `query_order` look-ups made (requests the
///   client's rate limiter refused count too).
/// - `listing_truncated`: the venue may hold more open orders than it listed — its `total`
///   says more (a number or a string of digits), cannot be read, or the page is full (1200
///   rows); the orders beyond were not seen, and `complete` is false.
///
/// Errors (NULL returned, `*err` set): `PERPS_INVALID_ARGUMENT` for a NULL client or
/// session, `params_json` not a JSON object or not UTF-8, an unknown or repeated key, `null`,
/// a wrong type, an empty or invalid `symbol`, `cl_ord_id_prefix` or list entry (visible
/// ASCII without `"` and `\`, at most 64 characters), an empty list, `confirm_ms` out of
/// range — nothing is sent. `PERPS_TOKEN_EXPIRED` / `PERPS_INVALID_STATE` (no usable token)
/// before anything is sent. Any failure of the open-orders listing is returned as it is
/// (`PERPS_TRANSPORT`, `PERPS_HTTP_STATUS`, …; `PERPS_BAD_RESPONSE` for a list that is not
/// one, lists an order without an integer `id`, or is larger than its bound): nothing was
/// cancelled. A refusal of the session later on (HTTP 401 or 403, the token expiring) ends
/// the run: when cancel requests were already sent, the message starts "cancel_all stopped
/// after N cancel request(s) were sent" and `perps_error_may_have_reached_venue` is true —
/// look the orders up.
#[unsafe(no_mangle)]
pub extern "C" fn perps_cancel_all(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    run(c, s, params_json, err, |client, session, params| {
        let session = session.ok_or_else(|| crate::Error::invalid_argument("session is NULL"))?;
        client.cancel_all(session, params)
    })
}

/// POST `/api/change_leverage` (body-signed). `params_json`: `{"symbol": "BTC-USD",
/// "leverage": <integer 1..1000>}` (both required). Returns the venue's JSON. Never retried.
/// Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_change_leverage(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::ChangeLeverage, c, s, params_json, err)
}

/// POST `/api/change_margin_mode` (body-signed). `params_json`: `{"symbol": "BTC-USD",
/// "margin_mode": "cross" | "isolated"}` (both required). Returns the venue's JSON. Never
/// retried. Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_change_margin_mode(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::ChangeMarginMode, c, s, params_json, err)
}

/// GET `/api/query_order` (bearer): one order. `params_json`: `{"order_id": <int64>}` or
/// `{"cl_ord_id": "<text>"}` (at least one). Returns the venue's order object. An order not
/// found (gone, or not visible yet: the venue can take up to ~10 s to list a new order)
/// → `PERPS_NOT_FOUND`.
/// Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_query_order(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::QueryOrder, c, s, params_json, err)
}

/// GET `/api/query_orders` (bearer): order history. `params_json` (all optional, or NULL):
/// `symbol`, `status` ("open", "new", "canceled", "filled", "rejected", "untriggered", and
/// "partially_filled", "expired", which clients use, sent as written; "cancelled" is sent as
/// the venue's reference spells it, "canceled", as a filter matching nothing answers an
/// empty page),
/// `order_type` ("limit", "market"), `start`, `end` (ISO-8601 date-times: e.g.
/// "2026-01-02T03:04:05Z", "…05.250+08:00", "…05+0800"; without an offset
/// "2026-01-02T03:04:05" is UTC, a date alone "2026-01-02" is midnight UTC; sent as RFC 3339,
/// e.g. "2026-01-02T00:00:00Z"; start not after end), `last_id` (int64 cursor), `limit`
/// (1..500). Returns the venue's JSON (`{"page_size","result":[…],"total"}` or a bare array).
/// Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_query_orders(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::QueryOrders, c, s, params_json, err)
}

/// GET `/api/query_open_orders` (bearer): resting orders. `params_json` (optional, or
/// NULL): `symbol`, `limit` (1..1200). Returns the venue's JSON (an envelope or a bare
/// array). Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_query_open_orders(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::QueryOpenOrders, c, s, params_json, err)
}

/// GET `/api/query_trades` (bearer): the account's fills. `params_json` (all optional, or
/// NULL): `symbol`, `side` ("buy", "sell"), `start`, `end` (ISO-8601, read and sent as for
/// `perps_query_orders`; start not after end),
/// `last_id` (int64 cursor), `limit` (1..500). Returns the venue's JSON.
/// Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_query_trades(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::QueryTrades, c, s, params_json, err)
}

/// GET `/api/query_funding_history` (bearer): the account's funding payments, one row per
/// position and settlement (`{"id","user","asset","symbol","qty","txn_type","created_at",
/// "updated_at"}`, `qty` signed: negative = paid; `txn_type` "funding_fee" live, "funding"
/// in the documents). `params_json` (all optional, or NULL): `symbol`, `start`, `end`
/// (ISO-8601, read and sent as for `perps_query_orders`; start not after end), `last_id`
/// (int64 cursor: rows come newest first and `last_id` pages toward older ones), `limit`
/// (1..500). Returns the venue's JSON as sent (`null` as `[]`): a bare array live, or the
/// page envelope `{"page_size","result":[…],"total"}` of the other lists. Free the result
/// with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_query_funding_history(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::QueryFundingHistory, c, s, params_json, err)
}

/// GET `/api/query_positions` (bearer). `params_json` (optional, or NULL): `symbol`.
/// Returns the venue's JSON (positions with a signed `qty`: negative is short; `null` as `[]`).
/// Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_query_positions(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::QueryPositions, c, s, params_json, err)
}

/// GET `/api/query_balance` (bearer). `params_json`: NULL, "" or "{}" (no parameters).
/// Returns the venue's balance snapshot JSON. Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_query_balance(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::QueryBalance, c, s, params_json, err)
}

/// GET `/api/query_position_config` (bearer). `params_json`: `{"symbol": "BTC-USD"}`
/// (required). Returns the venue's JSON (`{"symbol","leverage","margin_mode"}`).
/// Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_query_position_config(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::QueryPositionConfig, c, s, params_json, err)
}

/// GET `/api/query_symbol_info` (public: `s` may be NULL; no token is sent). `params_json`
/// (optional, or NULL): `symbol`; without it, every symbol. Returns the venue's JSON (`null`
/// as `[]`). With the client option `symbol_rules`, a call without a symbol also refreshes
/// the client's symbol rules ("on demand" refresh). Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_query_symbol_info(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::QuerySymbolInfo, c, s, params_json, err)
}

/// GET `/api/query_symbol_price` (public: `s` may be NULL). `params_json`:
/// `{"symbol": "BTC-USD"}` (required). Returns the venue's JSON (`mark_price`,
/// `index_price`, `last_price`, … as the venue writes them). Free the result with
/// `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_query_symbol_price(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::QuerySymbolPrice, c, s, params_json, err)
}

/// GET `/api/query_depth_book` (public: `s` may be NULL). `params_json`: `{"symbol":
/// "BTC-USD"}` (required), optional `limit` (1..1000, undocumented, passed through).
/// Returns the venue's JSON with the levels sorted best first — `bids` high to low, `asks`
/// low to high — by exact decimal value (the venue sends them unsorted); every level and
/// every other field kept as the venue wrote them. The book has both sides, as documented
/// (an empty one `[]` or null, written `[]`); one missing is `PERPS_BAD_RESPONSE` naming it,
/// as the stream's `depth_book` push. Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_query_depth_book(
    c: *const perps_client,
    s: *const perps_session,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    call(Endpoint::QueryDepthBook, c, s, params_json, err)
}
