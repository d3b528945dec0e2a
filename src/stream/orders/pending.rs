//! The order stream's requests in flight: each `order:new` / `order:cancel` remembered by its
//! envelope `request_id` until its outcome comes, so that the venue's replies (an ack, then
//! the outcome) are matched to the order they answer. Apart from the protocol (`orders.rs`)
//! because it is the state the callers' threads share with the I/O thread, and its own
//! concerns: a key per `request_id` without hashing or allocating per order, and a bound.

use crate::body_sign::REQUEST_ID_LEN;
use crate::error::Result;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, PoisonError};

/// Requests waiting for their outcome, at most this many (the oldest are forgotten first;
/// a reply that comes for one later is passed through unmatched).
const MAX_PENDING: usize = 100_000;

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
}

/// The requests sent and not yet answered by their outcome.
#[derive(Default)]
struct Pending {
    by_id: HashMap<u128, Request, BuildHasherDefault<FoldHasher>>,
    /// Keys in the order they were sent (finished ones stay until compaction).
    order: VecDeque<u128>,
}

impl Pending {
    fn insert(&mut self, key: u128, request: Request) {
        while self.by_id.len() >= MAX_PENDING {
            match self.order.pop_front() {
                Some(oldest) => {
                    self.by_id.remove(&oldest);
                }
                None => break,
            }
        }
        self.order.push_back(key);
        self.by_id.insert(key, request);
        // Finished requests leave their key in `order`; compact it now and then.
        if self.order.len() > 2 * self.by_id.len() + 1024 {
            let by_id = &self.by_id;
            self.order.retain(|key| by_id.contains_key(key));
        }
    }
}

/// What the order stream shares between the callers' threads and its I/O thread.
pub struct OrderState {
    pub session_id: String,
    /// Whether `session_id` is the session's `x-session-id` (so REST results arrive here).
    pub from_session: bool,
    pending: Mutex<Pending>,
}

impl OrderState {
    pub fn new(session_id: String, from_session: bool) -> OrderState {
        OrderState { session_id, from_session, pending: Mutex::new(Pending::default()) }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Remember a request before its frame is written (its reply may come before the write
    /// returns).
    pub fn remember(&self, id: &RequestId, method: &'static str, cl_ord_id: Option<&str>, order_id: Option<i64>) {
        let request = Request { method, cl_ord_id: cl_ord_id.map(Box::from), order_id };
        self.pending().insert(id.key, request);
    }

    pub fn forget(&self, id: &RequestId) {
        self.pending().by_id.remove(&id.key);
    }

    /// The request a reply with this `request_id` answers: kept after an ack (its outcome is
    /// still to come), forgotten after the outcome; `None` for no request of this stream.
    pub(super) fn answered(&self, request_id: &str, ack: bool) -> Option<Request> {
        let key = key_of(request_id)?;
        let mut pending = self.pending();
        if ack { pending.by_id.get(&key).cloned() } else { pending.by_id.remove(&key) }
    }

    /// Whether any request still waits for its outcome.
    pub(super) fn has_unanswered(&self) -> bool {
        !self.pending().by_id.is_empty()
    }

    /// The requests still waiting for their outcome, oldest first.
    pub(super) fn unanswered(&self) -> Vec<String> {
        let pending = self.pending();
        pending.order.iter().filter(|key| pending.by_id.contains_key(*key)).map(|&key| text_of(key)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        state.remember(&id, "order:new", None, Some(7));
        assert_eq!(state.unanswered(), vec![text.to_owned()]);
        state.forget(&id);
        assert!(state.unanswered().is_empty());
    }

    #[test]
    fn the_oldest_requests_are_forgotten_beyond_the_bound() {
        let state = OrderState::new("s".into(), false);
        let ids: Vec<RequestId> = (0..MAX_PENDING + 3).map(|_| RequestId::fresh().unwrap()).collect();
        for id in &ids {
            state.remember(id, "order:new", None, None);
        }
        let unanswered = state.unanswered();
        assert_eq!(unanswered.len(), MAX_PENDING);
        assert_eq!(unanswered[0], ids[3].as_str());
        assert_eq!(unanswered.last().map(String::as_str), Some(ids[MAX_PENDING + 2].as_str()));
    }
}
