//! `ws-stream/v1`: the `subscribe`, `unsubscribe` and `auth` requests, and every push in the
//! envelope `{"seq","channel","symbol"?,"data"}` (venue-api.md §2.2):
//! - `price` and `depth_book` per symbol: a snapshot when subscribed, then one each
//!   `price_interval_ms` / `depth_book_interval_ms`; the book's ten levels a side are in a
//!   shuffled order, never the sorted one, as the venue documents;
//! - `public_trade` per symbol: every user fill on the symbol;
//! - after a successful `auth`: `order`, `position`, `balance`, `trade` of that account, on
//!   every change the engine records (`account` gives their shapes).
//!
//! `seq` counts per channel on each connection (or per connection, `SeqScope`). A request
//! the venue would not understand gets `{"seq","channel":"error","data":{"code","msg"}}`;
//! a subscription is not acknowledged (the venue does not).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::conn::Io;
use super::{Login, Out, SeqScope, WsSubscription, WsTimers, account};
use crate::market::{LEVELS, unsorted};
use crate::rng::Rng;
use crate::state::Shared;

const PUBLIC: &[&str] = &["price", "depth_book", "public_trade"];
const ACCOUNT: &[&str] = &["order", "position", "balance", "trade"];

pub(crate) struct StreamSession {
    seqs: HashMap<&'static str, u64>,
    /// The `price` and `depth_book` subscriptions and when each was last pushed.
    market: Vec<Periodic>,
    /// Shuffles the book levels (its own generator: pushes leave the market's seeded
    /// sequence alone).
    rng: Rng,
    scope: SeqScope,
    auth_code: i64,
}

struct Periodic {
    channel: &'static str,
    symbol: String,
    /// `None` until the snapshot is sent.
    last: Option<Instant>,
}

impl StreamSession {
    pub(crate) fn new(shared: &Shared, id: u64) -> StreamSession {
        StreamSession {
            seqs: HashMap::new(),
            market: Vec::new(),
            rng: Rng::for_stream(shared.config.seed ^ id, "ws-stream"),
            scope: shared.config.ws_seq_scope,
            auth_code: shared.config.ws_auth_code,
        }
    }

    /// One frame in the envelope, with the channel's next `seq`.
    fn push(&mut self, io: &mut Io<'_>, channel: &'static str, symbol: Option<&str>, data: &Value) {
        let key = match self.scope {
            SeqScope::Channel => channel,
            SeqScope::Connection => "",
        };
        let seq = self.seqs.entry(key).or_insert(0);
        *seq += 1;
        // Written by hand to keep the documented key order (seq, channel, symbol, data).
        let symbol = symbol.map(|s| format!(",\"symbol\":{}", json!(s))).unwrap_or_default();
        io.send(format!("{{\"seq\":{seq},\"channel\":\"{channel}\"{symbol},\"data\":{data}}}"));
    }

    fn error(&mut self, io: &mut Io<'_>, code: u16, msg: impl Into<String>) {
        self.push(io, "error", None, &json!({"code": code, "msg": msg.into()}));
    }

