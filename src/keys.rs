//! Ed25519 keys: the request-signing key of a session, and the text forms an Ed25519
//! private key arrives in (API credentials, Solana wallets).
//!
//! The signing key is expanded once (SHA-512 of the seed) when the key is made, so every
//! body signature skips that hash. The expanded key is zeroized on drop by ed25519-dalek, and
//! the scratch of its expansion here.
//!
//! # Hedged signatures
//!
//! Every fresh signature is *hedged*: its nonce depends on the secret prefix, fresh randomness
//! and the message, as draft-irtf-cfrg-det-sigs-with-noise-05 §2 (the CFRG's "Hedged ECDSA and
//! EdDSA Signatures", March 2025) replaces step 2 of RFC 8032 §5.1.6:
//! prefix' = the first 32 bytes of SHA-512(prefix || Z), Z being 32 fresh random bytes, then
//! r = SHA-512(prefix' || M). The signature is an ordinary Ed25519 signature (every verifier,
//! `verify_strict` included, accepts it). Why:
//! - *A fault cannot give the key away.* With RFC 8032's deterministic nonce, one faulty R
//!   (a corrupted table, a carry fault, a glitch) and a correct signature of the same message
//!   share r but not the challenge k, and s − s' = (k − k')·a reveals the key. With fresh Z,
//!   no two signatures share r. `curve.rs` also checks every R; this is the second line.
//! - *Weak randomness costs nothing*: with Z repeated or known, the nonce is still a secret
//!   function of the message (the deterministic scheme's security), never a reused nonce.
//! - *Why this revision's construction*: it is the draft's current one (revisions -03/-04 put Z
//!   and the prefix in two zero-padded 128-byte blocks of the nonce hash, 2 extra SHA-512
//!   blocks); -05 mixes Z into the prefix with one SHA-512 block of its own, before any public
//!   data meets the secret (the first-order DPA defence the draft describes), and keeps RFC
//!   8032's nonce hash over the message unchanged. One extra block, ≈ 0.25 µs.
//!
//! Signatures with a caller-chosen id and time ([`RequestKey::sign_parts_deterministic`]) stay
//! RFC 8032's deterministic ones, R computed by the reference code: test vectors and re-checks
//! of logged requests must reproduce. A caller re-signing one (id, time, body), a retry, gets
//! the same nonce twice, so each is also verified before it is released.
//!
//! # Checked before release
//!
//! Every signature passes the cheap checks of `keys/integrity.rs` (the key against a masked
//! second copy, s computed twice by different operations, R ≠ identity) before it leaves; one
//! that fails is withheld (`PERPS_VERIFICATION_FAILED`), and a key that no longer matches its
//! copy signs nothing more.

use crate::error::{Code, Error, Result};
use crate::wipe::Wiped;
use curve25519_dalek::Scalar;
use ed25519_dalek::hazmat::ExpandedSecretKey;
use ed25519_dalek::{Digest, Sha512, Signature, SigningKey, VerifyingKey};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use zeroize::Zeroizing;

mod integrity;
#[cfg(test)]
mod integrity_tests;
#[doc(hidden)] // internal: public for the tests of its decoders
pub mod text;

/// The error of a failed OS random number generator.
pub(crate) fn rng_failed(e: getrandom::Error) -> Error {
    Error::new(Code::Rng, format!("the OS random number generator failed: {e}"))
}

/// The Ed25519 key that signs request bodies; its public key in base58 is the `requestId`.
pub struct RequestKey {
    /// On the heap: moving the key (into a session, the session into its handle) copies a
    /// pointer, not the key, so no moved-from copy is left on a stack.
    expanded: Box<ExpandedSecretKey>,
    /// The key's second copy and shares (`keys/integrity.rs`), in an allocation of its own.
    shadow: Box<integrity::Shadow>,
    /// Set when the key no longer matched its copy: from then on it signs nothing.
    corrupted: AtomicBool,
    verifying: VerifyingKey,
    request_id: String,
}

