//! The connection loop, one thread per connection: read what arrived, run the timers (server
//! ping, pong timeout, lifetime cap, market pushes), write what other threads queued, flush,
//! then wait in `poll` for the socket, a wake-up or the next deadline.
//!
//! Closes: no Pong for `pong_timeout_ms` → close frame 1008 whose reason is the venue's
//! `{"code":408,"message":"disconnecting due to not receive Pong within 5 minute period"}`;
//! older than `max_lifetime_ms` → close frame 1001 with a JSON reason. After a close frame
//! the client has `CLOSE_GRACE` to answer, then the socket is shut. A frame the protocol
//! forbids (unmasked, bad UTF-8 in a text frame, over `MAX_MESSAGE`) gets the RFC's close
//! code. The admin drop shuts the socket without a close frame; a stall stops everything
//! but leaves the socket open until the client hangs up.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tungstenite::{Error, Message, WebSocket};

use super::market::StreamSession;
use super::order_api::ApiSession;
use super::wire::{self, Wire};
use super::{Conn, Endpoint, Out, WsTimers};
use crate::state::Shared;

/// Largest message (and frame) a client may send; larger ones close with 1009.
const MAX_MESSAGE: usize = 1 << 20;
/// Written but unsent bytes beyond this mean the client stopped reading: it is dropped.
const MAX_WRITE_BUFFER: usize = 16 << 20;
/// Messages read in one pass before timers and queued frames get their turn.
const READ_BURST: usize = 256;
/// How long a client has to answer a close frame.
const CLOSE_GRACE: Duration = Duration::from_secs(1);
/// The longest `poll` sleeps without a deadline (the stop flag is also a wake-up).
const IDLE: Duration = Duration::from_secs(1);

const PONG_TIMEOUT_REASON: &str =
    r#"{"code":408,"message":"disconnecting due to not receive Pong within 5 minute period"}"#;

/// What a connection's endpoint does with frames, queued items and time.
pub(crate) enum Handler {
    Stream(StreamSession),
    Api(ApiSession),
}

/// What a handler may do with its connection.
pub(crate) struct Io<'a> {
    pub shared: &'a Arc<Shared>,
    pub conn: &'a Arc<Conn>,
    ws: &'a mut WebSocket<Wire>,
    failed: &'a mut Option<Error>,
}

impl Io<'_> {
    /// Queues a text frame (written at the next flush at the latest).
    pub(crate) fn send(&mut self, text: String) {
        if self.failed.is_some() {
            return;
        }
        match self.ws.write(Message::text(text)) {
            Ok(()) => {}
            // Kept in the write buffer; the flush retries.
            Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => {
                *self.failed = Some(e);
                return;
            }
        }
        self.conn.frames_out.fetch_add(1, Ordering::Relaxed);
        self.shared.ws.counters.frames_out.fetch_add(1, Ordering::Relaxed);
    }

    /// Writes what is queued now, as far as the socket takes it.
    pub(crate) fn flush(&mut self) {
        if self.failed.is_some() {
            return;
        }
        match self.ws.flush() {
            Ok(()) => {}
            Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => *self.failed = Some(e),
        }
    }
}

impl Handler {
    fn on_text(&mut self, io: &mut Io<'_>, text: &str) {
        match self {
            Handler::Stream(s) => s.on_text(io, text),
            Handler::Api(a) => a.on_text(io, text),
        }
    }

    fn on_binary(&mut self, io: &mut Io<'_>) {
        match self {
            Handler::Stream(s) => s.on_binary(io),
            Handler::Api(a) => a.on_binary(io),
        }
    }

    /// Market pushes that are due; the next deadline.
    fn on_tick(&mut self, io: &mut Io<'_>, now: Instant, timers: &WsTimers) -> Option<Instant> {
        match self {
            Handler::Stream(s) => s.on_tick(io, now, timers),
            Handler::Api(_) => None,
        }
    }

    fn on_out(&mut self, io: &mut Io<'_>, out: Out) {
        match (self, out) {
            (_, Out::Frame(text)) => io.send(text),
            (Handler::Stream(s), out) => s.on_out(io, out),
            (Handler::Api(_), _) => {}
        }
    }
}

