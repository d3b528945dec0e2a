//! `perps_sign_body_into` through the C ABI with arbitrary bytes and lengths: UTF-8 bodies
//! sign and verify (ed25519-dalek verify_strict over `v1,{id},{ts},{body}`; fresh signatures are
//! hedged, so verifying is the check), anything else is PERPS_INVALID_ARGUMENT with `*out`
//! untouched. `perps_sign_body_at` with an id and time taken from the input must give exactly
//! ed25519-dalek's standard (RFC 8032, deterministic) signature.
#![no_main]

#[path = "common.rs"]
mod common;

use base64::Engine as _;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use libfuzzer_sys::fuzz_target;
use perps::ffi::error::perps_code;
use perps::ffi::session::{perps_session, perps_session_from_api_key};
use perps::ffi::sign::{perps_body_signature, perps_sign_body_at, perps_sign_body_into};
use std::ffi::CStr;
use std::sync::OnceLock;

struct Shared(*mut perps_session, SigningKey, VerifyingKey);
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

fn session() -> &'static Shared {
    static SESSION: OnceLock<Shared> = OnceLock::new();
    SESSION.get_or_init(|| {
        let (token, key) =
            (common::c("fuzz-token").unwrap(), common::c(&bs58::encode([9u8; 32]).into_string()).unwrap());
        let mut err = std::ptr::null_mut();
        let s = perps_session_from_api_key(token.as_ptr(), key.as_ptr(), &mut err);
        assert!(!s.is_null());
        let key = SigningKey::from_bytes(&[9u8; 32]);
        let verifying = key.verifying_key();
        Shared(s, key, verifying)
    })
}

fn field(bytes: &[std::ffi::c_char]) -> &str {
    unsafe { CStr::from_ptr(bytes.as_ptr()) }.to_str().unwrap()
}

fn verifies(key: &VerifyingKey, id: &str, ts: &str, body: &[u8], sig: &str) -> bool {
    let raw: [u8; 64] = base64::engine::general_purpose::STANDARD.decode(sig).unwrap().try_into().unwrap();
    let mut message = format!("v1,{id},{ts},").into_bytes();
    message.extend_from_slice(body);
    key.verify_strict(&message, &Signature::from_bytes(&raw)).is_ok()
}

fuzz_target!(|data: &[u8]| {
    let shared = session();
    let mut out = std::mem::MaybeUninit::<perps_body_signature>::uninit();
    unsafe { std::ptr::write_bytes(out.as_mut_ptr(), 0xa5, 1) };
    // NULL with a length is refused; the input's own pointer and length otherwise.
    let code = perps_sign_body_into(shared.0, data.as_ptr(), data.len(), out.as_mut_ptr());
    if std::str::from_utf8(data).is_ok() {
        assert_eq!(code, perps_code::PERPS_OK);
        let out = unsafe { out.assume_init() };
        assert_eq!(field(&out.version), "v1");
        assert!(verifies(&shared.2, field(&out.request_id), field(&out.timestamp), data, field(&out.signature)));
    } else {
        assert_eq!(code, perps_code::PERPS_INVALID_ARGUMENT);
        let raw = unsafe { std::slice::from_raw_parts(out.as_ptr().cast::<u8>(), size_of::<perps_body_signature>()) };
        assert!(raw.iter().all(|&b| b == 0xa5), "out written on failure");
    }
    if !data.is_empty() {
        assert_eq!(
            perps_sign_body_into(shared.0, std::ptr::null(), data.len(), out.as_mut_ptr()),
            perps_code::PERPS_INVALID_ARGUMENT
        );
    }
    // sign_body_at: id from 16 input bytes, time from 8, the rest as the body.
    if data.len() >= 24 {
        let id = uuid_text(&data[..16]);
        let ts = i64::from_le_bytes(data[16..24].try_into().unwrap());
        let Ok(body) = std::str::from_utf8(&data[24..]) else { return };
        let (Some(b), Some(i)) = (common::c(body), common::c(&id)) else { return };
        match common::owned(|e| perps_sign_body_at(shared.0, b.as_ptr(), i.as_ptr(), ts, e)) {
            Ok(json) => {
                assert!(ts >= 0);
                let h: serde_json::Value = serde_json::from_str(&json).unwrap();
                assert_eq!(h["x-request-id"], id.as_str());
                assert_eq!(h["x-request-timestamp"], ts.to_string().as_str());
                // Byte for byte ed25519-dalek's standard signature (RFC 8032, deterministic).
                let standard = shared.1.sign(format!("v1,{id},{ts},{body}").as_bytes());
                assert_eq!(
                    h["x-request-signature"].as_str().unwrap(),
                    base64::engine::general_purpose::STANDARD.encode(standard.to_bytes())
                );
            }
            Err(f) => {
                assert!(ts < 0, "refused {f:?}");
                assert_eq!(f.code, perps_code::PERPS_INVALID_ARGUMENT);
            }
        }
    }
});

fn uuid_text(bytes: &[u8]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}
