//! The one place where handles become pointers and back. Handles are `Box`ed; the caller
//! owns the pointer between `_new` and `_free`.

use crate::error::{Error, Result};

/// Give a new handle to the caller.
pub(crate) fn into_handle<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// Borrow a handle for the duration of a call; NULL is an `PERPS_INVALID_ARGUMENT` naming it.
pub(crate) fn borrow<'a, T>(ptr: *const T, name: &str) -> Result<&'a T> {
    // SAFETY: non-NULL handles come from `into_handle` and are alive until `_free` (contract).
    unsafe { ptr.as_ref() }.ok_or_else(|| Error::invalid_argument(format!("{name} is NULL")))
}

/// Take a handle back and drop it; NULL is a no-op. A panic in a destructor is caught
/// here: `_free` functions never unwind into C.
pub(crate) fn free_handle<T>(ptr: *mut T) {
    if ptr.is_null() {
        return;
    }
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: `ptr` came from `into_handle` and is freed once (contract).
        drop(unsafe { Box::from_raw(ptr) });
    }));
}
