//! The `Retry-After` header (RFC 9110 §10.2.3): a number of seconds, or an HTTP date
//! (`Sun, 06 Nov 1994 08:49:37 GMT`). The venue does not document one; when a 429 or 503
//! carries it, the caller reads it through `perps_error_retry_after_ms`.

/// Milliseconds to wait, from the header's value and the current time (a date in
/// the past means 0). `None` when the value is neither form.
pub fn millis(value: &str, now_ms: i64) -> Option<i64> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        let seconds: i64 = value.parse().ok()?;
        return seconds.checked_mul(1000);
    }
    let date_ms = http_date_ms(value)?;
    Some((date_ms - now_ms).max(0))
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) as Unix milliseconds.
fn http_date_ms(value: &str) -> Option<i64> {
    let parts: Vec<&str> = value.split(' ').collect();
    let [weekday, day, month, year, time, "GMT"] = parts.as_slice() else { return None };
    if weekday.len() != 4 || !weekday.ends_with(',') || day.len() != 2 || year.len() != 4 {
        return None;
    }
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let month = MONTHS.iter().position(|m| m == month)? as i64 + 1;
    let number = |s: &str| -> Option<i64> { s.bytes().all(|b| b.is_ascii_digit()).then(|| s.parse().ok()).flatten() };
    let (day, year) = (number(day)?, number(year)?);
    let clock: Vec<&str> = time.split(':').collect();
    let [h, m, s] = clock.as_slice() else { return None };
    if h.len() != 2 || m.len() != 2 || s.len() != 2 {
        return None;
    }
    let (h, m, s) = (number(h)?, number(m)?, number(s)?);
    if !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    // Days since 1970-01-01 from the civil date (proleptic Gregorian).
    let (y, mp) = if month <= 2 { (year - 1, month + 9) } else { (year, month - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + (153 * mp + 2) / 5 + day - 1;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3600 + m * 60 + s) * 1000)
}

#[cfg(test)]
mod tests {
    use super::millis;

    #[test]
    fn seconds_and_dates_are_read() {
        assert_eq!(millis("2", 0), Some(2000));
        assert_eq!(millis(" 0 ", 0), Some(0));
        // 784111777 s is Sun, 06 Nov 1994 08:49:37 GMT.
        assert_eq!(millis("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777_000 - 1500), Some(1500));
        assert_eq!(millis("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777_000 + 5000), Some(0));
        for bad in [
            "",
            "-1",
            "1.5",
            "soon",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "99999999999999999999",
        ] {
            assert_eq!(millis(bad, 0), None, "{bad}");
        }
    }
}
