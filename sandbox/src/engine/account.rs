//! One account: its wallet, positions, per-symbol leverage and margin mode, orders and fills.
//!
//! Money follows the fills: a fill moves the position (signed quantity, average entry
//! price), realises PnL when it reduces the position, and charges its fee (maker or taker
//! rate of the symbol) to the wallet. Unrealised PnL is always measured at the mark.
//! Margin figures are the venue's formulas in their simplest form: initial margin =
//! value / leverage, maintenance = value / (2 × max leverage). No liquidation. Funding is
//! settled on demand (`funding`) and also moves the wallet.
//! An isolated position also holds what `transfer_margin` moved into it (or took out):
//! `Position::margin`.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::funding::FundingRow;
use super::order::{MarginMode, Side};
use crate::clock::iso8601_utc_us;
use crate::decimal::Dec;
use crate::symbols::Symbol;

/// Money is written with nine decimals, as the venue's examples show.
pub(super) const MONEY: u32 = 9;

#[derive(Clone, Copy, Debug)]
pub(crate) struct PositionConfig {
    pub leverage: u32,
    pub margin_mode: MarginMode,
}

#[derive(Clone, Debug)]
pub(crate) struct Position {
    pub id: u64,
    /// Signed: negative is short.
    pub qty: Dec,
    pub entry_price: Dec,
    pub realized_pnl: Dec,
    /// Margin `transfer_margin` moved in (positive) or took out (negative) since the position
    /// opened; released to the cross balance when the position closes or flips.
    pub transferred_margin: Dec,
    pub created_us: i64,
    pub updated_us: i64,
}

impl Position {
    /// The margin the position holds: what opening it took (entry value / leverage) plus
    /// what `transfer_margin` moved. Its `initial_margin`; for an isolated position, its
    /// part of `isolated_balance`.
    pub(crate) fn margin(&self, leverage: Dec) -> Dec {
        self.qty.abs().mul(self.entry_price).div(leverage) + self.transferred_margin
    }
}

/// The maintenance margin rate of a symbol: 1 / (2 × max leverage).
pub(super) fn maintenance_rate(symbol: &Symbol) -> Dec {
    Dec::from_int(1).div(Dec::from_int(2 * i64::from(symbol.max_leverage)))
}

#[derive(Clone, Debug)]
pub(crate) struct Trade {
    pub id: u64,
    pub order_id: u64,
    pub symbol: usize,
    pub side: Side,
    pub price: Dec,
    pub qty: Dec,
    pub fee: Dec,
    pub pnl: Dec,
    pub at_us: i64,
    /// The user's order was resting (the market took it); the taker was the other side.
    pub maker: bool,
}

/// One fill as the account sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fill {
    pub side: Side,
    pub price: Dec,
    pub qty: Dec,
    pub fee: Dec,
    pub at_us: i64,
}

#[derive(Debug)]
pub(crate) struct Account {
    pub user: String,
    /// Deposits + realised PnL − fees + funding received − funding paid.
    pub wallet: Dec,
    /// Margin held by the live orders (Σ `Order::locked`), kept by `Engine::update_order`.
    pub locked: Dec,
    pub positions: HashMap<usize, Position>,
    pub configs: HashMap<usize, PositionConfig>,
    /// Order ids in placement order (ids grow, so this is also id order).
    pub orders: Vec<u64>,
    /// Order ids by `cl_ord_id`, oldest first (the venue does not say ids are unique).
    pub by_cl_ord_id: HashMap<String, Vec<u64>>,
    /// Fills in time (and id) order.
    pub trades: Vec<Trade>,
    /// Funding payments in time (and id) order.
    pub funding: Vec<FundingRow>,
}

impl Account {
    pub(crate) fn new(user: String, balance: Dec) -> Account {
        Account {
            user,
            wallet: balance,
            locked: Dec::ZERO,
            positions: HashMap::new(),
            configs: HashMap::new(),
            orders: Vec::new(),
            by_cl_ord_id: HashMap::new(),
            trades: Vec::new(),
            funding: Vec::new(),
        }
    }

    /// The leverage and margin mode of symbol `index` (`def_leverage`, cross until changed).
    pub(crate) fn config(&self, index: usize, def_leverage: u32) -> PositionConfig {
        self.configs
            .get(&index)
            .copied()
            .unwrap_or(PositionConfig { leverage: def_leverage, margin_mode: MarginMode::Cross })
    }

    pub(crate) fn position_qty(&self, index: usize) -> Dec {
        self.positions.get(&index).map_or(Dec::ZERO, |p| p.qty)
    }

