//! Instrument rules (client option `symbol_rules`): an order is checked against the venue's
//! symbol list before it is sent — unknown or disabled symbol, price off the tick, qty off
//! the lot, below the minimum or above the maximum — and refused locally with
//! `PERPS_INVALID_ORDER` naming the rule and the allowed step. Nothing is sent.
//!
//! This module reads and checks the rules; `symbol_cache` keeps them and `symbol_fetch`
//! fetches them. Steps are `10^-price_tick_decimals` and `10^-qty_tick_decimals`; every
//! comparison is exact decimal arithmetic on the venue's text (`decimal`), never floats.

use crate::decimal::{Decimal, step_text};
use crate::endpoints::answer::{Entries, decimal_text};
use crate::error::excerpt;
use crate::order::OrderBody;
use serde_json::value::RawValue;
use std::time::Instant;

/// One symbol's rules, as the venue states them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolRule {
    pub symbol: String,
    pub enabled: bool,
    pub price_tick_decimals: Option<u32>,
    pub qty_tick_decimals: Option<u32>,
    pub min_order_qty: Option<String>,
    pub max_order_qty: Option<String>,
}

/// The venue's symbol list, and when each symbol's rules were read (a table can be put
/// together from answers read at different times: `merged`).
#[derive(Clone, Debug, Default)]
pub struct SymbolTable {
    rules: Vec<(SymbolRule, Instant)>,
}

/// What the table says about an order.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    /// The symbol is not in the table.
    Unknown,
    /// Refused: the message names the rule and the allowed step.
    Refused(String),
}

impl SymbolTable {
    /// Read a `query_symbol_info` answer, read from the venue now: a bare array of symbol
    /// objects, or an object with the array under `result` or `data`. Integers and decimals
    /// may be strings or numbers.
    pub fn parse(body: &str) -> Result<SymbolTable, String> {
        SymbolTable::parse_read_at(body, Instant::now())
    }

    /// [`parse`](Self::parse) an answer read at `read_at`.
    pub fn parse_read_at(body: &str, read_at: Instant) -> Result<SymbolTable, String> {
        let list = symbol_list(body).ok_or("the answer is not a list of symbols")?;
        let mut rules = Vec::with_capacity(list.len());
        for (i, item) in list.iter().enumerate() {
            let entries: Entries<'_> =
                serde_json::from_str(item.get()).map_err(|_| format!("symbol {i} is not a JSON object"))?;
            let field = |name: &str| entries.0.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
            let symbol = field("symbol")
                .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
                .ok_or_else(|| format!("symbol {i} has no \"symbol\" string"))?;
            let decimals = |name: &str| -> Result<Option<u32>, String> {
                field(name)
                    .filter(|v| v.get() != "null")
                    .map(|v| {
                        decimal_text(v)
                            .and_then(|t| t.parse::<u32>().ok())
                            .filter(|d| *d <= 30)
                            .ok_or_else(|| format!("{symbol}: \"{name}\" is not a small integer"))
                    })
                    .transpose()
            };
            let quantity = |name: &str| -> Result<Option<String>, String> {
                field(name)
                    .filter(|v| v.get() != "null")
                    .map(|v| {
                        decimal_text(v)
                            .filter(|t| Decimal::parse(t).is_some())
                            .ok_or_else(|| format!("{symbol}: \"{name}\" is not a decimal"))
                    })
                    .transpose()
            };
            // `enabled` (documents) or `status: "trading"` (a live client); absent: enabled.
            // A status word of no known meaning leaves the order to the venue: refusing it
            // here would block trading on a word ("open", "TRADING") the venue meant as yes.
            let enabled = match field("enabled").map(RawValue::get) {
                Some("true" | "\"true\"") => true,
                Some("false" | "\"false\"") => false,
                _ => field("status")
                    .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
                    .is_none_or(|status| !says_closed(&status)),
            };
            let rule = SymbolRule {
                enabled,
                price_tick_decimals: decimals("price_tick_decimals")?,
                qty_tick_decimals: decimals("qty_tick_decimals")?,
                min_order_qty: quantity("min_order_qty")?,
                max_order_qty: quantity("max_order_qty")?,
                symbol,
            };
            rules.push((rule, read_at));
        }
        Ok(SymbolTable { rules })
    }

