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
//!
//! Key import too: the text of a key (Ed25519 in hex, base58 of a seed or a keypair, the
//! `solana-keygen` JSON array; a bsc key in hex) is marked undefined, all of it but its length,
//! and the import must decide its form, trim it, decode it and make the key without a branch or
//! an address that depends on it, but for the verdicts it declares public (which form, valid
//! or not, how many bytes). Its control decodes base58 with the `bs58` crate, as the library
//! did before, and must be reported.
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

/// The key texts imported under memcheck (see `key_text`). Their `control` is a base58 seed
/// decoded by the `bs58` crate (the library's decoder before: a table lookup per character,
/// a branch on its validity), which must be reported.
const KEY_TEXTS: [&str; 9] = [
    "ed25519-json-spaced",
    "ed25519-hex-keypair-upper",
    "bsc-hex-upper-spaced",
    "ed25519-hex",
    "ed25519-base58-seed",
    "ed25519-base58-keypair",
    "ed25519-base58-leading-zero",
    "ed25519-json",
    "bsc-hex",
];

#[test]
fn key_import_does_not_branch_on_or_index_by_the_key_text() {
    // The whole text is secret, its length alone public: each import must decide the form,
    // trim, decode and check the key without a branch or an address that depends on it, but
    // for the public verdicts (which form, how many bytes, valid or not) that it declares so.
    let mut failures = Vec::new();
    for form in KEY_TEXTS {
        let (ok, report) = under_valgrind("inner_key_import", form);
        if !ok || secret_dependence_reported(&report) || !report.contains(&format!("inner: {form} imported")) {
            failures.push(format!("--- {form}:\n{report}"));
        }
    }
    assert!(failures.is_empty(), "memcheck found key-dependent code in key import:\n{}", failures.join("\n"));
}

#[test]
fn the_check_catches_a_table_driven_key_decoder() {
    let (ok, report) = under_valgrind("inner_key_import", "control");
    assert!(!ok && secret_dependence_reported(&report), "memcheck did not flag the control:\n{report}");
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

/// A wallet key as text with the key's bytes, and what its import must give: (text, the
/// Ed25519 keypair bytes or the bsc address).
fn key_text(form: &str) -> (String, Vec<u8>) {
    let seed: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(37).wrapping_add(0x1d));
    let pair = SigningKey::from_bytes(&seed).to_keypair_bytes();
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let b58 = |bytes: &[u8]| bs58::encode(bytes).into_string();
    match form {
        // Surrounding whitespace and a 0x prefix: the trim and the form's choice are checked too.
        "ed25519-hex" => (format!(" 0x{}\n", hex(&seed)), pair.to_vec()),
        "ed25519-base58-seed" | "control" => (b58(&seed), pair.to_vec()),
        "ed25519-base58-keypair" => (format!("\t{}", b58(&pair)), pair.to_vec()),
        "ed25519-json-spaced" => (format!(" {:?}\n", pair.to_vec()).replace(", ", " ,\t\r\n "), pair.to_vec()),
        "ed25519-hex-keypair-upper" => (format!("0X{}", hex(&pair).to_uppercase()), pair.to_vec()),
        "bsc-hex-upper-spaced" => {
            let key = "AC0974BEC39A17E36BA4A6B4D238FF944BACB478CBED5EFCAE784D7BF4F2FF80";
            (format!(" \t{key}\r\n"), b"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266".to_vec())
        }
        "ed25519-json" => (format!("{:?}", pair.to_vec()).replace(", ", ","), pair.to_vec()),
        // A keypair whose seed's first byte is zero: base58 with a leading '1'.
        "ed25519-base58-leading-zero" => {
            let pair = SigningKey::from_bytes(&[[0u8].as_slice(), &seed[1..]].concat().try_into().unwrap());
            (b58(&pair.to_keypair_bytes()), pair.to_keypair_bytes().to_vec())
        }
        "bsc-hex" => {
            let key = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
            (format!("0x{key}\n"), b"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266".to_vec())
        }
        other => panic!("unknown {BUILD} {other:?}"),
    }
}

#[test]
#[ignore = "run under valgrind by key_import_does_not_branch_on_or_index_by_the_key_text and its control"]
fn inner_key_import() {
    if !inside_valgrind() {
        return;
    }
    let form = std::env::var(BUILD).unwrap_or_default();
    let (text, expected) = key_text(&form);
    // The text's bytes are secret; its length is not.
    let secret = |request| client_request(0, request, text.as_ptr() as u64, text.len() as u64);
    secret(MAKE_MEM_UNDEFINED);
    let imported: Vec<u8> = match form.as_str() {
        "bsc-hex" | "bsc-hex-upper-spaced" => {
            let key = perps::wallet::evm::WalletKey::parse(&text).expect("a valid bsc key");
            // The key is imported: what follows (its address, public) is not under test.
            mark(&key, MAKE_MEM_DEFINED);
            key.address().into_bytes()
        }
        "control" => {
            let bytes = bs58::decode(&text).into_vec().expect("valid base58");
            let key = SigningKey::from_bytes(&bytes.try_into().expect("32 bytes"));
            mark(&key, MAKE_MEM_DEFINED);
            key.to_keypair_bytes().to_vec()
        }
        _ => {
            let key = perps::keys::parse_ed25519_secret(&text).expect("a valid Ed25519 key");
            mark(&key, MAKE_MEM_DEFINED);
            key.to_keypair_bytes().to_vec()
        }
    };
    secret(MAKE_MEM_DEFINED);
    assert_eq!(imported, expected, "{form}");
    eprintln!("inner: {form} imported under valgrind");
}
