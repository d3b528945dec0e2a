//! The two wallet chains the venue signs in with, and what a valid address looks like on each.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chain {
    Bsc,
    Solana,
}

impl Chain {
    pub(crate) fn parse(s: &str) -> Option<Chain> {
        match s {
            "bsc" => Some(Chain::Bsc),
            "solana" => Some(Chain::Solana),
            _ => None,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Chain::Bsc => "bsc",
            Chain::Solana => "solana",
        }
    }

    /// `chainId` in the sign-in payload. 56 is BNB Smart Chain (venue facts). Solana has no
    /// EIP-155 id; 501 is the number wallets and aggregators commonly use for it. The payload
    /// has no `chain` field, so login recovers the chain from this number.
    pub(crate) fn chain_id(self) -> u64 {
        match self {
            Chain::Bsc => 56,
            Chain::Solana => 501,
        }
    }

    pub(crate) fn from_chain_id(id: u64) -> Option<Chain> {
        [Chain::Bsc, Chain::Solana].into_iter().find(|c| c.chain_id() == id)
    }

    /// The account noun of the EIP-4361 first line.
    pub(crate) fn account_noun(self) -> &'static str {
        match self {
            Chain::Bsc => "Ethereum",
            Chain::Solana => "Solana",
        }
    }

    /// bsc: "0x" + 40 hex digits (any case; EIP-55 case is not enforced, as EVM venues
    /// compare addresses case-insensitively). solana: canonical base58 of 32 bytes.
    pub(crate) fn valid_address(self, address: &str) -> bool {
        match self {
            Chain::Bsc => {
                address.strip_prefix("0x").is_some_and(|h| h.len() == 40 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            }
            Chain::Solana => base58_32(address).is_some(),
        }
    }
}

/// Decodes canonical base58 of exactly 32 bytes. Canonical (re-encoding gives the same text)
/// so one key has one spelling, which matters when the text is compared as an identity.
pub(crate) fn base58_32(text: &str) -> Option<[u8; 32]> {
    let raw = bs58::decode(text).into_vec().ok()?;
    let bytes: [u8; 32] = raw.try_into().ok()?;
    (bs58::encode(bytes).into_string() == text).then_some(bytes)
}
