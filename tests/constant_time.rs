//! Signing never branches on, or computes an address from, the secret key or the nonce: checked
//! on the compiled code with valgrind's memcheck, the "ctgrind" way. The secret half of the
//! key is marked undefined before a signature; memcheck then reports every conditional jump and
//! every memory address that depends on it (and so on the nonce, which is derived from it).
//!
//! Release builds only (`cargo test --release --test constant_time`, run by scripts/test.sh):
//! that is the code users run, and a debug build's overflow checks and limb-bound assertions
//! do branch on secret values by design.
//!
//! The outer tests run this test binary again under valgrind: on the library's signer (a hedged
//! signature, its randomness Z marked secret too, and a deterministic one), on the baseline
//! build of the multiplication that CPUs without AVX2 run, on the five-limb AVX2 build, and on
//! the four-limb ADX build (valgrind's virtual CPU does not report ADX, so the signer there
//! takes the five-limb AVX2 build; the ADX one is called directly), and on the vector build's
//! algorithm over emulated lanes (valgrind has no AVX-512: its machine code is audited by
//! `tests/ct_audit.rs` instead). All must be clean, the on-curve check of every build included.
//! And on a control that uses ed25519-dalek's variable-time multiplication on a secret (must be
//! reported), so the check is shown to catch what it is for.
#![cfg(all(not(debug_assertions), target_arch = "x86_64", target_os = "linux"))]

mod common;

use ed25519_dalek::{Signer, SigningKey};
use perps::keys::RequestKey;
use std::process::Command;

/// Set in the environment of the run under valgrind.
const INNER: &str = "PERPS_CT_INNER";
/// Which build of the multiplication `inner_multiplication` runs: `baseline`, `avx2`, `adx`,
/// `lanes`, or the variable-time `control`.
const BUILD: &str = "PERPS_CT_BUILD";

/// A valgrind client request; a no-op (returns `default`) outside valgrind.
fn client_request(default: u64, request: u64, arg1: u64, arg2: u64) -> u64 {
    let args: [u64; 6] = [request, arg1, arg2, 0, 0, 0];
    let result: u64;
    // SAFETY: the "magic sequence" valgrind recognises: four rotations of rdi that add up to
    // a full turn (rdi is unchanged) and an exchange of rbx with itself. Natively it changes
    // nothing; under valgrind it performs the request described by `args`.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3", "rol rdi, 13", "rol rdi, 61", "rol rdi, 51", "xchg rbx, rbx",
            inout("rdx") default => result,
            in("rax") args.as_ptr(),
            inout("rdi") 0u64 => _,
        );
    }
    result
}

const RUNNING_ON_VALGRIND: u64 = 0x1001;
/// memcheck's requests: ('M' << 24 | 'C' << 16) + n.
const MAKE_MEM_UNDEFINED: u64 = 0x4d43_0001;
const MAKE_MEM_DEFINED: u64 = 0x4d43_0002;

fn mark<T>(value: &T, request: u64) {
    client_request(0, request, value as *const T as u64, size_of::<T>() as u64);
}

const MESSAGE: &[u8] =
    b"v1,0b7f6a2e-3c4d-4e5f-8a9b-0c1d2e3f4a5b,1700000000123,{\"symbol\":\"BTC-USD\",\"side\":\"buy\"}";

