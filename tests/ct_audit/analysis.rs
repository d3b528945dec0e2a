//! Where secret data can flow in a function's machine code: a forward taint analysis over its
//! control-flow graph, to a fixed point.
//!
//! The state says, for every register, the flags and every byte of the stack frame, whether
//! it may hold a value computed from the secret (the scalar the function is given), and for
//! registers and stack slots that hold pointers, into what memory they point: the stack (at a
//! known offset from the entry `rsp`, or somewhere), the secret input, the output, or public
//! memory (static data: the tables, constants). Loads through a pointer take the taint of what
//! it points to; every instruction's result is secret if any input is (zero idioms aside).
//!
//! A finding is a conditional jump whose flags may be secret, a memory operand whose base or
//! index register may be secret, a division of a secret (variable latency), an indirect call,
//! or an instruction the analysis has no model for. A function called out of line is analysed
//! at each call, from the caller's state (so its own branches and addresses are audited too);
//! a function that never returns (a panic after a failed bounds check) ends the path.
//!
//! Sound for the code it accepts, up to stated assumptions: a store at an unknown stack offset
//! (an array element, at a public address) stays inside its object (Rust's memory safety): it
//! taints that whole object when the object's extent is known (a helper's returned array), and
//! otherwise every stack load but those of spilled pointers; and the flags are one value (a
//! secret carry flag taints every flag).

use super::state::{PUBLIC, Ptr, State, Val};
use super::x86::{Insn, Mem, Operand, RAX, RDI, RDX, RSP, Reg, write_mask};
use std::collections::{BTreeMap, BTreeSet, HashMap};

#[derive(Default, Debug)]
pub struct Report {
    pub findings: Vec<String>,
    pub conditional_jumps: usize,
    pub memory_operands: usize,
    pub secret_loads: usize,
    pub calls: BTreeSet<String>,
}

/// What the analysis needs to know about the binary.
pub trait Binary {
    /// The symbol at an address.
    fn name(&self, addr: u64) -> String;
    /// The function a GOT slot holds.
    fn got(&self, slot: u64) -> Option<u64>;
    /// The instructions of the function at `addr`, if it is one.
    fn function(&self, addr: u64) -> Option<std::rc::Rc<Vec<Insn>>>;
    /// The size of the object a helper's first pointer argument (`rdi`) points to, when its
    /// Rust signature fixes it (a returned array).
    fn output_size(&self, name: &str) -> Option<i64>;
}

fn call_target(binary: &dyn Binary, insn: &Insn) -> Option<u64> {
    match insn.operands.first()? {
        Operand::Target(t) => Some(*t),
        Operand::Mem(m) if m.base == Some(Reg::Rip) => binary.got(insn.comment_addr?),
        _ => None,
    }
}

/// Functions that do not return (panics, failed bounds checks): a path that calls one ends.
fn never_returns(name: &str) -> bool {
    ["panic", "_fail", "handle_alloc_error", "abort", "unwrap_failed", "expect_failed"].iter().any(|w| name.contains(w))
}

/// Audit one function: its instructions (in address order) and the state at its entry. The
/// report, and the state at its returns (`None` if it never returns).
pub fn audit(insns: &[Insn], entry: State, binary: &dyn Binary, depth: usize) -> (Report, Option<State>) {
    let start = insns.first().map_or(0, |i| i.addr);
    let end = insns.last().map_or(0, |i| i.addr + 1);
    let position: HashMap<u64, usize> = insns.iter().enumerate().map(|(i, insn)| (insn.addr, i)).collect();
    // Block leaders: the entry, jump targets, and what follows a jump, return or trap.
    let mut leaders = BTreeSet::from([0usize]);
    for (i, insn) in insns.iter().enumerate() {
        let m = insn.mnemonic.as_str();
        if m.starts_with('j')
            && let Some(Operand::Target(t)) = insn.operands.first()
            && let Some(&p) = position.get(t)
        {
            leaders.insert(p);
        }
        if m.starts_with('j') || matches!(m, "ret" | "int3" | "ud2" | "call") {
            leaders.insert(i + 1);
        }
    }
    let mut in_states: BTreeMap<usize, State> = BTreeMap::from([(0, entry)]);
    let mut work: BTreeSet<usize> = BTreeSet::from([0]);
    let mut scratch = Report::default();
    let cfg = Cfg { insns, leaders: &leaders, position: &position, range: (start, end), binary, depth };
    while let Some(&block) = work.iter().next() {
        work.remove(&block);
        let state = in_states[&block].clone();
        for (successor, out) in cfg.run_block(block, state, &mut scratch, &mut None) {
            match in_states.get_mut(&successor) {
                Some(existing) => {
                    if existing.join(&out) {
                        work.insert(successor);
                    }
                }
                None => {
                    in_states.insert(successor, out);
                    work.insert(successor);
                }
            }
        }
    }
    // The final pass, on the fixed point: findings, counts, and the state at the returns.
    let mut report = Report::default();
    let mut exit: Option<State> = None;
    for (&block, state) in &in_states {
        cfg.run_block(block, state.clone(), &mut report, &mut exit);
    }
    report.findings.sort();
    report.findings.dedup();
    (report, exit)
}

