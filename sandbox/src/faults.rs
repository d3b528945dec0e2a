//! Injected failures and the counters tests read. Both are plain data, settable from Rust
//! (`Sandbox::set_faults`, `Sandbox::stats`) and over HTTP (`/_sandbox/faults`,
//! `/_sandbox/stats`) with the same field names.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Failures the sandbox injects until the set is replaced (or, with `times`, used up).
/// The default injects nothing.
///
/// The top-level switches apply where their names say: `status` and `slow_ms` to every
/// `/api/*` endpoint except `kline/time` and `health`; `order_code_nonzero` and
/// `close_after_order` to `new_order`; the sign-in switches to their sign-in endpoint.
/// An entry of `per_endpoint` (keyed by the endpoint's name: `new_order`, `query_order`,
/// `kline/time`, `prepare-signin`, `certs`, `login`, …) replaces the top-level set for that
/// endpoint, and there every switch applies, whatever its name (`close_after_order` under
/// `cancel_order` closes the connection after reading a cancel).
///
/// The `ws_*` switches act on the order stream (`/ws-api/v1`): at the top level on
/// `order:new`, under a `per_endpoint` entry named `order:new` or `order:cancel` on that
/// method. They act on a request the venue accepted (after its ack), and only they act there:
/// such an entry refuses the HTTP switches, and the `ws_*` switches act nowhere else.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    /// prepare-signin answers a JWT whose signature does not verify.
    pub challenge_bad_signature: bool,
    /// prepare-signin answers a JWT signed by a key whose kid the certs never serve.
    pub challenge_unknown_kid: bool,
    /// prepare-signin answers a JWT already expired (iat = now − 300, exp = iat + 180).
    pub challenge_expired: bool,
    /// login succeeds but answers another wallet address than the one signed in.
    pub login_wrong_address: bool,
    /// certs answers HTTP 503.
    pub certs_down: bool,
    /// Answer this HTTP status with a JSON error body (nothing is executed).
    pub status: Option<u16>,
    /// new_order answers HTTP 200 with `{"code":400,…}` (a rejection; not counted accepted).
    pub order_code_nonzero: bool,
    /// Wait this long before answering.
    pub slow_ms: u64,
    /// new_order reads and counts the request, then closes the connection with no response.
    pub close_after_order: bool,
    /// query_open_orders still lists, as `open`, the orders that ended within this many
    /// milliseconds: the live list lags ~15 s behind cancels (venue-api.md §1.3), while
    /// query_order tells the truth at once.
    pub open_orders_lag_ms: u64,
    /// The outcome frame carries this code instead of the engine's outcome, with the message
    /// "upstream timeout" for 408 and 5xx (the venue's answer when its gateway lost the
    /// engine's reply), "request rejected" for any other. The order is placed (or the cancel
    /// done) all the same, unless `ws_not_placed`.
    pub ws_outcome_code: Option<u16>,
    /// The engine never sees the request (nothing placed or cancelled); needs
    /// `ws_outcome_code`, the code its outcome frame carries.
    pub ws_not_placed: bool,
    /// The outcome frame is sent twice, as a venue that repeats itself.
    pub ws_repeat_outcome: bool,
    /// The outcome frame is never sent (the ack is, and the order is placed or the cancel
    /// done all the same): a venue that loses its engine's reply while the connection lives.
    pub ws_no_outcome: bool,
    /// The ack carries this word instead of "accepted" (under the same key): a gateway that
    /// words its ack otherwise. A client that knows only "accepted" takes it for the outcome.
    pub ws_ack_word: Option<String>,
    /// One-shot: the set applies to the next `times` requests it affects, then clears itself
    /// (a top-level set resets to no fault; a `per_endpoint` entry is removed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
    /// Sets for single endpoints, replacing the top-level set there.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub per_endpoint: BTreeMap<String, Faults>,
}

/// Endpoints where the top-level `status` and `slow_ms` do not apply: the clock and the
/// health check stay usable so a test of an order failure is not also a clock failure.
const UNFAULTED: &[&str] = &["kline/time", "health"];
const SIGN_IN: &[&str] = &["prepare-signin", "certs", "login"];
/// The order stream's methods, named as `per_endpoint` keys.
pub(crate) const WS_ORDER_METHODS: &[&str] = &["order:new", "order:cancel"];

