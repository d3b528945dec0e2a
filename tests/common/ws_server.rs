//! A WebSocket test venue on 127.0.0.1 for the stream tests: both endpoints of the venue
//! (`/ws-stream/v1` and `/ws-api/v1`, also under any prefix) with the documented
//! behaviour, switches for the live incidents, and ways to misbehave.
//!
//! Raw `std::net` + tungstenite's server side, one thread per connection. Each connection
//! thread alternates between reading (short socket timeout) and writing what the test
//! queued for it. What it does:
//! - market stream: answers `{"auth":…}` with `{"seq","channel":"auth","data":{"code","msg"}}`
//!   (code 200 or 0, or a refusal), records subscriptions, pushes `{"seq","channel",
//!   "symbol"?,"data"}` on command with a per-connection counter (connection-wide, as the
//!   venue's examples show) — gaps and regressions on command;
//! - order stream: answers `auth:login`, and `order:new` / `order:cancel` with an
//!   "accepted" ack (under `status` or `message`) then the outcome (success, or a rejection
//!   such as "alo order rejected"), optionally after pushing an account `order` event to the
//!   market connections first;
//! - pings every N ms; stalls (half-open: stops reading and writing, keeps the socket);
//!   drops every connection; sends binary frames, invalid JSON, oversized frames, a close in
//!   the middle of a fragmented message, or any raw bytes.
//!
//! Included with `#[path = "common/ws_server.rs"]` by the tests (and the `ws_test_server`
//! example, which the C tests run).
#![allow(dead_code)]

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::io::{ErrorKind, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tungstenite::Message;
use tungstenite::handshake::server::{Request, Response};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckStyle {
    /// `{"code":0,"status":"accepted","request_id"}` (the newest docs)
    Status,
    /// `{"code":0,"message":"accepted","request_id"}` (seen live)
    Message,
    /// no ack: the outcome only
    None,
}

/// How the test venue behaves; change it at any time through `WsServer::config`.
#[derive(Clone, Debug)]
pub struct Config {
    /// Code of a successful auth answer (200 per the docs, 0 seen live).
    pub auth_code: i64,
    /// Refuse every auth with this message.
    pub refuse_auth: Option<String>,
    pub ack: AckStyle,
    /// `None`: success; `Some(message)`: code 400 with it (e.g. "alo order rejected").
    pub reject: Option<String>,
    /// Push an account `order` event to the authenticated market connections before the ack.
    pub account_event_before_ack: bool,
    /// Time between the ack and the outcome.
    pub outcome_delay: Duration,
    /// WebSocket pings every this long (`None`: never).
    pub ping_every: Option<Duration>,
    /// Answer nothing at all to orders.
    pub silent_orders: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            auth_code: 200,
            refuse_auth: None,
            ack: AckStyle::Status,
            reject: None,
            account_event_before_ack: false,
            outcome_delay: Duration::ZERO,
            ping_every: None,
            silent_orders: false,
        }
    }
}

/// Something queued for a connection to send.
#[derive(Clone, Debug)]
pub enum Out {
    Text(String),
    Binary(Vec<u8>),
    /// Bytes written to the socket as they are (hand-made frames).
    Raw(Vec<u8>),
    /// Shut the TCP connection down without a close frame.
    Drop,
}

pub struct Conn {
    pub id: usize,
    pub path: String,
    /// Every text frame received, in order.
    pub received: Mutex<Vec<String>>,
    /// (channel, symbol) subscribed on this connection (auth streams included).
    pub subscriptions: Mutex<Vec<(String, Option<String>)>>,
    pub authed: AtomicBool,
    outbox: Mutex<VecDeque<Out>>,
    seq: AtomicU64,
    stalled: AtomicBool,
    pub closed: AtomicBool,
}

