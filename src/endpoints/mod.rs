//! The venue's trading-loop endpoints as one table: for each, its HTTP method and path, who
//! may call it, the parameters it takes with the venue's types, the rule across them, and
//! how its answer is shaped. `client::endpoint_call` runs any of them the same way; the C
//! exports in `ffi::trading` are one line each.
//!
//! Sources: `venue-api.md` §1.3–1.5 (fields, types, limits) and §6 (where documents and live
//! clients disagree, both forms are accepted).

pub mod answer;
pub mod change_answer;
pub mod params;
pub mod query;

/// Who may call an endpoint, and how its request is authenticated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auth {
    /// Market data: no token, no signature; the session may be absent.
    Public,
    /// Account reads: the bearer token.
    Bearer,
    /// Account changes: the bearer token and the body signature.
    Signed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Get,
    Post,
}

/// What a parameter holds, with the venue's wire type.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// A symbol (`BTC-USD`).
    Symbol,
    /// A client order id: visible ASCII, at most 64 characters.
    ClOrdId,
    /// A venue order id: a JSON integer from 1 to 2^63−1 (ids exceed 2^32 live).
    OrderId,
    /// A pagination cursor (`last_id`): a JSON integer from 0 to 2^63−1.
    Cursor,
    /// A page size: a JSON integer from 1 to the endpoint's maximum.
    Limit(i64),
    /// Leverage: a JSON integer from 1 to 1000.
    Leverage,
    /// A time in milliseconds: a JSON integer from 0 to the maximum given (`cancel_all`'s
    /// `confirm_ms`, where 0 means "do not wait").
    Millis(i64),
    /// One of a few lower-case words.
    Enum(&'static [&'static str]),
    /// An order status filter: one of [`ORDER_STATUSES`], `cancelled` sent as the venue's
    /// `canceled`.
    OrderStatus,
    /// An ISO-8601 date-time string (`2026-01-02T03:04:05Z`; without an offset: UTC; a date
    /// alone: midnight UTC), sent as RFC 3339 (`params::read_time`).
    Time,
    /// A non-empty JSON array of venue order ids.
    OrderIdList,
    /// A non-empty JSON array of client order ids.
    ClOrdIdList,
}

#[derive(Clone, Copy, Debug)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
}

/// A rule across parameters.
#[derive(Clone, Copy, Debug)]
pub enum Rule {
    None,
    /// At least one of these must be given.
    AnyOf(&'static [&'static str]),
    /// `start` must not be after `end` when both are given.
    StartBeforeEnd,
}

/// How the venue's answer is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// As the venue sent it (an object, or a bare array for lists and `cancel_orders`).
    AsSent,
    /// `query_depth_book`: both sides sorted best first by decimal value.
    DepthBook,
    /// As sent, for an endpoint that answers a list, bare or in a page envelope: `null` for
    /// the list (the answer, or the envelope's `result`) is returned as `[]`, the empty list
    /// a venue may encode as `null` (Go's encoding of an empty slice) — an engine
    /// reconciling no positions must not get an error (`answer::check_list`).
    List,
}

#[derive(Debug)]
pub struct Spec {
    /// The export's name after `perps_`, and the endpoint after `/api/`.
    pub name: &'static str,
    pub verb: Verb,
    pub auth: Auth,
    pub params: &'static [Param],
    pub rule: Rule,
    pub shape: Shape,
}

impl Spec {
    /// `/api/{name}`.
    pub fn path(&self) -> String {
        format!("/api/{}", self.name)
    }
}

const fn required(name: &'static str, kind: Kind) -> Param {
    Param { name, kind, required: true }
}

const fn optional(name: &'static str, kind: Kind) -> Param {
    Param { name, kind, required: false }
}

const SIDES: &[&str] = &["buy", "sell"];
const MARGIN_MODES: &[&str] = &["cross", "isolated"];
const ORDER_TYPES: &[&str] = &["limit", "market"];
/// The reference's statuses, `new`, which the documents' examples show, and the ones live
/// clients use (`venue-api.md` §1.6, §6.5: `partially_filled`, `expired`, and `cancelled`,
/// the reference's `canceled` spelt the British way). Both spellings are taken; `cancelled`
/// is sent as the reference's `canceled`, the one the venue filters on (a client that sent
/// `cancelled` hit a bug, §1.6: a filter matching nothing answers an empty page, no error).
/// The others are sent as written.
pub(crate) const ORDER_STATUSES: &[&str] =
    &["open", "new", "canceled", "filled", "rejected", "untriggered", "partially_filled", "expired", "cancelled"];

