//! When the stream's I/O thread is pinned to the CPU the caller runs on (it inherits the
//! affinity of the thread that opens the stream), a caller waiting in `next` reads the frame
//! that wakes it itself (`src/stream/reader.rs`), and the I/O thread is not woken by every
//! frame as well: an event costs no context switch. Unpinned, the I/O thread reads and
//! decodes each frame while the caller wakes up. Shown by the I/O thread's own count of the
//! times it went to sleep and was woken (`voluntary_ctxt_switches` of its task in /proc).
//! Its own process, so that the one `perps-market-st…` thread is this test's (one at a time).

#[path = "streams/helpers.rs"]
mod helpers;

use helpers::*;
use perps::stream::Stream;
use serde_json::Value;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use tungstenite::Message;

const PRICE: &str = r#"[{"channel":"price","symbol":"BTC-USD"}]"#;
const FRAMES: usize = 400;
/// The time between two pushes while the caller and the I/O thread are pinned together.
const SPACING: Duration = Duration::from_micros(2500);

/// The task ids of the market stream's I/O threads.
fn io_threads() -> Vec<String> {
    let tasks = std::fs::read_dir("/proc/self/task").unwrap();
    tasks
        .filter_map(|t| t.ok())
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end().starts_with("perps-market-st"))
        })
        .map(|t| t.file_name().to_string_lossy().into_owned())
        .collect()
}

/// The stream's I/O thread: its task id.
fn io_thread() -> String {
    let found = io_threads();
    assert_eq!(found.len(), 1, "one market stream thread: {found:?}");
    found[0].clone()
}

fn voluntary_switches(task: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/self/task/{task}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("voluntary_ctxt_switches:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The calling thread's affinity.
fn affinity() -> libc::cpu_set_t {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the call writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set), 0);
        set
    }
}

fn set_affinity(set: &libc::cpu_set_t) {
    // SAFETY: a valid set of its own size.
    assert_eq!(unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) }, 0);
}

/// Open a stream on a venue that pushes `FRAMES` prices `spacing` apart, take them all in
/// `next` (each call waiting up to `wait`: zero busy-polls), and return how many times the
/// stream's I/O thread was woken meanwhile.
fn io_wake_ups_while_the_caller_reads(wait: Duration, spacing: Duration) -> u64 {
    // One stream at a time in this process: its I/O thread is found by name.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let venue = std::thread::spawn(move || {
        let (tcp, _) = listener.accept().unwrap();
        tcp.set_nodelay(true).unwrap();
        let mut ws = tungstenite::accept(tcp).unwrap();
        let _subscribe = ws.read().unwrap();
        go_rx.recv().unwrap();
        for seq in 1..=FRAMES {
            let frame = format!(
                r#"{{"seq":{seq},"channel":"price","symbol":"BTC-USD","data":{{"mark_price":"65000.{seq}","symbol":"BTC-USD"}}}}"#
            );
            ws.send(Message::text(frame)).unwrap();
            std::thread::sleep(spacing);
        }
        let _ = ws.get_mut().set_read_timeout(Some(Duration::from_millis(50)));
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until && !matches!(ws.read(), Err(tungstenite::Error::ConnectionClosed)) {}
    });
    let stream = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap();
    until(&stream, Duration::from_secs(5), "connected", is_status("connected"));
    let task = io_thread();
    // The I/O thread looks at its affinity every 20 ms.
    std::thread::sleep(Duration::from_millis(100));
    let before = voluntary_switches(&task);
    go_tx.send(()).unwrap();
    let mut prices = 0;
    let deadline = Instant::now() + Duration::from_secs(30);
    while prices < FRAMES && Instant::now() < deadline {
        if let Some(event) = stream.next(Some(wait)).unwrap() {
            let event: Value = serde_json::from_str(&event).unwrap();
            if event["channel"] == "price" {
                prices += 1;
                assert_eq!(event["seq"], prices, "in order, none lost");
            }
        }
    }
    let woken = voluntary_switches(&task) - before;
    assert_eq!(prices, FRAMES, "every push delivered");
    drop(stream);
    venue.join().unwrap();
    // Its I/O thread gone, so that the next stream's is the only one.
    let gone = Instant::now() + Duration::from_secs(5);
    while !io_threads().is_empty() && Instant::now() < gone {
        std::thread::sleep(Duration::from_millis(20));
    }
    woken
}

/// Pin the calling thread (and so the stream's I/O thread, which inherits it) to the CPU it
/// is on; return the affinity it had.
fn pin_here() -> libc::cpu_set_t {
    let all = affinity();
    // SAFETY: sched_getcpu has no preconditions.
    let here = unsafe { libc::sched_getcpu() };
    assert!(here >= 0);
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes within it.
    let one = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(here as usize, &mut set);
        set
    };
    set_affinity(&one);
    all
}

#[test]
fn pinned_with_the_caller_the_io_thread_leaves_the_frames_to_it() {
    let all = pin_here();
    let pinned = io_wake_ups_while_the_caller_reads(Duration::from_secs(1), SPACING);
    set_affinity(&all);
    println!("pinned with the caller: the I/O thread was woken {pinned} times for {FRAMES} frames");
    // About one wake-up per 50 ms of timers (1 s of pushes: ~20), and one for a frame that
    // came while the caller was between two calls; before, about one per frame (362 of 400
    // here; a frame read with the one before it costs none).
    assert!(pinned < (FRAMES / 2) as u64, "pinned: the I/O thread was woken {pinned} times for {FRAMES} frames");

    // Unpinned: about one per frame (400 of 400 here); fewer on a loaded machine, where the
    // thread may find many frames at one wake-up. Pushed 2.5 ms apart, with two busy loops
    // beside the test it waited to run most of the time and was woken 1 to 45 times in 10
    // runs of 12; 10 ms apart, 293 to 400 times in 7 runs of 8 (48 in the other). So 10 ms
    // apart, and judged on the best of three runs at most (pinned, it is woken far fewer
    // times in every run).
    // SAFETY: a valid set.
    if unsafe { libc::CPU_COUNT(&all) } > 1 {
        let mut unpinned = Vec::new();
        for _ in 0..3 {
            let woken = io_wake_ups_while_the_caller_reads(Duration::from_secs(1), Duration::from_millis(10));
            println!("unpinned: the I/O thread was woken {woken} times for {FRAMES} frames");
            unpinned.push(woken);
            if woken >= (FRAMES / 4) as u64 {
                break;
            }
        }
        assert!(
            unpinned.iter().any(|&woken| woken >= (FRAMES / 4) as u64),
            "unpinned, the I/O thread reads: woken {unpinned:?} times"
        );
    }
}

/// An engine that busy-polls `next` without waiting, pinned with the I/O thread: each call
/// reads what the socket holds, so the frames reach it without the I/O thread (before, the
/// I/O thread read every one: about one wake-up per frame, and the caller saw each frame only
/// when the scheduler let that thread run).
#[test]
fn pinned_with_a_caller_that_busy_polls_the_io_thread_leaves_the_frames_to_it() {
    let all = pin_here();
    let pinned = io_wake_ups_while_the_caller_reads(Duration::ZERO, SPACING);
    set_affinity(&all);
    println!("pinned, busy-polling: the I/O thread was woken {pinned} times for {FRAMES} frames");
    assert!(pinned < (FRAMES / 2) as u64, "busy-polling: the I/O thread was woken {pinned} times for {FRAMES} frames");
}