impl Faults {
    /// Refuses sets the sandbox cannot honour.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.status.is_some_and(|s| !(100..=999).contains(&s)) {
            return Err("status must be an HTTP status code (100-999)".into());
        }
        if self.times == Some(0) {
            return Err("times must be at least 1".into());
        }
        if self.ws_outcome_code.is_some_and(|c| !(100..=999).contains(&c)) {
            return Err("ws_outcome_code must be a status code (100-999)".into());
        }
        if self.ws_no_outcome && (self.ws_outcome_code.is_some() || self.ws_repeat_outcome) {
            return Err("ws_no_outcome sends no outcome: it cannot go with ws_outcome_code or ws_repeat_outcome".into());
        }
        if self.ws_not_placed && self.ws_outcome_code.is_none() {
            return Err("ws_not_placed needs ws_outcome_code (the code of the outcome frame)".into());
        }
        if let Some(word) = &self.ws_ack_word
            && (word.is_empty() || word.len() > 64 || word.chars().any(char::is_control))
        {
            return Err("ws_ack_word must be 1 to 64 bytes of text without control characters".into());
        }
        for (name, entry) in &self.per_endpoint {
            if !entry.per_endpoint.is_empty() {
                return Err(format!("per_endpoint.{name}: per_endpoint entries cannot nest"));
            }
            entry.validate().map_err(|e| format!("per_endpoint.{name}: {e}"))?;
            let ws_method = WS_ORDER_METHODS.contains(&name.as_str());
            if ws_method && *entry != (Faults { times: entry.times, ..entry.ws_part() }) {
                return Err(format!("per_endpoint.{name}: only the ws_* switches (and times) act on the order stream"));
            }
            if !ws_method && entry.ws_part() != Faults::default() {
                return Err(format!("per_endpoint.{name}: the ws_* switches act only under order:new or order:cancel"));
            }
        }
        Ok(())
    }

    /// The `ws_*` switches of this set (the others, `times` too, cleared).
    fn ws_part(&self) -> Faults {
        Faults {
            ws_outcome_code: self.ws_outcome_code,
            ws_not_placed: self.ws_not_placed,
            ws_repeat_outcome: self.ws_repeat_outcome,
            ws_no_outcome: self.ws_no_outcome,
            ws_ack_word: self.ws_ack_word.clone(),
            ..Faults::default()
        }
    }

    /// The switches of this top-level set that act at `endpoint` (the others cleared).
    fn at_top_level(&self, endpoint: &str) -> Faults {
        let signin = SIGN_IN.contains(&endpoint);
        let order_stream = endpoint == "order:new";
        let api = !signin && !UNFAULTED.contains(&endpoint) && !WS_ORDER_METHODS.contains(&endpoint);
        Faults {
            challenge_bad_signature: self.challenge_bad_signature && endpoint == "prepare-signin",
            challenge_unknown_kid: self.challenge_unknown_kid && endpoint == "prepare-signin",
            challenge_expired: self.challenge_expired && endpoint == "prepare-signin",
            login_wrong_address: self.login_wrong_address && endpoint == "login",
            certs_down: self.certs_down && endpoint == "certs",
            status: self.status.filter(|_| api),
            order_code_nonzero: self.order_code_nonzero && endpoint == "new_order",
            slow_ms: if api { self.slow_ms } else { 0 },
            close_after_order: self.close_after_order && endpoint == "new_order",
            open_orders_lag_ms: if endpoint == "query_open_orders" { self.open_orders_lag_ms } else { 0 },
            ws_outcome_code: self.ws_outcome_code.filter(|_| order_stream),
            ws_not_placed: self.ws_not_placed && order_stream,
            ws_repeat_outcome: self.ws_repeat_outcome && order_stream,
            ws_no_outcome: self.ws_no_outcome && order_stream,
            ws_ack_word: self.ws_ack_word.clone().filter(|_| order_stream),
            times: None,
            per_endpoint: BTreeMap::new(),
        }
    }

    /// The faults that act on one request to `endpoint`, using up one of `times` when the
    /// set does something there.
    pub(crate) fn take(&mut self, endpoint: &str) -> Faults {
        if let Some(entry) = self.per_endpoint.get_mut(endpoint) {
            let mut acting = entry.clone();
            acting.times = None;
            if let Some(n) = entry.times {
                if n <= 1 {
                    self.per_endpoint.remove(endpoint);
                } else {
                    entry.times = Some(n - 1);
                }
            }
            return acting;
        }
        let acting = self.at_top_level(endpoint);
        if acting != Faults::default()
            && let Some(n) = self.times
        {
            if n <= 1 {
                let per_endpoint = std::mem::take(&mut self.per_endpoint);
                *self = Faults { per_endpoint, ..Faults::default() };
            } else {
                self.times = Some(n - 1);
            }
        }
        acting
    }
}

