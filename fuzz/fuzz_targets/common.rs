//! Helpers shared by the fuzz targets: a venue ES256 key that signs challenges, and the
//! C ABI calling convention (owned strings and error objects, always freed).
#![allow(dead_code)]

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer;
use perps::ffi::error::*;
use std::ffi::{CStr, CString, c_char};

pub const NOW: i64 = 1_900_000_000;
pub const BSC_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
pub const BSC_KEY: &str = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
/// requestId of the Ed25519 seed [9; 32] (checked by `request_id_of_seed`).
pub const KID: &str = "fuzz-kid";

pub fn venue_key() -> p256::ecdsa::SigningKey {
    p256::ecdsa::SigningKey::from_slice(&[7u8; 32]).unwrap()
}

pub fn jwk(key: &p256::ecdsa::SigningKey, kid: Option<&str>) -> serde_json::Value {
    let point = key.verifying_key().to_sec1_point(false);
    let b = point.as_bytes();
    let mut jwk = serde_json::json!({
        "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig",
        "x": URL_SAFE_NO_PAD.encode(&b[1..33]), "y": URL_SAFE_NO_PAD.encode(&b[33..65]),
    });
    if let Some(kid) = kid {
        jwk["kid"] = kid.into();
    }
    jwk
}

pub fn certs_json() -> String {
    serde_json::json!({ "keys": [jwk(&venue_key(), Some(KID))] }).to_string()
}

/// A compact JWS over these exact header and payload bytes, signed by the venue key.
pub fn sign_jws(header: &[u8], payload: &[u8]) -> String {
    let input = format!("{}.{}", URL_SAFE_NO_PAD.encode(header), URL_SAFE_NO_PAD.encode(payload));
    let signature: p256::ecdsa::Signature = venue_key().sign(input.as_bytes());
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
}

/// A sign-in payload whose message (EIP-4361) says what its claims say, issued at `iat`
/// (the issued-at text is a fixed date: only its equality with the claim is checked).
pub fn signin_payload(address: &str, request_id: &str, iat: i64, exp: i64) -> serde_json::Value {
    let message = format!(
        "fuzz.example wants you to sign in with your Ethereum account:\n{address}\n\nSign in to the fuzz venue.\n\n\
         URI: https://fuzz.example\nVersion: 1\nChain ID: 56\nNonce: fuzzn0nce1\nIssued At: 2030-03-17T17:46:40Z\n\
         Request ID: {request_id}"
    );
    serde_json::json!({
        "domain": "fuzz.example", "uri": "https://fuzz.example", "statement": "Sign in to the fuzz venue.",
        "version": "1", "chainId": 56, "nonce": "fuzzn0nce1", "issuedAt": "2030-03-17T17:46:40Z",
        "address": address, "requestId": request_id, "message": message, "iat": iat, "exp": exp,
    })
}

pub fn request_id_of_seed(seed: [u8; 32]) -> String {
    bs58::encode(ed25519_dalek::SigningKey::from_bytes(&seed).verifying_key().as_bytes()).into_string()
}

#[derive(Debug)]
pub struct Failure {
    pub code: perps_code,
    pub message: String,
    pub http_status: u16,
    pub body: Option<String>,
    pub reached: bool,
}

pub fn take_error(err: *mut perps_error) -> Failure {
    assert!(!err.is_null(), "a failure without an error object");
    let text = |p: *const c_char| (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned());
    let f = Failure {
        code: perps_error_code(err),
        message: text(perps_error_message(err)).unwrap(),
        http_status: perps_error_http_status(err),
        body: text(perps_error_body(err)),
        reached: perps_error_may_have_reached_venue(err),
    };
    perps_error_free(err);
    assert_ne!(f.code, perps_code::PERPS_PANIC, "a panic reached the C boundary: {f:?}");
    f
}

pub fn owned(call: impl FnOnce(*mut *mut perps_error) -> *mut c_char) -> Result<String, Failure> {
    let mut err: *mut perps_error = std::ptr::null_mut();
    let out = call(&mut err);
    if out.is_null() {
        return Err(take_error(err));
    }
    assert!(err.is_null(), "error object set on success");
    let text = unsafe { CStr::from_ptr(out) }.to_str().expect("results are UTF-8").to_owned();
    perps::ffi::strings::perps_string_free(out);
    Ok(text)
}

pub fn code(call: impl FnOnce(*mut *mut perps_error) -> perps_code) -> Result<(), Failure> {
    let mut err: *mut perps_error = std::ptr::null_mut();
    match call(&mut err) {
        perps_code::PERPS_OK => {
            assert!(err.is_null());
            Ok(())
        }
        other => {
            let f = take_error(err);
            assert_eq!(f.code, other);
            Err(f)
        }
    }
}

/// A C string of `text`, or None when it holds a NUL (it cannot cross the ABI as one).
pub fn c(text: &str) -> Option<CString> {
    CString::new(text).ok()
}

/// `perps_challenge_verify` through the C ABI for the bsc test wallet at `NOW`; `None` when an
/// input holds a NUL byte and cannot be passed as a C string.
pub fn verify_through_abi(signed_data: &str, certs_json: &str, request_id: &str) -> Option<Result<String, Failure>> {
    let (s, c, r, ch, a) = (c(signed_data)?, c(certs_json)?, c(request_id)?, c("bsc")?, c(BSC_ADDRESS)?);
    Some(owned(|e| {
        perps::ffi::challenge::perps_challenge_verify(
            s.as_ptr(),
            c.as_ptr(),
            r.as_ptr(),
            ch.as_ptr(),
            a.as_ptr(),
            NOW,
            e,
        )
    }))
}
