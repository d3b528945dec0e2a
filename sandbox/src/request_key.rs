//! The Ed25519 key a `requestId` names.
//!
//! The documented form is base58 of the 32-byte public key. The venue accepts any non-empty
//! `requestId` at sign-in and carries it into the token (a committed live token in
//! kevinfantasy2008/standx was issued for a base64 SPKI-DER key), so the sandbox decodes the
//! forms a key is commonly written in, and a session whose `requestId` is none of them can
//! sign in but has every body signature refused (HTTP 403).

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ed25519_dalek::VerifyingKey;

use super::chain::base58_32;

/// DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): SEQUENCE { SEQUENCE { OID
/// 1.3.101.112 }, BIT STRING (32 bytes) }.
const SPKI_PREFIX: [u8; 12] = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00];

/// The documented form only: canonical base58 of a valid point that is not of small order.
pub(crate) fn from_base58(text: &str) -> Option<VerifyingKey> {
    valid(base58_32(text)?)
}

/// Any form the sandbox understands: base58 (documented), or base64 / base64url of the raw
/// 32 bytes or of the SPKI DER encoding.
pub(crate) fn decode(text: &str) -> Option<VerifyingKey> {
    if let Some(key) = from_base58(text) {
        return Some(key);
    }
    let raw = STANDARD.decode(text).or_else(|_| URL_SAFE_NO_PAD.decode(text.trim_end_matches('='))).ok()?;
    let bytes: [u8; 32] = match raw.len() {
        32 => raw.try_into().ok()?,
        44 if raw[..12] == SPKI_PREFIX => raw[12..].try_into().ok()?,
        _ => return None,
    };
    valid(bytes)
}

fn valid(bytes: [u8; 32]) -> Option<VerifyingKey> {
    let key = VerifyingKey::from_bytes(&bytes).ok()?;
    (!key.is_weak()).then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_spellings_of_one_key() {
        let key = ed25519_dalek::SigningKey::from_bytes(&[4; 32]).verifying_key();
        let raw = key.to_bytes();
        let mut spki = SPKI_PREFIX.to_vec();
        spki.extend_from_slice(&raw);
        for text in [
            bs58::encode(raw).into_string(),
            STANDARD.encode(raw),
            STANDARD.encode(&spki),
            URL_SAFE_NO_PAD.encode(&spki),
        ] {
            assert_eq!(decode(&text), Some(key), "{text}");
        }
        assert_eq!(from_base58(&STANDARD.encode(&spki)), None);
        for bad in ["", "not a key", "session-7", &STANDARD.encode([0u8; 32])] {
            assert_eq!(decode(bad), None, "{bad}");
        }
    }
}
