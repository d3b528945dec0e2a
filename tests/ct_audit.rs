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
//! `scripts/test.sh` runs it: `cargo test --release --test ct_audit -- --nocapture`.
#![cfg(all(not(debug_assertions), target_arch = "x86_64", target_os = "linux"))]

#[path = "ct_audit/analysis.rs"]
mod analysis;
#[path = "ct_audit/instructions.rs"]
mod instructions;
#[path = "ct_audit/state.rs"]
mod state;
#[path = "ct_audit/x86.rs"]
mod x86;

use analysis::{Binary, OUTPUT, Report, SECRET_INPUT};
use curve25519_dalek::Scalar;
use perps::curve::Checked;
use state::State;
use std::cell::RefCell;
use std::collections::HashMap;
use std::process::Command;
use std::rc::Rc;
use x86::{Insn, RDI, RSI};

type Build = unsafe fn(&Scalar) -> Checked;

/// The builds, as function pointers (their addresses locate them in the binary).
fn builds() -> Vec<(&'static str, Build)> {
    vec![
        ("ifma", perps::curve::mul_base_ifma),
        ("adx", perps::curve::mul_base_adx),
        ("avx2", perps::curve::mul_base_avx2),
        ("baseline", perps::curve::mul_base_baseline),
    ]
}

struct Exe {
    path: std::path::PathBuf,
    /// Where the program's image starts in this process (its file addresses are relative).
    load_base: u64,
    names: HashMap<u64, String>,
    sizes: HashMap<u64, u64>,
    got: HashMap<u64, u64>,
    cache: RefCell<HashMap<u64, Rc<Vec<Insn>>>>,
}

fn run(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} could not be started ({e}); install binutils"));
    assert!(output.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

impl Exe {
    fn load() -> Exe {
        let path = std::env::current_exe().unwrap();
        let p = path.to_str().unwrap();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let load_base = maps
            .lines()
            .find(|l| l.ends_with(p) && l.split_whitespace().nth(2) == Some("00000000"))
            .and_then(|l| u64::from_str_radix(l.split('-').next()?, 16).ok())
            .expect("the program's first mapping");
        let (mut names, mut sizes) = (HashMap::new(), HashMap::new());
        for line in run("nm", &["-C", "-S", "--defined-only", p]).lines() {
            let mut f = line.splitn(4, ' ');
            let (Some(addr), Some(size), Some(_kind), Some(name)) = (f.next(), f.next(), f.next(), f.next()) else {
                continue;
            };
            let (Ok(addr), Ok(size)) = (u64::from_str_radix(addr, 16), u64::from_str_radix(size, 16)) else { continue };
            names.entry(addr).or_insert_with(|| name.to_owned());
            sizes.entry(addr).or_insert(size);
        }
        let mut got = HashMap::new();
        for line in run("objdump", &["-R", p]).lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if let [slot, "R_X86_64_RELATIVE", value] = f[..]
                && let (Ok(slot), Some(Ok(target))) =
                    (u64::from_str_radix(slot, 16), value.strip_prefix("*ABS*+0x").map(|v| u64::from_str_radix(v, 16)))
            {
                got.insert(slot, target);
            }
        }
        Exe { path, load_base, names, sizes, got, cache: RefCell::new(HashMap::new()) }
    }

    /// The file address of a function of this process.
    fn file_address(&self, f: Build) -> u64 {
        f as usize as u64 - self.load_base
    }
}

impl Binary for Exe {
    fn name(&self, addr: u64) -> String {
        self.names.get(&addr).cloned().unwrap_or_else(|| format!("{addr:#x}"))
    }

    fn got(&self, slot: u64) -> Option<u64> {
        self.got.get(&slot).copied()
    }

    fn output_size(&self, name: &str) -> Option<i64> {
        // `signed_radix16(k: &[u8; 32]) -> [i8; 64]`: its 64 digits, returned through rdi.
        (name == "perps::curve::base_table::signed_radix16").then_some(64)
    }

    fn function(&self, addr: u64) -> Option<Rc<Vec<Insn>>> {
        if let Some(insns) = self.cache.borrow().get(&addr) {
            return Some(insns.clone());
        }
        let size = *self.sizes.get(&addr)?;
        let listing = run(
            "objdump",
            &[
                "-d",
                "-M",
                "intel",
                "--no-show-raw-insn",
                &format!("--start-address={addr:#x}"),
                &format!("--stop-address={:#x}", addr + size),
                self.path.to_str().unwrap(),
            ],
        );
        let insns = Rc::new(x86::parse(&listing).unwrap_or_else(|e| panic!("{}: {e}", self.name(addr))));
        self.cache.borrow_mut().insert(addr, insns.clone());
        Some(insns)
    }
}

/// Audit a build's function: `rsi` points to the secret scalar, `rdi` to the result.
fn audit(exe: &Exe, f: Build) -> Report {
    let addr = exe.file_address(f);
    let insns = exe.function(addr).unwrap_or_else(|| panic!("no function at {addr:#x}"));
    let entry = State::entry(&[(RSI, SECRET_INPUT), (RDI, OUTPUT)]);
    let (report, exit) = analysis::audit(&insns, entry, exe, 0);
    assert!(exit.is_some(), "{}: the analysis never reached a return", exe.name(addr));
    assert!(report.secret_loads > 0, "{}: the secret was never read (wrong argument register?)", exe.name(addr));
    report
}

fn summary(name: &str, r: &Report) -> String {
    format!(
        "{name}: {} conditional jumps and {} memory operands, all public; calls {:?}",
        r.conditional_jumps, r.memory_operands, r.calls
    )
}

#[test]
fn every_build_branches_and_addresses_memory_on_public_values_only() {
    let exe = Exe::load();
    for (name, f) in builds() {
        // Keep every build in the binary.
        std::hint::black_box(f);
        let report = audit(&exe, f);
        assert!(report.findings.is_empty(), "{name} build:\n{}", report.findings.join("\n"));
        assert!(report.conditional_jumps > 0 && report.memory_operands > 1000, "{name}: {report:?}");
        eprintln!("{}", summary(name, &report));
    }
}

#[test]
fn a_planted_secret_branch_is_caught() {
    let exe = Exe::load();
    let planted: Build = perps::curve::mul_base_ifma_planted::<1>;
    let report = audit(&exe, std::hint::black_box(planted));
    let branches: Vec<&String> = report.findings.iter().filter(|f| f.contains("conditional jump on secret")).collect();
    assert!(!branches.is_empty(), "the planted branch was not found:\n{report:?}");
    eprintln!("planted branch caught: {}", branches[0]);
}

#[test]
fn a_planted_secret_table_index_is_caught() {
    let exe = Exe::load();
    let planted: Build = perps::curve::mul_base_ifma_planted::<2>;
    let report = audit(&exe, std::hint::black_box(planted));
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
