//! The venue's two WebSockets (venue-api.md §2), on the REST listener and port: `ws-stream/v1`
//! (market data; the account channels after an `auth` frame) and `ws-api/v1` (order entry,
//! two reply frames per order), each at the root and under `/perps`, plain or behind the TLS
//! front.
//!
//! How a connection is served, and why this way. tiny_http parses the handshake like any
//! request and hands the socket over with `Request::upgrade`, but the boxed stream it returns
//! has no timeout, no descriptor and cannot be split. Rather than put a relay in front of
//! tiny_http (every REST request would pay for it) or change the HTTP server, `upgrade`
//! finds the socket by its two addresses (as `socket` already does for the
//! `close_after_order` fault), keeps a duplicate descriptor, and puts the socket in
//! non-blocking mode. Bytes are read through tiny_http's stream (its buffer may hold bytes
//! that arrived with the handshake) and written on the duplicate. One thread per connection
//! waits in `poll` on the socket and on a wake-up socket pair: pushes from other threads
//! (account events, `x-session-id` results, admin controls) leave at once, and every timer
//! (ping, pong timeout, lifetime, market cadence) is a poll deadline. TLS needs nothing
//! more: behind the TLS front tiny_http sees a loopback connection like any other.
//!
//! Modules: `upgrade` (handshake, limits, hand-over), `wire` (the socket, poll, wake-ups),
//! `conn` (the connection loop), `market` (ws-stream requests and market pushes), `account`
//! (account push shapes), `order_api` (ws-api), `session` (reply frames, `x-session-id`
//! routing, the event-before-ack wait), `limits` (per-IP connection limits).

mod account;
mod conn;
mod limits;
mod market;
mod order_api;
pub(crate) mod session;
pub(crate) mod upgrade;
mod wire;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::Write as _;
use std::net::SocketAddr;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::engine::events::{Channel, Event};

/// The WebSocket timers, all in milliseconds; 0 turns one off. Defaults are the venue's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WsTimers {
    /// The server sends a WebSocket Ping this often (venue: every 10 s).
    pub ping_interval_ms: u64,
    /// A connection that sent no Pong for this long is closed with the venue's 408 close
    /// frame (venue: 5 minutes).
    pub pong_timeout_ms: u64,
    /// A connection is closed (1001, going away) when it is this old (venue: 24 h).
    pub max_lifetime_ms: u64,
    /// A `depth_book` subscription is pushed this often (live median: 250 ms); 0 = only the
    /// snapshot sent when subscribing.
    pub depth_book_interval_ms: u64,
    /// A `price` subscription is pushed this often (live median: 3 s); 0 = only the snapshot.
    pub price_interval_ms: u64,
}

impl Default for WsTimers {
    fn default() -> WsTimers {
        WsTimers {
            ping_interval_ms: 10_000,
            pong_timeout_ms: 300_000,
            max_lifetime_ms: 86_400_000,
            depth_book_interval_ms: 250,
            price_interval_ms: 3_000,
        }
    }
}

/// How the ws-api gateway ack says "accepted" (venue-api.md §6, item 2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AckStyle {
    /// `{"code":0,"status":"accepted","request_id":…}` (the newest docs).
    #[default]
    Status,
    /// `{"code":0,"message":"accepted","request_id":…}` (what [WJ] handles live).
    Message,
    /// `status`, then `message`, then `status`… per connection.
    Alternate,
}

/// What a ws-stream `seq` counts (venue-api.md §6b: not documented).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SeqScope {
    /// One counter per channel on each connection (1, 2, 3… for `price`, another for `order`).
    #[default]
    Channel,
    /// One counter for every frame of the connection (the docs' examples look like it).
    Connection,
}

/// One subscription of a ws-stream connection, as the subscribe frame names it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct WsSubscription {
    pub channel: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
}

/// An open WebSocket connection, as `GET /_sandbox/ws/connections` lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WsConnection {
    pub id: u64,
    /// `ws-stream` or `ws-api`.
    pub endpoint: &'static str,
    /// The path it was opened on (`/ws-stream/v1`, `/perps/ws-api/v1`, …).
    pub path: String,
    /// The client's address.
    pub peer: String,
    /// ws-api: the `session_id` of its requests (what `x-session-id` routes to).
    pub session_id: Option<String>,
    /// ws-stream after a successful `auth`; ws-api after `auth:login`.
    pub authenticated: bool,
    pub subscriptions: Vec<WsSubscription>,
    /// Stalled by the admin control: neither read nor written.
    pub stalled: bool,
    pub age_ms: u64,
    pub frames_in: u64,
    pub frames_out: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Stream,
    Api,
}

impl Endpoint {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Endpoint::Stream => "ws-stream",
            Endpoint::Api => "ws-api",
        }
    }
}

/// The account a connection is signed in as.
#[derive(Clone, Debug)]
pub(crate) struct Login {
    pub account: String,
    pub user: String,
}

#[derive(Default)]
pub(crate) struct Info {
    pub session_id: Option<String>,
    pub login: Option<Login>,
    pub subscriptions: BTreeSet<WsSubscription>,
}

