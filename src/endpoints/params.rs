//! An endpoint's parameters: the caller's JSON object checked against the endpoint's table
//! entry before anything is sent, then written once — as a compact JSON body for a POST
//! (the bytes signed and sent), or as a percent-encoded query string for a GET.
//!
//! Refusals are `PERPS_INVALID_ARGUMENT` and name the endpoint and the parameter: unknown
//! and duplicated names, `null`, wrong JSON types (an id in a string, a float), values out
//! of range, times that are not ISO-8601, and the rules across parameters.
//!
//! Values are sent as given, but for times: those are sent as RFC 3339 date-times with an
//! offset (what the venue's documents show and live clients send), so the ISO-8601 forms
//! RFC 3339 lacks are completed — a time without an offset (UTC) gets `Z`, a date alone
//! becomes midnight UTC, an offset `+0800` or `+08` becomes `+08:00` (see [`read_time`]).

use super::{Kind, Param, Rule, Spec, query};
use crate::error::{Error, Result};
use crate::fields::{self, Checked, json_type};
use crate::json_entries::{self, Problem};
use serde_json::Value;
use std::fmt::Write as _;

/// Validated parameters, in the table's order.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    entries: Vec<(&'static str, Value)>,
}

impl Params {
    /// Check `params_json` (None, empty or blank: no parameters) against `spec`.
    pub fn parse(spec: &Spec, params_json: Option<&str>) -> Result<Params> {
        let refuse = |message: String| Error::invalid_argument(format!("{}: {message}", spec.name));
        let text = params_json.map(str::trim).unwrap_or("");
        let given = if text.is_empty() {
            Vec::new()
        } else {
            json_entries::parse(text).map_err(|problem| {
                refuse(match problem {
                    Problem::Duplicate(text) => format!("{text} in params_json"),
                    Problem::NotObject => "params_json must be a JSON object (or NULL for none)".to_owned(),
                    Problem::Syntax(text) => format!("params_json is not valid JSON: {text}"),
                    Problem::Trailing(text) => format!("params_json has trailing characters: {text}"),
                })
            })?
        };
        for (name, _) in &given {
            if !spec.params.iter().any(|p| p.name == name) {
                let mut message =
                    json_entries::unknown_name_message("parameter", name, spec.params.iter().map(|p| p.name));
                if spec.params.is_empty() {
                    message.push_str(": it takes no parameters");
                } else {
                    let known: Vec<&str> = spec.params.iter().map(|p| p.name).collect();
                    write!(message, "; known: {}", known.join(", ")).expect("writing to a String");
                }
                return Err(refuse(message));
            }
        }
        let mut entries = Vec::with_capacity(given.len());
        for param in spec.params {
            match given.iter().find(|(n, _)| n == param.name) {
                Some((_, value)) => {
                    check(param, value).map_err(refuse)?;
                    entries.push((param.name, wire_value(param, value)));
                }
                None if param.required => {
                    return Err(refuse(format!("missing required parameter \"{}\"", param.name)));
                }
                None => {}
            }
        }
        let params = Params { entries };
        params.check_rule(spec.rule).map_err(refuse)?;
        Ok(params)
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.entries.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The POST body: `{"name":value,…}` in the table's order, no spaces.
    pub fn to_body(&self) -> String {
        let mut json = String::with_capacity(64);
        json.push('{');
        for (i, (name, value)) in self.entries.iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            write!(json, "\"{name}\":{value}").expect("writing to a String");
        }
        json.push('}');
        json
    }

    /// The GET query: `?name=value&…` (empty without parameters), every value
    /// percent-encoded; strings as their text, integers as digits.
    pub fn to_query(&self) -> String {
        let mut out = String::with_capacity(64);
        for (i, (name, value)) in self.entries.iter().enumerate() {
            out.push(if i == 0 { '?' } else { '&' });
            query::push_encoded(&mut out, name);
            out.push('=');
            match value {
                Value::String(s) => query::push_encoded(&mut out, s),
                other => query::push_encoded(&mut out, &other.to_string()),
            }
        }
        out
    }

    fn check_rule(&self, rule: Rule) -> Checked {
        match rule {
            Rule::None => Ok(()),
            Rule::AnyOf(names) if names.iter().any(|n| self.get(n).is_some()) => Ok(()),
            Rule::AnyOf(names) => Err(format!(
                "give {} (none was given)",
                names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(" or ")
            )),
            Rule::StartBeforeEnd => {
                let (Some(start), Some(end)) = (self.get("start"), self.get("end")) else { return Ok(()) };
                let (start, end) = (start.as_str().unwrap_or(""), end.as_str().unwrap_or(""));
                let instant = |text: &str| read_time(text).ok().map(|time| time.instant);
                if instant(start) > instant(end) {
                    return Err(format!(
                        "\"start\" ({}) is after \"end\" ({})",
                        crate::error::excerpt(start),
                        crate::error::excerpt(end)
                    ));
                }
                Ok(())
            }
        }
    }
}

