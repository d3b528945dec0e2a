//! The client's answer handling, through the public C API: an in-process server on
//! 127.0.0.1 reads each request and answers with the fuzz input, so ureq's response parsing
//! and the library's checks of every answer run exactly as in production. The first byte
//! picks what is fuzzed:
//! 0: the body of a 200 answer to an order;        1: the whole raw HTTP answer to an order;
//! 2: the body of a 200 answer to login;           3: the body of a 200 answer to prepare-signin
//!    (`@@CHALLENGE@@` in it becomes a valid signed challenge for the session);
//! 4: the body of a 200 answer to kline/time;      5: the body of a 200 answer to certs.
//! Invariants: no panic; every failure has a documented code and the flag the README's
//! table gives; the request was sent exactly once (never retried: the server closes every
//! connection, so no read meets a kept-alive connection it closed); an order's success
//! returns the venue's body unchanged (less a byte-order mark before it) and never says
//! `"success": false`, which is a refusal that did not place it; a login failure never
//! carries the answer's body.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use perps::ffi::client::{perps_client, perps_client_free, perps_client_new};
use perps::ffi::error::perps_code::{self, *};
use perps::ffi::session::{perps_session, perps_session_free, perps_session_from_api_key, perps_session_new};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Mutex, OnceLock};

const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false,"cl_ord_id":"fuzz-1"}"#;
const CL_ORD_ID: &str = "fuzz-1";

/// What the server answers on the fuzzed path, and what it saw.
struct Plan {
    path: &'static str,
    body: Vec<u8>,
    /// Wrap `body` in a 200 answer (else it is the raw answer).
    framed: bool,
    hits: usize,
}

struct Server {
    url: String,
    plan: Mutex<Plan>,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    static STARTED: OnceLock<()> = OnceLock::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let server = SERVER.get_or_init(|| Server {
        url: format!("http://{}", listener.local_addr().unwrap()),
        plan: Mutex::new(Plan { path: "", body: Vec::new(), framed: true, hits: 0 }),
    });
    STARTED.get_or_init(|| {
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                // One thread per connection: a kept-alive connection must not hold up the next.
                std::thread::spawn(move || serve(stream, server));
            }
        });
    });
    server
}

fn serve(mut stream: TcpStream, server: &Server) {
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(5)));
    let mut buf = Vec::new();
    let header_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).into_owned();
    let length: usize = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < header_end + 4 + length {
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let request_body: serde_json::Value = serde_json::from_slice(&buf[header_end + 4..]).unwrap_or_default();
    let target = head.split(' ').nth(1).unwrap_or("").split('?').next().unwrap_or("").to_owned();
    let challenge = || {
        let header = format!(r#"{{"alg":"ES256","typ":"JWT","kid":"{}"}}"#, common::KID);
        let payload = common::signin_payload(
            request_body["address"].as_str().unwrap_or(""),
            request_body["requestId"].as_str().unwrap_or(""),
            now(),
            now() + 180,
        );
        common::sign_jws(header.as_bytes(), payload.to_string().as_bytes())
    };
    let answer = {
        let mut plan = server.plan.lock().unwrap();
        if target.ends_with(plan.path) {
            plan.hits += 1;
            let body = if plan.path.ends_with("prepare-signin") {
                String::from_utf8_lossy(&plan.body).replace("@@CHALLENGE@@", &challenge()).into_bytes()
            } else {
                plan.body.clone()
            };
            if plan.framed { frame(&body) } else { body }
        } else if target.ends_with("prepare-signin") {
            frame(serde_json::json!({"success": true, "signedData": challenge()}).to_string().as_bytes())
        } else if target.ends_with("certs") {
            frame(common::certs_json().as_bytes())
        } else {
            frame(br#"{"code":0}"#)
        }
    };
    let _ = stream.write_all(&answer);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    // Let the client read to the end before the socket goes away.
    let mut sink = [0u8; 512];
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_millis(200)));
    while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

fn now() -> i64 {
    perps::body_sign::now_ms() / 1000
}

struct Handles(*mut perps_client, *mut perps_session);
unsafe impl Send for Handles {}
unsafe impl Sync for Handles {}

impl Drop for Handles {
    fn drop(&mut self) {
        perps_session_free(self.1);
        perps_client_free(self.0);
    }
}

/// One client and API-credential session for the trading modes (kept alive: faster, and
/// pooled connections left behind by odd answers are part of what is exercised).
fn trading() -> &'static Handles {
    static TRADING: OnceLock<Handles> = OnceLock::new();
    TRADING.get_or_init(|| handles(true))
}

