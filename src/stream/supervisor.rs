//! The I/O thread of one stream: connect, authenticate, read, and keep the connection
//! alive — or replace it — until the stream is closed.
//!
//! - Server pings are answered by tungstenite whenever it reads or writes.
//! - Liveness never depends on the venue answering a ping of ours: any inbound frame
//!   (the venue pings every 10 s) resets an idle timer; silence for `stream_idle_timeout_ms`
//!   means a half-open connection, which is dropped and replaced. After a third of that
//!   silence the client pings once (then again each third): a venue that pings less often,
//!   or not at all, keeps a quiet connection alive by its pong, and none is required. The
//!   ping is written only as far as the socket takes it at once (`close` wakes only a
//!   `poll`). Bytes of ours the venue has not taken for the same bound also mean half-open,
//!   however much it still sends (`serving.rs`).
//! - A Close frame from the venue ends the connection at once (the reason is the venue's),
//!   even if the venue leaves the socket open.
//! - Before the venue's 24 h cap, at `stream_rotate_after_ms`, the connection is replaced:
//!   the old one, no longer written to, is read until the outcomes of the orders sent on it
//!   came or a bounded grace passed (`rotation.rs`), then closed, then the new one opened.
//! - Reconnection waits a jittered exponential backoff and the process-wide connection
//!   limiter, then authenticates and subscribes again.
//! - A refused auth, an upgrade refused with HTTP 401 or 403, or an expired token ends the
//!   stream (a `failed` event, then `PERPS_STREAM_CLOSED` from `next`): retrying could not
//!   succeed. An auth answer that
//!   says "not now" (5xx, 408, 429) is retried like a failed handshake. A login acked at
//!   first and answered later (`orders.rs`) is acted on while the connection is served: a
//!   refusal ends it (`disconnected`, then `failed`), "not now" replaces it after a backoff.
//! - Every transition is a status event: `connected`, `disconnected`, `reconnecting`,
//!   `reconnect_failed`, `reconnected`, `failed`. What a connection gives while it is set up
//!   (a push sent before the auth answer) is held and queued after its `connected` /
//!   `reconnected` event, or before the events of its failure (`Queue::hold`).
//!
//! - When the thread is pinned to one CPU (`note_affinity`), a caller waiting in `next` on
//!   that CPU reads the frames itself (`reader.rs`, `queue/waiting.rs`); meanwhile the thread sleeps
//!   on its timers alone, looks every `CALLER_READS_RECHECK` whether a caller still reads,
//!   and reads what arrives while none does. So does a caller busy-polling `next` with a
//!   zero timeout on that CPU, at each call.
//!
//! Nothing here ever runs caller code: events go to the queue that `next` reads.

use super::events::{self, Queue, Tables};
use super::limits::{self, Backoff};
use super::reader::{End, VenueClose, end_reason, read_available};
use super::resolve::Resolver;
use super::serving::serve;
use super::settings::StreamSettings;
use super::shared::{Shared, lock, poll_fds};
use super::transport::{self, Connection};
use crate::client::Client;
use crate::error::{Code, Error, Result};
use crate::redact::Secrets;
use crate::session::Session;
use serde_json::{Value, json};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What an authentication answer (or any frame) meant.
pub enum AuthOutcome {
    /// Not an authentication answer (or none awaited).
    Pending,
    Accepted,
    Refused(Error),
    /// The venue cannot answer now (a 5xx, 408 or 429 code): try again later, as after a
    /// failed handshake.
    Unavailable(Error),
}

