//! `GET /api/kline/history` (venue-api.md §1.5): price bars in the column shape of
//! TradingView's UDF `history` answer, `{"s":"ok","t":[…],"o":[…],"h":[…],"l":[…],"c":[…],
//! "v":[…]}`, with JSON numbers, built from every account's fills of the symbol (the
//! sandbox's only trades).
//!
//! - Resolutions, as [DOC-A]'s reference lists them: `1T` (one bar per fill), `3S` (three
//!   seconds), `1`, `5`, `15`, `60` (minutes), `1D` (UTC days), `1W` (weeks from Monday 00:00
//!   UTC), `1M` (calendar months, UTC). Anything else is refused (the `30`, `240`, `720` of
//!   [WJ-doc] have no other source, venue-api.md §6.7).
//! - A bar's `t` is its start in Unix seconds (a `1T` bar's, its fill's second, so two fills in
//!   one second are two bars with the same `t`); `v` is the base quantity traded. Only bars
//!   with fills exist: TradingView draws the gaps itself.
//! - The range is UDF's: the bars whose start is at or after `from` and before `to`. With
//!   `countback`, the last `countback` bars starting before `to`, whatever `from` says (UDF:
//!   countback takes priority over `from`).
//! - At most `MAX_BARS` bars, the latest of the range (a larger `countback` gets that many):
//!   a request for `1T` over years costs at most that much memory and work beyond the fills
//!   themselves. TradingView asks for older bars by moving `to` back, so it still gets them.
//! - No bar in the range: `{"s":"no_data"}`, UDF's answer (the sandbox does not add UDF's
//!   optional `nextTime`).

use serde_json::{Value, json};

use super::{Engine, Reject};
use crate::clock::month_start;
use crate::decimal::Dec;

/// The most bars one answer holds.
pub(crate) const MAX_BARS: usize = 10_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// One bar per fill (`1T`).
    Tick,
    /// Bars of a fixed number of seconds (`3S`, and the minutes as 60, 300, 900, 3600).
    Seconds(i64),
    Day,
    Week,
    Month,
}

impl Resolution {
    /// The documented names, in the order the docs list them.
    pub(crate) const NAMES: &'static [&'static str] = &["1T", "3S", "1", "5", "15", "60", "1D", "1W", "1M"];

    pub(crate) fn parse(name: &str) -> Option<Resolution> {
        Some(match name {
            "1T" => Resolution::Tick,
            "3S" => Resolution::Seconds(3),
            // A bare number is minutes (TradingView's convention).
            "1" | "5" | "15" | "60" => Resolution::Seconds(60 * name.parse::<i64>().ok()?),
            "1D" => Resolution::Day,
            "1W" => Resolution::Week,
            "1M" => Resolution::Month,
            _ => return None,
        })
    }

    /// The start (Unix seconds) of the bar that holds second `t`.
    fn bar_start(self, t: i64) -> i64 {
        let day = t.div_euclid(86_400);
        match self {
            Resolution::Tick => t,
            Resolution::Seconds(width) => t - t.rem_euclid(width),
            Resolution::Day => day * 86_400,
            // 1970-01-01 was a Thursday: day + 3 counts from a Monday.
            Resolution::Week => (day - (day + 3).rem_euclid(7)) * 86_400,
            Resolution::Month => month_start(day) * 86_400,
        }
    }
}

/// Which bars a request wants (see the module doc).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BarRange {
    pub from: i64,
    pub to: i64,
    pub countback: Option<usize>,
}

#[derive(Debug, PartialEq)]
struct Bar {
    t: i64,
    o: Dec,
    h: Dec,
    l: Dec,
    c: Dec,
    v: Dec,
}

/// The bars of `fills` (`(second, price, qty)`, oldest first) in `range`, oldest first.
/// Walks back from the newest fill and stops at the bar limit or before `from`, so the work
/// is bounded by the fills in the range, and the memory by `MAX_BARS`.
fn bars(fills: impl DoubleEndedIterator<Item = (i64, Dec, Dec)>, resolution: Resolution, range: BarRange) -> Vec<Bar> {
    let limit = range.countback.unwrap_or(MAX_BARS).min(MAX_BARS);
    let mut bars: Vec<Bar> = Vec::new();
    for (second, price, qty) in fills.rev() {
        let start = resolution.bar_start(second);
        if start >= range.to {
            continue;
        }
        if range.countback.is_none() && start < range.from {
            break;
        }
        match bars.last_mut() {
            // An earlier fill of the bar being built: it opened the bar (walking back).
            Some(bar) if bar.t == start && resolution != Resolution::Tick => {
                bar.o = price;
                bar.h = bar.h.max(price);
                bar.l = bar.l.min(price);
                bar.v += qty;
            }
            _ => {
                if bars.len() == limit {
                    break;
                }
                bars.push(Bar { t: start, o: price, h: price, l: price, c: price, v: qty });
            }
        }
    }
    bars.reverse();
    bars
}

