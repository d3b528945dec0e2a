//! The header's PERPS_VERSION_* defines, perps_version() and Cargo.toml agree.

use perps::ffi::version::*;
use std::ffi::CStr;

#[test]
fn version_defines_match_the_package_and_the_runtime_string() {
    assert_eq!(PERPS_VERSION_MAJOR.to_string(), env!("CARGO_PKG_VERSION_MAJOR"));
    assert_eq!(PERPS_VERSION_MINOR.to_string(), env!("CARGO_PKG_VERSION_MINOR"));
    assert_eq!(PERPS_VERSION_PATCH.to_string(), env!("CARGO_PKG_VERSION_PATCH"));
    let runtime = unsafe { CStr::from_ptr(perps_version()) }.to_str().unwrap();
    assert_eq!(runtime, format!("{PERPS_VERSION_MAJOR}.{PERPS_VERSION_MINOR}.{PERPS_VERSION_PATCH}"));
    let header = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/include/perps.h")).unwrap();
    assert!(header.contains(&format!("#define PERPS_VERSION_MAJOR {PERPS_VERSION_MAJOR}")));
    assert!(header.contains(&format!("#define PERPS_VERSION_MINOR {PERPS_VERSION_MINOR}")));
    assert!(header.contains(&format!("#define PERPS_VERSION_PATCH {PERPS_VERSION_PATCH}")));
}
