//! Every state change of the trading core, recorded in one place.
//!
//! Each change (an order created, filled, cancelled or rejected; a trade; a position or the
//! balance moved) becomes an `Event` with a global sequence number, kept in a bounded
//! journal and sent to every subscriber. The engine's methods also return the events they
//! caused, so a request handler (REST today, the WebSocket order entry later) can answer
//! with them, and an account stream can push them, without asking the engine again.
//!
//! `data` is the REST shape of the object (the order object of `query_order`, a row of
//! `query_trades`, an element of `query_positions`, the `query_balance` snapshot); a push
//! channel whose documented shape differs (the venue's wallet-level `balance` push) maps it.
//!
//! Besides the subscribers (a channel each), the journal has one synchronous sink: the
//! WebSocket hub, called inside `record`, so that by the time an engine call returns its
//! events are queued on every account stream (the ws-api's "account event before the ack"
//! mode relies on that order).

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, Sender, channel};

use serde_json::Value;

/// How many events the journal keeps for late readers.
const KEEP: usize = 10_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Channel {
    Order,
    Trade,
    Position,
    Balance,
}

impl Channel {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Channel::Order => "order",
            Channel::Trade => "trade",
            Channel::Position => "position",
            Channel::Balance => "balance",
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Event {
    pub seq: u64,
    pub account: String,
    pub channel: Channel,
    pub symbol: Option<String>,
    pub data: Value,
    /// A trade event of a resting order (the user was the maker); false otherwise. The
    /// public trade print says which side took liquidity.
    pub maker: bool,
}

/// Called with every event as it is recorded (under the engine's lock: it must not block).
pub(crate) type Sink = Box<dyn Fn(&Event) + Send>;

#[derive(Default)]
pub(crate) struct Journal {
    next_seq: u64,
    recent: VecDeque<Event>,
    subscribers: Vec<Sender<Event>>,
    sink: Option<Sink>,
}

impl Journal {
    pub(crate) fn record(&mut self, account: &str, channel: Channel, symbol: Option<&str>, data: Value) -> Event {
        self.record_event(account, channel, symbol, data, false)
    }

    /// A trade; `maker` when the order was resting.
    pub(crate) fn record_fill(&mut self, account: &str, symbol: &str, data: Value, maker: bool) -> Event {
        self.record_event(account, Channel::Trade, Some(symbol), data, maker)
    }

    fn record_event(
        &mut self,
        account: &str,
        channel: Channel,
        symbol: Option<&str>,
        data: Value,
        maker: bool,
    ) -> Event {
        self.next_seq += 1;
        let event = Event {
            seq: self.next_seq,
            account: account.to_owned(),
            channel,
            symbol: symbol.map(str::to_owned),
            data,
            maker,
        };
        if self.recent.len() == KEEP {
            self.recent.pop_front();
        }
        self.recent.push_back(event.clone());
        if let Some(sink) = &self.sink {
            sink(&event);
        }
        // A subscriber that went away is forgotten.
        self.subscribers.retain(|s| s.send(event.clone()).is_ok());
        event
    }

    /// Installs the synchronous sink (the WebSocket hub), replacing any previous one.
    pub(crate) fn set_sink(&mut self, sink: Sink) {
        self.sink = Some(sink);
    }

    /// Every event recorded from now on, in order.
    #[allow(dead_code)] // the account stream (issue 14) subscribes
    pub(crate) fn subscribe(&mut self) -> Receiver<Event> {
        let (tx, rx) = channel();
        self.subscribers.push(tx);
        rx
    }

    /// The kept events with a sequence number above `seq`.
    pub(crate) fn since(&self, seq: u64) -> Vec<Event> {
        self.recent.iter().filter(|e| e.seq > seq).cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn recorded_kept_and_pushed() {
        let mut j = Journal::default();
        let rx = j.subscribe();
        let first = j.record("a", Channel::Order, Some("BTC-USD"), json!({"id": 1}));
        j.record("a", Channel::Balance, None, json!({}));
        assert_eq!(first.seq, 1);
        assert_eq!(rx.try_iter().map(|e| e.channel).collect::<Vec<_>>(), [Channel::Order, Channel::Balance]);
        assert_eq!(j.since(1).len(), 1);
        drop(rx);
        j.record("a", Channel::Trade, None, json!({}));
        assert!(j.subscribers.is_empty());
    }
}
