//! Body-signed POSTs: new_order, cancel_order, cancel_orders, change_leverage,
//! change_margin_mode, transfer_margin. Their answer is the venue's acceptance
//! `{"code":0,"message":"success","request_id":…}` (the `x-request-id`), which means
//! "submitted": an `alo` order that would cross is accepted here and ends `rejected`.
//! With `x-session-id`, an accepted new_order or cancel_order also reports on the ws-api
//! connections of that session (`ws::session`).

use serde_json::{Map, Value, json};

use super::Ctx;
use crate::config::CancelOrdersAnswer;
use crate::decimal::{Dec, DecError};
use crate::engine::events::Channel;
use crate::engine::order::MarginMode;
use crate::engine::{Reject, Who};
use crate::faults::Faults;
use crate::http::{Reply, error};
use crate::order_check::{check_cancel_order, check_new_order, nulls_as_absent};
use crate::state::Session;
use crate::ws::session::{Outcome, route_rest_result};

pub(super) fn handle(
    ctx: &mut Ctx<'_>,
    name: &str,
    session: &Session,
    body: Map<String, Value>,
    request_id: &str,
    faults: &Faults,
) -> Reply {
    let shared = ctx.shared;
    let who = Who { account: &session.account, user: &session.user };
    let now_us = shared.clock.now_us();
    let success = || Reply::Json(200, json!({"code": 0, "message": "success", "request_id": request_id}));
    let faulted = || {
        Reply::Json(
            200,
            json!({"code": 400, "message": format!("{name} rejected (sandbox fault)"), "request_id": request_id}),
        )
    };
    let refused = |r: Reject| error(r.status, r.message);
    match name {
        "new_order" => {
            let order = match check_new_order(&body, shared.config.strict) {
                Ok(o) => o,
                Err(m) => return error(400, m),
            };
            if faults.order_code_nonzero {
                return Reply::Json(200, json!({"code": 400, "message": "order rejected (sandbox fault)"}));
            }
            let placed = shared.engine().place(who, order, now_us);
            match placed {
                Ok(placed) => {
                    shared.state().stats.orders_accepted += 1;
                    let fills = placed.events.iter().filter(|e| e.channel == Channel::Trade).count();
                    ctx.note = Some(format!("accepted: order {} {} ({fills} fill(s))", placed.order_id, placed.status));
                    let outcome = if placed.status == "rejected" {
                        Outcome::Rejected(400, placed.remark)
                    } else {
                        Outcome::Success
                    };
                    route_to_session(ctx, session, request_id, &outcome);
                    success()
                }
                Err(r) => refused(r),
            }
        }
        "cancel_order" => {
            let target = match check_cancel_order(&body, shared.config.strict) {
                Ok(t) => t,
                Err(m) => return error(400, m),
            };
            if faults.order_code_nonzero {
                return faulted();
            }
            let cancelled = shared.engine().cancel(who, &target, now_us);
            match cancelled {
                Ok(_) => {
                    route_to_session(ctx, session, request_id, &Outcome::Success);
                    success()
                }
                Err(r) => refused(r),
            }
        }
        "cancel_orders" => {
            let body = nulls_as_absent(&body, shared.config.strict);
            if let Some(unknown) = body.keys().find(|k| !["order_id_list", "cl_ord_id_list"].contains(&k.as_str())) {
                return error(400, format!("unknown field {unknown}"));
            }
            let ids: Option<Vec<u64>> = match body.get("order_id_list") {
                None => Some(Vec::new()),
                Some(Value::Array(a)) => a.iter().map(Value::as_u64).collect(),
                Some(_) => None,
            };
            let cl_ids: Option<Vec<String>> = match body.get("cl_ord_id_list") {
                None => Some(Vec::new()),
                Some(Value::Array(a)) => a.iter().map(|v| v.as_str().map(str::to_owned)).collect(),
                Some(_) => None,
            };
            let (Some(ids), Some(cl_ids)) = (ids, cl_ids) else {
                return error(400, "order_id_list must be an array of JSON integers, cl_ord_id_list of strings");
            };
            if !body.contains_key("order_id_list") && !body.contains_key("cl_ord_id_list") {
                return error(400, "cancel_orders needs order_id_list or cl_ord_id_list");
            }
            if faults.order_code_nonzero {
                return faulted();
            }
            let events = shared.engine().cancel_many(who, &ids, &cl_ids, now_us);
            let canceled = events.iter().filter(|e| e.channel == Channel::Order).count();
            ctx.note = Some(format!("accepted: {canceled} order(s) canceled"));
            match shared.config.cancel_orders_answer {
                CancelOrdersAnswer::Envelope => success(),
                CancelOrdersAnswer::EmptyArray => Reply::Json(200, json!([])),
            }
        }
        "change_leverage" => {
            let (symbol, leverage) =
                match (fields(&body, &["symbol", "leverage"]), body.get("symbol"), body.get("leverage")) {
                    (Err(m), _, _) => return error(400, m),
                    (_, Some(Value::String(s)), Some(l)) if l.is_u64() => (s.clone(), l.as_u64().expect("checked")),
                    _ => return error(400, "change_leverage needs symbol (string) and leverage (JSON integer)"),
                };
            if faults.order_code_nonzero {
                return faulted();
            }
            let leverage = u32::try_from(leverage).unwrap_or(u32::MAX);
            let changed = shared.engine().change_leverage(who, &symbol, leverage);
            changed.map_or_else(refused, |_| success())
        }
        "change_margin_mode" => {
            let (symbol, mode) =
                match (fields(&body, &["symbol", "margin_mode"]), body.get("symbol"), body.get("margin_mode")) {
                    (Err(m), _, _) => return error(400, m),
                    (_, Some(Value::String(s)), Some(Value::String(m))) if MarginMode::parse(m).is_some() => {
                        (s.clone(), MarginMode::parse(m).expect("checked"))
                    }
                    _ => {
                        return error(400, "change_margin_mode needs symbol (string) and margin_mode (cross|isolated)");
                    }
                };
            if faults.order_code_nonzero {
                return faulted();
            }
            let changed = shared.engine().change_margin_mode(who, &symbol, mode);
            changed.map_or_else(refused, |_| success())
        }
        // Decimal amounts are JSON strings ([DOC-J]); negative takes margin out ([WJ]).
        "transfer_margin" => {
            let (symbol, amount) =
                match (fields(&body, &["symbol", "amount_in"]), body.get("symbol"), body.get("amount_in")) {
                    (Err(m), _, _) => return error(400, m),
                    (_, Some(Value::String(s)), Some(Value::String(a))) => (s.clone(), a.clone()),
                    _ => return error(400, "transfer_margin needs symbol (string) and amount_in (decimal string)"),
                };
            let amount = match Dec::parse(&amount) {
                Ok(a) if a.is_zero() => return error(400, format!("amount_in must not be zero, not {amount:?}")),
                Ok(a) => a,
                Err(DecError::TooPrecise) => {
                    return error(400, format!("amount_in {amount} has more than twelve decimals"));
                }
                Err(DecError::TooLarge) => return error(400, format!("amount_in {amount} is too large")),
                Err(DecError::Malformed) => {
                    return error(
                        400,
                        format!(
                            "amount_in must be a decimal string (\"100.5\" moves margin in, \"-100.5\" takes it \
                             out), not {amount:?}"
                        ),
                    );
                }
            };
            if faults.order_code_nonzero {
                return faulted();
            }
            let transferred = shared.engine().transfer_margin(who, &symbol, amount, now_us);
            match transferred {
                Ok(_) => {
                    let direction = if amount.is_positive() { "into" } else { "out of" };
                    ctx.note = Some(format!("accepted: {} DUSD {direction} the {symbol} position", amount.abs()));
                    success()
                }
                Err(r) => refused(r),
            }
        }
        _ => error(404, format!("no endpoint {}", ctx.inc.path)),
    }
}

/// `x-session-id` on an accepted `new_order` / `cancel_order`: the result also goes, as the
/// ws-api's two frames keyed by this request's `x-request-id`, to the ws-api connections of
/// that session (venue-api.md §2.4).
fn route_to_session(ctx: &Ctx<'_>, session: &Session, request_id: &str, outcome: &Outcome) {
    if let Ok(Some(session_id)) = ctx.inc.header("x-session-id")
        && !session_id.is_empty()
    {
        route_rest_result(ctx.shared, session_id, request_id, &session.account, outcome);
    }
}

/// Refuses fields outside `allowed`.
fn fields(body: &Map<String, Value>, allowed: &[&str]) -> Result<(), String> {
    match body.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(unknown) => Err(format!("unknown field {unknown}")),
        None => Ok(()),
    }
}
