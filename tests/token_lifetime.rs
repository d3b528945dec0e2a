//! Token lifetime, through the C ABI: the session knows when its access token expires
//! (`perps_session_info` reports `token_expires_at`), takes that from the token's JWT `exp`
//! claim when there is one (shorter or longer than the lifetime asked for), else login time +
//! `expires_seconds` (≤ 0: the venue default, 7 days), and a call with an expired token fails
//! fast with `PERPS_TOKEN_EXPIRED` before anything is sent.
//!
//! The sandbox always issues JWTs whose `exp` is exactly the lifetime asked for, so the other
//! token shapes come from a small purpose-built venue on loopback (`MockVenue`) that signs real
//! ES256 challenges and answers login with whatever token the test chooses; it counts every
//! request it receives. `tests/flows_c_abi.rs` has the basic sandbox case
//! (`expired_token_fails_fast_without_sending`); the sandbox cases here extend it to every
//! trading call, re-sign-in and the synced venue clock.

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::abi::{self, Client, Failure, Session, new_order, request, signin};
use perps::ffi::error::perps_code::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const BSC_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;
const DEFAULT_LIFETIME: i64 = 604_800;

fn now() -> i64 {
    perps::body_sign::now_ms().div_euclid(1000)
}

/// A JWT-shaped token with this payload (the client reads `exp` without verifying).
fn jwt(payload: &Value) -> String {
    format!(
        "{}.{}.c2lnbmF0dXJl",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"ES256","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(payload.to_string())
    )
}

type TokenFn = dyn Fn(i64) -> String + Send + Sync;

#[derive(Default)]
struct VenueState {
    address: String,
    login_bodies: Vec<Value>,
    issued: Vec<String>,
}

/// A loopback venue: prepare-signin (a real ES256 challenge), certs, login (answers the
/// token `token(now)`), and every `/perps/api/*` endpoint answering `code: 0`. One request
/// per connection (`Connection: close`).
struct MockVenue {
    port: u16,
    requests: Arc<AtomicUsize>,
    trading: Arc<AtomicUsize>,
    state: Arc<Mutex<VenueState>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MockVenue {
    fn start(token: impl Fn(i64) -> String + Send + Sync + 'static) -> MockVenue {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (requests, trading) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let state = Arc::new(Mutex::new(VenueState::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let token: Arc<TokenFn> = Arc::new(token);
        let thread = {
            let (requests, trading, state, stop) = (requests.clone(), trading.clone(), state.clone(), stop.clone());
            std::thread::spawn(move || {
                let key = common::VenueKey::new(7, Some("k1"));
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let _ = serve(stream, &key, &*token, &requests, &trading, &state);
                }
            })
        };
        MockVenue { port, requests, trading, state, stop, thread: Some(thread) }
    }

    fn client(&self) -> Client {
        let root = format!("http://127.0.0.1:{}", self.port);
        Client::new(&format!("{root}/auth"), &format!("{root}/perps"), None).unwrap()
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    fn trading(&self) -> usize {
        self.trading.load(Ordering::SeqCst)
    }

    fn last_login_body(&self) -> Value {
        self.state.lock().unwrap().login_bodies.last().cloned().unwrap()
    }

    fn last_token(&self) -> String {
        self.state.lock().unwrap().issued.last().cloned().unwrap()
    }
}

impl Drop for MockVenue {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(
    stream: TcpStream,
    key: &common::VenueKey,
    token: &TokenFn,
    requests: &AtomicUsize,
    trading: &AtomicUsize,
    state: &Mutex<VenueState>,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or("").to_owned(), parts.next().unwrap_or("").to_owned());
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    if method.is_empty() {
        return Ok(()); // the wake-up connection of Drop
    }
    requests.fetch_add(1, Ordering::SeqCst);
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let path = target.split('?').next().unwrap_or("");
    let now = now();
    let answer = match (method.as_str(), path) {
        ("POST", "/auth/v1/offchain/prepare-signin") => {
            let address = body["address"].as_str().unwrap_or("").to_owned();
            let claims =
                common::signin_payload("bsc", &address, body["requestId"].as_str().unwrap_or(""), now, now + 180);
            state.lock().unwrap().address = address;
            json!({"success": true, "signedData": key.sign_jws(&key.header(), &claims.to_string())})
        }
        ("GET", "/auth/v1/offchain/certs") => serde_json::from_str(&common::jwk_set(&[key])).unwrap(),
        ("POST", "/auth/v1/offchain/login") => {
            let mut st = state.lock().unwrap();
            st.login_bodies.push(body);
            let token = token(now);
            st.issued.push(token.clone());
            json!({"token": token, "chain": "bsc", "address": st.address, "alias": "mock"})
        }
        (_, p) if p.starts_with("/perps/api/") => {
            trading.fetch_add(1, Ordering::SeqCst);
            json!({"code": 0, "message": "success", "request_id": "mock-1"})
        }
        _ => json!({"code": 404}),
    }
    .to_string();
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
        answer.len()
    )?;
    stream.flush()
}

