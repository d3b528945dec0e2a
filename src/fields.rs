//! Checks of single JSON values with the venue's types, shared by orders (`order`) and
//! endpoint parameters (`endpoints::params`). Each returns the problem as a message naming
//! the field; the caller picks the error code (`PERPS_INVALID_ORDER` for an order,
//! `PERPS_INVALID_ARGUMENT` for parameters).

use crate::error::excerpt;
use serde_json::Value;

/// Longest text value (symbol, `cl_ord_id`).
pub const MAX_TEXT_LEN: usize = 64;
/// Longest decimal string.
pub const MAX_DECIMAL_LEN: usize = 40;

pub(crate) type Checked = Result<(), String>;

/// A symbol: letters, digits, `-`, `_`, `/`, `.`.
pub(crate) fn symbol(name: &str, value: &Value) -> Checked {
    let Some(s) = value.as_str() else {
        return Err(format!("\"{name}\" must be a string ({})", json_type(value)));
    };
    symbol_text(name, s)
}

/// Free text the venue echoes back (`cl_ord_id`): visible ASCII but `"` and `\`.
pub(crate) fn visible_text(name: &str, value: &Value) -> Checked {
    let Some(s) = value.as_str() else {
        return Err(format!("\"{name}\" must be a string ({})", json_type(value)));
    };
    visible_text_content(name, s)
}

/// A symbol's text (what [`symbol`] checks once it has a string).
pub(crate) fn symbol_text(name: &str, s: &str) -> Checked {
    text_content(name, s, |c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/' | '.'))
}

/// Visible-ASCII text (what [`visible_text`] checks once it has a string), without `"` and
/// `\`: the venue's answers and pushes carry the id inside JSON, where those two come back
/// escaped, and the id the library hands back (from the body it wrote) would hold the
/// escapes too; a look-up by it would then miss the order, and a resend after a timeout
/// would place it twice.
pub(crate) fn visible_text_content(name: &str, s: &str) -> Checked {
    text_content(name, s, |c| c.is_ascii_graphic())?;
    if s.contains(['"', '\\']) {
        return Err(format!(
            "\"{name}\" contains a quote or a backslash (not allowed: the venue's JSON gives them back escaped, and the order could not be found by its id)"
        ));
    }
    Ok(())
}

fn text_content(name: &str, s: &str, allowed: impl Fn(char) -> bool) -> Checked {
    if s.is_empty() {
        return Err(format!("\"{name}\" is empty"));
    }
    if s.len() > MAX_TEXT_LEN {
        return Err(format!("\"{name}\" is longer than {MAX_TEXT_LEN} characters"));
    }
    if !s.chars().all(allowed) {
        return Err(format!("\"{name}\" contains a character that is not allowed"));
    }
    Ok(())
}

/// One of a few lower-case words.
pub(crate) fn one_of(name: &str, value: &Value, allowed: &[&str]) -> Checked {
    match value.as_str() {
        Some(s) if allowed.contains(&s) => Ok(()),
        Some(s) => Err(format!(
            "\"{name}\" is \"{}\"; expected one of {}",
            excerpt(s),
            allowed.iter().map(|a| format!("\"{a}\"")).collect::<Vec<_>>().join(", ")
        )),
        None => Err(format!("\"{name}\" must be a string ({})", json_type(value))),
    }
}

pub(crate) fn boolean(name: &str, value: &Value) -> Checked {
    match value {
        Value::Bool(_) => Ok(()),
        other => Err(format!("\"{name}\" must be true or false ({})", json_type(other))),
    }
}

/// A JSON integer (not a string, not a float) within `min..=max`.
pub(crate) fn integer(name: &str, value: &Value, min: i64, max: i64) -> Checked {
    let shown = || excerpt(&value.to_string());
    match value {
        Value::Number(n) => match n.as_i64() {
            Some(i) if (min..=max).contains(&i) => Ok(()),
            Some(_) => Err(format!("\"{name}\" is {}; expected an integer from {min} to {max}", shown())),
            // An integer beyond int64 (serde_json reads those past u64 as floats).
            None if n.is_u64() || n.as_f64().is_some_and(|f| f.abs() >= 9.2e18) => {
                Err(format!("\"{name}\" is {}: out of range (expected an integer from {min} to {max})", shown()))
            }
            None => Err(format!("\"{name}\" must be a JSON integer (got {})", shown())),
        },
        Value::String(_) => Err(format!("\"{name}\" must be a JSON integer, not a string (got {})", shown())),
        other => Err(format!("\"{name}\" must be a JSON integer ({})", json_type(other))),
    }
}

/// A plain positive decimal in a JSON string: digits, optionally one '.' followed by digits;
/// no sign, exponent, spaces or superfluous leading zeros; greater than zero.
pub(crate) fn positive_decimal(name: &str, value: &Value) -> Checked {
    let s = match value {
        Value::String(s) => s.as_str(),
        Value::Number(_) => {
            return Err(format!(
                "\"{name}\" must be a decimal string like \"0.01\", not a JSON number (floats lose precision)"
            ));
        }
        other => return Err(format!("\"{name}\" must be a decimal string ({})", json_type(other))),
    };
    positive_decimal_text(name, s)
}

/// A positive decimal's text (what [`positive_decimal`] checks once it has a string).
pub(crate) fn positive_decimal_text(name: &str, s: &str) -> Checked {
    let bad = |why: &str| Err(format!("\"{name}\" is \"{}\": {why}", excerpt(s)));
    if s.len() > MAX_DECIMAL_LEN {
        return bad("too long for a decimal");
    }
    let (int_part, frac_part) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s, None),
    };
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if !digits(int_part) || frac_part.is_some_and(|f| !digits(f)) {
        return bad("not a plain decimal (digits with an optional '.' and digits after it)");
    }
    if int_part.len() > 1 && int_part.starts_with('0') {
        return bad("leading zeros are not allowed");
    }
    if s.bytes().all(|b| b == b'0' || b == b'.') {
        return bad("must be greater than zero");
    }
    Ok(())
}

/// "got a string", "got null", … for messages.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "got null",
        Value::Bool(_) => "got a boolean",
        Value::Number(_) => "got a number",
        Value::String(_) => "got a string",
        Value::Array(_) => "got an array",
        Value::Object(_) => "got an object",
    }
}
