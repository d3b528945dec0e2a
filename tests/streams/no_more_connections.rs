//! "No reconnect loop", judged without a fixed sleep: a stream that has ended (or a connection
//! refused for good) must not connect again, but a fixed wait of a few hundred milliseconds
//! passes wrongly on a loaded machine, where a looping reconnect may not have come yet. The
//! wait is measured from a positive control instead: a reconnect of a stream with the same
//! client options, to a venue that drops its first connection, timed now, on this machine.
//! Included beside `helpers.rs` and `scripted_venue.rs`.
#![allow(dead_code)]

use crate::helpers::{LONG, client, is_status, session, until};
use crate::scripted_venue::{raw_venue, read_json, send};
use perps::stream::Stream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How many times the control's reconnect the wait lasts; the stream under test reconnects
/// (when it wrongly does) after a backoff of 5 to 50 ms (`helpers::client`), as the control's.
const CONTROLS: u32 = 5;
/// The shortest wait: the fixed one the tests had.
const FLOOR: Duration = Duration::from_millis(200);

/// How long a reconnect takes now: from a venue's closing the first connection of a market
/// stream (the `helpers::client` options) to the second connection's arrival at the venue.
pub fn a_reconnect_takes() -> Duration {
    let times: Arc<Mutex<(Option<Instant>, Option<Instant>)>> = Arc::default();
    let kept = times.clone();
    let url = raw_venue(move |i, tcp| {
        if i == 1 {
            kept.lock().unwrap().1.get_or_insert(Instant::now());
        }
        let Ok(mut ws) = tungstenite::accept(tcp) else { return };
        read_json(&mut ws);
        send(&mut ws, r#"{"seq":1,"channel":"auth","data":{"code":200,"msg":"success"}}"#);
        if i == 0 {
            kept.lock().unwrap().0 = Some(Instant::now());
            return; // the connection closes as the socket drops
        }
        crate::scripted_venue::hold(ws, LONG);
    });
    let stream = Stream::open_market(client(&url, "{}"), Some(session()), r#"[{"channel":"order"}]"#)
        .expect("the control stream opens");
    until(&stream, LONG, "the control's reconnect", is_status("reconnected"));
    stream.close();
    let (closed, arrived) = *times.lock().unwrap();
    arrived.expect("the second connection arrived") - closed.expect("the first connection was closed")
}

/// Asserts that `connections()` is `n` and stays `n` for `CONTROLS` times a reconnect as
/// measured now (`a_reconnect_takes`), `FLOOR` at least: a reconnect loop has had that time
/// to show, however loaded the machine.
pub fn assert_no_connection_beyond(n: usize, connections: impl Fn() -> usize, what: &str) {
    assert_eq!(connections(), n, "{what}");
    let control = a_reconnect_takes();
    let bound = (control * CONTROLS).max(FLOOR);
    let start = Instant::now();
    while start.elapsed() < bound {
        assert_eq!(connections(), n, "{what}: connection {} came {:?} into the wait", n + 1, start.elapsed());
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(connections(), n, "{what}: no connection more within {bound:?} ({CONTROLS} reconnects of {control:?})");
}
