//! The streams against a venue that floods what the library must keep state for: pings whose
//! pongs it never reads (the client's write buffer), and pushes that each name a new symbol
//! (the `seq` table). Both must stay bounded in memory and in time per frame. And a venue
//! that never reads must not keep `close` waiting behind an order write. Each venue is a
//! short script on 127.0.0.1.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;
#[path = "common/ws_server.rs"]
mod ws_server;

use helpers::*;
use perps::Code;
use perps::stream::Stream;
use scripted_venue::*;
use std::io::Write;
use std::time::{Duration, Instant};

const PRICE: &str = r#"[{"channel":"price","symbol":"BTC-USD"}]"#;

/// One test at a time: the first measures the process's memory, and the others' floods
/// would count in it.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The process's resident memory, from /proc.
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// The CPU time this process's threads have used (user and system), from `getrusage`. A
/// measure of work done that a loaded machine does not stretch, as it stretches the wall clock.
fn cpu_time() -> Duration {
    // SAFETY: a zeroed rusage is a valid value for the call to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF and a valid out-pointer.
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) }, 0);
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
}

/// Frames of text written as one batch of raw bytes (the venue's writes cost little).
fn text_frames(frames: impl Iterator<Item = String>) -> Vec<u8> {
    frames.flat_map(|f| ws_server::raw_frame(true, 0x1, f.as_bytes())).collect()
}

