//! `new_order` validation and its one serialisation.
//!
//! The caller's JSON is checked field by field against what the venue accepts, then written
//! once, compactly, in a fixed field order. That exact string is signed and sent; nothing
//! re-serialises it afterwards. Decimals stay the caller's own text ("1.50" stays "1.50"):
//! they are never parsed into floats.

use crate::error::{Error, Result, excerpt};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt::{self, Write as _};

/// A validated order, serialised once.
#[derive(Clone, PartialEq, Eq)]
pub struct OrderBody {
    json: String,
}

impl OrderBody {
    /// The exact body to sign and send.
    pub fn as_str(&self) -> &str {
        &self.json
    }
    pub fn into_string(self) -> String {
        self.json
    }
}

impl fmt::Debug for OrderBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.json)
    }
}

/// What each field holds.
#[derive(Clone, Copy)]
enum Kind {
    Symbol,
    Enum(&'static [&'static str]),
    Decimal,
    Bool,
    PositiveInt,
    Text,
}

/// Every field the venue documents, in the order they are written.
const FIELDS: &[(&str, Kind, bool)] = &[
    ("symbol", Kind::Symbol, true),
    ("side", Kind::Enum(&["buy", "sell"]), true),
    ("order_type", Kind::Enum(&["limit", "market"]), true),
    ("qty", Kind::Decimal, true),
    ("price", Kind::Decimal, false),
    ("time_in_force", Kind::Enum(&["gtc", "ioc", "alo"]), true),
    ("reduce_only", Kind::Bool, true),
    ("cl_ord_id", Kind::Text, false),
    ("margin_mode", Kind::Enum(&["cross", "isolated"]), false),
    ("leverage", Kind::PositiveInt, false),
    ("tp_price", Kind::Decimal, false),
    ("sl_price", Kind::Decimal, false),
];

const MAX_TEXT_LEN: usize = 64;
const MAX_DECIMAL_LEN: usize = 40;

/// Validate a `new_order` JSON object and serialise it once.
pub fn validate(order_json: &str) -> Result<OrderBody> {
    let entries = parse_entries(order_json)?;
    for (name, _) in &entries {
        if !FIELDS.iter().any(|(known, _, _)| known == name) {
            return Err(Error::invalid_order(unknown_field_message(name)));
        }
    }
    let mut present: Vec<(&str, &Value)> = Vec::with_capacity(FIELDS.len());
    for &(name, kind, required) in FIELDS {
        match entries.iter().find(|(n, _)| n == name) {
            Some((_, value)) => {
                check_value(name, kind, value)?;
                present.push((name, value));
            }
            None if required => return Err(Error::invalid_order(format!("missing required field \"{name}\""))),
            None => {}
        }
    }
    let field = |wanted: &str| present.iter().find(|(n, _)| *n == wanted).map(|(_, v)| *v);
    if field("order_type").and_then(Value::as_str) == Some("limit") && field("price").is_none() {
        return Err(Error::invalid_order("\"price\" is required for a limit order"));
    }
    Ok(OrderBody { json: write_compact(&present) })
}

/// `{"symbol":…,"side":…,…}` in the documented field order, no spaces.
fn write_compact(fields: &[(&str, &Value)]) -> String {
    let mut json = String::with_capacity(192);
    json.push('{');
    for (i, (name, value)) in fields.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        json.push('"');
        json.push_str(name);
        json.push_str("\":");
        // Written straight into the body: no intermediate String per field.
        write!(json, "{value}").expect("writing to a String cannot fail");
    }
    json.push('}');
    json
}

fn unknown_field_message(name: &str) -> String {
    let shown = excerpt(name);
    let normalized: String = name.chars().filter(|c| *c != '_').flat_map(char::to_lowercase).collect();
    let suggestion = FIELDS.iter().map(|(known, _, _)| *known).find(|known| known.replace('_', "") == normalized);
    match suggestion {
        Some(known) => format!("unknown field \"{shown}\" (did you mean \"{known}\"?)"),
        None => format!("unknown field \"{shown}\""),
    }
}

