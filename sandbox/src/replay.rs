//! Texts seen recently (`x-request-id`s, body signatures), to notice a request sent twice.
//!
//! A text only needs remembering while a request carrying it could still pass the timestamp
//! check: its timestamp is at most `window` ahead of the clock when first seen and is
//! accepted until `window` after that, so texts older than 2 × window (plus a margin) are
//! forgotten. This keeps memory flat under a long benchmark.

use std::collections::{HashSet, VecDeque};

pub(crate) struct RecentlySeen {
    keep_ms: i64,
    seen: HashSet<String>,
    order: VecDeque<(i64, String)>,
}

impl RecentlySeen {
    pub(crate) fn new(window_ms: i64) -> RecentlySeen {
        RecentlySeen {
            keep_ms: window_ms.saturating_mul(2).saturating_add(1000),
            seen: HashSet::new(),
            order: VecDeque::new(),
        }
    }

    /// Records `text`; false if it was already seen within the window.
    pub(crate) fn first_use(&mut self, text: &str, now_ms: i64) -> bool {
        while self.order.front().is_some_and(|(t, _)| now_ms.saturating_sub(*t) > self.keep_ms) {
            if let Some((_, old)) = self.order.pop_front() {
                self.seen.remove(&old);
            }
        }
        if !self.seen.insert(text.to_owned()) {
            return false;
        }
        self.order.push_back((now_ms, text.to_owned()));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::RecentlySeen;

    #[test]
    fn remembered_within_the_window_only() {
        let mut seen = RecentlySeen::new(1000);
        assert!(seen.first_use("a", 0));
        assert!(!seen.first_use("a", 2000));
        assert!(seen.first_use("a", 3001 + 2000), "forgotten after 2 × window + 1 s");
    }
}
