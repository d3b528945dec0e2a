//! An endpoint's parameters: the caller's JSON object checked against the endpoint's table
//! entry before anything is sent, then written once — as a compact JSON body for a POST
//! (the bytes signed and sent), or as a percent-encoded query string for a GET.
//!
//! Refusals are `PERPS_INVALID_ARGUMENT` and name the endpoint and the parameter: unknown
//! and duplicated names, `null`, wrong JSON types (an id in a string, a float), values out
//! of range, times that are not ISO-8601, and the rules across parameters.

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
                    entries.push((param.name, value.clone()));
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
        Kind::Enum(allowed) => fields::one_of(name, value, allowed),
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

const TIME_EXAMPLE: &str = "like \"2026-01-02T03:04:05Z\" or \"2026-01-02T03:04:05.250+08:00\"";

fn time(name: &str, value: &Value) -> Checked {
    let Some(text) = value.as_str() else {
        return Err(format!("\"{name}\" must be an ISO-8601 date-time string {TIME_EXAMPLE} ({})", json_type(value)));
    };
    if instant(text).is_none() {
        return Err(format!(
            "\"{name}\" is \"{}\": not an ISO-8601 date-time with a UTC offset ({TIME_EXAMPLE})",
            crate::error::excerpt(text)
        ));
    }
    Ok(())
}

/// An RFC 3339 date-time (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`) as (Unix seconds,
/// fraction digits padded to 9), or `None` when it is not one.
fn instant(text: &str) -> Option<(i64, u32)> {
    let b = text.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(range)?;
        part.iter().all(u8::is_ascii_digit).then(|| part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&month) || day < 1 || day > month_days[month as usize - 1] {
        return None;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut i = 19;
    let mut nanos = 0u32;
    if b[i] == b'.' {
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        for k in 0..9 {
            nanos = nanos * 10 + if k < digits { u32::from(b[i + 1 + k] - b'0') } else { 0 };
        }
        i += 1 + digits;
    }
    let offset = match &b[i..] {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (h, m) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            if h > 23 || m > 59 {
                return None;
            }
            (h * 3600 + m * 60) * if *sign == b'-' { -1 } else { 1 }
        }
        _ => return None,
    };
    // Days since 1970-01-01 (proleptic Gregorian), from the civil date.
    let (y, m) = if month <= 2 { (year - 1, month + 9) } else { (year, month - 3) };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * m + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    Some((days * 86_400 + hour * 3600 + minute * 60 + second - offset, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_read_as_instants() {
        assert_eq!(instant("1970-01-01T00:00:00Z"), Some((0, 0)));
        assert_eq!(instant("2026-01-02T03:04:05Z"), Some((1_767_323_045, 0)));
        assert_eq!(instant("2026-01-02T11:04:05.25+08:00"), Some((1_767_323_045, 250_000_000)));
        assert_eq!(instant("2024-02-29T00:00:00-00:30"), Some((1_709_166_600, 0)));
        for bad in [
            "2026-01-02",
            "2026-01-02T03:04:05",
            "2026-01-02 03:04:05Z",
            "2026-13-02T03:04:05Z",
            "2025-02-29T03:04:05Z",
            "2026-01-02T24:00:00Z",
            "2026-01-02T03:04:05.Z",
            "2026-01-02T03:04:05.1234567890Z",
            "2026-01-02T03:04:05+0800",
            "2026-01-02T03:04:05Z ",
            "1767323045",
            "２026-01-02T03:04:05Z",
        ] {
            assert_eq!(instant(bad), None, "{bad}");
        }
    }
}
