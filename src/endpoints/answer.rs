//! The venue's answers to endpoint calls, read as the venue really sends them.
//!
//! An answer is returned as the venue's own JSON text (extra fields kept, decimals as the
//! venue wrote them, strings or numbers), after two checks: it is a JSON object or array —
//! an object envelope or a bare array for lists, `[]` or `{code,message,request_id}` for
//! `cancel_orders` — and an object's `code`, when present, is 0 or 200 (else
//! `PERPS_API_ERROR`, or `PERPS_BAD_RESPONSE` for a code that is not a plain integer or is
//! 202, "accepted", which states no outcome),
//! read by [`venue_code`] as every REST answer's `code` is, and it does not say
//! `"success": false` ([`stated`]). The one change:
//! `query_depth_book`'s levels come back sorted by
//! decimal value, bids high to low and asks low to high, compared exactly (never as
//! floats), each level kept as the venue wrote it.

use crate::error::excerpt;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// Why an answer is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not JSON, or not an object or array, or a depth book that cannot be sorted.
    Shape(String),
    /// A well-formed refusal: the venue's `code` and its words ([`words`]).
    Code(i64, String),
    /// `"success": false` with no code: a refusal the venue states without a code, and its
    /// words ([`stated`]).
    Unsuccessful(String),
}

/// What an answer states of itself, by its `code` ([`refusal_code`]) and its `success`:
/// `Ok(())` no refusal; a refusal by code; with no code, a refusal by `"success": false`,
/// the way prepare-signin refuses (seed spec, "Errors"), which a venue may use for any
/// answer — an order so refused must not be reported placed; `Refusal::Shape` for a code
/// of another shape, or a success code beside `"success": false` (the answer contradicts
/// itself: its outcome is unknown). `words` is the venue's reason, kept with a refusal.
pub fn stated(code: Option<&Value>, success: Option<&Value>, words: &str) -> Result<(), Refusal> {
    let unsuccessful = success == Some(&Value::Bool(false));
    match refusal_code(code).map_err(Refusal::Shape)? {
        Some(code) => Err(Refusal::Code(code, words.to_owned())),
        None if !unsuccessful => Ok(()),
        None if code.is_none_or(Value::is_null) => Err(Refusal::Unsuccessful(words.to_owned())),
        None => Err(Refusal::Shape(SUCCESS_BOTH_WAYS.to_owned())),
    }
}

const SUCCESS_BOTH_WAYS: &str =
    "the venue's answer has a success \"code\" and \"success\": false: its outcome is ambiguous";

/// A word that says success where no code does: none, "success" or "ok" ([WJ] reads "ok").
/// Read for the answer to a change (`change_answer`, REST and the order stream alike) and
/// the streams' auth answers.
pub fn success_word(word: &str) -> bool {
    word.is_empty() || word.eq_ignore_ascii_case("success") || word.eq_ignore_ascii_case("ok")
}

/// The venue's reason in an answer object: its `message`, else `msg` (the venue's WebSocket
/// answers write `msg`, venue-api.md §2.2), else `error`; the first that is a non-empty
/// string. Empty when there is none.
pub fn words(answer: &serde_json::Map<String, Value>) -> &str {
    REASON_KEYS
        .iter()
        .find_map(|key| answer.get(*key).and_then(Value::as_str).filter(|words| !words.trim().is_empty()))
        .unwrap_or("")
}

/// Where an answer's reason may be, first first.
pub(crate) const REASON_KEYS: [&str; 3] = ["message", "msg", "error"];