/// The venue protocol spoken over a connection (market stream or order stream).
pub trait Protocol: Send + 'static {
    /// "market" or "order", as status events name the stream.
    fn name(&self) -> &'static str;
    /// Send the first frames of a new connection; `true` when an auth answer must be awaited.
    fn start(&mut self, conn: &mut Connection, token: Option<&str>) -> Result<bool>;
    /// Once authenticated (or at once when no answer is awaited): e.g. subscribe.
    fn after_auth(&mut self, conn: &mut Connection) -> Result<()>;
    /// One text frame: queue the events it gives.
    fn on_text(&mut self, text: &str, received_ns: i64, queue: &Queue) -> AuthOutcome;
    /// Fields added to `connected` / `reconnected` events.
    fn connected_fields(&self) -> Value;
    /// Fields added to `disconnected` events.
    fn on_disconnect(&mut self) -> Value;
    /// Whether a request sent on the current connection still waits for its outcome: after
    /// a rotation the old connection is read until none does (`rotation.rs`).
    fn awaits_outcomes(&self) -> bool {
        false
    }
    /// Act on the protocol's own timers due by `now` (queueing their events); when it must be
    /// called next (`None`: no timer set).
    fn on_timers(&mut self, _now: Instant, _queue: &Queue) -> Option<Instant> {
        None
    }
}

/// Everything the I/O thread needs besides its protocol.
pub struct Context {
    pub client: Arc<Client>,
    pub session: Option<Arc<Session>>,
    pub url: String,
    /// The limiter's key: the venue's host and port, as the REST per-IP limit writes them
    /// (`StreamSettings::stream_host`).
    pub host: String,
}

impl Context {
    fn settings(&self) -> &StreamSettings {
        self.client.stream_settings()
    }
}

/// Why a connection ended.
pub(super) struct Ended {
    pub(super) reason: String,
    pub(super) rotation: bool,
    /// The login was refused after its ack: the stream ends (`failed`), no reconnection.
    pub(super) refused: Option<Error>,
    /// The venue's Close frame, when one ended the connection.
    pub(super) close: Option<VenueClose>,
}

impl Ended {
    pub(super) fn lost(reason: impl Into<String>) -> Ended {
        Ended { reason: reason.into(), rotation: false, refused: None, close: None }
    }
}

impl From<End> for Ended {
    fn from(end: End) -> Ended {
        match end {
            End::Lost(reason) => Ended::lost(reason),
            End::Refused(error) => {
                Ended { reason: error.message().to_owned(), rotation: false, refused: Some(error), close: None }
            }
        }
    }
}

/// Why setting up a connection failed.
enum SetupError {
    /// Trying again cannot help (auth refused, the upgrade refused with 401 or 403, token
    /// expired, bad configuration).
    Fatal(Error),
    /// Worth another connection after a backoff (network, handshake, an auth answer that
    /// says "not now"); on the first connection the open reports it instead.
    Retry(Error),
}

/// Start the I/O thread and wait for its first connection: `Ok` once connected and
/// authenticated, or the error that prevented it.
pub fn start(ctx: Context, proto: Box<dyn Protocol>, shared: Arc<Shared>) -> Result<std::thread::JoinHandle<()>> {
    let settings = ctx.settings();
    // The name lookup and the TCP connect each have connect_timeout (resolve.rs, connect.rs),
    // then TLS, the upgrade and the auth answer the reply timeout: beyond all of them, the
    // first connection's own error has come.
    let limit = settings.connect_timeout * 2 + settings.reply_timeout * 3 + Duration::from_secs(1);
    let (opened_tx, opened_rx) = mpsc::channel();
    let thread_shared = shared.clone();
    let name = format!("perps-{}-stream", proto.name());
    let handle = std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            let shared = thread_shared;
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&ctx, proto, &shared, opened_tx)));
            if outcome.is_err() {
                let error =
                    Error::new(Code::Panic, "internal error: the stream's I/O thread panicked (a libperps bug)");
                fail(&shared, error);
            }
            shared.mark_exited();
        })
        .map_err(|e| Error::new(Code::Transport, format!("cannot start the stream's thread: {e}")))?;
    match opened_rx.recv_timeout(limit) {
        Ok(Ok(())) => Ok(handle),
        Ok(Err(error)) => {
            let _ = handle.join();
            Err(error)
        }
        Err(_) => {
            shared.close();
            if shared.wait_exited(Duration::from_secs(1)) {
                let _ = handle.join();
            }
            Err(Error::new(Code::Timeout, "the stream did not connect and authenticate in time"))
        }
    }
}

