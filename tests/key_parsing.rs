//! Key-parsing table: every accepted text form of each key type, and every refusal, with
//! messages that never quote the secret.

mod common;

use common::unhex;
use ed25519_dalek::SigningKey;
use perps::Code;
use perps::keys::parse_ed25519_secret;
use perps::session::Session;
use perps::wallet::{self, Chain};

const SEED_HEX: &str = "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb";
const PUBLIC_HEX: &str = "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c";

fn forms() -> Vec<(String, &'static str)> {
    let seed = unhex(SEED_HEX);
    let keypair = SigningKey::from_bytes(&seed.clone().try_into().unwrap()).to_keypair_bytes();
    vec![
        (bs58::encode(&seed).into_string(), "base58 seed"),
        (bs58::encode(keypair).into_string(), "base58 keypair"),
        (SEED_HEX.to_owned(), "hex seed"),
        (format!("0x{SEED_HEX}"), "0x hex seed"),
        (SEED_HEX.to_uppercase(), "upper-case hex seed"),
        (hex_of(&keypair), "hex keypair"),
        (serde_json::to_string(&keypair.to_vec()).unwrap(), "solana-keygen JSON array"),
        (format!("  {}\n", bs58::encode(&seed).into_string()), "surrounding whitespace"),
    ]
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn every_ed25519_form_gives_the_same_key() {
    let public_b58 = bs58::encode(unhex(PUBLIC_HEX)).into_string();
    for (text, form) in forms() {
        let key = parse_ed25519_secret(&text).unwrap_or_else(|e| panic!("{form}: {e}"));
        assert_eq!(key.verifying_key().as_bytes().to_vec(), unhex(PUBLIC_HEX), "{form}");
        assert_eq!(wallet::address(Chain::Solana, &text).unwrap(), public_b58, "{form}");
        let session = Session::from_api_key("api-token-1", &text).unwrap();
        assert_eq!(session.request_id(), public_b58, "{form}");
    }
}

#[test]
fn bad_ed25519_keys_are_refused_without_quoting_them() {
    let seed = unhex(SEED_HEX);
    let mut mismatched = SigningKey::from_bytes(&seed.clone().try_into().unwrap()).to_keypair_bytes();
    mismatched[63] ^= 1;
    let cases: Vec<(String, &str)> = vec![
        (String::new(), "is empty"),
        ("   ".into(), "is empty"),
        (bs58::encode(&seed[..31]).into_string(), "decodes to 31 bytes"),
        (bs58::encode([seed.clone(), vec![1]].concat()).into_string(), "decodes to 33 bytes"),
        (bs58::encode(mismatched).into_string(), "public half does not match"),
        (hex_of(&mismatched), "public half does not match"),
        (format!("0x{}", &SEED_HEX[..63]), "not valid hex"),
        (format!("{}zz", &SEED_HEX[..62]), "not valid hex"),
        ("0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OI".into(), "not valid base58"),
        ("[1,2,3]".into(), "decodes to 3 bytes"),
        ("[256,1]".into(), "integers 0..=255"),
        ("[-1]".into(), "integers 0..=255"),
        ("[\"a\"]".into(), "integers 0..=255"),
        ("[1,2".into(), "not a JSON array"),
    ];
    for (text, fragment) in cases {
        let e = parse_ed25519_secret(&text).expect_err(&text);
        assert_eq!(e.code(), Code::InvalidKey, "{text}");
        assert!(e.message().contains(fragment), "{text}: {:?} lacks {fragment:?}", e.message());
        if text.trim().len() > 8 {
            assert!(!e.message().contains(text.trim()), "message quotes the key: {}", e.message());
        }
    }
}

#[test]
fn evm_key_forms_and_refusals() {
    let key = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
    for text in [key.to_owned(), format!("0x{key}"), format!("0X{key}"), key.to_uppercase(), format!(" {key}\n")] {
        assert_eq!(wallet::address(Chain::Bsc, &text).unwrap(), "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "{text}");
    }
    let cases: Vec<(String, &str)> = vec![
        (String::new(), "64 hex digits"),
        (key[..62].to_owned(), "got 62 characters"),
        (format!("{key}00"), "got 66 characters"),
        (format!("{}xy", &key[..62]), "not valid hex"),
        ("0".repeat(64), "not a valid secp256k1 scalar"),
        ("ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff".into(), "not a valid secp256k1 scalar"),
        (bs58::encode(unhex(key)).into_string(), "64 hex digits"),
    ];
    for (text, fragment) in cases {
        let e = wallet::address(Chain::Bsc, &text).expect_err(&text);
        assert_eq!(e.code(), Code::InvalidKey, "{text}");
        assert!(e.message().contains(fragment), "{text}: {:?} lacks {fragment:?}", e.message());
        if text.len() > 8 {
            assert!(!e.message().contains(&text), "message quotes the key");
        }
    }
}

#[test]
fn unknown_chains_and_bad_api_tokens_are_refused() {
    for chain in ["", "BSC", "eth", "solana ", "bsc\0"] {
        assert_eq!(Chain::parse(chain).unwrap_err().code(), Code::InvalidArgument, "{chain:?}");
    }
    for token in ["", "has space", "new\nline", "tab\t", "é"] {
        let e = Session::from_api_key(token, SEED_HEX).unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{token:?}");
    }
}

#[test]
fn debug_output_never_shows_secrets() {
    let session = Session::from_api_key("secret-api-token-XYZ", SEED_HEX).unwrap();
    let debug = format!("{session:?} {:?}", session.login());
    assert!(!debug.contains("secret-api-token-XYZ"), "{debug}");
    assert!(!debug.to_lowercase().contains(&SEED_HEX[..16]), "{debug}");
    let evm = perps::wallet::evm::WalletKey::parse("ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
        .unwrap();
    assert!(!format!("{evm:?}").contains("ac0974bec39a17e3"));
}
