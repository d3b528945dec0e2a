//! What one instruction does to the taint state: the transfer function of the analysis in
//! `analysis.rs` (moves, ALU and vector operations, flag writers and readers, stack-pointer
//! arithmetic), with the tables of mnemonics it models. Kept apart from the control-flow
//! walk so that each file holds one concept; moved verbatim from `analysis.rs`.

use super::analysis::Report;
use super::state::{PUBLIC, Ptr, State, Val};
use super::x86::{Insn, Mem, Operand, RAX, RDX, RSP, Reg, write_mask};

fn is_move(m: &str) -> bool {
    matches!(
        m,
        "mov"
            | "movabs"
            | "movzx"
            | "movsx"
            | "movsxd"
            | "movd"
            | "movq"
            | "movdqa"
            | "movdqu"
            | "movaps"
            | "movups"
            | "lea"
            | "vpmovsxdq"
            | "vpmovsxbq"
            | "vpmovzxbq"
            | "vpmovsxbw"
            | "vpmovzxdq"
    ) || (m.starts_with("vmov") && !m.starts_with("vmovhlps") && !m.starts_with("vmovlhps"))
        || m.starts_with("vpbroadcast")
        || m.starts_with("vbroadcast")
        || m.starts_with("kmov")
        || m.starts_with("vextract")
        || m.starts_with("vpextr")
        || m.starts_with("pextr")
}

/// Instructions whose first operand is read as well as written (besides two-operand ALU ones).
fn accumulates(m: &str) -> bool {
    m.starts_with("vpmadd52") || m.starts_with("vpternlog") || m.starts_with("vfmadd") || m.starts_with("vpdp")
}

const FLAG_WRITERS: &[&str] = &[
    "add", "sub", "and", "or", "xor", "adc", "sbb", "cmp", "test", "inc", "dec", "neg", "shl", "shr", "sar", "rol",
    "ror", "rcl", "rcr", "shld", "shrd", "imul", "mul", "bt", "bts", "btr", "btc", "andn", "bzhi", "bextr", "blsr",
    "blsi", "blsmsk", "popcnt", "lzcnt", "tzcnt", "bsf", "bsr", "adcx", "adox", "ptest", "vptest",
];
const FLAG_READERS: &[&str] = &["adc", "sbb", "adcx", "adox", "rcl", "rcr"];
/// Two-operand forms: the destination is read.
const READS_DEST: &[&str] = &[
    "add",
    "sub",
    "and",
    "or",
    "xor",
    "adc",
    "sbb",
    "inc",
    "dec",
    "neg",
    "not",
    "shl",
    "shr",
    "sar",
    "rol",
    "ror",
    "rcl",
    "rcr",
    "shld",
    "shrd",
    "adcx",
    "adox",
    "bswap",
    "bts",
    "btr",
    "btc",
    "pand",
    "pandn",
    "por",
    "pxor",
    "paddq",
    "paddd",
    "paddw",
    "paddb",
    "psubq",
    "psubd",
    "pmullw",
    "pmuludq",
    "psrlw",
    "psrlq",
    "psrld",
    "psllw",
    "psllq",
    "pslld",
    "psraw",
    "psrad",
    "psrldq",
    "pslldq",
    "punpcklbw",
    "punpckhbw",
    "punpcklqdq",
    "punpckhqdq",
    "punpckldq",
    "punpckhdq",
    "packuswb",
    "packsswb",
    "pcmpeqb",
    "pcmpeqd",
    "pcmpeqq",
    "pcmpgtb",
    "pcmpgtd",
    "pmaxub",
    "pminub",
    "pshufb",
];
const NO_EFFECT: &[&str] = &["nop", "endbr64", "vzeroupper", "lfence", "pause", "prefetcht0", "prefetcht1"];