impl Conn {
    pub fn is_market(&self) -> bool {
        self.path.ends_with("/ws-stream/v1")
    }
    pub fn send(&self, out: Out) {
        self.outbox.lock().unwrap().push_back(out);
    }
    /// How many queued sends this connection has not written yet (a flood keeps it small).
    pub fn backlog(&self) -> usize {
        self.outbox.lock().unwrap().len()
    }
    /// The next `seq` of this connection.
    pub fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::SeqCst) + 1
    }
    /// Skip `n` numbers (a gap) or, negative, go back (a regression).
    pub fn shift_seq(&self, n: i64) {
        if n >= 0 {
            self.seq.fetch_add(n as u64, Ordering::SeqCst);
        } else {
            self.seq.fetch_sub((-n) as u64, Ordering::SeqCst);
        }
    }
    pub fn frames(&self) -> Vec<Value> {
        self.received.lock().unwrap().iter().filter_map(|t| serde_json::from_str(t).ok()).collect()
    }
}

pub struct WsServer {
    pub addr: SocketAddr,
    pub config: Arc<Mutex<Config>>,
    conns: Arc<Mutex<Vec<Arc<Conn>>>>,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl WsServer {
    pub fn start(config: Config) -> WsServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let config = Arc::new(Mutex::new(config));
        let conns: Arc<Mutex<Vec<Arc<Conn>>>> = Arc::default();
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (config, conns, accepted, stop) = (config.clone(), conns.clone(), accepted.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((tcp, _)) => {
                            let id = accepted.fetch_add(1, Ordering::SeqCst);
                            let (config, conns, stop) = (config.clone(), conns.clone(), stop.clone());
                            std::thread::spawn(move || serve(tcp, id, config, conns, stop));
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(2)),
                        Err(_) => break,
                    }
                }
            })
        };
        WsServer { addr, config, conns, accepted, stop, thread: Some(thread) }
    }

    /// `ws://127.0.0.1:PORT`, the root the client's options point at.
    pub fn url(&self) -> String {
        format!("ws://{}", self.addr)
    }

    /// A `perps_url` whose derived stream URLs are this server's.
    pub fn perps_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn set(&self, change: impl FnOnce(&mut Config)) {
        change(&mut self.config.lock().unwrap());
    }

    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// Connections whose upgrade request was answered (a failed handshake's is closed),
    /// oldest first.
    pub fn conns(&self) -> Vec<Arc<Conn>> {
        self.conns.lock().unwrap().clone()
    }

    pub fn open_conns(&self) -> Vec<Arc<Conn>> {
        self.conns().into_iter().filter(|c| !c.closed.load(Ordering::SeqCst)).collect()
    }

    /// Wait until `pred` holds for the connections (panics after `limit`).
    pub fn wait_for(&self, limit: Duration, what: &str, pred: impl Fn(&[Arc<Conn>]) -> bool) {
        let deadline = Instant::now() + limit;
        while !pred(&self.conns()) {
            assert!(Instant::now() < deadline, "test venue: timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Push `data` on `channel` (and `symbol`) to every open market connection subscribed
    /// to it, each with its own next `seq`.
    pub fn push(&self, channel: &str, symbol: Option<&str>, data: Value) -> usize {
        let mut sent = 0;
        for conn in self.open_conns().iter().filter(|c| c.is_market()) {
            let subscribed =
                conn.subscriptions.lock().unwrap().iter().any(|(c, s)| c == channel && s.as_deref() == symbol);
            if subscribed {
                let mut frame = json!({ "seq": conn.next_seq(), "channel": channel, "data": data });
                if let Some(symbol) = symbol {
                    frame["symbol"] = symbol.into();
                }
                conn.send(Out::Text(frame.to_string()));
                sent += 1;
            }
        }
        sent
    }

    /// Queue the same thing on every open connection (of the market stream or not).
    pub fn send_all(&self, market: bool, out: Out) {
        for conn in self.open_conns().iter().filter(|c| c.is_market() == market) {
            conn.send(out.clone());
        }
    }

    /// Cut every open connection (TCP shutdown, no close frame).
    pub fn drop_all(&self) {
        for conn in self.open_conns() {
            conn.send(Out::Drop);
        }
    }

    /// Half-open: the connections stop reading and writing (no pings either) but stay open.
    pub fn stall_all(&self) {
        for conn in self.open_conns() {
            conn.stalled.store(true, Ordering::SeqCst);
        }
    }
}

impl Drop for WsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.drop_all();
    }
}

