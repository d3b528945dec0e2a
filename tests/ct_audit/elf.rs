//! An ELF file's functions, for the analysis (`analysis::Binary`): its symbols (`nm`), the
//! functions its GOT slots hold (`objdump -R`), and each function's instructions (`objdump -d`).
//!
//! Addresses are the file's own (as `nm` and `objdump` print them): the test binary's functions
//! are found by their address in this process less the load base of its image; a file not
//! loaded here (the shipped `libperps.so`) has base 0 and its functions are found by symbol.
//! A call through a GOT slot is followed when the slot holds a function of the file itself (an
//! `R_X86_64_RELATIVE` relocation); a slot filled from another library (`R_X86_64_GLOB_DAT`,
//! `R_X86_64_JUMP_SLOT`) names no code to read, so the analysis reports the call, and it
//! reports a direct call into the PLT (no symbol there) as a call it cannot read.

use super::analysis::Binary;
use super::x86::{self, Insn};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::rc::Rc;

pub struct Elf {
    path: PathBuf,
    /// Where the file's image starts in this process (0 for a file read only from disk).
    load_base: u64,
    names: HashMap<u64, String>,
    sizes: HashMap<u64, u64>,
    /// The addresses of the functions (text symbols) of each demangled name.
    functions: HashMap<String, Vec<u64>>,
    got: HashMap<u64, u64>,
    cache: RefCell<HashMap<u64, Rc<Vec<Insn>>>>,
}

pub fn run(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} could not be started ({e}); install binutils"));
    assert!(output.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

impl Elf {
    /// This test binary, as loaded in this process.
    pub fn this_process() -> Elf {
        let path = std::env::current_exe().unwrap();
        let p = path.to_str().unwrap();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let load_base = maps
            .lines()
            .find(|l| l.ends_with(p) && l.split_whitespace().nth(2) == Some("00000000"))
            .and_then(|l| u64::from_str_radix(l.split('-').next()?, 16).ok())
            .expect("the program's first mapping");
        Elf::load(path, load_base)
    }

    /// A file on disk, at its own addresses. Its symbol table must be there (not stripped).
    pub fn file(path: &Path) -> Elf {
        let elf = Elf::load(path.to_owned(), 0);
        assert!(
            !elf.functions.is_empty(),
            "{} has no symbol table (stripped): the audit finds functions by their symbols; \
             keep them in the build (Cargo.toml's [profile.release] must not strip symbols)",
            path.display()
        );
        elf
    }

    fn load(path: PathBuf, load_base: u64) -> Elf {
        let p = path.to_str().unwrap();
        let (mut names, mut sizes, mut functions) = (HashMap::new(), HashMap::new(), HashMap::new());
        // A stripped file has no symbols: nm says so on stderr, and the table stays empty.
        let symbols = Command::new("nm").args(["-C", "-S", "--defined-only", p]).output();
        let symbols = symbols.unwrap_or_else(|e| panic!("nm could not be started ({e}); install binutils"));
        for line in String::from_utf8_lossy(&symbols.stdout).lines() {
            let mut f = line.splitn(4, ' ');
            let (Some(addr), Some(size), Some(kind), Some(name)) = (f.next(), f.next(), f.next(), f.next()) else {
                continue;
            };
            let (Ok(addr), Ok(size)) = (u64::from_str_radix(addr, 16), u64::from_str_radix(size, 16)) else { continue };
            names.entry(addr).or_insert_with(|| name.to_owned());
            sizes.entry(addr).or_insert(size);
            if matches!(kind, "t" | "T") {
                functions.entry(name.to_owned()).or_insert_with(Vec::new).push(addr);
            }
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
        Elf { path, load_base, names, sizes, functions, got, cache: RefCell::new(HashMap::new()) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file address of a function of this process (`this_process` only).
    pub fn address_in_process(&self, f: usize) -> u64 {
        assert!(self.load_base != 0, "{} is not loaded in this process", self.path.display());
        f as u64 - self.load_base
    }

    /// The address of the one function of this (demangled) name.
    pub fn symbol(&self, name: &str) -> u64 {
        match self.functions.get(name).map(Vec::as_slice) {
            Some(&[addr]) => addr,
            Some(several) => panic!("{}: {} functions named {name}: {several:x?}", self.path.display(), several.len()),
            None => panic!("{}: no function {name} in its symbol table", self.path.display()),
        }
    }

    /// The size of the function (symbol) at `addr`.
    pub fn size(&self, addr: u64) -> u64 {
        self.sizes[&addr]
    }

    /// Where the byte at `addr` is in the file (its loadable segments, from the program headers).
    pub fn file_offset(&self, addr: u64) -> Option<u64> {
        let bytes = std::fs::read(&self.path).ok()?;
        let word =
            |at: usize, n: usize| -> u64 { bytes[at..at + n].iter().rev().fold(0, |v, &b| v << 8 | u64::from(b)) };
        let (phoff, phentsize, phnum) = (word(0x20, 8) as usize, word(0x36, 2) as usize, word(0x38, 2) as usize);
        (0..phnum).map(|i| phoff + i * phentsize).find_map(|h| {
            let (kind, offset, vaddr, filesz) = (word(h, 4), word(h + 8, 8), word(h + 16, 8), word(h + 32, 8));
            (kind == 1 && (vaddr..vaddr + filesz).contains(&addr)).then(|| addr - vaddr + offset)
        })
    }
}

impl Binary for Elf {
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
