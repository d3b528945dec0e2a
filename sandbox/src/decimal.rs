//! Exact decimals for prices, quantities and money: an integer count of 10⁻¹² units.
//!
//! The venue speaks decimal strings; floats would turn a tick check (`65000.10` on a 0.01
//! tick) into a rounding question. Twelve fractional digits cover every tick and lot the
//! venue lists (at most nine) with room for fees (a basis point of a lot's value).
//! Magnitudes are bounded at parse time (integer part below 10¹²), and products and
//! quotients are computed in two halves, so no operation on parsed values overflows.

use std::fmt;

const DIGITS: u32 = 12;
const ONE: i128 = 1_000_000_000_000;
/// Integer parts at or above this are refused by `parse` (10¹²).
const MAX_INT: i128 = 1_000_000_000_000;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub(crate) struct Dec(i128);

/// Why a text is not a decimal the sandbox can hold.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum DecError {
    /// Not `[-]digits[.digits]`.
    Malformed,
    /// More than twelve significant fractional digits: finer than any tick.
    TooPrecise,
    /// An integer part of 10¹² or more.
    TooLarge,
}

impl Dec {
    pub(crate) const ZERO: Dec = Dec(0);

    pub(crate) fn from_int(n: i64) -> Dec {
        Dec(i128::from(n) * ONE)
    }

    /// 10^-`places` (the tick of `price_tick_decimals`, the lot of `qty_tick_decimals`).
    pub(crate) fn step(places: u32) -> Dec {
        Dec(ONE / 10i128.pow(places.min(DIGITS)))
    }

    /// `[-]digits[.digits]`: no exponent, no `+`, no spaces, no bare leading or trailing dot.
    pub(crate) fn parse(text: &str) -> Result<Dec, DecError> {
        let (negative, body) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (int, frac) = match body.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (body, None),
        };
        let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
        if !digits(int) || frac.is_some_and(|f| !digits(f)) {
            return Err(DecError::Malformed);
        }
        let int_value = int.trim_start_matches('0');
        if int_value.len() > 12 {
            return Err(DecError::TooLarge);
        }
        let int_value: i128 =
            if int_value.is_empty() { 0 } else { int_value.parse().map_err(|_| DecError::Malformed)? };
        if int_value >= MAX_INT {
            return Err(DecError::TooLarge);
        }
        let frac = frac.unwrap_or("");
        let significant = frac.trim_end_matches('0');
        if significant.len() > DIGITS as usize {
            return Err(DecError::TooPrecise);
        }
        let mut frac_value: i128 = 0;
        for (i, b) in significant.bytes().enumerate() {
            frac_value += i128::from(b - b'0') * 10i128.pow(DIGITS - 1 - i as u32);
        }
        let raw = int_value * ONE + frac_value;
        Ok(Dec(if negative { -raw } else { raw }))
    }

    pub(crate) fn is_zero(self) -> bool {
        self.0 == 0
    }

    pub(crate) fn is_positive(self) -> bool {
        self.0 > 0
    }

    pub(crate) fn is_negative(self) -> bool {
        self.0 < 0
    }

    pub(crate) fn abs(self) -> Dec {
        Dec(self.0.abs())
    }

    pub(crate) fn min(self, other: Dec) -> Dec {
        if self <= other { self } else { other }
    }

    pub(crate) fn max(self, other: Dec) -> Dec {
        if self >= other { self } else { other }
    }

    /// Negative values become zero (a price or margin the formulas would push below zero).
    pub(crate) fn max_zero(self) -> Dec {
        self.max(Dec::ZERO)
    }

    /// Exact product, truncated to twelve places.
    pub(crate) fn mul(self, other: Dec) -> Dec {
        let (whole, part) = (self.0 / ONE, self.0 % ONE);
        Dec(whole * other.0 + part * other.0 / ONE)
    }

    /// Quotient truncated to twelve places; zero for a zero divisor (callers never divide by
    /// a zero quantity, but a venue must not panic on its own arithmetic).
    pub(crate) fn div(self, other: Dec) -> Dec {
        if other.0 == 0 {
            return Dec::ZERO;
        }
        let (whole, rest) = (self.0 / other.0, self.0 % other.0);
        Dec(whole * ONE + rest * ONE / other.0)
    }

    /// True when `self` is a whole number of `step`s.
    pub(crate) fn is_multiple_of(self, step: Dec) -> bool {
        step.0 != 0 && self.0 % step.0 == 0
    }

    /// The multiple of `step` at or below `self`.
    pub(crate) fn floor_to(self, step: Dec) -> Dec {
        Dec(self.0.div_euclid(step.0) * step.0)
    }

    /// The multiple of `step` at or above `self`.
    pub(crate) fn ceil_to(self, step: Dec) -> Dec {
        let floor = self.floor_to(step);
        if floor == self { floor } else { Dec(floor.0 + step.0) }
    }

    /// Fixed `places` fractional digits, rounded half away from zero (`"65000.00"`, `"0.0100"`).
    pub(crate) fn fixed(self, places: u32) -> String {
        let places = places.min(DIGITS);
        let unit = 10i128.pow(DIGITS - places);
        let magnitude = self.0.abs();
        let rounded = (magnitude + unit / 2) / unit;
        let scale = 10i128.pow(places);
        let sign = if self.0 < 0 && rounded != 0 { "-" } else { "" };
        if places == 0 {
            return format!("{sign}{rounded}");
        }
        format!("{sign}{}.{:0width$}", rounded / scale, rounded % scale, width = places as usize)
    }

    /// The shortest exact form: no trailing zeros (`"65000"`, `"0.01"`, `"-1.5"`).
    pub(crate) fn plain(self) -> String {
        let text = self.fixed(DIGITS);
        let text = text.trim_end_matches('0');
        text.strip_suffix('.').unwrap_or(text).to_owned()
    }

    /// The nearest float, for the few fields the venue sends as JSON numbers (kline bars,
    /// `price_change_pct`). Read from the exact text, so 65000.25 prints back as 65000.25.
    pub(crate) fn to_f64(self) -> f64 {
        self.plain().parse().unwrap_or(0.0)
    }
}

