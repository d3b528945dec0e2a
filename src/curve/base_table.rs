//! The fixed-base multiplication k·B, constant time: k in 64 signed radix-16 digits, one
//! table row per pair of digits (row i holds 0·B..8·B scaled by 256^i), 64 mixed additions and
//! four doublings — the classic comb of ref10 and ed25519-dalek.
//!
//! What differs from ed25519-dalek is the table lookup. dalek selects each entry with an
//! out-of-line conditional assignment per entry (about 730 instructions per lookup, a fifth of
//! a signature). Here a row is a flat array of words, and the selection is one masked OR per
//! word: with AVX2, 256-bit AND/OR pairs, the masks made by a vector compare ([`select_avx2`]);
//! otherwise 64-bit words with masks passed through `black_box`, so that the compiler cannot
//! see they are all-zero or all-one and turn the selection back into a branch ([`select`]).
//! `tests/constant_time.rs` checks the compiled code under valgrind.
//!
//! There is one table per field representation: five-limb entries (16 words with padding) for
//! [`Fe`], four-limb entries (12 words) for [`Fe64`], the latter converted from the former (and
//! `comb4x.rs` converts a third, with each entry in vector lanes). [`comb`], the schedule of
//! additions and doublings, is shared by every build.

use super::field::{Fe, FieldElement};
#[cfg(target_arch = "x86_64")]
use super::field64::Fe64;
use super::point::{Extended, Niels};
use std::hint::black_box;
use std::sync::LazyLock;

/// 0·P, 1·P, …, 8·P for one P = 256^i·B, each entry the words of (y+x, y−x, 2dxy) followed by
/// zero padding up to `N`, a multiple of 4 (one 256-bit register).
pub(crate) type Row<const N: usize> = [[u64; N]; 9];

/// A field element as table words.
pub(crate) trait TableField: FieldElement {
    /// Words per element.
    const WORDS: usize;
    fn words(&self) -> &[u64];
    fn from_words(words: &[u64]) -> Self;
    /// `b` where `mask` is all ones, `a` where it is zero, word by word without branches.
    fn masked_choice(a: &Self, b: &Self, mask: u64) -> Self;
}

/// Word-wise `a ^ ((a ^ b) & mask)`: `b` under an all-ones mask, `a` under zero.
#[inline(always)]
fn choose_words<const W: usize>(a: &[u64; W], b: &[u64; W], mask: u64) -> [u64; W] {
    std::array::from_fn(|i| a[i] ^ ((a[i] ^ b[i]) & mask))
}

impl TableField for Fe {
    const WORDS: usize = 5;
    #[inline(always)]
    fn words(&self) -> &[u64] {
        &self.0
    }
    #[inline(always)]
    fn from_words(w: &[u64]) -> Fe {
        Fe([w[0], w[1], w[2], w[3], w[4]])
    }
    #[inline(always)]
    fn masked_choice(a: &Fe, b: &Fe, mask: u64) -> Fe {
        Fe(choose_words(&a.0, &b.0, mask))
    }
}

#[cfg(target_arch = "x86_64")]
impl TableField for Fe64 {
    const WORDS: usize = 4;
    #[inline(always)]
    fn words(&self) -> &[u64] {
        &self.0
    }
    #[inline(always)]
    fn from_words(w: &[u64]) -> Fe64 {
        Fe64([w[0], w[1], w[2], w[3]])
    }
    #[inline(always)]
    fn masked_choice(a: &Fe64, b: &Fe64, mask: u64) -> Fe64 {
        Fe64(choose_words(&a.0, &b.0, mask))
    }
}

/// Built once per process on first use (≈ 3 ms: 256 inversions), then only read.
static TABLE: LazyLock<Box<[Row<16>; 32]>> = LazyLock::new(build_table);
/// The same points with four-limb coordinates, built from [`TABLE`] when first used.
#[cfg(target_arch = "x86_64")]
static TABLE64: LazyLock<Box<[Row<12>; 32]>> = LazyLock::new(|| convert_table(&TABLE));

