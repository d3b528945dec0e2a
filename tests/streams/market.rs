//! A market stream on the WebSocket test venue (`tests/common/ws_server.rs`) with the usual
//! public subscriptions, shared by `tests/streams.rs` and `tests/stream_order_entry.rs`. Not
//! in `helpers.rs` because it needs the test venue, which not every stream binary includes.

use crate::helpers::client;
use crate::ws_server::WsServer;
use perps::session::Session;
use perps::stream::Stream;
use std::sync::Arc;

pub const SUBS: &str = r#"[{"channel":"depth_book","symbol":"BTC-USD"},{"channel":"price","symbol":"BTC-USD"}]"#;

pub fn market(server: &WsServer, session: Option<Arc<Session>>, subs: &str) -> Stream {
    Stream::open_market(client(&server.perps_url(), "{}"), session, subs).unwrap()
}
