//! `depth_book` pushes: the venue sends the levels unsorted; the event carries them sorted
//! the way `perps_query_depth_book` returns them — bids best (highest) first, asks best
//! (lowest) first — by exact decimal value, with each level's text kept byte for byte.
//! The order comes from `crate::decimal::book_order`, the one that `perps_query_depth_book`
//! uses, so that REST and the stream can never sort a book differently.

use super::push_scan::{Book, BookField};
use crate::decimal::BookSorter;
use crate::error::{Error, Result};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Bids,
    Asks,
}

/// `data` of a `depth_book` push with its `asks` and `bids` sorted; every other field is
/// kept as sent, in its place. One pass over `data` (levels are read as they are met).
pub fn sorted_data(data: &RawValue) -> Result<String> {
    let mut de = serde_json::Deserializer::from_str(data.get());
    let fields = de.deserialize_map(DataVisitor).map_err(|e| bad(e.to_string()))?;
    write_sorted(fields, data.get().len())
}

/// `data` read in place from a deserializer (the push's own pass): the sorted text, or our
/// error for a book that parses but is wrong (a price that is not a decimal).
pub struct SortedSeed;
impl<'de> de::DeserializeSeed<'de> for SortedSeed {
    type Value = Result<String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        let fields = d.deserialize_map(DataVisitor)?;
        Ok(write_sorted(fields, 1024))
    }
}

fn write_sorted(fields: Vec<(Cow<'_, str>, Field<'_>)>, capacity: usize) -> Result<String> {
    let mut out = String::with_capacity(capacity + 16);
    out.push('{');
    for (i, (key, value)) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        super::json::push_str(&mut out, &key);
        out.push(':');
        match value {
            Field::Raw(raw) => out.push_str(raw.get()),
            Field::Levels(side, mut levels) => {
                sort_levels(&mut levels, side).map_err(|price| not_a_decimal(&key, &price))?;
                out.push('[');
                for (n, level) in levels.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    level.write(&mut out);
                }
                out.push(']');
            }
        }
    }
    out.push('}');
    Ok(out)
}

/// One field of `data`.
enum Field<'a> {
    Raw(&'a RawValue),
    Levels(Side, Vec<Level<'a>>),
}

/// One `[price, qty, …]` level: its elements' texts as sent, and the price's decimal text.
struct Level<'a> {
    price: Cow<'a, str>,
    first: &'a RawValue,
    second: Option<&'a RawValue>,
    /// Elements after the second (none in the venue's documented shape: no allocation).
    rest: Vec<&'a RawValue>,
}

impl Level<'_> {
    fn write(&self, out: &mut String) {
        out.push('[');
        out.push_str(self.first.get());
        for element in self.second.iter().chain(self.rest.iter()) {
            out.push(',');
            out.push_str(element.get());
        }
        out.push(']');
    }
}

/// The sort, best level first (`crate::decimal::book_order`); a price that is not a decimal
/// is returned as the error.
fn sort_levels(levels: &mut [Level<'_>], side: Side) -> std::result::Result<(), String> {
    let prices: Vec<&str> = levels.iter().map(|level| level.price.as_ref()).collect();
    let order = crate::decimal::book_order(&prices, side == Side::Bids).map_err(|i| prices[i].to_owned())?;
    apply_order(levels, order);
    Ok(())
}

/// Reorder `items` so that position n holds what was at `order[n]`.
fn apply_order<T>(items: &mut [T], mut order: Vec<usize>) {
    for start in 0..items.len() {
        // Follow each cycle once, swapping into place.
        let mut current = start;
        while order[current] != start {
            let next = order[current];
            items.swap(current, next);
            order[current] = current;
            current = next;
        }
        order[current] = current;
    }
}

fn bad(what: String) -> Error {
    Error::bad_response(format!("depth_book push: {what}"))
}

fn not_a_decimal(key: &str, price: &str) -> Error {
    bad(format!("price \"{}\" in \"{key}\" is not a decimal", crate::error::excerpt(price)))
}

/// A book read by the scanner (`push_scan`), written as `data` into `out` with its levels
/// sorted: the same text `sorted_data` writes for it.
pub fn write_scanned(out: &mut String, text: &str, book: &Book, sorter: &mut BookSorter) -> Result<()> {
    out.push('{');
    for (i, field) in book.fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match *field {
            BookField::Raw { key, value } => {
                super::json::push_str(out, key.of(text));
                out.push(':');
                out.push_str(value.of(text));
            }
            BookField::Levels { key, side, from, to } => {
                let key = key.of(text);
                super::json::push_str(out, key);
                out.push(':');
                let levels = &book.levels[from..to];
                let price = |i: usize| levels[i].price.of(text);
                let order =
                    sorter.sort(levels.len(), price, side == Side::Bids).map_err(|i| not_a_decimal(key, price(i)))?;
                out.push('[');
                for (n, &i) in order.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    out.push_str(levels[i].text.of(text));
                }
                out.push(']');
            }
        }
    }
    out.push('}');
    Ok(())
}

