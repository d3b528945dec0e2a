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

use super::deadlines::Deadlines;
use crate::body_sign::REQUEST_ID_LEN;
use crate::error::{Code, Error, Result};
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

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

/// A `request_id` text that is a UUID written otherwise than `RequestId` writes it — its hex
/// in upper or mixed case (RFC 9562: the hex digits are case-insensitive), without hyphens,
/// braced, or as a `urn:uuid:` — in our form, so that it is matched to the request (or the
/// login) it names and the event names the id the caller was given; `None` for our form
/// itself (no allocation on the usual path) and for any text that is no UUID.
pub(super) fn canonical(text: &str) -> Option<String> {
    if key_of(text).is_some() {
        return None;
    }
    uuid::Uuid::try_parse(text).ok().map(|uuid| text_of(uuid.as_u128()))
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
    /// Listed `unanswered` in a `disconnected` event, or reported by a `request_timeout`
    /// event: the engine knows its fate is unknown.
    pub(super) reported: bool,
    /// Listed `unanswered` in a `disconnected` event (its connection ended without its
    /// outcome): not listed again by a later one.
    pub(super) listed: bool,
    /// The venue's "accepted" ack came.
    pub(super) acked: bool,
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
    /// connection (every disconnection reports all it leaves) and not yet past their deadline,
    /// counted so that a rotation's read-out can ask at each pass without a scan.
    unreported: usize,
    /// When each request's outcome is due (`stream_request_timeout_ms`).
    deadlines: Deadlines,
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
        let by_id = &self.by_id;
        self.deadlines.compact(by_id.len(), |key| by_id.contains_key(&key));
    }

    /// The requests whose deadline has passed by `now` and that are not reported yet: now
    /// reported (the caller emits their `request_timeout` events).
    fn expire(&mut self, now: Instant) -> Vec<(u128, Request)> {
        let mut expired = Vec::new();
        while let Some(key) = self.deadlines.pop_due(now) {
            if let Some(request) = self.by_id.get_mut(&key)
                && !request.reported
            {
                request.reported = true;
                self.unreported -= 1;
                expired.push((key, request.clone()));
            }
        }
        expired
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
    #[cfg(test)]
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

/// A request past its deadline, reported by a `request_timeout` event.
pub(super) struct TimedOut {
    pub(super) request_id: String,
    pub(super) request: Request,
}

impl OrderState {
    pub fn new(session_id: String, from_session: bool) -> OrderState {
        OrderState { session_id, from_session, pending: Mutex::new(Pending::default()), max_pending: MAX_PENDING }
    }

    /// Each request's outcome is due this long after its frame is written (`None`: never).
    pub fn with_request_timeout(self, timeout: Option<Duration>) -> OrderState {
        self.pending().deadlines = Deadlines::new(timeout);
        self
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
    /// request must then not be sent (`PERPS_INVALID_STATE`, not reached). `Ok(true)`: its
    /// deadline is now the only one, and the I/O thread must be woken to keep it
    /// (`Deadlines::start`).
    pub fn remember(
        &self,
        id: &RequestId,
        method: &'static str,
        cl_ord_id: Option<&str>,
        order_id: Option<i64>,
    ) -> Result<bool> {
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
        let request = Request {
            method,
            cl_ord_id: cl_ord_id.map(Box::from),
            order_id,
            reported: false,
            listed: false,
            acked: false,
        };
        pending.insert(id.key, request);
        Ok(pending.deadlines.start(id.key, Instant::now()))
    }

    /// The requests fallen due by `now` and not yet reported, now reported; and when the next
    /// deadline falls due (the I/O thread wakes then).
    pub(super) fn expire(&self, now: Instant) -> (Vec<TimedOut>, Option<Instant>) {
        let mut pending = self.pending();
        let expired = pending.expire(now);
        let next = pending.deadlines.next();
        let timed_out =
            expired.into_iter().map(|(key, request)| TimedOut { request_id: text_of(key), request }).collect();
        (timed_out, next)
    }

    /// `stream_request_timeout_ms`, as the events report it.
    pub(super) fn request_timeout(&self) -> Option<Duration> {
        self.pending().deadlines.timeout()
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
            Reply::Ack => {
                let request = pending.by_id.get_mut(&key).map(|request| {
                    request.acked = true;
                    request.clone()
                });
                return Answer { request, ..Answer::none() };
            }
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

    /// The requests the ended connection leaves waiting for their outcome (every one still
    /// awaited that no earlier disconnection listed: those reported by a `request_timeout`
    /// event too, so that the list is complete for the connection), oldest first, for a
    /// `disconnected` event: from now on, each may make room for a new request when the
    /// table is full.
    pub(super) fn report_unanswered(&self) -> Vec<String> {
        let mut pending = self.pending();
        let pending = &mut *pending;
        let mut listed = Vec::new();
        for &key in &pending.order {
            if let Some(request) = pending.by_id.get_mut(&key)
                && !request.listed
            {
                request.listed = true;
                request.reported = true;
                listed.push(text_of(key));
            }
        }
        pending.unreported = 0;
        listed
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
mod tests;
