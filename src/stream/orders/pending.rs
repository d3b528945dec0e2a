//! The order stream's requests in flight: each `order:new` / `order:cancel` remembered by its
//! envelope `request_id` until its outcome comes, so that the venue's replies (an ack, then
//! the outcome) are matched to the order they answer. Apart from the protocol (`orders.rs`)
//! because it is the state the callers' threads share with the I/O thread, and its own
//! concerns: a key per `request_id` without hashing or allocating per order, and bounds:
//! at most [`MAX_PENDING`] requests wait for their outcome (beyond, the oldest one already
//! listed `unanswered` in a `disconnected` event makes room — the engine was told its fate
//! is unknown; when none was, a new request is refused unsent: none is forgotten
//! silently), and the last [`REMEMBERED_FINISHED`] requests answered by their outcome are
//! remembered, so that an outcome the venue sends twice is passed on as a repeat, never as
//! an order's outcome.

use crate::body_sign::REQUEST_ID_LEN;
use crate::error::{Code, Error, Result};
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, PoisonError};

/// Requests waiting for their outcome, at most this many. Beyond it, the oldest request
/// already reported `unanswered` is forgotten (its late outcome, if any, is then passed on
/// unmatched, still naming its `request_id`); when every one is still unreported, the new
/// request is refused before any of it is sent: forgetting an unreported one would drop it
/// from the `unanswered` list an engine reconciles by. Without the first rule, outcomes the
/// venue never sent would fill the table over a long run and refuse every order.
const MAX_PENDING: usize = 100_000;

/// How many requests answered by their outcome are remembered (their keys only): a second
/// outcome for one of them comes soon after the first, if at all.
const REMEMBERED_FINISHED: usize = 4096;

/// An envelope `request_id`: a fresh UUID v4, as text and as the 128-bit key of the pending
/// table (no allocation, no string hashing per order).
#[derive(Clone, Copy)]
pub struct RequestId {
    key: u128,
    text: [u8; REQUEST_ID_LEN],
}

impl RequestId {
    pub fn fresh() -> Result<RequestId> {
        let uuid = crate::body_sign::fresh_uuid_value()?;
        let mut text = [0u8; REQUEST_ID_LEN];
        uuid.hyphenated().encode_lower(&mut text);
        Ok(RequestId { key: uuid.as_u128(), text })
    }

    pub fn as_str(&self) -> &str {
        // Hex digits and hyphens.
        std::str::from_utf8(&self.text).unwrap_or("")
    }
}

/// The key of a `request_id` text exactly as `RequestId` writes it (36 characters, lower-case
/// hex, hyphens at 8, 13, 18, 23); `None` for any other text, which matches no request of
/// ours. Equal keys mean equal texts.
fn key_of(text: &str) -> Option<u128> {
    let bytes = text.as_bytes();
    if bytes.len() != REQUEST_ID_LEN {
        return None;
    }
    let mut key = 0u128;
    for (i, &b) in bytes.iter().enumerate() {
        let digit = match b {
            b'-' if matches!(i, 8 | 13 | 18 | 23) => continue,
            b'0'..=b'9' if !matches!(i, 8 | 13 | 18 | 23) => b - b'0',
            b'a'..=b'f' if !matches!(i, 8 | 13 | 18 | 23) => b - b'a' + 10,
            _ => return None,
        };
        key = (key << 4) | u128::from(digit);
    }
    Some(key)
}

fn text_of(key: u128) -> String {
    uuid::Uuid::from_u128(key).hyphenated().to_string()
}

/// Hashes a key by folding its two halves: the keys are our own fresh random UUIDs (at least
/// 58 random bits in the fold), so no hashing of the bits is needed, and the venue's frames
/// only look keys up — they cannot put colliding keys in the table.
#[derive(Default, Clone, Copy)]
struct FoldHasher(u64);

impl Hasher for FoldHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Not used by `u128` keys; a plain fold for completeness.
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_le_bytes(word);
        }
    }
    fn write_u128(&mut self, key: u128) {
        self.0 = (key as u64) ^ ((key >> 64) as u64);
    }
}

