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
mod field;
mod point;

/// The encoding of `k·B` for a reduced scalar `k` (little-endian, below 2^253), constant time.
pub fn mul_base_compressed(k: &[u8; 32]) -> [u8; 32] {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2") {
        // SAFETY: the CPU has the features the function is compiled for (checked just above).
        return unsafe { mul_base_compressed_avx2(k) };
    }
    mul_base_compressed_baseline(k)
}

/// The code every CPU without AVX2 and BMI2 runs; public so that tests can check it (its
/// results and its constant time) on machines that would otherwise take the AVX2 path.
pub fn mul_base_compressed_baseline(k: &[u8; 32]) -> [u8; 32] {
    base_table::mul_base(k, base_table::select).compress()
}

/// The same code compiled for AVX2 (the table lookup in 256-bit registers) and BMI2 (`mulx`,
/// which leaves the flags alone, and flag-free shifts). Detection is cached by the standard
/// library (one load per call).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2")]
unsafe fn mul_base_compressed_avx2(k: &[u8; 32]) -> [u8; 32] {
    // The closure inherits this function's target features, so it may call `select_avx2`.
    base_table::mul_base(k, |row, digit| base_table::select_avx2(row, digit)).compress()
}

/// Build the base-point table (once per process) ahead of the first signature.
pub(crate) fn prepare_table() {
    base_table::prepare();
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
        // pseudo-random walk; both builds of the code: the dispatching entry point (AVX2 + BMI2
        // where the CPU has them) and the baseline x86-64 code every CPU runs otherwise.
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
        }
    }
}
