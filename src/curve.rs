//! The one piece of Edwards-curve arithmetic a signature spends its time in: the nonce
//! commitment R = r·B and its encoding (about 85 % of an Ed25519 signature).
//!
//! Why not ed25519-dalek's: the issue asks for signatures faster than its standard signer, and
//! its constant-time table lookup costs a fifth of a signature (see `base_table.rs`); its
//! coordinates are private, so a faster lookup means our own fixed-base multiplication. Every
//! other part of a signature (SHA-512, scalar arithmetic, the key) is still ed25519-dalek's,
//! and signatures are byte-for-byte those of ed25519-dalek (Ed25519 is deterministic), which the
//! tests check on random keys and messages and on RFC 8032's vectors.

mod base_table;
mod comb4x;
mod field;
mod field4x;
#[cfg(target_arch = "x86_64")]
mod field64;
mod lanes;
mod point;

use field::Fe;

/// The encoding of `k·B` for a reduced scalar `k` (little-endian, below 2^253), constant time.
///
/// Four builds of the same comb, the fastest the CPU allows (the standard library caches the
/// detection: a few loads per call):
/// - AVX-512 IFMA (with AVX-512F/VL, AVX2, BMI2): the point's four coordinates in the lanes of
///   one vector register, four products per vector product (`comb4x.rs`);
/// - AVX2, BMI2 and ADX: four-limb field elements in assembly (`field64.rs`);
/// - AVX2 and BMI2 without ADX (and under valgrind, whose virtual CPU does not report ADX):
///   five-limb elements compiled for `mulx`, the lookup in 256-bit registers;
/// - any other CPU: the baseline x86-64 (or other architecture's) code.
pub fn mul_base_compressed(k: &[u8; 32]) -> [u8; 32] {
    #[cfg(target_arch = "x86_64")]
    if has_ifma_build() {
        // SAFETY: the CPU has AVX2, BMI2, AVX-512F/VL and IFMA (checked just above).
        return unsafe { mul_base_compressed_ifma(k) };
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2_bmi2() {
        if has_adx_too() {
            // SAFETY: the CPU has AVX2, BMI2 and ADX (checked just above).
            return unsafe { mul_base_compressed_adx(k) };
        }
        // SAFETY: the CPU has AVX2 and BMI2 (checked just above).
        return unsafe { mul_base_compressed_avx2(k) };
    }
    mul_base_compressed_baseline(k)
}

/// Whether the CPU can run the five-limb AVX2 build.
#[cfg(target_arch = "x86_64")]
fn has_avx2_bmi2() -> bool {
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2")
}

/// Whether a CPU that passed [`has_avx2_bmi2`] can also run the four-limb ADX build.
#[cfg(target_arch = "x86_64")]
fn has_adx_too() -> bool {
    std::is_x86_feature_detected!("adx")
}

/// Whether the CPU can run the four-limb ADX build (`field64.rs` and its callers).
#[cfg(target_arch = "x86_64")]
pub(crate) fn has_adx_build() -> bool {
    has_avx2_bmi2() && has_adx_too()
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
pub fn mul_base_compressed_baseline(k: &[u8; 32]) -> [u8; 32] {
    base_table::mul_base::<Fe, _>(k, base_table::table(), base_table::select).compress()
}

/// The five-limb code compiled for AVX2 (the table lookup in 256-bit registers) and BMI2
/// (`mulx`, which leaves the flags alone, and flag-free shifts).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2")]
unsafe fn mul_base_compressed_avx2(k: &[u8; 32]) -> [u8; 32] {
    // The closure inherits this function's target features, so it may call `select_avx2`.
    base_table::mul_base::<Fe, _>(k, base_table::table(), |row, digit| base_table::select_avx2(row, digit)).compress()
}

/// The four-limb build (`field64.rs`), the lookup in 256-bit registers. Public so that tests
/// can check it under valgrind, which hides ADX from the dispatch above.
///
/// # Safety
/// The CPU must have AVX2, BMI2 and ADX.
#[doc(hidden)]
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2,adx")]
pub unsafe fn mul_base_compressed_adx(k: &[u8; 32]) -> [u8; 32] {
    base_table::mul_base::<field64::Fe64, _>(k, base_table::table64(), |row, digit| base_table::select_avx2(row, digit))
        .compress()
}

/// The vector build: the point's four coordinates in the lanes of AVX-512 IFMA registers
/// (`comb4x.rs`). Public so that tests can call it directly.
///
/// # Safety
/// The CPU must have AVX2, BMI2, AVX-512F, AVX-512VL and AVX-512 IFMA.
#[doc(hidden)]
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2,avx512f,avx512vl,avx512ifma")]
pub unsafe fn mul_base_compressed_ifma(k: &[u8; 32]) -> [u8; 32] {
    comb4x::mul_base::<lanes::Ifma>(k, comb4x::table()).compress()
}

/// The vector build's algorithm on emulated lanes (plain `u64`s, any CPU): what valgrind can
/// check for constant time, since its virtual CPU has no AVX-512, and what tests compare on
/// machines without IFMA. Not fast; no signature uses it.
#[doc(hidden)]
pub fn mul_base_compressed_emulated_lanes(k: &[u8; 32]) -> [u8; 32] {
    comb4x::mul_base::<lanes::Emulated>(k, comb4x::table()).compress()
}

/// Build the base-point table(s) this CPU will read (once per process) ahead of the first
/// signature.
pub(crate) fn prepare_table() {
    #[cfg(target_arch = "x86_64")]
    if has_ifma_build() {
        comb4x::prepare();
        return;
    }
    #[cfg(target_arch = "x86_64")]
    let with_table64 = has_adx_build();
    #[cfg(not(target_arch = "x86_64"))]
    let with_table64 = false;
    base_table::prepare(with_table64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use curve25519_dalek::{EdwardsPoint, Scalar, constants::ED25519_BASEPOINT_COMPRESSED};

    #[test]
    fn one_times_b_is_the_standard_base_point() {
        let mut one = [0u8; 32];
        one[0] = 1;
        assert_eq!(mul_base_compressed(&one), ED25519_BASEPOINT_COMPRESSED.to_bytes());
        assert_eq!(mul_base_compressed(&[0u8; 32]), EdwardsPoint::default().compress().to_bytes());
    }

    #[test]
    fn agrees_with_dalek_on_many_scalars() {
        // Edge scalars (digits at their extremes, carries through every digit) and a
        // pseudo-random walk; every build of the code this CPU can run: the dispatching entry
        // point, the baseline code, and each x86-64 build explicitly (the dispatch picks one).
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
            assert_eq!(mul_base_compressed_baseline(s.as_bytes()), expected, "baseline build, k = {:?}", s.as_bytes());
            let emulated = mul_base_compressed_emulated_lanes(s.as_bytes());
            assert_eq!(emulated, expected, "vector build on emulated lanes, k = {:?}", s.as_bytes());
            #[cfg(target_arch = "x86_64")]
            if has_ifma_build() {
                // SAFETY: the CPU has the vector build's features (checked just above).
                let ifma = unsafe { mul_base_compressed_ifma(s.as_bytes()) };
                assert_eq!(ifma, expected, "vector build on IFMA lanes, k = {:?}", s.as_bytes());
            }
            #[cfg(target_arch = "x86_64")]
            if has_avx2_bmi2() {
                // SAFETY: the CPU has AVX2 and BMI2 (checked just above).
                let avx2 = unsafe { mul_base_compressed_avx2(s.as_bytes()) };
                assert_eq!(avx2, expected, "five-limb AVX2 build, k = {:?}", s.as_bytes());
                if has_adx_too() {
                    // SAFETY: and ADX.
                    let adx = unsafe { mul_base_compressed_adx(s.as_bytes()) };
                    assert_eq!(adx, expected, "four-limb ADX build, k = {:?}", s.as_bytes());
                }
            }
        }
    }
}
