//! The two protocols' reading of venue frames without a connection: what the I/O thread does
//! with a text frame, driven directly. For the benchmarks and the fuzz targets only (hidden
//! from the docs); a stream never uses them.

use super::events::{Queue, now_ns};
use super::market::Market;
use super::orders::{OrderState, Orders, RequestId};
use super::supervisor::{AuthOutcome, Protocol};
use crate::error::Result;
use std::sync::Arc;
use std::time::Duration;

/// Every event queued so far, in order.
fn drain(queue: &Queue) -> Vec<String> {
    std::iter::from_fn(|| queue.pop(Some(Duration::ZERO), None).ok().flatten()).collect()
}

/// The market stream's decoding of pushes.
#[doc(hidden)]
pub struct PushDecoder {
    market: Market,
    queue: Queue,
}

#[doc(hidden)]
impl Default for PushDecoder {
    fn default() -> Self {
        PushDecoder { market: Market::new(Vec::new(), None), queue: Queue::default() }
    }
}

#[doc(hidden)]
impl PushDecoder {
    /// Without the single-pass scanner: every push through the serde path (to compare).
    pub fn serde_only() -> Self {
        PushDecoder { market: Market::new(Vec::new(), None).without_scanner(), queue: Queue::default() }
    }

    /// Without the scanner nor the one-pass serde path: every push through the general path
    /// (to compare).
    pub fn general_only() -> Self {
        PushDecoder { market: Market::new(Vec::new(), None).general_only(), queue: Queue::default() }
    }

    /// As the stream of a session that sent the venue `token` decodes: every event that hands
    /// on a frame of the venue is redacted of it.
    pub fn with_token(self, token: &str) -> Self {
        let mut sent = crate::redact::Secrets::new();
        sent.add(token);
        let sent = Arc::new(sent);
        self.queue.set_secrets(super::events::Tables { all: sent.clone(), sent });
        self
    }

    /// Decode one text frame into its event(s), as the I/O thread does; the last event. The
    /// benchmarks' path: the events are taken one by one, with no list built.
    pub fn decode(&mut self, frame: &str) -> Option<String> {
        self.market.on_text(frame, now_ns(), &self.queue);
        let mut last = None;
        while let Ok(Some(event)) = self.queue.pop(Some(Duration::ZERO), None) {
            last = Some(event);
        }
        last
    }

    /// Decode one text frame received at `received_ns`; every event it gives, in order.
    pub fn decode_all(&mut self, frame: &str, received_ns: i64) -> Vec<String> {
        self.market.on_text(frame, received_ns, &self.queue);
        drain(&self.queue)
    }

    /// Forget the `seq` numbers seen (as a new connection does).
    pub fn reset_seq(&mut self) {
        self.market.reset_seq();
    }
}

/// The order stream's reading of replies, for requests remembered as `new_order` and
/// `cancel_order` remember them, and of the answers to its `auth:login`.
#[doc(hidden)]
pub struct OrderReplyDecoder {
    orders: Orders,
    queue: Queue,
    requests: Vec<RequestId>,
}

#[doc(hidden)]
impl OrderReplyDecoder {
    /// `requests` requests awaiting their replies: alternately an `order:new` with the
    /// `cl_ord_id` "c-{i}" and an `order:cancel` of the order id `i` (i from 0).
    pub fn new(requests: usize) -> Result<Self> {
        let state = Arc::new(OrderState::new("decoder-session".into(), false));
        let mut ids = Vec::with_capacity(requests);
        for i in 0..requests {
            let id = RequestId::fresh()?;
            if i % 2 == 0 {
                state.remember(&id, "order:new", Some(&format!("c-{i}")), None)?;
            } else {
                state.remember(&id, "order:cancel", None, Some(i as i64))?;
            }
            ids.push(id);
        }
        Ok(OrderReplyDecoder { orders: Orders::new(state, None), queue: Queue::default(), requests: ids })
    }

    /// The envelope `request_id`s of the requests, in the order `new` remembered them.
    pub fn request_ids(&self) -> Vec<String> {
        self.requests.iter().map(|id| id.as_str().to_owned()).collect()
    }

    /// A new connection's `auth:login` sent: its fresh `request_id`.
    pub fn login_sent(&mut self) -> Result<String> {
        let id = super::orders::fresh_request_id()?;
        self.orders.login_sent(id.clone());
        Ok(id)
    }

    /// The connection served (its login answered, or acked).
    pub fn served(&mut self) {
        self.orders.served();
    }

    /// Whether a frame may still answer the connection's login.
    pub fn login_awaited(&self) -> bool {
        self.orders.login_awaited()
    }

    /// The connection lost: the `unanswered` list its `disconnected` event carries.
    pub fn disconnect(&mut self) -> Vec<String> {
        let fields = self.orders.on_disconnect();
        let list = fields["unanswered"].as_array().cloned().unwrap_or_default();
        list.into_iter().filter_map(|id| id.as_str().map(str::to_owned)).collect()
    }

    /// Whether a request not yet listed `unanswered` awaits its outcome.
    pub fn awaits_outcomes(&self) -> bool {
        self.orders.awaits_outcomes()
    }

    /// Decode one text frame received at `received_ns`: what it says of the login
    /// ("pending" when nothing, "accepted", "refused", "unavailable") and every event it gives.
    pub fn decode_all(&mut self, frame: &str, received_ns: i64) -> (&'static str, Vec<String>) {
        let outcome = match self.orders.on_text(frame, received_ns, &self.queue) {
            AuthOutcome::Pending => "pending",
            AuthOutcome::Accepted => "accepted",
            AuthOutcome::Refused(_) => "refused",
            AuthOutcome::Unavailable(_) => "unavailable",
        };
        (outcome, drain(&self.queue))
    }
}
