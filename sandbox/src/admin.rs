//! `{root}/_sandbox/*`: the Rust controls (`set_faults`, `rotate_key`, `stats`) over HTTP,
//! for tests written in other languages. Loopback only and unauthenticated: a test venue.

use serde_json::json;

use super::faults::Faults;
use super::http::{Incoming, Reply, error};
use super::state::Shared;

pub(crate) fn handle(shared: &Shared, inc: &Incoming, name: &str) -> Reply {
    match (inc.method.as_str(), name) {
        // The whole set is replaced; a missing field takes its default (no fault).
        ("POST", "faults") => match serde_json::from_slice::<Faults>(&inc.body) {
            Ok(f) if f.status.is_some_and(|s| !(100..=999).contains(&s)) => {
                error(400, "status must be an HTTP status code (100-999)")
            }
            Ok(f) => {
                shared.state().faults = f.clone();
                Reply::Json(200, json!(f))
            }
            Err(e) => error(400, format!("faults: {e}")),
        },
        ("GET", "faults") => Reply::Json(200, json!(shared.faults())),
        ("POST", "rotate-key") => Reply::Json(200, json!({"kid": shared.keys().rotate()})),
        ("GET", "stats") => Reply::Json(200, json!(shared.state().stats)),
        (_, "faults" | "rotate-key" | "stats") => error(405, "method not allowed"),
        _ => error(404, format!("no endpoint {}", inc.path)),
    }
}
