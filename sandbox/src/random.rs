//! Randomness from the OS, for key generation, nonces and key ids.

/// Fills `N` bytes from the OS RNG. The sandbox cannot work without randomness (every
/// challenge needs a fresh nonce), so a failing RNG is a panic, caught per request.
pub(crate) fn bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    getrandom::fill(&mut out).expect("the OS random number generator failed");
    out
}

/// `N` random bytes as lower-case hex (alphanumeric, so it is a valid EIP-4361 nonce).
pub(crate) fn hex<const N: usize>() -> String {
    bytes::<N>().iter().map(|b| format!("{b:02x}")).collect()
}