struct DataVisitor;
impl<'de> Visitor<'de> for DataVisitor {
    type Value = Vec<(Cow<'de, str>, Field<'de>)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"data\" to be a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        let mut fields = Vec::with_capacity(4);
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let value = match key.as_ref() {
                "bids" => Field::Levels(Side::Bids, map.next_value_seed(LevelsSeed)?),
                "asks" => Field::Levels(Side::Asks, map.next_value_seed(LevelsSeed)?),
                _ => Field::Raw(map.next_value::<&RawValue>()?),
            };
            fields.push((key, value));
        }
        Ok(fields)
    }
}

/// A key, borrowed unless it holds an escape.
struct Key<'a>(Cow<'a, str>);
impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> std::result::Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// `[[price, qty, …], …]`, or `null` for an empty side (what a server that serialises an
/// empty list as null sends): written as `[]`.
struct LevelsSeed;
impl<'de> de::DeserializeSeed<'de> for LevelsSeed {
    type Value = Vec<Level<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_option(self)
    }
}
impl<'de> Visitor<'de> for LevelsSeed {
    type Value = Vec<Level<'de>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of levels")
    }
    fn visit_none<E: de::Error>(self) -> std::result::Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Self::Value, A::Error> {
        let mut levels = Vec::with_capacity(seq.size_hint().unwrap_or(32));
        while let Some(level) = seq.next_element_seed(LevelSeed)? {
            levels.push(level);
        }
        Ok(levels)
    }
}

/// `[price, qty, …]`: a non-empty array whose first element is the price.
struct LevelSeed;
impl<'de> de::DeserializeSeed<'de> for LevelSeed {
    type Value = Level<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}
impl<'de> Visitor<'de> for LevelSeed {
    type Value = Level<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a [price, qty] array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Self::Value, A::Error> {
        let first: &RawValue = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let second = seq.next_element::<&RawValue>()?;
        let mut rest = Vec::new();
        while let Some(element) = seq.next_element::<&RawValue>()? {
            rest.push(element);
        }
        Ok(Level { price: price_text(first), first, second, rest })
    }
}

/// A price as text: a JSON string's content (decoded only when it holds an escape) or a
/// number's literal. Anything else gives a text `Decimal::parse` refuses.
fn price_text(raw: &RawValue) -> Cow<'_, str> {
    let text = raw.get();
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(inner) if !inner.contains('\\') => Cow::Borrowed(inner),
        Some(_) => Cow::Owned(serde_json::from_str::<String>(text).unwrap_or_default()),
        None => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(json: &str) -> Result<String> {
        sorted_data(serde_json::from_str::<&RawValue>(json).unwrap())
    }

    #[test]
    fn bids_high_to_low_asks_low_to_high_by_exact_value_text_kept() {
        let data = r#"{"asks":[["121896.32","1.051"],["121896.020","0.839"],["9999.99","1"],["121896.3","2"]],"bids":[["121884.22","0.001"],["121884.5200","0.001"],["99","5"],[121884.3,"7"]],"symbol":"BTC-USD"}"#;
        assert_eq!(
            sorted(data).unwrap(),
            r#"{"asks":[["9999.99","1"],["121896.020","0.839"],["121896.3","2"],["121896.32","1.051"]],"bids":[["121884.5200","0.001"],[121884.3,"7"],["121884.22","0.001"],["99","5"]],"symbol":"BTC-USD"}"#
        );
    }

    #[test]
    fn an_empty_side_sent_as_null_comes_as_an_empty_array() {
        assert_eq!(
            sorted(r#"{"asks":null,"bids":[["1","2"],["3","4"]],"symbol":"X"}"#).unwrap(),
            r#"{"asks":[],"bids":[["3","4"],["1","2"]],"symbol":"X"}"#
        );
        assert_eq!(sorted(r#"{"bids":null}"#).unwrap(), r#"{"bids":[]}"#);
    }

    #[test]
    fn reordering_follows_every_cycle() {
        let mut items = vec!['a', 'b', 'c', 'd', 'e'];
        apply_order(&mut items, vec![3, 0, 4, 1, 2]);
        assert_eq!(items, vec!['d', 'a', 'e', 'b', 'c']);
    }

    #[test]
    fn malformed_books_are_errors() {
        for (data, fragment) in [
            (r#"[1]"#, "\"data\" to be a JSON object"),
            (r#"{"bids":{}}"#, "an array of levels"),
            (r#"{"asks":[[]]}"#, "[price, qty]"),
            (r#"{"asks":[5]}"#, "[price, qty]"),
            (r#"{"asks":[["1.2.3","1"]]}"#, "not a decimal"),
            (r#"{"asks":[["abc","1"]]}"#, "not a decimal"),
            (r#"{"bids":[[null,"1"]]}"#, "not a decimal"),
        ] {
            let e = sorted(data).unwrap_err();
            assert!(e.message().contains(fragment), "{data}: {}", e.message());
        }
    }
}
