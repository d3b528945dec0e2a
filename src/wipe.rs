//! Wiping secrets after use with volatile stores the compiler cannot remove, 8 bytes at a time
//! where the buffer allows. (`zeroize` writes arrays of bytes one byte at a time: on the
//! signing path that was ≈ 270 stores per signature for the nonce's buffers alone.)

use std::sync::atomic::{Ordering, compiler_fence};

/// Overwrite `bytes` with zeros (volatile: not optimised away even if never read again).
pub(crate) fn wipe(bytes: &mut [u8]) {
    // SAFETY: any bytes are a valid u64, and `align_to_mut` keeps every element in bounds.
    let (head, words, tail) = unsafe { bytes.align_to_mut::<u64>() };
    for byte in head.iter_mut().chain(tail.iter_mut()) {
        // SAFETY: a valid, aligned, exclusive reference.
        unsafe { std::ptr::write_volatile(byte, 0) };
    }
    for word in words {
        // SAFETY: as above.
        unsafe { std::ptr::write_volatile(word, 0) };
    }
    compiler_fence(Ordering::SeqCst);
}

/// How much of the stack [`wipe_stack`] overwrites: more than the deepest call made with
/// secrets on the stack that it follows (sorting a redaction table: the sort's scratch and
/// frames, under 4 KiB for the largest table), far less than any thread's stack.
const STACK_WIPE_BYTES: usize = 8 * 1024;

/// Overwrite the stack just below the caller's frame, where the calls it has made with
/// secrets, now returned, left copies. Later values built there and moved to the heap carry
/// whatever bytes they do not set (an enum's unused bytes, padding), and the heap block is
/// freed unwiped: in a release build such blocks held runs of the token
/// (`tests/stream_token_wiped.rs`), left by sorting a redaction table, and of the session's
/// expanded key (`tests/key_residue.rs`), left by its import.
#[inline(never)]
pub(crate) fn wipe_stack() {
    let mut below = [0u8; STACK_WIPE_BYTES];
    wipe(&mut below);
    std::hint::black_box(&below);
}

/// `make()`, then the stack it used overwritten ([`wipe_stack`]): for work whose locals hold
/// secrets (a key's import and expansion, a wallet's signature) and whose result holds them
/// on the heap only, if at all. `make` runs in a frame of its own, below this one, so that
/// all it left is below the caller's frame when the wipe runs.
pub(crate) fn then_wipe_stack<T>(make: impl FnOnce() -> T) -> T {
    #[inline(never)]
    fn below<T>(make: impl FnOnce() -> T) -> T {
        make()
    }
    let made = below(make);
    wipe_stack();
    made
}

/// A secret buffer of `N` bytes, aligned for whole-word wiping, wiped when dropped.
#[repr(C, align(8))]
pub(crate) struct Wiped<const N: usize>(pub(crate) [u8; N]);

impl<const N: usize> Wiped<N> {
    pub(crate) fn new() -> Self {
        Wiped([0; N])
    }
}

impl<const N: usize> Drop for Wiped<N> {
    fn drop(&mut self) {
        wipe(&mut self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_is_wiped_whatever_the_alignment() {
        let mut buffer = [0xa5u8; 67];
        for start in 0..8 {
            for end in start..buffer.len() {
                buffer.fill(0xa5);
                wipe(&mut buffer[start..end]);
                assert!(buffer[start..end].iter().all(|&b| b == 0));
                assert!(buffer[..start].iter().chain(&buffer[end..]).all(|&b| b == 0xa5));
            }
        }
    }
}
