//! The library's version, as defines and at run time.

use std::ffi::c_char;

/// Major version of the header; equals `perps_version()`'s first number.
pub const PERPS_VERSION_MAJOR: u32 = 0;
/// Minor version of the header.
pub const PERPS_VERSION_MINOR: u32 = 1;
/// Patch version of the header.
pub const PERPS_VERSION_PATCH: u32 = 0;

/// The library's version as "MAJOR.MINOR.PATCH". Static: never free it.
#[unsafe(no_mangle)]
pub extern "C" fn perps_version() -> *const c_char {
    const VERSION: &std::ffi::CStr =
        match std::ffi::CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => panic!("version contains NUL"),
        };
    VERSION.as_ptr()
}
