//! The one place where handles become pointers and back. Handles are `Box`ed; the caller
//! owns the pointer between `_new` and `_free`.
//!
//! Each handle carries a tag of its kind in front of its value, checked by every call that
//! takes it and cleared by its `_free`. Callers through FFI pass handles as untyped
//! pointers (a Python `c_void_p`, a Go `unsafe.Pointer`, a C# `IntPtr`): a stream given where
//! a session is expected, or a handle already freed, is then refused with
//! `PERPS_INVALID_ARGUMENT` instead of being read as something it is not — a crash, or
//! worse, a signature made with whatever memory lies there. It is a defence, not a promise:
//! reading the tag of a freed handle whose memory was reused may still find a live handle
//! there, and the header's contract (no use after `_free`) stands.

use crate::error::{Error, Result};

/// A kind of handle: its tag, and its name in errors.
pub(crate) trait Handle {
    /// Eight bytes no other kind has (nor a freed handle: [`FREED`]).
    const TAG: u64;
    /// Its C type's name: "perps_client", "perps_session", …
    const KIND: &'static str;
}

/// The tag a handle's `_free` leaves behind.
const FREED: u64 = u64::from_le_bytes(*b"perps:--");

/// A handle as allocated: the tag first, so that any handle's tag is at the same place.
#[repr(C)]
struct Slot<T> {
    tag: u64,
    value: T,
}

/// Give a new handle to the caller. The pointer is the slot's; C sees an opaque type.
pub(crate) fn into_handle<T: Handle>(value: T) -> *mut T {
    Box::into_raw(Box::new(Slot { tag: T::TAG, value })).cast()
}

/// Borrow a handle for the duration of a call; NULL, a misaligned pointer, or one whose tag
/// is not of its kind is an `PERPS_INVALID_ARGUMENT` naming it.
pub(crate) fn borrow<'a, T: Handle>(ptr: *const T, name: &str) -> Result<&'a T> {
    borrow_or_null(ptr, name)?.ok_or_else(|| Error::invalid_argument(format!("{name} is NULL")))
}

/// As [`borrow`], for a handle that may be NULL (`Ok(None)`).
pub(crate) fn borrow_or_null<'a, T: Handle>(ptr: *const T, name: &str) -> Result<Option<&'a T>> {
    let slot = ptr.cast::<Slot<T>>();
    if slot.is_null() {
        return Ok(None);
    }
    if !slot.is_aligned() || tag_of(slot) != T::TAG {
        let kind = T::KIND;
        return Err(Error::invalid_argument(format!(
            "{name} is not a live {kind} handle: a handle of another kind, one already freed, or no handle at all"
        )));
    }
    // SAFETY: the tag says `ptr` came from `into_handle::<T>` and is alive until `_free`
    // (contract).
    Ok(Some(unsafe { &(*slot).value }))
}

/// Take a handle back and drop it; NULL is a no-op, and so is a pointer that is not a live
/// handle of this kind (freeing twice, or the wrong kind, frees nothing). A panic in a
/// destructor is caught here: `_free` functions never unwind into C.
pub(crate) fn free_handle<T: Handle>(ptr: *mut T) {
    let slot = ptr.cast::<Slot<T>>();
    if slot.is_null() || !slot.is_aligned() || tag_of(slot) != T::TAG {
        return;
    }
    // SAFETY: a live handle of this kind (its tag); the tag is cleared before the memory is
    // given back, so a second `_free` of the same pointer finds `FREED` (unless reused).
    unsafe { std::ptr::write_volatile(&raw mut (*slot).tag, FREED) };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: `slot` came from `into_handle` and is freed once (its tag was live).
        drop(unsafe { Box::from_raw(slot) });
    }));
}

/// The tag in front of a non-NULL, aligned handle pointer. Read volatile: the point is to
/// read memory the compiler may assume holds a live handle, and must not be optimised away.
fn tag_of<T>(slot: *const Slot<T>) -> u64 {
    // SAFETY: the caller's pointer is a handle (contract) — of this kind or another, every
    // one of which starts with its tag — or one freed, which this read is a defence against.
    unsafe { std::ptr::read_volatile(&raw const (*slot).tag) }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Apple(u32);
    impl Handle for Apple {
        const TAG: u64 = u64::from_le_bytes(*b"test:app");
        const KIND: &'static str = "apple";
    }
    struct Pear(#[allow(dead_code)] u64);
    impl Handle for Pear {
        const TAG: u64 = u64::from_le_bytes(*b"test:pea");
        const KIND: &'static str = "pear";
    }

    #[test]
    fn a_handle_of_another_kind_is_refused_and_never_freed() {
        let apple = into_handle(Apple(7));
        let pear = into_handle(Pear(9));
        assert_eq!(borrow(apple, "a").unwrap().0, 7);
        let e = borrow::<Apple>(pear.cast(), "a").err().unwrap();
        assert_eq!(
            e.message(),
            "a is not a live apple handle: a handle of another kind, one already freed, or no handle at all"
        );
        assert!(borrow::<Apple>(std::ptr::null(), "a").err().unwrap().message().contains("a is NULL"));
        assert!(borrow_or_null::<Apple>(std::ptr::null(), "a").unwrap().is_none());
        // A pointer inside a handle, not aligned as one.
        assert!(borrow::<Apple>(pear.cast::<u8>().wrapping_add(1).cast(), "a").is_err());
        // Freeing a pear as an apple frees nothing: the pear is still whole.
        free_handle::<Apple>(pear.cast());
        assert!(borrow(pear, "p").is_ok());
        free_handle(pear);
        free_handle(apple);
    }
}
