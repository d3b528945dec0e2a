//! Server faults, through the C ABI: a misbehaving server on 127.0.0.1 (tests/common/
//! rogue_server.rs) or the sandbox venue does one bad thing at a time, and each test asserts
//! the documented `perps_code` and `may_have_reached_venue` (README, "Network error mapping").
//! For every order the server's own count proves the order reached it at most once: the
//! library never retries.

mod common;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::VenueKey;
use common::abi::{self, Client, Failure, Session, login, new_order, prepare, request, signin};
use perps::ffi::error::perps_code::{self, *};
use perps_sandbox::{Faults, Sandbox, SandboxConfig};
use rogue_server::{OnAccept, Rogue, Seen, Step, chunk, chunked_head, head_only, json, ms, response};
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::Duration;

const BSC_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const BSC_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;
const API_TOKEN: &str = "rogue-api-token-7f3a";
const NEW_ORDER: &str = "/perps/api/new_order";
/// Short limits so that every stall is noticed quickly.
const FAST: &str = r#"{"connect_timeout_ms":1000,"read_timeout_ms":250,"total_timeout_ms":3000}"#;

// ---- helpers ----

fn client_at(url: &str, options: &str) -> Client {
    Client::new(&format!("{url}/auth"), &format!("{url}/perps"), Some(options)).expect("client")
}

/// A session that can place orders at once (a web-site API credential): no sign-in needed.
fn api_session() -> Session {
    Session::from_api_key(API_TOKEN, &bs58::encode([1u8; 32]).into_string()).expect("api session")
}

fn expect(result: Result<String, Failure>, code: perps_code, reached: bool) -> Failure {
    let f = match result {
        Ok(answer) => panic!("expected {code:?}, got success: {answer}"),
        Err(f) => f,
    };
    assert_eq!(f.code, code, "{f:?}");
    assert_eq!(f.may_have_reached_venue, reached, "may_have_reached_venue in {f:?}");
    assert!(!f.message.is_empty());
    f
}

/// Send one order to a rogue server whose script answers every request, and check the
/// outcome and that the order reached the server exactly `expected_received` times.
fn order_against(
    script: impl Fn(&Seen, usize) -> Vec<Step> + Send + Sync + 'static,
    options: &str,
    code: perps_code,
    reached: bool,
    expected_received: usize,
) -> Failure {
    let rogue = Rogue::start(script);
    order_against_server(&rogue, options, code, reached, expected_received)
}

fn order_against_server(
    rogue: &Rogue,
    options: &str,
    code: perps_code,
    reached: bool,
    expected_received: usize,
) -> Failure {
    let client = client_at(&rogue.url(), options);
    let f = expect(new_order(&client, &api_session(), ORDER), code, reached);
    assert_eq!(rogue.count(NEW_ORDER), expected_received, "orders the server read (never retried)");
    f
}

/// The whole answer at once, then nothing: the body is cut and the connection reset.
fn reset_after(bytes: Vec<u8>) -> Vec<Step> {
    vec![Step::Write(bytes), ms(20), Step::Reset]
}

// ---- connection set-up: nothing was sent ----

#[test]
fn refused_connection_is_transport_and_not_sent() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let client = client_at(&format!("http://127.0.0.1:{port}"), FAST);
    let f = expect(new_order(&client, &api_session(), ORDER), PERPS_TRANSPORT, false);
    assert!(f.message.contains("request not sent"), "{f:?}");
    expect(prepare(&client, &Session::new(), "bsc", BSC_ADDRESS), PERPS_TRANSPORT, false);
}

#[test]
fn connect_timeout_when_the_accept_queue_is_full_is_not_sent() {
    use std::os::fd::AsRawFd;
    // A listener that never accepts, with its backlog lowered to 0: once one connection
    // waits in its queue, the kernel drops further SYNs and connect() hangs.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    // SAFETY: listen() on our own listening socket only changes its backlog.
    assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), 0) }, 0);
    let addr = listener.local_addr().unwrap();
    let mut queued = Vec::new();
    for _ in 0..4 {
        if let Ok(s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            queued.push(s);
        }
    }
    let client = client_at(&format!("http://{addr}"), r#"{"connect_timeout_ms":300,"total_timeout_ms":3000}"#);
    let started = std::time::Instant::now();
    let f = expect(new_order(&client, &api_session(), ORDER), PERPS_TIMEOUT, false);
    assert!(f.message.contains("request not sent"), "{f:?}");
    assert!(started.elapsed() < Duration::from_secs(2), "the connect timeout bounds the wait");
}