    pub fn rule(&self, symbol: &str) -> Option<&SymbolRule> {
        self.rules.iter().find(|(r, _)| r.symbol == symbol).map(|(r, _)| r)
    }

    /// When the rules of `symbol` were read from the venue; `None` when it is not listed.
    pub fn read_at(&self, symbol: &str) -> Option<Instant> {
        self.rules.iter().find(|(r, _)| r.symbol == symbol).map(|(_, at)| *at)
    }

    pub fn symbols(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|(r, _)| r.symbol.as_str())
    }

    /// This table with the symbols of `newer` (an answer for some symbols only) replaced or
    /// added, each with its own time of reading.
    pub fn merged(&self, newer: SymbolTable) -> SymbolTable {
        let mut rules = self.rules.clone();
        for (rule, at) in newer.rules {
            match rules.iter_mut().find(|(kept, _)| kept.symbol == rule.symbol) {
                // Answers land out of order: a rule read later than this one stays.
                Some((_, kept_at)) if *kept_at > at => {}
                Some(kept) => *kept = (rule, at),
                None => rules.push((rule, at)),
            }
        }
        SymbolTable { rules }
    }

    /// This table (a venue's answer for `asked` alone) with a symbol named `asked` in another
    /// case (`btc-usd`) named as asked: it answers for it, and is kept under the name the
    /// orders use.
    pub fn named_as(mut self, asked: &str) -> SymbolTable {
        for (rule, _) in &mut self.rules {
            if rule.symbol != asked && rule.symbol.eq_ignore_ascii_case(asked) {
                rule.symbol = asked.to_owned();
            }
        }
        self
    }

    /// The rules of this table read after `at`.
    pub fn read_after(&self, at: Instant) -> SymbolTable {
        SymbolTable { rules: self.rules.iter().filter(|(_, read)| *read > at).cloned().collect() }
    }

    /// This table without `symbol`'s rules.
    pub fn without(self, symbol: &str) -> SymbolTable {
        SymbolTable { rules: self.rules.into_iter().filter(|(r, _)| r.symbol != symbol).collect() }
    }

    /// Check a validated order.
    pub fn check(&self, order: &OrderBody) -> Verdict {
        let symbol = order.field("symbol").unwrap_or("");
        let Some(rule) = self.rule(symbol) else { return Verdict::Unknown };
        if !rule.enabled {
            return Verdict::Refused(format!("symbol \"{}\" is disabled on the venue (symbol rules)", excerpt(symbol)));
        }
        let decimal = |name: &str| order.field(name).and_then(|text| Decimal::parse(text).map(|d| (text, d)));
        if let Some(decimals) = rule.price_tick_decimals {
            for name in ["price", "tp_price", "sl_price"] {
                if let Some((text, value)) = decimal(name)
                    && value.fraction_digits() > u64::from(decimals)
                {
                    return Verdict::Refused(format!(
                        "\"{name}\" {text} is off the price tick of {symbol}: prices step by {} \
                         (price_tick_decimals {decimals})",
                        step_text(decimals)
                    ));
                }
            }
        }
        let Some((qty_text, qty)) = decimal("qty") else { return Verdict::Allowed };
        if let Some(decimals) = rule.qty_tick_decimals
            && qty.fraction_digits() > u64::from(decimals)
        {
            return Verdict::Refused(format!(
                "\"qty\" {qty_text} is off the lot of {symbol}: quantities step by {} (qty_tick_decimals {decimals})",
                step_text(decimals)
            ));
        }
        if let Some(min) = &rule.min_order_qty
            && Decimal::parse(min).is_some_and(|min| qty < min)
        {
            return Verdict::Refused(format!(
                "\"qty\" {qty_text} is below the minimum order quantity of {symbol}: {min} (min_order_qty)"
            ));
        }
        if let Some(max) = &rule.max_order_qty
            && Decimal::parse(max).is_some_and(|max| qty > max)
        {
            return Verdict::Refused(format!(
                "\"qty\" {qty_text} is above the maximum order quantity of {symbol}: {max} (max_order_qty)"
            ));
        }
        Verdict::Allowed
    }
}

