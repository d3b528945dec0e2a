//! A hostile venue on the wire: a stream (market without a session, market with one, or the
//! order stream) connects to a server on 127.0.0.1 that answers with the fuzz input, so the
//! library's upgrade, framing, supervision, decoding and redaction run as in production.
//! The first byte: bits 0–1 pick the stream (0 or 3: market, 1: market with a session, 2:
//! order stream); bit 2 sends the rest as raw bytes after the upgrade (any framing at all),
//! else as text frames separated by 0xFF (each framed by the server, its bytes unchecked:
//! invalid UTF-8 included); bit 3 makes the part before the first 0xFE the raw answer to the
//! upgrade request (`@ACCEPT` in it becomes the right Sec-WebSocket-Accept). Before the rest,
//! the server answers the auth frame or the login as the venue does, and reads the order the
//! order stream then sends. In the input, `@T` becomes the session's token, `@R` the login's
//! `request_id` and `@O` the order's.
//! Invariants: no panic, no sanitizer report; every event is one JSON object naming its
//! channel; for a stream with a session, neither an error (of the open or later) nor an event
//! quotes the token (escapes read) — a push on a known channel, public or account, included
//! (README "No secret in an event"); closing and freeing the stream take under 3 s.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perps::client::Client;
use perps::client::options::ClientOptions;
use perps::session::Session;
use perps::stream::Stream;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

const TOKEN: &str = "fuzz-wire-token-7Qx2Lp";
/// RFC 8032 test 1 seed (base58).
const SEED_B58: &str = "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb";
const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"alo","reduce_only":false}"#;
const SUBS: &str = r#"[{"channel":"depth_book","symbol":"BTC-USD"},{"channel":"price","symbol":"BTC-USD"}]"#;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Market,
    Account,
    Orders,
}

/// What the next connection is answered with (taken by the first connection of a run; any
/// later one, a reconnection, is closed at once).
struct Plan {
    kind: Kind,
    raw: bool,
    upgrade: Option<Vec<u8>>,
    payload: Vec<u8>,
}

struct Server {
    url: String,
    plan: Mutex<Option<Plan>>,
    /// The connection threads of the current run, joined before the next: no thread of one
    /// input outlives it (LeakSanitizer would take a thread still exiting for a leak).
    serving: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for tcp in listener.incoming().flatten() {
                let plan = server().plan.lock().unwrap().take();
                match plan {
                    Some(plan) => server().serving.lock().unwrap().push(std::thread::spawn(move || serve(tcp, plan))),
                    None => drop(tcp),
                }
            }
        });
        Server { url, plan: Mutex::new(None), serving: Mutex::new(Vec::new()) }
    })
}