/// The `code` of a REST answer — the one reading every REST answer's code goes through
/// (endpoint calls, the depth book, `new_order`, `perps_request`). The venue and its
/// documents write it as an integer; a gateway or another version may write it as a string
/// of digits (`"0"`, `"400"`, optionally with a leading '-'). `null` counts as absent.
/// `Ok(None)`: no code; `Ok(Some(n))`: code `n` (0 is success); `Err`: a code of another
/// shape, for which the request's outcome is unknown, described for the error's message.
///
/// Only a plain integer is a code: a number written with a fraction or an exponent, or a
/// negative zero (`0.0`, `4e2`, `-0`, `"-0"`), is not, however whole its value. JSON readers
/// do not agree on such numbers — `1e-400` is 0 to a reader that rounds it and an error to
/// one that does not — so taking one for a success could report an order the venue refused
/// (or never read) as placed. Nor are `0.5`, `"ok"`, `true`, or integers beyond 64 bits.
pub fn venue_code(code: Option<&Value>) -> Result<Option<i64>, String> {
    let read = match code {
        None | Some(Value::Null) => return Ok(None),
        // serde_json keeps an integer literal as an integer (`-0` excepted, which it reads
        // as a float), and every literal with a fraction or an exponent as a float.
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => {
            let digits = s.strip_prefix('-').unwrap_or(s);
            let negative_zero = digits.len() < s.len() && digits.bytes().all(|b| b == b'0');
            (!digits.is_empty() && !negative_zero && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<i64>().ok())
                .flatten()
        }
        Some(_) => None,
    };
    match (read, code) {
        (Some(n), _) => Ok(Some(n)),
        (None, Some(code)) => Err(format!(
            "the venue's \"code\" is not an integer written plainly, nor a string of digits ({})",
            excerpt(&code.to_string())
        )),
        (None, None) => Ok(None),
    }
}

/// Whether a REST answer's `code` says success: 0, as the venue's documents write it, or
/// 200, the code its WebSocket auth answers use for success (venue-api.md §6) and the HTTP
/// status for OK. A venue that answers an accepted order with 200 must not have it reported
/// as refused and unsent: the caller would place it again.
fn is_success_code(code: i64) -> bool {
    matches!(code, 0 | 200)
}

/// Whether a refusal `code` in a 2xx answer leaves the request's effect unknown: a server
/// error (5xx) or a timeout (408) behind the venue's gateway, which venue-api.md §3.1 lists
/// among its codes. As with an HTTP 5xx, the order or cancel may have been acted on, so the
/// error says it may have reached the venue: "not reached" would have an engine place the
/// order again.
pub fn code_leaves_outcome_unknown(code: i64) -> bool {
    code == 408 || (500..=599).contains(&code)
}

/// The code of the venue's gateway ack: "accepted" for processing, its outcome to come
/// (a fixture of a doc-derived client writes `{"code":202,"status":"accepted"}`,
/// venue-api.md §6.2). It says the request was taken, so it is never a refusal.
pub(crate) const ACCEPTED_CODE: i64 = 202;

/// Why an answer whose code is [`ACCEPTED_CODE`] (and is not the order stream's ack) leaves
/// its outcome open. Reported as a refusal, an accepted order would be placed again.
const ACCEPTED_NOT_AN_OUTCOME: &str = "the venue's \"code\" is 202 (\"accepted\": taken for processing), \
     which states no outcome: the request may have been acted on";

/// The `code` of a REST answer when it is a refusal: `Ok(None)` for none or a success
/// ([`is_success_code`]), `Err` for a code of another shape ([`venue_code`]) or for
/// [`ACCEPTED_CODE`], whose outcome is open. The one place every REST answer's code is
/// judged (and the order stream's outcomes: an `Err` there is `outcome_unknown`).
pub fn refusal_code(code: Option<&Value>) -> Result<Option<i64>, String> {
    match venue_code(code)? {
        Some(ACCEPTED_CODE) => Err(ACCEPTED_NOT_AN_OUTCOME.to_owned()),
        code => Ok(code.filter(|code| !is_success_code(*code))),
    }
}

/// The message of a refusal by `code`: the venue's words after it when it gave some (a
/// refusal without a message ends at its code, not in a dangling ": ").
pub fn refused_with_code(what: &str, code: i64, words: &str) -> String {
    if words.is_empty() {
        format!("{what}: the venue refused with code {code}")
    } else {
        format!("{what}: the venue refused with code {code}: {words}")
    }
}

/// The message of a refusal by `"success": false` with no code, as [`refused_with_code`].
pub fn refused_unsuccessful(what: &str, words: &str) -> String {
    match words {
        "" => format!("{what}: the venue refused (\"success\": false, no code)"),
        words => format!("{what}: the venue refused (\"success\": false, no code): {words}"),
    }
}

/// The keys that state an answer's outcome ([`stated`]).
const OUTCOME_KEYS: [&str; 2] = ["code", "success"];

