//! Streams (BENCHMARKS.md, "Streams"):
//! - `depth_book/decode_sort`: one 20+20-level `depth_book` push decoded, sorted and shaped
//!   into its event, as the I/O thread does (target: ≥ 200,000 per second on one core);
//! - `order_entry/stream_new_order` against `order_entry/sign_plus_plain_write`: the calling
//!   thread's time from `Stream::new_order` to the frame written, and the floor — the body
//!   signature plus a plain tungstenite write of the same frame on a loopback connection
//!   (target: ≤ 1.15×);
//! - `delivery/stream_next` against `delivery/plain_read`: one frame pushed by the test venue
//!   until `next` returns it, and the same frame read by a plain blocking tungstenite loop
//!   (target: median ≤ 1.10×).
//!
//! Printed once before the criterion groups: RSS before and after 10^6 decoded events, the
//! order entry's calling-thread CPU time in paired rounds (`CLOCK_THREAD_CPUTIME_ID`, the
//! target's measure) with its ratio, and the delivery medians over 3,000 paired events.

#[path = "../tests/common/ws_server.rs"]
mod ws_server;

use criterion::{Criterion, criterion_group, criterion_main};
use perps::client::Client;
use perps::client::options::ClientOptions;
use perps::session::Session;
use perps::stream::{PushDecoder, Stream};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

const SEED_B58: &str = "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb";
const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"alo","reduce_only":false,"cl_ord_id":"bench-1"}"#;

fn depth_frame(seq: u64) -> String {
    let mut asks: Vec<String> =
        (0..20).map(|i| format!("[\"{}.{}\",\"{}.{:03}\"]", 65010 + (i * 7) % 20, i % 10, i + 1, i)).collect();
    let mut bids: Vec<String> =
        (0..20).map(|i| format!("[\"{}.{}\",\"{}.{:03}\"]", 64990 - (i * 7) % 20, i % 10, i + 1, i)).collect();
    asks.rotate_left(7);
    bids.rotate_left(3);
    format!(
        r#"{{"seq":{seq},"channel":"depth_book","symbol":"BTC-USD","data":{{"asks":[{}],"bids":[{}],"symbol":"BTC-USD"}}}}"#,
        asks.join(","),
        bids.join(",")
    )
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec for the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// `cargo bench -- --test` (bench/smoke.sh): every part runs, briefly.
fn quick() -> bool {
    std::env::args().any(|a| a == "--test")
}

fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    statm.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 4
}

