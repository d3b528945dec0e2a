//! Wallet signatures for callers who hold the wallet key in-process: the address a key
//! controls, and the exact `signature` string the login endpoint expects.

pub mod evm;
pub mod solana;

use crate::error::{Error, Result};
use std::fmt;

/// The wallet chains the venue supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chain {
    Bsc,
    Solana,
}

impl Chain {
    pub fn parse(text: &str) -> Result<Chain> {
        match text {
            "bsc" => Ok(Chain::Bsc),
            "solana" => Ok(Chain::Solana),
            // A known name in another case cannot be a secret passed in the wrong place.
            other if other.eq_ignore_ascii_case("bsc") || other.eq_ignore_ascii_case("solana") => {
                Err(Error::invalid_argument(format!(
                    "unknown chain \"{other}\": chain names are lower case (\"{}\")",
                    other.to_ascii_lowercase()
                )))
            }
            other => Err(Error::invalid_argument(format!(
                "unknown chain {}: expected \"bsc\" or \"solana\"",
                quote_if_harmless(other)
            ))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Chain::Bsc => "bsc",
            Chain::Solana => "solana",
        }
    }

    /// Whether `text` has the shape of a wallet address of this chain: `0x` and 40 hex digits
    /// (bsc), base58 of 32 bytes that encode a point of Ed25519 (solana: a wallet that signs
    /// has a public key; at most 44 characters, checked first, as decoding is quadratic). The
    /// point check refuses about half of the 32-byte seeds a caller could pass as the address
    /// by mistake — a seed and a public key look alike — before the seed is sent anywhere.
    pub fn is_address(self, text: &str) -> bool {
        match self {
            Chain::Bsc => {
                text.len() == 42
                    && (text.starts_with("0x") || text.starts_with("0X"))
                    && text[2..].bytes().all(|b| b.is_ascii_hexdigit())
            }
            Chain::Solana => {
                let mut bytes = zeroize::Zeroizing::new([0u8; 32]);
                text.len() <= 44
                    && bs58::decode(text).onto(&mut bytes[..]) == Ok(32)
                    && curve25519_dalek::edwards::CompressedEdwardsY(*bytes).decompress().is_some()
            }
        }
    }

    /// Whether two wallet addresses on this chain name the same account:
    /// EVM hex is case-insensitive (EIP-55 case is only a checksum), base58 is exact.
    pub fn same_address(self, a: &str, b: &str) -> bool {
        match self {
            Chain::Bsc => a.eq_ignore_ascii_case(b),
            Chain::Solana => a == b,
        }
    }
}

impl fmt::Display for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The address a wallet private key controls (EIP-55 for bsc, base58 for solana).
pub fn address(chain: Chain, private_key: &str) -> Result<String> {
    // The key's copies on the stack (parsing, the public key's computation) are overwritten
    // after: values later moved to the heap would carry them (`wipe::wipe_stack`).
    crate::wipe::then_wipe_stack(|| match chain {
        Chain::Bsc => Ok(evm::WalletKey::parse(private_key)?.address()),
        Chain::Solana => Ok(solana::WalletKey::parse(private_key)?.address()),
    })
}

/// The login `signature` for the decoded sign-in payload JSON (it must hold `message`).
pub fn sign_login(chain: Chain, private_key: &str, payload_json: &str) -> Result<String> {
    // As in `address`.
    crate::wipe::then_wipe_stack(|| match chain {
        Chain::Bsc => {
            let message = payload_message(payload_json)?;
            evm::WalletKey::parse(private_key)?.personal_sign(message.as_bytes())
        }
        Chain::Solana => solana::WalletKey::parse(private_key)?.login_signature(payload_json),
    })
}

/// A wallet signature made here failed its check (verified against the wallet's own public
/// key, or its signer recovered) and was withheld: a fault while signing, most likely in the
/// hardware. Withheld, not retried: a second signature of the same message beside a faulty one
/// is what would give the key away.
pub(crate) fn signature_check_failed(chain: &str) -> Error {
    Error::verification(format!(
        "the {chain} wallet signature failed its check against the wallet's own key (a fault while \
         signing?) and was not released; nothing was signed"
    ))
}

/// Whether `signature`, a login `signature` as a wallet made it (see [`sign_login`]), signs
/// `message` by the wallet `address`: which of several challenges a wallet signed. `false`
/// for a signature this library cannot check (another form, a contract wallet's).
pub fn signs(chain: Chain, signature: &str, message: &str, address: &str) -> bool {
    match chain {
        Chain::Bsc => evm::recovered_signer(signature, message.as_bytes())
            .is_some_and(|signer| chain.same_address(&signer, address)),
        Chain::Solana => solana::signs(signature, message.as_bytes(), address),
    }
}

/// A login `signature` of the shape its chain's wallets give (bsc: `0x` and at least 130 hex
/// digits — `r || s || v`, or a contract wallet's longer one; solana: standard base64 of the
/// JSON object `{"input","output"}` that [`sign_login`] and
/// `perps_wallet_wrap_solana_signature` write), checked before it is sent. Above all a
/// private key passed where the signature goes (66 characters of hex, a base58 keypair) is
/// refused, never sent to the venue nor quoted.
pub fn check_login_signature(chain: Chain, signature: &str) -> Result<()> {
    let signature = signature.trim();
    let fits = match chain {
        Chain::Bsc => signature
            .strip_prefix("0x")
            .or_else(|| signature.strip_prefix("0X"))
            .is_some_and(|hex| hex.len() >= 130 && hex.len() % 2 == 0 && hex.bytes().all(|b| b.is_ascii_hexdigit())),
        Chain::Solana => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.decode(signature).is_ok_and(|json| {
                serde_json::from_slice::<serde_json::Value>(&json)
                    .is_ok_and(|wrapper| wrapper.get("input").is_some() && wrapper["output"].is_object())
            })
        }
    };
    if fits {
        return Ok(());
    }
    Err(Error::invalid_argument(format!(
        "the wallet signature ({} bytes, not shown) is not a {chain} login signature ({}): nothing was sent",
        signature.len(),
        match chain {
            Chain::Bsc => "0x and at least 130 hex digits, as personal_sign gives them",
            Chain::Solana =>
                "standard base64 of {\"input\",\"output\"}, as perps_wallet_sign or \
                              perps_wallet_wrap_solana_signature give it",
        }
    )))
}

