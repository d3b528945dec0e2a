//! The single-pass reading of a plain order: the caller's text scanned once, each value
//! borrowed, checked with the same `fields` functions as the reference path, and written
//! from the borrowed text. No `serde_json::Value`, no allocation before the body.
//!
//! It accepts only what it reads completely: an object of known, distinct keys without
//! escapes, whose values are strings without escapes or control characters, `true`,
//! `false` or integers written `[1-9][0-9]*`, in which every check passes. Everything else —
//! escapes, other number forms, `null`, duplicates, unknown fields, any failed check — is
//! left to the reference path (`None`), which gives the error or the body. Accepting means
//! the reference path would give the same body (the `order` fuzz target and
//! `tests/order_validation.rs` compare them).

use super::{FIELDS, Kind, Need, Piece};
use crate::fields;

/// The fields of a plain, valid order (absent ones `None`), or `None` for the reference path.
pub(super) fn scan(text: &str) -> Option<[Option<Piece<'_>>; FIELDS.len()]> {
    let bytes = text.as_bytes();
    let mut present: [Option<Piece>; FIELDS.len()] = [None; FIELDS.len()];
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_space(bytes, at + 1);
    loop {
        let (key, next) = string(text, at)?;
        let index = FIELDS.iter().position(|(name, _, _)| *name == key)?;
        if present[index].is_some() {
            return None;
        }
        at = skip_space(bytes, next);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        at = skip_space(bytes, at + 1);
        let (piece, next) = match bytes.get(at)? {
            b'"' => {
                let (value, next) = string(text, at)?;
                (Piece::Text(value), next)
            }
            b't' if bytes[at..].starts_with(b"true") => (Piece::Literal("true"), at + 4),
            b'f' if bytes[at..].starts_with(b"false") => (Piece::Literal("false"), at + 5),
            b'1'..=b'9' => {
                let end = at + bytes[at..].iter().take_while(|b| b.is_ascii_digit()).count();
                (Piece::Literal(&text[at..end]), end)
            }
            _ => return None,
        };
        if !accepts(FIELDS[index].0, FIELDS[index].1, piece) {
            return None;
        }
        present[index] = Some(piece);
        at = skip_space(bytes, next);
        match bytes.get(at)? {
            b',' => at = skip_space(bytes, at + 1),
            b'}' => break,
            _ => return None,
        }
    }
    if skip_space(bytes, at + 1) != bytes.len() {
        return None;
    }
    let limit = matches!(present[2], Some(Piece::Text("limit")));
    for (index, (_, _, need)) in FIELDS.iter().enumerate() {
        let required = *need == Need::Always || (*need == Need::ForLimit && limit);
        if required && present[index].is_none() {
            return None;
        }
    }
    Some(present)
}

/// Whether `text` can be written between quotes as it is (what `Piece::Text` requires).
pub(super) fn plain_text(text: &str) -> bool {
    text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\')
}

/// The check of the reference path, on the borrowed text.
fn accepts(name: &str, kind: Kind, piece: Piece<'_>) -> bool {
    match (kind, piece) {
        (Kind::Symbol, Piece::Text(s)) => fields::symbol_text(name, s).is_ok(),
        (Kind::Text, Piece::Text(s)) => fields::visible_text_content(name, s).is_ok(),
        (Kind::Enum(allowed), Piece::Text(s)) => allowed.contains(&s),
        (Kind::Decimal, Piece::Text(s)) => fields::positive_decimal_text(name, s).is_ok(),
        (Kind::Bool, Piece::Literal(word)) => word == "true" || word == "false",
        // `[1-9][0-9]*` within 1..=u32::MAX, as the reference's `as_u64` range check.
        (Kind::PositiveInt, Piece::Literal(digits)) => {
            digits.len() <= 10 && digits.parse::<u64>().is_ok_and(|n| (1..=u64::from(u32::MAX)).contains(&n))
        }
        _ => false,
    }
}

/// JSON's four whitespace bytes.
fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// A string starting at `at` (its opening quote): its content and the index after its
/// closing quote. `None` for an escape or a control character (the reference path decodes
/// or refuses those).
fn string(text: &str, at: usize) -> Option<(&str, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let start = at + 1;
    let length = bytes[start..].iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    let end = start + length;
    // A quote ends it; a backslash or a control character sends the text to the reference.
    (bytes[end] == b'"').then(|| (&text[start..end], end + 1))
}

#[cfg(test)]
mod tests {
    use super::super::{validate, validate_reference};
    use super::*;

    const PLAIN: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"alo","reduce_only":false,"cl_ord_id":"c-1","leverage":10}"#;

    #[test]
    fn plain_orders_are_read_by_the_scanner_and_agree_with_the_reference() {
        for text in [
            PLAIN,
            " {\n\t\"symbol\" : \"BTC-USD\" ,\"side\":\"sell\",\"order_type\":\"market\",\"qty\":\"1\",\"time_in_force\":\"ioc\",\"reduce_only\":true } \r\n",
            r#"{"reduce_only":true,"qty":"2.5","order_type":"market","side":"buy","symbol":"ETH-USD","time_in_force":"ioc","tp_price":"1.0","sl_price":"0.5","margin_mode":"cross","leverage":4294967295}"#,
        ] {
            assert!(scan(text).is_some(), "{text}");
            assert_eq!(validate(text).unwrap(), validate_reference(text).unwrap(), "{text}");
        }
    }

    #[test]
    fn anything_unusual_goes_to_the_reference_path() {
        for text in [
            r#"{"symbol":"BTC\u002dUSD","side":"buy","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":true}"#,
            r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":true,"leverage":1e1}"#,
            r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":true,"leverage":10.0}"#,
            r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":true,"leverage":4294967296}"#,
            r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":true,"symbol":"BTC-USD"}"#,
            r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":truex}"#,
            r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":true} x"#,
            r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"1","reduce_only":true}"#,
            r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":"true"}"#,
            r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"01","time_in_force":"ioc","reduce_only":true}"#,
            r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":true,"price":null}"#,
            r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":true,"cl_ord_id":"a b"}"#,
            "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"market\",\"qty\":\"1\",\"time_in_force\":\"ioc\",\"reduce_only\":true,\"cl_ord_id\":\"a\tb\"}",
            r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":true,}"#,
            r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":true,"Symbol":"x"}"#,
            "{}",
            "[]",
            "",
            "{",
        ] {
            assert!(scan(text).is_none(), "{text}");
            assert_eq!(validate(text), validate_reference(text), "{text}");
        }
    }
}