    pub(crate) fn on_text(&mut self, io: &mut Io<'_>, text: &str) {
        let request: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => return self.error(io, 400, format!("invalid JSON: {e}")),
        };
        let only = request.as_object().filter(|o| o.len() == 1).and_then(|o| o.iter().next());
        match only {
            Some((verb, body)) if verb == "subscribe" => self.subscribe(io, body, true),
            Some((verb, body)) if verb == "unsubscribe" => self.subscribe(io, body, false),
            Some((verb, body)) if verb == "auth" => self.auth(io, body),
            _ => self.error(
                io,
                400,
                r#"unknown request: send {"subscribe":{"channel","symbol"}}, {"unsubscribe":{…}} or {"auth":{"token","streams"}}"#,
            ),
        }
    }

    pub(crate) fn on_binary(&mut self, io: &mut Io<'_>) {
        self.error(io, 400, "binary frames are not supported: send JSON text frames");
    }

    fn subscribe(&mut self, io: &mut Io<'_>, body: &Value, on: bool) {
        let verb = if on { "subscribe" } else { "unsubscribe" };
        let Some(o) = body.as_object() else {
            return self.error(io, 400, format!("{verb} takes an object {{\"channel\",\"symbol\"}}"));
        };
        let Some(channel) = o.get("channel").and_then(Value::as_str) else {
            return self.error(io, 400, format!("{verb}.channel is required (a string)"));
        };
        let symbol = match o.get("symbol") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(_) => return self.error(io, 400, format!("{verb}.symbol must be a string")),
        };
        let subscription = if let Some(&public) = PUBLIC.iter().find(|c| **c == channel) {
            let Some(symbol) = symbol else {
                return self.error(io, 400, format!("channel {channel} needs a symbol"));
            };
            let known = io.shared.engine().symbol_index(symbol);
            if let Err(r) = known {
                return self.error(io, 400, r.message);
            }
            self.market.retain(|p| !(p.channel == public && p.symbol == symbol));
            if on && public != "public_trade" {
                self.market.push(Periodic { channel: public, symbol: symbol.to_owned(), last: None });
            }
            WsSubscription { channel: public.to_owned(), symbol: Some(symbol.to_owned()) }
        } else if let Some(&private) = ACCOUNT.iter().find(|c| **c == channel) {
            if on && io.conn.info().login.is_none() {
                return self.error(
                    io,
                    401,
                    format!("channel {channel} needs an authenticated connection: send auth first"),
                );
            }
            WsSubscription { channel: private.to_owned(), symbol: None }
        } else {
            let all = [PUBLIC, ACCOUNT].concat().join(", ");
            return self.error(io, 400, format!("unknown channel {channel}; the channels are {all}"));
        };
        let mut info = io.conn.info();
        if on {
            info.subscriptions.insert(subscription);
        } else {
            info.subscriptions.remove(&subscription);
        }
    }

    /// `{"auth":{"token","streams"?}}`: answered on the `auth` channel, code `ws_auth_code`
    /// (200 or 0) and `msg` "success", or 400/401 with the reason; then the `streams` are
    /// subscribed as if sent one by one (public ones with their symbol too).
    fn auth(&mut self, io: &mut Io<'_>, body: &Value) {
        let Some(token) = body.get("token").and_then(Value::as_str) else {
            return self.auth_answer(io, 400, "auth.token is required (a string)");
        };
        let session = match io.shared.session(token) {
            Ok(s) => s,
            Err(why) => return self.auth_answer(io, 401, why),
        };
        io.conn.info().login = Some(Login { account: session.account, user: session.user });
        self.auth_answer(io, self.auth_code, "success");
        match body.get("streams") {
            None | Some(Value::Null) => {}
            Some(Value::Array(streams)) => streams.iter().for_each(|s| self.subscribe(io, s, true)),
            Some(_) => self.error(io, 400, "auth.streams must be an array of {\"channel\",\"symbol\"?}"),
        }
    }

    fn auth_answer(&mut self, io: &mut Io<'_>, code: i64, msg: &str) {
        self.push(io, "auth", None, &json!({"code": code, "msg": msg}));
    }

    /// The market pushes that are due; when the next one is.
    pub(crate) fn on_tick(&mut self, io: &mut Io<'_>, now: Instant, timers: &WsTimers) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        for i in 0..self.market.len() {
            let every = match self.market[i].channel {
                "price" => timers.price_interval_ms,
                _ => timers.depth_book_interval_ms,
            };
            let due = match self.market[i].last {
                None => Some(now),
                Some(_) if every == 0 => None,
                Some(last) => Some(last + Duration::from_millis(every)),
            };
            let Some(due) = due else { continue };
            if due <= now {
                self.push_market(io, i);
                self.market[i].last = Some(now);
                if every > 0 {
                    next = next.into_iter().chain([now + Duration::from_millis(every)]).min();
                }
            } else {
                next = next.into_iter().chain([due]).min();
            }
        }
        next
    }

    fn push_market(&mut self, io: &mut Io<'_>, i: usize) {
        let (channel, symbol) = (self.market[i].channel, self.market[i].symbol.clone());
        let data = if channel == "price" {
            let price = io.shared.engine().symbol_price(&symbol, io.shared.clock.now_us());
            match price {
                Ok(p) => price_data(&p),
                Err(_) => return,
            }
        } else {
            let engine = io.shared.engine();
            let Ok((asks, bids, index)) = engine.depth_sorted(&symbol, LEVELS) else { return };
            let s = engine.symbol(index);
            json!({"asks": unsorted(&mut self.rng, &asks, s), "bids": unsorted(&mut self.rng, &bids, s), "symbol": symbol})
        };
        self.push(io, channel, Some(&symbol), &data);
    }

    pub(crate) fn on_out(&mut self, io: &mut Io<'_>, out: Out) {
        match out {
            Out::Account(e) => {
                let user = io.conn.info().login.as_ref().map(|l| l.user.clone()).unwrap_or_default();
                let data = account::push_data(&e, &user, io.shared.ws.started_us, io.shared.clock.now_us());
                self.push(io, e.channel.as_str(), None, &data);
            }
            Out::PublicTrade(e) => self.push(io, "public_trade", e.symbol.as_deref(), &account::public_trade(&e)),
            Out::Frame(text) => io.send(text),
        }
    }
}

/// The `price` push from the REST `query_symbol_price` answer: `spread` as `[bid, ask]` and
/// the time with nanoseconds, as the docs show them.
fn price_data(p: &Value) -> Value {
    let time = p["time"].as_str().map(|t| t.strip_suffix('Z').map_or_else(|| t.to_owned(), |t| format!("{t}000Z")));
    json!({
        "base": p["base"], "index_price": p["index_price"], "last_price": p["last_price"],
        "mark_price": p["mark_price"], "mid_price": p["mid_price"], "quote": p["quote"],
        "spread": [p["spread_bid"], p["spread_ask"]], "symbol": p["symbol"], "time": time,
    })
}
