//! A market stream frame that refuses one of the caller's subscriptions, tied to it.
//!
//! The venue does not document whether it answers a subscribe (venue-api.md §6b), so the
//! refusal's form is read as the sources suggest it could come: an `error` channel as the
//! sandbox sends (`{"seq","channel":"error","data":{"code":400,"msg":"invalid symbol X"}}`),
//! the answer on a channel named after the request as the auth frame's is (`"channel":
//! "subscribe"`), or no channel at all in the order stream's flat form (`{"code","message"}`),
//! with its code, `success:false` or `error` where `auth_answer::states_refusal` reads them.
//! The library sends nothing on this stream after its auth frame but subscribes, so such a
//! frame can only answer one — but which one, only the frame can say:
//! - it names it: `channel` / `symbol` in its `data`, in an echoed `subscribe` or `request`
//!   object, or `symbol` in its envelope;
//! - or its words name it: a subscription's symbol (and channel, to choose between a
//!   symbol's channels), or a channel alone, as whole words;
//! - or it names nothing, came within `BARE_REFUSAL_WINDOW` of the subscribe frames, and
//!   exactly one public subscription is still awaited (has had neither a push nor a refusal on
//!   this connection). Account channels are asked for in the auth frame, whose answer answered
//!   them; an account channel with no activity yet (no order placed) would otherwise take the
//!   blame for any bare refusal once the books are flowing, and a quiet public one for a bare
//!   error long after its subscribe.
//!
//! Of the subscriptions so named, the first one sent that is still awaited is the one refused
//! (the venue answers a connection's frames in order); when none is awaited, only a single
//! named one is. A refusal tied so becomes an `error` event naming the subscription
//! (`events::refused_subscription`); any other frame stays `unrecognized`.

use super::subscriptions::{ACCOUNT_CHANNELS, PUBLIC_CHANNELS, Subscription};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::time::Duration;

/// What a subscription has had on the current connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heard {
    /// Nothing yet.
    Awaited,
    /// A push.
    Pushed,
    /// A refusal.
    Refused,
}

/// Whether `frame` (on no channel, the `error` channel or the `subscribe` channel) states a
/// refusal.
pub fn is_refusal(frame: &Map<String, Value>) -> bool {
    match frame.get("channel") {
        Some(Value::String(channel)) if channel.eq_ignore_ascii_case("subscribe") => {
            let mut unchanneled = frame.clone();
            unchanneled.remove("channel");
            super::auth_answer::states_refusal(&unchanneled)
        }
        _ => super::auth_answer::states_refusal(frame),
    }
}

/// Whether a frame whose envelope's `channel` is `channel` (None: absent) could state a
/// refusal at all, read from its channel alone, before the frame is parsed whole. It asks
/// `is_refusal` of a frame with that channel and a refusing code, so which channels a
/// refusal comes on is decided in one place.
pub fn channel_may_refuse(channel: Option<&RawValue>) -> bool {
    let mut probe = Map::new();
    if let Some(raw) = channel {
        let Ok(value) = serde_json::from_str::<Value>(raw.get()) else { return true };
        probe.insert("channel".to_owned(), value);
    }
    probe.insert("code".to_owned(), Value::from(400));
    is_refusal(&probe)
}

/// How long after the subscribe frames a refusal that names nothing may still be taken for
/// the answer to one. A venue answers a subscribe within a round trip; a quiet public
/// subscription (`public_trade` of an illiquid symbol) stays awaited for the whole
/// connection, and a bare error the venue sends an hour later (`{"code":500,"msg":"internal
/// error"}`) is no answer to it: it stays `unrecognized`, delivered as ever.
pub const BARE_REFUSAL_WINDOW: Duration = Duration::from_secs(10);

/// The index in `subs` of the subscription `frame` (a refusal) refuses, if it can be told.
/// `bare_may_answer`: whether a refusal naming nothing may still answer a subscribe (within
/// `BARE_REFUSAL_WINDOW` of them).
pub fn tie(frame: &Map<String, Value>, subs: &[Subscription], heard: &[Heard], bare_may_answer: bool) -> Option<usize> {
    let (channel, symbol) = named(frame);
    let texts = words(frame);
    let candidates: Vec<usize> = if channel.is_some() || symbol.is_some() {
        (0..subs.len())
            .filter(|&i| {
                channel.is_none_or(|c| subs[i].channel == c)
                    && symbol.is_none_or(|s| subs[i].symbol.as_deref().is_some_and(|own| own.eq_ignore_ascii_case(s)))
            })
            .collect()
    } else {
        named_in_words(&texts, subs)
    };
    if candidates.is_empty() {
        if channel.is_some() || symbol.is_some() || !names_nothing(&texts) || !bare_may_answer {
            return None;
        }
        // Only a subscribe frame (a public subscription's) can be left to answer.
        let mut awaited = (0..subs.len()).filter(|&i| subs[i].symbol.is_some() && heard[i] == Heard::Awaited);
        return match (awaited.next(), awaited.next()) {
            (Some(only), None) => Some(only),
            _ => None,
        };
    }
    match candidates.iter().find(|&&i| heard[i] == Heard::Awaited) {
        Some(&first) => Some(first),
        None if candidates.len() == 1 => Some(candidates[0]),
        None => None,
    }
}