fn check(param: &Param, value: &Value) -> Checked {
    let name = param.name;
    if value.is_null() {
        return Err(format!("\"{name}\" is null; omit an optional parameter instead"));
    }
    match param.kind {
        Kind::Symbol => fields::symbol(name, value),
        Kind::ClOrdId => fields::visible_text(name, value),
        Kind::OrderId => fields::integer(name, value, 1, i64::MAX),
        Kind::Cursor => fields::integer(name, value, 0, i64::MAX),
        Kind::Limit(max) => fields::integer(name, value, 1, max),
        Kind::Leverage => fields::integer(name, value, 1, 1000),
        Kind::Millis(max) => fields::integer(name, value, 0, max),
        Kind::Enum(allowed) => fields::one_of(name, value, allowed),
        Kind::OrderStatus => fields::one_of(name, value, super::ORDER_STATUSES),
        Kind::Time => time(name, value),
        Kind::OrderIdList => list(name, value, |item, v| fields::integer(item, v, 1, i64::MAX)),
        Kind::ClOrdIdList => list(name, value, fields::visible_text),
    }
}

fn list(name: &str, value: &Value, each: impl Fn(&str, &Value) -> Checked) -> Checked {
    let Value::Array(items) = value else {
        return Err(format!("\"{name}\" must be a JSON array ({})", json_type(value)));
    };
    if items.is_empty() {
        return Err(format!("\"{name}\" is an empty list"));
    }
    for (i, item) in items.iter().enumerate() {
        each(&format!("{name}[{i}]"), item)?;
    }
    Ok(())
}

/// The value sent for a checked parameter: a time in its RFC 3339 form, the status
/// `cancelled` as the venue's `canceled`, anything else as given.
fn wire_value(param: &Param, value: &Value) -> Value {
    match (param.kind, value.as_str()) {
        (Kind::Time, Some(text)) => match read_time(text) {
            Ok(time) => Value::String(time.rfc3339),
            Err(_) => value.clone(),
        },
        (Kind::OrderStatus, Some("cancelled")) => Value::String("canceled".to_owned()),
        _ => value.clone(),
    }
}

const TIME_EXAMPLE: &str = "like \"2026-01-02T03:04:05Z\", \"2026-01-02T03:04:05.250+08:00\", \
                            \"2026-01-02T03:04:05\" (UTC) or \"2026-01-02\" (midnight UTC)";

fn time(name: &str, value: &Value) -> Checked {
    let Some(text) = value.as_str() else {
        return Err(format!("\"{name}\" must be an ISO-8601 date-time string {TIME_EXAMPLE} ({})", json_type(value)));
    };
    match read_time(text) {
        Ok(_) => Ok(()),
        Err(why) => Err(format!(
            "\"{name}\" is \"{}\": not an ISO-8601 date-time: {why} ({TIME_EXAMPLE})",
            crate::error::excerpt(text)
        )),
    }
}

/// A time parameter, read.
#[derive(Debug, PartialEq, Eq)]
struct Time {
    /// Unix seconds, and the fraction's nanoseconds.
    instant: (i64, u32),
    /// The form sent: RFC 3339 with an offset.
    rfc3339: String,
}

