//! Wallet helpers for callers that hold the wallet key in-process, and the wrapper for a
//! Solana signature made elsewhere (a hardware wallet).

use crate::ffi::error::perps_error;
use crate::ffi::strings::{arg_bytes, arg_str, to_c_string};
use crate::wallet::{self, Chain};
use std::ffi::c_char;

/// The wallet address that `private_key` controls on `chain` ("bsc": 64 hex digits,
/// optionally 0x-prefixed → EIP-55 address; "solana": base58 64-byte keypair, base58 32-byte
/// seed, hex, or the solana-keygen JSON array → base58 address). Free with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_wallet_address(
    chain: *const c_char,
    private_key: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    ffi_boundary!(err, {
        let chain = Chain::parse(arg_str(chain, "chain")?)?;
        to_c_string(wallet::address(chain, arg_str(private_key, "private_key")?)?)
    })
}

/// The login `signature` for a sign-in payload (the JSON `perps_prepare_signin` returns):
/// bsc → EIP-191 personal_sign of its `message`, "0x" + 130 hex (v = 27/28); solana →
/// standard base64 of `{"input":<payload unchanged>,"output":{"signedMessage":[…],
/// "signature":[…],"account":{"publicKey":[…]}}}`. Free with `perps_string_free`. Each
/// signature is checked against the wallet's own key before it is returned (solana: verified;
/// bsc: its signer recovered); one that fails (a fault while signing) is withheld:
/// `PERPS_VERIFICATION_FAILED`, NULL.
#[unsafe(no_mangle)]
pub extern "C" fn perps_wallet_sign(
    chain: *const c_char,
    private_key: *const c_char,
    payload_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    ffi_boundary!(err, {
        let chain = Chain::parse(arg_str(chain, "chain")?)?;
        let key = arg_str(private_key, "private_key")?;
        to_c_string(wallet::sign_login(chain, key, arg_str(payload_json, "payload_json")?)?)
    })
}

/// Wrap a raw 64-byte Ed25519 signature of the payload's `message`, made elsewhere (e.g. a
/// hardware wallet) by the Solana wallet `address`, into the login `signature` format. The
/// signature is verified first (`PERPS_VERIFICATION_FAILED` if it does not match).
/// Free the result with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_wallet_wrap_solana_signature(
    payload_json: *const c_char,
    address: *const c_char,
    signature: *const u8,
    signature_len: usize,
    err: *mut *mut perps_error,
) -> *mut c_char {
    ffi_boundary!(err, {
        let payload = arg_str(payload_json, "payload_json")?;
        let address = arg_str(address, "address")?;
        let signature = arg_bytes(signature, signature_len, "signature")?;
        to_c_string(wallet::solana::wrap_external_signature(payload, address, signature)?)
    })
}
