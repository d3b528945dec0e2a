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

use super::instructions::{adjust_rsp, step};
use super::state::{Ptr, State, Val};
use super::x86::{Insn, Operand, RDI, Reg};
use std::collections::{BTreeMap, BTreeSet, HashMap};

#[derive(Default, Debug)]
pub struct Report {
    pub findings: Vec<String>,
    pub conditional_jumps: usize,
    pub memory_operands: usize,
    pub secret_loads: usize,
    pub calls: BTreeSet<String>,
    /// What may be secret before each instruction of the audited function itself (not of its
    /// callees): where a leak planted into a copy of its code must be caught (`ct_audit.rs`).
    pub secret_before: BTreeMap<u64, SecretBefore>,
}

#[derive(Debug)]
pub struct SecretBefore {
    pub flags: bool,
    /// The general-purpose registers (rax = 0 … r15 = 15) that may hold a secret.
    pub gprs: Vec<u8>,
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
            let gprs = (0..16).filter(|&n| state.get(Reg::Gpr(n)).secret).collect();
            report.secret_before.insert(insn.addr, SecretBefore { flags: state.flags, gprs });
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

/// A pointer to the secret input.
pub const SECRET_INPUT: Val = Val { secret: false, ptr: Ptr::Secret };
/// A pointer to the output.
pub const OUTPUT: Val = Val { secret: false, ptr: Ptr::Out };
