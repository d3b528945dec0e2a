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

    /// The value times 10^`scale` as an exact integer, when it is one (`scale` at least
    /// [`Self::fraction_digits`]) and has at most 38 digits; `None` otherwise.
    fn scaled(&self, scale: u64) -> Option<i128> {
        if self.is_zero() {
            return Some(0);
        }
        let digits = (self.last - self.first) as i64;
        // Zeros after the significant digits: point + scale - digits.
        let zeros = self.point.checked_add(i64::try_from(scale).ok()?)? - digits;
        if zeros < 0 || digits + zeros > 38 {
            return None;
        }
        let mut magnitude: i128 = 0;
        for i in self.first..self.last {
            magnitude = magnitude * 10 + i128::from(self.digit(i) - b'0');
        }
        for _ in 0..zeros {
            magnitude *= 10;
        }
        Some(if self.negative { -magnitude } else { magnitude })
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
    let mut sorter = BookSorter::default();
    sorter.sort(prices.len(), |i| prices[i], descending)?;
    Ok(sorter.order)
}

/// [`book_order`] with its working space kept from book to book (a stream sorts every push):
/// the same sort, without allocating once the buffers have grown to a book's size.
#[derive(Default)]
pub struct BookSorter {
    /// (key, index): the plain path's sort items (unique, so an unstable sort is stable).
    keyed: Vec<(i128, usize)>,
    order: Vec<usize>,
}

impl BookSorter {
    /// The order of `count` prices given by `price(i)`, as [`book_order`] gives it.
    pub fn sort<'a>(
        &mut self,
        count: usize,
        price: impl Fn(usize) -> &'a str,
        descending: bool,
    ) -> Result<&[usize], usize> {
        self.order.clear();
        if self.plain_keys(count, &price, descending) {
            // Ties broken by index: what a stable sort keeps.
            self.keyed.sort_unstable();
            self.order.extend(self.keyed.iter().map(|&(_, i)| i));
            return Ok(&self.order);
        }
        self.order.extend(0..count);
        let mut decimals = Vec::with_capacity(count);
        for i in 0..count {
            decimals.push(Decimal::parse(price(i)).ok_or(i)?);
        }
        // Exact integers where they reach: every price times 10^scale, where scale is the
        // most fraction digits of any price, so no digit is lost and the order is the decimal
        // order. Otherwise the digit-by-digit comparison.
        let scale = decimals.iter().map(Decimal::fraction_digits).max().unwrap_or(0);
        let keys: Option<Vec<i128>> = decimals.iter().map(|d| d.scaled(scale)).collect();
        let order = &mut self.order;
        match (keys, descending) {
            (Some(keys), true) => order.sort_by(|&a, &b| keys[b].cmp(&keys[a])),
            (Some(keys), false) => order.sort_by_key(|&i| keys[i]),
            (None, true) => order.sort_by(|&a, &b| decimals[b].cmp(&decimals[a])),
            (None, false) => order.sort_by(|&a, &b| decimals[a].cmp(&decimals[b])),
        }
        Ok(&self.order)
    }

    /// The common case in one pass: every price plain (`[+-]digits.digits`, at most 18 digits
    /// on each side of the point), read straight into the exact integer price × 10^18
    /// (negated for a descending order). False when a price is not plain: the general path
    /// then decides (and finds the first price that is not a decimal).
    fn plain_keys<'a>(&mut self, count: usize, price: &impl Fn(usize) -> &'a str, descending: bool) -> bool {
        self.keyed.clear();
        for i in 0..count {
            let Some(value) = plain_scaled(price(i)) else { return false };
            self.keyed.push((if descending { -value } else { value }, i));
        }
        true
    }
}

/// A plain decimal times 10^18, exactly: `[+-]?` then up to 18 digits, then optionally `.`
/// and up to 18 digits, at least one digit in all (what `Decimal::parse` reads for such a
/// text). `None` for anything else.
#[inline]
fn plain_scaled(text: &str) -> Option<i128> {
    let bytes = text.as_bytes();
    let (negative, mut at) = match bytes.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let (int, int_digits) = plain_digits(bytes, &mut at)?;
    let (frac, frac_digits) = match bytes.get(at) {
        Some(b'.') => {
            at += 1;
            plain_digits(bytes, &mut at)?
        }
        _ => (0, 0),
    };
    if at != bytes.len() || int_digits + frac_digits == 0 {
        return None;
    }
    // Both parts below 10^18: the fraction scaled up to 18 places stays below 10^18 too.
    let magnitude = i128::from(int) * i128::from(POWERS_OF_TEN[PLAIN_DIGITS])
        + i128::from(frac * POWERS_OF_TEN[PLAIN_DIGITS - frac_digits]);
    Some(if negative { -magnitude } else { magnitude })
}

/// Most digits on each side of the point that `plain_scaled` reads.
const PLAIN_DIGITS: usize = 18;

/// 10^0 … 10^18.
const POWERS_OF_TEN: [u64; PLAIN_DIGITS + 1] = {
    let mut powers = [1u64; PLAIN_DIGITS + 1];
    let mut i = 1;
    while i <= PLAIN_DIGITS {
        powers[i] = powers[i - 1] * 10;
        i += 1;
    }
    powers
};

