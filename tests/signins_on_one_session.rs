//! Sign-ins under way at once on one session (README, "Thread safety": calls on one session
//! may run concurrently), through the C ABI against the sandbox, which checks every login's
//! signature against the message of the `signedData` sent with it and refuses a mismatch.
//!
//! Before, the session kept one pending challenge: a second prepare-signin replaced the
//! first, a login sent whichever challenge was pending then (not the one its wallet had
//! signed) and cleared it; two threads each running `perps_signin` 40 times on one session
//! saw about a third of their logins refused. Now `perps_signin` logs in with the challenge
//! it verified and signed, and `perps_login` with the pending challenge its signature signs.

mod common;

use common::abi::{Client, Session, login, prepare, signin, wallet_address, wallet_sign};
use perps::ffi::error::perps_code::*;
use perps_sandbox::{Sandbox, SandboxConfig};
use std::sync::Arc;

const BSC_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const BSC_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
/// A Solana wallet: the RFC 8032 test 2 seed, as a base58 keypair.
const SOLANA_SEED_HEX: &str = "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb";

fn venue_and_client() -> (Sandbox, Client) {
    let venue = Sandbox::start(SandboxConfig::default()).expect("sandbox starts");
    let client = Client::new(&venue.base_url(), &venue.perps_url(), None).expect("client");
    (venue, client)
}

fn solana_key() -> String {
    let seed: [u8; 32] = common::unhex(SOLANA_SEED_HEX).try_into().unwrap();
    bs58::encode(ed25519_dalek::SigningKey::from_bytes(&seed).to_keypair_bytes()).into_string()
}

#[test]
fn two_threads_signing_in_on_one_session_all_succeed() {
    let (_venue, client) = venue_and_client();
    let (client, session) = (Arc::new(client), Arc::new(Session::new()));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (client, session) = (client.clone(), session.clone());
            std::thread::spawn(move || {
                (0..40).filter_map(|_| signin(&client, &session, "bsc", BSC_KEY, 3600).err()).collect::<Vec<_>>()
            })
        })
        .collect();
    let failures: Vec<_> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    assert!(failures.is_empty(), "{} of 80 sign-ins failed, the first: {:?}", failures.len(), failures.first());
    let info = session.info();
    assert_eq!(info["has_token"], true);
    assert_eq!(info["pending_signin"], false, "perps_signin keeps no challenge in the session");
}

#[test]
fn interleaved_external_signins_each_log_in_with_the_challenge_their_wallet_signed() {
    // prepare A, prepare B, login A, login B: each login sends the challenge its signature
    // signs (the sandbox answers 401 to any other pair), and clears only its own.
    let (venue, client) = venue_and_client();
    let solana = solana_key();
    let solana_address = wallet_address("solana", &solana).unwrap();
    for (chain, key, address) in [("bsc", BSC_KEY, BSC_ADDRESS), ("solana", solana.as_str(), solana_address.as_str())] {
        let session = Session::new();
        let payloads: Vec<String> = (0..3).map(|_| prepare(&client, &session, chain, address).unwrap()).collect();
        let signatures: Vec<String> = payloads.iter().map(|p| wallet_sign(chain, key, p).unwrap()).collect();
        assert_eq!(session.info()["pending_signin"], true);
        for i in [0, 2, 1] {
            let result = login(&client, &session, &signatures[i], 3600);
            assert!(result.is_ok(), "{chain}: the login of challenge {i}: {result:?}");
        }
        assert_eq!(session.info()["pending_signin"], false, "{chain}: each login cleared its own challenge");
        assert_eq!(session.info()["has_token"], true);
    }
    // A signature of none of the challenges pending (two sign-ins under way) is refused
    // before anything is sent.
    let session = Session::new();
    let first = prepare(&client, &session, "bsc", BSC_ADDRESS).unwrap();
    prepare(&client, &session, "bsc", BSC_ADDRESS).unwrap();
    let elsewhere = prepare(&client, &Session::new(), "bsc", BSC_ADDRESS).unwrap();
    let before = venue.stats().requests;
    for signature in [wallet_sign("bsc", BSC_KEY, &elsewhere).unwrap(), "0x1234".to_owned()] {
        let f = login(&client, &session, &signature, 3600).unwrap_err();
        assert_eq!(f.code, PERPS_INVALID_ARGUMENT, "{f:?}");
        assert!(f.message.contains("signs none of the 2 challenges pending"), "{f:?}");
        assert!(!f.may_have_reached_venue);
    }
    assert_eq!(venue.stats().requests, before, "no login sent");
    login(&client, &session, &wallet_sign("bsc", BSC_KEY, &first).unwrap(), 3600).unwrap();
}

#[test]
fn a_session_keeps_the_challenges_of_eight_sign_ins_under_way() {
    // Nine prepares: the oldest challenge is pushed out, its signature signs none of those
    // kept; the other eight log in.
    let (venue, client) = venue_and_client();
    let session = Session::new();
    let payloads: Vec<String> = (0..9).map(|_| prepare(&client, &session, "bsc", BSC_ADDRESS).unwrap()).collect();
    let before = venue.stats().requests;
    let f = login(&client, &session, &wallet_sign("bsc", BSC_KEY, &payloads[0]).unwrap(), 3600).unwrap_err();
    assert_eq!(f.code, PERPS_INVALID_ARGUMENT, "{f:?}");
    assert!(f.message.contains("signs none of the 8 challenges pending"), "{f:?}");
    assert_eq!(venue.stats().requests, before, "no login sent");
    for payload in payloads[1..].iter().rev() {
        login(&client, &session, &wallet_sign("bsc", BSC_KEY, payload).unwrap(), 3600).unwrap();
    }
    assert_eq!(session.info()["pending_signin"], false);
}
