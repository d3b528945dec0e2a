//! The market + account stream (`ws-stream`): the auth frame, the subscribe frames (the
//! caller's subscriptions are checked in `subscriptions.rs`), and venue pushes turned into
//! events (`seq` checked, `depth_book` sorted, receive time stamped).

use super::depth;
use super::events::{self, Kind, Queue};
use super::json::push_str;
use super::push_scan;
use super::push_serde::{self, DataSymbol, Envelope, FastData, FastPush, PushSeq, data_symbol};
use super::refusals::{self, Heard};
use super::seq::SeqTracker;
use super::subscriptions::{ACCOUNT_CHANNELS, PUBLIC_CHANNELS, Subscription};
use super::supervisor::{AuthOutcome, Protocol};
use super::transport::Connection;
use super::unrecognized;
use super::wiped_frame::WipedText;
use crate::error::{Error, Result};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::time::Instant;

pub struct Market {
    subs: Vec<Subscription>,
    /// What each subscription has had on this connection, to tie a refusal to it (an account
    /// subscription's changes only when a refusal names it: its pushes are not looked up, as
    /// no bare refusal is tied to it, `refusals::tie`).
    heard: Vec<Heard>,
    /// How many public subscriptions are `Awaited`: a public push looks its subscription up
    /// only while any is (a scan of the subscriptions per push, ~85 ns with 60 of them). An
    /// account channel quiet for want of orders would otherwise keep every push scanning for
    /// the life of the connection.
    awaited: usize,
    /// When this connection's subscribe frames were sent: a refusal naming nothing is taken
    /// for the answer to one only within `refusals::BARE_REFUSAL_WINDOW` of them.
    subscribed_at: Option<Instant>,
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
            heard: vec![Heard::Awaited; subs.len()],
            awaited: public_count(&subs),
            subs,
            subscribed_at: None,
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
        let channel_raw = push.channel;
        let channel = channel_raw.and_then(push_serde::text);
        let Some(known) = PUBLIC_CHANNELS.iter().chain(ACCOUNT_CHANNELS).find(|c| Some(**c) == channel.as_deref())
        else {
            // A frame on a channel no refusal comes on is passed on without the second, full
            // parse `refused` makes (a flood of large unknown pushes).
            if refusals::channel_may_refuse(channel_raw) && self.refused(text, queue) {
                return;
            }
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
        let named = if PUBLIC_CHANNELS.contains(&channel) { counted_under } else { symbol };
        if self.awaited > 0 && PUBLIC_CHANNELS.contains(&channel) {
            self.heard_on(channel, named);
        }
        Some(named)
    }

    /// A public push came on `channel` / `symbol`: that subscription is no longer awaited.
    fn heard_on(&mut self, channel: &str, symbol: Option<&str>) {
        if let Some(i) = self.subs.iter().position(|s| s.channel == channel && s.symbol.as_deref() == symbol)
            && self.heard[i] == Heard::Awaited
        {
            self.heard[i] = Heard::Pushed;
            self.awaited -= 1;
        }
    }

    /// If `text` refuses one of the subscriptions (`refusals.rs`): its `error` event queued,
    /// its `seq` counted on the connection (as `unrecognized::pass_on` would), and `true`.
    fn refused(&mut self, text: &str, queue: &Queue) -> bool {
        let Ok(Value::Object(frame)) = serde_json::from_str::<Value>(text) else { return false };
        if !refusals::is_refusal(&frame) {
            return false;
        }
        let bare_may_answer = self.subscribed_at.is_some_and(|at| at.elapsed() < refusals::BARE_REFUSAL_WINDOW);
        let Some(i) = refusals::tie(&frame, &self.subs, &self.heard, bare_may_answer) else { return false };
        let sub = &self.subs[i];
        let what = match &sub.symbol {
            Some(symbol) => format!("the subscription to {} {}", sub.channel, crate::error::excerpt(symbol)),
            None => format!("the subscription to {}", sub.channel),
        };
        let error = match super::auth_answer::judge(&frame, &what) {
            AuthOutcome::Refused(error) | AuthOutcome::Unavailable(error) => error,
            _ => Error::new(crate::error::Code::ApiError, format!("the venue refused {what}")),
        };
        let seq = super::json::lenient_int(frame.get("seq"));
        if let Some(seq) = seq {
            self.seq.report_unsubscribed(seq, queue);
        }
        let seq = seq.map_or(Value::Null, Value::from);
        queue.push(Kind::Notice, events::refused_subscription(&error, text, sub.channel, sub.symbol.as_deref(), seq));
        if self.heard[i] == Heard::Awaited && sub.symbol.is_some() {
            self.awaited -= 1;
        }
        self.heard[i] = Heard::Refused;
        true
    }
}

impl Protocol for Market {
    fn name(&self) -> &'static str {
        "market"
    }

    fn start(&mut self, conn: &mut Connection, token: Option<&str>) -> Result<bool> {
        self.seq.reset();
        self.subscribed_at = None;
        self.heard.fill(Heard::Awaited);
        self.awaited = public_count(&self.subs);
        for sub in &self.subs {
            if let Some(symbol) = &sub.symbol {
                self.seq.reserve(sub.channel, symbol);
            }
        }
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
        self.subscribed_at = Some(Instant::now());
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

/// How many of `subs` are public (subscribed by a subscribe frame of their own).
fn public_count(subs: &[Subscription]) -> usize {
    subs.iter().filter(|s| s.symbol.is_some()).count()
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
mod tests;
