//! Property tests (proptest), through the C ABI, each checked against an independent oracle:
//! - body signatures: sign → verify_strict over `v1,{id},{ts},{body}` for random bodies,
//!   ids, times and keys; non-UTF-8 bodies refused without touching the output;
//! - orders: every valid order (generated from the documented field rules) survives
//!   serialise → parse unchanged: same string again, same field values, documented order;
//!   one broken field is refused naming that field;
//! - Ed25519 key text forms: every form of one seed gives the same requestId; a keypair with
//!   a foreign public half is refused;
//! - EVM: the address of any key matches an independent EIP-55 computation, and the login
//!   signature recovers to it (low-s, v 27/28);
//! - challenge verification agrees with a model of its claim rules.
//!
//! Failures print the minimal input; nothing is written to the source tree.

mod common;

use common::VenueKey;
use common::abi::{Failure, Session, c, owned, wallet_address, wallet_sign};
use ed25519_dalek::{Signature, SigningKey, VerifyingKey};
use perps::ffi::error::perps_code::{self, *};
use perps::ffi::sign::{perps_body_signature, perps_sign_body_at, perps_sign_body_into};
use proptest::prelude::*;
use proptest::test_runner::Config;
use std::ffi::CStr;

fn config(cases: u32) -> Config {
    Config { cases, failure_persistence: None, ..Config::default() }
}

fn field(bytes: &[std::ffi::c_char]) -> String {
    unsafe { CStr::from_ptr(bytes.as_ptr()) }.to_str().unwrap().to_owned()
}

fn verifying_key(session: &Session) -> VerifyingKey {
    let bytes: [u8; 32] = bs58::decode(session.request_id()).into_vec().unwrap().try_into().unwrap();
    VerifyingKey::from_bytes(&bytes).unwrap()
}

fn verify_v1(key: &VerifyingKey, id: &str, ts: &str, body: &[u8], signature_b64: &str) -> bool {
    use base64::Engine as _;
    let Ok(raw) = base64::engine::general_purpose::STANDARD.decode(signature_b64) else { return false };
    let Ok(raw) = <[u8; 64]>::try_from(raw.as_slice()) else { return false };
    let mut message = format!("v1,{id},{ts},").into_bytes();
    message.extend_from_slice(body);
    key.verify_strict(&message, &Signature::from_bytes(&raw)).is_ok()
}

fn api_session(seed: [u8; 32]) -> Session {
    Session::from_api_key("prop-token", &bs58::encode(seed).into_string()).unwrap()
}

