//! The order stream's `auth:login` as its answers name it: which frame is the login's answer,
//! and which `request_id`s are logins of this stream, answered or sent on an earlier
//! connection (a late answer to one is no order's answer). Apart from the order protocol
//! (`orders.rs`) because which frame answers the login is a judgement of its own, with its
//! ambiguity written down here.
//!
//! A login may be answered by an "accepted" ack first (the connection is then served), and
//! later by its outcome. A success that does not carry the login's `request_id` (a frame with
//! a success code and no `request_id`, or the market stream's auth answer) is taken the same
//! way: it may be the venue's welcome rather than the login's answer, so the frame that later
//! carries the login's `request_id` is still its outcome. The outcome normally carries the
//! login's `request_id`; a frame
//! without one is the login's outcome only when it reads as a refusal of a login, because
//! taking a refusal for an order's reply would leave the engine believing it is logged in
//! while every order it sends is refused:
//! - a frame whose words name an order ("alo order rejected") is an order's, never the login's;
//! - no order awaits its outcome: a frame with a `code` that is not success (e.g. 401, 403, or
//!   a "not now" 5xx) or with words of authentication (`token`, `signature`, `auth`…) is the
//!   login's — nothing else is awaited on the connection;
//! - orders await their outcome too: the frame may be an order's reply that left its
//!   `request_id` out, and ending the stream for an order's rejection would be wrong. Only
//!   what can answer the login alone is taken: code 401 (the venue's "missing or invalid
//!   token", venue-api.md §3.1: the token is the login's, an order carries none) or words
//!   about the token or the login (`token`, `jwt`, `login`, `unauthorized`…). A 403, a
//!   "signature" or a 5xx may be an order's (orders are body-signed; a 403 is also the
//!   venue's "signature has expired" for a request's clock) and is passed on as it is.
//!
//! These rules hold for the login's first answer too (one on the market stream's `auth`
//! channel aside): on a reconnection, the orders of the earlier connection still await their
//! outcome, which may come on the new connection (same `session_id`) before the login's.

use super::super::auth_answer::judge_text;
use super::super::supervisor::AuthOutcome;
use crate::endpoints::answer::venue_code;
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The login as its answers name it.
const LOGIN: &str = "the order stream's auth:login";

/// How long a login taken from a success without its `request_id` still waits for a frame
/// that carries it (as [WJ] waits for a login's answer).
const UNADDRESSED_WINDOW: Duration = Duration::from_secs(10);

/// How many of the stream's logins are remembered by their `request_id` (one per connection):
/// a late answer comes soon after its connection was lost, so a few are ample.
const REMEMBERED: usize = 16;

/// Where the connection's `auth:login` stands, by its `request_id`.
#[derive(Debug)]
pub(super) enum Login {
    /// Not sent yet, or answered with its outcome: nothing is awaited.
    Done,
    /// Sent and not answered: the next frame with its `request_id` answers it, or one with
    /// none that has a code (a refusal only when it reads as the login's: module docs).
    Sent(String),
    /// Answered only by an "accepted" ack: the connection is served, and the frame that comes
    /// later with its `request_id` (or a refusal without one) is its outcome. `unaddressed`
    /// (when it came): the "ack" was a success without the login's `request_id` (possibly a
    /// welcome, possibly the login's own answer, which may never be followed by another).
    /// Then a frame without `request_id` is taken for the login's refusal only when it can
    /// answer the login alone, as while orders await their outcome (module docs) — a coded
    /// notice must not end the stream — and only until [`UNADDRESSED_WINDOW`] has passed or
    /// an order succeeded (the venue serves the connection: it is logged in).
    Acked { request_id: String, unaddressed: Option<Instant> },
}

/// The login of the current connection, and the `request_id`s of the stream's logins.
pub(super) struct Logins {
    pub(super) current: Login,
    /// The latest logins sent, the current one included (oldest first).
    sent: VecDeque<String>,
}

