//! `ws-api/v1`: order entry (venue-api.md §2.3). A request is
//! `{"session_id","request_id","method","header"?,"params"}` with `params` a JSON **string**.
//!
//! - `auth:login` (`params` `{"token","impersonate"?}`): `{"code":0,"message":"success",…}`,
//!   or 401 with the reason.
//! - `order:new` / `order:cancel`: `params` is the REST body; `header` carries
//!   `x-request-id`, `x-request-timestamp`, `x-request-signature` and, optionally,
//!   `x-request-sign-version` (missing = `v1`, as the docs' example omits it). Checked as REST
//!   checks them: signature over the exact `params` string with the session's key, the
//!   timestamp window (403 "signature has expired"), strict mode's duplicate id, the body's
//!   fields. What REST would refuse before the engine gets **one** frame with REST's status
//!   and message. An accepted request gets **two**: the ack, then the engine's outcome
//!   (success, or a rejection such as "alo order rejected" or "order not found").
//!
//! Faults (`Faults::ws_*`, `/_sandbox/faults`) change an accepted request after its ack: an
//! outcome frame with another code (the order placed, or with `ws_not_placed` never given to
//! the engine), an outcome sent twice, no outcome at all, and an ack worded otherwise than
//! "accepted".
//!
//! Every reply carries the envelope's `request_id`. A malformed request (binary frame,
//! invalid JSON, missing field, unknown method) gets `{"code":400,"message",…}` with the
//! `request_id` when one could be read, `null` otherwise. `session_id` is taken from each
//! request (a changed one re-binds the connection; strict mode refuses the change), and is
//! what REST's `x-session-id` routes to.

use serde_json::{Map, Value};

use super::conn::Io;
use super::session::{self, Outcome};
use crate::body_verify::{read_headers_with, verify};
use crate::engine::order::NewOrder;
use crate::engine::{OrderRef, Who};
use crate::order_check::{check_cancel_order, check_new_order};
use crate::state::Shared;

/// The message of an outcome frame whose code `ws_outcome_code` replaced: a gateway's time-out
/// for 408 and 5xx, a plain refusal for any other code.
fn replaced_outcome_message(code: u16) -> &'static str {
    if code == 408 || code >= 500 { "upstream timeout" } else { "request rejected" }
}

#[derive(Default)]
pub(crate) struct ApiSession {
    /// The token of the last successful `auth:login` (checked again on every order: it may
    /// expire while the connection lives).
    token: Option<String>,
}

enum Action {
    New(NewOrder),
    Cancel(OrderRef),
}

impl ApiSession {
    pub(crate) fn on_binary(&mut self, io: &mut Io<'_>) {
        io.send(session::frame(400, "binary frames are not supported: send JSON text frames", None));
    }

