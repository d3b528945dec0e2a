//! Funding: settled on demand (the admin `funding` control, `Sandbox::settle_funding`), read
//! back through `query_funding_history` (venue-api.md §1.4, §1.7, §6.10).
//!
//! The live venue settles on its own schedule at a rate it derives from the index; the
//! sandbox has no index of its own, so a test names the rate and the moment instead, and can
//! then check every payment against its own arithmetic. A settlement at `rate` charges each
//! open position `qty × mark × rate` at the symbol's mark: a long pays and a short receives
//! when the rate is positive, the other way round when it is negative. The payment is
//! rounded half away from zero to nine decimals (the venue's money precision), and the
//! wallet moves by exactly the rounded amount, so a row's `qty` and the change of `balance`
//! always agree. Isolated positions pay from the wallet too: their margin is left as it was.
//!
//! Each payment is one row in the documented live shape ([WJ] `FundingHistoryEntry`):
//! `{id, user, asset:"DUSD", symbol, qty, txn_type:"funding_fee", created_at, updated_at}`,
//! `qty` signed (negative = paid), no `transact_time` (absent live). Row ids increase across
//! the venue. `query_funding_history` answers a bare array (live), newest first, `last_id`
//! paging toward older rows like the other lists.

use serde_json::{Value, json};

use super::account::MONEY;
use super::{Engine, Reject, Who};
use crate::clock::iso8601_utc_us;
use crate::decimal::Dec;

/// Funding row ids start far from order and trade ids, so a test mixing them up fails.
pub(super) const FIRST_FUNDING_ID: u64 = 30_000_000_001;

/// One funding payment of an account.
#[derive(Clone, Debug)]
pub(crate) struct FundingRow {
    pub id: u64,
    pub symbol: usize,
    /// Signed: negative = paid by the account.
    pub qty: Dec,
    pub at_us: i64,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct FundingFilter {
    pub symbol: Option<String>,
    pub start_us: Option<i64>,
    pub end_us: Option<i64>,
    pub last_id: Option<u64>,
    pub limit: usize,
}

impl Engine {
    /// Settles funding at `rate` now, on `symbol` or on every symbol: one row per open
    /// position of every account (see the module doc), then one balance event (pushed on
    /// the account stream) per account that paid or received. Returns the rows written.
    pub(crate) fn settle_funding(&mut self, symbol: Option<&str>, rate: Dec, now_us: i64) -> Result<usize, Reject> {
        let only = symbol.map(|s| self.symbol_index(s)).transpose()?;
        // Accounts in a fixed order, so ids follow the same order on every run.
        let mut names: Vec<String> = self.accounts.keys().cloned().collect();
        names.sort_unstable();
        let mut touched = Vec::new();
        let mut rows = 0;
        for name in names {
            let account = self.accounts.get_mut(&name).expect("a listed account");
            let mut indices: Vec<usize> = account
                .positions
                .iter()
                .filter(|(i, p)| !p.qty.is_zero() && only.is_none_or(|s| **i == s))
                .map(|(i, _)| *i)
                .collect();
            if indices.is_empty() {
                continue;
            }
            indices.sort_unstable();
            for index in indices {
                let qty = account.positions[&index].qty;
                let exact = -qty.mul(self.markets[index].mark).mul(rate);
                let paid = Dec::parse(&exact.fixed(MONEY)).expect("a fixed decimal parses");
                account.wallet += paid;
                account.funding.push(FundingRow { id: self.next_funding_id, symbol: index, qty: paid, at_us: now_us });
                self.next_funding_id += 1;
                rows += 1;
            }
            touched.push(name);
        }
        for name in touched {
            self.balance_event(&name);
        }
        Ok(rows)
    }

    /// `query_funding_history`: the account's funding rows, filtered and paged, as a bare
    /// array.
    pub(crate) fn funding_history(&self, who: Who<'_>, f: &FundingFilter) -> Result<Value, Reject> {
        let symbol = f.symbol.as_deref().map(|s| self.symbol_index(s)).transpose()?;
        let Some(account) = self.accounts.get(who.account) else {
            return Ok(Value::Array(Vec::new()));
        };
        let rows = account
            .funding
            .iter()
            .rev()
            .filter(|r| symbol.is_none_or(|s| r.symbol == s))
            .filter(|r| f.start_us.is_none_or(|s| r.at_us >= s) && f.end_us.is_none_or(|e| r.at_us <= e))
            .filter(|r| f.last_id.is_none_or(|last| r.id < last))
            .take(f.limit)
            .map(|r| {
                let at = iso8601_utc_us(r.at_us);
                json!({
                    "id": r.id,
                    "user": account.user,
                    "asset": "DUSD",
                    "symbol": self.symbols[r.symbol].name,
                    "qty": r.qty.fixed(MONEY),
                    "txn_type": "funding_fee",
                    "created_at": at,
                    "updated_at": at,
                })
            })
            .collect();
        Ok(Value::Array(rows))
    }
}

#[cfg(test)]
mod tests {
    use crate::decimal::Dec;

    #[test]
    fn payments_are_rounded_to_money_and_signed_against_the_position() {
        let d = |s: &str| Dec::parse(s).unwrap();
        let pay = |qty: &str, mark: &str, rate: &str| {
            let exact = -d(qty).mul(d(mark)).mul(d(rate));
            exact.fixed(super::MONEY)
        };
        assert_eq!(pay("0.0100", "65000.50", "0.0001"), "-0.065000500");
        assert_eq!(pay("-0.0100", "65000.50", "0.0001"), "0.065000500");
        assert_eq!(pay("0.0100", "65000.50", "-0.0001"), "0.065000500");
        // 0.001 × 65000.25 × 0.00001 = 0.0006500025: rounded half away from zero.
        assert_eq!(pay("0.001", "65000.25", "0.00001"), "-0.000650003");
        assert_eq!(pay("-0.001", "65000.25", "0.00001"), "0.000650003");
        assert_eq!(pay("0.0001", "65000.5", "0.000125"), "-0.000812506");
    }
}
