//! The venue's answers to endpoint calls, read as the venue really sends them.
//!
//! An answer is returned as the venue's own JSON text (extra fields kept, decimals as the
//! venue wrote them, strings or numbers), after two checks: it is a JSON object or array —
//! an object envelope or a bare array for lists, `[]` or `{code,message,request_id}` for
//! `cancel_orders` — and an object's integer `code`, when present, is 0 (else
//! `PERPS_API_ERROR`). The one change: `query_depth_book`'s levels come back sorted by
//! decimal value, bids high to low and asks low to high, compared exactly (never as
//! floats), each level kept as the venue wrote it.

use crate::error::excerpt;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
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
        while let Some(crate::json_entries::Key(key)) = map.next_key()? {
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
type RawEntries<'a> = Vec<(Cow<'a, str>, &'a RawValue)>;

/// `query_depth_book`: the same object with `bids` sorted high to low and `asks` low to
/// high by price, every other field and every level's text as the venue sent it. The book
/// may sit at the top or inside a `data` / `result` envelope. Ties keep the venue's order.
/// The answer is read once: its `code` is checked here too (as [`check`] does).
pub fn sort_depth_book(body: &str) -> Result<String, Refusal> {
    let entries: RawEntries<'_> = serde_json::from_str::<Entries<'_>>(body)
        .map_err(|e| Refusal::Shape(format!("the depth book is not a JSON object: {}", excerpt(&e.to_string()))))?
        .0;
    let field = |name: &str| entries.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
    if let Some(code) = field("code") {
        match serde_json::from_str::<serde_json::Value>(code.get()).ok().and_then(|c| c.as_i64()) {
            Some(0) => {}
            Some(code) => {
                let message = field("message").and_then(|m| serde_json::from_str::<String>(m.get()).ok());
                return Err(Refusal::Code(code, message.unwrap_or_default()));
            }
            None => {
                return Err(Refusal::Shape(format!(
                    "the venue's \"code\" is not an integer ({})",
                    excerpt(code.get())
                )));
            }
        }
    }
    let has_book = |entries: &RawEntries<'_>| entries.iter().any(|(k, _)| k == "bids" || k == "asks");
    let mut out = String::with_capacity(body.len() + 8);
    if has_book(&entries) {
        write_sorted(&mut out, &entries).map_err(Refusal::Shape)?;
        return Ok(out);
    }
    // An envelope: sort the book inside it.
    let mut found = false;
    out.push('{');
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_key(&mut out, key);
        let inner = (key == "data" || key == "result")
            .then(|| serde_json::from_str::<Entries<'_>>(value.get()).ok())
            .flatten()
            .filter(|inner| has_book(&inner.0));
        match inner {
            Some(inner) => {
                write_sorted(&mut out, &inner.0).map_err(Refusal::Shape)?;
                found = true;
            }
            None => out.push_str(value.get()),
        }
    }
    out.push('}');
    if !found {
        return Err(Refusal::Shape("the depth book has no \"bids\" or \"asks\"".to_owned()));
    }
    Ok(out)
}

/// `"key":`, escaped as JSON wants.
fn push_key(out: &mut String, key: &str) {
    if key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        out.push('"');
        out.push_str(key);
        out.push_str("\":");
    } else {
        out.push_str(&serde_json::to_string(key).expect("a string serialises"));
        out.push(':');
    }
}

fn write_sorted(out: &mut String, entries: &RawEntries<'_>) -> Result<(), String> {
    out.push('{');
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_key(out, key);
        match key.as_ref() {
            "bids" => write_side(out, "bids", value, true)?,
            "asks" => write_side(out, "asks", value, false)?,
            _ => out.push_str(value.get()),
        }
    }
    out.push('}');
    Ok(())
}

/// Sort one side's levels (`[[price, qty, …], …]`) by price and write them.
fn write_side(out: &mut String, side: &str, levels: &RawValue, descending: bool) -> Result<(), String> {
    if levels.get() == "null" {
        out.push_str("[]");
        return Ok(());
    }
    let levels: Vec<&RawValue> =
        serde_json::from_str(levels.get()).map_err(|_| format!("\"{side}\" is not a JSON array of levels"))?;
    let mut prices = Vec::with_capacity(levels.len());
    for (i, level) in levels.iter().enumerate() {
        prices.push(
            level_price(level.get())
                .ok_or_else(|| format!("level {i} of \"{side}\" has no decimal price: {}", excerpt(level.get())))?,
        );
    }
    let order = crate::decimal::book_order(&prices, descending).map_err(|i| {
        format!("level {i} of \"{side}\" has no decimal price: {}", excerpt(levels[i].get()))
    })?;
    out.push('[');
    for (n, &i) in order.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push_str(levels[i].get());
    }
    out.push(']');
    Ok(())
}

/// A level's price text, borrowed from the level: the first element of `[price, qty]` (a
/// string without escapes, or a number), or the `price` field of `{"price":…,"qty":…}`.
fn level_price(level: &str) -> Option<&str> {
    let text = level.trim_start();
    if let Some(rest) = text.strip_prefix('[') {
        let rest = rest.trim_start();
        return match rest.strip_prefix('"') {
            // A decimal needs no escape; a backslash means this is not one.
            Some(quoted) => quoted.split_once('"').map(|(price, _)| price).filter(|p| !p.contains('\\')),
            None => rest.split([',', ']']).next().map(str::trim_end),
        };
    }
    if text.starts_with('{') {
        let entries: Entries<'_> = serde_json::from_str(level).ok()?;
        let raw = entries.0.into_iter().find(|(k, _)| k == "price" || k == "px")?.1.get();
        return if let Some(quoted) = raw.strip_prefix('"') { quoted.strip_suffix('"') } else { Some(raw) };
    }
    None
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
                while let Some((crate::json_entries::Key(key), value)) = map.next_entry::<_, &'de RawValue>()? {
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
        assert!(
            matches!(sort_depth_book(r#"{"asks":[["x","1"]],"bids":[]}"#), Err(Refusal::Shape(m)) if m.contains("level 0 of \"asks\""))
        );
        assert!(matches!(sort_depth_book(r#"{"symbol":"X"}"#), Err(Refusal::Shape(_))));
        assert_eq!(sort_depth_book(r#"{"code":3,"message":"no"}"#), Err(Refusal::Code(3, "no".into())));
        // Levels as objects, spaces, escaped keys: sorted, kept.
        assert_eq!(
            sort_depth_book(r#"{"b\u0069ds":[ {"price":"1","qty":"1"} , {"price":2,"qty":"1"} ]}"#).unwrap(),
            r#"{"bids":[{"price":2,"qty":"1"},{"price":"1","qty":"1"}]}"#
        );
    }
}