/// One instruction other than a jump, call or return.
pub fn step(insn: &Insn, state: &mut State, report: &mut Report) {
    let m = insn.mnemonic.as_str();
    if NO_EFFECT.contains(&m) {
        return;
    }
    let ops = &insn.operands;
    // Every memory operand of an instruction that accesses memory: its address must be public.
    if m != "lea" {
        for op in ops {
            if let Operand::Mem(mem) = op {
                report.memory_operands += 1;
                let secret_base = mem.base.is_some_and(|r| state.get(r).secret);
                let secret_index = mem.index.is_some_and(|r| state.get(r).secret);
                if secret_base || secret_index {
                    report.findings.push(format!("{:x}: memory address from a secret: {}", insn.addr, insn.text));
                }
            }
        }
    }
    let read = |state: &State, op: &Operand, report: &mut Report| -> Val {
        match op {
            Operand::Reg { reg, low_byte: true, .. } => Val { secret: state.get_low(*reg), ptr: Ptr::None },
            Operand::Reg { reg, .. } => state.get(*reg),
            Operand::Imm | Operand::Target(_) => PUBLIC,
            Operand::Mem(mem) => state.load(mem, report),
        }
    };
    let write = |state: &mut State, op: &Operand, v: Val| match op {
        Operand::Reg { reg, partial, low_byte } => state.set_part(*reg, v, *partial, *low_byte),
        Operand::Mem(mem) => state.store(mem, v),
        _ => {}
    };
    let or = |vals: &[Val]| Val { secret: vals.iter().any(|v| v.secret), ptr: Ptr::None };
    let same_register = ops.len() >= 2
        && matches!((&ops[ops.len() - 2], &ops[ops.len() - 1]), (Operand::Reg { reg: a, .. }, Operand::Reg { reg: b, .. }) if a == b);
    let zero_idiom = same_register
        && ((matches!(m, "xor" | "sub" | "pxor" | "xorps") && ops.len() == 2)
            || (matches!(m, "vpxor" | "vpxord" | "vpxorq" | "vxorps" | "vxorpd" | "vpsubq" | "vpsubd")
                && ops.len() == 3));
    let mask = write_mask(&insn.text).map(|(k, _)| state.get(k).secret).unwrap_or(false);
    let masked = insn.text.contains("{k");

    match m {
        "cmp" | "test" | "bt" | "ptest" | "vptest" => {
            let inputs: Vec<Val> = ops.iter().map(|o| read(state, o, report)).collect();
            state.flags = or(&inputs).secret;
        }
        _ if m.starts_with("ktest") || m.starts_with("kortest") => {
            state.flags = ops.iter().any(|o| read(state, o, report).secret);
        }
        "push" => {
            let v = read(state, &ops[0], report);
            adjust_rsp(state, -8);
            state.store(&Mem { base: Some(RSP), index: None, disp: 0, size: 8 }, v);
        }
        "pop" => {
            let v = state.load(&Mem { base: Some(RSP), index: None, disp: 0, size: 8 }, report);
            adjust_rsp(state, 8);
            write(state, &ops[0], v);
        }
        "lea" => {
            let Operand::Mem(mem) = &ops[1] else { return unknown(insn, report) };
            let secret =
                mem.base.is_some_and(|r| state.get(r).secret) || mem.index.is_some_and(|r| state.get(r).secret);
            let ptr = state.address(mem);
            let ptr = if ptr == Ptr::Public && mem.base.is_none() { Ptr::None } else { ptr };
            write(state, &ops[0], Val { secret, ptr });
        }
        "xchg" => {
            let (a, b) = (read(state, &ops[0], report), read(state, &ops[1], report));
            write(state, &ops[0], b);
            write(state, &ops[1], a);
        }
        "cqo" | "cdq" | "cwd" => {
            let a = state.get(RAX);
            state.set(RDX, Val { secret: a.secret, ptr: Ptr::None }, false);
        }
        "cdqe" | "cwde" | "cbw" => {}
        "mulx" => {
            let v = or(&[state.get(RDX), read(state, &ops[2], report)]);
            write(state, &ops[0], v);
            write(state, &ops[1], v);
        }
        "mul" | "div" | "idiv" if ops.len() == 1 => {
            let v =
                or(&[state.get(RAX), read(state, &ops[0], report), if m == "mul" { PUBLIC } else { state.get(RDX) }]);
            if m != "mul" && v.secret {
                report
                    .findings
                    .push(format!("{:x}: division of a secret (variable latency): {}", insn.addr, insn.text));
            }
            state.set(RAX, v, false);
            state.set(RDX, v, false);
            state.flags = v.secret;
        }
        "imul" if ops.len() == 1 => {
            let v = or(&[state.get(RAX), read(state, &ops[0], report)]);
            state.set(RAX, v, false);
            state.set(RDX, v, false);
            state.flags = v.secret;
        }
        "imul" => {
            let mut inputs: Vec<Val> = ops[1..].iter().map(|o| read(state, o, report)).collect();
            if ops.len() == 2 {
                inputs.push(read(state, &ops[0], report));
            }
            let v = or(&inputs);
            write(state, &ops[0], v);
            state.flags = v.secret;
        }
        _ if m.starts_with("cmov") => {
            let v = or(&[
                read(state, &ops[0], report),
                read(state, &ops[1], report),
                Val { secret: state.flags, ptr: Ptr::None },
            ]);
            write(state, &ops[0], v);
        }
        _ if m.starts_with("set") => {
            write(state, &ops[0], Val { secret: state.flags, ptr: Ptr::None });
        }
        _ if is_move(m) => {
            let mut v = read(state, ops.last().filter(|_| ops.len() == 2).unwrap_or(&ops[1]), report);
            if ops.len() > 2 && !matches!(ops.last(), Some(Operand::Imm)) {
                v = or(&ops[1..].iter().map(|o| read(state, o, report)).collect::<Vec<_>>());
            }
            if masked {
                v = or(&[v, read(state, &ops[0], report), Val { secret: mask, ptr: Ptr::None }]);
            }
            if matches!(m, "movzx" | "movsx" | "movsxd" | "movd") {
                v.ptr = Ptr::None;
            }
            write(state, &ops[0], v);
            // A whole-register copy copies the low byte's taint too.
            if let (
                "mov",
                [
                    Operand::Reg { reg: to @ Reg::Gpr(_), partial: false, .. },
                    Operand::Reg { reg: from @ Reg::Gpr(_), partial: false, .. },
                ],
            ) = (m, &ops[..])
                && !masked
            {
                let low = state.get_low(*from);
                if let Reg::Gpr(n) = to {
                    state.gpr_low[*n as usize] = low;
                }
            }
        }
        _ if zero_idiom => {
            write(state, &ops[0], PUBLIC);
            if FLAG_WRITERS.contains(&m) {
                state.flags = false;
            }
        }
        _ if matches!(ops.first(), Some(Operand::Reg { reg, .. }) if *reg == RSP)
            && matches!(m, "add" | "sub" | "and") =>
        {
            rsp_arithmetic(insn, state, report)
        }
        _ if READS_DEST.contains(&m) || accumulates(m) || m.starts_with('v') || is_bmi(m) => {
            let reads_dest = READS_DEST.contains(&m) || accumulates(m) || masked;
            let sources = if reads_dest { &ops[..] } else { &ops[1..] };
            let mut inputs: Vec<Val> = sources.iter().map(|o| read(state, o, report)).collect();
            if FLAG_READERS.contains(&m) {
                inputs.push(Val { secret: state.flags, ptr: Ptr::None });
            }
            inputs.push(Val { secret: mask, ptr: Ptr::None });
            let mut v = or(&inputs);
            // Pointer arithmetic by a constant keeps the pointer.
            if matches!(m, "add" | "sub")
                && matches!(ops[1], Operand::Imm)
                && let Operand::Reg { reg, partial: false, .. } = ops[0]
            {
                v.ptr = state.get(reg).ptr;
            }
            write(state, &ops[0], v);
            if FLAG_WRITERS.contains(&m) {
                state.flags = v.secret;
            }
        }
        _ => unknown(insn, report),
    }
}