/// A signature that failed its check before release (a fault while signing).
fn signature_withheld() -> Error {
    Error::verification(
        "a request signature failed its check before release (a fault while signing?) and was withheld; \
         nothing was signed",
    )
}

/// The key no longer matches its second copy (a memory fault): it signs nothing more.
fn key_corrupted() -> Error {
    Error::verification(
        "the request-signing key no longer matches its second copy (a memory fault?): it signs nothing \
         more; start a new session",
    )
}

impl RequestKey {
    /// A fresh temporary key from the operating system's RNG.
    pub fn generate() -> Result<Self> {
        // The copies the seed and the expansion leave on the stack are overwritten after.
        crate::wipe::then_wipe_stack(|| {
            let mut seed = Zeroizing::new([0u8; 32]);
            getrandom::fill(&mut seed[..]).map_err(rng_failed)?;
            Ok(Self::from_signing_key(&SigningKey::from_bytes(&seed)))
        })
    }

    /// Import an Ed25519 private key given as text (see [`parse_ed25519_secret`]).
    pub fn from_text(text: &str) -> Result<Self> {
        crate::wipe::then_wipe_stack(|| Ok(Self::from_signing_key(&parse_ed25519_secret(text)?)))
    }

    /// The key's expansion and its second copy leave the reduced scalar and the nonce prefix
    /// in the frames they ran in: overwritten after (`wipe::then_wipe_stack`), for callers of
    /// this public function as for the library's own.
    pub fn from_signing_key(key: &SigningKey) -> Self {
        crate::wipe::then_wipe_stack(|| {
            // SHA-512 of the seed into a buffer wiped on drop (ed25519-dalek's `From` leaves
            // its copy of the hash behind).
            let mut hash = Wiped::<64>::new();
            Sha512::new_with_prefix(key.as_bytes()).finalize_into((&mut hash.0).into());
            let expanded = Box::new(ExpandedSecretKey::from_bytes(&hash.0));
            let shadow = integrity::Shadow::new(&expanded);
            let verifying = key.verifying_key();
            let request_id = bs58::encode(verifying.as_bytes()).into_string();
            // Choose the curve build and run its self-test now, not inside the first signature.
            crate::curve::prepare();
            RequestKey { expanded, shadow, corrupted: AtomicBool::new(false), verifying, request_id }
        })
    }