impl std::ops::Add for Dec {
    type Output = Dec;
    fn add(self, other: Dec) -> Dec {
        Dec(self.0 + other.0)
    }
}

impl std::ops::Sub for Dec {
    type Output = Dec;
    fn sub(self, other: Dec) -> Dec {
        Dec(self.0 - other.0)
    }
}

impl std::ops::Neg for Dec {
    type Output = Dec;
    fn neg(self) -> Dec {
        Dec(-self.0)
    }
}

impl std::ops::AddAssign for Dec {
    fn add_assign(&mut self, other: Dec) {
        self.0 += other.0;
    }
}

impl std::ops::SubAssign for Dec {
    fn sub_assign(&mut self, other: Dec) {
        self.0 -= other.0;
    }
}

impl std::iter::Sum for Dec {
    fn sum<I: Iterator<Item = Dec>>(iter: I) -> Dec {
        iter.fold(Dec::ZERO, |a, b| a + b)
    }
}

impl fmt::Debug for Dec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.plain())
    }
}

impl fmt::Display for Dec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.plain())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    fn cmp_text(a: &str, b: &str) -> Ordering {
        Dec::parse(a).unwrap().cmp(&Dec::parse(b).unwrap())
    }

    fn d(s: &str) -> Dec {
        Dec::parse(s).unwrap()
    }

    #[test]
    fn parses_and_prints() {
        for (text, plain) in [("65000", "65000"), ("0.0100", "0.01"), ("-1.50", "-1.5"), ("007.5", "7.5"), ("0", "0")] {
            assert_eq!(d(text).plain(), plain);
        }
        assert_eq!(d("65000").fixed(2), "65000.00");
        assert_eq!(d("0.01").fixed(4), "0.0100");
        assert_eq!(d("2.345").fixed(2), "2.35");
        assert_eq!(d("-2.345").fixed(2), "-2.35");
        assert_eq!(d("-0.001").fixed(2), "0.00");
        for bad in ["", "-", "1e3", ".5", "5.", " 1", "1.2.3", "+1", "0x10", "١"] {
            assert_eq!(Dec::parse(bad), Err(DecError::Malformed), "{bad:?}");
        }
        assert_eq!(Dec::parse("0.0000000000001"), Err(DecError::TooPrecise));
        assert_eq!(d("0.1000000000000000000").plain(), "0.1");
        assert_eq!(Dec::parse("1000000000000"), Err(DecError::TooLarge));
        assert_eq!(d("000000000000000000001").plain(), "1");
    }

    #[test]
    fn arithmetic_and_steps() {
        assert_eq!(d("65000.25").mul(d("0.0123")).plain(), "799.503075");
        assert_eq!(d("1").div(d("3")).plain(), "0.333333333333");
        assert_eq!(d("799.503075").div(d("0.0123")).plain(), "65000.25");
        assert!(d("65000.10").is_multiple_of(Dec::step(2)));
        assert!(!d("65000.105").is_multiple_of(Dec::step(2)));
        assert_eq!(d("65000.251").ceil_to(d("0.5")).plain(), "65000.5");
        assert_eq!(d("65000.251").floor_to(d("0.5")).plain(), "65000");
        assert_eq!(d("-0.3").floor_to(d("0.5")).plain(), "-0.5");
        assert_eq!(cmp_text("9.95", "10.05"), Ordering::Less);
        assert_eq!((d("65000.25").to_f64(), d("-0.003").to_f64()), (65000.25, -0.003));
        let big = d("999999999999.999999999999");
        assert!(big.mul(big).is_positive(), "no overflow at the bounds");
    }
}
