//! Which code computes R = r·B, seen through `perps::curve::signer_status()` (the build in use
//! and a count of the R values the reference computed: timing-free evidence) while signing
//! through the C ABI:
//! - fresh signatures (`perps_sign_body_into`) use the chosen build, never the reference;
//! - `perps_sign_body_at` is RFC 8032's deterministic signature, byte for byte
//!   ed25519-dalek's, and always computed by the reference;
//! - `PERPS_FAST_CURVE=0` (or `off`, `reference`, a value the library does not know, a build
//!   this CPU cannot run) makes the reference compute every R; `PERPS_FAST_CURVE=<build>`
//!   makes that build do it.
//! - Every build is exercised (in a process of its own) or named loudly as not run on this
//!   CPU: `scripts/test.sh` prints these lines (`cargo test --release --test signer_paths --
//!   --nocapture`).
//!
//! The environment is read once per process, so each setting runs in a new process of this
//! test binary (an `#[ignore]`d inner test).

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use perps::curve::{Build, ReferenceReason, signer_status};
use perps::ffi::error::perps_code;
use perps::ffi::session::{perps_session, perps_session_free, perps_session_from_api_key};
use perps::ffi::sign::{perps_body_signature, perps_sign_body_at, perps_sign_body_into};
use perps::ffi::strings::perps_string_free;
use std::ffi::CStr;
use std::process::Command;

const SEED: [u8; 32] = [0x44; 32];
const BODY: &[u8] = br#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000"}"#;
/// What the inner run must see: `reference:<reason>` or `build:<name>`.
const EXPECT: &str = "PERPS_SIGNER_PATHS_EXPECT";

struct Session(*mut perps_session);

impl Session {
    fn new() -> Session {
        let key = std::ffi::CString::new(bs58::encode(SEED).into_string()).unwrap();
        let s = perps_session_from_api_key(c"token".as_ptr(), key.as_ptr(), std::ptr::null_mut());
        assert!(!s.is_null());
        Session(s)
    }

    /// `perps_sign_body_into`; returns the R of a signature that verified strictly.
    fn sign_fresh(&self) -> [u8; 32] {
        let mut out = std::mem::MaybeUninit::<perps_body_signature>::zeroed();
        assert_eq!(perps_sign_body_into(self.0, BODY.as_ptr(), BODY.len(), out.as_mut_ptr()), perps_code::PERPS_OK);
        let out = unsafe { out.assume_init() };
        let text = |f: &[std::ffi::c_char]| unsafe { CStr::from_ptr(f.as_ptr()) }.to_str().unwrap().to_owned();
        let signature = decode(&text(&out.signature));
        let message =
            perps::body_sign::signed_message(&text(&out.request_id), text(&out.timestamp).parse().unwrap(), BODY);
        verifying_key().verify_strict(&message, &signature).expect("a fresh signature verifies");
        *signature.r_bytes()
    }

    /// `perps_sign_body_at` with a fixed id and time; the signature.
    fn sign_at(&self) -> Signature {
        let body = std::ffi::CString::new(BODY).unwrap();
        let json = perps_sign_body_at(
            self.0,
            body.as_ptr(),
            c"123e4567-e89b-42d3-a456-426614174000".as_ptr(),
            1_700_000_000_123,
            std::ptr::null_mut(),
        );
        assert!(!json.is_null());
        let headers: serde_json::Value = serde_json::from_slice(unsafe { CStr::from_ptr(json) }.to_bytes()).unwrap();
        perps_string_free(json);
        decode(headers["x-request-signature"].as_str().unwrap())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        perps_session_free(self.0);
    }
}

fn decode(b64: &str) -> Signature {
    use base64::Engine as _;
    let raw: [u8; 64] = base64::engine::general_purpose::STANDARD.decode(b64).unwrap().try_into().unwrap();
    Signature::from_bytes(&raw)
}

fn verifying_key() -> VerifyingKey {
    SigningKey::from_bytes(&SEED).verifying_key()
}

