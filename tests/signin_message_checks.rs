//! What a wallet signs says what was checked (issue 16, items 5 and 6), through the C ABI:
//! the sign-in `message` (EIP-4361 text; the Solana wording for solana) must carry the
//! challenge's own domain, address, statement, URI, version, chain ID, nonce, issued-at and
//! request ID, and the domain and URI pinned by `expected_domain` / `expected_uri`; and a
//! challenge whose header or payload names a member twice is refused before any claim is
//! read. The challenges are signed here with the p256 crate (independent of the library's
//! verifier); the sandbox's own messages are checked too.

mod common;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{self, Client, Failure, Session, c, owned, prepare, signin};
use common::{VenueKey, jwk_set, signin_payload};
use perps::ffi::error::perps_code::*;
use perps_sandbox::{Sandbox, SandboxConfig};
use rogue_server::{Rogue, json};

const NOW: i64 = 1_800_000_000;
const BSC_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const BSC_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const SOL_ADDRESS: &str = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const REQUEST_ID: &str = "8bK4GzmYb2Xc7m9vHuJnWWwvQ6RkU2z3t1ePqAa7sXYZ";

/// `perps_challenge_verify` of `payload` (any JSON text) signed by the venue key, for `chain`.
fn verify(chain: &str, payload: &str) -> Result<String, Failure> {
    verify_jws(chain, &venue().sign_jws(&venue().header(), payload))
}

fn verify_jws(chain: &str, jws: &str) -> Result<String, Failure> {
    let address = if chain == "solana" { SOL_ADDRESS } else { BSC_ADDRESS };
    let (s, certs, r, ch, a) = (c(jws), c(&jwk_set(&[&venue()])), c(REQUEST_ID), c(chain), c(address));
    owned(|e| {
        perps::ffi::challenge::perps_challenge_verify(
            s.as_ptr(),
            certs.as_ptr(),
            r.as_ptr(),
            ch.as_ptr(),
            a.as_ptr(),
            NOW,
            e,
        )
    })
}

fn venue() -> VenueKey {
    VenueKey::new(7, Some("k1"))
}

fn good(chain: &str) -> serde_json::Value {
    let address = if chain == "solana" { SOL_ADDRESS } else { BSC_ADDRESS };
    signin_payload(chain, address, REQUEST_ID, NOW - 5, NOW + 175)
}

fn refused(result: Result<String, Failure>, fragment: &str) {
    let f = result.expect_err(fragment);
    assert_eq!(f.code, PERPS_VERIFICATION_FAILED, "{f:?}");
    assert!(f.message.contains(fragment), "{:?} lacks {fragment:?}", f.message);
}

/// The payload with its message text edited (the claims stay as they were).
fn with_message(mut payload: serde_json::Value, edit: impl Fn(&str) -> String) -> String {
    let message = edit(payload["message"].as_str().unwrap());
    payload["message"] = message.into();
    payload.to_string()
}

#[test]
fn untampered_challenges_of_both_chains_are_accepted() {
    for chain in ["bsc", "solana"] {
        let payload = good(chain).to_string();
        assert_eq!(verify(chain, &payload).unwrap(), payload, "{chain}");
    }
    // The Solana wallet standard's layout without a statement: one blank line.
    let mut p = good("solana");
    p.as_object_mut().unwrap().remove("statement");
    let one_blank = with_message(p, |m| m.replace("\n\nSign in to the test venue.\n\n", "\n\n"));
    verify("solana", &one_blank).unwrap();
}

