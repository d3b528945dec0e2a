//! The market + account stream (`ws-stream`): the auth frame, the subscribe frames (the
//! caller's subscriptions are checked in `subscriptions.rs`), and venue pushes turned into
//! events (`seq` checked, `depth_book` sorted, receive time stamped).

use super::depth;
use super::events::{self, Kind, Queue};
use super::json::push_str;
use super::push_scan;
use super::push_serde::{self, DataSymbol, Envelope, FastData, FastPush, PushSeq, data_symbol};
use super::seq::SeqTracker;
use super::subscriptions::{ACCOUNT_CHANNELS, PUBLIC_CHANNELS, Subscription};
use super::supervisor::{AuthOutcome, Protocol};
use super::transport::Connection;
use super::unrecognized;
use super::wiped_frame::WipedText;
use crate::error::{Error, Result};
use serde_json::value::RawValue;
use serde_json::{Value, json};

pub struct Market {
    subs: Vec<Subscription>,
    seq: SeqTracker,
    awaiting_auth: bool,
    impersonate: Option<String>,
    /// Read pushes with the single-pass scanner first (off only to compare with the serde
    /// path in tests and benchmarks).
    scanner: bool,
    /// Read what the scanner leaves with the one-pass serde path (`FastPush`) before the
    /// general path (off only to compare the two in tests and the fuzz target).
    fast: bool,
    /// The scanner's record of a book and the sort's working space, reused from push to push.
    book: push_scan::Book,
    sorter: crate::decimal::BookSorter,
}

impl Market {
    pub fn new(subs: Vec<Subscription>, impersonate: Option<String>) -> Market {
        Market {
            subs,
            seq: SeqTracker::default(),
            awaiting_auth: false,
            impersonate,
            scanner: true,
            fast: true,
            book: push_scan::Book::default(),
            sorter: crate::decimal::BookSorter::default(),
        }
    }

    /// Without the scanner: every push through the serde path.
    pub fn without_scanner(mut self) -> Market {
        self.scanner = false;
        self
    }

    /// Without the scanner nor the one-pass serde path: every push through the general path.
    pub fn general_only(mut self) -> Market {
        self.scanner = false;
        self.fast = false;
        self
    }

    pub fn reset_seq(&mut self) {
        self.seq.reset();
    }

    fn public(&self) -> impl Iterator<Item = &Subscription> {
        self.subs.iter().filter(|s| s.symbol.is_some())
    }