fn handles(api_session: bool) -> Handles {
    let url = common::c(&format!("{}/x", server().url)).unwrap();
    let options = common::c(r#"{"read_timeout_ms":3000,"total_timeout_ms":6000}"#).unwrap();
    let mut err = std::ptr::null_mut();
    let client = perps_client_new(url.as_ptr(), url.as_ptr(), options.as_ptr(), &mut err);
    assert!(!client.is_null());
    let session = if api_session {
        let (t, k) = (common::c("fuzz-token").unwrap(), common::c(&bs58::encode([9u8; 32]).into_string()).unwrap());
        perps_session_from_api_key(t.as_ptr(), k.as_ptr(), &mut err)
    } else {
        perps_session_new(&mut err)
    };
    assert!(!session.is_null());
    Handles(client, session)
}

fn set_plan(path: &'static str, body: &[u8], framed: bool) {
    *server().plan.lock().unwrap() = Plan { path, body: body.to_vec(), framed, hits: 0 };
}

fn hits() -> usize {
    server().plan.lock().unwrap().hits
}

fn check_order(result: Result<String, common::Failure>, body: Option<&[u8]>) {
    match result {
        Ok(answer) => {
            if let Some(body) = body {
                // A UTF-8 byte-order mark before the JSON is dropped (RFC 8259 §8.1).
                let body = body.strip_prefix("\u{feff}".as_bytes()).unwrap_or(body);
                // The venue's answer, with the order's cl_ord_id added when its object lacks one;
                // one that names it names the one sent.
                let object: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(body).unwrap();
                if let Some(named) = object.get("cl_ord_id") {
                    assert_eq!(named.as_str(), Some(CL_ORD_ID), "an answer naming another cl_ord_id");
                    assert_eq!(answer.as_bytes(), body, "an order's answer is returned unchanged");
                } else {
                    let text = std::str::from_utf8(body).unwrap().trim_end();
                    let head = text.strip_suffix('}').unwrap();
                    let separator = if object.is_empty() { "" } else { "," };
                    assert_eq!(answer, format!("{head}{separator}\"cl_ord_id\":\"{CL_ORD_ID}\"}}"));
                }
            }
            let value: serde_json::Value = serde_json::from_str(&answer).expect("a success is JSON");
            let code = value.as_object().expect("a success is a JSON object").get("code");
            // No code, null, or 0 or 200 written as a plain integer or a string of digits:
            // never a fraction, an exponent or a negative zero (`0.0`, `1e-400`, `-0`, `"-0"`),
            // which serde_json reads as floats.
            let success = |code: &serde_json::Value| match code {
                serde_json::Value::Null => true,
                serde_json::Value::Number(n) => matches!(n.as_i64(), Some(0 | 200)),
                serde_json::Value::String(s) => {
                    let significant = s.trim_start_matches('0');
                    !s.is_empty()
                        && s.bytes().all(|b| b.is_ascii_digit())
                        && (significant.is_empty() || significant == "200")
                }
                _ => false,
            };
            assert!(code.is_none_or(success), "success with code {code:?}");
            // `"success": false` is a refusal, with or without a code.
            let stated = value.as_object().unwrap().get("success");
            assert_ne!(stated, Some(&serde_json::Value::Bool(false)), "a success that says it failed");
            // With no code, nothing may say otherwise: `success` absent, null or true; every
            // word under `message`, `msg`, `status` absent, null, blank, "success", "ok" or
            // "accepted";
            // nothing under `error`, `errors`, `err`.
            if code.is_none_or(serde_json::Value::is_null) {
                use serde_json::Value;
                let object = value.as_object().unwrap();
                let plain = |s: &Value| s.is_null() || *s == Value::Bool(true);
                assert!(stated.is_none_or(plain), "success with \"success\": {stated:?}");
                for key in ["message", "msg", "status"] {
                    let fine = match object.get(key) {
                        None | Some(Value::Null) => true,
                        Some(Value::String(w)) => {
                            let w = w.trim();
                            w.is_empty()
                                || w.eq_ignore_ascii_case("success")
                                || w.eq_ignore_ascii_case("ok")
                                || w.eq_ignore_ascii_case("accepted")
                        }
                        Some(_) => false,
                    };
                    assert!(fine, "a success with no code whose {key} says otherwise: {:?}", object.get(key));
                }
                for key in ["error", "errors", "err"] {
                    let none = match object.get(key) {
                        None | Some(Value::Null) | Some(Value::Bool(false)) => true,
                        Some(Value::String(e)) => e.trim().is_empty(),
                        Some(Value::Array(items)) => items.is_empty(),
                        Some(Value::Object(fields)) => fields.is_empty(),
                        Some(_) => false,
                    };
                    assert!(none, "a success with no code naming an error under {key}: {:?}", object.get(key));
                }
            }
        }
        Err(f) => match f.code {
            // The request was read in full before any answer: everything but a refusal
            // may have reached the venue.
            PERPS_BAD_RESPONSE | PERPS_TRANSPORT | PERPS_TIMEOUT => assert!(f.reached, "{f:?}"),
            // A refusal did not place the order, unless its code is a server error or a
            // time-out behind the gateway (5xx, 408): then its effect is unknown.
            // A refusal by `"success": false` with no code did not place it.
            PERPS_API_ERROR if refused_without_code(&f.message) => {
                assert!(!f.reached, "{f:?}");
                let object = body.and_then(|b| {
                    let b = b.strip_prefix("\u{feff}".as_bytes()).unwrap_or(b);
                    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(b).ok()
                });
                if let Some(object) = object {
                    assert_eq!(object.get("success"), Some(&serde_json::Value::Bool(false)), "{f:?}");
                    assert!(object.get("code").is_none_or(serde_json::Value::is_null), "{f:?}");
                }
            }
            PERPS_API_ERROR => assert_eq!(f.reached, refusal_code_leaves_outcome_unknown(&f.message), "{f:?}"),
            // Refused, unless a server error or a time-out leaves it open: 5xx, 408, or a
            // body whose code says so (not under 401, 403, 429: refused before anything).
            PERPS_HTTP_STATUS => {
                assert!(!(200..300).contains(&f.http_status), "{f:?}");
                let refused_first = matches!(f.http_status, 401 | 403 | 429);
                let open = f.http_status >= 500
                    || f.http_status == 408
                    || (!refused_first && body_code_leaves_outcome_unknown(&f));
                assert_eq!(f.reached, open, "{f:?}");
            }
            other => panic!("undocumented outcome {other:?}: {f:?}"),
        },
    }
    assert_eq!(hits(), 1, "the order was sent exactly once");
}

/// Whether the message says the refusal was `"success": false` with no code (the library's
/// words come before the venue's, so the first "the venue refused" is the library's).
fn refused_without_code(message: &str) -> bool {
    let (_, after) = message.split_once("the venue refused").expect("a refusal says so");
    after.starts_with(" (\"success\": false, no code)")
}

/// From the message ("…refused with code N…"): whether code N is 5xx or 408.
fn refusal_code_leaves_outcome_unknown(message: &str) -> bool {
    let after = message.split("refused with code ").nth(1).expect("a refusal names its code");
    let digits: String = after.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
    let code: i64 = digits.parse().expect("the code is an integer");
    (500..=599).contains(&code) || code == 408
}

/// Whether the error's body is a JSON object whose `code` — an integer written plainly, or a
/// string of digits — is 5xx or 408.
fn body_code_leaves_outcome_unknown(f: &common::Failure) -> bool {
    let Some(Ok(serde_json::Value::Object(object))) =
        f.body.as_deref().map(|b| serde_json::from_str::<serde_json::Value>(b.trim()))
    else {
        return false;
    };
    let code = match object.get("code") {
        Some(serde_json::Value::Number(n)) => n.as_i64(),
        Some(serde_json::Value::String(s)) => {
            let digits = s.strip_prefix('-').unwrap_or(s);
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse::<i64>().ok()).flatten()
        }
        _ => None,
    };
    code.is_some_and(|code| (500..=599).contains(&code) || code == 408)
}