/// What the library remembers about a request it sent.
#[derive(Clone, Debug)]
pub(super) struct Request {
    pub(super) method: &'static str,
    pub(super) cl_ord_id: Option<Box<str>>,
    pub(super) order_id: Option<i64>,
    /// Listed `unanswered` in a `disconnected` event: the engine knows its fate is unknown.
    pub(super) reported: bool,
}

/// What an outcome says of its request, as an engine acts on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Success,
    Refused,
    /// Acted on or not, no one can tell (`outcome_unknown`).
    Unknown,
}

/// A reply to a request: the "accepted" ack, or the outcome.
#[derive(Clone, Copy, Debug)]
pub(super) enum Reply {
    Ack,
    Outcome(Verdict),
}

/// What a reply with a `request_id` answers.
#[derive(Debug)]
pub(super) struct Answer {
    /// The request it answers, still awaiting its outcome (or now given it).
    pub(super) request: Option<Request>,
    /// An outcome (not an ack) for a request whose outcome was already passed on: the venue
    /// sent it twice. It must never be taken for an order's outcome.
    pub(super) repeat: bool,
    /// For a repeat: the request its first copy answered (for its ids).
    pub(super) first: Option<Request>,
    /// A repeat whose verdict differs from its first copy's: the venue said two things of
    /// one request (e.g. an ack in words not known taken for a success, then the refusal),
    /// so what the first said cannot be trusted either.
    pub(super) contradicts: bool,
}

impl Answer {
    fn none() -> Answer {
        Answer { request: None, repeat: false, first: None, contradicts: false }
    }
}

/// The requests sent and not yet answered by their outcome.
#[derive(Default)]
struct Pending {
    by_id: HashMap<u128, Request, BuildHasherDefault<FoldHasher>>,
    /// Keys in the order they were sent (finished ones stay until compaction).
    order: VecDeque<u128>,
    /// The latest requests answered by their outcome, oldest first (`finished_by_key` holds
    /// the same keys, with the request and what its outcome said).
    finished: VecDeque<u128>,
    finished_by_key: HashMap<u128, (Request, Verdict), BuildHasherDefault<FoldHasher>>,
    /// How many of `by_id` are not yet `reported`: the requests sent on the current
    /// connection (every disconnection reports all it leaves), counted so that a rotation's
    /// read-out can ask at each pass without a scan.
    unreported: usize,
}

impl Pending {
    fn insert(&mut self, key: u128, request: Request) {
        self.order.push_back(key);
        self.unreported += usize::from(!request.reported);
        if let Some(replaced) = self.by_id.insert(key, request) {
            self.unreported -= usize::from(!replaced.reported);
        }
        // Finished requests leave their key in `order`; compact it now and then.
        if self.order.len() > 2 * self.by_id.len() + 1024 {
            let by_id = &self.by_id;
            self.order.retain(|key| by_id.contains_key(key));
        }
    }

    /// Room for one more request: the oldest one already reported `unanswered` is forgotten.
    fn make_room(&mut self) -> bool {
        let by_id = &self.by_id;
        let oldest_reported = self.order.iter().position(|key| by_id.get(key).is_some_and(|r| r.reported));
        match oldest_reported.and_then(|at| self.order.remove(at)) {
            Some(key) => self.remove(key).is_some(),
            None => false,
        }
    }

    /// The `request_id`s of the requests still waiting for their outcome, oldest first.
    fn awaited(&self) -> Vec<String> {
        self.order.iter().filter(|key| self.by_id.contains_key(*key)).map(|&key| text_of(key)).collect()
    }

    fn remove(&mut self, key: u128) -> Option<Request> {
        let request = self.by_id.remove(&key)?;
        self.unreported -= usize::from(!request.reported);
        Some(request)
    }

    /// A request answered by its outcome: remembered among the latest finished.
    fn finish(&mut self, key: u128, request: Request, verdict: Verdict) {
        if self.finished.len() == REMEMBERED_FINISHED
            && let Some(oldest) = self.finished.pop_front()
        {
            self.finished_by_key.remove(&oldest);
        }
        if self.finished_by_key.insert(key, (request, verdict)).is_none() {
            self.finished.push_back(key);
        }
    }
}

