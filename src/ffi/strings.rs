//! C strings in and out. Inputs are borrowed for the call and must be UTF-8; every output
//! is a new `char*` the caller frees with `perps_string_free`.

use crate::error::{Code, Error, Result};
use std::ffi::{CStr, CString, c_char};

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

/// Hand a string to the caller as a new `char*`. The bytes are copied once into an
/// allocation of the exact final size (so no reallocation leaves a stray copy behind, which
/// matters for tokens), and the Rust original is overwritten before it is freed.
pub(crate) fn to_c_string(text: String) -> Result<*mut c_char> {
    let mut text = zeroize::Zeroizing::new(text);
    if text.as_bytes().contains(&0) {
        return Err(Error::new(
            Code::BadResponse,
            "the result contains a NUL byte and cannot be returned as a C string",
        ));
    }
    let mut bytes = Vec::with_capacity(text.len() + 1);
    bytes.extend_from_slice(text.as_bytes());
    bytes.push(0);
    zeroize::Zeroize::zeroize(&mut *text);
    let c_string = CString::from_vec_with_nul(bytes)
        .map_err(|_| Error::new(Code::Panic, "internal error: C string without its terminating NUL"))?;
    Ok(c_string.into_raw())
}

/// Free a string returned by any `perps_*` function. Its bytes are overwritten first, since
/// some results (tokens, signatures) are sensitive. NULL is a no-op; must not be called twice.
#[unsafe(no_mangle)]
pub extern "C" fn perps_string_free(s: *mut c_char) {
    if s.is_null() {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: `s` came from `CString::into_raw` in this library and is freed once.
        let owned = unsafe { CString::from_raw(s) };
        let mut bytes = owned.into_bytes_with_nul();
        zeroize::Zeroize::zeroize(&mut bytes);
    });
}
