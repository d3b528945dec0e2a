//! The I/O thread of one stream: connect, authenticate, read, and keep the connection
//! alive — or replace it — until the stream is closed.
//!
//! - Server pings are answered by tungstenite whenever it reads or writes.
//! - Liveness never depends on the venue answering a ping of ours: any inbound frame
//!   (the venue pings every 10 s) resets an idle timer; silence for `stream_idle_timeout_ms`
//!   means a half-open connection, which is dropped and replaced. After a third of that
//!   silence the client pings once (then again each third): a venue that pings less often,
//!   or not at all, keeps a quiet connection alive by its pong, and none is required.
//! - Before the venue's 24 h cap, at `stream_rotate_after_ms`, the connection is replaced.
//! - Reconnection waits a jittered exponential backoff and the process-wide connection
//!   limiter, then authenticates and subscribes again.
//! - A refused auth or an expired token ends the stream (a `failed` event, then
//!   `PERPS_STREAM_CLOSED` from `next`): retrying could not succeed.
//! - Every transition is a status event: `connected`, `disconnected`, `reconnecting`,
//!   `reconnect_failed`, `reconnected`, `failed`.
//!
//! Nothing here ever runs caller code: events go to the queue that `next` reads.

use super::events::{self, Kind, Queue};
use super::limits::{self, Backoff, Permit};
use super::queue::Watch;
use super::settings::StreamSettings;
use super::transport::{self, Connection};
use crate::client::Client;
use crate::error::{Code, Error, Result};
use crate::session::Session;
use serde_json::{Value, json};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tungstenite::Message;

/// What an authentication answer (or any frame) meant.
pub enum AuthOutcome {
    /// Not an authentication answer (or none awaited).
    Pending,
    Accepted,
    Refused(Error),
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
}

/// The live connection, shared with callers that write order frames.
#[derive(Default)]
pub struct Link {
    pub conn: Option<Connection>,
    _permit: Option<Permit>,
}

pub struct Shared {
    pub queue: Queue,
    /// A descriptor that refers to the current connection's socket (`dup3` of it) and, between
    /// connections, to `placeholder`: what a caller waiting in `next` watches (`queue.rs`).
    watch: OwnedFd,
    /// Never readable (nothing is ever written to its peer).
    placeholder: (UnixStream, UnixStream),
    /// Whether the I/O thread is at work (not waiting in `poll`).
    io_busy: AtomicBool,
    link: Mutex<Link>,
    /// Callers waiting for `link` to write an order frame: the I/O thread lets go of it
    /// after the frame it is reading instead of reading on.
    writers_waiting: AtomicUsize,
    closing: AtomicBool,
    wake_tx: UnixStream,
    wake_rx: UnixStream,
    /// The socket of a connection being set up, so `close` can cut its handshake short.
    handshake: Mutex<Option<TcpStream>>,
    exited: Mutex<bool>,
    exited_signal: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub fn new() -> Result<Shared> {
        let (wake_tx, wake_rx) = UnixStream::pair()
            .map_err(|e| Error::new(Code::Transport, format!("cannot create a wake-up socket: {e}")))?;
        for end in [&wake_tx, &wake_rx] {
            end.set_nonblocking(true).map_err(|e| Error::new(Code::Transport, format!("wake-up socket: {e}")))?;
        }
        let placeholder =
            UnixStream::pair().map_err(|e| Error::new(Code::Transport, format!("cannot create a socket pair: {e}")))?;
        let watch = placeholder
            .0
            .try_clone()
            .map_err(|e| Error::new(Code::Transport, format!("cannot duplicate a descriptor: {e}")))?;
        Ok(Shared {
            queue: Queue::new()?,
            watch: OwnedFd::from(watch),
            placeholder,
            io_busy: AtomicBool::new(false),
            link: Mutex::new(Link::default()),
            writers_waiting: AtomicUsize::new(0),
            closing: AtomicBool::new(false),
            wake_tx,
            wake_rx,
            handshake: Mutex::new(None),
            exited: Mutex::new(false),
            exited_signal: Condvar::new(),
        })
    }

