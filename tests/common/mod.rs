//! Helpers shared by the Rust integration tests.
#![allow(dead_code)]

pub mod abi;
pub mod stream_abi;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::SigningKey;
use p256::ecdsa::signature::Signer;

/// An ES256 key playing the venue's certificate key, made from a fixed seed byte.
pub struct VenueKey {
    pub kid: Option<String>,
    key: SigningKey,
}

impl VenueKey {
    pub fn new(seed: u8, kid: Option<&str>) -> VenueKey {
        let key = SigningKey::from_slice(&[seed; 32]).expect("valid P-256 scalar");
        VenueKey { kid: kid.map(str::to_owned), key }
    }

    /// This key as a JWK (`{"kty":"EC","crv":"P-256",…}`).
    pub fn jwk(&self) -> serde_json::Value {
        let point = self.key.verifying_key().to_sec1_point(false);
        let bytes = point.as_bytes();
        let mut jwk = serde_json::json!({
            "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig",
            "x": URL_SAFE_NO_PAD.encode(&bytes[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&bytes[33..65]),
        });
        if let Some(kid) = &self.kid {
            jwk["kid"] = serde_json::Value::String(kid.clone());
        }
        jwk
    }

    /// A compact JWS over the given header and payload JSON texts.
    pub fn sign_jws(&self, header: &str, payload: &str) -> String {
        let input = format!("{}.{}", URL_SAFE_NO_PAD.encode(header), URL_SAFE_NO_PAD.encode(payload));
        let signature: p256::ecdsa::Signature = self.key.sign(input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
    }

    /// The standard ES256 header for this key (with `kid` when the key has one).
    pub fn header(&self) -> String {
        match &self.kid {
            Some(kid) => format!(r#"{{"alg":"ES256","typ":"JWT","kid":"{kid}"}}"#),
            None => r#"{"alg":"ES256","typ":"JWT"}"#.to_owned(),
        }
    }
}

pub fn jwk_set(keys: &[&VenueKey]) -> String {
    serde_json::json!({ "keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>() }).to_string()
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex(text: &str) -> Vec<u8> {
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
}

/// A sign-in payload as the venue writes it: the claims, and the EIP-4361 message (Solana
/// wording for "solana") that says the same, issued at `iat`, expiring at `exp`.
pub fn signin_payload(chain: &str, address: &str, request_id: &str, iat: i64, exp: i64) -> serde_json::Value {
    let (noun, chain_id) = if chain == "solana" { ("Solana", 501) } else { ("Ethereum", 56) };
    let issued_at = rfc3339(iat);
    let nonce = format!("n0nce{iat}");
    let statement = "Sign in to the test venue.";
    let message = format!(
        "venue.example wants you to sign in with your {noun} account:\n{address}\n\n{statement}\n\n\
         URI: https://venue.example\nVersion: 1\nChain ID: {chain_id}\nNonce: {nonce}\nIssued At: {issued_at}\n\
         Request ID: {request_id}"
    );
    serde_json::json!({
        "domain": "venue.example", "uri": "https://venue.example", "statement": statement, "version": "1",
        "chainId": chain_id, "nonce": nonce, "address": address, "requestId": request_id,
        "issuedAt": issued_at, "message": message, "iat": iat, "exp": exp,
    })
}

/// Unix seconds as an RFC 3339 UTC date-time.
pub fn rfc3339(unix_secs: i64) -> String {
    let (year, month, day) = civil_from_days(unix_secs.div_euclid(86_400));
    let secs = unix_secs.rem_euclid(86_400);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", secs / 3600, secs / 60 % 60, secs % 60)
}

/// (year, month, day) of a day counted from 1970-01-01 (Howard Hinnant's civil-from-days
/// algorithm): the tests write dates without the library's code.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// A hedged Ed25519 signature as draft-irtf-cfrg-det-sigs-with-noise-05 §2 defines it,
/// computed here from the draft's text with ed25519-dalek's and curve25519-dalek's public
/// pieces (SHA-512, scalars, the reference multiplication), not with the library's code:
/// prefix' = SHA-512(prefix || Z)[..32], r = SHA-512(prefix' || M), then RFC 8032.
pub fn hedged_signature(seed: &[u8; 32], z: &[u8; 32], message: &[u8]) -> [u8; 64] {
    use curve25519_dalek::{EdwardsPoint, Scalar};
    use ed25519_dalek::{Digest, Sha512};
    let wide = |parts: &[&[u8]]| -> [u8; 64] {
        let mut hasher = Sha512::new();
        for part in parts {
            hasher.update(part);
        }
        hasher.finalize().into()
    };
    let h = wide(&[seed]);
    let mut clamped: [u8; 32] = h[..32].try_into().unwrap();
    clamped[0] &= 248;
    clamped[31] &= 127;
    clamped[31] |= 64;
    let a = Scalar::from_bytes_mod_order(clamped);
    let public = EdwardsPoint::mul_base(&a).compress().to_bytes();
    let prefix2 = wide(&[&h[32..], z]);
    let r = Scalar::from_bytes_mod_order_wide(&wide(&[&prefix2[..32], message]));
    let big_r = EdwardsPoint::mul_base(&r).compress().to_bytes();
    let k = Scalar::from_bytes_mod_order_wide(&wide(&[&big_r, &public, message]));
    let s = r + k * a;
    let mut out = [0u8; 64];
    out[..32].copy_from_slice(&big_r);
    out[32..].copy_from_slice(s.as_bytes());
    out
}
