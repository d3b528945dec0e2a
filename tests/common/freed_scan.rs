//! A global allocator that shows a test every heap block as it is freed, with the bytes it
//! still holds: for tests that no secret is left in memory given back (`stream_token_wiped`,
//! `key_residue`, `login_token_wiped`). A block moved by `realloc` is freed with its bytes, so
//! it is shown too. Beside it, what each of those tests needs around it: a switch for the scan,
//! the test venue's threads left out of it, and the count of blocks found.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub struct FreedScan {
    /// Whether to look at blocks freed now, on this thread (cheap: called on every free).
    pub scanning: fn() -> bool,
    /// Look at one freed block (under 1 MiB), before it goes back to the system.
    pub look: fn(&[u8]),
}

unsafe impl GlobalAlloc for FreedScan {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() < 1 << 20 && (self.scanning)() {
            // SAFETY: the block is still ours until System.dealloc below.
            (self.look)(unsafe { std::slice::from_raw_parts(ptr, layout.size()) });
        }
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = unsafe { System.alloc(Layout::from_size_align_unchecked(new_size, layout.align())) };
        if !new.is_null() {
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

/// Whether blocks are looked at now (between `start` and `stop`).
static SCANNING: AtomicBool = AtomicBool::new(false);
/// Freed blocks found holding a secret since `start`.
static FOUND: AtomicUsize = AtomicUsize::new(0);
/// The sizes of the first blocks found, for the failure's message.
static FOUND_SIZES: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

thread_local! {
    /// The test venue's threads: their blocks (what the venue reads and writes, secrets
    /// included) are not the library's.
    static VENUE: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as one of the test venue's: its blocks are not scanned.
#[allow(dead_code)]
pub fn venue_thread() {
    VENUE.with(|v| v.set(true));
}

/// `FreedScan::scanning` for these tests: between `start` and `stop`, off the venue's threads.
pub fn scanning() -> bool {
    SCANNING.load(Ordering::Relaxed) && !VENUE.try_with(Cell::get).unwrap_or(true)
}

/// A freed block of `len` bytes held a secret (called from a test's `look`).
pub fn found(len: usize) {
    let n = FOUND.fetch_add(1, Ordering::Relaxed);
    if let Some(size) = FOUND_SIZES.get(n) {
        size.store(len, Ordering::Relaxed);
    }
}

/// Scan the blocks freed from now on, none found yet.
pub fn start() {
    FOUND.store(0, Ordering::SeqCst);
    FOUND_SIZES.iter().for_each(|size| size.store(0, Ordering::SeqCst));
    SCANNING.store(true, Ordering::SeqCst);
}

/// Stop scanning: how many blocks held a secret, and the sizes of the first ones.
pub fn stop() -> (usize, Vec<usize>) {
    SCANNING.store(false, Ordering::SeqCst);
    let sizes = FOUND_SIZES.iter().map(|s| s.load(Ordering::SeqCst)).filter(|&s| s > 0).collect();
    (FOUND.load(Ordering::SeqCst), sizes)
}
