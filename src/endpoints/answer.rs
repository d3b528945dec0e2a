//! The venue's answers to endpoint calls, read as the venue really sends them.
//!
//! An answer is returned as the venue's own JSON text (extra fields kept, decimals as the
//! venue wrote them, strings or numbers), after two checks: it is a JSON object or array —
//! an object envelope or a bare array for lists, `[]` or `{code,message,request_id}` for
//! `cancel_orders` — and an object's `code`, when present, is 0 or 200 (else
//! `PERPS_API_ERROR`, or `PERPS_BAD_RESPONSE` for a code that is not a plain integer),
//! read by [`venue_code`] as every REST answer's `code` is. The one change:
//! `query_depth_book`'s levels come back sorted by
//! decimal value, bids high to low and asks low to high, compared exactly (never as
//! floats), each level kept as the venue wrote it.

use crate::error::excerpt;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
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

/// The `code` of a REST answer — the one reading every REST answer's code goes through
/// (endpoint calls, the depth book, `new_order`, `perps_request`). The venue and its
/// documents write it as an integer; a gateway or another version may write it as a string
/// of digits (`"0"`, `"400"`, optionally with a leading '-'). `null` counts as absent.
/// `Ok(None)`: no code; `Ok(Some(n))`: code `n` (0 is success); `Err`: a code of another
/// shape, for which the request's outcome is unknown, described for the error's message.
///
/// Only a plain integer is a code: a number written with a fraction or an exponent, or a
/// negative zero (`0.0`, `4e2`, `-0`, `"-0"`), is not, however whole its value. JSON readers
/// do not agree on such numbers — `1e-400` is 0 to a reader that rounds it and an error to
/// one that does not — so taking one for a success could report an order the venue refused
/// (or never read) as placed. Nor are `0.5`, `"ok"`, `true`, or integers beyond 64 bits.
pub fn venue_code(code: Option<&Value>) -> Result<Option<i64>, String> {
    let read = match code {
        None | Some(Value::Null) => return Ok(None),
        // serde_json keeps an integer literal as an integer (`-0` excepted, which it reads
        // as a float), and every literal with a fraction or an exponent as a float.
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => {
            let digits = s.strip_prefix('-').unwrap_or(s);
            let negative_zero = digits.len() < s.len() && digits.bytes().all(|b| b == b'0');
            (!digits.is_empty() && !negative_zero && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<i64>().ok())
                .flatten()
        }
        Some(_) => None,
    };
    match (read, code) {
        (Some(n), _) => Ok(Some(n)),
        (None, Some(code)) => Err(format!(
            "the venue's \"code\" is not an integer written plainly, nor a string of digits ({})",
            excerpt(&code.to_string())
        )),
        (None, None) => Ok(None),
    }
}

/// Whether a REST answer's `code` says success: 0, as the venue's documents write it, or
/// 200, the code its WebSocket auth answers use for success (venue-api.md §6) and the HTTP
/// status for OK. A venue that answers an accepted order with 200 must not have it reported
/// as refused and unsent: the caller would place it again.
fn is_success_code(code: i64) -> bool {
    matches!(code, 0 | 200)
}

/// Whether a refusal `code` in a 2xx answer leaves the request's effect unknown: a server
/// error (5xx) or a timeout (408) behind the venue's gateway, which venue-api.md §3.1 lists
/// among its codes. As with an HTTP 5xx, the order or cancel may have been acted on, so the
/// error says it may have reached the venue: "not reached" would have an engine place the
/// order again.
pub fn code_leaves_outcome_unknown(code: i64) -> bool {
    code == 408 || (500..=599).contains(&code)
}

/// The `code` of a REST answer when it is a refusal: `Ok(None)` for none or a success
/// ([`is_success_code`]), `Err` for a code of another shape ([`venue_code`]). The one place
/// every REST answer's code is judged.
pub fn refusal_code(code: Option<&Value>) -> Result<Option<i64>, String> {
    Ok(venue_code(code)?.filter(|code| !is_success_code(*code)))
}