pub(crate) fn table() -> &'static [Row<16>; 32] {
    &TABLE
}

#[cfg(target_arch = "x86_64")]
pub(crate) fn table64() -> &'static [Row<12>; 32] {
    &TABLE64
}

/// Build the tables a signature will read now rather than inside the first one.
pub(crate) fn prepare(with_table64: bool) {
    LazyLock::force(&TABLE);
    #[cfg(target_arch = "x86_64")]
    if with_table64 {
        LazyLock::force(&TABLE64);
    }
}

/// `k·B` for a scalar `k` given little-endian, below 2^255 (a reduced scalar is below 2^253),
/// with `pick` as the table lookup ([`select`] or [`select_avx2`]). Inlined into its callers so
/// that it is compiled for the CPU features each one enables.
#[inline(always)]
pub(crate) fn mul_base<F: FieldElement, R>(
    k: &[u8; 32],
    table: &[R; 32],
    pick: impl Fn(&R, i8) -> Niels<F>,
) -> Extended<F> {
    comb(
        k,
        Extended::IDENTITY,
        // Closures are inlined only when marked: otherwise they lose the caller's CPU features.
        #[inline(always)]
        |p, row, digit| p.add_niels(&pick(&table[row], digit)).to_extended(),
        #[inline(always)]
        |p| p.times_16(),
    )
}

/// The comb's schedule, shared by every build: with k's digits d_i,
/// Σ d_i·16^i·B = 16·Σ d_{2j+1}·256^j·B + Σ d_{2j}·256^j·B, where `add(p, j, d)` returns
/// p + d·256^j·B (from table row j) and `times_16` is four doublings.
#[inline(always)]
pub(crate) fn comb<P>(k: &[u8; 32], identity: P, add: impl Fn(P, usize, i8) -> P, times_16: impl FnOnce(P) -> P) -> P {
    let mut digits = signed_radix16(k);
    let mut p = identity;
    for (row, &digit) in digits.iter().skip(1).step_by(2).enumerate() {
        p = add(p, row, digit);
    }
    p = times_16(p);
    for (row, &digit) in digits.iter().step_by(2).enumerate() {
        p = add(p, row, digit);
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
pub(crate) fn select<F: TableField, const N: usize>(row: &Row<N>, digit: i8) -> Niels<F> {
    let (negative, magnitude) = sign_and_magnitude(digit);
    let mut acc = [0u64; N];
    for (j, entry) in row.iter().enumerate() {
        let hit = entry_mask(magnitude, j);
        for (a, e) in acc.iter_mut().zip(entry) {
            *a |= e & hit;
        }
    }
    negated_if(from_entry(&acc), negative)
}

/// [`select`] in 256-bit registers: per entry one compare, and an AND and an OR per 4 words.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn select_avx2<F: TableField, const N: usize>(row: &Row<N>, digit: i8) -> Niels<F> {
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_cmpeq_epi64, _mm256_loadu_si256, _mm256_or_si256, _mm256_set1_epi64x,
        _mm256_setzero_si256, _mm256_storeu_si256,
    };
    let (negative, magnitude) = sign_and_magnitude(digit);
    let wanted = _mm256_set1_epi64x(magnitude as i64);
    // Up to four 256-bit lanes per entry: 16 words at most (both tables' entries fit).
    const { assert!(N.is_multiple_of(4) && N <= 16) };
    let mut acc = [_mm256_setzero_si256(); 4];
    for (j, entry) in row.iter().enumerate() {
        let hit = _mm256_cmpeq_epi64(wanted, _mm256_set1_epi64x(j as i64));
        for (quarter, a) in acc.iter_mut().enumerate().take(N / 4) {
            // SAFETY: an entry is N words, N/4 32-byte quarters; loadu needs no alignment.
            let words = unsafe { _mm256_loadu_si256(entry.as_ptr().add(4 * quarter).cast::<__m256i>()) };
            *a = _mm256_or_si256(*a, _mm256_and_si256(words, hit));
        }
    }
    let mut chosen = [0u64; N];
    for (quarter, a) in acc.iter().enumerate().take(N / 4) {
        // SAFETY: as above, into our own N-word array.
        unsafe { _mm256_storeu_si256(chosen.as_mut_ptr().add(4 * quarter).cast::<__m256i>(), *a) };
    }
    negated_if(from_entry(&chosen), negative)
}

