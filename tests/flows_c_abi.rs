//! The network flows through the C ABI against the in-process sandbox venue: both chains
//! end to end, the external-signer and API-credential paths, generic requests, the clock
//! offset, and every documented error mapping with the fault that provokes it.

mod common;

use common::abi::{
    self, Client, Failure, Session, c, login, new_order, prepare, request, signin, wallet_address, wallet_sign,
};
use perps::ffi::error::perps_code::*;
use perps_sandbox::{Faults, Sandbox, SandboxConfig};

const BSC_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const BSC_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
/// RFC 8032 test 2 seed, as a base58 Solana keypair is derived from it below.
const SOLANA_SEED_HEX: &str = "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb";
const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;

fn venue() -> Sandbox {
    Sandbox::start(SandboxConfig::default()).expect("sandbox starts")
}

fn client_for(venue: &Sandbox) -> Client {
    Client::new(&venue.base_url(), &venue.perps_url(), None).expect("client")
}

fn solana_keypair_b58() -> String {
    let seed: [u8; 32] = common::unhex(SOLANA_SEED_HEX).try_into().unwrap();
    bs58::encode(ed25519_dalek::SigningKey::from_bytes(&seed).to_keypair_bytes()).into_string()
}

fn signed_in(venue: &Sandbox) -> (Client, Session) {
    let client = client_for(venue);
    let session = Session::new();
    signin(&client, &session, "bsc", BSC_KEY, 3600).expect("sign-in");
    (client, session)
}

fn assert_failure(
    result: Result<String, Failure>,
    code: perps::ffi::error::perps_code,
    reached: bool,
    fragment: &str,
) -> Failure {
    let f = result.expect_err("expected a failure");
    assert_eq!(f.code, code, "{f:?}");
    assert_eq!(f.may_have_reached_venue, reached, "may_have_reached_venue in {f:?}");
    assert!(f.message.contains(fragment), "message {:?} lacks {fragment:?}", f.message);
    f
}

#[test]
fn bsc_signin_then_order_end_to_end() {
    let venue = venue();
    let client = client_for(&venue);
    let session = Session::new();
    let result: serde_json::Value =
        serde_json::from_str(&signin(&client, &session, "bsc", BSC_KEY, 3600).unwrap()).unwrap();
    assert!(result["address"].as_str().unwrap().eq_ignore_ascii_case(BSC_ADDRESS));
    assert_eq!(result["chain"], "bsc");
    let info = session.info();
    assert_eq!(info["has_token"], true);
    assert_eq!(info["pending_signin"], false);
    let expires = info["token_expires_at"].as_i64().unwrap();
    let now = perps::body_sign::now_ms() / 1000;
    assert!((now + 3590..=now + 3610).contains(&expires), "token expiry {expires} vs now {now}");
    let answer: serde_json::Value = serde_json::from_str(&new_order(&client, &session, ORDER).unwrap()).unwrap();
    assert_eq!(answer["code"], 0);
    assert_eq!(answer["message"], "success");
    assert_eq!(venue.stats().orders_accepted, 1);
}

#[test]
fn solana_signin_then_order_end_to_end() {
    let venue = venue();
    let client = client_for(&venue);
    let session = Session::new();
    let key = solana_keypair_b58();
    let result: serde_json::Value =
        serde_json::from_str(&signin(&client, &session, "solana", &key, 0).unwrap()).unwrap();
    assert_eq!(result["chain"], "solana");
    assert_eq!(result["address"], wallet_address("solana", &key).unwrap());
    // Default lifetime (expires_seconds 0): 7 days.
    let expires = session.info()["token_expires_at"].as_i64().unwrap();
    let now = perps::body_sign::now_ms() / 1000;
    assert!((now + 604_700..=now + 604_900).contains(&expires));
    assert!(new_order(&client, &session, ORDER).is_ok());
}