fn in_codes(f: &common::Failure, codes: &[perps_code]) {
    assert!(codes.contains(&f.code), "undocumented code: {f:?}");
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, input)) = data.split_first() else { return };
    match mode % 6 {
        0 | 1 => {
            let framed = mode % 6 == 0;
            set_plan("/api/new_order", input, framed);
            // A raw answer may leave a connection that the server closes behind the client's
            // back (it half-closes after each answer): a fresh pool for those, so an order
            // never races that close in this harness.
            let fresh;
            let h = if framed {
                trading()
            } else {
                fresh = handles(true);
                &fresh
            };
            let order = common::c(ORDER).unwrap();
            let result = common::owned(|e| perps::ffi::client::perps_new_order(h.0, h.1, order.as_ptr(), e));
            check_order(result, framed.then_some(input));
        }
        2 => {
            set_plan("/v1/offchain/login", input, true);
            let h = handles(false);
            let (chain, key) = (common::c("bsc").unwrap(), common::c(common::BSC_KEY).unwrap());
            let result =
                common::owned(|e| perps::ffi::client::perps_signin(h.0, h.1, chain.as_ptr(), key.as_ptr(), 60, e));
            let info = common::owned(|e| perps::ffi::session::perps_session_info(h.1, e)).unwrap();
            let info: serde_json::Value = serde_json::from_str(&info).unwrap();
            match result {
                Ok(answer) => {
                    assert_eq!(answer.as_bytes(), input.strip_prefix("\u{feff}".as_bytes()).unwrap_or(input));
                    assert_eq!(info["has_token"], true);
                }
                Err(f) => {
                    in_codes(&f, &[PERPS_API_ERROR, PERPS_BAD_RESPONSE, PERPS_VERIFICATION_FAILED]);
                    assert!(f.body.is_none(), "a login answer never rides in an error: {f:?}");
                    if f.code == PERPS_API_ERROR {
                        // Only an answer that states a refusal: `"success": false` or a code.
                        let b = input.strip_prefix("\u{feff}".as_bytes()).unwrap_or(input);
                        let object: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(b).unwrap();
                        let unsuccessful = object.get("success") == Some(&serde_json::Value::Bool(false));
                        let coded = object.get("code").is_some_and(|c| !c.is_null());
                        assert!(unsuccessful || coded, "{f:?}");
                    }
                    // The README fixes the flag of a bad 2xx answer for trading requests only;
                    // for sign-in it is true for a body over the cap or not UTF-8, else false.
                    assert!(f.code == PERPS_BAD_RESPONSE || !f.reached, "{f:?}");
                    assert_eq!(info["has_token"], false);
                }
            }
            assert_eq!(hits(), 1);
        }
        3 => {
            set_plan("/v1/offchain/prepare-signin", input, true);
            let h = handles(false);
            let (chain, address) = (common::c("bsc").unwrap(), common::c(common::BSC_ADDRESS).unwrap());
            let result = common::owned(|e| {
                perps::ffi::client::perps_prepare_signin(h.0, h.1, chain.as_ptr(), address.as_ptr(), e)
            });
            let info = common::owned(|e| perps::ffi::session::perps_session_info(h.1, e)).unwrap();
            let pending = serde_json::from_str::<serde_json::Value>(&info).unwrap()["pending_signin"] == true;
            match result {
                Ok(payload) => {
                    assert!(pending);
                    let p: serde_json::Value = serde_json::from_str(&payload).unwrap();
                    assert!(p["message"].is_string());
                }
                Err(f) => {
                    in_codes(&f, &[PERPS_API_ERROR, PERPS_BAD_RESPONSE, PERPS_VERIFICATION_FAILED]);
                    assert!(!pending, "nothing unverified is kept");
                }
            }
            assert_eq!(hits(), 1);
        }
        4 => {
            set_plan("/api/kline/time", input, true);
            let h = trading();
            let mut offset = 0i64;
            match common::code(|e| perps::ffi::client::perps_client_sync_time(h.0, &mut offset, e)) {
                Ok(()) => {
                    // Unix seconds: digits, with a fraction or not, bare or inside a JSON string.
                    let text = std::str::from_utf8(input).unwrap();
                    let text = text.strip_prefix('\u{feff}').unwrap_or(text).trim();
                    let text = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text);
                    assert!(text.bytes().all(|b| b.is_ascii_digit() || b == b'.'), "accepted {text:?}");
                    let seconds: f64 = text.parse().expect("accepted only a number of seconds");
                    assert!((0.0..253_402_300_800.0).contains(&seconds), "accepted a time of {seconds} s");
                    let expected = (seconds * 1000.0) as i64 - perps::body_sign::now_ms();
                    assert!((offset - expected).abs() <= 5_000, "offset {offset} for {seconds} s");
                }
                Err(f) => in_codes(&f, &[PERPS_BAD_RESPONSE]),
            }
            assert_eq!(hits(), 1);
        }
        _ => {
            set_plan("/v1/offchain/certs", input, true);
            let h = handles(false);
            let (chain, address) = (common::c("bsc").unwrap(), common::c(common::BSC_ADDRESS).unwrap());
            if let Err(f) = common::owned(|e| {
                perps::ffi::client::perps_prepare_signin(h.0, h.1, chain.as_ptr(), address.as_ptr(), e)
            }) {
                in_codes(&f, &[PERPS_BAD_RESPONSE, PERPS_VERIFICATION_FAILED]);
            }
            // A fresh client fetches the certs once; it refetches only a cached set.
            assert_eq!(hits(), 1);
        }
    }
});
