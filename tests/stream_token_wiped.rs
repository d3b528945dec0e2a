//! The session's token on its way into a stream's auth frame leaves no copy behind in freed
//! memory: the library keeps keys and tokens in memory it wipes on drop (README, "Secrets"),
//! and a heap block freed with the token in it would outlive the session, for any later
//! allocation, core dump or swap to read. This binary's allocator scans every block freed by
//! the library's threads while a stream opens, logs in and closes, and counts those that
//! still hold the token; and so for the table a failed call builds to redact the venue's
//! words of its token and keys (`perps::redact::Secrets`). (Copies beyond the library — tungstenite's write buffer holds the
//! frame masked, the kernel's socket buffers — are not its to wipe.)

#[path = "common/freed_scan.rs"]
mod freed_scan;
#[path = "streams/helpers.rs"]
mod helpers;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;

use freed_scan::FreedScan;
use helpers::*;
use perps::stream::Stream;
use scripted_venue::*;
use std::time::Duration;

/// The secrets looked for besides the token (set before a scan starts).
static KEY_TEXTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
/// One scan at a time (the tests of this binary may run at once), each test holding it from
/// its first secret to its last drop.
static ONE_SCAN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Any 8 bytes of a secret (what redaction calls a secret's run): a copy in part counts.
fn holds_token(block: &[u8]) -> bool {
    let keys = KEY_TEXTS.get().map(Vec::as_slice).unwrap_or_default();
    block.len() >= 8
        && std::iter::once(TOKEN.as_bytes())
            .chain(keys.iter().map(String::as_bytes))
            .any(|secret| secret.windows(8).any(|run| block.windows(8).any(|w| w == run)))
}

fn look(block: &[u8]) {
    if holds_token(block) {
        freed_scan::found(block.len());
    }
}

#[global_allocator]
static ALLOCATOR: FreedScan = FreedScan { scanning: freed_scan::scanning, look };

#[test]
fn opening_both_streams_leaves_no_copy_of_the_token_in_freed_memory() {
    // Held for the whole test, set-up and drops included: the other test's own blocks with
    // secrets, freed on its thread while this one scans, would be counted here.
    let _one = ONE_SCAN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let orders = venue(|_, mut ws| {
        freed_scan::venue_thread();
        let login = read_json(&mut ws);
        send(&mut ws, &logged_in(login["request_id"].as_str().unwrap()));
        hold(ws, Duration::from_secs(3));
    });
    let market = venue(|_, mut ws| {
        freed_scan::venue_thread();
        read_json(&mut ws);
        send(&mut ws, r#"{"channel":"auth","data":{"code":0,"msg":"success"}}"#);
        hold(ws, Duration::from_secs(3));
    });
    let (orders_client, market_client, session) = (client(&orders, "{}"), client(&market, "{}"), session());
    freed_scan::start();
    let order_stream = Stream::open_orders(orders_client, session.clone()).unwrap();
    let market_stream = Stream::open_market(market_client, Some(session), r#"[{"channel":"order"}]"#).unwrap();
    drop(order_stream);
    drop(market_stream);
    let (found, sizes) = freed_scan::stop();
    assert_eq!(found, 0, "heap blocks freed with the token in them (sizes {sizes:?})");
}

#[test]
fn the_redaction_of_a_call_leaves_no_copy_of_its_secrets_in_freed_memory() {
    // What a failed call builds to redact the venue's words: every run of 8 bytes of the
    // token and of each key's text forms, in one table (`perps::redact::Secrets`). The scan
    // lock is held from the first secret made to the last one dropped (see the first test).
    let _one = ONE_SCAN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let seed: [u8; 32] = std::array::from_fn(|i| 0xa0 + i as u8);
    let key = ed25519_dalek::SigningKey::from_bytes(&seed);
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let wallet = format!("0x{}", hex(&[0x5c; 32]));
    KEY_TEXTS
        .set(vec![hex(&seed), bs58::encode(seed).into_string(), hex(&key.to_keypair_bytes()), wallet[2..].to_owned()])
        .unwrap();
    let echo = format!("echo {TOKEN}");
    freed_scan::start();
    let mut secrets = perps::redact::Secrets::new();
    secrets.add(TOKEN);
    secrets.add_ed25519(&key);
    secrets.add_wallet_key(&wallet);
    let redacted = secrets.redact(&echo).into_owned();
    drop(secrets);
    let (found, sizes) = freed_scan::stop();
    assert_eq!(redacted, "echo <redacted>");
    assert_eq!(found, 0, "heap blocks freed with runs of a secret in them (sizes {sizes:?})");
}
