//! The levels of a depth book, read one way for `perps_query_depth_book` (REST,
//! `endpoints::answer::sort_depth_book`) and for the market stream's `depth_book` pushes
//! (`stream::depth` on the serde path, `stream::push_scan` in its single pass): what a level
//! may look like, what its price and quantity must be, and how a problem is worded. The sort
//! is shared too (`decimal::book_order`, `decimal::BookSorter`).
//!
//! A level is `[price, qty, …]` (the venue's documented shape; elements after the quantity
//! are kept as sent) or an object `{"price" or "px": …, "qty", "sz", "size" or "quantity": …,
//! …}` (each named once). The price and the quantity are JSON strings — their content, escapes
//! decoded (`"\u0031"` is 1 to every JSON reader) — or numbers (their literal). The price must
//! be a decimal (`crate::decimal::Decimal`), the quantity a decimal of zero or more. A level
//! that is anything else makes the whole book unreadable: a book sorted around a level that
//! cannot be read, or one that carries a quantity of `"NaN"`, `null` or `-1`, is silently
//! wrong for whoever quotes from it.

use crate::decimal::Decimal;
use crate::error::excerpt;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A level's price and quantity, as text.
#[derive(Debug)]
pub(crate) struct Level<'a> {
    pub price: Cow<'a, str>,
    pub qty: Cow<'a, str>,
}

/// What is wrong with a level.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Problem<'t> {
    /// Its shape (the words after "level N of side").
    Shape(&'static str),
    /// Its price is not a decimal.
    Price(&'t str),
    /// Its quantity is not a decimal of zero or more.
    Quantity(&'t str),
}

const NOT_A_LEVEL: &str = "is not a [price, qty] level";

/// Read one level from its JSON text (valid JSON: a raw value of the book).
pub(crate) fn read_level(level: &str) -> Result<Level<'_>, &'static str> {
    let mut de = serde_json::Deserializer::from_str(level);
    de.deserialize_any(LevelVisitor).unwrap_or(Err(NOT_A_LEVEL))
}

/// An element of a level as text: a JSON string's content (decoded only when it holds an
/// escape), or any other value's text as sent (which no decimal reading accepts unless it is
/// a number). A string serde_json cannot decode (a lone surrogate, `"1\ud800"`) is its text
/// as sent, quotes included: no decimal either, and the error quotes what the venue wrote.
pub(crate) fn element_text(raw: &RawValue) -> Cow<'_, str> {
    let text = raw.get();
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(inner) if !inner.contains('\\') => Cow::Borrowed(inner),
        Some(_) => serde_json::from_str::<String>(text).map_or(Cow::Borrowed(text), Cow::Owned),
        None => Cow::Borrowed(text),
    }
}

/// Whether `text` is a quantity: a decimal of zero or more (`"0"`, `"1.5"`, `2`, `1e-3`).
#[inline]
pub(crate) fn is_quantity(text: &str) -> bool {
    // The common form, digits with at most one point, without a parse.
    let (mut digits, mut points) = (0usize, 0usize);
    for &b in text.as_bytes() {
        match b {
            b'0'..=b'9' => digits += 1,
            b'.' => points += 1,
            _ => return Decimal::parse(text).is_some_and(|d| !d.is_negative()),
        }
    }
    (digits > 0 && points <= 1) || Decimal::parse(text).is_some_and(|d| !d.is_negative())
}

/// The problem a side is reported for, if any: that of its first level with one, a level's
/// shape coming before its price, its price before its quantity. `level(i)`: the price and
/// quantity of level `i`, or what is wrong with its shape. The callers sort first (the sort
/// reads every price) and check the quantities, and ask this only when one of them failed.
pub(crate) fn first_problem<'t>(
    count: usize,
    level: impl Fn(usize) -> Result<(&'t str, &'t str), &'static str>,
) -> Option<(usize, Problem<'t>)> {
    (0..count).find_map(|i| match level(i) {
        Err(shape) => Some((i, Problem::Shape(shape))),
        Ok((price, _)) if Decimal::parse(price).is_none() => Some((i, Problem::Price(price))),
        Ok((_, qty)) if !is_quantity(qty) => Some((i, Problem::Quantity(qty))),
        Ok(_) => None,
    })
}

/// The words for a level's problem, the same on REST and on the stream.
pub(crate) fn describe(side: &str, index: usize, problem: &Problem<'_>) -> String {
    match problem {
        Problem::Shape(what) => format!("level {index} of \"{side}\" {what}"),
        Problem::Price(price) => format!("level {index} of \"{side}\": price \"{}\" is not a decimal", excerpt(price)),
        Problem::Quantity(qty) => {
            format!("level {index} of \"{side}\": quantity \"{}\" is not a decimal of zero or more", excerpt(qty))
        }
    }
}

/// A side named twice in one book: which copy is the book?
pub(crate) fn named_twice(side: &str) -> String {
    format!("\"{side}\" is named twice")
}

const PRICE_KEYS: [&str; 2] = ["price", "px"];
const QTY_KEYS: [&str; 4] = ["qty", "sz", "size", "quantity"];