/// The terminal event and error, together (`Queue::finish`).
fn fail(shared: &Shared, error: Error) {
    let fields = json!({ "code": error.code() as i32, "code_name": error.code().name(), "message": error.message() });
    shared.queue.finish(Some(events::status("failed", fields)), error);
}

fn run(ctx: &Context, mut proto: Box<dyn Protocol>, shared: &Shared, opened: mpsc::Sender<Result<()>>) {
    let settings = ctx.settings();
    let options = &settings.options;
    let host = &ctx.host;
    let mut opened = Some(opened);
    let mut backoff = Backoff::new(options.reconnect_min, options.reconnect_max);
    let mut connections: u64 = 0;
    // Report a failure to the opener (first connection) or as events (later ones).
    let give_up = |opened: &mut Option<mpsc::Sender<Result<()>>>, error: Error| match opened.take() {
        Some(tx) => {
            let _ = tx.send(Err(shared.queue.redact_error(error)));
        }
        None => fail(shared, error),
    };
    // The redaction tables of the last connection (its token may still be quoted).
    let mut last_tables: Option<Tables> = None;
    // Since when the last `reconnecting` event said the stream waits for a connection slot.
    let mut waiting_for_a_slot: Option<Instant> = None;
    // The stream's host lookups: at most one at a time, however many attempts give up on one.
    let mut resolver = Resolver::new(crate::name_lookup::system);
    while !shared.is_closing() {
        let token = match &ctx.session {
            Some(session) => {
                // What venue text must never show back, as of this connection (a refreshed
                // token): the tables taken around the read of the token (another thread may
                // sign in again between the two), and the last connection's, joined where
                // they differ; and, for the venue's frames, the token this connection sends.
                let before = session.secrets();
                let token = session.usable_token(ctx.client.venue_now_ms().div_euclid(1000));
                let all = Secrets::joined(before, session.secrets());
                let mut sent = Secrets::new();
                if let Ok(token) = &token {
                    sent.add(token);
                }
                let tables = Tables { all, sent: Arc::new(sent) };
                shared.queue.set_secrets(match &last_tables {
                    Some(last) => Tables {
                        all: Secrets::joined(last.all.clone(), tables.all.clone()),
                        sent: Secrets::joined(last.sent.clone(), tables.sent.clone()),
                    },
                    None => tables.clone(),
                });
                last_tables = Some(tables);
                match token {
                    Ok(token) => Some(token),
                    Err(error) => return give_up(&mut opened, error),
                }
            }
            None => None,
        };
        let permit = match limits::try_acquire(host, options.max_connections, options.connects_per_minute) {
            Ok(permit) => permit,
            Err(refusal) if opened.is_some() => {
                return give_up(
                    &mut opened,
                    limits::refusal_error(&refusal, options.max_connections, options.connects_per_minute),
                );
            }
            Err(refusal) => {
                let wait = match refusal {
                    limits::Refusal::TooManyNew(wait) => wait.max(Duration::from_millis(10)),
                    limits::Refusal::TooManyOpen => Duration::from_millis(500),
                };
                // Once per wait for a slot, and again every 30 s while it lasts, not every 500 ms:
                // status events are never dropped, and an engine that does not read this stream
                // meanwhile must not pile them up.
                if waiting_for_a_slot.is_none_or(|since| since.elapsed() >= SLOT_WAIT_REPORTED_EVERY) {
                    shared.status(
                        "reconnecting",
                        json!({ "attempt": backoff.attempt(), "delay_ms": wait.as_millis() as u64, "reason": "the venue's connection limit" }),
                    );
                    waiting_for_a_slot = Some(Instant::now());
                }
                shared.sleep(wait);
                continue;
            }
        };
        waiting_for_a_slot = None;
        // The connection's events wait for its status event (`Queue::hold`).
        shared.queue.hold();
        let established = establish(ctx, proto.as_mut(), shared, &mut resolver, token.as_deref().map(String::as_str));
        if established.is_err() {
            // What the venue sent before the failure comes out before the failure's events.
            shared.queue.release();
        }
        let conn = match established {
            Ok(conn) => conn,
            Err(SetupError::Fatal(error)) => return give_up(&mut opened, error),
            Err(SetupError::Retry(error)) if opened.is_some() => return give_up(&mut opened, error),
            Err(SetupError::Retry(error)) => {
                drop(permit);
                if shared.is_closing() {
                    break;
                }
                let mut fields = json!({ "attempt": backoff.attempt(), "code_name": error.code().name(), "message": error.message() });
                // A refused upgrade's `Retry-After` (429, 503): waited out, up to a cap.
                let mut wait_ms = error.retry_after_ms();
                if let Some(ms) = wait_ms {
                    fields["retry_after_ms"] = ms.into();
                    if limits::retry_after_capped(ms) {
                        fields["retry_after_capped"] = true.into();
                    }
                }
                if error.code() == Code::HttpStatus && matches!(error.http_status(), 429 | 503) {
                    // Without one, or with one asking for less (`Retry-After: 0`, a date past),
                    // the venue's connection rate (30 per minute per IP) sets the least wait:
                    // the backoff alone could spend the minute's allowance at once.
                    let least = limits::MIN_WAIT_AFTER_TOO_MANY.as_millis() as i64;
                    if wait_ms.is_none_or(|ms| ms < least) {
                        fields["min_wait_ms"] = least.into();
                        wait_ms = Some(least);
                    }
                }
                let delay = limits::retry_delay(backoff.next_delay(), wait_ms);
                fields["delay_ms"] = (delay.as_millis() as u64).into();
                shared.status("reconnect_failed", fields);
                shared.status(
                    "reconnecting",
                    json!({ "attempt": backoff.attempt(), "delay_ms": delay.as_millis() as u64 }),
                );
                shared.sleep(delay);
                continue;
            }
        };
        drop(token);
        connections += 1;
        {
            let fd = conn.fd();
            let mut link = shared.link();
            link.conn = Some(conn);
            link._permit = Some(permit);
            shared.point_watch(Some(fd));
        }
        let mut fields = json!({ "stream": proto.name(), "url": ctx.url, "connection": connections });
        merge(&mut fields, proto.connected_fields());
        match opened.take() {
            Some(tx) => {
                shared.status("connected", fields);
                let _ = tx.send(Ok(()));
            }
            None => {
                fields["attempts"] = backoff.attempt().into();
                shared.status("reconnected", fields);
            }
        }
        shared.queue.release();
        let started = Instant::now();
        let (ended, served) = serve(shared, proto, settings);
        proto = served;
        // Out of the link: from here on no order is written to this connection.
        let old = std::mem::take(&mut *shared.link());
        // The watched descriptor held the socket open too: now only `old` does.
        shared.point_watch(None);
        if let Some(mut conn) = old.conn {
            if ended.rotation {
                // What the venue sent, or is still to send, on the old connection (the
                // outcomes of orders sent on it) is read before it is closed.
                super::rotation::read_out(&mut conn, proto.as_mut(), shared, settings);
            }
            // A polite close where the socket can take it; never waited for. Then the socket
            // is shut, whoever still holds a descriptor of it: its slot is freed below.
            let _ = conn.ws.close(None);
            let _ = conn.ws.flush();
            let _ = conn.ws.get_ref().tcp().shutdown(std::net::Shutdown::Both);
        }
        // The connection's slot is free from here: a stream waiting out its backoff holds
        // none, so it never keeps the caller's own streams from opening.
        drop(old._permit);
        if shared.is_closing() {
            break;
        }
        let mut fields = json!({ "stream": proto.name(), "reason": ended.reason, "rotation": ended.rotation });
        if let Some(close) = &ended.close {
            merge(&mut fields, close.fields());
        }
        merge(&mut fields, proto.on_disconnect());
        shared.status("disconnected", fields);
        if let Some(error) = ended.refused {
            // As a login refused before the connection was served: retrying cannot succeed.
            return fail(shared, error);
        }
        if started.elapsed() >= Duration::from_secs(30) {
            backoff.reset();
        }
        if !ended.rotation {
            let delay = backoff.next_delay();
            shared
                .status("reconnecting", json!({ "attempt": backoff.attempt(), "delay_ms": delay.as_millis() as u64 }));
            shared.sleep(delay);
        }
    }
}

