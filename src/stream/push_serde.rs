//! Pushes read with serde, where the single-pass scanner (`push_scan`) leaves them: the
//! envelope in one pass with a `depth_book`'s data sorted in place (`FastPush`), the envelope
//! of any shape (`Push`), and the data's symbol of a public push whose envelope has none
//! (`data_symbol`). `market.rs` turns what these read into events.

use super::depth;
use crate::error::Result;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// The envelope of every push: `{seq, channel, symbol?, data}`.
#[derive(Deserialize)]
pub struct Push<'a> {
    #[serde(default, deserialize_with = "super::json::lenient_seq")]
    pub seq: Option<i64>,
    #[serde(borrow)]
    pub channel: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub symbol: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub data: Option<&'a RawValue>,
}

/// A push read in one pass: `data` of a `depth_book` push (when `channel` comes before it,
/// as the venue sends it) is decoded and sorted in place; any other `data` is kept raw.
/// Frames this does not read (wrong types, `data` before `channel`…) take the slower path.
pub struct FastPush<'a> {
    pub seq: Option<i64>,
    pub channel: Option<Cow<'a, str>>,
    pub symbol: Option<Cow<'a, str>>,
    pub data: Option<FastData<'a>>,
}

pub enum FastData<'a> {
    Raw(&'a RawValue),
    Sorted(Result<String>),
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
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match key.as_ref() {
                        "seq" => push.seq = map.next_value::<super::json::Seq>()?.0,
                        "channel" => push.channel = map.next_value::<Option<BorrowedText<'de>>>()?.map(|t| t.0),
                        "symbol" => push.symbol = map.next_value::<Option<BorrowedText<'de>>>()?.map(|t| t.0),
                        "data" if push.channel.as_deref() == Some("depth_book") => {
                            push.data = Some(FastData::Sorted(map.next_value_seed(depth::SortedSeed)?))
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

/// The `symbol` that names a public push whose envelope has none (it is optional,
/// venue-api.md §2.2): the first `symbol` member of its `data` object, when it is a string.
/// Without it every symbol of a channel would share one `seq` slot (false regressions under
/// per-symbol counting) and the event would name none. The scanner reads the same in its own
/// pass (`push_scan::data_symbol`).
pub fn data_symbol(data: &RawValue) -> Option<Cow<'_, str>> {
    struct FirstSymbol;
    impl<'de> serde::de::Visitor<'de> for FirstSymbol {
        type Value = Option<Cow<'de, str>>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
            let mut symbol = None;
            let mut seen = false;
            while let Some(key) = map.next_key::<BorrowedText<'de>>()? {
                if key.0 == "symbol" && !seen {
                    seen = true;
                    let value: &'de RawValue = map.next_value()?;
                    symbol = serde_json::from_str::<BorrowedText<'de>>(value.get()).ok().map(|text| text.0);
                } else {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            Ok(symbol)
        }
    }
    let mut de = serde_json::Deserializer::from_str(data.get());
    serde::Deserializer::deserialize_map(&mut de, FirstSymbol).ok().flatten()
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