    /// Applies one fill to the position and the wallet; returns the realised PnL of it
    /// (before the fee). `new_position_id` is called when the fill opens a position.
    pub(crate) fn apply_fill(&mut self, index: usize, fill: Fill, new_position_id: impl FnOnce() -> u64) -> (Dec, u64) {
        let Fill { side, price, qty, fee, at_us } = fill;
        let position = self.positions.entry(index).or_insert_with(|| Position {
            id: new_position_id(),
            qty: Dec::ZERO,
            entry_price: Dec::ZERO,
            realized_pnl: Dec::ZERO,
            transferred_margin: Dec::ZERO,
            created_us: at_us,
            updated_us: at_us,
        });
        let signed = side.sign().mul(qty);
        let mut pnl = Dec::ZERO;
        if position.qty.is_zero() || position.qty.is_positive() == signed.is_positive() {
            let held = position.qty.abs();
            position.entry_price = (held.mul(position.entry_price) + qty.mul(price)).div(held + qty);
        } else {
            let closed = qty.min(position.qty.abs());
            let direction = if position.qty.is_positive() { Dec::from_int(1) } else { Dec::from_int(-1) };
            pnl = direction.mul(closed.mul(price - position.entry_price));
            let after = position.qty + signed;
            if after.is_zero() {
                position.entry_price = Dec::ZERO;
            } else if after.is_positive() != position.qty.is_positive() {
                position.entry_price = price;
            }
            // Closed (or closed and reopened the other way): its transferred margin is freed.
            if after.is_zero() || after.is_positive() != position.qty.is_positive() {
                position.transferred_margin = Dec::ZERO;
            }
        }
        position.qty += signed;
        position.realized_pnl += pnl;
        position.updated_us = at_us;
        self.wallet += pnl - fee;
        (pnl, position.id)
    }

    /// The unified balance snapshot of `query_balance` (venue-api.md §1.4), every figure a
    /// decimal string. `locked` is the margin held by resting orders.
    pub(crate) fn balance_json<'s>(&self, marks: &dyn Fn(usize) -> (Dec, &'s Symbol), locked: Dec) -> Value {
        let (mut isolated_balance, mut isolated_upnl) = (Dec::ZERO, Dec::ZERO);
        let (mut cross_margin, mut cross_upnl) = (Dec::ZERO, Dec::ZERO);
        for (&index, p) in &self.positions {
            if p.qty.is_zero() {
                continue;
            }
            let (mark, symbol) = marks(index);
            let config = self.config(index, symbol.def_leverage);
            let leverage = Dec::from_int(i64::from(config.leverage));
            let upnl = p.qty.mul(mark - p.entry_price);
            match config.margin_mode {
                MarginMode::Isolated => {
                    isolated_balance += p.margin(leverage);
                    isolated_upnl += upnl;
                }
                MarginMode::Cross => {
                    cross_margin += p.qty.abs().mul(mark).div(leverage);
                    cross_upnl += upnl;
                }
            }
        }
        let balance = self.wallet;
        let cross_balance = balance - isolated_balance;
        let upnl = cross_upnl + isolated_upnl;
        let realized: Dec = self.positions.values().map(|p| p.realized_pnl).sum();
        let m = |d: Dec| d.fixed(MONEY);
        json!({
            "isolated_balance": m(isolated_balance),
            "isolated_upnl": m(isolated_upnl),
            "cross_balance": m(cross_balance),
            "cross_margin": m(cross_margin),
            "cross_upnl": m(cross_upnl),
            "locked": m(locked),
            "cross_available": m(cross_balance - cross_margin - locked + cross_upnl),
            "balance": m(balance),
            "upnl": m(upnl),
            "equity": m(balance + upnl),
            "pnl_freeze": m(realized),
            "pnl_24h": m(realized),
        })
    }

    /// One element of `query_positions` (venue-api.md §1.4), plus `required_margin` ([WJ]).
    /// `initial_margin` is the margin the position holds (`Position::margin`, transfers
    /// included); `required_margin` what its leverage requires (entry value / leverage).
    pub(crate) fn position_json(&self, index: usize, symbol: &Symbol, mark: Dec, now_us: i64) -> Option<Value> {
        let p = self.positions.get(&index).filter(|p| !p.qty.is_zero())?;
        let config = self.config(index, symbol.def_leverage);
        let leverage = Dec::from_int(i64::from(config.leverage));
        let entry_value = p.qty.abs().mul(p.entry_price);
        let position_value = p.qty.abs().mul(mark);
        let upnl = p.qty.mul(mark - p.entry_price);
        let initial_margin = p.margin(leverage);
        let maint_rate = maintenance_rate(symbol);
        let maint_margin = position_value.mul(maint_rate);
        let holding_margin = initial_margin + upnl;
        // Isolated-margin formulas: bankrupt when the loss eats the margin held, liquidated
        // when what is left is the maintenance margin (at the entry price).
        let loss_room = initial_margin.div(p.qty.abs());
        let maint_room = p.entry_price.mul(maint_rate);
        let (bankruptcy, liquidation) = if p.qty.is_positive() {
            (p.entry_price - loss_room, p.entry_price - loss_room + maint_room)
        } else {
            (p.entry_price + loss_room, p.entry_price + loss_room - maint_room)
        };
        let mmr = if holding_margin.is_positive() { maint_margin.div(holding_margin) } else { Dec::ZERO };
        let m = |d: Dec| d.fixed(MONEY);
        Some(json!({
            "id": p.id,
            "symbol": symbol.name,
            "qty": symbol.qty_text(p.qty),
            "entry_price": symbol.price_text(p.entry_price),
            "entry_value": m(entry_value),
            "mark_price": symbol.price_text(mark),
            "position_value": m(position_value),
            "leverage": leverage.plain(),
            "margin_mode": config.margin_mode.as_str(),
            "margin_asset": "DUSD",
            "initial_margin": m(initial_margin),
            "holding_margin": m(holding_margin),
            "maint_margin": m(maint_margin),
            "required_margin": m(entry_value.div(leverage)),
            "mmr": m(mmr),
            "liq_price": symbol.price_text(liquidation.max_zero()),
            "bankruptcy_price": symbol.price_text(bankruptcy.max_zero()),
            "realized_pnl": m(p.realized_pnl),
            "upnl": m(upnl),
            "status": "open",
            "time": iso8601_utc_us(now_us),
            "created_at": iso8601_utc_us(p.created_us),
            "updated_at": iso8601_utc_us(p.updated_us),
            "user": self.user,
        }))
    }
}

