//! bsc (EVM) wallets: secp256k1 key, EIP-55 address, EIP-191 `personal_sign`.

use crate::error::{Error, Result};
use crate::keys::text::{self, decode_hex};
use k256::ecdsa::SigningKey;
use k256::{FieldBytes, NonZeroScalar, Scalar};
use sha3::{Digest, Keccak256};
use std::fmt;
use zeroize::Zeroizing;

/// A secp256k1 wallet key (zeroized on drop by k256).
pub struct WalletKey {
    key: SigningKey,
}

impl WalletKey {
    /// Parse 32 bytes of hex, with or without `0x`, without a branch or an address that
    /// depends on the key (`keys::text`): only the verdicts are public.
    pub fn parse(text: &str) -> Result<WalletKey> {
        let text = text::trim(text);
        let digits = text::strip_0x(text).unwrap_or(text);
        if digits.len() != 64 {
            return Err(Error::invalid_key(format!(
                "a bsc private key is 64 hex digits (optionally 0x-prefixed); got {} characters",
                digits.len()
            )));
        }
        let mut bytes = Zeroizing::new(FieldBytes::default());
        text::decode_hex_into(digits, &mut bytes)
            .ok_or_else(|| Error::invalid_key("the bsc private key is not valid hex"))?;
        // k256's own check (`SigningKey::from_slice`) branches on the scalar's validity;
        // here its verdict is declared public and the scalar taken without a branch.
        let scalar = NonZeroScalar::from_repr(*bytes);
        if !text::public(u64::from(scalar.is_some().unwrap_u8())) {
            return Err(Error::invalid_key("the bsc private key is not a valid secp256k1 scalar (zero or ≥ n)"));
        }
        let one = NonZeroScalar::new(Scalar::ONE).expect("one is not zero");
        Ok(WalletKey { key: SigningKey::from(scalar.unwrap_or(one)) })
    }

    /// `0x` + 40 hex digits in EIP-55 mixed case.
    pub fn address(&self) -> String {
        let point = self.key.verifying_key().to_sec1_point(false);
        address_from_uncompressed(point.as_bytes())
    }

    /// EIP-191 personal_sign: keccak256("\x19Ethereum Signed Message:\n" + len + message),
    /// RFC 6979 nonce, low-s; `0x` + r || s || v (v = 27 or 28) as 130 hex digits.
    ///
    /// Checked before it is returned: the signer's address is recovered from the signature
    /// and must be this key's. The nonce is deterministic and the venue chooses the message,
    /// so it can have one challenge signed twice; were one of the two faulty (a glitch, a
    /// flipped bit in s), the pair would be two equations in one nonce and the key, and give
    /// the key away. A signature that does not check out is never released.
    pub fn personal_sign(&self, message: &[u8]) -> Result<String> {
        let digest = eip191_hash(message);
        let (signature, recovery) = self.key.sign_prehash_recoverable(&digest);
        // k256 normalizes s to the low half and adjusts the recovery id with it; check it
        // anyway, since a high-s signature is rejected by EVM verifiers.
        let (signature, recovery) = match signature.normalize_s() {
            normalized if normalized == signature => (signature, recovery.to_byte()),
            normalized => (normalized, recovery.to_byte() ^ 1),
        };
        let mut raw = [0u8; 65];
        raw[..64].copy_from_slice(&signature.to_bytes());
        raw[64] = 27 + (recovery & 1);
        #[cfg(test)]
        super::fault::corrupt(&mut raw[32..64]);
        // Wiped if withheld: a faulty signature beside a good one of the same challenge gives
        // the key away, so it must not be left in freed memory either (written once into its
        // final size: a String that grows frees its old buffer unwiped).
        let hex = zeroize::Zeroizing::new(to_hex(&raw));
        let mut signed = zeroize::Zeroizing::new(String::with_capacity(2 + hex.len()));
        signed.push_str("0x");
        signed.push_str(&hex);
        if recovered_signer(&signed, message).as_deref() != Some(self.address().as_str()) {
            return Err(super::signature_check_failed("bsc"));
        }
        Ok(signed.as_str().to_owned())
    }
}

impl fmt::Debug for WalletKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("evm::WalletKey").field("address", &self.address()).finish_non_exhaustive()
    }
}

/// The address whose key made `signature` (`0x` + r || s || v, v = 27, 28, 0 or 1, as
/// `personal_sign` gives it) over `message`; `None` for anything else.
pub fn recovered_signer(signature: &str, message: &[u8]) -> Option<String> {
    use k256::ecdsa::{RecoveryId, Signature, VerifyingKey};
    let signature = signature.trim();
    let digits = signature.strip_prefix("0x").or_else(|| signature.strip_prefix("0X")).unwrap_or(signature);
    if digits.len() != 130 {
        return None;
    }
    let raw = decode_hex(digits)?;
    let recovery = RecoveryId::from_byte(if raw[64] >= 27 { raw[64] - 27 } else { raw[64] })?;
    let signature = Signature::from_slice(&raw[..64]).ok()?;
    let key = VerifyingKey::recover_from_prehash(&eip191_hash(message), &signature, recovery).ok()?;
    Some(address_from_uncompressed(key.to_sec1_point(false).as_bytes()))
}

/// keccak256 of the EIP-191 version 0x45 envelope.
pub fn eip191_hash(message: &[u8]) -> [u8; 32] {
    let mut hasher = Keccak256::new();
    hasher.update(b"\x19Ethereum Signed Message:\n");
    hasher.update(message.len().to_string().as_bytes());
    hasher.update(message);
    hasher.finalize().into()
}

/// Address of an uncompressed SEC1 public key (0x04 || x || y).
pub fn address_from_uncompressed(point: &[u8]) -> String {
    let hash: [u8; 32] = Keccak256::digest(&point[1..]).into();
    eip55(&to_hex(&hash[12..]))
}

/// Apply the EIP-55 checksum case to 40 lower-case hex digits.
fn eip55(lower_hex: &str) -> String {
    let hash: [u8; 32] = Keccak256::digest(lower_hex.as_bytes()).into();
    let mut out = String::with_capacity(42);
    out.push_str("0x");
    for (i, c) in lower_hex.chars().enumerate() {
        let nibble = (hash[i / 2] >> if i % 2 == 0 { 4 } else { 0 }) & 0x0f;
        out.push(if c.is_ascii_alphabetic() && nibble >= 8 { c.to_ascii_uppercase() } else { c });
    }
    out
}

pub(crate) fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 0x0f) as usize] as char);
    }
    s
}
