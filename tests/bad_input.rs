//! Bad input through the C ABI, from Rust: every case of `tests/bad_input/cases.txt` (the
//! table `tests/c/test_bad_input.c` runs from C under ASan+UBSan and valgrind) is called
//! through the exported functions and must give its exact code, a message naming the
//! problem, no secret in the message, no HTTP details, untouched out-parameters, and the same
//! failure again with err == NULL. The table's header documents the format.
//!
//! Beyond the table (which needs no venue): calls in the wrong state on sessions that really
//! signed in with the sandbox, and the documented acceptance of EVM addresses in any case.

mod common;
#[path = "bad_input/harness.rs"]
mod harness;

use harness::{Fixtures, check, run};
use perps::ffi::error::perps_code::*;
use std::collections::BTreeSet;

#[test]
fn the_table_covers_every_exported_function_and_every_bad_input_class() {
    let cases = harness::cases();
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let functions: BTreeSet<&str> = cases.iter().map(|c| c.function.as_str()).collect();
    for exported in harness::EXPORTED {
        assert!(functions.contains(exported), "no case for perps_{exported}");
    }
    // The exported list is the header's: every `perps_…(` declared in include/perps.h.
    let header = include_str!("../include/perps.h");
    let declared: BTreeSet<String> = header
        .lines()
        .map(str::trim_start)
        .filter(|l| !l.starts_with('*') && !l.starts_with("/*") && !l.starts_with('#'))
        .filter_map(|l| l.split('(').next().filter(|_| l.contains('(')))
        .filter_map(|head| head.rsplit([' ', '*']).next())
        .filter_map(|name| name.strip_prefix("perps_").map(str::to_owned))
        .collect();
    let listed: BTreeSet<String> = harness::EXPORTED.iter().map(|s| s.to_string()).collect();
    assert_eq!(declared, listed, "harness::EXPORTED is not the header's function list");

    // NULL for every pointer parameter of every function that takes one.
    for function in harness::EXPORTED {
        let kinds = harness::signature(function).unwrap();
        for (i, kind) in kinds.bytes().enumerate() {
            if b"csxkbo".contains(&kind) || b"eCSztT".contains(&kind) {
                let nulled = cases.iter().any(|c| c.function == *function && c.args[i] == harness::Arg::Null);
                assert!(nulled, "no case passes NULL as argument {} of perps_{function}", i + 1);
            }
        }
    }
    let count = |pred: &dyn Fn(&harness::Case) -> bool| cases.iter().filter(|c| pred(c)).count();
    let has_bytes = |c: &harness::Case, needle: &[u8]| {
        c.args
            .iter()
            .any(|a| matches!(a, harness::Arg::Str { bytes, .. } if bytes.windows(needle.len()).any(|w| w == needle)))
    };
    let uses = |c: &harness::Case, name: &str| c.args.iter().any(|a| *a == harness::Arg::Fixture(name.into()));
    assert!(count(&|c| c.args.iter().any(|a| matches!(a, harness::Arg::Str { bytes, .. } if bytes.is_empty()))) >= 10);
    assert!(count(&|c| c.fragment.as_deref().is_some_and(|f| f.contains("UTF-8"))) >= 15);
    assert!(count(&|c| has_bytes(c, b"\xff")) >= 15);
    assert!(
        count(&|c| uses(c, "big_ascii") || uses(c, "big_order") || uses(c, "big_deep") || uses(c, "big_bad_utf8"))
            >= 15
    );
    for f in ["sign_body", "sign_body_into", "order_serialize", "new_order"] {
        assert!(
            cases.iter().any(|c| c.function == f && (uses(c, "big_ascii") || uses(c, "big_order"))),
            "no 10 MiB case for {f}"
        );
    }
    assert!(count(&|c| c.expected == PERPS_INVALID_KEY) >= 25);
    assert!(count(&|c| c.expected == PERPS_INVALID_STATE) >= 8);
    assert!(
        count(&|c| c.fragment.as_deref().is_some_and(|f| f.contains("unknown chain") || f.contains("not shown"))) >= 8
    );
    assert!(count(&|c| c.fragment.as_deref().is_some_and(|f| f.contains("expires_seconds"))) >= 4);
    assert!(count(&|c| uses(c, "logged_out")) >= 6);
}

