//! The frames of the order stream's requests, written once: the `order:new` / `order:cancel`
//! envelope around the exact signed params, and the checked params of a cancel. Apart from
//! the protocol (`orders.rs`), which reads the venue's replies.

use super::super::json::push_str;
use crate::body_sign::{BodySignature, REQUEST_ID_LEN};
use crate::error::{Error, Result, excerpt};
use serde_json::Value;

/// `{"session_id","request_id","method","header":{…},"params":"<the exact signed string>"}`,
/// in one allocation; `params` escaped once, straight into the frame.
pub fn order_frame(
    session_id: &str,
    request_id: &str,
    method: &str,
    signature: &BodySignature,
    params: &str,
) -> String {
    const FIXED: usize = r#"{"session_id":,"request_id":"","method":"","header":{"x-request-id":"","x-request-timestamp":"","x-request-signature":"","x-request-sign-version":""},"params":}"#.len();
    let capacity = FIXED
        + session_id.len()
        + 2
        + request_id.len()
        + method.len()
        + REQUEST_ID_LEN
        + crate::body_sign::TIMESTAMP_MAX_LEN
        + crate::body_sign::SIGNATURE_B64_LEN
        + 2
        // A compact order body has one quote to escape per 5–6 bytes; room for all.
        + params.len() * 2
        + 2;
    let mut out = String::with_capacity(capacity);
    out.push_str("{\"session_id\":");
    push_str(&mut out, session_id);
    out.push_str(",\"request_id\":\"");
    out.push_str(request_id);
    out.push_str("\",\"method\":\"");
    out.push_str(method);
    out.push_str("\",\"header\":{\"x-request-id\":\"");
    out.push_str(signature.request_id());
    out.push_str("\",\"x-request-timestamp\":\"");
    out.push_str(signature.timestamp());
    out.push_str("\",\"x-request-signature\":\"");
    out.push_str(signature.signature());
    out.push_str("\",\"x-request-sign-version\":\"");
    out.push_str(signature.version());
    out.push_str("\"},\"params\":");
    push_str(&mut out, params);
    out.push('}');
    out
}

/// Validate `order:cancel` params (as REST `cancel_order`): `order_id` (a positive integer)
/// and/or `cl_ord_id` (a string), nothing else; written once, compactly.
pub fn cancel_params(params_json: &str) -> Result<(String, Option<i64>, Option<String>)> {
    // A name given twice is refused, as REST refuses it: parsers keep different copies, and
    // a cancel must never pick an order the caller did not mean. Invalid JSON is described
    // by serde_json, whose message says where.
    let value = crate::strict_json::parse(params_json.as_bytes()).map_err(|why| {
        match serde_json::from_str::<serde::de::IgnoredAny>(params_json) {
            Err(e) => Error::invalid_argument(format!("params_json is not valid JSON: {e}")),
            Ok(_) => Error::invalid_argument(format!("params_json: {why}")),
        }
    })?;
    let Value::Object(fields) = value else {
        return Err(Error::invalid_argument(
            "params_json must be a JSON object: {\"order_id\":…} or {\"cl_ord_id\":…}",
        ));
    };
    if let Some(unknown) = fields.keys().find(|k| *k != "order_id" && *k != "cl_ord_id") {
        return Err(Error::invalid_argument(format!(
            "params_json has an unknown field \"{}\" (cancel takes \"order_id\" or \"cl_ord_id\")",
            excerpt(unknown)
        )));
    }
    let order_id = match fields.get("order_id") {
        None => None,
        Some(v) => match v.as_i64() {
            Some(id) if id > 0 => Some(id),
            _ => {
                return Err(Error::invalid_argument(
                    "params_json: \"order_id\" must be a positive integer (a JSON number)",
                ));
            }
        },
    };
    let cl_ord_id = match fields.get("cl_ord_id") {
        None => None,
        Some(Value::String(id)) if !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_graphic()) => {
            Some(id.clone())
        }
        Some(_) => {
            return Err(Error::invalid_argument(
                "params_json: \"cl_ord_id\" must be a string of 1 to 64 visible ASCII characters",
            ));
        }
    };
    if order_id.is_none() && cl_ord_id.is_none() {
        return Err(Error::invalid_argument("params_json names no order: give \"order_id\" or \"cl_ord_id\""));
    }
    // Written in a fixed order: order_id, then cl_ord_id.
    let mut out = String::from("{");
    if let Some(id) = order_id {
        out.push_str(&format!("\"order_id\":{id}"));
    }
    if let Some(id) = &cl_ord_id {
        if order_id.is_some() {
            out.push(',');
        }
        out.push_str("\"cl_ord_id\":");
        push_str(&mut out, id);
    }
    out.push('}');
    Ok((out, order_id, cl_ord_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_naming_a_field_twice_is_refused() {
        for params in [
            r#"{"order_id":1,"order_id":2}"#,
            r#"{"cl_ord_id":"a","cl_ord_id":"b"}"#,
            r#"{"order_id":1,"\u006frder_id":2}"#,
        ] {
            let e = cancel_params(params).unwrap_err();
            assert_eq!(e.code(), crate::Code::InvalidArgument);
            assert!(e.message().contains("member name twice"), "{params}: {}", e.message());
        }
        assert_eq!(cancel_params(r#"{"order_id":1,"cl_ord_id":"a"}"#).unwrap().0, r#"{"order_id":1,"cl_ord_id":"a"}"#);
    }

    #[test]
    fn cancel_params_are_checked_and_written_once() {
        assert_eq!(cancel_params(r#"{"cl_ord_id":"a","order_id":7}"#).unwrap().0, r#"{"order_id":7,"cl_ord_id":"a"}"#);
        for (json, fragment) in [
            ("[]", "must be a JSON object"),
            ("{}", "names no order"),
            (r#"{"order_id":"7"}"#, "positive integer"),
            (r#"{"order_id":0}"#, "positive integer"),
            (r#"{"cl_ord_id":""}"#, "1 to 64"),
            (r#"{"id":1}"#, "unknown field \"id\""),
        ] {
            assert!(cancel_params(json).unwrap_err().message().contains(fragment), "{json}");
        }
    }
}
