//! Account reads (bearer token): orders, trades, positions, balance, position config,
//! funding history.
//! Parameters and limits as venue-api.md §1.4 documents them.

use serde_json::Value;

use super::Ctx;
use crate::engine::order::{OrderType, Side, Status};
use crate::engine::{FundingFilter, OrderFilter, OrderRef, Reject, TradeFilter, Who};
use crate::faults::Faults;
use crate::http::{Reply, error};
use crate::state::Session;

const STATUSES: &[&str] = &["open", "canceled", "filled", "rejected", "untriggered"];

pub(super) fn handle(ctx: &mut Ctx<'_>, name: &str, session: &Session, faults: &Faults) -> Reply {
    let who = Who { account: &session.account, user: &session.user };
    match answer(ctx, name, who, faults) {
        Ok(Ok(value)) => Reply::Json(200, value),
        Ok(Err(reject)) => error(reject.status, reject.message),
        Err(reply) => reply,
    }
}

/// `Err` for a malformed request, `Ok(Err)` for the engine's refusal (unknown symbol, 404).
fn answer(ctx: &mut Ctx<'_>, name: &str, who: Who<'_>, faults: &Faults) -> Result<Result<Value, Reject>, Reply> {
    let (shared, inc) = (ctx.shared, ctx.inc);
    Ok(match name {
        "query_order" => {
            let p = ctx.params(&["order_id", "cl_ord_id"])?;
            let target = match (p.id("order_id")?, p.text("cl_ord_id")?) {
                (Some(id), _) => OrderRef::Id(id),
                (None, Some(cl)) => OrderRef::ClOrdId(cl.to_owned()),
                (None, None) => return Err(error(400, "query_order needs order_id or cl_ord_id")),
            };
            shared.engine().order(who, &target)
        }
        "query_orders" => {
            let p = ctx.params(&["symbol", "status", "order_type", "start", "end", "last_id", "limit"])?;
            let filter = OrderFilter {
                symbol: p.text("symbol")?.map(str::to_owned),
                status: p.word("status", STATUSES, Status::parse)?,
                order_type: p.word("order_type", &["limit", "market"], OrderType::parse)?,
                start_us: p.time("start")?,
                end_us: p.time("end")?,
                last_id: p.id("last_id")?,
                limit: p.limit(100, 500)?,
            };
            shared.engine().orders(who, &filter)
        }
        "query_open_orders" => {
            let p = ctx.params(&["symbol", "limit"])?;
            let (symbol, limit) = (p.text("symbol")?, p.limit(500, 1200)?);
            let lag_us = i64::try_from(faults.open_orders_lag_ms.saturating_mul(1000)).unwrap_or(i64::MAX);
            let ended_since = shared.clock.now_us().saturating_sub(lag_us);
            shared.engine().open_orders(who, symbol, limit, (lag_us > 0).then_some(ended_since))
        }
        "query_trades" => {
            let p = ctx.params(&["symbol", "last_id", "side", "start", "end", "limit"])?;
            let filter = TradeFilter {
                symbol: p.text("symbol")?.map(str::to_owned),
                side: p.word("side", &["buy", "sell"], Side::parse)?,
                start_us: p.time("start")?,
                end_us: p.time("end")?,
                last_id: p.id("last_id")?,
                limit: p.limit(100, 500)?,
            };
            shared.engine().trades(who, &filter)
        }
        "query_positions" => {
            let p = ctx.params(&["symbol"])?;
            let symbol = p.text("symbol")?;
            shared.engine().positions(who, symbol, shared.clock.now_us())
        }
        "query_balance" => {
            ctx.params(&[])?;
            Ok(shared.engine().balance_json(who))
        }
        "query_position_config" => {
            let p = ctx.params(&["symbol"])?;
            let symbol = p.required("symbol")?;
            shared.engine().position_config(who, symbol)
        }
        // A bare array (live, [WJ]): the rows `settle_funding` wrote, newest first.
        "query_funding_history" => {
            let p = ctx.params(&["symbol", "start", "end", "last_id", "limit"])?;
            let filter = FundingFilter {
                symbol: p.text("symbol")?.map(str::to_owned),
                start_us: p.time("start")?,
                end_us: p.time("end")?,
                last_id: p.id("last_id")?,
                limit: p.limit(100, 500)?,
            };
            shared.engine().funding_history(who, &filter)
        }
        _ => return Err(error(404, format!("no endpoint {}", inc.path))),
    })
}