    pub fn link(&self) -> MutexGuard<'_, Link> {
        lock(&self.link)
    }

    /// The next event for a caller (`Stream::next`), watching the connection while it waits.
    pub fn next(&self, timeout: Option<Duration>) -> Result<Option<String>> {
        let watch = Watch { fd: self.watch.as_raw_fd(), io_busy: &self.io_busy };
        self.queue.pop(timeout, Some(&watch))
    }

    /// Point the watched descriptor at `fd` (a new connection's socket) or, with `None`, at
    /// the placeholder. A failure only costs the callers the early wake-up.
    fn point_watch(&self, fd: Option<RawFd>) {
        let target = fd.unwrap_or(self.placeholder.0.as_raw_fd());
        let watch = self.watch.as_raw_fd();
        // SAFETY: both descriptors are open; `watch` is ours, and replacing it is atomic.
        #[cfg(target_os = "linux")]
        unsafe {
            libc::dup3(target, watch, libc::O_CLOEXEC)
        };
        // SAFETY: as above; close-on-exec set again right after.
        #[cfg(not(target_os = "linux"))]
        unsafe {
            libc::dup2(target, watch);
            libc::fcntl(watch, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }

    /// The link for a caller's write: the I/O thread, if it is reading, hands it over after
    /// the current frame (not after its whole read budget).
    pub fn link_for_writing(&self) -> MutexGuard<'_, Link> {
        if let Ok(link) = self.link.try_lock() {
            return link;
        }
        self.writers_waiting.fetch_add(1, Ordering::AcqRel);
        let link = lock(&self.link);
        self.writers_waiting.fetch_sub(1, Ordering::AcqRel);
        link
    }

    fn writer_waiting(&self) -> bool {
        self.writers_waiting.load(Ordering::Acquire) > 0
    }

    pub fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    /// From any thread: `next` fails at once, the I/O thread wakes and ends.
    pub fn close(&self) {
        self.closing.store(true, Ordering::Release);
        self.queue.close();
        let _ = (&self.wake_tx).write(&[1]);
        if let Some(socket) = lock(&self.handshake).as_ref() {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }

    /// Wait up to `limit` for the I/O thread to end; whether it did.
    pub fn wait_exited(&self, limit: Duration) -> bool {
        let exited = lock(&self.exited);
        let (exited, _) =
            self.exited_signal.wait_timeout_while(exited, limit, |done| !*done).unwrap_or_else(PoisonError::into_inner);
        *exited
    }

    fn mark_exited(&self) {
        *lock(&self.exited) = true;
        self.exited_signal.notify_all();
    }

    fn drain_wake(&self) {
        let mut buf = [0u8; 64];
        while matches!((&self.wake_rx).read(&mut buf), Ok(n) if n > 0) {}
    }

    /// Sleep up to `d`, or until `close`.
    fn sleep(&self, d: Duration) {
        if !self.is_closing() {
            poll_fds(None, self.wake_rx.as_raw_fd(), d);
            self.drain_wake();
        }
    }

    fn status(&self, state: &str, fields: Value) {
        self.queue.push(Kind::Status, events::status(state, fields));
    }
}

/// Everything the I/O thread needs besides its protocol.
pub struct Context {
    pub client: Arc<Client>,
    pub session: Option<Arc<Session>>,
    pub url: String,
}

impl Context {
    fn settings(&self) -> &StreamSettings {
        self.client.stream_settings()
    }
    /// The limiter's key: the venue's host and port.
    fn host_key(&self) -> String {
        self.url
            .parse::<tungstenite::http::Uri>()
            .ok()
            .and_then(|u| u.authority().map(|a| a.to_string()))
            .unwrap_or_default()
    }
}

/// Why a connection ended.
struct Ended {
    reason: String,
    rotation: bool,
}

/// Why setting up a connection failed.
enum SetupError {
    /// Trying again cannot help (auth refused, token expired, bad configuration).
    Fatal(Error),
    Retry(Error),
}

/// Start the I/O thread and wait for its first connection: `Ok` once connected and
/// authenticated, or the error that prevented it.
pub fn start(ctx: Context, proto: Box<dyn Protocol>, shared: Arc<Shared>) -> Result<std::thread::JoinHandle<()>> {
    let settings = ctx.settings();
    let limit = settings.connect_timeout + settings.reply_timeout * 3 + Duration::from_secs(1);
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

/// The terminal event and error.
fn fail(shared: &Shared, error: Error) {
    shared.status(
        "failed",
        json!({ "code": error.code() as i32, "code_name": error.code().name(), "message": error.message() }),
    );
    shared.queue.finish(error);
}

fn run(ctx: &Context, mut proto: Box<dyn Protocol>, shared: &Shared, opened: mpsc::Sender<Result<()>>) {
    let settings = ctx.settings();
    let options = &settings.options;
    let host = ctx.host_key();
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
    while !shared.is_closing() {
        // What venue text must never show back, as of this connection (a refreshed token).
        if let Some(session) = &ctx.session {
            shared.queue.set_secrets(session.secrets());
        }
        let token = match &ctx.session {
            Some(session) => match session.usable_token(ctx.client.venue_now_ms().div_euclid(1000)) {
                Ok(token) => Some(token),
                Err(error) => return give_up(&mut opened, error),
            },
            None => None,
        };
        let permit = match limits::try_acquire(&host, options.max_connections, options.connects_per_minute) {
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
                shared.status(
                    "reconnecting",
                    json!({ "attempt": backoff.attempt(), "delay_ms": wait.as_millis() as u64, "reason": "the venue's connection limit" }),
                );
                shared.sleep(wait);
                continue;
            }
        };
        let conn = match establish(ctx, proto.as_mut(), shared, token.as_deref().map(String::as_str)) {
            Ok(conn) => conn,
            Err(SetupError::Fatal(error)) => return give_up(&mut opened, error),
            Err(SetupError::Retry(error)) if opened.is_some() => return give_up(&mut opened, error),
            Err(SetupError::Retry(error)) => {
                drop(permit);
                if shared.is_closing() {
                    break;
                }
                shared.status(
                    "reconnect_failed",
                    json!({ "attempt": backoff.attempt(), "code_name": error.code().name(), "message": error.message() }),
                );
                let delay = backoff.next_delay();
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
        let started = Instant::now();
        let ended = serve(shared, proto.as_mut(), settings);
        let old = std::mem::take(&mut *shared.link());
        if let Some(mut conn) = old.conn {
            // A polite close where the socket can take it; never waited for.
            let _ = conn.ws.close(None);
            let _ = conn.ws.flush();
        }
        // The watched descriptor held the socket open too: now it is closed.
        shared.point_watch(None);
        if shared.is_closing() {
            break;
        }
        let mut fields = json!({ "stream": proto.name(), "reason": ended.reason, "rotation": ended.rotation });
        merge(&mut fields, proto.on_disconnect());
        shared.status("disconnected", fields);
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
    token: Option<&str>,
) -> std::result::Result<Connection, SetupError> {
    let settings = ctx.settings();
    let mut on_socket = |tcp: &TcpStream| *lock(&shared.handshake) = tcp.try_clone().ok();
    let connected = transport::connect(&ctx.url, settings, &mut on_socket);
    lock(&shared.handshake).take();
    let mut conn = connected.map_err(|e| match e.code() {
        Code::InvalidArgument => SetupError::Fatal(e),
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
                Ok(AuthOutcome::Pending) => {}
                Err(error) => {
                    let reason = close_reason.unwrap_or_else(|| error.message().to_owned());
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

/// Frames read in one pass while holding the connection's lock, so that a flood of pushes
/// never keeps an order writer waiting for long.
const READ_BUDGET: usize = 64;

/// Read the frames available now (at most `READ_BUDGET`; `more` tells whether some may be
/// left). `Err` when the connection is finished.
fn read_available(
    conn: &mut Connection,
    proto: &mut dyn Protocol,
    shared: &Shared,
    last_inbound: &mut Instant,
    close_reason: &mut Option<String>,
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
                return Err(Error::new(
                    Code::Transport,
                    close_reason.clone().unwrap_or("the venue closed the connection".into()),
                ));
            }
            Err(e) => return Err(transport::ws_error(e, "reading")),
        };
        *last_inbound = Instant::now();
        match message {
            Message::Text(text) => {
                if let Some(pong) = json_pong(text.as_str()) {
                    // A failed write shows as the connection's end at the next read.
                    let _ = conn.send_text(pong);
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
                *close_reason = Some(match frame {
                    Some(frame) => format!(
                        "the venue closed the connection (code {}: {})",
                        u16::from(frame.code),
                        crate::error::venue_words(frame.reason.as_str())
                    ),
                    None => "the venue closed the connection".to_owned(),
                });
            }
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
        }
    }
    *more = true;
    Ok(AuthOutcome::Pending)
}

/// The answer to a JSON-level ping (`{"ping":x}` → `{"pong":x}`): not in the venue's
/// documents, but some servers send it and public clients ([KU], [NB]) answer it. The frame
/// itself is still passed on (as `unrecognized`).
fn json_pong(text: &str) -> Option<String> {
    if text.len() > 256 || !text.contains("\"ping\"") {
        return None;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(frame)) if frame.len() == 1 => Some(json!({ "pong": frame.get("ping")? }).to_string()),
        _ => None,
    }
}

/// Serve a live connection until it ends.
fn serve(shared: &Shared, proto: &mut dyn Protocol, settings: &StreamSettings) -> Ended {
    let options = &settings.options;
    let started = Instant::now();
    let mut last_inbound = Instant::now();
    let mut last_ping = last_inbound;
    // The client's ping is due a third of the idle timeout after the last frame or ping.
    let ping_every = options.idle_timeout / 3;
    let ping_due = |last_inbound: Instant, last_ping: Instant| last_inbound.max(last_ping) + ping_every;
    let mut close_reason = None;
    let mut more = false;
    loop {
        let fd = {
            let mut link = shared.link();
            let Some(conn) = link.conn.as_mut() else {
                return Ended { reason: "the connection was dropped".into(), rotation: false };
            };
            if let Err(error) = read_available(conn, proto, shared, &mut last_inbound, &mut close_reason, &mut more) {
                return Ended { reason: close_reason.unwrap_or_else(|| error.message().to_owned()), rotation: false };
            }
            if ping_due(last_inbound, last_ping) <= Instant::now() {
                last_ping = Instant::now();
                // A failed write shows as the connection's end at the next read.
                if conn.ws.write(Message::Ping(Default::default())).is_ok() {
                    let _ = conn.flush();
                }
            }
            conn.fd()
        };
        if shared.is_closing() {
            return Ended { reason: "closed by the caller".into(), rotation: false };
        }
        let now = Instant::now();
        let idle_deadline = last_inbound + options.idle_timeout;
        let rotate_at = started + options.rotate_after;
        if now >= idle_deadline {
            return Ended {
                reason: format!(
                    "nothing received for {} ms (the venue pings every 10 s): the connection is presumed dead (half-open)",
                    options.idle_timeout.as_millis()
                ),
                rotation: false,
            };
        }
        if now >= rotate_at {
            return Ended {
                reason: format!("rotation after {} ms (before the venue's 24 h cap)", options.rotate_after.as_millis()),
                rotation: true,
            };
        }
        if !more {
            let wake_at = idle_deadline.min(rotate_at).min(ping_due(last_inbound, last_ping).max(now));
            shared.io_busy.store(false, Ordering::Release);
            poll_fds(Some(fd), shared.wake_rx.as_raw_fd(), wake_at - now);
            shared.io_busy.store(true, Ordering::Release);
            shared.drain_wake();
        } else if shared.writer_waiting() {
            // Let the writer take the connection before reading on.
            std::thread::yield_now();
        }
    }
}

/// Wait until `socket` (if any) or `wake` is readable, or `timeout` passes.
fn poll_fds(socket: Option<RawFd>, wake: RawFd, timeout: Duration) {
    let mut fds = [
        libc::pollfd { fd: wake, events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: socket.unwrap_or(-1), events: libc::POLLIN, revents: 0 },
    ];
    let count = if socket.is_some() { 2 } else { 1 };
    // Rounded up: waking a little early would only spin.
    let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
    // SAFETY: `count` valid pollfd entries for the duration of the call.
    unsafe { libc::poll(fds.as_mut_ptr(), count, ms) };
}