/// How often a stream still waiting for a connection slot says so again.
const SLOT_WAIT_REPORTED_EVERY: Duration = Duration::from_secs(30);

fn merge(into: &mut Value, from: Value) {
    if let (Value::Object(into), Value::Object(from)) = (into, from) {
        into.extend(from);
    }
}

/// Connect, send the first frames, and wait for the auth answer when one is due.
fn establish(
    ctx: &Context,
    proto: &mut dyn Protocol,
    shared: &Shared,
    resolver: &mut Resolver,
    token: Option<&str>,
) -> std::result::Result<Connection, SetupError> {
    let settings = ctx.settings();
    let mut on_socket = |tcp: &TcpStream| {
        *lock(&shared.handshake) = tcp.try_clone().ok();
        // A `close` that came while the name was resolved or the socket connected found no
        // socket to shut: shut it here, before a TLS handshake and an upgrade open a venue
        // connection nobody will read (and spend one of the minute's new connections).
        if shared.is_closing() {
            let _ = tcp.shutdown(std::net::Shutdown::Both);
        }
    };
    let connected = transport::connect(&ctx.url, settings, shared.closed_signal(), resolver, &mut on_socket);
    lock(&shared.handshake).take();
    let mut conn = connected.map_err(|e| match e.code() {
        Code::InvalidArgument => SetupError::Fatal(e),
        // A 401 (token missing, invalid or expired) or 403 on the upgrade is a refusal, not
        // "not now": the same request would be refused again, so the stream ends as when a
        // refused auth answer ends it. Also without a session (the market stream's public
        // channels): nothing the library could change would make the venue accept it.
        Code::HttpStatus if matches!(e.http_status(), 401 | 403) => SetupError::Fatal(e),
        _ => SetupError::Retry(e),
    })?;
    if shared.is_closing() {
        return Err(SetupError::Retry(Error::new(Code::StreamClosed, "closed while connecting")));
    }
    let awaiting = proto.start(&mut conn, token).map_err(|e| match e.code() {
        Code::InvalidState | Code::Rng => SetupError::Fatal(e),
        _ => SetupError::Retry(e),
    })?;
    if awaiting {
        let deadline = Instant::now() + settings.reply_timeout;
        let mut close_reason = None;
        let mut last_inbound = Instant::now();
        let mut more = false;
        loop {
            match read_available(&mut conn, proto, shared, &mut last_inbound, &mut close_reason, &mut more) {
                Ok(AuthOutcome::Accepted) => break,
                Ok(AuthOutcome::Refused(error)) => return Err(SetupError::Fatal(error)),
                Ok(AuthOutcome::Unavailable(error)) => return Err(SetupError::Retry(error)),
                Ok(AuthOutcome::Pending) => {}
                Err(error) => {
                    let reason = end_reason(&close_reason, &error);
                    return Err(SetupError::Retry(Error::new(
                        error.code(),
                        format!("before the auth answer: {reason}"),
                    )));
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(SetupError::Retry(Error::new(
                    Code::Timeout,
                    "the venue did not answer the auth frame in time",
                )));
            }
            if shared.is_closing() {
                return Err(SetupError::Retry(Error::new(Code::StreamClosed, "closed while authenticating")));
            }
            if !more {
                poll_fds(Some(conn.fd()), shared.wake_rx.as_raw_fd(), left);
                shared.drain_wake();
            }
        }
    }
    proto.after_auth(&mut conn).map_err(SetupError::Retry)?;
    Ok(conn)
}
