//! `depth_book` pushes: the venue sends the levels unsorted; the event carries them sorted
//! the way `perps_query_depth_book` returns them — bids best (highest) first, asks best
//! (lowest) first — by exact decimal value, with each level's text kept byte for byte.
//!
//! TODO(merge main): the trading-loop branch adds the depth-book sort to the core for
//! `perps_query_depth_book`. When main has it, [`sort_levels`] (the one call site, in
//! [`sorted_data`]) must call that function instead of its own comparison, so that REST and
//! the stream can never sort differently.

use crate::error::{Error, Result};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Bids,
    Asks,
}

/// `data` of a `depth_book` push with its `asks` and `bids` sorted; every other field is
/// kept as sent, in its place.
pub fn sorted_data(data: &RawValue) -> Result<String> {
    let fields = parse_fields(data.get())?;
    let mut out = String::with_capacity(data.get().len() + 16);
    out.push('{');
    for (i, (key, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        super::json::push_str(&mut out, key);
        out.push(':');
        let side = match key.as_ref() {
            "bids" => Some(Side::Bids),
            "asks" => Some(Side::Asks),
            _ => None,
        };
        match side {
            Some(side) => {
                let mut levels = parse_levels(value.get(), key)?;
                sort_levels(&mut levels, side);
                out.push('[');
                for (n, (_, level)) in levels.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    out.push_str(level.get());
                }
                out.push(']');
            }
            None => out.push_str(value.get()),
        }
    }
    out.push('}');
    Ok(out)
}

/// The sort, best level first. TODO(merge main): replace with the core's depth-book sort.
fn sort_levels(levels: &mut [(Cow<'_, str>, &RawValue)], side: Side) {
    levels.sort_by(|(a, _), (b, _)| {
        let ascending = compare_decimals(a, b);
        if side == Side::Bids { ascending.reverse() } else { ascending }
    });
}

/// Compare two checked decimal texts (`-?digits(.digits)?`) by value.
pub fn compare_decimals(a: &str, b: &str) -> Ordering {
    let (neg_a, int_a, frac_a) = split_decimal(a);
    let (neg_b, int_b, frac_b) = split_decimal(b);
    let zero_a = int_a.is_empty() && frac_a.is_empty();
    let zero_b = int_b.is_empty() && frac_b.is_empty();
    let negative_a = neg_a && !zero_a;
    let negative_b = neg_b && !zero_b;
    let magnitude = || int_a.len().cmp(&int_b.len()).then_with(|| int_a.cmp(int_b)).then_with(|| frac_a.cmp(frac_b));
    match (negative_a, negative_b) {
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
        (false, false) => magnitude(),
        (true, true) => magnitude().reverse(),
    }
}

/// (negative, integer digits without leading zeros, fraction digits without trailing zeros)
fn split_decimal(text: &str) -> (bool, &str, &str) {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    (negative, int.trim_start_matches('0'), frac.trim_end_matches('0'))
}

fn is_decimal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (int, frac) = match digits.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (digits, None),
    };
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
}

fn bad(what: String) -> Error {
    Error::bad_response(format!("depth_book push: {what}"))
}

/// The object's fields in order, values raw.
fn parse_fields(text: &str) -> Result<Vec<(Cow<'_, str>, &RawValue)>> {
    struct Fields;
    impl<'de> Visitor<'de> for Fields {
        type Value = Vec<(Cow<'de, str>, &'de RawValue)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
            let mut fields = Vec::with_capacity(4);
            while let Some(key) = map.next_key::<Key<'de>>()? {
                fields.push((key.0, map.next_value::<&RawValue>()?));
            }
            Ok(fields)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_map(Fields).map_err(|_| bad("\"data\" is not a JSON object".into()))
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

/// `[[price, qty, …], …]`: each level raw, with its price text (a JSON string or number).
fn parse_levels<'a>(text: &'a str, side: &str) -> Result<Vec<(Cow<'a, str>, &'a RawValue)>> {
    let raw: Vec<&RawValue> =
        serde_json::from_str(text).map_err(|_| bad(format!("\"{side}\" is not an array of levels")))?;
    let mut levels = Vec::with_capacity(raw.len());
    for level in raw {
        let price = serde_json::from_str::<FirstElement>(level.get())
            .map_err(|_| bad(format!("a level of \"{side}\" is not a [price, qty] array")))?
            .0;
        let text: Cow<'a, str> = if price.get().starts_with('"') {
            match serde_json::from_str::<&str>(price.get()) {
                Ok(s) => Cow::Borrowed(s),
                Err(_) => Cow::Owned(serde_json::from_str::<String>(price.get()).unwrap_or_default()),
            }
        } else {
            Cow::Borrowed(price.get())
        };
        if !is_decimal(&text) {
            return Err(bad(format!("price \"{}\" in \"{side}\" is not a decimal", crate::error::excerpt(&text))));
        }
        levels.push((text, level));
    }
    Ok(levels)
}

/// The first element of a non-empty array; the rest is skipped.
struct FirstElement<'a>(&'a RawValue);
impl<'de> de::Deserialize<'de> for FirstElement<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct First;
        impl<'de> Visitor<'de> for First {
            type Value = FirstElement<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a non-empty array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<FirstElement<'de>, A::Error> {
                let first = seq.next_element::<&RawValue>()?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstElement(first))
            }
        }
        d.deserialize_seq(First)
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
    fn decimals_compare_by_value() {
        use Ordering::*;
        for (a, b, want) in [
            ("1", "1.000", Equal),
            ("0.5", "00.50", Equal),
            ("10", "9.99", Greater),
            ("-1", "0", Less),
            ("-0", "0", Equal),
            ("-2", "-10", Greater),
            ("0.01", "0.009", Greater),
        ] {
            assert_eq!(compare_decimals(a, b), want, "{a} vs {b}");
        }
    }

    #[test]
    fn malformed_books_are_errors() {
        for (data, fragment) in [
            (r#"[1]"#, "not a JSON object"),
            (r#"{"bids":{}}"#, "not an array"),
            (r#"{"asks":[[]]}"#, "[price, qty]"),
            (r#"{"asks":[["1e5","1"]]}"#, "not a decimal"),
            (r#"{"asks":[["abc","1"]]}"#, "not a decimal"),
            (r#"{"bids":[[null,"1"]]}"#, "not a decimal"),
        ] {
            let e = sorted(data).unwrap_err();
            assert!(e.message().contains(fragment), "{data}: {}", e.message());
        }
    }
}
