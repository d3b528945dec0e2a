//! Helpers of the pacing tests (`pacing_limits.rs`, `pacing_reads_sent_again.rs`): a client
//! of a purpose-built venue on 127.0.0.1, API-key sessions of distinct accounts, and a venue
//! that notes when each request arrived.
//!
//! Included with `#[path = "common/pacing.rs"]` beside `common` and `rogue_server`.
#![allow(dead_code)]

use crate::common::abi::{Client, Session};
use crate::rogue_server::{Rogue, Step};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub const ACCEPTED: &str = r#"{"code":0,"message":"success","request_id":"r"}"#;
pub const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;

pub fn client_at(url: &str, options: &str) -> Client {
    Client::new(&format!("{url}/auth"), &format!("{url}/perps"), Some(options)).expect("client")
}

/// An API-key session of the account whose key is 32 bytes of `seed`.
pub fn session(seed: u8) -> Session {
    Session::from_api_key("rogue-api-token-7f3a", &bs58::encode([seed; 32]).into_string()).expect("api session")
}

/// A venue running `script` (given each request's index) that notes when each request arrived.
pub fn timed_venue(script: impl Fn(usize) -> Vec<Step> + Send + Sync + 'static) -> (Rogue, Arc<Mutex<Vec<Instant>>>) {
    let arrivals: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let kept = arrivals.clone();
    let rogue = Rogue::start(move |_, index| {
        kept.lock().unwrap().push(Instant::now());
        script(index)
    });
    (rogue, arrivals)
}
