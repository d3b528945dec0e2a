//! The venue's answer to an authentication (the market stream's auth frame, the order
//! stream's `auth:login`), read as the sources show it: fields in `data` or at the top level;
//! `code` 0 or 200 (an integer written plainly or a string of digits, read by
//! `endpoints::answer::venue_code` as every REST answer's code is) is success, and so is a
//! missing code with no words or "success"/"ok" under `msg` or `message` ([WJ] reads a
//! missing code as 0). A code that says the venue cannot answer now (5xx, 408, 429: a gateway
//! in turbulence, venue-api.md §3.1) is `Unavailable`, to be tried again like a failed
//! handshake.
//!
//! Everything else is a refusal, so that no refusal is ever taken for a login: a code that
//! is present but not a plain integer ("unauthorized", 401.5, and whole numbers written
//! otherwise: `0.0`, `-0`, `1e-400`, `5e2`, which JSON readers do not agree on), any other
//! code, a `status` word other than success/ok/accepted, `success: false`, a non-empty
//! `error`, a `data` that is neither an object nor a word of success — whatever the code
//! says beside them. The refusal quotes the venue's words (`venue_words`).

use super::supervisor::AuthOutcome;
use crate::endpoints::answer::{success_word, venue_code};
use crate::error::{Code, Error, venue_words};
use serde_json::{Map, Value};

/// `what`: the frame that was answered, as the refusal names it.
pub fn judge(frame: &Map<String, Value>, what: &str) -> AuthOutcome {
    let data = frame.get("data").filter(|d| !d.is_null());
    let field = |name: &str| field(frame, name);
    // A `status` that is a number, or a string of digits, is a code (when there is no `code`);
    // otherwise a word.
    let status = field("status");
    let status_is_code = status.is_some_and(|s| s.is_number() || matches!(venue_code(Some(s)), Ok(Some(_))));
    let status_word = status.filter(|_| !status_is_code);
    let code_field = field("code").or(status.filter(|_| status_is_code));
    // A code that is not a plain integer is a refusal, never "not now": trying again would
    // loop on an answer that may mean success, and taking it for success might log in on a
    // refusal. The stream ends (`failed`), quoting the code as the venue wrote it.
    let code = code_field.map(|value| venue_code(Some(value)).ok().flatten().ok_or(value));
    let message = ["msg", "message"].iter().find_map(|name| field(name).and_then(Value::as_str)).unwrap_or("");
    let data_word = data.filter(|d| !d.is_object());
    let refusal_sign = status_word.is_some_and(|s| !s.as_str().is_some_and(|s| success_word(s) || accepted_word(s)))
        || field("success") == Some(&Value::Bool(false))
        || field("error").is_some_and(|e| !is_empty(e))
        || data_word.is_some_and(|d| !d.as_str().is_some_and(success_word));
    let words = words(&[status_word, field("msg"), field("message"), field("error"), data_word]);
    let code_text = match code {
        None => "none".to_owned(),
        Some(Ok(code)) => code.to_string(),
        Some(Err(unreadable)) => shown(unreadable),
    };
    match code {
        Some(Ok(code)) if says_try_later(code) => AuthOutcome::Unavailable(Error::new(
            Code::ApiError,
            format!("the venue could not take {what} now (code {code_text}){words}"),
        )),
        Some(Ok(0 | 200)) if !refusal_sign => AuthOutcome::Accepted,
        // The gateway's ack with the HTTP code for "accepted", as the order stream reads acks
        // (`orders::is_ack`): a login so answered is followed to its outcome, not refused.
        Some(Ok(202))
            if !refusal_sign
                && (status_word.and_then(Value::as_str).is_some_and(accepted_word) || accepted_word(message)) =>
        {
            AuthOutcome::Accepted
        }
        None if !refusal_sign && success_word(message) => AuthOutcome::Accepted,
        _ => AuthOutcome::Refused(Error::new(
            Code::ApiError,
            format!("the venue refused {what} (code {code_text}){words}"),
        )),
    }
}

