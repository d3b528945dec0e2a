//! The trading endpoints under `{perps}/api/`.
//!
//! Body-signed POSTs are checked in the venue's order: bearer token (401), signature headers
//! (400), Ed25519 signature (403), replayed `x-request-id` (400), Content-Type (400), body
//! (400). Reads need the bearer token only; `kline/time` needs nothing.

use std::thread::sleep;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::body_verify::{read_headers, verify};
use super::http::{Incoming, Reply, error};
use super::order_check::check_new_order;
use super::state::{Session, Shared};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    NewOrder,
    CancelOrder,
    CancelOrders,
    ChangeLeverage,
    ChangeMarginMode,
    QueryOpenOrders,
    QueryOrder,
}

impl Endpoint {
    fn from_path(path: &str) -> Option<Endpoint> {
        Some(match path {
            "new_order" => Endpoint::NewOrder,
            "cancel_order" => Endpoint::CancelOrder,
            "cancel_orders" => Endpoint::CancelOrders,
            "change_leverage" => Endpoint::ChangeLeverage,
            "change_margin_mode" => Endpoint::ChangeMarginMode,
            "query_open_orders" => Endpoint::QueryOpenOrders,
            "query_order" => Endpoint::QueryOrder,
            _ => return None,
        })
    }

    fn is_read(self) -> bool {
        matches!(self, Endpoint::QueryOpenOrders | Endpoint::QueryOrder)
    }
}

/// `GET {perps}/api/kline/time`: the sandbox clock as a bare integer of Unix seconds.
/// Faults do not apply here, so a test of an order failure is not turned into a failure of
/// the client's clock synchronisation.
pub(crate) fn server_time(shared: &Shared) -> Reply {
    Reply::Text(200, shared.clock.now_ms().div_euclid(1000).to_string())
}

/// Any other `{perps}/api/{name}`; `name` is the path after `/api/`.
pub(crate) fn handle(shared: &Shared, inc: &Incoming, name: &str) -> Reply {
    let Some(ep) = Endpoint::from_path(name) else {
        return error(404, format!("no endpoint {}", inc.path));
    };
    let method = if ep.is_read() { "GET" } else { "POST" };
    if inc.method != method {
        return error(405, format!("{} takes {method}", inc.path));
    }
    if ep == Endpoint::NewOrder {
        // The body has been read: from here on the order may have reached the venue.
        shared.state().stats.orders_received += 1;
    }
    let faults = shared.faults();
    if faults.slow_ms > 0 {
        sleep(Duration::from_millis(faults.slow_ms));
    }
    if ep == Endpoint::NewOrder && faults.close_after_order {
        return Reply::CloseSilently;
    }
    if let Some(status) = faults.status {
        return error(status, format!("sandbox fault: HTTP {status}"));
    }

    let session = match bearer(shared, inc) {
        Ok(s) => s,
        Err(reply) => return reply,
    };
    if !shared.allow(&session.account) {
        return error(429, "rate limit");
    }
    match ep {
        Endpoint::QueryOpenOrders => return open_orders(shared, inc, &session),
        Endpoint::QueryOrder => return query_order(shared, inc, &session),
        _ => {}
    }

    let now_ms = shared.clock.now_ms();
    let headers = match read_headers(inc, now_ms, shared.config.timestamp_window_ms) {
        Ok(h) => h,
        Err(m) => return error(400, m),
    };
    if !verify(&session.key, &headers, &inc.body) {
        return error(403, "invalid body signature");
    }
    if !shared.state().replay.first_use(headers.id, now_ms) {
        return error(400, "duplicate x-request-id");
    }
    if !inc.is_json() {
        return error(400, "Content-Type must be application/json");
    }
    let body = match inc.json_object() {
        Ok(b) => b,
        Err(m) => return error(400, m),
    };
    let request_id = headers.id;
    match ep {
        Endpoint::NewOrder => new_order(shared, &session, body, request_id, now_ms),
        Endpoint::CancelOrder => cancel_order(shared, &session, &body, request_id),
        Endpoint::CancelOrders => cancel_orders(shared, &session, &body, request_id),
        _ => success(request_id),
    }
}

fn success(request_id: &str) -> Reply {
    Reply::Json(200, json!({"code": 0, "message": "success", "request_id": request_id}))
}

