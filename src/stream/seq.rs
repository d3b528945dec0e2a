//! `seq` checking on the market stream: regressions and gaps become status events.
//!
//! The venue does not say whether `seq` counts per channel or per connection (its own
//! examples look connection-wide: auth 1, …, order 35, position 36, balance 37). So the
//! counting is learnt from the frames of each connection:
//! - **connection-wide**, once three frames in a row, each of another channel or symbol than
//!   the one before, each carried the connection's next number, and nothing contradicted it.
//!   Then every frame with a `seq` is checked against the connection's highest — pushes of
//!   any channel, the first push of a channel or symbol, pushes beyond the table's bound,
//!   frames passed on as `unrecognized`, the auth answer: a skip is a `gap` of the connection
//!   (`"scope":"connection"`: the message lost may have been of any channel — an account
//!   fill as well as a book), a number not above the highest a `seq_regression`, after which
//!   the count goes on from the new number (the venue started again, or the number before
//!   was out of line);
//! - **per channel and symbol** (or finer), as soon as a push behind the connection's
//!   highest (a push's) is in order for its own channel and symbol — impossible under
//!   connection-wide counting. Until then, and from then on, the rules raise no false alarm under either
//!   counting: a regression (a `seq` not above the last one of the same channel and symbol) is
//!   reported; a gap is reported when a `seq` skips ahead of both the highest `seq` seen on the
//!   connection and the last one of its own channel and symbol (`"scope":"subscription"`), so
//!   a channel's first `seq` is its baseline.
//!
//! A push is counted under its channel and symbol: the envelope's `symbol`, or its data's
//! when the envelope has none — for account pushes too (`position` of BTC-USD and of
//! ETH-USD each numbered from 1 by a venue that counts per symbol must not look like a
//! regression).
//!
//! Numbering starts again on every connection (each reconnection is itself reported), and so
//! does the learning.
//!
//! The table of last `seq`s is the venue's to grow (every push names its symbol), so it is
//! bounded: at most [`MAX_TRACKED`] channel and symbol pairs, symbols of at most
//! [`MAX_SYMBOL_BYTES`]. A push of any other pair is counted on the connection only (no
//! regression or gap of its own is reported unless the counting is connection-wide): a venue
//! that sends 10^6 made-up symbols cannot grow the table, nor make each push's look-up cost
//! more than a scan of it. The stream's own public subscriptions hold their places from the
//! connection's start ([`SeqTracker::reserve`]), so such a venue cannot push them out of the
//! table either.

use super::events::{self, Kind, Queue};
use serde_json::{Value, json};

/// Where a lost message or a regression was: on the connection (any channel may have lost
/// it), or on the subscription of the push that shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Connection,
    Subscription,
}

impl Scope {
    fn as_str(self) -> &'static str {
        match self {
            Scope::Connection => "connection",
            Scope::Subscription => "subscription",
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum SeqCheck {
    InOrder,
    Gap { expected: i64, received: i64, scope: Scope },
    Regression { last: i64, received: i64, scope: Scope },
}

/// Channel and symbol pairs whose last `seq` is kept: far more than a stream's subscriptions
/// and an account's symbols (7 channels of 100 symbols are 700).
pub(crate) const MAX_TRACKED: usize = 1024;
/// A symbol longer than this is not one of the venue's (`BTC-USD`) and is not tracked.
pub(crate) const MAX_SYMBOL_BYTES: usize = 64;
/// Frames in a row, each of another pair than the one before, carrying the connection's next
/// number, that show connection-wide counting.
const CONNECTION_WIDE_AFTER: u8 = 3;

/// How the connection's venue counts, as learnt so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Counting {
    #[default]
    Unknown,
    /// Every frame is checked against the connection's highest `seq`.
    ConnectionWide,
    /// Per channel and symbol (or finer): for the rest of the connection.
    PerSubscription,
}

/// Which pair a frame was counted under: a tracked pair, or none (a frame of no subscription,
/// or a pair beyond the table's bound).
type PairKey = Option<usize>;

#[derive(Debug, Default)]
pub struct SeqTracker {
    highest: Option<i64>,
    /// (channel, symbol or "") → last seq (none yet for a reserved pair), at most
    /// `MAX_TRACKED` entries beside the reserved ones. A stream has a handful of
    /// subscriptions: a scan costs less than hashing.
    last: Vec<(String, String, Option<i64>)>,
    counting: Counting,
    /// The pair of the previous frame with a `seq`, and how many frames in a row, each of
    /// another pair than the one before, carried the connection's next number.
    previous: Option<PairKey>,
    consecutive: u8,
    /// Whether the highest `seq` came from a push (not a frame of no subscription): a push
    /// behind it yet in order on its own pair then shows per-channel counting, while one
    /// behind a stray frame's number only shows that number was out of line.
    highest_from_push: bool,
}

impl SeqTracker {
    pub fn reset(&mut self) {
        *self = SeqTracker::default();
    }

