//! Server faults in sign-in, through the C ABI: a scripted venue on 127.0.0.1
//! (tests/server_faults/scripted_signin_venue.rs) or the sandbox serves broken certs, rotated
//! keys, expired challenges, and prepare-signin, login and clock-sync answers the client
//! cannot use. Each test asserts the documented `perps_code` and `may_have_reached_venue`
//! (README, "Network error mapping"), that nothing unverified or no token is kept, and that
//! no request is retried. Split from `tests/server_faults.rs` (order faults): sign-in has
//! its own venue script.

mod common;
#[path = "server_faults/helpers.rs"]
mod helpers;
#[path = "common/rogue_server.rs"]
mod rogue_server;
#[path = "server_faults/scripted_signin_venue.rs"]
mod scripted_signin_venue;

use common::VenueKey;
use common::abi::{self, Client, Session, expect, login, new_order, prepare, signin};
use helpers::*;
use perps::ffi::error::perps_code::{self, *};
use perps_sandbox::{Faults, Sandbox, SandboxConfig};
use rogue_server::{Rogue, Step, json, ms};
use scripted_signin_venue::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

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
    // A reset before any answer on the kept-alive connection of prepare-signin may be the
    // venue closing it as the request was written: the read goes once more on a new
    // connection (a GET changes nothing), never more.
    for (certs, code, reached, fetches) in [
        (json(404, "not found"), PERPS_HTTP_STATUS, false, 1),
        (vec![Step::Reset], PERPS_TRANSPORT, true, 2),
        (vec![ms(1000), Step::Close], PERPS_TIMEOUT, true, 1),
    ] {
        let rogue = start_venue(ScriptedVenue::new(VenueKey::new(7, Some("k1")), Box::new(move |_| certs.clone())));
        let session = Session::new();
        expect(prepare(&client_at(&rogue.url(), FAST), &session, "bsc", BSC_ADDRESS), code, reached);
        assert_eq!(session.info()["pending_signin"], false, "nothing unverified is kept");
        assert_eq!(rogue.count("/certs"), fetches, "a failed certs fetch is not retried beyond that");
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

/// A scripted venue that signs its challenges with `old` and serves `old`'s key set until the
/// test rotates it: `signer` and `certs` (0 until then, 1 for `new`) switch each.
fn rotating_venue(old: VenueKey, new: VenueKey) -> (Rogue, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let sets = [common::jwk_set(&[&old]), common::jwk_set(&[&new])];
    let (signer, certs) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let serving = certs.clone();
    let rogue = start_venue(ScriptedVenue {
        signers: vec![old, new],
        active: signer.clone(),
        clock_secs: Arc::default(),
        certs: Box::new(move |_| json(200, &sets[serving.load(Ordering::SeqCst)])),
        login: login_ok(),
    });
    (rogue, signer, certs)
}

/// Sign in (the certs fetched once), rotate the venue's key (its `signer` and `certs`
/// switched to the new one), sign in again (exactly one refetch, for `why`), and once more
/// (the refreshed set cached).
fn signs_in_across_a_rotation(client: &Client, rogue: &Rogue, switches: [&AtomicUsize; 2], why: &str) {
    prepare_login(client, &Session::new()).unwrap();
    assert_eq!(rogue.count("/certs"), 1);
    switches.iter().for_each(|switch| switch.store(1, Ordering::SeqCst));
    let session = Session::new();
    prepare_login(client, &session).unwrap();
    assert_eq!(session.info()["has_token"], true);
    assert_eq!(rogue.count("/certs"), 2, "{why} caused exactly one refetch");
    prepare_login(client, &Session::new()).unwrap();
    assert_eq!(rogue.count("/certs"), 2, "the refreshed set is cached");
}

#[test]
fn key_rotated_after_the_certs_were_cached() {
    // Sign in under k-old (certs cached), the venue rotates to k-new (certs now serve only
    // k-new): the next sign-in refetches once and succeeds; the one after fetches nothing.
    let (rogue, signer, certs) = rotating_venue(VenueKey::new(8, Some("k-old")), VenueKey::new(7, Some("k-new")));
    signs_in_across_a_rotation(&client_at(&rogue.url(), FAST), &rogue, [&signer, &certs], "the unknown kid");
}

#[test]
fn key_material_rotated_under_the_same_kid() {
    // The venue keeps its key id "k1" and rotates the key behind it: after the set is cached,
    // challenges are signed by the new key and the certs serve it under the same kid. The
    // next sign-in refetches once and succeeds (before, it failed for the cache's lifetime,
    // 1 h); the one after fetches nothing.
    let (rogue, signer, certs) = rotating_venue(VenueKey::new(8, Some("k1")), VenueKey::new(7, Some("k1")));
    let client = client_at(&rogue.url(), FAST);
    signs_in_across_a_rotation(&client, &rogue, [&signer, &certs], "the key that did not verify");
    // Challenges signed by key material the certs do not serve under "k1": one refetch per
    // challenge, then a clear failure, never a loop; nothing unverified is kept.
    signer.store(0, Ordering::SeqCst);
    for attempt in 1..=2 {
        let session = Session::new();
        let f = expect(prepare(&client, &session, "bsc", BSC_ADDRESS), PERPS_VERIFICATION_FAILED, false);
        assert!(f.message.contains(r#"does not verify with certs key "k1""#), "{f:?}");
        assert_eq!(rogue.count("/certs"), 2 + attempt, "exactly one refetch for each challenge");
        assert_eq!(session.info()["pending_signin"], false);
    }
    assert_eq!(rogue.count("/login"), 3);
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
fn a_login_refused_in_a_2xx_answer_gives_the_venues_reason() {
    // `"success": false` (prepare-signin's way of refusing, seed spec "Errors") or a refusal
    // code under HTTP 200: PERPS_API_ERROR with the venue's reason, never "no token" and
    // never the body; a word shaped like a token is cut out of the reason.
    const SECRET: &str = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXNlY3JldA";
    let cases = [
        (r#"{"success":false,"message":"invalid wallet signature"}"#.to_owned(), None, "invalid wallet signature"),
        (r#"{"success":false,"msg":"nonce already used"}"#.to_owned(), None, "nonce already used"),
        (r#"{"code":401,"message":"bad wallet signature"}"#.to_owned(), Some(401), "bad wallet signature"),
        (format!(r#"{{"success":false,"message":"refused {SECRET}","token":"{SECRET}"}}"#), None, "refused"),
    ];
    for (answer, venue_code, reason) in cases {
        let mut venue = ScriptedVenue::honest();
        let text = answer.clone();
        venue.login = Box::new(move |_| json(200, &text));
        let rogue = start_venue(venue);
        let session = Session::new();
        let f = expect(prepare_login(&client_at(&rogue.url(), FAST), &session), PERPS_API_ERROR, false);
        assert!(f.message.starts_with("login: the venue refused") && f.message.contains(reason), "{answer}: {f:?}");
        match venue_code {
            Some(code) => assert!(f.message.contains(&format!("code {code}")), "{f:?}"),
            None => assert!(f.message.contains(r#""success": false"#), "{f:?}"),
        }
        assert!(!f.message.contains(SECRET) && f.body.is_none(), "{f:?}");
        assert_eq!(f.http_status, 200);
        assert_eq!(session.info()["has_token"], false);
    }
}

/// Whether `text` shows any 8 bytes of `secret` (all of it when shorter), as redaction hides
/// them.
fn quotes(text: &str, secret: &str) -> bool {
    let (text, secret) = (text.as_bytes(), secret.as_bytes());
    secret.windows(8.min(secret.len())).any(|run| text.windows(run.len()).any(|w| w == run))
}

#[test]
fn login_errors_never_quote_a_token_the_answer_holds() {
    // A refusal quoting a base64 token (cut at `+`, `/` and `=`, its pieces were too short to
    // look like one), a JWT whose dots are JSON-escaped, or a token too short to look like
    // one but named as the answer's `token`; a buggy answer with its token in `address` or
    // `chain`. Each error keeps the venue's words or says what was wrong, without the token.
    const BASE64: &str = "q8Zr3Xw1Lm7Pa9Tb+/Ue2Kd5Hs0Vf4Jn6Yc8Gg1Oi3Rk7Wl2==";
    const JWT: &str = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ2aWN0aW0ifQ.Qk9HVVNzaWduYXR1cmU";
    const SHORT: &str = "tk-7Q9x2";
    const OPAQUE: &str = "SECRETtokenXYZ0123456789abcdefghijklmnop";
    let escaped_jwt = JWT.replace('.', "\\u002e");
    let refusal = format!(r#"{{"message":"session exists: token={BASE64}; also {escaped_jwt}"}}"#);
    let cases: Vec<(Vec<Step>, perps_code, &str, &[&str])> = vec![
        (json(409, &refusal), PERPS_HTTP_STATUS, "session exists", &[BASE64, JWT]),
        (json(200, &refusal.replace("{", r#"{"success":false,"#)), PERPS_API_ERROR, "session exists", &[BASE64, JWT]),
        (
            json(409, &format!(r#"{{"message":"already signed in with {SHORT}","token":"{SHORT}"}}"#)),
            PERPS_HTTP_STATUS,
            "already signed in with",
            &[SHORT],
        ),
        (
            json(200, &format!(r#"{{"code":409,"msg":"already signed in with {SHORT}","token":"{SHORT}"}}"#)),
            PERPS_API_ERROR,
            "already signed in with",
            &[SHORT],
        ),
        (
            json(200, &format!(r#"{{"token":"{OPAQUE}","chain":"bsc","address":"{OPAQUE}"}}"#)),
            PERPS_VERIFICATION_FAILED,
            "answered for an \"address\" that is no bsc address",
            &[OPAQUE],
        ),
        (
            json(200, &format!(r#"{{"token":"{SHORT}","chain":"bsc","address":"{SHORT}"}}"#)),
            PERPS_VERIFICATION_FAILED,
            "that is no bsc address",
            &[SHORT],
        ),
        (
            json(200, &format!(r#"{{"token":"{SHORT}","chain":"{SHORT}","address":"{BSC_ADDRESS}"}}"#)),
            PERPS_VERIFICATION_FAILED,
            "answered for chain (a 8-byte string, not shown)",
            &[SHORT],
        ),
    ];
    for (answer, code, words, secrets) in cases {
        let mut venue = ScriptedVenue::honest();
        venue.login = Box::new(move |_| answer.clone());
        let rogue = start_venue(venue);
        let session = Session::new();
        let f = expect(prepare_login(&client_at(&rogue.url(), FAST), &session), code, false);
        assert!(f.message.contains(words), "{f:?}");
        for secret in secrets {
            assert!(!quotes(&f.message, secret), "{secret} quoted: {f:?}");
        }
        assert!(f.body.is_none(), "{f:?}");
        assert_eq!(session.info()["has_token"], false);
    }
}

#[test]
fn a_login_answer_naming_success_code_or_token_twice_is_ambiguous_and_keeps_no_token() {
    // `"success"` or `"code"` written twice: a reader keeping the first copy sees a refusal,
    // one keeping the last a login; `"token"` or `"address"` twice: another token, or another
    // wallet. PERPS_BAD_RESPONSE, the body withheld.
    for twice in [
        r#""success":false,"success":true"#,
        r#""code":401,"code":0"#,
        r#""code":0,"\u0063ode":401"#,
        r#""token":"other-token-5e2b""#,
        r#""\u0074oken":"other-token-5e2b""#,
        r#""address":"0x0000000000000000000000000000000000000001""#,
    ] {
        let answer = format!(r#"{{{twice},"token":"login-token-9c1d","chain":"bsc","address":"{BSC_ADDRESS}"}}"#);
        let mut venue = ScriptedVenue::honest();
        venue.login = Box::new(move |_| json(200, &answer));
        let rogue = start_venue(venue);
        let session = Session::new();
        let f = expect(prepare_login(&client_at(&rogue.url(), FAST), &session), PERPS_BAD_RESPONSE, false);
        assert!(f.message.contains("more than once") && f.message.starts_with("login: "), "{twice}: {f:?}");
        assert!(f.body.is_none() && !f.message.contains("-token-"), "{f:?}");
        assert_eq!(session.info()["has_token"], false, "{twice}");
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
    // The other ways a server writes its seconds: with a fraction, inside a JSON string.
    for form in ["{}.250", "\"{}\"", "\"{}.5\""] {
        *answer.lock().unwrap() = json(200, &form.replace("{}", &(now_secs() + 100).to_string()));
        let offset = sync(&client).unwrap();
        assert!((98_900..=101_500).contains(&offset), "{form}: offset {offset}");
    }
    // A clock a day or more away is no clock error: Unix time 1000 (1970) and the last second
    // of year 9999, which a reader of the number alone takes.
    for body in [
        "9223372036854775807",
        "-9223372036854775808",
        "253402300800",
        "-1",
        "1e12",
        "17e8",
        "now",
        "",
        "{}",
        "1000",
        "253402300799",
    ] {
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
    // Each sync sent once, but the reset one: it came on a kept-alive connection before any
    // answer, so it was read once more on a new connection (a GET changes nothing).
    assert_eq!(rogue.count("/api/kline/time"), 1 + 3 + 11 + 3 + 1, "each sync sent once");
}

#[test]
fn a_venue_clock_more_than_a_day_away_is_refused_and_the_offset_kept() {
    // Within 24 h either way the offset is taken (a clock may be that wrong); beyond, the
    // answer is refused with the offset in use named and kept: taken, every sign-in and order
    // would fail as "token expired" or "challenge expired".
    let ahead = Arc::new(AtomicI64::new(0));
    let clock = ahead.clone();
    let rogue = Rogue::start(move |seen, _| match seen.path() {
        "/perps/api/kline/time" => json(200, &(now_secs() + clock.load(Ordering::SeqCst)).to_string()),
        _ => json(200, r#"{"code":0}"#),
    });
    let client = client_at(&rogue.url(), FAST);
    let sync = |seconds: i64| {
        ahead.store(seconds, Ordering::SeqCst);
        let mut offset = 0i64;
        abi::code(|e| perps::ffi::client::perps_client_sync_time(client.0, &mut offset, e)).map(|()| offset)
    };
    for seconds in [86_000, -86_000, 3_600] {
        let offset = sync(seconds).unwrap();
        assert!((offset - seconds * 1000).abs() <= 1_500, "{seconds} s: offset {offset} ms");
    }
    for (seconds, words) in [(86_402, "s ahead of this machine's"), (-86_402, "s behind this machine's")] {
        let f = expect(sync(seconds).map(|o| o.to_string()), PERPS_BAD_RESPONSE, false);
        assert!(f.message.contains(words) && f.message.contains("more than the 86400 s (24 h)"), "{f:?}");
        assert!(f.message.contains("the offset in use (3"), "the kept offset is named: {f:?}");
    }
    // Orders still carry the offset of the last good sync: local clock + 3600 s.
    new_order(&client, &api_session(), ORDER).unwrap();
    let stamp: i64 = rogue.seen().last().unwrap().header("x-request-timestamp").unwrap().parse().unwrap();
    let local = perps::body_sign::now_ms();
    assert!((local + 3_598_000..=local + 3_601_500).contains(&stamp), "timestamp {stamp} vs local {local}");
}

#[test]
fn a_login_signature_of_the_wrong_shape_is_refused_unsent_and_unquoted() {
    // The wallet's private key passed where the signature goes (or any text no wallet of the
    // chain gives): refused before anything is sent, and never quoted.
    let rogue = start_venue(ScriptedVenue::honest());
    let client = client_at(&rogue.url(), FAST);
    let session = Session::new();
    prepare(&client, &session, "bsc", BSC_ADDRESS).unwrap();
    for wrong in [BSC_KEY, "0x00", "0x1234zz", &format!("0x{}", "ab".repeat(64)), "not a signature"] {
        let f = expect(login(&client, &session, wrong, 600), PERPS_INVALID_ARGUMENT, false);
        assert!(f.message.contains("is not a bsc login signature") && f.message.contains("nothing was sent"), "{f:?}");
        assert!(!f.message.contains("ac0974bec39a17e3"), "{f:?}");
    }
    assert_eq!(rogue.count("/login"), 0, "nothing was sent");
    assert_eq!(session.info()["pending_signin"], true, "the challenge is still there to be signed");
    assert_eq!(rogue.count("/login"), 0, "nothing was sent");
}
