//! What the benchmarks that call the C ABI share.

use perps::ffi::error::{perps_error, perps_error_free, perps_error_message};
use perps::ffi::strings::perps_string_free;
use std::ffi::{CStr, CString, c_char};
use std::ptr::null_mut;

/// Take an owned `char*` result (freed here), or panic with the error's message.
pub fn owned(call: impl FnOnce(*mut *mut perps_error) -> *mut c_char, what: &str) -> CString {
    let mut err: *mut perps_error = null_mut();
    let out = call(&mut err);
    if out.is_null() {
        let message = unsafe { CStr::from_ptr(perps_error_message(err)) }.to_string_lossy().into_owned();
        perps_error_free(err);
        panic!("{what} failed: {message}");
    }
    let text = unsafe { CStr::from_ptr(out) }.to_owned();
    perps_string_free(out);
    text
}