fn serve(
    tcp: TcpStream,
    id: usize,
    config: Arc<Mutex<Config>>,
    conns: Arc<Mutex<Vec<Arc<Conn>>>>,
    stop: Arc<AtomicBool>,
) {
    let _ = tcp.set_nonblocking(false);
    let _ = tcp.set_nodelay(true);
    let raw = tcp.try_clone().unwrap();
    let new_conn = |path: String| {
        Arc::new(Conn {
            id,
            path,
            received: Mutex::default(),
            subscriptions: Mutex::default(),
            authed: AtomicBool::new(false),
            outbox: Mutex::default(),
            seq: AtomicU64::new(0),
            stalled: AtomicBool::new(false),
            closed: AtomicBool::new(false),
        })
    };
    let mut registered = None;
    // The connection is registered before the upgrade's answer is written: once the client
    // has read it (and reported `connected`), `drop_all` or `stall_all` must find it.
    #[allow(clippy::result_large_err)] // tungstenite's callback signature
    let callback = |request: &Request, response: Response| {
        let conn = new_conn(request.uri().path().to_owned());
        conns.lock().unwrap().push(conn.clone());
        registered = Some(conn);
        Ok(response)
    };
    // `.ok()`: a failed handshake's error holds the callback (and its borrow).
    let accepted = tungstenite::accept_hdr(tcp, callback).ok();
    let Some(conn) = registered else { return };
    let Some(mut ws) = accepted else {
        conn.closed.store(true, Ordering::SeqCst);
        return;
    };
    let _ = raw.set_read_timeout(Some(Duration::from_millis(2)));
    let mut last_ping = Instant::now();
    let mut delayed: Vec<(Instant, String)> = Vec::new();
    'life: while !stop.load(Ordering::SeqCst) {
        if conn.stalled.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(5));
            if conn.outbox.lock().unwrap().iter().any(|o| matches!(o, Out::Drop)) {
                break;
            }
            continue;
        }
        let ping_every = config.lock().unwrap().ping_every;
        if let Some(every) = ping_every
            && last_ping.elapsed() >= every
        {
            last_ping = Instant::now();
            if ws.send(Message::Ping(Vec::new().into())).is_err() {
                break;
            }
        }
        let now = Instant::now();
        let (due, later): (Vec<_>, Vec<_>) = delayed.drain(..).partition(|(at, _)| *at <= now);
        delayed = later;
        for (_, text) in due {
            conn.send(Out::Text(text));
        }
        loop {
            let next = conn.outbox.lock().unwrap().pop_front();
            let Some(out) = next else { break };
            let written = match out {
                Out::Text(t) => ws.send(Message::text(t)).is_ok(),
                Out::Binary(b) => ws.send(Message::binary(b)).is_ok(),
                Out::Raw(bytes) => ws.get_mut().write_all(&bytes).and_then(|_| ws.get_mut().flush()).is_ok(),
                Out::Drop => {
                    let _ = raw.shutdown(Shutdown::Both);
                    break 'life;
                }
            };
            if !written {
                break 'life;
            }
        }
        match ws.read() {
            Ok(Message::Text(text)) => {
                conn.received.lock().unwrap().push(text.to_string());
                let config = config.lock().unwrap().clone();
                for reply in answer(&conn, &conns, &config, text.as_str(), &mut delayed) {
                    conn.send(Out::Text(reply));
                }
            }
            Ok(Message::Close(_)) => {}
            Ok(_) => {}
            Err(tungstenite::Error::Io(e)) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    conn.closed.store(true, Ordering::SeqCst);
}

