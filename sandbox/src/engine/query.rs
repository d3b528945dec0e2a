//! What the query endpoints read: orders, trades, positions, balance, and the public market
//! data (symbol info, prices, depth).
//!
//! Lists come newest first and `last_id` pages toward older rows (ids below it), as the
//! venue's paginated lists do (venue-api.md §1.7). The envelope is the documented
//! `{page_size, result, total}` (`page_size` = rows in this page, `total` = rows matching
//! the filter, all pages) plus `code: 0, message: "success"`, which a live-verified client
//! requires ([WJ] `ApiListResponse`).

use serde_json::{Value, json};

use super::account::{Trade, trade_json};
use super::order::{Order, OrderType, Side, Status};
use super::{Engine, OrderRef, Reject, Who, reject};
use crate::clock::iso8601_utc_us;
use crate::decimal::Dec;
use crate::market::Level;

#[derive(Clone, Debug, Default)]
pub(crate) struct OrderFilter {
    pub symbol: Option<String>,
    pub status: Option<Status>,
    pub order_type: Option<OrderType>,
    pub start_us: Option<i64>,
    pub end_us: Option<i64>,
    pub last_id: Option<u64>,
    pub limit: usize,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct TradeFilter {
    pub symbol: Option<String>,
    pub side: Option<Side>,
    pub start_us: Option<i64>,
    pub end_us: Option<i64>,
    pub last_id: Option<u64>,
    pub limit: usize,
}

/// The list envelope (see the module doc).
pub(crate) fn page(result: Vec<Value>, total: usize) -> Value {
    json!({"code": 0, "message": "success", "page_size": result.len(), "result": result, "total": total})
}

fn in_window(at_us: i64, start: Option<i64>, end: Option<i64>) -> bool {
    start.is_none_or(|s| at_us >= s) && end.is_none_or(|e| at_us <= e)
}

impl Engine {
    fn symbol_filter(&self, name: Option<&str>) -> Result<Option<usize>, Reject> {
        name.map(|n| self.symbol_index(n)).transpose()
    }

    fn order_json(&self, o: &Order) -> Value {
        o.to_json(&self.symbols[o.symbol])
    }

    /// `query_order`: the newest order with that `cl_ord_id`, or the order with that id.
    pub(crate) fn order(&self, who: Who<'_>, target: &OrderRef) -> Result<Value, Reject> {
        match self.find(who.account, target, false) {
            Some(id) => Ok(self.order_json(&self.orders[&id])),
            None => reject(404, "order not found"),
        }
    }

    fn account_orders<'a>(&'a self, who: Who<'a>) -> impl Iterator<Item = &'a Order> + 'a {
        let ids = self.accounts.get(who.account).map(|a| a.orders.as_slice()).unwrap_or_default();
        ids.iter().rev().filter_map(|id| self.orders.get(id))
    }

    /// `query_orders`: every order of the account (any status), filtered and paged.
    pub(crate) fn orders(&self, who: Who<'_>, f: &OrderFilter) -> Result<Value, Reject> {
        let symbol = self.symbol_filter(f.symbol.as_deref())?;
        let matching: Vec<&Order> = self
            .account_orders(who)
            .filter(|o| symbol.is_none_or(|s| o.symbol == s))
            .filter(|o| f.status.is_none_or(|s| o.status == s))
            .filter(|o| f.order_type.is_none_or(|t| o.order_type == t))
            .filter(|o| in_window(o.created_us, f.start_us, f.end_us))
            .collect();
        let result = matching
            .iter()
            .filter(|o| f.last_id.is_none_or(|last| o.id < last))
            .take(f.limit)
            .map(|o| self.order_json(o))
            .collect();
        Ok(page(result, matching.len()))
    }

