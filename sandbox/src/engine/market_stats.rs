//! What the venue reports about a symbol's trading as a whole: the 24-hour statistics, open
//! interest and funding of `query_symbol_market` and `query_market_overview` (venue-api.md
//! §1.5), from the sandbox's own state.
//!
//! - The 24 h figures come from every account's fills of the symbol (the sandbox's only
//!   trades) in the last 24 hours of the venue clock: high and low price, volume (base
//!   quantity), quote volume (Σ price × qty), and the price change from the first of those
//!   fills to the last, in percent.
//! - Open interest: the synthetic market is the other side of every user position, as one
//!   participant holding the opposite of the users' net position. Counting its position too,
//!   each side (all longs, or all shorts) then totals the larger of the users' long and short
//!   totals, which is what the venue reports as open interest (one side). Notional = open
//!   interest × mark.
//! - Funding: the sandbox charges none by itself (a test settles a rate of its choosing with
//!   the `funding` control, `engine::funding`), and says so: `funding_rate` "0". `next_funding_time`
//!   is the next 00:00, 08:00 or 16:00 UTC, in the form of the docs' example
//!   (`"2025-08-11T08:00:00Z"`, ISO 8601 to the second; the sandbox's other times carry
//!   microseconds, as the venue's examples of those fields do). The cadence is inferred from
//!   that one example (at 03:44 it names 08:00, which fits 8 hours, not 1 or 4); one public
//!   client assumes hourly funding, so the venue's real cadence is not known. Nothing is
//!   charged at that time.
//!
//! As in `query_symbol_price`: decimals are strings with the symbol's decimals (prices,
//! quantities) or nine places (money), and a price that needs a trade (`last_price`,
//! `high_price_24h`, `low_price_24h`) is `null` without one. A volume without trades is zero,
//! not null (nothing traded is a known quantity). `price_change_pct` is a JSON number, as
//! [DOC-A] documents it: 0 without a fill in the last 24 h.

use serde_json::{Value, json};

use super::account::MONEY;
use super::{Engine, Reject};
use crate::clock::{iso8601_utc_s, iso8601_utc_us};
use crate::decimal::Dec;

const DAY_US: i64 = 86_400_000_000;
/// Seconds between two (zero) fundings: see the module doc.
const FUNDING_INTERVAL_S: i64 = 8 * 3600;

/// A symbol's fills of the last 24 hours, summed up.
#[derive(Default)]
struct Day {
    first: Option<Dec>,
    last: Option<Dec>,
    high: Option<Dec>,
    low: Option<Dec>,
    volume: Dec,
    quote_volume: Dec,
}

impl Day {
    /// (last − first) / first × 100; 0 without fills.
    fn change_pct(&self) -> f64 {
        match (self.first, self.last) {
            (Some(first), Some(last)) if first.is_positive() => {
                (last - first).mul(Dec::from_int(100)).div(first).to_f64()
            }
            _ => 0.0,
        }
    }
}

/// The first funding time after `now_us`, on the 8-hour grid of UTC days.
fn next_funding_time(now_us: i64) -> String {
    let now_s = now_us.div_euclid(1_000_000);
    iso8601_utc_s((now_s.div_euclid(FUNDING_INTERVAL_S) + 1) * FUNDING_INTERVAL_S)
}

impl Engine {
    fn day(&self, index: usize, now_us: i64) -> Day {
        let since = now_us - DAY_US;
        let mut day = Day::default();
        for t in self.symbol_fills(index).into_iter().filter(|t| t.at_us > since) {
            day.first.get_or_insert(t.price);
            day.last = Some(t.price);
            day.high = Some(day.high.map_or(t.price, |h| h.max(t.price)));
            day.low = Some(day.low.map_or(t.price, |l| l.min(t.price)));
            day.volume += t.qty;
            day.quote_volume += t.price.mul(t.qty);
        }
        day
    }

