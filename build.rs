//! Build script: gives the shared library its SONAME on Linux.
//!
//! `libperps.so` is linked with `-soname libperps.so.<major>`, so programs linked against it
//! record `NEEDED libperps.so.<major>` and keep working across compatible (same major)
//! upgrades of an installed library (`make install` puts `libperps.so.<major>.<minor>.<patch>`
//! and the `libperps.so.<major>` / `libperps.so` symlinks in `$PREFIX/lib`).
//!
//! Programs linked against the build tree (`-Ltarget/release -lperps` with an rpath) then
//! look for `libperps.so.<major>` there too, so this script also puts a symlink
//! `libperps.so.<major> -> libperps.so` beside the library in the profile directory.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let soname = format!("libperps.so.{}", env!("CARGO_PKG_VERSION_MAJOR"));
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");

    // OUT_DIR is <target>/<profile>/build/perps-<hash>/out: the profile directory, where
    // cargo puts libperps.so, is three levels up. Best effort: a failure here only means
    // that build-tree programs need LD_LIBRARY_PATH or a symlink of their own.
    let Some(out_dir) = std::env::var_os("OUT_DIR") else { return };
    let Some(profile_dir) = Path::new(&out_dir).ancestors().nth(3) else { return };
    let link = profile_dir.join(&soname);
    if std::fs::read_link(&link).is_err() {
        let _ = std::fs::remove_file(&link);
        #[cfg(unix)]
        let _ = std::os::unix::fs::symlink("libperps.so", &link);
    }
}