// ---- body signatures ----

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn sign_body_into_verifies_for_any_utf8_body(seed in any::<[u8; 32]>(), body in ".{0,300}") {
        let session = api_session(seed);
        let key = verifying_key(&session);
        // The independent key: ed25519-dalek from the same seed.
        prop_assert_eq!(key, SigningKey::from_bytes(&seed).verifying_key());
        let mut out = std::mem::MaybeUninit::<perps_body_signature>::uninit();
        let code = perps_sign_body_into(session.0, body.as_ptr(), body.len(), out.as_mut_ptr());
        prop_assert_eq!(code, PERPS_OK);
        let out = unsafe { out.assume_init() };
        prop_assert_eq!(field(&out.version), "v1");
        let id = field(&out.request_id);
        prop_assert!(uuid::Uuid::try_parse(&id).is_ok_and(|u| u.get_version_num() == 4), "{}", id);
        let ts = field(&out.timestamp);
        let now = perps::body_sign::now_ms();
        let stamp: i64 = ts.parse().unwrap();
        prop_assert!((now - 60_000..=now).contains(&stamp), "timestamp {} vs now {}", stamp, now);
        prop_assert!(verify_v1(&key, &id, &ts, body.as_bytes(), &field(&out.signature)));
        // One changed body byte breaks it.
        let mut other = body.clone().into_bytes();
        other.push(b' ');
        prop_assert!(!verify_v1(&key, &id, &ts, &other, &field(&out.signature)));
    }

    #[test]
    fn sign_body_at_verifies_and_is_deterministic(
        seed in any::<[u8; 32]>(),
        body in "[^\u{0}]{0,200}",
        id_bytes in any::<[u8; 16]>(),
        upper in any::<bool>(),
        ts in 0i64..=i64::MAX,
    ) {
        let session = api_session(seed);
        let id = uuid::Uuid::from_bytes(id_bytes).hyphenated().to_string();
        let id = if upper { id.to_uppercase() } else { id };
        let (b, i) = (c(&body), c(&id));
        let sign = || owned(|e| perps_sign_body_at(session.0, b.as_ptr(), i.as_ptr(), ts, e)).unwrap();
        let first = sign();
        prop_assert_eq!(&first, &sign(), "Ed25519 signatures are deterministic");
        let headers: serde_json::Value = serde_json::from_str(&first).unwrap();
        prop_assert_eq!(headers["x-request-id"].as_str(), Some(id.as_str()), "the id is kept exactly as given");
        let stamp = ts.to_string();
        prop_assert_eq!(headers["x-request-timestamp"].as_str(), Some(stamp.as_str()));
        prop_assert!(verify_v1(&verifying_key(&session), &id, &stamp, body.as_bytes(),
            headers["x-request-signature"].as_str().unwrap()));
        // Byte for byte what ed25519-dalek's standard signer gives (our R = r·B is our own code).
        use base64::Engine as _;
        use ed25519_dalek::Signer as _;
        let dalek = SigningKey::from_bytes(&seed).sign(format!("v1,{id},{stamp},{body}").as_bytes());
        prop_assert_eq!(headers["x-request-signature"].as_str().unwrap(),
            base64::engine::general_purpose::STANDARD.encode(dalek.to_bytes()));
    }

    #[test]
    fn non_utf8_bodies_are_refused_and_out_is_untouched(
        prefix in ".{0,40}", bad in prop::sample::select(vec![0x80u8, 0xbf, 0xc0, 0xc1, 0xf5, 0xff]), suffix in ".{0,40}",
    ) {
        let session = api_session([3u8; 32]);
        let mut body = prefix.into_bytes();
        body.push(bad);
        body.extend_from_slice(suffix.as_bytes());
        let mut out = std::mem::MaybeUninit::<perps_body_signature>::uninit();
        unsafe { std::ptr::write_bytes(out.as_mut_ptr(), 0x5a, 1) };
        let code = perps_sign_body_into(session.0, body.as_ptr(), body.len(), out.as_mut_ptr());
        prop_assert_eq!(code, PERPS_INVALID_ARGUMENT);
        let raw = unsafe { std::slice::from_raw_parts(out.as_ptr().cast::<u8>(), size_of::<perps_body_signature>()) };
        prop_assert!(raw.iter().all(|&b| b == 0x5a), "out written on failure");
    }
}

// ---- orders ----

/// A plain decimal greater than zero, as the README defines it.
fn decimal() -> impl Strategy<Value = String> {
    let int = prop_oneof![Just("0".to_owned()), "[1-9][0-9]{0,12}"];
    (int, prop::option::of("[0-9]{1,12}"))
        .prop_map(|(i, f)| match f {
            Some(f) => format!("{i}.{f}"),
            None => i,
        })
        .prop_filter("greater than zero", |s| s.bytes().any(|b| (b'1'..=b'9').contains(&b)))
}

