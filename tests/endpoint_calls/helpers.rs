//! What the endpoint-call tests share (`tests/endpoint_calls.rs`, `tests/endpoint_outcomes.rs`):
//! the API credential and its seed, short time limits, the order, and the checks written
//! independently of the library — percent-decoding a query and verifying a body signature
//! over the bytes a server received. Kept apart so both binaries check requests the same way.
#![allow(dead_code)]

use crate::common::abi::{Client, Session};
use crate::rogue_server::Seen;
use base64::Engine as _;

pub const API_TOKEN: &str = "rogue-api-token-7f3a";
pub const SEED: [u8; 32] = [1u8; 32];
pub const FAST: &str = r#"{"connect_timeout_ms":1000,"read_timeout_ms":300,"total_timeout_ms":3000}"#;
pub const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;
/// Every awkward byte a query value can hold (visible ASCII but `"` and `\\`: a valid
/// cl_ord_id).
pub const AWKWARD: &str = "a&b=c#d+e%f/g?h;i,j:k@l[m]n{o}p|q~r'$";

pub fn client_at(url: &str, options: &str) -> Client {
    Client::new(&format!("{url}/auth"), &format!("{url}/perps"), Some(options)).expect("client")
}

pub fn api_session(seed: [u8; 32]) -> Session {
    Session::from_api_key(API_TOKEN, &bs58::encode(seed).into_string()).expect("api session")
}

/// Percent-decoding written here, independently of the library's encoder.
pub fn decode_query(target: &str) -> Vec<(String, String)> {
    let Some((_, query)) = target.split_once('?') else { return Vec::new() };
    let decode = |s: &str| {
        let bytes = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 3;
            } else {
                assert!(bytes[i].is_ascii_alphanumeric() || b"-._~".contains(&bytes[i]), "unencoded byte in {s}");
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    };
    query.split('&').map(|pair| pair.split_once('=').unwrap()).map(|(k, v)| (decode(k), decode(v))).collect()
}

/// The body signature the server received verifies, with the session's key, over exactly
/// the body bytes it received.
pub fn assert_signed(seen: &Seen, seed: [u8; 32]) {
    let key = ed25519_dalek::SigningKey::from_bytes(&seed).verifying_key();
    let (id, ts) = (seen.header("x-request-id").unwrap(), seen.header("x-request-timestamp").unwrap());
    assert_eq!(seen.header("x-request-sign-version"), Some("v1"));
    let signature =
        base64::engine::general_purpose::STANDARD.decode(seen.header("x-request-signature").unwrap()).unwrap();
    let signature = ed25519_dalek::Signature::from_slice(&signature).unwrap();
    let mut message = format!("v1,{id},{ts},").into_bytes();
    message.extend_from_slice(&seen.body);
    key.verify_strict(&message, &signature).expect("the signature covers the bytes received");
}
