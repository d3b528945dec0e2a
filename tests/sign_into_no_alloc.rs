//! `perps_sign_body_into` must not touch the heap: a counting global allocator watches the
//! calling thread while it signs through the C ABI.

use perps::ffi::error::perps_code;
use perps::ffi::session::{perps_session_free, perps_session_new};
use perps::ffi::sign::{perps_body_signature, perps_sign_body_into};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // try_with: the thread-locals may be gone while a thread shuts down.
        let _ = COUNTING.try_with(|on| {
            if on.get() {
                ALLOCATIONS.with(|n| n.set(n.get() + 1))
            }
        });
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = COUNTING.try_with(|on| {
            if on.get() {
                ALLOCATIONS.with(|n| n.set(n.get() + 1))
            }
        });
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn signing_into_a_caller_struct_allocates_nothing() {
    let session = perps_session_new(std::ptr::null_mut());
    assert!(!session.is_null());
    let body = br#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;
    let mut out = std::mem::MaybeUninit::<perps_body_signature>::zeroed();
    // Warm up once (lazy one-time initialisation inside std or the RNG is not per call).
    assert_eq!(perps_sign_body_into(session, body.as_ptr(), body.len(), out.as_mut_ptr()), perps_code::PERPS_OK);

    COUNTING.with(|on| on.set(true));
    for _ in 0..1000 {
        let code = perps_sign_body_into(session, body.as_ptr(), body.len(), out.as_mut_ptr());
        assert_eq!(code, perps_code::PERPS_OK);
    }
    COUNTING.with(|on| on.set(false));
    assert_eq!(ALLOCATIONS.with(Cell::get), 0, "perps_sign_body_into allocated");

    // The counter does see allocations (so a zero above means something).
    COUNTING.with(|on| on.set(true));
    let probe = std::hint::black_box(vec![1u8; 16]);
    COUNTING.with(|on| on.set(false));
    drop(probe);
    assert_eq!(ALLOCATIONS.with(Cell::get), 1);
    perps_session_free(session);
}
