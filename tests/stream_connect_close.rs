//! Freeing a stream whose reconnection is stuck in the TCP connect: the venue's address stops
//! answering (here a listener on 127.0.0.1 whose accept queue is full, so that Linux drops
//! the connect's SYN as a host that is gone would), with a connect timeout of two minutes.
//! The close must end the connect at once and the I/O thread with it, not leave the thread
//! behind for the rest of the time-out. One test in its own binary, so that the stream's I/O
//! thread is the only one of its name.

#[path = "streams/helpers.rs"]
mod helpers;

use helpers::*;
use perps::stream::Stream;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

const PRICE: &str = r#"[{"channel":"price","symbol":"BTC-USD"}]"#;

/// The market streams' I/O threads of this process (their names as the system cuts them).
fn io_threads() -> usize {
    let tasks = std::fs::read_dir("/proc/self/task").unwrap();
    tasks
        .filter_map(|t| t.ok())
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == "perps-market-st"))
        .count()
}

/// Whether a connect to `port` on 127.0.0.1 is under way (a socket in SYN-SENT:
/// `/proc/net/tcp`'s state 02, its remote address `0100007F:<port in hex>`).
fn connecting_to(port: u16) -> bool {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let remote = format!("0100007F:{port:04X}");
    table.lines().skip(1).any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        fields.len() > 3 && fields[2] == remote && fields[3] == "02"
    })
}

/// Connect to `addr`, whose listener accepts no more, until a connect is not answered: the
/// accept queue is full. The connections made are returned (they hold their places in it).
fn fill_backlog(addr: SocketAddr) -> Vec<TcpStream> {
    let mut queued = Vec::new();
    for _ in 0..16 {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
            Ok(tcp) => queued.push(tcp),
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return queued,
            Err(e) => panic!("filling the backlog: {e}"),
        }
    }
    panic!("the backlog never filled");
}

#[test]
fn freeing_a_stream_whose_reconnect_is_stuck_in_the_tcp_connect_ends_its_thread() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    // SAFETY: `listen` on a socket this test owns; Linux takes the new backlog (0: one
    // connection waits to be accepted, the SYN of any other is dropped).
    assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), 0) }, 0);
    let addr = listener.local_addr().unwrap();
    // The venue: its first connection is served until the test drops it; it accepts no other.
    let (venue_tx, venue_rx) = std::sync::mpsc::channel();
    let venue = std::thread::spawn(move || {
        let (tcp, _) = listener.accept().unwrap();
        let mut ws = tungstenite::accept(tcp).unwrap();
        let _subscription = ws.read().unwrap();
        venue_tx.send(ws).unwrap();
        listener
    });
    let options = r#"{"connect_timeout_ms":120000,"stream_reconnect_min_ms":5,"stream_reconnect_max_ms":5}"#;
    let stream = Stream::open_market(client(&format!("http://{addr}"), options), None, PRICE).unwrap();
    let connection = venue_rx.recv_timeout(LONG).unwrap();
    let _listener = venue.join().unwrap();
    let _queued = fill_backlog(addr);
    assert!(!connecting_to(addr.port()), "the backlog's own connects are over");
    assert_eq!(io_threads(), 1);

    drop(connection);
    until(&stream, LONG, "reconnecting", is_status("reconnecting"));
    let waiting = Instant::now();
    while !connecting_to(addr.port()) {
        assert!(waiting.elapsed() < LONG, "the stream never tried to connect again");
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(stream);
    // The I/O thread ends: the close cut its connect short. Left behind, it would run for the
    // rest of the connect's two minutes.
    let freed = Instant::now();
    while io_threads() > 0 {
        assert!(freed.elapsed() < Duration::from_secs(60), "the I/O thread was left in its connect");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!connecting_to(addr.port()), "the connect's socket is closed");
}
