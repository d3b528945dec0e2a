//! The constant-time property of the fast builds of R = r·B, checked on their own machine code.
//!
//! Valgrind's memcheck (`tests/constant_time.rs`) checks the builds it can run, but its virtual
//! CPU has no AVX-512: the vector build that signs on CPUs with IFMA only ever ran there on
//! emulated lanes, and a secret-dependent branch planted in the IFMA code passed every test.
//! So this reads the compiled code of this very test binary (release, like the code users run):
//! `objdump` disassembles each build's function and everything it calls, and a taint analysis
//! (`ct_audit/analysis.rs`) follows the secret scalar through registers, flags and the stack
//! frame to a fixed point. Every conditional branch must be on public values (loop counters,
//! bounds checks of public indices) and every memory operand's address built from public
//! registers (the stack pointer, the tables' fixed addresses, loop counters).
//!
//! And it must catch what it is for: two copies of the IFMA build with a leak planted in the
//! table lookup (`perps::curve::mul_base_ifma_planted`: a branch on the digit's sign, and a
//! read of the entry the digit names) must be reported, each for its own kind of leak.
//!
//! Users run the shared library, not this binary: its code of the same functions could differ
//! (another inlining or code-generation decision in the cdylib). So the same analysis, with the
//! same verdicts, also reads `libperps.so` as `make lib` builds it from this source
//! (`ct_audit/shipped.rs`), its functions found by their symbols; and since the planted copies
//! are generic (none is in the library), copies of the library with a secret branch or a secret
//! address written over an instruction of its IFMA build must be reported at that instruction.
//! The static library `libperps.a` must hold the same code as the shared one for every function
//! audited there, relocated fields aside (`ct_audit/archive.rs`).
//! `scripts/test.sh` runs it: `cargo test --release --test ct_audit -- --nocapture`.
#![cfg(all(not(debug_assertions), target_arch = "x86_64", target_os = "linux"))]

#[path = "ct_audit/analysis.rs"]
mod analysis;
#[path = "ct_audit/archive.rs"]
mod archive;
#[path = "ct_audit/elf.rs"]
mod elf;
#[path = "ct_audit/instructions.rs"]
mod instructions;
#[path = "ct_audit/shipped.rs"]
mod shipped;
#[path = "ct_audit/state.rs"]
mod state;
#[path = "ct_audit/x86.rs"]
mod x86;

use analysis::{Binary, OUTPUT, Report, SECRET_INPUT};
use curve25519_dalek::Scalar;
use elf::Elf;
use perps::curve::Checked;
use state::State;
use x86::{RDI, RSI};

type Build = unsafe fn(&Scalar) -> Checked;

/// The builds: their names, their symbols, and their functions (whose addresses locate them in
/// this binary).
fn builds() -> Vec<(&'static str, &'static str, Build)> {
    vec![
        ("ifma", "perps::curve::mul_base_ifma", perps::curve::mul_base_ifma),
        ("adx", "perps::curve::mul_base_adx", perps::curve::mul_base_adx),
        ("avx2", "perps::curve::mul_base_avx2", perps::curve::mul_base_avx2),
        ("baseline", "perps::curve::mul_base_baseline", perps::curve::mul_base_baseline),
    ]
}

/// Audit the function at `addr`: `rsi` points to the secret scalar, `rdi` to the result.
fn audit(elf: &Elf, addr: u64) -> Report {
    let insns = elf.function(addr).unwrap_or_else(|| panic!("no function at {addr:#x}"));
    let entry = State::entry(&[(RSI, SECRET_INPUT), (RDI, OUTPUT)]);
    let (report, exit) = analysis::audit(&insns, entry, elf, 0);
    assert!(exit.is_some(), "{}: the analysis never reached a return", elf.name(addr));
    assert!(report.secret_loads > 0, "{}: the secret was never read (wrong argument register?)", elf.name(addr));
    report
}

/// Audit a build's function in this test binary.
fn audit_here(exe: &Elf, f: Build) -> Report {
    audit(exe, exe.address_in_process(f as usize))
}

fn summary(name: &str, r: &Report) -> String {
    format!(
        "{name}: {} conditional jumps and {} memory operands, all public; calls {:?}",
        r.conditional_jumps, r.memory_operands, r.calls
    )
}

