//! Arithmetic modulo p = 2^255 - 19 on five 51-bit limbs (radix 2^51), constant time.
//!
//! Limb bounds are what keeps this correct, so every function states what it accepts and what
//! it returns. "Reduced" below means every limb is below 2^52.
//! - [`Fe::mul`] and [`Fe::square`] accept limbs below 2^54 and return reduced limbs.
//! - [`Fe::add`] does not carry: the sum of two reduced elements (< 2^53) is a valid input
//!   to `mul`/`square`, and the sum of three (< 2^53.6) still is.
//! - [`Fe::sub`] accepts a subtrahend with limbs below 2^55 and returns reduced limbs.
//!
//! Nothing here branches on, or indexes memory by, the value of an element: the inversion is a
//! fixed chain of squarings and multiplications (Fermat), and the encoding's final reduction
//! is a carry chain. `tests/constant_time.rs` checks the compiled code under valgrind.

pub(crate) const LOW_51: u64 = (1 << 51) - 1;

/// An element of GF(2^255 - 19) as `l[0] + l[1]·2^51 + l[2]·2^102 + l[3]·2^153 + l[4]·2^204`.
#[derive(Clone, Copy)]
pub(crate) struct Fe(pub(crate) [u64; 5]);

/// 32·p, limb by limb (each at least 2^56 − 608): added before subtracting so that no limb
/// goes negative for any subtrahend limb below 2^55 (16·p, used before, fell short of that
/// bound by up to 304: a subtrahend limb in between wrapped around).
const THIRTY_TWO_P: [u64; 5] = [32 * (LOW_51 - 18), 32 * LOW_51, 32 * LOW_51, 32 * LOW_51, 32 * LOW_51];

/// What the point formulas need from a field element. Two representations implement it: [`Fe`]
/// here (any CPU) and `Fe64` in `field64.rs` (four 64-bit limbs, x86-64 assembly).
pub(crate) trait FieldElement: Copy {
    const ZERO: Self;
    const ONE: Self;
    /// The curve constant d = -121665/121666 (`point.rs`).
    const D: Self;
    fn add(&self, b: &Self) -> Self;
    fn sub(&self, b: &Self) -> Self;
    fn mul(&self, b: &Self) -> Self;
    fn square(&self) -> Self;
    /// The canonical little-endian encoding (the unique representative below p).
    fn to_bytes(self) -> [u8; 32];

    #[inline(always)]
    fn neg(&self) -> Self {
        Self::ZERO.sub(self)
    }

    /// `self^(2^k)`, k ≥ 1.
    #[inline(always)]
    fn square_times(&self, k: u32) -> Self {
        let mut x = self.square();
        for _ in 1..k {
            x = x.square();
        }
        x
    }

    /// `self^(p-2)`, the inverse of a non-zero element (zero maps to zero).
    #[inline(always)]
    fn invert(&self) -> Self {
        // p - 2 = 2^255 - 21, reached by the usual chain of 254 squarings and 11 products;
        // `x_a_b` below is self^(2^a - 2^b).
        let z = self;
        let z2 = z.square();
        let z9 = z2.square_times(2).mul(z);
        let z11 = z9.mul(&z2);
        let x_5_0 = z11.square().mul(&z9);
        let x_10_0 = x_5_0.square_times(5).mul(&x_5_0);
        let x_20_0 = x_10_0.square_times(10).mul(&x_10_0);
        let x_40_0 = x_20_0.square_times(20).mul(&x_20_0);
        let x_50_0 = x_40_0.square_times(10).mul(&x_10_0);
        let x_100_0 = x_50_0.square_times(50).mul(&x_50_0);
        let x_200_0 = x_100_0.square_times(100).mul(&x_100_0);
        let x_250_0 = x_200_0.square_times(50).mul(&x_50_0);
        x_250_0.square_times(5).mul(&z11)
    }

    /// The sign bit of the encoding: whether the canonical value is odd.
    fn is_odd(&self) -> u8 {
        self.to_bytes()[0] & 1
    }
}

/// 256 bits as 32 little-endian bytes, from four little-endian 64-bit words.
#[inline(always)]
pub(crate) fn le_bytes(words: [u64; 4]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (chunk, word) in out.chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    out
}

/// The inverse of [`le_bytes`].
#[inline(always)]
pub(crate) fn le_words(bytes: &[u8; 32]) -> [u64; 4] {
    std::array::from_fn(|i| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().expect("8 bytes")))
}

#[inline(always)]
fn wide(a: u64, b: u64) -> u128 {
    a as u128 * b as u128
}

impl Fe {
    /// Checked in debug builds (the test suite) on every operation: the bounds above.
    fn limbs_below(&self, bits: u32) -> bool {
        self.0.iter().all(|&l| l < 1 << bits)
    }

    /// The same value with reduced limbs.
    #[cfg_attr(not(test), allow(dead_code))] // the table generator's (build.rs) and the tests'
    pub(crate) fn reduced(&self) -> Fe {
        Fe::carried(self.0)
    }

