//! Venues written as short scripts on 127.0.0.1, for the stream tests that need a venue
//! other than the test venue (`tests/common/ws_server.rs`): one that answers in another
//! form, misbehaves, or is hostile. Each connection runs the script in a thread of its own.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tungstenite::{Message, WebSocket};

/// A venue whose every connection runs `script(index, tcp)` on the raw TCP socket: the
/// script does the WebSocket handshake itself (`tungstenite::accept`), or answers HTTP.
pub fn raw_venue(script: impl Fn(usize, TcpStream) + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let script = Arc::new(script);
    std::thread::spawn(move || {
        let count = AtomicUsize::new(0);
        for tcp in listener.incoming() {
            let Ok(tcp) = tcp else { break };
            let (i, script) = (count.fetch_add(1, Ordering::SeqCst), script.clone());
            std::thread::spawn(move || script(i, tcp));
        }
    });
    format!("http://{addr}")
}

/// A venue whose every connection runs `script(index, socket)` after the handshake.
pub fn venue(script: impl Fn(usize, WebSocket<TcpStream>) + Send + Sync + 'static) -> String {
    raw_venue(move |i, tcp| {
        if let Ok(ws) = tungstenite::accept(tcp) {
            script(i, ws)
        }
    })
}

pub fn read_json(ws: &mut WebSocket<TcpStream>) -> Value {
    loop {
        match ws.read() {
            Ok(Message::Text(t)) => return serde_json::from_str(t.as_str()).unwrap(),
            Ok(_) => continue,
            Err(e) => panic!("the client went away: {e}"),
        }
    }
}

pub fn send(ws: &mut WebSocket<TcpStream>, text: &str) {
    ws.send(Message::text(text.to_owned())).unwrap();
}

/// Keep the connection open (answering pings) until the client leaves or `limit` passes.
pub fn hold(mut ws: WebSocket<TcpStream>, limit: Duration) {
    let _ = ws.get_mut().set_read_timeout(Some(Duration::from_millis(20)));
    let start = Instant::now();
    while start.elapsed() < limit {
        match ws.read() {
            Ok(_) | Err(tungstenite::Error::Io(_)) => {}
            Err(_) => return,
        }
    }
}

/// An order venue: answers the login with `login(request_id)`, then every order frame with
/// `replies` (their "RID" replaced by the order's request_id, "RID_UPPER" by it in upper case).
pub fn order_venue(login: impl Fn(&str) -> String + Send + Sync + 'static, replies: Vec<String>) -> String {
    order_venue_answering(move |_, id| vec![(Duration::ZERO, login(id))], replies)
}

/// As `order_venue`, but connection `i`'s login is answered by the frames of
/// `login(i, request_id)`, each sent after its delay.
pub fn order_venue_answering(
    login: impl Fn(usize, &str) -> Vec<(Duration, String)> + Send + Sync + 'static,
    replies: Vec<String>,
) -> String {
    let (login, replies) = (Arc::new(login), Arc::new(replies));
    venue(move |i, mut ws| {
        let frame = read_json(&mut ws);
        for (delay, answer) in login(i, frame["request_id"].as_str().unwrap()) {
            std::thread::sleep(delay);
            if ws.send(Message::text(answer)).is_err() {
                return;
            }
        }
        let _ = ws.get_mut().set_read_timeout(Some(Duration::from_millis(20)));
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            match ws.read() {
                Ok(Message::Text(t)) => {
                    let order: Value = serde_json::from_str(t.as_str()).unwrap();
                    for reply in replies.iter() {
                        let id = order["request_id"].as_str().unwrap();
                        let reply = reply.replace("RID_UPPER", &id.to_uppercase()).replace("RID", id);
                        ws.send(Message::text(reply)).unwrap();
                    }
                }
                Ok(_) | Err(tungstenite::Error::Io(_)) => {}
                Err(_) => return,
            }
        }
    })
}

pub fn logged_in(request_id: &str) -> String {
    json!({ "code": 0, "message": "success", "request_id": request_id }).to_string()
}
