//! Body signature v1: Ed25519 over `v1,{request id},{timestamp ms},{exact body bytes}`,
//! standard padded base64. All three C entry points share [`sign`].
//!
//! The message is fed to the signer in two pieces (the `v1,{id},{ts},` prefix, written on
//! the stack, then the body), never concatenated, so signing allocates nothing: the hot path
//! (`perps_sign_body_into`) stays off the heap.
//!
//! A fresh signature ([`sign_now`]) is hedged (`RequestKey::sign_parts`): its nonce mixes fresh
//! randomness into RFC 8032's, so no two signatures share one. A signature with a caller-chosen
//! id and time ([`sign`], for test vectors and for re-checking a logged request) is RFC 8032's
//! deterministic one, computed by the reference path.
//!
//! Request ids and the nonces' randomness come from the OS random number generator, fetched
//! a few hundred bytes at a time per thread instead of one system call per signature (see
//! `os_random.rs`): a `getrandom` call costs 0.5–0.8 µs on a virtual machine.

use crate::error::{Code, Error, Result};
use crate::keys::RequestKey;
use base64::Engine as _;
use std::time::{SystemTime, UNIX_EPOCH};

/// The only signature scheme version the venue defines.
pub const SIGN_VERSION: &str = "v1";
/// Length of a hyphenated UUID, the `x-request-id`.
pub const REQUEST_ID_LEN: usize = 36;
/// Longest decimal form of a non-negative i64.
pub const TIMESTAMP_MAX_LEN: usize = 19;
/// Length of standard padded base64 of a 64-byte signature.
pub const SIGNATURE_B64_LEN: usize = 88;
/// Longest `v1,{id},{ts},` prefix of a signed message.
const PREFIX_MAX_LEN: usize = SIGN_VERSION.len() + 1 + REQUEST_ID_LEN + 1 + TIMESTAMP_MAX_LEN + 1;

/// The four header values of one signed request, held on the stack.
#[derive(Clone, Copy)]
pub struct BodySignature {
    request_id: [u8; REQUEST_ID_LEN],
    timestamp: [u8; TIMESTAMP_MAX_LEN],
    timestamp_len: usize,
    signature: [u8; SIGNATURE_B64_LEN],
}

impl BodySignature {
    pub fn version(&self) -> &'static str {
        SIGN_VERSION
    }
    pub fn request_id(&self) -> &str {
        ascii(&self.request_id)
    }
    pub fn timestamp(&self) -> &str {
        ascii(&self.timestamp[..self.timestamp_len])
    }
    pub fn signature(&self) -> &str {
        ascii(&self.signature)
    }

    /// The four headers as `(name, value)` pairs, in the order the venue documents them.
    pub fn headers(&self) -> [(&'static str, &str); 4] {
        [
            ("x-request-sign-version", self.version()),
            ("x-request-id", self.request_id()),
            ("x-request-timestamp", self.timestamp()),
            ("x-request-signature", self.signature()),
        ]
    }

    /// JSON object of the four headers (what `perps_sign_body` returns), in the documented
    /// order: `{"x-request-sign-version":"v1","x-request-id":…,"x-request-timestamp":…,
    /// "x-request-signature":…}`.
    ///
    /// Written directly, in one allocation: every value is ASCII that JSON need not escape
    /// (UUID hex and hyphens, decimal digits, base64 `A-Za-z0-9+/=`). The capacity leaves
    /// room for the NUL a C string adds, so handing the result to C does not reallocate.
    pub fn to_headers_json(&self) -> String {
        let values = self.headers();
        let len = 2 + values.iter().map(|(name, value)| name.len() + value.len() + 6).sum::<usize>() - 1;
        let mut out = String::with_capacity(len + 1);
        out.push('{');
        for (i, (name, value)) in values.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('"');
            out.push_str(name);
            out.push_str("\":\"");
            out.push_str(value);
            out.push('"');
        }
        out.push('}');
        debug_assert_eq!(out.len(), len);
        out
    }
}

impl std::fmt::Debug for BodySignature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.headers()).finish()
    }
}

/// Every field is written from ASCII (UUID, digits, base64), so this cannot fail.
fn ascii(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or("")
}

/// Sign with a fresh UUID v4 and the given time: a hedged signature (fresh randomness in the
/// nonce), the fast checked R.
pub fn sign_now(key: &RequestKey, body: &[u8], timestamp_ms: i64) -> Result<BodySignature> {
    let mut id = [0u8; REQUEST_ID_LEN];
    fresh_uuid(&mut id)?;
    sign_with_id_bytes(body, id, timestamp_ms, |parts| key.sign_parts(parts))
}

/// Sign with a caller-chosen request id (a hyphenated UUID, kept exactly as given) and time:
/// RFC 8032's deterministic signature, R by the reference path (test vectors, re-checking a
/// logged request).
pub fn sign(key: &RequestKey, body: &[u8], request_id: &str, timestamp_ms: i64) -> Result<BodySignature> {
    let id = parse_request_id(request_id)?;
    sign_with_id_bytes(body, id, timestamp_ms, |parts| key.sign_parts_deterministic(parts))
}

