//! The instruments the venue lists: their `query_symbol_info` metadata and the rules an order
//! must follow (tick, lot, minimum and maximum quantity, leverage), plus the sandbox's own
//! settings for each synthetic market (its starting mark, level spacing and level size).
//!
//! The default set (`config/symbols.json`, embedded) is BTC-USD, ETH-USD and XAG-USD; a user
//! replaces it with `--symbols FILE` (a JSON array of the same objects).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::decimal::{Dec, DecError};

const DEFAULT_SYMBOLS: &str = include_str!("../config/symbols.json");

/// One instrument as written in the symbols file: the venue's `query_symbol_info` fields
/// (decimals as strings, as the venue sends them) plus a `sandbox` block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SymbolSpec {
    pub symbol: String,
    pub base_asset: String,
    pub quote_asset: String,
    pub base_decimals: u32,
    pub quote_decimals: u32,
    /// Tick = 10^-price_tick_decimals.
    pub price_tick_decimals: u32,
    /// Lot = 10^-qty_tick_decimals.
    pub qty_tick_decimals: u32,
    pub min_order_qty: String,
    pub max_order_qty: String,
    pub max_position_size: String,
    pub max_open_orders: String,
    pub def_leverage: String,
    pub max_leverage: String,
    pub maker_fee: String,
    pub taker_fee: String,
    pub price_cap_ratio: String,
    pub price_floor_ratio: String,
    pub depth_ticks: String,
    pub enabled: bool,
    pub sandbox: MarketSpec,
}

/// How the sandbox simulates one symbol's market.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarketSpec {
    /// The mark price at start (on the tick).
    pub mark: String,
    /// Distance between two book levels, and the size of one step of the walk (a multiple
    /// of the tick). The best ask is half a step above the mark, the best bid half below.
    pub level_step: String,
    /// Typical quantity of one book level (each level gets 0.5–1.5 × this, on the lot).
    pub level_qty: String,
}

impl SymbolSpec {
    /// BTC-USD, ETH-USD and XAG-USD (`sandbox/config/symbols.json`).
    pub fn defaults() -> Vec<SymbolSpec> {
        SymbolSpec::list_from_json(DEFAULT_SYMBOLS).expect("the embedded symbols file is valid")
    }

    /// A symbols file: a JSON array of symbol objects. Checked like `SandboxConfig` is at
    /// start: every rule must be usable (positive decimals on their steps, a mark on the tick).
    pub fn list_from_json(text: &str) -> Result<Vec<SymbolSpec>, String> {
        let list: Vec<SymbolSpec> = serde_json::from_str(text).map_err(|e| format!("symbols file: {e}"))?;
        for spec in &list {
            Symbol::from_spec(spec)?;
        }
        Ok(list)
    }
}

/// A symbol's rules with the decimals parsed, as the matching engine uses them.
#[derive(Clone, Debug)]
pub(crate) struct Symbol {
    pub name: String,
    pub tick: Dec,
    pub lot: Dec,
    pub price_decimals: u32,
    pub qty_decimals: u32,
    pub min_qty: Dec,
    pub max_qty: Dec,
    pub max_position: Dec,
    pub max_open_orders: usize,
    pub def_leverage: u32,
    pub max_leverage: u32,
    pub maker_fee: Dec,
    pub taker_fee: Dec,
    pub enabled: bool,
    pub mark: Dec,
    pub level_step: Dec,
    pub level_qty: Dec,
    pub spec: SymbolSpec,
}

