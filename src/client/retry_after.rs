//! The `Retry-After` header (RFC 9110 §10.2.3): a number of seconds, or an HTTP date
//! (`Sun, 06 Nov 1994 08:49:37 GMT`, or one of the two obsolete forms RFC 9110 §5.6.7 makes
//! every recipient accept). The venue does not document one; when a 429 or 503
//! carries it, the caller reads it through `perps_error_retry_after_ms`.

/// Milliseconds to wait, from the header's value and the current time (a date in
/// the past means 0). `None` when the value is neither form. A number of seconds too large
/// to count in milliseconds is `i64::MAX`: a wait longer than any, as RFC 9111 §1.2.2 has a
/// cache read an overflowing delta-seconds, not no wait at all (the callers cap what they
/// wait and say so).
pub fn millis(value: &str, now_ms: i64) -> Option<i64> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        let seconds = value.parse::<i64>().unwrap_or(i64::MAX);
        return Some(seconds.saturating_mul(1000));
    }
    let date_ms = http_date_ms(value, now_ms)?;
    Some((date_ms - now_ms).max(0))
}

/// An HTTP date as Unix milliseconds. RFC 9110 §5.6.7: a recipient MUST accept all three
/// forms — the IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) senders use, and the obsolete
/// RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`) forms
/// that older servers and gateways still send. `now_ms` places a two-digit year.
fn http_date_ms(value: &str, now_ms: i64) -> Option<i64> {
    let parts: Vec<&str> = value.split(' ').collect();
    let (day, month, year, time) = match parts.as_slice() {
        [weekday, day, month, year, time, "GMT"] if weekday.len() == 4 && weekday.ends_with(',') => {
            (number(day, 2)?, *month, number(year, 4)?, *time)
        }
        [weekday, date, time, "GMT"] if weekday.len() > 4 && weekday.ends_with(',') => {
            let [day, month, year] = date.split('-').collect::<Vec<_>>()[..] else { return None };
            // The century is settled below, once the rest of the date is known.
            (number(day, 2)?, month, this_century(now_ms) + 100 + number(year, 2)?, *time)
        }
        // asctime pads a one-digit day with a space (`Nov  6`): an empty part before it.
        [weekday, month, "", day, time, year] if weekday.len() == 3 => {
            (number(day, 1)?, *month, number(year, 4)?, *time)
        }
        [weekday, month, day, time, year] if weekday.len() == 3 => (number(day, 2)?, *month, number(year, 4)?, *time),
        _ => return None,
    };
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let month = MONTHS.iter().position(|m| *m == month)? as i64 + 1;
    let clock: Vec<&str> = time.split(':').collect();
    let [h, m, s] = clock.as_slice() else { return None };
    let (h, m, s) = (number(h, 2)?, number(m, 2)?, number(s, 2)?);
    if !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let at = |year| (days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + s) * 1000;
    // RFC 9110 §5.6.7: a two-digit year (RFC 850) that would put the date more than 50 years
    // ahead is the most recent past year with the same last two digits. Tried from the next
    // century down, so that near a century's end ("00" in 2099) it is the coming year, not
    // the one a century ago.
    const FIFTY_YEARS_MS: i64 = 50 * 146_097 / 400 * 86_400_000;
    let mut year = year;
    while parts.len() == 4 && at(year) > now_ms.saturating_add(FIFTY_YEARS_MS) {
        year -= 100;
    }
    Some(at(year))
}

/// `text` as a number of exactly `digits` ASCII digits.
fn number(text: &str, digits: usize) -> Option<i64> {
    (text.len() == digits && text.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok()).flatten()
}

/// The first year of the current century (2000 until 2099), from the time now.
fn this_century(now_ms: i64) -> i64 {
    let this_year = 1970 + now_ms.div_euclid(86_400_000) * 400 / 146_097;
    this_year - this_year.rem_euclid(100)
}

/// Days since 1970-01-01 from a civil date (proleptic Gregorian).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let (y, mp) = if month <= 2 { (year - 1, month + 9) } else { (year, month - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + (153 * mp + 2) / 5 + day - 1;
    era * 146_097 + doe - 719_468
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
            "Sunday, 06 Nov 1994 08:49:37 GMT",
            "Sun,  6 Nov 1994 08:49:37 GMT",
            "Sun Nov 6 08:49:37 1994",
            "Sunday, 6-Nov-94 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 UTC",
        ] {
            assert_eq!(millis(bad, 0), None, "{bad}");
        }
        // Too many seconds to count in milliseconds: the longest wait, not none (RFC 9111 §1.2.2).
        assert_eq!(millis("99999999999999999999", 0), Some(i64::MAX));
        assert_eq!(millis("9223372036854775807", 0), Some(i64::MAX));
        assert_eq!(millis("9223372036854776", 0), Some(i64::MAX));
        assert_eq!(millis("9223372036854775", 0), Some(9_223_372_036_854_775_000));
    }

    #[test]
    fn a_two_digit_year_near_a_centurys_end_is_the_coming_one() {
        // 2099-06-01T00:00:00Z: "00" is 2000-11-06 (99 years ago) by the last century's rule
        // alone; RFC 9110 §5.6.7 makes it 2100-11-06, under 50 years ahead.
        let now_2099 = 4_083_955_200_000;
        let wait = millis("Saturday, 06-Nov-00 08:49:37 GMT", now_2099).unwrap();
        // 2099-06-01 to 2100-11-06 08:49:37: 523 days and a bit.
        assert_eq!(wait, (523 * 86_400 + 8 * 3600 + 49 * 60 + 37) * 1000);
        // "48" in 2099 is 2148, under 50 years ahead; "49" would be 2149-11, over 50 years
        // ahead, so it is 2049, long past: no wait.
        assert!(millis("Friday, 06-Nov-48 08:49:37 GMT", now_2099).unwrap() > 49 * 365 * 86_400_000);
        assert_eq!(millis("Saturday, 06-Nov-49 08:49:37 GMT", now_2099), Some(0));
    }

    #[test]
    fn the_obsolete_date_forms_are_read_as_rfc_9110_requires() {
        // 784111777 s is Sun, 06 Nov 1994 08:49:37 GMT.
        let now = 784_111_777_000 - 1500;
        assert_eq!(millis("Sunday, 06-Nov-94 08:49:37 GMT", now), Some(1500));
        assert_eq!(millis("Sun Nov  6 08:49:37 1994", now), Some(1500));
        assert_eq!(millis("Sun Nov 16 08:49:37 1994", now), Some(10 * 86_400_000 + 1500));
        // A two-digit year more than 50 years ahead is the last century's: in 2026, "76" is
        // 1976 (long past: wait 0), "75" is 2075.
        let now_2026 = 1_780_000_000_000;
        assert_eq!(millis("Sunday, 06-Nov-76 08:49:37 GMT", now_2026), Some(0));
        let in_2075 = millis("Wednesday, 06-Nov-75 08:49:37 GMT", now_2026).unwrap();
        assert!((48 * 365 * 86_400_000..50 * 365 * 86_400_000).contains(&in_2075), "{in_2075}");
    }
}
