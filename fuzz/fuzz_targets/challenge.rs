//! Challenge parsing + verification. Three ways in, chosen by the first byte:
//! 0: the rest is `signedData` as received, verified against the venue's certs;
//! 1: the rest is `header JSON 0xFF payload JSON`, signed here with the venue key, so the
//!    fuzzer reaches the claim checks behind a valid signature;
//! 2: like 1 with an arbitrary signature segment appended instead of a valid one.
//! Accepted challenges must satisfy every documented rule (ES256, known kid, exp > now,
//! iat ≤ now + 60, this requestId, this address, no member name twice, a sign-in message
//! that says what the claims say) and return the payload bytes unchanged; the C entry
//! point must agree with the core.
#![no_main]

#[path = "common.rs"]
mod common;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use libfuzzer_sys::fuzz_target;
use perps::challenge::{CertSet, Expected};
use perps::wallet::Chain;
use std::sync::OnceLock;

fn certs() -> &'static (CertSet, String) {
    static CERTS: OnceLock<(CertSet, String)> = OnceLock::new();
    CERTS.get_or_init(|| {
        let json = common::certs_json();
        (CertSet::parse(&json).unwrap(), json)
    })
}

fn request_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| common::request_id_of_seed([9u8; 32]))
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let signed_data = match mode % 3 {
        0 => match std::str::from_utf8(rest) {
            Ok(s) => s.to_owned(),
            Err(_) => return,
        },
        m => {
            let mut parts = rest.splitn(2, |&b| b == 0xff);
            let (header, payload) = (parts.next().unwrap_or(b""), parts.next().unwrap_or(b""));
            let jws = common::sign_jws(header, payload);
            if m == 1 {
                jws
            } else {
                let cut = jws.rfind('.').unwrap();
                format!("{}.{}", &jws[..cut], URL_SAFE_NO_PAD.encode(payload.iter().rev().copied().collect::<Vec<_>>()))
            }
        }
    };
    let (certs, certs_json) = certs();
    let expected =
        Expected { request_id: request_id(), chain: Chain::Bsc, address: common::BSC_ADDRESS, now_secs: common::NOW };
    let core = perps::challenge::verify(&signed_data, certs, &expected);
    if let Ok(v) = &core {
        // Every rule, checked again independently on what was accepted.
        let segments: Vec<&str> = signed_data.trim().split('.').collect();
        assert_eq!(segments.len(), 3);
        let header: serde_json::Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(segments[0]).unwrap()).unwrap();
        assert_eq!(header["alg"], "ES256");
        assert!(header.get("kid").is_none() || header["kid"] == common::KID);
        let payload_bytes = URL_SAFE_NO_PAD.decode(segments[1]).unwrap();
        assert_eq!(v.payload_json.as_bytes(), payload_bytes.as_slice(), "payload returned unchanged");
        let payload: serde_json::Value = serde_json::from_slice(&payload_bytes).unwrap();
        assert!(v.exp > common::NOW && v.iat <= common::NOW + 60);
        assert_eq!(payload["requestId"], request_id());
        assert!(payload["address"].as_str().unwrap().eq_ignore_ascii_case(common::BSC_ADDRESS));
        assert!(!v.message.is_empty());
        assert_eq!(v.signed_data, signed_data.trim());
        // No member name twice: the strict parse agrees with the last-wins one.
        assert_eq!(perps::strict_json::parse(&payload_bytes).unwrap(), payload);
        assert!(perps::strict_json::parse(&URL_SAFE_NO_PAD.decode(segments[0]).unwrap()).is_ok());
        // The message the wallet signs says what the claims say.
        let m = perps::signin_message::parse(&v.message).expect("an accepted message parses");
        let text = |name: &str| match &payload[name] {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        assert_eq!(m.account, perps::signin_message::Account::Ethereum);
        assert_eq!(m.domain, text("domain"));
        assert!(m.address.eq_ignore_ascii_case(common::BSC_ADDRESS));
        assert_eq!(m.statement.map(str::to_owned), payload.get("statement").map(|_| text("statement")));
        for (said, claim) in [
            (m.uri, "uri"),
            (m.version, "version"),
            (m.chain_id, "chainId"),
            (m.nonce, "nonce"),
            (m.issued_at, "issuedAt"),
            (m.request_id, "requestId"),
        ] {
            assert_eq!(said.map(str::to_owned), Some(text(claim)), "{claim}");
        }
    }
    if mode % 3 == 2 {
        // A signature segment that is not the venue's never verifies.
        assert!(core.is_err(), "a forged signature was accepted");
    }
    // The C entry point: same verdict, same message.
    let Some(abi) = common::verify_through_abi(&signed_data, certs_json, request_id()) else {
        return;
    };
    match (core, abi) {
        (Ok(v), Ok(payload)) => assert_eq!(v.payload_json, payload),
        (Err(r), Err(f)) => {
            assert_eq!(f.code, perps::ffi::error::perps_code::PERPS_VERIFICATION_FAILED);
            assert_eq!(r.message(), f.message);
        }
        (core, abi) => panic!("core and C ABI disagree: {core:?} vs {abi:?}"),
    }
});
