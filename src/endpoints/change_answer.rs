//! The answer to a change — an order, a cancel, a leverage or margin change, over REST or
//! the order stream — judged in full when it carries no `code`.
//!
//! Every documented answer to a change carries a code (`{code,message,request_id}`,
//! venue-api.md §1.3, §2.3), and the code decides. One with none (or `null`) is a success
//! only when nothing in it says otherwise: a `success` absent, `null` or `true`; words under
//! `message`, `msg` and `status` absent, `null`, empty, "success", "ok" or "accepted" (what a
//! REST success means: submitted, venue-api.md §1.3; on the order stream such a frame is the
//! gateway's ack, read before this) — every one of them, not only the first; nothing under `error`, `errors` or `err` (absent, `null`, `false` or
//! empty); an outcome nested under `data` or `result` (one naming `code` or `success`) a
//! success too; and none of those keys named twice (readers keeping the first or the last
//! copy would disagree). Anything else (`{"message":"alo order rejected"}`,
//! `{"error":{"code":400}}`, `{"success":true,"status":"rejected"}`) is a refusal by its words
//! and a success by its missing code: its outcome is unknown (`Refusal::Shape`). Reporting it
//! placed would leave a rejected quote believed resting; reporting it refused would have it
//! sent again.
//!
//! An array answering a change (`cancel_orders` answers `[]`) is a success unless one of its
//! objects states a refusal by its code or `success`, or names an error: a batch partly
//! refused has an outcome to look up per order. Words alone (a status per order) do not
//! count there.

use super::answer::{Refusal, key_named_twice, named_twice_message, stated, success_word, words};
use crate::error::venue_words;
use serde_json::{Map, Value};

/// Keys whose words must say success when there is no code.
const WORD_KEYS: [&str; 3] = ["message", "msg", "status"];
/// Keys that state a failure by holding anything at all.
const ERROR_KEYS: [&str; 3] = ["error", "errors", "err"];
/// Where a venue or a gateway may nest an outcome.
const ENVELOPES: [&str; 2] = ["data", "result"];
/// The keys a codeless answer must name once.
const NAMED_ONCE: [&str; 6] = ["message", "msg", "status", "error", "errors", "err"];

/// Judge the answer to a change (`body`: its text, for keys named twice).
pub fn judge(answer: &Value, body: &str) -> Result<(), Refusal> {
    match answer {
        Value::Object(object) => judge_object(object, Some(body)),
        Value::Array(items) => items.iter().try_for_each(judge_element),
        _ => Err(Refusal::Shape("the answer is neither a JSON object nor an array".to_owned())),
    }
}

/// Judge an answer object; `body` its text when it is the whole answer (for keys named
/// twice), `None` for an outcome nested in it.
pub fn judge_object(object: &Map<String, Value>, body: Option<&str>) -> Result<(), Refusal> {
    stated(object.get("code"), object.get("success"), words(object))?;
    if object.get("code").is_some_and(|code| !code.is_null()) {
        return Ok(());
    }
    if let Some(key) = body.and_then(|body| key_named_twice(body, &NAMED_ONCE)) {
        return Err(Refusal::Shape(named_twice_message(key)));
    }
    if let Some(said) = says_otherwise(object) {
        return Err(unknown(&said));
    }
    for envelope in ENVELOPES {
        if let Some(Value::Object(inner)) = object.get(envelope)
            && (inner.contains_key("code") || inner.contains_key("success"))
            && judge_object(inner, None).is_err()
        {
            // Not the venue's documented place for an outcome: whatever it states there, the
            // answer at the top states none, so the outcome is open rather than refused.
            return Err(unknown(&format!("its \"{envelope}\" says otherwise")));
        }
    }
    Ok(())
}

/// What in a codeless answer says other than success, if anything.
fn says_otherwise(object: &Map<String, Value>) -> Option<String> {
    let quoted = |key: &str, value: &Value| match value {
        Value::String(text) => format!("{key}: \"{}\"", venue_words(text.trim())),
        other => format!("{key}: {}", venue_words(&other.to_string())),
    };
    if let Some(success) = object.get("success").filter(|s| !s.is_null() && **s != Value::Bool(true)) {
        return Some(quoted("success", success));
    }
    let word_says_otherwise = |value: &Value| match value {
        Value::Null => false,
        Value::String(text) => !(success_word(text.trim()) || text.trim().eq_ignore_ascii_case("accepted")),
        _ => true,
    };
    if let Some((key, value)) =
        WORD_KEYS.iter().find_map(|k| object.get(*k).filter(|v| word_says_otherwise(v)).map(|v| (k, v)))
    {
        return Some(quoted(key, value));
    }
    ERROR_KEYS.iter().find_map(|k| object.get(*k).filter(|v| names_an_error(v)).map(|v| quoted(k, v)))
}

