//! One key must not do both jobs: a solana wallet key that is also the session's
//! request-signing key is refused wherever the library sees both, through the C ABI, before
//! anything is sent: `perps_signin`, `perps_prepare_signin`, and (the sign-in payload naming
//! the request key) `perps_wallet_sign` and `perps_wallet_wrap_solana_signature`.

mod common;

use common::abi::{Client, Session, c, owned, prepare, signin, wallet_address, wallet_sign};
use ed25519_dalek::{Signer, SigningKey};
use perps::ffi::error::perps_code::*;
use perps::ffi::wallet::perps_wallet_wrap_solana_signature;

const SEED: [u8; 32] = [0x21; 32];

fn key_text(seed: &[u8; 32]) -> String {
    bs58::encode(seed).into_string()
}

/// A client for a port nothing listens on: a request that got out would fail as a network
/// error, not as a refused key.
fn unreachable_client() -> Client {
    Client::new("http://127.0.0.1:9", "http://127.0.0.1:9", None).expect("a client")
}

fn payload(address: &str, request_id: &str) -> String {
    serde_json::json!({
        "domain": "standx.com", "address": address, "requestId": request_id,
        "message": format!("standx.com wants you to sign in with your Solana account:\n{address}"),
        "nonce": "n", "exp": 2, "iat": 1, "chainId": "solana"
    })
    .to_string()
}

#[test]
fn signin_with_the_request_key_as_the_wallet_is_refused_before_sending() {
    let key = key_text(&SEED);
    let session = Session::from_api_key("token", &key).unwrap();
    let client = unreachable_client();
    let refused = signin(&client, &session, "solana", &key, 0).unwrap_err();
    assert_eq!(refused.code, PERPS_INVALID_KEY, "{refused:?}");
    assert!(refused.message.contains("request-signing key"), "{}", refused.message);
    assert!(!refused.may_have_reached_venue);
    let address = wallet_address("solana", &key).unwrap();
    assert_eq!(address, session.request_id());
    let refused = prepare(&client, &session, "solana", &address).unwrap_err();
    assert_eq!(refused.code, PERPS_INVALID_KEY, "{refused:?}");

    // Another wallet key gets past the check (and then fails on the network).
    let other = key_text(&[0x22; 32]);
    let failed = signin(&client, &session, "solana", &other, 0).unwrap_err();
    assert_ne!(failed.code, PERPS_INVALID_KEY, "{failed:?}");
}

#[test]
fn a_wallet_signature_for_a_payload_naming_its_own_key_is_refused() {
    let key = key_text(&SEED);
    let address = wallet_address("solana", &key).unwrap();
    let refused = wallet_sign("solana", &key, &payload(&address, &address)).unwrap_err();
    assert_eq!(refused.code, PERPS_INVALID_KEY, "{refused:?}");
    let other_request_key = key_text(&[0x23; 32]);
    wallet_sign("solana", &key, &payload(&address, &wallet_address("solana", &other_request_key).unwrap())).unwrap();

    // The same for a signature made elsewhere (a hardware wallet).
    let own = payload(&address, &address);
    let message = serde_json::from_str::<serde_json::Value>(&own).unwrap()["message"].as_str().unwrap().to_owned();
    let signature = SigningKey::from_bytes(&SEED).sign(message.as_bytes()).to_bytes();
    let (p, a) = (c(&own), c(&address));
    let refused =
        owned(|e| perps_wallet_wrap_solana_signature(p.as_ptr(), a.as_ptr(), signature.as_ptr(), 64, e)).unwrap_err();
    assert_eq!(refused.code, PERPS_INVALID_KEY, "{refused:?}");
}
