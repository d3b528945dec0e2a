//! The constant-time key decoders (`perps::keys::text`) against the crates and the code the
//! library used before them, on random and edge inputs (proptest): `bs58` for base58, hex as
//! `char::to_digit` reads it, serde_json for the `solana-keygen` array; and the whole import
//! (an Ed25519 key in any form, a bsc key) against the old import written out here, error
//! message for error message. Failures print the minimal input.

use ed25519_dalek::SigningKey;
use perps::keys::parse_ed25519_secret;
use perps::keys::text::{decode_base58, decode_hex, decode_json_array, trim};
use proptest::prelude::*;
use proptest::test_runner::Config;

fn config(cases: u32) -> Config {
    Config { cases, failure_persistence: None, ..Config::default() }
}

const BASE58: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/// Characters next to the base58 and hex ranges, and others a pasted key may carry.
const NEAR_MISSES: &[char] =
    &['0', 'I', 'O', 'l', '/', ':', '@', '[', '`', '{', 'G', 'g', '"', ' ', '\n', '\0', '\u{7f}', 'é', '€', '\u{a0}'];

/// The decoders' verdict on base58: the decoded bytes, or `None`.
fn our_base58(text: &str) -> Option<(usize, Vec<u8>)> {
    let mut out = [0u8; 64];
    let len = decode_base58(text.as_bytes(), &mut out)?;
    Some((len, out[..len.min(64)].to_vec()))
}

fn bs58_base58(text: &str) -> Option<(usize, Vec<u8>)> {
    let bytes = bs58::decode(text).into_vec().ok()?;
    let kept = bytes[..bytes.len().min(64)].to_vec();
    Some((bytes.len(), if bytes.len() <= 64 { kept } else { Vec::new() }))
}

/// base58 as both read it: the same bytes (those that fit the 64-byte buffer), or both refuse.
fn same_base58(text: &str) -> std::result::Result<(), TestCaseError> {
    let ours = our_base58(text).map(|(len, bytes)| (len, if len <= 64 { bytes } else { Vec::new() }));
    prop_assert_eq!(ours, bs58_base58(text), "{:?}", text);
    Ok(())
}

/// Hex as the library read it before: `char::to_digit(16)` on each byte of an even number.
fn to_digit_hex(text: &str) -> Option<Vec<u8>> {
    let raw = text.as_bytes();
    if !raw.len().is_multiple_of(2) {
        return None;
    }
    raw.chunks(2).map(|p| Some(((p[0] as char).to_digit(16)? * 16 + (p[1] as char).to_digit(16)?) as u8)).collect()
}

/// The Ed25519 import as the library did it before (str::trim, `bs58`, `to_digit`, serde_json
/// for the array), its outcome: the keypair's bytes or the error message.
fn old_ed25519_import(text: &str) -> Result<Vec<u8>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("the Ed25519 private key is empty".into());
    }
    let bytes: Vec<u8> = if text.starts_with('[') {
        let not_an_array = "the Ed25519 private key starts with '[' but is not a JSON array of integers 0..=255";
        let numbers: Vec<u64> = serde_json::from_str(text).map_err(|_| not_an_array.to_owned())?;
        numbers
            .iter()
            .map(|&n| u8::try_from(n))
            .collect::<Result<_, _>>()
            .map_err(|_| "the Ed25519 private key JSON array must hold integers 0..=255".to_owned())?
    } else if let Some(digits) = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .or((text.len() == 64 || text.len() == 128).then_some(text))
    {
        to_digit_hex(digits).ok_or("the Ed25519 private key looks like hex but is not valid hex")?
    } else if text.len() > 88 {
        return Err(format!(
            "the Ed25519 private key is {} characters long; base58 of a 64-byte keypair is at most 88",
            text.len()
        ));
    } else {
        bs58::decode(text)
            .into_vec()
            .map_err(|_| "the Ed25519 private key is not valid base58 (or hex, or a JSON array of bytes)")?
    };
    match bytes.len() {
        32 => Ok(SigningKey::from_bytes(&bytes.try_into().unwrap()).to_keypair_bytes().to_vec()),
        64 => SigningKey::from_keypair_bytes(&bytes.try_into().unwrap())
            .map(|key| key.to_keypair_bytes().to_vec())
            .map_err(|_| "the 64-byte Ed25519 keypair's public half does not match its secret half".into()),
        n => Err(format!("the Ed25519 private key decodes to {n} bytes; expected a 32-byte seed or a 64-byte keypair")),
    }
}