/// The connection's life, from the hand-over to the end of the socket.
pub(crate) fn serve(shared: Arc<Shared>, conn: Arc<Conn>, wire: Wire, mut wakee: std::os::unix::net::UnixStream) {
    let fd = wire.fd();
    let config = WebSocketConfig::default()
        .read_buffer_size(64 * 1024)
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
        .max_write_buffer_size(MAX_WRITE_BUFFER);
    let mut ws = WebSocket::from_raw_socket(wire, Role::Server, Some(config));
    let mut handler = match conn.endpoint {
        Endpoint::Stream => Handler::Stream(StreamSession::new(&shared, conn.id)),
        Endpoint::Api => Handler::Api(ApiSession::default()),
    };
    let hub = &shared.ws;
    let (mut last_ping, mut last_pong) = (conn.opened, conn.opened);
    let mut closing: Option<Instant> = None;
    let mut failed: Option<Error> = None;
    // The highest journal seq handed to tungstenite; `flushed` once a flush succeeds.
    let mut written = 0;
    loop {
        if hub.stopping() || conn.dropped.load(Ordering::SeqCst) {
            break;
        }
        if conn.stalled.load(Ordering::SeqCst) {
            // Half-open as the client sees it; but once the client has hung up nobody can
            // tell any more, and the connection ends (its place in the limits is freed).
            if wire::wait_for_hangup(fd, &wakee, IDLE) {
                break;
            }
            wire::drain(&mut wakee);
            continue;
        }
        let timers = hub.timers();
        let mut more = false;
        let mut ended = false;
        // 1. What arrived.
        for n in 0.. {
            if n == READ_BURST {
                more = true;
                break;
            }
            if conn.stalled.load(Ordering::SeqCst) || conn.dropped.load(Ordering::SeqCst) || failed.is_some() {
                break;
            }
            let message = match ws.read() {
                Ok(m) => m,
                Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    ended = end_on_read_error(&mut ws, e, &mut closing);
                    break;
                }
            };
            let mut io = Io { shared: &shared, conn: &conn, ws: &mut ws, failed: &mut failed };
            match message {
                Message::Text(text) => {
                    count_in(&shared, &conn);
                    if closing.is_none() {
                        handler.on_text(&mut io, text.as_str());
                    }
                }
                Message::Binary(_) => {
                    count_in(&shared, &conn);
                    if closing.is_none() {
                        handler.on_binary(&mut io);
                    }
                }
                Message::Pong(_) => {
                    hub.counters.pongs.fetch_add(1, Ordering::Relaxed);
                    last_pong = Instant::now();
                }
                // tungstenite queues the Pong (and the answer to a Close) itself.
                Message::Ping(_) | Message::Close(_) | Message::Frame(_) => {}
            }
        }
        if ended || failed.is_some() {
            break;
        }
        if conn.stalled.load(Ordering::SeqCst) {
            // Stalled while reading: not another byte out.
            continue;
        }
        let now = Instant::now();
        let mut next: Vec<Instant> = Vec::new();
        if closing.is_none() {
            // 2. Timers.
            let ms = Duration::from_millis;
            if timers.ping_interval_ms > 0 {
                let due = last_ping + ms(timers.ping_interval_ms);
                if now >= due {
                    let mut io = Io { shared: &shared, conn: &conn, ws: &mut ws, failed: &mut failed };
                    io.ping();
                    last_ping = now;
                    next.push(now + ms(timers.ping_interval_ms));
                } else {
                    next.push(due);
                }
            }
            if timers.pong_timeout_ms > 0 {
                let due = last_pong + ms(timers.pong_timeout_ms);
                if now >= due {
                    closing = start_close(&mut ws, CloseCode::Policy, PONG_TIMEOUT_REASON.to_owned());
                } else {
                    next.push(due);
                }
            }
            if timers.max_lifetime_ms > 0 && closing.is_none() {
                let due = conn.opened + ms(timers.max_lifetime_ms);
                if now >= due {
                    let reason = serde_json::json!({
                        "code": 1001,
                        "message": format!("connection lifetime limit reached ({} ms)", timers.max_lifetime_ms),
                    });
                    closing = start_close(&mut ws, CloseCode::Away, reason.to_string());
                } else {
                    next.push(due);
                }
            }
        }
        if closing.is_none() {
            let mut io = Io { shared: &shared, conn: &conn, ws: &mut ws, failed: &mut failed };
            next.extend(handler.on_tick(&mut io, now, &timers));
            // 3. What other threads queued.
            for out in conn.take_outbox() {
                if let Out::Account(e) = &out {
                    written = written.max(e.seq);
                }
                handler.on_out(&mut io, out);
            }
        }
        // 4. Out it goes.
        let want_write = match ws.flush() {
            Ok(()) => {
                conn.flushed.fetch_max(written, Ordering::SeqCst);
                false
            }
            Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => true,
            // The close handshake is over (or the socket failed): done.
            Err(_) => break,
        };
        if failed.is_some() {
            break;
        }
        if let Some(deadline) = closing {
            if now >= deadline {
                break;
            }
            next.push(deadline);
        }
        // 5. Wait.
        let timeout = if more {
            Duration::ZERO
        } else {
            next.iter().min().map_or(IDLE, |d| d.saturating_duration_since(Instant::now()).min(IDLE))
        };
        wire::wait(fd, want_write, &wakee, timeout);
        wire::drain(&mut wakee);
    }
    ws.get_ref().shutdown();
    hub.unregister(&conn);
}

impl Io<'_> {
    fn ping(&mut self) {
        match self.ws.write(Message::Ping(Vec::new().into())) {
            Ok(()) => {}
            Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => {
                *self.failed = Some(e);
                return;
            }
        }
        self.shared.ws.counters.pings.fetch_add(1, Ordering::Relaxed);
    }
}

fn count_in(shared: &Shared, conn: &Conn) {
    conn.frames_in.fetch_add(1, Ordering::Relaxed);
    shared.ws.counters.frames_in.fetch_add(1, Ordering::Relaxed);
}

/// Queues a close frame; the deadline for the client's answer.
fn start_close(ws: &mut WebSocket<Wire>, code: CloseCode, reason: String) -> Option<Instant> {
    // An error here is the socket's: the flush after it ends the loop.
    let _ = ws.close(Some(CloseFrame { code, reason: reason.into() }));
    Some(Instant::now() + CLOSE_GRACE)
}

/// A read error: protocol violations get their close code (then the client has the grace
/// period to answer); anything else ends the connection. Returns true when it is over.
fn end_on_read_error(ws: &mut WebSocket<Wire>, e: Error, closing: &mut Option<Instant>) -> bool {
    let (code, reason) = match e {
        Error::Capacity(e) => (CloseCode::Size, format!("message too big: {e}")),
        Error::Utf8(_) => (CloseCode::Invalid, "text frame is not valid UTF-8".to_owned()),
        Error::Protocol(e) if ws.can_write() => (CloseCode::Protocol, format!("protocol error: {e}")),
        _ => return true,
    };
    if closing.is_some() {
        return true;
    }
    *closing = start_close(ws, code, reason);
    false
}
