//! `perps_cancel_all` through the C ABI against the sandbox venue: the filters (symbol,
//! prefix, named orders — alone, only themselves), confirmation on the venue, a batch the
//! venue lost (sent again; then cancelled order by order), a rate refusal (paused), a named
//! order never seen, no confirmation, a silent venue (the deadline holds), the run's own pace,
//! a lagging open-orders list, and its failures; look-ups out at once against a slow venue
//! (in time, under the same pace, all paused by a rate refusal) and a listing larger than
//! `max_response_bytes` (a loopback server).

mod common;
#[path = "common/rogue_server.rs"]
mod rogue_server;
#[path = "common/sandbox_trading.rs"]
mod sandbox_trading;

use common::abi::{call, cancel_all, new_order};
use perps::ffi::error::perps_code::*;
use perps_sandbox::SandboxConfig;
use sandbox_trading::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Symbol and prefix choose among the open orders; a named order that already filled is
/// reported filled; what the report says is what the venue holds.
#[test]
fn cancel_all_cancels_only_the_symbol_and_prefix_and_confirms_each_on_the_venue() {
    let venue = venue(SandboxConfig::default());
    let (client, session) = signed_in(&venue, None);
    let mm1 = resting(&client, &session, "BTC-USD", "mm-1");
    let mm2 = resting(&client, &session, "BTC-USD", "mm-2");
    resting(&client, &session, "BTC-USD", "other-1");
    resting(&client, &session, "ETH-USD", "mm-3");
    let market = r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"0.01","time_in_force":"ioc","reduce_only":false,"cl_ord_id":"mm-fill"}"#;
    new_order(&client, &session, market).unwrap();
    let filled_id = order_of(&client, &session, "mm-fill")["id"].as_i64().unwrap();

    let params = r#"{"symbol":"BTC-USD","cl_ord_id_prefix":"mm-","cl_ord_id_list":["mm-fill"],"confirm_ms":5000}"#;
    let report = parse(&cancel_all(&client, Some(&session), Some(params)).unwrap());
    assert_eq!(
        report,
        json!({
            "complete": true,
            "orders": [
                // The listed ones in the venue's order (newest first), then the named one.
                { "order_id": mm2, "cl_ord_id": "mm-2", "symbol": "BTC-USD", "status": "canceled", "confirmed": true },
                { "order_id": mm1, "cl_ord_id": "mm-1", "symbol": "BTC-USD", "status": "canceled", "confirmed": true },
                { "order_id": filled_id, "cl_ord_id": "mm-fill", "symbol": "BTC-USD", "status": "filled", "confirmed": true },
            ],
            "cancel_requests": 2,
            "failed_cancel_requests": 0,
            "queries": 3,
            "listing_truncated": false,
        })
    );
    // One batch by id for the listed orders, one by cl_ord_id for the named one not listed.
    assert_eq!(
        bodies_to(&venue, "/api/cancel_orders"),
        [json!({ "order_id_list": [mm2, mm1] }), json!({ "cl_ord_id_list": ["mm-fill"] })]
    );
    // On the venue: those two cancelled, the others untouched.
    for (cl, status) in [("mm-1", "canceled"), ("mm-2", "canceled"), ("other-1", "open"), ("mm-3", "open")] {
        assert_eq!(order_of(&client, &session, cl)["status"], status, "{cl}");
    }
    let open = list(&parse(&call(&client, Some(&session), "query_open_orders", None).unwrap()));
    let open: Vec<&str> = open.iter().map(|o| o["cl_ord_id"].as_str().unwrap()).collect();
    assert_eq!(open.len(), 2, "{open:?}");
    assert!(open.contains(&"other-1") && open.contains(&"mm-3"), "{open:?}");
}

