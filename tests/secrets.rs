//! Secrets never come back out: private keys (every text form), API tokens and access tokens
//! obtained from the sandbox must not appear, even in part (any run of 8 bytes), in
//!  - the error message of any case of the bad-input table (`tests/bad_input/cases.txt`),
//!    called through the C ABI;
//!  - the `Debug` and `Display` output of what the same cases produce through the core Rust
//!    API: `perps::Error`, `Session`, `RequestKey`, the wallet keys, `Login`, `Client`,
//!    the verified challenge, the order body (the calls: `tests/secrets/core_api.rs`);
//!  - the message, venue body and `Debug` of the errors a signed-in session meets (bad
//!    orders, HTTP 401/403/429/500, API errors, time-outs, dropped connections, an expired
//!    token, a login answer for another wallet).
//!
//! Logging: the library has none. `the_library_does_not_log` checks the sources and the
//! dependency list; `tests/c/test_bad_input.c` redirects the process's stdout and stderr
//! while the whole table runs through the C ABI and asserts nothing was written (a Rust test
//! cannot see the library's fd 1/2 writes: the test harness captures `print!` output).

mod common;
#[path = "secrets/core_api.rs"]
mod core_api;
#[path = "bad_input/harness.rs"]
mod harness;

use core_api::{Core, core_outputs, shown};
use harness::{Fixtures, leaked_run};
use perps::client::Client as CoreClient;
use perps::client::options::ClientOptions;
use perps::keys::{RequestKey, parse_ed25519_secret};
use perps::session::{Login, Session as CoreSession};
use perps::wallet::{self, Chain};

/// Every run of 8 bytes of every secret that occurs in `text`, described.
fn leaks(text: &str, secrets: &[Vec<u8>]) -> Vec<String> {
    secrets
        .iter()
        .filter_map(|s| leaked_run(text.as_bytes(), s).map(|run| format!("{run:?} (of a {}-byte secret)", s.len())))
        .collect()
}

#[test]
fn the_scanner_finds_any_run_of_eight_bytes() {
    let secret = b"0xac0974bec39a17e36ba4a6b4d238ff944bacb478".to_vec();
    assert!(leaks("key ends in d238ff944bacb478, oops", std::slice::from_ref(&secret)).len() == 1);
    assert!(leaks("starts 0xac0974b", std::slice::from_ref(&secret)).len() == 1);
    assert!(leaks("only 0xac097 here", std::slice::from_ref(&secret)).is_empty());
    assert!(debug_runs(&[157, 97, 177, 157, 239, 253, 90]).contains(&"97,177,157,239,253,90".to_owned()));
}

// ---- 1 and 2: the bad-input table, through the C ABI and through the core API ---------------