/// RFC 8032's signature of the `perps_sign_body_at` message, by ed25519-dalek.
fn dalek_at() -> Signature {
    let message = perps::body_sign::signed_message("123e4567-e89b-42d3-a456-426614174000", 1_700_000_000_123, BODY);
    SigningKey::from_bytes(&SEED).sign(&message)
}

/// Run the inner test in a new process with `PERPS_FAST_CURVE` set to `setting` (unset when
/// `None`), expecting `expect`.
fn run_inner(setting: Option<&str>, expect: &str) {
    let exe = std::env::current_exe().unwrap();
    let mut command = Command::new(exe);
    command.args(["inner_paths", "--exact", "--ignored", "--test-threads=1", "--nocapture"]).env(EXPECT, expect);
    match setting {
        Some(value) => command.env("PERPS_FAST_CURVE", value),
        None => command.env_remove("PERPS_FAST_CURVE"),
    };
    let output = command.output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success() && text.contains("1 passed"), "PERPS_FAST_CURVE={setting:?}, {expect}:\n{text}");
}

fn fastest() -> Build {
    Build::ALL.into_iter().find(|b| b.runnable()).unwrap()
}

#[test]
fn fresh_signatures_use_the_fastest_build_and_sign_body_at_the_reference() {
    run_inner(None, &format!("build:{}", fastest().name()));
    run_inner(Some("auto"), &format!("build:{}", fastest().name()));
}

#[test]
fn perps_fast_curve_0_makes_the_reference_compute_every_r() {
    for setting in ["0", "off", "reference", "OFF", "fast", "no", "yes-please"] {
        run_inner(Some(setting), "reference:requested");
    }
    for build in Build::ALL.into_iter().filter(|b| !b.runnable()) {
        run_inner(Some(build.name()), "reference:requested");
    }
}

/// Every build, by name: exercised here, or reported (loudly, on stderr) as not run.
#[test]
fn every_build_is_exercised_or_named_as_not_run() {
    let mut not_run = Vec::new();
    for build in Build::ALL {
        if build.runnable() {
            run_inner(Some(build.name()), &format!("build:{}", build.name()));
            eprintln!("curve build {:<8} exercised: self-test, signatures through the C ABI", build.name());
        } else {
            eprintln!("curve build {:<8} NOT EXERCISED: this CPU is not {}", build.name(), build.needs());
            not_run.push(build.name());
        }
    }
    if !not_run.is_empty() {
        eprintln!(
            "*** WARNING: {} of 4 curve builds could not run on this CPU: {} ***",
            not_run.len(),
            not_run.join(", ")
        );
    }
}

#[test]
#[ignore = "run in a process of its own by the tests above"]
fn inner_paths() {
    let Ok(expect) = std::env::var(EXPECT) else { return };
    let session = Session::new();
    let before = signer_status();
    assert_eq!(before.reference_computations, 0, "{before:?}");
    let r: Vec<[u8; 32]> = (0..5).map(|_| session.sign_fresh()).collect();
    assert!(r.iter().all(|x| r.iter().filter(|y| *y == x).count() == 1), "R repeated");
    let status = signer_status();
    match expect.split_once(':') {
        Some(("build", name)) => {
            assert_eq!(status.build.map(Build::name), Some(name), "{status:?}");
            assert_eq!(status.reference_reason, None);
            assert_eq!(status.reference_computations, 0, "a fresh signature used the reference");
        }
        Some(("reference", "requested")) => {
            assert_eq!(status.build, None, "{status:?}");
            assert_eq!(status.reference_reason, Some(ReferenceReason::Requested));
            assert_eq!(status.reference_computations, 5, "one reference R per signature");
        }
        _ => panic!("unknown expectation {expect:?}"),
    }
    // sign_body_at: deterministic, RFC 8032 byte for byte, always by the reference.
    let computed = signer_status().reference_computations;
    assert_eq!(session.sign_at(), dalek_at());
    assert_eq!(session.sign_at(), dalek_at());
    assert_eq!(signer_status().reference_computations, computed + 2);
}
