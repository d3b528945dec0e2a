//! The venue's two WebSockets: the market + account stream (`ws-stream`) and the order
//! stream (`ws-api`), each served by one background I/O thread and read by the caller
//! through a poll model (`next` with a timeout). No callback ever runs on a library thread.
//!
//! Modules: `settings` (URLs, options, TLS), `tls`, `transport` (one connection; `fragments`:
//! whether a fragmented message is in progress),
//! `resolve` (its host's addresses, bounded), `handshake` (the upgrade; `chunked`: a refusal's
//! chunked body),
//! `limits` (the venue's connection limits, backoff), `supervisor` (the I/O thread:
//! auth, reconnection), `serving` (a live connection: liveness, pings, when to rotate),
//! `rotation` (the old connection read out before it is closed), `shared` (what the I/O thread shares with the
//! callers), `reader` (frames into events, by the I/O thread or a waiting caller), `market`
//! and `orders` (the two protocols; `orders/pending`: its requests in flight),
//! `subscriptions` (the market stream's channels), `auth_answer` (what an auth answer means),
//! `seq`, `depth`, `push_scan` (with `push_scan/scanner`) and `push_serde` (reading pushes),
//! `refusals` (a refused subscription, tied to it), `unrecognized` (frames passed on as they
//! are), `events` (event shapes), `queue` (with
//! `queue/waiting`) and `watch` (how callers wait), `json`, `decoders` (the two protocols'
//! reading of frames without a connection, for benchmarks and fuzz targets).

mod auth_answer;
mod chunked;
mod connect;
mod deadline_tcp;
mod decoders;
mod depth;
mod events;
mod fragments;
mod handshake;
mod json;
mod limits;
mod market;
mod no_sigpipe;
mod orders;
mod poll_close;
mod push_scan;
mod push_serde;
mod queue;
mod reader;
mod refusals;
mod resolve;
mod rotation;
mod seq;
mod serving;
pub mod settings;
mod shared;
mod subscriptions;
mod supervisor;
mod tls;
mod transport;
mod unrecognized;
mod venue_close;
mod watch;
mod wiped_frame;

use crate::client::Client;
use crate::error::{Code, Error, Result};
use crate::session::Session;
use orders::OrderState;
use shared::Shared;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;
use supervisor::Context;

pub use decoders::{OrderReplyDecoder, PushDecoder};

/// How long dropping a stream waits for its I/O thread before leaving it to finish alone.
const FREE_WAIT: Duration = Duration::from_secs(2);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    Market,
    Orders,
}

/// One open stream. Any thread may call `next`, `close` and (order stream) `new_order` /
/// `cancel_order`, concurrently.
pub struct Stream {
    kind: StreamKind,
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
    orders: Option<Arc<OrderState>>,
    client: Arc<Client>,
    session: Option<Arc<Session>>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").field("kind", &self.kind).finish_non_exhaustive()
    }
}

impl Stream {
    /// Open the market + account stream: connect, send the auth frame when there is a
    /// session (its account channels ride in `auth.streams`), wait for the venue's answer,
    /// subscribe to the public channels. Returns once all that is done; the first event is
    /// `{"channel":"status","state":"connected",…}`.
    pub fn open_market(client: Arc<Client>, session: Option<Arc<Session>>, subscriptions_json: &str) -> Result<Stream> {
        let subs = subscriptions::parse_subscriptions(subscriptions_json, session.is_some())?;
        let impersonate = session.as_ref().and_then(|s| s.request_options().impersonate);
        let protocol = Box::new(market::Market::new(subs, impersonate));
        let settings = client.stream_settings();
        let (url, host) = (settings.stream_url.clone(), settings.stream_host.clone());
        Stream::start(StreamKind::Market, client, session, url, host, protocol, None)
    }

    /// Open the order stream: connect and `auth:login`. Its `session_id` is the session's
    /// `x-session-id` when one is set (so REST orders sent with it report here), otherwise
    /// a fresh UUID kept for the stream's life; the `connected` event names it.
    pub fn open_orders(client: Arc<Client>, session: Arc<Session>) -> Result<Stream> {
        let options = session.request_options();
        let (session_id, from_session) = match options.session_id {
            Some(id) => (id, true),
            None => (orders::fresh_request_id()?, false),
        };
        let request_timeout = client.stream_settings().options.request_timeout;
        let state = Arc::new(OrderState::new(session_id, from_session).with_request_timeout(request_timeout));
        let protocol =
            Box::new(orders::Orders::new(state.clone(), options.impersonate).with_rules(client.symbol_cache()));
        let settings = client.stream_settings();
        let (url, host) = (settings.order_stream_url.clone(), settings.order_stream_host.clone());
        Stream::start(StreamKind::Orders, client, Some(session), url, host, protocol, Some(state))
    }