    /// `{"auth":{"impersonate"?:…,"streams":[{"channel":"order"},…],"token":…}}` (keys in the
    /// order serde_json writes them), in memory wiped on drop (`wiped_frame`).
    fn auth_frame(&self, token: &str) -> WipedText {
        let mut frame = WipedText::with_capacity(128 + 2 * token.len());
        frame.push(r#"{"auth":{"#);
        if let Some(vault) = &self.impersonate {
            frame.push(r#""impersonate":"#);
            frame.push_json(vault);
            frame.push(",");
        }
        frame.push(r#""streams":["#);
        for (i, sub) in self.subs.iter().filter(|s| s.symbol.is_none()).enumerate() {
            frame.push(if i == 0 { r#"{"channel":"# } else { r#",{"channel":"# });
            frame.push_json(sub.channel);
            frame.push("}");
        }
        frame.push(r#"],"token":"#);
        frame.push_json(token);
        frame.push("}}");
        frame
    }

    /// While the auth answer is awaited: the answer's meaning, if `text` is the answer — a
    /// frame of channel "auth", whatever the types of its other fields, or a refusal on
    /// another channel or none (`auth_answer::states_refusal`: `{"channel":"error","data":
    /// {"code":401,…}}`), which can only be the auth frame's, since nothing else has been sent
    /// yet (subscriptions follow the answer). Taking it for the answer ends the stream with
    /// the venue's reason rather than timing out and reconnecting into the same refusal. A
    /// success on another channel (a welcome) is no answer, and neither is a push.
    fn auth_answer(&mut self, text: &str, queue: &Queue) -> Option<AuthOutcome> {
        let Ok(Value::Object(frame)) = serde_json::from_str::<Value>(text) else { return None };
        let answer = match frame.get("channel").and_then(Value::as_str) {
            Some("auth") => true,
            Some(channel) if PUBLIC_CHANNELS.contains(&channel) || ACCOUNT_CHANNELS.contains(&channel) => false,
            _ => super::auth_answer::states_refusal(&frame),
        };
        if !answer {
            return None;
        }
        if let Some(seq) = super::json::lenient_int(frame.get("seq")) {
            self.seq.report_unsubscribed(seq, queue);
        }
        Some(super::auth_answer::judge_text(&frame, text, "the stream's auth frame"))
    }
}

impl Market {
    /// The scanner's path (`push_scan`); `None` sends the frame down the serde paths.
    fn on_push_scanned(&mut self, text: &str, received_ns: i64, queue: &Queue) -> Option<()> {
        let push = push_scan::push(text, &mut self.book)?;
        let seq = PushSeq::from_int(push.seq);
        let Some(symbol) = self.attribute(push.channel, seq, push.symbol, push.data_symbol, text, queue) else {
            return Some(());
        };
        let event = match push.data {
            push_scan::Data::Absent => Ok(push_event(push.channel, seq, symbol, "null", received_ns)),
            push_scan::Data::Raw(data) => Ok(push_event(push.channel, seq, symbol, data, received_ns)),
            push_scan::Data::Book => {
                let (book, sorter) = (&self.book, &mut self.sorter);
                write_event(push.channel, seq, symbol, received_ns, text.len(), |out| {
                    depth::write_scanned(out, text, book, sorter)
                })
            }
        };
        match event {
            Ok(event) => deliver(queue, event),
            Err(error) => bad_push(queue, &error, text, push.channel, symbol, seq),
        }
        Some(())
    }

    /// The one-pass serde path; `None` sends the frame down the general path.
    fn on_push_fast(&mut self, text: &str, received_ns: i64, queue: &Queue) -> Option<()> {
        let push: FastPush = serde_json::from_str(text).ok()?;
        let known =
            PUBLIC_CHANNELS.iter().chain(ACCOUNT_CHANNELS).find(|c| Some(**c) == push.channel.as_deref()).copied()?;
        let in_data = match &push.data {
            // `data` before `channel`, or none: not a book read yet.
            None | Some(FastData::Raw(_)) if known == "depth_book" => return None,
            Some(FastData::Raw(raw)) => data_symbol(raw),
            Some(FastData::Sorted(_, symbol)) => symbol.clone(),
            None => DataSymbol::None,
        };
        if in_data == DataSymbol::Twice {
            return None;
        }
        let seq = PushSeq::from_int(push.seq);
        let Some(symbol) = self.attribute(known, seq, push.symbol.as_deref(), in_data.text(), text, queue) else {
            return Some(());
        };
        let data = match &push.data {
            Some(FastData::Sorted(Ok(sorted), _)) => sorted.as_str(),
            Some(FastData::Sorted(Err(error), _)) => {
                bad_push(queue, error, text, known, symbol, seq);
                return Some(());
            }
            Some(FastData::Raw(raw)) => raw.get(),
            None => "null",
        };
        deliver(queue, push_event(known, seq, symbol, data, received_ns));
        Some(())
    }

    /// The general path: every frame the others leave, read field by field. What it decides
    /// is what the other paths decide for the frames they read (a test in this file and the
    /// `stream_push` fuzz target compare them).
    fn on_push_general(&mut self, text: &str, received_ns: i64, queue: &Queue) {
        // Not an object, or an envelope field named twice: passed on.
        let Some(push) = Envelope::read(text) else {
            return unrecognized::pass_on(text, received_ns, queue, &mut self.seq);
        };
        let channel = push.channel.and_then(push_serde::text);
        let Some(known) = PUBLIC_CHANNELS.iter().chain(ACCOUNT_CHANNELS).find(|c| Some(**c) == channel.as_deref())
        else {
            return unrecognized::pass_on(text, received_ns, queue, &mut self.seq);
        };
        let in_data = push.data.map_or(DataSymbol::None, data_symbol);
        if in_data == DataSymbol::Twice {
            return unrecognized::pass_on(text, received_ns, queue, &mut self.seq);
        }
        let symbol: std::result::Result<Option<std::borrow::Cow<'_, str>>, &RawValue> = match push.symbol {
            None => Ok(None),
            Some(raw) if raw.get() == "null" => Ok(None),
            Some(raw) => push_serde::text(raw).map(Some).ok_or(raw),
        };
        // The symbol an error names: the envelope's, or a public push's data's.
        let named = match &symbol {
            Ok(Some(symbol)) => Some(symbol.as_ref()),
            Ok(None) if PUBLIC_CHANNELS.contains(known) => in_data.text(),
            _ => None,
        };
        let Ok(seq) = push_serde::read_seq(push.seq) else {
            let raw = push.seq.map_or("", RawValue::get);
            let error = Error::bad_response(format!(
                "{known} push: its \"seq\" is neither an integer nor a string of digits ({})",
                crate::error::excerpt(raw)
            ));
            return bad_push(queue, &error, text, known, named, PushSeq::Absent);
        };
        let symbol = match symbol {
            Ok(symbol) => symbol,
            Err(raw) => {
                if let Some(seq) = seq.counted() {
                    self.seq.report_unsubscribed(seq, queue);
                }
                let error = Error::bad_response(format!(
                    "{known} push: its \"symbol\" is not a string ({})",
                    crate::error::excerpt(raw.get())
                ));
                return bad_push(queue, &error, text, known, named, seq);
            }
        };
        let Some(symbol) = self.attribute(known, seq, symbol.as_deref(), in_data.text(), text, queue) else { return };
        let sorted;
        let data: &str = match (*known, push.data) {
            ("depth_book", Some(data)) => match depth::sorted_data(data) {
                Ok(text) => {
                    sorted = text;
                    &sorted
                }
                Err(error) => return bad_push(queue, &error, text, known, symbol, seq),
            },
            ("depth_book", None) => {
                let error = Error::bad_response("depth_book push: no \"data\"");
                return bad_push(queue, &error, text, known, symbol, seq);
            }
            (_, Some(data)) => data.get(),
            (_, None) => "null",
        };
        deliver(queue, push_event(known, seq, symbol, data, received_ns));
    }

    /// The checks every path makes of a push's symbols — its envelope's (`symbol`) and its
    /// data's (`in_data`) — once it has read them, and its `seq` checked: the symbol its event
    /// names (the envelope's, or for a public push whose envelope names none, its data's).
    /// `None` when the two disagree (a push on BTC-USD carrying ETH-USD's data): neither can
    /// be trusted, so an `error` event says so in place of the data, and the `seq` counts on
    /// the connection only.
    fn attribute<'s>(
        &mut self,
        channel: &'static str,
        seq: PushSeq,
        symbol: Option<&'s str>,
        in_data: Option<&'s str>,
        text: &str,
        queue: &Queue,
    ) -> Option<Option<&'s str>> {
        if let (Some(envelope), Some(data)) = (symbol, in_data)
            && envelope != data
        {
            if let Some(seq) = seq.counted() {
                self.seq.report_unsubscribed(seq, queue);
            }
            let error = Error::bad_response(format!(
                "{channel} push: its envelope names the symbol \"{}\" and its data \"{}\"",
                crate::error::excerpt(envelope),
                crate::error::excerpt(data)
            ));
            bad_push(queue, &error, text, channel, symbol, seq);
            return None;
        }
        // An account push is counted under its data's symbol too, but keeps its envelope.
        let counted_under = symbol.or(in_data);
        self.seq.report(channel, counted_under, seq.counted(), queue);
        Some(if PUBLIC_CHANNELS.contains(&channel) { counted_under } else { symbol })
    }
}

impl Protocol for Market {
    fn name(&self) -> &'static str {
        "market"
    }

    fn start(&mut self, conn: &mut Connection, token: Option<&str>) -> Result<bool> {
        self.seq.reset();
        match token {
            Some(token) => {
                conn.send_message(self.auth_frame(token).into_message())?;
                self.awaiting_auth = true;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn after_auth(&mut self, conn: &mut Connection) -> Result<()> {
        self.awaiting_auth = false;
        let frames: Vec<String> = self
            .public()
            .map(|s| json!({ "subscribe": { "channel": s.channel, "symbol": s.symbol } }).to_string())
            .collect();
        for frame in frames {
            conn.send_text(frame)?;
        }
        Ok(())
    }

    fn on_text(&mut self, text: &str, received_ns: i64, queue: &Queue) -> AuthOutcome {
        if self.awaiting_auth {
            if let Some(outcome) = self.auth_answer(text, queue) {
                return outcome;
            }
        } else if (self.scanner && self.on_push_scanned(text, received_ns, queue).is_some())
            || (self.fast && self.on_push_fast(text, received_ns, queue).is_some())
        {
            return AuthOutcome::Pending;
        }
        self.on_push_general(text, received_ns, queue);
        AuthOutcome::Pending
    }

    fn connected_fields(&self) -> Value {
        let subs: Vec<Value> = self.subs.iter().map(|s| json!({ "channel": s.channel, "symbol": s.symbol })).collect();
        json!({ "subscriptions": subs })
    }

    fn on_disconnect(&mut self) -> Value {
        json!({})
    }
}

/// Queue a push's event, redacted first of the tokens the stream sent, as every frame of the
/// venue handed on as data is (`Queue::push_quoting_venue`): an order's data may echo what the
/// venue was sent, and so may a public push's (a book or a price is the venue's text too, and
/// engines log these events). Without a session there is nothing to redact; with one, a
/// public push costs a scan of its text for the token's runs (`redact::Secrets`: a filter
/// over its aligned 4-byte blocks rules out nearly every place at once).
fn deliver(queue: &Queue, event: String) {
    queue.push_quoting_venue(event);
}

/// Queue the `error` event of a push that could not be read (`events::bad_push`).
fn bad_push(queue: &Queue, error: &Error, text: &str, channel: &str, symbol: Option<&str>, seq: PushSeq) {
    queue.push(Kind::Notice, events::bad_push(error, text, channel, symbol, seq.to_json()));
}

/// `{"channel","seq","symbol"?,"data","received_ns"}`, written directly.
pub fn push_event(channel: &str, seq: PushSeq, symbol: Option<&str>, data: &str, received_ns: i64) -> String {
    let written: Result<String> = write_event(channel, seq, symbol, received_ns, data.len(), |out| {
        out.push_str(data);
        Ok(())
    });
    written.unwrap_or_default()
}

/// The same, with `data` written by `write_data` straight into the event (`size`: about its
/// length), in one allocation.
fn write_event(
    channel: &str,
    seq: PushSeq,
    symbol: Option<&str>,
    received_ns: i64,
    size: usize,
    write_data: impl FnOnce(&mut String) -> Result<()>,
) -> Result<String> {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(size + 96 + symbol.map_or(0, str::len));
    out.push_str("{\"channel\":\"");
    out.push_str(channel);
    out.push_str("\",\"seq\":");
    match seq {
        PushSeq::Int(seq) => write!(out, "{seq}").unwrap_or(()),
        PushSeq::Big(seq) => write!(out, "{seq}").unwrap_or(()),
        PushSeq::Absent => out.push_str("null"),
    }
    if let Some(symbol) = symbol {
        out.push_str(",\"symbol\":");
        push_str(&mut out, symbol);
    }
    out.push_str(",\"data\":");
    write_data(&mut out)?;
    write!(out, ",\"received_ns\":{received_ns}}}").unwrap_or(());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_auth_frame_is_what_serde_json_wrote() {
        let sub = |channel, symbol: Option<&str>| Subscription { channel, symbol: symbol.map(str::to_owned) };
        for vault in [None, Some("0xVault")] {
            let subs = vec![sub("order", None), sub("price", Some("BTC-USD")), sub("balance", None)];
            let market = Market::new(subs, vault.map(str::to_owned));
            let streams = json!([{ "channel": "order" }, { "channel": "balance" }]);
            let mut auth = json!({ "token": "tok\"en", "streams": streams });
            if let Some(vault) = vault {
                auth["impersonate"] = vault.into();
            }
            assert_eq!(market.auth_frame("tok\"en").as_str(), json!({ "auth": auth }).to_string());
        }
        let market = Market::new(vec![sub("price", Some("BTC-USD"))], None);
        assert_eq!(market.auth_frame("t").as_str(), r#"{"auth":{"streams":[],"token":"t"}}"#);
    }

    #[test]
    fn pushes_become_events_with_sorted_books_and_seq_checks() {
        let queue = Queue::default();
        let mut market = Market::new(vec![], None);
        let frame = r#"{"seq":3,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["2","1"],["1","1"]],"bids":[["1","1"],["2","1"]]}}"#;
        market.on_text(frame, 7, &queue);
        market.on_text(r#"{"seq":4,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#, 8, &queue);
        market.on_text(r#"{"seq":9,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"2"}}"#, 8, &queue);
        market.on_text(r#"{"seq":1,"channel":"status","state":"connected"}"#, 9, &queue);
        market.on_text("not json", 10, &queue);
        let got: Vec<Value> = std::iter::from_fn(|| queue.pop(Some(std::time::Duration::ZERO), None).unwrap())
            .map(|e| serde_json::from_str(&e).unwrap())
            .collect();
        assert_eq!(got[0]["data"]["asks"], json!([["1", "1"], ["2", "1"]]));
        assert_eq!(got[0]["data"]["bids"], json!([["2", "1"], ["1", "1"]]));
        assert_eq!((got[0]["seq"].as_i64(), got[0]["received_ns"].as_i64()), (Some(3), Some(7)));
        assert_eq!(got[1]["channel"], "price");
        assert_eq!(got[2]["state"], "gap");
        assert_eq!((got[2]["expected"].as_i64(), got[2]["received"].as_i64()), (Some(5), Some(9)));
        assert_eq!(got[3]["channel"], "price");
        assert_eq!(got[4]["channel"], "unrecognized", "a venue frame can never pose as a status event");
        assert_eq!(got[4]["frame"]["state"], "connected");
        assert_eq!((got[5]["channel"].as_str(), got[5]["state"].as_str()), (Some("status"), Some("error")));
        assert_eq!(got.len(), 6);
    }

    #[test]
    fn the_seq_of_a_frame_of_no_known_channel_counts_on_either_path() {
        for mut market in [Market::new(vec![], None), Market::new(vec![], None).without_scanner()] {
            let queue = Queue::default();
            market.on_text(r#"{"seq":1,"channel":"price","symbol":"X","data":{}}"#, 1, &queue);
            market.on_text(r#"{"seq":2,"channel":"kline","symbol":"X","data":{}}"#, 2, &queue);
            market.on_text(r#"{"seq":3,"channel":"price","symbol":"X","data":{}}"#, 3, &queue);
            let got: Vec<Value> = std::iter::from_fn(|| queue.pop(Some(std::time::Duration::ZERO), None).unwrap())
                .map(|e| serde_json::from_str(&e).unwrap())
                .collect();
            let channels: Vec<&str> = got.iter().map(|e| e["channel"].as_str().unwrap()).collect();
            assert_eq!(channels, ["price", "unrecognized", "price"], "no gap: {got:?}");
        }
    }

    #[test]
    fn a_public_push_without_an_envelope_symbol_is_named_and_counted_by_its_datas() {
        for mut market in [Market::new(vec![], None), Market::new(vec![], None).without_scanner()] {
            let queue = Queue::default();
            for frame in [
                r#"{"seq":10,"channel":"depth_book","data":{"symbol":"BTC-USD","asks":[],"bids":[]}}"#,
                r#"{"seq":3,"channel":"depth_book","data":{"asks":[],"symbol":"ETH-USD","bids":[]}}"#,
                r#"{"seq":11,"channel":"depth_book","data":{"symbol":"BTC-USD","asks":[],"bids":[]}}"#,
                r#"{"seq":5,"channel":"public_trade","data":{"symbol":"BTC-USD"}}"#,
                r#"{"seq":4,"channel":"public_trade","data":{"symbol":"ETH-USD"}}"#,
                r#"{"seq":6,"channel":"public_trade","data":{"symbol":5}}"#,
                r#"{"seq":2,"channel":"position","data":{"symbol":"BTC-USD"}}"#,
            ] {
                market.on_text(frame, 1, &queue);
            }
            let got: Vec<Value> = std::iter::from_fn(|| queue.pop(Some(std::time::Duration::ZERO), None).unwrap())
                .map(|e| serde_json::from_str(&e).unwrap())
                .collect();
            let named: Vec<(&str, Option<&str>)> =
                got.iter().map(|e| (e["channel"].as_str().unwrap(), e["symbol"].as_str())).collect();
            assert_eq!(
                named,
                [
                    ("depth_book", Some("BTC-USD")),
                    ("depth_book", Some("ETH-USD")),
                    ("depth_book", Some("BTC-USD")),
                    ("public_trade", Some("BTC-USD")),
                    ("public_trade", Some("ETH-USD")),
                    ("public_trade", None),
                    ("position", None),
                ],
                "no seq_regression, and account pushes are not named from their data: {got:?}"
            );
        }
    }

    /// Events of one frame: data events as their text, status events without their own
    /// clock reading.
    fn events_of(market: &mut Market, frame: &str, queue: &Queue) -> Vec<Value> {
        market.on_text(frame, 42, queue);
        std::iter::from_fn(|| queue.pop(Some(std::time::Duration::ZERO), None).unwrap())
            .map(|e| {
                if !e.starts_with(r#"{"channel":"status""#) {
                    return Value::String(e);
                }
                let mut event: Value = serde_json::from_str(&e).unwrap();
                event.as_object_mut().unwrap().remove("received_ns");
                event
            })
            .collect()
    }

    #[test]
    fn the_scanner_the_one_pass_serde_path_and_the_general_path_give_the_same_events() {
        let bases = [
            r#"{"seq":3,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["65010.3","1.5"],["65009.10","2"],["65011","0.1"]],"bids":[["64990.5","1"],[64991,"2"],["64990.50","3"]],"symbol":"BTC-USD"}}"#,
            r#"{"seq":4,"channel":"depth_book","symbol":"ETH-USD","data":{"bids":[["1e3","1"],["-2","1"],["0.0001","5"]],"t":1700000000,"asks":[]}}"#,
            r#"{"seq":5,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["abc","1"]],"bids":[["1.2.3","1"]]}}"#,
            r#" { "seq" : 6 , "channel" : "price" , "symbol" : "BTC-USD" , "data" : { "mark_price" : "65000.1" , "x" : [ 1 , { "y" : null } ] } } "#,
            r#"{"seq":8,"channel":"order","data":{"order_id":4294967297,"status":"open"},"ts":-1.5e-3}"#,
            r#"{"channel":"public_trade","symbol":"BTC-USD","data":[{"price":"1","qty":"2"}]}"#,
            r#"{"seq":9,"channel":"depth_book","symbol":"BTC-USD"}"#,
            r#"{"seq":10,"channel":"depth_book","data":{"t":[1],"symbol":"ETH-USD","asks":[["2","1"],["1","1"]],"bids":[],"symbol":"X"}}"#,
            r#"{"seq":11,"channel":"price","data":{"mark_price":"1","symbol":"BTC-USD","x":{"symbol":"Y"}}}"#,
            r#"{"seq":12,"channel":"order","data":{"symbol":"BTC-USD"}}"#,
            r#"{"seq":13,"channel":"price","symbol":"BTC-USD","data":{"symbol":"ETH-USD","mark_price":"3000"}}"#,
            r#"{"seq":14,"channel":"price","symbol":"BTC-USD","symbol":"ETH-USD","data":{}}"#,
            r#"{"seq":15,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["1","NaN"],["2",null],["3"]],"bids":[["9","-1"]]}}"#,
            r#"{"seq":16,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[{"price":"1","qty":"2"}],"bids":[["\u0031","1"]]}}"#,
            r#"{"seq":9223372036854775808,"channel":"trade","symbol":"BTC-USD","data":{"id":1,"symbol":"BTC-USD"}}"#,
            r#"{"seq":1.5,"channel":"price","symbol":7,"data":{"symbol":"X"}}"#,
        ];
        let alphabet = b"\"\\,:{}[]0159 \t\n-.eEtrufalsn";
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let queues = [Queue::default(), Queue::default(), Queue::default()];
        let mut markets = [
            Market::new(vec![], None),
            Market::new(vec![], None).without_scanner(),
            Market::new(vec![], None).general_only(),
        ];
        let mut read_by_scanner = 0;
        for round in 0..40_000 {
            let base = bases[round % bases.len()];
            let mut bytes = base.as_bytes().to_vec();
            // The bases as they are, then with one or two byte edits.
            let edits = if round < bases.len() { 0 } else { 1 + random(2) };
            for _ in 0..edits {
                let at = random(bytes.len());
                match random(3) {
                    0 => bytes.insert(at, alphabet[random(alphabet.len())]),
                    1 => {
                        bytes.remove(at);
                    }
                    _ => bytes[at] = alphabet[random(alphabet.len())],
                }
            }
            let Ok(frame) = String::from_utf8(bytes) else { continue };
            if push_scan::push(&frame, &mut push_scan::Book::default()).is_some() {
                read_by_scanner += 1;
            }
            let [a, b, c] = [0, 1, 2].map(|i| events_of(&mut markets[i], &frame, &queues[i]));
            assert_eq!(a, b, "the scanner and the serde paths: {frame}");
            assert_eq!(b, c, "the serde paths and the general path alone: {frame}");
        }
        assert!(read_by_scanner > 5_000, "the scanner read {read_by_scanner} of the frames");
    }
}
