//! `perps_new_order` against the in-process sandbox venue on loopback, next to a plain ureq
//! POST of the same kind of request, signed beforehand, to the same sandbox in the same
//! process (BENCHMARKS.md). The baseline pays the venue's work and the wire, not the
//! library's: the difference is what the library adds (validation, serialisation, signing,
//! headers, answer checks).
//!
//! Each pre-signed request is signed (outside the timing) right before it is sent, with a
//! fresh request id: the sandbox refuses a replayed id, and a refusal would be a cheaper
//! path than the accepted order the library's call gets.
//!
//! Also a behaviour, asserted: 1,000 sequential orders use exactly one TCP connection.
//!
//! `cargo bench --bench order_roundtrip`; `-- --test` runs it once.

mod common;

use criterion::{BatchSize, Criterion};
use perps::ffi::client::{perps_client, perps_client_free, perps_client_new, perps_new_order, perps_signin};
use perps::ffi::error::{perps_code, perps_error, perps_error_free, perps_error_message};
use perps::ffi::order::perps_order_serialize;
use perps::ffi::session::{perps_session, perps_session_free, perps_session_new, perps_session_token};
use perps::ffi::sign::{perps_body_signature, perps_sign_body_into};
use perps::ffi::strings::perps_string_free;
use perps_sandbox::{Sandbox, SandboxConfig};
use std::ffi::{CStr, CString, c_char};
use std::mem::MaybeUninit;
use std::ptr::{null, null_mut};
use std::time::Instant;

const ORDER: &CStr = c"{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\",\"price\":\"65000\",\"time_in_force\":\"gtc\",\"reduce_only\":false}";
const BSC_KEY: &CStr = c"0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

/// An owned `char*` result as a `String`, or a panic with the error's message.
fn owned_text(call: impl FnOnce(*mut *mut perps_error) -> *mut c_char, what: &str) -> String {
    common::owned(call, what).into_string().expect("results are UTF-8")
}

/// A signed-in client and session through the C ABI.
struct Trader {
    client: *mut perps_client,
    session: *mut perps_session,
}

impl Trader {
    fn sign_in(venue: &Sandbox) -> Trader {
        let (base, perps) = (CString::new(venue.base_url()).unwrap(), CString::new(venue.perps_url()).unwrap());
        let mut err = null_mut();
        let client = perps_client_new(base.as_ptr(), perps.as_ptr(), null(), &mut err);
        assert!(!client.is_null(), "perps_client_new failed");
        let session = perps_session_new(&mut err);
        assert!(!session.is_null(), "perps_session_new failed");
        owned_text(|e| perps_signin(client, session, c"bsc".as_ptr(), BSC_KEY.as_ptr(), 3600, e), "perps_signin");
        Trader { client, session }
    }

    fn new_order(&self) {
        let mut err: *mut perps_error = null_mut();
        let answer = perps_new_order(self.client, self.session, ORDER.as_ptr(), &mut err);
        if answer.is_null() {
            let message = unsafe { CStr::from_ptr(perps_error_message(err)) }.to_string_lossy().into_owned();
            perps_error_free(err);
            panic!("perps_new_order failed: {message}");
        }
        perps_string_free(answer);
    }
}

impl Drop for Trader {
    fn drop(&mut self) {
        perps_session_free(self.session);
        perps_client_free(self.client);
    }
}

/// The baseline: a plain ureq agent POSTing requests signed beforehand.
struct Plain {
    agent: ureq::Agent,
    url: String,
    bearer: String,
    body: Vec<u8>,
    session: *mut perps_session,
}

/// One request's four signature headers, made before the timed part.
struct Presigned(perps_body_signature);

fn field(bytes: &[c_char]) -> &str {
    unsafe { CStr::from_ptr(bytes.as_ptr()) }.to_str().expect("ASCII")
}

impl Plain {
    fn new(venue: &Sandbox, trader: &Trader) -> Plain {
        let token = owned_text(|e| perps_session_token(trader.session, e), "perps_session_token");
        let body = owned_text(|e| perps_order_serialize(ORDER.as_ptr(), e), "perps_order_serialize").into_bytes();
        // The settings a latency-minded caller would pick: keep-alive (the default), no
        // Nagle delay, and the status read rather than turned into an error.
        let agent = ureq::Agent::config_builder().http_status_as_error(false).no_delay(true).build().new_agent();
        Plain {
            agent,
            url: format!("{}/api/new_order", venue.perps_url()),
            bearer: format!("Bearer {token}"),
            body,
            session: trader.session,
        }
    }

    fn presign(&self) -> Presigned {
        let mut out = MaybeUninit::<perps_body_signature>::zeroed();
        let code = perps_sign_body_into(self.session, self.body.as_ptr(), self.body.len(), out.as_mut_ptr());
        assert!(code == perps_code::PERPS_OK);
        Presigned(unsafe { out.assume_init() })
    }

