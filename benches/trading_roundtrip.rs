//! Each trading endpoint's round trip through the C ABI against the in-process sandbox venue,
//! next to a plain ureq request of the same pre-built request (same URL with its query, same
//! headers, same body, signed beforehand) to the same sandbox, in the same process
//! (BENCHMARKS.md; target: the library within 1.10× of the plain request, as a ratio of
//! medians measured in one run). The baseline pays the venue's work and the wire; the
//! difference is the library's: parameter checks, the one serialisation, signing POSTs,
//! headers, answer checks (and, for the depth book, sorting the levels).
//!
//! `cargo bench --bench trading_roundtrip`; `-- --test` runs a short paired run.
//! Env: PERPS_BENCH_ROUNDS (5), PERPS_BENCH_PER_ROUND (200), PERPS_BENCH_ONLY (one endpoint).

mod common;

use perps::ffi::client::{perps_client, perps_client_free, perps_client_new, perps_new_order, perps_signin};
use perps::ffi::error::{perps_error, perps_error_free, perps_error_message};
use perps::ffi::session::{perps_session, perps_session_free, perps_session_new, perps_session_token};
use perps::ffi::sign::{perps_body_signature, perps_sign_body_into};
use perps::ffi::strings::perps_string_free;
use perps::ffi::trading::*;
use perps_sandbox::{Sandbox, SandboxConfig};
use std::ffi::{CStr, CString, c_char};
use std::mem::MaybeUninit;
use std::ptr::{null, null_mut};
use std::time::Instant;

const BSC_KEY: &CStr = c"0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

type EndpointFn =
    extern "C" fn(*const perps_client, *const perps_session, *const c_char, *mut *mut perps_error) -> *mut c_char;

/// One endpoint's case: the export, its parameters, and the same request written by hand.
struct Case {
    name: &'static str,
    call: EndpointFn,
    params: CString,
    /// GET target (path and query) or POST path, under perps_url.
    target: String,
    /// POST body (signed before the timing); None for a GET.
    body: Option<Vec<u8>>,
    public: bool,
    /// The venue answers 404 (a cancel of an order that is not there) both ways.
    not_found: bool,
}

