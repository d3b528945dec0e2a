//! Ed25519 keys: the request-signing key of a session, and the text forms an Ed25519
//! private key arrives in (API credentials, Solana wallets).
//!
//! The signing key is expanded once (SHA-512 of the seed) when the key is made, so every
//! body signature skips that hash. The expanded key is zeroized on drop by ed25519-dalek.

use crate::error::{Error, Result};
use curve25519_dalek::Scalar;
use ed25519_dalek::hazmat::ExpandedSecretKey;
use ed25519_dalek::{Digest, Sha512, Signature, SigningKey, VerifyingKey};
use std::fmt;
use zeroize::Zeroizing;

/// The Ed25519 key that signs request bodies; its public key in base58 is the `requestId`.
pub struct RequestKey {
    expanded: ExpandedSecretKey,
    verifying: VerifyingKey,
    request_id: String,
}

impl RequestKey {
    /// A fresh temporary key from the operating system's RNG.
    pub fn generate() -> Result<Self> {
        let mut seed = Zeroizing::new([0u8; 32]);
        getrandom::fill(&mut seed[..])
            .map_err(|e| Error::new(crate::error::Code::Rng, format!("the OS random number generator failed: {e}")))?;
        Ok(Self::from_signing_key(&SigningKey::from_bytes(&seed)))
    }

    /// Import an Ed25519 private key given as text (see [`parse_ed25519_secret`]).
    pub fn from_text(text: &str) -> Result<Self> {
        Ok(Self::from_signing_key(&parse_ed25519_secret(text)?))
    }

    pub fn from_signing_key(key: &SigningKey) -> Self {
        let expanded = ExpandedSecretKey::from(key.as_bytes());
        let verifying = key.verifying_key();
        let request_id = bs58::encode(verifying.as_bytes()).into_string();
        crate::curve::prepare_table();
        RequestKey { expanded, verifying, request_id }
    }

    /// base58 of the public key: the `requestId` sent to prepare-signin.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    pub fn verifying_key(&self) -> &VerifyingKey {
        &self.verifying
    }

    /// Ed25519 signature (RFC 8032) of the concatenation of `parts`, without concatenating
    /// them: the pieces are hashed in turn with the key expanded once at creation. The nonce
    /// commitment R = r·B is computed by [`crate::curve`]; hashing and scalars are
    /// ed25519-dalek's, and the result is byte for byte what ed25519-dalek signs.
    pub fn sign_parts(&self, parts: &[&[u8]]) -> Signature {
        // SHA-512(head || M), M fed piece by piece.
        let hash_with_message = |head: &[&[u8]]| {
            let mut hasher = Sha512::new();
            for piece in head.iter().chain(parts) {
                hasher.update(piece);
            }
            hasher.finalize().into()
        };
        // r = SHA-512(prefix || M) mod l: deterministic, so never reused for another message.
        let nonce = Zeroizing::new(Scalar::from_bytes_mod_order_wide(&Zeroizing::new(hash_with_message(&[&self
            .expanded
            .hash_prefix]))));
        let commitment = crate::curve::mul_base_compressed(nonce.as_bytes());
        // k = SHA-512(R || A || M) mod l, and s = r + k·a.
        let challenge =
            Scalar::from_bytes_mod_order_wide(&hash_with_message(&[&commitment, self.verifying.as_bytes()]));
        let s = challenge * self.expanded.scalar + *nonce;
        Signature::from_components(commitment, s.to_bytes())
    }
}

impl fmt::Debug for RequestKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The public half only: a secret never reaches Debug output.
        f.debug_struct("RequestKey").field("request_id", &self.request_id).finish_non_exhaustive()
    }
}

/// Parse an Ed25519 private key from the forms users meet:
/// - base58 of the 32-byte seed, or of the 64-byte keypair (seed || public key);
/// - hex (optionally `0x`-prefixed) of the 32-byte seed or the 64-byte keypair;
/// - the `solana-keygen` JSON array of 64 (or 32) numbers.
///
/// A 64-byte keypair whose public half does not belong to its seed is rejected: signing with
/// it would produce signatures the venue cannot verify (or worse, leak the key).
/// Error messages describe the shape of the input, never its content.
pub fn parse_ed25519_secret(text: &str) -> Result<SigningKey> {
    let text = text.trim();
    if text.is_empty() {
        return Err(Error::invalid_key("the Ed25519 private key is empty"));
    }
    let bytes = decode_secret_text(text)?;
    signing_key_from_bytes(&bytes)
}

/// The longest base58 text of 64 bytes.
const MAX_BASE58_KEY_LEN: usize = 88;

fn decode_secret_text(text: &str) -> Result<Zeroizing<Vec<u8>>> {
    if text.starts_with('[') {
        return decode_json_array(text);
    }
    let hex_body = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"));
    let looks_hex = text.len() == 64 || text.len() == 128 || hex_body.is_some();
    if looks_hex {
        let digits = hex_body.unwrap_or(text);
        return decode_hex(digits)
            .ok_or_else(|| Error::invalid_key("the Ed25519 private key looks like hex but is not valid hex"));
    }
    // base58 decoding takes time quadratic in the length: refuse what cannot be a key first.
    if text.len() > MAX_BASE58_KEY_LEN {
        return Err(Error::invalid_key(format!(
            "the Ed25519 private key is {} characters long; base58 of a 64-byte keypair is at most {MAX_BASE58_KEY_LEN}",
            text.len()
        )));
    }
    let decoded = bs58::decode(text).into_vec().map_err(|_| {
        Error::invalid_key("the Ed25519 private key is not valid base58 (or hex, or a JSON array of bytes)")
    })?;
    Ok(Zeroizing::new(decoded))
}

fn decode_json_array(text: &str) -> Result<Zeroizing<Vec<u8>>> {
    let numbers: Zeroizing<Vec<u64>> = Zeroizing::new(serde_json::from_str(text).map_err(|_| {
        Error::invalid_key("the Ed25519 private key starts with '[' but is not a JSON array of integers 0..=255")
    })?);
    let mut bytes = Zeroizing::new(Vec::with_capacity(numbers.len()));
    for &n in numbers.iter() {
        let byte = u8::try_from(n)
            .map_err(|_| Error::invalid_key("the Ed25519 private key JSON array must hold integers 0..=255"))?;
        bytes.push(byte);
    }
    Ok(bytes)
}

/// Decode hex without allocating an intermediate string; `None` on odd length or a non-hex digit.
pub(crate) fn decode_hex(digits: &str) -> Option<Zeroizing<Vec<u8>>> {
    let raw = digits.as_bytes();
    if !raw.len().is_multiple_of(2) {
        return None;
    }
    let mut out = Zeroizing::new(Vec::with_capacity(raw.len() / 2));
    for pair in raw.chunks_exact(2) {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        out.push((hi * 16 + lo) as u8);
    }
    Some(out)
}

fn signing_key_from_bytes(bytes: &[u8]) -> Result<SigningKey> {
    match bytes.len() {
        32 => {
            let mut seed = Zeroizing::new([0u8; 32]);
            seed.copy_from_slice(bytes);
            Ok(SigningKey::from_bytes(&seed))
        }
        64 => {
            let mut pair = Zeroizing::new([0u8; 64]);
            pair.copy_from_slice(bytes);
            SigningKey::from_keypair_bytes(&pair).map_err(|_| {
                Error::invalid_key("the 64-byte Ed25519 keypair's public half does not match its secret half")
            })
        }
        n => Err(Error::invalid_key(format!(
            "the Ed25519 private key decodes to {n} bytes; expected a 32-byte seed or a 64-byte keypair"
        ))),
    }
}