/// Read a time parameter. Accepted (ISO 8601, extended format):
/// - `YYYY-MM-DDTHH:MM:SS[.fraction]` (1 to 9 fraction digits; `t` for `T` too) followed
///   by an offset `Z` (or `z`), `±HH:MM`, `±HHMM` or `±HH` — or by nothing: a time without
///   an offset is taken as UTC (never as the machine's local time);
/// - `YYYY-MM-DD` alone: midnight UTC of that day.
///
/// Every part is checked for range (a real calendar date, hours to 23, a leap second
/// allowed). The form sent is RFC 3339: the text as given when it already is, else
/// completed (`Z` added, a date alone at `T00:00:00Z`, `+0800` and `+08` as `+08:00`).
fn read_time(text: &str) -> std::result::Result<Time, &'static str> {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(range)?;
        part.iter().all(u8::is_ascii_digit).then(|| part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    const DATE: &str = "the date is not YYYY-MM-DD";
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return Err(DATE);
    }
    let (year, month, day) = (digits(0..4).ok_or(DATE)?, digits(5..7).ok_or(DATE)?, digits(8..10).ok_or(DATE)?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&month) || day < 1 || day > month_days[month as usize - 1] {
        return Err("the date is not a day of the calendar");
    }
    // Days since 1970-01-01 (proleptic Gregorian), from the civil date.
    let (y, m) = if month <= 2 { (year - 1, month + 9) } else { (year, month - 3) };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * m + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    if b.len() == 10 {
        return Ok(Time { instant: (days * 86_400, 0), rfc3339: format!("{text}T00:00:00Z") });
    }
    const TIME: &str = "the time of day is not THH:MM:SS after the date";
    if !matches!(b[10], b'T' | b't') || b.len() < 19 || b[13] != b':' || b[16] != b':' {
        return Err(TIME);
    }
    let (hour, minute, second) =
        (digits(11..13).ok_or(TIME)?, digits(14..16).ok_or(TIME)?, digits(17..19).ok_or(TIME)?);
    if hour > 23 || minute > 59 || second > 60 {
        return Err("the time of day is out of range");
    }
    let mut i = 19;
    let mut nanos = 0u32;
    if b.get(i) == Some(&b'.') {
        let count = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if count == 0 || count > 9 {
            return Err("the fraction of a second has no digit or more than 9");
        }
        for k in 0..9 {
            nanos = nanos * 10 + if k < count { u32::from(b[i + 1 + k] - b'0') } else { 0 };
        }
        i += 1 + count;
    }
    const OFFSET: &str = "the offset is not Z, ±HH:MM, ±HHMM or ±HH";
    let (head, offset) = text.split_at(i);
    let (offset_seconds, wire_offset) = match offset.as_bytes() {
        [] => (0, Some("Z".to_owned())),
        [b'Z' | b'z'] => (0, None),
        [sign @ (b'+' | b'-'), rest @ ..] => {
            // ±HH:MM is RFC 3339 already; ±HHMM and ±HH are written as ±HH:MM.
            let (h, m, extended) = match rest {
                [_, _, b':', _, _] => (digits(i + 1..i + 3), digits(i + 4..i + 6), true),
                [_, _, _, _] => (digits(i + 1..i + 3), digits(i + 3..i + 5), false),
                [_, _] => (digits(i + 1..i + 3), Some(0), false),
                _ => return Err(OFFSET),
            };
            let (h, m) = (h.ok_or(OFFSET)?, m.ok_or(OFFSET)?);
            if h > 23 || m > 59 {
                return Err("the offset is out of range");
            }
            let wire = (!extended).then(|| format!("{}{h:02}:{m:02}", char::from(*sign)));
            ((h * 3600 + m * 60) * if *sign == b'-' { -1 } else { 1 }, wire)
        }
        _ => return Err(OFFSET),
    };
    let rfc3339 = match wire_offset {
        Some(wire) => format!("{head}{wire}"),
        None => text.to_owned(),
    };
    Ok(Time { instant: (days * 86_400 + hour * 3600 + minute * 60 + second - offset_seconds, nanos), rfc3339 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_read_as_instants() {
        let instant = |text: &str| read_time(text).map(|t| t.instant).ok();
        assert_eq!(instant("1970-01-01T00:00:00Z"), Some((0, 0)));
        assert_eq!(instant("2026-01-02T03:04:05Z"), Some((1_767_323_045, 0)));
        assert_eq!(instant("2026-01-02T11:04:05.25+08:00"), Some((1_767_323_045, 250_000_000)));
        assert_eq!(instant("2024-02-29T00:00:00-00:30"), Some((1_709_166_600, 0)));
        // ISO-8601 forms beyond RFC 3339: no offset (UTC), a date alone (midnight UTC), a
        // basic or hour-only offset.
        assert_eq!(instant("2026-01-02T03:04:05"), Some((1_767_323_045, 0)));
        assert_eq!(instant("2026-01-02T03:04:05.123456789"), Some((1_767_323_045, 123_456_789)));
        assert_eq!(instant("2026-01-02"), Some((1_767_312_000, 0)));
        assert_eq!(instant("2026-01-02T11:04:05+0800"), Some((1_767_323_045, 0)));
        assert_eq!(instant("2026-01-01T22:04:05-0500"), Some((1_767_323_045, 0)));
        assert_eq!(instant("2026-01-02T11:04:05+08"), Some((1_767_323_045, 0)));
        for (bad, why) in [
            ("2026-1-02", "the date is not YYYY-MM-DD"),
            ("20260102", "the date is not YYYY-MM-DD"),
            ("2026-01-02 03:04:05Z", "the time of day is not THH:MM:SS"),
            ("2026-01-02T03:04Z", "the time of day is not THH:MM:SS"),
            ("2026-01-02T", "the time of day is not THH:MM:SS"),
            ("2026-13-02T03:04:05Z", "not a day of the calendar"),
            ("2025-02-29T03:04:05Z", "not a day of the calendar"),
            ("2025-02-29", "not a day of the calendar"),
            ("2026-01-02T24:00:00Z", "the time of day is out of range"),
            ("2026-01-02T03:04:05.Z", "no digit or more than 9"),
            ("2026-01-02T03:04:05.1234567890Z", "no digit or more than 9"),
            ("2026-01-02T03:04:05+08:0", "the offset is not"),
            ("2026-01-02T03:04:05+8", "the offset is not"),
            ("2026-01-02T03:04:05+08:00:00", "the offset is not"),
            ("2026-01-02T03:04:05+2400", "the offset is out of range"),
            ("2026-01-02T03:04:05+08:60", "the offset is out of range"),
            ("2026-01-02T03:04:05Z ", "the offset is not"),
            ("2026-01-02T03:04:05 ", "the offset is not"),
            ("2026-01-02T03:04:05+ab:cd", "the offset is not"),
            ("1767323045", "the date is not YYYY-MM-DD"),
            ("２026-01-02T03:04:05Z", "the date is not YYYY-MM-DD"),
            ("2026-01-02T03:04:05é", "the offset is not"),
            ("2026-01-02T03:04:05+aé", "the offset is not"),
            ("2026-01-02T03:04:05+aéb", "the offset is not"),
            ("2026-01-02T03:04:05+0é", "the offset is not"),
            ("2026-01-02T03:04:05+é", "the offset is not"),
            ("2026-01-02T03:04:05.é", "no digit or more than 9"),
            ("2026-01-02Té", "the time of day is not THH:MM:SS"),
            ("2026-01-0é", "the date is not YYYY-MM-DD"),
            ("", "the date is not YYYY-MM-DD"),
        ] {
            assert!(read_time(bad).is_err_and(|e| e.contains(why)), "{bad}: {:?}", read_time(bad));
        }
    }

    #[test]
    fn times_are_sent_in_rfc3339() {
        for (given, sent) in [
            // Already RFC 3339: as given.
            ("2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z"),
            ("2026-01-02t03:04:05.5z", "2026-01-02t03:04:05.5z"),
            ("2026-01-02T11:04:05.5+08:00", "2026-01-02T11:04:05.5+08:00"),
            // Completed.
            ("2026-01-02T03:04:05", "2026-01-02T03:04:05Z"),
            ("2026-01-02T03:04:05.250", "2026-01-02T03:04:05.250Z"),
            ("2026-01-02", "2026-01-02T00:00:00Z"),
            ("2026-01-02T11:04:05+0800", "2026-01-02T11:04:05+08:00"),
            ("2026-01-02T11:04:05.1-0830", "2026-01-02T11:04:05.1-08:30"),
            ("2026-01-02T11:04:05+08", "2026-01-02T11:04:05+08:00"),
        ] {
            let time = read_time(given).unwrap();
            assert_eq!(time.rfc3339, sent, "{given}");
            assert_eq!(read_time(sent).unwrap(), Time { rfc3339: sent.to_owned(), ..time }, "{given}: same instant");
        }
    }

    #[test]
    fn any_text_is_read_without_panic_and_what_is_sent_reads_the_same() {
        // Every form, cut at every character and with every character replaced by others.
        for form in
            ["2026-01-02T03:04:05.123+08:00", "2026-01-02T03:04:05-0830", "2026-01-02T03:04:05+08", "2026-01-02"]
        {
            let chars: Vec<char> = form.chars().collect();
            let mut texts: Vec<String> = (0..=chars.len()).map(|n| chars[..n].iter().collect()).collect();
            for i in 0..chars.len() {
                for c in ['é', '０', 'x', '9', ':', '-', '+', 'Z', 'T', '.', ' '] {
                    let mut changed = chars.clone();
                    changed[i] = c;
                    texts.push(changed.iter().collect());
                }
            }
            for text in texts {
                if let Ok(time) = read_time(&text) {
                    let sent =
                        read_time(&time.rfc3339).unwrap_or_else(|e| panic!("{text} sent as {}: {e}", time.rfc3339));
                    assert_eq!((sent.instant, &sent.rfc3339), (time.instant, &time.rfc3339), "{text}");
                }
            }
        }
    }
}