/// The venue's answers to one frame from the client.
fn answer(
    conn: &Conn,
    conns: &Mutex<Vec<Arc<Conn>>>,
    config: &Config,
    text: &str,
    delayed: &mut Vec<(Instant, String)>,
) -> Vec<String> {
    let Ok(frame) = serde_json::from_str::<Value>(text) else { return vec![] };
    if conn.is_market() {
        if let Some(auth) = frame.get("auth") {
            if let Some(refusal) = &config.refuse_auth {
                return vec![
                    json!({ "seq": conn.next_seq(), "channel": "auth", "data": { "code": 401, "msg": refusal } })
                        .to_string(),
                ];
            }
            for stream in auth.get("streams").and_then(Value::as_array).into_iter().flatten() {
                let channel = stream["channel"].as_str().unwrap_or("").to_owned();
                let symbol = stream.get("symbol").and_then(Value::as_str).map(str::to_owned);
                conn.subscriptions.lock().unwrap().push((channel, symbol));
            }
            conn.authed.store(true, Ordering::SeqCst);
            return vec![json!({ "seq": conn.next_seq(), "channel": "auth", "data": { "code": config.auth_code, "msg": "success" } }).to_string()];
        }
        if let Some(sub) = frame.get("subscribe") {
            let channel = sub["channel"].as_str().unwrap_or("").to_owned();
            let symbol = sub.get("symbol").and_then(Value::as_str).map(str::to_owned);
            conn.subscriptions.lock().unwrap().push((channel, symbol));
        }
        return vec![];
    }
    let request_id = frame["request_id"].as_str().unwrap_or("").to_owned();
    match frame["method"].as_str() {
        Some("auth:login") => match &config.refuse_auth {
            Some(refusal) => vec![json!({ "code": 401, "message": refusal, "request_id": request_id }).to_string()],
            None => {
                conn.authed.store(true, Ordering::SeqCst);
                vec![json!({ "code": config.auth_code, "message": "success", "request_id": request_id }).to_string()]
            }
        },
        Some("order:new" | "order:cancel") if !config.silent_orders => {
            if config.account_event_before_ack {
                let params: Value =
                    serde_json::from_str(frame["params"].as_str().unwrap_or("{}")).unwrap_or(Value::Null);
                let event = json!({ "cl_ord_id": params["cl_ord_id"], "symbol": params["symbol"], "status": "open" });
                for market in conns.lock().unwrap().iter().filter(|c| c.is_market() && c.authed.load(Ordering::SeqCst))
                {
                    let subscribed = market.subscriptions.lock().unwrap().iter().any(|(c, _)| c == "order");
                    if subscribed {
                        market.send(Out::Text(
                            json!({ "seq": market.next_seq(), "channel": "order", "data": event }).to_string(),
                        ));
                    }
                }
                // Let the account event go out first.
                std::thread::sleep(Duration::from_millis(20));
            }
            let mut replies = Vec::new();
            match config.ack {
                AckStyle::Status => replies.push(json!({ "code": 0, "status": "accepted", "request_id": request_id })),
                AckStyle::Message => {
                    replies.push(json!({ "code": 0, "message": "accepted", "request_id": request_id }))
                }
                AckStyle::None => {}
            }
            let outcome = match &config.reject {
                None => json!({ "code": 0, "message": "success", "request_id": request_id }),
                Some(message) => json!({ "code": 400, "message": message, "request_id": request_id }),
            };
            if config.outcome_delay.is_zero() {
                replies.push(outcome);
            } else {
                delayed.push((Instant::now() + config.outcome_delay, outcome.to_string()));
            }
            replies.into_iter().map(|r| r.to_string()).collect()
        }
        _ => vec![],
    }
}

/// A hand-made server frame (unmasked): FIN flag, opcode, payload.
pub fn raw_frame(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![(if fin { 0x80 } else { 0 }) | opcode];
    match payload.len() {
        n if n < 126 => out.push(n as u8),
        n if n <= 0xffff => {
            out.push(126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
    out
}
