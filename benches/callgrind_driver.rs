//! A driver for `bench/callgrind.sh`: makes the same setup in every run, then calls one
//! signing variant N times, so that two runs under `valgrind --tool=callgrind` with
//! different N give the instructions of one call by subtraction.
//!
//! `callgrind_driver MODE N` with MODE one of:
//! - `floor`: ed25519-dalek's standard `SigningKey::sign` of a `v1,{id},{ts},{body}` message;
//! - `core`: the library's signer (`RequestKey::sign_parts`, key expanded once) on the same key
//!   and message, without request id, clock, base64 or the C boundary;
//! - `into`: `perps_sign_body_into` through the C ABI;
//! - `json`: `perps_sign_body` + `perps_string_free` through the C ABI;
//! - `none`: the setup only.
//!
//! Without arguments (as `cargo bench` runs it) it calls each variant a few times and says so.

use ed25519_dalek::{Signer, SigningKey};
use perps::ffi::error::perps_code;
use perps::ffi::session::{perps_session_free, perps_session_new};
use perps::ffi::sign::{perps_body_signature, perps_sign_body, perps_sign_body_into};
use perps::ffi::strings::perps_string_free;
use std::ffi::CStr;
use std::hint::black_box;
use std::mem::MaybeUninit;
use std::ptr::null_mut;

const BODY: &CStr = c"{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\",\"price\":\"65000\",\"time_in_force\":\"gtc\",\"reduce_only\":false}";

fn run(mode: &str, n: u64) -> Result<(), String> {
    // The same setup whatever the mode, so that it cancels out in the subtraction.
    let session = perps_session_new(null_mut());
    assert!(!session.is_null());
    let key = SigningKey::from_bytes(&[7u8; 32]);
    let message =
        perps::body_sign::signed_message("0b7f6a2e-3c4d-4e5f-8a9b-0c1d2e3f4a5b", 1_700_000_000_123, BODY.to_bytes());
    let core = perps::keys::RequestKey::from_signing_key(&key);
    let body = BODY.to_bytes();
    let mut out = MaybeUninit::<perps_body_signature>::zeroed();
    match mode {
        "none" => {}
        "floor" => {
            for _ in 0..n {
                black_box(key.sign(black_box(&message)));
            }
        }
        "core" => {
            for _ in 0..n {
                black_box(core.sign_parts(&[black_box(&message)]).expect("sign"));
            }
        }
        "into" => {
            for _ in 0..n {
                let code = perps_sign_body_into(session, black_box(body.as_ptr()), body.len(), out.as_mut_ptr());
                assert!(code == perps_code::PERPS_OK);
            }
        }
        "json" => {
            for _ in 0..n {
                let json = perps_sign_body(session, black_box(BODY.as_ptr()), null_mut());
                assert!(!json.is_null());
                perps_string_free(json);
            }
        }
        other => return Err(format!("unknown mode {other:?} (floor, core, into, json, none)")),
    }
    black_box(&out);
    perps_session_free(session);
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    match args.as_slice() {
        [mode, n] => {
            let n: u64 = n.parse().unwrap_or_else(|_| panic!("N must be a number, got {n:?}"));
            if let Err(e) = run(mode, n) {
                eprintln!("callgrind_driver: {e}");
                std::process::exit(2);
            }
        }
        [] => {
            for mode in ["none", "floor", "core", "into", "json"] {
                run(mode, 3).expect("known mode");
            }
            println!("callgrind_driver: every mode runs (bench/callgrind.sh counts instructions with it)");
        }
        _ => {
            eprintln!("usage: callgrind_driver MODE N   (MODE: floor, core, into, json, none)");
            std::process::exit(2);
        }
    }
}