impl Logins {
    pub(super) fn new() -> Logins {
        Logins { current: Login::Done, sent: VecDeque::with_capacity(REMEMBERED) }
    }

    /// A login sent with this `request_id` on a new connection.
    pub(super) fn sent(&mut self, request_id: String) {
        if self.sent.len() == REMEMBERED {
            self.sent.pop_front();
        }
        self.sent.push_back(request_id.clone());
        self.current = Login::Sent(request_id);
    }

    /// The connection is served (the login answered): an acked login stays awaited, as its
    /// outcome is still to come.
    pub(super) fn served(&mut self) {
        if let Login::Sent(_) = self.current {
            self.current = Login::Done;
        }
    }

    /// An order of the stream succeeded: a login taken from a success without its
    /// `request_id` is confirmed (the venue serves the connection), and no longer awaited.
    pub(super) fn order_answered(&mut self) {
        if let Login::Acked { unaddressed: Some(_), .. } = self.current {
            self.current = Login::Done;
        }
    }

    /// The connection is lost: its login's answer means nothing on the next connection, which
    /// logs in again (a late one is recognised by `is_ours`).
    pub(super) fn lost(&mut self) {
        self.current = Login::Done;
    }

    /// Whether `request_id` is one of the stream's logins that is not awaited any more (of an
    /// earlier connection, or answered already).
    pub(super) fn is_ours(&self, request_id: &str) -> bool {
        self.sent.iter().any(|id| id == request_id)
    }

    /// The login's answer, when `frame` is one: its outcome as the supervisor acts on it.
    /// Once the connection is served (the login acked), success is `Pending`: nothing to do.
    /// `orders_pending`: whether orders of the stream await their outcome (module docs).
    /// `text`: the frame as sent (an answer naming `code` or `success` twice is refused:
    /// `auth_answer::judge_text`).
    pub(super) fn answer(
        &mut self,
        frame: &Map<String, Value>,
        text: &str,
        request_id: Option<&str>,
        orders_pending: impl FnOnce() -> bool,
    ) -> Option<AuthOutcome> {
        let judge = |frame: &Map<String, Value>| judge_text(frame, text, LOGIN);
        if let Login::Acked { unaddressed: Some(since), .. } = self.current
            && since.elapsed() >= UNADDRESSED_WINDOW
        {
            self.current = Login::Done;
        }
        // Addressed: it names a request_id (whose, the arms below check), or it is the market
        // stream's auth answer (`{"channel":"auth","data":{"code":200}}`).
        let addressed = request_id.is_some() || frame.get("channel").and_then(Value::as_str) == Some("auth");
        match &self.current {
            // Its request_id, or none at all (some servers leave it out of the answer) on a
            // frame with a code or of the market stream's auth answer.
            Login::Sent(login)
                if request_id.is_none_or(|id| id == login) && (addressed || frame.contains_key("code")) =>
            {
                let outcome = match judge(frame) {
                    // A refusal without its request_id is the login's only when it reads as one,
                    // as after an ack: on a reconnection the earlier connection's orders still
                    // await their outcome, which may come first on this one (same session_id),
                    // and an order's rejection taken for the login's would end the stream.
                    outcome @ (AuthOutcome::Refused(_) | AuthOutcome::Unavailable(_)) if !addressed => {
                        unaddressed_refusal(frame, outcome, orders_pending)?
                    }
                    outcome => outcome,
                };
                // A success without the login's request_id may be a welcome of the venue's
                // (`{"code":0,"message":"connected"}`): it serves the connection as an ack
                // does, and the frame that later carries the login's request_id is still
                // judged as its outcome, so that a refusal after it is not missed.
                self.current = match outcome {
                    AuthOutcome::Accepted if request_id.is_none() || super::is_ack(frame, text) => {
                        Login::Acked { request_id: login.clone(), unaddressed: request_id.is_none().then(Instant::now) }
                    }
                    _ => Login::Done,
                };
                Some(outcome)
            }
            Login::Acked { request_id: login, .. } if request_id == Some(login.as_str()) => {
                if super::is_ack(frame, text) {
                    // The ack again: the outcome is still to come.
                    return Some(AuthOutcome::Pending);
                }
                self.current = Login::Done;
                Some(match judge(frame) {
                    AuthOutcome::Accepted => AuthOutcome::Pending,
                    outcome => outcome,
                })
            }
            Login::Acked { unaddressed, .. } if request_id.is_none() => {
                let strict = unaddressed.is_some();
                let outcome = unaddressed_refusal(frame, judge(frame), || strict || orders_pending())?;
                self.current = Login::Done;
                Some(outcome)
            }
            _ => None,
        }
    }
}

