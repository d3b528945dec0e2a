//! The fixed-base multiplication k·B, constant time: k in 64 signed radix-16 digits, one
//! table row per pair of digits (row i holds 0·B..8·B scaled by 256^i), 64 mixed additions and
//! four doublings — the classic comb of ref10 and ed25519-dalek.
//!
//! What differs from ed25519-dalek is the table lookup. dalek selects each entry with an
//! out-of-line conditional assignment per entry (about 730 instructions per lookup, a fifth of
//! a signature). Here a row is a flat array, and the selection is one masked OR per word:
//! with AVX2, four 256-bit AND/OR pairs per entry, the masks made by a vector compare
//! ([`select_avx2`]); otherwise 64-bit words with masks passed through `black_box`, so that
//! the compiler cannot see they are all-zero or all-one and turn the selection back into a
//! branch ([`select`]). `tests/constant_time.rs` checks the compiled code under valgrind.

use super::field::Fe;
use super::point::{Extended, Niels};
use std::hint::black_box;
use std::sync::LazyLock;

/// A table entry's 15 limbs (y+x, y−x, 2dxy) plus one word of padding to a vector multiple.
type Entry = [u64; 16];
/// 0·P, 1·P, …, 8·P for one P = 256^i·B.
pub(crate) type Row = [Entry; 9];

/// Built once per process on first use (≈ 3 ms: 256 inversions), then only read.
static TABLE: LazyLock<Box<[Row; 32]>> = LazyLock::new(build_table);

/// Build the table now rather than inside the first signature.
pub(crate) fn prepare() {
    LazyLock::force(&TABLE);
}

/// `k·B` for a scalar `k` given little-endian, below 2^255 (a reduced scalar is below 2^253),
/// with `pick` as the table lookup ([`select`] or [`select_avx2`]). Inlined into its callers so
/// that it is compiled for the CPU features each one enables.
#[inline(always)]
pub(crate) fn mul_base(k: &[u8; 32], pick: impl Fn(&Row, i8) -> Niels) -> Extended {
    let mut digits = signed_radix16(k);
    let table = &**TABLE;
    // Σ d_i·16^i·B = 16·Σ d_{2j+1}·256^j·B + Σ d_{2j}·256^j·B.
    let mut p = Extended::IDENTITY;
    for (row, &digit) in table.iter().zip(digits.iter().skip(1).step_by(2)) {
        p = p.add_niels(&pick(row, digit)).to_extended();
    }
    for _ in 0..4 {
        p = p.double().to_extended();
    }
    for (row, &digit) in table.iter().zip(digits.iter().step_by(2)) {
        p = p.add_niels(&pick(row, digit)).to_extended();
    }
    // The digits spell the secret nonce; wipe them (volatile writes, not optimised away).
    zeroize::Zeroize::zeroize(&mut digits);
    p
}

/// 64 digits in [-8, 8] with k = Σ d_i·16^i, computed without branches.
fn signed_radix16(k: &[u8; 32]) -> [i8; 64] {
    debug_assert!(k[31] <= 127, "the scalar must be below 2^255");
    let mut d = [0i8; 64];
    for (i, byte) in k.iter().enumerate() {
        d[2 * i] = (byte & 15) as i8;
        d[2 * i + 1] = (byte >> 4) as i8;
    }
    // Move each digit from [0, 16) to [-8, 8) by carrying into the next; the top one ends ≤ 8.
    for i in 0..63 {
        let carry = (d[i] + 8) >> 4;
        d[i] -= carry << 4;
        d[i + 1] += carry;
    }
    d
}

/// `digit·P` from P's row, reading every entry whatever the digit (any x86-64 CPU).
#[inline(always)]
pub(crate) fn select(row: &Row, digit: i8) -> Niels {
    let (negative, magnitude) = sign_and_magnitude(digit);
    let mut acc: Entry = [0; 16];
    for (j, entry) in row.iter().enumerate() {
        // All ones when j is the magnitude (magnitude ^ j is then 0), else all zeros.
        let hit = black_box(((magnitude ^ j as u64).wrapping_sub(1) >> 63).wrapping_neg());
        for (a, e) in acc.iter_mut().zip(entry) {
            *a |= e & hit;
        }
    }
    negated_if(from_entry(&acc), negative)
}

