//! A user's Rust program (tests/packages/run.sh builds and runs it; README "Use from Rust"
//! shows the same calls): signs in with a published test key (Hardhat account #0) and places
//! an order on the venue at the URLs given.
//!
//!     signin-order BASE_URL PERPS_URL

use perps::client::Client;
use perps::client::options::ClientOptions;
use perps::session::Session;
use perps::wallet::Chain;

const WALLET_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;

fn main() -> perps::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (base_url, perps_url) = (&args[1], &args[2]);
    // --- README "Use from Rust" ---
    let client = Client::new(base_url, perps_url, ClientOptions::default())?;
    let session = Session::new()?; // a fresh request-signing key
    client.signin(&session, Chain::Bsc, WALLET_KEY, 3600)?; // challenge verified, token kept
    let answer = client.new_order(&session, ORDER)?; // never retried
    println!("order placed: {answer}");
    // --- end of the README snippet ---
    Ok(())
}
