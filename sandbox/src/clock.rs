//! The venue clock: the system clock plus an offset that can change while the venue runs.
//!
//! The offset exists so a test can run the venue "in the future" or "in the past" and prove
//! that the client measures the venue's clock (`GET /api/kline/time`) and signs with it,
//! instead of trusting its own clock. Everything time-related in the sandbox (challenge
//! `iat`/`exp`, token expiry, the body-signature timestamp window, order and trade times)
//! reads this one clock.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Debug)]
pub(crate) struct Clock {
    offset_ms: AtomicI64,
}

impl Clock {
    pub(crate) fn new(offset_ms: i64) -> Clock {
        Clock { offset_ms: AtomicI64::new(offset_ms) }
    }

    pub(crate) fn set_offset_ms(&self, offset_ms: i64) {
        self.offset_ms.store(offset_ms, Ordering::SeqCst);
    }

    pub(crate) fn offset_ms(&self) -> i64 {
        self.offset_ms.load(Ordering::SeqCst)
    }

    /// Microseconds since the Unix epoch, as the venue sees it (order and trade times carry µs).
    pub(crate) fn now_us(&self) -> i64 {
        let system = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        system.saturating_add(self.offset_ms().saturating_mul(1000))
    }

    /// Milliseconds since the Unix epoch, as the venue sees it.
    pub(crate) fn now_ms(&self) -> i64 {
        self.now_us().div_euclid(1000)
    }
}

/// RFC 3339 / ISO 8601 UTC with milliseconds, the shape JavaScript's `toISOString` gives
/// (`2025-01-02T03:04:05.678Z`), which is what EIP-4361 `Issued At` carries in practice.
pub(crate) fn iso8601_utc_ms(unix_ms: i64) -> String {
    let (date, ms) = (unix_ms.div_euclid(1000), unix_ms.rem_euclid(1000));
    format!("{}.{ms:03}Z", date_time(date))
}

/// ISO 8601 UTC with microseconds, as the venue writes `created_at` / `updated_at`
/// (`2025-08-11T03:35:25.559151Z`).
pub(crate) fn iso8601_utc_us(unix_us: i64) -> String {
    let (secs, us) = (unix_us.div_euclid(1_000_000), unix_us.rem_euclid(1_000_000));
    format!("{}.{us:06}Z", date_time(secs))
}

/// ISO 8601 UTC to the second (`2025-08-11T08:00:00Z`), the form of `next_funding_time` in
/// the docs' `query_symbol_market` example.
pub(crate) fn iso8601_utc_s(unix_secs: i64) -> String {
    format!("{}Z", date_time(unix_secs))
}

/// Days since 1970-01-01 of the first day of the month that holds day `days`.
pub(crate) fn month_start(days: i64) -> i64 {
    let (y, m, _) = civil_from_days(days);
    days_from_civil(y, m, 1)
}

fn date_time(unix_secs: i64) -> String {
    let (days, sod) = (unix_secs.div_euclid(86_400), unix_secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}", sod / 3600, (sod / 60) % 60, sod % 60)
}

/// Parses an ISO 8601 / RFC 3339 date-time into Unix microseconds: `YYYY-MM-DDTHH:MM:SS`,
/// optional fraction (any precision; digits beyond µs are dropped), then `Z` or `±HH:MM`.
/// A space instead of `T` and a lower-case `t`/`z` are accepted (RFC 3339 allows them).
pub(crate) fn parse_iso8601(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = b.get(from..from + len)?;
        part.iter().all(u8::is_ascii_digit).then(|| std::str::from_utf8(part).ok()?.parse().ok())?
    };
    let sep = |at: usize, allowed: &[u8]| b.get(at).is_some_and(|c| allowed.contains(c));
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut at = 19;
    let mut micros = 0i64;
    if sep(at, b".") {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            if at - start < 6 {
                micros = micros * 10 + i64::from(b[at] - b'0');
            }
            at += 1;
        }
        if at == start {
            return None;
        }
        for _ in (at - start)..6 {
            micros *= 10;
        }
    }
    let offset_secs = match b.get(at..)? {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (h, m) = (num(at + 1, 2)?, num(at + 4, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            let secs = h * 3600 + m * 60;
            if *sign == b'+' { secs } else { -secs }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_secs;
    Some(secs * 1_000_000 + micros)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar
/// (H. Hinnant's `civil_from_days`), so the sandbox needs no date crate.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The inverse of `civil_from_days` (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(iso8601_utc_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601_utc_ms(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso8601_utc_ms(1_735_787_045_678), "2025-01-02T03:04:05.678Z");
        assert_eq!(iso8601_utc_us(1_754_883_325_559_151), "2025-08-11T03:35:25.559151Z");
        assert_eq!(iso8601_utc_s(1_754_899_200), "2025-08-11T08:00:00Z");
        // 2024-02-29 (day 19782) is in February, which began on day 19754; 1970-01-01 is day 0.
        assert_eq!((month_start(19_782), month_start(0), month_start(31)), (19_754, 0, 31));
    }

    #[test]
    fn parses_what_clients_send() {
        let at = 1_754_883_325_000_000;
        assert_eq!(parse_iso8601("2025-08-11T03:35:25Z"), Some(at));
        assert_eq!(parse_iso8601("2025-08-11T03:35:25.559151Z"), Some(at + 559_151));
        assert_eq!(parse_iso8601("2025-08-11T03:35:25.559151123Z"), Some(at + 559_151));
        assert_eq!(parse_iso8601("2025-08-11T03:35:25.5Z"), Some(at + 500_000));
        assert_eq!(parse_iso8601("2025-08-11T05:35:25+02:00"), Some(at));
        assert_eq!(parse_iso8601("2025-08-11 03:35:25z"), Some(at));
        assert_eq!(parse_iso8601("2000-02-29T00:00:00Z"), Some(951_782_400_000_000));
        for bad in [
            "2025-08-11",
            "2025-08-11T03:35:25",
            "2025-02-30T00:00:00Z",
            "2025-08-11T24:00:00Z",
            "2025-08-11T03:35:25.Z",
            "2025-08-11T03:35:25+0200",
            "1754883325",
            "2025-08-11T03:35:25Zjunk",
        ] {
            assert_eq!(parse_iso8601(bad), None, "{bad}");
        }
        for us in [0, 951_782_400_123_456, 1_754_883_325_559_151, 4_102_444_800_000_000] {
            assert_eq!(parse_iso8601(&iso8601_utc_us(us)), Some(us));
        }
    }
}
