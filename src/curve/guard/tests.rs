//! The guard under injected faults. A fault, the choice of build and the reference-only flag
//! are process-wide, so each scenario runs in a process of its own: the outer test runs this
//! test binary again with one `#[ignore]`d inner test, the build named in `PERPS_FAST_CURVE`
//! and the scenario in `PERPS_GUARD_SCENARIO`, for every build this CPU can run.

use super::fault::{self, Fault};
use super::*;
use crate::ffi::error::perps_code;
use crate::ffi::session::{perps_session, perps_session_free, perps_session_new};
use crate::ffi::sign::{perps_body_signature, perps_sign_body_into};
use ed25519_dalek::Signature;
use std::process::Command;

const SCENARIO: &str = "PERPS_GUARD_SCENARIO";

#[test]
fn the_known_answers_are_dalek_s() {
    for (k, expected) in KNOWN_ANSWERS {
        let k = Scalar::from_bytes_mod_order(hex32(k));
        assert_eq!(EdwardsPoint::mul_base(&k).compress().to_bytes(), hex32(expected));
    }
}

#[test]
fn every_build_this_cpu_runs_passes_its_self_test() {
    for build in Build::ALL.into_iter().filter(|b| b.runnable()) {
        assert!(build.passes_self_test(), "{build:?}");
    }
    assert!(Build::Baseline.runnable());
}

/// Run `inner` in a new process of this test binary for `build` and `scenario`.
fn run_inner(inner: &str, build: Build, scenario: &str) {
    let exe = std::env::current_exe().expect("the test binary");
    let output = Command::new(exe)
        .args([&format!("curve::guard::tests::{inner}"), "--exact", "--ignored", "--test-threads=1", "--nocapture"])
        .env("PERPS_FAST_CURVE", build.name())
        .env(SCENARIO, scenario)
        .output()
        .expect("run the test binary again");
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{inner} for {build:?}, {scenario}:\n{text}");
    assert!(text.contains("1 passed"), "{inner} did not run:\n{text}");
}

fn runnable_builds() -> impl Iterator<Item = Build> {
    Build::ALL.into_iter().filter(|b| b.runnable())
}

#[test]
fn a_fault_after_first_use_is_caught_and_the_reference_signs_from_then_on() {
    for build in runnable_builds() {
        for scenario in ["table-row", "result-limb"] {
            run_inner("inner_fault_after_first_use", build, scenario);
        }
    }
}

#[test]
fn a_build_failing_its_self_test_is_never_used() {
    for build in runnable_builds() {
        run_inner("inner_fault_at_self_test", build, "table-row");
    }
}

#[test]
fn one_corrupted_table_entry_is_caught_by_the_check() {
    for build in runnable_builds() {
        run_inner("inner_single_entry", build, "entries");
    }
}

/// The scenario, when this process is an inner run (else the inner test does nothing).
fn scenario() -> Option<String> {
    std::env::var(SCENARIO).ok()
}

fn chosen_build() -> Build {
    let name = std::env::var("PERPS_FAST_CURVE").expect("set by the outer test");
    Build::ALL.into_iter().find(|b| b.name() == name).expect("a build name")
}

/// A session and a signer through the C ABI that checks every signature it gets.
struct Signer(*mut perps_session);

impl Signer {
    fn new() -> Signer {
        let s = perps_session_new(std::ptr::null_mut());
        assert!(!s.is_null());
        Signer(s)
    }

    /// Sign through `perps_sign_body_into`; the signature must verify (strictly).
    fn sign_and_verify(&self) {
        let body = br#"{"symbol":"BTC-USD","side":"buy","qty":"0.01"}"#;
        let mut out = std::mem::MaybeUninit::<perps_body_signature>::zeroed();
        assert_eq!(perps_sign_body_into(self.0, body.as_ptr(), body.len(), out.as_mut_ptr()), perps_code::PERPS_OK);
        // SAFETY: written on PERPS_OK.
        let out = unsafe { out.assume_init() };
        let text = |field: &[std::ffi::c_char]| {
            // SAFETY: NUL-terminated fields of the struct.
            unsafe { std::ffi::CStr::from_ptr(field.as_ptr()) }.to_str().unwrap().to_owned()
        };
        use base64::Engine as _;
        let raw: [u8; 64] =
            base64::engine::general_purpose::STANDARD.decode(text(&out.signature)).unwrap().try_into().unwrap();
        let message =
            crate::body_sign::signed_message(&text(&out.request_id), text(&out.timestamp).parse().unwrap(), body);
        let key = crate::ffi::handles::borrow(self.0, "session").expect("a live handle").inner.key().verifying_key();
        key.verify_strict(&message, &Signature::from_bytes(&raw)).expect("a wrong signature came out");
    }
}