#[test]
fn a_message_that_says_something_else_than_the_claims_is_refused() {
    let iat = common::rfc3339(NOW - 5);
    let other_iat = common::rfc3339(NOW - 4);
    let edits: Vec<(&str, String, String, &str)> = vec![
        ("bsc", "venue.example wants".into(), "evil.example wants".into(), "gives domain \"evil.example\""),
        ("bsc", "venue.example wants".into(), "http://venue.example wants".into(), "not https"),
        ("bsc", BSC_ADDRESS.into(), "0x70997970C51812dc3A010C7d01b50e0d17dc79C8".into(), "is for wallet"),
        ("bsc", "URI: https://venue.example".into(), "URI: https://evil.example".into(), "gives URI"),
        ("bsc", "Chain ID: 56".into(), "Chain ID: 1".into(), "gives chain ID \"1\""),
        ("bsc", format!("Nonce: n0nce{}", NOW - 5), "Nonce: replayed0nce".into(), "gives nonce"),
        ("bsc", format!("Issued At: {iat}"), format!("Issued At: {other_iat}"), "gives issued-at"),
        ("bsc", format!("Request ID: {REQUEST_ID}"), "Request ID: someoneElse".into(), "gives request ID"),
        ("bsc", format!("\nRequest ID: {REQUEST_ID}"), String::new(), "gives request ID nothing"),
        ("bsc", "Sign in to the test venue.".into(), "Transfer all funds.".into(), "gives statement"),
        ("bsc", "Ethereum account".into(), "Solana account".into(), "is not a Solana address"),
        ("solana", "Solana account".into(), "Ethereum account".into(), "is not an Ethereum address"),
        ("solana", "Chain ID: 501".into(), "Chain ID: mainnet".into(), "gives chain ID \"mainnet\""),
        ("bsc", "Version: 1".into(), "Version: 2".into(), "not 1"),
        ("bsc", "\nURI:".into(), "\r\nURI:".into(), "control character"),
        ("bsc", "Version: 1\n".into(), "Version: 1\nAddress: 0x00\n".into(), "unexpected line"),
        ("bsc", "Version: 1\n".into(), "Version: 1\nVersion: 1\n".into(), "out of order or repeated"),
        ("bsc", format!("Request ID: {REQUEST_ID}"), format!("Request ID: {REQUEST_ID}\n"), "unexpected line"),
    ];
    for (chain, from, to, fragment) in edits {
        let payload = with_message(good(chain), |m| {
            assert!(m.contains(&from), "{from:?} not in {m:?}");
            m.replacen(&from, &to, 1)
        });
        refused(verify(chain, &payload), fragment);
    }
    // A claim the message must match, missing from the payload.
    for claim in ["domain", "uri", "version", "chainId", "nonce", "issuedAt"] {
        let mut p = good("bsc");
        p.as_object_mut().unwrap().remove(claim);
        refused(verify("bsc", &p.to_string()), &format!("no \"{claim}\" claim"));
    }
}

#[test]
fn the_eip_4361_example_with_this_wallet_is_accepted() {
    // The EIP's first example (its statement, URI, chain 1, nonce and resources), for this
    // wallet and session, with the claims that say the same.
    let message = format!(
        "example.com wants you to sign in with your Ethereum account:\n{BSC_ADDRESS}\n\n\
         I accept the ExampleOrg Terms of Service: https://example.com/tos\n\n\
         URI: https://example.com/login\nVersion: 1\nChain ID: 1\nNonce: 32891756\n\
         Issued At: 2021-09-30T16:25:24Z\nRequest ID: {REQUEST_ID}\nResources:\n\
         - ipfs://bafybeiemxf5abjwjbikoz4mc3a3dla6ual3jsgpdr4cjr3oz3evfyavhwq/\n\
         - https://example.com/my-web2-claim.json"
    );
    let payload = serde_json::json!({
        "domain": "example.com", "uri": "https://example.com/login",
        "statement": "I accept the ExampleOrg Terms of Service: https://example.com/tos",
        "version": "1", "chainId": 1, "nonce": "32891756", "issuedAt": "2021-09-30T16:25:24Z",
        "address": BSC_ADDRESS, "requestId": REQUEST_ID, "message": message, "iat": NOW, "exp": NOW + 60,
    });
    verify("bsc", &payload.to_string()).unwrap();
}

