//! An order as the venue keeps it, and its JSON (the order object of `query_order`).

use serde_json::{Value, json};

use crate::clock::iso8601_utc_us;
use crate::decimal::Dec;
use crate::symbols::Symbol;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Buy,
    Sell,
}

impl Side {
    pub(crate) fn parse(s: &str) -> Option<Side> {
        match s {
            "buy" => Some(Side::Buy),
            "sell" => Some(Side::Sell),
            _ => None,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Side::Buy => "buy",
            Side::Sell => "sell",
        }
    }

    /// +1 for buy, −1 for sell: the sign a fill adds to the position.
    pub(crate) fn sign(self) -> Dec {
        match self {
            Side::Buy => Dec::from_int(1),
            Side::Sell => Dec::from_int(-1),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OrderType {
    Limit,
    Market,
}

impl OrderType {
    pub(crate) fn parse(s: &str) -> Option<OrderType> {
        match s {
            "limit" => Some(OrderType::Limit),
            "market" => Some(OrderType::Market),
            _ => None,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OrderType::Limit => "limit",
            OrderType::Market => "market",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tif {
    Gtc,
    Ioc,
    Alo,
}

impl Tif {
    pub(crate) fn parse(s: &str) -> Option<Tif> {
        match s {
            "gtc" => Some(Tif::Gtc),
            "ioc" => Some(Tif::Ioc),
            "alo" => Some(Tif::Alo),
            _ => None,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Tif::Gtc => "gtc",
            Tif::Ioc => "ioc",
            Tif::Alo => "alo",
        }
    }
}

/// The statuses of the venue's reference. A partial fill is `Open` with `fill_qty > 0`.
/// `untriggered` (TP/SL waiting for their trigger) is never produced: TP/SL are not simulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Open,
    Canceled,
    Filled,
    Rejected,
    Untriggered,
}

impl Status {
    pub(crate) fn parse(s: &str) -> Option<Status> {
        match s {
            "open" => Some(Status::Open),
            "canceled" => Some(Status::Canceled),
            "filled" => Some(Status::Filled),
            "rejected" => Some(Status::Rejected),
            "untriggered" => Some(Status::Untriggered),
            _ => None,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Canceled => "canceled",
            Status::Filled => "filled",
            Status::Rejected => "rejected",
            Status::Untriggered => "untriggered",
        }
    }

    /// Still able to trade or be cancelled.
    pub(crate) fn is_live(self) -> bool {
        matches!(self, Status::Open | Status::Untriggered)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MarginMode {
    Cross,
    Isolated,
}

impl MarginMode {
    pub(crate) fn parse(s: &str) -> Option<MarginMode> {
        match s {
            "cross" => Some(MarginMode::Cross),
            "isolated" => Some(MarginMode::Isolated),
            _ => None,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            MarginMode::Cross => "cross",
            MarginMode::Isolated => "isolated",
        }
    }
}

/// What a client asks for in `new_order`, checked for shape (not yet against the symbol).
#[derive(Clone, Debug)]
pub(crate) struct NewOrder {
    pub symbol: String,
    pub side: Side,
    pub order_type: OrderType,
    pub qty: Dec,
    pub price: Option<Dec>,
    /// `None` only for a market order sent without it (accepted as the venue does).
    pub tif: Option<Tif>,
    pub reduce_only: bool,
    pub cl_ord_id: Option<String>,
    pub margin_mode: Option<MarginMode>,
    pub leverage: Option<u32>,
}

#[derive(Clone, Debug)]
pub(crate) struct Order {
    pub id: u64,
    pub account: String,
    pub user: String,
    pub cl_ord_id: String,
    pub symbol: usize,
    pub side: Side,
    pub order_type: OrderType,
    pub tif: Tif,
    /// `None` for market orders.
    pub price: Option<Dec>,
    pub qty: Dec,
    pub fill_qty: Dec,
    /// Σ price × qty of the fills, for the average fill price.
    pub fill_value: Dec,
    pub status: Status,
    pub reduce_only: bool,
    pub leverage: u32,
    pub position_id: u64,
    pub remark: String,
    pub created_us: i64,
    pub updated_us: i64,
}

impl Order {
    pub(crate) fn remaining(&self) -> Dec {
        self.qty - self.fill_qty
    }

    /// Margin held for the unfilled part while the order rests: price × remaining / leverage.
    pub(crate) fn locked(&self) -> Dec {
        match (self.status.is_live(), self.price) {
            (true, Some(p)) => p.mul(self.remaining()).div(Dec::from_int(i64::from(self.leverage))),
            _ => Dec::ZERO,
        }
    }

    /// The venue's order object (venue-api.md §1.4).
    pub(crate) fn to_json(&self, symbol: &Symbol) -> Value {
        let avg = if self.fill_qty.is_zero() { Dec::ZERO } else { self.fill_value.div(self.fill_qty) };
        let leverage = Dec::from_int(i64::from(self.leverage));
        json!({
            "id": self.id,
            "cl_ord_id": self.cl_ord_id,
            "symbol": symbol.name,
            "side": self.side.as_str(),
            "order_type": self.order_type.as_str(),
            "time_in_force": self.tif.as_str(),
            "status": self.status.as_str(),
            "price": symbol.price_text(self.price.unwrap_or(Dec::ZERO)),
            "qty": symbol.qty_text(self.qty),
            "fill_qty": symbol.qty_text(self.fill_qty),
            "fill_avg_price": symbol.price_text(avg),
            "leverage": leverage.plain(),
            "margin": self.fill_value.div(leverage).fixed(9),
            "avail_locked": self.locked().fixed(9),
            "reduce_only": self.reduce_only,
            "position_id": self.position_id,
            "liq_id": 0,
            "created_block": -1,
            "closed_block": -1,
            "payload": null,
            "remark": self.remark,
            "source": "user",
            "user": self.user,
            "created_at": iso8601_utc_us(self.created_us),
            "updated_at": iso8601_utc_us(self.updated_us),
        })
    }
}