struct Cfg<'a> {
    insns: &'a [Insn],
    leaders: &'a BTreeSet<usize>,
    position: &'a HashMap<u64, usize>,
    range: (u64, u64),
    binary: &'a dyn Binary,
    depth: usize,
}

impl Cfg<'_> {
    /// Run one block from `state`; its successors and their states (and the state at a
    /// return, joined into `exit`).
    fn run_block(
        &self,
        block: usize,
        mut state: State,
        report: &mut Report,
        exit: &mut Option<State>,
    ) -> Vec<(usize, State)> {
        let (start, end) = self.range;
        let target = |insn: &Insn| match insn.operands.first() {
            Some(Operand::Target(t)) if (start..end).contains(t) => self.position.get(t).copied(),
            _ => None,
        };
        let mut i = block;
        while i < self.insns.len() {
            let insn = &self.insns[i];
            match insn.mnemonic.as_str() {
                "ret" => {
                    adjust_rsp(&mut state, 8);
                    match exit {
                        Some(e) => {
                            e.join(&state);
                        }
                        None => *exit = Some(state),
                    }
                    return Vec::new();
                }
                "int3" | "ud2" | "hlt" => return Vec::new(),
                "jmp" => {
                    return match target(insn) {
                        Some(t) => vec![(t, state)],
                        None => {
                            report.findings.push(format!("{:x}: jump out of the function: {}", insn.addr, insn.text));
                            Vec::new()
                        }
                    };
                }
                _ if insn.is_conditional_jump() => {
                    report.conditional_jumps += 1;
                    if state.flags {
                        report
                            .findings
                            .push(format!("{:x}: conditional jump on secret flags: {}", insn.addr, insn.text));
                    }
                    let mut next = Vec::new();
                    match target(insn) {
                        Some(t) => next.push((t, state.clone())),
                        None => {
                            report.findings.push(format!("{:x}: jump out of the function: {}", insn.addr, insn.text))
                        }
                    }
                    next.push((i + 1, state));
                    return next;
                }
                "call" => match self.call(insn, state, report) {
                    Some(after) => state = after,
                    None => return Vec::new(),
                },
                _ => step(insn, &mut state, report),
            }
            i += 1;
            if self.leaders.contains(&i) {
                return vec![(i, state)];
            }
        }
        Vec::new()
    }

    /// A call: the callee analysed from here; a function that never returns ends the path.
    fn call(&self, insn: &Insn, mut state: State, report: &mut Report) -> Option<State> {
        let Some(target) = call_target(self.binary, insn) else {
            report.findings.push(format!("{:x}: indirect call: {}", insn.addr, insn.text));
            return None;
        };
        let name = self.binary.name(target);
        report.calls.insert(name.clone());
        if never_returns(&name) {
            return None;
        }
        let Some(callee) = self.binary.function(target).filter(|_| self.depth < 8) else {
            report.findings.push(format!("{:x}: call to {name}, which the audit cannot read", insn.addr));
            return None;
        };
        if let (Some(size), Ptr::Stack(o)) = (self.binary.output_size(&name), state.get(RDI).ptr) {
            state.objects.insert(o, size);
        }
        adjust_rsp(&mut state, -8);
        let (inner, exit) = audit(&callee, state, self.binary, self.depth + 1);
        report.conditional_jumps += inner.conditional_jumps;
        report.memory_operands += inner.memory_operands;
        report.secret_loads += inner.secret_loads;
        report.calls.extend(inner.calls);
        report.findings.extend(inner.findings.into_iter().map(|f| format!("in {name}: {f}")));
        exit
    }
}

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
fn step(insn: &Insn, state: &mut State, report: &mut Report) {
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

fn adjust_rsp(state: &mut State, by: i64) {
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

/// A pointer to the secret input.
pub const SECRET_INPUT: Val = Val { secret: false, ptr: Ptr::Secret };
/// A pointer to the output.
pub const OUTPUT: Val = Val { secret: false, ptr: Ptr::Out };