fn replace(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    let (from, to) = (from.as_bytes(), to.as_bytes());
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// A server-to-client text frame (unmasked, final) holding `payload` as it is, valid UTF-8 or
/// not: tungstenite's frame writer checks nothing of a payload.
fn text_frame(payload: &[u8], out: &mut Vec<u8>) {
    use tungstenite::protocol::frame::{Frame, coding::Data, coding::OpCode};
    let _ = Frame::message(payload.to_vec(), OpCode::Data(Data::Text), true).format(out);
}

/// The first text frame the client sends (its auth frame, login or order), as JSON.
fn read_client_json(ws: &mut tungstenite::WebSocket<TcpStream>) -> Option<Value> {
    loop {
        match ws.read().ok()? {
            tungstenite::Message::Text(text) => return serde_json::from_str(text.as_str()).ok(),
            tungstenite::Message::Close(_) => return None,
            _ => continue,
        }
    }
}

fn serve(mut tcp: TcpStream, plan: Plan) {
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = tcp.set_nodelay(true);
    let (mut login, mut order) = (String::from("no-login"), String::from("no-order"));
    let mut ws = match &plan.upgrade {
        Some(upgrade) => {
            // The upgrade request's head, for its key; then the fuzzed answer.
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && head.len() < 16_384 {
                match tcp.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => return,
                }
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let key = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(n, _)| n.trim().eq_ignore_ascii_case("sec-websocket-key"))
                .map(|(_, v)| v.trim().to_owned())
                .unwrap_or_default();
            let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
            let _ = tcp.write_all(&replace(&replace(upgrade, "@ACCEPT", &accept), "@T", TOKEN));
            tungstenite::WebSocket::from_raw_socket(tcp.try_clone().unwrap(), tungstenite::protocol::Role::Server, None)
        }
        None => match tungstenite::accept(tcp.try_clone().unwrap()) {
            Ok(ws) => ws,
            Err(_) => return,
        },
    };
    match plan.kind {
        Kind::Market => {}
        Kind::Account => {
            if read_client_json(&mut ws).is_none() {
                return;
            }
            let _ =
                ws.send(tungstenite::Message::text(r#"{"seq":1,"channel":"auth","data":{"code":0,"msg":"success"}}"#));
        }
        Kind::Orders => {
            let Some(frame) = read_client_json(&mut ws) else { return };
            login = frame["request_id"].as_str().unwrap_or("").to_owned();
            let answer = serde_json::json!({"code": 0, "message": "success", "request_id": login});
            let _ = ws.send(tungstenite::Message::text(answer.to_string()));
            if let Some(frame) = read_client_json(&mut ws) {
                order = frame["request_id"].as_str().unwrap_or("").to_owned();
            }
        }
    }
    let _ = ws.flush();
    let payload = replace(&replace(&replace(&plan.payload, "@T", TOKEN), "@R", &login), "@O", &order);
    let bytes = if plan.raw {
        payload
    } else {
        let mut frames = Vec::with_capacity(payload.len() + 64);
        payload.split(|&b| b == 0xff).for_each(|text| text_frame(text, &mut frames));
        frames
    };
    let _ = tcp.write_all(&bytes);
    let _ = tcp.shutdown(Shutdown::Write);
    // Let the client read to the end before the socket goes away.
    let mut sink = [0u8; 4096];
    let _ = tcp.set_read_timeout(Some(Duration::from_millis(300)));
    while matches!(tcp.read(&mut sink), Ok(n) if n > 0) {}
}

/// Whether any text in `value` (keys and strings, escapes read) holds the token.
fn quotes_token(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains(TOKEN),
        Value::Array(items) => items.iter().any(quotes_token),
        Value::Object(fields) => fields.iter().any(|(k, v)| k.contains(TOKEN) || quotes_token(v)),
        _ => false,
    }
}

fn client(url: &str) -> Arc<Client> {
    // No reconnection within a run (its backoff starts at a minute); short waits for answers.
    let options = r#"{"stream_reconnect_min_ms":60000,"stream_reconnect_max_ms":60000,"stream_connects_per_minute":100000,
        "stream_max_connections":1000,"connect_timeout_ms":500,"read_timeout_ms":300,"max_frame_bytes":65536}"#;
    Arc::new(Client::new(url, url, ClientOptions::parse(Some(options)).unwrap()).unwrap())
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else { return };
    let kind = [Kind::Market, Kind::Account, Kind::Orders, Kind::Market][usize::from(flags & 3)];
    let raw = flags & 4 != 0;
    let (upgrade, payload) = match rest.iter().position(|&b| b == 0xfe) {
        Some(at) if flags & 8 != 0 => (Some(rest[..at].to_vec()), rest[at + 1..].to_vec()),
        _ => (None, rest.to_vec()),
    };
    // A market stream without a session holds no token: the venue's words are all it knows.
    let secret = kind != Kind::Market;
    let server = server();
    *server.plan.lock().unwrap() = Some(Plan { kind, raw, upgrade, payload });
    let client = client(&server.url);
    let session = Arc::new(Session::from_api_key(TOKEN, SEED_B58).unwrap());
    let opened = match kind {
        Kind::Market => Stream::open_market(client, None, SUBS),
        Kind::Account => Stream::open_market(client, Some(session), SUBS),
        Kind::Orders => Stream::open_orders(client, session),
    };
    let stream = match opened {
        Ok(stream) => stream,
        Err(error) => {
            assert!(
                !secret || !error.message().contains(TOKEN),
                "the open's error quotes the token: {}",
                error.message()
            );
            end_run(server);
            return;
        }
    };
    if kind == Kind::Orders {
        let _ = stream.new_order(ORDER);
    }
    // The events until the connection ends (the server closes it after the input), or 1 s.
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        match stream.next(Some(Duration::from_millis(100))) {
            Ok(Some(event)) => {
                let value: Value =
                    serde_json::from_str(&event).unwrap_or_else(|e| panic!("an event that is not JSON ({e}): {event}"));
                let channel = value.get("channel").and_then(Value::as_str);
                assert!(channel.is_some(), "an event naming no channel: {event}");
                // Every event is redacted, pushes of the known channels too (README "No secret
                // in an event").
                assert!(!secret || !quotes_token(&value), "an event quotes the token: {event}");
                if channel == Some("status")
                    && matches!(value["state"].as_str(), Some("disconnected" | "reconnecting" | "failed"))
                {
                    break;
                }
            }
            Ok(None) => {}
            Err(error) => {
                assert!(!secret || !error.message().contains(TOKEN), "an error quotes the token: {}", error.message());
                break;
            }
        }
    }
    let closing = Instant::now();
    stream.close();
    drop(stream);
    assert!(closing.elapsed() < Duration::from_secs(3), "closing and freeing took {:?}", closing.elapsed());
    end_run(server);
});

/// The plan dropped if no connection took it, and the run's connection threads joined.
fn end_run(server: &Server) {
    server.plan.lock().unwrap().take();
    let threads: Vec<_> = server.serving.lock().unwrap().drain(..).collect();
    for thread in threads {
        let _ = thread.join();
    }
}
