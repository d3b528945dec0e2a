//! The venue's answers to endpoint calls, read as the venue really sends them.
//!
//! An answer is returned as the venue's own JSON text (extra fields kept, decimals as the
//! venue wrote them, strings or numbers), after two checks: it is a JSON object or array —
//! an object envelope or a bare array for lists, `[]` or `{code,message,request_id}` for
//! `cancel_orders` — and an object's integer `code`, when present, is 0 (else
//! `PERPS_API_ERROR`). The one change: `query_depth_book`'s levels come back sorted by
//! decimal value, bids high to low and asks low to high, compared exactly (never as
//! floats), each level kept as the venue wrote it.

use crate::decimal::Decimal;
use crate::error::excerpt;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// Why an answer is refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not JSON, or not an object or array, or a depth book that cannot be sorted.
    Shape(String),
    /// A well-formed refusal: the venue's `code` and `message`.
    Code(i64, String),
}

/// Check an answer: JSON object or array; an object's `code`, when present, an integer 0.
pub fn check(body: &str) -> Result<(), Refusal> {
    let not_json = |e: serde_json::Error| Refusal::Shape(format!("the answer is not JSON: {e}"));
    let mut de = serde_json::Deserializer::from_str(body);
    let head = de.deserialize_any(HeadVisitor).map_err(not_json)?;
    de.end().map_err(not_json)?;
    match head {
        Head::Other => Err(Refusal::Shape("the answer is neither a JSON object nor an array".to_owned())),
        Head::List | Head::Object { code: None, .. } => Ok(()),
        Head::Object { code: Some(code), message } => match code.as_i64() {
            Some(0) => Ok(()),
            Some(code) => Err(Refusal::Code(code, message.unwrap_or_default())),
            None => {
                Err(Refusal::Shape(format!("the venue's \"code\" is not an integer ({})", excerpt(&code.to_string()))))
            }
        },
    }
}

/// The top of an answer: what `check` needs, nothing more.
enum Head {
    List,
    Object { code: Option<serde_json::Value>, message: Option<String> },
    Other,
}

struct HeadVisitor;

