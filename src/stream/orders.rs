//! The order-entry stream (`ws-api`): `auth:login`, `order:new` and `order:cancel` frames,
//! and the venue's replies as `order_response` events.
//!
//! A request's envelope `request_id` (a fresh UUID, echoed by the venue's replies) is not
//! the `x-request-id` of its body signature (another fresh UUID), as live clients do.
//! Replies come in two frames: an "accepted" ack (`final: false`; the word under `status`
//! or under `message`) and the outcome (`final: true`: success, or a rejection such as
//! "alo order rejected"). Frames for unknown or finished requests (late acks, results of
//! REST orders sent with `x-session-id`) are passed through with `"matched": false`; an
//! outcome for a request whose outcome was already passed on (of the last 4,096 finished)
//! also with `"repeat": true`, so that no engine takes it for an order's outcome. An outcome
//! whose code leaves the request's effect unknown (5xx, 408, or a code that is no plain
//! integer) says so with `"outcome_unknown": true`, as REST says "may have reached the venue".
//!
//! The login may be answered the same way: an "accepted" ack lets the connection be served
//! (the open does not wait for more), but the login's `request_id` is kept, and the frame
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

/// An "accepted" ack, whichever key the venue puts the word under, and under no code or a
/// success code: 0, 200 (the venue's other success code, venue-api.md §6) or 202 (the HTTP
/// code for "accepted"), read by `venue_code` as REST reads codes. An ack taken for the
/// outcome would make the real outcome a second `final` reply, passed on unmatched. A code
/// that is not a plain integer (`0.0`, `-0`, `1e-400`) is no ack: the frame is a `final`
/// reply marked `outcome_unknown` ([`verdict`]), never taken for "accepted".
fn is_ack(frame: &Map<String, Value>) -> bool {
    use crate::endpoints::answer::venue_code;
    let accepted =
        |key: &str| frame.get(key).and_then(Value::as_str).is_some_and(|s| s.eq_ignore_ascii_case("accepted"));
    let code_ok = matches!(venue_code(frame.get("code")), Ok(None | Some(0 | 200 | 202)));
    code_ok && (accepted("status") || accepted("message"))
}

