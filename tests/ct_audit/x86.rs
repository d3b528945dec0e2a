//! Reading `objdump -d -M intel --no-show-raw-insn` output: instructions and their operands,
//! registers folded to the architectural register they are part of.

/// An architectural register: the 16 general-purpose ones (rax = 0 … r15 = 15 in encoding
/// order), the 32 vector registers (xmm/ymm/zmm share one), the 8 mask registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reg {
    Gpr(u8),
    Vec(u8),
    Mask(u8),
    Rip,
}

pub const RAX: Reg = Reg::Gpr(0);
pub const RDX: Reg = Reg::Gpr(2);
pub const RSP: Reg = Reg::Gpr(4);
pub const RSI: Reg = Reg::Gpr(6);
pub const RDI: Reg = Reg::Gpr(7);

#[derive(Clone, Debug, PartialEq)]
pub struct Mem {
    pub base: Option<Reg>,
    pub index: Option<Reg>,
    pub disp: i64,
    /// Bytes accessed (8 when objdump names no size, as for `lea`).
    pub size: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register, whether the instruction names only part of it (8 or 16 bits: a write
    /// keeps the rest, so its old value stays in), and whether that part is the low byte.
    Reg {
        reg: Reg,
        partial: bool,
        low_byte: bool,
    },
    Imm,
    Mem(Mem),
    /// A jump or call target.
    Target(u64),
}

#[derive(Clone, Debug)]
pub struct Insn {
    pub addr: u64,
    pub mnemonic: String,
    pub operands: Vec<Operand>,
    /// The address objdump resolved in its `# …` comment (a RIP-relative operand's).
    pub comment_addr: Option<u64>,
    pub text: String,
}

impl Insn {
    pub fn is_conditional_jump(&self) -> bool {
        self.mnemonic.starts_with('j') && self.mnemonic != "jmp"
    }
}

/// The instructions of `objdump` output lines (`  addr:\tmnemonic operands  # comment`).
pub fn parse(listing: &str) -> Result<Vec<Insn>, String> {
    let mut out = Vec::new();
    for line in listing.lines() {
        let Some((addr, rest)) = line.trim_start().split_once(":\t") else { continue };
        let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else { continue };
        let (code, comment) = match rest.split_once('#') {
            Some((c, m)) => (c.trim(), Some(m.trim())),
            None => (rest.trim(), None),
        };
        let comment_addr =
            comment.and_then(|c| c.split_whitespace().next()).and_then(|a| u64::from_str_radix(a, 16).ok());
        let mut words = code.splitn(2, char::is_whitespace);
        let mut mnemonic = words.next().unwrap_or("").to_owned();
        let mut operand_text = words.next().unwrap_or("").trim().to_owned();
        // Prefixes that change nothing the analysis looks at.
        while matches!(mnemonic.as_str(), "data16" | "cs" | "ds" | "bnd" | "notrack" | "rex.W" | "addr32") {
            let mut words = operand_text.splitn(2, char::is_whitespace);
            mnemonic = words.next().unwrap_or("").to_owned();
            operand_text = words.next().unwrap_or("").trim().to_owned();
        }
        if mnemonic.is_empty() || mnemonic == "(bad)" {
            return Err(format!("{addr:x}: cannot read {code:?}"));
        }
        // A `nop`'s operand is never accessed (and may be segment-relative).
        let operands = if operand_text.is_empty() || mnemonic == "nop" {
            Vec::new()
        } else {
            operand_text
                .split(',')
                .map(|o| operand(o.trim(), &mnemonic))
                .collect::<Result<_, _>>()
                .map_err(|e| format!("{addr:x}: {e} in {code:?}"))?
        };
        out.push(Insn { addr, mnemonic, operands, comment_addr, text: code.to_owned() });
    }
    Ok(out)
}

fn operand(text: &str, mnemonic: &str) -> Result<Operand, String> {
    if (mnemonic.starts_with('j') || mnemonic == "call")
        && let Some(hex) = text.split_whitespace().next()
        && !text.contains('[')
        && let Ok(target) = u64::from_str_radix(hex, 16)
    {
        return Ok(Operand::Target(target));
    }
    if let Some(open) = text.find('[') {
        let close = text.find(']').ok_or("unclosed [")?;
        let size = match text[..open].split_whitespace().next() {
            Some("BYTE") => 1,
            Some("WORD") => 2,
            Some("DWORD") => 4,
            Some("QWORD") | None => 8,
            Some("TBYTE") => 10,
            Some("XMMWORD") => 16,
            Some("YMMWORD") => 32,
            Some("ZMMWORD") => 64,
            Some(other) => return Err(format!("unknown size {other}")),
        };
        if text[..open].contains(':') {
            return Err("segment-relative memory".into());
        }
        return address(&text[open + 1..close], size).map(Operand::Mem);
    }
    if let Some(reg) = register(text) {
        let partial = is_partial(text);
        let name = text.split('{').next().unwrap_or(text).trim();
        let low_byte = GPR8.contains(&name) || (name.starts_with('r') && name.ends_with('b') && name.len() <= 4);
        return Ok(Operand::Reg { reg, partial, low_byte });
    }
    if text.starts_with("0x") || text.chars().all(|c| c.is_ascii_digit()) {
        return Ok(Operand::Imm);
    }
    Err(format!("unknown operand {text:?}"))
}

/// `base+index*scale+disp` (any order, `-` for a negative displacement).
fn address(inner: &str, size: i64) -> Result<Mem, String> {
    let mut mem = Mem { base: None, index: None, disp: 0, size };
    let mut term = String::new();
    let mut sign = 1i64;
    let flush = |term: &str, sign: i64, mem: &mut Mem| -> Result<(), String> {
        if term.is_empty() {
            return Ok(());
        }
        if let Some(hex) = term.strip_prefix("0x") {
            let value = u64::from_str_radix(hex, 16).map_err(|_| format!("bad displacement {term}"))? as i64;
            mem.disp = mem.disp.wrapping_add(sign.wrapping_mul(value));
        } else if let Some((reg, _scale)) = term.split_once('*') {
            mem.index = Some(register(reg).ok_or(format!("bad index {reg}"))?);
        } else {
            let reg = register(term).ok_or(format!("bad base {term}"))?;
            if mem.base.is_none() { mem.base = Some(reg) } else { mem.index = Some(reg) }
        }
        Ok(())
    };
    for c in inner.chars() {
        if c == '+' || c == '-' {
            flush(&term, sign, &mut mem)?;
            term.clear();
            sign = if c == '-' { -1 } else { 1 };
        } else {
            term.push(c);
        }
    }
    flush(&term, sign, &mut mem)?;
    Ok(mem)
}

const GPR64: [&str; 16] =
    ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"];
const GPR32: [&str; 8] = ["eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"];
const GPR16: [&str; 8] = ["ax", "cx", "dx", "bx", "sp", "bp", "si", "di"];
const GPR8: [&str; 8] = ["al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil"];
const GPR8_HIGH: [&str; 4] = ["ah", "ch", "dh", "bh"];

/// The register a name is (part of), with `{k1}`/`{z}` decorations ignored by the caller.
pub fn register(name: &str) -> Option<Reg> {
    let name = name.split('{').next()?.trim();
    if name == "rip" {
        return Some(Reg::Rip);
    }
    for table in [&GPR64[..], &GPR32[..], &GPR16[..], &GPR8[..]] {
        if let Some(i) = table.iter().position(|&r| r == name) {
            return Some(Reg::Gpr(i as u8));
        }
    }
    if let Some(i) = GPR8_HIGH.iter().position(|&r| r == name) {
        return Some(Reg::Gpr(i as u8));
    }
    if let Some(rest) = name.strip_prefix('r') {
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        let suffix = &rest[digits.len()..];
        if let Ok(n) = digits.parse::<u8>()
            && (8..16).contains(&n)
            && matches!(suffix, "" | "d" | "w" | "b")
        {
            return Some(Reg::Gpr(n));
        }
    }
    for prefix in ["xmm", "ymm", "zmm"] {
        if let Some(n) = name.strip_prefix(prefix).and_then(|n| n.parse::<u8>().ok()) {
            return Some(Reg::Vec(n));
        }
    }
    if let Some(n) = name.strip_prefix('k').and_then(|n| n.parse::<u8>().ok())
        && n < 8
    {
        return Some(Reg::Mask(n));
    }
    None
}

/// An 8- or 16-bit general-purpose register name: a write to it keeps the rest of the register.
fn is_partial(name: &str) -> bool {
    let name = name.split('{').next().unwrap_or(name).trim();
    GPR16.contains(&name)
        || GPR8.contains(&name)
        || GPR8_HIGH.contains(&name)
        || (name.starts_with('r') && (name.ends_with('w') || name.ends_with('b')) && name.len() <= 4)
}

/// The mask register of an AVX-512 destination (`ymm1{k1}`), and whether it zeroes (`{z}`).
pub fn write_mask(operand_text: &str) -> Option<(Reg, bool)> {
    let open = operand_text.find("{k")?;
    let reg = register(&operand_text[open + 1..operand_text[open..].find('}')? + open])?;
    Some((reg, operand_text.contains("{z}")))
}
