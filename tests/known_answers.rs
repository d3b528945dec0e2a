//! Known-answer vectors whose expected values come from independent implementations.
//! Sources are named on each test. (Python's PyNaCl and eth-account re-check our
//! signatures in CI too: tests/python/.)

mod common;

use common::{hex, unhex};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier};
use perps::body_sign::{self, signed_message};
use perps::keys::RequestKey;
use perps::wallet::{self, Chain, evm};

/// RFC 8032 §7.1 tests 1–3 (seed, public key, message, signature).
const RFC8032: [(&str, &str, &str, &str); 3] = [
    (
        "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        "",
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    ),
    (
        "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
        "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        "72",
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
    ),
    (
        "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
        "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        "af82",
        "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
    ),
];

/// The deterministic signer (what `perps_sign_body_at` uses): RFC 8032 exactly.
#[test]
fn rfc8032_vectors_through_the_precomputed_multipart_signer() {
    for (seed, public, message, signature) in RFC8032 {
        let key = RequestKey::from_text(seed).unwrap();
        assert_eq!(hex(key.verifying_key().as_bytes()), public);
        assert_eq!(key.request_id(), bs58::encode(unhex(public)).into_string());
        let message = unhex(message);
        // Whatever way the message is cut into parts, the signature is the RFC's.
        for cut in 0..=message.len() {
            let (a, b) = message.split_at(cut);
            assert_eq!(hex(&key.sign_parts_deterministic(&[a, b]).unwrap().to_bytes()), signature);
        }
    }
}

/// Hedged signatures (every fresh one): with the randomness Z given, byte for byte the
/// construction of draft-irtf-cfrg-det-sigs-with-noise-05 §2 as computed independently
/// (`common::hedged_signature`, ed25519-dalek's pieces), for the RFC's keys, messages cut in
/// every way, and several Z; and each verifies strictly.
#[test]
fn hedged_signatures_follow_the_cfrg_draft() {
    for (seed, _, message, deterministic) in RFC8032 {
        let seed: [u8; 32] = unhex(seed).try_into().unwrap();
        let key = RequestKey::from_text(&hex(&seed)).unwrap();
        let message = unhex(message);
        for z in [[0u8; 32], [0xff; 32], std::array::from_fn(|i| i as u8 * 7)] {
            let expected = common::hedged_signature(&seed, &z, &message);
            for cut in 0..=message.len() {
                let (a, b) = message.split_at(cut);
                let signature = key.sign_parts_with_randomness(&[a, b], &z).unwrap();
                assert_eq!(signature.to_bytes(), expected);
                key.verifying_key().verify_strict(&message, &signature).unwrap();
            }
            // Not RFC 8032's nonce: a different R from the deterministic signature.
            assert_ne!(hex(&expected[..32]), deterministic[..64]);
        }
    }
}

/// Two fresh signatures of the same message (same id, same time) have different nonces, so
/// different R, and both verify: no fault in one can be paired with the other.
#[test]
fn two_fresh_signatures_of_one_message_differ_and_both_verify() {
    let key = RequestKey::from_text(RFC8032[0].0).unwrap();
    let message = signed_message("123e4567-e89b-42d3-a456-426614174000", 1_700_000_000_123, b"{}");
    let mut seen = std::collections::HashSet::new();
    for _ in 0..20 {
        let signature = key.sign_parts(&[&message]).unwrap();
        key.verifying_key().verify_strict(&message, &signature).unwrap();
        assert!(seen.insert(signature.r_bytes().to_owned()), "an R came twice");
    }
}

#[test]
fn body_signature_equals_the_standard_api_over_the_documented_message() {
    let seed = unhex(RFC8032[0].0);
    let key = RequestKey::from_text(RFC8032[0].0).unwrap();
    let standard = SigningKey::from_bytes(&seed.try_into().unwrap());
    let body = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;
    let id = "123e4567-e89b-42d3-a456-426614174000";
    let sig = body_sign::sign(&key, body.as_bytes(), id, 1_700_000_000_123).unwrap();
    let message = format!("v1,{id},1700000000123,{body}");
    assert_eq!(signed_message(id, 1_700_000_000_123, body.as_bytes()), message.as_bytes());
    let expected = standard.sign(message.as_bytes());
    use base64::Engine as _;
    assert_eq!(sig.signature(), base64::engine::general_purpose::STANDARD.encode(expected.to_bytes()));
    assert_eq!(sig.request_id(), id);
    assert_eq!(sig.timestamp(), "1700000000123");
    assert_eq!(sig.version(), "v1");
    let headers: serde_json::Value = serde_json::from_str(&sig.to_headers_json()).unwrap();
    assert_eq!(headers["x-request-sign-version"], "v1");
    assert_eq!(headers["x-request-id"], id);
    assert_eq!(headers["x-request-timestamp"], "1700000000123");
    assert_eq!(headers["x-request-signature"], sig.signature());
}

