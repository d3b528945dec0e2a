//! The shapes of the account pushes (venue-api.md §2.2, the docs' examples) from the engine's
//! journal events, which carry the REST shapes:
//! - `order`: the REST order object, as is;
//! - `trade`: the REST trade row, as is ([WJ] expects `id` and `order_id`);
//! - `position`: the documented fields only (no mark, no unrealised PnL, no side);
//! - `balance`: the wallet-level record (`account_type`, `token`, `free`, `total`, `locked`,
//!   `occupied`, …), not the unified REST balance.
//!
//! And the public trade print of a user fill (`public_trade`, undocumented: [WJ] reads
//! price, qty, time and the taker's side).

use serde_json::{Value, json};

use crate::clock::iso8601_utc_us;
use crate::decimal::Dec;
use crate::engine::events::{Channel, Event};

/// The position push's fields, in the docs' example.
const POSITION_FIELDS: &[&str] = &[
    "id",
    "symbol",
    "qty",
    "entry_price",
    "entry_value",
    "initial_margin",
    "leverage",
    "margin_mode",
    "margin_asset",
    "realized_pnl",
    "status",
    "created_at",
    "updated_at",
    "user",
];

/// Decimal places of the balance push's amounts (the docs show nine).
const MONEY: u32 = 9;

/// The `data` of an account push. `user` is the connection's signed-in user; `started_us`
/// the venue's start (the wallet record's `created_at`).
pub(crate) fn push_data(e: &Event, user: &str, started_us: i64, now_us: i64) -> Value {
    match e.channel {
        Channel::Order | Channel::Trade => e.data.clone(),
        Channel::Position => {
            let kept = POSITION_FIELDS.iter().filter_map(|k| Some((k.to_string(), e.data.get(*k)?.clone())));
            Value::Object(kept.collect())
        }
        Channel::Balance => wallet_record(&e.data, user, e.seq, started_us, now_us),
    }
}

/// The wallet-level balance record from the unified snapshot: `total` = the wallet balance,
/// `locked` = margin held by resting orders, `occupied` = margin held by positions (cross
/// margin + isolated balance), `free` = what is left. `version` grows with every change.
fn wallet_record(unified: &Value, user: &str, version: u64, started_us: i64, now_us: i64) -> Value {
    let amount = |k: &str| unified[k].as_str().and_then(|t| Dec::parse(t).ok()).unwrap_or(Dec::ZERO);
    let total = amount("balance");
    let locked = amount("locked");
    let occupied = amount("cross_margin") + amount("isolated_balance");
    json!({
        "account_type": "perps",
        "created_at": iso8601_utc_us(started_us),
        "free": (total - locked - occupied).fixed(MONEY),
        "id": user,
        "inbound": "0",
        "is_enabled": true,
        "kind": "user",
        "last_tx": "",
        "last_tx_updated_at": 0,
        "locked": locked.fixed(MONEY),
        "occupied": occupied.fixed(MONEY),
        "outbound": "0",
        "ref_id": 0,
        "token": "DUSD",
        "total": total.fixed(MONEY),
        "updated_at": iso8601_utc_us(now_us),
        "version": version,
        "wallet_id": user,
    })
}

/// The public print of a user fill: the taker's side (the user's, unless the user's order
/// was resting), price, qty and time; no account or order ids.
pub(crate) fn public_trade(e: &Event) -> Value {
    let side = e.data["side"].as_str().unwrap_or_default();
    let taker = match (side, e.maker) {
        ("buy", true) => "sell",
        ("sell", true) => "buy",
        (side, _) => side,
    };
    json!({
        "symbol": e.symbol,
        "price": e.data["price"],
        "qty": e.data["qty"],
        "side": taker,
        "is_buyer_taker": taker == "buy",
        "time": e.data["created_at"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(channel: Channel, data: Value, maker: bool) -> Event {
        Event { seq: 7, account: "a".into(), channel, symbol: Some("BTC-USD".into()), data, maker }
    }

    #[test]
    fn balance_is_the_wallet_record() {
        let unified = json!({"balance": "1000.5", "locked": "100", "cross_margin": "50", "isolated_balance": "25.5"});
        let data = push_data(&event(Channel::Balance, unified, false), "bsc_0xabc", 0, 1_000_000);
        assert_eq!(data["total"], "1000.500000000");
        assert_eq!(data["occupied"], "75.500000000");
        assert_eq!(data["free"], "825.000000000");
        assert_eq!(
            (&data["account_type"], &data["token"], &data["wallet_id"]),
            (&json!("perps"), &json!("DUSD"), &json!("bsc_0xabc"))
        );
        assert_eq!(data["version"], 7);
    }

    #[test]
    fn position_drops_mark_and_upnl() {
        let rest = json!({"id": 1, "symbol": "BTC-USD", "qty": "1", "mark_price": "2", "upnl": "3", "leverage": "10"});
        let data = push_data(&event(Channel::Position, rest, false), "u", 0, 0);
        assert_eq!(data, json!({"id": 1, "symbol": "BTC-USD", "qty": "1", "leverage": "10"}));
    }

    #[test]
    fn public_trade_names_the_taker() {
        let row = json!({"side": "buy", "price": "1", "qty": "2", "created_at": "t", "id": 9, "order_id": 8});
        assert_eq!(public_trade(&event(Channel::Trade, row.clone(), false))["side"], "buy");
        let maker = public_trade(&event(Channel::Trade, row, true));
        assert_eq!((&maker["side"], &maker["is_buyer_taker"]), (&json!("sell"), &json!(false)));
        assert!(maker.get("order_id").is_none());
    }
}
