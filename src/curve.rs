//! The one piece of Edwards-curve arithmetic a signature spends its time in: the nonce
//! commitment R = r·B and its encoding (about 85 % of an Ed25519 signature).
//!
//! Why not ed25519-dalek's: the issue asks for signatures faster than its standard signer, and
//! its constant-time table lookup costs a fifth of a signature (see `base_table.rs`); its
//! coordinates are private, so a faster lookup means our own fixed-base multiplication. Every
//! other part of a signature (SHA-512, scalar arithmetic, the key) is still ed25519-dalek's.
//!
//! Four builds of the same comb ([`Build`]), and curve25519-dalek's multiplication as the
//! reference. A build's result is used only if the point it encodes passed an on-curve check
//! (`point.rs`), and a build is used only after a known-answer self-test; after any failure
//! the process uses the reference only. That logic is in `guard.rs`; this file holds the
//! builds themselves.

// The table lookups below are passed as closures, not as the functions themselves (what
// clippy's `redundant_closure` suggests): a call through a function item's `Fn` impl is not
// inlined, and would be compiled without the calling build's CPU features.
#![allow(clippy::redundant_closure)]

mod base_table;
mod comb4x;
mod field;
mod field4x;
#[cfg(target_arch = "x86_64")]
mod field64;
mod guard;
mod lanes;
mod point;
#[cfg(test)]
mod table_gen;

pub use guard::{Build, ReferenceReason, SignerStatus, signer_status};
pub(crate) use guard::{declassified, declassified_commitment, nonce_commitment, prepare, reference_commitment};

use curve25519_dalek::Scalar;
use field::Fe;

/// The encoding of `k·B` for any 32 bytes `k` (little-endian, reduced modulo the group order
/// first, so every value is safe), through the same guarded choice of build as signing.
pub fn mul_base_compressed(k: &[u8; 32]) -> [u8; 32] {
    nonce_commitment(&Scalar::from_bytes_mod_order(*k))
}

/// What a build returns: the encoding of k·B and whether the point it encodes is on the
/// curve (all ones) or not (zero), computed without a branch on it (`Extended::compress_checked`).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Checked {
    pub encoding: [u8; 32],
    pub on_curve: u64,
}

impl Checked {
    #[inline(always)]
    fn from_pair((encoding, on_curve): ([u8; 32], u64)) -> Checked {
        Checked { encoding, on_curve }
    }
}

/// Whether the CPU can run the five-limb AVX2 build.
#[cfg(target_arch = "x86_64")]
fn has_avx2_bmi2() -> bool {
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2")
}

/// Whether the CPU can run the four-limb ADX build (`field64.rs` and its callers).
#[cfg(target_arch = "x86_64")]
pub(crate) fn has_adx_build() -> bool {
    has_avx2_bmi2() && std::is_x86_feature_detected!("adx")
}

/// Whether the CPU can run the vector build (`comb4x.rs` on AVX-512 IFMA lanes).
#[cfg(target_arch = "x86_64")]
pub(crate) fn has_ifma_build() -> bool {
    has_avx2_bmi2()
        && std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512vl")
        && std::is_x86_feature_detected!("avx512ifma")
}

/// The code every CPU without AVX2 and BMI2 runs; public so that tests can check it (its
/// results and its constant time) on machines that would otherwise take a faster path.
#[doc(hidden)]
pub fn mul_base_baseline(k: &Scalar) -> Checked {
    let p = base_table::mul_base::<Fe, _>(
        k.as_bytes(),
        base_table::table(),
        #[inline(always)]
        |row, digit| base_table::select(row, digit),
    );
    #[cfg(test)]
    let p = guard::fault::perturbed(p);
    Checked::from_pair(p.compress_checked())
}

/// The five-limb code compiled for AVX2 (the table lookup in 256-bit registers) and BMI2
/// (`mulx`, which leaves the flags alone, and flag-free shifts).
///
/// # Safety
/// The CPU must have AVX2 and BMI2.
#[doc(hidden)]
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2")]
pub unsafe fn mul_base_avx2(k: &Scalar) -> Checked {
    // The closure inherits this function's target features, so it may call `select_avx2`.
    let p = base_table::mul_base::<Fe, _>(
        k.as_bytes(),
        base_table::table(),
        #[inline(always)]
        |row, digit| base_table::select_avx2(row, digit),
    );
    #[cfg(test)]
    let p = guard::fault::perturbed(p);
    Checked::from_pair(p.compress_checked())
}

/// The four-limb build (`field64.rs`), the lookup in 256-bit registers. Public so that tests
/// can check it under valgrind, which hides ADX.
///
/// # Safety
/// The CPU must have AVX2, BMI2 and ADX.
#[doc(hidden)]
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2,adx")]
pub unsafe fn mul_base_adx(k: &Scalar) -> Checked {
    let p = base_table::mul_base::<field64::Fe64, _>(
        k.as_bytes(),
        base_table::table64(),
        #[inline(always)]
        |row, digit| base_table::select_avx2(row, digit),
    );
    #[cfg(test)]
    let p = guard::fault::perturbed(p);
    Checked::from_pair(p.compress_checked())
}