impl Symbol {
    pub(crate) fn from_spec(s: &SymbolSpec) -> Result<Symbol, String> {
        let name = &s.symbol;
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
            return Err(format!("symbol {name:?}: letters, digits, '-' and '_' only"));
        }
        if s.price_tick_decimals > 9 || s.qty_tick_decimals > 9 {
            return Err(format!("{name}: price_tick_decimals and qty_tick_decimals must be 0..=9"));
        }
        let (tick, lot) = (Dec::step(s.price_tick_decimals), Dec::step(s.qty_tick_decimals));
        let positive = |field: &str, text: &str| -> Result<Dec, String> {
            match Dec::parse(text) {
                Ok(d) if d.is_positive() => Ok(d),
                Ok(_) | Err(DecError::Malformed | DecError::TooPrecise | DecError::TooLarge) => {
                    Err(format!("{name}: {field} must be a positive decimal string, not {text:?}"))
                }
            }
        };
        let fee = |field: &str, text: &str| -> Result<Dec, String> {
            match Dec::parse(text) {
                Ok(d) if !d.is_negative() => Ok(d),
                _ => Err(format!("{name}: {field} must be a decimal string ≥ 0, not {text:?}")),
            }
        };
        let whole = |field: &str, text: &str| -> Result<u32, String> {
            text.parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{name}: {field} must be a positive integer string, not {text:?}"))
        };
        let on_step = |field: &str, value: Dec, step: Dec, what: &str| -> Result<Dec, String> {
            if value.is_multiple_of(step) {
                Ok(value)
            } else {
                Err(format!("{name}: {field} {value} is not a multiple of the {what} {step}"))
            }
        };
        let min_qty = on_step("min_order_qty", positive("min_order_qty", &s.min_order_qty)?, lot, "lot")?;
        let max_qty = on_step("max_order_qty", positive("max_order_qty", &s.max_order_qty)?, lot, "lot")?;
        if min_qty > max_qty {
            return Err(format!("{name}: min_order_qty is above max_order_qty"));
        }
        let (def_leverage, max_leverage) =
            (whole("def_leverage", &s.def_leverage)?, whole("max_leverage", &s.max_leverage)?);
        if def_leverage > max_leverage {
            return Err(format!("{name}: def_leverage is above max_leverage"));
        }
        let mark = on_step("sandbox.mark", positive("sandbox.mark", &s.sandbox.mark)?, tick, "tick")?;
        let level_step =
            on_step("sandbox.level_step", positive("sandbox.level_step", &s.sandbox.level_step)?, tick, "tick")?;
        let level_qty = on_step("sandbox.level_qty", positive("sandbox.level_qty", &s.sandbox.level_qty)?, lot, "lot")?;
        if mark <= level_step.mul(Dec::from_int(11)) {
            return Err(format!("{name}: sandbox.mark must be above 11 level steps (ten bid levels above zero)"));
        }
        Ok(Symbol {
            name: name.clone(),
            tick,
            lot,
            price_decimals: s.price_tick_decimals,
            qty_decimals: s.qty_tick_decimals,
            min_qty,
            max_qty,
            max_position: positive("max_position_size", &s.max_position_size)?,
            max_open_orders: whole("max_open_orders", &s.max_open_orders)? as usize,
            def_leverage,
            max_leverage,
            maker_fee: fee("maker_fee", &s.maker_fee)?,
            taker_fee: fee("taker_fee", &s.taker_fee)?,
            enabled: s.enabled,
            mark,
            level_step,
            level_qty,
            spec: s.clone(),
        })
    }

    pub(crate) fn price_text(&self, price: Dec) -> String {
        price.fixed(self.price_decimals)
    }

    pub(crate) fn qty_text(&self, qty: Dec) -> String {
        qty.fixed(self.qty_decimals)
    }

    /// The `query_symbol_info` object: the file's venue fields, plus `status` (`trading` or
    /// `disabled`: [WJ]'s decoder requires it) and the listing times.
    pub(crate) fn info_json(&self, listed_at: &str) -> Value {
        let mut v = serde_json::to_value(&self.spec).expect("a SymbolSpec serialises");
        let o = v.as_object_mut().expect("an object");
        o.remove("sandbox");
        o.insert("status".into(), json!(if self.enabled { "trading" } else { "disabled" }));
        o.insert("created_at".into(), json!(listed_at));
        o.insert("updated_at".into(), json!(listed_at));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fit_the_library_tests_orders() {
        let specs = SymbolSpec::defaults();
        let names: Vec<&str> = specs.iter().map(|s| s.symbol.as_str()).collect();
        assert_eq!(names, ["BTC-USD", "ETH-USD", "XAG-USD"]);
        let btc = Symbol::from_spec(&specs[0]).unwrap();
        let d = |s| Dec::parse(s).unwrap();
        assert!(d("65000").is_multiple_of(btc.tick) && d("0.01").is_multiple_of(btc.lot));
        assert!(btc.min_qty <= d("0.01"));
        assert_eq!(btc.mark, d("65000"));
    }

    #[test]
    fn bad_files_are_refused_with_the_field_named() {
        let base = serde_json::to_value(&SymbolSpec::defaults()[0]).unwrap();
        let with = |path: &[&str], value: Value| {
            let mut v = base.clone();
            let mut at = &mut v;
            for p in &path[..path.len() - 1] {
                at = &mut at[*p];
            }
            at[path[path.len() - 1]] = value;
            SymbolSpec::list_from_json(&json!([v]).to_string()).unwrap_err()
        };
        assert!(with(&["min_order_qty"], json!("0.00001")).contains("min_order_qty"));
        assert!(with(&["max_order_qty"], json!("-1")).contains("max_order_qty"));
        assert!(with(&["sandbox", "mark"], json!("65000.001")).contains("sandbox.mark"));
        assert!(with(&["def_leverage"], json!("50")).contains("def_leverage"));
        assert!(with(&["symbol"], json!("BTC USD")).contains("symbol"));
        assert!(with(&["price_tick_decimals"], json!(12)).contains("price_tick_decimals"));
        assert!(SymbolSpec::list_from_json(r#"[{"symbol":"X"}]"#).unwrap_err().contains("missing field"));
    }
}