impl<'de> Visitor<'de> for HeadVisitor {
    type Value = Head;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object or array")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let (mut code, mut message) = (None, None);
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "code" => code = Some(map.next_value::<serde_json::Value>()?),
                "message" => message = map.next_value::<serde_json::Value>()?.as_str().map(str::to_owned),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Head::Object { code, message })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Head, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Head::List)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Head, E> {
        Ok(Head::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Head, E> {
        Ok(Head::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Head, E> {
        Ok(Head::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Head, E> {
        Ok(Head::Other)
    }
    fn visit_str<E>(self, _: &str) -> Result<Head, E> {
        Ok(Head::Other)
    }
    fn visit_unit<E>(self) -> Result<Head, E> {
        Ok(Head::Other)
    }
}

/// One object's entries in the venue's order, each value its exact text.
type RawEntries<'a> = Vec<(String, &'a RawValue)>;

/// `query_depth_book`: the same object with `bids` sorted high to low and `asks` low to
/// high by price, every other field and every level's text as the venue sent it. The book
/// may sit at the top or inside a `data` / `result` envelope. Ties keep the venue's order.
pub fn sort_depth_book(body: &str) -> Result<String, String> {
    let entries: RawEntries<'_> = serde_json::from_str::<Entries<'_>>(body)
        .map_err(|e| format!("the depth book is not a JSON object: {}", excerpt(&e.to_string())))?
        .0;
    let has_book = |entries: &RawEntries<'_>| entries.iter().any(|(k, _)| k == "bids" || k == "asks");
    if has_book(&entries) {
        return write_sorted(&entries);
    }
    // An envelope: sort the book inside it.
    let mut out = String::with_capacity(body.len() + 16);
    let mut found = false;
    out.push('{');
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(key).expect("a string serialises"));
        out.push(':');
        let inner = (key == "data" || key == "result")
            .then(|| serde_json::from_str::<Entries<'_>>(value.get()).ok())
            .flatten()
            .filter(|inner| has_book(&inner.0));
        match inner {
            Some(inner) => {
                out.push_str(&write_sorted(&inner.0)?);
                found = true;
            }
            None => out.push_str(value.get()),
        }
    }
    out.push('}');
    if !found {
        return Err("the depth book has no \"bids\" or \"asks\"".to_owned());
    }
    Ok(out)
}

fn write_sorted(entries: &RawEntries<'_>) -> Result<String, String> {
    let mut out = String::with_capacity(entries.iter().map(|(k, v)| k.len() + v.get().len() + 4).sum::<usize>() + 2);
    out.push('{');
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(key).expect("a string serialises"));
        out.push(':');
        match key.as_str() {
            "bids" => write_side(&mut out, "bids", value, true)?,
            "asks" => write_side(&mut out, "asks", value, false)?,
            _ => out.push_str(value.get()),
        }
    }
    out.push('}');
    Ok(out)
}

/// Sort one side's levels (`[[price, qty, …], …]`) by price and write them.
fn write_side(out: &mut String, side: &str, levels: &RawValue, descending: bool) -> Result<(), String> {
    if levels.get() == "null" {
        out.push_str("[]");
        return Ok(());
    }
    let levels: Vec<&RawValue> =
        serde_json::from_str(levels.get()).map_err(|_| format!("\"{side}\" is not a JSON array of levels"))?;
    let mut keyed: Vec<(Decimal<'_>, &RawValue)> = Vec::with_capacity(levels.len());
    let prices: Vec<Option<String>> = levels.iter().map(|level| level_price(level)).collect();
    for (i, (level, price)) in levels.iter().zip(&prices).enumerate() {
        let price = price
            .as_deref()
            .and_then(Decimal::parse)
            .ok_or_else(|| format!("level {i} of \"{side}\" has no decimal price: {}", excerpt(level.get())))?;
        keyed.push((price, level));
    }
    // A stable sort: equal prices keep the venue's order.
    if descending {
        keyed.sort_by(|a, b| b.0.cmp(&a.0));
    } else {
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
    }
    out.push('[');
    for (i, (_, level)) in keyed.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(level.get());
    }
    out.push(']');
    Ok(())
}

/// A level's price text: the first element of `[price, qty]`, a string or a number, or
/// the `price` field of `{"price":…,"qty":…}`.
fn level_price(level: &RawValue) -> Option<String> {
    let text = level.get().trim_start();
    let raw: &RawValue = if text.starts_with('[') {
        let items: Vec<&RawValue> = serde_json::from_str(level.get()).ok()?;
        items.into_iter().next()?
    } else if text.starts_with('{') {
        let entries: Entries<'_> = serde_json::from_str(level.get()).ok()?;
        entries.0.into_iter().find(|(k, _)| k == "price" || k == "px")?.1
    } else {
        return None;
    };
    decimal_text(raw)
}

/// A decimal the venue wrote as a string or as a number: its text.
pub fn decimal_text(raw: &RawValue) -> Option<String> {
    let text = raw.get();
    if text.starts_with('"') { serde_json::from_str::<String>(text).ok() } else { Some(text.to_owned()) }
}

/// A JSON object read as (key, exact value text) pairs, in order.
pub struct Entries<'a>(pub RawEntries<'a>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for EntriesVisitor<'a> {
            type Value = Entries<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries<'a>, A::Error> {
                let mut entries = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                    entries.push((key, value));
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_checked_not_rewritten() {
        assert_eq!(check(r#"{"code":0,"message":"success","request_id":"r"}"#), Ok(()));
        assert_eq!(check("[]"), Ok(()));
        assert_eq!(check(r#"{"page_size":1,"result":[{"id":1}],"total":1}"#), Ok(()));
        assert_eq!(check(r#"{"code":400,"message":"bad"}"#), Err(Refusal::Code(400, "bad".into())));
        assert!(matches!(check(r#"{"code":"0"}"#), Err(Refusal::Shape(m)) if m.contains("not an integer")));
        assert!(matches!(check("\"ok\""), Err(Refusal::Shape(_))));
        assert!(matches!(check("{"), Err(Refusal::Shape(_))));
        assert!(matches!(check("{} x"), Err(Refusal::Shape(_))));
    }

    #[test]
    fn depth_levels_are_sorted_by_value_and_keep_their_text() {
        let body = r#"{"asks":[["10.25","1"],["9.5","2"],[9.75,3]],"bids":[["9","1"],["10","2"],["8.99999","3"]],"symbol":"X","extra":{"a":1}}"#;
        let sorted = sort_depth_book(body).unwrap();
        assert_eq!(
            sorted,
            r#"{"asks":[["9.5","2"],[9.75,3],["10.25","1"]],"bids":[["10","2"],["9","1"],["8.99999","3"]],"symbol":"X","extra":{"a":1}}"#
        );
        let wrapped = format!(r#"{{"code":0,"data":{body}}}"#);
        assert!(sort_depth_book(&wrapped).unwrap().contains(r#""asks":[["9.5","2"],[9.75,3],["10.25","1"]]"#));
        assert!(sort_depth_book(r#"{"asks":[["x","1"]],"bids":[]}"#).unwrap_err().contains("level 0 of \"asks\""));
        assert!(sort_depth_book(r#"{"symbol":"X"}"#).is_err());
    }
}