fn check_value(name: &str, kind: Kind, value: &Value) -> Result<()> {
    if value.is_null() {
        return Err(Error::invalid_order(format!("\"{name}\" is null; omit an optional field instead")));
    }
    match kind {
        Kind::Symbol => check_text(name, value, |c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/' | '.')),
        Kind::Text => check_text(name, value, |c| c.is_ascii_graphic()),
        Kind::Enum(allowed) => match value.as_str() {
            Some(s) if allowed.contains(&s) => Ok(()),
            Some(s) => Err(Error::invalid_order(format!(
                "\"{name}\" is \"{}\"; expected one of {}",
                excerpt(s),
                allowed.iter().map(|a| format!("\"{a}\"")).collect::<Vec<_>>().join(", ")
            ))),
            None => Err(Error::invalid_order(format!("\"{name}\" must be a string ({})", json_type(value)))),
        },
        Kind::Bool => match value {
            Value::Bool(_) => Ok(()),
            other => Err(Error::invalid_order(format!("\"{name}\" must be true or false ({})", json_type(other)))),
        },
        Kind::PositiveInt => match value.as_u64() {
            Some(n) if (1..=u32::MAX as u64).contains(&n) => Ok(()),
            _ => Err(Error::invalid_order(format!(
                "\"{name}\" must be a JSON integer ≥ 1 (got {})",
                excerpt(&value.to_string())
            ))),
        },
        Kind::Decimal => check_decimal(name, value),
    }
}

fn check_text(name: &str, value: &Value, allowed: impl Fn(char) -> bool) -> Result<()> {
    let Some(s) = value.as_str() else {
        return Err(Error::invalid_order(format!("\"{name}\" must be a string ({})", json_type(value))));
    };
    if s.is_empty() {
        return Err(Error::invalid_order(format!("\"{name}\" is empty")));
    }
    if s.len() > MAX_TEXT_LEN {
        return Err(Error::invalid_order(format!("\"{name}\" is longer than {MAX_TEXT_LEN} characters")));
    }
    if !s.chars().all(allowed) {
        return Err(Error::invalid_order(format!("\"{name}\" contains a character that is not allowed")));
    }
    Ok(())
}

/// A plain positive decimal in a JSON string: digits, optionally one '.' followed by digits;
/// no sign, exponent, spaces or superfluous leading zeros; greater than zero.
fn check_decimal(name: &str, value: &Value) -> Result<()> {
    let s = match value {
        Value::String(s) => s.as_str(),
        Value::Number(_) => {
            return Err(Error::invalid_order(format!(
                "\"{name}\" must be a decimal string like \"0.01\", not a JSON number (floats lose precision)"
            )));
        }
        other => {
            return Err(Error::invalid_order(format!("\"{name}\" must be a decimal string ({})", json_type(other))));
        }
    };
    let bad = |why: &str| Err(Error::invalid_order(format!("\"{name}\" is \"{}\": {why}", excerpt(s))));
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

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "got null",
        Value::Bool(_) => "got a boolean",
        Value::Number(_) => "got a number",
        Value::String(_) => "got a string",
        Value::Array(_) => "got an array",
        Value::Object(_) => "got an object",
    }
}

/// Parse a JSON object keeping every entry, so that a duplicated key is an error rather
/// than a silent "last one wins" (`{"reduce_only":true,…,"reduce_only":false}`).
fn parse_entries(order_json: &str) -> Result<Vec<(Cow<'_, str>, Value)>> {
    let mut de = serde_json::Deserializer::from_str(order_json);
    let entries = de.deserialize_map(EntriesVisitor).map_err(|e| {
        let text = e.to_string();
        if text.starts_with("duplicate field") {
            Error::invalid_order(text)
        } else if e.is_data() {
            Error::invalid_order("the order must be a JSON object")
        } else {
            Error::invalid_order(format!("the order is not valid JSON: {text}"))
        }
    })?;
    de.end()
        .map_err(|e| Error::invalid_order(format!("the order has trailing characters after the JSON object: {e}")))?;
    Ok(entries)
}

struct EntriesVisitor;

impl<'de> Visitor<'de> for EntriesVisitor {
    type Value = Vec<(Cow<'de, str>, Value)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        let mut entries: Vec<(Cow<'de, str>, Value)> = Vec::with_capacity(FIELDS.len());
        while let Some((Key(key), value)) = map.next_entry::<Key<'de>, Value>()? {
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(serde::de::Error::custom(format!("duplicate field \"{}\" in the order", excerpt(&key))));
            }
            entries.push((key, value));
        }
        Ok(entries)
    }
}

/// An object key, borrowed from the caller's text unless it has escapes (serde's own
/// `Cow<str>` always copies).
struct Key<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, key: &'de str) -> std::result::Result<Self::Value, E> {
        Ok(Key(Cow::Borrowed(key)))
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> std::result::Result<Self::Value, E> {
        Ok(Key(Cow::Owned(key.to_owned())))
    }
}
