//! Client-side CPU of a full sign-in (bsc, certificates already cached): prepare-signin,
//! challenge verification (ES256 JWT + claims), wallet signature (EIP-191), login
//! (BENCHMARKS.md; target ≤ 1 ms on the reference machine).
//!
//! The venue runs in another process (the `perps-sandbox` binary), so this process's CPU
//! time is the library's alone: `CLOCK_PROCESS_CPUTIME_ID` around each `perps_signin`
//! (every thread of the process, should the HTTP stack use any), next to the calling
//! thread's CPU time and the wall time. A per-phase breakdown follows, through the split
//! API (`perps_wallet_address`, `perps_prepare_signin`, `perps_wallet_sign`, `perps_login`).
//!
//! `cargo build --release -p perps-sandbox && cargo bench --bench signin_cpu`; `-- --test` makes a
//! few sign-ins.

mod common;
use common::owned;

use perps::ffi::client::{
    perps_client, perps_client_free, perps_client_new, perps_login, perps_prepare_signin, perps_signin,
};
use perps::ffi::session::{perps_session, perps_session_free, perps_session_new};
use perps::ffi::wallet::{perps_wallet_address, perps_wallet_sign};
use std::ffi::{CStr, CString};
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::ptr::{null, null_mut};
use std::time::Instant;

const BSC_KEY: &CStr = c"0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

/// Microseconds of CPU on the given clock.
fn cpu_us(clock: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid clock id and a valid out-pointer.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as f64 * 1e6 + ts.tv_nsec as f64 / 1e3
}

/// Process CPU, thread CPU and wall time (µs) of one call.
fn measure(f: impl FnOnce()) -> [f64; 3] {
    let (p, t, w) = (cpu_us(libc::CLOCK_PROCESS_CPUTIME_ID), cpu_us(libc::CLOCK_THREAD_CPUTIME_ID), Instant::now());
    f();
    let wall = w.elapsed().as_nanos() as f64 / 1e3;
    [cpu_us(libc::CLOCK_PROCESS_CPUTIME_ID) - p, cpu_us(libc::CLOCK_THREAD_CPUTIME_ID) - t, wall]
}

/// The `perps-sandbox` binary (its own crate, so cargo does not build it for this bench):
/// `$PERPS_SANDBOX`, else beside this bench's profile directory (`target/release/`), where
/// `cargo build --release -p perps-sandbox` puts it.
fn sandbox_binary() -> std::path::PathBuf {
    if let Some(path) = std::env::var_os("PERPS_SANDBOX") {
        return path.into();
    }
    let bench = std::env::current_exe().expect("the bench's own path");
    // target/release/deps/signin_cpu-<hash> -> target/release/perps-sandbox
    let binary = bench.parent().and_then(|deps| deps.parent()).expect("a profile directory").join("perps-sandbox");
    assert!(binary.exists(), "{} not found: build it with cargo build --release -p perps-sandbox", binary.display());
    binary
}

/// The sandbox venue in its own process; stops when its standard input closes.
struct Venue {
    child: Child,
    base_url: CString,
    perps_url: CString,
}

impl Venue {
    fn start() -> Venue {
        let mut child = Command::new(sandbox_binary())
            .args(["--port", "0", "--exit-on-stdin-eof"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("perps-sandbox starts");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).expect("the URL line");
        let urls: serde_json::Value = serde_json::from_str(&line).expect("JSON URL line");
        let url = |k: &str| CString::new(urls[k].as_str().expect("URL")).unwrap();
        Venue { base_url: url("base_url"), perps_url: url("perps_url"), child }
    }
}

impl Drop for Venue {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

struct Stats(Vec<f64>);

impl Stats {
    fn quantile(&self, q: f64) -> f64 {
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * q).round() as usize]
    }
    fn line(&self) -> String {
        format!(
            "median {:7.1} µs   p10 {:7.1}   p90 {:7.1}",
            self.quantile(0.5),
            self.quantile(0.1),
            self.quantile(0.9)
        )
    }
}

fn new_session() -> *mut perps_session {
    let s = perps_session_new(null_mut());
    assert!(!s.is_null());
    s
}

fn signin(client: *mut perps_client, session: *mut perps_session) {
    owned(|e| perps_signin(client, session, c"bsc".as_ptr(), BSC_KEY.as_ptr(), 3600, e), "perps_signin");
}

fn main() {
    let test_mode = std::env::args().any(|a| a == "--test");
    let n: usize = std::env::var("PERPS_BENCH_SIGNINS").ok().and_then(|v| v.parse().ok()).unwrap_or(if test_mode {
        3
    } else {
        300
    });
    let venue = Venue::start();
    let mut err = null_mut();
    let client = perps_client_new(venue.base_url.as_ptr(), venue.perps_url.as_ptr(), null(), &mut err);
    assert!(!client.is_null(), "perps_client_new failed");

    // Warm-up: the first sign-in fetches and caches the venue's certificates (and builds
    // one-time tables); the target is about sign-ins after that.
    for _ in 0..3 {
        let s = new_session();
        signin(client, s);
        perps_session_free(s);
    }

    let (mut process, mut thread, mut wall) = (Stats(vec![]), Stats(vec![]), Stats(vec![]));
    for _ in 0..n {
        let s = new_session();
        let [p, t, w] = measure(|| signin(client, s));
        perps_session_free(s);
        process.0.push(p);
        thread.0.push(t);
        wall.0.push(w);
    }

    // The same sign-in through the split API, phase by phase (thread CPU).
    let mut phases: [Stats; 4] = std::array::from_fn(|_| Stats(vec![]));
    let mut phase_walls: [Stats; 4] = std::array::from_fn(|_| Stats(vec![]));
    for _ in 0..n {
        let s = new_session();
        let mut address = CString::default();
        let mut payload = CString::default();
        let mut signature = CString::default();
        let times = [
            measure(|| address = owned(|e| perps_wallet_address(c"bsc".as_ptr(), BSC_KEY.as_ptr(), e), "address")),
            measure(|| {
                payload = owned(|e| perps_prepare_signin(client, s, c"bsc".as_ptr(), address.as_ptr(), e), "prepare")
            }),
            measure(|| {
                signature =
                    owned(|e| perps_wallet_sign(c"bsc".as_ptr(), BSC_KEY.as_ptr(), payload.as_ptr(), e), "wallet sign")
            }),
            measure(|| {
                owned(|e| perps_login(client, s, signature.as_ptr(), 3600, e), "login");
            }),
        ];
        perps_session_free(s);
        for ((phase, phase_wall), t) in phases.iter_mut().zip(phase_walls.iter_mut()).zip(times) {
            phase.0.push(t[1]);
            phase_wall.0.push(t[2]);
        }
    }
    perps_client_free(client);

    println!("full sign-in (bsc, cached certs), {n} sign-ins, venue in another process:");
    println!("  client process CPU   {}   target median <= 1000 µs", process.line());
    println!("  calling thread CPU   {}", thread.line());
    println!("  wall                 {}", wall.line());
    println!("phases through the split API (calling thread CPU, then wall median):");
    for ((name, phase), phase_wall) in ["wallet address", "prepare-signin + verify", "wallet sign (EIP-191)", "login"]
        .iter()
        .zip(&phases)
        .zip(&phase_walls)
    {
        println!("  {name:<24} {}   wall {:8.1} µs", phase.line(), phase_wall.quantile(0.5));
    }
}