#[test]
fn a_member_named_twice_anywhere_is_refused_before_any_claim_is_read() {
    let good_text = good("bsc").to_string();
    // Two requestIds: serde_json alone would keep the last (ours) and accept; the venue's
    // parser may keep the first (someone else's).
    let twice = good_text.replacen('{', "{\"requestId\":\"SomeoneElse111111111111111111111111111111111\",", 1);
    refused(verify("bsc", &twice), "the member name twice: \"requestId\"");
    // The same name written with an escape, and a duplicate inside a nested object.
    let escaped = good_text.replacen('{', "{\"requ\\u0065stId\":\"x\",", 1);
    refused(verify("bsc", &escaped), "the member name twice: \"requestId\"");
    let nested = good_text.replacen('{', "{\"ext\":{\"a\":1,\"b\":{\"c\":1,\"c\":2}},", 1);
    refused(verify("bsc", &nested), "the member name twice: \"c\"");
    // In the header: alg given twice (the second would be read by a last-wins parser).
    let jws = venue().sign_jws(r#"{"alg":"none","alg":"ES256","typ":"JWT","kid":"k1"}"#, &good_text);
    refused(verify_jws("bsc", &jws), "header is not a JSON object: it has the member name twice: \"alg\"");
    let jws = venue().sign_jws(r#"{"alg":"ES256","kid":"k1","kid":"k1"}"#, &good_text);
    refused(verify_jws("bsc", &jws), "the member name twice: \"kid\"");
}

// ---- through the client: the sandbox's messages, pins, a hostile venue --------------------

#[test]
fn the_sandbox_messages_of_both_chains_sign_in_and_can_be_pinned() {
    let venue = Sandbox::start(SandboxConfig::default()).unwrap();
    let pinned = r#"{"expected_domain":"sandbox.libperps.local","expected_uri":"https://sandbox.libperps.local"}"#;
    let client = Client::new(&venue.base_url(), &venue.perps_url(), Some(pinned)).unwrap();
    let sol_key = bs58::encode([3u8; 32]).into_string();
    for (chain, key) in [("bsc", BSC_KEY), ("solana", sol_key.as_str())] {
        let session = Session::new();
        let address = abi::wallet_address(chain, key).unwrap();
        let payload: serde_json::Value =
            serde_json::from_str(&prepare(&client, &session, chain, &address).unwrap()).unwrap();
        let message = perps::signin_message::parse(payload["message"].as_str().unwrap()).unwrap();
        assert_eq!(message.domain, "sandbox.libperps.local");
        assert_eq!(message.request_id, Some(session.request_id().as_str()));
        signin(&client, &Session::new(), chain, key, 3600).unwrap();
    }
    // Pinned to another venue: refused before any wallet signs, no login sent.
    for pin in [r#"{"expected_domain":"standx.com"}"#, r#"{"expected_uri":"https://standx.com"}"#] {
        let client = Client::new(&venue.base_url(), &venue.perps_url(), Some(pin)).unwrap();
        let session = Session::new();
        let before = venue.stats().requests;
        let f = signin(&client, &session, "bsc", BSC_KEY, 3600).unwrap_err();
        assert_eq!(f.code, PERPS_VERIFICATION_FAILED, "{f:?}");
        assert!(f.message.contains("is not the expected_"), "{f:?}");
        assert_eq!(session.info()["pending_signin"], false);
        assert!(venue.stats().requests - before <= 2, "prepare-signin and certs only: no login");
    }
}

#[test]
fn a_venue_whose_message_differs_from_its_claims_gets_no_signature() {
    let key = VenueKey::new(7, Some("k1"));
    let certs = jwk_set(&[&key]);
    let rogue = Rogue::start(move |seen, _| match seen.path() {
        "/auth/v1/offchain/certs" => json(200, &certs),
        "/auth/v1/offchain/prepare-signin" => {
            let asked = seen.json();
            let now = perps::body_sign::now_ms() / 1000;
            let mut payload = signin_payload(
                "bsc",
                asked["address"].as_str().unwrap(),
                asked["requestId"].as_str().unwrap(),
                now,
                now + 180,
            );
            // The claims name the venue; the text the wallet would sign names another site.
            let message = payload["message"].as_str().unwrap().replace("venue.example wants", "phish.example wants");
            payload["message"] = message.into();
            let jws = key.sign_jws(&key.header(), &payload.to_string());
            json(200, &serde_json::json!({"success": true, "signedData": jws}).to_string())
        }
        _ => json(200, r#"{"token":"t","chain":"bsc"}"#),
    });
    let url = rogue.url();
    let client = Client::new(&format!("{url}/auth"), &format!("{url}/perps"), None).unwrap();
    let session = Session::new();
    let f = signin(&client, &session, "bsc", BSC_KEY, 3600).unwrap_err();
    assert_eq!(f.code, PERPS_VERIFICATION_FAILED, "{f:?}");
    assert!(f.message.contains("gives domain \"phish.example\""), "{f:?}");
    assert_eq!(rogue.count("/login"), 0, "nothing was signed or sent");
    assert_eq!(session.info()["pending_signin"], false);
}

/// A venue answering every sign-in with a consistent, correctly signed challenge for the site
/// `venue.example` (claims and message agree), and a token at login.
fn rogue_of_another_site() -> Rogue {
    let key = VenueKey::new(7, Some("k1"));
    let certs = jwk_set(&[&key]);
    Rogue::start(move |seen, _| match seen.path() {
        "/auth/v1/offchain/certs" => json(200, &certs),
        "/auth/v1/offchain/prepare-signin" => {
            let asked = seen.json();
            let now = perps::body_sign::now_ms() / 1000;
            let address = asked["address"].as_str().unwrap();
            let payload = signin_payload("bsc", address, asked["requestId"].as_str().unwrap(), now, now + 180);
            let jws = key.sign_jws(&key.header(), &payload.to_string());
            json(200, &serde_json::json!({"success": true, "signedData": jws}).to_string())
        }
        _ => json(200, &serde_json::json!({"token": "t.t.t", "chain": "bsc", "address": BSC_ADDRESS}).to_string()),
    })
}

#[test]
fn a_venue_not_on_loopback_gets_no_signature_for_another_site_unless_it_is_pinned() {
    // `0.0.0.0` reaches this machine's listeners (Linux) and is no loopback name: the sign-in
    // host is then "0.0.0.0", and a challenge for `venue.example` names another site — a
    // whole, validly signed EIP-4361 login the wallet would give that site.
    let rogue = rogue_of_another_site();
    let url = rogue.url().replace("127.0.0.1", "0.0.0.0");
    let insecure = r#"{"allow_insecure_http":true}"#;
    let client = Client::new(&format!("{url}/auth"), &format!("{url}/perps"), Some(insecure)).unwrap();
    let session = Session::new();
    let f = signin(&client, &session, "bsc", BSC_KEY, 3600).unwrap_err();
    assert_eq!(f.code, PERPS_VERIFICATION_FAILED, "{f:?}");
    assert!(f.message.contains("domain \"venue.example\" is neither the sign-in host \"0.0.0.0\""), "{f:?}");
    assert!(f.message.contains("expected_domain"), "the way out is named: {f:?}");
    assert_eq!(rogue.count("/login"), 0, "nothing was signed or sent");
    assert_eq!(session.info()["pending_signin"], false);
    // The caller names the venue's own domain (a relay before it): signed in.
    let pinned = r#"{"allow_insecure_http":true,"expected_domain":"venue.example"}"#;
    let client = Client::new(&format!("{url}/auth"), &format!("{url}/perps"), Some(pinned)).unwrap();
    signin(&client, &Session::new(), "bsc", BSC_KEY, 3600).unwrap();
    assert_eq!(rogue.count("/login"), 1);
    // On loopback (the sandbox, a local relay) nothing names a site to bind to: as before.
    let client = Client::new(&format!("{}/auth", rogue.url()), &format!("{}/perps", rogue.url()), None).unwrap();
    signin(&client, &Session::new(), "bsc", BSC_KEY, 3600).unwrap();
    assert_eq!(rogue.count("/login"), 2);
}