/// The fifteen endpoints, each named after the venue's own endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    CancelOrder,
    CancelOrders,
    ChangeLeverage,
    ChangeMarginMode,
    QueryOrder,
    QueryOrders,
    QueryOpenOrders,
    QueryTrades,
    QueryFundingHistory,
    QueryPositions,
    QueryBalance,
    QueryPositionConfig,
    QuerySymbolInfo,
    QuerySymbolPrice,
    QueryDepthBook,
}

impl Endpoint {
    pub const ALL: [Endpoint; 15] = [
        Endpoint::CancelOrder,
        Endpoint::CancelOrders,
        Endpoint::ChangeLeverage,
        Endpoint::ChangeMarginMode,
        Endpoint::QueryOrder,
        Endpoint::QueryOrders,
        Endpoint::QueryOpenOrders,
        Endpoint::QueryTrades,
        Endpoint::QueryFundingHistory,
        Endpoint::QueryPositions,
        Endpoint::QueryBalance,
        Endpoint::QueryPositionConfig,
        Endpoint::QuerySymbolInfo,
        Endpoint::QuerySymbolPrice,
        Endpoint::QueryDepthBook,
    ];

    pub fn spec(self) -> &'static Spec {
        use Kind::*;
        const fn post(name: &'static str, params: &'static [Param], rule: Rule) -> Spec {
            Spec { name, verb: Verb::Post, auth: Auth::Signed, params, rule, shape: Shape::AsSent }
        }
        const fn get(name: &'static str, auth: Auth, params: &'static [Param], rule: Rule) -> Spec {
            Spec { name, verb: Verb::Get, auth, params, rule, shape: Shape::AsSent }
        }
        const fn list(spec: Spec) -> Spec {
            Spec { shape: Shape::List, ..spec }
        }
        static CANCEL_ORDER: Spec = post(
            "cancel_order",
            &[optional("order_id", OrderId), optional("cl_ord_id", ClOrdId)],
            Rule::AnyOf(&["order_id", "cl_ord_id"]),
        );
        static CANCEL_ORDERS: Spec = post(
            "cancel_orders",
            &[optional("order_id_list", OrderIdList), optional("cl_ord_id_list", ClOrdIdList)],
            Rule::AnyOf(&["order_id_list", "cl_ord_id_list"]),
        );
        static CHANGE_LEVERAGE: Spec =
            post("change_leverage", &[required("symbol", Symbol), required("leverage", Leverage)], Rule::None);
        static CHANGE_MARGIN_MODE: Spec = post(
            "change_margin_mode",
            &[required("symbol", Symbol), required("margin_mode", Enum(MARGIN_MODES))],
            Rule::None,
        );
        static QUERY_ORDER: Spec = get(
            "query_order",
            Auth::Bearer,
            &[optional("order_id", OrderId), optional("cl_ord_id", ClOrdId)],
            Rule::AnyOf(&["order_id", "cl_ord_id"]),
        );
        // The lists of orders and trades come in the page envelope ({page_size,result,total})
        // or, as the other lists, as a bare array: `null` is the empty list for them too.
        static QUERY_ORDERS: Spec = list(get(
            "query_orders",
            Auth::Bearer,
            &[
                optional("symbol", Symbol),
                optional("status", OrderStatus),
                optional("order_type", Enum(ORDER_TYPES)),
                optional("start", Time),
                optional("end", Time),
                optional("last_id", Cursor),
                optional("limit", Limit(500)),
            ],
            Rule::StartBeforeEnd,
        ));
        static QUERY_OPEN_ORDERS: Spec = list(get(
            "query_open_orders",
            Auth::Bearer,
            &[optional("symbol", Symbol), optional("limit", Limit(1200))],
            Rule::None,
        ));
        static QUERY_TRADES: Spec = list(get(
            "query_trades",
            Auth::Bearer,
            &[
                optional("symbol", Symbol),
                optional("side", Enum(SIDES)),
                optional("start", Time),
                optional("end", Time),
                optional("last_id", Cursor),
                optional("limit", Limit(500)),
            ],
            Rule::StartBeforeEnd,
        ));
        // Funding payments (venue-api.md §1.4, §4.9: the public funding rates come back empty
        // live, so market makers reconcile funding with this). The documents give no page
        // size; 500 is the maximum of the two other `last_id`-paged lists (orders, trades),
        // which the sandbox applies too — a larger page is refused here rather than cut
        // short by the venue without a word. The answer is returned as sent: a bare array
        // live ([WJ]), the page envelope of the other lists accepted as well (§6).
        static QUERY_FUNDING_HISTORY: Spec = list(get(
            "query_funding_history",
            Auth::Bearer,
            &[
                optional("symbol", Symbol),
                optional("start", Time),
                optional("end", Time),
                optional("last_id", Cursor),
                optional("limit", Limit(500)),
            ],
            Rule::StartBeforeEnd,
        ));
        static QUERY_POSITIONS: Spec =
            list(get("query_positions", Auth::Bearer, &[optional("symbol", Symbol)], Rule::None));
        static QUERY_BALANCE: Spec = get("query_balance", Auth::Bearer, &[], Rule::None);
        static QUERY_POSITION_CONFIG: Spec =
            get("query_position_config", Auth::Bearer, &[required("symbol", Symbol)], Rule::None);
        // The documents require `symbol`; live clients call it without one for every symbol.
        static QUERY_SYMBOL_INFO: Spec =
            list(get("query_symbol_info", Auth::Public, &[optional("symbol", Symbol)], Rule::None));
        static QUERY_SYMBOL_PRICE: Spec =
            get("query_symbol_price", Auth::Public, &[required("symbol", Symbol)], Rule::None);
        // `limit` is undocumented but sent by live clients; passed through.
        static QUERY_DEPTH_BOOK: Spec = Spec {
            name: "query_depth_book",
            verb: Verb::Get,
            auth: Auth::Public,
            params: &[required("symbol", Symbol), optional("limit", Limit(1000))],
            rule: Rule::None,
            shape: Shape::DepthBook,
        };
        match self {
            Endpoint::CancelOrder => &CANCEL_ORDER,
            Endpoint::CancelOrders => &CANCEL_ORDERS,
            Endpoint::ChangeLeverage => &CHANGE_LEVERAGE,
            Endpoint::ChangeMarginMode => &CHANGE_MARGIN_MODE,
            Endpoint::QueryOrder => &QUERY_ORDER,
            Endpoint::QueryOrders => &QUERY_ORDERS,
            Endpoint::QueryOpenOrders => &QUERY_OPEN_ORDERS,
            Endpoint::QueryTrades => &QUERY_TRADES,
            Endpoint::QueryFundingHistory => &QUERY_FUNDING_HISTORY,
            Endpoint::QueryPositions => &QUERY_POSITIONS,
            Endpoint::QueryBalance => &QUERY_BALANCE,
            Endpoint::QueryPositionConfig => &QUERY_POSITION_CONFIG,
            Endpoint::QuerySymbolInfo => &QUERY_SYMBOL_INFO,
            Endpoint::QuerySymbolPrice => &QUERY_SYMBOL_PRICE,
            Endpoint::QueryDepthBook => &QUERY_DEPTH_BOOK,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_consistent() {
        for endpoint in Endpoint::ALL {
            let spec = endpoint.spec();
            assert_eq!(spec.verb == Verb::Post, spec.auth == Auth::Signed, "{}: POSTs are the signed ones", spec.name);
            let names: Vec<&str> = spec.params.iter().map(|p| p.name).collect();
            let unique: std::collections::HashSet<&&str> = names.iter().collect();
            assert_eq!(unique.len(), names.len(), "{}: a parameter listed twice", spec.name);
            match spec.rule {
                Rule::AnyOf(any) => assert!(any.iter().all(|n| names.contains(n)), "{}", spec.name),
                Rule::StartBeforeEnd => assert!(names.contains(&"start") && names.contains(&"end")),
                Rule::None => {}
            }
        }
        let public: Vec<&str> =
            Endpoint::ALL.iter().map(|e| e.spec()).filter(|s| s.auth == Auth::Public).map(|s| s.name).collect();
        assert_eq!(public, ["query_symbol_info", "query_symbol_price", "query_depth_book"]);
    }
}