fn new_ed25519_import(text: &str) -> Result<Vec<u8>, String> {
    parse_ed25519_secret(text).map(|key| key.to_keypair_bytes().to_vec()).map_err(|e| e.message().to_owned())
}

/// The bsc import as the library did it before (k256's `from_slice`), its address or message.
fn old_bsc_import(text: &str) -> Result<String, String> {
    let text = text.trim();
    let digits = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")).unwrap_or(text);
    if digits.len() != 64 {
        return Err(format!(
            "a bsc private key is 64 hex digits (optionally 0x-prefixed); got {} characters",
            digits.len()
        ));
    }
    let bytes = to_digit_hex(digits).ok_or("the bsc private key is not valid hex")?;
    let key = k256::ecdsa::SigningKey::from_slice(&bytes)
        .map_err(|_| "the bsc private key is not a valid secp256k1 scalar (zero or ≥ n)".to_owned())?;
    let point = key.verifying_key().to_sec1_point(false);
    Ok(perps::wallet::evm::address_from_uncompressed(point.as_bytes()))
}

fn new_bsc_import(text: &str) -> Result<String, String> {
    perps::wallet::evm::WalletKey::parse(text).map(|key| key.address()).map_err(|e| e.message().to_owned())
}

/// A valid key's text in each of its forms, from a seed.
fn key_forms(seed: &[u8; 32]) -> Vec<String> {
    let pair = SigningKey::from_bytes(seed).to_keypair_bytes();
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    vec![
        bs58::encode(seed).into_string(),
        bs58::encode(pair).into_string(),
        hex(seed),
        format!("0X{}", hex(&pair).to_uppercase()),
        format!("{:?}", pair.to_vec()),
        format!("{:?}", seed.to_vec()).replace(", ", ","),
    ]
}

/// `text` with the character at `at` replaced by `bad`.
fn with_char(text: &str, at: prop::sample::Index, bad: char) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let at = at.index(chars.len());
    chars[at] = bad;
    chars.into_iter().collect()
}

/// A seed, often with leading zero bytes (base58's leading '1's).
fn seed() -> impl Strategy<Value = [u8; 32]> {
    (any::<[u8; 32]>(), 0usize..4).prop_map(|(mut seed, zeros)| {
        seed[..zeros].fill(0);
        seed
    })
}

