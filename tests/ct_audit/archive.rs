//! The static library (`libperps.a`, built by the same `make lib` invocation as `libperps.so`:
//! `--crate-type cdylib,staticlib`): its code of the audited functions must be the shared
//! library's, byte for byte but for the fields the linker fills in (relocations), so that the
//! audit of the shared library's code holds for a program linked with the static one.
//!
//! Each function is in a section of its own in one object of the archive; the object is taken
//! out (`ar p`), the section's bytes read (`objcopy`), its relocations listed (`objdump -r`),
//! and their fields left out of the comparison in both files, with the two bytes before a
//! relaxable GOT load's (`*GOTPCRELX`: the linker may rewrite its opcode).

use super::elf::{Elf, run};
use std::collections::HashMap;
use std::path::Path;

/// Compare the code of `names` (demangled) in `archive` with `library`'s: the number compared,
/// or where they first differ.
pub fn same_code(archive: &Path, library: &Elf, names: &[String]) -> Result<usize, String> {
    let a = archive.to_str().unwrap();
    let mut member_of: HashMap<&str, Vec<String>> = HashMap::new();
    // `libperps.a:member.o:0000000000000000 T name` (objects without symbols: on stderr).
    for line in run("nm", &["-A", "-C", "--defined-only", a]).lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(member), Some(symbol)) = (f.next(), f.next(), f.next()) else { continue };
        let mut s = symbol.splitn(3, ' ');
        if let (Some(_), Some("t" | "T"), Some(name)) = (s.next(), s.next(), s.next())
            && let Some(name) = names.iter().find(|n| *n == name)
        {
            member_of.entry(name).or_default().push(member.to_owned());
        }
    }
    // A directory of its own for each library compared with (tests run in parallel).
    let dir = library.path().file_name().unwrap().to_string_lossy().into_owned();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("libperps.a-objects-vs-{dir}"));
    std::fs::create_dir_all(&dir).unwrap();
    for name in names {
        let member = match member_of.get(name.as_str()).map(Vec::as_slice) {
            Some([member]) => member,
            other => panic!("{a}: {name} is defined in {other:?}, not in one object"),
        };
        let object = dir.join(member);
        let output = std::process::Command::new("ar").args(["p", a, member]).output().expect("ar");
        assert!(output.status.success(), "ar p {a} {member} failed");
        std::fs::write(&object, output.stdout).unwrap();
        let o = object.to_str().unwrap();
        let (section, value, size) = section_of(o, name);
        let raw = object.with_extension("bin");
        run("objcopy", &["-O", "binary", &format!("--only-section={section}"), o, raw.to_str().unwrap()]);
        let code = std::fs::read(&raw).unwrap();
        let mut archived = code[value..value + size].to_vec();
        let at = library.symbol(name);
        assert_eq!(library.size(at), size as u64, "{name}: its size in {a} and in {}", library.path().display());
        let offset = library.file_offset(at).expect("the function's bytes in the library") as usize;
        let mut shipped = std::fs::read(library.path()).unwrap()[offset..offset + size].to_vec();
        for (field, len) in relocated_fields(o, &section) {
            for i in field.saturating_sub(value)..(field + len).saturating_sub(value).min(size) {
                (archived[i], shipped[i]) = (0, 0);
            }
        }
        if let Some(i) = (0..size).find(|&i| archived[i] != shipped[i]) {
            return Err(format!(
                "{name}: the code in {a} ({member}) is not the code in {} from byte {i:#x} (at {:#x} there)",
                library.path().display(),
                at + i as u64
            ));
        }
    }
    Ok(names.len())
}

/// A function's section, its offset in it and its size (`objdump -t -C`: `value flags section
/// \tsize [.hidden] name`).
fn section_of(object: &str, name: &str) -> (String, usize, usize) {
    for line in run("objdump", &["-t", "-C", object]).lines() {
        let Some((left, right)) = line.split_once('\t') else { continue };
        let mut r = right.splitn(2, ' ');
        let (Some(size), Some(symbol)) = (r.next(), r.next()) else { continue };
        if symbol.trim_start_matches(".hidden ") != name || !left.contains(" F ") {
            continue;
        }
        let value = usize::from_str_radix(left.split_whitespace().next().unwrap(), 16).unwrap();
        let section = left.split_whitespace().last().unwrap().to_owned();
        return (section, value, usize::from_str_radix(size, 16).unwrap());
    }
    panic!("{object}: no function {name}")
}

/// The fields (offset, length) of a section's relocations.
fn relocated_fields(object: &str, section: &str) -> Vec<(usize, usize)> {
    let mut fields = Vec::new();
    for line in run("objdump", &["-r", "-j", section, object]).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(offset), Some(kind)) = (f.first().and_then(|o| usize::from_str_radix(o, 16).ok()), f.get(1)) else {
            continue;
        };
        match *kind {
            "R_X86_64_64" => fields.push((offset, 8)),
            k if k.ends_with("GOTPCRELX") => fields.push((offset - 2, 6)),
            k if k.starts_with("R_X86_64_") => fields.push((offset, 4)),
            _ => {}
        }
    }
    fields
}