/// [`select`] in 256-bit registers: per entry one compare, four ANDs and four ORs.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn select_avx2(row: &Row, digit: i8) -> Niels {
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_cmpeq_epi64, _mm256_loadu_si256, _mm256_or_si256, _mm256_set1_epi64x,
        _mm256_setzero_si256, _mm256_storeu_si256,
    };
    let (negative, magnitude) = sign_and_magnitude(digit);
    let wanted = _mm256_set1_epi64x(magnitude as i64);
    let mut acc = [_mm256_setzero_si256(); 4];
    for (j, entry) in row.iter().enumerate() {
        let hit = _mm256_cmpeq_epi64(wanted, _mm256_set1_epi64x(j as i64));
        for (quarter, a) in acc.iter_mut().enumerate() {
            // SAFETY: an entry is 16 words, four 32-byte quarters; loadu needs no alignment.
            let words = unsafe { _mm256_loadu_si256(entry.as_ptr().add(4 * quarter).cast::<__m256i>()) };
            *a = _mm256_or_si256(*a, _mm256_and_si256(words, hit));
        }
    }
    let mut chosen: Entry = [0; 16];
    for (quarter, a) in acc.iter().enumerate() {
        // SAFETY: as above, into our own 16-word array.
        unsafe { _mm256_storeu_si256(chosen.as_mut_ptr().add(4 * quarter).cast::<__m256i>(), *a) };
    }
    negated_if(from_entry(&chosen), negative)
}

/// (1 if the digit is negative else 0, |digit|), without branches.
#[inline(always)]
fn sign_and_magnitude(digit: i8) -> (u64, u64) {
    let negative = (digit as u8 >> 7) as u64;
    let sign = -(negative as i64); // all ones when negative
    (negative, ((digit as i64 ^ sign) - sign) as u64)
}

/// `-p` when `negative` is 1, `p` when it is 0, computing both.
#[inline(always)]
fn negated_if(p: Niels, negative: u64) -> Niels {
    let mut words = to_entry(&p);
    let flipped = to_entry(&p.negated());
    let flip = black_box(negative.wrapping_neg());
    for (w, f) in words.iter_mut().zip(&flipped) {
        *w ^= (*w ^ f) & flip;
    }
    from_entry(&words)
}

#[inline(always)]
fn to_entry(n: &Niels) -> Entry {
    let mut e = [0u64; 16];
    e[0..5].copy_from_slice(&n.y_plus_x.0);
    e[5..10].copy_from_slice(&n.y_minus_x.0);
    e[10..15].copy_from_slice(&n.xy2d.0);
    e
}

#[inline(always)]
fn from_entry(e: &Entry) -> Niels {
    let limbs = |i: usize| Fe([e[i], e[i + 1], e[i + 2], e[i + 3], e[i + 4]]);
    Niels { y_plus_x: limbs(0), y_minus_x: limbs(5), xy2d: limbs(10) }
}

fn build_table() -> Box<[Row; 32]> {
    let mut table = Box::new([[[0u64; 16]; 9]; 32]);
    let mut base = Extended::base_point();
    for row in table.iter_mut() {
        let base_niels = base.to_niels();
        row[0] = to_entry(&Niels::IDENTITY);
        row[1] = to_entry(&base_niels);
        let mut multiple = base;
        for entry in row.iter_mut().skip(2) {
            multiple = multiple.add_niels(&base_niels).to_extended();
            *entry = to_entry(&multiple.to_niels());
        }
        for _ in 0..8 {
            base = base.double().to_extended();
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix16_digits_are_small_and_spell_the_scalar() {
        for seed in 0u8..=255 {
            let mut k = [0u8; 32];
            for (i, b) in k.iter_mut().enumerate() {
                *b = seed.wrapping_mul(31).wrapping_add((i as u8).wrapping_mul(73)) ^ (i as u8).rotate_left(3);
            }
            k[31] &= 0x7f;
            let d = signed_radix16(&k);
            assert!(d.iter().all(|&x| (-8..=8).contains(&x)));
            // Re-add the digits with carries to get the bytes back.
            let mut value = [0i32; 65];
            for (i, &x) in d.iter().enumerate() {
                value[i] += x as i32;
            }
            for i in 0..64 {
                let carry = value[i].div_euclid(16);
                value[i] -= carry * 16;
                value[i + 1] += carry;
            }
            assert_eq!(value[64], 0);
            for i in 0..32 {
                assert_eq!(value[2 * i] + 16 * value[2 * i + 1], k[i] as i32);
            }
        }
    }
}