/// The channel and symbol the frame names in its fields.
fn named(frame: &Map<String, Value>) -> (Option<&'static str>, Option<&str>) {
    fn object(value: Option<&Value>) -> Option<&Map<String, Value>> {
        value.and_then(Value::as_object)
    }
    let data = object(frame.get("data"));
    let request = object(frame.get("request"));
    let places = [
        data,
        object(frame.get("subscribe")),
        data.and_then(|d| object(d.get("subscribe"))),
        request,
        request.and_then(|r| object(r.get("subscribe"))),
    ];
    let mut channel = None;
    let mut symbol = frame.get("symbol").and_then(Value::as_str);
    for place in places.into_iter().flatten() {
        if channel.is_none() {
            channel = place.get("channel").and_then(Value::as_str).and_then(known_channel);
        }
        if symbol.is_none() {
            symbol = place.get("symbol").and_then(Value::as_str);
        }
    }
    (channel, symbol)
}

fn known_channel(name: &str) -> Option<&'static str> {
    PUBLIC_CHANNELS.iter().chain(ACCOUNT_CHANNELS).find(|c| c.eq_ignore_ascii_case(name)).copied()
}

/// The venue's words: `msg`, `message` and `error` texts, in `data` and at the top level.
fn words(frame: &Map<String, Value>) -> Vec<&str> {
    let data = frame.get("data").and_then(Value::as_object);
    let mut out = Vec::new();
    for place in [data, Some(frame)].into_iter().flatten() {
        for key in ["msg", "message", "error"] {
            if let Some(text) = place.get(key).and_then(Value::as_str) {
                out.push(text);
            }
        }
    }
    out
}

/// The subscriptions the words name: those whose symbol they hold as a word (narrowed to
/// those whose channel they hold too, when that leaves any); else those whose channel they
/// hold as a word.
fn named_in_words(words: &[&str], subs: &[Subscription]) -> Vec<usize> {
    let holds = |word: &str| words.iter().any(|text| holds_word(text, word));
    let by_symbol: Vec<usize> = (0..subs.len()).filter(|&i| subs[i].symbol.as_deref().is_some_and(&holds)).collect();
    if !by_symbol.is_empty() {
        let both: Vec<usize> = by_symbol.iter().copied().filter(|&i| holds(subs[i].channel)).collect();
        return if both.is_empty() { by_symbol } else { both };
    }
    (0..subs.len()).filter(|&i| holds(subs[i].channel)).collect()
}

/// Words that name no channel and nothing that looks like a symbol (`XYZ-USD`): a refusal
/// that says only "bad request" (one that names another symbol is not ours to guess at).
fn names_nothing(words: &[&str]) -> bool {
    words.iter().all(|text| {
        text.split(|c: char| !is_word_char(c)).all(|word| known_channel(word).is_none() && !looks_like_symbol(word))
    })
}

fn looks_like_symbol(word: &str) -> bool {
    let word = word.trim_end_matches('.');
    word.contains(['-', '/']) && word.bytes().any(|b| b.is_ascii_uppercase())
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/' | '.')
}

