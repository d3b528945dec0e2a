//! `perps_string_free` wipes and frees the whole string it was given, even after the caller
//! wrote a NUL into it: a global allocator records, for every block freed by the calling
//! thread, its size and whether it was all zeros. (Measuring the string again with `strlen`,
//! as before, freed a block of the wrong size and left the text after the NUL unwiped.)
//! `tests/c/test_core.c` overwrites the terminator too, under ASan and valgrind.

use perps::ffi::session::{perps_session_free, perps_session_new};
use perps::ffi::sign::perps_sign_body;
use perps::ffi::strings::perps_string_free;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};

struct Watching;

thread_local! {
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    /// (start, size, all zeros) of each block freed while watching.
    static FREED: RefCell<Vec<(usize, usize, bool)>> = const { RefCell::new(Vec::new()) };
}

unsafe impl GlobalAlloc for Watching {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let watching = WATCHING.try_with(Cell::get).unwrap_or(false);
        if watching {
            // SAFETY: the block is still allocated and `layout.size()` bytes long as the
            // caller claims (if the claim is wrong, this reads what the free would have).
            let zeros = unsafe { std::slice::from_raw_parts(ptr, layout.size()) }.iter().all(|&b| b == 0);
            WATCHING.with(|w| w.set(false)); // the Vec may allocate
            FREED.with(|f| f.borrow_mut().push((ptr as usize, layout.size(), zeros)));
            WATCHING.with(|w| w.set(true));
        }
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Watching = Watching;

#[test]
fn the_whole_string_is_wiped_and_freed_after_the_caller_shortened_it() {
    let session = perps_session_new(std::ptr::null_mut());
    assert!(!session.is_null());
    let json = perps_sign_body(session, c"{\"a\":1}".as_ptr(), std::ptr::null_mut());
    assert!(!json.is_null());
    let (start, len) = (json as usize, unsafe { std::ffi::CStr::from_ptr(json) }.to_bytes().len());
    assert!(len > 100, "{len}");
    // The caller writes a NUL into the middle.
    unsafe { json.add(10).write(0) };

    WATCHING.with(|w| w.set(true));
    perps_string_free(json);
    WATCHING.with(|w| w.set(false));

    let freed = FREED.with(|f| f.borrow().clone());
    let block = freed.iter().find(|(at, size, _)| *at <= start && start < at + size);
    let &(at, size, zeros) = block.expect("the string's block was freed");
    assert!(at + size > start + len, "a block of {size} bytes freed: shorter than the string's {}", len + 1);
    assert!(zeros, "the freed block was not wiped");
    perps_session_free(session);
}