/// The verdict every build must get, in the test binary and in the shipped library alike.
fn assert_public_only(name: &str, report: &Report) {
    assert!(report.findings.is_empty(), "{name} build:\n{}", report.findings.join("\n"));
    assert!(report.conditional_jumps > 0 && report.memory_operands > 1000, "{name}: {report:?}");
}

#[test]
fn every_build_branches_and_addresses_memory_on_public_values_only() {
    let exe = Elf::this_process();
    for (name, _, f) in builds() {
        // Keep every build in the binary.
        std::hint::black_box(f);
        let report = audit_here(&exe, f);
        assert_public_only(name, &report);
        eprintln!("{}", summary(name, &report));
    }
}

#[test]
fn a_planted_secret_branch_is_caught() {
    let exe = Elf::this_process();
    let planted: Build = perps::curve::mul_base_ifma_planted::<1>;
    let report = audit_here(&exe, std::hint::black_box(planted));
    let branches: Vec<&String> = report.findings.iter().filter(|f| f.contains("conditional jump on secret")).collect();
    assert!(!branches.is_empty(), "the planted branch was not found:\n{report:?}");
    eprintln!("planted branch caught: {}", branches[0]);
}

#[test]
fn a_planted_secret_table_index_is_caught() {
    let exe = Elf::this_process();
    let planted: Build = perps::curve::mul_base_ifma_planted::<2>;
    let report = audit_here(&exe, std::hint::black_box(planted));
    let addresses: Vec<&String> =
        report.findings.iter().filter(|f| f.contains("memory address from a secret")).collect();
    assert!(!addresses.is_empty(), "the planted index was not found:\n{report:?}");
    assert!(
        report.findings.iter().all(|f| !f.contains("conditional jump")),
        "only the index was planted:\n{}",
        report.findings.join("\n")
    );
    eprintln!("planted table index caught: {}", addresses[0]);
}

#[test]
fn the_shipped_library_branches_and_addresses_memory_on_public_values_only() {
    let lib = Elf::file(shipped::library());
    eprintln!("{}:", lib.path().display());
    let mut audited = Vec::new();
    for (name, symbol, _) in builds() {
        let addr = lib.symbol(symbol);
        let report = audit(&lib, addr);
        assert_public_only(name, &report);
        eprintln!("  {} ({symbol} at {addr:#x})", summary(name, &report));
        audited.push(symbol.to_owned());
        for callee in report.calls.into_iter().filter(|c| c.starts_with("perps::")) {
            if !audited.contains(&callee) {
                audited.push(callee);
            }
        }
    }
    let archive = lib.path().with_file_name("libperps.a");
    let compared = archive::same_code(&archive, &lib, &audited).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{}: the same code, relocated fields aside, for {compared} functions: {audited:?}", archive.display());
}

/// `mul_base_ifma_planted` is generic, so the library has no copy of it: instead a copy of the
/// library gets a leak written over one instruction of its `mul_base_ifma`, and the audit of
/// that copy, by the same path as the library's, must report it at that instruction; the
/// comparison with the static library must see the change.
#[test]
fn a_leak_planted_in_the_shipped_library_is_caught() {
    let lib = Elf::file(shipped::library());
    let addr = lib.symbol("perps::curve::mul_base_ifma");
    let clean = audit(&lib, addr);
    for plant in [shipped::Plant::Branch, shipped::Plant::Address] {
        let (copy, at) = shipped::plant(&lib, addr, &clean, plant);
        let report = audit(&Elf::file(&copy), addr);
        let expected = format!("{at:x}: {}", plant.finding());
        let caught = report.findings.iter().find(|f| f.starts_with(&expected));
        let caught = caught.unwrap_or_else(|| panic!("{plant:?} planted at {at:#x} was not found:\n{report:?}"));
        eprintln!("{plant:?} planted in {} caught: {caught}", copy.display());
        // And the static library's code is no longer the copy's.
        let archive = lib.path().with_file_name("libperps.a");
        let differs = archive::same_code(&archive, &Elf::file(&copy), &["perps::curve::mul_base_ifma".to_owned()]);
        eprintln!("  and {}", differs.expect_err("the static library's code is the planted copy's"));
    }
}
