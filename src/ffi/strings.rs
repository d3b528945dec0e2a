//! C strings in and out. Inputs are borrowed for the call and must be UTF-8; every output
//! is a new `char*` the caller frees with `perps_string_free`.

use crate::error::{Code, Error, Result};
use std::ffi::{CStr, c_char};

/// Borrow a NUL-terminated UTF-8 argument.
pub(crate) fn arg_str<'a>(ptr: *const c_char, name: &str) -> Result<&'a str> {
    if ptr.is_null() {
        return Err(Error::invalid_argument(format!("{name} is NULL")));
    }
    // SAFETY: non-NULL means a NUL-terminated string alive for the call (contract).
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|e| {
        Error::invalid_argument(format!("{name} is not valid UTF-8 (bad byte at offset {})", e.valid_up_to()))
    })
}

/// Borrow an optional argument: NULL means absent.
pub(crate) fn arg_opt_str<'a>(ptr: *const c_char, name: &str) -> Result<Option<&'a str>> {
    if ptr.is_null() { Ok(None) } else { arg_str(ptr, name).map(Some) }
}

/// Borrow `len` bytes; NULL is allowed only with `len == 0`.
pub(crate) fn arg_bytes<'a>(ptr: *const u8, len: usize, name: &str) -> Result<&'a [u8]> {
    if ptr.is_null() {
        return if len == 0 {
            Ok(&[])
        } else {
            Err(Error::invalid_argument(format!("{name} is NULL but its length is {len}")))
        };
    }
    if len > isize::MAX as usize {
        return Err(Error::invalid_argument(format!("{name} length {len} is larger than any object can be")));
    }
    // SAFETY: `ptr` points to `len` readable bytes for the call (contract).
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Every returned string sits behind a header of two words: a tag and the size of the text
/// with its NUL. `perps_string_free` reads the size from there, never by scanning the text,
/// which the caller may have changed (a NUL written into it would leave the rest unwiped; an
/// overwritten terminator would send a scan past the end).
const HEADER: usize = 16;
/// Marks a live string of this library; cleared when it is freed.
const TAG: usize = 0x7065_7270_735f_7331; // "perps_s1"

fn layout(text_size: usize) -> Option<std::alloc::Layout> {
    std::alloc::Layout::from_size_align(HEADER.checked_add(text_size)?, HEADER).ok()
}

/// Hand a string to the caller as a new `char*`. The bytes are copied once into an
/// allocation of the exact final size (so no reallocation leaves a stray copy behind, which
/// matters for tokens), behind the header above, and the Rust original is overwritten before
/// it is freed.
pub(crate) fn to_c_string(text: String) -> Result<*mut c_char> {
    let text = zeroize::Zeroizing::new(text);
    copy_to_c(&text)
}

/// `to_c_string` for a text that holds none of the library's secrets (a stream event: venue
/// data and the stream's own status), whose Rust original is freed without being overwritten
/// first: for an event of a few kilobytes, the wipe cost more than the copy. The C string is
/// wiped by `perps_string_free` all the same.
pub(crate) fn public_to_c_string(text: String) -> Result<*mut c_char> {
    copy_to_c(&text)
}

fn copy_to_c(text: &str) -> Result<*mut c_char> {
    if text.as_bytes().contains(&0) {
        return Err(Error::new(
            Code::BadResponse,
            "the result contains a NUL byte and cannot be returned as a C string",
        ));
    }
    let size = text.len() + 1;
    let layout = layout(size).ok_or_else(|| Error::new(Code::Panic, "internal error: a result too large to return"))?;
    // SAFETY: the layout has a non-zero size.
    let block = unsafe { std::alloc::alloc(layout) };
    if block.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    // SAFETY: `block` holds HEADER + size bytes, aligned for usize; we write within them.
    unsafe {
        block.cast::<usize>().write(TAG);
        block.cast::<usize>().add(1).write(size);
        let body = block.add(HEADER);
        std::ptr::copy_nonoverlapping(text.as_ptr(), body, text.len());
        body.add(text.len()).write(0);
        Ok(body.cast::<c_char>())
    }
}

/// Free a string returned by any `perps_*` function. Every byte is overwritten first, since
/// some results (tokens, signatures) are sensitive; the whole string is wiped and freed even
/// if the caller wrote into it (its length was recorded when it was made, not read from its
/// NUL). NULL is a no-op; must not be called twice, or on a pointer from elsewhere.
#[unsafe(no_mangle)]
pub extern "C" fn perps_string_free(s: *mut c_char) {
    if s.is_null() {
        return;
    }
    // SAFETY: `s` came from `to_c_string` (contract): HEADER bytes before it are its header.
    unsafe {
        let block = s.cast::<u8>().sub(HEADER);
        if block.cast::<usize>().read() != TAG {
            // Not a live string of ours (freed already, or foreign): leave it alone rather
            // than free what we did not allocate.
            return;
        }
        let size = block.cast::<usize>().add(1).read();
        let Some(layout) = layout(size) else { return };
        zeroize::Zeroize::zeroize(std::slice::from_raw_parts_mut(block, HEADER + size));
        std::alloc::dealloc(block, layout);
    }
}
