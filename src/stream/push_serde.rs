//! Pushes read with serde, where the single-pass scanner (`push_scan`) leaves them: the
//! envelope in one pass with a `depth_book`'s data sorted in place (`FastPush`); the envelope
//! of any shape, each of its fields as sent (`Envelope`, the general path); a push's `seq`
//! (`read_seq`) and the `symbol` its data names (`data_symbol`). `market.rs` turns what these
//! read into events.

use super::depth;
use crate::error::Result;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// The envelope's fields a push is read by.
const ENVELOPE_KEYS: [&str; 4] = ["seq", "channel", "symbol", "data"];

/// The envelope of a push as sent: `{seq, channel, symbol?, data}`, each field's text, every
/// other field ignored. `None` for a frame that is not a JSON object, or that names one of
/// these fields twice (readers keeping the first or the last copy would disagree on what the
/// push is: it is passed on as `unrecognized`).
pub struct Envelope<'a> {
    pub seq: Option<&'a RawValue>,
    pub channel: Option<&'a RawValue>,
    pub symbol: Option<&'a RawValue>,
    pub data: Option<&'a RawValue>,
}

impl<'a> Envelope<'a> {
    pub fn read(text: &'a str) -> Option<Envelope<'a>> {
        let entries = serde_json::from_str::<crate::endpoints::answer::Entries<'a>>(text).ok()?.0;
        let mut fields: [Option<&'a RawValue>; 4] = [None; 4];
        for (key, value) in entries {
            if let Some(i) = ENVELOPE_KEYS.iter().position(|k| *k == key)
                && fields[i].replace(value).is_some()
            {
                return None;
            }
        }
        let [seq, channel, symbol, data] = fields;
        Some(Envelope { seq, channel, symbol, data })
    }
}

/// A push's `seq` as read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushSeq {
    /// None (or `null`).
    Absent,
    /// Within `i64`: checked for gaps and regressions (`seq.rs`).
    Int(i64),
    /// Beyond `i64` but within 64 bits unsigned (a `u64` counter): carried by the event as
    /// the venue wrote it, not checked.
    Big(u64),
}

impl PushSeq {
    /// The number the gap and regression checks take.
    pub fn counted(self) -> Option<i64> {
        match self {
            PushSeq::Int(n) => Some(n),
            _ => None,
        }
    }

    pub fn from_int(seq: Option<i64>) -> PushSeq {
        seq.map_or(PushSeq::Absent, PushSeq::Int)
    }

    pub fn to_json(self) -> serde_json::Value {
        match self {
            PushSeq::Absent => serde_json::Value::Null,
            PushSeq::Int(n) => n.into(),
            PushSeq::Big(n) => n.into(),
        }
    }
}

/// A push's `seq` (its text, if any): an integer or a string of digits (`super::json::
/// lenient_int`, as ever), or one beyond `i64` within `u64`, written plainly or as a string of
/// digits. `Err` for anything else (`1.5`, `"seven"`, `true`, 2^64).
pub fn read_seq(raw: Option<&RawValue>) -> std::result::Result<PushSeq, ()> {
    let Some(raw) = raw else { return Ok(PushSeq::Absent) };
    let value: serde_json::Value = serde_json::from_str(raw.get()).map_err(|_| ())?;
    if value.is_null() {
        return Ok(PushSeq::Absent);
    }
    if let Some(n) = super::json::lenient_int(Some(&value)) {
        return Ok(PushSeq::Int(n));
    }
    let big = match &value {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        _ => None,
    };
    big.map(PushSeq::Big).ok_or(())
}

/// The text of a string (`symbol`, `channel`), decoded; `None` for any other value.
pub fn text(raw: &RawValue) -> Option<Cow<'_, str>> {
    serde_json::from_str::<BorrowedText<'_>>(raw.get()).ok().map(|text| text.0)
}

/// A push read in one pass: `data` of a `depth_book` push (when `channel` comes before it,
/// as the venue sends it) is decoded and sorted in place; any other `data` is kept raw.
/// Frames this does not read (wrong types, a `seq` beyond `i64`, `data` before `channel`, an
/// envelope field named twice…) take the general path.
pub struct FastPush<'a> {
    pub seq: Option<i64>,
    pub channel: Option<Cow<'a, str>>,
    pub symbol: Option<Cow<'a, str>>,
    pub data: Option<FastData<'a>>,
}