    /// Keep a place for `channel` and `symbol` (one of the stream's own subscriptions),
    /// whatever other pairs the venue pushes first. Call after `reset`.
    pub fn reserve(&mut self, channel: &str, symbol: &str) {
        if !self.last.iter().any(|(c, s, _)| c == channel && s == symbol) {
            self.last.push((channel.to_owned(), symbol.to_owned(), None));
        }
    }

    /// A `seq` that belongs to no subscription (the auth answer, a frame passed on as
    /// `unrecognized`) still counts on the connection, and under connection-wide counting
    /// is checked too.
    pub fn observe(&mut self, seq: i64) -> SeqCheck {
        self.frame(None, seq)
    }

    pub fn check(&mut self, channel: &str, symbol: &str, seq: i64) -> SeqCheck {
        self.frame(Some((channel, symbol)), seq)
    }

    fn frame(&mut self, pair: Option<(&str, &str)>, seq: i64) -> SeqCheck {
        let slot =
            pair.and_then(|(channel, symbol)| self.last.iter().position(|(c, s, _)| c == channel && s == symbol));
        let last = slot.and_then(|i| self.last[i].2);
        // In order on its own pair, behind the connection: never under connection-wide counting.
        // So is a frame of no subscription behind it (a channel the library does not know,
        // numbered by a counter of its own): taken as evidence, never as an alarm.
        let behind_in_order = |highest: i64| seq <= highest && last.is_none_or(|last| seq > last);
        let evidence_counts = match self.counting {
            Counting::Unknown => true,
            Counting::ConnectionWide => self.highest_from_push || pair.is_none(),
            Counting::PerSubscription => false,
        };
        if let Some(highest) = self.highest
            && evidence_counts
            && behind_in_order(highest)
        {
            self.counting = Counting::PerSubscription;
        }
        let outcome = match (self.counting, self.highest) {
            (Counting::ConnectionWide, Some(highest)) if seq <= highest => {
                SeqCheck::Regression { last: highest, received: seq, scope: Scope::Connection }
            }
            (Counting::ConnectionWide, Some(highest)) if seq > highest.saturating_add(1) => {
                SeqCheck::Gap { expected: highest + 1, received: seq, scope: Scope::Connection }
            }
            (Counting::ConnectionWide, _) => SeqCheck::InOrder,
            (_, highest) => match (last, highest) {
                (Some(last), _) if seq <= last => {
                    SeqCheck::Regression { last, received: seq, scope: Scope::Subscription }
                }
                (Some(last), Some(highest)) if seq > highest.saturating_add(1) && seq > last.saturating_add(1) => {
                    SeqCheck::Gap { expected: highest + 1, received: seq, scope: Scope::Subscription }
                }
                _ => SeqCheck::InOrder,
            },
        };
        let key = self.remember(slot, pair, seq);
        self.learn(key, seq);
        let restarted = self.counting == Counting::ConnectionWide && matches!(outcome, SeqCheck::Regression { .. });
        if restarted || self.highest.is_none_or(|highest| seq > highest) {
            // A connection-wide count that went back started again: go on from its new
            // number. Never lowered otherwise: under per-channel counting lowering it would
            // raise false gaps on the other channels.
            self.highest = Some(seq);
            self.highest_from_push = pair.is_some();
        }
        outcome
    }

