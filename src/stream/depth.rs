//! `depth_book` pushes: the venue sends the levels unsorted; the event carries them sorted
//! the way `perps_query_depth_book` returns them — bids best (highest) first, asks best
//! (lowest) first — by exact decimal value, with each level's text kept byte for byte.
//! The order comes from `crate::decimal::book_order`, the one that `perps_query_depth_book`
//! uses, so that REST and the stream can never sort a book differently.

use super::push_scan::{Book, BookField};
use super::push_serde::DataSymbol;
use crate::book_levels::{self, describe};
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
    let book = de.deserialize_map(DataVisitor).map_err(|e| bad(e.to_string()))?;
    write_sorted(&book, data.get().len())
}

/// `data` read in place from a deserializer (the push's own pass): the sorted text, or our
/// error for a book that parses but is wrong (a side missing or named twice, a level that is
/// not one, a price that is not a decimal…); and the symbol it names.
pub struct SortedSeed;
impl<'de> de::DeserializeSeed<'de> for SortedSeed {
    type Value = (Result<String>, DataSymbol<'de>);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        let book = d.deserialize_map(DataVisitor)?;
        let symbol = book_symbol(&book);
        Ok((write_sorted(&book, 1024), symbol))
    }
}

/// The `symbol` a book's `data` names (`push_serde::data_symbol` reads any other `data`).
fn book_symbol<'de>(book: &BookData<'de>) -> DataSymbol<'de> {
    let mut named = book.fields.iter().filter(|(key, _)| key == "symbol");
    match (named.next(), named.next()) {
        (None, _) => DataSymbol::None,
        (Some((_, Field::Raw(raw))), None) => super::push_serde::symbol_text(raw),
        (Some(_), None) => DataSymbol::None,
        (Some(_), Some(_)) => DataSymbol::Twice,
    }
}

/// A book's `data` as read: its fields in the venue's order.
struct BookData<'a> {
    fields: Vec<(Cow<'a, str>, Field<'a>)>,
}

fn write_sorted(book: &BookData<'_>, capacity: usize) -> Result<String> {
    for side in ["asks", "bids"] {
        match book.fields.iter().filter(|(key, _)| key == side).count() {
            0 => return Err(bad(format!("the book has no \"{side}\""))),
            1 => {}
            _ => return Err(bad(crate::book_levels::named_twice(side))),
        }
    }
    let mut out = String::with_capacity(capacity + 16);
    out.push('{');
    for (i, (key, value)) in book.fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        super::json::push_str(&mut out, key);
        out.push(':');
        match value {
            Field::Raw(raw) => out.push_str(raw.get()),
            Field::Levels(side, levels) => {
                let order = sort_levels(levels, *side).map_err(|(n, problem)| bad(describe(key, n, &problem)))?;
                out.push('[');
                for (n, &i) in order.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    out.push_str(levels[i].text.get());
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

/// One level: its text as sent, and its price and quantity (`crate::book_levels`).
struct Level<'a> {
    text: &'a RawValue,
    read: std::result::Result<book_levels::Level<'a>, &'static str>,
}

/// The order of a side, best level first (`crate::decimal::book_order`), or its first
/// problem (`crate::book_levels::first_problem`).
fn sort_levels<'t>(
    levels: &'t [Level<'_>],
    side: Side,
) -> std::result::Result<Vec<usize>, (usize, book_levels::Problem<'t>)> {
    let texts = |i: usize| levels[i].read.as_ref().map(|l| (l.price.as_ref(), l.qty.as_ref())).map_err(|shape| *shape);
    let readable = levels.iter().all(|level| level.read.as_ref().is_ok_and(|l| book_levels::is_quantity(&l.qty)));
    let prices: Vec<&str> = levels.iter().map(|level| level.read.as_ref().map_or("", |l| l.price.as_ref())).collect();
    match readable.then(|| crate::decimal::book_order(&prices, side == Side::Bids)) {
        Some(Ok(order)) => Ok(order),
        _ => Err(book_levels::first_problem(levels.len(), texts)
            .unwrap_or((0, book_levels::Problem::Shape("cannot be read")))),
    }
}

