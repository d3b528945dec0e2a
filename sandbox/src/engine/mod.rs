//! The trading core: symbols, their synthetic markets, accounts and orders, with no HTTP in
//! it. Every method that changes state returns the `Event`s it caused (also recorded in the
//! journal), so the REST handlers and, later, the WebSocket order entry and account stream
//! drive the same engine.
//!
//! User orders trade with the synthetic market only, never with each other: a taker order
//! walks the book levels (`matching`), a resting order fills when the mark reaches its price.

mod account;
pub(crate) mod events;
mod funding;
pub(crate) mod kline;
mod margin;
mod market_stats;
mod matching;
pub(crate) mod order;
mod query;
#[cfg(test)]
mod tests;

use std::collections::{BTreeSet, HashMap};

use serde_json::{Value, json};

pub(crate) use account::PositionConfig;
use account::{Account, trade_json};
use events::{Channel, Event, Journal};
pub(crate) use funding::FundingFilter;
use order::{MarginMode, NewOrder, Order, OrderType, Side, Status, Tif};
pub(crate) use query::{OrderFilter, TradeFilter};

use crate::clock::iso8601_utc_us;
use crate::decimal::Dec;
use crate::market::Market;
use crate::symbols::Symbol;

/// Venue order ids exceed 2^32 (venue-api.md §1.1); so do the sandbox's, from the first.
const FIRST_ORDER_ID: u64 = 10_000_000_001;
const FIRST_TRADE_ID: u64 = 20_000_000_001;
const FIRST_POSITION_ID: u64 = 5_000_000_001;

/// A refusal: HTTP status and the venue's message.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Reject {
    pub status: u16,
    pub message: String,
}

pub(crate) fn reject<T>(status: u16, message: impl Into<String>) -> Result<T, Reject> {
    Err(Reject { status, message: message.into() })
}

/// The account a request acts for: its key in the engine and its `user` text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Who<'a> {
    pub account: &'a str,
    pub user: &'a str,
}

/// An order named by the venue's id or by the client's id.
#[derive(Clone, Debug)]
pub(crate) enum OrderRef {
    Id(u64),
    ClOrdId(String),
}

/// What `place` did: the order's id and final state, and every event.
#[derive(Debug)]
pub(crate) struct Placed {
    pub order_id: u64,
    pub status: &'static str,
    /// Why the order ended as it did (`alo order rejected`), empty when nothing to say.
    pub remark: String,
    pub events: Vec<Event>,
}

/// Resting user orders of one symbol, by price, for the mark-crossing check.
#[derive(Default)]
struct Resting {
    buys: BTreeSet<(Dec, u64)>,
    sells: BTreeSet<(Dec, u64)>,
}

pub(crate) struct Engine {
    symbols: Vec<Symbol>,
    markets: Vec<Market>,
    resting: Vec<Resting>,
    accounts: HashMap<String, Account>,
    orders: HashMap<u64, Order>,
    next_order_id: u64,
    next_trade_id: u64,
    next_position_id: u64,
    next_funding_id: u64,
    starting_balance: Dec,
    /// Enforce max_open_orders, max_position_size and available margin (off by default).
    account_limits: bool,
    journal: Journal,
    listed_at: String,
}

impl Engine {
    pub(crate) fn new(
        symbols: Vec<Symbol>,
        seed: u64,
        starting_balance: Dec,
        account_limits: bool,
        now_us: i64,
    ) -> Engine {
        let markets = symbols.iter().map(|s| Market::new(s, seed)).collect();
        let resting = symbols.iter().map(|_| Resting::default()).collect();
        Engine {
            symbols,
            markets,
            resting,
            accounts: HashMap::new(),
            orders: HashMap::new(),
            next_order_id: FIRST_ORDER_ID,
            next_trade_id: FIRST_TRADE_ID,
            next_position_id: FIRST_POSITION_ID,
            next_funding_id: funding::FIRST_FUNDING_ID,
            starting_balance,
            account_limits,
            journal: Journal::default(),
            listed_at: iso8601_utc_us(now_us),
        }
    }

    /// The index of a listed symbol, or the venue's refusal for an unknown one.
    pub(crate) fn symbol_index(&self, name: &str) -> Result<usize, Reject> {
        match self.symbols.iter().position(|s| s.name == name) {
            Some(i) => Ok(i),
            None => reject(400, format!("invalid symbol {name}")),
        }
    }

    /// The event journal (the WebSocket hub is its sink).
    pub(crate) fn journal(&mut self) -> &mut Journal {
        &mut self.journal
    }

    fn account(&mut self, who: Who<'_>) -> &mut Account {
        let balance = self.starting_balance;
        self.accounts.entry(who.account.to_owned()).or_insert_with(|| Account::new(who.user.to_owned(), balance))
    }