struct LevelVisitor;

impl<'de> Visitor<'de> for LevelVisitor {
    type Value = Result<Level<'de>, &'static str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a [price, qty] level")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let Some(price) = seq.next_element::<&'de RawValue>()? else { return Ok(Err("is empty")) };
        let Some(qty) = seq.next_element::<&'de RawValue>()? else { return Ok(Err("has no quantity")) };
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Ok(Level { price: element_text(price), qty: element_text(qty) }))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut price, mut qty): (Option<&'de RawValue>, Option<&'de RawValue>) = (None, None);
        let mut twice = None;
        while let Some(crate::json_entries::Key(key)) = map.next_key()? {
            let slot = if PRICE_KEYS.contains(&key.as_ref()) {
                Some((&mut price, "names its price twice"))
            } else if QTY_KEYS.contains(&key.as_ref()) {
                Some((&mut qty, "names its quantity twice"))
            } else {
                None
            };
            match slot {
                Some((slot, what)) => {
                    let value = map.next_value::<&'de RawValue>()?;
                    if slot.replace(value).is_some() {
                        twice = twice.or(Some(what));
                    }
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(match (twice, price, qty) {
            (Some(what), _, _) => Err(what),
            (None, Some(price), Some(qty)) => Ok(Level { price: element_text(price), qty: element_text(qty) }),
            (None, None, _) => Err("has no price"),
            (None, Some(_), None) => Err("has no quantity"),
        })
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Err(NOT_A_LEVEL))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Err(NOT_A_LEVEL))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Err(NOT_A_LEVEL))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Err(NOT_A_LEVEL))
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Err(NOT_A_LEVEL))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Err(NOT_A_LEVEL))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(level: &str) -> Result<(String, String), &'static str> {
        read_level(level).map(|l| (l.price.into_owned(), l.qty.into_owned()))
    }

    #[test]
    fn levels_as_pairs_or_objects_with_escapes_decoded() {
        let pair = |p: &str, q: &str| Ok((p.to_owned(), q.to_owned()));
        assert_eq!(read(r#"["65000.1","0.5"]"#), pair("65000.1", "0.5"));
        assert_eq!(read(r#"[ 65000.1 , 2 , 7 ]"#), pair("65000.1", "2"));
        assert_eq!(read(r#"["\u0031","2"]"#), pair("1", "2"));
        assert_eq!(read(r#"{"price":"1","qty":"2","n":3}"#), pair("1", "2"));
        assert_eq!(read(r#"{"px":1,"sz":"2"}"#), pair("1", "2"));
        assert_eq!(read(r#"{"pr\u0069ce":"1","size":"2"}"#), pair("1", "2"));
        assert_eq!(read(r#"[null,true]"#), pair("null", "true"), "read, then refused as no decimal");
        assert_eq!(
            read(r#"["1\ud800","2"]"#),
            pair(r#""1\ud800""#, "2"),
            "as sent (no text to serde_json), then refused as no decimal"
        );
        for (level, what) in [
            ("[]", "is empty"),
            (r#"["1"]"#, "has no quantity"),
            (r#"{"qty":"1"}"#, "has no price"),
            (r#"{"price":"1"}"#, "has no quantity"),
            (r#"{"price":"1","px":"2","qty":"1"}"#, "names its price twice"),
            (r#"{"price":"1","qty":"1","sz":"1"}"#, "names its quantity twice"),
            ("5", NOT_A_LEVEL),
            (r#""1,2""#, NOT_A_LEVEL),
            ("null", NOT_A_LEVEL),
        ] {
            assert_eq!(read(level), Err(what), "{level}");
        }
    }

    #[test]
    fn quantities_are_decimals_of_zero_or_more() {
        for qty in ["0", "1.5", "0.000", "2", "1e-3", "1E2", "+1", ".5", "1.", "-0", "-0.0"] {
            assert!(is_quantity(qty), "{qty}");
        }
        for qty in ["-1", "-0.1", "NaN", "null", "", ".", "1.2.3", "1,5", " 1", "0x10", "inf", "1e"] {
            assert!(!is_quantity(qty), "{qty}");
        }
    }

    #[test]
    fn the_first_problem_in_level_order_shape_then_price_then_quantity() {
        let levels: Vec<Result<(&str, &str), &'static str>> =
            vec![Ok(("1", "1")), Ok(("2", "NaN")), Ok(("x", "1")), Err("is empty")];
        assert_eq!(first_problem(4, |i| levels[i]), Some((1, Problem::Quantity("NaN"))));
        assert_eq!(first_problem(1, |_| Ok(("x", "-1"))), Some((0, Problem::Price("x"))));
        assert_eq!(first_problem(1, |_| Err("is empty")), Some((0, Problem::Shape("is empty"))));
        assert_eq!(first_problem(2, |_| Ok(("1", "0"))), None);
        assert_eq!(
            describe("asks", 1, &Problem::Quantity("NaN")),
            r#"level 1 of "asks": quantity "NaN" is not a decimal of zero or more"#
        );
    }
}