/// Counters since the sandbox started. Requests to `/_sandbox/*` are not counted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Every `POST /api/new_order` whose body was read, whatever happened next.
    pub orders_received: u64,
    /// new_order answered `code` 0.
    pub orders_accepted: u64,
    /// HTTP requests received.
    pub requests: u64,
    /// Distinct client (address, port) pairs seen: tiny_http does not report accepted
    /// connections, and a TCP connection is identified by its client port while it lives.
    pub connections: u64,
    /// Body-signed requests whose signature (so version, id, timestamp and body) had already
    /// been seen within the timestamp window: a client that re-sent the same signed request.
    pub identical_signed_requests: u64,
    /// Body-signed requests whose `x-request-id` the same account had already sent within the
    /// window (identical or not): accepted, as the venue does, unless the sandbox is strict.
    pub repeated_request_ids: u64,
    /// Requests answered 429 by the per-account rate limit (`rate_limit`).
    pub rate_limited: u64,
    /// HTTP requests answered 429 by the per-IP limit of 50 a second (`rate_limit`).
    #[serde(default)]
    pub rate_limited_by_ip: u64,
    /// WebSocket connections accepted (both endpoints).
    pub ws_connections_opened: u64,
    /// WebSocket handshakes refused by the per-IP connection limits (HTTP 429).
    pub ws_connections_refused: u64,
    /// WebSocket connections open now.
    pub ws_connections_open: u64,
    /// Text and binary frames received from clients (control frames not counted).
    pub ws_frames_in: u64,
    /// Text frames sent to clients (control frames not counted).
    pub ws_frames_out: u64,
    /// Pings the server sent.
    pub ws_pings: u64,
    /// Pongs clients sent.
    pub ws_pongs: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_switches_act_where_named() {
        let f = Faults { status: Some(500), close_after_order: true, certs_down: true, ..Default::default() };
        let mut g = f.clone();
        assert_eq!(g.take("query_order").status, Some(500));
        assert!(!g.take("query_order").close_after_order);
        assert!(g.take("new_order").close_after_order);
        assert_eq!(g.take("kline/time"), Faults::default());
        assert_eq!(g.take("login"), Faults::default());
        assert!(g.take("certs").certs_down);
        assert_eq!(g, f, "no times: nothing used up");
    }

    #[test]
    fn one_shot_and_per_endpoint() {
        let mut f: Faults = serde_json::from_str(
            r#"{"status":503,"times":2,"per_endpoint":{"cancel_order":{"status":404,"times":1},"login":{"slow_ms":5}}}"#,
        )
        .unwrap();
        assert!(f.validate().is_ok());
        assert_eq!(f.take("cancel_order").status, Some(404));
        assert_eq!(f.take("kline/time"), Faults::default(), "not affected: not used up");
        assert_eq!(f.take("cancel_order").status, Some(503), "the entry was used up");
        assert_eq!(f.take("new_order").status, Some(503));
        assert_eq!(f.take("new_order").status, None, "two uses, then cleared");
        assert_eq!(f.take("login").slow_ms, 5, "per_endpoint entries survive the reset");
        assert_eq!(f.take("login").slow_ms, 5, "no times: stays");
        let nested = r#"{"per_endpoint":{"x":{"per_endpoint":{"y":{}}}}}"#;
        assert!(serde_json::from_str::<Faults>(nested).unwrap().validate().is_err());
        assert!(serde_json::from_str::<Faults>(r#"{"times":0}"#).unwrap().validate().is_err());
    }

    #[test]
    fn ws_switches_act_on_the_order_stream_only() {
        let mut f: Faults =
            serde_json::from_str(r#"{"status":500,"ws_outcome_code":503,"ws_repeat_outcome":true,"times":1}"#).unwrap();
        assert!(f.validate().is_ok());
        assert_eq!(f.take("order:cancel"), Faults::default(), "top level: order:new only");
        let acting = f.take("order:new");
        assert_eq!((acting.ws_outcome_code, acting.ws_repeat_outcome, acting.status), (Some(503), true, None));
        assert_eq!(f.take("order:new"), Faults::default(), "used up");
        let g = Faults { status: Some(500), ws_outcome_code: Some(503), ..Default::default() };
        assert_eq!(g.clone().take("query_order").ws_outcome_code, None);
        assert_eq!(g.clone().take("query_order").status, Some(500));
        let worded = Faults { ws_ack_word: Some("received".into()), ..Default::default() };
        assert_eq!(worded.clone().take("order:new").ws_ack_word.as_deref(), Some("received"));
        assert_eq!(worded.clone().take("order:cancel"), Faults::default(), "top level: order:new only");
        let refused = [
            r#"{"ws_not_placed":true}"#,
            r#"{"ws_outcome_code":5000}"#,
            r#"{"per_endpoint":{"order:new":{"status":503}}}"#,
            r#"{"per_endpoint":{"new_order":{"ws_repeat_outcome":true}}}"#,
            r#"{"per_endpoint":{"new_order":{"ws_ack_word":"received"}}}"#,
        ];
        let accepted = [
            r#"{"per_endpoint":{"new_order":{"status":503,"times":1}}}"#,
            r#"{"per_endpoint":{"order:cancel":{"ws_ack_word":"received","times":1}}}"#,
            r#"{"per_endpoint":{"order:new":{"ws_repeat_outcome":true,"times":1}}}"#,
        ];
        for text in accepted {
            assert!(serde_json::from_str::<Faults>(text).unwrap().validate().is_ok(), "{text}");
        }
        for text in refused {
            assert!(serde_json::from_str::<Faults>(text).unwrap().validate().is_err(), "{text}");
        }
        let cancel: Faults =
            serde_json::from_str(r#"{"per_endpoint":{"order:cancel":{"ws_outcome_code":408,"times":2}}}"#).unwrap();
        assert!(cancel.validate().is_ok());
        assert_eq!(cancel.clone().take("order:cancel").ws_outcome_code, Some(408));
    }
}
