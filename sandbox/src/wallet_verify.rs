//! Verification of the wallet's login signature over the challenge `message`, per chain.
//!
//! Independent of the client's own wallet code on purpose: the sandbox must catch a client
//! whose signing is wrong, so it re-derives everything from the crypto crates.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use sha3::{Digest, Keccak256};

use super::chain::base58_32;

/// Why a login signature was refused; the two kinds map to different HTTP statuses.
#[derive(Debug)]
pub(crate) enum WalletError {
    /// The signature is not in the chain's format (HTTP 400).
    Malformed(String),
    /// Well-formed, but not made by the wallet named in the challenge (HTTP 401).
    Mismatch(String),
}

use WalletError::{Malformed, Mismatch};

/// bsc: EIP-191 personal_sign. `signature` is "0x" + 130 hex digits, r||s||v with v 27/28
/// (0/1 accepted too, as some signers emit the raw recovery id). The recovered address must
/// equal `address`, compared case-insensitively. High-s is accepted, as `ecrecover` does.
pub(crate) fn verify_bsc(address: &str, message: &str, signature: &str) -> Result<(), WalletError> {
    let hex = signature
        .strip_prefix("0x")
        .filter(|h| h.len() == 130)
        .ok_or_else(|| Malformed("bsc signature must be 0x followed by 130 hex digits".into()))?;
    let raw = decode_hex(hex).ok_or_else(|| Malformed("bsc signature is not hex".into()))?;
    let recid = match raw[64] {
        27 | 28 => raw[64] - 27,
        0 | 1 => raw[64],
        v => {
            return Err(Malformed(format!("bsc signature has v = {v}; expected 27 or 28")));
        }
    };
    let sig = k256::ecdsa::Signature::from_slice(&raw[..64])
        .map_err(|_| Malformed("bsc signature r or s is out of range".into()))?;
    let recid = k256::ecdsa::RecoveryId::from_byte(recid).expect("0 or 1 is a recovery id");
    let prehash = eip191_hash(message);
    let key = k256::ecdsa::VerifyingKey::recover_from_prehash(&prehash, &sig, recid)
        .map_err(|_| Mismatch("bsc signature does not recover a public key".into()))?;
    let point = key.to_sec1_point(false);
    let digest = Keccak256::digest(&point.as_bytes()[1..]);
    let recovered: String = digest[12..].iter().map(|b| format!("{b:02x}")).collect();
    if address.get(2..).is_some_and(|a| a.eq_ignore_ascii_case(&recovered)) {
        Ok(())
    } else {
        Err(Mismatch("bsc signature was not made by the signing-in address".into()))
    }
}

/// keccak256("\x19Ethereum Signed Message:\n" + decimal byte length + message).
fn eip191_hash(message: &str) -> [u8; 32] {
    let mut h = Keccak256::new();
    h.update(format!("\x19Ethereum Signed Message:\n{}", message.len()).as_bytes());
    h.update(message.as_bytes());
    h.finalize().into()
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok()).collect()
}

/// solana: `signature` is standard base64 of
/// `{"input": <payload>, "output": {"signedMessage": [..], "signature": [..],
///   "account": {"publicKey": [..]}}}`.
/// `output` is verified strictly: `signedMessage` is the message bytes, `publicKey` the
/// signing-in address, and the Ed25519 signature verifies. `input` is what the wallet was
/// asked to sign; as the live venue, an object whose fields are a subset of the payload
/// (each equal to the payload's) is accepted (bitwii traded live with nine fields), and so
/// is a string. Strict mode requires the whole payload object (JSON value equality).
pub(crate) fn verify_solana(
    address: &str,
    payload: &Value,
    message: &str,
    signature: &str,
    strict: bool,
) -> Result<(), WalletError> {
    let raw = STANDARD.decode(signature).map_err(|_| Malformed("solana signature is not standard base64".into()))?;
    let doc: Value =
        serde_json::from_slice(&raw).map_err(|_| Malformed("solana signature does not decode to JSON".into()))?;
    check_input(doc.get("input"), payload, strict)?;
    let output = doc.get("output").ok_or_else(|| Malformed("solana signature has no output".into()))?;
    let signed = byte_array(output.get("signedMessage"), None, "output.signedMessage")?;
    if signed != message.as_bytes() {
        return Err(Malformed("output.signedMessage is not the challenge message".into()));
    }
    let sig = byte_array(output.get("signature"), Some(64), "output.signature")?;
    let pk = byte_array(output.get("account").and_then(|a| a.get("publicKey")), Some(32), "output.account.publicKey")?;
    let expected = base58_32(address).ok_or_else(|| Malformed("address is not base58".into()))?;
    if pk != expected {
        return Err(Mismatch("output.account.publicKey is not the signing-in address".into()));
    }
    let key = ed25519_dalek::VerifyingKey::from_bytes(&expected)
        .map_err(|_| Mismatch("the address is not an Ed25519 public key".into()))?;
    let sig = ed25519_dalek::Signature::from_bytes(&sig.try_into().expect("length checked"));
    key.verify_strict(message.as_bytes(), &sig).map_err(|_| Mismatch("solana signature does not verify".into()))
}

fn check_input(input: Option<&Value>, payload: &Value, strict: bool) -> Result<(), WalletError> {
    match input {
        Some(input) if input == payload => Ok(()),
        _ if strict => Err(Malformed("solana signature input is not the signed-in payload (strict mode)".into())),
        Some(Value::String(_)) => Ok(()),
        Some(Value::Object(fields)) => match fields.iter().find(|(k, v)| payload.get(k.as_str()) != Some(*v)) {
            None => Ok(()),
            Some((k, _)) => Err(Malformed(format!("solana signature input.{k} is not the payload's {k}"))),
        },
        Some(_) => Err(Malformed("solana signature input must be the payload object".into())),
        None => Err(Malformed("solana signature has no input".into())),
    }
}

/// A JSON array of integers 0..=255, optionally of an exact length.
fn byte_array(v: Option<&Value>, len: Option<usize>, name: &str) -> Result<Vec<u8>, WalletError> {
    let bad = || Malformed(format!("{name} must be an array of byte values"));
    let items = v.and_then(Value::as_array).ok_or_else(bad)?;
    let bytes = items
        .iter()
        .map(|x| x.as_u64().and_then(|n| u8::try_from(n).ok()))
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(bad)?;
    match len {
        Some(n) if bytes.len() != n => Err(Malformed(format!("{name} must have {n} bytes"))),
        _ => Ok(bytes),
    }
}