/// `Authorization: Bearer <token>`, known and not expired; otherwise 401.
fn bearer(shared: &Shared, inc: &Incoming) -> Result<Session, Reply> {
    let value = inc.header("authorization").map_err(|m| error(401, m))?;
    let token = value
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| error(401, "missing bearer token"))?;
    let session = shared.state().sessions.get(token).cloned();
    let session = session.ok_or_else(|| error(401, "unknown token"))?;
    let now = shared.clock.now_ms().div_euclid(1000);
    if session.expires_at.is_some_and(|exp| exp <= now) {
        return Err(error(401, "token expired"));
    }
    Ok(session)
}

fn new_order(
    shared: &Shared,
    session: &Session,
    mut order: Map<String, Value>,
    request_id: &str,
    now_ms: i64,
) -> Reply {
    if let Err(m) = check_new_order(&order) {
        return error(400, m);
    }
    let mut st = shared.state();
    if st.faults.order_code_nonzero {
        return Reply::Json(200, json!({"code": 400, "message": "order rejected (sandbox fault)"}));
    }
    let order_id = st.next_order_id;
    st.next_order_id += 1;
    order.insert("order_id".into(), order_id.into());
    order.insert("status".into(), "new".into());
    order.insert("request_id".into(), request_id.into());
    order.insert("created_at".into(), now_ms.into());
    st.orders.entry(session.account.clone()).or_default().push(Value::Object(order));
    st.stats.orders_accepted += 1;
    success(request_id)
}

fn cancel_order(shared: &Shared, session: &Session, body: &Map<String, Value>, id: &str) -> Reply {
    let matches: Box<dyn Fn(&Value) -> bool> = match (body.get("order_id"), body.get("cl_ord_id")) {
        (Some(v), _) if v.is_u64() => {
            let n = v.clone();
            Box::new(move |o| o.get("order_id") == Some(&n))
        }
        (None, Some(Value::String(c))) => {
            let c = c.clone();
            Box::new(move |o| o.get("cl_ord_id").and_then(Value::as_str) == Some(c.as_str()))
        }
        _ => {
            return error(400, "cancel_order needs order_id (integer) or cl_ord_id (string)");
        }
    };
    if let Some(orders) = shared.state().orders.get_mut(&session.account) {
        orders.retain(|o| !matches(o));
    }
    success(id)
}

/// Cancels the orders listed in `order_id_list` / `cl_ord_id_list` when given.
fn cancel_orders(shared: &Shared, session: &Session, body: &Map<String, Value>, id: &str) -> Reply {
    let listed = |k: &str| body.get(k).and_then(Value::as_array).cloned().unwrap_or_default();
    let (ids, cl_ids) = (listed("order_id_list"), listed("cl_ord_id_list"));
    if let Some(orders) = shared.state().orders.get_mut(&session.account) {
        orders.retain(|o| {
            !o.get("order_id").is_some_and(|v| ids.contains(v))
                && !o.get("cl_ord_id").is_some_and(|v| cl_ids.contains(v))
        });
    }
    success(id)
}

/// `GET query_open_orders[?symbol=…]`: this account's accepted, not cancelled orders.
fn open_orders(shared: &Shared, inc: &Incoming, session: &Session) -> Reply {
    let symbol = match inc.query_param("symbol") {
        Ok(s) => s,
        Err(m) => return error(400, m),
    };
    let st = shared.state();
    let result: Vec<&Value> = st
        .orders
        .get(&session.account)
        .into_iter()
        .flatten()
        .filter(|o| symbol.is_none_or(|s| o.get("symbol").and_then(Value::as_str) == Some(s)))
        .collect();
    Reply::Json(200, json!({"code": 0, "message": "success", "result": result}))
}

/// `GET query_order?order_id=…` or `?cl_ord_id=…`.
fn query_order(shared: &Shared, inc: &Incoming, session: &Session) -> Reply {
    let (by_id, by_cl) = match (inc.query_param("order_id"), inc.query_param("cl_ord_id")) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(m), _) | (_, Err(m)) => return error(400, m),
    };
    let wanted: Box<dyn Fn(&Value) -> bool> = match (by_id.map(str::parse::<u64>), by_cl) {
        (Some(Ok(n)), _) => Box::new(move |o| o.get("order_id").and_then(Value::as_u64) == Some(n)),
        (None, Some(c)) => Box::new(move |o| o.get("cl_ord_id").and_then(Value::as_str) == Some(c)),
        _ => return error(400, "query_order needs order_id (integer) or cl_ord_id"),
    };
    let st = shared.state();
    match st.orders.get(&session.account).into_iter().flatten().find(|o| wanted(o)) {
        Some(o) => Reply::Json(200, json!({"code": 0, "message": "success", "result": o})),
        None => error(404, "order not found"),
    }
}