/// Why an answer that names `key` (`code` or `success`) twice is refused: JSON readers
/// disagree on which of two equal keys counts (serde_json keeps the last, cJSON and many
/// others the first), so the library and its caller's reader could see different outcomes of
/// one request — an order reported refused and unsent (and placed again) that the caller's
/// reader sees accepted, or the reverse. The answer is ambiguous, not the venue's:
/// `PERPS_BAD_RESPONSE`.
pub fn named_twice_message(key: &str) -> String {
    format!("the venue's answer names \"{key}\" more than once: its outcome is ambiguous")
}

/// Which key that states the outcome (`code`, `success`) the top-level object of `body`
/// names more than once (however its key is escaped), if any. `None` for text that is not a
/// JSON object: other checks refuse it.
pub fn outcome_named_twice(body: &str) -> Option<&'static str> {
    let mut de = serde_json::Deserializer::from_str(body);
    match de.deserialize_any(HeadVisitor) {
        Ok(Head::Object { twice, .. }) => twice,
        _ => None,
    }
}

/// Which of `keys` the top-level object of `body` names more than once (however its key is
/// escaped), if any: for answers where more than the outcome matters (a login's `token`,
/// `chain`, `address`). `None` for text that is not a JSON object.
pub fn key_named_twice(body: &str, keys: &[&'static str]) -> Option<&'static str> {
    named_twice_in(&serde_json::from_str::<Entries<'_>>(body).ok()?.0, keys)
}

/// The first of `keys` that `entries` (one object's, keys unescaped) name more than once.
fn named_twice_in(entries: &RawEntries<'_>, keys: &[&'static str]) -> Option<&'static str> {
    keys.iter().copied().find(|key| entries.iter().filter(|(k, _)| k == key).count() > 1)
}

/// Whether an answer is to a read or to a change: a change's answer is judged in full
/// (`change_answer::judge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answering {
    Read,
    Change,
}

/// Check an answer: JSON object or array; an object's `code` ([`venue_code`]), when
/// present, a success ([`is_success_code`]) — a change's answer is judged in full, its
/// missing code too (`change_answer::judge`) — and `code` and `success` each named once
/// ([`named_twice_message`]).
pub fn check(body: &str, answering: Answering) -> Result<(), Refusal> {
    let not_json = |e: serde_json::Error| Refusal::Shape(format!("the answer is not JSON: {e}"));
    let mut de = serde_json::Deserializer::from_str(body);
    let head = de.deserialize_any(HeadVisitor).map_err(not_json)?;
    de.end().map_err(not_json)?;
    match head {
        Head::Other => Err(Refusal::Shape("the answer is neither a JSON object nor an array".to_owned())),
        Head::Object { twice: Some(key), .. } => Err(Refusal::Shape(named_twice_message(key))),
        // A code decides for a change too (`change_answer::judge_object` reads the same): the
        // documented answer, read once.
        Head::Object { code, success, reasons, .. }
            if answering == Answering::Read || code.as_ref().is_some_and(|code| !code.is_null()) =>
        {
            stated(code.as_ref(), success.as_ref(), words(&reasons))
        }
        Head::List if answering == Answering::Read => Ok(()),
        // A change's answer without a code, or a list: judged in full.
        _ => {
            let answer = serde_json::from_str::<Value>(body).map_err(not_json)?;
            super::change_answer::judge(&answer, body)
        }
    }
}

/// [`check`] for an endpoint that answers a list (`Shape::List`), bare or in a page envelope
/// `{page_size, result, total}`: `null` for the list — the whole answer, or the envelope's
/// `result` — is the empty list, `[]` (a Go server encodes an empty slice as `null`; an
/// engine reconciling no open orders must not get an error, nor a `null` where its reader
/// expects an array). `Some(text)`: the answer so rewritten, every other byte as sent;
/// `None`: as sent.
pub fn check_list(body: &str) -> Result<Option<String>, Refusal> {
    if body.trim_matches(JSON_SPACE) == "null" {
        return Ok(Some("[]".to_owned()));
    }
    check(body, Answering::Read)?;
    Ok(empty_page_as_array(body))
}

