//! The order-entry stream (`ws-api`): `auth:login`, `order:new` and `order:cancel` frames,
//! and the venue's replies as `order_response` events.
//!
//! A request's envelope `request_id` (a fresh UUID, echoed by the venue's replies) is not
//! the `x-request-id` of its body signature (another fresh UUID), as live clients do. An
//! echo that writes the UUID otherwise (upper-case hex, no hyphens, braced, `urn:uuid:`)
//! names the same request (`pending::canonical`); its event carries the id as the caller was
//! given it.
//! Replies come in two frames: an "accepted" ack (`final: false`; the word under `status`
//! or under `message`) and the outcome (`final: true`: success, or a rejection such as
//! "alo order rejected"). Frames for unknown or finished requests (late acks, results of
//! REST orders sent with `x-session-id`) are passed through with `"matched": false`; an
//! outcome for a request whose outcome was already passed on (of the last 4,096 finished)
//! also with `"repeat": true`, so that no engine takes it for an order's outcome. A frame
//! naming `request_id` twice, or as no string, answers no request of ours (not even the
//! login): passed on as `unrecognized` ([`names_no_request_of_ours`]). An outcome
//! whose code leaves the request's effect unknown (5xx, 408, or a code that is no plain
//! integer) says so with `"outcome_unknown": true`, as REST says "may have reached the venue".
//!
//! The login may be answered the same way: an "accepted" ack (or a success that does not
//! carry the login's `request_id`) lets the connection be served (the open does not wait for
//! more), but the login's `request_id` is kept, and the frame
//! that later carries it is the login's outcome, judged as the first answer would have been:
//! success is taken silently (no event: it answers no order), a refusal ends the stream as a
//! refused login does, and "not now" (5xx, 408, 429) replaces the connection. A refusal
//! that carries no `request_id` may be that outcome too (`login`: when, and why not always).
//! A frame naming a login of the stream that is no longer awaited (one of an earlier
//! connection, answered late) is passed on as `unrecognized` with `"answers":"auth:login"`,
//! never as an `order_response`.

use super::events::Queue;
use super::supervisor::{AuthOutcome, Protocol};
use super::transport::Connection;
use super::unrecognized;
use super::wiped_frame::WipedText;
use crate::client::symbol_cache::SymbolCache;
use crate::client::symbol_rules::is_rules_error;
use crate::error::{Error, Result};
use serde_json::{Map, Value, json};

mod deadlines;
mod login;
mod pending;
mod requests;

use login::Logins;

pub use pending::{OrderState, RequestId};
pub use requests::{cancel_params, order_frame};

/// A fresh UUID text (the order stream's own `session_id`, the login's `request_id`).
pub fn fresh_request_id() -> Result<String> {
    Ok(RequestId::fresh()?.as_str().to_owned())
}

pub struct Orders {
    state: std::sync::Arc<OrderState>,
    impersonate: Option<String>,
    login: Logins,
    /// The client's symbol rules (option `symbol_rules`), marked stale when the venue refuses
    /// an order for a reason they may explain (a tick, an order qty), as REST's refusals do.
    rules: Option<std::sync::Arc<SymbolCache>>,
}

impl Orders {
    pub fn new(state: std::sync::Arc<OrderState>, impersonate: Option<String>) -> Orders {
        Orders { state, impersonate, login: Logins::new(), rules: None }
    }

    pub fn with_rules(mut self, rules: Option<std::sync::Arc<SymbolCache>>) -> Orders {
        self.rules = rules;
        self
    }

    /// A login sent with this `request_id` on a new connection (as `start` records it).
    pub(super) fn login_sent(&mut self, request_id: String) {
        self.login.sent(request_id);
    }

    /// The connection is served (its login answered, or acked).
    pub(super) fn served(&mut self) {
        self.login.served();
    }

    /// Whether a frame may still answer the connection's login (sent, or only acked).
    pub(super) fn login_awaited(&self) -> bool {
        !matches!(self.login.current, login::Login::Done)
    }