fn expires_at(session: &Session) -> Option<i64> {
    session.info()["token_expires_at"].as_i64()
}

fn expect_expired(result: Result<String, Failure>, expires: i64) {
    let f = result.expect_err("an expired token must fail");
    assert_eq!(f.code, PERPS_TOKEN_EXPIRED, "{f:?}");
    assert!(f.message.contains(&format!("expired at {expires}")) && f.message.contains("sign in again"), "{f:?}");
    assert!(!f.may_have_reached_venue && f.http_status == 0 && f.body.is_none(), "{f:?}");
}

/// Sleep until the Unix second `at` has passed (the token is expired when now ≥ exp).
fn wait_until(at: i64) {
    while now() < at {
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---- JWT exp -----------------------------------------------------------------------------------

#[test]
fn a_jwt_exp_shorter_than_the_requested_lifetime_is_honoured_and_expiry_fails_fast() {
    let venue = MockVenue::start(|now| jwt(&json!({"sub": "w", "exp": now + 2})));
    let client = venue.client();
    let session = Session::new();
    let before = now();
    signin(&client, &session, "bsc", BSC_KEY, 3600).unwrap();
    let exp = expires_at(&session).unwrap();
    assert!((before + 2..=now() + 2).contains(&exp), "the JWT's exp, not login + 3600: {exp}");
    assert_eq!(venue.last_login_body()["expiresSeconds"], 3600, "the lifetime asked for was sent");
    assert!(new_order(&client, &session, ORDER).is_ok(), "usable before its exp");
    assert_eq!(venue.trading(), 1);

    wait_until(exp);
    let sent = venue.requests();
    expect_expired(new_order(&client, &session, ORDER), exp);
    expect_expired(request(&client, &session, "GET", "/api/query_open_orders", None), exp);
    expect_expired(request(&client, &session, "POST", "/api/cancel_order", Some(r#"{"cl_ord_id":"a"}"#)), exp);
    assert_eq!(venue.requests(), sent, "nothing was sent with the expired token");
    // The session still reports the token and when it expired; a new sign-in replaces it.
    let info = session.info();
    assert_eq!((info["has_token"].as_bool(), info["token_expires_at"].as_i64()), (Some(true), Some(exp)));
    signin(&client, &session, "bsc", BSC_KEY, 3600).unwrap();
    assert!(expires_at(&session).unwrap() > exp);
    assert!(new_order(&client, &session, ORDER).is_ok());
}

#[test]
fn a_jwt_exp_longer_than_the_requested_lifetime_is_honoured() {
    let venue = MockVenue::start(|now| jwt(&json!({"exp": now + 7200, "iat": now})));
    let session = Session::new();
    signin(&venue.client(), &session, "bsc", BSC_KEY, 60).unwrap();
    let exp = expires_at(&session).unwrap();
    assert!((now() + 7190..=now() + 7200).contains(&exp), "{exp}");
}

#[test]
fn an_already_expired_jwt_fails_at_the_first_call_without_sending() {
    let venue = MockVenue::start(|now| jwt(&json!({"exp": now - 30})));
    let client = venue.client();
    let session = Session::new();
    signin(&client, &session, "bsc", BSC_KEY, 3600).unwrap();
    let exp = expires_at(&session).unwrap();
    assert!(exp < now());
    let sent = venue.requests();
    expect_expired(new_order(&client, &session, ORDER), exp);
    assert_eq!(venue.requests(), sent);
}

/// RFC 7519 NumericDate may be a non-integer: `exp` 1700000002.5 is honoured (rounded down).
#[test]
fn a_non_integer_jwt_exp_is_honoured() {
    let venue = MockVenue::start(|now| jwt(&json!({"exp": now as f64 + 2.5})));
    let session = Session::new();
    let before = now();
    signin(&venue.client(), &session, "bsc", BSC_KEY, 3600).unwrap();
    let exp = expires_at(&session).unwrap();
    assert!((before + 2..=now() + 2).contains(&exp), "{exp}");
}

// ---- no exp: login time + expires_seconds ---------------------------------------------------------

#[test]
fn a_token_without_exp_lives_login_time_plus_expires_seconds() {
    let shapes: Vec<(&str, Box<TokenFn>)> = vec![
        ("opaque", Box::new(|_| "opaque-token-Vb82nQ".to_owned())),
        ("JWT without exp", Box::new(|now| jwt(&json!({"sub": "w", "iat": now})))),
        ("JWT with a string exp", Box::new(|now| jwt(&json!({"exp": (now + 5).to_string()})))),
        ("JWT-shaped, payload not JSON", Box::new(|_| "aGVhZGVy.bm90IGpzb24.c2ln".to_owned())),
    ];
    for (shape, token) in shapes {
        let venue = MockVenue::start(token);
        let client = venue.client();
        for (expires, lifetime) in [(3600i64, 3600i64), (120, 120), (0, DEFAULT_LIFETIME), (-7, DEFAULT_LIFETIME)] {
            let session = Session::new();
            let before = now();
            signin(&client, &session, "bsc", BSC_KEY, expires).unwrap();
            let after = now();
            let at = expires_at(&session).unwrap();
            assert!((before + lifetime..=after + lifetime).contains(&at), "{shape}, {expires}: {at} vs {before}");
            // ≤ 0 asks for the venue default: nothing is sent; otherwise the lifetime is.
            let sent = &venue.last_login_body()["expiresSeconds"];
            if expires > 0 {
                assert_eq!(sent, expires)
            } else {
                assert!(sent.is_null(), "{sent}")
            }
            assert!(new_order(&client, &session, ORDER).is_ok(), "{shape}");
        }
        assert!(!venue.last_token().is_empty());
    }
}

#[test]
fn an_opaque_token_of_one_second_expires_before_sending() {
    let venue = MockVenue::start(|_| "opaque-token-short-9Hk".to_owned());
    let client = venue.client();
    let session = Session::new();
    signin(&client, &session, "bsc", BSC_KEY, 1).unwrap();
    let exp = expires_at(&session).unwrap();
    wait_until(exp);
    let sent = venue.requests();
    expect_expired(new_order(&client, &session, ORDER), exp);
    expect_expired(request(&client, &session, "GET", "/api/query_balance", None), exp);
    assert_eq!(venue.requests(), sent);
}

// ---- tokens without an expiry, and logout ------------------------------------------------------

#[test]
fn an_opaque_api_credential_token_has_no_expiry_and_logout_clears_it() {
    let venue = MockVenue::start(|_| "unused".to_owned());
    let client = venue.client();
    let session = Session::from_api_key("web-token-Qz5", "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb").unwrap();
    let info = session.info();
    assert_eq!((info["has_token"].as_bool(), info["token_expires_at"].is_null()), (Some(true), true));
    assert!(new_order(&client, &session, ORDER).is_ok(), "an API token is never judged expired");
    assert_eq!(venue.trading(), 1);

    let signed_in = Session::new();
    signin(&client, &signed_in, "bsc", BSC_KEY, 3600).unwrap();
    assert!(expires_at(&signed_in).is_some());
    abi::code(|e| perps::ffi::session::perps_session_logout(signed_in.0, e)).unwrap();
    let info = signed_in.info();
    assert_eq!((info["has_token"].as_bool(), info["token_expires_at"].is_null()), (Some(false), true));
}

#[test]
fn an_api_credential_jwt_expires_at_its_exp() {
    const KEY: &str = "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb";
    let venue = MockVenue::start(|_| "unused".to_owned());
    let client = venue.client();
    // Long past (a token of 2001): refused before sending, and the session says when.
    let old = Session::from_api_key(&jwt(&json!({"sub": "w", "exp": 1_000_000_000})), KEY).unwrap();
    assert_eq!(expires_at(&old), Some(1_000_000_000));
    for result in [new_order(&client, &old, ORDER), request(&client, &old, "GET", "/api/query_balance", None)] {
        let f = result.expect_err("an expired API token must fail");
        assert_eq!(f.code, PERPS_TOKEN_EXPIRED, "{f:?}");
        assert!(f.message.contains("expired at 1000000000") && f.message.contains("new API credential"), "{f:?}");
        assert!(!f.may_have_reached_venue, "{f:?}");
    }
    assert_eq!(venue.requests(), 0, "nothing sent with the expired token");
    // Valid for two more seconds: used, then refused once its exp has passed.
    let exp = now() + 2;
    let soon = Session::from_api_key(&jwt(&json!({"exp": exp})), KEY).unwrap();
    assert_eq!(expires_at(&soon), Some(exp));
    assert!(new_order(&client, &soon, ORDER).is_ok());
    wait_until(exp);
    let sent = venue.requests();
    assert_eq!(new_order(&client, &soon, ORDER).unwrap_err().code, PERPS_TOKEN_EXPIRED);
    assert_eq!(venue.requests(), sent);
}

// ---- the sandbox --------------------------------------------------------------------------------

mod with_sandbox {
    use super::*;
    use perps_sandbox::{Sandbox, SandboxConfig};

    /// Extends flows_c_abi's `expired_token_fails_fast_without_sending`: every trading call
    /// fails fast, the venue counts nothing, and signing in again restores the session.
    #[test]
    fn every_trading_call_fails_fast_on_an_expired_sandbox_token() {
        let venue = Sandbox::start(SandboxConfig::default()).unwrap();
        let client = Client::new(&venue.base_url(), &venue.perps_url(), None).unwrap();
        let session = Session::new();
        let before = now();
        signin(&client, &session, "bsc", BSC_KEY, 1).unwrap();
        let exp = expires_at(&session).unwrap();
        assert!((before + 1..=now() + 1).contains(&exp), "{exp}");
        wait_until(exp);
        let stats = venue.stats();
        expect_expired(new_order(&client, &session, ORDER), exp);
        expect_expired(request(&client, &session, "GET", "/api/query_open_orders", None), exp);
        expect_expired(request(&client, &session, "POST", "/api/cancel_order", Some(r#"{"cl_ord_id":"x"}"#)), exp);
        assert_eq!(venue.stats(), stats, "not one request reached the venue");
        signin(&client, &session, "bsc", BSC_KEY, 3600).unwrap();
        assert!(new_order(&client, &session, ORDER).is_ok());
        assert_eq!(venue.stats().orders_accepted, stats.orders_accepted + 1);
    }

    /// Expiry is judged on the venue's clock once synced: the venue runs 45 s ahead, so its
    /// token's exp (venue time) passes 2 s after login, not 47 s.
    #[test]
    fn expiry_is_judged_on_the_synced_venue_clock() {
        let venue = Sandbox::start(SandboxConfig { clock_offset_ms: 45_000, ..Default::default() }).unwrap();
        let client = Client::new(&venue.base_url(), &venue.perps_url(), None).unwrap();
        abi::code(|e| perps::ffi::client::perps_client_sync_time(client.0, std::ptr::null_mut(), e)).unwrap();
        let session = Session::new();
        signin(&client, &session, "bsc", BSC_KEY, 2).unwrap();
        let exp = expires_at(&session).unwrap();
        assert!((now() + 44..=now() + 48).contains(&exp), "exp {exp} is in venue time");
        assert!(new_order(&client, &session, ORDER).is_ok());
        std::thread::sleep(Duration::from_millis(2600));
        let stats = venue.stats();
        expect_expired(new_order(&client, &session, ORDER), exp);
        assert_eq!(venue.stats(), stats);
    }
}
