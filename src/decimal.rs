//! Exact comparison of decimal numbers written as text, without floats: the venue's
//! prices, quantities and steps are decimals, and `0.1 + 0.2` must not decide an order.
//!
//! A [`Decimal`] borrows the text and compares digit by digit. It reads the plain form
//! (`65000.10`, `-3`, `.5`) and, because a venue may send a JSON number where it documents a
//! string, the exponent form of JSON numbers (`6.5e4`, `1E-7`).

use std::cmp::Ordering;

/// A decimal number read from text: `±0.d₁d₂…dₙ × 10^point`, with d₁ ≠ 0 (or no digit for
/// zero). Digits live in `int` and `frac` of the original text, leading and trailing zeros
/// skipped by `first`/`last` (indices into the concatenation of both).
#[derive(Clone, Copy, Debug)]
pub struct Decimal<'a> {
    negative: bool,
    int: &'a [u8],
    frac: &'a [u8],
    /// Index of the first non-zero digit in `int ++ frac` (== `last` for zero).
    first: usize,
    /// One past the last non-zero digit.
    last: usize,
    /// Position of the decimal point relative to the first significant digit.
    point: i64,
}

/// Exponents beyond this are refused: no price or quantity needs them, and the arithmetic
/// on positions stays far from overflow.
const MAX_EXPONENT: i64 = 1_000_000;

impl<'a> Decimal<'a> {
    /// Read `text`: an optional sign, digits with an optional '.', and an optional exponent.
    /// At least one digit. `None` for anything else (spaces, `NaN`, `1,5`, hex).
    pub fn parse(text: &'a str) -> Option<Decimal<'a>> {
        let bytes = text.as_bytes();
        let (negative, rest) = match bytes.first() {
            Some(b'-') => (true, &bytes[1..]),
            Some(b'+') => (false, &bytes[1..]),
            _ => (false, bytes),
        };
        let mantissa_end = rest.iter().position(|b| matches!(b, b'e' | b'E')).unwrap_or(rest.len());
        let (mantissa, exponent) = rest.split_at(mantissa_end);
        let exponent = match exponent {
            [] => 0,
            [_, digits @ ..] => parse_exponent(digits)?,
        };
        let (int, frac) = match mantissa.iter().position(|b| *b == b'.') {
            Some(dot) => (&mantissa[..dot], &mantissa[dot + 1..]),
            None => (mantissa, &mantissa[mantissa.len()..]),
        };
        if int.is_empty() && frac.is_empty() || !int.iter().chain(frac).all(u8::is_ascii_digit) {
            return None;
        }
        let total = int.len() + frac.len();
        let digit = |i: usize| if i < int.len() { int[i] } else { frac[i - int.len()] };
        let first = (0..total).find(|&i| digit(i) != b'0').unwrap_or(total);
        let last = (first..total).rev().find(|&i| digit(i) != b'0').map_or(first, |i| i + 1);
        let point = int.len() as i64 - first as i64 + exponent;
        Some(Decimal { negative, int, frac, first, last, point })
    }

    pub fn is_zero(&self) -> bool {
        self.first == self.last
    }

    pub fn is_negative(&self) -> bool {
        self.negative && !self.is_zero()
    }

    /// Digits after the decimal point, trailing zeros not counted: `65000.10` → 1,
    /// `1e-7` → 7, `1200` → 0. A value is a multiple of 10^-d exactly when this is ≤ d.
    pub fn fraction_digits(&self) -> u64 {
        (self.last as i64 - self.first as i64 - self.point).max(0) as u64
    }

    fn digit(&self, i: usize) -> u8 {
        if i < self.int.len() { self.int[i] } else { self.frac[i - self.int.len()] }
    }

    /// Compare absolute values.
    fn cmp_magnitude(&self, other: &Decimal<'_>) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        // Both start with a non-zero digit at their point: the larger point is the larger.
        self.point.cmp(&other.point).then_with(|| {
            let (a, b) = (self.last - self.first, other.last - other.first);
            for i in 0..a.max(b) {
                let x = if i < a { self.digit(self.first + i) } else { b'0' };
                let y = if i < b { other.digit(other.first + i) } else { b'0' };
                if x != y {
                    return x.cmp(&y);
                }
            }
            Ordering::Equal
        })
    }
}

impl Ord for Decimal<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.is_negative(), other.is_negative()) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => self.cmp_magnitude(other),
            (true, true) => other.cmp_magnitude(self),
        }
    }
}