    /// The pair's last `seq` kept (added while the table has room); the key it is counted under.
    fn remember(&mut self, slot: Option<usize>, pair: Option<(&str, &str)>, seq: i64) -> PairKey {
        match (slot, pair) {
            (Some(i), _) => {
                self.last[i].2 = Some(seq);
                Some(i)
            }
            (None, Some((channel, symbol))) if self.last.len() < MAX_TRACKED && symbol.len() <= MAX_SYMBOL_BYTES => {
                self.last.push((channel.to_owned(), symbol.to_owned(), Some(seq)));
                Some(self.last.len() - 1)
            }
            // Beyond the bound, or of no subscription: counted on the connection only.
            _ => None,
        }
    }

    /// Connection-wide counting shows as frames of changing pairs carrying consecutive numbers.
    fn learn(&mut self, key: PairKey, seq: i64) {
        if self.counting == Counting::Unknown {
            let next = self.highest.is_some_and(|highest| highest.checked_add(1) == Some(seq));
            let other_pair = self.previous.is_some_and(|previous| previous != key);
            self.consecutive = if next && other_pair {
                self.consecutive + 1
            } else if next {
                self.consecutive
            } else {
                0
            };
            if self.consecutive >= CONNECTION_WIDE_AFTER {
                self.counting = Counting::ConnectionWide;
            }
        }
        self.previous = Some(key);
    }

    /// `check` a push's `seq` (if it has one) and queue the `gap` or `seq_regression` status
    /// event it gives, naming the push's subscription.
    pub fn report(&mut self, channel: &'static str, symbol: Option<&str>, seq: Option<i64>, queue: &Queue) {
        let Some(seq) = seq else { return };
        let outcome = self.check(channel, symbol.unwrap_or(""), seq);
        queue_event(outcome, json!({ "channel": channel, "symbol": symbol }), queue);
    }

