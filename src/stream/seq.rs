//! `seq` checking on the market stream: regressions and gaps become status events.
//!
//! The venue does not say whether `seq` counts per channel or per connection (its own
//! examples look connection-wide: auth 1, …, order 35, position 36, balance 37). The rules
//! here raise no false alarm under either counting:
//! - a **regression** (a `seq` not above the last one of the same channel and symbol) is
//!   reported whichever way the venue counts;
//! - a **gap** is reported when a `seq` skips ahead of both the highest `seq` seen on the
//!   connection and the last one of its own channel and symbol: under connection-wide
//!   counting that is every lost message; under per-channel counting it still catches a
//!   skip on the channel that leads. A channel's first `seq` is its baseline (a gap needs
//!   a previous `seq` of the same channel and symbol).
//!
//! A push is counted under its channel and symbol: the envelope's `symbol`, or its data's
//! when the envelope has none — for account pushes too (`position` of BTC-USD and of
//! ETH-USD each numbered from 1 by a venue that counts per symbol must not look like a
//! regression). Counting finer than the venue does raises no false alarm either: a gap
//! also needs a skip past the connection's highest `seq`, and a regression compares within
//! one channel and symbol.
//!
//! Numbering starts again on every connection (each reconnection is itself reported).
//!
//! The table of last `seq`s is the venue's to grow (every push names its symbol), so it is
//! bounded: at most [`MAX_TRACKED`] channel and symbol pairs, symbols of at most
//! [`MAX_SYMBOL_BYTES`]. A push of any other pair is counted on the connection only (no
//! regression or gap of its own is reported): a venue that sends 10^6 made-up symbols
//! cannot grow the table, nor make each push's look-up cost more than a scan of it.

use super::events::{self, Kind, Queue};
use serde_json::json;

#[derive(Debug, PartialEq, Eq)]
pub enum SeqCheck {
    InOrder,
    Gap { expected: i64, received: i64 },
    Regression { last: i64, received: i64 },
}

/// Channel and symbol pairs whose last `seq` is kept: far more than a stream's subscriptions
/// and an account's symbols (7 channels of 100 symbols are 700).
pub(crate) const MAX_TRACKED: usize = 1024;
/// A symbol longer than this is not one of the venue's (`BTC-USD`) and is not tracked.
pub(crate) const MAX_SYMBOL_BYTES: usize = 64;

#[derive(Debug, Default)]
pub struct SeqTracker {
    highest: Option<i64>,
    /// (channel, symbol or "") → last seq, at most `MAX_TRACKED` entries. A stream has a
    /// handful of subscriptions: a scan costs less than hashing.
    last: Vec<(String, String, i64)>,
}

impl SeqTracker {
    pub fn reset(&mut self) {
        self.highest = None;
        self.last.clear();
    }

    /// A `seq` that belongs to no subscription (the auth answer, a frame passed on as
    /// `unrecognized`) still counts on the connection.
    pub fn observe(&mut self, seq: i64) {
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
    }

    pub fn check(&mut self, channel: &str, symbol: &str, seq: i64) -> SeqCheck {
        let slot = self.last.iter().position(|(c, s, _)| c == channel && s == symbol);
        let last = slot.map(|i| self.last[i].2);
        let outcome = match (last, self.highest) {
            (Some(last), _) if seq <= last => SeqCheck::Regression { last, received: seq },
            (Some(last), Some(highest)) if seq > highest.saturating_add(1) && seq > last.saturating_add(1) => {
                SeqCheck::Gap { expected: highest + 1, received: seq }
            }
            _ => SeqCheck::InOrder,
        };
        match slot {
            Some(i) => self.last[i].2 = seq,
            None if self.last.len() < MAX_TRACKED && symbol.len() <= MAX_SYMBOL_BYTES => {
                self.last.push((channel.to_owned(), symbol.to_owned(), seq))
            }
            // Beyond the bound: counted on the connection only (see the module's docs).
            None => {}
        }
        // Never lowered: after a regression the venue may have started counting again, but
        // under per-channel counting lowering it would raise false gaps on the other channels.
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
        outcome
    }

    /// `check` a push's `seq` (if it has one) and queue the `gap` or `seq_regression` status
    /// event it gives, naming the push's subscription.
    pub fn report(&mut self, channel: &'static str, symbol: Option<&str>, seq: Option<i64>, queue: &Queue) {
        let Some(seq) = seq else { return };
        let subscription = || json!({ "channel": channel, "symbol": symbol });
        match self.check(channel, symbol.unwrap_or(""), seq) {
            SeqCheck::InOrder => {}
            SeqCheck::Gap { expected, received } => queue.push(
                Kind::Notice,
                events::status(
                    "gap",
                    json!({ "subscription": subscription(), "expected": expected, "received": received }),
                ),
            ),
            SeqCheck::Regression { last, received } => queue.push(
                Kind::Notice,
                events::status(
                    "seq_regression",
                    json!({ "subscription": subscription(), "last": last, "received": received }),
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_wide_counting_reports_every_skip() {
        let mut t = SeqTracker::default();
        t.observe(1); // auth
        assert_eq!(t.check("price", "BTC-USD", 2), SeqCheck::InOrder);
        assert_eq!(t.check("depth_book", "BTC-USD", 3), SeqCheck::InOrder);
        assert_eq!(t.check("price", "BTC-USD", 4), SeqCheck::InOrder);
        assert_eq!(t.check("depth_book", "BTC-USD", 7), SeqCheck::Gap { expected: 5, received: 7 });
        assert_eq!(t.check("price", "BTC-USD", 8), SeqCheck::InOrder);
        assert_eq!(t.check("price", "BTC-USD", 8), SeqCheck::Regression { last: 8, received: 8 });
    }

    #[test]
    fn per_channel_counting_raises_no_false_alarm() {
        let mut t = SeqTracker::default();
        for n in 1..50 {
            assert_eq!(t.check("depth_book", "BTC-USD", 100 + n), SeqCheck::InOrder);
            assert_eq!(t.check("depth_book", "ETH-USD", n), SeqCheck::InOrder);
            assert_eq!(t.check("price", "BTC-USD", 7 + n), SeqCheck::InOrder);
            assert_eq!(t.check("order", "", 1000 + n), SeqCheck::InOrder);
        }
        assert_eq!(t.check("price", "BTC-USD", 3), SeqCheck::Regression { last: 56, received: 3 });
        // The leading channel's skip is still seen.
        assert_eq!(t.check("order", "", 1052), SeqCheck::Gap { expected: 1050, received: 1052 });
    }

    #[test]
    fn the_table_of_pairs_is_bounded() {
        let mut t = SeqTracker::default();
        assert_eq!(t.check("price", "BTC-USD", 1), SeqCheck::InOrder);
        for n in 0..(MAX_TRACKED as i64 + 5_000) {
            assert_eq!(t.check("price", &format!("S{n}"), 2 + n), SeqCheck::InOrder);
        }
        assert_eq!(t.check("price", &"X".repeat(MAX_SYMBOL_BYTES + 1), 1), SeqCheck::InOrder);
        assert_eq!(t.last.len(), MAX_TRACKED);
        // The pairs tracked first are still checked.
        assert!(matches!(t.check("price", "BTC-USD", 1), SeqCheck::Regression { last: 1, received: 1 }));
    }

    #[test]
    fn reset_forgets_the_previous_connection() {
        let mut t = SeqTracker::default();
        assert_eq!(t.check("price", "X", 500), SeqCheck::InOrder);
        t.reset();
        assert_eq!(t.check("price", "X", 1), SeqCheck::InOrder);
    }
}