/// Run one `#[ignore]`d test of this binary under memcheck, telling it which `build` to run
/// (empty when it has no choice); its exit status and report.
fn under_valgrind(test: &str, build: &str) -> (bool, String) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new("valgrind")
        .args(["--tool=memcheck", "--error-exitcode=99", "--track-origins=no"])
        .arg(&exe)
        .args([test, "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(INNER, "1")
        .env(BUILD, build)
        .output()
        .unwrap_or_else(|e| panic!("valgrind could not be started ({e}); install it: apt-get install valgrind"));
    (output.status.success(), String::from_utf8_lossy(&output.stderr).into_owned())
}

fn secret_dependence_reported(report: &str) -> bool {
    report.contains("depends on uninitialised value") || report.contains("Use of uninitialised value")
}

/// Run `test` under memcheck: it must pass, print `marker`, and show no secret dependence.
fn assert_clean_under_valgrind(test: &str, build: &str, marker: &str) {
    let (ok, report) = under_valgrind(test, build);
    assert!(ok && !secret_dependence_reported(&report), "memcheck found secret-dependent code:\n{report}");
    assert!(report.contains(marker), "the inner test did not run:\n{report}");
}

#[test]
fn signing_does_not_branch_on_or_index_by_the_secret_key() {
    assert_clean_under_valgrind("inner_library_signature", "", "inner: signed under valgrind");
}

#[test]
fn the_baseline_build_does_not_either() {
    // The code CPUs without AVX2 and BMI2 run (this machine takes a faster path in signing).
    assert_clean_under_valgrind("inner_multiplication", "baseline", "inner: baseline multiplied under valgrind");
}

#[test]
fn the_five_limb_avx2_build_does_not_either() {
    // What the signer takes under valgrind; called directly here like the others.
    if !(std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2")) {
        eprintln!("skipped: this CPU has no AVX2 and BMI2");
        return;
    }
    assert_clean_under_valgrind("inner_multiplication", "avx2", "inner: avx2 multiplied under valgrind");
}

#[test]
fn the_four_limb_adx_build_does_not_either() {
    // What signing runs on CPUs with ADX, outside valgrind. Valgrind executes the instructions;
    // only a CPU without them could not run this check.
    if !(std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("bmi2")
        && std::is_x86_feature_detected!("adx"))
    {
        eprintln!("skipped: this CPU has no AVX2, BMI2 and ADX");
        return;
    }
    assert_clean_under_valgrind("inner_multiplication", "adx", "inner: adx multiplied under valgrind");
}

#[test]
fn the_vector_builds_algorithm_does_not_either() {
    // Valgrind cannot run AVX-512, so the vector build (what signing runs on CPUs with IFMA)
    // is checked through the same generic code on emulated lanes: its branches, table reads
    // and lane moves are the IFMA build's; each emulated lane operation is one IFMA or AVX2
    // instruction there, none of which takes a data-dependent time.
    assert_clean_under_valgrind("inner_multiplication", "lanes", "inner: lanes multiplied under valgrind");
}

#[test]
fn the_check_catches_a_variable_time_multiplication() {
    let (ok, report) = under_valgrind("inner_multiplication", "control");
    assert!(!ok && secret_dependence_reported(&report), "memcheck did not flag the control:\n{report}");
}

fn inside_valgrind() -> bool {
    if std::env::var_os(INNER).is_none() {
        return false;
    }
    assert_ne!(client_request(0, RUNNING_ON_VALGRIND, 0, 0), 0, "{INNER} is set but this is not valgrind");
    true
}

#[test]
#[ignore = "run under valgrind by signing_does_not_branch_on_or_index_by_the_secret_key"]
fn inner_library_signature() {
    if !inside_valgrind() {
        return;
    }
    let seed = [0x5au8; 32];
    let randomness = [0xc3u8; 32];
    let hedged = common::hedged_signature(&seed, &randomness, MESSAGE);
    let standard = SigningKey::from_bytes(&seed).sign(MESSAGE);
    let key = RequestKey::from_signing_key(&SigningKey::from_bytes(&seed));
    // The whole key (expanded secret scalar and nonce prefix, and its masked second copy and
    // shares, kept on the heap; public key) and the hedged nonce's randomness are secret for
    // memcheck: the checks before release (the copy compared, s computed twice, R against the
    // identity) must not branch on them either; only their verdict is declared public.
    for (secret, secret_len) in key.secret_regions() {
        client_request(0, MAKE_MEM_UNDEFINED, secret as u64, secret_len as u64);
    }
    mark(key.verifying_key(), MAKE_MEM_UNDEFINED);
    mark(&randomness, MAKE_MEM_UNDEFINED);
    let signature = key.sign_parts_with_randomness(&[MESSAGE], &randomness).expect("no fault");
    // Verified before release, against the public key (public, as for any verifier: marked
    // so here) and the signature, which the library declares public once its checks passed.
    mark(key.verifying_key(), MAKE_MEM_DEFINED);
    let deterministic = key.sign_parts_deterministic(&[MESSAGE]).expect("no fault");
    // Signatures are public: comparing them is not a leak.
    mark(&signature, MAKE_MEM_DEFINED);
    mark(&deterministic, MAKE_MEM_DEFINED);
    for (secret, secret_len) in key.secret_regions() {
        client_request(0, MAKE_MEM_DEFINED, secret as u64, secret_len as u64);
    }
    mark(key.verifying_key(), MAKE_MEM_DEFINED);
    mark(&randomness, MAKE_MEM_DEFINED);
    assert_eq!(signature.to_bytes(), hedged);
    assert_eq!(deterministic, standard);
    eprintln!("inner: signed under valgrind");
}

#[test]
#[ignore = "run under valgrind by the_baseline_build_does_not_either, the two after it, and the control"]
fn inner_multiplication() {
    use curve25519_dalek::{EdwardsPoint, Scalar};
    if !inside_valgrind() {
        return;
    }
    let secret = Scalar::from_bytes_mod_order([0xa5u8; 32]);
    let standard = EdwardsPoint::mul_base(&secret).compress().to_bytes();
    mark(&secret, MAKE_MEM_UNDEFINED);
    let build = std::env::var(BUILD).unwrap_or_default();
    // Each build returns its encoding and the verdict of its on-curve check, both computed
    // from the secret without a branch (the library's caller branches on the verdict, which
    // it declares public first).
    let checked = match build.as_str() {
        "baseline" => perps::curve::mul_base_baseline(&secret),
        // SAFETY: the outer test checked (natively) that the CPU has AVX2 and BMI2.
        "avx2" => unsafe { perps::curve::mul_base_avx2(&secret) },
        // SAFETY: the outer test checked (natively) that the CPU has AVX2, BMI2 and ADX.
        "adx" => unsafe { perps::curve::mul_base_adx(&secret) },
        "lanes" => perps::curve::mul_base_emulated_lanes(&secret),
        // The control: variable time by design (meant for public scalars), its digits choose
        // branches and table entries. a·O + b·B with a = b = the secret is the secret times B.
        "control" => perps::curve::Checked {
            encoding: EdwardsPoint::vartime_double_scalar_mul_basepoint(&secret, &EdwardsPoint::default(), &secret)
                .compress()
                .to_bytes(),
            on_curve: u64::MAX,
        },
        other => panic!("unknown {BUILD} {other:?}"),
    };
    mark(&checked, MAKE_MEM_DEFINED);
    assert_eq!((checked.encoding, checked.on_curve), (standard, u64::MAX));
    eprintln!("inner: {build} multiplied under valgrind");
}
