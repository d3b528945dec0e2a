//! The sandbox clock: the system clock plus a configurable offset.
//!
//! The offset exists so a test can run the venue "in the future" or "in the past" and prove
//! that the client measures the venue's clock (`GET {perps}/api/kline/time`) and signs with
//! it, instead of trusting its own clock. Everything time-related in the sandbox (challenge
//! `iat`/`exp`, token expiry, the body-signature timestamp window) reads this one clock.

use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    offset_ms: i64,
}

impl Clock {
    pub(crate) fn new(offset_ms: i64) -> Clock {
        Clock { offset_ms }
    }

    /// Milliseconds since the Unix epoch, as the venue sees it.
    pub(crate) fn now_ms(&self) -> i64 {
        let system = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        system.saturating_add(self.offset_ms)
    }
}

/// RFC 3339 / ISO 8601 UTC with milliseconds, the shape JavaScript's `toISOString` gives
/// (`2025-01-02T03:04:05.678Z`), which is what EIP-4361 `Issued At` carries in practice.
pub(crate) fn iso8601_utc_ms(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let ms = unix_ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z", sod / 3600, (sod / 60) % 60, sod % 60)
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

#[cfg(test)]
mod tests {
    use super::iso8601_utc_ms;

    #[test]
    fn formats_known_instants() {
        assert_eq!(iso8601_utc_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601_utc_ms(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso8601_utc_ms(1_735_787_045_678), "2025-01-02T03:04:05.678Z");
    }
}