    /// base58 of the public key: the `requestId` sent to prepare-signin.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    pub fn verifying_key(&self) -> &VerifyingKey {
        &self.verifying
    }

    /// Where the expanded secret key and its second copy are (address and length each),
    /// without their bytes: for the constant-time test, which marks that memory secret for
    /// valgrind.
    #[doc(hidden)]
    pub fn secret_regions(&self) -> [(*const u8, usize); 2] {
        [
            ((&*self.expanded as *const ExpandedSecretKey).cast(), size_of::<ExpandedSecretKey>()),
            ((&*self.shadow as *const integrity::Shadow).cast(), size_of::<integrity::Shadow>()),
        ]
    }

    /// A hedged Ed25519 signature (see the module's doc) of the concatenation of `parts`,
    /// without concatenating them: 32 fresh random bytes, the key expanded once at creation,
    /// R = r·B by the fast checked code of [`crate::curve`] (falling back to the reference).
    /// Fails if the OS random number generator does, or the signature fails its checks
    /// (module doc).
    pub fn sign_parts(&self, parts: &[&[u8]]) -> Result<Signature> {
        let mut randomness = Wiped::<32>::new();
        crate::os_random::fill(&mut randomness.0).map_err(rng_failed)?;
        self.sign_parts_with_randomness(parts, &randomness.0)
    }

    /// [`Self::sign_parts`] with the randomness Z given: for tests, which compare with a
    /// computation of their own. Z must be fresh and secret for every real signature.
    #[doc(hidden)]
    pub fn sign_parts_with_randomness(&self, parts: &[&[u8]], z: &[u8; 32]) -> Result<Signature> {
        // prefix' = SHA-512(prefix || Z)[..32]
        let mut mixed = Wiped::<64>::new();
        let mut hasher = Sha512::new();
        hasher.update(self.expanded.hash_prefix);
        hasher.update(z);
        hasher.finalize_into((&mut mixed.0).into());
        let nonce = self.nonce(&mixed.0[..32], parts);
        let commitment = crate::curve::nonce_commitment(&nonce);
        self.finish(&nonce, commitment, parts)
    }

    /// RFC 8032's deterministic Ed25519 signature of the concatenation of `parts`, R = r·B by
    /// the reference code (curve25519-dalek): byte for byte what ed25519-dalek signs. Verified
    /// before release, on top of the cheap checks: its nonce is the same at every retry of one
    /// message, so a faulty one beside a good one would give the key away. Not a hot path.
    pub fn sign_parts_deterministic(&self, parts: &[&[u8]]) -> Result<Signature> {
        let nonce = self.nonce(&self.expanded.hash_prefix, parts);
        let commitment = crate::curve::reference_commitment(&nonce);
        let signature = self.finish(&nonce, commitment, parts)?;
        if self.verifies_in_constant_time(&signature, parts) { Ok(signature) } else { Err(signature_withheld()) }
    }

    /// s·B = R + k·A, with k hashed again: the verification of a signature before release,
    /// by constant-time code only. A signature that fails here is the faulty one that must
    /// not leak, so its s is never handled by variable-time code (as a library's verification
    /// would: ed25519-dalek's multiplies by s with a variable-time ladder); only R, which
    /// every signature of this nonce shows, is read as public, and the verdict.
    fn verifies_in_constant_time(&self, signature: &Signature, parts: &[&[u8]]) -> bool {
        use curve25519_dalek::edwards::CompressedEdwardsY;
        let commitment = crate::curve::declassified_commitment(*signature.r_bytes());
        let (Some(r_point), Some(a_point)) =
            (CompressedEdwardsY(commitment).decompress(), CompressedEdwardsY(*self.verifying.as_bytes()).decompress())
        else {
            return false;
        };
        let mut wide = [0u8; 64];
        hash_into(&[&commitment, self.verifying.as_bytes()], parts, &mut wide);
        let challenge = Scalar::from_bytes_mod_order_wide(&wide);
        let s = Zeroizing::new(Scalar::from_bytes_mod_order(*signature.s_bytes()));
        let left = curve25519_dalek::EdwardsPoint::mul_base(&s).compress().to_bytes();
        let right = (r_point + a_point * challenge).compress().to_bytes();
        let canonical = integrity::equal(&s.to_bytes(), signature.s_bytes());
        crate::curve::declassified(u64::from(integrity::equal(&left, &right) & canonical)) == 1
    }

    /// r = SHA-512(head || M) mod l, every copy wiped after use.
    fn nonce(&self, head: &[u8], parts: &[&[u8]]) -> Zeroizing<Scalar> {
        let mut wide = Wiped::<64>::new();
        hash_into(&[head], parts, &mut wide.0);
        Zeroizing::new(Scalar::from_bytes_mod_order_wide(&wide.0))
    }

    /// k = SHA-512(R || A || M) mod l, and s = r + k·a; released only if the key matches its
    /// copy, s computed a second way agrees, and R is not the identity (`keys/integrity.rs`).
    fn finish(&self, nonce: &Scalar, commitment: [u8; 32], parts: &[&[u8]]) -> Result<Signature> {
        if self.corrupted.load(Ordering::Acquire) {
            return Err(key_corrupted());
        }
        #[cfg(test)]
        let commitment = if integrity::fault::take(integrity::fault::SignFault::IdentityR) {
            integrity::IDENTITY
        } else if integrity::fault::take(integrity::fault::SignFault::WrongR) {
            curve25519_dalek::constants::ED25519_BASEPOINT_COMPRESSED.to_bytes()
        } else {
            commitment
        };
        let mut wide = [0u8; 64];
        hash_into(&[&commitment, self.verifying.as_bytes()], parts, &mut wide);
        let challenge = Scalar::from_bytes_mod_order_wide(&wide);
        // k·a is as secret as r (s − r): wiped too, and s until it has passed.
        let product = Zeroizing::new(challenge * self.expanded.scalar);
        let s = Zeroizing::new(*product + nonce);
        #[cfg(test)]
        let s = if integrity::fault::take(integrity::fault::SignFault::FlipS) {
            Zeroizing::new(*s + Scalar::from(1u64 << 40))
        } else {
            s
        };
        let second = self.shadow.second_s(&challenge, nonce);
        let key_ok = self.shadow.key_matches(&self.expanded);
        let all_ok = key_ok & integrity::equal(s.as_bytes(), second.as_bytes()) & integrity::not_identity(&commitment);
        // Whether the hardware faulted is public; nothing else is branched on.
        let verdict = crate::curve::declassified(u64::from(key_ok) | u64::from(all_ok) << 1);
        if verdict & 1 == 0 {
            self.corrupted.store(true, Ordering::Release);
            return Err(key_corrupted());
        }
        if verdict != 3 {
            return Err(signature_withheld());
        }
        Ok(Signature::from_components(commitment, s.to_bytes()))
    }

    /// Test hook: flip one bit of the stored scalar a (a fault in the key's memory).
    #[cfg(test)]
    fn flip_scalar_bit(&mut self, byte: usize, bit: u8) {
        let mut bytes = self.expanded.scalar.to_bytes();
        bytes[byte] ^= 1 << bit;
        self.expanded.scalar = Scalar::from_bytes_mod_order(bytes);
    }
}