#[test]
fn fresh_body_signatures_verify_and_use_uuid_v4() {
    let key = RequestKey::generate().unwrap();
    let body = "{\"a\":\"é😀\"}";
    let sig = body_sign::sign_now(&key, body.as_bytes(), body_sign::now_ms()).unwrap();
    let id = uuid::Uuid::parse_str(sig.request_id()).unwrap();
    assert_eq!(id.get_version_num(), 4);
    use base64::Engine as _;
    let raw: [u8; 64] = base64::engine::general_purpose::STANDARD.decode(sig.signature()).unwrap().try_into().unwrap();
    let message = signed_message(sig.request_id(), sig.timestamp().parse().unwrap(), body.as_bytes());
    key.verifying_key().verify_strict(&message, &Signature::from_bytes(&raw)).unwrap();
    // One byte of difference in the body breaks it.
    let other = signed_message(sig.request_id(), sig.timestamp().parse().unwrap(), b"{\"a\":\"e\"}");
    assert!(key.verifying_key().verify(&other, &Signature::from_bytes(&raw)).is_err());
}

/// venue-facts.md, and the Hardhat/Anvil default accounts (published key → address pairs).
#[test]
fn evm_addresses_of_known_keys() {
    let cases = [
        (
            "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
            "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        ),
        (
            "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
            "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        ),
        (
            "0xb25c7db31feed9122727bf0939dc769a96564b2de4c4726d035b36ecf1e5b364",
            "0x5ce9454909639D2D17A3F753ce7d93fa0b9aB12E",
        ),
    ];
    for (key, address) in cases {
        assert_eq!(wallet::address(Chain::Bsc, key).unwrap(), address);
    }
}

/// eth-account's documented example: sign_message(encode_defunct(text="I♥SF"), key) gives
/// this exact signature (RFC 6979 makes it deterministic).
#[test]
fn eip191_signature_matches_eth_account_documentation() {
    let key = evm::WalletKey::parse("0xb25c7db31feed9122727bf0939dc769a96564b2de4c4726d035b36ecf1e5b364").unwrap();
    assert_eq!(
        key.personal_sign("I♥SF".as_bytes()).unwrap(),
        "0xe6ca9bba58c88611fad66a6ce8f996908195593807c4b38bd528d2cff09d4eb33e5bfbbf4d3e39b1a2fd816a7680c19ebebaf3a141b239934ad43cb33fcec8ce1c"
    );
    assert_eq!(
        hex(&evm::eip191_hash("I♥SF".as_bytes())),
        "1476abb745d423bf09273f1afd887d951181d25adc66c4834a70491911b7f750"
    );
}

#[test]
fn eip191_signatures_are_low_s_and_recover_to_the_address() {
    use k256::ecdsa::{RecoveryId, Signature as EcSig, VerifyingKey};
    let key_hex = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
    let key = evm::WalletKey::parse(key_hex).unwrap();
    let half_n = unhex("7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0");
    for i in 0..64 {
        let message = format!("sign-in message number {i}\nwith a second line");
        let sig = key.personal_sign(message.as_bytes()).unwrap();
        assert_eq!(sig.len(), 132);
        let raw = unhex(&sig[2..]);
        assert!(raw[64] == 27 || raw[64] == 28);
        assert!(raw[32..64] <= half_n[..], "high s in {sig}");
        let ec = EcSig::from_slice(&raw[..64]).unwrap();
        let recovered = VerifyingKey::recover_from_prehash(
            &evm::eip191_hash(message.as_bytes()),
            &ec,
            RecoveryId::from_byte(raw[64] - 27).unwrap(),
        )
        .unwrap();
        let address = evm::address_from_uncompressed(recovered.to_sec1_point(false).as_bytes());
        assert_eq!(address, "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
    }
}

#[test]
fn solana_login_signature_has_the_documented_shape_and_verifies() {
    let seed = unhex(RFC8032[1].0);
    let standard = SigningKey::from_bytes(&seed.clone().try_into().unwrap());
    let keypair_b58 = bs58::encode(standard.to_keypair_bytes()).into_string();
    let address = bs58::encode(standard.verifying_key().as_bytes()).into_string();
    let payload = format!(
        r#"{{"domain":"standx.com","address":"{address}","message":"standx.com wants you to sign in with your Solana account:\n{address}","nonce":"x","exp":2,"iat":1}}"#
    );
    let sig_b64 = wallet::sign_login(Chain::Solana, &keypair_b58, &payload).unwrap();
    use base64::Engine as _;
    let wrapper: serde_json::Value =
        serde_json::from_slice(&base64::engine::general_purpose::STANDARD.decode(&sig_b64).unwrap()).unwrap();
    assert_eq!(wrapper["input"], serde_json::from_str::<serde_json::Value>(&payload).unwrap());
    let bytes =
        |v: &serde_json::Value| v.as_array().unwrap().iter().map(|n| n.as_u64().unwrap() as u8).collect::<Vec<u8>>();
    let message = serde_json::from_str::<serde_json::Value>(&payload).unwrap()["message"].as_str().unwrap().to_owned();
    assert_eq!(bytes(&wrapper["output"]["signedMessage"]), message.as_bytes());
    assert_eq!(bytes(&wrapper["output"]["account"]["publicKey"]), standard.verifying_key().as_bytes());
    let signature = bytes(&wrapper["output"]["signature"]);
    assert_eq!(signature, standard.sign(message.as_bytes()).to_bytes());
    // The hardware-wallet path wraps the same signature into the same string.
    assert_eq!(wallet::solana::wrap_external_signature(&payload, &address, &signature).unwrap(), sig_b64);
    let mut wrong = signature.clone();
    wrong[0] ^= 1;
    assert_eq!(
        wallet::solana::wrap_external_signature(&payload, &address, &wrong).unwrap_err().code(),
        perps::Code::VerificationFailed
    );
}