fn is_bmi(m: &str) -> bool {
    matches!(
        m,
        "andn"
            | "bzhi"
            | "bextr"
            | "shlx"
            | "shrx"
            | "sarx"
            | "rorx"
            | "pdep"
            | "pext"
            | "pshufd"
            | "pshuflw"
            | "pshufhw"
    )
}

pub fn adjust_rsp(state: &mut State, by: i64) {
    let rsp = state.get(RSP);
    let ptr = match rsp.ptr {
        Ptr::Stack(o) => Ptr::Stack(o + by),
        other => other,
    };
    state.set(RSP, Val { secret: rsp.secret, ptr }, false);
}

/// `sub rsp, imm` / `add rsp, imm` move the frame; anything else loses track of it.
fn rsp_arithmetic(insn: &Insn, state: &mut State, report: &mut Report) {
    let by = insn
        .text
        .rsplit(',')
        .next()
        .and_then(|t| t.trim().strip_prefix("0x"))
        .and_then(|h| i64::from_str_radix(h, 16).ok());
    match (insn.mnemonic.as_str(), by) {
        ("sub", Some(n)) => adjust_rsp(state, -n),
        ("add", Some(n)) => adjust_rsp(state, n),
        _ => {
            report.findings.push(format!("{:x}: the stack pointer is no longer known: {}", insn.addr, insn.text));
            state.set(RSP, Val { secret: false, ptr: Ptr::StackAny }, false);
        }
    }
}

fn unknown(insn: &Insn, report: &mut Report) {
    report.findings.push(format!("{:x}: an instruction the audit has no model for: {}", insn.addr, insn.text));
}