#[test]
fn external_signer_path_prepare_sign_elsewhere_login() {
    let venue = venue();
    let client = client_for(&venue);
    let session = Session::new();
    let payload = prepare(&client, &session, "bsc", BSC_ADDRESS).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&payload).unwrap();
    assert_eq!(parsed["requestId"], session.request_id());
    assert_eq!(session.info()["pending_signin"], true);
    // The wallet lives elsewhere: only the payload crosses over, the signature comes back.
    let signature = wallet_sign("bsc", BSC_KEY, &payload).unwrap();
    login(&client, &session, &signature, 600).unwrap();
    assert_eq!(session.info()["pending_signin"], false);
    assert!(new_order(&client, &session, ORDER).is_ok());
    // The pending challenge was used: a second login has nothing to log in with.
    assert_failure(login(&client, &session, &signature, 600), PERPS_INVALID_STATE, false, "prepare-signin first");
}

#[test]
fn hardware_wallet_solana_signature_is_wrapped_and_accepted() {
    use ed25519_dalek::Signer;
    let venue = venue();
    let client = client_for(&venue);
    let session = Session::new();
    let seed: [u8; 32] = common::unhex(SOLANA_SEED_HEX).try_into().unwrap();
    let device = ed25519_dalek::SigningKey::from_bytes(&seed);
    let address = bs58::encode(device.verifying_key().as_bytes()).into_string();
    let payload = prepare(&client, &session, "solana", &address).unwrap();
    let message = serde_json::from_str::<serde_json::Value>(&payload).unwrap()["message"].as_str().unwrap().to_owned();
    let raw = device.sign(message.as_bytes()).to_bytes();
    let (p, a) = (c(&payload), c(&address));
    let wrapped = abi::owned(|e| {
        perps::ffi::wallet::perps_wallet_wrap_solana_signature(p.as_ptr(), a.as_ptr(), raw.as_ptr(), raw.len(), e)
    })
    .unwrap();
    login(&client, &session, &wrapped, 0).unwrap();
    assert!(new_order(&client, &session, ORDER).is_ok());
}

#[test]
fn api_credential_path_places_orders_without_signin() {
    let seed: [u8; 32] = common::unhex(SOLANA_SEED_HEX).try_into().unwrap();
    let public = bs58::encode(ed25519_dalek::SigningKey::from_bytes(&seed).verifying_key().as_bytes()).into_string();
    let venue =
        Sandbox::start(SandboxConfig { api_keys: vec![("web-token-123".into(), public)], ..Default::default() })
            .unwrap();
    let client = client_for(&venue);
    let session = Session::from_api_key("web-token-123", &bs58::encode(seed).into_string()).unwrap();
    assert!(new_order(&client, &session, ORDER).is_ok());
    // The same token with another key is refused by the venue (signature check).
    let impostor = Session::from_api_key("web-token-123", &bs58::encode([7u8; 32]).into_string()).unwrap();
    let f = assert_failure(new_order(&client, &impostor, ORDER), PERPS_HTTP_STATUS, false, "HTTP 403");
    assert_eq!(f.http_status, 403);
}

