//! What the server-fault tests share (`tests/server_faults.rs`, `tests/server_faults_http_status.rs`,
//! `tests/server_faults_signin.rs`): the fixed order, token and wallet, short time limits,
//! and sending one order to a rogue server while checking the outcome and how often the
//! order reached it. Kept apart so the three binaries assert in exactly the same way.
#![allow(dead_code)]

use crate::common::abi::{Client, Failure, Session, expect, new_order};
use crate::rogue_server::{Rogue, Seen, Step, ms};
use perps::ffi::error::perps_code;

pub const BSC_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
pub const BSC_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
pub const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;
pub const API_TOKEN: &str = "rogue-api-token-7f3a";
pub const NEW_ORDER: &str = "/perps/api/new_order";
/// Short limits so that every stall is noticed quickly.
pub const FAST: &str = r#"{"connect_timeout_ms":1000,"read_timeout_ms":250,"total_timeout_ms":3000}"#;

pub fn client_at(url: &str, options: &str) -> Client {
    Client::new(&format!("{url}/auth"), &format!("{url}/perps"), Some(options)).expect("client")
}

/// A session that can place orders at once (a web-site API credential): no sign-in needed.
pub fn api_session() -> Session {
    Session::from_api_key(API_TOKEN, &bs58::encode([1u8; 32]).into_string()).expect("api session")
}

/// Send one order to a rogue server whose script answers every request, and check the
/// outcome and that the order reached the server exactly `expected_received` times.
pub fn order_against(
    script: impl Fn(&Seen, usize) -> Vec<Step> + Send + Sync + 'static,
    options: &str,
    code: perps_code,
    reached: bool,
    expected_received: usize,
) -> Failure {
    let rogue = Rogue::start(script);
    order_against_server(&rogue, options, code, reached, expected_received)
}

pub fn order_against_server(
    rogue: &Rogue,
    options: &str,
    code: perps_code,
    reached: bool,
    expected_received: usize,
) -> Failure {
    let client = client_at(&rogue.url(), options);
    let f = expect(new_order(&client, &api_session(), ORDER), code, reached);
    assert_eq!(rogue.count(NEW_ORDER), expected_received, "orders the server read (never retried)");
    f
}

/// The whole answer at once, then nothing: the body is cut and the connection reset.
pub fn reset_after(bytes: Vec<u8>) -> Vec<Step> {
    vec![Step::Write(bytes), ms(20), Step::Reset]
}
