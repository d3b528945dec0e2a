//! Challenge (`signedData`) verification: every accepted and every rejected shape.
//! The JWTs are made here with the p256 crate (an implementation independent of the
//! jsonwebtoken verifier the library uses).

mod common;

use common::{VenueKey, jwk_set};
use perps::challenge::{CertSet, Expected, Rejection, verify};
use perps::wallet::Chain;

const NOW: i64 = 1_800_000_000;
const REQUEST_ID: &str = "8bK4GzmYb2Xc7m9vHuJnWWwvQ6RkU2z3t1ePqAa7sXYZ";
const EVM_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

fn payload(iat: i64, exp: i64, request_id: &str, address: &str) -> String {
    common::signin_payload("bsc", address, request_id, iat, exp).to_string()
}

fn good_payload() -> String {
    payload(NOW - 5, NOW + 175, REQUEST_ID, EVM_ADDRESS)
}

fn expected() -> Expected<'static> {
    Expected { request_id: REQUEST_ID, chain: Chain::Bsc, address: EVM_ADDRESS, now_secs: NOW }
}

fn check(jws: &str, certs: &str) -> Result<perps::challenge::VerifiedChallenge, Rejection> {
    verify(jws, &CertSet::parse(certs).expect("certs parse"), &expected())
}

fn rejected_with(jws: &str, certs: &str, fragment: &str) {
    match check(jws, certs) {
        Ok(_) => panic!("accepted, expected a rejection mentioning {fragment:?}"),
        Err(Rejection::UnknownKid(kid)) => panic!("unknown kid {kid}, expected a rejection mentioning {fragment:?}"),
        Err(r) => assert!(r.message().contains(fragment), "message {:?} lacks {fragment:?}", r.message()),
    }
}

#[test]
fn valid_challenge_is_accepted_and_payload_returned_unchanged() {
    let key = VenueKey::new(7, Some("k1"));
    let p = good_payload();
    let v = check(&key.sign_jws(&key.header(), &p), &jwk_set(&[&key])).expect("valid");
    assert_eq!(v.payload_json, p);
    assert!(v.message.starts_with("venue.example wants you to sign in with your Ethereum account:\n"));
    assert_eq!(v.exp, NOW + 175);
}

#[test]
fn tampered_payload_is_rejected() {
    let key = VenueKey::new(7, Some("k1"));
    let jws = key.sign_jws(&key.header(), &good_payload());
    let parts: Vec<&str> = jws.split('.').collect();
    let other = payload(NOW - 5, NOW + 175, REQUEST_ID, "0x0000000000000000000000000000000000000001");
    use base64::Engine as _;
    let forged =
        format!("{}.{}.{}", parts[0], base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(other), parts[2]);
    rejected_with(&forged, &jwk_set(&[&key]), "signature does not verify");
}

#[test]
fn tampered_header_is_rejected() {
    let key = VenueKey::new(7, Some("k1"));
    let jws = key.sign_jws(&key.header(), &good_payload());
    let parts: Vec<&str> = jws.split('.').collect();
    use base64::Engine as _;
    let header =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"alg":"ES256","typ":"JWT","kid":"k1","x":1}"#);
    rejected_with(&format!("{header}.{}.{}", parts[1], parts[2]), &jwk_set(&[&key]), "signature does not verify");
}

#[test]
fn wrong_key_is_rejected() {
    let signer = VenueKey::new(7, Some("k1"));
    let published = VenueKey::new(8, Some("k1"));
    rejected_with(
        &signer.sign_jws(&signer.header(), &good_payload()),
        &jwk_set(&[&published]),
        "does not verify with certs key",
    );
}