/// The digits at `at` (at most `PLAIN_DIGITS`) as a number, and how many there were.
#[inline(always)]
fn plain_digits(bytes: &[u8], at: &mut usize) -> Option<(u64, usize)> {
    let start = *at;
    let mut value = 0u64;
    while let Some(&b) = bytes.get(*at) {
        if !b.is_ascii_digit() {
            break;
        }
        if *at - start == PLAIN_DIGITS {
            return None;
        }
        value = value * 10 + u64::from(b - b'0');
        *at += 1;
    }
    Some((value, *at - start))
}

fn parse_exponent(digits: &[u8]) -> Option<i64> {
    let (negative, digits) = match digits.first() {
        Some(b'-') => (true, &digits[1..]),
        Some(b'+') => (false, &digits[1..]),
        _ => (false, digits),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // Leading zeros are JSON (`1e0000000001` is 10): only the digits after them bound the size.
    let first = digits.iter().position(|b| *b != b'0').unwrap_or(digits.len());
    let digits = &digits[first..];
    if digits.len() > 7 {
        return None;
    }
    if digits.is_empty() {
        return Some(0);
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
    fn book_order_is_the_decimal_order_with_or_without_integer_keys() {
        // The same prices, once within the integer keys' reach and once with a price that
        // is not (60 digits): the same order, equal prices in the venue's order.
        let prices = ["65000.1", "6.5e4", "-3", "0.00001", "65000.10", "9.5", "10", "0", "-0.0", "1e-4", "65000"];
        let long = format!("1{}", "0".repeat(59));
        for descending in [false, true] {
            let order = book_order(&prices, descending).unwrap();
            let mut with_long: Vec<&str> = prices.to_vec();
            with_long.push(&long);
            let mut long_order = book_order(&with_long, descending).unwrap();
            long_order.retain(|&i| i < prices.len());
            assert_eq!(order, long_order);
            // Against a plain comparison sort of the decimals.
            let mut expected: Vec<usize> = (0..prices.len()).collect();
            expected.sort_by(|&a, &b| {
                let ordering = d(prices[a]).cmp(&d(prices[b]));
                if descending { ordering.reverse() } else { ordering }
            });
            assert_eq!(order, expected, "descending {descending}");
        }
        assert_eq!(book_order(&["1", "x", "2"], false), Err(1));
        assert_eq!(book_order(&["1", "1e", "x"], false), Err(1), "the first price that is not a decimal");
        for (text, scaled) in [
            ("65010.3", 65_010_300_000_000_000_000_000i128),
            ("-.5", -500_000_000_000_000_000),
            ("+7.", 7_000_000_000_000_000_000),
        ] {
            assert_eq!(plain_scaled(text), Some(scaled), "{text}");
        }
        for text in ["", "-", ".", "1e5", "1.2.3", " 1", "1234567890123456789", "0.1234567890123456789", "--1"] {
            assert_eq!(plain_scaled(text), None, "{text}");
        }
        // Random books of random notations (a fixed generator), against the plain sort.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..2000 {
            let count = 1 + next(25) as usize;
            let texts: Vec<String> = (0..count)
                .map(|_| {
                    let int = next(100_000);
                    let frac = next(1000);
                    match next(8) {
                        0 => format!("{int}"),
                        6 => format!("{int}{:018}.{frac}", next(1000)),
                        7 => format!("-0.{:015}{frac}", next(1000)),
                        1 => format!("{int}.{frac:03}"),
                        2 => format!("-{int}.{frac}"),
                        3 => format!("{int}e{}", next(40) as i64 - 20),
                        4 => format!("0.{}{frac}", "0".repeat(next(40) as usize)),
                        _ => format!("{int}.{frac}0"),
                    }
                })
                .collect();
            let prices: Vec<&str> = texts.iter().map(String::as_str).collect();
            for descending in [false, true] {
                let mut expected: Vec<usize> = (0..count).collect();
                expected.sort_by(|&a, &b| {
                    let ordering = d(prices[a]).cmp(&d(prices[b]));
                    if descending { ordering.reverse() } else { ordering }
                });
                assert_eq!(book_order(&prices, descending).unwrap(), expected, "{prices:?}");
            }
        }
        assert_eq!(d("1.5e1").scaled(1), Some(150));
        assert_eq!(d("-0.25").scaled(3), Some(-250));
        assert_eq!(d("1e38").scaled(0), None);
        assert_eq!(d("9".repeat(38).as_str()).scaled(0), Some(10i128.pow(38) - 1));
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
        // JSON allows leading zeros in an exponent: their count says nothing of its size.
        assert_eq!(d("1e000000001"), d("10"));
        assert_eq!(d("25E-0000000000000000002"), d("0.25"));
        assert!(Decimal::parse("1e0001000001").is_none(), "beyond the largest exponent");
    }

    #[test]
    fn steps_are_written_plainly() {
        assert_eq!(step_text(0), "1");
        assert_eq!(step_text(1), "0.1");
        assert_eq!(step_text(4), "0.0001");
    }
}