#[test]
fn no_secret_in_any_message_or_debug_output_of_the_bad_input_table() {
    let fx = Fixtures::new();
    let core = Core::new(&fx.url);
    let cases = harness::cases();
    let (mut with_secrets, mut core_cases, mut texts) = (0, 0, 0);
    let mut failures = Vec::new();
    for case in &cases {
        let secrets = fx.secrets(case);
        if secrets.is_empty() {
            continue; // nothing handed over, nothing that could leak
        }
        with_secrets += 1;
        let outcome = harness::run(case, &fx);
        for text in outcome.message.iter().chain(outcome.body.iter()) {
            texts += 1;
            for leak in leaks(text, &secrets) {
                failures.push(format!("{}: the C message quotes {leak}", case.label()));
            }
        }
        if let Some(outputs) = core_outputs(case, &fx, &core) {
            core_cases += 1;
            for text in &outputs {
                texts += 1;
                for leak in leaks(text, &secrets) {
                    failures.push(format!("{}: core output {:.200} quotes {leak}", case.label(), text));
                }
            }
        }
    }
    println!(
        "{} cases ({with_secrets} handing over secrets), {core_cases} also through the core API: \
         {texts} messages and Debug/Display texts scanned",
        cases.len()
    );
    assert!(with_secrets >= 60, "{with_secrets}");
    assert!(core_cases >= 60, "{core_cases}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---- the Debug output of the core types holding secrets ----------------------------------------

/// Texts a secret of these bytes is commonly shown as, checked run by run: the bytes as hex
/// (either case) and base58.
fn renderings(raw: &[u8]) -> Vec<Vec<u8>> {
    let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    vec![hex.clone().into_bytes(), hex.to_uppercase().into_bytes(), bs58::encode(raw).into_string().into_bytes()]
}

/// Rust's `Debug` of any 6 consecutive bytes of the secret (`157, 97, 177, 157, 239, 253`):
/// checked whole, since 8 characters of decimal lists match by chance.
fn debug_runs(raw: &[u8]) -> Vec<String> {
    raw.windows(6).map(|w| format!("{w:?}").replace(['[', ']', ' '], "")).collect()
}

#[test]
fn debug_of_keys_sessions_and_logins_shows_no_secret() {
    let seed = common::unhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
    let pair = bs58::decode(harness::ED_PAIR_B58).into_vec().unwrap();
    let evm = common::unhex(&harness::EVM_KEY[2..]);
    let mut secrets = renderings(&seed);
    secrets.extend(renderings(&evm));
    let ed_forms = [
        harness::ED_SEED_B58.to_owned(),
        harness::ED_PAIR_B58.to_owned(),
        common::hex(&seed),
        common::hex(&pair),
        format!("0x{}", common::hex(&seed).to_uppercase()),
        format!("{pair:?}").replace(' ', ""),
    ];
    let evm_forms = [harness::EVM_KEY.to_owned(), harness::EVM_KEY[2..].to_owned(), harness::EVM_KEY.to_uppercase()];
    for form in ed_forms.iter().chain(&evm_forms) {
        secrets.push(form.clone().into_bytes());
    }
    let token = "web-token-3Kx9Qm2Vb7Lp0Zr5";
    secrets.push(token.into());

    let mut texts: Vec<String> = Vec::new();
    for form in &ed_forms {
        let key = RequestKey::from_text(form).unwrap();
        assert_eq!(key.request_id(), harness::ED_PUBLIC_B58, "{form}");
        texts.push(format!("{key:?}"));
        texts.push(format!("{:?}", parse_ed25519_secret(form).unwrap()));
        texts.push(format!("{:?}", wallet::solana::WalletKey::parse(form).unwrap()));
        let session = CoreSession::from_api_key(token, form).unwrap();
        texts.push(format!("{session:?}"));
        texts.push(format!("{:#?}", session));
        texts.push(format!("{:?}", session.login().unwrap()));
        texts.push(session.info_json());
    }
    for form in &evm_forms {
        let key = wallet::evm::WalletKey::parse(form).unwrap();
        texts.push(format!("{key:?}"));
        texts.push(format!("{key:#?}"));
    }
    let login = Login {
        token: zeroize::Zeroizing::new(token.to_owned()),
        chain: Some(Chain::Bsc),
        address: None,
        alias: None,
        expires_at: Some(1),
    };
    texts.push(format!("{login:?}"));
    texts.push(format!("{login:#?}"));
    let exact: Vec<String> = debug_runs(&seed).into_iter().chain(debug_runs(&evm)).collect();
    for text in &texts {
        assert!(leaks(text, &secrets).is_empty(), "{text} shows {:?}", leaks(text, &secrets));
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        assert!(!exact.iter().any(|run| compact.contains(run.as_str())), "{text} shows secret bytes");
    }
    // The public halves are there: the Debug output is useful, not empty.
    assert!(texts.iter().any(|t| t.contains(harness::ED_PUBLIC_B58)));
    assert!(texts.iter().any(|t| t.contains("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266")));
    assert!(texts.iter().any(|t| t.contains("<redacted>")));
}

// ---- access tokens from the sandbox ------------------------------------------------------------

mod with_sandbox {
    use super::*;
    use common::abi::{self, Client, Failure, Session, c, new_order, request, signin};
    use perps::ffi::error::perps_code::*;
    use perps_sandbox::{Faults, Sandbox, SandboxConfig};

    /// The distinguishing parts of an access token: a JWT's header is the venue's constant
    /// (`{"alg":"ES256",…}`, shared with every challenge it signs), so its payload and
    /// signature are the secret; any other token is secret as a whole.
    fn token_secrets(token: &str) -> Vec<Vec<u8>> {
        let parts: Vec<&str> = token.split('.').collect();
        if parts.len() == 3 { vec![parts[1].into(), parts[2].into()] } else { vec![token.into()] }
    }

    fn check_failure(what: &str, f: &Failure, secrets: &[Vec<u8>], scanned: &mut usize) {
        for text in std::iter::once(&f.message).chain(f.body.iter()) {
            *scanned += 1;
            assert!(leaks(text, secrets).is_empty(), "{what}: {text:?} shows {:?}", leaks(text, secrets));
        }
    }

    #[test]
    fn access_tokens_never_appear_in_errors_or_debug_output() {
        let venue = Sandbox::start(SandboxConfig::default()).unwrap();
        let client = Client::new(&venue.base_url(), &venue.perps_url(), Some(r#"{"read_timeout_ms":400}"#)).unwrap();
        let session = Session::new();
        let login_json = signin(&client, &session, "bsc", harness::EVM_KEY, 3600).unwrap();
        let token = abi::owned(|e| perps::ffi::session::perps_session_token(session.0, e)).unwrap();
        assert!(login_json.contains(&token), "the login result (a success, freed by the caller) holds the token");
        let mut secrets = token_secrets(&token);
        secrets.push(harness::EVM_KEY.into());
        let mut scanned = 0;

        // Failures of a signed-in session, one provoking call each.
        let bad_orders = [
            "{",
            "[]",
            r#"{"symbol":"BTC-USD","reduceOnly":true}"#,
            r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":1,"time_in_force":"ioc","reduce_only":false}"#,
        ];
        for order in bad_orders {
            let f = new_order(&client, &session, order).unwrap_err();
            assert_eq!(f.code, PERPS_INVALID_ORDER);
            check_failure(order, &f, &secrets, &mut scanned);
        }
        for (method, path) in [("PATCH", "/api/x"), ("GET", "api/x"), ("GET", "/a b")] {
            check_failure(path, &request(&client, &session, method, path, None).unwrap_err(), &secrets, &mut scanned);
        }
        let faults = [
            Faults { status: Some(401), ..Default::default() },
            Faults { status: Some(403), ..Default::default() },
            Faults { status: Some(429), ..Default::default() },
            Faults { status: Some(500), ..Default::default() },
            Faults { status: Some(503), ..Default::default() },
            Faults { order_code_nonzero: true, ..Default::default() },
            Faults { slow_ms: 1200, ..Default::default() },
            Faults { close_after_order: true, ..Default::default() },
        ];
        for fault in faults {
            venue.set_faults(fault.clone());
            let f = new_order(&client, &session, harness::ORDER).unwrap_err();
            check_failure(&format!("{fault:?}"), &f, &secrets, &mut scanned);
            let f = request(&client, &session, "POST", "/api/cancel_order", Some("{}"));
            if let Err(f) = f {
                check_failure(&format!("{fault:?} request"), &f, &secrets, &mut scanned);
            }
        }
        venue.set_faults(Faults::default());
        // Through the core API: Debug of the session holding the token, and of core errors.
        let core_client = CoreClient::new(&venue.base_url(), &venue.perps_url(), ClientOptions::default()).unwrap();
        let core_session = CoreSession::new().unwrap();
        core_client.signin(&core_session, Chain::Bsc, harness::EVM_KEY, 3600).unwrap();
        let core_token = core_session.login().unwrap().token.to_string();
        secrets.extend(token_secrets(&core_token));
        let mut texts =
            vec![format!("{core_session:?}"), format!("{:?}", core_session.login()), core_session.info_json()];
        for fault in [
            Faults { status: Some(401), ..Default::default() },
            Faults { order_code_nonzero: true, ..Default::default() },
        ] {
            venue.set_faults(fault);
            texts.extend(shown(&core_client.new_order(&core_session, harness::ORDER)));
        }
        venue.set_faults(Faults::default());
        texts.extend(shown(&core_client.new_order(&core_session, "{")));
        texts.extend(shown(&core_client.login(&core_session, "0x00", 0)));
        texts.push(format!("{core_session:?}"));
        for text in &texts {
            scanned += 1;
            assert!(leaks(text, &secrets).is_empty(), "{text} shows {:?}", leaks(text, &secrets));
        }

        // An expired token: the error says so without quoting it.
        let short = Session::new();
        signin(&client, &short, "bsc", harness::EVM_KEY, 1).unwrap();
        let short_token = abi::owned(|e| perps::ffi::session::perps_session_token(short.0, e)).unwrap();
        secrets.extend(token_secrets(&short_token));
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let f = new_order(&client, &short, harness::ORDER).unwrap_err();
        assert_eq!(f.code, PERPS_TOKEN_EXPIRED);
        check_failure("expired", &f, &secrets, &mut scanned);

        // A login answer for another wallet carries a fresh token: it is not attached.
        venue.set_faults(Faults { login_wrong_address: true, ..Default::default() });
        let f = signin(&client, &Session::new(), "bsc", harness::EVM_KEY, 0).unwrap_err();
        assert_eq!(f.code, PERPS_VERIFICATION_FAILED);
        assert!(f.body.is_none() && !f.message.contains("eyJ"), "{f:?}");
        check_failure("login_wrong_address", &f, &secrets, &mut scanned);
        println!("{scanned} messages, bodies and Debug texts scanned for the access tokens");
        let _ = c;
    }

    /// An API credential's token and key never come back, whatever fails.
    #[test]
    fn api_credentials_never_appear_in_errors() {
        let seed = common::unhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
        let public = bs58::encode(
            ed25519_dalek::SigningKey::from_bytes(&seed.clone().try_into().unwrap()).verifying_key().as_bytes(),
        )
        .into_string();
        let token = "web-token-Pq7Wz2Nc8Ks4Hd6";
        let venue =
            Sandbox::start(SandboxConfig { api_keys: vec![(token.into(), public)], ..Default::default() }).unwrap();
        let client = Client::new(&venue.base_url(), &venue.perps_url(), None).unwrap();
        let session = Session::from_api_key(token, harness::ED_SEED_B58).unwrap();
        let mut secrets = renderings(&seed);
        secrets.push(token.into());
        secrets.push(harness::ED_SEED_B58.into());
        assert!(new_order(&client, &session, harness::ORDER).is_ok());
        let mut scanned = 0;
        for fault in [Some(401), Some(500)] {
            venue.set_faults(Faults { status: fault, ..Default::default() });
            check_failure("status", &new_order(&client, &session, harness::ORDER).unwrap_err(), &secrets, &mut scanned);
        }
        // The same token with another key: the venue refuses the signature (403).
        let impostor = Session::from_api_key(token, &bs58::encode([7u8; 32]).into_string()).unwrap();
        venue.set_faults(Faults::default());
        let f = new_order(&client, &impostor, harness::ORDER).unwrap_err();
        assert_eq!(f.http_status, 403);
        check_failure("impostor", &f, &secrets, &mut scanned);
        assert!(scanned >= 3);
    }
}

// ---- logging --------------------------------------------------------------------------------------

/// The library writes nothing to stdout or stderr and has no logging dependency. (The
/// sandbox venue and its binary, behind the `sandbox` feature, may print: they are not part of
/// the library a trading engine links.)
#[test]
fn the_library_does_not_log() {
    fn scan(dir: &std::path::Path, found: &mut Vec<String>, files: &mut usize) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("sandbox") && !path.ends_with("bin") {
                    scan(&path, found, files);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            *files += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for needle in [
                    "println!",
                    "print!",
                    "eprintln!",
                    "eprint!",
                    "dbg!",
                    "log::",
                    "tracing::",
                    "io::stdout",
                    "io::stderr",
                    "set_hook",
                ] {
                    if code.contains(needle) {
                        found.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                    }
                }
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut found, mut files) = (Vec::new(), 0);
    scan(&root.join("src"), &mut found, &mut files);
    assert!(files >= 20, "{files}");
    assert!(found.is_empty(), "the library prints:\n{}", found.join("\n"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let dependencies = manifest.split("[dependencies]").nth(1).unwrap().split("\n[").next().unwrap();
    for crate_name in ["log", "tracing", "env_logger", "slog", "fern"] {
        let declared = dependencies.lines().any(|l| {
            l.trim_start().starts_with(&format!("{crate_name} "))
                || l.trim_start().starts_with(&format!("{crate_name}="))
        });
        assert!(!declared, "the library depends on {crate_name}");
    }
}