/// The `message` string of a sign-in payload.
pub fn payload_message(payload_json: &str) -> Result<String> {
    let payload: serde_json::Value = serde_json::from_str(payload_json)
        .map_err(|e| Error::invalid_argument(format!("the sign-in payload is not valid JSON: {e}")))?;
    match payload.get("message") {
        Some(serde_json::Value::String(m)) => Ok(m.clone()),
        Some(_) => Err(Error::invalid_argument("the sign-in payload's \"message\" is not a string")),
        None if !payload.is_object() => Err(Error::invalid_argument("the sign-in payload is not a JSON object")),
        None => Err(Error::invalid_argument("the sign-in payload has no \"message\" field")),
    }
}

/// The caller's wallet address as a message quotes it. A bsc address (`0x` and 40 hex digits)
/// is quoted whole; anything else only by its length and, when it is letters and digits, its
/// first four characters: a private key passed as the address by mistake — 64 hex digits, a
/// base58 keypair, a JSON array, or a solana seed, which looks just like a solana address —
/// is never echoed (40 characters of a keypair, or a whole seed, would give the key away).
pub fn shown_address(address: &str) -> String {
    if Chain::Bsc.is_address(address) {
        return format!("\"{address}\"");
    }
    match address.get(..4).filter(|head| head.bytes().all(|b| b.is_ascii_alphanumeric())) {
        Some(head) if address.len() > 4 => {
            format!("\"{head}…\" ({} bytes, the rest not shown: it may be a key)", address.len())
        }
        _ => format!("(a {}-byte text, not shown: it may be a key)", address.len()),
    }
}

/// Quote a short lower-case word (a misspelt chain name); anything else might be a secret
/// passed in the wrong argument (a swapped `chain` and `private_key`), so only its length
/// is shown.
pub(crate) fn quote_if_harmless(text: &str) -> String {
    if text.len() <= 12 && text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
        format!("{text:?}")
    } else {
        format!("(a {}-byte string, not shown)", text.len())
    }
}

