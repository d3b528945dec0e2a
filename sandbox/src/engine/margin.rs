//! `transfer_margin`: margin moved between the account and one of its isolated positions
//! (venue-api.md §1.3: [DOC-J] documents `{symbol, amount_in}`; [WJ] sends a negative amount
//! to take margin out of an isolated position).
//!
//! A positive amount moves margin from the account's cross balance into the position, a
//! negative one takes it back. The wallet (`balance`, `equity`) does not change, only where
//! the money is held: the position's margin (`initial_margin` of `query_positions`, the
//! account's `isolated_balance`) grows by the amount, `cross_balance` and `cross_available`
//! shrink by it, and the liquidation and bankruptcy prices move with the margin. Moved
//! margin stays with the position while it is open, whatever fills reduce it, and goes back
//! to the cross balance when the position closes (`Account::apply_fill`).
//!
//! Refused with HTTP 400, as the other signed endpoints refuse business rules: an unknown
//! symbol; no open position on the symbol, or a cross one (a cross position has no margin of
//! its own: it shares the cross balance); a deposit above `cross_available`; a withdrawal
//! that would leave the position's margin below its maintenance margin. The sandbox has a
//! maintenance margin (position value at the mark / (2 × max leverage), `maint_margin` of
//! `query_positions`), so that is the floor; the margin is counted with the position's
//! unrealised loss taken off and without its unrealised profit (a profit is not in the
//! wallet until realised, so it cannot be taken out), which also keeps the margin above zero.
//!
//! An accepted transfer pushes the account's `position` and `balance`, as a fill does.

use super::account::{MONEY, maintenance_rate};
use super::events::Event;
use super::order::MarginMode;
use super::{Engine, Reject, Who, reject};
use crate::decimal::Dec;

impl Engine {
    pub(crate) fn transfer_margin(
        &mut self,
        who: Who<'_>,
        symbol: &str,
        amount: Dec,
        now_us: i64,
    ) -> Result<Vec<Event>, Reject> {
        let index = self.symbol_index(symbol)?;
        let (mark, maint_rate) = (self.markets[index].mark, maintenance_rate(&self.symbols[index]));
        let def_leverage = self.symbols[index].def_leverage;
        let config = self.account(who).config(index, def_leverage);
        let available = self.available(who);
        let account = self.account(who);
        let Some(position) = account.positions.get_mut(&index).filter(|p| !p.qty.is_zero()) else {
            return reject(
                400,
                format!("no open position on {symbol}: transfer_margin moves an isolated position's margin"),
            );
        };
        if config.margin_mode != MarginMode::Isolated {
            return reject(
                400,
                format!("the {symbol} position is cross margin: only an isolated position has margin of its own"),
            );
        }
        if amount.is_positive() && amount > available {
            return reject(
                400,
                format!("insufficient available balance: {amount} requested, {} available", available.fixed(MONEY)),
            );
        }
        if amount.is_negative() {
            let leverage = Dec::from_int(i64::from(config.leverage));
            let loss = position.qty.mul(mark - position.entry_price).min(Dec::ZERO);
            let left = position.margin(leverage) + amount + loss;
            let maint_margin = position.qty.abs().mul(mark).mul(maint_rate);
            if left < maint_margin {
                return reject(
                    400,
                    format!(
                        "withdrawing {} would leave the {symbol} position's margin at {} (unrealised loss taken \
                         off), below its maintenance margin {}",
                        -amount,
                        left.fixed(MONEY),
                        maint_margin.fixed(MONEY)
                    ),
                );
            }
        }
        position.transferred_margin += amount;
        position.updated_us = now_us;
        Ok(vec![self.position_event(who.account, index, now_us), self.balance_event(who.account)])
    }
}