impl PartialOrd for Decimal<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Decimal<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Decimal<'_> {}

/// The order of a book side, best level first, by exact decimal price: bids (`descending`)
/// high to low, asks low to high; equal prices keep the venue's order (a stable sort).
/// Returns indices into `prices`, or the index of the first price that is not a decimal.
/// `perps_query_depth_book` and the stream's `depth_book` pushes both sort with this, so
/// REST and the stream can never order a book differently.
pub fn book_order(prices: &[&str], descending: bool) -> Result<Vec<usize>, usize> {
    let mut keyed = Vec::with_capacity(prices.len());
    for (i, price) in prices.iter().enumerate() {
        keyed.push((Decimal::parse(price).ok_or(i)?, i));
    }
    if descending {
        keyed.sort_by(|a, b| b.0.cmp(&a.0));
    } else {
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
    }
    Ok(keyed.into_iter().map(|(_, i)| i).collect())
}

fn parse_exponent(digits: &[u8]) -> Option<i64> {
    let (negative, digits) = match digits.first() {
        Some(b'-') => (true, &digits[1..]),
        Some(b'+') => (false, &digits[1..]),
        _ => (false, digits),
    };
    if digits.is_empty() || digits.len() > 7 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value: i64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    if value > MAX_EXPONENT {
        return None;
    }
    Some(if negative { -value } else { value })
}

/// The step 10^-`decimals` as text: 0 → "1", 2 → "0.01".
pub fn step_text(decimals: u32) -> String {
    match decimals {
        0 => "1".to_owned(),
        d => format!("0.{}1", "0".repeat(d as usize - 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Decimal<'_> {
        Decimal::parse(text).unwrap_or_else(|| panic!("{text} is a decimal"))
    }

    #[test]
    fn ordering_is_exact_and_ignores_notation() {
        let ascending = [
            "-100",
            "-9.99",
            "-1e-3",
            "0",
            "0.00001",
            "1e-4",
            "0.00011",
            "0.1",
            "0.9",
            "9",
            "9.5",
            "10",
            "10.000001",
            "65000.1",
            "65000.10000001",
            "6.51e4",
            "100000",
        ];
        for (i, a) in ascending.iter().enumerate() {
            for (j, b) in ascending.iter().enumerate() {
                assert_eq!(d(a).cmp(&d(b)), i.cmp(&j), "{a} vs {b}");
            }
        }
        for (a, b) in
            [("1.50", "1.5"), ("0", "-0.000"), ("6.5e4", "65000"), ("0065", "65"), (".5", "0.5"), ("5E-1", "0.5")]
        {
            assert_eq!(d(a), d(b), "{a} == {b}");
        }
        // String order differs from numeric order here; decimal order does not.
        assert!(d("9.5") < d("10.25") && "9.5" > "10.25");
    }

    #[test]
    fn fraction_digits_count_the_step_a_value_is_on() {
        for (text, digits) in [
            ("65000.10", 1),
            ("65000", 0),
            ("1200", 0),
            ("0.0001", 4),
            ("1e-7", 7),
            ("1.5e1", 0),
            ("1.25e1", 1),
            ("0", 0),
        ] {
            assert_eq!(d(text).fraction_digits(), digits, "{text}");
        }
    }

    #[test]
    fn non_decimals_are_refused() {
        for text in
            ["", "-", ".", "1..2", "1,5", " 1", "1 ", "NaN", "inf", "0x10", "1e", "1e+", "1e99999999", "--1", "1-"]
        {
            assert!(Decimal::parse(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn steps_are_written_plainly() {
        assert_eq!(step_text(0), "1");
        assert_eq!(step_text(1), "0.1");
        assert_eq!(step_text(4), "0.0001");
    }
}
