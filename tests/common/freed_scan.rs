//! A global allocator that shows a test every heap block as it is freed, with the bytes it
//! still holds: for tests that no secret is left in memory given back (`stream_token_wiped`,
//! `key_residue`). A block moved by `realloc` is freed with its bytes, so it is shown too.

use std::alloc::{GlobalAlloc, Layout, System};

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