    /// One carry pass over limbs below 2^64: the result's limbs are below 2^51 + 2^13·19.
    #[inline(always)]
    fn carried(mut l: [u64; 5]) -> Fe {
        let c = [l[0] >> 51, l[1] >> 51, l[2] >> 51, l[3] >> 51, l[4] >> 51];
        l[0] = (l[0] & LOW_51) + c[4] * 19;
        l[1] = (l[1] & LOW_51) + c[0];
        l[2] = (l[2] & LOW_51) + c[1];
        l[3] = (l[3] & LOW_51) + c[2];
        l[4] = (l[4] & LOW_51) + c[3];
        Fe(l)
    }

    /// Carry five 128-bit column sums into reduced limbs. Each column is below 77·2^108 <
    /// 2^115 (`mul` and `square` take limbs below 2^54), so every carry `c >> 51` fits in 64
    /// bits. The carries go in two passes of five independent steps rather than one chain of
    /// five: a squaring in the inversion waits for its input, so this latency is paid 254 times.
    #[inline(always)]
    fn from_columns(c: [u128; 5]) -> Fe {
        let low = |x: u128| x as u64 & LOW_51;
        let carry = |x: u128| (x >> 51) as u64;
        // Pass 1: limbs below 2^51 + 77·2^57 < 2^64; the bottom one below 2^51 + 19·5·2^57 < 2^64.
        let l = [
            low(c[0]) + carry(c[4]) * 19,
            low(c[1]) + carry(c[0]),
            low(c[2]) + carry(c[1]),
            low(c[3]) + carry(c[2]),
            low(c[4]) + carry(c[3]),
        ];
        // Pass 2: limbs below 2^51 + 19·2^13 < 2^52.
        Fe::carried(l)
    }

    /// Decode 32 little-endian bytes, ignoring bit 255 (for constants and tests).
    pub(crate) fn from_bytes(bytes: &[u8; 32]) -> Fe {
        let w = le_words(bytes);
        Fe([
            w[0] & LOW_51,
            (w[0] >> 51 | w[1] << 13) & LOW_51,
            (w[1] >> 38 | w[2] << 26) & LOW_51,
            (w[2] >> 25 | w[3] << 39) & LOW_51,
            (w[3] >> 12) & LOW_51,
        ])
    }
}

impl FieldElement for Fe {
    const ZERO: Fe = Fe([0; 5]);
    const ONE: Fe = Fe([1, 0, 0, 0, 0]);
    const D: Fe = Fe([0x34dca135978a3, 0x1a8283b156ebd, 0x5e7a26001c029, 0x739c663a03cbb, 0x52036cee2b6ff]);

