//! `new_order` body validation as the venue documents it (venue facts, "Trading endpoints").
//!
//! Strict on purpose: decimals must be JSON strings, integers JSON integers, and an unknown
//! field is refused, so a client that sends floats or misspells a field fails here first.

use serde_json::{Map, Value};

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

pub(crate) fn check_new_order(o: &Map<String, Value>) -> Result<(), String> {
    if let Some(unknown) = o.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!("unknown field {unknown}"));
    }
    match o.get("symbol") {
        Some(Value::String(s)) if !s.is_empty() => {}
        _ => return Err("symbol is required and must be a non-empty string".into()),
    }
    one_of(o, "side", &["buy", "sell"], true)?;
    let order_type = one_of(o, "order_type", &["limit", "market"], true)?;
    decimal(o, "qty", true)?;
    one_of(o, "time_in_force", &["gtc", "ioc", "alo"], true)?;
    if !matches!(o.get("reduce_only"), Some(Value::Bool(_))) {
        return Err("reduce_only is required and must be a boolean".into());
    }
    decimal(o, "price", order_type == Some("limit"))?;
    if o.get("cl_ord_id").is_some_and(|v| !v.is_string()) {
        return Err("cl_ord_id must be a string".into());
    }
    one_of(o, "margin_mode", &["cross", "isolated"], false)?;
    if let Some(v) = o.get("leverage")
        && !matches!(v.as_u64(), Some(n) if n >= 1)
    {
        return Err("leverage must be a JSON integer >= 1".into());
    }
    decimal(o, "tp_price", false)?;
    decimal(o, "sl_price", false)?;
    Ok(())
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

fn decimal(o: &Map<String, Value>, field: &str, required: bool) -> Result<(), String> {
    match o.get(field) {
        None if !required => Ok(()),
        Some(Value::String(s)) if is_positive_decimal(s) => Ok(()),
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

    fn check(v: Value) -> Result<(), String> {
        check_new_order(v.as_object().unwrap())
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
        assert!(with("leverage", json!(10)).is_ok());
        assert!(with("leverage", json!(1.5)).is_err());
        assert!(with("leverage", json!(0)).is_err());
        assert!(with("extra", json!(1)).is_err());
        let mut market = base.clone();
        market["order_type"] = json!("market");
        market.as_object_mut().unwrap().remove("price");
        assert!(check(market).is_ok());
        let mut limit = base.clone();
        limit.as_object_mut().unwrap().remove("price");
        assert!(check(limit).is_err());
    }
}