/// Fault injection for the unit tests: a bit of the next wallet signature's s flipped on this
/// thread, as a glitch while signing would.
#[cfg(test)]
pub(crate) mod fault {
    use std::cell::Cell;

    thread_local!(static ARMED: Cell<bool> = const { Cell::new(false) });

    pub(crate) fn arm() {
        ARMED.set(true);
    }

    pub(crate) fn corrupt(s: &mut [u8]) {
        if ARMED.replace(false) {
            s[3] ^= 1 << 4;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A solana address is a public key, a point of Ed25519; a 32-byte seed passed as the
    /// address by mistake is refused whenever it is no point (about half of them).
    #[test]
    fn a_solana_address_must_be_a_point_of_the_curve() {
        use curve25519_dalek::edwards::CompressedEdwardsY;
        let (mut points, mut refused) = (0, 0);
        for i in 0..=255u8 {
            let seed = [i; 32];
            let public = ed25519_dalek::SigningKey::from_bytes(&seed).verifying_key();
            assert!(Chain::Solana.is_address(&bs58::encode(public.as_bytes()).into_string()), "{i}");
            let as_address = bs58::encode(seed).into_string();
            if CompressedEdwardsY(seed).decompress().is_some() {
                points += 1;
                assert!(Chain::Solana.is_address(&as_address));
            } else {
                refused += 1;
                assert!(!Chain::Solana.is_address(&as_address), "{as_address}");
            }
        }
        assert!(points > 50 && refused > 50, "{points} points, {refused} refused");
        // The table's case (tests/bad_input/cases.txt): RFC 8032 test 1's seed, no point.
        assert!(!Chain::Solana.is_address("BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb"));
        // 33 bytes, or fewer than 32: no address.
        assert!(!Chain::Solana.is_address(&bs58::encode([9u8; 33]).into_string()));
        assert!(!Chain::Solana.is_address(&bs58::encode([9u8; 31]).into_string()));
    }

    /// A wallet signature that does not check out is never released (it fails, each chain,
    /// with the message of `signature_check_failed`); the next one, unfaulted, is released.
    #[test]
    fn a_faulty_wallet_signature_is_withheld() {
        let payload = r#"{"message":"m","requestId":"r"}"#;
        let bsc_key = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
        let seed = bs58::encode([7u8; 32]).into_string();
        for (chain, key) in [(Chain::Bsc, bsc_key), (Chain::Solana, seed.as_str())] {
            let good = sign_login(chain, key, payload).unwrap();
            fault::arm();
            let e = sign_login(chain, key, payload).unwrap_err();
            assert_eq!(e.code(), crate::error::Code::VerificationFailed, "{chain}");
            assert!(e.message().contains("not released"), "{chain}: {}", e.message());
            assert!(!e.message().contains(&good[..20]), "{chain}");
            assert_eq!(sign_login(chain, key, payload).unwrap(), good, "{chain}: deterministic again");
        }
    }

    #[test]
    fn a_login_signature_must_have_its_chains_shape() {
        let payload = r#"{"message":"m","requestId":"r"}"#;
        let bsc = sign_login(Chain::Bsc, "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", payload)
            .unwrap();
        assert!(check_login_signature(Chain::Bsc, &bsc).is_ok());
        let seed = bs58::encode([7u8; 32]).into_string();
        let solana = sign_login(Chain::Solana, &seed, payload).unwrap();
        assert!(check_login_signature(Chain::Solana, &solana).is_ok());
        let keypair = bs58::encode([7u8; 64]).into_string();
        for (chain, wrong) in [
            (Chain::Bsc, "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"),
            (Chain::Bsc, &solana),
            (Chain::Bsc, &bsc[..bsc.len() - 1]),
            (Chain::Solana, &keypair),
            (Chain::Solana, &seed),
            (Chain::Solana, "e30="),
            (Chain::Solana, &bsc),
        ] {
            let e = check_login_signature(chain, wrong).unwrap_err();
            assert_eq!(e.code(), crate::error::Code::InvalidArgument);
            assert!(
                e.message().contains("not shown") && !e.message().contains(&wrong[..wrong.len().min(12)]),
                "{}",
                e.message()
            );
        }
    }
}