#[test]
fn generic_requests_sign_bodies_and_always_send_the_bearer() {
    let venue = venue();
    let (client, session) = signed_in(&venue);
    let placed: serde_json::Value =
        serde_json::from_str(&new_order(&client, &session, &ORDER.replace("}", r#","cl_ord_id":"abc-1"}"#)).unwrap())
            .unwrap();
    assert_eq!(placed["code"], 0);
    let open = request(&client, &session, "GET", "/api/query_open_orders", None).unwrap();
    assert!(open.contains("abc-1"), "{open}");
    let cancelled = request(&client, &session, "POST", "/api/cancel_order", Some(r#"{"cl_ord_id":"abc-1"}"#)).unwrap();
    assert!(cancelled.contains("\"code\":0"), "{cancelled}");
    assert_failure(
        request(&client, &session, "PATCH", "/api/x", None),
        PERPS_INVALID_ARGUMENT,
        false,
        "not one of GET",
    );
    assert_failure(
        request(&client, &session, "GET", "api/x", None),
        PERPS_INVALID_ARGUMENT,
        false,
        "must start with '/'",
    );
}

#[test]
fn session_headers_are_validated_and_reported() {
    let venue = venue();
    let (client, session) = signed_in(&venue);
    let v = c("ws-session-42");
    abi::code(|e| perps::ffi::session::perps_session_set_session_id(session.0, v.as_ptr(), e)).unwrap();
    let bad = c("two words");
    let f = abi::code(|e| perps::ffi::session::perps_session_set_impersonate(session.0, bad.as_ptr(), e)).unwrap_err();
    assert_eq!(f.code, PERPS_INVALID_ARGUMENT);
    assert_eq!(session.info()["session_id"], "ws-session-42");
    assert!(new_order(&client, &session, ORDER).is_ok());
}

#[test]
fn clock_offset_is_measured_and_applied_to_timestamps() {
    // The venue's clock runs 45 s ahead: within the challenge's 60 s iat allowance, but
    // beyond the venue's ±30 s timestamp window for signed requests.
    let venue = Sandbox::start(SandboxConfig { clock_offset_ms: 45_000, ..Default::default() }).unwrap();
    let client = client_for(&venue);
    let session = Session::new();
    signin(&client, &session, "bsc", BSC_KEY, 3600).unwrap();
    // The venue's answer to a stale timestamp: HTTP 403, "signature has expired".
    let f = assert_failure(new_order(&client, &session, ORDER), PERPS_HTTP_STATUS, false, "HTTP 403");
    assert!(f.body.unwrap_or_default().contains("signature has expired"));
    let mut offset = 0i64;
    abi::code(|e| perps::ffi::client::perps_client_sync_time(client.0, &mut offset, e)).unwrap();
    assert!((44_000..=46_500).contains(&offset), "offset {offset}");
    assert!(new_order(&client, &session, ORDER).is_ok());
    assert_eq!(venue.stats().orders_accepted, 1);
}

#[test]
fn wrong_state_calls_fail_before_sending() {
    let venue = venue();
    let client = client_for(&venue);
    let session = Session::new();
    assert_failure(new_order(&client, &session, ORDER), PERPS_INVALID_STATE, false, "no access token");
    assert_failure(login(&client, &session, "0x00", 0), PERPS_INVALID_STATE, false, "prepare-signin first");
    assert_failure(
        request(&client, &session, "GET", "/api/query_open_orders", None),
        PERPS_INVALID_STATE,
        false,
        "no access token",
    );
    assert_eq!(venue.stats().requests, 0, "nothing may reach the venue");
    // Logged out: the token is gone.
    let (client, session) = signed_in(&venue);
    abi::code(|e| perps::ffi::session::perps_session_logout(session.0, e)).unwrap();
    assert_failure(new_order(&client, &session, ORDER), PERPS_INVALID_STATE, false, "no access token");
    // An invalid order is refused before anything is sent.
    let before = venue.stats().orders_received;
    let (client, session) = signed_in(&venue);
    assert_failure(
        new_order(&client, &session, &ORDER.replace("\"0.01\"", "0.01")),
        PERPS_INVALID_ORDER,
        false,
        "\"qty\"",
    );
    assert_eq!(venue.stats().orders_received, before);
}

#[test]
fn clients_refuse_missing_or_insecure_urls() {
    assert_eq!(Client::new("", "https://x", None).err().unwrap().code, PERPS_INVALID_ARGUMENT);
    let f = Client::new("http://192.0.2.1", "https://x", None).err().unwrap();
    assert!(f.message.contains("bearer token must not cross a network in clear"), "{f:?}");
    assert!(Client::new("http://192.0.2.1", "http://192.0.2.1", Some(r#"{"allow_insecure_http":true}"#)).is_ok());
    let f = Client::new("https://x", "https://y", Some(r#"{"read_timeout":5}"#)).err().unwrap();
    assert!(f.message.contains("unknown client option \"read_timeout\""), "{f:?}");
    let f = Client::new("https://x", "https://y", Some(r#"{"ca_bundle_path":"/nonexistent.pem"}"#)).err().unwrap();
    assert!(f.message.contains("cannot be read"), "{f:?}");
}

// ---- error mapping, one fault at a time ----

#[test]
fn refused_connection_is_transport_and_never_reached_the_venue() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    }; // closed again: nothing listens there now
    let url = format!("http://127.0.0.1:{port}");
    let client = Client::new(&url, &url, None).unwrap();
    let session = Session::new();
    assert_failure(prepare(&client, &session, "bsc", BSC_ADDRESS), PERPS_TRANSPORT, false, "request not sent");
    let api = Session::from_api_key("t", &bs58::encode([1u8; 32]).into_string()).unwrap();
    assert_failure(new_order(&client, &api, ORDER), PERPS_TRANSPORT, false, "request not sent");
}

#[test]
fn challenge_faults_are_verification_failures() {
    let venue = venue();
    let client = client_for(&venue);
    for (faults, fragment) in [
        (Faults { challenge_bad_signature: true, ..Default::default() }, "signature does not verify"),
        (Faults { challenge_unknown_kid: true, ..Default::default() }, "certs do not contain"),
        (Faults { challenge_expired: true, ..Default::default() }, "has expired"),
    ] {
        venue.set_faults(faults);
        let session = Session::new();
        assert_failure(prepare(&client, &session, "bsc", BSC_ADDRESS), PERPS_VERIFICATION_FAILED, false, fragment);
        assert_eq!(session.info()["pending_signin"], false, "a refused challenge is not kept");
    }
}

#[test]
fn key_rotation_refetches_certs_once() {
    let venue = venue();
    let client = client_for(&venue);
    signin(&client, &Session::new(), "bsc", BSC_KEY, 0).unwrap();
    venue.rotate_key();
    let before = venue.stats().requests;
    signin(&client, &Session::new(), "bsc", BSC_KEY, 0).unwrap();
    // prepare + certs (refetched once) + login.
    assert_eq!(venue.stats().requests - before, 3);
    // A kid that never appears: exactly one refetch, then a clear failure (no loop).
    venue.set_faults(Faults { challenge_unknown_kid: true, ..Default::default() });
    let before = venue.stats().requests;
    assert_failure(
        prepare(&client, &Session::new(), "bsc", BSC_ADDRESS),
        PERPS_VERIFICATION_FAILED,
        false,
        "certs do not contain",
    );
    assert_eq!(venue.stats().requests - before, 2, "prepare + one certs refetch");
}

#[test]
fn certs_endpoint_down_is_an_http_status_error() {
    let venue = venue();
    venue.set_faults(Faults { certs_down: true, ..Default::default() });
    let f = assert_failure(
        prepare(&client_for(&venue), &Session::new(), "bsc", BSC_ADDRESS),
        PERPS_HTTP_STATUS,
        true,
        "certs",
    );
    assert_eq!(f.http_status, 503);
}

#[test]
fn login_answer_for_another_wallet_is_refused() {
    let venue = venue();
    venue.set_faults(Faults { login_wrong_address: true, ..Default::default() });
    let client = client_for(&venue);
    let session = Session::new();
    assert_failure(
        signin(&client, &session, "bsc", BSC_KEY, 0),
        PERPS_VERIFICATION_FAILED,
        false,
        "answered for wallet",
    );
    assert_eq!(session.info()["has_token"], false, "no token kept from a mismatched answer");
}

#[test]
fn http_500_and_429_are_http_status_errors_with_body() {
    let venue = venue();
    let (client, session) = signed_in(&venue);
    venue.set_faults(Faults { status: Some(500), ..Default::default() });
    let f = assert_failure(new_order(&client, &session, ORDER), PERPS_HTTP_STATUS, true, "HTTP 500");
    assert_eq!(f.http_status, 500);
    assert!(f.body.is_some());
    venue.set_faults(Faults { status: Some(429), ..Default::default() });
    let f = assert_failure(new_order(&client, &session, ORDER), PERPS_HTTP_STATUS, false, "rate limited");
    assert_eq!(f.http_status, 429);
}

#[test]
fn code_nonzero_under_http_200_is_an_api_error() {
    let venue = venue();
    let (client, session) = signed_in(&venue);
    venue.set_faults(Faults { order_code_nonzero: true, ..Default::default() });
    let f = assert_failure(new_order(&client, &session, ORDER), PERPS_API_ERROR, false, "refused with code");
    assert_eq!(f.http_status, 200);
    assert!(f.body.unwrap().contains("\"code\""));
}

#[test]
fn slow_answer_is_a_timeout_that_may_have_reached_the_venue() {
    let venue = venue();
    let client = Client::new(&venue.base_url(), &venue.perps_url(), Some(r#"{"read_timeout_ms":300}"#)).unwrap();
    let session = Session::new();
    signin(&client, &session, "bsc", BSC_KEY, 0).unwrap();
    venue.set_faults(Faults { slow_ms: 1500, ..Default::default() });
    let before = venue.stats().orders_received;
    assert_failure(new_order(&client, &session, ORDER), PERPS_TIMEOUT, true, "may have received it");
    assert_eq!(venue.stats().orders_received - before, 1, "sent once, never retried");
}

#[test]
fn connection_closed_after_the_order_was_read_is_sent_exactly_once() {
    let venue = venue();
    let (client, session) = signed_in(&venue);
    venue.set_faults(Faults { close_after_order: true, ..Default::default() });
    let before = venue.stats().orders_received;
    assert_failure(new_order(&client, &session, ORDER), PERPS_TRANSPORT, true, "may have received it");
    assert_eq!(venue.stats().orders_received - before, 1, "exactly one order reached the venue");
}

#[test]
fn unparseable_and_oversized_answers_are_bad_responses() {
    let venue = venue();
    let (client, session) = signed_in(&venue);
    // kline/time answers a bare integer: JSON, returned as it is (perps_request returns any
    // JSON; a non-JSON answer is tested against a rogue venue in endpoint_outcomes.rs).
    let now = request(&client, &session, "GET", "/api/kline/time", None).unwrap();
    assert!(now.trim().parse::<i64>().is_ok_and(|seconds| seconds > 1_700_000_000), "{now}");
    let tiny = Client::new(&venue.base_url(), &venue.perps_url(), Some(r#"{"max_response_bytes":16}"#)).unwrap();
    assert_failure(new_order(&tiny, &session, ORDER), PERPS_BAD_RESPONSE, true, "larger than max_response_bytes");
}

#[test]
fn expired_token_fails_fast_without_sending() {
    let venue = venue();
    let client = client_for(&venue);
    let session = Session::new();
    signin(&client, &session, "bsc", BSC_KEY, 1).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let before = venue.stats().requests;
    assert_failure(new_order(&client, &session, ORDER), PERPS_TOKEN_EXPIRED, false, "sign in again");
    assert_eq!(venue.stats().requests, before);
}

#[test]
fn a_clock_far_off_fails_signin_clearly_until_synced() {
    let venue = Sandbox::start(SandboxConfig { clock_offset_ms: 300_000, ..Default::default() }).unwrap();
    let client = client_for(&venue);
    let session = Session::new();
    assert_failure(signin(&client, &session, "bsc", BSC_KEY, 0), PERPS_VERIFICATION_FAILED, false, "check the clock");
    abi::code(|e| perps::ffi::client::perps_client_sync_time(client.0, std::ptr::null_mut(), e)).unwrap();
    signin(&client, &session, "bsc", BSC_KEY, 0).unwrap();
    assert!(new_order(&client, &session, ORDER).is_ok());
}

#[test]
fn tls_failure_is_transport_before_the_request_was_sent() {
    // A server that answers the TLS ClientHello with plain HTTP: the handshake fails
    // before any request byte is written.
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut hello = [0u8; 512];
        let _ = stream.read(&mut hello);
        let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
    });
    let client = Client::new(&url, &url, Some(r#"{"total_timeout_ms":3000}"#)).unwrap();
    assert_failure(prepare(&client, &Session::new(), "bsc", BSC_ADDRESS), PERPS_TRANSPORT, false, "request not sent");
    server.join().unwrap();
}

#[test]
fn prepare_signin_success_false_is_an_api_error_with_the_venue_body() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut buf = [0u8; 4096];
        let _ = stream.read(&mut buf);
        let body = r#"{"success":false,"message":"address is blocked"}"#;
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(reply.as_bytes()).unwrap();
    });
    let client = Client::new(&url, &url, None).unwrap();
    let session = Session::new();
    let f = assert_failure(prepare(&client, &session, "bsc", BSC_ADDRESS), PERPS_API_ERROR, false, "success=false");
    assert_eq!(f.body.as_deref(), Some(r#"{"success":false,"message":"address is blocked"}"#));
    assert_eq!(session.info()["pending_signin"], false);
    server.join().unwrap();
}