#[test]
fn alg_none_and_hs256_and_rs256_are_rejected() {
    let key = VenueKey::new(7, Some("k1"));
    for alg in ["none", "HS256", "RS256", "ES384", "es256"] {
        let header = format!(r#"{{"alg":"{alg}","typ":"JWT","kid":"k1"}}"#);
        let jws = key.sign_jws(&header, &good_payload());
        rejected_with(&jws, &jwk_set(&[&key]), "only ES256 is accepted");
    }
    // alg none with an empty signature segment, as an attacker would send it.
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    let unsigned = format!("{}.{}.", b64(r#"{"alg":"none"}"#), b64(&good_payload()));
    rejected_with(&unsigned, &jwk_set(&[&key]), "only ES256 is accepted");
}

#[test]
fn expired_challenge_is_rejected() {
    let key = VenueKey::new(7, None);
    let jws = key.sign_jws(&key.header(), &payload(NOW - 200, NOW - 20, REQUEST_ID, EVM_ADDRESS));
    rejected_with(&jws, &jwk_set(&[&key]), "has expired");
    let at_exp = key.sign_jws(&key.header(), &payload(NOW - 180, NOW, REQUEST_ID, EVM_ADDRESS));
    rejected_with(&at_exp, &jwk_set(&[&key]), "has expired");
}

#[test]
fn iat_far_in_the_future_is_rejected_but_small_skew_is_allowed() {
    let key = VenueKey::new(7, None);
    let far = key.sign_jws(&key.header(), &payload(NOW + 61, NOW + 241, REQUEST_ID, EVM_ADDRESS));
    rejected_with(&far, &jwk_set(&[&key]), "ahead of now");
    let near = key.sign_jws(&key.header(), &payload(NOW + 60, NOW + 240, REQUEST_ID, EVM_ADDRESS));
    assert!(check(&near, &jwk_set(&[&key])).is_ok());
}

#[test]
fn missing_kid_tries_every_key_of_the_set() {
    let a = VenueKey::new(1, Some("a"));
    let b = VenueKey::new(2, Some("b"));
    let c = VenueKey::new(3, None);
    let unsigned_header = r#"{"alg":"ES256","typ":"JWT"}"#;
    let jws = b.sign_jws(unsigned_header, &good_payload());
    assert!(check(&jws, &jwk_set(&[&a, &b, &c])).is_ok(), "the second key of three must be found");
    let stranger = VenueKey::new(4, None);
    let certs = CertSet::parse(&jwk_set(&[&a, &b, &c])).unwrap();
    assert!(matches!(
        verify(&stranger.sign_jws(unsigned_header, &good_payload()), &certs, &expected()),
        Err(Rejection::NoMatchingKey(_))
    ));
    rejected_with(
        &stranger.sign_jws(unsigned_header, &good_payload()),
        &jwk_set(&[&a, &b, &c]),
        "any of the 3 certs keys",
    );
}

#[test]
fn unknown_kid_is_its_own_rejection_so_certs_can_be_refetched() {
    let a = VenueKey::new(1, Some("a"));
    let rotated = VenueKey::new(9, Some("new"));
    match check(&rotated.sign_jws(&rotated.header(), &good_payload()), &jwk_set(&[&a])) {
        Err(Rejection::UnknownKid(kid)) => assert_eq!(kid, "new"),
        other => panic!("expected UnknownKid, got {other:?}"),
    }
}

#[test]
fn kid_selects_the_key_even_if_another_key_would_verify() {
    // A kid names one key: the signature must verify with that key, not any other.
    let a = VenueKey::new(1, Some("a"));
    let b = VenueKey::new(2, Some("b"));
    let jws = a.sign_jws(r#"{"alg":"ES256","typ":"JWT","kid":"b"}"#, &good_payload());
    rejected_with(&jws, &jwk_set(&[&a, &b]), "does not verify with certs key \"b\"");
}

#[test]
fn wrong_request_id_is_rejected() {
    let key = VenueKey::new(7, None);
    let jws = key
        .sign_jws(&key.header(), &payload(NOW, NOW + 180, "SomeoneElsesKey1111111111111111111111111111", EVM_ADDRESS));
    rejected_with(&jws, &jwk_set(&[&key]), "is not this session's key");
}

#[test]
fn wrong_address_is_rejected() {
    let key = VenueKey::new(7, None);
    let jws =
        key.sign_jws(&key.header(), &payload(NOW, NOW + 180, REQUEST_ID, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"));
    rejected_with(&jws, &jwk_set(&[&key]), "is not the wallet");
}

#[test]
fn bsc_address_in_other_case_is_the_same_wallet() {
    let key = VenueKey::new(7, None);
    for variant in [EVM_ADDRESS.to_lowercase(), format!("0x{}", EVM_ADDRESS[2..].to_uppercase())] {
        let jws = key.sign_jws(&key.header(), &payload(NOW, NOW + 180, REQUEST_ID, &variant));
        assert!(check(&jws, &jwk_set(&[&key])).is_ok(), "{variant} must match");
    }
}

#[test]
fn solana_address_must_match_exactly() {
    let key = VenueKey::new(7, None);
    let address = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
    let solana = |address: &str| common::signin_payload("solana", address, REQUEST_ID, NOW, NOW + 180).to_string();
    let jws = key.sign_jws(&key.header(), &solana(&address.to_lowercase()));
    let certs = CertSet::parse(&jwk_set(&[&key])).unwrap();
    let expected = Expected { chain: Chain::Solana, address, ..expected() };
    assert!(matches!(verify(&jws, &certs, &expected), Err(r) if r.message().contains("is not the wallet")));
    let exact = key.sign_jws(&key.header(), &solana(address));
    assert!(verify(&exact, &certs, &expected).is_ok());
}

#[test]
fn malformed_segments_are_rejected_with_their_own_messages() {
    let key = VenueKey::new(7, None);
    let certs = jwk_set(&[&key]);
    let good = key.sign_jws(&key.header(), &good_payload());
    let parts: Vec<&str> = good.split('.').collect();
    rejected_with("only.two", &certs, "expected 3 dot-separated segments, got 2");
    rejected_with(&format!("{good}.extra"), &certs, "got 4");
    rejected_with(&format!("{}.{}.", parts[0], parts[1]), &certs, "signature segment is empty");
    rejected_with(&format!("!!!.{}.{}", parts[1], parts[2]), &certs, "header segment is not unpadded base64url");
    rejected_with(
        &format!("{}.{}=.{}", parts[0], parts[1], parts[2]),
        &certs,
        "payload segment is not unpadded base64url",
    );
    rejected_with(&format!("{}.{}.{}", parts[0], parts[1], &parts[2][..20]), &certs, "expected 64");
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    rejected_with(&format!("{}.{}.{}", b64("[1,2]"), parts[1], parts[2]), &certs, "header is not a JSON object");
    let not_json = key.sign_jws(&key.header(), "not json");
    rejected_with(&not_json, &certs, "payload is not a JSON object");
    let crit = key.sign_jws(r#"{"alg":"ES256","crit":["b64"],"b64":false}"#, &good_payload());
    rejected_with(&crit, &certs, "crit");
}

#[test]
fn missing_or_mistyped_claims_are_rejected() {
    let key = VenueKey::new(7, None);
    let certs = jwk_set(&[&key]);
    let mut base: serde_json::Value = serde_json::from_str(&good_payload()).unwrap();
    for (claim, fragment) in [
        ("exp", "no \"exp\" claim"),
        ("iat", "no \"iat\" claim"),
        ("requestId", "no \"requestId\""),
        ("address", "no \"address\""),
        ("message", "no \"message\""),
    ] {
        let mut p = base.clone();
        p.as_object_mut().unwrap().remove(claim);
        rejected_with(&key.sign_jws(&key.header(), &p.to_string()), &certs, fragment);
    }
    base["exp"] = serde_json::json!("soon");
    rejected_with(&key.sign_jws(&key.header(), &base.to_string()), &certs, "\"exp\" claim is not a number");
}

#[test]
fn certs_documents_that_cannot_verify_anything_are_errors() {
    for bad in [
        "",
        "[]",
        "{}",
        r#"{"keys":{}}"#,
        r#"{"keys":[]}"#,
        r#"{"keys":[{"kty":"RSA","n":"x","e":"AQAB"}]}"#,
        r#"{"keys":[{"kty":"EC","crv":"P-384","x":"a","y":"b"}]}"#,
    ] {
        let e = CertSet::parse(bad).expect_err(bad);
        assert_eq!(e.code(), perps::Code::BadResponse, "{bad}");
    }
    // Keys without `use`, or with unrelated extra fields, are usable.
    let key = VenueKey::new(7, Some("k"));
    let mut jwk = key.jwk();
    jwk.as_object_mut().unwrap().remove("use");
    jwk["extra"] = serde_json::json!(true);
    let certs = CertSet::parse(&serde_json::json!({"keys":[jwk]}).to_string()).unwrap();
    assert!(verify(&key.sign_jws(&key.header(), &good_payload()), &certs, &expected()).is_ok());
}

#[test]
fn a_wallet_key_passed_as_the_address_is_never_quoted() {
    // `perps_challenge_verify` with the wallet's private key in the address argument: the
    // refusal names the claim's address, never the key (40 characters of a solana keypair
    // would leave its seed to a search).
    let key = VenueKey::new(7, None);
    let jws = key.sign_jws(&key.header(), &payload(NOW, NOW + 180, REQUEST_ID, EVM_ADDRESS));
    let certs = CertSet::parse(&jwk_set(&[&key])).unwrap();
    let wallet_key = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
    let expected = Expected { address: wallet_key, ..expected() };
    let message = verify(&jws, &certs, &expected).unwrap_err().message();
    assert!(
        message.contains("is not the wallet \"0xac…\" (66 bytes, the rest not shown: it may be a key)"),
        "{message}"
    );
    assert!(!message.contains("ac0974bec39a"), "{message}");
}