/// What the order stream shares between the callers' threads and its I/O thread.
pub struct OrderState {
    pub session_id: String,
    /// Whether `session_id` is the session's `x-session-id` (so REST results arrive here).
    pub from_session: bool,
    pending: Mutex<Pending>,
    /// [`MAX_PENDING`], lowered by the tests.
    max_pending: usize,
}

impl OrderState {
    pub fn new(session_id: String, from_session: bool) -> OrderState {
        OrderState { session_id, from_session, pending: Mutex::new(Pending::default()), max_pending: MAX_PENDING }
    }

    #[cfg(test)]
    pub(super) fn with_max_pending(mut self, max_pending: usize) -> OrderState {
        self.max_pending = max_pending;
        self
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Remember a request before its frame is written (its reply may come before the write
    /// returns). Refused when [`MAX_PENDING`] requests already await their outcome: the
    /// request must then not be sent (`PERPS_INVALID_STATE`, not reached).
    pub fn remember(
        &self,
        id: &RequestId,
        method: &'static str,
        cl_ord_id: Option<&str>,
        order_id: Option<i64>,
    ) -> Result<()> {
        let mut pending = self.pending();
        if pending.by_id.len() >= self.max_pending && !pending.make_room() {
            return Err(Error::new(
                Code::InvalidState,
                format!(
                    "the order stream already has {} requests awaiting their outcome, its limit: this {method} \
                     was not sent (wait for their outcomes, or reconcile by REST)",
                    self.max_pending
                ),
            ));
        }
        let request = Request { method, cl_ord_id: cl_ord_id.map(Box::from), order_id, reported: false };
        pending.insert(id.key, request);
        Ok(())
    }

    pub fn forget(&self, id: &RequestId) {
        self.pending().remove(id.key);
    }

    /// What a reply with this `request_id` answers: its request, kept after an ack (its
    /// outcome is still to come), forgotten after the outcome (and remembered as finished);
    /// none for no request of this stream awaiting its outcome, and then whether the reply is
    /// a second outcome of a request finished lately, and whether it says otherwise.
    pub(super) fn answered(&self, request_id: &str, reply: Reply) -> Answer {
        let Some(key) = key_of(request_id) else { return Answer::none() };
        let mut pending = self.pending();
        let verdict = match reply {
            Reply::Ack => return Answer { request: pending.by_id.get(&key).cloned(), ..Answer::none() },
            Reply::Outcome(verdict) => verdict,
        };
        match pending.remove(key) {
            Some(request) => {
                pending.finish(key, request.clone(), verdict);
                Answer { request: Some(request), ..Answer::none() }
            }
            None => match pending.finished_by_key.get(&key) {
                Some((first, said)) => {
                    Answer { repeat: true, first: Some(first.clone()), contradicts: *said != verdict, ..Answer::none() }
                }
                None => Answer::none(),
            },
        }
    }

    /// Whether any request still waits for its outcome.
    pub(super) fn has_unanswered(&self) -> bool {
        !self.pending().by_id.is_empty()
    }

    /// The requests still waiting for their outcome, oldest first, for a `disconnected`
    /// event: from now on, each may make room for a new request when the table is full.
    pub(super) fn report_unanswered(&self) -> Vec<String> {
        let mut pending = self.pending();
        pending.by_id.values_mut().for_each(|request| request.reported = true);
        pending.unreported = 0;
        pending.awaited()
    }

    /// Whether a request not yet listed `unanswered` waits for its outcome: one sent on the
    /// current connection.
    pub(super) fn awaits_unreported(&self) -> bool {
        self.pending().unreported > 0
    }

    /// The requests still waiting for their outcome, oldest first.
    #[cfg(test)]
    pub(super) fn unanswered(&self) -> Vec<String> {
        self.pending().awaited()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACK: Reply = Reply::Ack;
    const DONE: Reply = Reply::Outcome(Verdict::Success);

    #[test]
    fn only_the_exact_text_of_a_request_id_matches_it() {
        let id = RequestId::fresh().unwrap();
        let text = id.as_str();
        assert_eq!(key_of(text), Some(id.key));
        assert_eq!(text_of(id.key), text);
        let upper = text.to_ascii_uppercase();
        let simple = text.replace('-', "");
        let braced = format!("{{{text}}}");
        let moved = format!("{}-{}", &text[..7], &text[8..]);
        for other in [upper.as_str(), simple.as_str(), braced.as_str(), moved.as_str(), "", "r1"] {
            if other != text {
                assert_eq!(key_of(other), None, "{other}");
            }
        }
        // The table: remembered, found by its text, forgotten after the outcome.
        let state = OrderState::new("s".into(), false);
        state.remember(&id, "order:new", None, Some(7)).unwrap();
        assert_eq!(state.unanswered(), vec![text.to_owned()]);
        state.forget(&id);
        assert!(state.unanswered().is_empty());
    }

    #[test]
    fn a_request_beyond_the_bound_is_refused_and_none_is_forgotten() {
        let state = OrderState::new("s".into(), false).with_max_pending(3);
        let ids: Vec<RequestId> = (0..5).map(|_| RequestId::fresh().unwrap()).collect();
        for id in &ids[..3] {
            state.remember(id, "order:new", None, None).unwrap();
        }
        for (id, method) in [(&ids[3], "order:new"), (&ids[4], "order:cancel")] {
            let e = state.remember(id, method, Some("c-9"), None).unwrap_err();
            assert_eq!(e.code(), Code::InvalidState);
            assert!(!e.may_have_reached_venue());
            assert!(e.message().contains("3 requests awaiting their outcome"), "{}", e.message());
            assert!(e.message().contains(&format!("this {method} was not sent")), "{}", e.message());
        }
        let first_three: Vec<&str> = ids[..3].iter().map(RequestId::as_str).collect();
        assert_eq!(state.unanswered(), first_three, "every request sent is still awaited, in order");
        // An outcome makes room again.
        assert!(state.answered(ids[0].as_str(), DONE).request.is_some());
        state.remember(&ids[3], "order:new", None, None).unwrap();
        assert_eq!(state.unanswered().len(), 3);
        assert_eq!(MAX_PENDING, OrderState::new("s".into(), false).max_pending);
    }

    #[test]
    fn a_rotation_awaits_only_the_requests_of_the_current_connection() {
        let state = OrderState::new("s".into(), false).with_max_pending(3);
        let ids: Vec<RequestId> = (0..7).map(|_| RequestId::fresh().unwrap()).collect();
        assert!(!state.awaits_unreported());
        state.remember(&ids[0], "order:new", None, None).unwrap();
        state.remember(&ids[1], "order:new", None, None).unwrap();
        assert!(state.answered(ids[0].as_str(), ACK).request.is_some(), "an ack");
        assert!(state.awaits_unreported(), "acked, its outcome still awaited");
        assert!(state.answered(ids[0].as_str(), DONE).request.is_some());
        assert!(state.awaits_unreported(), "the second still awaited");
        // The connection ends: what it leaves is listed, and awaited on no later connection.
        assert_eq!(state.report_unanswered(), vec![ids[1].as_str().to_owned()]);
        assert!(!state.awaits_unreported());
        // The next connection's requests are, whatever becomes of the earlier ones.
        state.remember(&ids[2], "order:new", None, None).unwrap();
        assert!(state.awaits_unreported());
        assert!(state.answered(ids[1].as_str(), DONE).request.is_some(), "a late outcome");
        assert!(state.awaits_unreported());
        state.forget(&ids[2]);
        assert!(!state.awaits_unreported(), "a request not sent is not awaited");
        // A full table forgets a reported request to make room; the count holds.
        for id in &ids[3..6] {
            state.remember(id, "order:new", None, None).unwrap();
        }
        assert_eq!(state.report_unanswered().len(), 3);
        assert!(!state.awaits_unreported());
        state.remember(&ids[6], "order:new", None, None).unwrap();
        assert_eq!(state.unanswered().len(), 3, "the oldest reported one made room");
        assert!(state.awaits_unreported());
        assert!(state.answered(ids[6].as_str(), DONE).request.is_some());
        assert!(!state.awaits_unreported());
    }

    #[test]
    fn a_full_table_forgets_the_oldest_request_already_reported_unanswered() {
        let state = OrderState::new("s".into(), false).with_max_pending(3);
        let ids: Vec<RequestId> = (0..6).map(|_| RequestId::fresh().unwrap()).collect();
        let text = |at: &[usize]| at.iter().map(|&i| ids[i].as_str().to_owned()).collect::<Vec<_>>();
        for id in &ids[..2] {
            state.remember(id, "order:new", None, None).unwrap();
        }
        // A disconnection lists the first two: the engine reconciles them.
        assert_eq!(state.report_unanswered(), text(&[0, 1]));
        state.remember(&ids[2], "order:new", None, None).unwrap();
        // Full: the oldest reported one makes room, then the next; never the unreported one.
        state.remember(&ids[3], "order:new", None, None).unwrap();
        assert_eq!(state.unanswered(), text(&[1, 2, 3]));
        state.remember(&ids[4], "order:new", None, None).unwrap();
        assert_eq!(state.unanswered(), text(&[2, 3, 4]));
        assert_eq!(state.remember(&ids[5], "order:new", None, None).unwrap_err().code(), Code::InvalidState);
        assert_eq!(state.unanswered(), text(&[2, 3, 4]));
        // The forgotten request's late outcome is passed on unmatched, not as a repeat.
        let late = state.answered(ids[0].as_str(), DONE);
        assert!(late.request.is_none() && !late.repeat);
    }

    #[test]
    fn a_second_outcome_of_a_finished_request_is_a_repeat_within_the_memory() {
        let state = OrderState::new("s".into(), false);
        let ids: Vec<RequestId> = (0..REMEMBERED_FINISHED + 1).map(|_| RequestId::fresh().unwrap()).collect();
        for id in &ids {
            state.remember(id, "order:new", None, None).unwrap();
        }
        let ack = state.answered(ids[0].as_str(), ACK);
        assert!(ack.request.is_some() && !ack.repeat, "an ack keeps the request awaited");
        let outcome = state.answered(ids[0].as_str(), DONE);
        assert!(outcome.request.is_some() && !outcome.repeat);
        let again = state.answered(ids[0].as_str(), DONE);
        assert!(again.request.is_none() && again.repeat, "its outcome again");
        let late_ack = state.answered(ids[0].as_str(), ACK);
        assert!(late_ack.request.is_none() && !late_ack.repeat, "a late ack is no outcome");
        let unknown = RequestId::fresh().unwrap();
        assert!(!state.answered(unknown.as_str(), DONE).repeat, "no request of this stream");
        // The memory is bounded: the oldest finished request is forgotten first.
        for id in &ids[1..] {
            assert!(state.answered(id.as_str(), DONE).request.is_some());
        }
        assert!(!state.answered(ids[0].as_str(), DONE).repeat, "beyond the memory");
        assert!(state.answered(ids[1].as_str(), DONE).repeat);
        assert!(state.answered(ids[REMEMBERED_FINISHED].as_str(), DONE).repeat);
    }

    #[test]
    fn a_repeat_that_says_otherwise_contradicts_its_first_copy_and_names_its_order() {
        let state = OrderState::new("s".into(), false);
        let id = RequestId::fresh().unwrap();
        state.remember(&id, "order:new", Some("c-1"), None).unwrap();
        // An ack in words the stream does not know is taken for the outcome; the real outcome
        // then comes as a repeat.
        assert!(state.answered(id.as_str(), DONE).request.is_some());
        let same = state.answered(id.as_str(), DONE);
        assert!(same.repeat && !same.contradicts && same.request.is_none());
        assert_eq!(same.first.as_ref().and_then(|r| r.cl_ord_id.as_deref()), Some("c-1"));
        for verdict in [Verdict::Refused, Verdict::Unknown] {
            let other = state.answered(id.as_str(), Reply::Outcome(verdict));
            assert!(other.repeat && other.contradicts, "{verdict:?}: {other:?}");
            assert_eq!(other.first.map(|r| r.method), Some("order:new"));
        }
        assert!(!state.answered(id.as_str(), ACK).repeat, "an ack is never a repeat");
    }
}