    /// `observe` a frame of no subscription and queue what it shows (connection-wide counting
    /// only), its `subscription` null.
    pub fn report_unsubscribed(&mut self, seq: i64, queue: &Queue) {
        let outcome = self.observe(seq);
        queue_event(outcome, Value::Null, queue);
    }
}

fn queue_event(outcome: SeqCheck, subscription: Value, queue: &Queue) {
    let (state, fields) = match outcome {
        SeqCheck::InOrder => return,
        SeqCheck::Gap { expected, received, scope } => (
            "gap",
            json!({ "subscription": subscription, "scope": scope.as_str(), "expected": expected, "received": received }),
        ),
        SeqCheck::Regression { last, received, scope } => (
            "seq_regression",
            json!({ "subscription": subscription, "scope": scope.as_str(), "last": last, "received": received }),
        ),
    };
    queue.push(Kind::Notice, events::status(state, fields));
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONN: Scope = Scope::Connection;
    const SUB: Scope = Scope::Subscription;

    /// A connection-wide venue's first frames: auth 1, then pushes of changing pairs.
    fn learnt_connection_wide() -> SeqTracker {
        let mut t = SeqTracker::default();
        assert_eq!(t.observe(1), SeqCheck::InOrder); // auth
        assert_eq!(t.check("price", "BTC-USD", 2), SeqCheck::InOrder);
        assert_eq!(t.check("depth_book", "BTC-USD", 3), SeqCheck::InOrder);
        assert_eq!(t.check("price", "BTC-USD", 4), SeqCheck::InOrder);
        assert_eq!(t.counting, Counting::ConnectionWide);
        t
    }

    #[test]
    fn connection_wide_counting_reports_every_skip() {
        let mut t = learnt_connection_wide();
        assert_eq!(t.check("depth_book", "BTC-USD", 7), SeqCheck::Gap { expected: 5, received: 7, scope: CONN });
        assert_eq!(t.check("price", "BTC-USD", 8), SeqCheck::InOrder);
        assert_eq!(t.check("price", "BTC-USD", 8), SeqCheck::Regression { last: 8, received: 8, scope: CONN });
    }

    #[test]
    fn once_counting_is_connection_wide_no_loss_hides_behind_a_first_push_or_an_unknown_frame() {
        // The loss is followed by the first push of a new pair (an account fill of a new
        // symbol), by a frame of no subscription, or by a pair beyond the table's bound.
        let mut t = learnt_connection_wide();
        assert_eq!(t.check("trade", "ETH-USD", 6), SeqCheck::Gap { expected: 5, received: 6, scope: CONN });
        assert_eq!(t.observe(8), SeqCheck::Gap { expected: 7, received: 8, scope: CONN });
        assert_eq!(t.check("price", "BTC-USD", 9), SeqCheck::InOrder);
        t.last.resize(MAX_TRACKED, ("x".into(), "y".into(), Some(0)));
        assert_eq!(t.check("price", "NEW-USD", 11), SeqCheck::Gap { expected: 10, received: 11, scope: CONN });
    }

    #[test]
    fn a_connection_wide_venue_that_counts_again_is_followed_from_its_new_number() {
        let mut t = learnt_connection_wide();
        // One huge number, or the venue's counter restarting: one regression, then the count
        // goes on from the new number and a later skip is still seen.
        assert_eq!(t.check("price", "BTC-USD", 5), SeqCheck::InOrder);
        assert_eq!(t.check("depth_book", "BTC-USD", 1), SeqCheck::Regression { last: 5, received: 1, scope: CONN });
        assert_eq!(t.check("price", "BTC-USD", 2), SeqCheck::InOrder);
        assert_eq!(t.check("depth_book", "BTC-USD", 50), SeqCheck::Gap { expected: 3, received: 50, scope: CONN });
        assert_eq!(
            t.observe(1_767_225_600_000),
            SeqCheck::Gap { expected: 51, received: 1_767_225_600_000, scope: CONN }
        );
        assert_eq!(
            t.check("price", "BTC-USD", 52),
            SeqCheck::Regression { last: 1_767_225_600_000, received: 52, scope: CONN }
        );
        assert_eq!(t.check("price", "BTC-USD", 54), SeqCheck::Gap { expected: 53, received: 54, scope: CONN });
    }

    #[test]
    fn counting_is_taken_as_connection_wide_only_on_consecutive_numbers_across_pairs() {
        // One pair counting 1, 2, 3…: consistent with either counting, so nothing is learnt.
        let mut t = SeqTracker::default();
        for n in 1..10 {
            assert_eq!(t.check("depth_book", "BTC-USD", n), SeqCheck::InOrder);
        }
        assert_eq!(t.counting, Counting::Unknown);
        // A skip between pairs restarts the count of evidence.
        let mut t = SeqTracker::default();
        t.check("price", "BTC-USD", 1);
        t.check("depth_book", "BTC-USD", 2);
        t.check("price", "BTC-USD", 4);
        t.check("depth_book", "BTC-USD", 5);
        assert_eq!(t.counting, Counting::Unknown);
        t.check("price", "BTC-USD", 6);
        t.check("depth_book", "BTC-USD", 7);
        assert_eq!(t.counting, Counting::ConnectionWide);
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
        assert_eq!(t.counting, Counting::PerSubscription);
        assert_eq!(t.check("price", "BTC-USD", 3), SeqCheck::Regression { last: 56, received: 3, scope: SUB });
        // The leading channel's skip is still seen.
        assert_eq!(t.check("order", "", 1052), SeqCheck::Gap { expected: 1050, received: 1052, scope: SUB });
    }

    #[test]
    fn per_channel_counting_that_looked_connection_wide_for_a_moment_is_recognised() {
        // Two channels whose counters happen to interleave: 1, 2, 3, 4 across pairs, then a
        // push in order on its own channel but behind the connection: per-channel counting
        // after all, taken so at once and not reported.
        let mut t = SeqTracker::default();
        t.check("price", "BTC-USD", 1);
        t.check("depth_book", "BTC-USD", 2);
        t.check("price", "BTC-USD", 3);
        t.check("depth_book", "BTC-USD", 4);
        assert_eq!(t.counting, Counting::ConnectionWide);
        assert_eq!(t.check("price", "BTC-USD", 4), SeqCheck::InOrder);
        assert_eq!(t.counting, Counting::PerSubscription);
        for n in 5..40 {
            assert_eq!(t.check("price", "BTC-USD", n), SeqCheck::InOrder);
            assert_eq!(t.check("depth_book", "BTC-USD", n), SeqCheck::InOrder);
        }
    }

    #[test]
    fn a_frame_of_no_subscription_behind_the_count_shows_per_channel_counting_without_an_alarm() {
        // A per-channel venue seen on one channel of two symbols looks connection-wide; a
        // frame of a channel the library does not know, numbered by its own counter, is then
        // behind the count: per-channel after all, and no alarm.
        let mut t = SeqTracker::default();
        for (symbol, seq) in [("BTC-USD", 1), ("ETH-USD", 2), ("BTC-USD", 3), ("ETH-USD", 4)] {
            assert_eq!(t.check("depth_book", symbol, seq), SeqCheck::InOrder);
        }
        assert_eq!(t.counting, Counting::ConnectionWide);
        assert_eq!(t.observe(1), SeqCheck::InOrder);
        assert_eq!(t.counting, Counting::PerSubscription);
        assert_eq!(t.check("depth_book", "BTC-USD", 5), SeqCheck::InOrder);
        // A push far ahead of the count, then pushes in order on their own pairs behind it:
        // per-channel counting too (one alarm, the gap, then none).
        let mut t = learnt_connection_wide();
        assert_eq!(t.check("trade", "BTC-USD", 500), SeqCheck::Gap { expected: 5, received: 500, scope: CONN });
        assert_eq!(t.check("price", "BTC-USD", 5), SeqCheck::InOrder);
        assert_eq!(t.check("trade", "BTC-USD", 501), SeqCheck::InOrder);
        assert_eq!(t.check("depth_book", "BTC-USD", 6), SeqCheck::InOrder);
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
        assert!(matches!(t.check("price", "BTC-USD", 1), SeqCheck::Regression { last: 1, received: 1, .. }));
    }

    #[test]
    fn the_streams_own_subscriptions_keep_their_places_in_a_full_table() {
        let mut t = SeqTracker::default();
        t.reserve("depth_book", "ETH-USD");
        for n in 0..(MAX_TRACKED as i64 + 10) {
            assert_eq!(t.check("price", &format!("S{n}"), 1), SeqCheck::InOrder);
        }
        // Not pushed before the table filled, yet checked: a regression is reported.
        assert_eq!(t.check("depth_book", "ETH-USD", 5), SeqCheck::InOrder);
        assert!(matches!(t.check("depth_book", "ETH-USD", 4), SeqCheck::Regression { last: 5, received: 4, .. }));
        // Unreserved, the same pair is counted on the connection only.
        let mut t = SeqTracker::default();
        for n in 0..(MAX_TRACKED as i64 + 10) {
            assert_eq!(t.check("price", &format!("S{n}"), 1), SeqCheck::InOrder);
        }
        assert_eq!(t.check("depth_book", "ETH-USD", 5), SeqCheck::InOrder);
        assert_eq!(t.check("depth_book", "ETH-USD", 4), SeqCheck::InOrder);
    }

    #[test]
    fn reset_forgets_the_previous_connection() {
        let mut t = learnt_connection_wide();
        assert_eq!(t.check("price", "X", 500), SeqCheck::Gap { expected: 5, received: 500, scope: CONN });
        t.reset();
        assert_eq!(t.counting, Counting::Unknown);
        assert_eq!(t.check("price", "X", 1), SeqCheck::InOrder);
    }
}