    fn record(&mut self, account: &str, channel: Channel, symbol: Option<usize>, data: Value) -> Event {
        let name = symbol.map(|i| self.symbols[i].name.clone());
        self.journal.record(account, channel, name.as_deref(), data)
    }

    fn order_event(&mut self, id: u64) -> Event {
        let o = &self.orders[&id];
        let (account, symbol, data) = (o.account.clone(), o.symbol, o.to_json(&self.symbols[o.symbol]));
        self.record(&account, Channel::Order, Some(symbol), data)
    }

    /// Places an order: checks it against the symbol's rules and the account, then matches
    /// it (see `matching`). A refused order leaves no trace; an `alo` order that would cross
    /// is accepted and ends `rejected` (the venue rejects it during matching).
    pub(crate) fn place(&mut self, who: Who<'_>, req: NewOrder, now_us: i64) -> Result<Placed, Reject> {
        let index = self.symbol_index(&req.symbol)?;
        let symbol = &self.symbols[index];
        if !symbol.enabled {
            return reject(400, format!("symbol {} is disabled", symbol.name));
        }
        if let Some(price) = req.price
            && !price.is_multiple_of(symbol.tick)
        {
            return reject(400, format!("price {price} does not follow price tick {}", symbol.tick));
        }
        check_qty(symbol, req.qty)?;
        let (symbol_name, max_open, max_position) = (symbol.name.clone(), symbol.max_open_orders, symbol.max_position);
        let def_leverage = symbol.def_leverage;
        let config = self.account(who).config(index, def_leverage);
        if let Some(leverage) = req.leverage
            && leverage != config.leverage
        {
            return reject(
                400,
                format!("leverage {leverage} does not match the position's leverage {}", config.leverage),
            );
        }
        if let Some(mode) = req.margin_mode
            && mode != config.margin_mode
        {
            return reject(
                400,
                format!(
                    "margin_mode {} does not match the position's margin mode {}",
                    mode.as_str(),
                    config.margin_mode.as_str()
                ),
            );
        }
        let position = self.account(who).position_qty(index);
        if req.reduce_only {
            self.check_reduce_only(who, index, &req, position)?;
        }
        if self.account_limits {
            let open = self.live_orders(who.account, Some(index)).count();
            if open >= max_open {
                return reject(400, format!("max open orders {max_open} reached for {symbol_name}"));
            }
            if (position + req.side.sign().mul(req.qty)).abs() > max_position {
                return reject(400, format!("position would exceed max_position_size {max_position} of {symbol_name}"));
            }
            let price = req.price.unwrap_or(self.markets[index].mark);
            let needed = price.mul(req.qty).div(Dec::from_int(i64::from(config.leverage)));
            let available = self.available(who);
            if needed > available {
                return reject(400, format!("insufficient margin: {needed} needed, {available} available"));
            }
        }

        let id = self.next_order_id;
        self.next_order_id += 1;
        let position_id = self.accounts[who.account].positions.get(&index).map_or(0, |p| p.id);
        let order = Order {
            id,
            account: who.account.to_owned(),
            user: who.user.to_owned(),
            cl_ord_id: req.cl_ord_id.clone().unwrap_or_else(ulid),
            symbol: index,
            side: req.side,
            order_type: req.order_type,
            // A market order sent without time_in_force behaves as ioc, and says so.
            tif: req.tif.unwrap_or(Tif::Ioc),
            price: if req.order_type == OrderType::Limit { req.price } else { None },
            qty: req.qty,
            fill_qty: Dec::ZERO,
            fill_value: Dec::ZERO,
            status: Status::Open,
            reduce_only: req.reduce_only,
            leverage: config.leverage,
            position_id,
            remark: String::new(),
            created_us: now_us,
            updated_us: now_us,
        };
        let account = self.account(who);
        account.orders.push(id);
        account.by_cl_ord_id.entry(order.cl_ord_id.clone()).or_default().push(id);
        account.locked += order.locked();
        self.orders.insert(id, order);
        let mut events = vec![self.order_event(id)];
        events.extend(self.execute(id, now_us));
        let o = &self.orders[&id];
        Ok(Placed { order_id: id, status: o.status.as_str(), remark: o.remark.clone(), events })
    }

    /// reduce_only: the order must close part of the position, and its qty must fit the
    /// position less the other pending reduce-only orders on that side (venue docs).
    fn check_reduce_only(&self, who: Who<'_>, index: usize, req: &NewOrder, position: Dec) -> Result<(), Reject> {
        let reduces = match req.side {
            Side::Buy => position.is_negative(),
            Side::Sell => position.is_positive(),
        };
        if !reduces {
            return reject(400, "reduce_only order would not reduce the position");
        }
        let pending: Dec = self
            .live_orders(who.account, Some(index))
            .filter(|o| o.reduce_only && o.side == req.side)
            .map(Order::remaining)
            .sum();
        let room = position.abs() - pending;
        if req.qty > room {
            return reject(400, format!("reduce_only qty {} exceeds the reducible {}", req.qty, room.max_zero()));
        }
        Ok(())
    }

