//! Public endpoints: no token needed (one sent is ignored).

use super::Ctx;
use super::params::Params;
use crate::engine::kline::{BarRange, Resolution};
use crate::http::{Reply, error};

pub(super) fn handle(ctx: &mut Ctx<'_>, name: &str) -> Reply {
    match answer(ctx, name) {
        Ok(reply) | Err(reply) => reply,
    }
}

fn answer(ctx: &mut Ctx<'_>, name: &str) -> Result<Reply, Reply> {
    let (shared, inc) = (ctx.shared, ctx.inc);
    let refused = |r: crate::engine::Reject| error(r.status, r.message);
    match name {
        // The venue clock as a bare integer of Unix seconds; any parameters are ignored
        // (clients use it to measure the clock, nothing else).
        "kline/time" => Ok(Reply::Text(200, shared.clock.now_ms().div_euclid(1000).to_string())),
        "kline/history" => {
            let p = ctx.params(&["symbol", "from", "to", "resolution", "countback"])?;
            let symbol = p.required("symbol")?;
            let (resolution, range) = kline_request(&p)?;
            Ok(Reply::Json(200, shared.engine().kline_history(symbol, resolution, range).map_err(refused)?))
        }
        "health" => Ok(Reply::Plain(200, "OK".into())),
        // Docs: `symbol` required; [WJ] calls it without and gets every symbol (live).
        "query_symbol_info" => {
            let p = ctx.params(&["symbol"])?;
            let symbol = p.text("symbol")?;
            Ok(Reply::Json(200, shared.engine().symbol_info(symbol).map_err(refused)?))
        }
        "query_symbol_price" => {
            let p = ctx.params(&["symbol"])?;
            let symbol = p.required("symbol")?;
            Ok(Reply::Json(200, shared.engine().symbol_price(symbol, shared.clock.now_us()).map_err(refused)?))
        }
        // The prices of query_symbol_price with funding, 24 h statistics and open interest
        // (`engine::market_stats`).
        "query_symbol_market" => {
            let p = ctx.params(&["symbol"])?;
            let symbol = p.required("symbol")?;
            Ok(Reply::Json(200, shared.engine().symbol_market(symbol, shared.clock.now_us()).map_err(refused)?))
        }
        // Documented without parameters ([DOC-A]): every symbol.
        "query_market_overview" => {
            ctx.params(&[])?;
            Ok(Reply::Json(200, shared.engine().market_overview(shared.clock.now_us())))
        }
        // `limit` is undocumented but sent by clients ([WJ], [MG]): accepted, levels per side.
        "query_depth_book" => {
            let p = ctx.params(&["symbol", "limit"])?;
            let symbol = p.required("symbol")?;
            let limit = p.id("limit")?.unwrap_or(u64::MAX);
            let levels = usize::try_from(limit).unwrap_or(usize::MAX);
            Ok(Reply::Json(200, shared.engine().depth(symbol, levels).map_err(refused)?))
        }
        // Every account's fills of the symbol, newest first; `limit` is undocumented but
        // sent by [WJ].
        "query_recent_trades" => {
            let p = ctx.params(&["symbol", "limit"])?;
            let (symbol, limit) = (p.required("symbol")?, p.limit(100, 1000)?);
            Ok(Reply::Json(200, shared.engine().recent_trades(symbol, limit).map_err(refused)?))
        }
        // Documented with rows, empty on the live venue ([WJ] CHANGELOG); the sandbox has
        // no funding either.
        "query_funding_rates" => {
            let p = ctx.params(&["symbol", "start_time", "end_time"])?;
            p.id("start_time")?;
            p.id("end_time")?;
            if let Some(symbol) = p.text("symbol")? {
                shared.engine().symbol_index(symbol).map_err(refused)?;
            }
            Ok(Reply::Json(200, serde_json::json!([])))
        }
        _ => Err(error(404, format!("no endpoint {}", inc.path))),
    }
}

/// `kline/history`'s parameters: `resolution` one of the documented names, `from` and `to`
/// Unix seconds with `from` not after `to`, `countback` at least 1 (more than
/// `kline::MAX_BARS` is served as that many).
fn kline_request(p: &Params<'_>) -> Result<(Resolution, BarRange), Reply> {
    let name = p.required("resolution")?;
    let resolution = Resolution::parse(name).ok_or_else(|| {
        error(400, format!("query parameter resolution must be one of {}, not {name:?}", Resolution::NAMES.join(", ")))
    })?;
    let seconds = |name: &str| -> Result<i64, Reply> {
        let value = p.id(name)?.ok_or_else(|| error(400, format!("query parameter {name} is required")))?;
        // Beyond i64 is beyond any fill: the same as the largest time.
        Ok(i64::try_from(value).unwrap_or(i64::MAX))
    };
    let (from, to) = (seconds("from")?, seconds("to")?);
    if from > to {
        return Err(error(400, format!("query parameter from ({from}) is after to ({to})")));
    }
    let countback = match p.id("countback")? {
        Some(0) => return Err(error(400, "query parameter countback must be an integer from 1")),
        other => other.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
    };
    Ok((resolution, BarRange { from, to, countback }))
}
