//! The shipped shared library, for the audit: `libperps.so` as `make lib` builds it from this
//! source, and copies of it with a leak planted, to show that the audit of the library's code
//! catches one.
//!
//! Users run the library, not this test binary: `make lib` builds it (`cargo rustc --release
//! --crate-type cdylib,staticlib`, the release profile, no extra RUSTFLAGS or features), and
//! `make install` and the packages (`scripts/package.sh`) copy it as it is, never stripped: the
//! symbols stay (Cargo.toml's release profile drops only debug info), which is how the audit
//! finds the builds' functions in it. The packages are linked by zig for an older glibc (`make
//! lib GLIBC=2.17`, `target/<triple>/release`); rustc generates the same code for both.

use super::analysis::{Binary, Report, SecretBefore};
use super::elf::{Elf, run};
use super::x86::Insn;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// `libperps.so` built from this source by `make lib`, the command every script and package
/// uses. `scripts/test.sh` runs `make lib` before the tests, so here cargo finds it up to date
/// (well under a second); run alone after a change, this test builds it.
pub fn library() -> &'static Path {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut make = Command::new("make");
        make.args(["--no-print-directory", "-C", root, "lib"]);
        // Not the variables cargo set for this test: build scripts that watch them (ring's)
        // would see a change, and the library would be built again here and again after.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if name.starts_with("CARGO_PKG_") || name.starts_with("CARGO_BIN_") || CARGO_SETS.contains(&&*name) {
                make.env_remove(&*name);
            }
        }
        let output = make.output().unwrap_or_else(|e| panic!("make could not be started ({e}); install make"));
        let log = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "make lib failed:\n{}{log}", String::from_utf8_lossy(&output.stdout));
        let finished = log.lines().rfind(|l| l.contains("Finished")).unwrap_or("").trim();
        let dir = run("make", &["--no-print-directory", "-s", "-C", root, "build-dir"]);
        let library = Path::new(root).join(dir.trim()).join("libperps.so");
        eprintln!("make lib ({finished}): auditing {}", library.display());
        library
    })
}

/// The variables cargo sets for a test besides `CARGO_PKG_*` and `CARGO_BIN_*` (its "Environment
/// variables Cargo sets for crates"); `CARGO`, the cargo that runs the test, stays.
const CARGO_SETS: [&str; 7] = [
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_CRATE_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "CARGO_RUSTC_CURRENT_DIR",
    "OUT_DIR",
];

/// A leak to plant in a copy of the library's code.
#[derive(Clone, Copy, Debug)]
pub enum Plant {
    /// A conditional jump (to the next instruction) where the flags hold a secret.
    Branch,
    /// A load from the address a register holding a secret names (`mov r, [r]`).
    Address,
}

impl Plant {
    /// The start of the analysis's finding for it.
    pub fn finding(self) -> &'static str {
        match self {
            Plant::Branch => "conditional jump on secret flags",
            Plant::Address => "memory address from a secret",
        }
    }

    /// Its machine code, to be written over an instruction of `len` bytes before which
    /// `secret` holds, if it fits there.
    fn code(self, secret: &SecretBefore, len: u64) -> Option<Vec<u8>> {
        match self {
            // je +0
            Plant::Branch => (secret.flags && len >= 2).then(|| vec![0x74, 0x00]),
            // mov r, QWORD PTR [r]: REX.W (+R, +B from r8 on), 8b, ModRM with mod 00 (no
            // displacement; rsp and rbp, r12 and r13 would need other forms).
            Plant::Address => {
                let r = *secret.gprs.iter().find(|&&r| !matches!(r & 7, 4 | 5))?;
                (len >= 3).then(|| vec![if r >= 8 { 0x4d } else { 0x48 }, 0x8b, (r & 7) << 3 | (r & 7)])
            }
        }
    }
}

/// A copy of the library with `plant` written over the first instruction of `function` (a
/// jump, call or return aside) where it fits and what it needs is secret (after `clean`, the
/// audit of the unchanged function), the rest of that instruction filled with NOPs: the copy's
/// path, and the planted instruction's address.
pub fn plant(library: &Elf, function: u64, clean: &Report, plant: Plant) -> (PathBuf, u64) {
    let insns = library.function(function).expect("the function's instructions");
    let fits = |pair: &[Insn]| {
        let (insn, len) = (&pair[0], pair[1].addr - pair[0].addr);
        let m = insn.mnemonic.as_str();
        if m.starts_with('j') || matches!(m, "call" | "ret") {
            return None;
        }
        Some((insn.addr, len, plant.code(clean.secret_before.get(&insn.addr)?, len)?))
    };
    let (at, len, code) = insns
        .windows(2)
        .find_map(fits)
        .unwrap_or_else(|| panic!("{plant:?}: no instruction of {} to plant it over", library.name(function)));
    let mut bytes = std::fs::read(library.path()).expect("the library");
    let offset = library.file_offset(at).expect("the function's bytes in the file") as usize;
    let instruction = &mut bytes[offset..offset + len as usize];
    instruction.fill(0x90);
    instruction[..code.len()].copy_from_slice(&code);
    let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("libperps-planted-{plant:?}.so"));
    std::fs::write(&copy, bytes).expect("the library's copy");
    (copy, at)
}
