//! The session's request-signing key leaves no copy in freed heap memory: not its seed, nor
//! its expanded forms (the secret scalar, clamped or reduced, and the nonce prefix). A key
//! expanded on the stack leaves copies there; a value later built on that stack and moved to
//! the heap carries whatever bytes it does not set (an enum's unused bytes, padding), and the
//! heap block is freed unwiped. In a release build that put the scalar and the prefix into a
//! freed session (`Arc<Session>`) and into the stream opener's channel slot; the key is now
//! kept on the heap and the stack below its import overwritten (`wipe::then_wipe_stack`).
//!
//! This binary's allocator scans every block freed by any thread but the scripted venue's
//! while a session is made from an API credential through the C ABI, signs 100 bodies,
//! opens an order stream, sends 20 orders on it, the same seed serves as a Solana wallet's
//! key (its address, a login signature), and everything is freed; and so again with the key
//! written as `solana-keygen` writes it, a JSON array of 64 numbers (read with serde_json
//! into a growing list of 64-bit numbers, it left each outgrown block in freed memory, one
//! of them with all 32 bytes of the seed: blocks are also searched for the key's bytes held
//! one per 64-bit word); and the seed in base58 with a stray character after it, refused (the
//! `bs58` crate freed its decoding buffer with the seed in it, in reverse order). One test in its
//! own binary (its own process): threads of another test could leave key bytes on stacks
//! that later threads reuse. The forms looked for are written out below, computed outside
//! this process: computed here they would be on this process's stacks themselves. CI runs
//! it in debug and in release (`scripts/test.sh`).

#[path = "common/freed_scan.rs"]
mod freed_scan;
#[path = "streams/helpers.rs"]
mod helpers;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;

use freed_scan::FreedScan;
use helpers::*;
use perps::ffi::error::perps_error_free;
use perps::ffi::session::{perps_session_free, perps_session_from_api_key};
use perps::ffi::sign::perps_sign_body;
use perps::ffi::strings::perps_string_free;
use perps::ffi::wallet::{perps_wallet_address, perps_wallet_sign};
use perps::stream::Stream;
use scripted_venue::*;
use std::ffi::CString;
use std::time::Duration;

/// `SEED_B58` (RFC 8032 §7.1 test 1) and its expansion, SHA-512 of the seed: the scalar
/// (`h[0..32]`, as hashed, clamped, and reduced mod ℓ as a `Scalar` keeps it) and the nonce
/// prefix (`h[32..64]`); last, the seed's bytes in reverse order, the little-endian number a
/// base58 decoder builds (the `bs58` crate left it in a freed block when it refused a text: a
/// valid key with a stray character after it).
const KEY_FORMS: [&str; 6] = [
    "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
    "357c83864f2833cb427a2ef1c00a013cfdff2768d980c0a3a520f006904de90f",
    "307c83864f2833cb427a2ef1c00a013cfdff2768d980c0a3a520f006904de94f",
    "7c2cac12e69be96ae9065065462385e8fcff2768d980c0a3a520f006904de90f",
    "9b4f0afe280b746a778684e75442502057b7473a03f08f96f5a38e9287e01f8f",
    "607fae1c03ac3b701969327b69c54944c42cec92f44a84ba605afdef9db1619d",
];

/// `SEED_B58`'s keypair (the seed, then RFC 8032 test 1's public key) as `solana-keygen`
/// writes it.
const KEYPAIR_JSON: &str = "[157,97,177,157,239,253,90,96,186,132,74,244,146,236,44,196,68,73,197,105,123,50,105,25,\
                            112,59,172,3,28,174,127,96,215,90,152,1,130,177,10,183,213,75,254,211,201,100,7,58,14,\
                            225,114,243,218,166,35,37,175,2,26,104,247,7,81,26]";

/// A sign-in payload for another key's session (a wallet never signs its own `requestId`).
const PAYLOAD: &str = r#"{"message":"standx.com wants you to sign in","requestId":"11111111111111111111111111111111"}"#;

/// Every 8-byte run of every form, sorted (set once, before the scan; never freed).
static RUNS: std::sync::OnceLock<Vec<[u8; 8]>> = std::sync::OnceLock::new();

fn holds_key(block: &[u8]) -> bool {
    let Some(runs) = RUNS.get() else { return false };
    let known = |run: &[u8]| runs.binary_search_by(|r| r.as_slice().cmp(run)).is_ok();
    // Eight bytes of a key one per (aligned, little-endian) 64-bit word, as a `Vec<u64>` of
    // the numbers of a JSON array holds them.
    let as_words = block.len() >= 64
        && (0..=block.len() / 8 - 8).any(|start| {
            let mut run = [0u8; 8];
            (0..8).all(|i| {
                let at = (start + i) * 8;
                let word = u64::from_le_bytes(block[at..at + 8].try_into().unwrap());
                run[i] = word as u8;
                word < 256
            }) && known(&run)
        });
    as_words || block.windows(8).any(known)
}

/// The bits the seed's hex sets in each filter of a redaction table (`perps::redact`), and
/// those of the wallet key below (set once, before the scan; never freed).
static FILTER_BITS: std::sync::OnceLock<Vec<Vec<usize>>> = std::sync::OnceLock::new();

