//! Key parsing: Ed25519 secrets in every text form (base58 seed/keypair, hex, JSON array),
//! EVM and Solana wallet keys, and the C entry points that take them. Whatever parses must
//! be self-consistent; whatever fails fails with the key code and never quotes the input.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use perps::wallet::Chain;

/// Long, digit-rich inputs look like secrets: a message must not contain them.
fn looks_secret(text: &str) -> bool {
    text.trim().len() >= 24 && text.bytes().filter(u8::is_ascii_digit).count() >= 6
}

fn no_secret(message: &str, text: &str) {
    if looks_secret(text) {
        assert!(!message.contains(text.trim()), "the key text appears in {message:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match perps::keys::parse_ed25519_secret(text) {
        Ok(key) => {
            // The same key again through its canonical seed form.
            let again = perps::keys::parse_ed25519_secret(&bs58::encode(key.to_bytes()).into_string()).unwrap();
            assert_eq!(key.verifying_key(), again.verifying_key());
            // The Solana wallet takes the same forms and yields the same public key.
            let address = perps::wallet::address(Chain::Solana, text).expect("a valid Ed25519 key is a Solana key");
            assert_eq!(address, bs58::encode(key.verifying_key().as_bytes()).into_string());
        }
        Err(e) => {
            assert_eq!(e.code(), perps::Code::InvalidKey);
            no_secret(e.message(), text);
        }
    }
    match perps::wallet::address(Chain::Bsc, text) {
        Ok(address) => {
            assert_eq!(address.len(), 42);
            assert!(address.starts_with("0x") && address[2..].bytes().all(|b| b.is_ascii_hexdigit()));
            let digits = text.trim().trim_start_matches("0x").trim_start_matches("0X");
            assert_eq!(digits.len(), 64);
        }
        Err(e) => {
            assert_eq!(e.code(), perps::Code::InvalidKey);
            no_secret(e.message(), text);
        }
    }
    // Through the C ABI: an API-credential session, and the wallet address.
    let (Some(token), Some(key)) = (common::c("fuzz-token"), common::c(text)) else { return };
    let mut err = std::ptr::null_mut();
    let session = perps::ffi::session::perps_session_from_api_key(token.as_ptr(), key.as_ptr(), &mut err);
    if session.is_null() {
        let f = common::take_error(err);
        no_secret(&f.message, text);
    } else {
        let id = common::owned(|e| perps::ffi::session::perps_session_request_id(session, e)).unwrap();
        assert_eq!(id, perps::wallet::address(Chain::Solana, text).unwrap());
        perps::ffi::session::perps_session_free(session);
    }
    for chain in ["bsc", "solana"] {
        let ch = common::c(chain).unwrap();
        if let Err(f) = common::owned(|e| perps::ffi::wallet::perps_wallet_address(ch.as_ptr(), key.as_ptr(), e)) {
            assert_eq!(f.code, perps::ffi::error::perps_code::PERPS_INVALID_KEY);
            no_secret(&f.message, text);
        }
    }
});
