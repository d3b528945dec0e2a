//! The WebSocket handshake on the REST listener: `GET /ws-stream/v1`, `/ws-api/v1` (and the
//! same under `/perps`) with `Upgrade: websocket`.
//!
//! Refusals are HTTP answers with the venue's JSON error shape: 405 for another method, 426
//! (with `Sec-WebSocket-Version: 13`) for a request that is not a version-13 upgrade, 400 for
//! a bad `Sec-WebSocket-Key`, 429 beyond the per-IP connection limits (`limits`; with
//! `Retry-After` for the per-minute one), 503 while the sandbox stops. An accepted one is
//! answered 101 through tiny_http, then its socket is found (see `ws` for why) and served by
//! its own thread (`conn::serve`).

use std::net::{SocketAddr, TcpStream};
use std::os::fd::FromRawFd;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use super::{Conn, Endpoint, conn, wire};
use crate::request_log::{Entry, Notes};
use crate::socket;
use crate::state::Shared;

/// The endpoint a request path names, if it is one of the WebSocket paths.
pub(crate) fn endpoint_of(url: &str) -> Option<Endpoint> {
    let path = url.split('?').next().unwrap_or_default();
    match path.strip_prefix("/perps").unwrap_or(path) {
        "/ws-stream/v1" => Some(Endpoint::Stream),
        "/ws-api/v1" => Some(Endpoint::Api),
        _ => None,
    }
}

/// Answers a handshake on a WebSocket path; an accepted one becomes a connection.
pub(crate) fn handle(shared: &Arc<Shared>, rq: tiny_http::Request, endpoint: Endpoint) {
    let headers: Vec<(String, String)> = rq
        .headers()
        .iter()
        .map(|h| (h.field.as_str().as_str().to_ascii_lowercase(), h.value.as_str().to_owned()))
        .collect();
    let url = rq.url().to_owned();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let entry = Entry {
        at_ms: shared.clock.now_ms(),
        method: rq.method().as_str().to_owned(),
        path: path.to_owned(),
        query: query.to_owned(),
        headers: headers.clone(),
        body: Vec::new(),
    };
    // tiny_http's view of the client; behind the TLS front, the front's side of the relay.
    let local_peer = rq.remote_addr().copied();
    let peer = local_peer.map(|p| shared.client_addr(p));
    let decision = check(shared, rq.method(), &headers, peer);
    let (status, verdict) = match &decision {
        Ok(_) => (101, format!("{} connection opened", endpoint.as_str())),
        Err(refusal) => (refusal.status, format!("refused: {}", refusal.message)),
    };
    let line = shared.log().record(&entry, status, &verdict, Notes::default());
    if shared.config.log {
        eprintln!("{line}");
    }
    let (accept, peer, local_peer) = match (decision, peer, local_peer) {
        (Ok(accept), Some(peer), Some(local_peer)) => (accept, peer, local_peer),
        (Err(refusal), _, _) => {
            shared.ws.counters.refused.fetch_add(u64::from(refusal.status == 429), Ordering::Relaxed);
            let _ = rq.respond(refusal.response());
            return;
        }
        // `check` refuses a request without a peer address.
        (Ok(_), _, _) => unreachable!("checked"),
    };
    // Listed before the 101 goes out: a client that sees its handshake done sees itself listed.
    let hub = &shared.ws;
    let (waker, wakee) = match wire::wake_pair() {
        Ok(pair) => pair,
        Err(e) => {
            hub.limits().release(peer.ip());
            let _ = rq.respond(Refusal::new(503, format!("cannot serve a connection: {e}")).response());
            return;
        }
    };
    let id = hub.next_id.fetch_add(1, Ordering::Relaxed);
    let conn = Arc::new(Conn::new(id, endpoint, path.to_owned(), peer, waker));
    hub.register(conn.clone());
    hub.counters.opened.fetch_add(1, Ordering::Relaxed);
    let header = |name: &str, value: &str| tiny_http::Header::from_bytes(name, value).expect("a valid header");
    let response = tiny_http::Response::empty(101).with_header(header("Sec-WebSocket-Accept", &accept));
    let upgraded = rq.upgrade("websocket", response);
    if let Err(e) = start(shared, &conn, local_peer, upgraded, wakee) {
        hub.unregister(&conn);
        eprintln!("perps-sandbox: a WebSocket connection could not be served: {e}");
    }
}