/// The vector build: the point's four coordinates in the lanes of AVX-512 IFMA registers
/// (`comb4x.rs`). Public so that tests can call it directly, and audit its machine code
/// (`tests/ct_audit.rs`).
///
/// # Safety
/// The CPU must have AVX2, BMI2, AVX-512F, AVX-512VL and AVX-512 IFMA.
#[doc(hidden)]
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2,avx512f,avx512vl,avx512ifma")]
pub unsafe fn mul_base_ifma(k: &Scalar) -> Checked {
    // A closure, not the function item: calls through a function item's `Fn` impl are not
    // inlined, and would be compiled without this function's CPU features.
    let p = comb4x::mul_base::<lanes::Ifma>(
        k.as_bytes(),
        comb4x::table(),
        #[inline(always)]
        |row, digit| comb4x::select(row, digit),
    );
    #[cfg(test)]
    let p = guard::fault::perturbed(p);
    Checked::from_pair(p.compress_checked())
}

/// A copy of [`mul_base_ifma`] with a leak planted in its table lookup, for the machine-code
/// audit to catch (`tests/ct_audit.rs`): `PLANT` 1 branches on the digit's sign, 2 reads the
/// table entry at the digit's magnitude. Generic, so that no copy exists in the library: only
/// the test that instantiates one compiles it. Never call it with a secret.
///
/// # Safety
/// As [`mul_base_ifma`].
#[doc(hidden)]
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2,avx512f,avx512vl,avx512ifma")]
pub unsafe fn mul_base_ifma_planted<const PLANT: u8>(k: &Scalar) -> Checked {
    let p = comb4x::mul_base::<lanes::Ifma>(
        k.as_bytes(),
        comb4x::table(),
        #[inline(always)]
        |row, digit| comb4x::planted_select::<_, PLANT>(row, digit),
    );
    Checked::from_pair(p.compress_checked())
}

/// The vector build's algorithm on emulated lanes (plain `u64`s, any CPU): what valgrind can
/// check for constant time, since its virtual CPU has no AVX-512, and what tests compare on
/// machines without IFMA. Not fast; no signature uses it.
#[doc(hidden)]
pub fn mul_base_emulated_lanes(k: &Scalar) -> Checked {
    let p = comb4x::mul_base::<lanes::Emulated>(
        k.as_bytes(),
        comb4x::table(),
        #[inline(always)]
        |row, digit| comb4x::select(row, digit),
    );
    Checked::from_pair(p.compress_checked())
}

#[cfg(test)]
mod tests {
    use super::*;
    use curve25519_dalek::{EdwardsPoint, constants::ED25519_BASEPOINT_COMPRESSED};

    #[test]
    fn one_times_b_is_the_standard_base_point() {
        let mut one = [0u8; 32];
        one[0] = 1;
        assert_eq!(mul_base_compressed(&one), ED25519_BASEPOINT_COMPRESSED.to_bytes());
        assert_eq!(mul_base_compressed(&[0u8; 32]), EdwardsPoint::default().compress().to_bytes());
    }

    /// Any 32 bytes are a valid input, 2^255 and above included (reduced modulo the group
    /// order first: without that, the top radix-16 digit reached 16, beyond the table, and
    /// the result was silently wrong).
    #[test]
    fn scalars_at_and_above_2_to_the_255_are_reduced_first() {
        for k in [
            [0xffu8; 32],
            [0x80; 32],
            {
                let mut k = [0u8; 32];
                k[31] = 0x80;
                k
            },
            [0xed; 32],
        ] {
            let expected = EdwardsPoint::mul_base(&Scalar::from_bytes_mod_order(k)).compress().to_bytes();
            assert_eq!(mul_base_compressed(&k), expected, "k = {k:x?}");
        }
    }

    #[test]
    fn agrees_with_dalek_on_many_scalars() {
        // Edge scalars (digits at their extremes, carries through every digit) and a
        // pseudo-random walk; every build of the code this CPU can run: the dispatching entry
        // point, and each build explicitly (the dispatch picks one).
        let mut scalars = vec![Scalar::ONE, -Scalar::ONE, Scalar::from(8u64), Scalar::from(0x8888_8888_8888_8888u64)];
        for fill in [0x88u8, 0x77, 0xff, 0x80, 0x08] {
            let mut bytes = [fill; 32];
            bytes[31] &= 0x0f;
            scalars.push(Scalar::from_bytes_mod_order(bytes));
        }
        let mut x = Scalar::from(12345u64);
        for _ in 0..2000 {
            x = x * x + Scalar::from(7u64);
            scalars.push(x);
        }
        for s in scalars {
            let expected = EdwardsPoint::mul_base(&s).compress().to_bytes();
            assert_eq!(
                mul_base_compressed(s.as_bytes()),
                expected,
                "k·B differs from dalek's for k = {:?}",
                s.as_bytes()
            );
            let emulated = mul_base_emulated_lanes(&s);
            assert_eq!((emulated.encoding, emulated.on_curve), (expected, u64::MAX), "emulated lanes, k = {s:?}");
            for build in Build::ALL {
                if let Some(checked) = build.run(&s) {
                    assert_eq!(checked.encoding, expected, "{} build, k = {:?}", build.name(), s.as_bytes());
                    assert_eq!(checked.on_curve, u64::MAX, "{} build's check, k = {:?}", build.name(), s.as_bytes());
                }
            }
        }
    }
}