impl Engine {
    /// `kline/history` for a listed symbol.
    pub(crate) fn kline_history(&self, symbol: &str, resolution: Resolution, range: BarRange) -> Result<Value, Reject> {
        let index = self.symbol_index(symbol)?;
        let fills = self.symbol_fills(index);
        let bars = bars(fills.iter().map(|f| (f.at_us.div_euclid(1_000_000), f.price, f.qty)), resolution, range);
        if bars.is_empty() {
            return Ok(json!({"s": "no_data"}));
        }
        let column = |value: fn(&Bar) -> Dec| bars.iter().map(|b| value(b).to_f64()).collect::<Vec<f64>>();
        Ok(json!({
            "s": "ok",
            "t": bars.iter().map(|b| b.t).collect::<Vec<i64>>(),
            "o": column(|b| b.o),
            "h": column(|b| b.h),
            "l": column(|b| b.l),
            "c": column(|b| b.c),
            "v": column(|b| b.v),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Dec {
        Dec::parse(s).unwrap()
    }

    /// 2025-08-11T00:00:00Z, a Monday.
    const MONDAY: i64 = 1_754_870_400;

    #[test]
    fn bars_start_on_their_grid() {
        let at = MONDAY + 3 * 3600 + 35 * 60 + 25; // 03:35:25
        let start = |name: &str, t: i64| Resolution::parse(name).unwrap().bar_start(t);
        assert_eq!(start("1T", at), at);
        assert_eq!(start("3S", at), at - 1);
        assert_eq!(start("1", at), at - 25);
        assert_eq!(start("5", at), at - 25);
        assert_eq!(start("15", at), at - 5 * 60 - 25);
        assert_eq!(start("60", at), MONDAY + 3 * 3600);
        assert_eq!(start("1D", at), MONDAY);
        assert_eq!(start("1W", at), MONDAY);
        assert_eq!(start("1W", MONDAY + 6 * 86_400 + 86_399), MONDAY, "Sunday 23:59:59 is the same week");
        assert_eq!(start("1W", MONDAY - 1), MONDAY - 7 * 86_400);
        // 2025-08-01T00:00:00Z; 2024-02-29T12:00:00Z is in the month from 2024-02-01.
        assert_eq!(start("1M", at), 1_754_006_400);
        assert_eq!(start("1M", 1_709_208_000), 1_706_745_600);
        for bad in ["", "30", "240", "1m", "1h", "D", "1d", "2T", "1S", "01"] {
            assert_eq!(Resolution::parse(bad), None, "{bad:?}");
        }
        assert!(Resolution::NAMES.iter().all(|n| Resolution::parse(n).is_some()));
    }

    #[test]
    fn fills_make_ohlcv_bars_in_the_range() {
        let fills =
            [(MONDAY + 5, "10", "1"), (MONDAY + 20, "12", "2"), (MONDAY + 50, "9", "1"), (MONDAY + 70, "11", "3")];
        let fills: Vec<(i64, Dec, Dec)> = fills.iter().map(|&(t, p, q)| (t, d(p), d(q))).collect();
        let minute = Resolution::parse("1").unwrap();
        let all = BarRange { from: 0, to: i64::MAX, countback: None };
        let got = bars(fills.iter().copied(), minute, all);
        let bar = |t, o, h, l, c, v| Bar { t, o: d(o), h: d(h), l: d(l), c: d(c), v: d(v) };
        assert_eq!(got, [bar(MONDAY, "10", "12", "9", "9", "4"), bar(MONDAY + 60, "11", "11", "11", "11", "3")]);
        // `to` is excluded, `from` included; countback ignores `from`.
        let first = BarRange { from: MONDAY, to: MONDAY + 60, countback: None };
        assert_eq!(bars(fills.iter().copied(), minute, first).len(), 1);
        let second = BarRange { from: MONDAY + 60, to: MONDAY + 61, countback: None };
        assert_eq!(bars(fills.iter().copied(), minute, second)[0].t, MONDAY + 60);
        let last = BarRange { from: i64::MAX, to: i64::MAX, countback: Some(1) };
        assert_eq!(bars(fills.iter().copied(), minute, last)[0].t, MONDAY + 60);
        assert_eq!(bars(fills.iter().copied(), Resolution::Tick, all).len(), 4);
    }

    #[test]
    fn at_most_max_bars_the_latest() {
        let fills: Vec<(i64, Dec, Dec)> = (0..MAX_BARS as i64 + 5000).map(|i| (i, Dec::from_int(i), d("1"))).collect();
        let all = BarRange { from: 0, to: i64::MAX, countback: None };
        let got = bars(fills.iter().copied(), Resolution::Tick, all);
        assert_eq!(got.len(), MAX_BARS);
        assert_eq!((got[0].t, got.last().unwrap().t), (5000, MAX_BARS as i64 + 4999));
        let many = BarRange { countback: Some(usize::MAX), ..all };
        assert_eq!(bars(fills.iter().copied(), Resolution::Tick, many).len(), MAX_BARS);
    }
}