/// The answer with its envelope's `"result": null` written `[]`, or `None` when it has none.
/// `check` has made sure the answer is JSON and names no outcome key twice; a `result` named
/// twice is left as sent (which of the two a reader takes is its own affair).
fn empty_page_as_array(body: &str) -> Option<String> {
    if !body.trim_start_matches(JSON_SPACE).starts_with('{') || !body.contains("null") {
        return None;
    }
    let entries = serde_json::from_str::<Entries<'_>>(body).ok()?.0;
    let mut results = entries.iter().filter(|(key, _)| key == "result").map(|(_, value)| value.get());
    let (Some(result), None) = (results.next(), results.next()) else { return None };
    if result != "null" {
        return None;
    }
    // A raw value borrows its text from the body: its place there, to splice.
    let start = result.as_ptr() as usize - body.as_ptr() as usize;
    Some([&body[..start], "[]", &body[start + result.len()..]].concat())
}

/// The white space JSON allows around a value (RFC 8259 §2).
const JSON_SPACE: [char; 4] = [' ', '\t', '\n', '\r'];

/// The top of an answer: what `check` needs, nothing more.
enum Head {
    List,
    /// `reasons`: the entries under [`REASON_KEYS`], for [`words`].
    Object {
        code: Option<Value>,
        success: Option<Value>,
        reasons: serde_json::Map<String, Value>,
        /// The first of `OUTCOME_KEYS` found named a second time.
        twice: Option<&'static str>,
    },
    Other,
}

struct HeadVisitor;