#[derive(Clone, Debug)]
struct OrderSpec {
    /// (field, JSON value) in the documented order.
    fields: Vec<(&'static str, serde_json::Value)>,
    /// The order the caller wrote them in.
    permutation: Vec<usize>,
    spacing: String,
}

fn valid_order() -> impl Strategy<Value = OrderSpec> {
    use serde_json::Value::{Bool, Number, String as S};
    let enum_of = |values: &'static [&'static str]| prop::sample::select(values.to_vec()).prop_map(|v| S(v.into()));
    (
        "[A-Za-z0-9_./-]{1,64}",
        enum_of(&["buy", "sell"]),
        enum_of(&["limit", "market"]),
        decimal(),
        prop::option::of(decimal()),
        enum_of(&["gtc", "ioc", "alo"]),
        any::<bool>(),
        // Visible ASCII but `"` and `\\` (refused in a cl_ord_id).
        prop::option::of("[!#-\\[\\]-~]{1,64}"),
        prop::option::of(enum_of(&["cross", "isolated"])),
        prop::option::of(1u64..=u32::MAX as u64),
        (prop::option::of(decimal()), prop::option::of(decimal())),
        (any::<u64>(), prop::sample::select(vec!["", " ", "\n\t ", "  "])),
    )
        .prop_map(
            |(symbol, side, kind, qty, price, tif, reduce, cl, margin, leverage, (tp, sl), (shuffle, spacing))| {
                let price = if kind == S("limit".into()) { Some(price.unwrap_or_else(|| "1".into())) } else { price };
                let mut fields: Vec<(&'static str, serde_json::Value)> =
                    vec![("symbol", S(symbol)), ("side", side), ("order_type", kind), ("qty", S(qty))];
                if let Some(p) = price {
                    fields.push(("price", S(p)));
                }
                fields.push(("time_in_force", tif));
                fields.push(("reduce_only", Bool(reduce)));
                if let Some(cl) = cl {
                    fields.push(("cl_ord_id", S(cl)));
                }
                if let Some(m) = margin {
                    fields.push(("margin_mode", m));
                }
                if let Some(l) = leverage {
                    fields.push(("leverage", Number(l.into())));
                }
                if let Some(tp) = tp {
                    fields.push(("tp_price", S(tp)));
                }
                if let Some(sl) = sl {
                    fields.push(("sl_price", S(sl)));
                }
                // A permutation from the random word (Fisher–Yates driven by its bits).
                let mut permutation: Vec<usize> = (0..fields.len()).collect();
                let mut word = shuffle;
                for i in (1..permutation.len()).rev() {
                    permutation.swap(i, (word % (i as u64 + 1)) as usize);
                    word = word.rotate_left(7) ^ 0x9e37_79b9_7f4a_7c15;
                }
                OrderSpec { fields, permutation, spacing: spacing.to_owned() }
            },
        )
}

impl OrderSpec {
    /// The caller's JSON: fields in the caller's order, with the caller's spacing.
    fn input(&self) -> String {
        let sp = &self.spacing;
        let entries: Vec<String> = self
            .permutation
            .iter()
            .map(|&i| {
                let (name, value) = &self.fields[i];
                format!("{sp}\"{name}\"{sp}:{sp}{value}{sp}")
            })
            .collect();
        format!("{sp}{{{}}}{sp}", entries.join(","))
    }

    /// The independent oracle: compact, documented order, values as serde_json writes them.
    fn expected(&self) -> String {
        let entries: Vec<String> = self.fields.iter().map(|(n, v)| format!("\"{n}\":{v}")).collect();
        format!("{{{}}}", entries.join(","))
    }
}

fn serialize(order: &str) -> Result<String, Failure> {
    let o = c(order);
    owned(|e| perps::ffi::order::perps_order_serialize(o.as_ptr(), e))
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn every_valid_order_survives_serialise_then_parse(spec in valid_order()) {
        let body = serialize(&spec.input()).map_err(|f| TestCaseError::fail(format!("{f:?} for {}", spec.input())))?;
        prop_assert_eq!(&body, &spec.expected());
        // Parsing the output again gives the same string …
        prop_assert_eq!(&serialize(&body).unwrap(), &body);
        let again = perps::order::validate(&body).unwrap();
        prop_assert_eq!(again.as_str(), body.as_str());
        // … and the same field values, decimals as the caller's own text.
        let parsed: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&body).unwrap();
        prop_assert_eq!(parsed.len(), spec.fields.len());
        for (name, value) in &spec.fields {
            prop_assert_eq!(parsed.get(*name), Some(value), "field {}", name);
        }
    }

