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
            Ok(evm::WalletKey::parse(private_key)?.personal_sign(message.as_bytes()))
        }
        Chain::Solana => solana::WalletKey::parse(private_key)?.login_signature(payload_json),
    })
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

/// The caller's wallet address as a message quotes it: only text that may be an address (at
/// most 44 letters and digits: a bsc address is 42, a solana one at most 44). A private key
/// passed as the address by mistake — 64 hex digits, an 88-character keypair, a JSON array —
/// is never echoed (40 characters of a solana keypair would leave its seed to a search).
pub fn shown_address(address: &str) -> String {
    if address.len() <= 44 && address.bytes().all(|b| b.is_ascii_alphanumeric()) {
        format!("\"{address}\"")
    } else {
        format!("(a {}-byte text, not shown: it may be a key)", address.len())
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
