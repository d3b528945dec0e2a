//! A caller's JSON object read entry by entry: what orders and endpoint parameters share.
//!
//! serde_json's own map keeps the last of two equal keys; here a duplicated key is an error
//! (`{"reduce_only":true,…,"reduce_only":false}` must not silently mean `false`). Keys are
//! borrowed from the caller's text unless they hold escapes, which are decoded, so a name
//! spelled with an escape is still the same name.

use crate::error::excerpt;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

/// The entries of one JSON object, in the caller's order.
pub(crate) type Entries<'a> = Vec<(Cow<'a, str>, Value)>;

/// Why a text is not a usable JSON object; each caller words it for its own noun.
#[derive(Debug)]
pub(crate) enum Problem {
    /// A key appears twice; the message names it.
    Duplicate(String),
    /// Valid JSON, but not an object.
    NotObject,
    /// Not valid JSON (serde_json's description, with line and column).
    Syntax(String),
    /// A valid object followed by more characters.
    Trailing(String),
}

/// Parse `text` as one JSON object, keeping every entry.
pub(crate) fn parse(text: &str) -> Result<Entries<'_>, Problem> {
    let mut de = serde_json::Deserializer::from_str(text);
    let entries = de.deserialize_map(EntriesVisitor).map_err(|e| {
        let message = e.to_string();
        if message.starts_with("duplicate ") {
            Problem::Duplicate(message)
        } else if e.is_data() {
            Problem::NotObject
        } else {
            Problem::Syntax(message)
        }
    })?;
    de.end().map_err(|e| Problem::Trailing(e.to_string()))?;
    Ok(entries)
}

/// "unknown {noun} "x"", with a suggestion when `name` is a known name spelled with other
/// case or underscores (`reduceOnly` → `reduce_only`).
pub(crate) fn unknown_name_message<'k>(noun: &str, name: &str, known: impl IntoIterator<Item = &'k str>) -> String {
    let shown = excerpt(name);
    let normalized: String = name.chars().filter(|c| *c != '_').flat_map(char::to_lowercase).collect();
    let suggestion = known.into_iter().find(|known| known.replace('_', "") == normalized);
    match suggestion {
        Some(known) => format!("unknown {noun} \"{shown}\" (did you mean \"{known}\"?)"),
        None => format!("unknown {noun} \"{shown}\""),
    }
}

/// Up to this many entries, a new key is compared with each earlier one (no set allocated for
/// an order's dozen fields).
const KEYS_COMPARED_IN_TURN: usize = 16;

struct EntriesVisitor;

impl<'de> Visitor<'de> for EntriesVisitor {
    type Value = Entries<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        let mut entries: Entries<'de> = Vec::with_capacity(12);
        // The keys seen, once there are more than a few: comparing each key with every earlier
        // one took most of a minute for an object of 100,000 keys.
        let mut seen: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some((Key(key), value)) = map.next_entry::<Key<'de>, Value>()? {
            let duplicate = if entries.len() < KEYS_COMPARED_IN_TURN {
                entries.iter().any(|(k, _)| *k == key)
            } else {
                if seen.is_empty() {
                    seen.extend(entries.iter().map(|(k, _)| k.clone()));
                }
                !seen.insert(key.clone())
            };
            if duplicate {
                return Err(serde::de::Error::custom(format!("duplicate field \"{}\"", excerpt(&key))));
            }
            entries.push((key, value));
        }
        Ok(entries)
    }
}

/// An object key, borrowed from the caller's text unless it has escapes (serde's own
/// `Cow<str>` always copies).
pub(crate) struct Key<'de>(pub(crate) Cow<'de, str>);

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_order_decode_escapes_and_refuse_duplicates() {
        let entries = parse(r#"{"b":1,"\u0061":"x"}"#).unwrap();
        assert_eq!(entries.iter().map(|(k, _)| k.as_ref()).collect::<Vec<_>>(), ["b", "a"]);
        assert!(matches!(parse(r#"{"a":1,"\u0061":2}"#), Err(Problem::Duplicate(m)) if m.contains("\"a\"")));
        assert!(matches!(parse("[1]"), Err(Problem::NotObject)));
        assert!(matches!(parse("{"), Err(Problem::Syntax(_))));
        assert!(matches!(parse("{} x"), Err(Problem::Trailing(_))));
    }

    #[test]
    fn many_distinct_keys_are_read_in_linear_time() {
        // 100,000 keys (1.3 MB), the last a duplicate: compared each with every earlier one,
        // 5·10^9 comparisons, 28 s in a debug build.
        let keys = 100_000;
        let mut text = String::from("{");
        for i in 0..keys {
            text.push_str(&format!("\"k{i}\":0,"));
        }
        text.push_str("\"k7\":1}");
        let start = std::time::Instant::now();
        assert!(matches!(parse(&text), Err(Problem::Duplicate(m)) if m.contains("\"k7\"")));
        let elapsed = start.elapsed();
        // A bound on the complexity, not a speed target: ~0.08 s linear, 28 s quadratic, and
        // room for a machine 100 times slower.
        assert!(elapsed < std::time::Duration::from_secs(10), "{keys} keys read in {elapsed:?}");
    }

    #[test]
    fn unknown_names_get_a_suggestion_when_only_case_or_underscores_differ() {
        let known = ["order_id", "cl_ord_id"];
        assert_eq!(
            unknown_name_message("parameter", "orderId", known),
            "unknown parameter \"orderId\" (did you mean \"order_id\"?)"
        );
        assert_eq!(unknown_name_message("field", "x", known), "unknown field \"x\"");
    }
}