fn client(server: &ws_server::WsServer) -> Arc<Client> {
    let options =
        ClientOptions::parse(Some(r#"{"stream_connects_per_minute":100000,"stream_max_connections":1000}"#)).unwrap();
    Arc::new(Client::new(&server.perps_url(), &server.perps_url(), options).unwrap())
}

fn depth(c: &mut Criterion) {
    let mut decoder = PushDecoder::default();
    // Frames with seq 1..=1000, replayed as if each round were a new connection (so that
    // every event is in order: no status event is made).
    let frames: Vec<String> = (1..=1000).map(depth_frame).collect();
    let decode = |decoder: &mut PushDecoder, i: usize| {
        if i.is_multiple_of(1000) {
            decoder.reset_seq();
        }
        decoder.decode(&frames[i % 1000])
    };
    // RSS over 10^6 decoded events (after a warm-up of 10^5).
    let events = if quick() { 10_000 } else { 1_000_000 };
    for i in 0..events / 10 {
        black_box(decode(&mut decoder, i));
    }
    let before = rss_kib();
    for i in 0..events {
        let event = decode(&mut decoder, i);
        assert!(event.as_deref().is_some_and(|e| e.starts_with("{\"channel\":\"depth_book\"")));
    }
    println!("rss over {events} depth_book events: {} KiB before, {} KiB after", before, rss_kib());
    let reference = depth_frame(1);
    c.bench_function("depth_book/serde_value_parse_reference", |b| {
        b.iter(|| black_box(serde_json::from_str::<serde_json::Value>(black_box(&reference)).unwrap()))
    });
    let mut i = 0usize;
    c.bench_function("depth_book/decode_sort", |b| {
        b.iter(|| {
            i += 1;
            black_box(decode(&mut decoder, i))
        })
    });
}

fn order_entry(c: &mut Criterion) {
    let server = ws_server::WsServer::start(ws_server::Config { silent_orders: true, ..Default::default() });
    let session = Arc::new(Session::from_api_key("bench-token", SEED_B58).unwrap());
    let stream = Stream::open_orders(client(&server), session.clone()).unwrap();
    // The floor: the signature of the same params and a plain tungstenite write of a frame of
    // the same shape and size on another loopback connection.
    let body = perps::order::validate(ORDER).unwrap();
    let (mut ws, _) = tungstenite::connect(format!("{}/ws-api/v1", server.url())).unwrap();
    ws.get_ref_tcp_nodelay();
    let floor = |ws: &mut tungstenite::WebSocket<_>| {
        let signature = session.sign_body_now(body.as_str().as_bytes(), 1_700_000_000_000).unwrap();
        let frame = format!(
            r#"{{"session_id":"00000000-0000-4000-8000-000000000000","request_id":"00000000-0000-4000-8000-000000000001","method":"order:new","header":{{"x-request-id":"{}","x-request-timestamp":"{}","x-request-signature":"{}","x-request-sign-version":"v1"}},"params":{}}}"#,
            signature.request_id(),
            signature.timestamp(),
            signature.signature(),
            serde_json::to_string(body.as_str()).unwrap()
        );
        ws.send(tungstenite::Message::text(frame)).unwrap();
    };
    // Paired rounds of calling-thread CPU time (the target's measure), alternating.
    let (rounds, per_round) = if quick() { (2, 20) } else { (15, 500) };
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = thread_cpu();
        for _ in 0..per_round {
            black_box(stream.new_order(ORDER).unwrap());
        }
        ours.push((thread_cpu() - t) / per_round);
        let t = thread_cpu();
        for _ in 0..per_round {
            floor(&mut ws);
        }
        base.push((thread_cpu() - t) / per_round);
    }
    let (ours, base) = (median(ours), median(base));
    println!(
        "order_entry thread CPU: stream_new_order {ours:?}, signature + plain write {base:?}, ratio {:.3}",
        ours.as_secs_f64() / base.as_secs_f64()
    );
    let mut group = c.benchmark_group("order_entry");
    group.bench_function("stream_new_order", |b| b.iter(|| black_box(stream.new_order(black_box(ORDER)).unwrap())));
    group.bench_function("sign_plus_plain_write", |b| {
        b.iter(|| {
            let signature = session.sign_body_now(body.as_str().as_bytes(), 1_700_000_000_000).unwrap();
            let frame = format!(
                r#"{{"session_id":"00000000-0000-4000-8000-000000000000","request_id":"00000000-0000-4000-8000-000000000001","method":"order:new","header":{{"x-request-id":"{}","x-request-timestamp":"{}","x-request-signature":"{}","x-request-sign-version":"v1"}},"params":{}}}"#,
                signature.request_id(),
                signature.timestamp(),
                signature.signature(),
                serde_json::to_string(body.as_str()).unwrap()
            );
            ws.send(tungstenite::Message::text(frame)).unwrap();
        })
    });
    group.finish();
    drop(stream);
}

trait NoDelay {
    fn get_ref_tcp_nodelay(&self);
}
impl NoDelay for tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>> {
    fn get_ref_tcp_nodelay(&self) {
        if let tungstenite::stream::MaybeTlsStream::Plain(tcp) = self.get_ref() {
            tcp.set_nodelay(true).unwrap();
        }
    }
}

/// A venue that writes one `depth_book` frame each time it is told to (with the next `seq`,
/// so that every push is one event): accept one WebSocket, then for every message on the
/// channel write a frame (the same hand-off for both readers).
fn pusher() -> (std::net::SocketAddr, std::sync::mpsc::Sender<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let (tcp, _) = listener.accept().unwrap();
        tcp.set_nodelay(true).unwrap();
        let mut ws = tungstenite::accept(tcp).unwrap();
        let mut seq = 0;
        while rx.recv().is_ok() {
            seq += 1;
            if ws.send(tungstenite::Message::text(depth_frame(seq))).is_err() {
                break;
            }
        }
    });
    (addr, tx)
}

fn delivery(c: &mut Criterion) {
    let mut group = c.benchmark_group("delivery");
    let (addr, tx) = pusher();
    let options = ClientOptions::parse(Some(&format!(
        r#"{{"stream_url":"ws://{addr}/ws-stream/v1","stream_connects_per_minute":100000,"stream_max_connections":1000}}"#
    )))
    .unwrap();
    let client = Arc::new(Client::new(&format!("http://{addr}"), &format!("http://{addr}"), options).unwrap());
    let stream = Stream::open_market(client, None, r#"[{"channel":"depth_book","symbol":"BTC-USD"}]"#).unwrap();
    stream.next(None).unwrap(); // connected
    let (addr2, tx2) = pusher();
    let (mut ws, _) = tungstenite::connect(format!("ws://{addr2}/ws-stream/v1")).unwrap();
    ws.get_ref_tcp_nodelay();
    // Paired, one event at a time: from the push request to the event in hand.
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for _ in 0..if quick() { 50 } else { 3000 } {
        let t = std::time::Instant::now();
        tx.send(()).unwrap();
        black_box(stream.next(None).unwrap());
        ours.push(t.elapsed());
        let t = std::time::Instant::now();
        tx2.send(()).unwrap();
        black_box(ws.read().unwrap());
        base.push(t.elapsed());
    }
    let (ours, base) = (median(ours), median(base));
    println!(
        "delivery median: stream_next {ours:?}, plain tungstenite read {base:?}, ratio {:.3}",
        ours.as_secs_f64() / base.as_secs_f64()
    );
    group.bench_function("stream_next", |b| {
        b.iter(|| {
            tx.send(()).unwrap();
            black_box(stream.next(None).unwrap())
        })
    });
    drop(stream);
    group.bench_function("plain_read", |b| {
        b.iter(|| {
            tx2.send(()).unwrap();
            black_box(ws.read().unwrap())
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = depth, order_entry, delivery
}
criterion_main!(benches);
