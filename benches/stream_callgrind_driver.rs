//! A driver for `bench/callgrind_streams.sh`: the same setup in every run, then one stream
//! operation N times, so that two runs under `valgrind --tool=callgrind` with different N give
//! the instructions of one operation by subtraction (the script counts the main thread only:
//! the test venue's threads and the stream's I/O thread are left out).
//!
//! `stream_callgrind_driver MODE N` with MODE one of:
//! - `depth`: one 20 + 20-level `depth_book` push decoded, sorted and shaped into its event
//!   (`PushDecoder`, what the I/O thread does with a frame);
//! - `depth_session`: the same on a stream with a session, the event redacted of its token
//!   (`stream_fixtures::bench_token`, a JWT of the venue's size);
//! - `depth_value`: the reference, a bare `serde_json::Value` parse of the same frame;
//! - `order_ffi`: `perps_stream_new_order` + `perps_string_free` through the C ABI, the frame
//!   written to the test venue on loopback;
//! - `order`: `Stream::new_order` (no ABI) on the same kind of stream;
//! - `order_floor`: the floor of the order target: the body signature of the same params and
//!   a plain tungstenite write of a frame of the same shape;
//! - `none`: the setup only.
//!
//! Without arguments (as `cargo bench` runs it) it runs every mode a few times and says so.

#[path = "common/stream_fixtures.rs"]
mod stream_fixtures;
#[path = "../tests/common/ws_server.rs"]
mod ws_server;

use perps::ffi::client::{perps_client_free, perps_client_new};
use perps::ffi::session::{perps_session_free, perps_session_from_api_key};
use perps::ffi::stream::{perps_order_stream_open, perps_stream_free, perps_stream_new_order};
use perps::ffi::strings::perps_string_free;
use perps::stream::PushDecoder;
use std::ffi::CString;
use std::hint::black_box;
use std::ptr::null_mut;
use stream_fixtures::{ORDER, SEED_B58, bench_token, depth_frame, floor_order_frame};

fn run(mode: &str, n: u64) -> Result<(), String> {
    // The same setup whatever the mode, so that it cancels out in the subtraction.
    let frames: Vec<String> = (1..=1000).map(depth_frame).collect();
    let mut decoder = PushDecoder::default();
    let mut with_session = PushDecoder::default().with_token(&bench_token());
    let server = ws_server::WsServer::start(ws_server::Config { silent_orders: true, ..Default::default() });
    let url = CString::new(server.perps_url()).unwrap();
    let options = CString::new(stream_fixtures::CLIENT_OPTIONS).unwrap();
    let client = perps_client_new(url.as_ptr(), url.as_ptr(), options.as_ptr(), null_mut());
    let token = CString::new("bench-token").unwrap();
    let seed = CString::new(SEED_B58).unwrap();
    let session_handle = perps_session_from_api_key(token.as_ptr(), seed.as_ptr(), null_mut());
    assert!(!client.is_null() && !session_handle.is_null());
    let stream = perps_order_stream_open(client, session_handle, null_mut());
    assert!(!stream.is_null(), "the order stream opens against the test venue");
    let rust_client = stream_fixtures::client(&server.perps_url());
    let session = std::sync::Arc::new(perps::session::Session::from_api_key("bench-token", SEED_B58).unwrap());
    let rust_stream = perps::stream::Stream::open_orders(rust_client, session.clone()).unwrap();
    let (mut plain, _) = tungstenite::connect(format!("{}/ws-api/v1", server.url())).unwrap();
    if let tungstenite::stream::MaybeTlsStream::Plain(tcp) = plain.get_ref() {
        tcp.set_nodelay(true).unwrap();
    }
    let body = perps::order::validate(ORDER).unwrap();
    let order = CString::new(ORDER).unwrap();
    match mode {
        "none" => {}
        "depth" => {
            for i in 0..n as usize {
                if i % 1000 == 0 {
                    decoder.reset_seq();
                }
                black_box(decoder.decode(black_box(&frames[i % 1000])));
            }
        }
        "depth_session" => {
            for i in 0..n as usize {
                if i % 1000 == 0 {
                    with_session.reset_seq();
                }
                black_box(with_session.decode(black_box(&frames[i % 1000])));
            }
        }
        "depth_value" => {
            for i in 0..n as usize {
                black_box(serde_json::from_str::<serde_json::Value>(black_box(&frames[i % 1000])).unwrap());
            }
        }
        "order_ffi" => {
            for _ in 0..n {
                let sent = perps_stream_new_order(stream, black_box(order.as_ptr()), null_mut());
                assert!(!sent.is_null());
                perps_string_free(sent);
            }
        }
        "order" => {
            for _ in 0..n {
                black_box(rust_stream.new_order(black_box(ORDER)).unwrap());
            }
        }
        "order_floor" => {
            for _ in 0..n {
                plain.send(tungstenite::Message::text(floor_order_frame(&session, &body))).unwrap();
            }
        }
        other => {
            return Err(format!(
                "unknown mode {other:?} (depth, depth_session, depth_value, order_ffi, order, order_floor, none)"
            ));
        }
    }
    drop(rust_stream);
    perps_stream_free(stream);
    perps_session_free(session_handle);
    perps_client_free(client);
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    match args.as_slice() {
        [mode, n] => {
            let n: u64 = n.parse().unwrap_or_else(|_| panic!("N must be a number, got {n:?}"));
            if let Err(e) = run(mode, n) {
                eprintln!("stream_callgrind_driver: {e}");
                std::process::exit(2);
            }
        }
        [] => {
            for mode in ["none", "depth", "depth_session", "depth_value", "order_ffi", "order", "order_floor"] {
                run(mode, 3).expect("known mode");
            }
            println!(
                "stream_callgrind_driver: every mode runs (bench/callgrind_streams.sh counts instructions with it)"
            );
        }
        _ => {
            eprintln!(
                "usage: stream_callgrind_driver MODE N   (MODE: depth, depth_session, depth_value, order_ffi, order, order_floor, none)"
            );
            std::process::exit(2);
        }
    }
}