impl Drop for Signer {
    fn drop(&mut self) {
        perps_session_free(self.0);
    }
}

#[test]
#[ignore = "run in a process of its own by a_fault_after_first_use_is_caught_and_the_reference_signs_from_then_on"]
fn inner_fault_after_first_use() {
    let Some(scenario) = scenario() else { return };
    let build = chosen_build();
    let signer = Signer::new();
    signer.sign_and_verify();
    let before = signer_status();
    assert_eq!(before, SignerStatus { build: Some(build), reference_reason: None, reference_computations: 0 });

    fault::set(Some(match scenario.as_str() {
        "table-row" => Fault::TableRow { row: 7 },
        _ => Fault::ResultLimb,
    }));
    for n in 1..=3 {
        signer.sign_and_verify();
        let status = signer_status();
        assert_eq!(status.build, None, "{scenario}: the faulty build still signs");
        assert_eq!(status.reference_reason, Some(ReferenceReason::CheckFailed(build)));
        assert_eq!(status.reference_computations, n, "one reference R per signature");
    }
    // The fault goes away; the process stays on the reference.
    fault::set(None);
    signer.sign_and_verify();
    assert_eq!(signer_status().build, None);
    assert_eq!(signer_status().reference_computations, 4);
}

#[test]
#[ignore = "run in a process of its own by a_build_failing_its_self_test_is_never_used"]
fn inner_fault_at_self_test() {
    if scenario().is_none() {
        return;
    }
    let build = chosen_build();
    fault::set(Some(Fault::TableRow { row: 0 }));
    let signer = Signer::new();
    signer.sign_and_verify();
    let status = signer_status();
    assert_eq!(status.build, None);
    assert_eq!(status.reference_reason, Some(ReferenceReason::SelfTestFailed(build)));
    assert_eq!(status.reference_computations, 1);
    fault::set(None);
    signer.sign_and_verify();
    assert_eq!(signer_status().build, None, "the self-test verdict sticks");
}

#[test]
#[ignore = "run in a process of its own by one_corrupted_table_entry_is_caught_by_the_check"]
fn inner_single_entry() {
    if scenario().is_none() {
        return;
    }
    let build = chosen_build();
    let words = match build {
        Build::Ifma => 20,
        Build::Adx => 12,
        // Five-limb entries: three elements of five words, and one word of padding.
        Build::Avx2 | Build::Baseline => 15,
    };
    let mut caught = 0;
    for row in [0usize, 31] {
        // k = e·256^row + 16·256^9: digit 2·row is e (8 becomes −8 and a carry), so entry e of
        // the row is read (negated for 8) in the comb's second half, and added to a point that
        // is not the identity (odd digit 19 is 1): an entry added to the identity contributes
        // no 2dxy, so a fault there would not change R at all.
        for entry in 1..=8 {
            let mut bytes = [0u8; 32];
            bytes[9] = 0x10;
            bytes[row] = entry as u8;
            let k = Scalar::from_bytes_mod_order(bytes);
            let clean = build.run(&k).expect("runnable");
            assert_eq!(clean.on_curve, u64::MAX);
            for word in 0..words {
                fault::set(Some(Fault::TableEntry { row, entry, word }));
                let faulty = build.run(&k).expect("runnable");
                fault::set(None);
                assert_eq!(faulty.on_curve, 0, "{build:?}: row {row} entry {entry} word {word} went unnoticed");
                assert_ne!(faulty.encoding, clean.encoding);
                caught += 1;
            }
        }
    }
    assert_eq!(caught, 2 * 8 * words);
}