    /// `{"method":"auth:login","params":"{\"token\":…}","request_id","session_id"}` (keys in
    /// the order serde_json writes them), in memory wiped on drop (`wiped_frame`).
    fn login_frame(&self, request_id: &str, token: &str) -> WipedText {
        let mut params = WipedText::with_capacity(64 + 2 * token.len());
        params.push("{");
        if let Some(vault) = &self.impersonate {
            params.push("\"impersonate\":");
            params.push_json(vault);
            params.push(",");
        }
        params.push("\"token\":");
        params.push_json(token);
        params.push("}");
        let mut frame = WipedText::with_capacity(160 + 2 * params.as_str().len());
        frame.push(r#"{"method":"auth:login","params":"#);
        frame.push_json(params.as_str());
        frame.push(r#","request_id":"#);
        frame.push_json(request_id);
        frame.push(r#","session_id":"#);
        frame.push_json(&self.state.session_id);
        frame.push("}");
        frame
    }
}

/// An "accepted" ack, whichever key the venue puts the word under (`status` or `message`,
/// venue-api.md §2.3, or `msg`, the key of its ws-stream answers, §2.2), and under no code or a
/// success code: 0, 200 (the venue's other success code, venue-api.md §6) or 202 (the HTTP
/// code for "accepted"), read by `venue_code` as REST reads codes. An ack taken for the
/// outcome would make the real outcome a second `final` reply, passed on unmatched. A code
/// that is not a plain integer (`0.0`, `-0`, `1e-400`) is no ack: the frame is a `final`
/// reply marked `outcome_unknown` ([`verdict`]), never taken for "accepted".
fn is_ack(frame: &Map<String, Value>, text: &str) -> bool {
    use crate::endpoints::answer::{ACCEPTED_CODE, venue_code};
    let accepted =
        |key: &str| frame.get(key).and_then(Value::as_str).is_some_and(|s| s.eq_ignore_ascii_case("accepted"));
    let code_ok = matches!(venue_code(frame.get("code")), Ok(None | Some(0 | 200 | ACCEPTED_CODE)));
    // With no code, nothing else may say otherwise (`{"msg":"accepted","error":"insufficient
    // margin"}`, a word named twice, a refusal nested under `data`): such a frame is an outcome
    // of unknown effect ([`verdict`]), not an ack after which an outcome would be awaited in
    // vain. Judged as a codeless answer to a change is (`change_answer`).
    let no_code = frame.get("code").is_none_or(Value::is_null);
    let contradicted = || crate::endpoints::change_answer::judge_object(frame, Some(text)).is_err();
    code_ok && (accepted("status") || accepted("message") || accepted("msg")) && !(no_code && contradicted())
}

/// `event` (a JSON object's text) with `"frame":` the venue's frame byte for byte as sent and
/// `"received_ns"` added: its numbers as written (serde_json reads some decimals one unit in
/// the last place off and would write that back: 1e-199 came out 9.999999999999999e-200) and
/// its keys in the venue's order. The frame was read as a JSON object, so it is one.
fn with_frame_as_sent(mut event: String, frame: &str, received_ns: i64) -> String {
    debug_assert!(event.ends_with('}'));
    event.pop();
    event.reserve(frame.len() + 48);
    event.push_str(",\"frame\":");
    event.push_str(frame.trim());
    event.push_str(",\"received_ns\":");
    event.push_str(&received_ns.to_string());
    event.push('}');
    event
}

/// What an outcome says, its `code` read as REST reads a code (`refusal_code`): a success
/// (0 or 200, or no code and nothing that says otherwise: [`says_otherwise`] — every
/// documented reply carries a code); a refusal; or an unknown effect (`outcome_unknown`) — a
/// server error or time-out behind the venue's gateway (5xx, 408: the order or cancel may
/// have been acted on), a code that is not an integer written plainly or a string of digits
/// (`1e-400`, `-0`, `"ok"`: no reader can be sure what it says), 202 beside words other
/// than "accepted" (the ack's code: taken for processing, never a refusal), or no code beside other
/// words or an error ("alo order rejected" with no code: a refusal by its words, a success by
/// its code, as REST reads the answer to a change). An
/// engine taking one of those for a plain refusal would send the order again; taking it for
/// a success would leave a rejected quote believed resting.
///
/// `success` is read as REST reads it (`endpoints::answer::stated`): `"success": false` with
/// no code is a refusal, and beside a success code it makes the outcome unknown (the frame
/// contradicts itself). So does a frame that names `code` or `success` twice
/// ([`names_outcome_twice`], before this): readers keeping the first or the last copy would
/// disagree on it.
fn verdict(frame: &Map<String, Value>, text: &str) -> pending::Verdict {
    use crate::endpoints::answer::{code_leaves_outcome_unknown, refusal_code};
    let code = frame.get("code");
    let no_code = code.is_none_or(Value::is_null);
    let unsuccessful = frame.get("success") == Some(&Value::Bool(false));
    match refusal_code(code) {
        Ok(None) if unsuccessful && no_code => pending::Verdict::Refused,
        Ok(None) if unsuccessful => pending::Verdict::Unknown,
        Ok(None) if no_code && says_otherwise(frame, text) => pending::Verdict::Unknown,
        Ok(None) => pending::Verdict::Success,
        Ok(Some(code)) if !code_leaves_outcome_unknown(code) => pending::Verdict::Refused,
        _ => pending::Verdict::Unknown,
    }
}

/// Whether an outcome with no code says other than success anywhere — words other than
/// "success" or "ok" under `message`, `msg` or `status`, an error named, a `success` that is
/// no boolean, a nested outcome, one of those keys named twice — read as REST reads the answer
/// to a change (`endpoints::change_answer`).
fn says_otherwise(frame: &Map<String, Value>, text: &str) -> bool {
    crate::endpoints::change_answer::judge_object(frame, Some(text)).is_err()
}

/// Whether the frame names `code` or `success` twice: then it is no ack, and its outcome is
/// unknown ([`verdict`]). A quick look first, so that the second parse of the frame
/// (`outcome_named_twice`) runs only for a frame that can: one with either written out
/// twice, or a key hidden behind an escape.
fn names_outcome_twice(text: &str) -> bool {
    may_name_twice(text, &["\"code\"", "\"success\""]) && crate::endpoints::answer::outcome_named_twice(text).is_some()
}

/// Whether `text` may name one of `quoted_keys` (each written with its quotes) twice: one
/// written out twice, or a key hidden behind an escape. A quick look, before the parse that
/// tells.
fn may_name_twice(text: &str, quoted_keys: &[&str]) -> bool {
    text.contains("\\u") || quoted_keys.iter().any(|key| text.matches(key).nth(1).is_some())
}

/// Whether the frame names a `request_id` that can be no request of ours: one that is not a
/// string (ours are UUID texts: a number names another client's request), or `request_id`
/// named twice (readers keeping the first or the last copy would give the reply to different
/// requests: a refusal meant for one would report another, perhaps live, refused). Such a
/// frame answers neither an order nor the login — it is not a frame without `request_id`,
/// which may be the login's refusal (`login`) — and is passed on as `unrecognized`: the
/// requests it may answer stay awaited, and reach their deadline or the `unanswered` list.
fn names_no_request_of_ours(frame: &Map<String, Value>, text: &str) -> bool {
    use crate::endpoints::answer::key_named_twice;
    let not_text = frame.get("request_id").is_some_and(|id| !id.is_null() && !id.is_string());
    not_text || (may_name_twice(text, &["\"request_id\""]) && key_named_twice(text, &["request_id"]).is_some())
}

impl Protocol for Orders {
    fn name(&self) -> &'static str {
        "order"
    }

    fn start(&mut self, conn: &mut Connection, token: Option<&str>) -> Result<bool> {
        let token = token.ok_or_else(|| Error::invalid_state("the order stream needs a session with a token"))?;
        let request_id = fresh_request_id()?;
        let frame = self.login_frame(&request_id, token);
        self.login_sent(request_id);
        conn.send_message(frame.into_message())?;
        Ok(true)
    }

    fn after_auth(&mut self, _conn: &mut Connection) -> Result<()> {
        self.served();
        Ok(())
    }

    fn on_text(&mut self, text: &str, received_ns: i64, queue: &Queue) -> AuthOutcome {
        let frame: Map<String, Value> = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(frame)) => frame,
            Ok(_) => {
                queue.push_quoting_venue(unrecognized::event(text, received_ns));
                return AuthOutcome::Pending;
            }
            Err(_) => {
                unrecognized::not_json(text, queue);
                return AuthOutcome::Pending;
            }
        };
        if names_no_request_of_ours(&frame, text) {
            queue.push_quoting_venue(unrecognized::event(text, received_ns));
            return AuthOutcome::Pending;
        }
        let as_sent = frame.get("request_id").and_then(Value::as_str);
        // A UUID the venue wrote in another form (upper case…) names the same request.
        let ours = as_sent.and_then(pending::canonical);
        let request_id = ours.as_deref().or(as_sent);
        // The venue's words: `message` as documented, `msg` as its ws-stream answers write them.
        let message =
            ["message", "msg", "status"].iter().find_map(|key| frame.get(*key).and_then(Value::as_str)).unwrap_or("");
        let state = &self.state;
        if let Some(outcome) = self.login.answer(&frame, text, request_id, || state.has_unanswered()) {
            return outcome;
        }
        let Some(request_id) = request_id else {
            queue.push_quoting_venue(unrecognized::event(text, received_ns));
            return AuthOutcome::Pending;
        };
        if self.login.is_ours(request_id) {
            // A late answer to a login of an earlier connection (or one answered already):
            // no order's reply, so not an `order_response`, which an engine would take for a
            // REST order's result; passed on, saying what it answers.
            queue.push_quoting_venue(unrecognized::answering(text, "auth:login", received_ns));
            return AuthOutcome::Pending;
        }
        let reply = if names_outcome_twice(text) {
            pending::Reply::Outcome(pending::Verdict::Unknown)
        } else if is_ack(&frame, text) {
            pending::Reply::Ack
        } else {
            pending::Reply::Outcome(verdict(&frame, text))
        };
        let ack = matches!(reply, pending::Reply::Ack);
        let pending::Answer { request, repeat, first, contradicts } = self.state.answered(request_id, reply);
        // An order the venue carried out shows the connection logged in; a refusal does not
        // (it may be the token's), nor does a gateway's ack.
        if request.is_some() && matches!(reply, pending::Reply::Outcome(pending::Verdict::Success)) {
            self.login.order_answered();
        }
        if let Some(rules) = &self.rules
            && matches!(reply, pending::Reply::Outcome(pending::Verdict::Refused))
            && request.as_ref().is_some_and(|r| r.method == "order:new")
            && is_rules_error(message)
        {
            rules.mark_stale();
        }
        // A repeat names the request its first copy answered.
        let named = request.as_ref().or(first.as_ref());
        let event = json!({
            "channel": "order_response",
            // The id the caller was given for a request of ours; else the venue's text (the
            // frame as sent is in `frame` either way).
            "request_id": if named.is_some() { request_id } else { as_sent.unwrap_or(request_id) },
            "code": frame.get("code").cloned().unwrap_or(Value::Null),
            "message": message,
            "final": !ack,
            "matched": request.is_some(),
            "repeat": repeat,
            // A repeat is never an outcome: what its first copy said stands, unless the two
            // disagree (`contradicts`: then the engine looks the order up).
            "contradicts": contradicts,
            "outcome_unknown": !repeat && matches!(reply, pending::Reply::Outcome(pending::Verdict::Unknown)),
            // What this frame says, read once here so that no engine re-reads codes (0, 200,
            // "0", none) on its own: an outcome saying the request succeeded.
            "success": matches!(reply, pending::Reply::Outcome(pending::Verdict::Success)),
            "method": named.map(|r| r.method),
            "cl_ord_id": named.and_then(|r| r.cl_ord_id.as_deref()),
            "order_id": named.and_then(|r| r.order_id),
        });
        queue.push_quoting_venue(with_frame_as_sent(event.to_string(), text, received_ns));
        AuthOutcome::Pending
    }

