//! Reading a served connection: the frames available now, each turned into the events it
//! gives. The I/O thread reads this way, and so does a caller waiting in `next` on the one
//! CPU the I/O thread is pinned to, when the socket wakes it (`ReadForCaller::read_now` in
//! `shared.rs`): it decodes the frame in its own thread and takes the event at once, as a
//! plain read loop would, rather than wait for the I/O thread to be scheduled on that CPU (a
//! context switch per event). Either reads under the connection's lock, so frames are read
//! in order and by one thread at a time.

use super::events::{self, Kind};
use super::shared::Shared;
use super::supervisor::{AuthOutcome, Protocol};
use super::transport::{self, Connection};
pub use super::venue_close::VenueClose;
use crate::error::{Code, Error, Result};
use serde_json::{Value, json};
use std::io;
use std::time::Instant;
use tungstenite::Message;

/// What reading a served connection keeps between passes, whoever reads: held with the
/// connection under its lock while the connection is served (`Link::reader`).
pub struct Reader {
    pub proto: Box<dyn Protocol>,
    /// When the last frame came in (the idle timeout counts from it).
    pub last_inbound: Instant,
    /// The venue's close frame, once one came (it ends the connection).
    pub close_reason: Option<VenueClose>,
    /// A caller's read found the connection finished: why, for the I/O thread to act on.
    pub ended: Option<End>,
}

/// Why a served connection is finished.
pub enum End {
    /// Lost, closed, or refused for now (a login answered "not now" after its ack): the
    /// connection is replaced.
    Lost(String),
    /// The login, acked at first, was refused: the stream ends as when a login is refused.
    Refused(Error),
}

impl Reader {
    pub fn new(proto: Box<dyn Protocol>) -> Reader {
        Reader { proto, last_inbound: Instant::now(), close_reason: None, ended: None }
    }
}

/// Frames read in one pass while holding the connection's lock, so that a flood of pushes
/// never keeps an order writer waiting for long.
pub(super) const READ_BUDGET: usize = 64;

/// Read the frames available now (at most `READ_BUDGET`; `more` tells whether some may be
/// left). `Err` when the connection is finished.
pub(super) fn read_available(
    conn: &mut Connection,
    proto: &mut dyn Protocol,
    shared: &Shared,
    last_inbound: &mut Instant,
    close_reason: &mut Option<VenueClose>,
    more: &mut bool,
) -> Result<AuthOutcome> {
    let queue = &shared.queue;
    *more = false;
    for _ in 0..READ_BUDGET {
        if shared.writer_waiting() {
            // A caller waits to write an order: let it have the connection now.
            *more = true;
            return Ok(AuthOutcome::Pending);
        }
        let message = match conn.ws.read() {
            Ok(message) => message,
            Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => return Ok(AuthOutcome::Pending),
            Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                let reason =
                    close_reason.as_ref().map_or("the venue closed the connection".into(), VenueClose::describe);
                return Err(Error::new(Code::Transport, reason));
            }
            Err(e) => return Err(transport::ws_error(e, "reading")),
        };
        *last_inbound = Instant::now();
        match message {
            Message::Text(text) => {
                if let Some(pong) = json_pong(text.as_str()) {
                    // Never waited for: a venue that sends JSON pings and reads nothing would
                    // otherwise hold this thread (and the connection's lock) for the whole
                    // write timeout per ping, while its pushes keep the connection alive.
                    // A failed write shows as the connection's end at the next read.
                    conn.send_text_now(pong);
                }
                match proto.on_text(text.as_str(), events::now_ns(), queue) {
                    AuthOutcome::Pending => {}
                    outcome => return Ok(outcome),
                }
            }
            Message::Binary(bytes) => {
                let error = Error::bad_response(format!(
                    "the venue sent a binary frame of {} bytes (it sends JSON text); ignored",
                    bytes.len()
                ));
                queue.push(Kind::Notice, events::error_status(&error, None));
            }
            Message::Close(frame) => {
                let close = VenueClose::new(frame, conn.ws.get_ref().tail());
                let reason = close.describe();
                *close_reason = Some(close);
                // The connection ends here, whether or not the venue also closes the socket:
                // one that keeps it open would otherwise be noticed only at the idle timeout.
                // tungstenite queued the answering Close frame: sent if the socket takes it.
                let _ = conn.ws.flush();
                return Err(Error::new(Code::Transport, reason));
            }
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
        }
    }
    *more = true;
    Ok(AuthOutcome::Pending)
}

/// Read what a served connection has now, as `read_available`; `Some` once the connection is
/// finished: by the transport, or by a late answer to its login (`Orders`) that refuses it or
/// says "not now". Other auth outcomes mean nothing once the connection is served.
pub(super) fn read_served(conn: &mut Connection, reader: &mut Reader, shared: &Shared, more: &mut bool) -> Option<End> {
    let Reader { proto, last_inbound, close_reason, .. } = reader;
    match read_available(conn, proto.as_mut(), shared, last_inbound, close_reason, more) {
        Ok(AuthOutcome::Pending | AuthOutcome::Accepted) => None,
        Ok(AuthOutcome::Refused(error)) => {
            // Said at once, under the link this read holds: no request is written to the
            // connection from here on, as the stream ends (`Queue::ending`).
            shared.queue.ending(&error);
            Some(End::Refused(error))
        }
        Ok(AuthOutcome::Unavailable(error)) => Some(End::Lost(error.message().to_owned())),
        Err(error) => Some(End::Lost(end_reason(close_reason, &error))),
    }
}

/// Why the connection ended, for the `disconnected` event: the venue's close frame if one
/// came, else what reading found.
pub(super) fn end_reason(close_reason: &Option<VenueClose>, error: &Error) -> String {
    close_reason.as_ref().map_or_else(|| error.message().to_owned(), VenueClose::describe)
}

/// The answer to a JSON-level ping (`{"ping":x}` → `{"pong":x}`): not in the venue's
/// documents, but some servers send it and public clients ([KU], [NB]) answer it — any
/// object with a number or string under `ping`, beside other keys too (`{"ping":1,"time":…}`).
/// The frame itself is still passed on (as `unrecognized`).
fn json_pong(text: &str) -> Option<String> {
    if text.len() > 256 || !text.contains("\"ping\"") {
        return None;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(frame)) => match frame.get("ping")? {
            ping @ (Value::Number(_) | Value::String(_)) => Some(json!({ "pong": ping }).to_string()),
            _ => None,
        },
        _ => None,
    }
}