/// Whether `frame`, which is not on the `auth` channel, plainly states a refusal of an
/// authentication: on no channel or an `error` channel (a frame on another named channel —
/// `notice`, `system` — is the venue's notice, whatever its code), a code written as an
/// integer that is an HTTP error (400 to 599, in `data` or at the top level, as [`judge`]
/// reads it), `"success": false`, or an `error` that is a non-empty string or object. Words
/// alone, a code of another kind (`1`, `1001`: a notice's), a code not written as an
/// integer, a number or `false` under `error`, or a success code may be a welcome or a
/// notice of another kind.
pub fn states_refusal(frame: &Map<String, Value>) -> bool {
    match frame.get("channel") {
        None | Some(Value::Null) => {}
        Some(Value::String(channel)) if channel.eq_ignore_ascii_case("error") => {}
        Some(_) => return false,
    }
    let field = |name: &str| field(frame, name);
    matches!(venue_code(field("code")), Ok(Some(400..=599)))
        || field("success") == Some(&Value::Bool(false))
        || field("error").is_some_and(|e| match e {
            Value::String(text) => !text.trim().is_empty(),
            Value::Object(fields) => !fields.is_empty(),
            _ => false,
        })
}

/// [`judge`] of a frame whose text (`text`) may name `code` or `success` twice: such an
/// answer is refused, whatever either copy says — readers keeping the first or the last copy
/// disagree on whether it is a login (as REST refuses such answers).
pub fn judge_text(frame: &Map<String, Value>, text: &str, what: &str) -> AuthOutcome {
    match named_twice(text) {
        Some(key) => AuthOutcome::Refused(Error::new(
            Code::ApiError,
            format!("the venue refused {what}: {}", crate::endpoints::answer::named_twice_message(key)),
        )),
        None => judge(frame, what),
    }
}

/// The key (`code`, `success`) that `text` names twice at the top level or in its `data`
/// object, where [`judge`] reads them too; or `data` itself named twice (the frame as read
/// keeps the last copy, and a first copy of `{"code":401}` would go unread).
fn named_twice(text: &str) -> Option<&'static str> {
    use crate::endpoints::answer::{key_named_twice, outcome_named_twice};
    #[derive(serde::Deserialize)]
    struct WithData<'a> {
        #[serde(borrow, default)]
        data: Option<&'a serde_json::value::RawValue>,
    }
    outcome_named_twice(text).or_else(|| key_named_twice(text, &["data"])).or_else(|| {
        let data = serde_json::from_str::<WithData<'_>>(text).ok()?.data?;
        outcome_named_twice(data.get())
    })
}

/// An answer's field as the sources place it: in `data` when that is an object, else at the
/// top level; `null` as absent.
fn field<'a>(frame: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    let in_data = frame.get("data").and_then(Value::as_object).and_then(|data| data.get(name));
    in_data.or_else(|| frame.get(name)).filter(|v| !v.is_null())
}

/// The gateway's ack (`{"code":0,"status":"accepted"}`, venue-api.md §2.3).
fn accepted_word(word: &str) -> bool {
    word.eq_ignore_ascii_case("accepted")
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
        Value::Bool(true) | Value::Number(_) => false,
    }
}

/// A value the venue sent, as a refusal quotes it: a string's text, anything else as compact
/// JSON (re-serialised: escapes written out, so redaction sees the plain text).
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => venue_words(text),
        other => venue_words(&other.to_string()),
    }
}

/// `": word; word"` of the non-empty, distinct values, or nothing.
fn words(values: &[Option<&Value>]) -> String {
    let mut shown_words: Vec<String> = Vec::new();
    for value in values.iter().flatten().filter(|v| !is_empty(v)) {
        let word = shown(value);
        if !shown_words.contains(&word) {
            shown_words.push(word);
        }
    }
    if shown_words.is_empty() { String::new() } else { format!(": {}", shown_words.join("; ")) }
}