impl Trade {
    /// Price × qty, written as money (`value` of `query_trades`, `quote_qty` of
    /// `query_recent_trades`).
    pub(crate) fn value_text(&self) -> String {
        self.price.mul(self.qty).fixed(MONEY)
    }
}

/// One element of `query_trades` (venue-api.md §1.4).
pub(crate) fn trade_json(t: &Trade, symbol: &Symbol, user: &str) -> Value {
    json!({
        "id": t.id,
        "order_id": t.order_id,
        "symbol": symbol.name,
        "side": t.side.as_str(),
        "price": symbol.price_text(t.price),
        "qty": symbol.qty_text(t.qty),
        "value": t.value_text(),
        "fee_asset": "DUSD",
        "fee_qty": t.fee.fixed(MONEY),
        "pnl": t.pnl.fixed(MONEY),
        "user": user,
        "created_at": iso8601_utc_us(t.at_us),
        "updated_at": iso8601_utc_us(t.at_us),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Dec {
        Dec::parse(s).unwrap()
    }

    #[test]
    fn fills_move_the_position_and_realise_pnl() {
        let mut a = Account::new("bsc_0xabc".into(), d("1000"));
        let mut ids = 100..;
        let mut fill = |a: &mut Account, side, price: &str, qty: &str| {
            let f = Fill { side, price: d(price), qty: d(qty), fee: Dec::ZERO, at_us: 0 };
            a.apply_fill(0, f, || ids.next().unwrap()).0
        };
        assert_eq!(fill(&mut a, Side::Buy, "100", "1"), Dec::ZERO);
        assert_eq!(fill(&mut a, Side::Buy, "110", "1"), Dec::ZERO);
        assert_eq!((a.positions[&0].qty, a.positions[&0].entry_price), (d("2"), d("105")));
        // Sell 3 at 120: closes 2 (+30), opens a short of 1 at 120.
        assert_eq!(fill(&mut a, Side::Sell, "120", "3"), d("30"));
        assert_eq!((a.positions[&0].qty, a.positions[&0].entry_price), (d("-1"), d("120")));
        // Buy 1 at 125 closes the short at a loss of 5.
        assert_eq!(fill(&mut a, Side::Buy, "125", "1"), d("-5"));
        assert!(a.positions[&0].qty.is_zero());
        assert_eq!(a.wallet, d("1025"));
        assert_eq!(a.positions[&0].id, 100, "one position id for the symbol");
    }
}
