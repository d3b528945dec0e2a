//! Challenge verification as a pure function, for callers that talk HTTP themselves.

use crate::challenge::{self, CertSet, Expected};
use crate::ffi::error::perps_error;
use crate::ffi::strings::{arg_str, to_c_string};
use crate::wallet::Chain;
use std::ffi::c_char;

/// Verify a sign-in challenge without the network: `signed_data` (the compact JWS from
/// prepare-signin) against `certs_json` (the venue's JWK set), and its claims against this
/// `request_id`, `chain` and wallet `address`, at `now_unix_secs` (0 = the system clock).
/// ES256 only; `kid` matched when present; `exp` in the future; `iat` at most 60 s ahead.
/// It knows no sign-in host and takes no pins: the caller checks that the payload's `domain`
/// and `uri` name the venue it means to sign in to (`perps_prepare_signin` checks them against
/// `base_url`'s site or the client's pins).
/// Returns the decoded payload JSON (free with `perps_string_free`), or NULL with
/// `PERPS_VERIFICATION_FAILED` (or `PERPS_BAD_RESPONSE` for an unusable certs document).
#[unsafe(no_mangle)]
pub extern "C" fn perps_challenge_verify(
    signed_data: *const c_char,
    certs_json: *const c_char,
    request_id: *const c_char,
    chain: *const c_char,
    address: *const c_char,
    now_unix_secs: i64,
    err: *mut *mut perps_error,
) -> *mut c_char {
    ffi_boundary!(err, {
        let signed_data = arg_str(signed_data, "signed_data")?;
        let certs = CertSet::parse(arg_str(certs_json, "certs_json")?)?;
        let expected = Expected {
            request_id: arg_str(request_id, "request_id")?,
            chain: Chain::parse(arg_str(chain, "chain")?)?,
            address: arg_str(address, "address")?,
            now_secs: if now_unix_secs == 0 { crate::body_sign::now_ms() / 1000 } else { now_unix_secs },
        };
        to_c_string(challenge::verify(signed_data, &certs, &expected)?.payload_json)
    })
}