/// A code for "not now": a server error, a timeout, too many requests. 4xx others (400, 401,
/// 403…) are about the request or the token, which trying again would not change.
fn says_try_later(code: i64) -> bool {
    (500..=599).contains(&code) || code == 408 || code == 429
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn outcome(frame: Value) -> Result<(), String> {
        match judge(frame.as_object().unwrap(), "the auth frame") {
            AuthOutcome::Accepted => Ok(()),
            AuthOutcome::Refused(e) => Err(e.message().to_owned()),
            AuthOutcome::Unavailable(e) => Err(format!("unavailable: {}", e.message())),
            AuthOutcome::Pending => Err("pending".into()),
        }
    }

    #[test]
    fn an_answer_naming_code_or_success_twice_is_refused_whichever_copy_says_success() {
        for text in [
            r#"{"channel":"auth","data":{"code":401,"code":200}}"#,
            r#"{"channel":"auth","data":{"code":200,"\u0063ode":401,"msg":"success"}}"#,
            r#"{"channel":"auth","data":{"code":0,"success":false,"success":true}}"#,
            r#"{"request_id":"r","code":0,"code":401,"message":"success"}"#,
            // `data` itself twice: the last copy alone was judged (a success).
            r#"{"channel":"auth","data":{"code":401,"msg":"token expired"},"data":{"code":200,"msg":"success"}}"#,
            r#"{"channel":"auth","data":{"code":401},"d\u0061ta":{}}"#,
        ] {
            let frame: Map<String, Value> = serde_json::from_str(text).unwrap();
            match judge_text(&frame, text, "the auth frame") {
                AuthOutcome::Refused(e) => assert!(e.message().contains("more than once"), "{text}: {e}"),
                _ => panic!("{text} was not refused"),
            }
        }
        let once = r#"{"channel":"auth","data":{"code":200,"msg":"success"},"code":200}"#;
        let frame: Map<String, Value> = serde_json::from_str(once).unwrap();
        assert!(matches!(judge_text(&frame, once, "the auth frame"), AuthOutcome::Accepted), "one in data, one on top");
    }

    #[test]
    fn only_a_plainly_stated_refusal_is_one_without_the_auth_channel() {
        for (frame, refusal) in [
            (json!({"channel":"error","data":{"code":401,"msg":"token expired"}}), true),
            (json!({"channel":"ERROR","code":403}), true),
            (json!({"code":"403"}), true),
            (json!({"data":{"success":false}}), true),
            (json!({"error":"token expired"}), true),
            (json!({"error":{"code":"E_AUTH"}}), true),
            (json!({"code":503,"msg":"busy"}), true),
            // Notices and welcomes: another named channel, a code of another kind, a status.
            (json!({"channel":"notice","data":{"code":503,"msg":"maintenance at 02:00"}}), false),
            (json!({"channel":"system","status":1,"msg":"hello"}), false),
            (json!({"event":"welcome","error":0,"msg":"connected"}), false),
            (json!({"error":false}), false),
            (json!({"code":1001,"msg":"maintenance soon"}), false),
            (json!({"status":401,"message":"unauthorized"}), false),
            (json!({"channel":7,"code":401}), false),
            (json!({"code":0,"msg":"connected"}), false),
            (json!({"code":200}), false),
            (json!({"code":202,"status":"accepted"}), false),
            (json!({"code":"connected"}), false),
            (json!({"code":401.0}), false),
            (json!({"message":"token expired"}), false),
            (json!({"error":""}), false),
            (json!({"error":null,"success":true}), false),
            (json!({"status":"error"}), false),
        ] {
            assert_eq!(states_refusal(frame.as_object().unwrap()), refusal, "{frame}");
        }
    }

    #[test]
    fn every_documented_success_form_is_accepted() {
        for frame in [
            json!({"channel":"auth","data":{"code":0,"msg":"success"}}),
            json!({"channel":"auth","data":{"code":200,"msg":"success"}}),
            json!({"channel":"auth","data":{"code":"200"}}),
            json!({"channel":"auth","code":200}),
            json!({"channel":"auth","data":{"msg":"success"}}),
            json!({"channel":"auth","data":{}}),
            json!({"channel":"auth"}),
            json!({"request_id":"r","code":"0","message":"success"}),
            json!({"request_id":"r","code":0,"status":"accepted"}),
            json!({"request_id":"r","code":0,"message":"accepted"}),
            json!({"request_id":"r","code":202,"status":"accepted"}),
            json!({"request_id":"r","code":"202","message":"Accepted"}),
            json!({"channel":"auth","data":{"code":200,"status":"OK","success":true,"error":null}}),
            json!({"channel":"auth","data":{"status":"success"}}),
            json!({"channel":"auth","data":{"status":200}}),
            json!({"channel":"auth","data":{"error":""}}),
            json!({"channel":"auth","data":"success"}),
            json!({"channel":"auth","data":null}),
        ] {
            assert_eq!(outcome(frame.clone()), Ok(()), "{frame}");
        }
    }

    #[test]
    fn refusals_name_the_code_and_the_words() {
        let e = outcome(json!({"channel":"auth","data":{"code":401,"msg":"invalid token"}})).unwrap_err();
        assert_eq!(e, "the venue refused the auth frame (code 401): invalid token");
        let e = outcome(json!({"code":"403","message":"forbidden"})).unwrap_err();
        assert!(e.contains("code 403") && e.contains("forbidden"), "{e}");
        let e = outcome(json!({"channel":"auth","data":{"msg":"token expired"}})).unwrap_err();
        assert!(e.contains("code none") && e.contains("token expired"), "{e}");
        assert!(outcome(json!({"channel":"auth","data":{"code":"abc","msg":"no"}})).is_err());
    }

    #[test]
    fn server_errors_timeouts_and_rate_limits_mean_try_again() {
        for code in [json!(500), json!(502), json!("503"), json!(504), json!(408), json!(429), json!(599)] {
            let e = outcome(json!({"channel":"auth","data":{"code":code,"msg":"bad gateway"}})).unwrap_err();
            assert!(e.starts_with("unavailable: ") && e.contains("bad gateway"), "{code}: {e}");
            let e = outcome(json!({"request_id":"r","code":code,"message":"later"})).unwrap_err();
            assert!(e.starts_with("unavailable: "), "{code}: {e}");
        }
        for code in [400, 401, 403, 404, 409, 499, 600, 1] {
            let e = outcome(json!({"channel":"auth","data":{"code":code}})).unwrap_err();
            assert!(e.starts_with("the venue refused"), "{code}: {e}");
        }
    }

    #[test]
    fn a_code_not_written_as_a_plain_integer_is_a_refusal_whatever_its_value() {
        // Whole values written otherwise, which JSON readers do not agree on (`1e-400` is 0 to
        // serde_json, an error to others): never a login, never "not now" (which would loop).
        let codes = [r#"1e-400"#, "0.0", "-0", r#""-0""#, "2e2", "200.0", "503.0", "5e2", "-0.0", r#""00x""#];
        for code in codes {
            for frame in [
                format!(r#"{{"channel":"auth","data":{{"code":{code},"msg":"success"}}}}"#),
                format!(r#"{{"channel":"auth","code":{code}}}"#),
                format!(r#"{{"channel":"auth","data":{{"status":{code}}}}}"#),
                format!(r#"{{"request_id":"r","code":{code},"status":"accepted"}}"#),
            ] {
                let e = outcome(serde_json::from_str(&frame).unwrap()).unwrap_err();
                assert!(e.starts_with("the venue refused the auth frame (code "), "{frame}: {e}");
            }
        }
    }

    #[test]
    fn refusals_in_forms_other_than_a_numeric_code_are_refusals() {
        for (frame, quoted) in [
            (json!({"channel":"auth","data":{"code":"unauthorized"}}), "(code unauthorized)"),
            (json!({"channel":"auth","data":{"code":"401 Unauthorized"}}), "(code 401 Unauthorized)"),
            (json!({"channel":"auth","data":{"code":401.5}}), "(code 401.5)"),
            (json!({"channel":"auth","data":{"code":true}}), "(code true)"),
            (json!({"channel":"auth","data":{"status":"error","error":"invalid token"}}), ": error; invalid token"),
            (json!({"channel":"auth","data":{"success":false,"error":"jwt expired"}}), ": jwt expired"),
            (json!({"channel":"auth","data":{"code":0,"success":false}}), "(code 0)"),
            (json!({"channel":"auth","data":{"code":200,"error":{"reason":"revoked"}}}), r#"{\"reason\":\"revoked\"}"#),
            (json!({"channel":"auth","data":{"code":0,"status":"Rejected"}}), ": Rejected"),
            (json!({"request_id":"r","code":202,"message":"queued"}), "(code 202): queued"),
            (json!({"channel":"auth","data":"invalid token"}), ": invalid token"),
            (json!({"channel":"auth","data":[401]}), ": [401]"),
            (json!({"request_id":"r","code":"E_AUTH"}), "(code E_AUTH)"),
            (json!({"request_id":"r","status":"rejected"}), "(code none): rejected"),
            (
                json!({"request_id":"r","status":"unauthorized","error":"invalid token"}),
                ": unauthorized; invalid token",
            ),
        ] {
            let e = outcome(frame.clone()).unwrap_err();
            assert!(e.starts_with("the venue refused the auth frame (code "), "{frame}: {e}");
            assert!(e.contains(quoted), "{frame}: {e}");
        }
        // A "not now" code stays one, whatever words come with it.
        let e = outcome(json!({"channel":"auth","data":{"code":503,"error":"maintenance"}})).unwrap_err();
        assert_eq!(e, "unavailable: the venue could not take the auth frame now (code 503): maintenance");
    }
}