#[test]
fn every_bad_input_case_through_the_c_abi() {
    let cases = harness::cases();
    let fx = Fixtures::new();
    let mut failures = Vec::new();
    let mut by_code: std::collections::BTreeMap<String, usize> = Default::default();
    for case in &cases {
        let started = std::time::Instant::now();
        let outcome = run(case, &fx);
        let elapsed = started.elapsed();
        if elapsed > std::time::Duration::from_secs(60) {
            failures.push(format!("{}: took {elapsed:?}", case.label()));
        }
        let problems = check(case, &outcome, &fx.secrets(case));
        *by_code.entry(format!("{:?}", case.expected)).or_default() += 1;
        if std::env::var_os("PERPS_TEST_VERBOSE").is_some() {
            let shown: Option<String> = outcome.message.as_ref().map(|m| m.chars().take(200).collect());
            println!("{} ({elapsed:?}): {:?} {shown:?}", case.label(), outcome.code);
        }
        if !problems.is_empty() {
            failures.push(format!("{}:\n    {}", case.label(), problems.join("\n    ")));
        }
    }
    println!("{} bad-input cases through the C ABI from Rust: {by_code:?}", cases.len());
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// Fixtures must not change state while the table runs: the same case gives the same result
/// in any order (a failing call has no side effect).
#[test]
fn failing_calls_leave_the_fixtures_as_they_were() {
    let fx = Fixtures::new();
    let info = |s| common::abi::owned(|e| perps::ffi::session::perps_session_info(s, e)).unwrap();
    let before = [info(fx.fresh), info(fx.api), info(fx.logged_out)];
    for case in harness::cases().iter().rev() {
        let _ = run(case, &fx);
    }
    assert_eq!([info(fx.fresh), info(fx.api), info(fx.logged_out)], before);
}

// ---- against the sandbox: real sessions in the wrong state ---------------------------------

mod with_sandbox {
    use super::*;
    use common::abi::{self, Client, Failure, Session, c, login, new_order, prepare, request, signin};
    use perps::ffi::error::perps_code;
    use perps_sandbox::{Sandbox, SandboxConfig};

    const BSC_KEY: &str = harness::EVM_KEY;
    const BSC_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

    fn expect(result: Result<String, Failure>, code: perps_code, fragment: &str) {
        let f = result.expect_err("expected a failure");
        assert_eq!(f.code, code, "{f:?}");
        assert!(f.message.contains(fragment), "{f:?} lacks {fragment:?}");
        assert!(!f.may_have_reached_venue && f.http_status == 0 && f.body.is_none(), "{f:?}");
    }

    /// A session that signed in, then logged out: every call that needs the token or the
    /// pending challenge fails before sending; the key (and signing) stays.
    #[test]
    fn handles_used_after_logout_fail_before_sending() {
        let venue = Sandbox::start(SandboxConfig::default()).unwrap();
        let client = Client::new(&venue.base_url(), &venue.perps_url(), None).unwrap();
        let session = Session::new();
        signin(&client, &session, "bsc", BSC_KEY, 3600).unwrap();
        let token = abi::owned(|e| perps::ffi::session::perps_session_token(session.0, e)).unwrap();
        abi::code(|e| perps::ffi::session::perps_session_logout(session.0, e)).unwrap();
        let before = venue.stats().requests;
        expect(new_order(&client, &session, harness::ORDER), PERPS_INVALID_STATE, "no access token");
        expect(
            request(&client, &session, "GET", "/api/query_open_orders", None),
            PERPS_INVALID_STATE,
            "no access token",
        );
        expect(
            request(&client, &session, "POST", "/api/cancel_order", Some("{}")),
            PERPS_INVALID_STATE,
            "no access token",
        );
        expect(login(&client, &session, "0x00", 0), PERPS_INVALID_STATE, "prepare-signin first");
        let f = abi::owned(|e| perps::ffi::session::perps_session_token(session.0, e)).unwrap_err();
        assert_eq!(f.code, PERPS_INVALID_STATE);
        assert!(!f.message.contains(&token[..16]));
        assert_eq!(venue.stats().requests, before, "nothing reached the venue");
        let info = session.info();
        assert_eq!((info["has_token"].as_bool(), info["token_expires_at"].is_null()), (Some(false), true));
        // Logging out twice is harmless; signing still works; signing in again works.
        abi::code(|e| perps::ffi::session::perps_session_logout(session.0, e)).unwrap();
        let body = c("{}");
        abi::owned(|e| perps::ffi::sign::perps_sign_body(session.0, body.as_ptr(), e)).unwrap();
        signin(&client, &session, "bsc", BSC_KEY, 3600).unwrap();
        assert!(new_order(&client, &session, harness::ORDER).is_ok());
    }

    /// A pending challenge is forgotten by logout: login with a valid signature then fails.
    #[test]
    fn logout_between_prepare_and_login_forgets_the_challenge() {
        let venue = Sandbox::start(SandboxConfig::default()).unwrap();
        let client = Client::new(&venue.base_url(), &venue.perps_url(), None).unwrap();
        let session = Session::new();
        let payload = prepare(&client, &session, "bsc", BSC_ADDRESS).unwrap();
        let signature = abi::wallet_sign("bsc", BSC_KEY, &payload).unwrap();
        abi::code(|e| perps::ffi::session::perps_session_logout(session.0, e)).unwrap();
        assert_eq!(session.info()["pending_signin"], false);
        let before = venue.stats().requests;
        expect(login(&client, &session, &signature, 0), PERPS_INVALID_STATE, "prepare-signin first");
        assert_eq!(venue.stats().requests, before);
    }

    /// Bad arguments of the network calls are refused before anything is sent, even with a
    /// venue listening: the sandbox counts zero requests for the whole offline table.
    #[test]
    fn the_network_cases_of_the_table_send_nothing_to_a_live_venue() {
        let venue = Sandbox::start(SandboxConfig::default()).unwrap();
        let fx = Fixtures::with_urls(&venue.base_url(), &venue.perps_url());
        let mut ran = 0;
        for case in harness::cases() {
            let network = ["prepare_signin", "login", "signin", "new_order", "request", "client_sync_time"];
            let sends = network.contains(&case.function.as_str()) || harness::endpoint(&case.function).is_some();
            if !sends || case.expected == PERPS_TRANSPORT {
                continue;
            }
            let outcome = run(&case, &fx);
            assert_eq!(outcome.code, Some(case.expected), "{}: {:?}", case.label(), outcome.message);
            ran += 1;
        }
        assert!(ran >= 150, "{ran}");
        assert_eq!(venue.stats().requests, 0, "a refused argument reached the venue");
    }

    /// EVM addresses are case-insensitive (EIP-55 case is a checksum, not identity): a
    /// wrong-case or all-lower-case address signs in like the checksummed one, and the
    /// challenge check accepts it.
    #[test]
    fn evm_addresses_in_any_case_sign_in() {
        let venue = Sandbox::start(SandboxConfig::default()).unwrap();
        let client = Client::new(&venue.base_url(), &venue.perps_url(), None).unwrap();
        let wrong_case: String = BSC_ADDRESS[2..]
            .chars()
            .map(|ch| if ch.is_ascii_uppercase() { ch.to_ascii_lowercase() } else { ch.to_ascii_uppercase() })
            .collect();
        for address in [format!("0x{wrong_case}"), BSC_ADDRESS.to_ascii_lowercase()] {
            let session = Session::new();
            let payload = prepare(&client, &session, "bsc", &address).unwrap();
            let signature = abi::wallet_sign("bsc", BSC_KEY, &payload).unwrap();
            login(&client, &session, &signature, 0).unwrap();
            assert!(session.info()["address"].as_str().unwrap().eq_ignore_ascii_case(BSC_ADDRESS));
            assert!(new_order(&client, &session, harness::ORDER).is_ok());
        }
    }

    /// `expires_seconds` ≤ 0 is the venue default (7 days); the 10-year limit itself is allowed.
    #[test]
    fn negative_zero_and_maximal_expires_seconds_are_accepted() {
        let venue = Sandbox::start(SandboxConfig::default()).unwrap();
        let client = Client::new(&venue.base_url(), &venue.perps_url(), None).unwrap();
        for (expires, lifetime) in [(-1i64, 604_800i64), (i64::MIN, 604_800), (0, 604_800), (315_360_000, 315_360_000)]
        {
            let session = Session::new();
            signin(&client, &session, "bsc", BSC_KEY, expires).unwrap();
            let at = session.info()["token_expires_at"].as_i64().unwrap();
            let now = perps::body_sign::now_ms() / 1000;
            assert!((now + lifetime - 10..=now + lifetime + 10).contains(&at), "{expires}: {at} vs {now}");
        }
        let before = venue.stats().requests;
        for expires in [315_360_001i64, i64::MAX] {
            let f = signin(&client, &Session::new(), "bsc", BSC_KEY, expires).unwrap_err();
            assert_eq!(f.code, PERPS_INVALID_ARGUMENT, "{f:?}");
            assert!(f.message.contains("expires_seconds"), "{f:?}");
        }
        assert_eq!(venue.stats().requests, before, "a refused expires_seconds sent nothing");
    }
}
