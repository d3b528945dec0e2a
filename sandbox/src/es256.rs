//! ES256 (P-256 ECDSA over SHA-256) JWTs and the JWK set the certs endpoint serves.
//!
//! The venue signs two kinds of JWT: the sign-in challenge (`signedData`) and the access
//! token. Both are compact JWS with the header `{"alg":"ES256","typ":"JWT","kid":…}` and a raw
//! r||s signature (64 bytes, base64url without padding), as RFC 7518 §3.4 requires.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use serde_json::{Map, Value, json};

use super::random;

struct Key {
    kid: String,
    signing: SigningKey,
}

impl Key {
    fn generate() -> Key {
        // Rejection sampling: a random 32-byte string is a valid scalar unless it is zero or
        // ≥ the group order, which is astronomically rare but must not be unwrapped.
        loop {
            if let Ok(signing) = SigningKey::from_slice(&random::bytes::<32>()) {
                return Key { kid: format!("sbx-{}", random::hex::<8>()), signing };
            }
        }
    }
}

/// The sandbox's signing keys.
pub(crate) struct KeyRing {
    /// Signs every new JWT; the only key the certs endpoint serves.
    current: Key,
    /// Keys replaced by `rotate`: no longer served, but what they signed before the rotation
    /// still verifies at login, as on a venue that rotates without breaking sign-ins in flight.
    retired: Vec<(String, VerifyingKey)>,
    /// Never served and never accepted: signs challenges for the `challenge_unknown_kid` fault.
    rogue: Key,
}

impl KeyRing {
    pub(crate) fn new() -> KeyRing {
        KeyRing { current: Key::generate(), retired: Vec::new(), rogue: Key::generate() }
    }

    /// Replaces the signing key; returns the new kid.
    pub(crate) fn rotate(&mut self) -> String {
        let old = std::mem::replace(&mut self.current, Key::generate());
        self.retired.push((old.kid, *old.signing.verifying_key()));
        self.current.kid.clone()
    }

    #[cfg(test)]
    pub(crate) fn current_kid(&self) -> &str {
        &self.current.kid
    }

    /// The JWK Set (RFC 7517) with the current public key only.
    pub(crate) fn jwks(&self) -> Value {
        let point = self.current.signing.verifying_key().to_sec1_point(false);
        let (x, y) = match (point.x(), point.y()) {
            (Some(x), Some(y)) => (URL_SAFE_NO_PAD.encode(x), URL_SAFE_NO_PAD.encode(y)),
            _ => unreachable!("an uncompressed point has both coordinates"),
        };
        json!({"keys": [{
            "kty": "EC", "crv": "P-256", "x": x, "y": y,
            "kid": self.current.kid, "alg": "ES256", "use": "sig",
        }]})
    }

    /// Signs `claims` with the current key.
    pub(crate) fn sign(&self, claims: &Value) -> String {
        encode(&self.current, claims)
    }

    /// Signs `claims` with the rogue key, whose kid the certs never serve.
    pub(crate) fn sign_rogue(&self, claims: &Value) -> String {
        encode(&self.rogue, claims)
    }

    /// Verifies a compact JWS against the current and retired keys and returns its claims.
    /// The signature is checked over the exact bytes received, never a re-encoding.
    pub(crate) fn verify(&self, jwt: &str) -> Result<Map<String, Value>, String> {
        let mut parts = jwt.split('.');
        let (Some(h64), Some(p64), Some(s64), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
            return Err("not a compact JWS (three dot-separated parts)".into());
        };
        let header = decode_json_object(h64).ok_or("JWS header is not base64url JSON")?;
        if header.get("alg").and_then(Value::as_str) != Some("ES256") {
            return Err("JWS alg is not ES256".into());
        }
        let sig = URL_SAFE_NO_PAD
            .decode(s64)
            .ok()
            .and_then(|raw| Signature::from_slice(&raw).ok())
            .ok_or("JWS signature is not a 64-byte base64url r||s")?;
        let candidates: Vec<&VerifyingKey> = match header.get("kid") {
            Some(Value::String(kid)) => self.key_by_kid(kid).into_iter().collect(),
            Some(_) => return Err("JWS kid is not a string".into()),
            None => self.all_keys(),
        };
        if candidates.is_empty() {
            return Err("JWS kid is unknown".into());
        }
        let signing_input = &jwt.as_bytes()[..h64.len() + 1 + p64.len()];
        if !candidates.iter().any(|k| k.verify(signing_input, &sig).is_ok()) {
            return Err("JWS signature does not verify".into());
        }
        decode_json_object(p64).ok_or_else(|| "JWS payload is not base64url JSON".into())
    }

    fn key_by_kid(&self, kid: &str) -> Option<&VerifyingKey> {
        if self.current.kid == kid {
            return Some(self.current.signing.verifying_key());
        }
        self.retired.iter().find(|(k, _)| k == kid).map(|(_, vk)| vk)
    }

    fn all_keys(&self) -> Vec<&VerifyingKey> {
        std::iter::once(self.current.signing.verifying_key()).chain(self.retired.iter().map(|(_, vk)| vk)).collect()
    }
}

fn encode(key: &Key, claims: &Value) -> String {
    let header = json!({"alg": "ES256", "typ": "JWT", "kid": key.kid});
    let signing_input =
        format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
    let sig: Signature = key.signing.sign(signing_input.as_bytes());
    format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(sig.to_bytes()))
}

fn decode_json_object(b64: &str) -> Option<Map<String, Value>> {
    let raw = URL_SAFE_NO_PAD.decode(b64).ok()?;
    match serde_json::from_slice(&raw).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// Damages the signature of a compact JWS while keeping it well-formed (64 bytes), for the
/// `challenge_bad_signature` fault: a client must reject it on verification, not on parsing.
pub(crate) fn corrupt_signature(jwt: &str) -> String {
    let Some((input, s64)) = jwt.rsplit_once('.') else {
        return jwt.to_owned();
    };
    let mut raw = URL_SAFE_NO_PAD.decode(s64).unwrap_or_else(|_| vec![0; 64]);
    if let Some(byte) = raw.get_mut(40) {
        *byte ^= 0x5a;
    }
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_verify_rotate() {
        let mut ring = KeyRing::new();
        let claims = json!({"a": 1});
        let before = ring.sign(&claims);
        assert_eq!(ring.verify(&before).unwrap()["a"], 1);
        assert!(ring.verify(&corrupt_signature(&before)).is_err());
        assert!(ring.verify(&ring.sign_rogue(&claims)).is_err());
        let old_kid = ring.current_kid().to_owned();
        ring.rotate();
        assert_ne!(ring.current_kid(), old_kid);
        assert!(ring.verify(&before).is_ok(), "retired keys still verify");
        assert_eq!(ring.jwks()["keys"].as_array().unwrap().len(), 1);
    }
}