    #[test]
    fn one_broken_field_is_refused_by_name(
        spec in valid_order(),
        which in any::<prop::sample::Index>(),
        breakage in prop::sample::select(vec![
            serde_json::json!(null), serde_json::json!(1.5), serde_json::json!(""), serde_json::json!("-1"),
            serde_json::json!("1e5"), serde_json::json!("01"), serde_json::json!("0"), serde_json::json!(".5"),
            serde_json::json!("5."), serde_json::json!(" 1"), serde_json::json!([]), serde_json::json!({}),
            serde_json::json!("BUY"), serde_json::json!(0), serde_json::json!("x".repeat(65)),
        ]),
    ) {
        let mut spec = spec;
        let i = which.index(spec.fields.len());
        let name = spec.fields[i].0;
        // Skip the few replacements that are still valid for this field.
        let still_valid = match name {
            "symbol" => breakage.as_str().is_some_and(|s| !s.is_empty() && s.len() <= 64
                && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_/.".contains(c))),
            "cl_ord_id" => breakage.as_str().is_some_and(|s| !s.is_empty() && s.len() <= 64
                && s.bytes().all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')),
            _ => false,
        };
        prop_assume!(!still_valid);
        spec.fields[i].1 = breakage;
        let f = serialize(&spec.input()).expect_err("a broken field is refused");
        prop_assert_eq!(f.code, PERPS_INVALID_ORDER);
        prop_assert!(f.message.contains(&format!("\"{name}\"")), "{} does not name {}", f.message, name);
    }

    #[test]
    fn unknown_or_duplicated_fields_are_refused(spec in valid_order(), unknown in "[a-z][a-zA-Z_]{0,15}", dup in any::<prop::sample::Index>()) {
        let known = ["symbol", "side", "order_type", "qty", "price", "time_in_force", "reduce_only", "cl_ord_id",
            "margin_mode", "leverage", "tp_price", "sl_price"];
        prop_assume!(!known.contains(&unknown.as_str()));
        let input = spec.input();
        let with_unknown = format!("{},\"{unknown}\":true}}", input.trim_end().trim_end_matches('}'));
        let f = serialize(&with_unknown).expect_err("unknown field");
        prop_assert_eq!(f.code, PERPS_INVALID_ORDER);
        prop_assert!(f.message.contains(&unknown), "{}", f.message);
        let (name, value) = &spec.fields[dup.index(spec.fields.len())];
        let with_dup = format!("{},\"{name}\":{value}}}", input.trim_end().trim_end_matches('}'));
        let f = serialize(&with_dup).expect_err("duplicated field");
        prop_assert_eq!(f.code, PERPS_INVALID_ORDER);
        prop_assert!(f.message.contains("duplicate"), "{}", f.message);
    }
}

proptest! {
    #![proptest_config(config(2048))]

    /// The single-pass scanner of plain orders (src/order/scan.rs) must agree with the
    /// reference validation on every text: the same body, or the same error. Valid orders,
    /// then each with one byte edit (an insertion from a JSON-heavy alphabet, a deletion or an
    /// escape of one character).
    #[test]
    fn the_order_scanner_agrees_with_the_reference(
        spec in valid_order(),
        edit in any::<prop::sample::Index>(),
        kind in 0u8..4,
        insert in prop::sample::select(b"\"\\,:{}[]019 \t\ntfnule.E+-xU".to_vec()),
    ) {
        let input = spec.input();
        prop_assert_eq!(perps::order::validate(&input), perps::order::validate_reference(&input));
        let mut bytes = input.into_bytes();
        let at = edit.index(bytes.len());
        match kind {
            0 => bytes.insert(at, insert),
            1 => { bytes.remove(at); }
            2 if bytes[at].is_ascii_alphanumeric() => {
                let escaped = format!("\\u{:04x}", bytes[at]);
                bytes.splice(at..=at, escaped.into_bytes());
            }
            _ => bytes[at] = insert,
        }
        let Ok(text) = String::from_utf8(bytes) else { return Ok(()) };
        prop_assert_eq!(perps::order::validate(&text), perps::order::validate_reference(&text), "{}", text);
    }
}

// ---- keys ----

fn hex(bytes: &[u8]) -> String {
    common::hex(bytes)
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn every_text_form_of_an_ed25519_key_is_the_same_key(seed in any::<[u8; 32]>()) {
        let signing = SigningKey::from_bytes(&seed);
        let expected = bs58::encode(signing.verifying_key().as_bytes()).into_string();
        let pair = signing.to_keypair_bytes();
        let json_array = |b: &[u8]| format!("[{}]", b.iter().map(u8::to_string).collect::<Vec<_>>().join(","));
        for form in [
            bs58::encode(seed).into_string(),
            bs58::encode(pair).into_string(),
            hex(&seed),
            format!("0x{}", hex(&seed)),
            hex(&seed).to_uppercase(),
            hex(&pair),
            format!("0X{}", hex(&pair)),
            json_array(&pair),
            json_array(&seed),
            format!("  {}\n", bs58::encode(pair).into_string()),
        ] {
            let session = Session::from_api_key("t", &form).map_err(|f| TestCaseError::fail(format!("{f:?}")))?;
            prop_assert_eq!(session.request_id(), expected.clone());
        }
        // A keypair whose public half belongs to another seed is refused.
        let mut foreign = pair;
        foreign[32..].copy_from_slice(SigningKey::from_bytes(&[seed[0] ^ 1; 32]).verifying_key().as_bytes());
        if foreign != pair {
            let f = Session::from_api_key("t", &bs58::encode(foreign).into_string()).err().unwrap();
            prop_assert_eq!(f.code, PERPS_INVALID_KEY);
        }
    }

    #[test]
    fn evm_address_and_login_signature_match_an_independent_computation(
        key in any::<[u8; 32]>().prop_filter("a valid secp256k1 scalar", |k| k256::ecdsa::SigningKey::from_slice(k).is_ok()),
        message in ".{0,200}",
    ) {
        use sha3::{Digest, Keccak256};
        let signing = k256::ecdsa::SigningKey::from_slice(&key).unwrap();
        let point = signing.verifying_key().to_sec1_point(false);
        let hash = Keccak256::digest(&point.as_bytes()[1..]);
        let lower = hex(&hash[12..]);
        // EIP-55: upper-case a letter when the matching nibble of keccak(lower hex) is ≥ 8.
        let check = Keccak256::digest(lower.as_bytes());
        let eip55: String = lower.chars().enumerate().map(|(i, ch)| {
            let nibble = (check[i / 2] >> if i % 2 == 0 { 4 } else { 0 }) & 0xf;
            if nibble >= 8 { ch.to_ascii_uppercase() } else { ch }
        }).collect();
        let expected = format!("0x{eip55}");
        for form in [hex(&key), format!("0x{}", hex(&key)), hex(&key).to_uppercase()] {
            prop_assert_eq!(wallet_address("bsc", &form).unwrap(), expected.clone());
        }
        // personal_sign recovers to that address.
        let payload = serde_json::json!({ "message": message }).to_string();
        let signature = wallet_sign("bsc", &hex(&key), &payload).unwrap();
        let raw = common::unhex(signature.strip_prefix("0x").unwrap());
        prop_assert_eq!(raw.len(), 65);
        prop_assert!(raw[64] == 27 || raw[64] == 28);
        let sig = k256::ecdsa::Signature::from_slice(&raw[..64]).unwrap();
        prop_assert!(sig.normalize_s() == sig, "low-s");
        let mut prefixed = format!("\x19Ethereum Signed Message:\n{}", message.len()).into_bytes();
        prefixed.extend_from_slice(message.as_bytes());
        let digest = Keccak256::digest(&prefixed);
        let recid = k256::ecdsa::RecoveryId::from_byte(raw[64] - 27).unwrap();
        let recovered = k256::ecdsa::VerifyingKey::recover_from_prehash(&digest, &sig, recid).unwrap();
        prop_assert_eq!(&recovered, signing.verifying_key());
    }
}

// ---- challenge verification against a model ----

#[derive(Clone, Debug)]
struct ChallengeCase {
    exp_delta: i64,
    iat_delta: i64,
    own_request_id: bool,
    address_case: u8,
    with_kid: bool,
    tamper: bool,
}

fn challenge_case() -> impl Strategy<Value = ChallengeCase> {
    (-400i64..400, -400i64..200, prop::bool::weighted(0.8), 0u8..3, any::<bool>(), prop::bool::weighted(0.15)).prop_map(
        |(exp_delta, iat_delta, own_request_id, address_case, with_kid, tamper)| ChallengeCase {
            exp_delta,
            iat_delta,
            own_request_id,
            address_case,
            with_kid,
            tamper,
        },
    )
}

const BSC_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

proptest! {
    #![proptest_config(config(96))]

    #[test]
    fn challenge_verification_agrees_with_the_claim_rules(case in challenge_case()) {
        let now = 1_900_000_000i64;
        let key = VenueKey::new(5, case.with_kid.then_some("kid-5"));
        let session = Session::new();
        let request_id = if case.own_request_id { session.request_id() } else { Session::new().request_id() };
        let address = match case.address_case {
            0 => BSC_ADDRESS.to_owned(),
            1 => BSC_ADDRESS.to_lowercase(),
            _ => BSC_ADDRESS.to_uppercase().replacen("0X", "0x", 1),
        };
        let payload = common::signin_payload("bsc", &address, &request_id, now + case.iat_delta, now + case.exp_delta);
        let mut jws = key.sign_jws(&key.header(), &payload.to_string());
        if case.tamper {
            // Flip one character of the signature segment.
            let last = jws.pop().unwrap();
            jws.push(if last == 'A' { 'B' } else { 'A' });
        }
        let certs = common::jwk_set(&[&key]);
        let (s, cj, r, ch, a) = (c(&jws), c(&certs), c(&session.request_id()), c("bsc"), c(BSC_ADDRESS));
        let result = owned(|e| perps::ffi::challenge::perps_challenge_verify(
            s.as_ptr(), cj.as_ptr(), r.as_ptr(), ch.as_ptr(), a.as_ptr(), now, e));
        // The model: every rule from the README, independently.
        let should_pass = !case.tamper && case.exp_delta > 0 && case.iat_delta <= 60 && case.own_request_id;
        match result {
            Ok(text) => {
                prop_assert!(should_pass, "accepted {:?}", case);
                prop_assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), payload);
            }
            Err(f) => {
                prop_assert!(!should_pass, "refused {:?}: {}", case, f.message);
                prop_assert_eq!(f.code, PERPS_VERIFICATION_FAILED);
            }
        }
    }
}

#[test]
fn perps_code_values_are_stable() {
    // A cheap invariant the properties rely on: the numbers in the README table.
    let table: [(perps_code, i32); 14] = [
        (PERPS_OK, 0),
        (PERPS_INVALID_ARGUMENT, 1),
        (PERPS_INVALID_KEY, 2),
        (PERPS_INVALID_ORDER, 3),
        (PERPS_VERIFICATION_FAILED, 4),
        (PERPS_INVALID_STATE, 5),
        (PERPS_TRANSPORT, 6),
        (PERPS_TIMEOUT, 7),
        (PERPS_HTTP_STATUS, 8),
        (PERPS_API_ERROR, 9),
        (PERPS_BAD_RESPONSE, 10),
        (PERPS_TOKEN_EXPIRED, 11),
        (PERPS_RNG, 12),
        (PERPS_PANIC, 99),
    ];
    for (code, value) in table {
        assert_eq!(code as i32, value, "{code:?}");
    }
}