proptest! {
    #![proptest_config(config(2048))]

    /// Any bytes (up to 66, often with leading zeros) in base58: read as `bs58` reads them.
    #[test]
    fn base58_of_any_bytes_decodes_as_bs58_decodes_it(bytes in prop::collection::vec(any::<u8>(), 0..=66), zeros in 0usize..6) {
        let mut bytes = bytes;
        bytes.splice(0..0, std::iter::repeat_n(0, zeros));
        let text = bs58::encode(&bytes).into_string();
        prop_assume!(text.len() <= 88);
        same_base58(&text)?;
        prop_assert_eq!(our_base58(&text).map(|(len, _)| len), Some(bytes.len()));
    }

    /// Texts of base58 digits and near misses, every length up to the limit.
    #[test]
    fn any_short_text_decodes_or_fails_as_in_bs58(
        picks in prop::collection::vec((any::<prop::sample::Index>(), 0u8..20), 0..=88),
    ) {
        let text: String = picks
            .iter()
            .map(|(i, odds)| if *odds == 0 { *i.get(NEAR_MISSES) } else { *i.get(BASE58) as char })
            .collect();
        prop_assume!(text.len() <= 88);
        same_base58(&text)?;
    }

    /// A valid key with a bad character at any position, or a stray one after it, is refused.
    #[test]
    fn one_bad_character_anywhere_is_refused(seed in seed(), at in any::<prop::sample::Index>(), bad in prop::sample::select(NEAR_MISSES)) {
        let pair = SigningKey::from_bytes(&seed).to_keypair_bytes();
        for key in [bs58::encode(seed).into_string(), bs58::encode(pair).into_string()] {
            for text in [with_char(&key, at, bad), format!("{key}{bad}")] {
                if text.len() <= 88 {
                    same_base58(&text)?;
                }
                prop_assert_eq!(new_ed25519_import(&text), old_ed25519_import(&text), "{:?}", text);
            }
        }
    }

    /// Hex of any length over hex digits and near misses: read as `to_digit` read it.
    #[test]
    fn hex_decodes_as_to_digit_read_it(
        picks in prop::collection::vec((any::<prop::sample::Index>(), 0u8..16), 0..=140),
    ) {
        const HEX: &[u8] = b"0123456789abcdefABCDEF";
        let text: String = picks
            .iter()
            .map(|(i, odds)| if *odds == 0 { *i.get(NEAR_MISSES) } else { *i.get(HEX) as char })
            .collect();
        prop_assert_eq!(decode_hex(&text).map(|bytes| bytes.to_vec()), to_digit_hex(&text), "{:?}", text);
        // And as an Ed25519 key and a bsc key, with or without 0x.
        for text in [text.clone(), format!("0x{text}")] {
            prop_assert_eq!(new_ed25519_import(&text), old_ed25519_import(&text), "{:?}", text);
            prop_assert_eq!(new_bsc_import(&text), old_bsc_import(&text), "{:?}", text);
        }
    }

    /// A bsc key: any 32 bytes (zero and ≥ n included, near n often), in any case, with a
    /// prefix and whitespace or not, and with one character changed.
    #[test]
    fn a_bsc_key_is_read_as_before(
        bytes in any::<[u8; 32]>(), near_n in 0u8..4, upper: bool, prefix in 0usize..3, pad: bool,
        change in prop::option::of((any::<prop::sample::Index>(), prop::sample::select(NEAR_MISSES))),
    ) {
        let mut bytes = bytes;
        // The group order n.
        let n = to_digit_hex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141").unwrap();
        match near_n {
            0 => bytes[..28].copy_from_slice(&n[..28]),
            1 => bytes = [0; 32],
            _ => {}
        }
        let digits: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let digits = if upper { digits.to_uppercase() } else { digits };
        let mut text = format!("{}{digits}", ["", "0x", "0X"][prefix]);
        if let Some((at, bad)) = change {
            text = with_char(&text, at, bad);
        }
        let text = if pad { format!(" \t{text}\r\n") } else { text };
        prop_assert_eq!(new_bsc_import(&text), old_bsc_import(&text), "{:?}", text);
    }
}

