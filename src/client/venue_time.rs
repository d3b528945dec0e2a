//! The venue's clock as `GET /api/kline/time` gives it: "a bare number, in seconds" (the
//! documents' example is an integer). Read as the forms a server may write it: an integer,
//! a decimal with a fraction (its milliseconds are used), either one inside a JSON string.
//! Exponents, signs and anything else are refused: a clock the client cannot read exactly
//! must not move every request's timestamp.

/// Seconds after 9999-12-31T23:59:59Z: not a clock (and the arithmetic would overflow).
const LAST_SECOND: i64 = 253_402_300_799;

/// The venue's time in Unix milliseconds, at the middle of the second it named when it
/// gave whole seconds (the second was truncated), or as written when it gave a fraction.
pub fn millis(body: &str) -> Result<i64, &'static str> {
    let text = body.trim();
    let text = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text);
    let (whole, fraction) = text.split_once('.').map_or((text, None), |(w, f)| (w, Some(f)));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || fraction.is_some_and(|f| !digits(f)) {
        return Err("the answer is not a number of seconds");
    }
    let seconds = whole.parse::<i64>().ok().filter(|s| *s <= LAST_SECOND).ok_or("the venue's time is out of range")?;
    let in_second = match fraction {
        // Its first three digits; the rest is below what the timestamps carry.
        Some(fraction) => {
            fraction.bytes().chain(std::iter::repeat(b'0')).take(3).fold(0, |ms, d| ms * 10 + i64::from(d - b'0'))
        }
        None => 500,
    };
    Ok(seconds * 1000 + in_second)
}

#[cfg(test)]
mod tests {
    use super::millis;

    #[test]
    fn the_forms_a_server_may_write_its_seconds_in() {
        assert_eq!(millis("1795589136"), Ok(1_795_589_136_500));
        assert_eq!(millis(" 1795589136\n"), Ok(1_795_589_136_500));
        assert_eq!(millis("1795589136.12"), Ok(1_795_589_136_120));
        assert_eq!(millis("1795589136.1239"), Ok(1_795_589_136_123));
        assert_eq!(millis("1795589136.0"), Ok(1_795_589_136_000));
        assert_eq!(millis(r#""1795589136""#), Ok(1_795_589_136_500));
        assert_eq!(millis(r#""1795589136.5""#), Ok(1_795_589_136_500));
        assert_eq!(millis("0"), Ok(500));
        assert_eq!(millis("253402300799"), Ok(253_402_300_799_500));
    }

    #[test]
    fn anything_else_is_refused() {
        for body in [
            "",
            "now",
            "{}",
            "-1",
            "+1",
            "1e12",
            "17e8",
            "1.",
            ".5",
            "1.2.3",
            "1_000",
            r#""1"#,
            "0x10",
            "1 2",
            "253402300800",
            "9223372036854775807",
            "99999999999999999999",
        ] {
            assert!(millis(body).is_err(), "{body:?}");
        }
    }
}
