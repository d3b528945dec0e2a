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

use super::x86::{Insn, Mem, Operand, RAX, RDI, RDX, RSP, Reg, write_mask};
use std::collections::{BTreeMap, BTreeSet, HashMap};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ptr {
    None,
    /// The stack, at this offset from the entry `rsp`.
    Stack(i64),
    /// The stack, somewhere in the object that starts at (or contains) this offset.
    StackIn(i64),
    StackAny,
    Secret,
    Out,
    Public,
}

impl Ptr {
    fn join(self, other: Ptr) -> Ptr {
        use Ptr::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Stack(a) | StackIn(a), Stack(b) | StackIn(b)) => StackIn(a.min(b)),
            (Stack(_) | StackIn(_) | StackAny, Stack(_) | StackIn(_) | StackAny) => StackAny,
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Val {
    pub secret: bool,
    pub ptr: Ptr,
}

pub const PUBLIC: Val = Val { secret: false, ptr: Ptr::None };
const SECRET: Val = Val { secret: true, ptr: Ptr::None };

/// The stack window tracked byte by byte, relative to the entry `rsp`.
const LOW: i64 = -16384;
const HIGH: i64 = 256;
const WORDS: usize = ((HIGH - LOW) / 64) as usize;

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct State {
    gpr: [Val; 16],
    /// The low byte of each general-purpose register on its own: `mov r9b, 1` makes it public
    /// whatever the rest of r9 holds, and `test r9b, 1` reads only it.
    gpr_low: [bool; 16],
    vec: [bool; 32],
    mask: [bool; 8],
    flags: bool,
    stack: Vec<u64>,
    stack_ptrs: BTreeMap<i64, Ptr>,
    stack_unknown: bool,
    /// Stack objects of known extent (offset → size): the output of a helper whose Rust
    /// signature fixes its size. A store at an unknown offset into one stays inside it.
    objects: BTreeMap<i64, i64>,
    out: bool,
    elsewhere: bool,
}

impl State {
    /// The entry state: `rsp` at offset 0, `args` as given, everything else public.
    pub fn entry(args: &[(Reg, Val)]) -> State {
        let mut s = State {
            gpr: [PUBLIC; 16],
            gpr_low: [false; 16],
            vec: [false; 32],
            mask: [false; 8],
            flags: false,
            stack: vec![0; WORDS],
            stack_ptrs: BTreeMap::new(),
            stack_unknown: false,
            objects: BTreeMap::new(),
            out: false,
            elsewhere: false,
        };
        s.set(RSP, Val { secret: false, ptr: Ptr::Stack(0) }, false);
        for &(reg, val) in args {
            s.set(reg, val, false);
        }
        s
    }

    fn join(&mut self, other: &State) -> bool {
        let before = self.clone();
        for (a, b) in self.gpr.iter_mut().zip(&other.gpr) {
            *a = Val { secret: a.secret | b.secret, ptr: a.ptr.join(b.ptr) };
        }
        for (a, b) in self.gpr_low.iter_mut().zip(&other.gpr_low) {
            *a |= b;
        }
        for (a, b) in self.vec.iter_mut().zip(&other.vec) {
            *a |= b;
        }
        for (a, b) in self.mask.iter_mut().zip(&other.mask) {
            *a |= b;
        }
        self.flags |= other.flags;
        for (a, b) in self.stack.iter_mut().zip(&other.stack) {
            *a |= b;
        }
        let keys: BTreeSet<i64> = self.stack_ptrs.keys().chain(other.stack_ptrs.keys()).copied().collect();
        for k in keys {
            let joined = self
                .stack_ptrs
                .get(&k)
                .copied()
                .unwrap_or(Ptr::None)
                .join(other.stack_ptrs.get(&k).copied().unwrap_or(Ptr::None));
            self.stack_ptrs.insert(k, joined);
        }
        self.stack_unknown |= other.stack_unknown;
        for (&k, &v) in &other.objects {
            let size = self.objects.entry(k).or_insert(v);
            *size = (*size).max(v);
        }
        self.out |= other.out;
        self.elsewhere |= other.elsewhere;
        *self != before
    }

    pub fn get(&self, r: Reg) -> Val {
        match r {
            Reg::Gpr(n) => self.gpr[n as usize],
            Reg::Vec(n) => Val { secret: self.vec[n as usize], ptr: Ptr::None },
            Reg::Mask(n) => Val { secret: self.mask[n as usize], ptr: Ptr::None },
            Reg::Rip => Val { secret: false, ptr: Ptr::Public },
        }
    }

    /// The low byte of a general-purpose register.
    fn get_low(&self, r: Reg) -> bool {
        match r {
            Reg::Gpr(n) => self.gpr_low[n as usize],
            other => self.get(other).secret,
        }
    }

    fn set(&mut self, r: Reg, v: Val, partial: bool) {
        self.set_part(r, v, partial, false);
    }