impl Info {
    fn subscribed(&self, channel: &str, symbol: Option<&str>) -> bool {
        self.subscriptions.iter().any(|s| s.channel == channel && s.symbol.as_deref() == symbol)
    }
}

/// What other threads hand a connection to write.
pub(crate) enum Out {
    /// A journal event of the connection's account, for a subscribed account channel.
    Account(Event),
    /// A user trade on a symbol the connection follows on `public_trade`.
    PublicTrade(Event),
    /// A finished frame (ws-api replies routed by `x-session-id`).
    Frame(String),
}

/// Entries an outbox may hold before its connection counts as too slow and is dropped.
const OUTBOX_CAP: usize = 100_000;

/// One connection as the rest of the sandbox sees it; its thread (`conn`) owns the socket.
pub(crate) struct Conn {
    pub id: u64,
    pub endpoint: Endpoint,
    pub path: String,
    pub peer: SocketAddr,
    opened: Instant,
    pub info: Mutex<Info>,
    outbox: Mutex<VecDeque<Out>>,
    waker: UnixStream,
    stalled: AtomicBool,
    dropped: AtomicBool,
    closed: AtomicBool,
    /// Highest journal seq queued on this connection, and the highest written and flushed
    /// (the event-before-ack wait compares them: every event up to `delivered` is in the
    /// outbox before `delivered` says so).
    delivered: AtomicU64,
    flushed: AtomicU64,
    acks: AtomicU64,
    frames_in: AtomicU64,
    frames_out: AtomicU64,
}

impl Conn {
    fn new(id: u64, endpoint: Endpoint, path: String, peer: SocketAddr, waker: UnixStream) -> Conn {
        Conn {
            id,
            endpoint,
            path,
            peer,
            opened: Instant::now(),
            info: Mutex::new(Info::default()),
            outbox: Mutex::new(VecDeque::new()),
            waker,
            stalled: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            delivered: AtomicU64::new(0),
            flushed: AtomicU64::new(0),
            acks: AtomicU64::new(0),
            frames_in: AtomicU64::new(0),
            frames_out: AtomicU64::new(0),
        }
    }

    pub(crate) fn info(&self) -> MutexGuard<'_, Info> {
        self.info.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `out` and wakes the connection; an outbox past `OUTBOX_CAP` drops it.
    pub(crate) fn push(&self, out: Out) {
        let mut outbox = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
        if outbox.len() >= OUTBOX_CAP {
            self.dropped.store(true, Ordering::SeqCst);
        } else {
            outbox.push_back(out);
        }
        drop(outbox);
        self.wake();
    }

    fn take_outbox(&self) -> VecDeque<Out> {
        std::mem::take(&mut *self.outbox.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// A byte on the wake-up pair; a full pair already has a wake-up pending.
    fn wake(&self) {
        let _ = (&self.waker).write(&[1]);
    }

    /// The key of the next gateway ack under `style`.
    pub(crate) fn ack_key(&self, style: AckStyle) -> &'static str {
        match style {
            AckStyle::Status => "status",
            AckStyle::Message => "message",
            AckStyle::Alternate => {
                if self.acks.fetch_add(1, Ordering::Relaxed).is_multiple_of(2) {
                    "status"
                } else {
                    "message"
                }
            }
        }
    }

    /// Closed, dropped or stalled: nothing more will be written soon.
    pub(crate) fn silent(&self) -> bool {
        self.closed.load(Ordering::SeqCst) || self.dropped.load(Ordering::SeqCst) || self.stalled.load(Ordering::SeqCst)
    }

    fn listing(&self) -> WsConnection {
        let info = self.info();
        WsConnection {
            id: self.id,
            endpoint: self.endpoint.as_str(),
            path: self.path.clone(),
            peer: self.peer.to_string(),
            session_id: info.session_id.clone(),
            authenticated: info.login.is_some(),
            subscriptions: info.subscriptions.iter().cloned().collect(),
            stalled: self.stalled.load(Ordering::SeqCst),
            age_ms: u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX),
            frames_in: self.frames_in.load(Ordering::Relaxed),
            frames_out: self.frames_out.load(Ordering::Relaxed),
        }
    }
}

/// Counters for `stats`.
#[derive(Default)]
pub(crate) struct Counters {
    pub opened: AtomicU64,
    pub refused: AtomicU64,
    pub frames_in: AtomicU64,
    pub frames_out: AtomicU64,
    pub pings: AtomicU64,
    pub pongs: AtomicU64,
}

/// Every open connection, the timers and limits in force, and the counters.
pub(crate) struct Hub {
    conns: Mutex<BTreeMap<u64, Arc<Conn>>>,
    next_id: AtomicU64,
    timers: Mutex<WsTimers>,
    limits: Mutex<limits::Limits>,
    pub counters: Counters,
    threads: Mutex<Vec<JoinHandle<()>>>,
    stopping: AtomicBool,
    /// When the venue started (the balance push's `created_at`), venue clock, µs.
    started_us: i64,
}

