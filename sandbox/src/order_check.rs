//! `new_order` body validation as the venue documents it (venue facts, "Trading endpoints"):
//! decimals must be JSON strings, integers JSON integers, and an unknown field is refused,
//! so a client that sends floats or misspells a field fails here first.
//!
//! One leniency, as the live venue: a market order may omit `time_in_force` (Bonfire-Lab's
//! live test); a limit order still needs it. Strict mode requires it on market orders too.
//! Another: JSON `null` for a field counts as the field absent (clients serialise optional
//! fields that way: `"price": null` on a market order, `"cl_ord_id": null`); strict mode
//! refuses it with the field's usual message.

use serde_json::{Map, Value};

use crate::decimal::{Dec, DecError};
use crate::engine::OrderRef;
use crate::engine::order::{MarginMode, NewOrder, OrderType, Side, Tif};

const FIELDS: &[&str] = &[
    "symbol",
    "side",
    "order_type",
    "qty",
    "price",
    "time_in_force",
    "reduce_only",
    "cl_ord_id",
    "margin_mode",
    "leverage",
    "tp_price",
    "sl_price",
];

/// The body with its `null` fields removed (absent), except in strict mode.
pub(crate) fn nulls_as_absent(body: &Map<String, Value>, strict: bool) -> Map<String, Value> {
    body.iter().filter(|(_, v)| strict || !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// `cancel_order` body: `order_id` (JSON integer) or `cl_ord_id` (non-empty string).
pub(crate) fn check_cancel_order(body: &Map<String, Value>, strict: bool) -> Result<OrderRef, String> {
    let body = &nulls_as_absent(body, strict);
    if let Some(unknown) = body.keys().find(|k| !["order_id", "cl_ord_id"].contains(&k.as_str())) {
        return Err(format!("unknown field {unknown}"));
    }
    match (body.get("order_id"), body.get("cl_ord_id")) {
        (Some(v), _) if v.is_u64() => Ok(OrderRef::Id(v.as_u64().expect("checked"))),
        (None, Some(Value::String(c))) if !c.is_empty() => Ok(OrderRef::ClOrdId(c.clone())),
        _ => Err("cancel_order needs order_id (JSON integer) or cl_ord_id (string)".into()),
    }
}

pub(crate) fn check_new_order(o: &Map<String, Value>, strict: bool) -> Result<NewOrder, String> {
    let o = &nulls_as_absent(o, strict);
    if let Some(unknown) = o.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!("unknown field {unknown}"));
    }
    let symbol = match o.get("symbol") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err("symbol is required and must be a non-empty string".into()),
    };
    let side = one_of(o, "side", &["buy", "sell"], true)?.and_then(Side::parse).expect("required");
    let order_type = one_of(o, "order_type", &["limit", "market"], true)?.and_then(OrderType::parse).expect("required");
    let qty = decimal(o, "qty", true)?.expect("required");
    if strict && order_type == OrderType::Market && !o.contains_key("time_in_force") {
        return Err("time_in_force is required on market orders too (strict mode)".into());
    }
    let tif_required = order_type == OrderType::Limit;
    let tif = one_of(o, "time_in_force", &["gtc", "ioc", "alo"], tif_required)?.and_then(Tif::parse);
    let reduce_only = match o.get("reduce_only") {
        Some(Value::Bool(b)) => *b,
        _ => return Err("reduce_only is required and must be a boolean".into()),
    };
    let price = decimal(o, "price", order_type == OrderType::Limit)?;
    let cl_ord_id = match o.get("cl_ord_id") {
        None => None,
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(_) => return Err("cl_ord_id must be a non-empty string".into()),
    };
    let margin_mode = one_of(o, "margin_mode", &["cross", "isolated"], false)?.and_then(MarginMode::parse);
    let leverage = match o.get("leverage") {
        None => None,
        Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
            Some(n) if n >= 1 => Some(n),
            _ => return Err("leverage must be a JSON integer >= 1".into()),
        },
    };
    // TP/SL are accepted (the venue creates reduce-only orders after the fill) but not
    // simulated by the sandbox.
    decimal(o, "tp_price", false)?;
    decimal(o, "sl_price", false)?;
    let qty = parse(&qty, "qty")?;
    let price = price.map(|p| parse(&p, "price")).transpose()?;
    Ok(NewOrder { symbol, side, order_type, qty, price, tif, reduce_only, cl_ord_id, margin_mode, leverage })
}