/// (1 if the digit is negative else 0, |digit|), without branches.
#[inline(always)]
pub(crate) fn sign_and_magnitude(digit: i8) -> (u64, u64) {
    let negative = (digit as u8 >> 7) as u64;
    let sign = -(negative as i64); // all ones when negative
    (negative, ((digit as i64 ^ sign) - sign) as u64)
}

/// All ones when entry `j` is the one of this magnitude (magnitude ^ j is then 0), else all
/// zeros. Through `black_box`, so that the compiler cannot see that the mask is all-or-nothing
/// and turn a masked selection back into a branch; [`negation_mask`] likewise.
#[inline(always)]
pub(crate) fn entry_mask(magnitude: u64, j: usize) -> u64 {
    black_box(((magnitude ^ j as u64).wrapping_sub(1) >> 63).wrapping_neg())
}

/// All ones when `negative` is 1, zeros when it is 0.
#[inline(always)]
pub(crate) fn negation_mask(negative: u64) -> u64 {
    black_box(negative.wrapping_neg())
}

/// `-p` when `negative` is 1, `p` when it is 0, computing both: y+x and y−x trade places and
/// 2dxy changes sign (x changes sign).
#[inline(always)]
fn negated_if<F: TableField>(p: Niels<F>, negative: u64) -> Niels<F> {
    let flip = negation_mask(negative);
    let minus_xy2d = p.xy2d.neg();
    Niels {
        y_plus_x: F::masked_choice(&p.y_plus_x, &p.y_minus_x, flip),
        y_minus_x: F::masked_choice(&p.y_minus_x, &p.y_plus_x, flip),
        xy2d: F::masked_choice(&p.xy2d, &minus_xy2d, flip),
    }
}

/// The words of (y+x, y−x, 2dxy), then zeros up to `N`.
#[inline(always)]
fn to_entry<F: TableField, const N: usize>(n: &Niels<F>) -> [u64; N] {
    let w = F::WORDS;
    let mut e = [0u64; N];
    e[0..w].copy_from_slice(n.y_plus_x.words());
    e[w..2 * w].copy_from_slice(n.y_minus_x.words());
    e[2 * w..3 * w].copy_from_slice(n.xy2d.words());
    e
}

#[inline(always)]
pub(crate) fn from_entry<F: TableField>(e: &[u64]) -> Niels<F> {
    let w = F::WORDS;
    Niels {
        y_plus_x: F::from_words(&e[0..w]),
        y_minus_x: F::from_words(&e[w..2 * w]),
        xy2d: F::from_words(&e[2 * w..3 * w]),
    }
}

/// Each entry's coordinates as four-limb elements (their canonical values).
#[cfg(target_arch = "x86_64")]
fn convert_table(table: &[Row<16>; 32]) -> Box<[Row<12>; 32]> {
    let mut out = Box::new([[[0u64; 12]; 9]; 32]);
    for (row_out, row) in out.iter_mut().zip(table) {
        for (entry_out, entry) in row_out.iter_mut().zip(row) {
            let n: Niels<Fe> = from_entry(entry);
            let n64 = Niels {
                y_plus_x: Fe64::from_fe(&n.y_plus_x),
                y_minus_x: Fe64::from_fe(&n.y_minus_x),
                xy2d: Fe64::from_fe(&n.xy2d),
            };
            *entry_out = to_entry(&n64);
        }
    }
    out
}

fn build_table() -> Box<[Row<16>; 32]> {
    let mut table = Box::new([[[0u64; 16]; 9]; 32]);
    let mut base = Extended::base_point();
    for row in table.iter_mut() {
        let base_niels = base.to_niels();
        row[0] = to_entry(&Niels::<Fe>::IDENTITY);
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
