//! Seen `x-request-id`s, so a captured signed request cannot be sent twice.
//!
//! An id only needs remembering while a request carrying it could still pass the timestamp
//! check: its timestamp is at most `window` ahead of the clock when first seen and is
//! accepted until `window` after that, so ids older than 2 × window (plus a margin) are
//! forgotten. This keeps memory flat under a long benchmark.

use std::collections::{HashSet, VecDeque};

pub(crate) struct ReplayGuard {
    keep_ms: i64,
    seen: HashSet<String>,
    order: VecDeque<(i64, String)>,
}

impl ReplayGuard {
    pub(crate) fn new(window_ms: i64) -> ReplayGuard {
        ReplayGuard {
            keep_ms: window_ms.saturating_mul(2).saturating_add(1000),
            seen: HashSet::new(),
            order: VecDeque::new(),
        }
    }

    /// Records `id` (case-insensitive, as UUIDs are); false if it was already seen.
    pub(crate) fn first_use(&mut self, id: &str, now_ms: i64) -> bool {
        while self.order.front().is_some_and(|(t, _)| now_ms.saturating_sub(*t) > self.keep_ms) {
            if let Some((_, old)) = self.order.pop_front() {
                self.seen.remove(&old);
            }
        }
        let id = id.to_ascii_lowercase();
        if !self.seen.insert(id.clone()) {
            return false;
        }
        self.order.push_back((now_ms, id));
        true
    }
}