/// What an outcome says, its `code` read as REST reads a code (`refusal_code`): a success
/// (0 or 200, or no code with no word, "success" or "ok", as the login's answer is read:
/// `auth_answer::success_word` — every documented reply carries a code);
/// a refusal; or an unknown effect (`outcome_unknown`) — a server error or time-out behind
/// the venue's gateway (5xx, 408: the order or cancel may have been acted on), a code that is
/// not an integer written plainly or a string of digits (`1e-400`, `-0`, `"ok"`: no reader
/// can be sure what it says), or no code beside other words ("alo order rejected" with no
/// code: a refusal by its words, a success by its code, as REST reads a missing code). An
/// engine taking one of those for a plain refusal would send the order again; taking it for
/// a success would leave a rejected quote believed resting.
fn verdict(code: Option<&Value>, message: &str) -> pending::Verdict {
    use crate::endpoints::answer::{code_leaves_outcome_unknown, refusal_code};
    let no_code = code.is_none_or(Value::is_null);
    match refusal_code(code) {
        Ok(None) if no_code && !super::auth_answer::success_word(message) => pending::Verdict::Unknown,
        Ok(None) => pending::Verdict::Success,
        Ok(Some(code)) if !code_leaves_outcome_unknown(code) => pending::Verdict::Refused,
        _ => pending::Verdict::Unknown,
    }
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
        let request_id = frame.get("request_id").and_then(Value::as_str);
        let message =
            frame.get("message").and_then(Value::as_str).or(frame.get("status").and_then(Value::as_str)).unwrap_or("");
        let state = &self.state;
        if let Some(outcome) = self.login.answer(&frame, request_id, || state.has_unanswered()) {
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
        let ack = is_ack(&frame);
        let reply =
            if ack { pending::Reply::Ack } else { pending::Reply::Outcome(verdict(frame.get("code"), message)) };
        let pending::Answer { request, repeat, first, contradicts } = self.state.answered(request_id, reply);
        if let Some(rules) = &self.rules
            && matches!(reply, pending::Reply::Outcome(pending::Verdict::Refused))
            && request.as_ref().is_some_and(|r| r.method == "order:new")
            && is_rules_error(message)
        {
            rules.mark_stale();
        }
        // A repeat names the request its first copy answered.
        let named = request.as_ref().or(first.as_ref());
        let mut event = json!({
            "channel": "order_response",
            "request_id": request_id,
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
        event["frame"] = Value::Object(frame);
        event["received_ns"] = received_ns.into();
        queue.push_quoting_venue(event.to_string());
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

    /// Those sent on this connection: the requests of earlier ones were all listed
    /// `unanswered` when their connection ended, and are not awaited on this one.
    fn awaits_outcomes(&self) -> bool {
        self.state.awaits_unreported()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn the_login_frame_is_what_serde_json_wrote() {
        for vault in [None, Some("0xVault\"q")] {
            let state = Arc::new(OrderState::new("sess-1".into(), false));
            let orders = Orders::new(state, vault.map(str::to_owned));
            let mut params = json!({ "token": "tok\"\\en" });
            if let Some(vault) = vault {
                params["impersonate"] = vault.into();
            }
            let expected = json!({
                "session_id": "sess-1", "request_id": "r-1", "method": "auth:login", "params": params.to_string(),
            });
            assert_eq!(orders.login_frame("r-1", "tok\"\\en").as_str(), expected.to_string());
        }
    }

    /// Events for `frames`, where "r1" and "r2" stand for two requests remembered first
    /// (their fresh ids substituted).
    fn events_of(frames: &[&str], pending: &[(&str, &'static str)]) -> Vec<Value> {
        let state = Arc::new(OrderState::new("s-1".into(), false));
        let mut ids = Vec::new();
        for (name, method) in pending {
            let id = RequestId::fresh().unwrap();
            state.remember(&id, method, Some("c-1"), None).unwrap();
            ids.push((*name, id));
        }
        let mut orders = Orders::new(state, None);
        let queue = Queue::default();
        for frame in frames {
            let mut frame = frame.to_string();
            for (name, id) in &ids {
                frame = frame.replace(&format!("\"{name}\""), &format!("\"{}\"", id.as_str()));
            }
            assert!(matches!(orders.on_text(&frame, 5, &queue), AuthOutcome::Pending));
        }
        let names = |e: Value| {
            let mut e = e;
            for (name, id) in &ids {
                if e["request_id"] == id.as_str() {
                    e["request_id"] = (*name).into();
                }
            }
            e
        };
        std::iter::from_fn(|| queue.pop(Some(Duration::ZERO), None).unwrap())
            .map(|e| names(serde_json::from_str(&e).unwrap()))
            .collect()
    }

    #[test]
    fn a_refusal_of_an_order_for_its_tick_or_qty_marks_the_symbol_rules_stale() {
        use crate::client::symbol_rules::SymbolTable;
        let rules_json = r#"[{"symbol":"BTC-USD","price_tick_decimals":2,"qty_tick_decimals":4,"min_order_qty":"0.0001","max_order_qty":"100","enabled":true}]"#;
        let cases = [
            ("order:new", r#"{"code":400,"message":"price 1.001 does not follow price tick 0.01"}"#, true),
            ("order:new", r#"{"code":400,"message":"invalid order qty"}"#, true),
            ("order:new", r#"{"code":400,"message":"alo order rejected"}"#, false),
            ("order:new", r#"{"code":0,"message":"accepted"}"#, false), // an ack
            ("order:new", r#"{"code":503,"message":"tick service timeout"}"#, false), // fate unknown, not a refusal
            ("order:cancel", r#"{"code":400,"message":"price tick"}"#, false),
        ];
        for (method, reply, stale) in cases {
            let cache = Arc::new(SymbolCache::new(Duration::from_secs(60)));
            cache.store_list(SymbolTable::parse(rules_json).unwrap());
            let state = Arc::new(OrderState::new("s-1".into(), false));
            let id = RequestId::fresh().unwrap();
            state.remember(&id, method, Some("c-1"), None).unwrap();
            let mut orders = Orders::new(state, None).with_rules(Some(cache.clone()));
            let frame = reply.replace('}', &format!(r#","request_id":"{}"}}"#, id.as_str()));
            orders.on_text(&frame, 5, &Queue::default());
            assert_eq!(cache.current().is_none(), stale, "{method} {reply}");
        }
    }

    #[test]
    fn both_ack_styles_then_the_outcome_and_late_frames_unmatched() {
        let got = events_of(
            &[
                r#"{"code":0,"status":"accepted","request_id":"r1"}"#,
                r#"{"code":0,"message":"accepted","request_id":"r2"}"#,
                r#"{"code":400,"message":"alo order rejected","request_id":"r1"}"#,
                r#"{"code":0,"message":"success","request_id":"r2"}"#,
                r#"{"code":0,"message":"accepted","request_id":"r1"}"#,
                r#"{"code":0,"message":"success","request_id":"rest-1"}"#,
                r#"[1,2]"#,
            ],
            &[("r1", "order:new"), ("r2", "order:cancel")],
        );
        let row =
            |e: &Value| (e["request_id"].as_str().unwrap().to_owned(), e["final"].as_bool(), e["matched"].as_bool());
        assert_eq!(row(&got[0]), ("r1".into(), Some(false), Some(true)));
        assert_eq!(row(&got[1]), ("r2".into(), Some(false), Some(true)));
        assert_eq!(row(&got[2]), ("r1".into(), Some(true), Some(true)));
        assert_eq!(got[2]["message"], "alo order rejected");
        assert_eq!(got[2]["cl_ord_id"], "c-1");
        assert_eq!(got[2]["method"], "order:new");
        assert_eq!(row(&got[3]), ("r2".into(), Some(true), Some(true)));
        assert_eq!(row(&got[4]), ("r1".into(), Some(false), Some(false)), "a late ack is passed through");
        assert_eq!(row(&got[5]), ("rest-1".into(), Some(true), Some(false)));
        assert_eq!(got[6]["channel"], "unrecognized");
        assert_eq!(got.len(), 7);
    }

    #[test]
    fn a_second_outcome_is_passed_on_as_a_repeat_never_as_an_orders_outcome() {
        let got = events_of(
            &[
                r#"{"code":0,"status":"accepted","request_id":"r1"}"#,
                r#"{"code":0,"message":"success","request_id":"r1"}"#,
                r#"{"code":0,"message":"success","request_id":"r1"}"#,
                r#"{"code":400,"message":"alo order rejected","request_id":"r1"}"#,
                r#"{"code":0,"message":"accepted","request_id":"r1"}"#,
                r#"{"code":0,"message":"success","request_id":"rest-1"}"#,
                r#"{"code":0,"message":"success","request_id":"r2"}"#,
            ],
            &[("r1", "order:new"), ("r2", "order:cancel")],
        );
        let row = |e: &Value| {
            (
                e["request_id"].as_str().unwrap().to_owned(),
                e["final"].as_bool().unwrap(),
                e["matched"].as_bool().unwrap(),
                e["repeat"].as_bool().unwrap(),
            )
        };
        let rows: Vec<_> = got.iter().map(row).collect();
        assert_eq!(
            rows,
            [
                ("r1".into(), false, true, false),
                ("r1".into(), true, true, false),
                ("r1".into(), true, false, true),
                ("r1".into(), true, false, true),
                ("r1".into(), false, false, false),
                ("rest-1".into(), true, false, false),
                ("r2".into(), true, true, false),
            ],
            "every frame passed on, each outcome after the first marked"
        );
        // Unmatched, naming the request its first copy answered; a repeat that says otherwise
        // contradicts it.
        assert_eq!(got[3]["method"], "order:new");
        assert_eq!(got[3]["frame"]["message"], "alo order rejected");
        let contradicts: Vec<_> = got.iter().map(|e| e["contradicts"].as_bool().unwrap()).collect();
        assert_eq!(contradicts, [false, false, false, true, false, false, false]);
        assert!(got.iter().all(|e| e["outcome_unknown"] == false), "a repeat is never outcome_unknown");
    }

    #[test]
    fn an_outcome_whose_code_leaves_the_orders_fate_unknown_says_so() {
        // (frame, outcome_unknown, success)
        let frames = [
            (r#"{"code":503,"message":"busy","request_id":"r1"}"#, true, false),
            (r#"{"code":"408","message":"timeout","request_id":"r1"}"#, true, false),
            (r#"{"code":500,"request_id":"r1"}"#, true, false),
            (r#"{"code":1e-400,"message":"success","request_id":"r1"}"#, true, false),
            (r#"{"code":-0,"message":"success","request_id":"r1"}"#, true, false),
            (r#"{"code":"ok","request_id":"r1"}"#, true, false),
            // No code beside a refusal's words: neither read as a success nor as a refusal.
            (r#"{"message":"alo order rejected","request_id":"r1"}"#, true, false),
            (r#"{"code":null,"status":"rejected","request_id":"r1"}"#, true, false),
            (r#"{"code":400,"message":"alo order rejected","request_id":"r1"}"#, false, false),
            (r#"{"code":429,"message":"slow down","request_id":"r1"}"#, false, false),
            (r#"{"code":0,"message":"success","request_id":"r1"}"#, false, true),
            (r#"{"code":200,"message":"success","request_id":"r1"}"#, false, true),
            (r#"{"code":"0","message":"ok","request_id":"r1"}"#, false, true),
            (r#"{"message":"success","request_id":"r1"}"#, false, true),
            (r#"{"message":"SUCCESS","request_id":"r1"}"#, false, true),
            (r#"{"message":"ok","request_id":"r1"}"#, false, true),
            (r#"{"request_id":"r1"}"#, false, true),
            (r#"{"code":0,"status":"accepted","request_id":"r1"}"#, false, false),
        ];
        for (frame, unknown, success) in frames {
            let got = events_of(&[frame], &[("r1", "order:new")]);
            assert_eq!(got[0]["outcome_unknown"].as_bool(), Some(unknown), "{frame}");
            assert_eq!(got[0]["success"].as_bool(), Some(success), "{frame}");
            assert_eq!(got[0]["matched"], true, "{frame}");
        }
        // Sent twice: the first copy says the fate is unknown, the repeat says nothing.
        let frame = r#"{"code":503,"message":"busy","request_id":"r1"}"#;
        let got = events_of(&[frame, frame], &[("r1", "order:new")]);
        let flags: Vec<_> = got.iter().map(|e| (e["repeat"].clone(), e["outcome_unknown"].clone())).collect();
        assert_eq!(flags, [(Value::Bool(false), Value::Bool(true)), (Value::Bool(true), Value::Bool(false))]);
    }

    #[test]
    fn an_ack_whose_code_is_not_a_plain_integer_is_a_final_reply_of_unknown_outcome() {
        // Read as REST reads codes (`venue_code`): `0.0` or `1e-400` is no success code, so
        // no ack; the frame is the outcome, and one that leaves the order's fate unknown.
        for code in ["0.0", "1e-400", "-0", r#""-0""#, "2e2", "202.0", "true"] {
            for word in ["status", "message"] {
                let frame = format!(r#"{{"code":{code},"{word}":"accepted","request_id":"r1"}}"#);
                let got = events_of(&[&frame], &[("r1", "order:new")]);
                assert_eq!(
                    (got[0]["final"].as_bool(), got[0]["matched"].as_bool()),
                    (Some(true), Some(true)),
                    "{frame}"
                );
                assert_eq!(got[0]["outcome_unknown"], true, "{frame}");
            }
        }
    }

    #[test]
    fn an_ack_under_the_success_code_200_is_no_final_reply() {
        // 200 is a success code of the venue (its WebSocket auth answers, venue-api.md §6) as
        // 0 is: an "accepted" ack under it, taken for the outcome, would make the real outcome
        // (here a rejection) an unmatched second `final` that an engine following its own
        // requests ignores.
        let got = events_of(
            &[
                r#"{"code":200,"status":"accepted","request_id":"r1"}"#,
                r#"{"code":"200","message":"accepted","request_id":"r2"}"#,
                r#"{"code":400,"message":"alo order rejected","request_id":"r1"}"#,
                r#"{"code":200,"message":"success","request_id":"r2"}"#,
            ],
            &[("r1", "order:new"), ("r2", "order:cancel")],
        );
        let row =
            |e: &Value| (e["request_id"].as_str().unwrap().to_owned(), e["final"].as_bool(), e["matched"].as_bool());
        let rows: Vec<_> = got.iter().map(row).collect();
        assert_eq!(
            rows,
            [
                ("r1".into(), Some(false), Some(true)),
                ("r2".into(), Some(false), Some(true)),
                ("r1".into(), Some(true), Some(true)),
                ("r2".into(), Some(true), Some(true)),
            ]
        );
    }

    #[test]
    fn a_login_answered_by_an_ack_is_judged_again_by_its_outcome() {
        let outcome = |orders: &mut Orders, frame: Value, queue: &Queue| orders.on_text(&frame.to_string(), 5, queue);
        let queue = Queue::default();
        let mut orders = Orders::new(Arc::new(OrderState::new("s-1".into(), false)), None);
        orders.login.sent("L".into());
        let ack = json!({"code":0,"status":"accepted","request_id":"L"});
        assert!(matches!(outcome(&mut orders, ack.clone(), &queue), AuthOutcome::Accepted));
        orders.login.served();
        assert!(matches!(outcome(&mut orders, ack, &queue), AuthOutcome::Pending), "the ack again");
        let refusal = json!({"code":401,"message":"invalid token","request_id":"L"});
        match outcome(&mut orders, refusal.clone(), &queue) {
            AuthOutcome::Refused(e) => assert!(e.message().contains("auth:login (code 401): invalid token"), "{e}"),
            _ => panic!("a refusal after the ack must refuse the login"),
        }
        assert!(queue.pop(Some(Duration::ZERO), None).unwrap().is_none(), "no event for the login's answers");
        // Answered: the same frame again no longer refuses, and answers no order.
        assert!(matches!(outcome(&mut orders, refusal, &queue), AuthOutcome::Pending));
        let event: Value = serde_json::from_str(&queue.pop(Some(Duration::ZERO), None).unwrap().unwrap()).unwrap();
        assert_eq!((event["channel"].as_str(), event["answers"].as_str()), (Some("unrecognized"), Some("auth:login")));

        // A success after the ack is silent; "not now" is Unavailable; a login answered
        // by its outcome at once is not awaited any more.
        for (answer, want) in [("success", "pending"), ("busy", "unavailable")] {
            orders.login.sent("L".into());
            outcome(&mut orders, json!({"code":0,"message":"accepted","request_id":"L"}), &queue);
            orders.login.served();
            let code = if answer == "success" { 0 } else { 503 };
            let got = match outcome(&mut orders, json!({"code":code,"message":answer,"request_id":"L"}), &queue) {
                AuthOutcome::Pending => "pending",
                AuthOutcome::Unavailable(_) => "unavailable",
                _ => "other",
            };
            assert_eq!(got, want, "{answer}");
        }
        // The ack under the HTTP code for "accepted" is an ack too, followed to its outcome.
        orders.login.sent("L".into());
        let ack_202 = json!({"code":202,"status":"accepted","request_id":"L"});
        assert!(matches!(outcome(&mut orders, ack_202, &queue), AuthOutcome::Accepted));
        orders.login.served();
        assert!(matches!(orders.login.current, login::Login::Acked(_)));
        orders.login.sent("L".into());
        outcome(&mut orders, json!({"code":0,"message":"success","request_id":"L"}), &queue);
        orders.login.served();
        assert!(matches!(orders.login.current, login::Login::Done));
        assert!(queue.pop(Some(Duration::ZERO), None).unwrap().is_none());
    }
}