    /// `query_open_orders`: the live orders (market and ioc orders never rest, so never here).
    /// `query_open_orders`: the live orders; with `ended_since` (the `open_orders_lag_ms`
    /// fault) also those that ended at or after it, listed as `open`, as the live list lags.
    pub(crate) fn open_orders(
        &self,
        who: Who<'_>,
        symbol: Option<&str>,
        limit: usize,
        ended_since: Option<i64>,
    ) -> Result<Value, Reject> {
        let symbol = self.symbol_filter(symbol)?;
        let listed = |o: &Order| o.status.is_live() || ended_since.is_some_and(|since| o.updated_us >= since);
        let open: Vec<&Order> =
            self.account_orders(who).filter(|o| listed(o) && symbol.is_none_or(|s| o.symbol == s)).collect();
        let shown = |o: &Order| {
            let mut json = self.order_json(o);
            json["status"] = Value::from("open");
            json
        };
        Ok(page(open.iter().take(limit).map(|o| shown(o)).collect(), open.len()))
    }

    /// `query_trades`: the account's fills, filtered and paged.
    pub(crate) fn trades(&self, who: Who<'_>, f: &TradeFilter) -> Result<Value, Reject> {
        let symbol = self.symbol_filter(f.symbol.as_deref())?;
        let Some(account) = self.accounts.get(who.account) else {
            return Ok(page(Vec::new(), 0));
        };
        let matching: Vec<_> = account
            .trades
            .iter()
            .rev()
            .filter(|t| symbol.is_none_or(|s| t.symbol == s))
            .filter(|t| f.side.is_none_or(|s| t.side == s))
            .filter(|t| in_window(t.at_us, f.start_us, f.end_us))
            .collect();
        let result = matching
            .iter()
            .filter(|t| f.last_id.is_none_or(|last| t.id < last))
            .take(f.limit)
            .map(|t| trade_json(t, &self.symbols[t.symbol], &account.user))
            .collect();
        Ok(page(result, matching.len()))
    }

    /// `query_recent_trades`: the symbol's last fills of every account, as public prints
    /// (`is_buyer_taker, price, qty, quote_qty, symbol, time`), newest first. The sandbox's
    /// only trades are user fills against its synthetic market.
    pub(crate) fn recent_trades(&self, symbol: &str, limit: usize) -> Result<Value, Reject> {
        let index = self.symbol_index(symbol)?;
        let s = &self.symbols[index];
        let prints = self
            .symbol_fills(index)
            .into_iter()
            .rev()
            .take(limit)
            .map(|t| {
                json!({
                    "is_buyer_taker": (t.side == Side::Buy) != t.maker,
                    "price": s.price_text(t.price),
                    "qty": s.qty_text(t.qty),
                    "quote_qty": t.value_text(),
                    "symbol": s.name,
                    "time": iso8601_utc_us(t.at_us),
                })
            })
            .collect();
        Ok(Value::Array(prints))
    }

    /// Every account's fills of symbol `index`, oldest first (by time, then trade id): the
    /// sandbox's public trades, for the recent trades, the 24 h statistics and the klines.
    pub(super) fn symbol_fills(&self, index: usize) -> Vec<&Trade> {
        let mut fills: Vec<&Trade> =
            self.accounts.values().flat_map(|a| a.trades.iter()).filter(|t| t.symbol == index).collect();
        fills.sort_unstable_by_key(|t| (t.at_us, t.id));
        fills
    }

    /// `query_positions`: a bare array of the open positions.
    pub(crate) fn positions(&self, who: Who<'_>, symbol: Option<&str>, now_us: i64) -> Result<Value, Reject> {
        let symbol = self.symbol_filter(symbol)?;
        let Some(account) = self.accounts.get(who.account) else {
            return Ok(json!([]));
        };
        let mut indices: Vec<usize> =
            account.positions.keys().copied().filter(|i| symbol.is_none_or(|s| *i == s)).collect();
        indices.sort_unstable();
        let list: Vec<Value> = indices
            .into_iter()
            .filter_map(|i| account.position_json(i, &self.symbols[i], self.markets[i].mark, now_us))
            .collect();
        Ok(Value::Array(list))
    }

    /// `query_balance`: the unified snapshot; an account never seen has its starting balance.
    pub(crate) fn balance_json(&self, who: Who<'_>) -> Value {
        let marks = |i: usize| (self.markets[i].mark, &self.symbols[i]);
        match self.accounts.get(who.account) {
            Some(a) => a.balance_json(&marks, a.locked),
            None => {
                super::account::Account::new(who.user.to_owned(), self.starting_balance).balance_json(&marks, Dec::ZERO)
            }
        }
    }