fn cases(cl_ord_id: &str) -> Vec<Case> {
    let q = |name: &'static str, call: EndpointFn, params: &str, query: &str, public: bool| Case {
        name,
        call,
        params: CString::new(params).unwrap(),
        target: format!("/api/{name}{query}"),
        body: None,
        public,
        not_found: false,
    };
    let p = |name: &'static str, call: EndpointFn, params: &str, body: &str, not_found: bool| Case {
        name,
        call,
        params: CString::new(params).unwrap(),
        target: format!("/api/{name}"),
        body: Some(body.as_bytes().to_vec()),
        public: false,
        not_found,
    };
    vec![
        p(
            "cancel_order",
            perps_cancel_order,
            r#"{"cl_ord_id":"bench-absent"}"#,
            r#"{"cl_ord_id":"bench-absent"}"#,
            true,
        ),
        p(
            "cancel_orders",
            perps_cancel_orders,
            r#"{"cl_ord_id_list":["bench-absent"]}"#,
            r#"{"cl_ord_id_list":["bench-absent"]}"#,
            false,
        ),
        p(
            "change_leverage",
            perps_change_leverage,
            r#"{"symbol":"BTC-USD","leverage":10}"#,
            r#"{"symbol":"BTC-USD","leverage":10}"#,
            false,
        ),
        p(
            "change_margin_mode",
            perps_change_margin_mode,
            r#"{"symbol":"BTC-USD","margin_mode":"cross"}"#,
            r#"{"symbol":"BTC-USD","margin_mode":"cross"}"#,
            false,
        ),
        q(
            "query_order",
            perps_query_order,
            &format!(r#"{{"cl_ord_id":"{cl_ord_id}"}}"#),
            &format!("?cl_ord_id={cl_ord_id}"),
            false,
        ),
        q("query_orders", perps_query_orders, r#"{"symbol":"BTC-USD","limit":10}"#, "?symbol=BTC-USD&limit=10", false),
        q("query_open_orders", perps_query_open_orders, r#"{"symbol":"BTC-USD"}"#, "?symbol=BTC-USD", false),
        q("query_trades", perps_query_trades, r#"{"symbol":"BTC-USD","limit":10}"#, "?symbol=BTC-USD&limit=10", false),
        q(
            "query_funding_history",
            perps_query_funding_history,
            r#"{"symbol":"BTC-USD","limit":10}"#,
            "?symbol=BTC-USD&limit=10",
            false,
        ),
        q("query_positions", perps_query_positions, r#"{"symbol":"BTC-USD"}"#, "?symbol=BTC-USD", false),
        q("query_balance", perps_query_balance, "{}", "", false),
        q("query_position_config", perps_query_position_config, r#"{"symbol":"BTC-USD"}"#, "?symbol=BTC-USD", false),
        q("query_symbol_info", perps_query_symbol_info, r#"{"symbol":"BTC-USD"}"#, "?symbol=BTC-USD", true),
        q("query_symbol_price", perps_query_symbol_price, r#"{"symbol":"BTC-USD"}"#, "?symbol=BTC-USD", true),
        q(
            "query_depth_book",
            perps_query_depth_book,
            r#"{"symbol":"BTC-USD","limit":10}"#,
            "?symbol=BTC-USD&limit=10",
            true,
        ),
    ]
}

struct Trader {
    client: *mut perps_client,
    session: *mut perps_session,
    agent: ureq::Agent,
    perps_url: String,
    bearer: String,
}

impl Trader {
    fn new(venue: &Sandbox) -> Trader {
        let (base, perps) = (CString::new(venue.base_url()).unwrap(), CString::new(venue.perps_url()).unwrap());
        let client = perps_client_new(base.as_ptr(), perps.as_ptr(), null(), null_mut());
        let session = perps_session_new(null_mut());
        assert!(!client.is_null() && !session.is_null());
        common::owned(|e| perps_signin(client, session, c"bsc".as_ptr(), BSC_KEY.as_ptr(), 3600, e), "perps_signin");
        let token = common::owned(|e| perps_session_token(session, e), "perps_session_token").into_string().unwrap();
        // What a latency-minded caller would pick: keep-alive, no Nagle, statuses read.
        let agent = ureq::Agent::config_builder().http_status_as_error(false).no_delay(true).build().new_agent();
        Trader { client, session, agent, perps_url: venue.perps_url(), bearer: format!("Bearer {token}") }
    }

    /// The library's call; a 404 is expected where the case says so.
    fn call(&self, case: &Case) {
        let mut err: *mut perps_error = null_mut();
        let session = if case.public { null() } else { self.session as *const perps_session };
        let answer = (case.call)(self.client, session, case.params.as_ptr(), &mut err);
        if answer.is_null() {
            let message = unsafe { CStr::from_ptr(perps_error_message(err)) }.to_string_lossy().into_owned();
            perps_error_free(err);
            assert!(case.not_found && message.contains("404"), "perps_{} failed: {message}", case.name);
        }
        perps_string_free(answer);
    }

    fn presign(&self, case: &Case) -> Option<perps_body_signature> {
        let body = case.body.as_ref()?;
        let mut out = MaybeUninit::<perps_body_signature>::zeroed();
        perps_sign_body_into(self.session, body.as_ptr(), body.len(), out.as_mut_ptr());
        Some(unsafe { out.assume_init() })
    }

    /// The same request with plain ureq.
    fn plain(&self, case: &Case, signature: Option<&perps_body_signature>) {
        let url = format!("{}{}", self.perps_url, case.target);
        let field = |f: &[c_char]| unsafe { CStr::from_ptr(f.as_ptr()) }.to_str().unwrap().to_owned();
        let mut response = match (&case.body, signature) {
            (Some(body), Some(sig)) => self
                .agent
                .post(&url)
                .header("authorization", &self.bearer)
                .header("content-type", "application/json")
                .header("x-request-sign-version", field(&sig.version))
                .header("x-request-id", field(&sig.request_id))
                .header("x-request-timestamp", field(&sig.timestamp))
                .header("x-request-signature", field(&sig.signature))
                .send(&body[..]),
            _ if case.public => self.agent.get(&url).call(),
            _ => self.agent.get(&url).header("authorization", &self.bearer).call(),
        }
        .expect("plain request");
        let status = response.status().as_u16();
        let answer = response.body_mut().read_to_string().expect("answer");
        assert!(status == 200 || (case.not_found && status == 404), "{}: {status} {answer}", case.name);
    }
}

impl Drop for Trader {
    fn drop(&mut self) {
        perps_session_free(self.session);
        perps_client_free(self.client);
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 { values[n / 2] } else { (values[n / 2 - 1] + values[n / 2]) / 2.0 }
}

/// Both kinds interleaved one by one (alternating which goes first); per endpoint, the
/// median of each and their ratio; every ratio measured in this one run.
fn paired(trader: &Trader, case: &Case, rounds: usize, per_round: usize) -> (f64, f64, f64, f64) {
    for _ in 0..per_round.min(50) {
        trader.call(case);
        trader.plain(case, trader.presign(case).as_ref());
    }
    let (mut lib, mut base, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (mut l, mut b) = (Vec::with_capacity(per_round), Vec::with_capacity(per_round));
        for i in 0..per_round {
            let signature = trader.presign(case);
            let mut time_lib = || {
                let t = Instant::now();
                trader.call(case);
                l.push(t.elapsed().as_nanos() as f64 / 1000.0);
            };
            let mut time_plain = || {
                let t = Instant::now();
                trader.plain(case, signature.as_ref());
                b.push(t.elapsed().as_nanos() as f64 / 1000.0);
            };
            if i % 2 == 0 {
                time_lib();
                time_plain();
            } else {
                time_plain();
                time_lib();
            }
        }
        ratios.push(median(&mut l.clone()) / median(&mut b.clone()));
        lib.extend(l);
        base.extend(b);
    }
    let (lib, base) = (median(&mut lib), median(&mut base));
    let (lo, hi) = ratios.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| (lo.min(*r), hi.max(*r)));
    (lib, base, lo, hi)
}

fn main() {
    let test_mode = std::env::args().any(|a| a == "--test");
    let rounds = env_number("PERPS_BENCH_ROUNDS").unwrap_or(if test_mode { 1 } else { 5 });
    let per_round = env_number("PERPS_BENCH_PER_ROUND").unwrap_or(if test_mode { 10 } else { 200 });
    let only = std::env::var("PERPS_BENCH_ONLY").ok();

    let venue = Sandbox::start(SandboxConfig::default()).expect("sandbox starts");
    let trader = Trader::new(&venue);
    // A resting order for query_order to find (far below the mark: it never fills).
    let order = c"{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.001\",\"price\":\"1000\",\"time_in_force\":\"gtc\",\"reduce_only\":false,\"cl_ord_id\":\"bench-resting\"}";
    common::owned(|e| perps_new_order(trader.client, trader.session, order.as_ptr(), e), "perps_new_order");

    println!("paired run: {rounds} round(s) of {per_round} requests each way per endpoint, interleaved one by one");
    println!("{:<24} {:>12} {:>12} {:>8}   per-round ratios", "endpoint", "library µs", "ureq µs", "ratio");
    let mut worst: (f64, &str) = (0.0, "");
    for case in cases("bench-resting") {
        if only.as_deref().is_some_and(|o| o != case.name) {
            continue;
        }
        let (lib, base, lo, hi) = paired(&trader, &case, rounds, per_round);
        let ratio = lib / base;
        if ratio > worst.0 {
            worst = (ratio, case.name);
        }
        println!("{:<24} {lib:>12.1} {base:>12.1} {ratio:>8.3}   {lo:.3}–{hi:.3}", case.name);
    }
    println!("highest ratio of medians: {:.3} ({})   target <= 1.10", worst.0, worst.1);
}

fn env_number(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.parse().ok()
}