struct Refusal {
    status: u16,
    message: String,
    headers: Vec<(&'static str, String)>,
}

impl Refusal {
    fn new(status: u16, message: impl Into<String>) -> Refusal {
        Refusal { status, message: message.into(), headers: Vec::new() }
    }

    fn response(self) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
        let body = json!({"code": self.status, "message": self.message}).to_string();
        let mut response = tiny_http::Response::from_string(body).with_status_code(self.status);
        let json = tiny_http::Header::from_bytes("Content-Type", "application/json").expect("a valid header");
        response.add_header(json);
        for (name, value) in self.headers {
            response.add_header(tiny_http::Header::from_bytes(name, value).expect("a valid header"));
        }
        response
    }
}

/// The handshake's checks, then the connection limits; the `Sec-WebSocket-Accept` value.
fn check(
    shared: &Shared,
    method: &tiny_http::Method,
    headers: &[(String, String)],
    peer: Option<SocketAddr>,
) -> Result<String, Refusal> {
    let one = |name: &str| {
        let mut found = headers.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str());
        match (found.next(), found.next()) {
            (v, None) => v,
            _ => None,
        }
    };
    if *method != tiny_http::Method::Get {
        return Err(Refusal::new(405, "a WebSocket handshake is a GET"));
    }
    let has =
        |name: &str, token: &str| one(name).is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)));
    if !has("upgrade", "websocket") || !has("connection", "upgrade") {
        let mut r = Refusal::new(426, "this endpoint takes a WebSocket upgrade (Upgrade: websocket)");
        r.headers.push(("Upgrade", "websocket".into()));
        return Err(r);
    }
    if one("sec-websocket-version") != Some("13") {
        let mut r = Refusal::new(426, "Sec-WebSocket-Version must be 13");
        r.headers.push(("Sec-WebSocket-Version", "13".into()));
        return Err(r);
    }
    let key = one("sec-websocket-key").unwrap_or_default();
    if STANDARD.decode(key.trim()).map(|k| k.len()) != Ok(16) {
        return Err(Refusal::new(400, "Sec-WebSocket-Key must be base64 of 16 bytes"));
    }
    let Some(peer) = peer else {
        return Err(Refusal::new(400, "the client's address is unknown"));
    };
    if shared.ws.stopping() {
        return Err(Refusal::new(503, "the venue is stopping"));
    }
    let admitted = shared.ws.limits().admit(
        peer.ip(),
        Instant::now(),
        shared.config.ws_max_connections_per_ip,
        shared.config.ws_max_new_connections_per_minute,
    );
    if let Err(refused) = admitted {
        let mut r = Refusal::new(429, refused.message);
        if let Some(s) = refused.retry_after_s {
            r.headers.push(("Retry-After", s.to_string()));
        }
        return Err(r);
    }
    Ok(tungstenite::handshake::derive_accept_key(key.trim().as_bytes()))
}

/// Finds the upgraded socket and starts the connection's thread.
fn start(
    shared: &Arc<Shared>,
    conn: &Arc<Conn>,
    local_peer: SocketAddr,
    upgraded: Box<dyn tiny_http::ReadWrite + Send>,
    wakee: std::os::unix::net::UnixStream,
) -> std::io::Result<()> {
    let fd = socket::duplicate_connection(shared.listener, local_peer)
        .ok_or_else(|| std::io::Error::other("the upgraded socket was not found"))?;
    // SAFETY: `fd` is a fresh duplicate that nothing else owns.
    let socket = unsafe { TcpStream::from_raw_fd(fd) };
    let wire = wire::Wire::new(upgraded, socket)?;
    let (thread_shared, thread_conn) = (shared.clone(), conn.clone());
    let thread = std::thread::Builder::new()
        .name(format!("perps-sandbox-ws-{}", conn.id))
        .spawn(move || conn::serve(thread_shared, thread_conn, wire, wakee))?;
    shared.ws.track(thread);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_websocket_paths_at_the_root_and_under_perps() {
        assert_eq!(endpoint_of("/ws-stream/v1"), Some(Endpoint::Stream));
        assert_eq!(endpoint_of("/perps/ws-stream/v1?x=1"), Some(Endpoint::Stream));
        assert_eq!(endpoint_of("/ws-api/v1"), Some(Endpoint::Api));
        assert_eq!(endpoint_of("/perps/ws-api/v1"), Some(Endpoint::Api));
        for other in ["/ws-api/v2", "/auth/ws-api/v1", "/perpsws-api/v1", "/api/ws-api/v1", "/ws-stream/v1/"] {
            assert_eq!(endpoint_of(other), None, "{other}");
        }
    }
}
