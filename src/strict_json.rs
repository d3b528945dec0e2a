//! JSON parsed with no duplicate member names, at any depth.
//!
//! RFC 8259 leaves a repeated name's meaning open, and parsers differ: serde_json keeps the
//! last value, others the first. A signed document with `"requestId"` twice could then say
//! one thing to this library's checks and another to the venue. So the sign-in challenge's
//! header and payload are read with this parser, which refuses any object with a repeated
//! name (compared after unescaping: `"a"` and `"\u0061"` are the same name) before anything
//! is read from it.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// Parse `bytes` as JSON, refusing duplicate names anywhere. The error names the duplicate
/// (or says what else is wrong).
pub fn parse(bytes: &[u8]) -> Result<Value, String> {
    serde_json::from_slice::<Strict>(bytes).map(|s| s.0).map_err(|e| {
        let text = e.to_string();
        // serde_json appends " at line L column C"; our own message is kept whole.
        match text.strip_prefix(DUPLICATE) {
            Some(rest) => format!("{DUPLICATE}{}", rest.split(" at line ").next().unwrap_or(rest)),
            None => "it is not valid JSON".to_owned(),
        }
    })
}

const DUPLICATE: &str = "it has the member name twice: ";

struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(name) = map.next_key::<String>()? {
            if members.contains_key(&name) {
                return Err(de::Error::custom(format!("{DUPLICATE}\"{}\"", crate::error::excerpt(&name))));
            }
            let Strict(value) = map.next_value()?;
            members.insert(name, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn duplicates_are_refused_at_any_depth() {
        assert_eq!(parse(br#"{"a":1,"b":[{"c":true}],"d":null}"#).unwrap()["b"][0]["c"], true);
        for text in [
            r#"{"a":1,"a":2}"#,
            r#"{"a":1,"b":{"c":1,"c":1}}"#,
            r#"{"x":[{"k":"v","k":"w"}]}"#,
            r#"{"requestId":"x","requ\u0065stId":"y"}"#,
        ] {
            let why = parse(text.as_bytes()).unwrap_err();
            assert!(why.starts_with("it has the member name twice: \""), "{text}: {why}");
        }
        assert_eq!(parse(b"{").unwrap_err(), "it is not valid JSON");
        // Same value as serde_json for ordinary documents.
        let doc = br#"{"n":-1.5e3,"u":18446744073709551615,"i":-9,"s":"\u00e9","z":[]}"#;
        assert_eq!(parse(doc).unwrap(), serde_json::from_slice::<serde_json::Value>(doc).unwrap());
    }
}