/// `text` holds `word` (ASCII case aside) with no word character either side of it; a `.`
/// after it ends a sentence.
fn holds_word(text: &str, word: &str) -> bool {
    if word.is_empty() || text.len() < word.len() {
        return false;
    }
    let (text_bytes, word_bytes) = (text.as_bytes(), word.as_bytes());
    (0..=text.len() - word.len()).any(|at| {
        text_bytes[at..at + word.len()].eq_ignore_ascii_case(word_bytes)
            && (at == 0 || !is_word_char(text_bytes[at - 1] as char))
            && text_bytes.get(at + word.len()).is_none_or(|&b| b == b'.' || !is_word_char(b as char))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn subs() -> Vec<Subscription> {
        let public = |channel, symbol: &str| Subscription { channel, symbol: Some(symbol.into()) };
        vec![
            public("price", "BTC-USD"),
            public("depth_book", "BTC-USD"),
            public("depth_book", "XYZ-USD"),
            public("price", "XYZ-USD"),
            Subscription { channel: "order", symbol: None },
        ]
    }

    fn tied(frame: Value, heard: &[Heard]) -> Option<usize> {
        let frame = frame.as_object().unwrap().clone();
        assert!(is_refusal(&frame), "{frame:?}");
        tie(&frame, &subs(), heard, true)
    }

    #[test]
    fn a_refusal_can_come_on_no_channel_error_or_subscribe_only() {
        let on = |channel: Option<&str>| {
            let raw = channel.map(|text| RawValue::from_string(text.to_owned()).unwrap());
            channel_may_refuse(raw.as_deref())
        };
        for may in [
            None,
            Some("null"),
            Some(r#""error""#),
            Some(r#""ERROR""#),
            Some(r#""\u0065rror""#),
            Some(r#""Subscribe""#),
        ] {
            assert!(on(may), "{may:?}");
        }
        for may_not in [Some(r#""price""#), Some(r#""notice""#), Some(r#""auth""#), Some("5"), Some("{}")] {
            assert!(!on(may_not), "{may_not:?}");
        }
    }

    #[test]
    fn each_form_is_tied_to_the_subscription_it_names_or_to_none() {
        use Heard::*;
        let all = [Awaited; 5];
        let error = |data: Value| json!({ "seq": 3, "channel": "error", "data": data });
        // Words naming a symbol: its first awaited subscription, then the next.
        assert_eq!(tied(error(json!({"code":400,"msg":"invalid symbol XYZ-USD"})), &all), Some(2));
        assert_eq!(
            tied(
                error(json!({"code":400,"msg":"invalid symbol XYZ-USD"})),
                &[Awaited, Awaited, Refused, Awaited, Awaited]
            ),
            Some(3)
        );
        // Symbol and channel in words, or in fields, or echoed.
        assert_eq!(tied(error(json!({"code":400,"msg":"no price for xyz-usd."})), &all), Some(3));
        assert_eq!(
            tied(json!({"channel":"error","symbol":"XYZ-USD","data":{"code":404,"channel":"price"}}), &all),
            Some(3)
        );
        assert_eq!(
            tied(json!({"code":403,"message":"refused","subscribe":{"channel":"depth_book","symbol":"BTC-USD"}}), &all),
            Some(1)
        );
        assert_eq!(
            tied(
                json!({"channel":"subscribe","data":{"code":400,"msg":"x","request":{}},"request":{"subscribe":{"channel":"price","symbol":"BTC-USD"}}}),
                &all
            ),
            Some(0)
        );
        assert_eq!(
            tied(error(json!({"code":401,"msg":"channel order needs an authenticated connection"})), &all),
            Some(4)
        );
        // A subscription we do not hold, or another symbol in words: none.
        assert_eq!(tied(error(json!({"code":400,"channel":"price","symbol":"ETH-USD"})), &all), None);
        assert_eq!(tied(error(json!({"code":400,"msg":"invalid symbol DOGE-USD"})), &all), None);
        // Nothing named: the only awaited subscription, else none.
        assert_eq!(tied(error(json!({"code":400,"msg":"bad request"})), &all), None);
        assert_eq!(
            tied(error(json!({"code":400,"msg":"bad request"})), &[Pushed, Pushed, Awaited, Pushed, Pushed]),
            Some(2)
        );
        // Nothing named while the only subscription awaited is an account channel's: none.
        // Account channels are asked for in the auth frame, which its answer answered; only
        // the subscribe frames sent after it are left for a refusal to answer.
        assert_eq!(
            tied(error(json!({"code":400,"msg":"bad request"})), &[Pushed, Pushed, Pushed, Pushed, Awaited]),
            None
        );
        assert_eq!(
            tied(error(json!({"code":500,"msg":"internal error"})), &[Pushed, Pushed, Pushed, Refused, Awaited]),
            None
        );
        // Named but none awaited: only a single named one.
        assert_eq!(tied(error(json!({"code":400,"msg":"XYZ-USD delisted"})), &[Pushed; 5]), None);
        assert_eq!(tied(error(json!({"code":400,"msg":"XYZ-USD depth_book closed"})), &[Pushed; 5]), Some(2));
    }

    #[test]
    fn acks_notices_and_pushes_are_no_refusals() {
        for frame in [
            json!({"channel":"subscribe","data":{"code":0,"msg":"success"}}),
            json!({"channel":"notice","data":{"code":400,"msg":"invalid symbol XYZ-USD"}}),
            json!({"channel":"error","data":{"code":1001,"msg":"maintenance soon"}}),
            json!({"code":200,"message":"ok"}),
        ] {
            assert!(!is_refusal(frame.as_object().unwrap()), "{frame}");
        }
    }

    #[test]
    fn words_are_matched_whole() {
        assert!(holds_word("invalid symbol BTC-USD.", "BTC-USD"));
        assert!(holds_word("BTC-USD", "btc-usd"));
        assert!(!holds_word("invalid symbol BTC-USDT", "BTC-USD"));
        assert!(!holds_word("public_trade refused", "trade"));
        assert!(!holds_word("", "price"));
    }
}
