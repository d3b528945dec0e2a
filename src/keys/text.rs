//! The text forms a private key arrives in (hex, base58, the `solana-keygen` JSON array),
//! decoded without a branch or a memory address that depends on the key's characters.
//!
//! Why: `char::to_digit` branches on whether each character is a digit or a letter (about
//! 60 bits of a 256-bit key in hex), `bs58` looks each character up in a table (its address
//! is the secret) and stops at the first bad one, and a JSON reader branches on every digit.
//! A process that shares the CPU's caches or branch predictor could learn those.
//!
//! How: every character is classified by masked range arithmetic (as the `base16ct` crate
//! does): a mask is all ones or zero, computed without a comparison the compiler could turn
//! into a jump (`black_box` hides that it is all-or-nothing). Faults are accumulated in a
//! flag, and every loop's bounds depend only on the text's length. What is public is decided
//! by one branch on a value declared public ([`public`]): which form the text has, whether
//! it is valid, how many bytes it decodes to. For a valid key of a given form each verdict
//! is the same whatever the key, so it tells nothing about the key.
//!
//! `tests/constant_time.rs` checks this under valgrind's memcheck with the key text marked
//! secret; `tests/key_text.rs` checks the decoders against `hex`, `bs58` and `serde_json`
//! semantics (the crates the library used before) on random and edge inputs.

use crate::error::{Error, Result};
use std::hint::black_box;
use zeroize::Zeroizing;

/// The longest base58 text of 64 bytes.
pub(crate) const MAX_BASE58_KEY_LEN: usize = 88;

/// A verdict computed from secret data that may be known: tells memcheck so (natively the
/// value is returned unchanged). Nonzero means true.
#[inline(always)]
pub(crate) fn public(mask: u64) -> bool {
    crate::curve::declassified(mask) != 0
}

/// All ones when `lo <= c <= hi`, else zero. `c - lo` and `hi - c` are both non-negative
/// exactly when `c` is in the range: the sign bits of their 32-bit differences say so.
#[inline(always)]
fn in_range(c: u8, lo: u8, hi: u8) -> u64 {
    let c = u32::from(c);
    let outside = (c.wrapping_sub(u32::from(lo)) | u32::from(hi).wrapping_sub(c)) >> 31;
    black_box(u64::from(outside).wrapping_sub(1))
}

/// All ones when `c == x`, else zero.
#[inline(always)]
fn is(c: u8, x: u8) -> u64 {
    in_range(c, x, x)
}

/// All ones when `a == b`, else zero (both below 2^63).
#[inline(always)]
fn equal(a: u64, b: u64) -> u64 {
    black_box(((a ^ b).wrapping_sub(1) >> 63).wrapping_neg())
}

/// The whitespace of `char::is_whitespace` in ASCII (what `str::trim` removes there).
#[inline(always)]
fn ascii_space(c: u8) -> u64 {
    in_range(c, b'\t', b'\r') | is(c, b' ')
}

/// `str::trim` without branching on a key's characters: each end character is checked for
/// whitespace by a mask, and only that verdict is public (it is false at both ends of any
/// key written without surrounding whitespace, and then tells nothing). A non-ASCII byte at
/// an end (never part of a key; perhaps Unicode whitespace) is left to `str::trim`. Bytes,
/// not `str`: slicing a `str` checks that the byte at the cut is not inside a character,
/// a branch on that (secret) byte.
pub fn trim(text: &str) -> &[u8] {
    let bytes = text.as_bytes();
    let (mut start, mut end) = (0, bytes.len());
    while start < end {
        if public(in_range(bytes[start], 0x80, 0xff)) {
            return text.trim().as_bytes();
        }
        if !public(ascii_space(bytes[start])) {
            break;
        }
        start += 1;
    }
    while start < end {
        if public(in_range(bytes[end - 1], 0x80, 0xff)) {
            return text.trim().as_bytes();
        }
        if !public(ascii_space(bytes[end - 1])) {
            break;
        }
        end -= 1;
    }
    &bytes[start..end]
}

/// `text` after a `0x` or `0X` prefix, if it has one (a public verdict: no hex digit is an
/// `x`, no base58 digit a `0`, no JSON array starts with `0`).
pub fn strip_0x(text: &[u8]) -> Option<&[u8]> {
    let prefixed = text.len() >= 2 && public(is(text[0], b'0') & (is(text[1], b'x') | is(text[1], b'X')));
    prefixed.then(|| &text[2..])
}

/// Whether two byte strings of the same (public) length are equal, every byte compared: the
/// verdict alone is public.
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    assert_eq!(a.len(), b.len());
    let differ = a.iter().zip(b).fold(0, |acc, (x, y)| acc | (x ^ y));
    !public(!equal(u64::from(differ), 0))
}

/// The value of a hex digit, and all ones in the second when `c` is not one.
#[inline(always)]
fn hex_digit(c: u8) -> (u64, u64) {
    let (digit, lower, upper) = (in_range(c, b'0', b'9'), in_range(c, b'a', b'f'), in_range(c, b'A', b'F'));
    let c = u64::from(c);
    let value = (digit & c.wrapping_sub(u64::from(b'0')))
        | (lower & c.wrapping_sub(u64::from(b'a') - 10))
        | (upper & c.wrapping_sub(u64::from(b'A') - 10));
    (value, !(digit | lower | upper))
}

