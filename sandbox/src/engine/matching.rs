//! Matching user orders against the synthetic market.
//!
//! - A new order first takes liquidity: it walks the opposite book levels, best first, while
//!   they are at or better than its limit (any level for a market order), filling at each
//!   level's price and reducing the level (partial fills, several levels), as a taker.
//! - `alo` (post-only) that would take liquidity is rejected instead: status `rejected`,
//!   remark `alo order rejected`.
//! - What is left of a `gtc` or `alo` limit order rests on the book. What is left of an
//!   `ioc` or market order is cancelled; neither ever rests.
//! - A resting buy fills when the mark falls to or below its price, a resting sell when the
//!   mark rises to or above it: the whole remainder at the order's price, as a maker.

use super::Engine;
use super::account::Fill;
use super::events::Event;
use super::order::{OrderType, Side, Status, Tif};
use crate::decimal::Dec;

impl Engine {
    /// Runs a just-created order (status `open`, nothing filled); returns the events.
    pub(super) fn execute(&mut self, id: u64, now_us: i64) -> Vec<Event> {
        let o = &self.orders[&id];
        let (index, side, limit, tif, order_type) = (o.symbol, o.side, o.price, o.tif, o.order_type);
        let buy = side == Side::Buy;
        let market = &mut self.markets[index];
        let crosses = |best: Option<Dec>| match (best, limit) {
            (Some(level), Some(p)) => {
                if buy {
                    level <= p
                } else {
                    level >= p
                }
            }
            (Some(_), None) => true,
            (None, _) => false,
        };
        let best = if buy { market.best_ask() } else { market.best_bid() };
        if order_type == OrderType::Limit && tif == Tif::Alo && crosses(best) {
            self.update_order(id, |o| {
                o.status = Status::Rejected;
                o.remark = "alo order rejected".into();
                o.updated_us = now_us;
            });
            return vec![self.order_event(id)];
        }

        let mut remaining = self.orders[&id].qty;
        let mut fills = Vec::new();
        let levels = self.markets[index].opposite(buy);
        while remaining.is_positive() && crosses(levels.first().map(|l| l.price)) {
            let level = &mut levels[0];
            let qty = remaining.min(level.qty);
            fills.push((level.price, qty));
            level.qty -= qty;
            remaining -= qty;
            if level.qty.is_zero() {
                levels.remove(0);
            }
        }
        let mut events = Vec::new();
        for &(price, qty) in &fills {
            events.push(self.fill(id, price, qty, false, now_us));
        }
        let rests = !remaining.is_zero() && order_type == OrderType::Limit && tif != Tif::Ioc;
        let no_fill = fills.is_empty();
        if rests {
            let key = (self.orders[&id].price.expect("a limit order has a price"), id);
            let resting = &mut self.resting[index];
            if buy {
                resting.buys.insert(key)
            } else {
                resting.sells.insert(key)
            };
        }
        let (account, status) = self.update_order(id, |o| {
            if remaining.is_zero() {
                o.status = Status::Filled;
            } else if !rests {
                o.status = Status::Canceled;
                o.remark = if no_fill { "no liquidity at the price" } else { "remainder canceled" }.into();
            }
            o.updated_us = now_us;
            (o.account.clone(), o.status)
        });
        if !fills.is_empty() {
            events.push(self.position_event(&account, index, now_us));
        }
        if !fills.is_empty() || status != Status::Open {
            events.push(self.order_event(id));
        }
        events.push(self.balance_event(&account));
        events
    }

    /// Fills every resting order of the symbol that the current mark has reached.
    pub(super) fn fill_reached(&mut self, index: usize, now_us: i64) -> Vec<Event> {
        let mark = self.markets[index].mark;
        let resting = &self.resting[index];
        let mut reached: Vec<u64> = resting.buys.range((mark, 0)..).map(|(_, id)| *id).collect();
        reached.extend(resting.sells.range(..=(mark, u64::MAX)).map(|(_, id)| *id));
        reached.sort_unstable();
        let mut events = Vec::new();
        let mut touched = Vec::new();
        for id in reached {
            self.unrest(id);
            let o = &self.orders[&id];
            let (price, qty) = (o.price.expect("a resting order has a price"), o.remaining());
            events.push(self.fill(id, price, qty, true, now_us));
            self.update_order(id, |o| {
                o.status = Status::Filled;
                o.updated_us = now_us;
            });
            events.push(self.order_event(id));
            let account = self.orders[&id].account.clone();
            if !touched.contains(&account) {
                touched.push(account);
            }
        }
        for account in touched {
            events.push(self.position_event(&account, index, now_us));
            events.push(self.balance_event(&account));
        }
        events
    }

    /// Takes an order off the resting index (cancelled or filled).
    pub(super) fn unrest(&mut self, id: u64) {
        let o = &self.orders[&id];
        if let Some(price) = o.price {
            let resting = &mut self.resting[o.symbol];
            resting.buys.remove(&(price, id));
            resting.sells.remove(&(price, id));
        }
    }

    /// One fill of `qty` at `price`: the order, the account's position and wallet, the
    /// trade record and the market's last price. Returns the trade event.
    fn fill(&mut self, id: u64, price: Dec, qty: Dec, maker: bool, now_us: i64) -> Event {
        let (index, side, account) = self.update_order(id, |o| {
            o.fill_qty += qty;
            o.fill_value += price.mul(qty);
            o.updated_us = now_us;
            (o.symbol, o.side, o.account.clone())
        });
        let symbol = &self.symbols[index];
        let fee = price.mul(qty).mul(if maker { symbol.maker_fee } else { symbol.taker_fee });
        let trade_id = self.next_trade_id;
        self.next_trade_id += 1;
        let next_position_id = &mut self.next_position_id;
        let a = self.accounts.get_mut(&account).expect("the order's account");
        let fill = Fill { side, price, qty, fee, at_us: now_us };
        let (pnl, position_id) = a.apply_fill(index, fill, || {
            *next_position_id += 1;
            *next_position_id - 1
        });
        a.trades.push(super::account::Trade {
            id: trade_id,
            order_id: id,
            symbol: index,
            side,
            price,
            qty,
            fee,
            pnl,
            at_us: now_us,
            maker,
        });
        let trade = a.trades.len() - 1;
        self.orders.get_mut(&id).expect("a known order").position_id = position_id;
        self.markets[index].last_price = Some(price);
        self.trade_event(&account, trade, maker)
    }
}

#[cfg(test)]
impl Engine {
    /// The resting order ids of a symbol (buys, then sells, by price).
    pub(super) fn resting_ids(&self, index: usize) -> Vec<u64> {
        let r = &self.resting[index];
        r.buys.iter().chain(&r.sells).map(|(_, id)| *id).collect()
    }
}
