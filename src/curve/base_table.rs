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
//! [`Fe`], four-limb entries (12 words) for [`Fe64`], and a third with each entry in vector
//! lanes for `comb4x.rs`; all three are static data written by the build script from
//! `table_gen.rs`. [`comb`], the schedule of additions and doublings, is shared by every build.

use super::field::{Fe, FieldElement};
#[cfg(target_arch = "x86_64")]
use super::field64::Fe64;
use super::point::{Extended, Niels};
use std::hint::black_box;

/// 0·P, 1·P, …, 8·P for one P = 256^i·B, each entry the words of (y+x, y−x, 2dxy) followed by
/// zero padding up to `N`, a multiple of 4 (one 256-bit register).
pub(crate) type Row<const N: usize> = [[u64; N]; 9];

/// A field element as table words.
pub(crate) trait TableField: FieldElement {
    /// Words per element.
    const WORDS: usize;
    #[cfg_attr(not(test), allow(dead_code))] // the fault injection's (tests)
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

// The tables, computed by the build script (`table_gen.rs`) as `static` arrays: read-only
// memory, mapped from the library file, never built or written at run time, so no memory
// bug of the host process can corrupt them. `TABLE` (five limbs, 37 KB) and `TABLE64` (four
// limbs, 27 KB) are read here; `TABLE4X` (lanes, 46 KB) by `comb4x.rs`.
include!(concat!(env!("OUT_DIR"), "/base_tables.rs"));

pub(crate) fn table() -> &'static [Row<16>; 32] {
    #[cfg(test)]
    if let Some(corrupted) = super::guard::fault::corrupted(&TABLE) {
        return corrupted;
    }
    &TABLE
}

#[cfg(target_arch = "x86_64")]
pub(crate) fn table64() -> &'static [Row<12>; 32] {
    #[cfg(test)]
    if let Some(corrupted) = super::guard::fault::corrupted(&TABLE64) {
        return corrupted;
    }
    &TABLE64
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

#[inline(always)]
pub(crate) fn from_entry<F: TableField>(e: &[u64]) -> Niels<F> {
    let w = F::WORDS;
    Niels {
        y_plus_x: F::from_words(&e[0..w]),
        y_minus_x: F::from_words(&e[w..2 * w]),
        xy2d: F::from_words(&e[2 * w..3 * w]),
    }
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

    /// The mapping of this process that holds `len` bytes at `address`, as /proc/self/maps shows
    /// it: `(permissions, path)`.
    fn mapping_of(address: usize, len: usize) -> (String, String) {
        let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
        for line in maps.lines() {
            let mut fields = line.split_whitespace();
            let range = fields.next().unwrap();
            let perms = fields.next().unwrap().to_owned();
            let path = fields.nth(3).unwrap_or("").to_owned();
            let (start, end) = range.split_once('-').unwrap();
            let (start, end) = (usize::from_str_radix(start, 16).unwrap(), usize::from_str_radix(end, 16).unwrap());
            if start <= address && address + len <= end {
                return (perms, path);
            }
        }
        panic!("no single mapping holds {len} bytes at {address:#x}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn tables_are_in_read_only_memory_of_the_program_file() {
        let tables: [(&str, usize, usize); 3] = [
            ("five-limb", table().as_ptr() as usize, size_of_val(table())),
            #[cfg(target_arch = "x86_64")]
            ("four-limb", table64().as_ptr() as usize, size_of_val(table64())),
            #[cfg(not(target_arch = "x86_64"))]
            ("four-limb", TABLE64.as_ptr() as usize, size_of_val(&TABLE64)),
            ("lanes", super::super::comb4x::table().as_ptr() as usize, size_of_val(super::super::comb4x::table())),
        ];
        let exe = std::env::current_exe().unwrap();
        for (name, address, len) in tables {
            let (perms, path) = mapping_of(address, len);
            assert!(!perms.contains('w'), "the {name} table is in a writable mapping ({perms} {path})");
            assert!(perms.starts_with('r'), "the {name} table is not readable? ({perms} {path})");
            // Mapped from the program's file (not heap or anonymous memory).
            assert_eq!(std::path::Path::new(&path), exe, "the {name} table is not in the program's image");
        }
    }

    #[test]
    fn tables_equal_a_fresh_computation() {
        use super::super::table_gen::{self, base_multiples, layout};
        let rows = base_multiples();
        assert_eq!(layout(&rows, table_gen::fe_entry).as_slice(), &TABLE[..]);
        assert_eq!(layout(&rows, table_gen::fe64_entry).as_slice(), &TABLE64[..]);
        assert_eq!(layout(&rows, table_gen::lanes_entry).as_slice(), &super::super::comb4x::table()[..]);
    }

    /// Independent truth: entry j of row i is (j·256^i)·B as curve25519-dalek computes it, and
    /// its third coordinate is 2d·x·y of the first two.
    #[test]
    fn every_entry_is_the_multiple_dalek_computes() {
        use curve25519_dalek::{EdwardsPoint, Scalar};
        let d = Fe::from_bytes(&[
            0xa3, 0x78, 0x59, 0x13, 0xca, 0x4d, 0xeb, 0x75, 0xab, 0xd8, 0x41, 0x41, 0x4d, 0x0a, 0x70, 0x00, 0x98, 0xe8,
            0x79, 0x77, 0x79, 0x40, 0xc7, 0x8c, 0x73, 0xfe, 0x6f, 0x2b, 0xee, 0x6c, 0x03, 0x52,
        ]);
        let half = Fe([2, 0, 0, 0, 0]).invert();
        let mut scale = Scalar::ONE;
        for row in TABLE.iter() {
            for (j, entry) in row.iter().enumerate() {
                let n: Niels<Fe> = from_entry(entry);
                let y = n.y_plus_x.add(&n.y_minus_x).mul(&half);
                let x = n.y_plus_x.sub(&n.y_minus_x).mul(&half);
                assert_eq!(x.mul(&y).mul(&d.add(&d)).to_bytes(), n.xy2d.to_bytes());
                let mut encoding = y.to_bytes();
                encoding[31] |= x.is_odd() << 7;
                let expected = EdwardsPoint::mul_base(&(Scalar::from(j as u64) * scale)).compress().to_bytes();
                assert_eq!(encoding, expected, "entry {j} of a row");
            }
            scale *= Scalar::from(256u64);
        }
    }
}
