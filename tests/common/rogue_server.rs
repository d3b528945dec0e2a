//! A purpose-built misbehaving HTTP server on 127.0.0.1 for the server-fault tests.
//!
//! Raw `std::net` sockets, one thread per connection: it reads each request (request line,
//! headers, `Content-Length` body), records it, and then does whatever the test's script
//! says — answer properly, write half an answer, stall, reset the connection (RST, through
//! `SO_LINGER` 0), close it, or write bytes that are not HTTP at all. Every request it read
//! is kept, so a test can prove how many times an order reached it and which headers came
//! with it (the bearer token must never go to a redirect target).
//!
//! Included with `#[path = "common/rogue_server.rs"]` by the tests that need it.
#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// One request as the server read it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    /// The request target as sent (path and query).
    pub target: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// What the server does with a connection after reading one request.
#[derive(Clone, Debug)]
pub enum Step {
    /// Write these bytes (flushed at once).
    Write(Vec<u8>),
    /// Wait.
    Sleep(Duration),
    /// Abort the connection: RST instead of FIN (`SO_LINGER` with a zero timeout).
    Reset,
    /// Close the connection normally (FIN).
    Close,
}

/// What the server does with a connection as soon as it is accepted, before reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnAccept {
    /// Read requests and run the script for each.
    Serve,
    /// Close at once without reading a byte.
    Close,
    /// Reset without reading a byte, as soon as the request starts arriving (waiting for it
    /// keeps the test deterministic: the client has written by then).
    Reset,
}

type Script = dyn Fn(&Seen, usize) -> Vec<Step> + Send + Sync;

/// A running rogue server; dropping it stops the listener (connection threads end with
/// their connections).
pub struct Rogue {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Rogue {
    /// Start a server whose script gets each request and its 0-based index among all the
    /// requests this server has read. A script that ends without `Close` or `Reset` keeps
    /// the connection alive for the next request.
    pub fn start(script: impl Fn(&Seen, usize) -> Vec<Step> + Send + Sync + 'static) -> Rogue {
        Rogue::start_with(OnAccept::Serve, script)
    }

    pub fn start_with(
        on_accept: OnAccept,
        script: impl Fn(&Seen, usize) -> Vec<Step> + Send + Sync + 'static,
    ) -> Rogue {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let script: Arc<Script> = Arc::new(script);
        let thread = {
            let (seen, accepted, stop) = (seen.clone(), accepted.clone(), stop.clone());
            std::thread::Builder::new()
                .name("rogue-accept".into())
                .spawn(move || {
                    while !stop.load(Ordering::SeqCst) {
                        match listener.accept() {
                            Ok((stream, _)) => {
                                accepted.fetch_add(1, Ordering::SeqCst);
                                stream.set_nonblocking(false).unwrap();
                                let (seen, script) = (seen.clone(), script.clone());
                                std::thread::spawn(move || serve(stream, on_accept, &seen, &*script));
                            }
                            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                                std::thread::sleep(Duration::from_millis(2));
                            }
                            Err(_) => std::thread::sleep(Duration::from_millis(2)),
                        }
                    }
                })
                .unwrap()
        };
        Rogue { addr, seen, accepted, stop, thread: Some(thread) }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request read so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Requests read whose path (without query) ends with `suffix`.
    pub fn count(&self, suffix: &str) -> usize {
        self.seen().iter().filter(|s| s.path().ends_with(suffix)).count()
    }

    /// TCP connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for Rogue {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(mut stream: TcpStream, on_accept: OnAccept, seen: &Mutex<Vec<Seen>>, script: &Script) {
    match on_accept {
        OnAccept::Close => return,
        OnAccept::Reset => {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = stream.peek(&mut [0u8; 1]);
            return reset(stream);
        }
        OnAccept::Serve => {}
    }
    // A request that never completes must not keep the thread forever.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
    let mut buffered = Vec::new();
    loop {
        let Some(request) = read_request(&mut stream, &mut buffered) else { return };
        let index = {
            let mut all = seen.lock().unwrap();
            all.push(request.clone());
            all.len() - 1
        };
        for step in script(&request, index) {
            match step {
                Step::Write(bytes) => {
                    if stream.write_all(&bytes).and_then(|_| stream.flush()).is_err() {
                        return;
                    }
                }
                Step::Sleep(d) => std::thread::sleep(d),
                Step::Reset => return reset(stream),
                Step::Close => {
                    let _ = stream.shutdown(std::net::Shutdown::Write);
                    // Drain what the client still sends, so the close stays a FIN (no RST).
                    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
                    let mut sink = [0u8; 1024];
                    while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
                    return;
                }
            }
        }
    }
}

/// Close with RST: SO_LINGER on with a zero timeout makes close() abort the connection.
fn reset(stream: TcpStream) {
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: a valid socket descriptor and a correctly sized option value.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&raw const linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    drop(stream);
}

/// Read one request (headers and a `Content-Length` body); `None` at end of stream.
fn read_request(stream: &mut TcpStream, buffered: &mut Vec<u8>) -> Option<Seen> {
    let message = read_message(stream, buffered)?;
    let mut request_line = message.start_line.split(' ');
    let method = request_line.next()?.to_owned();
    let target = request_line.next()?.to_owned();
    Some(Seen { method, target, body: message.body().to_vec(), headers: message.headers })
}

/// One HTTP/1.1 message as read: its first line, its headers, and all of its bytes.
pub struct Message {
    /// The request line or the status line.
    pub start_line: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The message exactly as it arrived: head, blank line, body.
    pub raw: Vec<u8>,
    body_start: usize,
}

impl Message {
    pub fn body(&self) -> &[u8] {
        &self.raw[self.body_start..]
    }
}

/// Read one message (a request or an answer: head and a `Content-Length` body) from
/// `stream`, after the bytes already in `buffered`, which keeps whatever follows it.
/// `None` at end of stream.
pub fn read_message(stream: &mut impl Read, buffered: &mut Vec<u8>) -> Option<Message> {
    let header_end = loop {
        if let Some(i) = find(buffered, b"\r\n\r\n") {
            break i;
        }
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buffered.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buffered[..header_end]).into_owned();
    let mut lines = head.split("\r\n");
    let start_line = lines.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize =
        headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let body_start = header_end + 4;
    while buffered.len() < body_start + length {
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buffered.extend_from_slice(&chunk[..n]),
        }
    }
    let raw = buffered.drain(..body_start + length).collect();
    Some(Message { start_line, headers, raw, body_start })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

// ---- answers ----

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// A complete answer with `Content-Length` and extra headers (`"Name: value"`).
pub fn response(status: u16, extra_headers: &[&str], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for h in extra_headers {
        out.push_str(h);
        out.push_str("\r\n");
    }
    out.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

/// A JSON answer, connection kept alive.
pub fn json(status: u16, body: &str) -> Vec<Step> {
    vec![Step::Write(response(status, &["Content-Type: application/json"], body.as_bytes()))]
}

/// A status line and headers with a `Content-Length`, but no body yet.
pub fn head_only(status: u16, content_length: usize) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {content_length}\r\n\r\n",
        reason(status)
    )
    .into_bytes()
}

/// A status line and headers announcing a chunked body.
pub fn chunked_head(status: u16) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        reason(status)
    )
    .into_bytes()
}

/// One chunk of a chunked body.
pub fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

pub fn ms(n: u64) -> Step {
    Step::Sleep(Duration::from_millis(n))
}
