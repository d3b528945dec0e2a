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
//! | `POST funding {"rate","symbol"?}` | `settle_funding` |
//! | `GET/POST clock {"offset_ms"}` | `clock_offset_ms` / `set_clock_offset_ms` |
//! | `POST rotate-key` | `rotate_key` |
//! | `POST api-key {"expires_seconds"}` | `issue_api_key` |
//! | `GET ws/connections` | `ws_connections` |
//! | `POST ws/drop {"id"?}` | `ws_drop` |
//! | `POST ws/stall {"id"?,"stall"?}` | `ws_stall` |
//! | `GET/POST ws/timers {…}` | `ws_timers` / `set_ws_timers` |

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
        ("GET", "stats") => Ok(json!(shared.stats())),
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
        ("POST", "funding") => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Funding {
                rate: String,
                symbol: Option<String>,
            }
            let f: Funding = body(inc, "funding")?;
            let rows = super::settle_funding(shared, f.symbol.as_deref(), &f.rate).map_err(|e| error(400, e))?;
            Ok(json!({"symbol": f.symbol, "rate": f.rate, "rows": rows}))
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
            let ask: Ask = optional_body(inc, "api-key")?;
            let credential = super::issue_api_key(shared, ask.expires_seconds).map_err(|e| error(400, e))?;
            Ok(json!(credential))
        }
        ("GET", "ws/connections") => Ok(json!(shared.ws.connections())),
        ("POST", "ws/drop") => {
            #[derive(Deserialize, Default)]
            #[serde(deny_unknown_fields, default)]
            struct Drop {
                id: Option<u64>,
            }
            let d: Drop = optional_body(inc, "ws/drop")?;
            Ok(json!({"dropped": shared.ws.drop_connections(d.id)}))
        }
        ("POST", "ws/stall") => {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields, default)]
            struct Stall {
                id: Option<u64>,
                stall: bool,
            }
            impl Default for Stall {
                fn default() -> Stall {
                    Stall { id: None, stall: true }
                }
            }
            let s: Stall = optional_body(inc, "ws/stall")?;
            let key = if s.stall { "stalled" } else { "resumed" };
            Ok(json!({key: shared.ws.stall(s.id, s.stall)}))
        }
        ("GET", "ws/timers") => Ok(json!(shared.ws.timers())),
        ("POST", "ws/timers") => {
            // The fields given replace those timers; the others keep their value.
            let patch: serde_json::Map<String, Value> = body(inc, "ws/timers")?;
            let mut timers = json!(shared.ws.timers());
            for (name, value) in patch {
                if timers.get(&name).is_none() {
                    return Err(error(400, format!("ws/timers: unknown field {name}")));
                }
                timers[name] = value;
            }
            let timers = serde_json::from_value(timers).map_err(|e| error(400, format!("ws/timers: {e}")))?;
            shared.ws.set_timers(timers);
            Ok(json!(shared.ws.timers()))
        }
        (
            _,
            "faults" | "stats" | "requests" | "events" | "mark" | "funding" | "clock" | "rotate-key" | "api-key"
            | "ws/connections" | "ws/drop" | "ws/stall" | "ws/timers",
        ) => Err(error(405, "method not allowed")),
        _ => Err(error(404, format!("no endpoint {}", inc.path))),
    }
}

fn clock(shared: &Shared) -> Value {
    json!({"offset_ms": shared.clock.offset_ms(), "now_ms": shared.clock.now_ms()})
}

fn body<T: for<'de> Deserialize<'de>>(inc: &Incoming, what: &str) -> Result<T, Reply> {
    serde_json::from_slice(&inc.body).map_err(|e| error(400, format!("{what}: {e}")))
}

/// An empty body is the default value.
fn optional_body<T: for<'de> Deserialize<'de> + Default>(inc: &Incoming, what: &str) -> Result<T, Reply> {
    if inc.body.iter().all(u8::is_ascii_whitespace) { Ok(T::default()) } else { body(inc, what) }
}

fn number(inc: &Incoming, name: &str) -> Result<Option<u64>, Reply> {
    match inc.query_param(name) {
        Ok(None) => Ok(None),
        Ok(Some(v)) => v.parse().map(Some).map_err(|_| error(400, format!("{name} must be a non-negative integer"))),
        Err(m) => Err(error(400, m)),
    }
}