#[test]
fn a_ping_flood_from_a_venue_that_never_reads_keeps_the_write_buffer_bounded() {
    let _alone = alone();
    // 96 MiB of 125-byte pings; the venue never reads a pong. Each pong the client cannot
    // send was buffered (tungstenite's write buffer is unbounded by default): ~100 MB held.
    const FLOOD: usize = 96 << 20;
    let url = venue(|_, mut ws| {
        read_json(&mut ws); // the subscription
        let batch = ws_server::raw_frame(true, 0x9, &[b'p'; 125]).repeat(8192);
        let tcp = ws.get_mut();
        for _ in 0..FLOOD / batch.len() {
            if tcp.write_all(&batch).is_err() {
                return;
            }
        }
        let push = r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#;
        let _ = tcp.write_all(&text_frames(std::iter::once(push.to_owned())));
        std::thread::sleep(Duration::from_secs(10));
    });
    let stream = Stream::open_market(client(&url, r#"{"stream_idle_timeout_ms":60000}"#), None, PRICE).unwrap();
    let before = resident_bytes();
    let (push, seen) = until(&stream, Duration::from_secs(240), "the push after the pings", is_channel("price"));
    assert_eq!(push["symbol"], "BTC-USD", "{push}");
    assert!(!seen.iter().any(is_status("disconnected")), "{seen:?}");
    let grown = resident_bytes().saturating_sub(before);
    assert!(grown < 24 << 20, "the client grew by {} MiB answering pings nobody read", grown >> 20);
}

#[test]
fn pushes_that_each_name_a_new_symbol_are_not_tracked_beyond_a_bound() {
    let _alone = alone();
    // Every push names a symbol never seen before. The `seq` table kept one entry per pair
    // and scanned it per push: quadratic time (the I/O thread fell minutes behind) and
    // memory without bound.
    const PUSHES: usize = 150_000;
    let url = venue(|_, mut ws| {
        read_json(&mut ws);
        let pushes =
            (0..PUSHES).map(|n| format!(r#"{{"seq":{},"channel":"price","symbol":"S{n:07}","data":{{}}}}"#, n + 1));
        let tcp = ws.get_mut();
        if tcp.write_all(&text_frames(pushes)).is_err() {
            return;
        }
        // Then a regression on a pair the venue named first: still reported.
        let late = r#"{"seq":1,"channel":"price","symbol":"S0000000","data":{}}"#;
        let _ = tcp.write_all(&text_frames(std::iter::once(late.to_owned())));
        std::thread::sleep(Duration::from_secs(10));
    });
    let stream = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap();
    // The bound is on the CPU the process spends (the I/O thread's scans, the venue's writes,
    // this thread's parsing), not on the wall clock: a scan per push is CPU work, and on a
    // loaded machine the wall clock measures the other processes (75 s on two cores at load
    // 12, for about 3 s of CPU). Healthy: about 3 s of CPU in a debug build; the unbounded
    // table: more than 120 s. Checked at every event, so the defect fails fast.
    const CPU_BOUND: Duration = Duration::from_secs(30);
    let started = Instant::now();
    let cpu_before = cpu_time();
    let mut pushes = 0;
    let regression = loop {
        let spent = cpu_time().saturating_sub(cpu_before);
        assert!(spent < CPU_BOUND, "{pushes} pushes of new symbols took {spent:?} of CPU");
        // Not `until`: it would keep (and on failure print) every push. The wall-clock
        // limit only ends a hung test; the CPU bound above is the assertion.
        let event = stream.next(Some(Duration::from_secs(600).saturating_sub(started.elapsed()))).unwrap();
        let Some(event) = event else { panic!("no regression within 600 s; {pushes} pushes came") };
        let event: serde_json::Value = serde_json::from_str(&event).unwrap();
        if is_status("seq_regression")(&event) {
            break event;
        }
        pushes += usize::from(event["channel"] == "price");
    };
    let spent = cpu_time().saturating_sub(cpu_before);
    assert_eq!(regression["subscription"]["symbol"], "S0000000", "{regression}");
    assert!(spent < CPU_BOUND, "{PUSHES} pushes of new symbols took {spent:?} of CPU");
}

/// After the subscription, a venue that reads nothing more: `pings` JSON pings of ~240 bytes
/// at once, then a price push every 50 ms until the client goes (at most 10 minutes). Not a
/// fixed count: the pings' `write_all` returns while megabytes of them still wait in the
/// socket buffers, and a venue that then closed with the client's pongs unread would reset
/// the connection, and the reset discards what the client had not read yet: on a loaded
/// machine, the rest of the pings and every push ("Connection reset without closing
/// handshake", then the pings again on the next connection).
fn pings_then_pushes(mut ws: tungstenite::WebSocket<std::net::TcpStream>, pings: usize) {
    read_json(&mut ws);
    let word = "w".repeat(220);
    let pings = (0..pings).map(|n| format!(r#"{{"ping":"{word}{n}"}}"#));
    let tcp = ws.get_mut();
    if tcp.write_all(&text_frames(pings)).is_err() {
        return;
    }
    for n in 0..12_000 {
        let push = format!(r#"{{"seq":{n},"channel":"price","symbol":"BTC-USD","data":{{"mark_price":"1"}}}}"#);
        if tcp.write_all(&text_frames(std::iter::once(push))).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn json_pings_from_a_venue_that_never_reads_do_not_stall_the_stream() {
    let _alone = alone();
    // The venue reads nothing and sends JSON pings (`{"ping":…}`, answered with `{"pong":…}`)
    // until the client's socket buffers are full of pongs, then a push. Each pong written
    // to a full socket waited out the write timeout (2 s here, 10 s by default) on the I/O
    // thread: the pushes behind the pings came after minutes.
    const PINGS: usize = 120_000; // ~28 MiB of pongs: more than loopback's socket buffers
    // The push, again and again: an `overflow` of the pings passed on must not hide it.
    let url = venue(move |_, ws| pings_then_pushes(ws, PINGS));
    // The write timeout (`read_timeout_ms`) at its default of 10 s, not the helper's 2 s: the
    // defect's stalls wait out the write timeout (with 2 s: 17,506 pings in 60 s, e34e233),
    // so a longer one keeps it further beyond the wide bound below. Patience with a venue
    // that takes none of our writes (`stream_idle_timeout_ms`) beyond the test: a loaded
    // machine can read the pings for more than the default 30 s (56 s seen) and then
    // rightly drop the connection as half-open (another test's subject); the new one gets
    // the pings again, not the push.
    let options = r#"{"read_timeout_ms":10000,"stream_idle_timeout_ms":600000}"#;
    let stream = Stream::open_market(client(&url, options), None, PRICE).unwrap();
    let started = Instant::now();
    let mut pings = 0;
    loop {
        // Not `until`: it would keep (and on failure print) every ping.
        let event = stream.next(Some(Duration::from_secs(240).saturating_sub(started.elapsed()))).unwrap();
        let Some(event) = event else { panic!("no push within 240 s; {pings} pings came") };
        let event: serde_json::Value = serde_json::from_str(&event).unwrap();
        if event["channel"] == "price" {
            break;
        }
        pings += usize::from(event["channel"] == "unrecognized");
    }
    let took = started.elapsed();
    // The defect's stall is the write timeout, again and again: many minutes for these
    // pings (the push never came in 60 s with 2 s). The bound is wide because a debug build reads and passes on 28 MiB of pings:
    // about 3 s of CPU, 22 s on a machine of two cores also running fuzzers and another
    // test suite, over 90 s at a load of 12 on two cores (the same wait as the ping flood's
    // above). Not a CPU bound: the defect waits, it does not compute.
    assert!(took < Duration::from_secs(240), "the push came {took:?} after {pings} pings");
}

#[test]
fn a_venue_that_sends_but_never_reads_is_dropped_as_half_open_after_the_idle_timeout() {
    let _alone = alone();
    // JSON pings until the client's pongs fill the socket buffers and its write buffer, then
    // a push every 50 ms. The pushes kept the connection "alive" for as long as the venue
    // sent them, though nothing written (pongs, orders, the client's pings) left any more.
    const PINGS: usize = 40_000; // ~9.5 MB of pongs: more than loopback's buffers and 4 MiB
    let url = venue(move |i, mut ws| match i {
        0 => pings_then_pushes(ws, PINGS),
        _ => drop(read_json(&mut ws)), // the replacement connection: not this test's subject
    });
    let stream = Stream::open_market(client(&url, r#"{"stream_idle_timeout_ms":1500}"#), None, PRICE).unwrap();
    let started = Instant::now();
    let down = loop {
        // Not `until`: it would keep (and on failure print) every ping passed on. The limit
        // ends the test when the connection is never dropped (the venue pushes until the
        // client goes); a loaded machine takes tens of seconds to read the pings before
        // the pongs can fill anything.
        let left = Duration::from_secs(120).saturating_sub(started.elapsed());
        let Some(event) = stream.next(Some(left)).unwrap() else { panic!("still connected after 120 s") };
        let event: serde_json::Value = serde_json::from_str(&event).unwrap();
        if is_status("disconnected")(&event) {
            break event;
        }
    };
    let reason = down["reason"].as_str().unwrap();
    assert!(reason.contains("took none of our writes") && reason.contains("half-open"), "{down}");
    until(&stream, Duration::from_secs(10), "a new connection", is_status("reconnected"));
}

#[test]
fn close_from_another_thread_wakes_an_order_write_waiting_for_a_venue_that_never_reads() {
    let _alone = alone();
    // The venue answers the login, then reads nothing: orders fill the socket until one
    // waits for room, holding the connection's lock for up to the write timeout (10 s here).
    // Filling the socket takes thousands of signed orders (14 s in a loaded debug run): the
    // venue keeps the connection, and the client its patience with a silent venue
    // (`stream_idle_timeout_ms`, 30 s by default), far longer than that.
    let url = venue(|_, mut ws| {
        let login = read_json(&mut ws);
        send(&mut ws, &logged_in(login["request_id"].as_str().unwrap()));
        std::thread::sleep(Duration::from_secs(600));
    });
    let options = r#"{"read_timeout_ms":10000,"stream_idle_timeout_ms":600000}"#;
    let stream = Stream::open_orders(client(&url, options), session()).unwrap();
    let started_at = std::sync::Mutex::new(None::<Instant>);
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut sent = 0usize;
            loop {
                *started_at.lock().unwrap() = Some(Instant::now());
                match stream.new_order(ORDER) {
                    Ok(_) => sent += 1,
                    Err(error) => return (error, Instant::now(), sent),
                }
            }
        });
        // The write that waits: one call in progress for 500 ms (each takes microseconds).
        let waiting = Instant::now();
        while started_at.lock().unwrap().is_none_or(|at| at.elapsed() < Duration::from_millis(500)) {
            assert!(waiting.elapsed() < Duration::from_secs(240), "no order write ever waited for room");
            if writer.is_finished() {
                let (error, _, sent) = writer.join().unwrap();
                panic!("the writer failed before the socket was full ({sent} sent): {error}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let closed_at = Instant::now();
        stream.close();
        let (error, returned_at, sent) = writer.join().unwrap();
        let took = returned_at.saturating_duration_since(closed_at);
        assert!(took < Duration::from_secs(1), "the waiting write returned {took:?} after close ({sent} sent)");
        assert_eq!(error.code(), Code::StreamClosed, "{error}");
        assert!(error.message().contains("closed while a frame waited"), "{error}");
        assert!(error.cl_ord_id().is_some(), "{error}");
        if error.may_have_reached_venue() {
            assert!(error.request_id().is_some() && error.stream_request_id().is_some(), "{error}");
            assert!(error.message().contains("may have been partly sent"), "{error}");
        } else {
            assert!(error.message().contains("the order was not sent"), "{error}");
        }
    });
    let freeing = Instant::now();
    drop(stream);
    assert!(freeing.elapsed() < Duration::from_secs(1), "free took {:?}", freeing.elapsed());
}
