//! A hostile venue, through the C ABI (issue 16, "Hostile venue and network"): a server on
//! 127.0.0.1 that drains an upload slowly, answers an order with 1xx or 101, echoes the
//! session's secrets back in its errors, or withdraws a signing key. Each test asserts what
//! the library guarantees (README, "Hostile venues and careless callers").

mod common;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{Client, Failure, Session, expect, new_order, request};
use perps::ffi::error::perps_code::{self, *};
use rogue_server::{Rogue, Step, json};
use std::io::Read;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;
const API_TOKEN: &str = "hostile-api-token-Wq4v9Zt2";
/// The RFC 8032 test-1 seed, base58: the API credential's Ed25519 key.
const ED_SEED_B58: &str = "BgJxTVVr4PwR2QqJ5kLvZ1sZGM4X3Zsa6aRsNhSAfpnA";
const FAST: &str = r#"{"connect_timeout_ms":1000,"read_timeout_ms":500,"total_timeout_ms":3000}"#;

fn client_at(url: &str, options: &str) -> Client {
    Client::new(&format!("{url}/auth"), &format!("{url}/perps"), Some(options)).expect("client")
}

fn api_session() -> Session {
    Session::from_api_key(API_TOKEN, ED_SEED_B58).expect("api session")
}

// ---- 1. total_timeout_ms bounds every phase, the upload included ---------------------------

/// A server that reads the request head at once, then drains the body `chunk` bytes every
/// `pause`, through a small receive buffer: an upload that takes far longer than the limits.
/// It never answers; it returns when it accepted the connection and how many bytes it read.
fn slow_drain_server(
    chunk: usize,
    pause: Duration,
    stop: Arc<AtomicBool>,
) -> (String, std::thread::JoinHandle<(Instant, usize)>) {
    use std::os::fd::AsRawFd;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let small: libc::c_int = 4096;
    // SAFETY: a valid socket and a correctly sized option value; accepted sockets inherit it.
    unsafe {
        libc::setsockopt(
            listener.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&raw const small).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let accepted = Instant::now();
        stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut read = 0usize;
        let mut buf = vec![0u8; chunk];
        let started = Instant::now();
        while !stop.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(12) {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => read += n,
            }
            std::thread::sleep(pause);
        }
        (accepted, read)
    });
    (url, server)
}