/// Whether a value under an error key names an error: anything but `null`, `false`, an empty
/// (or blank) string, array or object.
fn names_an_error(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => false,
        Value::String(text) => !text.trim().is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(fields) => !fields.is_empty(),
        Value::Bool(true) | Value::Number(_) => true,
    }
}

/// One element of an array answering a change: its code or `success` (as at the top), and no
/// error named; its words are a status per order, not an outcome.
fn judge_element(item: &Value) -> Result<(), Refusal> {
    let Value::Object(object) = item else { return Ok(()) };
    let stated = stated(object.get("code"), object.get("success"), words(object));
    let error = ERROR_KEYS.iter().any(|k| object.get(*k).is_some_and(names_an_error));
    if stated.is_err() || error {
        return Err(unknown("one of its elements states a refusal or an error"));
    }
    Ok(())
}

fn unknown(said: &str) -> Refusal {
    Refusal::Shape(format!(
        "the venue's answer has no \"code\" and does not say success ({said}): its outcome is unknown"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(body: &str) -> Result<(), Refusal> {
        judge(&serde_json::from_str(body).unwrap(), body)
    }

    #[test]
    fn a_codeless_answer_is_a_success_only_when_nothing_in_it_says_otherwise() {
        for fine in [
            "{}",
            "[]",
            "[1,2]",
            r#"{"request_id":"r"}"#,
            r#"{"message":"success","request_id":"r"}"#,
            r#"{"code":null,"msg":"OK","status":null}"#,
            r#"{"success":true,"message":"success"}"#,
            r#"{"message":" ","error":null,"errors":[],"err":false}"#,
            r#"{"data":{"order_id":1,"status":"open"}}"#,
            r#"{"data":{"code":0,"message":"placed"}}"#,
            r#"[{"order_id":1,"status":"canceled"},{"cl_ord_id":"a","code":0}]"#,
            // A code decides: the words beside it are the venue's to choose.
            r#"{"code":0,"message":"order placed","status":"accepted"}"#,
            r#"{"status":"accepted","request_id":"r"}"#,
        ] {
            assert_eq!(change(fine), Ok(()), "{fine}");
        }
        for open in [
            r#"{"message":"order not found","request_id":"r"}"#,
            r#"{"code":null,"message":"alo order rejected"}"#,
            r#"{"error":"insufficient margin"}"#,
            r#"{"error":{"code":400,"message":"insufficient margin"}}"#,
            r#"{"error":true}"#,
            r#"{"errors":["alo order rejected"]}"#,
            r#"{"status":"rejected"}"#,
            r#"{"success":true,"status":"rejected"}"#,
            r#"{"message":"success","error":"insufficient margin"}"#,
            r#"{"message":"","msg":"alo order rejected"}"#,
            r#"{"message":7}"#,
            r#"{"success":"false"}"#,
            r#"{"success":1}"#,
            r#"{"data":{"code":400,"message":"x"}}"#,
            r#"{"result":{"success":false}}"#,
            r#"{"message":"alo order rejected","message":"success"}"#,
            r#"{"message":"success","\u006dessage":"no"}"#,
            r#"[{"order_id":1,"code":500,"message":"busy"}]"#,
            r#"[{"cl_ord_id":"a","error":"order not found"}]"#,
            r#"[{"order_id":1,"success":false}]"#,
        ] {
            assert!(matches!(change(open), Err(Refusal::Shape(_))), "{open}: {:?}", change(open));
        }
        // What the top states by its code or `"success": false` is read as for any answer.
        assert_eq!(change(r#"{"code":400,"message":"bad"}"#), Err(Refusal::Code(400, "bad".into())));
        assert_eq!(change(r#"{"success":false,"msg":"no"}"#), Err(Refusal::Unsuccessful("no".into())));
        assert!(matches!(change("null"), Err(Refusal::Shape(_))));
    }
}
