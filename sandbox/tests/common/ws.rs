//! A WebSocket client written by hand for the sandbox's tests: tungstenite over a plain or
//! rustls stream, JSON frames, reads with a deadline. Never the library.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{Signer as _, SigningKey};
use serde_json::{Value, json};
use tungstenite::protocol::CloseFrame;
use tungstenite::{Error, Message, WebSocket};

pub trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

pub struct Client {
    pub ws: WebSocket<Box<dyn Stream>>,
    tcp: TcpStream,
}

/// How a connection ended, as the client saw it.
#[derive(Debug)]
pub enum Ended {
    /// A close frame (code, reason).
    Closed(u16, String),
    /// The socket ended without a close frame.
    Dropped(String),
}

impl Client {
    pub fn connect(url: &str) -> Client {
        Client::try_connect(url).unwrap_or_else(|e| panic!("connect {url}: {e}"))
    }

    pub fn try_connect(url: &str) -> Result<Client, Error> {
        let tcp = TcpStream::connect(host_port(url)).map_err(Error::Io)?;
        tcp.set_nodelay(true).unwrap();
        let stream: Box<dyn Stream> = Box::new(tcp.try_clone().unwrap());
        let (ws, _) = tungstenite::client(url, stream).map_err(|e| match e {
            tungstenite::HandshakeError::Failure(e) => e,
            tungstenite::HandshakeError::Interrupted(_) => panic!("blocking handshake interrupted"),
        })?;
        Ok(Client { ws, tcp })
    }

    /// `wss://` with the sandbox's CA file as the only root.
    pub fn connect_tls(url: &str, ca_file: &std::path::Path) -> Client {
        use rustls::pki_types::pem::PemObject;
        let tcp = TcpStream::connect(host_port(url)).unwrap();
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls::pki_types::CertificateDer::pem_file_iter(ca_file).unwrap() {
            roots.add(cert.unwrap()).unwrap();
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
        let tls = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
        let stream: Box<dyn Stream> = Box::new(rustls::StreamOwned::new(tls, tcp.try_clone().unwrap()));
        let (ws, _) = tungstenite::client(url, stream).unwrap_or_else(|e| panic!("connect {url}: {e}"));
        Client { ws, tcp }
    }

    pub fn send(&mut self, frame: &Value) {
        self.send_text(&frame.to_string());
    }

    pub fn send_text(&mut self, text: &str) {
        self.ws.send(Message::text(text)).unwrap();
    }

    /// The next message of any kind (pings included; tungstenite answers them), or `None`
    /// after `timeout`. Panics if the connection ends.
    pub fn next_message(&mut self, timeout: Duration) -> Option<Message> {
        match self.read(timeout) {
            Ok(m) => m,
            Err(ended) => panic!("the connection ended: {ended:?}"),
        }
    }

    fn read(&mut self, timeout: Duration) -> Result<Option<Message>, Ended> {
        self.tcp.set_read_timeout(Some(timeout.max(Duration::from_millis(1)))).unwrap();
        match self.ws.read() {
            Ok(Message::Close(frame)) => {
                let (code, reason) =
                    frame.map_or((1005, String::new()), |f: CloseFrame| (f.code.into(), f.reason.to_string()));
                // Answer the close so the server can finish; errors do not matter here.
                let _ = self.ws.flush();
                Err(Ended::Closed(code, reason))
            }
            Ok(m) => Ok(Some(m)),
            Err(Error::Io(e)) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                Ok(None)
            }
            Err(e) => Err(Ended::Dropped(e.to_string())),
        }
    }

    /// The next text frame as JSON (control frames skipped), or `None` after `timeout`.
    pub fn next_json(&mut self, timeout: Duration) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            match self.next_message(left)? {
                Message::Text(t) => return Some(serde_json::from_str(t.as_str()).expect("a JSON text frame")),
                Message::Binary(_) => panic!("a binary frame"),
                _ => {}
            }
        }
    }

    /// A JSON frame already received (in the socket's buffer or tungstenite's), without
    /// waiting at all.
    pub fn ready_json(&mut self) -> Option<Value> {
        self.tcp.set_nonblocking(true).unwrap();
        let read = self.ws.read();
        self.tcp.set_nonblocking(false).unwrap();
        match read {
            Ok(Message::Text(t)) => Some(serde_json::from_str(t.as_str()).expect("a JSON text frame")),
            Ok(other) => panic!("expected a text frame, got {other:?}"),
            Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => None,
            Err(e) => panic!("the connection ended: {e}"),
        }
    }

    /// The first JSON frame for which `wanted` holds, within `timeout` (others are skipped).
    pub fn expect(&mut self, timeout: Duration, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_json(left) {
                Some(v) if wanted(&v) => return v,
                Some(v) => seen.push(v),
                None => panic!("no {what} within {timeout:?}; other frames: {seen:?}"),
            }
        }
    }

    /// Every message until the connection ends or `timeout` passes.
    pub fn until_end(&mut self, timeout: Duration) -> (Vec<Message>, Option<Ended>) {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return (seen, None);
            }
            match self.read(left) {
                Ok(Some(m)) => seen.push(m),
                Ok(None) => {}
                Err(ended) => return (seen, Some(ended)),
            }
        }
    }
}

fn host_port(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split('/').next().unwrap().to_owned()
}

/// A ws-api request with `params` as a JSON string.
pub fn request(session_id: &str, request_id: &str, method: &str, params: &Value) -> Value {
    json!({"session_id": session_id, "request_id": request_id, "method": method, "params": params.to_string()})
}

/// A signed ws-api order request: the v1 signature over the exact params string.
pub fn signed(session_id: &str, request_id: &str, method: &str, params: &str, key: &SigningKey) -> Value {
    let id = uuid::Uuid::new_v4().to_string();
    let ts = super::now_ms().to_string();
    signed_with(session_id, request_id, method, params, key, &id, &ts, true)
}

/// `signed` with a chosen `x-request-id`, timestamp, and with or without the version header.
#[allow(clippy::too_many_arguments)]
pub fn signed_with(
    session_id: &str,
    request_id: &str,
    method: &str,
    params: &str,
    key: &SigningKey,
    x_request_id: &str,
    ts: &str,
    version: bool,
) -> Value {
    let signature = key.sign(format!("v1,{x_request_id},{ts},{params}").as_bytes());
    let mut header = json!({
        "x-request-id": x_request_id,
        "x-request-timestamp": ts,
        "x-request-signature": STANDARD.encode(signature.to_bytes()),
    });
    if version {
        header["x-request-sign-version"] = json!("v1");
    }
    json!({"session_id": session_id, "request_id": request_id, "method": method, "header": header, "params": params})
}