/// A decimal the shape check accepted, as a `Dec`; texts finer than any tick get the
/// venue's tick or qty wording.
fn parse(text: &str, field: &str) -> Result<Dec, String> {
    match (Dec::parse(text), field) {
        (Ok(d), _) => Ok(d),
        (Err(DecError::TooPrecise), "price") => Err(format!("price {text} does not follow price tick")),
        (Err(DecError::TooLarge), "price") => Err(format!("price {text} is too large")),
        (Err(DecError::TooPrecise), _) => Err(format!("invalid order qty {text}: finer than the qty step")),
        (Err(_), _) => Err(format!("invalid order qty {text}: above the maximum")),
    }
}

fn one_of<'a>(
    o: &'a Map<String, Value>,
    field: &str,
    allowed: &[&str],
    required: bool,
) -> Result<Option<&'a str>, String> {
    match o.get(field) {
        None if !required => Ok(None),
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(Some(s)),
        _ => Err(format!(
            "{field} {}must be one of {}",
            if required { "is required and " } else { "" },
            allowed.join("|")
        )),
    }
}

fn decimal(o: &Map<String, Value>, field: &str, required: bool) -> Result<Option<String>, String> {
    match o.get(field) {
        None if !required => Ok(None),
        Some(Value::String(s)) if is_positive_decimal(s) => Ok(Some(s.clone())),
        _ => {
            Err(format!("{field} {}must be a positive decimal string", if required { "is required and " } else { "" }))
        }
    }
}

/// `digits[.digits]`, not zero. No sign, exponent, spaces or bare leading/trailing dot.
pub(crate) fn is_positive_decimal(s: &str) -> bool {
    let (int, frac) = s.split_once('.').unwrap_or((s, "0"));
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    digits(int) && digits(frac) && s.bytes().any(|b| (b'1'..=b'9').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(v: Value) -> Result<NewOrder, String> {
        check_new_order(v.as_object().unwrap(), false)
    }

    #[test]
    fn decimals() {
        for ok in ["1", "0.1", "10.50", "007"] {
            assert!(is_positive_decimal(ok), "{ok}");
        }
        for bad in ["", "0", "0.000", "-1", "1e3", ".5", "5.", " 1", "1.2.3", "+1"] {
            assert!(!is_positive_decimal(bad), "{bad}");
        }
    }

    #[test]
    fn orders() {
        let base = json!({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.1",
                          "price":"100","time_in_force":"gtc","reduce_only":false});
        assert!(check(base.clone()).is_ok());
        let with = |k: &str, v: Value| {
            let mut o = base.clone();
            o[k] = v;
            check(o)
        };
        assert!(with("qty", json!(0.1)).is_err());
        assert!(with("side", json!("BUY")).is_err());
        assert_eq!(with("leverage", json!(10)).unwrap().leverage, Some(10));
        assert!(with("leverage", json!(1.5)).is_err());
        assert!(with("leverage", json!(0)).is_err());
        assert!(with("extra", json!(1)).is_err());
        assert!(with("price", json!("65000.0000000000001")).unwrap_err().contains("not follow price tick"));
        let mut market = base.clone();
        market["order_type"] = json!("market");
        market.as_object_mut().unwrap().remove("price");
        assert!(check(market.clone()).is_ok());
        market.as_object_mut().unwrap().remove("time_in_force");
        assert_eq!(check(market.clone()).unwrap().tif, None, "a market order may omit time_in_force");
        let strict = check_new_order(market.as_object().unwrap(), true).unwrap_err();
        assert!(strict.contains("time_in_force is required on market orders too (strict mode)"), "{strict}");
        let mut limit = base.clone();
        limit.as_object_mut().unwrap().remove("time_in_force");
        assert!(check(limit).unwrap_err().contains("time_in_force is required"));
        let mut limit = base.clone();
        limit.as_object_mut().unwrap().remove("price");
        assert!(check(limit).is_err());
    }
}