    fn connected_fields(&self) -> Value {
        json!({ "session_id": self.state.session_id, "session_id_from_session": self.state.from_session })
    }

    fn on_disconnect(&mut self) -> Value {
        // A login's answer means nothing on another connection (which logs in again).
        self.login.lost();
        // Kept: a late outcome may still come on the next connection (same session_id).
        json!({ "unanswered": self.state.report_unanswered() })
    }

    /// Those sent on this connection and not past their deadline: the requests of earlier
    /// ones were all listed `unanswered` when their connection ended, and are not awaited on
    /// this one.
    fn awaits_outcomes(&self) -> bool {
        self.state.awaits_unreported()
    }

    /// A `request_timeout` event for each request whose outcome has not come within
    /// `stream_request_timeout_ms` (`deadlines.rs`): reported once, its fate unknown; a late
    /// outcome is still matched to it.
    fn on_timers(&mut self, now: std::time::Instant, queue: &Queue) -> Option<std::time::Instant> {
        let (timed_out, next) = self.state.expire(now);
        if timed_out.is_empty() {
            // The I/O thread asks at every turn: no second look at the table then.
            return next;
        }
        let timeout_ms = self.state.request_timeout().map_or(0, |t| t.as_millis() as u64);
        for pending::TimedOut { request_id, request } in timed_out {
            let fields = json!({
                "stream": "order",
                "request_id": request_id,
                "method": request.method,
                "cl_ord_id": request.cl_ord_id.as_deref(),
                "order_id": request.order_id,
                "acked": request.acked,
                "timeout_ms": timeout_ms,
                "outcome_unknown": true,
            });
            // A notice, not a status event: bounded with the data (an `overflow` marker says
            // when some were dropped), as a venue that never answers could make one per order.
            queue.push(super::events::Kind::Notice, super::events::status("request_timeout", fields));
        }
        next
    }
}

#[cfg(test)]
mod tests;