    /// Limb-wise sum, no carry (see the module's bounds).
    #[inline(always)]
    fn add(&self, b: &Fe) -> Fe {
        let (a, b) = (&self.0, &b.0);
        Fe([a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4]])
    }

    /// `self - b`, reduced; `self` reduced or a sum of two reduced, `b` below 2^55 per limb.
    #[inline(always)]
    fn sub(&self, b: &Fe) -> Fe {
        debug_assert!(self.limbs_below(53) && b.limbs_below(55), "sub: limb bound exceeded");
        let (a, b) = (&self.0, &b.0);
        // Limbs below 2^53 + 2^56 < 2^57: one carry pass reduces them.
        Fe::carried([
            (a[0] + THIRTY_TWO_P[0]) - b[0],
            (a[1] + THIRTY_TWO_P[1]) - b[1],
            (a[2] + THIRTY_TWO_P[2]) - b[2],
            (a[3] + THIRTY_TWO_P[3]) - b[3],
            (a[4] + THIRTY_TWO_P[4]) - b[4],
        ])
    }

    /// `self · b`, reduced; both with limbs below 2^54.
    #[inline(always)]
    fn mul(&self, b: &Fe) -> Fe {
        debug_assert!(self.limbs_below(54) && b.limbs_below(54), "mul: limb bound exceeded");
        let (a, b) = (&self.0, &b.0);
        // A product limb at position 5 + k stands for 2^255 · 2^(51k) = 19 · 2^(51k).
        let b19 = [b[1] * 19, b[2] * 19, b[3] * 19, b[4] * 19];
        Fe::from_columns([
            wide(a[0], b[0]) + wide(a[1], b19[3]) + wide(a[2], b19[2]) + wide(a[3], b19[1]) + wide(a[4], b19[0]),
            wide(a[0], b[1]) + wide(a[1], b[0]) + wide(a[2], b19[3]) + wide(a[3], b19[2]) + wide(a[4], b19[1]),
            wide(a[0], b[2]) + wide(a[1], b[1]) + wide(a[2], b[0]) + wide(a[3], b19[3]) + wide(a[4], b19[2]),
            wide(a[0], b[3]) + wide(a[1], b[2]) + wide(a[2], b[1]) + wide(a[3], b[0]) + wide(a[4], b19[3]),
            wide(a[0], b[4]) + wide(a[1], b[3]) + wide(a[2], b[2]) + wide(a[3], b[1]) + wide(a[4], b[0]),
        ])
    }

    /// `self²`, reduced; limbs below 2^54. Each cross product is computed once and doubled.
    #[inline(always)]
    fn square(&self) -> Fe {
        debug_assert!(self.limbs_below(54), "square: limb bound exceeded");
        let a = &self.0;
        let d = [a[0] * 2, a[1] * 2, a[2] * 2, a[3] * 2];
        let (a3_19, a4_19) = (a[3] * 19, a[4] * 19);
        Fe::from_columns([
            wide(a[0], a[0]) + wide(d[1], a4_19) + wide(d[2], a3_19),
            wide(d[0], a[1]) + wide(d[2], a4_19) + wide(a[3], a3_19),
            wide(d[0], a[2]) + wide(a[1], a[1]) + wide(d[3], a4_19),
            wide(d[0], a[3]) + wide(d[1], a[2]) + wide(a[4], a4_19),
            wide(d[0], a[4]) + wide(d[1], a[3]) + wide(a[2], a[2]),
        ])
    }

    #[inline(always)]
    fn to_bytes(self) -> [u8; 32] {
        let mut l = Fe::carried(self.0).0;
        // q = 1 exactly when the value is at least p: adding 19 then carries out of bit 255.
        let mut q = (l[0] + 19) >> 51;
        q = (l[1] + q) >> 51;
        q = (l[2] + q) >> 51;
        q = (l[3] + q) >> 51;
        q = (l[4] + q) >> 51;
        l[0] += 19 * q;
        l[1] += l[0] >> 51;
        l[0] &= LOW_51;
        l[2] += l[1] >> 51;
        l[1] &= LOW_51;
        l[3] += l[2] >> 51;
        l[2] &= LOW_51;
        l[4] += l[3] >> 51;
        l[3] &= LOW_51;
        l[4] &= LOW_51; // drops the 2^255 that subtracting p left over
        le_bytes([l[0] | l[1] << 51, l[1] >> 13 | l[2] << 38, l[2] >> 26 | l[3] << 25, l[3] >> 39 | l[4] << 12])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test values as field elements from small integers and byte patterns.
    fn samples() -> Vec<Fe> {
        let mut v = vec![Fe::ONE, Fe([2, 0, 0, 0, 0]), Fe([LOW_51, LOW_51, LOW_51, LOW_51, LOW_51])];
        let mut b = [0u8; 32];
        for i in 0..200u32 {
            for (j, byte) in b.iter_mut().enumerate() {
                *byte = (i.wrapping_mul(2654435761).wrapping_add(j as u32 * 40503) >> 7) as u8;
            }
            v.push(Fe::from_bytes(&b));
        }
        v
    }

    fn eq(a: &Fe, b: &Fe) -> bool {
        a.to_bytes() == b.to_bytes()
    }

    #[test]
    fn p_and_its_neighbours_encode_canonically() {
        // p itself encodes as 0, p + 1 as 1, p - 1 as itself.
        let p = Fe([LOW_51 - 18, LOW_51, LOW_51, LOW_51, LOW_51]);
        assert_eq!(p.to_bytes(), [0u8; 32]);
        assert_eq!(p.add(&Fe::ONE).to_bytes(), Fe::ONE.to_bytes());
        let p_minus_1 = Fe([LOW_51 - 19, LOW_51, LOW_51, LOW_51, LOW_51]);
        let mut expected = [0xffu8; 32];
        expected[0] = 0xec;
        expected[31] = 0x7f;
        assert_eq!(p_minus_1.to_bytes(), expected);
        // 2^255 - 1 (all 255 bits set) is p + 18.
        let all = Fe([LOW_51; 5]);
        assert_eq!(all.to_bytes(), Fe([18, 0, 0, 0, 0]).to_bytes());
    }

    #[test]
    fn square_is_mul_by_itself_and_inverse_inverts() {
        for x in samples() {
            assert!(eq(&x.square(), &x.mul(&x)));
            assert!(eq(&x.mul(&x.invert()), &Fe::ONE));
            assert!(eq(&x.sub(&x), &Fe::ZERO));
            assert!(eq(&x.add(&x.neg()), &Fe::ZERO));
        }
        assert!(eq(&Fe::ZERO.invert(), &Fe::ZERO));
    }

    /// The documented bound, at its edge: a subtrahend with every limb 2^55 − 1 (with 16·p
    /// added, as before, limb 0 went negative: a panic in debug builds, a wrong value in
    /// release ones).
    #[test]
    fn sub_accepts_every_subtrahend_below_its_bound() {
        let edge = Fe([(1 << 55) - 1; 5]);
        for a in samples().into_iter().chain([Fe::ZERO, Fe([LOW_51; 5])]) {
            let difference = a.sub(&edge);
            assert!(difference.limbs_below(52), "not reduced");
            // (a − edge) + edge = a, with the edge's value taken in its reduced form.
            assert!(eq(&difference.add(&edge.reduced()).reduced(), &a));
            assert!(eq(&difference, &a.sub(&edge.reduced())));
        }
    }

    #[test]
    fn bytes_round_trip_below_p() {
        for x in samples() {
            let bytes = x.to_bytes();
            assert_eq!(Fe::from_bytes(&bytes).to_bytes(), bytes);
        }
    }
}
