//! `/_sandbox/*`: the Rust controls of `Sandbox` over HTTP, for tests and rehearsals in
//! other languages. Loopback by default and unauthenticated: a test venue. JSON in and out.
//!
//! | HTTP | Rust twin |
//! |---|---|
//! | `GET/POST faults` | `faults` / `set_faults` |
//! | `GET stats` | `stats` |
//! | `GET requests?last=N` | `requests(n)` |
//! | `GET events?since=SEQ` | `events_since(seq)` |
//! | `POST mark {"symbol","price"}` | `set_mark` |
//! | `GET/POST clock {"offset_ms"}` | `clock_offset_ms` / `set_clock_offset_ms` |
//! | `POST rotate-key` | `rotate_key` |
//! | `POST api-key {"expires_seconds"}` | `issue_api_key` |

use serde::Deserialize;
use serde_json::{Value, json};

use super::faults::Faults;
use super::http::{Incoming, Reply, error};
use super::state::Shared;

/// Requests returned when `last` is not given.
const DEFAULT_LAST: usize = 50;

pub(crate) fn handle(shared: &Shared, inc: &Incoming, name: &str) -> Reply {
    match answer(shared, inc, name) {
        Ok(value) => Reply::Json(200, value),
        Err(reply) => reply,
    }
}

fn answer(shared: &Shared, inc: &Incoming, name: &str) -> Result<Value, Reply> {
    match (inc.method.as_str(), name) {
        // The whole set is replaced; a missing field takes its default (no fault).
        ("POST", "faults") => {
            let faults: Faults = body(inc, "faults")?;
            faults.validate().map_err(|m| error(400, format!("faults: {m}")))?;
            shared.state().faults = faults.clone();
            Ok(json!(faults))
        }
        ("GET", "faults") => Ok(json!(shared.state().faults)),
        ("GET", "stats") => Ok(json!(shared.state().stats)),
        ("GET", "requests") => {
            let last = number(inc, "last")?.map_or(DEFAULT_LAST, |n| usize::try_from(n).unwrap_or(usize::MAX));
            Ok(Value::Array(shared.log().last(last)))
        }
        ("GET", "events") => {
            let since = number(inc, "since")?.unwrap_or(0);
            Ok(Value::Array(super::events_json(&shared.engine().events_since(since))))
        }
        ("POST", "mark") => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Mark {
                symbol: String,
                price: String,
            }
            let m: Mark = body(inc, "mark")?;
            let events = super::set_mark(shared, &m.symbol, &m.price).map_err(|e| error(400, e))?;
            Ok(json!({"symbol": m.symbol, "mark_price": m.price, "events": events.len()}))
        }
        ("GET", "clock") => Ok(clock(shared)),
        ("POST", "clock") => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Offset {
                offset_ms: i64,
            }
            let o: Offset = body(inc, "clock")?;
            shared.clock.set_offset_ms(o.offset_ms);
            Ok(clock(shared))
        }
        ("POST", "rotate-key") => Ok(json!({"kid": shared.keys().rotate()})),
        ("POST", "api-key") => {
            #[derive(Deserialize, Default)]
            #[serde(deny_unknown_fields, default)]
            struct Ask {
                expires_seconds: Option<i64>,
            }
            let ask: Ask =
                if inc.body.iter().all(u8::is_ascii_whitespace) { Ask::default() } else { body(inc, "api-key")? };
            let credential = super::issue_api_key(shared, ask.expires_seconds).map_err(|e| error(400, e))?;
            Ok(json!(credential))
        }
        (_, "faults" | "stats" | "requests" | "events" | "mark" | "clock" | "rotate-key" | "api-key") => {
            Err(error(405, "method not allowed"))
        }
        _ => Err(error(404, format!("no endpoint {}", inc.path))),
    }
}

fn clock(shared: &Shared) -> Value {
    json!({"offset_ms": shared.clock.offset_ms(), "now_ms": shared.clock.now_ms()})
}

fn body<T: for<'de> Deserialize<'de>>(inc: &Incoming, what: &str) -> Result<T, Reply> {
    serde_json::from_slice(&inc.body).map_err(|e| error(400, format!("{what}: {e}")))
}

fn number(inc: &Incoming, name: &str) -> Result<Option<u64>, Reply> {
    match inc.query_param(name) {
        Ok(None) => Ok(None),
        Ok(Some(v)) => v.parse().map(Some).map_err(|_| error(400, format!("{name} must be a non-negative integer"))),
        Err(m) => Err(error(400, m)),
    }
}