/// A frame without `request_id`, judged as the awaited login's outcome when it reads as a
/// refusal of a login (module docs); `None` when it does not.
fn unaddressed_refusal(
    frame: &Map<String, Value>,
    outcome: AuthOutcome,
    orders_pending: impl FnOnce() -> bool,
) -> Option<AuthOutcome> {
    if matches!(outcome, AuthOutcome::Accepted | AuthOutcome::Pending) {
        return None;
    }
    let data = frame.get("data").and_then(Value::as_object);
    let field = |name: &str| frame.get(name).or_else(|| data.and_then(|d| d.get(name))).filter(|v| !v.is_null());
    let code = field("code");
    let words: String = ["message", "msg", "error", "status", "data"]
        .iter()
        .filter_map(|name| field(name).and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_lowercase();
    let says = |list: &[&str]| list.iter().any(|word| words.contains(word));
    const ABOUT_THE_LOGIN: &[&str] =
        &["token", "jwt", "login", "logged in", "unauthorized", "unauthorised", "unauthenticated", "not authenticated"];
    const ABOUT_AUTHENTICATION: &[&str] = &["auth", "signature", "forbidden", "credential", "expired"];
    // An order's words ("alo order rejected") are an order's reply, whatever else is awaited.
    let is_login_refusal = if says(&["order"]) && !says(ABOUT_THE_LOGIN) {
        false
    } else if orders_pending() {
        venue_code(code) == Ok(Some(401)) || says(ABOUT_THE_LOGIN)
    } else {
        code.is_some() || says(ABOUT_THE_LOGIN) || says(ABOUT_AUTHENTICATION)
    };
    is_login_refusal.then_some(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A login "L" sent, then `frame` (with `request_id` as read from it) as its first answer.
    fn first_answer(frame: Value, request_id: Option<&str>) -> (Logins, Option<AuthOutcome>) {
        let mut logins = Logins::new();
        logins.sent("L".into());
        let outcome = logins.answer(frame.as_object().unwrap(), "", request_id, || false);
        (logins, outcome)
    }

    fn acked() -> Logins {
        let (mut logins, outcome) = first_answer(json!({"code":0,"status":"accepted","request_id":"L"}), Some("L"));
        assert!(matches!(outcome, Some(AuthOutcome::Accepted)));
        logins.served();
        logins
    }

    /// What an acked login makes of `frame` (no request_id): "refused", "unavailable" or "not
    /// the login's".
    fn taken(frame: Value, orders_pending: bool) -> &'static str {
        let mut logins = acked();
        match logins.answer(frame.as_object().unwrap(), "", None, || orders_pending) {
            Some(AuthOutcome::Refused(_)) => "refused",
            Some(AuthOutcome::Unavailable(_)) => "unavailable",
            Some(_) => "other",
            None => "not the login's",
        }
    }

    #[test]
    fn a_refusal_without_request_id_answers_an_acked_login() {
        for (frame, alone, with_orders) in [
            (json!({"code":401,"message":"invalid token"}), "refused", "refused"),
            (json!({"code":"401"}), "refused", "refused"),
            (json!({"code":403,"message":"forbidden"}), "refused", "not the login's"),
            (json!({"code":403,"message":"Unauthorized: token revoked"}), "refused", "refused"),
            (json!({"message":"Invalid signature"}), "refused", "not the login's"),
            (json!({"message":"invalid token"}), "refused", "refused"),
            (json!({"error":"jwt expired"}), "refused", "refused"),
            (json!({"code":400,"message":"bad request"}), "refused", "not the login's"),
            (json!({"code":400,"message":"alo order rejected"}), "not the login's", "not the login's"),
            (json!({"code":503,"message":"busy"}), "unavailable", "not the login's"),
            // A code not written as a plain integer is no success, nor the token's 401.
            (json!({"code":0.0,"message":"success"}), "refused", "not the login's"),
            (json!({"code":401.0}), "refused", "not the login's"),
            // Not refusals, or no sign of a login's answer: passed on.
            (json!({"code":0,"message":"success"}), "not the login's", "not the login's"),
            (json!({"code":0,"status":"accepted"}), "not the login's", "not the login's"),
            (json!({"message":"welcome"}), "not the login's", "not the login's"),
            (json!({"ping":1}), "not the login's", "not the login's"),
        ] {
            assert_eq!(taken(frame.clone(), false), alone, "no order pending: {frame}");
            assert_eq!(taken(frame.clone(), true), with_orders, "orders pending: {frame}");
        }
    }

    #[test]
    fn a_refusal_without_request_id_is_the_logins_only_while_its_outcome_is_awaited() {
        let refusal = json!({"code":401,"message":"invalid token"});
        let refusal = refusal.as_object().unwrap();
        // Answered by its outcome: nothing is awaited any more.
        let mut logins = acked();
        let success = json!({"code":0,"message":"success","request_id":"L"});
        assert!(matches!(
            logins.answer(success.as_object().unwrap(), "", Some("L"), || false),
            Some(AuthOutcome::Pending)
        ));
        assert!(logins.answer(refusal, "", None, || false).is_none());
        // Lost: the next connection's login is another.
        let mut logins = acked();
        logins.lost();
        assert!(logins.answer(refusal, "", None, || false).is_none());
        assert!(logins.is_ours("L") && !logins.is_ours("M"));
    }

    #[test]
    fn a_success_without_the_logins_request_id_serves_the_connection_but_leaves_its_outcome_awaited() {
        for welcome in [
            json!({"code":0,"message":"connected"}),
            json!({"seq":1,"channel":"auth","data":{"code":200,"msg":"success"}}),
        ] {
            let (mut logins, first) = first_answer(welcome.clone(), None);
            assert!(matches!(first, Some(AuthOutcome::Accepted)), "{welcome}");
            logins.served();
            assert!(matches!(logins.current, Login::Acked { unaddressed: Some(_), .. }), "{welcome}");
            let refusal = json!({"code":401,"message":"invalid token","request_id":"L"});
            let outcome = logins.answer(refusal.as_object().unwrap(), "", Some("L"), || false);
            assert!(matches!(outcome, Some(AuthOutcome::Refused(_))), "{welcome}");
            assert!(matches!(logins.current, Login::Done));
        }
        // After a success without its request_id, a frame without one is the login's refusal
        // only when it can answer the login alone: a coded notice is passed on.
        let welcomed = || {
            let (mut logins, _) = first_answer(json!({"code":0,"message":"success"}), None);
            logins.served();
            logins
        };
        for (frame, taken) in [
            (json!({"code":1001,"message":"maintenance at 02:00"}), false),
            (json!({"code":403,"message":"forbidden"}), false),
            (json!({"code":401,"message":"invalid token"}), true),
            (json!({"error":"jwt expired"}), true),
        ] {
            let outcome = welcomed().answer(frame.as_object().unwrap(), "", None, || false);
            assert_eq!(matches!(outcome, Some(AuthOutcome::Refused(_))), taken, "{frame}");
            assert_eq!(outcome.is_none(), !taken, "{frame}");
        }
        // No longer once an order succeeded, or once the window has passed: then even a
        // refusal of the token without request_id is another frame's (passed on).
        let token_refusal = json!({"code":401,"message":"invalid token"});
        let mut logins = welcomed();
        logins.order_answered();
        assert!(matches!(logins.current, Login::Done));
        assert!(logins.answer(token_refusal.as_object().unwrap(), "", None, || false).is_none());
        let mut logins = welcomed();
        if let Login::Acked { unaddressed: Some(since), .. } = &mut logins.current {
            *since -= UNADDRESSED_WINDOW;
        }
        assert!(logins.answer(token_refusal.as_object().unwrap(), "", None, || false).is_none());
        assert!(matches!(logins.current, Login::Done));
        // A gateway's ack stays awaited whatever orders are answered.
        let mut logins = acked();
        logins.order_answered();
        assert!(matches!(logins.current, Login::Acked { unaddressed: None, .. }));
        // With its request_id, a success is the outcome: nothing more is awaited.
        let (logins, outcome) = first_answer(json!({"code":0,"message":"success","request_id":"L"}), Some("L"));
        assert!(matches!(outcome, Some(AuthOutcome::Accepted)));
        assert!(matches!(logins.current, Login::Done));
        // A market-stream refusal without a request_id is the login's refusal.
        let (_, outcome) = first_answer(json!({"channel":"auth","data":{"code":401,"msg":"invalid token"}}), None);
        assert!(matches!(outcome, Some(AuthOutcome::Refused(_))));
    }

    #[test]
    fn a_late_order_reply_without_request_id_is_not_the_answer_of_a_reconnections_login() {
        // On a reconnection the earlier connection's orders still await their outcome, which
        // may come on this one (same session_id) before the new login's answer: taken for the
        // login's refusal, an order's rejection ended the stream for good.
        for (frame, alone, with_orders) in [
            (json!({"code":400,"message":"alo order rejected"}), "not the login's", "not the login's"),
            (json!({"code":403,"message":"signature has expired"}), "refused", "not the login's"),
            (json!({"code":503,"message":"busy"}), "unavailable", "not the login's"),
            (json!({"code":401,"message":"invalid token"}), "refused", "refused"),
            (json!({"channel":"auth","data":{"code":401,"msg":"invalid token"}}), "refused", "refused"),
            (json!({"code":0,"message":"success"}), "accepted", "accepted"),
        ] {
            for (orders_pending, want) in [(false, alone), (true, with_orders)] {
                let mut logins = Logins::new();
                logins.sent("L".into());
                let got = match logins.answer(frame.as_object().unwrap(), "", None, || orders_pending) {
                    Some(AuthOutcome::Refused(_)) => "refused",
                    Some(AuthOutcome::Unavailable(_)) => "unavailable",
                    Some(AuthOutcome::Accepted) => "accepted",
                    Some(AuthOutcome::Pending) => "pending",
                    None => "not the login's",
                };
                assert_eq!(got, want, "{frame} (orders pending: {orders_pending})");
                if got == "not the login's" {
                    // Still awaited: its own answer is judged when it comes.
                    let refusal = json!({"code":401,"message":"invalid token","request_id":"L"});
                    let outcome = logins.answer(refusal.as_object().unwrap(), "", Some("L"), || orders_pending);
                    assert!(matches!(outcome, Some(AuthOutcome::Refused(_))), "{frame}");
                }
            }
        }
    }

    #[test]
    fn the_stream_remembers_its_latest_logins() {
        let mut logins = Logins::new();
        for i in 0..REMEMBERED + 2 {
            logins.sent(format!("L{i}"));
        }
        assert!(!logins.is_ours("L0") && !logins.is_ours("L1"));
        assert!(logins.is_ours("L2") && logins.is_ours(&format!("L{}", REMEMBERED + 1)));
    }
}
