//! Each check of `integrity.rs` made to fire: a fault injected where it would happen (the key's
//! memory, its copy, the computation of s, R, the deterministic path's R), and no signature
//! comes out. The faults are per thread (`integrity::fault`) or on the test's own key, so these
//! run beside every other test.

use super::integrity::fault::{self, SignFault};
use super::*;

const MESSAGE: &[u8] = b"v1,123e4567-e89b-42d3-a456-426614174000,1700000000123,{\"symbol\":\"BTC-USD\"}";

fn key() -> RequestKey {
    RequestKey::from_signing_key(&SigningKey::from_bytes(&[0x21; 32]))
}

fn assert_withheld(result: Result<Signature>, what: &str) -> String {
    match result {
        Ok(signature) => panic!("{what}: a signature came out: {signature:?}"),
        Err(e) => {
            assert_eq!(e.code(), Code::VerificationFailed, "{what}: {}", e.message());
            e.message().to_owned()
        }
    }
}

fn assert_verifies(key: &RequestKey, signature: Signature) {
    key.verifying_key().verify_strict(MESSAGE, &signature).expect("a released signature verifies");
}

/// A flipped bit of the stored scalar a: with a correct R, s' = r + k·a' would give the key
/// away from one signature (A − a'·B = ±2^i·B). Caught on both paths, and for good: the bit
/// flipped back, the key still signs nothing.
#[test]
fn a_flipped_bit_of_the_stored_scalar_stops_the_key() {
    for (byte, bit) in [(0, 0), (13, 5), (31, 3)] {
        let mut key = key();
        assert_verifies(&key, key.sign_parts(&[MESSAGE]).unwrap());
        key.flip_scalar_bit(byte, bit);
        let message = assert_withheld(key.sign_parts(&[MESSAGE]), "hedged, scalar bit flipped");
        assert!(message.contains("signs nothing more"), "{message}");
        assert_withheld(key.sign_parts_deterministic(&[MESSAGE]), "deterministic, scalar bit flipped");
        key.flip_scalar_bit(byte, bit);
        assert_withheld(key.sign_parts(&[MESSAGE]), "the fault gone: the key stays stopped");
    }
}

/// A flipped bit of the second copy (the nonce prefix's half included) is a mismatch too.
#[test]
fn a_flipped_bit_of_the_keys_copy_stops_the_key() {
    for byte in [0, 31, 32, 63] {
        let mut key = key();
        key.shadow.flip_copy_bit(byte, 6);
        assert_withheld(key.sign_parts(&[MESSAGE]), "copy bit flipped");
        key.shadow.flip_copy_bit(byte, 6);
        assert_withheld(key.sign_parts(&[MESSAGE]), "sticky");
    }
}

/// A transient fault in s = r + k·a (here 2^40 added, a carry gone astray): withheld, and the
/// next signature, unfaulted, comes out.
#[test]
fn a_fault_in_s_withholds_that_signature() {
    let key = key();
    fault::arm(SignFault::FlipS);
    let message = assert_withheld(key.sign_parts(&[MESSAGE]), "hedged, s faulted");
    assert!(message.contains("withheld"), "{message}");
    fault::arm(SignFault::FlipS);
    assert_withheld(key.sign_parts_deterministic(&[MESSAGE]), "deterministic, s faulted");
    assert_verifies(&key, key.sign_parts(&[MESSAGE]).unwrap());
    assert_verifies(&key, key.sign_parts_deterministic(&[MESSAGE]).unwrap());
}

/// R = the identity (a zeroed nonce) passes the on-curve check; not this one.
#[test]
fn r_equal_to_the_identity_is_withheld() {
    let key = key();
    fault::arm(SignFault::IdentityR);
    assert_withheld(key.sign_parts(&[MESSAGE]), "hedged, R = identity");
    fault::arm(SignFault::IdentityR);
    assert_withheld(key.sign_parts_deterministic(&[MESSAGE]), "deterministic, R = identity");
    assert_verifies(&key, key.sign_parts(&[MESSAGE]).unwrap());
}

/// A wrong R on the curve (not the identity), with s computed consistently from it, passes the
/// cheap checks: a hedged signature so made leaks nothing (its nonce is never used again), but
/// a deterministic one is repeated at every retry of the message, so that path verifies each
/// signature before release and withholds this one.
#[test]
fn the_deterministic_path_withholds_a_signature_that_does_not_verify() {
    let key = key();
    fault::arm(SignFault::WrongR);
    assert_withheld(key.sign_parts_deterministic(&[MESSAGE]), "deterministic, wrong R");
    let standard = SigningKey::from_bytes(&[0x21; 32]);
    use ed25519_dalek::Signer as _;
    assert_eq!(key.sign_parts_deterministic(&[MESSAGE]).unwrap(), standard.sign(MESSAGE));
}