/// The message of a refusal by `code`: the venue's words after it when it gave some (a
/// refusal without a message ends at its code, not in a dangling ": ").
pub fn refused_with_code(what: &str, code: i64, words: &str) -> String {
    if words.is_empty() {
        format!("{what}: the venue refused with code {code}")
    } else {
        format!("{what}: the venue refused with code {code}: {words}")
    }
}

/// Why an answer that names `code` twice is refused: JSON readers disagree on which of two
/// equal keys counts (serde_json keeps the last, cJSON and many others the first), so the
/// library and its caller's reader could see different outcomes of one request — an order
/// reported refused and unsent (and placed again) that the caller's reader sees accepted, or
/// the reverse. The answer is ambiguous, not the venue's: `PERPS_BAD_RESPONSE`.
pub const CODE_TWICE: &str = "the venue's answer names \"code\" more than once: its outcome is ambiguous";

/// Whether the top-level object of `body` names `code` more than once (however its key is
/// escaped). False for text that is not a JSON object: other checks refuse it.
pub fn code_twice(body: &str) -> bool {
    let mut de = serde_json::Deserializer::from_str(body);
    matches!(de.deserialize_any(HeadVisitor), Ok(Head::Object { code_twice: true, .. }))
}

/// Check an answer: JSON object or array; an object's `code` ([`venue_code`]), when
/// present, a success ([`is_success_code`]), and named once ([`CODE_TWICE`]).
pub fn check(body: &str) -> Result<(), Refusal> {
    let not_json = |e: serde_json::Error| Refusal::Shape(format!("the answer is not JSON: {e}"));
    let mut de = serde_json::Deserializer::from_str(body);
    let head = de.deserialize_any(HeadVisitor).map_err(not_json)?;
    de.end().map_err(not_json)?;
    match head {
        Head::Other => Err(Refusal::Shape("the answer is neither a JSON object nor an array".to_owned())),
        Head::List => Ok(()),
        Head::Object { code_twice: true, .. } => Err(Refusal::Shape(CODE_TWICE.to_owned())),
        Head::Object { code, message, .. } => match refusal_code(code.as_ref()).map_err(Refusal::Shape)? {
            Some(code) => Err(Refusal::Code(code, message.unwrap_or_default())),
            None => Ok(()),
        },
    }
}

/// The top of an answer: what `check` needs, nothing more.
enum Head {
    List,
    Object { code: Option<Value>, message: Option<String>, code_twice: bool },
    Other,
}

struct HeadVisitor;