    pub(crate) fn on_text(&mut self, io: &mut Io<'_>, text: &str) {
        let request: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => return io.send(session::frame(400, &format!("invalid JSON: {e}"), None)),
        };
        let Some(request) = request.as_object() else {
            return io.send(session::frame(400, "a request must be a JSON object", None));
        };
        let request_id = match request.get("request_id") {
            Some(Value::String(id)) if !id.is_empty() => id.clone(),
            _ => return io.send(session::frame(400, "request_id is required (a non-empty string)", None)),
        };
        if let Err(m) = self.envelope(io, request) {
            return io.send(session::frame(400, &m, Some(&request_id)));
        }
        let method = request.get("method").and_then(Value::as_str).unwrap_or_default();
        let params = request.get("params").and_then(Value::as_str).unwrap_or_default();
        let reply = match method {
            "auth:login" => self.login(io, params),
            "order:new" | "order:cancel" => match self.order(io, request, method, params) {
                Ok(action) => return self.execute(io, &request_id, action),
                Err(refusal) => Err(refusal),
            },
            other => {
                Err((400, format!("unknown method {other:?}: the methods are auth:login, order:new, order:cancel")))
            }
        };
        match reply {
            Ok(()) => io.send(session::frame(0, "success", Some(&request_id))),
            Err((code, m)) => io.send(session::frame(i64::from(code), &m, Some(&request_id))),
        }
    }

    /// The envelope's fields other than `request_id`; binds the connection's `session_id`.
    fn envelope(&mut self, io: &mut Io<'_>, request: &Map<String, Value>) -> Result<(), String> {
        let session_id = match request.get("session_id") {
            Some(Value::String(s)) if !s.is_empty() => s,
            _ => return Err("session_id is required (a non-empty string, the same on every request)".into()),
        };
        if !request.get("method").is_some_and(Value::is_string) {
            return Err("method is required (a string)".into());
        }
        match request.get("params") {
            Some(Value::String(_)) => {}
            None => return Err("params is required (a JSON string)".into()),
            Some(_) => return Err("params must be a JSON string (the parameters' JSON text), not an object".into()),
        }
        let mut info = io.conn.info();
        match &info.session_id {
            Some(bound) if bound != session_id && io.shared.config.strict => {
                return Err(format!(
                    "session_id {session_id:?} differs from this connection's {bound:?} (strict mode)"
                ));
            }
            _ => info.session_id = Some(session_id.clone()),
        }
        Ok(())
    }

    fn login(&mut self, io: &mut Io<'_>, params: &str) -> Result<(), (u16, String)> {
        let params = object(params)?;
        let Some(Value::String(token)) = params.get("token") else {
            return Err((400, "auth:login params need token (a string)".into()));
        };
        let session = io.shared.session(token).map_err(|m| (401, m.to_owned()))?;
        io.conn.info().login = Some(super::Login { account: session.account, user: session.user });
        self.token = Some(token.clone());
        Ok(())
    }

    /// The checks REST makes before the engine; the order or cancel to run.
    fn order(
        &mut self,
        io: &mut Io<'_>,
        request: &Map<String, Value>,
        method: &str,
        params: &str,
    ) -> Result<(String, Action), (u16, String)> {
        let shared: &Shared = io.shared;
        let token = self.token.as_deref().ok_or((401, format!("{method} needs auth:login first")))?;
        let session = shared.session(token).map_err(|m| (401, m.to_owned()))?;
        let Some(Value::Object(header)) = request.get("header") else {
            return Err((
                400,
                format!("{method} needs header (x-request-id, x-request-timestamp, x-request-signature)"),
            ));
        };
        let now_ms = shared.clock.now_ms();
        let headers = read_headers_with(
            |name| header_value(header, name),
            now_ms,
            shared.config.timestamp_window_ms,
            shared.config.strict,
        )?;
        let key = session.key.as_ref().map_err(|why| (403, format!("invalid signature: {why}")))?;
        if !verify(key, &headers, params.as_bytes()) {
            return Err((403, "invalid signature".into()));
        }
        if let (_, Some(duplicate)) = shared.note_signed(&session.account, &headers, now_ms) {
            return Err((400, duplicate));
        }
        let body = object(params)?;
        let action = if method == "order:new" {
            Action::New(check_new_order(&body, shared.config.strict).map_err(|m| (400, m))?)
        } else {
            Action::Cancel(check_cancel_order(&body, shared.config.strict).map_err(|m| (400, m))?)
        };
        Ok((session.account, action))
    }

    /// The two frames of an accepted request, around the engine's run.
    fn execute(&mut self, io: &mut Io<'_>, request_id: &str, (account, action): (String, Action)) {
        let shared = io.shared;
        let method = match action {
            Action::New(_) => "order:new",
            Action::Cancel(_) => "order:cancel",
        };
        let faults = shared.take_faults(method);
        let before = shared.config.ws_event_before_ack;
        let ack_word = faults.ws_ack_word.as_deref().unwrap_or(session::ACCEPTED);
        if !before {
            io.send(session::worded_ack(shared, io.conn, request_id, ack_word));
            // Out before the engine runs, so that it precedes every event the order causes
            // on the account's streams; with none open the order is unobservable, and the
            // ack leaves with the outcome (one write for a burst of pipelined orders).
            if shared.ws.has_account_stream(&account) {
                io.flush();
            }
        }
        let user = io.conn.info().login.as_ref().map(|l| l.user.clone()).unwrap_or_default();
        let who = Who { account: &account, user: &user };
        let now_us = shared.clock.now_us();
        let outcome = match action {
            _ if faults.ws_not_placed => Outcome::Success, // replaced below by ws_outcome_code
            Action::New(order) => match shared.engine().place(who, order, now_us) {
                Ok(placed) if placed.status == "rejected" => Outcome::Rejected(400, placed.remark),
                Ok(_) => Outcome::Success,
                Err(r) => Outcome::Rejected(r.status, r.message),
            },
            Action::Cancel(target) => match shared.engine().cancel(who, &target, now_us) {
                Ok(_) => Outcome::Success,
                Err(r) => Outcome::Rejected(r.status, r.message),
            },
        };
        if before {
            session::wait_for_account_streams(shared, &account);
            io.send(session::worded_ack(shared, io.conn, request_id, ack_word));
        }
        let outcome = match faults.ws_outcome_code {
            Some(code) => Outcome::Rejected(code, replaced_outcome_message(code).into()),
            None => outcome,
        };
        if faults.ws_no_outcome {
            return;
        }
        io.send(session::outcome_frame(&outcome, request_id));
        if faults.ws_repeat_outcome {
            io.send(session::outcome_frame(&outcome, request_id));
        }
    }
}

fn object(params: &str) -> Result<Map<String, Value>, (u16, String)> {
    match serde_json::from_str(params) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err((400, "params must hold a JSON object".into())),
        Err(e) => Err((400, format!("params is not valid JSON: {e}"))),
    }
}

/// One header of the ws-api `header` object: names compared without letter case, values
/// strings, a name present twice refused (as REST refuses a repeated header).
fn header_value<'a>(header: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, String> {
    let mut found = header.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name));
    match (found.next(), found.next()) {
        (None, _) => Ok(None),
        (Some(_), Some(_)) => Err(format!("header {name} is repeated")),
        (Some((_, Value::String(v))), None) => Ok(Some(v)),
        (Some(_), None) => Err(format!("header {name} must be a string")),
    }
}