    /// `query_symbol_info`: every symbol, or the one named.
    pub(crate) fn symbol_info(&self, symbol: Option<&str>) -> Result<Value, Reject> {
        let only = self.symbol_filter(symbol)?;
        let list = self
            .symbols
            .iter()
            .enumerate()
            .filter(|(i, _)| only.is_none_or(|s| s == *i))
            .map(|(_, s)| s.info_json(&self.listed_at))
            .collect();
        Ok(Value::Array(list))
    }

    /// `query_symbol_price`; `last_price` is null until a user has traded the symbol.
    pub(crate) fn symbol_price(&self, symbol: &str, now_us: i64) -> Result<Value, Reject> {
        let index = self.symbol_index(symbol)?;
        let (s, m) = (&self.symbols[index], &self.markets[index]);
        let text = |p: Option<Dec>| p.map(|p| s.price_text(p));
        let (bid, ask, mid) = self.top_of_book(index);
        Ok(json!({
            "base": s.spec.base_asset, "quote": s.spec.quote_asset, "symbol": s.name,
            "index_price": s.price_text(m.mark), "mark_price": s.price_text(m.mark),
            "last_price": text(m.last_price), "mid_price": text(mid),
            "spread_bid": text(bid), "spread_ask": text(ask),
            "time": iso8601_utc_us(now_us),
        }))
    }

    /// The synthetic book's best bid, best ask and their mid (on the tick, rounded down).
    pub(super) fn top_of_book(&self, index: usize) -> (Option<Dec>, Option<Dec>, Option<Dec>) {
        let (s, m) = (&self.symbols[index], &self.markets[index]);
        let mid = match (m.best_bid(), m.best_ask()) {
            (Some(b), Some(a)) => Some((a + b).div(Dec::from_int(2)).floor_to(s.tick)),
            _ => None,
        };
        (m.best_bid(), m.best_ask(), mid)
    }

    /// The best `limit` (at most ten) levels of each side, the synthetic levels merged with the
    /// users' resting orders, best first; and the symbol.
    pub(crate) fn depth_sorted(&self, symbol: &str, limit: usize) -> Result<(Vec<Level>, Vec<Level>, usize), Reject> {
        let index = self.symbol_index(symbol)?;
        let keep = limit.clamp(1, crate::market::LEVELS);
        let mut asks = self.markets[index].asks.clone();
        let mut bids = self.markets[index].bids.clone();
        for (_, id) in &self.resting[index].sells {
            add_level(&mut asks, &self.orders[id]);
        }
        for (_, id) in &self.resting[index].buys {
            add_level(&mut bids, &self.orders[id]);
        }
        asks.sort_by_key(|l| l.price);
        bids.sort_by_key(|l| std::cmp::Reverse(l.price));
        asks.truncate(keep);
        bids.truncate(keep);
        Ok((asks, bids, index))
    }

    /// `query_depth_book`: `depth_sorted` served in a shuffled order as `[price, qty]` strings
    /// (the venue does not sort; venue-api.md §1.5).
    pub(crate) fn depth(&mut self, symbol: &str, limit: usize) -> Result<Value, Reject> {
        let (asks, bids, index) = self.depth_sorted(symbol, limit)?;
        let symbol = self.symbols[index].clone();
        let market = &mut self.markets[index];
        Ok(
            json!({"asks": market.shuffled(&asks, &symbol), "bids": market.shuffled(&bids, &symbol), "symbol": symbol.name}),
        )
    }

    /// A listed symbol's rules (for the WebSocket pushes' formatting).
    pub(crate) fn symbol(&self, index: usize) -> &crate::symbols::Symbol {
        &self.symbols[index]
    }

    /// The events kept in the journal with a sequence number above `seq` (tests, admin).
    #[allow(dead_code)]
    pub(crate) fn events_since(&self, seq: u64) -> Vec<super::events::Event> {
        self.journal.since(seq)
    }
}

fn add_level(levels: &mut Vec<Level>, o: &Order) {
    let price = o.price.expect("a resting order has a price");
    match levels.iter_mut().find(|l| l.price == price) {
        Some(level) => level.qty += o.remaining(),
        None => levels.push(Level { price, qty: o.remaining() }),
    }
}