fn bad(what: String) -> Error {
    Error::bad_response(format!("depth_book push: {what}"))
}

/// A book read by the scanner (`push_scan`), written as `data` into `out` with its levels
/// sorted: the same text `sorted_data` writes for it, or the same error.
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
                let quantities = levels.iter().all(|level| book_levels::is_quantity(level.qty.of(text)));
                let order = match sorter.sort(levels.len(), price, side == Side::Bids) {
                    Ok(order) if quantities => order,
                    _ => {
                        let texts = |i: usize| Ok((levels[i].price.of(text), levels[i].qty.of(text)));
                        let (n, problem) = book_levels::first_problem(levels.len(), texts)
                            .unwrap_or((0, book_levels::Problem::Shape("cannot be read")));
                        return Err(bad(describe(key, n, &problem)));
                    }
                };
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
    type Value = BookData<'de>;
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
        Ok(BookData { fields })
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

/// `[level, …]`, or `null` for an empty side (what a server that serialises an empty list as
/// null sends): written as `[]`. Each level is kept as sent and read by
/// `crate::book_levels::read_level`.
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
        while let Some(text) = seq.next_element::<&'de RawValue>()? {
            levels.push(Level { text, read: book_levels::read_level(text.get()) });
        }
        Ok(levels)
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
        assert_eq!(sorted(r#"{"bids":null,"asks":null}"#).unwrap(), r#"{"bids":[],"asks":[]}"#);
    }

    #[test]
    fn malformed_books_are_errors() {
        for (data, fragment) in [
            (r#"[1]"#, "\"data\" to be a JSON object"),
            ("null", "\"data\" to be a JSON object"),
            (r#"{"bids":{},"asks":[]}"#, "an array of levels"),
            (r#"{"asks":[[]],"bids":[]}"#, r#"level 0 of "asks" is empty"#),
            (r#"{"asks":[5],"bids":[]}"#, r#"level 0 of "asks" is not a [price, qty] level"#),
            (r#"{"asks":[["1"]],"bids":[]}"#, r#"level 0 of "asks" has no quantity"#),
            (r#"{"asks":[["1.2.3","1"]],"bids":[]}"#, r#"level 0 of "asks": price "1.2.3" is not a decimal"#),
            (r#"{"asks":[["1","1"],["abc","1"]],"bids":[]}"#, r#"level 1 of "asks": price "abc" is not a decimal"#),
            (r#"{"bids":[[null,"1"]],"asks":[]}"#, r#"level 0 of "bids": price "null" is not a decimal"#),
            (r#"{"bids":[["1","NaN"]],"asks":[]}"#, "quantity \"NaN\" is not a decimal of zero or more"),
            (r#"{"bids":[["1",null]],"asks":[]}"#, "quantity \"null\" is not a decimal of zero or more"),
            (r#"{"bids":[["1","-1"]],"asks":[]}"#, "quantity \"-1\" is not a decimal of zero or more"),
            (r#"{"bids":[["1","2"],["x","-1"]],"asks":[]}"#, r#"level 1 of "bids": price "x""#),
            (r#"{"bids":[["2","-1"],["x","1"]],"asks":[]}"#, r#"level 0 of "bids": quantity "-1""#),
            ("{}", "the book has no \"asks\""),
            (r#"{"Asks":[],"bids":[]}"#, "the book has no \"asks\""),
            (r#"{"asks":[]}"#, "the book has no \"bids\""),
            (r#"{"asks":[],"bids":[],"asks":[]}"#, "\"asks\" is named twice"),
        ] {
            let e = sorted(data).unwrap_err();
            assert!(e.message().contains(fragment), "{data}: {}", e.message());
        }
    }
}