#[test]
fn tls_handshake_failure_is_transport_and_not_sent() {
    // An https URL to a server that answers the TLS ClientHello with plain HTTP.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let hellos = Arc::new(AtomicUsize::new(0));
    let seen = hellos.clone();
    let server = std::thread::spawn(move || {
        for _ in 0..2 {
            let Ok((mut stream, _)) = listener.accept() else { return };
            let mut buf = [0u8; 2048];
            if matches!(stream.read(&mut buf), Ok(n) if n > 0 && buf[0] == 0x16) {
                seen.fetch_add(1, Ordering::SeqCst); // a TLS handshake record, never HTTP
            }
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let url = format!("https://{addr}");
    let client = Client::new(&format!("{url}/auth"), &format!("{url}/perps"), Some(FAST)).unwrap();
    let f = expect(new_order(&client, &api_session(), ORDER), PERPS_TRANSPORT, false);
    assert!(f.message.contains("not sent"), "{f:?}");
    expect(prepare(&client, &Session::new(), "bsc", BSC_ADDRESS), PERPS_TRANSPORT, false);
    server.join().unwrap();
    assert_eq!(hellos.load(Ordering::SeqCst), 2, "only TLS handshakes arrived, no HTTP request");
}

// ---- the connection is lost after the request was sent ----

#[test]
fn accept_then_close_may_have_reached() {
    // The server closes without reading: the client cannot tell it did not read the order.
    let rogue = Rogue::start_with(OnAccept::Close, |_, _| vec![]);
    let f = order_against_server(&rogue, FAST, PERPS_TRANSPORT, true, 0);
    assert!(f.message.contains("may have received it"), "{f:?}");
    assert_eq!(rogue.accepted(), 1, "one connection, no retry on another");
}

#[test]
fn accept_then_reset_may_have_reached() {
    let rogue = Rogue::start_with(OnAccept::Reset, |_, _| vec![]);
    order_against_server(&rogue, FAST, PERPS_TRANSPORT, true, 0);
    assert_eq!(rogue.accepted(), 1);
}

#[test]
fn request_read_then_closed_without_an_answer() {
    let f = order_against(|_, _| vec![Step::Close], FAST, PERPS_TRANSPORT, true, 1);
    assert!(f.message.contains("may have received it"), "{f:?}");
}

#[test]
fn request_read_then_reset_without_an_answer() {
    order_against(|_, _| vec![ms(20), Step::Reset], FAST, PERPS_TRANSPORT, true, 1);
}

#[test]
fn reset_in_the_middle_of_the_headers() {
    let partial = b"HTTP/1.1 200 OK\r\nContent-Type: appli".to_vec();
    order_against(move |_, _| reset_after(partial.clone()), FAST, PERPS_TRANSPORT, true, 1);
}

#[test]
fn reset_in_the_middle_of_the_body() {
    let mut partial = head_only(200, 64);
    partial.extend_from_slice(br#"{"code":0,"mess"#);
    order_against(move |_, _| reset_after(partial.clone()), FAST, PERPS_TRANSPORT, true, 1);
}

#[test]
fn body_shorter_than_its_content_length_then_closed() {
    let mut partial = head_only(200, 64);
    partial.extend_from_slice(br#"{"code":0}"#);
    let f = order_against(move |_, _| vec![Step::Write(partial.clone()), Step::Close], FAST, PERPS_TRANSPORT, true, 1);
    assert_eq!(f.http_status, 200, "the status line had arrived: {f:?}");
}

#[test]
fn chunked_body_truncated() {
    let mut partial = chunked_head(200);
    partial.extend(chunk(br#"{"code":0,"#));
    // No terminating zero-length chunk: the connection just ends.
    order_against(move |_, _| vec![Step::Write(partial.clone()), Step::Close], FAST, PERPS_TRANSPORT, true, 1);
}

#[test]
fn chunked_body_malformed() {
    let mut bad = chunked_head(200);
    bad.extend_from_slice(b"zz\r\n{\"code\":0}\r\n0\r\n\r\n");
    order_against(move |_, _| vec![Step::Write(bad.clone()), Step::Close], FAST, PERPS_TRANSPORT, true, 1);
}

#[test]
fn an_answer_that_is_not_http() {
    order_against(
        |_, _| vec![Step::Write(b"SSH-2.0-OpenSSH_9.2\r\n\r\n".to_vec()), Step::Close],
        FAST,
        PERPS_TRANSPORT,
        true,
        1,
    );
}

// ---- time limits after the request was sent ----

#[test]
fn slow_headers_beyond_the_read_timeout() {
    let f = order_against(|_, _| [vec![ms(1200)], json(200, r#"{"code":0}"#)].concat(), FAST, PERPS_TIMEOUT, true, 1);
    assert!(f.message.contains("may have received it"), "{f:?}");
}

#[test]
fn slow_body_beyond_the_read_timeout() {
    let body = br#"{"code":0,"message":"success"}"#;
    let head = head_only(200, body.len());
    let f = order_against(
        move |_, _| {
            vec![
                Step::Write(head.clone()),
                Step::Write(body[..10].to_vec()),
                ms(1200),
                Step::Write(body[10..].to_vec()),
            ]
        },
        FAST,
        PERPS_TIMEOUT,
        true,
        1,
    );
    assert!(f.message.contains("may have received it"), "{f:?}");
}

#[test]
fn body_trickling_past_the_total_timeout() {
    // Every byte comes within the read timeout, but the whole answer takes too long.
    let body = br#"{"code":0,"message":"success","padding":"................"}"#;
    let head = head_only(200, body.len());
    let script = move |_: &Seen, _| {
        let mut steps = vec![Step::Write(head.clone())];
        for b in body.iter() {
            steps.push(Step::Write(vec![*b]));
            steps.push(ms(60));
        }
        steps
    };
    let started = std::time::Instant::now();
    order_against(script, r#"{"read_timeout_ms":400,"total_timeout_ms":900}"#, PERPS_TIMEOUT, true, 1);
    assert!(started.elapsed() < Duration::from_secs(3), "the total timeout bounds the exchange");
}

// ---- 2xx answers the client cannot use: BAD_RESPONSE, may have reached ----

#[test]
fn body_over_the_size_cap() {
    let big = format!(r#"{{"code":0,"message":"{}"}}"#, "x".repeat(4096));
    let options = r#"{"read_timeout_ms":2000,"max_response_bytes":1024}"#;
    let with_length = big.clone();
    let f = order_against(move |_, _| json(200, &with_length), options, PERPS_BAD_RESPONSE, true, 1);
    assert!(f.message.contains("larger than max_response_bytes"), "{f:?}");
    // The same with a chunked body (no Content-Length to refuse up front).
    let f = order_against(
        move |_, _| {
            let mut all = chunked_head(200);
            for piece in big.as_bytes().chunks(500) {
                all.extend(chunk(piece));
            }
            all.extend_from_slice(b"0\r\n\r\n");
            vec![Step::Write(all)]
        },
        options,
        PERPS_BAD_RESPONSE,
        true,
        1,
    );
    assert!(f.message.contains("larger than max_response_bytes"), "{f:?}");
}

#[test]
fn body_not_utf8() {
    let f = order_against(
        |_, _| {
            vec![Step::Write(response(200, &["Content-Type: application/json"], b"{\"code\":0,\"m\":\"\xff\xfe\"}"))]
        },
        FAST,
        PERPS_BAD_RESPONSE,
        true,
        1,
    );
    assert!(f.message.contains("not UTF-8"), "{f:?}");
}

#[test]
fn non_json_and_empty_answers() {
    for body in ["<html>502 Bad Gateway</html>", "", "OK", "{\"code\":0", "{\"code\":0}{\"code\":0}"] {
        let text = body.to_owned();
        let f = order_against(move |_, _| json(200, &text), FAST, PERPS_BAD_RESPONSE, true, 1);
        assert_eq!(f.http_status, 200);
        assert_eq!(f.body.as_deref(), Some(body), "the venue's body is attached verbatim");
    }
    // 204 No Content: nothing to read as a venue answer.
    order_against(
        |_, _| vec![Step::Write(b"HTTP/1.1 204 No Content\r\n\r\n".to_vec())],
        FAST,
        PERPS_BAD_RESPONSE,
        true,
        1,
    );
}

#[test]
fn json_of_the_wrong_shape() {
    // Valid JSON, but not the venue's answer object, or a `code` that is neither an integer,
    // a string of digits nor a whole number: the client cannot tell whether the order was
    // accepted.
    for body in [
        "[]",
        "[{\"code\":0}]",
        "\"success\"",
        "0",
        "null",
        r#"{"code":"0.0"}"#,
        r#"{"code":"success"}"#,
        r#"{"code":true}"#,
        r#"{"code":0.5}"#,
        r#"{"code":[0]}"#,
    ] {
        let text = body.to_owned();
        let f = order_against(move |_, _| json(200, &text), FAST, PERPS_BAD_RESPONSE, true, 1);
        assert_eq!(f.body.as_deref(), Some(body), "{f:?}");
    }
}

#[test]
fn code_nonzero_under_200_is_an_api_error_not_reached() {
    let f = order_against(
        |_, _| json(200, r#"{"code":10001,"message":"insufficient margin"}"#),
        FAST,
        PERPS_API_ERROR,
        false,
        1,
    );
    assert!(f.message.contains("insufficient margin"), "{f:?}");
    // And the shapes of success (a code of 0 however written, or none): the venue's text,
    // with the order's generated cl_ord_id (the one the venue received) added at the end of
    // the object.
    for body in [
        r#"{"code":0,"message":"success"}"#,
        r#"{"code":"0","message":"success"}"#,
        r#"{"code":0.0,"message":"success"}"#,
        r#"{"code":null,"message":"success"}"#,
        r#"{"result":{"order_id":1}}"#,
        "{}",
    ] {
        let text = body.to_owned();
        let rogue = Rogue::start(move |_, _| json(200, &text));
        let client = client_at(&rogue.url(), FAST);
        let answer = new_order(&client, &api_session(), ORDER).unwrap();
        assert_eq!(rogue.count(NEW_ORDER), 1);
        let sent = rogue.seen()[0].json()["cl_ord_id"].as_str().unwrap().to_owned();
        let separator = if body == "{}" { "" } else { "," };
        assert_eq!(answer, format!("{}{separator}\"cl_ord_id\":\"{sent}\"}}", &body[..body.len() - 1]));
    }
    // A venue answer that names the order's cl_ord_id itself is returned unchanged.
    let rogue = Rogue::start(|_, _| json(200, r#"{"code":0,"cl_ord_id":"venue-said"}"#));
    let client = client_at(&rogue.url(), FAST);
    assert_eq!(new_order(&client, &api_session(), ORDER).unwrap(), r#"{"code":0,"cl_ord_id":"venue-said"}"#);
}

// ---- HTTP status answers ----

#[test]
fn http_5xx_with_and_without_body_may_have_reached() {
    for status in [500u16, 502, 503, 504] {
        for body in ["", r#"{"code":500,"message":"internal"}"#, "<html>gateway</html>"] {
            let text = body.to_owned();
            let f = order_against(move |_, _| json(status, &text), FAST, PERPS_HTTP_STATUS, true, 1);
            assert_eq!(f.http_status, status);
            assert_eq!(f.body.as_deref().unwrap_or(""), body);
            assert!(f.message.contains(&format!("HTTP {status}")), "{f:?}");
        }
    }
}

#[test]
fn http_4xx_refusals_with_and_without_body_not_reached() {
    for status in [400u16, 401, 403, 404, 429] {
        for body in ["", r#"{"code":1,"message":"refused"}"#] {
            let text = body.to_owned();
            let f = order_against(move |_, _| json(status, &text), FAST, PERPS_HTTP_STATUS, false, 1);
            assert_eq!(f.http_status, status);
            assert_eq!(f.body.as_deref().unwrap_or(""), body);
        }
    }
}

#[test]
fn error_status_with_an_unreadable_body_keeps_its_status() {
    // A refusal whose body is not UTF-8, or too large, is still a refusal (HTTP 4xx, not
    // reached); a 5xx stays "may have reached".
    for (status, reached) in [(401u16, false), (403, false), (429, false), (503, true)] {
        let f = order_against(
            move |_, _| {
                vec![Step::Write(response(status, &["Content-Type: text/html"], b"<p>Zugriff verweigert \xe4</p>"))]
            },
            FAST,
            PERPS_HTTP_STATUS,
            reached,
            1,
        );
        assert_eq!(f.http_status, status, "{f:?}");
        let big = "x".repeat(4096);
        let f = order_against(
            move |_, _| json(status, &big),
            r#"{"read_timeout_ms":2000,"max_response_bytes":1024}"#,
            PERPS_HTTP_STATUS,
            reached,
            1,
        );
        assert_eq!(f.http_status, status, "{f:?}");
    }
}

#[test]
fn informational_answer_before_the_final_one() {
    // 103 Early Hints, then the real answer: the 1xx must not be taken for the result.
    let mut both = b"HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n".to_vec();
    both.extend(response(200, &["Content-Type: application/json"], br#"{"code":0,"message":"success"}"#));
    let rogue = Rogue::start(move |_, _| vec![Step::Write(both.clone())]);
    let client = client_at(&rogue.url(), FAST);
    let answer = new_order(&client, &api_session(), ORDER).expect("the 1xx is skipped, the 200 is the answer");
    assert!(answer.contains("success"));
    assert_eq!(rogue.count(NEW_ORDER), 1);
}

#[test]
fn redirects_are_not_followed_and_the_bearer_stays_home() {
    let elsewhere = Rogue::start(|_, _| json(200, r#"{"code":0}"#));
    for status in [301u16, 302, 303, 307, 308] {
        let location = format!("Location: {}/perps/api/new_order", elsewhere.url());
        let rogue = Rogue::start(move |_, _| {
            vec![Step::Write(response(status, &[location.as_str(), "Content-Type: application/json"], b"{}"))]
        });
        let f = order_against_server(&rogue, FAST, PERPS_HTTP_STATUS, false, 1);
        assert_eq!(f.http_status, status);
        assert!(f.message.contains("redirects are never followed"), "{f:?}");
        let order = &rogue.seen()[0];
        assert_eq!(order.header("authorization"), Some(format!("Bearer {API_TOKEN}").as_str()));
        // Sign-in requests are not followed either.
        let client = client_at(&rogue.url(), FAST);
        expect(prepare(&client, &Session::new(), "bsc", BSC_ADDRESS), PERPS_HTTP_STATUS, false);
        // A generic GET with the bearer.
        expect(request(&client, &api_session(), "GET", "/api/query_open_orders", None), PERPS_HTTP_STATUS, false);
    }
    assert_eq!(elsewhere.accepted(), 0, "the redirect target saw no connection at all");
    assert!(elsewhere.seen().is_empty());
}

#[test]
fn a_closed_keep_alive_connection_is_not_a_duplicate() {
    // The server answers, keeps quiet about closing, then closes the idle connection.
    // The next order goes out once, on a new connection.
    let rogue = Rogue::start(|_, _| vec![Step::Write(response(200, &[], br#"{"code":0}"#)), ms(50), Step::Close]);
    let client = client_at(&rogue.url(), FAST);
    let session = api_session();
    for n in 1..=3 {
        new_order(&client, &session, ORDER).expect("the closed pooled connection is detected, not reused");
        assert_eq!(rogue.count(NEW_ORDER), n);
        std::thread::sleep(Duration::from_millis(150));
    }
    assert_eq!(rogue.accepted(), 3);
}

#[test]
fn generic_requests_follow_the_same_mapping() {
    let client_for = |rogue: &Rogue| client_at(&rogue.url(), FAST);
    let rogue = Rogue::start(|_, _| json(503, r#"{"code":503}"#));
    let f = expect(
        request(&client_for(&rogue), &api_session(), "GET", "/api/query_open_orders", None),
        PERPS_HTTP_STATUS,
        true,
    );
    assert_eq!(f.http_status, 503);
    let rogue = Rogue::start(|_, _| vec![Step::Reset]);
    expect(
        request(&client_for(&rogue), &api_session(), "POST", "/api/cancel_order", Some(r#"{"order_id":1}"#)),
        PERPS_TRANSPORT,
        true,
    );
    assert_eq!(rogue.count("/api/cancel_order"), 1, "a cancel is not retried either");
    let rogue = Rogue::start(|_, _| [vec![ms(1000)], json(200, "{}")].concat());
    expect(
        request(&client_for(&rogue), &api_session(), "GET", "/api/query_order?order_id=1", None),
        PERPS_TIMEOUT,
        true,
    );
    assert_eq!(rogue.count("/api/query_order"), 1, "a read is not retried either");
}

// ---- sign-in against a scripted venue ----

/// A scripted venue for sign-in: challenges signed by `signers[active]` with the venue
/// clock (system clock + `clock_secs`); certs and login answers chosen by the test.
/// The venue's answer to a login request, chosen by the test.
type LoginScript = Box<dyn Fn(&Seen) -> Vec<Step> + Send + Sync>;

struct ScriptedVenue {
    signers: Vec<VenueKey>,
    active: Arc<AtomicUsize>,
    clock_secs: Arc<AtomicI64>,
    certs: Box<dyn Fn(usize) -> Vec<Step> + Send + Sync>,
    login: LoginScript,
}

impl ScriptedVenue {
    fn new(signer: VenueKey, certs: Box<dyn Fn(usize) -> Vec<Step> + Send + Sync>) -> ScriptedVenue {
        ScriptedVenue {
            signers: vec![signer],
            active: Arc::default(),
            clock_secs: Arc::default(),
            certs,
            login: login_ok(),
        }
    }

    /// Signed by key 7 (kid "k1"), whose certs are served.
    fn honest() -> ScriptedVenue {
        ScriptedVenue::new(VenueKey::new(7, Some("k1")), certs_of(&[&VenueKey::new(7, Some("k1"))]))
    }
}

fn now_secs() -> i64 {
    perps::body_sign::now_ms() / 1000
}

fn login_ok() -> LoginScript {
    Box::new(|_| json(200, &format!(r#"{{"token":"login-token-9c1d","chain":"bsc","address":"{BSC_ADDRESS}"}}"#)))
}

fn certs_of(keys: &[&VenueKey]) -> Box<dyn Fn(usize) -> Vec<Step> + Send + Sync> {
    let set = common::jwk_set(keys);
    Box::new(move |_| json(200, &set))
}

fn start_venue(venue: ScriptedVenue) -> Rogue {
    let certs_served = AtomicUsize::new(0);
    Rogue::start(move |seen, _| match seen.path() {
        "/auth/v1/offchain/prepare-signin" => {
            let asked = seen.json();
            let iat = now_secs() + venue.clock_secs.load(Ordering::SeqCst);
            let payload = common::signin_payload(
                "bsc",
                asked["address"].as_str().unwrap_or(""),
                asked["requestId"].as_str().unwrap_or(""),
                iat,
                iat + 180,
            );
            let signer = &venue.signers[venue.active.load(Ordering::SeqCst)];
            let jws = signer.sign_jws(&signer.header(), &payload.to_string());
            json(200, &serde_json::json!({"success": true, "signedData": jws}).to_string())
        }
        "/auth/v1/offchain/certs" => (venue.certs)(certs_served.fetch_add(1, Ordering::SeqCst)),
        "/auth/v1/offchain/login" => (venue.login)(seen),
        "/perps/api/kline/time" => json(200, &(now_secs() + venue.clock_secs.load(Ordering::SeqCst)).to_string()),
        _ => json(200, r#"{"code":0}"#),
    })
}

fn prepare_login(client: &Client, session: &Session) -> Result<String, Failure> {
    let payload = prepare(client, session, "bsc", BSC_ADDRESS)?;
    let signature = abi::wallet_sign("bsc", BSC_KEY, &payload).unwrap();
    login(client, session, &signature, 3600)
}

#[test]
fn scripted_venue_sign_in_works() {
    let rogue = start_venue(ScriptedVenue::honest());
    let client = client_at(&rogue.url(), FAST);
    let session = Session::new();
    prepare_login(&client, &session).unwrap();
    assert_eq!(session.info()["has_token"], true);
    assert_eq!(rogue.count("/certs"), 1);
    prepare_login(&client, &Session::new()).unwrap();
    assert_eq!(rogue.count("/certs"), 1, "certs are cached in the client");
}

#[test]
fn certs_endpoint_down() {
    // The sandbox's certs answer 503: a server error, may have reached (README table).
    let venue = Sandbox::start(SandboxConfig::default()).unwrap();
    venue.set_faults(Faults { certs_down: true, ..Default::default() });
    let client = Client::new(&venue.base_url(), &venue.perps_url(), None).unwrap();
    let session = Session::new();
    let f = expect(prepare(&client, &session, "bsc", BSC_ADDRESS), PERPS_HTTP_STATUS, true);
    assert_eq!(f.http_status, 503);
    assert_eq!(session.info()["pending_signin"], false);
    // Scripted: certs 404, reset, stalled.
    for (certs, code, reached) in [
        (json(404, "not found"), PERPS_HTTP_STATUS, false),
        (vec![Step::Reset], PERPS_TRANSPORT, true),
        (vec![ms(1000), Step::Close], PERPS_TIMEOUT, true),
    ] {
        let rogue = start_venue(ScriptedVenue::new(VenueKey::new(7, Some("k1")), Box::new(move |_| certs.clone())));
        let session = Session::new();
        expect(prepare(&client_at(&rogue.url(), FAST), &session, "bsc", BSC_ADDRESS), code, reached);
        assert_eq!(session.info()["pending_signin"], false, "nothing unverified is kept");
        assert_eq!(rogue.count("/certs"), 1, "a failed certs fetch is not retried");
    }
}

#[test]
fn certs_without_the_challenge_key_id() {
    // Certs serve k-a only. After a sign-in under k-a, the venue signs with k-b.
    let mut venue = ScriptedVenue::new(VenueKey::new(7, Some("k-a")), certs_of(&[&VenueKey::new(7, Some("k-a"))]));
    venue.signers.push(VenueKey::new(8, Some("k-b")));
    let active = venue.active.clone();
    let rogue = start_venue(venue);
    let client = client_at(&rogue.url(), FAST);
    prepare_login(&client, &Session::new()).unwrap();
    assert_eq!(rogue.count("/certs"), 1);
    active.store(1, Ordering::SeqCst);
    for attempt in 1..=2 {
        let session = Session::new();
        let f = expect(prepare(&client, &session, "bsc", BSC_ADDRESS), PERPS_VERIFICATION_FAILED, false);
        assert!(f.message.contains("k-b"), "{f:?}");
        assert_eq!(rogue.count("/certs"), 1 + attempt, "the cached set lacks the kid: exactly one refetch (no loop)");
        assert_eq!(session.info()["pending_signin"], false);
    }
    // A client with no cached set fetches once and does not refetch what it just fetched.
    let f = expect(
        prepare(&client_at(&rogue.url(), FAST), &Session::new(), "bsc", BSC_ADDRESS),
        PERPS_VERIFICATION_FAILED,
        false,
    );
    assert!(f.message.contains("k-b"), "{f:?}");
    assert_eq!(rogue.count("/certs"), 4);
    assert_eq!(rogue.count("/login"), 1, "only the first sign-in logged in");
}

#[test]
fn certs_whose_keys_do_not_verify_a_challenge_without_kid() {
    let mut venue = ScriptedVenue::new(
        VenueKey::new(7, None),
        certs_of(&[&VenueKey::new(7, None), &VenueKey::new(9, Some("other"))]),
    );
    venue.signers.push(VenueKey::new(8, None));
    let active = venue.active.clone();
    let rogue = start_venue(venue);
    let client = client_at(&rogue.url(), FAST);
    prepare_login(&client, &Session::new()).unwrap();
    active.store(1, Ordering::SeqCst);
    let f = expect(prepare(&client, &Session::new(), "bsc", BSC_ADDRESS), PERPS_VERIFICATION_FAILED, false);
    assert!(f.message.contains("does not verify"), "{f:?}");
    assert_eq!(rogue.count("/certs"), 2, "one refetch, then a clear failure");
}

#[test]
fn unusable_certs_documents() {
    let rsa = r#"{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB","kid":"k1"}]}"#;
    for body in ["not json", "{}", r#"{"keys":{}}"#, r#"{"keys":[]}"#, rsa] {
        let text = body.to_owned();
        let rogue = start_venue(ScriptedVenue::new(VenueKey::new(7, Some("k1")), Box::new(move |_| json(200, &text))));
        let f = expect(
            prepare(&client_at(&rogue.url(), FAST), &Session::new(), "bsc", BSC_ADDRESS),
            PERPS_BAD_RESPONSE,
            false,
        );
        assert_eq!(f.body.as_deref(), Some(body), "{f:?}");
        assert_eq!(rogue.count("/certs"), 1);
    }
}

#[test]
fn key_rotated_after_the_certs_were_cached() {
    // Sign in under k-old (certs cached), the venue rotates to k-new (certs now serve only
    // k-new): the next sign-in refetches once and succeeds; the one after fetches nothing.
    let old = VenueKey::new(8, Some("k-old"));
    let new = VenueKey::new(7, Some("k-new"));
    let sets = [common::jwk_set(&[&old]), common::jwk_set(&[&new])];
    let active = Arc::new(AtomicUsize::new(0));
    let serving = active.clone();
    let rogue = start_venue(ScriptedVenue {
        signers: vec![old, new],
        active: active.clone(),
        clock_secs: Arc::default(),
        certs: Box::new(move |_| json(200, &sets[serving.load(Ordering::SeqCst)])),
        login: login_ok(),
    });
    let client = client_at(&rogue.url(), FAST);
    prepare_login(&client, &Session::new()).unwrap();
    assert_eq!(rogue.count("/certs"), 1);
    active.store(1, Ordering::SeqCst);
    let session = Session::new();
    prepare_login(&client, &session).unwrap();
    assert_eq!(session.info()["has_token"], true);
    assert_eq!(rogue.count("/certs"), 2, "the unknown kid caused exactly one refetch");
    prepare_login(&client, &Session::new()).unwrap();
    assert_eq!(rogue.count("/certs"), 2, "the refreshed set is cached");
}

#[test]
fn key_rotation_mid_flow_on_the_sandbox() {
    // prepare (challenge signed by key 1) → the venue rotates → login: the sandbox still
    // accepts challenges signed before the rotation (as the README documents), so it works.
    let venue = Sandbox::start(SandboxConfig::default()).unwrap();
    let client = Client::new(&venue.base_url(), &venue.perps_url(), None).unwrap();
    let session = Session::new();
    let payload = prepare(&client, &session, "bsc", BSC_ADDRESS).unwrap();
    venue.rotate_key();
    let signature = abi::wallet_sign("bsc", BSC_KEY, &payload).unwrap();
    login(&client, &session, &signature, 3600).unwrap();
    new_order(&client, &session, ORDER).unwrap();
    // The next challenge carries the new kid: one certs refetch, then success.
    let before = venue.stats().requests;
    signin(&client, &Session::new(), "bsc", BSC_KEY, 3600).unwrap();
    assert_eq!(venue.stats().requests - before, 3, "prepare + one certs refetch + login");
    assert_eq!(venue.stats().orders_received, 1);
}

#[test]
fn key_rotation_mid_flow_when_the_venue_drops_the_old_key() {
    // A venue that refuses challenges signed before its rotation answers login 400: a
    // refusal, not reached; no token is kept.
    let mut venue = ScriptedVenue::honest();
    venue.login = Box::new(|_| json(400, r#"{"code":400,"message":"signedData rejected: unknown kid"}"#));
    let rogue = start_venue(venue);
    let session = Session::new();
    let f = expect(prepare_login(&client_at(&rogue.url(), FAST), &session), PERPS_HTTP_STATUS, false);
    assert_eq!(f.http_status, 400);
    // The venue's reason is in the message; a login answer's body is never kept (it may
    // hold a token).
    assert!(f.message.contains("unknown kid"), "{f:?}");
    assert_eq!(f.body, None);
    assert_eq!(session.info()["has_token"], false);
    assert_eq!(rogue.count("/login"), 1);
}

#[test]
fn challenge_expired_between_prepare_and_login() {
    // The venue's clock moves 400 s on (as if the user took that long to sign); the client
    // learns it from kline/time, so no real waiting is needed. Login is refused locally and
    // nothing is sent; a fresh challenge then works.
    let venue = ScriptedVenue::honest();
    let clock = venue.clock_secs.clone();
    let rogue = start_venue(venue);
    let client = client_at(&rogue.url(), FAST);
    let session = Session::new();
    let payload = prepare(&client, &session, "bsc", BSC_ADDRESS).unwrap();
    let signature = abi::wallet_sign("bsc", BSC_KEY, &payload).unwrap();
    clock.store(400, Ordering::SeqCst);
    let mut offset = 0i64;
    abi::code(|e| perps::ffi::client::perps_client_sync_time(client.0, &mut offset, e)).unwrap();
    assert!((399_000..=401_500).contains(&offset), "offset {offset}");
    let f = expect(login(&client, &session, &signature, 3600), PERPS_INVALID_STATE, false);
    assert!(f.message.contains("expired"), "{f:?}");
    assert_eq!(rogue.count("/login"), 0, "an expired challenge is never sent");
    assert_eq!(session.info()["has_token"], false);
    prepare_login(&client, &session).unwrap();
    assert_eq!(rogue.count("/login"), 1);
}

#[test]
fn challenge_expired_at_the_venue() {
    // The client thought the challenge was fresh; the venue says it expired: a refusal.
    let mut venue = ScriptedVenue::honest();
    venue.login = Box::new(|_| json(400, r#"{"code":400,"message":"signedData has expired"}"#));
    let rogue = start_venue(venue);
    let f = expect(prepare_login(&client_at(&rogue.url(), FAST), &Session::new()), PERPS_HTTP_STATUS, false);
    assert_eq!(f.http_status, 400);
}

#[test]
fn prepare_signin_answers_the_client_cannot_use() {
    for (answer, code, reached) in [
        (json(200, r#"{"success":false,"message":"address blocked"}"#), PERPS_API_ERROR, false),
        (json(200, r#"{"success":true}"#), PERPS_BAD_RESPONSE, false),
        (json(200, r#"{"success":true,"signedData":42}"#), PERPS_BAD_RESPONSE, false),
        (json(200, "<html>"), PERPS_BAD_RESPONSE, false),
        (json(200, r#"{"success":true,"signedData":"a.b.c"}"#), PERPS_VERIFICATION_FAILED, false),
        (json(500, ""), PERPS_HTTP_STATUS, true),
        (json(429, ""), PERPS_HTTP_STATUS, false),
        (vec![Step::Reset], PERPS_TRANSPORT, true),
        (vec![ms(1000), Step::Close], PERPS_TIMEOUT, true),
    ] {
        let certs = common::jwk_set(&[&VenueKey::new(7, Some("k1"))]);
        let rogue = Rogue::start(
            move |seen, _| {
                if seen.path().ends_with("/certs") { json(200, &certs) } else { answer.clone() }
            },
        );
        let session = Session::new();
        expect(prepare(&client_at(&rogue.url(), FAST), &session, "bsc", BSC_ADDRESS), code, reached);
        assert_eq!(session.info()["pending_signin"], false);
        assert_eq!(rogue.count("/prepare-signin"), 1);
    }
}

#[test]
fn login_answers_the_client_cannot_use_keep_no_token() {
    const SECRET: &str = "eyJsecret-token-do-not-leak";
    let cases: Vec<(Vec<Step>, perps_code, bool)> = vec![
        (json(200, "not json"), PERPS_BAD_RESPONSE, false),
        // A cut JSON answer carrying the token: the token must not ride along in the error.
        (json(200, &format!(r#"{{"token":"{SECRET}","chain":"bsc""#)), PERPS_BAD_RESPONSE, false),
        (json(200, r#"{"chain":"bsc"}"#), PERPS_BAD_RESPONSE, false),
        (json(200, &format!(r#"{{"token":"{SECRET}","chain":"bsc"}}"#)), PERPS_BAD_RESPONSE, false),
        (
            json(200, &format!(r#"{{"token":"has space {SECRET}","chain":"bsc","address":"{BSC_ADDRESS}"}}"#)),
            PERPS_BAD_RESPONSE,
            false,
        ),
        (
            json(200, &format!(r#"{{"token":"{SECRET}","chain":"solana","address":"{BSC_ADDRESS}"}}"#)),
            PERPS_VERIFICATION_FAILED,
            false,
        ),
        (json(401, r#"{"code":401,"message":"bad wallet signature"}"#), PERPS_HTTP_STATUS, false),
        (json(502, ""), PERPS_HTTP_STATUS, true),
        (vec![Step::Reset], PERPS_TRANSPORT, true),
        (vec![ms(1000), Step::Close], PERPS_TIMEOUT, true),
    ];
    for (answer, code, reached) in cases {
        let mut venue = ScriptedVenue::honest();
        venue.login = Box::new(move |_| answer.clone());
        let rogue = start_venue(venue);
        let session = Session::new();
        let f = expect(prepare_login(&client_at(&rogue.url(), FAST), &session), code, reached);
        assert_eq!(session.info()["has_token"], false, "no token kept from {f:?}");
        assert!(!f.message.contains(SECRET) && !f.body.unwrap_or_default().contains(SECRET), "token leaked: {code:?}");
        assert_eq!(rogue.count("/login"), 1, "login is sent once");
    }
}

#[test]
fn clock_sync_answers_the_client_cannot_use() {
    // A good sync first; then every unusable answer leaves the offset as it was.
    let now = Arc::new(AtomicI64::new(0));
    let answer = Arc::new(std::sync::Mutex::new(json(200, "0")));
    let (clock, script) = (now.clone(), answer.clone());
    let rogue = Rogue::start(move |_, _| {
        let steps = script.lock().unwrap().clone();
        if steps.is_empty() { json(200, &(now_secs() + clock.load(Ordering::SeqCst)).to_string()) } else { steps }
    });
    let client = client_at(&rogue.url(), FAST);
    let sync = |client: &Client| {
        let mut offset = -1i64;
        abi::code(|e| perps::ffi::client::perps_client_sync_time(client.0, &mut offset, e)).map(|()| offset)
    };
    *answer.lock().unwrap() = vec![];
    now.store(100, Ordering::SeqCst);
    let offset = sync(&client).unwrap();
    assert!((99_000..=101_500).contains(&offset), "offset {offset}");
    for body in ["9223372036854775807", "-9223372036854775808", "253402300800", "-1", "1e12", "17e8", "now", "", "{}"] {
        *answer.lock().unwrap() = json(200, body);
        let f = expect(sync(&client).map(|o| o.to_string()), PERPS_BAD_RESPONSE, false);
        assert_eq!(f.body.as_deref(), Some(body), "{f:?}");
    }
    for (steps, code, reached) in [
        (json(503, ""), PERPS_HTTP_STATUS, true),
        (vec![Step::Reset], PERPS_TRANSPORT, true),
        (vec![ms(1000), Step::Close], PERPS_TIMEOUT, true),
    ] {
        *answer.lock().unwrap() = steps;
        expect(sync(&client).map(|o| o.to_string()), code, reached);
    }
    // The offset measured before the failures is still the one in use: an order's
    // timestamp is the local clock + 100 s.
    *answer.lock().unwrap() = json(200, r#"{"code":0}"#);
    new_order(&client, &api_session(), ORDER).unwrap();
    let stamp: i64 = rogue.seen().last().unwrap().header("x-request-timestamp").unwrap().parse().unwrap();
    let local = perps::body_sign::now_ms();
    assert!((local + 98_000..=local + 101_500).contains(&stamp), "timestamp {stamp} vs local {local}");
    assert_eq!(rogue.count("/api/kline/time"), 1 + 9 + 3, "each sync sent once");
}