impl<'de> Visitor<'de> for HeadVisitor {
    type Value = Head;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object or array")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let (mut code, mut success, mut reasons, mut twice) = (None, None, serde_json::Map::new(), None);
        while let Some(crate::json_entries::Key(key)) = map.next_key()? {
            match key.as_ref() {
                "code" if code.replace(map.next_value::<Value>()?).is_some() => twice = twice.or(Some("code")),
                "success" if success.replace(map.next_value::<Value>()?).is_some() => twice = twice.or(Some("success")),
                "code" | "success" => {}
                reason if REASON_KEYS.contains(&reason) => {
                    reasons.insert(reason.to_owned(), map.next_value::<Value>()?);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Head::Object { code, success, reasons, twice })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Head, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Head::List)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Head, E> {
        Ok(Head::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Head, E> {
        Ok(Head::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Head, E> {
        Ok(Head::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Head, E> {
        Ok(Head::Other)
    }
    fn visit_str<E>(self, _: &str) -> Result<Head, E> {
        Ok(Head::Other)
    }
    fn visit_unit<E>(self) -> Result<Head, E> {
        Ok(Head::Other)
    }
}

/// One object's entries in the venue's order, each value its exact text.
type RawEntries<'a> = Vec<(Cow<'a, str>, &'a RawValue)>;

/// `query_depth_book`: the same object with `bids` sorted high to low and `asks` low to
/// high by price, every other field and every level's text as the venue sent it. The book
/// (both sides: `write_sorted`) may sit at the top or inside a `data` / `result` envelope. Ties keep the venue's order.
/// The answer is read once: its `code` is checked here too (as [`check`] does).
pub fn sort_depth_book(body: &str) -> Result<String, Refusal> {
    let entries: RawEntries<'_> = serde_json::from_str::<Entries<'_>>(body)
        .map_err(|e| Refusal::Shape(format!("the depth book is not a JSON object: {}", excerpt(&e.to_string()))))?
        .0;
    if let Some(key) = named_twice_in(&entries, &OUTCOME_KEYS) {
        return Err(Refusal::Shape(named_twice_message(key)));
    }
    let field = |name: &str| entries.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
    // A raw value is valid JSON: it parses.
    let value = |name: &str| field(name).map(|raw| serde_json::from_str::<Value>(raw.get()).unwrap_or(Value::Null));
    let reasons = REASON_KEYS.iter().filter_map(|key| Some((key.to_string(), value(key)?))).collect();
    stated(value("code").as_ref(), value("success").as_ref(), words(&reasons))?;
    let has_book = |entries: &RawEntries<'_>| entries.iter().any(|(k, _)| k == "bids" || k == "asks");
    let mut out = String::with_capacity(body.len() + 8);
    if has_book(&entries) {
        write_sorted(&mut out, &entries).map_err(Refusal::Shape)?;
        return Ok(out);
    }
    // An envelope: sort the book inside it.
    let mut found = false;
    out.push('{');
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_key(&mut out, key);
        let inner = (key == "data" || key == "result")
            .then(|| serde_json::from_str::<Entries<'_>>(value.get()).ok())
            .flatten()
            .filter(|inner| has_book(&inner.0));
        match inner {
            Some(inner) => {
                write_sorted(&mut out, &inner.0).map_err(Refusal::Shape)?;
                found = true;
            }
            None => out.push_str(value.get()),
        }
    }
    out.push('}');
    if !found {
        return Err(Refusal::Shape("the depth book has no \"bids\" or \"asks\"".to_owned()));
    }
    Ok(out)
}

/// `"key":`, escaped as JSON wants.
fn push_key(out: &mut String, key: &str) {
    if key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        out.push('"');
        out.push_str(key);
        out.push_str("\":");
    } else {
        out.push_str(&serde_json::to_string(key).expect("a string serialises"));
        out.push(':');
    }
}

/// A book has both sides, as the venue documents it (venue-api.md §2.2, and as the stream
/// reads a `depth_book` push: `stream/depth.rs`); a side with no level is `[]` (or `null`).
/// A book with one side is refused naming the missing one, never read as an empty side.
fn write_sorted(out: &mut String, entries: &RawEntries<'_>) -> Result<(), String> {
    for side in ["asks", "bids"] {
        match entries.iter().filter(|(k, _)| k == side).count() {
            0 => return Err(format!("the book has no \"{side}\"")),
            1 => {}
            _ => return Err(crate::book_levels::named_twice(side)),
        }
    }
    out.push('{');
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_key(out, key);
        match key.as_ref() {
            "bids" => write_side(out, "bids", value, true)?,
            "asks" => write_side(out, "asks", value, false)?,
            _ => out.push_str(value.get()),
        }
    }
    out.push('}');
    Ok(())
}

/// Sort one side's levels by price and write them, each as sent. The levels are read as the
/// stream reads a `depth_book` push's (`crate::book_levels`): `[price, qty, …]` or an object
/// with a price and a quantity, the price a decimal, the quantity a decimal of zero or more.
fn write_side(out: &mut String, side: &str, levels: &RawValue, descending: bool) -> Result<(), String> {
    use crate::book_levels::{describe, first_problem, is_quantity, read_level};
    if levels.get() == "null" {
        out.push_str("[]");
        return Ok(());
    }
    let levels: Vec<&RawValue> =
        serde_json::from_str(levels.get()).map_err(|_| format!("\"{side}\" is not a JSON array of levels"))?;
    let read: Vec<_> = levels.iter().map(|level| read_level(level.get())).collect();
    let texts = |i: usize| read[i].as_ref().map(|l| (l.price.as_ref(), l.qty.as_ref())).map_err(|shape| *shape);
    let readable = read.iter().all(|level| level.as_ref().is_ok_and(|l| is_quantity(&l.qty)));
    let prices: Vec<&str> = read.iter().map(|level| level.as_ref().map_or("", |l| l.price.as_ref())).collect();
    let order = match readable.then(|| crate::decimal::book_order(&prices, descending)) {
        Some(Ok(order)) => order,
        _ => {
            return Err(first_problem(read.len(), texts)
                .map_or_else(|| format!("\"{side}\" cannot be sorted"), |(i, problem)| describe(side, i, &problem)));
        }
    };
    out.push('[');
    for (n, &i) in order.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push_str(levels[i].get());
    }
    out.push(']');
    Ok(())
}

/// A decimal the venue wrote as a string or as a number: its text.
pub fn decimal_text(raw: &RawValue) -> Option<String> {
    let text = raw.get();
    if text.starts_with('"') { serde_json::from_str::<String>(text).ok() } else { Some(text.to_owned()) }
}

/// A JSON object read as (key, exact value text) pairs, in order.
pub struct Entries<'a>(pub RawEntries<'a>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for EntriesVisitor<'a> {
            type Value = Entries<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries<'a>, A::Error> {
                let mut entries = Vec::new();
                while let Some((crate::json_entries::Key(key), value)) = map.next_entry::<_, &'de RawValue>()? {
                    entries.push((key, value));
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests;