/// The batch cancel is lost (HTTP 503, nothing done): it is sent again whole (cancels are
/// safe to repeat), and the orders are confirmed.
#[test]
fn cancel_all_sends_a_lost_batch_again() {
    let venue = venue(SandboxConfig::default());
    let (client, session) = signed_in(&venue, None);
    let a = resting(&client, &session, "BTC-USD", "mm-a");
    let b = resting(&client, &session, "ETH-USD", "mm-b");
    admin_post(&venue, "faults", json!({ "per_endpoint": { "cancel_orders": { "status": 503, "times": 1 } } }));
    let report = parse(&cancel_all(&client, Some(&session), Some(r#"{"confirm_ms":10000}"#)).unwrap());
    assert_eq!(report["complete"], true, "{report}");
    assert_eq!((&report["cancel_requests"], &report["failed_cancel_requests"]), (&json!(2), &json!(1)), "{report}");
    let batches: Vec<Value> = bodies_to(&venue, "/api/cancel_orders");
    assert_eq!(batches, [json!({ "order_id_list": [b, a] }), json!({ "order_id_list": [b, a] })], "the same batch");
    assert!(bodies_to(&venue, "/api/cancel_order").is_empty(), "no order left to cancel by itself");
    assert_eq!(order_of(&client, &session, "mm-a")["status"], "canceled");
    assert_eq!(order_of(&client, &session, "mm-b")["status"], "canceled");
}

/// A batch lost every time it is sent (three 503s): each order, still open a second later,
/// is cancelled again by itself, then confirmed.
#[test]
fn cancel_all_cancels_again_what_a_lost_batch_left_open() {
    let venue = venue(SandboxConfig::default());
    let (client, session) = signed_in(&venue, None);
    let a = resting(&client, &session, "BTC-USD", "mm-a");
    let b = resting(&client, &session, "ETH-USD", "mm-b");
    admin_post(&venue, "faults", json!({ "per_endpoint": { "cancel_orders": { "status": 503, "times": 3 } } }));
    let started = Instant::now();
    let report = parse(&cancel_all(&client, Some(&session), Some(r#"{"confirm_ms":10000}"#)).unwrap());
    assert!(started.elapsed() >= Duration::from_secs(1), "re-cancelled only after a second");
    assert_eq!(report["complete"], true, "{report}");
    let orders = report["orders"].as_array().unwrap();
    assert_eq!(orders.len(), 2, "{report}");
    assert!(orders.iter().all(|o| o["status"] == "canceled" && o["confirmed"] == true), "{report}");
    assert_eq!(report["cancel_requests"], 5, "one batch sent three times, then one cancel_order each: {report}");
    assert_eq!(report["failed_cancel_requests"], 3, "{report}");
    // One each, in either order: the confirmation's workers send them at once.
    let mut recancelled: Vec<i64> =
        bodies_to(&venue, "/api/cancel_order").iter().map(|body| body["order_id"].as_i64().unwrap()).collect();
    recancelled.sort_unstable();
    assert_eq!(recancelled, [a.min(b), a.max(b)], "one cancel_order each, by id");
    assert_eq!(order_of(&client, &session, "mm-a")["status"], "canceled");
    assert_eq!(order_of(&client, &session, "mm-b")["status"], "canceled");
}

/// A look-up refused for the rate (HTTP 429, no Retry-After): the run pauses (a second)
/// before asking again, rather than going on at once into more refusals that would spend the
/// account's credits.
#[test]
fn cancel_all_pauses_when_the_venue_refuses_for_the_rate() {
    let venue = venue(SandboxConfig::default());
    let (client, session) = signed_in(&venue, None);
    resting(&client, &session, "BTC-USD", "mm-a");
    resting(&client, &session, "ETH-USD", "mm-b");
    admin_post(&venue, "faults", json!({ "per_endpoint": { "query_order": { "status": 429, "times": 1 } } }));
    let started = Instant::now();
    let report = parse(&cancel_all(&client, Some(&session), Some(r#"{"confirm_ms":10000}"#)).unwrap());
    let took = started.elapsed();
    assert_eq!(report["complete"], true, "{report}");
    assert!(took >= Duration::from_millis(900), "paused after the 429: {took:?}");
    assert_eq!(report["queries"], 3, "the refused look-up, then one each: {report}");
    assert_eq!(report["cancel_requests"], 1, "{report}");
}

/// A named `cl_ord_id` the venue never shows: its 404s are no proof (a new order can be
/// invisible for seconds), so it is asked for until the deadline, then reported not_found.
#[test]
fn cancel_all_reports_a_named_order_never_seen_as_not_found() {
    let venue = venue(SandboxConfig::default());
    let (client, session) = signed_in(&venue, None);
    let started = Instant::now();
    let report = parse(
        &cancel_all(&client, Some(&session), Some(r#"{"cl_ord_id_list":["never-sent"],"confirm_ms":700}"#)).unwrap(),
    );
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(700) && took < Duration::from_secs(5), "{took:?}");
    assert_eq!(report["complete"], false, "{report}");
    assert_eq!(
        report["orders"],
        json!([{ "order_id": null, "cl_ord_id": "never-sent", "symbol": null, "status": "not_found", "confirmed": false }])
    );
    assert_eq!(report["cancel_requests"], 1, "{report}");
    assert!(report["queries"].as_u64().unwrap() >= 2, "asked again until the deadline: {report}");
    assert!(bodies_to(&venue, "/api/cancel_order").is_empty(), "a 404 is not an open order: no re-cancel");
}

/// confirm_ms 0: the cancels are sent, nothing is looked up; complete only with nothing to do.
#[test]
fn cancel_all_without_confirmation() {
    let venue = venue(SandboxConfig::default());
    let (client, session) = signed_in(&venue, None);
    let id = resting(&client, &session, "BTC-USD", "mm-z");
    let report = parse(&cancel_all(&client, Some(&session), Some(r#"{"confirm_ms":0}"#)).unwrap());
    assert_eq!(
        report,
        json!({
            "complete": false,
            "orders": [{ "order_id": id, "cl_ord_id": "mm-z", "symbol": "BTC-USD", "status": "open", "confirmed": false }],
            "cancel_requests": 1,
            "failed_cancel_requests": 0,
            "queries": 0,
            "listing_truncated": false,
        })
    );
    assert_eq!(order_of(&client, &session, "mm-z")["status"], "canceled");
    // Nothing open: nothing sent, complete.
    let report = parse(&cancel_all(&client, Some(&session), Some(r#"{"confirm_ms":0}"#)).unwrap());
    assert_eq!(
        report,
        json!({ "complete": true, "orders": [], "cancel_requests": 0, "failed_cancel_requests": 0, "queries": 0, "listing_truncated": false })
    );
    assert_eq!(bodies_to(&venue, "/api/cancel_orders").len(), 1);
}

/// Bad parameters are refused before anything is sent; a failed listing is returned and
/// nothing is cancelled; a refused token after the cancels were sent says so.
#[test]
fn cancel_all_failures() {
    let venue = venue(SandboxConfig::default());
    let (client, session) = signed_in(&venue, None);
    resting(&client, &session, "BTC-USD", "mm-f");
    let requests_before = venue.stats().requests;
    for (params, fragment) in [
        (
            r#"{"symbol":"BTC-USD","side":"buy"}"#,
            r#"cancel_all: unknown parameter "side"; known: symbol, cl_ord_id_prefix, cl_ord_id_list, confirm_ms"#,
        ),
        (r#"{"cl_ord_id_prefix":""}"#, r#"cancel_all: "cl_ord_id_prefix" is empty"#),
        (r#"{"cl_ord_id_list":[]}"#, r#"cancel_all: "cl_ord_id_list" is an empty list"#),
        (r#"{"cl_ord_id_list":["a","b\"c"]}"#, r#""cl_ord_id_list[1]" contains a quote or a backslash"#),
        (r#"{"confirm_ms":300001}"#, r#""confirm_ms""#),
        (r#"{"confirm_ms":1.5}"#, r#""confirm_ms""#),
        (r#"{"symbol":5}"#, r#""symbol" must be a string"#),
        ("[1]", "params_json must be a JSON object"),
    ] {
        let f = expect(cancel_all(&client, Some(&session), Some(params)), PERPS_INVALID_ARGUMENT);
        assert!(f.message.contains(fragment), "{params}: {}", f.message);
        assert!(!f.may_have_reached_venue);
    }
    assert_eq!(venue.stats().requests, requests_before, "nothing sent for bad parameters");

    // The listing fails: its error, and no cancel.
    admin_post(&venue, "faults", json!({ "per_endpoint": { "query_open_orders": { "status": 500, "times": 1 } } }));
    let f = expect(cancel_all(&client, Some(&session), None), PERPS_HTTP_STATUS);
    assert_eq!(f.http_status, 500, "{f:?}");
    assert!(bodies_to(&venue, "/api/cancel_orders").is_empty());
    assert_eq!(order_of(&client, &session, "mm-f")["status"], "open");

    // The token is refused after the cancel went out: the error says the cancels were sent.
    admin_post(&venue, "faults", json!({ "per_endpoint": { "query_order": { "status": 401, "times": 1 } } }));
    let f = expect(cancel_all(&client, Some(&session), None), PERPS_HTTP_STATUS);
    assert_eq!(f.http_status, 401, "{f:?}");
    assert!(f.message.starts_with("cancel_all stopped after 1 cancel request(s) were sent"), "{}", f.message);
    assert!(f.may_have_reached_venue);
    assert_eq!(order_of(&client, &session, "mm-f")["status"], "canceled");
}

/// The open-orders list lags behind cancels and fills (the sandbox's `open_orders_lag_ms`,
/// as the live venue's ~15 s): a listed order that has filled is reported filled, and a
/// second cancel_all right after the first confirms on query_order what the list still shows
/// open, without cancelling anything again one by one.
#[test]
fn cancel_all_confirms_on_query_order_what_the_lagging_list_shows_open() {
    let venue = venue(SandboxConfig::default());
    let (client, session) = signed_in(&venue, None);
    admin_post(&venue, "faults", json!({ "per_endpoint": { "query_open_orders": { "open_orders_lag_ms": 60000 } } }));
    let price = parse(&call(&client, None, "query_symbol_price", Some(r#"{"symbol":"BTC-USD"}"#)).unwrap());
    let mark = num(&price["mark_price"]);
    let quote = limit_order("buy", &format!("{:.2}", mark - 50.0), "0.01", r#","cl_ord_id":"mm-q""#);
    new_order(&client, &session, &quote.replace("\"gtc\"", "\"alo\"")).unwrap();
    let rest = resting(&client, &session, "BTC-USD", "mm-r");
    // The mark falls through the quote: it fills; the list still shows it open.
    admin_post(&venue, "mark", json!({ "symbol": "BTC-USD", "price": format!("{:.2}", mark - 200.0) }));
    assert_eq!(order_of(&client, &session, "mm-q")["status"], "filled");
    let quote_id = order_of(&client, &session, "mm-q")["id"].as_i64().unwrap();
    let listed = list(&parse(&call(&client, Some(&session), "query_open_orders", None).unwrap()));
    assert!(listed.iter().any(|o| o["id"] == quote_id && o["status"] == "open"), "the list lags: {listed:?}");

    let expected = |rest_status: &str| {
        json!([
            { "order_id": rest, "cl_ord_id": "mm-r", "symbol": "BTC-USD", "status": rest_status, "confirmed": true },
            { "order_id": quote_id, "cl_ord_id": "mm-q", "symbol": "BTC-USD", "status": "filled", "confirmed": true },
        ])
    };
    let report = parse(&cancel_all(&client, Some(&session), Some(r#"{"cl_ord_id_prefix":"mm-"}"#)).unwrap());
    assert_eq!(report["orders"], expected("canceled"), "{report}");
    assert_eq!(
        (&report["complete"], &report["cancel_requests"], &report["queries"]),
        (&json!(true), &json!(1), &json!(2))
    );
    // Again at once: both still listed open; the look-ups say they ended.
    let report = parse(&cancel_all(&client, Some(&session), Some(r#"{"cl_ord_id_prefix":"mm-"}"#)).unwrap());
    assert_eq!(report["orders"], expected("canceled"), "{report}");
    assert_eq!(
        (&report["complete"], &report["cancel_requests"], &report["queries"]),
        (&json!(true), &json!(1), &json!(2))
    );
    assert!(bodies_to(&venue, "/api/cancel_order").is_empty(), "nothing cancelled again one by one");
}

/// Named orders alone choose only themselves: naming one order must never cancel every
/// other order of the account (another engine's among them).
#[test]
fn cancel_all_of_named_orders_alone_leaves_every_other_order() {
    let venue = venue(SandboxConfig::default());
    let (client, session) = signed_in(&venue, None);
    let ours = resting(&client, &session, "BTC-USD", "mm-1");
    resting(&client, &session, "ETH-USD", "other-engine-7");
    let params = r#"{"cl_ord_id_list":["mm-1"],"confirm_ms":5000}"#;
    let report = parse(&cancel_all(&client, Some(&session), Some(params)).unwrap());
    assert_eq!(report["complete"], true, "{report}");
    assert_eq!(report["orders"].as_array().map(Vec::len), Some(1), "{report}");
    assert_eq!(report["orders"][0]["order_id"], ours, "{report}");
    assert_eq!(bodies_to(&venue, "/api/cancel_orders"), [json!({ "order_id_list": [ours] })]);
    assert_eq!(order_of(&client, &session, "other-engine-7")["status"], "open");
    assert_eq!(order_of(&client, &session, "mm-1")["status"], "canceled");
}

/// A venue that stops answering look-ups: the confirmation ends at `confirm_ms`, each
/// look-up held to it, whatever the client's `total_timeout_ms` and however many orders
/// (it took one timeout per order: eight orders, eight seconds for a confirm_ms of 500).
#[test]
fn cancel_all_keeps_to_its_deadline_against_a_silent_venue() {
    let venue = venue(SandboxConfig::default());
    // Look-ups answered after 8 s, a total limit of 8 s: a single look-up not held to
    // confirm_ms (700 ms) makes the run take 8 s (one timeout per order: 48 s). The bound is
    // confirm_ms with seconds of slack for a loaded machine. (Not longer: the venue's
    // workers sleep out the 8 s before it can stop.)
    let (client, session) = signed_in(&venue, Some(r#"{"total_timeout_ms":8000}"#));
    for i in 0..6 {
        resting(&client, &session, "BTC-USD", &format!("mm-{i}"));
    }
    admin_post(&venue, "faults", json!({ "per_endpoint": { "query_order": { "slow_ms": 8000, "times": 100 } } }));
    let started = Instant::now();
    let report = parse(&cancel_all(&client, Some(&session), Some(r#"{"confirm_ms":700}"#)).unwrap());
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "{took:?}: {report}");
    assert_eq!(report["complete"], false, "{report}");
    assert!(report["queries"].as_u64().unwrap() >= 1, "{report}");
}

/// Orders that stay open (every cancel lost): the run asks and cancels again at its own pace,
/// a burst of ten then twenty requests a second — under the venue's ~22 per account (unpaced,
/// forty such orders made over 200 requests a second).
#[test]
fn cancel_all_keeps_its_own_pace() {
    let venue = venue(SandboxConfig::default());
    let (client, session) = signed_in(&venue, None);
    for i in 0..12 {
        resting(&client, &session, "BTC-USD", &format!("mm-{i}"));
    }
    let lost = json!({ "status": 503, "times": 1000 });
    admin_post(&venue, "faults", json!({ "per_endpoint": { "cancel_orders": lost, "cancel_order": lost } }));
    let started = Instant::now();
    let report = parse(&cancel_all(&client, Some(&session), Some(r#"{"confirm_ms":2000}"#)).unwrap());
    let took = started.elapsed().as_secs_f64();
    admin_post(&venue, "faults", json!({}));
    assert_eq!(report["complete"], false, "{report}");
    let requests = report["cancel_requests"].as_u64().unwrap() + report["queries"].as_u64().unwrap();
    assert_eq!(report["failed_cancel_requests"], report["cancel_requests"], "every cancel was lost: {report}");
    // The listing, then at most the burst and twenty a second.
    let allowed = 10.0 + 20.0 * took + 1.0;
    assert!((requests as f64) <= allowed && requests >= 30, "{requests} requests in {took:.2} s: {report}");
}

/// A client signed in to `venue` with `n` resting BTC-USD orders ("mm-0"…): their ids.
fn quoting(venue: &perps_sandbox::Sandbox, n: usize) -> (common::abi::Client, common::abi::Session, Vec<i64>) {
    let (client, session) = signed_in(venue, None);
    let ids = (0..n).map(|i| resting(&client, &session, "BTC-USD", &format!("mm-{i}"))).collect();
    (client, session, ids)
}

/// A venue slow to answer look-ups (300 ms each, as the live venue's 100–250 ms round trip and
/// a little more): a market maker's 100 quotes are confirmed well within `confirm_ms`, the
/// look-ups out at once under the run's pace, on connections the client keeps. One at a time
/// they take 100 × 300 ms = 30 s: the report comes back incomplete at confirm_ms (30 s), past
/// the bound (20 s). Healthy: the run's pace (a burst of ten, then twenty a second) and one
/// look-up, about 5 s, so the bound leaves a loaded machine 15 s.
#[test]
fn cancel_all_confirms_a_hundred_orders_in_time_against_a_slow_venue() {
    // Answering as many at once as the client sends, as the live venue does (4 workers would
    // hold the look-ups to 20 a second on their own).
    let venue = venue(SandboxConfig { worker_threads: 16, ..SandboxConfig::default() });
    let (client, session, mut ids) = quoting(&venue, 100);
    admin_post(&venue, "faults", json!({ "per_endpoint": { "query_order": { "slow_ms": 300 } } }));
    let connections = venue.stats().connections;
    let started = Instant::now();
    let report = parse(&cancel_all(&client, Some(&session), Some(r#"{"confirm_ms":30000}"#)).unwrap());
    let took = started.elapsed();
    let opened = venue.stats().connections - connections;
    admin_post(&venue, "faults", json!({}));
    eprintln!("100 orders confirmed against 300 ms look-ups in {took:?} on {opened} new connection(s)");
    let confirmed = report["orders"].as_array().unwrap().iter().filter(|o| o["confirmed"] == true).count();
    assert_eq!(report["complete"], true, "{took:?}: {confirmed} confirmed, {} queries", report["queries"]);
    let orders = report["orders"].as_array().unwrap();
    assert!(orders.iter().all(|o| o["status"] == "canceled" && o["confirmed"] == true), "{report}");
    let mut reported: Vec<i64> = orders.iter().map(|o| o["order_id"].as_i64().unwrap()).collect();
    reported.sort_unstable();
    ids.sort_unstable();
    assert_eq!(reported, ids, "every order once");
    assert_eq!((&report["queries"], &report["cancel_requests"]), (&json!(100), &json!(1)), "{report}");
    assert!(took < Duration::from_secs(20), "{took:?}: one at a time needs 30 s");
    // The workers' connections are kept for the next requests, not opened for each (about one
    // a worker; the client's pool keeps 3 idle, so a few more under load).
    assert!(opened <= 20, "{opened} connections opened for 100 look-ups");
}

/// Milliseconds of the day of a request log's `time` ("2026-11-29T21:55:01.123Z").
fn ms_of_day(entry: &Value) -> i64 {
    let time = entry["time"].as_str().unwrap();
    let clock = &time[time.find('T').unwrap() + 1..time.len() - 1];
    let parts: Vec<f64> = clock.split(':').map(|p| p.parse().unwrap()).collect();
    ((parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]) * 1000.0).round() as i64
}

/// A rate refusal (HTTP 429, no Retry-After: a second's pause) in the middle of a round of
/// look-ups out at once pauses every worker: no request starts until the pause is over —
/// only those already out finish — then the round goes on and confirms every order.
#[test]
fn cancel_all_pauses_every_worker_for_a_rate_refusal_mid_round() {
    let venue = venue(SandboxConfig::default());
    let (client, session, _) = quoting(&venue, 30);
    let before = venue.stats().requests;
    let report = std::thread::scope(|scope| {
        scope.spawn(|| {
            // After the listing, the batch and 12 look-ups: past the burst, every worker busy.
            let give_up = Instant::now() + Duration::from_secs(10);
            while venue.stats().requests < before + 14 && Instant::now() < give_up {
                std::thread::sleep(Duration::from_millis(1));
            }
            admin_post(&venue, "faults", json!({ "per_endpoint": { "query_order": { "status": 429, "times": 1 } } }));
        });
        parse(&cancel_all(&client, Some(&session), Some(r#"{"confirm_ms":10000}"#)).unwrap())
    });
    assert_eq!(report["complete"], true, "{report}");
    assert_eq!(
        (&report["queries"], &report["cancel_requests"]),
        (&json!(31), &json!(1)),
        "the refused one, then one each: {report}"
    );
    let log = requests(&venue, 500);
    let listing = log.iter().rposition(|r| r["path"].as_str().unwrap().ends_with("/api/query_open_orders")).unwrap();
    let run: Vec<&Value> =
        log[listing..].iter().filter(|r| r["path"].as_str().unwrap().ends_with("/api/query_order")).collect();
    let refused = run.iter().position(|r| r["status"] == 429).expect("a look-up was refused mid-round");
    assert!((8..30).contains(&refused), "mid-round: look-up {refused}");
    let at = ms_of_day(run[refused]);
    let after: Vec<i64> = run[refused + 1..].iter().map(|r| (ms_of_day(r) - at).rem_euclid(86_400_000)).collect();
    // Out before the refusal: done at once on loopback (well under 400 ms even on a loaded
    // machine). Started during the pause: none (ignoring it, workers sent one every 50 ms).
    assert!(after.iter().all(|ms| !(400..950).contains(ms)), "requests during the pause (ms after the 429): {after:?}");
    assert!(after.iter().any(|&ms| ms >= 950), "{after:?}");
}

/// A listing larger than the client's `max_response_bytes` (1 MiB by default): 1100 rows as
/// the venue may write them (a long `remark`) are read and cancelled, 100 ids a batch. Read
/// with the client's bound, the run failed on it and cancelled nothing, just when everything
/// had to be. The listing's own bound (16 MiB) still holds.
#[test]
fn cancel_all_reads_a_listing_larger_than_max_response_bytes() {
    use rogue_server::{Rogue, json as answer};
    let row = |id: i64| {
        json!({
            "id": id, "cl_ord_id": format!("mm-{id:061}"), "symbol": "BTC-USD", "side": "buy",
            "order_type": "limit", "time_in_force": "gtc", "status": "open", "price": "61750.25",
            "qty": "0.01", "fill_qty": "0", "fill_avg_price": "0", "leverage": "10", "margin": "61.75",
            "avail_locked": "61.75", "reduce_only": false, "position_id": 0, "liq_id": 0,
            "created_block": -1, "closed_block": -1, "payload": null, "remark": "r".repeat(800),
            "source": "user", "user": "bsc_0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
            "created_at": "2026-11-29T21:55:01.123456789Z", "updated_at": "2026-11-29T21:55:01.123456789Z",
        })
    };
    let listing =
        |rows: i64| json!({ "page_size": rows, "result": (1..=rows).map(row).collect::<Vec<_>>(), "total": rows });
    let served = listing(1100).to_string();
    assert!(served.len() > 1 << 20, "{} bytes", served.len());
    let rogue = Rogue::start(move |seen, _| {
        if seen.path().ends_with("/api/query_open_orders") {
            answer(200, &served)
        } else {
            answer(200, r#"{"code":0,"message":"success","request_id":"r-1"}"#)
        }
    });
    let url = rogue.url();
    let client = common::abi::Client::new(&format!("{url}/auth"), &format!("{url}/perps"), None).unwrap();
    let session =
        common::abi::Session::from_api_key("rogue-api-token-7f3a", &bs58::encode([1u8; 32]).into_string()).unwrap();
    // The endpoint call keeps the client's bound: the same listing is too large for it.
    let f = expect(call(&client, Some(&session), "query_open_orders", None), PERPS_BAD_RESPONSE);
    assert!(f.message.contains("larger than max_response_bytes (1048576)"), "{}", f.message);

    let report = parse(&cancel_all(&client, Some(&session), Some(r#"{"confirm_ms":0}"#)).unwrap());
    assert_eq!(report["listing_truncated"], false);
    assert_eq!(report["orders"].as_array().map(Vec::len), Some(1100));
    assert_eq!((&report["cancel_requests"], &report["failed_cancel_requests"]), (&json!(11), &json!(0)));
    let batches: Vec<Value> =
        rogue.seen().iter().filter(|s| s.path().ends_with("/api/cancel_orders")).map(|s| s.json()).collect();
    let cancelled: Vec<i64> = batches
        .iter()
        .flat_map(|b| b["order_id_list"].as_array().unwrap().iter().map(|id| id.as_i64().unwrap()))
        .collect();
    assert_eq!(cancelled, (1..=1100).collect::<Vec<_>>(), "every listed order, once");

    // Beyond the listing's own bound: a clean failure, nothing cancelled.
    let huge = json!({ "result": (1..=1100).map(|id| { let mut r = row(id); r["remark"] = json!("r".repeat(16_000)); r }).collect::<Vec<_>>() }).to_string();
    assert!(huge.len() > 16 << 20);
    let rogue = Rogue::start(move |_, _| answer(200, &huge));
    let url = rogue.url();
    let client = common::abi::Client::new(&format!("{url}/auth"), &format!("{url}/perps"), None).unwrap();
    let f = expect(cancel_all(&client, Some(&session), None), PERPS_BAD_RESPONSE);
    assert!(f.message.contains("16777216"), "{}", f.message);
    assert_eq!(rogue.count("/api/cancel_orders"), 0);
}
