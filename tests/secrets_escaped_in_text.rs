//! A token the venue echoes JSON-escaped (`\u0077\u0073…`) in text that is not JSON: JSON cut
//! short (the library keeps 4 KiB of a refused upgrade's body) or quoted in a gateway's own
//! words. Whoever decodes those escapes — a log viewer, a lenient JSON reader, a person —
//! would get the token back, so redaction reads them as it reads a JSON body's.

mod common;
#[path = "streams/helpers.rs"]
mod helpers;
#[path = "common/rogue_server.rs"]
mod rogue_server;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;

use common::abi::{Client, Session, expect, new_order};
use helpers::*;
use perps::ffi::error::perps_code::*;
use perps::stream::Stream;
use rogue_server::{Rogue, Step, response};
use scripted_venue::*;
use std::io::{Read, Write};

fn escaped(secret: &str) -> String {
    secret.chars().map(|c| format!("\\u{:04x}", c as u32)).collect()
}

/// No 8 bytes of `secret`, in the text as it stands or with its escapes decoded.
fn assert_no_secret(text: &str, secret: &str) {
    let decoded = text.replace("\\u00", "%").split('%').enumerate().fold(String::new(), |mut out, (i, part)| {
        match (i, part.get(..2).and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (0, _) | (_, None) => out.push_str(part),
            (_, Some(b)) => {
                out.push(b as char);
                out.push_str(&part[2..]);
            }
        }
        out
    });
    for run in secret.as_bytes().windows(8) {
        let run = std::str::from_utf8(run).unwrap();
        assert!(!text.contains(run) && !decoded.contains(run), "{run} of the secret in {text}");
    }
}

#[test]
fn a_refused_upgrade_whose_body_is_cut_keeps_no_escaped_token() {
    // The JSON body is longer than the 4 KiB kept: what is kept is not JSON.
    let body = format!(r#"{{"message":"bad token {}","detail":"{}"}}"#, escaped(TOKEN), "x".repeat(8000));
    let url = raw_venue(move |_, mut tcp| {
        let mut request = [0u8; 4096];
        let _ = tcp.read(&mut request);
        let answer = format!(
            "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let _ = tcp.write_all(answer.as_bytes());
        std::thread::sleep(std::time::Duration::from_millis(300));
    });
    let error = Stream::open_market(client(&url, "{}"), Some(session()), r#"[{"channel":"order"}]"#).unwrap_err();
    assert_eq!(error.http_status(), 401, "{error}");
    let kept = error.body().unwrap_or_default();
    assert!(kept.contains("<redacted>"), "{kept}");
    assert_no_secret(kept, TOKEN);
    assert_no_secret(error.message(), TOKEN);
}

const API_TOKEN: &str = "rogue-api-token-7f3a-0123456789";
const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;

#[test]
fn a_gateway_that_quotes_the_venues_json_keeps_no_escaped_token() {
    let text = format!(r#"upstream answered {{"code":401,"message":"bad token {}"}}"#, escaped(API_TOKEN));
    let rogue =
        Rogue::start(move |_, _| vec![Step::Write(response(502, &["Content-Type: text/plain"], text.as_bytes()))]);
    let client = Client::new(&format!("{}/auth", rogue.url()), &format!("{}/perps", rogue.url()), None).unwrap();
    let session = Session::from_api_key(API_TOKEN, &bs58::encode([1u8; 32]).into_string()).unwrap();
    let f = expect(new_order(&client, &session, ORDER), PERPS_HTTP_STATUS, true);
    let body = f.body.clone().unwrap_or_default();
    assert!(body.contains("<redacted>"), "{f:?}");
    assert_no_secret(&body, API_TOKEN);
    assert_no_secret(&f.message, API_TOKEN);
}