#[test]
fn total_timeout_bounds_a_slowly_drained_upload() {
    // 8 MiB (twice what the kernel buffers hold on loopback) at about 40 KB/s would take
    // minutes; every single write makes progress well within read_timeout_ms, so only the
    // total limit can stop it.
    let stop = Arc::new(AtomicBool::new(false));
    let (url, server) = slow_drain_server(2048, Duration::from_millis(50), stop.clone());
    let client = client_at(&url, r#"{"connect_timeout_ms":1000,"read_timeout_ms":1500,"total_timeout_ms":2000}"#);
    let body = format!(r#"{{"pad":"{}"}}"#, "x".repeat(8 << 20));
    let f = expect(request(&client, &api_session(), "POST", "/api/upload", Some(&body)), PERPS_TIMEOUT, true);
    let finished = Instant::now();
    stop.store(true, Ordering::SeqCst);
    assert!(f.message.contains("may have received it"), "{f:?}");
    drop(client);
    let (accepted, read) = server.join().unwrap();
    // From the connection (the body is signed before it: 8 MiB take seconds in a debug build)
    // to the failure.
    let elapsed = finished - accepted;
    // Without the total limit the upload takes minutes; the limit (2 s) leaves a loaded
    // machine 6 s more.
    assert!(elapsed < Duration::from_secs(8), "a 2 s total limit took {elapsed:?}");
    assert!(read > 0 && read < body.len(), "the server read part of the body ({read} bytes)");
}

// ---- 4. an informational or protocol-switch answer means the venue read the order -----------

#[test]
fn informational_and_protocol_switch_answers_may_have_reached() {
    let answers: [&[u8]; 5] = [
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\nPRI * HTTP/2.0\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\n",
        b"HTTP/1.1 102 Processing\r\n\r\n",
        b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 199 Odd\r\n\r\n",
    ];
    for answer in answers {
        // The answer, then the connection closes: no final answer ever comes.
        let bytes = answer.to_vec();
        let rogue = Rogue::start(move |_, _| vec![Step::Write(bytes.clone()), Step::Close]);
        let client = client_at(&rogue.url(), FAST);
        let shown = String::from_utf8_lossy(answer).lines().next().unwrap().to_owned();
        let f = new_order(&client, &api_session(), ORDER).expect_err(&shown);
        assert!(f.may_have_reached_venue, "{shown}: {f:?}");
        assert!(matches!(f.code, PERPS_HTTP_STATUS | PERPS_TRANSPORT | PERPS_BAD_RESPONSE), "{shown}: {f:?}");
        assert_eq!(rogue.count("/perps/api/new_order"), 1, "{shown}: sent once, never retried");
        // The same answer kept open (the venue waits): a timeout, also "may have reached".
        let bytes = answer.to_vec();
        let rogue = Rogue::start(move |_, _| vec![Step::Write(bytes.clone()), Step::Sleep(Duration::from_secs(3))]);
        let client = client_at(&rogue.url(), FAST);
        let f = new_order(&client, &api_session(), ORDER).expect_err(&shown);
        assert!(f.may_have_reached_venue, "{shown} (kept open): {f:?}");
        assert_eq!(rogue.count("/perps/api/new_order"), 1);
    }
}

// ---- 2. no secret in any error: venue text is redacted of the session's secrets ------------

/// Any 8 bytes of `secret` in `text` (the rule of tests/secrets.rs), either case for hex.
fn leaked(text: &str, secret: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    secret.as_bytes().windows(8).find_map(|w| {
        let run = String::from_utf8_lossy(w).into_owned();
        (text.contains(&run) || lower.contains(&run.to_ascii_lowercase())).then_some(run)
    })
}

fn assert_no_secret(f: &Failure, secrets: &[&str]) {
    for text in std::iter::once(&f.message).chain(f.body.iter()) {
        // As the bytes stand, and as whoever reads JSON text sees it (escapes written out).
        let decoded = serde_json::from_str::<serde_json::Value>(text).map(|v| v.to_string()).unwrap_or_default();
        for secret in secrets {
            assert_eq!(leaked(text, secret), None, "{text:?} shows part of a secret");
            assert_eq!(leaked(&decoded, secret), None, "{text:?} shows part of a secret once decoded");
        }
    }
}

/// `text` with every `nth` character written as a JSON `\uXXXX` escape.
fn json_escaped(text: &str, nth: usize) -> String {
    text.chars()
        .enumerate()
        .map(|(i, c)| if i % nth == 0 { format!("\\u{:04x}", c as u32) } else { c.to_string() })
        .collect()
}

/// The API credential's key in the forms a venue could echo: base58 seed, hex seed, base58
/// keypair.
fn key_forms() -> Vec<String> {
    let seed: [u8; 32] = bs58::decode(ED_SEED_B58).into_vec().unwrap().try_into().unwrap();
    let key = ed25519_dalek::SigningKey::from_bytes(&seed);
    vec![
        ED_SEED_B58.to_owned(),
        common::hex(&seed),
        common::hex(&seed).to_uppercase(),
        bs58::encode(key.to_keypair_bytes()).into_string(),
    ]
}

#[test]
fn a_venue_echoing_the_token_and_the_key_gets_them_redacted() {
    let forms = key_forms();
    let echo = format!("token {API_TOKEN} with key {} / {} / {} / {}", forms[0], forms[1], forms[2], forms[3]);
    let cut = &API_TOKEN[..12]; // a token cut short by the venue is still redacted
    let answers: Vec<(Vec<Step>, perps_code)> = vec![
        (json(401, &serde_json::json!({"code": 401, "message": echo}).to_string()), PERPS_HTTP_STATUS),
        (json(403, &serde_json::json!({"message": format!("{cut}… refused")}).to_string()), PERPS_HTTP_STATUS),
        (json(200, &serde_json::json!({"code": 7, "message": echo}).to_string()), PERPS_API_ERROR),
        (json(200, &format!("<html>{echo}</html>")), PERPS_BAD_RESPONSE),
        (json(500, &echo), PERPS_HTTP_STATUS),
        (
            json(
                400,
                &serde_json::json!({"message": echo, "echo": {"authorization": format!("Bearer {API_TOKEN}")}})
                    .to_string(),
            ),
            PERPS_HTTP_STATUS,
        ),
        // Echoed JSON-escaped, wholly or in part: a byte scan alone would miss it.
        (json(401, &format!(r#"{{"code":401,"message":"token {}"}}"#, json_escaped(API_TOKEN, 1))), PERPS_HTTP_STATUS),
        (
            json(
                400,
                &format!(r#"{{"echo":"Bearer {}","k":"{}"}}"#, json_escaped(API_TOKEN, 7), json_escaped(&forms[0], 3)),
            ),
            PERPS_HTTP_STATUS,
        ),
        (json(200, &format!(r#"{{"code":7,"message":"{}"}}"#, json_escaped(API_TOKEN, 2))), PERPS_API_ERROR),
    ];
    let mut secrets: Vec<&str> = vec![API_TOKEN];
    secrets.extend(forms.iter().map(String::as_str));
    for (answer, code) in answers {
        let rogue = Rogue::start(move |_, _| answer.clone());
        let client = client_at(&rogue.url(), FAST);
        for result in [
            new_order(&client, &api_session(), ORDER),
            request(&client, &api_session(), "GET", "/api/query_open_orders", None),
            request(&client, &api_session(), "POST", "/api/cancel_order", Some(r#"{"order_id":1}"#)),
        ] {
            let f = result.expect_err("the venue refused");
            assert_eq!(f.code, code, "{f:?}");
            assert_no_secret(&f, &secrets);
            let shown = format!("{}{}", f.message, f.body.clone().unwrap_or_default());
            assert!(shown.contains("<redacted>"), "{f:?}");
        }
    }
}

#[test]
fn the_venue_reason_is_in_the_message_with_a_hint_where_one_helps() {
    let rogue = Rogue::start(|_, _| json(403, r#"{"code":403,"message":"signature has expired"}"#));
    let f = expect(new_order(&client_at(&rogue.url(), FAST), &api_session(), ORDER), PERPS_HTTP_STATUS, false);
    assert!(f.message.contains("\"signature has expired\""), "{f:?}");
    assert!(f.message.contains("perps_client_sync_time"), "{f:?}");
    let rogue = Rogue::start(|_, _| json(400, r#"{"code":400,"message":"invalid order qty"}"#));
    let f = expect(new_order(&client_at(&rogue.url(), FAST), &api_session(), ORDER), PERPS_HTTP_STATUS, false);
    assert!(f.message.ends_with(": \"invalid order qty\""), "{f:?}");
    assert_eq!(f.body.as_deref(), Some(r#"{"code":400,"message":"invalid order qty"}"#), "the body is kept verbatim");
    let rogue = Rogue::start(|_, _| json(404, "order not found"));
    let f = expect(
        request(&client_at(&rogue.url(), FAST), &api_session(), "GET", "/api/query_order?order_id=1", None),
        PERPS_HTTP_STATUS,
        false,
    );
    assert!(f.message.contains("\"order not found\""), "{f:?}");
}

#[test]
fn timeout_messages_name_the_option_not_an_internal_type() {
    let rogue = Rogue::start(|_, _| vec![Step::Sleep(Duration::from_millis(1500))]);
    let f = expect(new_order(&client_at(&rogue.url(), FAST), &api_session(), ORDER), PERPS_TIMEOUT, true);
    assert!(f.message.contains("read_timeout_ms (500 ms)"), "{f:?}");
    let rogue = Rogue::start(|_, _| {
        let mut steps = vec![Step::Write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n".to_vec())];
        steps.extend((0..20).flat_map(|_| [Step::Write(b"x".to_vec()), Step::Sleep(Duration::from_millis(100))]));
        steps
    });
    let options = r#"{"read_timeout_ms":400,"total_timeout_ms":700}"#;
    let f = expect(new_order(&client_at(&rogue.url(), options), &api_session(), ORDER), PERPS_TIMEOUT, true);
    assert!(f.message.contains("total_timeout_ms (700 ms)"), "{f:?}");
    for f in [&f] {
        for internal in ["PerRead", "PerWrite", "Global", "RecvBody", "RecvResponse", "Timeout(", "Io(", "Kind("] {
            assert!(!f.message.contains(internal), "{f:?}");
        }
    }
}

// ---- 7. the venue's key set is trusted for certs_ttl_ms, then fetched again ------------------

const BSC_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

/// A sign-in venue: challenges signed by `signer` (0 = "k-old", 1 = "k-new"), certs serving
/// the set `published` (0 = both keys, 1 = only k-new: k-old withdrawn).
fn key_set_venue(signer: Arc<AtomicUsize>, published: Arc<AtomicUsize>) -> Rogue {
    let keys = [common::VenueKey::new(8, Some("k-old")), common::VenueKey::new(7, Some("k-new"))];
    let sets = [common::jwk_set(&[&keys[0], &keys[1]]), common::jwk_set(&[&keys[1]])];
    Rogue::start(move |seen, _| match seen.path() {
        "/auth/v1/offchain/certs" => json(200, &sets[published.load(Ordering::SeqCst)]),
        "/auth/v1/offchain/prepare-signin" => {
            let asked = seen.json();
            let now = perps::body_sign::now_ms() / 1000;
            let address = asked["address"].as_str().unwrap_or("");
            let payload =
                common::signin_payload("bsc", address, asked["requestId"].as_str().unwrap_or(""), now, now + 180);
            let key = &keys[signer.load(Ordering::SeqCst)];
            let jws = key.sign_jws(&key.header(), &payload.to_string());
            json(200, &serde_json::json!({"success": true, "signedData": jws}).to_string())
        }
        "/auth/v1/offchain/login" => json(
            200,
            r#"{"token":"login-token-5e2a","chain":"bsc","address":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"}"#,
        ),
        _ => json(404, ""),
    })
}

#[test]
fn a_withdrawn_key_stops_being_trusted_after_certs_ttl_ms() {
    let (signer, published) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let rogue = key_set_venue(signer.clone(), published.clone());
    let client = client_at(&rogue.url(), r#"{"certs_ttl_ms":600}"#);
    common::abi::signin(&client, &Session::new(), "bsc", BSC_KEY, 3600).unwrap();
    assert_eq!(rogue.count("/certs"), 1);
    // The venue withdraws k-old (say it leaked), and a forger keeps signing with it. Within
    // the lifetime the cached set still trusts it…
    published.store(1, Ordering::SeqCst);
    common::abi::signin(&client, &Session::new(), "bsc", BSC_KEY, 3600).unwrap();
    assert_eq!(rogue.count("/certs"), 1, "cached within certs_ttl_ms");
    // …after it, the set is fetched again (once) and the withdrawn key is refused.
    std::thread::sleep(Duration::from_millis(700));
    let f = common::abi::signin(&client, &Session::new(), "bsc", BSC_KEY, 3600).unwrap_err();
    assert_eq!(f.code, PERPS_VERIFICATION_FAILED, "{f:?}");
    assert!(f.message.contains("k-old"), "{f:?}");
    assert_eq!(rogue.count("/certs"), 2, "one fetch for the expired set, no second one for the unknown kid");
    // The venue's real key works, from the set just fetched.
    signer.store(1, Ordering::SeqCst);
    common::abi::signin(&client, &Session::new(), "bsc", BSC_KEY, 3600).unwrap();
    assert_eq!(rogue.count("/certs"), 2);
}

#[test]
fn certs_ttl_ms_zero_fetches_for_every_sign_in_and_still_once_per_challenge() {
    let (signer, published) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(1)));
    let rogue = key_set_venue(signer.clone(), published);
    let client = client_at(&rogue.url(), r#"{"certs_ttl_ms":0}"#);
    for n in 1..=3 {
        // Signed with k-old, which the fresh set lacks: refused, after exactly one fetch.
        let f = common::abi::signin(&client, &Session::new(), "bsc", BSC_KEY, 3600).unwrap_err();
        assert_eq!(f.code, PERPS_VERIFICATION_FAILED, "{f:?}");
        assert_eq!(rogue.count("/certs"), n);
    }
    signer.store(1, Ordering::SeqCst);
    common::abi::signin(&client, &Session::new(), "bsc", BSC_KEY, 3600).unwrap();
    assert_eq!(rogue.count("/certs"), 4);
    // The default lifetime is one hour: a client without the option keeps its set.
    let client = client_at(&rogue.url(), FAST);
    common::abi::signin(&client, &Session::new(), "bsc", BSC_KEY, 3600).unwrap();
    common::abi::signin(&client, &Session::new(), "bsc", BSC_KEY, 3600).unwrap();
    assert_eq!(rogue.count("/certs"), 5);
}

// ---- 2 (sign-in): a login answer is never kept; the wallet key is redacted -----------------

#[test]
fn sign_in_failures_keep_no_login_answer_and_show_no_wallet_key() {
    const TOKEN: &str =
        "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ0cmFkZXIiLCJleHAiOjQxMDI0NDQ4MDB9.c2lnbmF0dXJlLW9mLXRoZS12ZW51ZQ";
    let login_answers: Vec<(u16, String)> = vec![
        // A refusal that carries a token anyway, and quotes the wallet key.
        (
            400,
            serde_json::json!({"message": format!("bad signature by {BSC_KEY}; here is {TOKEN}"), "token": TOKEN})
                .to_string(),
        ),
        (401, format!("token {TOKEN} refused")),
        (500, serde_json::json!({"message": "internal", "data": {"token": TOKEN}}).to_string()),
    ];
    for (status, body) in login_answers {
        let (signer, published) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let keys = [common::VenueKey::new(8, Some("k-old")), common::VenueKey::new(7, Some("k-new"))];
        let certs = common::jwk_set(&[&keys[0], &keys[1]]);
        let answer = body.clone();
        let rogue = Rogue::start(move |seen, _| match seen.path() {
            "/auth/v1/offchain/certs" => json(200, &certs),
            "/auth/v1/offchain/prepare-signin" => {
                let asked = seen.json();
                let now = perps::body_sign::now_ms() / 1000;
                let address = asked["address"].as_str().unwrap_or("");
                let request_id = asked["requestId"].as_str().unwrap_or("");
                let payload = common::signin_payload("bsc", address, request_id, now, now + 180);
                let key = &keys[signer.load(Ordering::SeqCst) + published.load(Ordering::SeqCst)];
                let jws = key.sign_jws(&key.header(), &payload.to_string());
                json(200, &serde_json::json!({"success": true, "signedData": jws}).to_string())
            }
            _ => json(status, &answer),
        });
        let session = Session::new();
        let f = common::abi::signin(&client_at(&rogue.url(), FAST), &session, "bsc", BSC_KEY, 3600).unwrap_err();
        assert_eq!((f.code, f.http_status), (PERPS_HTTP_STATUS, status), "{f:?}");
        assert_eq!(f.body, None, "a login answer is never kept: {f:?}");
        assert_no_secret(
            &f,
            &[TOKEN.split('.').nth(1).unwrap(), TOKEN.split('.').nth(2).unwrap(), BSC_KEY, &BSC_KEY[2..]],
        );
        assert_eq!(session.info()["has_token"], false);
    }
    // prepare-signin refused with success=false, quoting the wallet key: the reason is in the
    // message and the body, redacted.
    let rogue = Rogue::start(|_, _| {
        json(200, &serde_json::json!({"success": false, "message": format!("wallet {BSC_KEY} is blocked")}).to_string())
    });
    let f = common::abi::signin(&client_at(&rogue.url(), FAST), &Session::new(), "bsc", BSC_KEY, 3600).unwrap_err();
    assert_eq!(f.code, PERPS_API_ERROR, "{f:?}");
    assert!(f.message.contains("\"wallet <redacted> is blocked\""), "{f:?}");
    assert!(f.body.as_deref().unwrap().contains("<redacted>"), "{f:?}");
    assert_no_secret(&f, &[BSC_KEY, &BSC_KEY[2..]]);
}