/// SHA-512(head… || parts…) into `out`; the hasher wipes its state when dropped (sha2's
/// `zeroize` feature).
fn hash_into(head: &[&[u8]], parts: &[&[u8]], out: &mut [u8; 64]) {
    let mut hasher = Sha512::new();
    for piece in head.iter().chain(parts) {
        hasher.update(piece);
    }
    hasher.finalize_into(out.into());
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
/// The frames the parsing ran in are overwritten after (`wipe::then_wipe_stack`): they held
/// the seed.
pub fn parse_ed25519_secret(text: &str) -> Result<SigningKey> {
    crate::wipe::then_wipe_stack(|| {
        let text = text::trim(text);
        if text.is_empty() {
            return Err(Error::invalid_key("the Ed25519 private key is empty"));
        }
        let mut bytes = Zeroizing::new([0u8; 64]);
        let len = text::decode_secret_text(text, &mut bytes)?;
        signing_key_from_bytes(&bytes, len)
    })
}

/// The key of the first `len` bytes of `bytes`: a 32-byte seed, or a 64-byte keypair whose
/// public half must be the seed's (compared without a branch on either: only the verdict is
/// public).
fn signing_key_from_bytes(bytes: &[u8; 64], len: usize) -> Result<SigningKey> {
    let (seed, public) = bytes.split_first_chunk::<32>().expect("64 bytes");
    match len {
        32 => Ok(SigningKey::from_bytes(seed)),
        64 => {
            let key = SigningKey::from_bytes(seed);
            if !text::same_bytes(key.verifying_key().as_bytes(), public) {
                return Err(Error::invalid_key(
                    "the 64-byte Ed25519 keypair's public half does not match its secret half",
                ));
            }
            Ok(key)
        }
        n => Err(Error::invalid_key(format!(
            "the Ed25519 private key decodes to {n} bytes; expected a 32-byte seed or a 64-byte keypair"
        ))),
    }
}

#[cfg(test)]
mod tests;