fn sign_with_id_bytes(
    body: &[u8],
    request_id: [u8; REQUEST_ID_LEN],
    timestamp_ms: i64,
    signer: impl FnOnce(&[&[u8]]) -> Result<ed25519_dalek::Signature>,
) -> Result<BodySignature> {
    if timestamp_ms < 0 {
        return Err(Error::invalid_argument(format!(
            "timestamp_ms must be milliseconds since the Unix epoch, got a negative value ({timestamp_ms})"
        )));
    }
    let mut timestamp = [0u8; TIMESTAMP_MAX_LEN];
    let timestamp_len = write_decimal(timestamp_ms as u64, &mut timestamp);
    // `v1,{id},{ts},` on the stack: one hash update for it, one for the body.
    let mut prefix = [0u8; PREFIX_MAX_LEN];
    let mut n = 0;
    for part in [SIGN_VERSION.as_bytes(), b",", &request_id, b",", &timestamp[..timestamp_len], b","] {
        prefix[n..n + part.len()].copy_from_slice(part);
        n += part.len();
    }
    let signature = signer(&[&prefix[..n], body])?;
    let mut b64 = [0u8; SIGNATURE_B64_LEN];
    base64::engine::general_purpose::STANDARD
        .encode_slice(signature.to_bytes(), &mut b64)
        .map_err(|_| Error::new(Code::Panic, "base64 buffer too small"))?;
    Ok(BodySignature { request_id, timestamp, timestamp_len, signature: b64 })
}

/// The exact bytes that are signed, for tests and for callers debugging a rejected request.
pub fn signed_message(request_id: &str, timestamp_ms: i64, body: &[u8]) -> Vec<u8> {
    let mut m = format!("{SIGN_VERSION},{request_id},{timestamp_ms},").into_bytes();
    m.extend_from_slice(body);
    m
}

/// Accept a hyphenated UUID (36 characters, any version); keep its exact text, since those
/// are the bytes that will travel in `x-request-id`.
fn parse_request_id(text: &str) -> Result<[u8; REQUEST_ID_LEN]> {
    let valid = text.len() == REQUEST_ID_LEN && uuid::Uuid::try_parse(text).is_ok();
    if !valid {
        return Err(Error::invalid_argument(
            "request_id must be a hyphenated UUID like 123e4567-e89b-12d3-a456-426614174000",
        ));
    }
    let mut out = [0u8; REQUEST_ID_LEN];
    out.copy_from_slice(text.as_bytes());
    Ok(out)
}

/// A fresh random UUID v4 (hyphenated, lower case) from the pooled OS randomness.
pub(crate) fn fresh_uuid(out: &mut [u8; REQUEST_ID_LEN]) -> Result<()> {
    fresh_uuid_value()?.hyphenated().encode_lower(out);
    Ok(())
}

/// A fresh random UUID v4 from the pooled OS randomness.
pub(crate) fn fresh_uuid_value() -> Result<uuid::Uuid> {
    let random = crate::os_random::take::<16>().map_err(crate::keys::rng_failed)?;
    Ok(uuid::Builder::from_random_bytes(random).into_uuid())
}

/// Write `value` in decimal into `out`, returning the length used.
fn write_decimal(mut value: u64, out: &mut [u8; TIMESTAMP_MAX_LEN]) -> usize {
    let mut reversed = [0u8; 20];
    let mut n = 0;
    loop {
        reversed[n] = b'0' + (value % 10) as u8;
        n += 1;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    for i in 0..n {
        out[i] = reversed[n - 1 - i];
    }
    n
}

/// Milliseconds since the Unix epoch by the local clock.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_json_is_the_four_headers_in_order() {
        let key = RequestKey::from_signing_key(&ed25519_dalek::SigningKey::from_bytes(&[1; 32]));
        let id = "123e4567-e89b-12d3-a456-426614174000";
        for ts in [0, 1_700_000_000_123, i64::MAX] {
            let sig = sign(&key, b"{}", id, ts).unwrap();
            let json = sig.to_headers_json();
            let expected = format!(
                r#"{{"x-request-sign-version":"v1","x-request-id":"{id}","x-request-timestamp":"{ts}","x-request-signature":"{}"}}"#,
                sig.signature()
            );
            assert_eq!(json, expected);
            // Exactly the room a C string needs: no reallocation on the way out.
            assert_eq!(json.capacity(), json.len() + 1);
            let parsed: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&json).unwrap();
            for (name, value) in sig.headers() {
                assert_eq!(parsed[name], value);
            }
        }
    }

    #[test]
    fn decimal_matches_std_formatting() {
        for v in [0u64, 9, 10, 1_700_000_000_123, i64::MAX as u64] {
            let mut buf = [0u8; TIMESTAMP_MAX_LEN];
            let n = write_decimal(v, &mut buf);
            assert_eq!(std::str::from_utf8(&buf[..n]).unwrap(), v.to_string());
        }
    }
}