    fn live_orders<'a>(&'a self, account: &'a str, symbol: Option<usize>) -> impl Iterator<Item = &'a Order> + 'a {
        let ids = self.accounts.get(account).map(|a| a.orders.as_slice()).unwrap_or_default();
        ids.iter()
            .filter_map(|id| self.orders.get(id))
            .filter(move |o| o.status.is_live() && symbol.is_none_or(|s| o.symbol == s))
    }

    /// Margin the account can still commit: cross balance − cross margin − locked + cross upnl.
    fn available(&self, who: Who<'_>) -> Dec {
        let balance = self.balance_json(who);
        balance["cross_available"].as_str().and_then(|t| Dec::parse(t).ok()).unwrap_or(Dec::ZERO)
    }

    /// Cancels one live order of the account; a gone or unknown one is HTTP 404.
    pub(crate) fn cancel(&mut self, who: Who<'_>, target: &OrderRef, now_us: i64) -> Result<Vec<Event>, Reject> {
        let id =
            self.find(who.account, target, true).ok_or(Reject { status: 404, message: "order not found".into() })?;
        Ok(self.cancel_id(id, now_us, ""))
    }

    /// Cancels every listed live order of the account; unknown or finished ones are skipped.
    pub(crate) fn cancel_many(&mut self, who: Who<'_>, ids: &[u64], cl_ord_ids: &[String], now_us: i64) -> Vec<Event> {
        let mut targets: Vec<u64> =
            ids.iter().filter_map(|id| self.find(who.account, &OrderRef::Id(*id), true)).collect();
        for cl in cl_ord_ids {
            if let Some(list) = self.accounts.get(who.account).and_then(|a| a.by_cl_ord_id.get(cl)) {
                targets.extend(list.iter().filter(|id| self.orders[id].status.is_live()));
            }
        }
        targets.sort_unstable();
        targets.dedup();
        targets.into_iter().flat_map(|id| self.cancel_id(id, now_us, "")).collect()
    }

    fn cancel_id(&mut self, id: u64, now_us: i64, remark: &str) -> Vec<Event> {
        self.unrest(id);
        let account = self.update_order(id, |o| {
            o.status = Status::Canceled;
            o.remark = remark.to_owned();
            o.updated_us = now_us;
            o.account.clone()
        });
        vec![self.order_event(id), self.balance_event(&account)]
    }

    /// Changes an order through `change`, keeping its account's `locked` margin in step
    /// (every change of an order's state goes through here, so the balance never has to
    /// add up the resting orders again).
    fn update_order<T>(&mut self, id: u64, change: impl FnOnce(&mut Order) -> T) -> T {
        let o = self.orders.get_mut(&id).expect("a known order");
        let before = o.locked();
        let out = change(o);
        let delta = o.locked() - before;
        if let Some(account) = self.accounts.get_mut(&o.account) {
            account.locked += delta;
        }
        out
    }

    /// The account's order named by `target`: the newest with that `cl_ord_id`, only live
    /// ones when `live`.
    fn find(&self, account: &str, target: &OrderRef, live: bool) -> Option<u64> {
        let ok = |id: &u64| self.orders.get(id).is_some_and(|o| o.account == account && (!live || o.status.is_live()));
        match target {
            OrderRef::Id(id) => Some(*id).filter(ok),
            OrderRef::ClOrdId(cl) => {
                let list = self.accounts.get(account)?.by_cl_ord_id.get(cl)?;
                list.iter().rev().copied().find(ok)
            }
        }
    }

    pub(crate) fn change_leverage(&mut self, who: Who<'_>, symbol: &str, leverage: u32) -> Result<Vec<Event>, Reject> {
        let index = self.symbol_index(symbol)?;
        let max = self.symbols[index].max_leverage;
        if !(1..=max).contains(&leverage) {
            return reject(400, format!("leverage must be between 1 and {max} for {symbol}"));
        }
        let def_leverage = self.symbols[index].def_leverage;
        let account = self.account(who);
        let mode = account.config(index, def_leverage).margin_mode;
        account.configs.insert(index, PositionConfig { leverage, margin_mode: mode });
        Ok(vec![self.balance_event(who.account)])
    }

    /// A margin mode change is refused while the symbol has a position or live orders.
    pub(crate) fn change_margin_mode(
        &mut self,
        who: Who<'_>,
        symbol: &str,
        mode: MarginMode,
    ) -> Result<Vec<Event>, Reject> {
        let index = self.symbol_index(symbol)?;
        let def_leverage = self.symbols[index].def_leverage;
        let busy = !self.account(who).position_qty(index).is_zero()
            || self.live_orders(who.account, Some(index)).next().is_some();
        let account = self.account(who);
        let config = account.config(index, def_leverage);
        if config.margin_mode == mode {
            return Ok(Vec::new());
        }
        if busy {
            return reject(
                400,
                format!("cannot change the margin mode of {symbol} with an open position or open orders"),
            );
        }
        account.configs.insert(index, PositionConfig { leverage: config.leverage, margin_mode: mode });
        Ok(vec![self.balance_event(who.account)])
    }

    pub(crate) fn position_config(&mut self, who: Who<'_>, symbol: &str) -> Result<Value, Reject> {
        let index = self.symbol_index(symbol)?;
        let def_leverage = self.symbols[index].def_leverage;
        let config = self.account(who).config(index, def_leverage);
        Ok(json!({"symbol": symbol, "leverage": config.leverage, "margin_mode": config.margin_mode.as_str()}))
    }

    /// Moves a symbol's mark (the admin `mark`, or the walk): the book is rebuilt around it and
    /// resting orders it reached fill.
    pub(crate) fn set_mark(&mut self, symbol: &str, price: Dec, now_us: i64) -> Result<Vec<Event>, Reject> {
        let index = self.symbol_index(symbol)?;
        let s = &self.symbols[index];
        if !price.is_positive() || !price.is_multiple_of(s.tick) {
            return reject(400, format!("price {price} does not follow price tick {}", s.tick));
        }
        self.markets[index].set_mark(&self.symbols[index], price);
        Ok(self.fill_reached(index, now_us))
    }

    /// One step of the walk on every symbol.
    pub(crate) fn walk(&mut self, now_us: i64) -> Vec<Event> {
        let mut events = Vec::new();
        for index in 0..self.symbols.len() {
            self.markets[index].walk(&self.symbols[index]);
            events.extend(self.fill_reached(index, now_us));
        }
        events
    }

    fn balance_event(&mut self, account: &str) -> Event {
        let user = self.accounts[account].user.clone();
        let data = self.balance_json(Who { account, user: &user });
        self.record(account, Channel::Balance, None, data)
    }

    fn position_event(&mut self, account: &str, index: usize, now_us: i64) -> Event {
        let a = &self.accounts[account];
        let (symbol, mark) = (&self.symbols[index], self.markets[index].mark);
        let data = a.position_json(index, symbol, mark, now_us).unwrap_or_else(|| {
            // A closed position is pushed with qty 0.
            let p = &a.positions[&index];
            let config = a.config(index, symbol.def_leverage);
            json!({"id": p.id, "symbol": symbol.name, "qty": symbol.qty_text(Dec::ZERO), "entry_price": symbol.price_text(Dec::ZERO),
                   "entry_value": Dec::ZERO.fixed(9), "initial_margin": Dec::ZERO.fixed(9),
                   "leverage": config.leverage.to_string(), "margin_mode": config.margin_mode.as_str(), "margin_asset": "DUSD",
                   "realized_pnl": p.realized_pnl.fixed(9), "status": "closed", "user": a.user,
                   "created_at": iso8601_utc_us(p.created_us), "updated_at": iso8601_utc_us(p.updated_us)})
        });
        self.record(account, Channel::Position, Some(index), data)
    }

    fn trade_event(&mut self, account: &str, trade: usize, maker: bool) -> Event {
        let a = &self.accounts[account];
        let t = &a.trades[trade];
        let data = trade_json(t, &self.symbols[t.symbol], &a.user);
        let symbol = self.symbols[t.symbol].name.clone();
        self.journal.record_fill(account, &symbol, data, maker)
    }
}

/// Quantity rules of the symbol, with the venue's "invalid order qty" wording.
fn check_qty(symbol: &Symbol, qty: Dec) -> Result<(), Reject> {
    if !qty.is_multiple_of(symbol.lot) {
        return reject(400, format!("invalid order qty {qty}: not a multiple of the qty step {}", symbol.lot));
    }
    if qty < symbol.min_qty {
        return reject(400, format!("invalid order qty {qty}: below the minimum {}", symbol.min_qty));
    }
    if qty > symbol.max_qty {
        return reject(400, format!("invalid order qty {qty}: above the maximum {}", symbol.max_qty));
    }
    Ok(())
}

/// A ULID-shaped client order id (26 Crockford base32 characters: 48 bits of milliseconds,
/// 80 random bits), as the venue generates when `cl_ord_id` is omitted.
fn ulid() -> String {
    const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let random = crate::random::bytes::<10>();
    let mut value: u128 = (ms & ((1 << 48) - 1)) << 80;
    for (i, b) in random.iter().enumerate() {
        value |= u128::from(*b) << (8 * (9 - i));
    }
    (0..26).rev().map(|i| char::from(ALPHABET[((value >> (5 * i)) & 31) as usize])).collect()
}