    /// One side of the open positions of symbol `index` (see the module doc).
    fn open_interest(&self, index: usize) -> Dec {
        let (mut longs, mut shorts) = (Dec::ZERO, Dec::ZERO);
        for qty in self.accounts.values().filter_map(|a| a.positions.get(&index)).map(|p| p.qty) {
            if qty.is_positive() {
                longs += qty;
            } else {
                shorts -= qty;
            }
        }
        longs.max(shorts)
    }

    /// `query_symbol_market`: `query_symbol_price`'s prices with the spread as `[bid, ask]`,
    /// plus funding, the 24 h statistics and open interest.
    pub(crate) fn symbol_market(&self, symbol: &str, now_us: i64) -> Result<Value, Reject> {
        let index = self.symbol_index(symbol)?;
        let (s, m) = (&self.symbols[index], &self.markets[index]);
        let text = |p: Option<Dec>| p.map(|p| s.price_text(p));
        let (bid, ask, mid) = self.top_of_book(index);
        let day = self.day(index, now_us);
        Ok(json!({
            "base": s.spec.base_asset, "quote": s.spec.quote_asset, "symbol": s.name,
            "funding_rate": "0", "next_funding_time": next_funding_time(now_us),
            "index_price": s.price_text(m.mark), "mark_price": s.price_text(m.mark),
            "last_price": text(m.last_price), "mid_price": text(mid), "spread": [text(bid), text(ask)],
            "high_price_24h": text(day.high), "low_price_24h": text(day.low),
            "volume_24h": s.qty_text(day.volume),
            "open_interest": s.qty_text(self.open_interest(index)),
            "time": iso8601_utc_us(now_us),
        }))
    }

    /// `query_market_overview`: every listed symbol (disabled ones too, as
    /// `query_symbol_info` lists them), and the totals over them.
    pub(crate) fn market_overview(&self, now_us: i64) -> Value {
        let (mut notional_total, mut quote_volume_total) = (Dec::ZERO, Dec::ZERO);
        let time = iso8601_utc_us(now_us);
        let symbols: Vec<Value> = (0..self.symbols.len())
            .map(|index| {
                let (s, m) = (&self.symbols[index], &self.markets[index]);
                let day = self.day(index, now_us);
                let open_interest = self.open_interest(index);
                let notional = open_interest.mul(m.mark);
                notional_total += notional;
                quote_volume_total += day.quote_volume;
                json!({
                    "symbol": s.name, "base": s.spec.base_asset, "quote": s.spec.quote_asset,
                    "last_price": m.last_price.map(|p| s.price_text(p)), "mark_price": s.price_text(m.mark),
                    "funding_rate": "0",
                    "open_interest": s.qty_text(open_interest), "open_interest_notional": notional.fixed(MONEY),
                    "price_change_pct": day.change_pct(),
                    "volume_24h": s.qty_text(day.volume), "volume_quote_24h": day.quote_volume.fixed(MONEY),
                    "time": time,
                })
            })
            .collect();
        json!({
            "summary": {
                "open_interest_notional": notional_total.fixed(MONEY),
                "symbol_count": symbols.len(),
                "volume_quote_24h": quote_volume_total.fixed(MONEY),
            },
            "symbols": symbols,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn funding_falls_on_the_eight_hour_grid() {
        // 2025-08-11T03:44:40.922233Z, the docs' example: the next funding is at 08:00.
        assert_eq!(next_funding_time(1_754_883_880_922_233), "2025-08-11T08:00:00Z");
        // Exactly on a funding time: the next one.
        assert_eq!(next_funding_time(1_754_899_200_000_000), "2025-08-11T16:00:00Z");
        assert_eq!(next_funding_time(1_754_956_799_000_000), "2025-08-12T00:00:00Z");
    }

    #[test]
    fn the_change_is_in_percent_from_the_first_fill() {
        let d = |s: &str| Dec::parse(s).unwrap();
        let day = Day { first: Some(d("200")), last: Some(d("203")), ..Day::default() };
        assert_eq!(day.change_pct(), 1.5);
        assert_eq!(Day::default().change_pct(), 0.0);
    }
}
