//! A sign-in leaves no copy of the access token it gets, nor of the wallet key it signs
//! with, in freed heap memory (README, "Secrets"). This binary's allocator scans every block
//! freed by the library's threads (not the scripted venue's) while `perps_signin` runs
//! through the C ABI, its result is freed (`perps_string_free` wipes it), and the session and
//! the client are freed; it counts the blocks that still hold any 8 bytes of the token or of
//! the wallet key (its hex digits or its bytes).
//!
//! Before, each login answer left the token in such blocks: one outgrown by the body's read
//! (ureq's `read_to_vec` grows a `Vec`, freeing each smaller block as it was), the map of the
//! answer's members (a copy of the token, freed with it), serde_json's scratch buffer when
//! the venue wrote the token with JSON escapes, and ureq's input buffer of the connection,
//! freed with the connection. The body is now read into a block that is wiped when outgrown,
//! the answer read in place with the token decoded into wiped memory, and the connection's
//! buffers wiped as it closes.
//! One test in its own binary (its own process), as `tests/key_residue.rs`; CI runs it in
//! debug and in release (`scripts/test.sh`).

mod common;
#[path = "common/freed_scan.rs"]
mod freed_scan;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::{VenueKey, jwk_set, signin_payload};
use freed_scan::FreedScan;
use perps::ffi::client::{perps_client_free, perps_client_new, perps_signin};
use perps::ffi::session::{perps_session_free, perps_session_new};
use perps::ffi::strings::perps_string_free;
use rogue_server::{Rogue, json};
use std::ffi::CString;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A JWT-shaped access token whose every 8 bytes are its own (its third segment stands for
/// the signature).
const TOKEN: &str = "eyJraWQiOiJyZXNpZHVlLTdRIiwiYWxnIjoiSFMyNTYifQ.eyJzdWIiOiJyZXNpZHVlLWNoZWNrIiwiZXhwIjo0MTAyNDQ0ODAwfQ.Xk9vQ2pLm8Rt5Yw1Zs3Ab7Cd0Ef4Gh6Ij2KlQw7Er9Ty";
/// The same token as a venue may write it, its dots and a letter JSON-escaped.
const TOKEN_ESCAPED: &str = "eyJraWQiOiJyZXNpZHVlLTdRIiwiYWxnIjoiSFMyNTYifQ\\u002eeyJzdWIiOiJyZXNpZHVlLWNoZWNrIiwiZXhwIjo0MTAyNDQ0ODAwfQ\\u002eXk9vQ2pLm8Rt5Yw1Zs3Ab7Cd0Ef4Gh6Ij2KlQw7Er\\u0039Ty";
const BSC_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const BSC_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

/// Every run of 8 bytes of every secret, sorted (set before the scan; never freed).
static RUNS: std::sync::OnceLock<Vec<[u8; 8]>> = std::sync::OnceLock::new();

fn look(block: &[u8]) {
    let Some(runs) = RUNS.get() else { return };
    if block.windows(8).any(|w| runs.binary_search_by(|run| run.as_slice().cmp(w)).is_ok()) {
        freed_scan::found(block.len());
    }
}

#[global_allocator]
static ALLOCATOR: FreedScan = FreedScan { scanning: freed_scan::scanning, look };

#[test]
fn a_sign_in_leaves_no_copy_of_the_token_or_the_wallet_key_in_freed_memory() {
    // Made in one block of its final size and never freed: a block freed unwiped with runs
    // in it would come back from the allocator, in part, inside the blocks scanned.
    let wallet_bytes = common::unhex(&BSC_KEY[2..]);
    let secrets: [&[u8]; 3] = [TOKEN.as_bytes(), &BSC_KEY.as_bytes()[2..], &wallet_bytes];
    let mut runs = Vec::with_capacity(secrets.iter().map(|s| s.len() - 7).sum());
    for secret in secrets {
        runs.extend(secret.windows(8).map(|w| <[u8; 8]>::try_from(w).unwrap()));
    }
    runs.sort_unstable();
    RUNS.set(runs).unwrap();
    let key = VenueKey::new(7, Some("k1"));
    let certs = jwk_set(&[&key]);
    let logins = std::sync::Arc::new(AtomicUsize::new(0));
    let answered = logins.clone();
    let rogue = Rogue::start(move |seen, _| {
        freed_scan::venue_thread();
        match seen.path() {
            "/auth/v1/offchain/certs" => json(200, &certs),
            "/auth/v1/offchain/prepare-signin" => {
                let asked = seen.json();
                let now = perps::body_sign::now_ms() / 1000;
                let (address, request_id) = (asked["address"].as_str().unwrap(), asked["requestId"].as_str().unwrap());
                let payload = signin_payload("bsc", address, request_id, now, now + 180);
                let jws = key.sign_jws(&key.header(), &payload.to_string());
                json(200, &serde_json::json!({"success": true, "signedData": jws}).to_string())
            }
            "/auth/v1/offchain/login" => {
                // The first sign-in's answer as usual, then one with the token escaped.
                let token =
                    if answered.fetch_add(1, Ordering::SeqCst).is_multiple_of(2) { TOKEN } else { TOKEN_ESCAPED };
                json(
                    200,
                    &format!(
                        r#"{{"token":"{token}","address":"{BSC_ADDRESS}","alias":"residue","chain":"bsc","perpsAlpha":true}}"#
                    ),
                )
            }
            _ => json(404, "{}"),
        }
    });
    let url = rogue.url();
    let (auth, perps) = (CString::new(format!("{url}/auth")).unwrap(), CString::new(format!("{url}/perps")).unwrap());
    let (chain, wallet) = (CString::new("bsc").unwrap(), CString::new(BSC_KEY).unwrap());
    let mut err = std::ptr::null_mut();
    let client = perps_client_new(auth.as_ptr(), perps.as_ptr(), std::ptr::null(), &mut err);
    assert!(!client.is_null());
    let sign_in = || {
        let mut err = std::ptr::null_mut();
        let session = perps_session_new(&mut err);
        let result = perps_signin(client, session, chain.as_ptr(), wallet.as_ptr(), 3600, &mut err);
        assert!(!result.is_null() && err.is_null(), "the sign-in failed");
        perps_string_free(result);
        perps_session_free(session);
    };
    // Five sign-ins (the first fetches the certs), the venue writing the token plainly and
    // escaped in turn; freeing the client closes its pooled connection.
    freed_scan::start();
    for _ in 0..5 {
        sign_in();
    }
    perps_client_free(client);
    let (found, sizes) = freed_scan::stop();
    assert_eq!(logins.load(Ordering::SeqCst), 5);
    assert_eq!(found, 0, "heap blocks freed with runs of a secret in them (sizes {sizes:?})");
}
