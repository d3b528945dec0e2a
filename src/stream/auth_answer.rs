//! The venue's answer to an authentication (the market stream's auth frame, the order
//! stream's `auth:login`), read as the sources show it: `code` 0 or 200 (number or string)
//! in `data` or at the top level, the words under `msg` or `message`. A missing code with no
//! word or "success" is success ([WJ] reads a missing code as 0). A code that says the venue
//! cannot answer now (5xx, 408, 429: a gateway in turbulence, venue-api.md §3.1) is
//! `Unavailable`, to be tried again like a failed handshake; anything else is refused.

use super::json::lenient_int;
use super::supervisor::AuthOutcome;
use crate::error::{Code, Error, venue_words};
use serde_json::{Map, Value};

/// `what`: the frame that was answered, as the refusal names it.
pub fn judge(frame: &Map<String, Value>, what: &str) -> AuthOutcome {
    let data = frame.get("data").and_then(Value::as_object);
    let field = |name: &str| data.and_then(|d| d.get(name)).or_else(|| frame.get(name));
    let code = lenient_int(field("code")).or_else(|| lenient_int(field("status")));
    let message = ["msg", "message"].iter().find_map(|name| field(name).and_then(Value::as_str)).unwrap_or("");
    let accepted = match code {
        Some(code) => code == 0 || code == 200,
        None => message.is_empty() || message.eq_ignore_ascii_case("success") || message.eq_ignore_ascii_case("ok"),
    };
    if accepted {
        return AuthOutcome::Accepted;
    }
    if code.is_some_and(says_try_later) {
        return AuthOutcome::Unavailable(Error::new(
            Code::ApiError,
            format!(
                "the venue could not take {what} now (code {}): {}",
                code.unwrap_or_default(),
                venue_words(message)
            ),
        ));
    }
    AuthOutcome::Refused(Error::new(
        Code::ApiError,
        format!(
            "the venue refused {what} (code {}): {}",
            code.map_or("none".to_owned(), |c| c.to_string()),
            venue_words(message)
        ),
    ))
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
    fn every_documented_success_form_is_accepted() {
        for frame in [
            json!({"channel":"auth","data":{"code":0,"msg":"success"}}),
            json!({"channel":"auth","data":{"code":200,"msg":"success"}}),
            json!({"channel":"auth","data":{"code":"200"}}),
            json!({"channel":"auth","data":{"code":0.0}}),
            json!({"channel":"auth","code":200}),
            json!({"channel":"auth","data":{"msg":"success"}}),
            json!({"channel":"auth","data":{}}),
            json!({"channel":"auth"}),
            json!({"request_id":"r","code":"0","message":"success"}),
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
        for code in [json!(500), json!(502), json!("503"), json!(504), json!(408), json!(429), json!(599.0)] {
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
}