/// The array of symbols in an answer: bare, or under `result` / `data`.
fn symbol_list(body: &str) -> Option<Vec<&RawValue>> {
    let text = body.trim_start();
    if text.starts_with('[') {
        return serde_json::from_str(body).ok();
    }
    let entries: Entries<'_> = serde_json::from_str(body).ok()?;
    let inner = entries.0.iter().find(|(k, _)| k == "result" || k == "data")?.1;
    serde_json::from_str(inner.get()).ok()
}

/// A symbol `status` that says no order is taken: halted, suspended, delisted and the like
/// (any case, `_` or `-` or a space between words).
fn says_closed(status: &str) -> bool {
    const CLOSED: &[&str] = &[
        "halt",
        "halted",
        "suspend",
        "suspended",
        "disabled",
        "delisted",
        "delisting",
        "closed",
        "paused",
        "maintenance",
        "inactive",
        "offline",
        "stopped",
        "settled",
        "expired",
    ];
    let word = status.trim().to_ascii_lowercase().replace(['-', ' '], "_");
    CLOSED.contains(&word.as_str())
}

/// Whether a venue refusal of an order may be about its symbol's rules, which the venue may
/// have changed: the price or qty tick (`… not follow price tick`) or the order qty's bounds
/// (`invalid order qty`, venue-api.md §3.1, §4.5). Every rule read before it is then read
/// again at its symbol's next order (`SymbolCache::mark_stale`). (A refusal of another kind
/// that matches costs a read: of the list once, or, from a venue read symbol by symbol, one
/// per symbol ordered afterwards — nothing more.)
pub fn is_rules_error(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    text.contains("tick") || text.contains("order qty")
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &str = r#"[
        {"symbol":"BTC-USD","price_tick_decimals":2,"qty_tick_decimals":4,"min_order_qty":"0.0001","max_order_qty":"100","enabled":true,"maker_fee":"0.0001"},
        {"symbol":"XAG-USD","price_tick_decimals":"3","qty_tick_decimals":1,"min_order_qty":0.5,"max_order_qty":1e4,"enabled":"true"},
        {"symbol":"OLD-USD","price_tick_decimals":2,"qty_tick_decimals":2,"status":"halted"}
    ]"#;

    #[test]
    fn a_status_word_disables_a_symbol_only_when_it_says_closed() {
        let enabled = |status: &str| {
            let info = format!(r#"[{{"symbol":"X","status":{}}}]"#, serde_json::json!(status));
            SymbolTable::parse(&info).unwrap().rule("X").unwrap().enabled
        };
        for open in ["trading", "TRADING", "open", "active", "Trading", "normal", "reduce_only", "pre-open", ""] {
            assert!(enabled(open), "{open}");
        }
        for closed in ["halted", "HALTED", "Suspended", "delisted", "Delisting", "maintenance", " paused ", "settled"] {
            assert!(!enabled(closed), "{closed}");
        }
        // `enabled` wins over the status word either way.
        let table = SymbolTable::parse(
            r#"[{"symbol":"A","enabled":false,"status":"trading"},{"symbol":"B","enabled":true,"status":"halted"}]"#,
        )
        .unwrap();
        assert_eq!((table.rule("A").unwrap().enabled, table.rule("B").unwrap().enabled), (false, true));
    }

    fn order(fields: &str) -> OrderBody {
        crate::order::validate(&format!(
            r#"{{"symbol":"BTC-USD","side":"buy","order_type":"limit","time_in_force":"gtc","reduce_only":false,{fields}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn orders_are_checked_exactly() {
        let table = SymbolTable::parse(INFO).unwrap();
        assert_eq!(table.check(&order(r#""qty":"0.0100","price":"65000.10""#)), Verdict::Allowed);
        assert_eq!(table.check(&order(r#""qty":"100","price":"65000""#)), Verdict::Allowed);
        let refused = |fields: &str| match table.check(&order(fields)) {
            Verdict::Refused(m) => m,
            other => panic!("{fields}: {other:?}"),
        };
        assert!(
            refused(r#""qty":"0.01","price":"65000.105""#)
                .contains("off the price tick of BTC-USD: prices step by 0.01")
        );
        assert!(refused(r#""qty":"0.01","price":"65000","tp_price":"1.001""#).contains("\"tp_price\""));
        assert!(
            refused(r#""qty":"0.00001","price":"65000""#).contains("off the lot of BTC-USD: quantities step by 0.0001")
        );
        assert!(
            refused(r#""qty":"100.0001","price":"65000""#).contains("above the maximum order quantity of BTC-USD: 100")
        );
        let xag = SymbolTable::parse(INFO).unwrap();
        let o = crate::order::validate(
            r#"{"symbol":"XAG-USD","side":"sell","order_type":"market","qty":"0.4","time_in_force":"ioc","reduce_only":false}"#,
        )
        .unwrap();
        assert!(
            matches!(xag.check(&o), Verdict::Refused(m) if m.contains("below the minimum order quantity of XAG-USD: 0.5"))
        );
        let o = crate::order::validate(
            r#"{"symbol":"XAG-USD","side":"sell","order_type":"market","qty":"10000.0","time_in_force":"ioc","reduce_only":false}"#,
        )
        .unwrap();
        assert_eq!(xag.check(&o), Verdict::Allowed, "1e4 from a JSON number compares exactly");
        let o = crate::order::validate(
            r#"{"symbol":"OLD-USD","side":"sell","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":false}"#,
        )
        .unwrap();
        assert!(matches!(table.check(&o), Verdict::Refused(m) if m.contains("disabled")));
        let o = crate::order::validate(
            r#"{"symbol":"ETH-USD","side":"sell","order_type":"market","qty":"1","time_in_force":"ioc","reduce_only":false}"#,
        )
        .unwrap();
        assert_eq!(table.check(&o), Verdict::Unknown);
    }

    #[test]
    fn envelopes_and_bad_lists() {
        let wrapped = format!(r#"{{"code":0,"result":{INFO}}}"#);
        let now = Instant::now();
        let (wrapped, bare) =
            (SymbolTable::parse_read_at(&wrapped, now).unwrap(), SymbolTable::parse_read_at(INFO, now).unwrap());
        assert_eq!(wrapped.rules, bare.rules);
        assert!(SymbolTable::parse(r#"{"symbol":"BTC-USD"}"#).is_err());
        assert!(SymbolTable::parse(r#"[{"price_tick_decimals":2}]"#).unwrap_err().contains("no \"symbol\""));
        assert!(
            SymbolTable::parse(r#"[{"symbol":"X","qty_tick_decimals":-1}]"#).unwrap_err().contains("qty_tick_decimals")
        );
        assert!(SymbolTable::parse(r#"[{"symbol":"X","min_order_qty":"abc"}]"#).unwrap_err().contains("min_order_qty"));
    }

    #[test]
    fn a_merged_table_keeps_each_symbols_time_of_reading() {
        let then = Instant::now();
        let later = then + std::time::Duration::from_secs(61);
        let table = SymbolTable::parse_read_at(INFO, then).unwrap();
        let newer =
            SymbolTable::parse_read_at(r#"[{"symbol":"BTC-USD","qty_tick_decimals":3},{"symbol":"SOL-USD"}]"#, later)
                .unwrap();
        let merged = table.merged(newer);
        assert_eq!(merged.symbols().collect::<Vec<_>>(), ["BTC-USD", "XAG-USD", "OLD-USD", "SOL-USD"]);
        assert_eq!(merged.rule("BTC-USD").unwrap().qty_tick_decimals, Some(3), "the newer rule replaces the older");
        assert_eq!(
            (merged.read_at("BTC-USD"), merged.read_at("XAG-USD"), merged.read_at("ETH-USD")),
            (Some(later), Some(then), None)
        );
        // An answer read earlier, landing later, leaves the later rule in place.
        let late =
            merged.merged(SymbolTable::parse_read_at(r#"[{"symbol":"BTC-USD","qty_tick_decimals":1}]"#, then).unwrap());
        assert_eq!(late.rule("BTC-USD").unwrap().qty_tick_decimals, Some(3));
        assert_eq!(late.read_at("BTC-USD"), Some(later));
    }
}