/// Hex digits into `out` (which must be half their length); `None`, `out` then unspecified, if
/// one is not a hex digit. Every digit is read; the one branch on validity is at the end.
pub fn decode_hex_into(digits: &[u8], out: &mut [u8]) -> Option<()> {
    assert_eq!(digits.len(), 2 * out.len(), "two hex digits per byte");
    let mut bad = 0;
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let (hi, hi_bad) = hex_digit(pair[0]);
        let (lo, lo_bad) = hex_digit(pair[1]);
        *byte = (hi << 4 | lo) as u8;
        bad |= hi_bad | lo_bad;
    }
    (!public(bad)).then_some(())
}

/// Decode hex into a buffer of its final size, wiped on drop; `None` on odd length or a
/// non-hex digit.
pub fn decode_hex(digits: impl AsRef<[u8]>) -> Option<Zeroizing<Vec<u8>>> {
    let digits = digits.as_ref();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    let mut out = Zeroizing::new(vec![0; digits.len() / 2]);
    decode_hex_into(digits, &mut out)?;
    Some(out)
}

/// The value of a base58 digit (Bitcoin's alphabet, `bs58`'s default: `1`–`9`, `A`–`Z`
/// without `I` and `O`, `a`–`z` without `l`), and all ones in the second when `c` is not one:
/// six ranges, each a mask, no table.
#[inline(always)]
fn base58_digit(c: u8) -> (u64, u64) {
    // (first character, last, value of the first)
    const RANGES: [(u8, u8, u64); 6] =
        [(b'1', b'9', 0), (b'A', b'H', 9), (b'J', b'N', 17), (b'P', b'Z', 22), (b'a', b'k', 33), (b'm', b'z', 44)];
    let (mut value, mut valid) = (0, 0);
    for (first, last, base) in RANGES {
        let inside = in_range(c, first, last);
        value |= inside & (u64::from(c.wrapping_sub(first)) + base);
        valid |= inside;
    }
    (value, !valid)
}

/// 32-bit limbs of the number a base58 text of at most [`MAX_BASE58_KEY_LEN`] digits spells:
/// below 58^88 < 2^516.
const BASE58_LIMBS: usize = 17;

/// base58 as `bs58` decodes it (each leading `1` a zero byte, then the number's bytes, big
/// endian, without leading zeros), into `out`; the decoded length, or `None` if a character
/// is not a base58 digit or the text is longer than [`MAX_BASE58_KEY_LEN`]. A length above 64
/// is returned with `out` left as it was.
///
/// Every digit is multiplied into a fixed-size number (all of its limbs, every time), so
/// the work depends on the text's length alone; the leading `1`s are counted by a mask. The
/// number lives in a buffer wiped on drop: nothing holding the key is freed unwiped, even
/// when the text is refused (a stray character after a valid key).
pub fn decode_base58(text: &[u8], out: &mut [u8; 64]) -> Option<usize> {
    if text.len() > MAX_BASE58_KEY_LEN {
        return None;
    }
    let mut limbs = Zeroizing::new([0u32; BASE58_LIMBS]);
    let (mut bad, mut leading, mut ones) = (0, u64::MAX, 0);
    for &c in text {
        let (digit, not_digit) = base58_digit(c);
        bad |= not_digit;
        leading &= is(c, b'1');
        ones += leading & 1;
        let mut carry = digit;
        for limb in limbs.iter_mut() {
            let wide = u64::from(*limb) * 58 + carry;
            *limb = wide as u32;
            carry = wide >> 32;
        }
    }
    if public(bad) {
        return None;
    }
    let byte = |i: usize| (limbs[i / 4] >> (8 * (i % 4))) as u8;
    // The number's length in bytes: one past its highest nonzero byte.
    let mut length = 0;
    for i in 0..4 * BASE58_LIMBS {
        let nonzero = !equal(u64::from(byte(i)), 0);
        length = (nonzero & (i as u64 + 1)) | (!nonzero & length);
    }
    // How many bytes the text decodes to is public; how many of them are leading zeros is not.
    let total = crate::curve::declassified(ones + length) as usize;
    if total <= out.len() {
        for (i, slot) in out[..total].iter_mut().enumerate() {
            *slot = byte(total - 1 - i);
        }
    }
    Some(total)
}