    /// A write of the whole register, or of part of it (`partial`), the low byte (`low_byte`)
    /// or another part: the rest keeps its old value.
    fn set_part(&mut self, r: Reg, v: Val, partial: bool, low_byte: bool) {
        if let Reg::Gpr(n) = r {
            let n = n as usize;
            self.gpr_low[n] = if partial && !low_byte { self.gpr_low[n] | v.secret } else { v.secret };
        }
        let v = if partial { Val { secret: v.secret | self.get(r).secret, ptr: Ptr::None } } else { v };
        match r {
            Reg::Gpr(n) => self.gpr[n as usize] = v,
            Reg::Vec(n) => self.vec[n as usize] = v.secret,
            Reg::Mask(n) => self.mask[n as usize] = v.secret,
            Reg::Rip => {}
        }
    }

    /// Into what memory an address points.
    fn address(&self, m: &Mem) -> Ptr {
        let base = m.base.map(|b| self.get(b).ptr);
        let index = m.index.map(|i| self.get(i).ptr);
        let from = |p: Ptr, indexed: bool| match p {
            Ptr::Stack(o) if !indexed => Ptr::Stack(o.wrapping_add(m.disp)),
            Ptr::Stack(o) => Ptr::StackIn(o),
            other => other,
        };
        match (m.base, base, index) {
            (Some(Reg::Rip), _, _) | (None, _, None) => Ptr::Public,
            (_, Some(p), _) if p != Ptr::None => from(p, m.index.is_some()),
            (_, _, Some(p)) if p != Ptr::None => from(p, true),
            _ => Ptr::None,
        }
    }

    fn stack_bits(&self, from: i64, len: i64) -> Option<bool> {
        if from < LOW || from + len > HIGH {
            return None;
        }
        Some((from..from + len).any(|o| {
            let bit = (o - LOW) as usize;
            self.stack[bit / 64] >> (bit % 64) & 1 == 1
        }))
    }

    fn any_stack_secret(&self) -> bool {
        self.stack_unknown || self.stack.iter().any(|&w| w != 0)
    }

    /// The known object holding offset `o`.
    fn object(&self, o: i64) -> Option<(i64, i64)> {
        self.objects.range(..=o).next_back().filter(|&(&b, &size)| o < b + size).map(|(&b, &size)| (b, size))
    }

    fn set_stack_bits(&mut self, from: i64, len: i64, secret: bool, strong: bool) {
        for byte in from..from + len {
            let bit = (byte - LOW) as usize;
            if secret {
                self.stack[bit / 64] |= 1 << (bit % 64);
            } else if strong {
                self.stack[bit / 64] &= !(1 << (bit % 64));
            }
        }
    }

    fn load(&self, m: &Mem, report: &mut Report) -> Val {
        match self.address(m) {
            Ptr::Stack(o) => match self.stack_bits(o, m.size) {
                Some(secret) => {
                    let ptr =
                        if m.size == 8 { self.stack_ptrs.get(&o).copied().unwrap_or(Ptr::None) } else { Ptr::None };
                    // A spilled pointer is not an array's element (see the module's doc).
                    Val { secret: secret | (self.stack_unknown && ptr == Ptr::None), ptr }
                }
                None => Val { secret: self.any_stack_secret(), ptr: Ptr::None },
            },
            Ptr::StackIn(o) => match self.object(o).and_then(|(b, size)| self.stack_bits(b, size)) {
                Some(secret) => Val { secret: secret | self.stack_unknown, ptr: Ptr::None },
                None => Val { secret: self.any_stack_secret(), ptr: Ptr::None },
            },
            Ptr::StackAny => Val { secret: self.any_stack_secret(), ptr: Ptr::None },
            Ptr::Secret => {
                report.secret_loads += 1;
                SECRET
            }
            Ptr::Out => Val { secret: self.out, ptr: Ptr::None },
            // Static data is public, unless something secret was ever stored outside the stack
            // and the output (nothing is, in the audited code).
            Ptr::Public => Val { secret: self.elsewhere, ptr: if m.size == 8 { Ptr::Public } else { Ptr::None } },
            Ptr::None => Val { secret: true, ptr: Ptr::None },
        }
    }

    fn store(&mut self, m: &Mem, v: Val) {
        match self.address(m) {
            Ptr::Stack(o) if o >= LOW && o + m.size <= HIGH => {
                self.set_stack_bits(o, m.size, v.secret, true);
                let overlapping: Vec<i64> = self.stack_ptrs.range(o - 7..o + m.size).map(|(&k, _)| k).collect();
                for k in overlapping {
                    self.stack_ptrs.remove(&k);
                }
                if m.size == 8 && v.ptr != Ptr::None {
                    self.stack_ptrs.insert(o, v.ptr);
                }
            }
            Ptr::StackIn(o) if self.object(o).is_some_and(|(b, size)| b >= LOW && b + size <= HIGH) => {
                let (b, size) = self.object(o).unwrap_or((0, 0));
                self.set_stack_bits(b, size, v.secret, false);
            }
            Ptr::Stack(_) | Ptr::StackIn(_) | Ptr::StackAny => self.stack_unknown |= v.secret,
            Ptr::Out => self.out |= v.secret,
            Ptr::Secret | Ptr::Public | Ptr::None => self.elsewhere |= v.secret,
        }
    }
}

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
