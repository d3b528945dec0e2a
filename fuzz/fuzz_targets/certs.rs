//! The venue's certificate set (JWK set) parsing, then a valid challenge verified against
//! whatever set was parsed: accepted only when the set holds the venue's key under the
//! challenge's kid. The C entry point must agree.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use perps::challenge::{CertSet, Expected, Rejection};
use perps::wallet::Chain;
use std::sync::OnceLock;

fn challenge() -> &'static (String, String) {
    static CHALLENGE: OnceLock<(String, String)> = OnceLock::new();
    CHALLENGE.get_or_init(|| {
        let request_id = common::request_id_of_seed([9u8; 32]);
        let header = format!(r#"{{"alg":"ES256","typ":"JWT","kid":"{}"}}"#, common::KID);
        let payload = common::signin_payload(common::BSC_ADDRESS, &request_id, common::NOW, common::NOW + 180);
        (common::sign_jws(header.as_bytes(), payload.to_string().as_bytes()), request_id)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (signed_data, request_id) = challenge();
    let parsed = CertSet::parse(text);
    if let Ok(set) = &parsed {
        assert!(!set.is_empty(), "a parsed set has a usable key");
        let expected = Expected { request_id, chain: Chain::Bsc, address: common::BSC_ADDRESS, now_secs: common::NOW };
        match perps::challenge::verify(signed_data, set, &expected) {
            Ok(_) => assert!(set.has_kid(common::KID), "verified without the kid in the set"),
            Err(Rejection::UnknownKid(kid)) => {
                assert_eq!(kid, common::KID);
                assert!(!set.has_kid(common::KID));
            }
            Err(_) => assert!(set.has_kid(common::KID), "refused for another reason than the kid"),
        }
    } else {
        assert_eq!(parsed.as_ref().unwrap_err().code(), perps::Code::BadResponse);
    }
    let Some(abi) = common::verify_through_abi(signed_data, text, request_id) else {
        return;
    };
    if parsed.is_err() {
        assert_eq!(abi.unwrap_err().code, perps::ffi::error::perps_code::PERPS_BAD_RESPONSE);
    }
});
