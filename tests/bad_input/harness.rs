//! The runner of the bad-input table `tests/bad_input/cases.txt`, shared by
//! `tests/bad_input.rs` (every case through the C ABI, with its assertions) and
//! `tests/secrets.rs` (what the cases produce, scanned for secrets). The C twin of this runner
//! is `tests/c/test_bad_input.c`; both read the same file, so the table is written once.
//! The file's header documents the line format and the fixtures.
//!
//! Its parts: `table.rs` (the line format and its parser), `fixtures.rs` (what `@name`
//! stands for), `runner.rs` (one case through the C ABI); here, the checks of an outcome.
#![allow(dead_code)]

#[path = "fixtures.rs"]
mod fixtures;
#[path = "runner.rs"]
mod runner;
#[path = "table.rs"]
mod table;

pub use fixtures::*;
pub use runner::*;
pub use table::*;

use perps::ffi::error::*;

/// Longest message any failing case may produce: an error never carries a huge input back.
pub const MAX_MESSAGE_LEN: usize = 512;
/// A secret leaks when any run of this many bytes of it appears in a message.
pub const SECRET_WINDOW: usize = 8;

/// The first run of `SECRET_WINDOW` bytes of `secret` found in `text` (the whole secret when
/// it is shorter, if at least 4 bytes long), searching `text`'s windows in `secret`.
pub fn leaked_run(text: &[u8], secret: &[u8]) -> Option<String> {
    if secret.len() < 4 {
        return None;
    }
    let w = SECRET_WINDOW.min(secret.len());
    if text.len() < w {
        return None;
    }
    let runs: std::collections::HashSet<&[u8]> = secret.windows(w).collect();
    text.windows(w).find(|run| runs.contains(run)).map(|run| String::from_utf8_lossy(run).into_owned())
}

/// Every assertion of the table for one case; an empty list means the case passed.
pub fn check(case: &Case, outcome: &Outcome, secrets: &[Vec<u8>]) -> Vec<String> {
    let mut problems = outcome.problems.clone();
    if outcome.code != Some(case.expected) {
        problems.push(format!("code {:?}, expected {:?} (message {:?})", outcome.code, case.expected, outcome.message));
    }
    if case.expected == perps_code::PERPS_OK {
        if let Some(fragment) = &case.fragment {
            match &outcome.returned {
                Some(text) if text.contains(fragment.as_str()) => {}
                other => problems.push(format!("result {other:?} lacks {fragment:?}")),
            }
        }
        return problems;
    }
    if let Some(fragment) = &case.fragment {
        match &outcome.message {
            Some(m) if m.contains(fragment.as_str()) => {}
            other => problems.push(format!("message {other:?} lacks {fragment:?}")),
        }
    }
    if let Some(m) = &outcome.message {
        if m.is_empty() {
            problems.push("empty message".into());
        }
        if m.len() > MAX_MESSAGE_LEN {
            problems.push(format!("message is {} bytes (max {MAX_MESSAGE_LEN}): {:?}…", m.len(), &m[..80]));
        }
        for secret in secrets {
            if let Some(run) = leaked_run(m.as_bytes(), secret) {
                problems.push(format!("message {m:?} contains {run:?} of a secret"));
            }
        }
    } else if case.fragment.is_some() {
        problems.push("no error object, so no message".into());
    }
    // Every case fails before anything could reach a venue.
    if outcome.http_status != 0 || outcome.body.is_some() || outcome.reached || outcome.request_id.is_some() {
        problems.push(format!(
            "an offline failure carries http_status {}, body {:?}, reached {}, x-request-id {:?}",
            outcome.http_status, outcome.body, outcome.reached, outcome.request_id
        ));
    }
    problems
}