/// An Ed25519 private key's text (trimmed, not empty) into `out`: the `solana-keygen` JSON
/// array, hex (64 or 128 digits, or `0x`-prefixed), or base58. The number of bytes, which
/// may exceed 64 (then `out` holds none of them).
pub fn decode_secret_text(text: &[u8], out: &mut [u8; 64]) -> Result<usize> {
    if text.first().is_some_and(|&c| public(is(c, b'['))) {
        return decode_json_array(text, out);
    }
    let hex_body = strip_0x(text);
    if text.len() == 64 || text.len() == 128 || hex_body.is_some() {
        let digits = hex_body.unwrap_or(text);
        let not_hex = || Error::invalid_key("the Ed25519 private key looks like hex but is not valid hex");
        let len = digits.len() / 2;
        if len > out.len() {
            // Longer than a keypair: not a key, which its length (public) says; read for the
            // error it gives.
            return decode_hex(digits).map(|_| len).ok_or_else(not_hex);
        }
        if !digits.len().is_multiple_of(2) {
            return Err(not_hex());
        }
        return decode_hex_into(digits, &mut out[..len]).map(|()| len).ok_or_else(not_hex);
    }
    // base58 of a keypair is at most 88 characters: refuse what cannot be a key first.
    if text.len() > MAX_BASE58_KEY_LEN {
        return Err(Error::invalid_key(format!(
            "the Ed25519 private key is {} characters long; base58 of a 64-byte keypair is at most {MAX_BASE58_KEY_LEN}",
            text.len()
        )));
    }
    decode_base58(text, out).ok_or_else(|| {
        Error::invalid_key("the Ed25519 private key is not valid base58 (or hex, or a JSON array of bytes)")
    })
}

/// 2^64: a number read saturates here, the first value serde_json reads as a float.
const NOT_U64: u128 = 1 << 64;

/// All ones when `a > b`, else zero (both at most 2^127).
#[inline(always)]
fn above(a: u128, b: u128) -> u64 {
    black_box((b.wrapping_sub(a) >> 127) as u64).wrapping_neg()
}

/// `a` where `mask` is all ones, `b` where it is zero.
#[inline(always)]
fn select(mask: u64, a: u128, b: u128) -> u128 {
    let mask = u128::from(mask) | u128::from(mask) << 64;
    (mask & a) | (!mask & b)
}

/// The `solana-keygen` JSON array into `out`: how many numbers it holds (all counted, when
/// more than 64; `out` holds the first 64). What serde_json would refuse is refused, with the
/// messages and in the order the library gave before (when it used serde_json): anything but
/// integers (a sign, a fraction, an exponent, a leading zero), a trailing comma, text after
/// the `]`, a number past `u64`; then a number above 255; then more than 64 numbers.
///
/// One pass over every character by a state machine kept in masks: one state is all ones
/// while the text is well formed so far, none after a fault. The number read is written to
/// every slot of `out`, kept where the slot is not the one it goes to: no address depends
/// on where the numbers end. The verdicts are declared public at the end, in that order.
pub fn decode_json_array(text: &[u8], out: &mut [u8; 64]) -> Result<usize> {
    // before '[', after '[', in a number (a lone 0), after a number, after ',', after ']'
    let (mut before, mut opened, mut number, mut zero, mut after_number, mut after_comma, mut closed) =
        (u64::MAX, 0, 0, 0, 0, 0, 0);
    let mut value = Zeroizing::new(0u128);
    let (mut count, mut not_u64, mut above_255) = (0u64, 0, 0);
    for &c in text {
        let digit = in_range(c, b'0', b'9');
        // JSON's whitespace: no vertical tab or form feed.
        let space = is(c, b' ') | is(c, b'\t') | is(c, b'\n') | is(c, b'\r');
        let (comma, close) = (is(c, b','), is(c, b']'));
        let in_number = number | zero;
        // A number ends here: write it to its slot, count it, check its range.
        let ends = in_number & (space | comma | close);
        for (slot, byte) in out.iter_mut().zip(0u64..) {
            let here = ends & equal(byte, count);
            *slot = ((here & *value as u64) | (!here & u64::from(*slot))) as u8;
        }
        count += ends & 1;
        not_u64 |= ends & above(*value, u128::from(u64::MAX));
        above_255 |= ends & above(*value, 255);
        // The digit read: a number starts, or goes on (saturating at 2^64).
        let starts = (opened | after_comma) & digit;
        let d = u128::from(digit & u64::from(c.wrapping_sub(b'0')));
        let next = *value * 10 + d;
        let next = select(above(next, NOT_U64), NOT_U64, next);
        *value = select(starts, d, select(number & digit, next, *value));
        let is_zero = is(c, b'0');
        (before, opened, number, zero, after_number, after_comma, closed) = (
            before & space,
            (before & is(c, b'[')) | (opened & space),
            (starts & !is_zero) | (number & digit),
            starts & is_zero,
            (in_number | after_number) & space,
            ((in_number | after_number) & comma) | (after_comma & space),
            ((opened | in_number | after_number) & close) | (closed & space),
        );
    }
    if public(!closed | not_u64) {
        return Err(Error::invalid_key(
            "the Ed25519 private key starts with '[' but is not a JSON array of integers 0..=255",
        ));
    }
    if public(above_255) {
        return Err(Error::invalid_key("the Ed25519 private key JSON array must hold integers 0..=255"));
    }
    let count = crate::curve::declassified(count) as usize;
    if count > out.len() {
        return Err(Error::invalid_key(format!(
            "the Ed25519 private key decodes to {count} bytes; expected a 32-byte seed or a 64-byte keypair"
        )));
    }
    Ok(count)
}
