//! Proxy variables in the environment are never used: a bearer token sent to a plain-http
//! loopback venue must not be forwarded to a proxy on another host. (Its own test binary,
//! since it changes the process environment.)

mod common;

use common::abi::{Client, Session, new_order, signin};
use perps_sandbox::{Sandbox, SandboxConfig};

#[test]
fn environment_proxies_are_ignored() {
    // Port 9 (discard) on loopback: nothing listens, so a proxied request would fail.
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"] {
        // SAFETY: set before any other thread of this test binary exists.
        unsafe { std::env::set_var(name, "http://127.0.0.1:9") };
    }
    let venue = Sandbox::start(SandboxConfig::default()).unwrap();
    let client = Client::new(&venue.base_url(), &venue.perps_url(), None).unwrap();
    let session = Session::new();
    signin(&client, &session, "bsc", "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", 0).unwrap();
    let order = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;
    new_order(&client, &session, order).unwrap();
    assert_eq!(venue.stats().orders_accepted, 1);
}