proptest! {
    #![proptest_config(config(512))]

    /// Every form of a key (seeds with leading zeros often), with whitespace around or a
    /// character changed, imports as before: the same key, or the same message.
    #[test]
    fn every_form_of_a_key_imports_as_before(
        seed in seed(), space in prop::sample::select(vec!["", " ", "\n", "\t ", "\u{a0}", "\u{3000}", "\x0b"]),
        change in prop::option::of((any::<prop::sample::Index>(), prop::sample::select(NEAR_MISSES))),
    ) {
        for form in key_forms(&seed) {
            let mut text = format!("{space}{form}{space}");
            if let Some((at, bad)) = change {
                text = with_char(&text, at, bad);
            }
            prop_assert_eq!(new_ed25519_import(&text), old_ed25519_import(&text), "{:?}", text);
            prop_assert_eq!(trim(&text), text.trim().as_bytes(), "{:?}", text);
        }
    }

    /// The JSON array: any count of numbers (0 to 70), any of them large or with a leading
    /// zero, any JSON whitespace between, read as serde_json read it.
    #[test]
    fn a_json_array_is_read_as_serde_json_read_it(
        numbers in prop::collection::vec(prop_oneof![
            8 => (0u64..=255).prop_map(|n| n.to_string()),
            1 => any::<u64>().prop_map(|n| n.to_string()),
            1 => prop::sample::select(vec!["0", "00", "01", "256", "-1", "1.0", "1e2", "18446744073709551616", "99999999999999999999999"]).prop_map(str::to_owned),
        ], 0..=70),
        gaps in prop::collection::vec(prop::sample::select(vec!["", " ", "\n", "\t\r ", "", " ", "\x0c", "\x0b"]), 71),
        tail in prop::sample::select(vec!["]", "]", "]", ",]", "", "] x", "]]"]),
    ) {
        let mut text = String::from("[");
        for (i, n) in numbers.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(gaps[i]);
            text.push_str(n);
            text.push_str(gaps[70 - i]);
        }
        text.push_str(tail);
        prop_assert_eq!(new_ed25519_import(&text), old_ed25519_import(&text), "{:?}", text);
        // The decoder's own count, where serde_json reads the text as bytes.
        if let Ok(bytes) = serde_json::from_str::<Vec<u8>>(&text) {
            let mut out = [0u8; 64];
            let count = decode_json_array(text.as_bytes(), &mut out);
            prop_assert_eq!(count.ok(), (bytes.len() <= 64).then_some(bytes.len()));
            if bytes.len() <= 64 {
                prop_assert_eq!(&out[..bytes.len()], &bytes[..]);
            }
        }
    }
}

#[test]
fn edge_texts_import_as_before() {
    let seed = [0u8; 32];
    let pair = SigningKey::from_bytes(&seed).to_keypair_bytes();
    let mut texts = vec![
        "1".repeat(32),
        "1".repeat(44),
        "1".repeat(64),
        "1".repeat(88),
        "1".repeat(89),
        "z".repeat(88),
        "z".repeat(44),
        bs58::encode(seed).into_string(),
        bs58::encode(pair).into_string(),
        format!("{}\"", bs58::encode(pair).into_string()),
        format!("\"{}\"", bs58::encode(pair).into_string()),
        bs58::encode([0xffu8; 64]).into_string(),
        bs58::encode([0xffu8; 65]).into_string(),
        "0x".into(),
        "0x0".into(),
        "0x0x".into(),
        "[".into(),
        "[]".into(),
        "x".into(),
    ];
    texts.extend((0..=130).map(|n| "f".repeat(n)));
    texts.extend((0..=130).map(|n| format!("0x{}", "A".repeat(n))));
    for text in &texts {
        assert_eq!(new_ed25519_import(text), old_ed25519_import(text), "{text:?}");
        if text.len() <= 88 {
            same_base58(text).unwrap();
        }
    }
}

proptest! {
    #![proptest_config(config(4096))]
    /// 64 bytes whose public half is random, another key's, zero, or the right one
    /// with one bit flipped (sign bit included), in every form.
    #[test]
    fn keypairs_with_wrong_public_halves_import_as_before(seed in seed(), other in any::<[u8; 32]>(), how in 0u8..5, bit in 0usize..256) {
        let mut pair = SigningKey::from_bytes(&seed).to_keypair_bytes();
        match how {
            0 => pair[32..].copy_from_slice(&other),
            1 => pair[32..].copy_from_slice(SigningKey::from_bytes(&other).verifying_key().as_bytes()),
            2 => pair[32..].fill(0),
            3 => pair[32 + bit / 8] ^= 1 << (bit % 8),
            _ => pair[63] ^= 0x80,
        }
        let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
        for text in [bs58::encode(pair).into_string(), hex(&pair), format!("0x{}", hex(&pair).to_uppercase()), format!("{:?}", pair.to_vec()), format!(" [ {} ] ", pair.iter().map(|b| format!("{b:03}")).collect::<Vec<_>>().join(" , "))] {
            prop_assert_eq!(new_ed25519_import(&text), old_ed25519_import(&text), "{:?}", text);
        }
    }
}