    fn post(&self, signed: &Presigned) {
        let sig = &signed.0;
        let mut response = self
            .agent
            .post(&self.url)
            .header("authorization", &self.bearer)
            .header("content-type", "application/json")
            .header("x-request-sign-version", field(&sig.version))
            .header("x-request-id", field(&sig.request_id))
            .header("x-request-timestamp", field(&sig.timestamp))
            .header("x-request-signature", field(&sig.signature))
            .send(&self.body[..])
            .expect("POST new_order");
        let status = response.status().as_u16();
        let answer = response.body_mut().read_to_string().expect("answer");
        assert!(
            status == 200 && answer.contains("\"code\":0"),
            "the venue refused the pre-signed order: {status} {answer}"
        );
    }
}

/// The behaviour: sign-in and 1,000 sequential orders on one client use one TCP connection.
fn one_connection_for_1000_orders() {
    let venue = Sandbox::start(SandboxConfig::default()).expect("sandbox starts");
    let trader = Trader::sign_in(&venue);
    let before = venue.stats();
    for _ in 0..1000 {
        trader.new_order();
    }
    let stats = venue.stats();
    println!(
        "connection reuse: sign-in + 1000 sequential perps_new_order -> {} TCP connection(s), {} orders accepted",
        stats.connections,
        stats.orders_accepted - before.orders_accepted
    );
    assert_eq!(stats.orders_accepted - before.orders_accepted, 1000, "every order accepted");
    assert_eq!(stats.connections, 1, "1,000 sequential orders (and the sign-in) must use exactly one TCP connection");
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 { values[n / 2] } else { (values[n / 2 - 1] + values[n / 2]) / 2.0 }
}

/// The target's measure: both kinds interleaved one by one (alternating which goes first),
/// median of each, in one run.
fn paired(trader: &Trader, plain: &Plain, rounds: usize, per_round: usize) {
    for _ in 0..per_round.min(200) {
        trader.new_order();
        plain.post(&plain.presign());
    }
    let (mut all_lib, mut all_plain, mut round_ratios) = (Vec::new(), Vec::new(), Vec::new());
    let (mut cpu_lib, mut cpu_plain) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (mut lib, mut base) = (Vec::with_capacity(per_round), Vec::with_capacity(per_round));
        for i in 0..per_round {
            let signed = plain.presign();
            let mut time_lib = || {
                let (c, t) = (thread_cpu_us(), Instant::now());
                trader.new_order();
                lib.push(t.elapsed().as_nanos() as f64 / 1000.0);
                cpu_lib.push(thread_cpu_us() - c);
            };
            let mut time_plain = || {
                let (c, t) = (thread_cpu_us(), Instant::now());
                plain.post(&signed);
                base.push(t.elapsed().as_nanos() as f64 / 1000.0);
                cpu_plain.push(thread_cpu_us() - c);
            };
            if i % 2 == 0 {
                time_lib();
                time_plain();
            } else {
                time_plain();
                time_lib();
            }
        }
        all_lib.extend_from_slice(&lib);
        all_plain.extend_from_slice(&base);
        round_ratios.push(median(&mut lib) / median(&mut base));
    }
    let (lib, base) = (median(&mut all_lib), median(&mut all_plain));
    let ratios = round_ratios.clone();
    let spread = (
        ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    println!();
    println!("paired run: {rounds} rounds of {per_round} orders each way, interleaved one by one");
    println!("  perps_new_order                 median {lib:.1} µs");
    println!("  ureq POST, pre-signed           median {base:.1} µs");
    println!(
        "  ratio of medians                {:.3}  (per round: median {:.3}, min {:.3}, max {:.3})   target <= 1.10",
        lib / base,
        median(&mut round_ratios),
        spread.0,
        spread.1
    );
    println!(
        "  calling thread's CPU per request: perps_new_order median {:.1} µs, ureq POST median {:.1} µs",
        median(&mut cpu_lib),
        median(&mut cpu_plain)
    );
}

/// CPU time of the calling thread in µs (the client's side only: the sandbox's workers are
/// other threads).
fn thread_cpu_us() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid clock id and a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e6 + ts.tv_nsec as f64 / 1e3
}

fn main() {
    let test_mode = std::env::args().any(|a| a == "--test");
    one_connection_for_1000_orders();

    let venue = Sandbox::start(SandboxConfig::default()).expect("sandbox starts");
    let trader = Trader::sign_in(&venue);
    let plain = Plain::new(&venue, &trader);

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("order_roundtrip");
    group.bench_function("perps_new_order", |b| b.iter(|| trader.new_order()));
    group.bench_function("ureq_post_presigned", |b| {
        b.iter_batched(|| plain.presign(), |signed| plain.post(&signed), BatchSize::SmallInput)
    });
    group.finish();
    criterion.final_summary();

    let rounds = env_number("PERPS_BENCH_ROUNDS").unwrap_or(if test_mode { 1 } else { 10 });
    let per_round = env_number("PERPS_BENCH_PER_ROUND").unwrap_or(if test_mode { 10 } else { 500 });
    paired(&trader, &plain, rounds, per_round);
    println!("  (sandbox saw {} TCP connections: the library's client and the plain agent)", venue.stats().connections);
}

fn env_number(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.parse().ok()
}