/// A redaction table's filter, freed with the bits of a key set: a key in hex has 16-bit
/// pieces, so such a filter all but lists them, and chaining them spells the key out.
fn holds_filter(block: &[u8]) -> bool {
    let Some(sets) = FILTER_BITS.get() else { return false };
    let set = |bit: usize| block[bit / 8] & (1 << (bit % 8)) != 0;
    block.len() == perps::redact::filter_bytes() && sets.iter().any(|bits| bits.iter().all(|&bit| set(bit)))
}

fn look(block: &[u8]) {
    if holds_key(block) || holds_filter(block) {
        freed_scan::found(block.len());
    }
}

/// A bsc wallet key (a well-known test key, not the seed's).
const WALLET_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

#[global_allocator]
static ALLOCATOR: FreedScan = FreedScan { scanning: freed_scan::scanning, look };

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
}

#[test]
fn a_session_signing_and_trading_on_a_stream_leaves_no_copy_of_its_key_in_freed_memory() {
    let mut runs: Vec<[u8; 8]> = KEY_FORMS
        .iter()
        .flat_map(|form| unhex(form).windows(8).map(|w| w.try_into().unwrap()).collect::<Vec<_>>())
        .collect();
    runs.sort_unstable();
    RUNS.set(runs).unwrap();
    let filter_sets = [KEY_FORMS[0], &WALLET_KEY[2..]].into_iter().flat_map(perps::redact::filter_bits).collect();
    FILTER_BITS.set(filter_sets).unwrap();
    let orders = venue(|_, mut ws| {
        freed_scan::venue_thread();
        let login = read_json(&mut ws);
        send(&mut ws, &logged_in(login["request_id"].as_str().unwrap()));
        for _ in 0..20 {
            let order = read_json(&mut ws);
            let id = order["request_id"].as_str().unwrap().to_owned();
            send(&mut ws, &format!(r#"{{"code":0,"message":"success","request_id":"{id}"}}"#));
        }
        hold(ws, Duration::from_secs(3));
    });
    let client = client(&orders, "{}");
    let (token, key, body) =
        (CString::new(TOKEN).unwrap(), CString::new(SEED_B58).unwrap(), CString::new("{}").unwrap());
    freed_scan::start();
    let mut err = std::ptr::null_mut();
    let handle = perps_session_from_api_key(token.as_ptr(), key.as_ptr(), &mut err);
    assert!(!handle.is_null() && err.is_null());
    for _ in 0..100 {
        let headers = perps_sign_body(handle, body.as_ptr(), &mut err);
        assert!(!headers.is_null());
        perps_string_free(headers);
    }
    // The same key, as a Rust caller holds a session.
    let session = std::sync::Arc::new(perps::session::Session::from_api_key(TOKEN, SEED_B58).unwrap());
    let stream = Stream::open_orders(client, session).unwrap();
    for _ in 0..20 {
        stream.new_order(ORDER).unwrap();
    }
    let outcomes = drain(&stream, Duration::from_millis(300));
    drop(stream);
    // The same seed as a Solana wallet's key: its address, and the login signature of a
    // sign-in payload (the wallet key's parsing, expansion and signature).
    let (solana, payload) = (CString::new("solana").unwrap(), CString::new(PAYLOAD).unwrap());
    let json_key = CString::new(KEYPAIR_JSON).unwrap();
    for key in [&key, &json_key] {
        for _ in 0..10 {
            let address = perps_wallet_address(solana.as_ptr(), key.as_ptr(), &mut err);
            let signature = perps_wallet_sign(solana.as_ptr(), key.as_ptr(), payload.as_ptr(), &mut err);
            assert!(!address.is_null() && !signature.is_null());
            perps_string_free(address);
            perps_string_free(signature);
        }
    }
    // The seed in base58 with a stray quote after it (pasted from JSON): refused, as a wallet's
    // key and as an API credential's, with nothing of it freed unwiped.
    let stray = CString::new(format!("{SEED_B58}\"")).unwrap();
    for _ in 0..10 {
        let mut refused = std::ptr::null_mut();
        assert!(perps_wallet_address(solana.as_ptr(), stray.as_ptr(), &mut refused).is_null());
        perps_error_free(refused);
        let mut refused = std::ptr::null_mut();
        assert!(perps_session_from_api_key(token.as_ptr(), stray.as_ptr(), &mut refused).is_null());
        perps_error_free(refused);
    }
    // A wallet key in a redaction table (a sign-in's errors are redacted of it), tables
    // joined as a stream joins its session's and its own.
    for _ in 0..10 {
        let mut table = perps::redact::Secrets::new();
        table.add_wallet_key(WALLET_KEY);
        let (one, other) = (std::sync::Arc::new(table), std::sync::Arc::new(perps::redact::Secrets::new()));
        drop(perps::redact::Secrets::joined(one, other));
    }
    // The API credential's key as a JSON array.
    let from_json = perps_session_from_api_key(token.as_ptr(), json_key.as_ptr(), &mut err);
    assert!(!from_json.is_null() && err.is_null());
    perps_session_free(from_json);
    perps_session_free(handle);
    perps_error_free(err);
    let (found, sizes) = freed_scan::stop();
    assert_eq!(outcomes.iter().filter(|e| e["final"] == true).count(), 20, "{outcomes:?}");
    assert_eq!(found, 0, "heap blocks freed with key bytes in them (sizes {sizes:?})");
}