    fn start(
        kind: StreamKind,
        client: Arc<Client>,
        session: Option<Arc<Session>>,
        url: String,
        host: String,
        protocol: Box<dyn supervisor::Protocol>,
        orders: Option<Arc<OrderState>>,
    ) -> Result<Stream> {
        let shared = Arc::new(Shared::new()?);
        let ctx = Context { client: client.clone(), session: session.clone(), url, host };
        let thread = supervisor::start(ctx, protocol, shared.clone())?;
        Ok(Stream { kind, shared, thread: Mutex::new(Some(thread)), orders, client, session })
    }

    pub fn kind(&self) -> StreamKind {
        self.kind
    }

    /// The next event (JSON); `Ok(None)` when `timeout` passes first (`None`: no limit).
    /// After `close`, or once the stream has ended and its events are read:
    /// `PERPS_STREAM_CLOSED`.
    pub fn next(&self, timeout: Option<Duration>) -> Result<Option<String>> {
        self.shared.next(timeout)
    }

    /// From any thread: a blocked `next` returns at once; the connection is closed.
    pub fn close(&self) {
        self.shared.close();
    }

    /// Validate the order, sign its exact text, write the `order:new` frame. Returns
    /// `{"request_id":…,"cl_ord_id":…}` once the frame is written; the venue's replies come
    /// as `order_response` events with that `request_id`. A failure after the order was
    /// validated carries its `cl_ord_id`, and once frame bytes may have left, the
    /// `x-request-id` of its signature and the envelope `request_id`
    /// (`Error::stream_request_id`, named in the message too). Refused unsent
    /// (`InvalidState`) while 100,000 requests of the stream await their outcome and none of
    /// them has been listed `unanswered` or reported by a `request_timeout` event yet (those
    /// are forgotten first, oldest first).
    pub fn new_order(&self, order_json: &str) -> Result<String> {
        let state = self.order_state()?;
        // The same validation and `cl_ord_id` generation as REST `new_order`.
        let prefix = self.client.cl_ord_id_prefix();
        let body = crate::order::validate_generating_id(order_json, || crate::cl_ord_id::generate(prefix))?;
        let cl_ord_id = body.cl_ord_id();
        // And the same symbol rules (client option `symbol_rules`): an order they refuse is
        // not sent. A read of the rules they need blocks this call, as it blocks REST's.
        let request_id = self
            .client
            .check_symbol_rules(&body)
            .and_then(|_| orders::RequestId::fresh())
            .and_then(|id| {
                self.send_signed(state, "order:new", &id, body.as_str(), Some(cl_ord_id), None)?;
                Ok(id)
            })
            .map_err(|error| error.with_cl_ord_id(cl_ord_id))?;
        let mut out = String::with_capacity(48 + request_id.as_str().len() + cl_ord_id.len());
        out.push_str("{\"request_id\":\"");
        out.push_str(request_id.as_str());
        out.push_str("\",\"cl_ord_id\":");
        json::push_str(&mut out, cl_ord_id);
        out.push('}');
        Ok(out)
    }

    /// `order:cancel` with `{"order_id":…}` and/or `{"cl_ord_id":…}`. Returns
    /// `{"request_id":…,"order_id"?:…,"cl_ord_id"?:…}` once the frame is written. A failure
    /// after the parameters were checked carries the `cl_ord_id` they name (if any), and once
    /// frame bytes may have left, the `x-request-id` and the envelope `request_id`
    /// (`Error::stream_request_id`), as for [`new_order`](Self::new_order).
    pub fn cancel_order(&self, params_json: &str) -> Result<String> {
        let state = self.order_state()?;
        let (params, order_id, cl_ord_id) = orders::cancel_params(params_json)?;
        let request_id = orders::RequestId::fresh()
            .and_then(|id| {
                self.send_signed(state, "order:cancel", &id, &params, cl_ord_id.as_deref(), order_id)?;
                Ok(id)
            })
            .map_err(|error| match &cl_ord_id {
                Some(id) => error.with_cl_ord_id(id.as_str()),
                None => error,
            })?;
        let mut answer = serde_json::json!({ "request_id": request_id.as_str() });
        if let Some(id) = order_id {
            answer["order_id"] = id.into();
        }
        if let Some(id) = cl_ord_id {
            answer["cl_ord_id"] = id.into();
        }
        Ok(answer.to_string())
    }

    fn order_state(&self) -> Result<&Arc<OrderState>> {
        let state = self.orders.as_ref().ok_or_else(|| {
            Error::invalid_state("this is a market stream: orders go through an order stream (perps_order_stream_open)")
        })?;
        // Closed, or ended for good (a refused login, an expired token): no connection will
        // come back, so "reconnecting" would mislead.
        if let Some(why) = self.shared.queue.why_ended() {
            return Err(Error::new(Code::StreamClosed, format!("{why}: the order was not sent")));
        }
        Ok(state)
    }

