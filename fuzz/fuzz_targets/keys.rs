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

/// The key text must not appear in its error message. Text that only repeats the library's
/// own wording is not a leak (the fuzzer finds such inputs: "\u{a0} Ed25519 private key is
/// not valid base58 (or hex, or a JSON a" has seven digits). A leak moves with the input: for
/// the same text with one character changed, the message (from `message_for`) would no longer
/// contain the original text; fixed wording still would.
fn no_secret(message: &str, text: &str, message_for: impl Fn(&str) -> Option<String>) {
    if !looks_secret(text) || !message.contains(text.trim()) {
        return;
    }
    let fixed_wording = message_for(&one_character_changed(text)).is_some_and(|m| m.contains(text.trim()));
    assert!(fixed_wording, "the key text appears in {message:?}");
}

/// `text` with its last ASCII letter or digit replaced by the next one of its kind.
fn one_character_changed(text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    if let Some(b) = bytes.iter_mut().rev().find(|b| b.is_ascii_alphanumeric()) {
        *b = match *b {
            b'9' => b'0',
            b'z' => b'a',
            b'Z' => b'A',
            other => other + 1,
        };
    }
    String::from_utf8(bytes).expect("only an ASCII byte changed")
}

/// The message of `perps_session_from_api_key` for `text`, if it fails.
fn api_key_message(text: &str) -> Option<String> {
    let (token, key) = (common::c("fuzz-token")?, common::c(text)?);
    let mut err = std::ptr::null_mut();
    let session = perps::ffi::session::perps_session_from_api_key(token.as_ptr(), key.as_ptr(), &mut err);
    if session.is_null() {
        return Some(common::take_error(err).message);
    }
    perps::ffi::session::perps_session_free(session);
    None
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
            no_secret(e.message(), text, |t| {
                perps::keys::parse_ed25519_secret(t).err().map(|e| e.message().to_owned())
            });
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
            no_secret(e.message(), text, |t| {
                perps::wallet::address(Chain::Bsc, t).err().map(|e| e.message().to_owned())
            });
        }
    }
    // Through the C ABI: an API-credential session, and the wallet address.
    let (Some(token), Some(key)) = (common::c("fuzz-token"), common::c(text)) else { return };
    let mut err = std::ptr::null_mut();
    let session = perps::ffi::session::perps_session_from_api_key(token.as_ptr(), key.as_ptr(), &mut err);
    if session.is_null() {
        let f = common::take_error(err);
        no_secret(&f.message, text, api_key_message);
    } else {
        let id = common::owned(|e| perps::ffi::session::perps_session_request_id(session, e)).unwrap();
        assert_eq!(id, perps::wallet::address(Chain::Solana, text).unwrap());
        perps::ffi::session::perps_session_free(session);
    }
    for chain in ["bsc", "solana"] {
        let ch = common::c(chain).unwrap();
        if let Err(f) = common::owned(|e| perps::ffi::wallet::perps_wallet_address(ch.as_ptr(), key.as_ptr(), e)) {
            assert_eq!(f.code, perps::ffi::error::perps_code::PERPS_INVALID_KEY);
            let message_for = |t: &str| {
                let key = common::c(t)?;
                common::owned(|e| perps::ffi::wallet::perps_wallet_address(ch.as_ptr(), key.as_ptr(), e)).err()
            };
            no_secret(&f.message, text, |t| message_for(t).map(|f| f.message));
        }
    }
});