pub enum FastData<'a> {
    Raw(&'a RawValue),
    /// A book: its data sorted (or what is wrong with it), and the symbol it names.
    Sorted(Result<String>, DataSymbol<'a>),
}

impl<'de> Deserialize<'de> for FastPush<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = FastPush<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a push object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<FastPush<'de>, A::Error> {
                let mut push = FastPush { seq: None, channel: None, symbol: None, data: None };
                let mut seen = [false; 4];
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    if let Some(i) = ENVELOPE_KEYS.iter().position(|k| *k == key)
                        && std::mem::replace(&mut seen[i], true)
                    {
                        return Err(serde::de::Error::custom("an envelope field named twice"));
                    }
                    match key.as_ref() {
                        "seq" => push.seq = map.next_value::<super::json::Seq>()?.0,
                        "channel" => push.channel = map.next_value::<Option<BorrowedText<'de>>>()?.map(|t| t.0),
                        "symbol" => push.symbol = map.next_value::<Option<BorrowedText<'de>>>()?.map(|t| t.0),
                        "data" if push.channel.as_deref() == Some("depth_book") => {
                            let (sorted, symbol) = map.next_value_seed(depth::SortedSeed)?;
                            push.data = Some(FastData::Sorted(sorted, symbol));
                        }
                        "data" => push.data = Some(FastData::Raw(map.next_value()?)),
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(push)
            }
        }
        d.deserialize_map(V)
    }
}

/// The `symbol` a push's `data` names: its `symbol` member, when `data` is an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataSymbol<'a> {
    /// None, or one that is not a string.
    None,
    Text(Cow<'a, str>),
    /// Named twice: readers keeping the first or the last copy would disagree on whose data
    /// it is (the push is passed on as `unrecognized`).
    Twice,
}

impl DataSymbol<'_> {
    pub fn text(&self) -> Option<&str> {
        match self {
            DataSymbol::Text(text) => Some(text),
            _ => None,
        }
    }
}

/// A `symbol` member's value: its text when it is a string. A string serde_json refuses to
/// decode (a lone surrogate, `"ETH-USD\ud800"`) is still a string to other JSON readers, and
/// not the envelope's symbol: it is read with U+FFFD in place of the surrogate, so that it
/// disagrees with the envelope rather than counting as no symbol (ETH-USD's data was
/// delivered under BTC-USD).
pub fn symbol_text(raw: &RawValue) -> DataSymbol<'_> {
    match text(raw) {
        Some(text) => DataSymbol::Text(text),
        // Each byte that is no UTF-8 (the surrogate's) as U+FFFD.
        None if raw.get().starts_with('"') => serde_json::from_str::<StringBytes>(raw.get())
            .map_or(DataSymbol::None, |bytes| {
                DataSymbol::Text(Cow::Owned(String::from_utf8_lossy(&bytes.0).into_owned()))
            }),
        None => DataSymbol::None,
    }
}

/// A string's content as bytes, borrowed from the frame unless it holds an escape: serde_json
/// gives a string it cannot decode to text (a lone surrogate's escape, `"\ud800"`, which
/// other JSON readers take) as its WTF-8 bytes.
struct StringBytes<'a>(Cow<'a, [u8]>);
impl<'de> Deserialize<'de> for StringBytes<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = StringBytes<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_bytes<E: serde::de::Error>(self, v: &'de [u8]) -> std::result::Result<Self::Value, E> {
                Ok(StringBytes(Cow::Borrowed(v)))
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> std::result::Result<Self::Value, E> {
                Ok(StringBytes(Cow::Owned(v.to_vec())))
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> std::result::Result<Self::Value, E> {
                Ok(StringBytes(Cow::Borrowed(v.as_bytes())))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
                Ok(StringBytes(Cow::Owned(v.as_bytes().to_vec())))
            }
        }
        d.deserialize_bytes(V)
    }
}

/// The `symbol` member of `data` (`DataSymbol`). It names a public push whose envelope has
/// none (the envelope's is optional, venue-api.md §2.2): without it every symbol of a channel
/// would share one `seq` slot (false regressions under per-symbol counting) and the event
/// would name none; and where the envelope names one too, the two must agree. The scanner
/// reads the same in its own pass (`push_scan`), and so does a book's reading
/// (`depth::SortedSeed`).
pub fn data_symbol(data: &RawValue) -> DataSymbol<'_> {
    struct Symbol;
    impl<'de> serde::de::Visitor<'de> for Symbol {
        type Value = DataSymbol<'de>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
            let (mut symbol, mut twice) = (None, false);
            // Keys read as bytes: one serde_json cannot decode to text stopped a reading as
            // text at that key, and a `symbol` beside it went unseen (data naming another
            // symbol was delivered under the envelope's).
            while let Some(StringBytes(key)) = map.next_key()? {
                if *key == *b"symbol" {
                    let value: &'de RawValue = map.next_value()?;
                    twice |= symbol.replace(symbol_text(value)).is_some();
                } else {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            Ok(if twice { DataSymbol::Twice } else { symbol.unwrap_or(DataSymbol::None) })
        }
    }
    let mut de = serde_json::Deserializer::from_str(data.get());
    serde::Deserializer::deserialize_map(&mut de, Symbol).unwrap_or(DataSymbol::None)
}

/// A string, borrowed from the frame unless it holds an escape.
struct BorrowedText<'a>(Cow<'a, str>);
impl<'de> Deserialize<'de> for BorrowedText<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = BorrowedText<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> std::result::Result<Self::Value, E> {
                Ok(BorrowedText(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
                Ok(BorrowedText(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}