impl Hub {
    pub(crate) fn new(timers: WsTimers, started_us: i64) -> Hub {
        Hub {
            conns: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(1),
            timers: Mutex::new(timers),
            limits: Mutex::new(limits::Limits::default()),
            counters: Counters::default(),
            threads: Mutex::new(Vec::new()),
            stopping: AtomicBool::new(false),
            started_us,
        }
    }

    fn conns(&self) -> MutexGuard<'_, BTreeMap<u64, Arc<Conn>>> {
        self.conns.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn select(&self, keep: impl Fn(&Conn) -> bool) -> Vec<Arc<Conn>> {
        self.conns().values().filter(|c| keep(c)).cloned().collect()
    }

    pub(crate) fn timers(&self) -> WsTimers {
        *self.timers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// New timers for every connection, open ones included (they are woken to notice).
    pub(crate) fn set_timers(&self, timers: WsTimers) {
        *self.timers.lock().unwrap_or_else(|e| e.into_inner()) = timers;
        self.select(|_| true).iter().for_each(|c| c.wake());
    }

    pub(crate) fn connections(&self) -> Vec<WsConnection> {
        self.select(|_| true).iter().map(|c| c.listing()).collect()
    }

    /// Ends connections at once, without a close frame (a network loss as the client sees
    /// it): the one with `id`, or all. Returns how many.
    pub(crate) fn drop_connections(&self, id: Option<u64>) -> usize {
        let chosen = self.select(|c| id.is_none_or(|id| c.id == id));
        for c in &chosen {
            c.dropped.store(true, Ordering::SeqCst);
            c.wake();
        }
        chosen.len()
    }

    /// Stalls (or resumes) connections: a stalled one is neither read nor written, and none
    /// of its timers run, but its socket stays open (a half-open connection as the client
    /// sees it) until the client hangs up. Returns how many.
    pub(crate) fn stall(&self, id: Option<u64>, stall: bool) -> usize {
        let chosen = self.select(|c| id.is_none_or(|id| c.id == id));
        for c in &chosen {
            c.stalled.store(stall, Ordering::SeqCst);
            c.wake();
        }
        chosen.len()
    }

    /// The journal's sink (runs under the engine's lock): queues each event on the
    /// ws-stream connections of its account subscribed to its channel, and a user trade on
    /// the connections following the symbol's `public_trade`.
    pub(crate) fn route(&self, e: &Event) {
        for c in self.conns().values().filter(|c| c.endpoint == Endpoint::Stream) {
            let (own, public) = {
                let info = c.info();
                let own = info.login.as_ref().is_some_and(|l| l.account == e.account)
                    && info.subscribed(e.channel.as_str(), None);
                let public = e.channel == Channel::Trade && info.subscribed("public_trade", e.symbol.as_deref());
                (own, public)
            };
            if own {
                // Queued first, then counted delivered.
                c.push(Out::Account(e.clone()));
                c.delivered.fetch_max(e.seq, Ordering::SeqCst);
            }
            if public {
                c.push(Out::PublicTrade(e.clone()));
            }
        }
    }

    /// ws-api connections whose requests carry `session_id`.
    pub(crate) fn api_sessions(&self, session_id: &str) -> Vec<Arc<Conn>> {
        self.select(|c| c.endpoint == Endpoint::Api && c.info().session_id.as_deref() == Some(session_id))
    }

    /// Whether a ws-stream connection is signed in as `account`.
    pub(crate) fn has_account_stream(&self, account: &str) -> bool {
        self.conns()
            .values()
            .any(|c| c.endpoint == Endpoint::Stream && c.info().login.as_ref().is_some_and(|l| l.account == account))
    }

    /// ws-stream connections signed in as `account`.
    pub(crate) fn account_streams(&self, account: &str) -> Vec<Arc<Conn>> {
        self.select(|c| c.endpoint == Endpoint::Stream && c.info().login.as_ref().is_some_and(|l| l.account == account))
    }

    /// Lists a connection (before its thread starts, so that its end always unlists it).
    fn register(&self, conn: Arc<Conn>) {
        self.conns().insert(conn.id, conn);
    }

    /// Keeps a connection thread's handle for `stop`.
    fn track(&self, thread: JoinHandle<()>) {
        let mut threads = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        // Joining finished threads here keeps the list as short as the open connections.
        let (done, running): (Vec<_>, Vec<_>) = threads.drain(..).partition(|t| t.is_finished());
        done.into_iter().for_each(|t| drop(t.join()));
        *threads = running;
        threads.push(thread);
    }

    fn unregister(&self, conn: &Conn) {
        conn.closed.store(true, Ordering::SeqCst);
        // Its place is free before the listing stops showing it.
        self.limits().release(conn.peer.ip());
        self.conns().remove(&conn.id);
    }

    fn limits(&self) -> MutexGuard<'_, limits::Limits> {
        self.limits.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Ends every connection and joins their threads (the sandbox is stopping).
    pub(crate) fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.select(|_| true).iter().for_each(|c| c.wake());
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}
