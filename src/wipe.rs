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