    /// Sign `params`, remember the request, write its frame. An error once the frame was
    /// written, even partly, says it may have reached the venue and carries the signature's
    /// `x-request-id` and the envelope `request_id`; one before any of it was written (not
    /// connected, tungstenite refusing to write on a closing connection, `close` from another
    /// thread while the write waited for room, or the pending table at its bound) says it was
    /// not sent.
    fn send_signed(
        &self,
        state: &OrderState,
        method: &'static str,
        request_id: &orders::RequestId,
        params: &str,
        cl_ord_id: Option<&str>,
        order_id: Option<i64>,
    ) -> Result<()> {
        let session = self.session.as_ref().ok_or_else(|| Error::invalid_state("the order stream has no session"))?;
        let signature = session.sign_body_now(params.as_bytes(), self.client.venue_now_ms())?;
        let frame = orders::order_frame(&state.session_id, request_id.as_str(), method, &signature, params);
        let mut link = self.shared.link_for_writing();
        // The stream may have ended, or begun to end, since `order_state` looked (a read under
        // the link found the login refused): nothing is written to it then, and
        // "reconnecting" would mislead.
        if let Some(why) = self.shared.queue.why_ended() {
            return Err(Error::new(Code::StreamClosed, format!("{why}: the order was not sent")));
        }
        let Some(conn) = link.conn.as_mut() else {
            return Err(Error::new(
                Code::Transport,
                "the order stream is not connected (it is reconnecting; see its status events): the order was not sent",
            ));
        };
        // Remembered before the write, as its reply may be read as soon as the link is free;
        // and under the link, so that a disconnection (which takes the connection out of the
        // link first) lists it `unanswered` only if it was written to that connection.
        // Refused, unsent, when the requests awaiting their outcome are at their bound.
        let deadline_is_first = state.remember(request_id, method, cl_ord_id, order_id)?;
        if deadline_is_first {
            // The I/O thread may be asleep past this request's deadline (`stream_request_timeout_ms`).
            self.shared.wake_io();
        }
        let Err(failure) = conn.try_send_text(frame) else { return Ok(()) };
        // The connection is broken or closing: let the I/O thread see it at once and replace
        // it. The shutdown also keeps what tungstenite still buffers of the frame from ever
        // leaving (the I/O thread would flush it), which makes "nothing written" final.
        let _ = conn.ws.get_ref().tcp().shutdown(std::net::Shutdown::Both);
        let error = failure.error;
        if failure.nothing_written {
            // No byte of it left: tungstenite refused the frame before writing any of it, or
            // `close` cut the wait for room short before the socket took any. Forgotten
            // before the link is free, so no `unanswered` list names it.
            state.forget(request_id);
            drop(link);
            return Err(Error::new(error.code(), format!("{}: the order was not sent", error.message())));
        }
        drop(link);
        // Kept among the requests awaiting their outcome: the `unanswered` list of the
        // disconnection that follows names it, by the id the error carries.
        Err(partly_sent(&error, signature.request_id(), request_id))
    }
}

/// The failure of a write after which part of a request's frame may have left: it may have
/// reached the venue, and it names the request by its `x-request-id` and by its envelope
/// `request_id` (also in the message, for callers that read only the message), the one the
/// stream's replies and the `unanswered` list of the next `disconnected` event name.
fn partly_sent(error: &Error, x_request_id: &str, request_id: &orders::RequestId) -> Error {
    Error::new(
        error.code(),
        format!(
            "{}; the frame of request_id {} may have been partly sent: check the order's state before resending",
            error.message(),
            request_id.as_str()
        ),
    )
    .reached_venue(true)
    .with_request_id(x_request_id)
    .with_stream_request_id(request_id.as_str())
}

impl Drop for Stream {
    /// Close, then wait (bounded) for the I/O thread; one still busy is left to finish by
    /// itself — it holds only its own shared state. (A name lookup, a TCP connect and a
    /// handshake all end at the close: `resolve.rs`, `connect.rs`, `Shared::close`.)
    fn drop(&mut self) {
        self.shared.close();
        let thread = self.thread.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(thread) = thread
            && self.shared.wait_exited(FREE_WAIT)
        {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partly_sent_request_is_named_by_the_id_its_replies_and_the_unanswered_list_use() {
        let request_id = orders::RequestId::fresh().unwrap();
        let write = Error::new(Code::Transport, "writing a frame: connection reset");
        let error = partly_sent(&write, "x-req-1", &request_id);
        assert_eq!(error.code(), Code::Transport);
        assert!(error.may_have_reached_venue());
        assert_eq!(error.request_id(), Some("x-req-1"), "the x-request-id, as before");
        assert_eq!(error.stream_request_id(), Some(request_id.as_str()));
        let message = error.message();
        assert!(message.starts_with("writing a frame: connection reset; "), "{message}");
        assert!(
            message.contains(&format!("request_id {} may have been partly sent", request_id.as_str())),
            "{message}"
        );
    }
}
