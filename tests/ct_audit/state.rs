//! The analysis state (`analysis.rs`): for every register, the flags and every byte of the
//! stack frame, whether it may hold a value computed from the secret; for registers and spilled
//! pointers, into what memory they point; loads and stores through them.

use super::analysis::Report;
use super::x86::{Mem, RSP, Reg};
use std::collections::{BTreeMap, BTreeSet};

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
pub const SECRET: Val = Val { secret: true, ptr: Ptr::None };

/// The stack window tracked byte by byte, relative to the entry `rsp`.
const LOW: i64 = -16384;
const HIGH: i64 = 256;
const WORDS: usize = ((HIGH - LOW) / 64) as usize;

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct State {
    pub gpr: [Val; 16],
    /// The low byte of each general-purpose register on its own: `mov r9b, 1` makes it public
    /// whatever the rest of r9 holds, and `test r9b, 1` reads only it.
    pub gpr_low: [bool; 16],
    pub vec: [bool; 32],
    pub mask: [bool; 8],
    pub flags: bool,
    pub stack: Vec<u64>,
    pub stack_ptrs: BTreeMap<i64, Ptr>,
    pub stack_unknown: bool,
    /// Stack objects of known extent (offset → size): the output of a helper whose Rust
    /// signature fixes its size. A store at an unknown offset into one stays inside it.
    pub objects: BTreeMap<i64, i64>,
    pub out: bool,
    pub elsewhere: bool,
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

    pub fn join(&mut self, other: &State) -> bool {
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
    pub fn get_low(&self, r: Reg) -> bool {
        match r {
            Reg::Gpr(n) => self.gpr_low[n as usize],
            other => self.get(other).secret,
        }
    }

    pub fn set(&mut self, r: Reg, v: Val, partial: bool) {
        self.set_part(r, v, partial, false);
    }

    /// A write of the whole register, or of part of it (`partial`), the low byte (`low_byte`)
    /// or another part: the rest keeps its old value.
    pub fn set_part(&mut self, r: Reg, v: Val, partial: bool, low_byte: bool) {
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
    pub fn address(&self, m: &Mem) -> Ptr {
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

    pub fn load(&self, m: &Mem, report: &mut Report) -> Val {
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

    pub fn store(&mut self, m: &Mem, v: Val) {
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