impl<'de> Visitor<'de> for HeadVisitor {
    type Value = Head;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object or array")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let (mut code, mut message, mut code_twice) = (None, None, false);
        while let Some(crate::json_entries::Key(key)) = map.next_key()? {
            match key.as_ref() {
                "code" => code_twice |= code.replace(map.next_value::<Value>()?).is_some(),
                "message" => message = map.next_value::<Value>()?.as_str().map(str::to_owned),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Head::Object { code, message, code_twice })
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
    if entries.iter().filter(|(k, _)| k == "code").count() > 1 {
        return Err(Refusal::Shape(CODE_TWICE.to_owned()));
    }
    let field = |name: &str| entries.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
    // A raw value is valid JSON: it parses.
    let code = field("code").map(|code| serde_json::from_str::<Value>(code.get()).unwrap_or(Value::Null));
    if let Some(code) = refusal_code(code.as_ref()).map_err(Refusal::Shape)? {
        let message = field("message").and_then(|m| serde_json::from_str::<String>(m.get()).ok());
        return Err(Refusal::Code(code, message.unwrap_or_default()));
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
    let order = crate::decimal::book_order(&prices, descending)
        .map_err(|i| format!("level {i} of \"{side}\" has no decimal price: {}", excerpt(levels[i].get())))?;
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
        for twice in [r#"{"code":0,"code":400}"#, r#"{"code":400,"code":0}"#, r#"{"code":0,"\u0063ode":0}"#] {
            assert_eq!(check(twice), Err(Refusal::Shape(CODE_TWICE.into())), "{twice}");
            assert!(code_twice(twice), "{twice}");
            let book = format!("{},\"bids\":[],\"asks\":[]}}", twice.trim_end_matches('}'));
            assert_eq!(sort_depth_book(&book), Err(Refusal::Shape(CODE_TWICE.into())), "{book}");
        }
        assert!(!code_twice(r#"{"code":0,"data":{"code":1}}"#));
        assert_eq!(
            refused_with_code("cancel_order", 4294967296, ""),
            "cancel_order: the venue refused with code 4294967296"
        );
        assert_eq!(refused_with_code("x", 400, "bad"), "x: the venue refused with code 400: bad");
        assert!(matches!(check(r#"{"code":0.5}"#), Err(Refusal::Shape(m)) if m.contains("not an integer")));
        assert!(matches!(check("\"ok\""), Err(Refusal::Shape(_))));
        assert!(matches!(check("{"), Err(Refusal::Shape(_))));
        assert!(matches!(check("{} x"), Err(Refusal::Shape(_))));
    }

    #[test]
    fn codes_are_read_as_plain_integers_or_strings_of_digits() {
        let read = |text: &str| venue_code(Some(&serde_json::from_str(text).unwrap()));
        for (text, code) in [
            ("0", 0),
            ("400", 400),
            ("-1", -1),
            ("\"0\"", 0),
            ("\"400\"", 400),
            ("\"-1\"", -1),
            ("\"007\"", 7),
            ("9223372036854775807", i64::MAX),
            ("\"-9223372036854775808\"", i64::MIN),
        ] {
            assert_eq!(read(text), Ok(Some(code)), "{text}");
        }
        assert_eq!(venue_code(None), Ok(None));
        assert_eq!(read("null"), Ok(None));
        for bad in [
            // Not written as a plain integer, whatever its value: never a success.
            "1e-400",
            "-0",
            "-0.0",
            "0.0",
            "0e0",
            "0E5",
            "200.0",
            "2e2",
            "400.0",
            "4e2",
            "\"-0\"",
            "\"-000\"",
            "0.5",
            "1e300",
            "9223372036854775808",
            "18446744073709551615",
            "\"\"",
            "\"-\"",
            "\"+1\"",
            "\" 0\"",
            "\"0.0\"",
            "\"9223372036854775808\"",
            "\"ok\"",
            "true",
            "[0]",
            "{\"code\":0}",
        ] {
            assert!(read(bad).is_err_and(|m| m.contains("\"code\" is not an integer")), "{bad}");
        }
        // The same reading for every answer: `check` and the depth book.
        assert_eq!(check(r#"{"code":"0","message":"success"}"#), Ok(()));
        for unplain in
            [r#"{"code":0.0}"#, r#"{"code":1e-400}"#, r#"{"code":-0}"#, r#"{"code":"-0"}"#, r#"{"code":4e2}"#]
        {
            assert!(matches!(check(unplain), Err(Refusal::Shape(m)) if m.contains("not an integer")), "{unplain}");
            let book = format!("{},\"bids\":[],\"asks\":[]}}", unplain.trim_end_matches('}'));
            assert!(matches!(sort_depth_book(&book), Err(Refusal::Shape(_))), "{book}");
        }
        assert_eq!(check(r#"{"code":null,"message":"success"}"#), Ok(()));
        assert_eq!(check(r#"{"code":"400","message":"bad"}"#), Err(Refusal::Code(400, "bad".into())));
        // 200, as the WebSocket auth answers write success: an accepted order is never
        // reported as refused and unsent.
        assert_eq!(check(r#"{"code":200,"message":"success"}"#), Ok(()));
        assert_eq!(check(r#"{"code":"200"}"#), Ok(()));
        assert_eq!(check(r#"{"code":201,"message":"created"}"#), Err(Refusal::Code(201, "created".into())));
        assert!(sort_depth_book(r#"{"code":"0","asks":[],"bids":[]}"#).is_ok());
        assert!(sort_depth_book(r#"{"code":null,"asks":[],"bids":[]}"#).is_ok());
        assert!(sort_depth_book(r#"{"code":200,"asks":[],"bids":[]}"#).is_ok());
        assert_eq!(sort_depth_book(r#"{"code":"3","message":"no"}"#), Err(Refusal::Code(3, "no".into())));
        assert!(
            matches!(sort_depth_book(r#"{"code":"x","asks":[]}"#), Err(Refusal::Shape(m)) if m.ends_with(r#"(\"x\")"#))
        );
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
