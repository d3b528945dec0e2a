//! solana wallets: Ed25519 key, base58 address, and the base64 JSON wrapper the login
//! endpoint expects as `signature`.

use crate::error::{Error, Result};
use crate::keys::parse_ed25519_secret;
use base64::Engine as _;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use std::fmt;

pub struct WalletKey {
    key: SigningKey,
}

impl WalletKey {
    /// base58 64-byte keypair, base58 32-byte seed, hex, or the `solana-keygen` JSON array.
    pub fn parse(text: &str) -> Result<WalletKey> {
        Ok(WalletKey { key: parse_ed25519_secret(text)? })
    }

    pub fn address(&self) -> String {
        bs58::encode(self.key.verifying_key().as_bytes()).into_string()
    }

    /// Sign the payload's `message` and wrap it for login.
    pub fn login_signature(&self, payload_json: &str) -> Result<String> {
        let message = super::payload_message(payload_json)?;
        refuse_the_request_key(&self.address(), payload_request_id(payload_json).as_deref())?;
        // RFC 8032's deterministic nonce, and the venue chooses the message: it can have one
        // challenge signed twice, and a faulty signature beside a good one of the same message
        // gives the key away (s − s' = (k − k')·a). So every signature is verified first.
        let signature = self.key.sign(message.as_bytes());
        #[cfg(test)]
        let signature = {
            let mut bytes = signature.to_bytes();
            super::fault::corrupt(&mut bytes[32..]);
            Signature::from_bytes(&bytes)
        };
        if self.key.verifying_key().verify_strict(message.as_bytes(), &signature).is_err() {
            return Err(super::signature_check_failed("solana"));
        }
        Ok(wrap(payload_json, message.as_bytes(), &signature.to_bytes(), self.key.verifying_key().as_bytes()))
    }
}

impl fmt::Debug for WalletKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("solana::WalletKey").field("address", &self.address()).finish_non_exhaustive()
    }
}

/// Wrap a signature made elsewhere (a hardware wallet) for login, after checking that it is
/// a valid Ed25519 signature of the payload's message by `address`: a wrong signature is
/// caught here rather than as an opaque login rejection.
pub fn wrap_external_signature(payload_json: &str, address: &str, signature: &[u8]) -> Result<String> {
    let message = super::payload_message(payload_json)?;
    refuse_the_request_key(address, payload_request_id(payload_json).as_deref())?;
    let public = decode_address(address)?;
    let signature: [u8; 64] = signature
        .try_into()
        .map_err(|_| Error::invalid_argument(format!("an Ed25519 signature is 64 bytes; got {}", signature.len())))?;
    let verifying = VerifyingKey::from_bytes(&public)
        .map_err(|_| Error::invalid_argument("the solana address is not a valid Ed25519 public key"))?;
    verifying.verify(message.as_bytes(), &Signature::from_bytes(&signature)).map_err(|_| {
        Error::verification("the signature is not a valid signature of the payload's message by this address")
    })?;
    Ok(wrap(payload_json, message.as_bytes(), &signature, &public))
}

/// Whether a login `signature` (the base64 JSON wrapper) holds a valid Ed25519 signature of
/// `message` by `address`.
pub(crate) fn signs(signature: &str, message: &[u8], address: &str) -> bool {
    let Ok(json) = base64::engine::general_purpose::STANDARD.decode(signature.trim()) else { return false };
    let Ok(wrapper) = serde_json::from_slice::<serde_json::Value>(&json) else { return false };
    let bytes = |value: &serde_json::Value| -> Option<Vec<u8>> {
        value.as_array()?.iter().map(|n| n.as_u64().and_then(|n| u8::try_from(n).ok())).collect()
    };
    let output = &wrapper["output"];
    let (Some(signed), Some(raw), Ok(public)) =
        (bytes(&output["signedMessage"]), bytes(&output["signature"]), decode_address(address))
    else {
        return false;
    };
    let (Ok(raw), Ok(verifying)) = (<[u8; 64]>::try_from(raw.as_slice()), VerifyingKey::from_bytes(&public)) else {
        return false;
    };
    signed == message && verifying.verify(message, &Signature::from_bytes(&raw)).is_ok()
}

/// One key must not do both jobs: a solana wallet key that is also the session's
/// request-signing key (its address, base58 of the public key, equal to the request key id)
/// is refused. Signing in with it would bind the account to a key that already signs every
/// request body, so one leak or one misuse of either role gives away both; and the wallet's
/// sign-in message and a request body would be signed by the same key. `request_id` is the
/// session's request key id, or the `requestId` of the sign-in payload.
pub(crate) fn refuse_the_request_key(address: &str, request_id: Option<&str>) -> Result<()> {
    if request_id == Some(address) {
        return Err(Error::invalid_key(
            "the solana wallet key is the session's request-signing key: one key must not both sign in \
             and sign requests (sign in with the wallet from a session with its own key, e.g. perps_session_new)",
        ));
    }
    Ok(())
}

/// The `requestId` claim of a sign-in payload, when it has one.
fn payload_request_id(payload_json: &str) -> Option<String> {
    let payload: serde_json::Value = serde_json::from_str(payload_json).ok()?;
    payload.get("requestId")?.as_str().map(str::to_owned)
}

fn decode_address(address: &str) -> Result<[u8; 32]> {
    // At most 44 characters encode 32 bytes; checked first, as decoding is quadratic.
    if address.len() > 44 {
        return Err(Error::invalid_argument(format!(
            "a solana address is base58 of 32 bytes (at most 44 characters); got {} characters",
            address.len()
        )));
    }
    let bytes = bs58::decode(address)
        .into_vec()
        .map_err(|_| Error::invalid_argument("the solana address is not valid base58"))?;
    bytes.as_slice().try_into().map_err(|_| {
        Error::invalid_argument(format!("a solana address is base58 of 32 bytes; it decodes to {}", bytes.len()))
    })
}

/// base64(`{"input":<payload, byte for byte as given>,"output":{…}}`). The payload text is
/// embedded unchanged (it was already checked to be a JSON object), so `input` is exactly
/// what the venue issued.
fn wrap(payload_json: &str, message: &[u8], signature: &[u8; 64], public_key: &[u8; 32]) -> String {
    let json = format!(
        "{{\"input\":{},\"output\":{{\"signedMessage\":{},\"signature\":{},\"account\":{{\"publicKey\":{}}}}}}}",
        payload_json.trim(),
        number_array(message),
        number_array(signature),
        number_array(public_key)
    );
    base64::engine::general_purpose::STANDARD.encode(json)
}

fn number_array(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 4 + 2);
    s.push('[');
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&b.to_string());
    }
    s.push(']');
    s
}
