//! The cheap checks every request signature passes before it leaves (`RequestKey::finish`).
//!
//! Why: one faulty Ed25519 signature can give the key away even when R is right.
//! - A flipped bit in the stored scalar a (persistent, in memory) makes s' = r + k·a' with a
//!   correct R: s'·B − R = k·a'·B, and A − a'·B = ±2^i·B for one flipped bit, so the key falls
//!   out of a single released signature.
//! - A transient fault in s = r + k·a (a limb skipped, a carry lost) leaks key bits the same way.
//! - R = identity (a zeroed nonce) passes the on-curve check of `curve/guard.rs`.
//!
//! Verifying the signature would catch all three but costs ≈ 38 µs against ≈ 8 µs for signing
//! (BENCHMARKS.md), too much for the order path. Instead, in constant time (no branch on a
//! secret but the final pass/fail, which says only whether the hardware faulted):
//! - **The key against a second copy** ([`Shadow::key_matches`]): the expanded key (scalar and
//!   nonce prefix) XOR a per-key mask, in an allocation of its own. A copy rather than a keyed
//!   MAC (an HMAC of the key would cost two SHA-512 blocks a signature, ≈ 0.5 µs): 64 byte
//!   compares, and the mask means one fault pattern hitting both allocations alike (a stuck
//!   line, a repeated write) cannot leave them equal. A mismatch is sticky: the key never
//!   signs again.
//! - **s computed twice** ([`Shadow::second_s`]): s = r + k·a by ed25519-dalek's arithmetic, and
//!   again from the key's additive shares, s = k·(a − m) + (k·m + r), m random per key: other
//!   operands, other products, another order. A fault in either computation, or in a or its
//!   shares, makes them differ.
//! - **R ≠ the identity** (the encoding 1, 0, …, 0).

use curve25519_dalek::Scalar;
use ed25519_dalek::hazmat::ExpandedSecretKey;
use ed25519_dalek::{Digest, Sha512};
use zeroize::{Zeroize, Zeroizing};

/// The encoding of the identity point: y = 1, x = 0.
pub(super) const IDENTITY: [u8; 32] = {
    let mut e = [0u8; 32];
    e[0] = 1;
    e
};

/// The key's second copy, and its shares for the second computation of s.
pub(super) struct Shadow {
    mask: [u8; 64],
    /// (a's bytes ‖ prefix) XOR `mask`.
    masked: [u8; 64],
    /// m, and a − m.
    share: Scalar,
    rest: Scalar,
}

impl Shadow {
    /// The mask (and m) from SHA-512 of a domain tag, 32 fresh random bytes and the key: fresh
    /// bytes make the copy unpredictable; without them (the OS generator failed, which only the
    /// key's creation would see) the key alone still makes a mask, and the checks work the same.
    pub(super) fn new(key: &ExpandedSecretKey) -> Box<Shadow> {
        let mut fresh = Zeroizing::new([0u8; 32]);
        let _ = crate::os_random::fill(&mut fresh[..]);
        let bytes = Zeroizing::new(key_bytes(key));
        let mut hasher = Sha512::new();
        hasher.update(b"libperps request key shadow v1");
        hasher.update(&fresh[..]);
        hasher.update(&bytes[..]);
        let mut mask = [0u8; 64];
        hasher.finalize_into((&mut mask).into());
        let share = Scalar::from_bytes_mod_order_wide(&mask);
        let masked = std::array::from_fn(|i| bytes[i] ^ mask[i]);
        Box::new(Shadow { mask, masked, share, rest: key.scalar - share })
    }

    /// 1 when the key equals its copy, 0 otherwise; no branch.
    #[inline(always)]
    pub(super) fn key_matches(&self, key: &ExpandedSecretKey) -> u8 {
        let (scalar, prefix) = (key.scalar.as_bytes(), &key.hash_prefix);
        let mut diff = 0u8;
        for i in 0..32 {
            diff |= scalar[i] ^ self.mask[i] ^ self.masked[i];
            diff |= prefix[i] ^ self.mask[32 + i] ^ self.masked[32 + i];
        }
        is_zero(diff)
    }

    /// s = k·(a − m) + (k·m + r): the second computation, from the shares only.
    #[inline(always)]
    pub(super) fn second_s(&self, challenge: &Scalar, nonce: &Scalar) -> Zeroizing<Scalar> {
        let blinded = Zeroizing::new(self.share * challenge + nonce);
        let rest = Zeroizing::new(self.rest * challenge);
        Zeroizing::new(*rest + *blinded)
    }

    /// Test hook: flip one bit of the copy (a fault in its memory).
    #[cfg(test)]
    pub(super) fn flip_copy_bit(&mut self, byte: usize, bit: u8) {
        self.masked[byte] ^= 1 << bit;
    }
}

impl Drop for Shadow {
    fn drop(&mut self) {
        self.mask.zeroize();
        self.masked.zeroize();
        self.share.zeroize();
        self.rest.zeroize();
    }
}

fn key_bytes(key: &ExpandedSecretKey) -> [u8; 64] {
    let mut out = [0u8; 64];
    out[..32].copy_from_slice(key.scalar.as_bytes());
    out[32..].copy_from_slice(&key.hash_prefix);
    out
}

/// 1 when the two encodings are equal, 0 otherwise; no branch.
#[inline(always)]
pub(super) fn equal(a: &[u8; 32], b: &[u8; 32]) -> u8 {
    let mut diff = 0u8;
    for i in 0..32 {
        diff |= a[i] ^ b[i];
    }
    is_zero(diff)
}

/// 1 when R's encoding is not the identity's, 0 when it is.
#[inline(always)]
pub(super) fn not_identity(commitment: &[u8; 32]) -> u8 {
    1 ^ equal(commitment, &IDENTITY)
}

/// 1 for 0, 0 for anything else: (x − 1) borrows into bit 8 only when x = 0.
#[inline(always)]
fn is_zero(x: u8) -> u8 {
    ((u16::from(x).wrapping_sub(1) >> 8) & 1) as u8
}

/// Faults for the unit tests, on this thread's next signature: s computed wrong (the first
/// computation off by 2^40), R forced to the identity, or R replaced by another point on the
/// curve (B) before the challenge is hashed.
#[cfg(test)]
pub(super) mod fault {
    use std::cell::Cell;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(in crate::keys) enum SignFault {
        FlipS,
        IdentityR,
        WrongR,
    }

    thread_local!(static NEXT: Cell<Option<SignFault>> = const { Cell::new(None) });

    pub(in crate::keys) fn arm(fault: SignFault) {
        NEXT.set(Some(fault));
    }

    pub(in crate::keys) fn take(fault: SignFault) -> bool {
        if NEXT.get() == Some(fault) {
            NEXT.set(None);
            return true;
        }
        false
    }
}
