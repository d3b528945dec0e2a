//! Arithmetic modulo p = 2^255 - 19 on four 64-bit limbs, in x86-64 assembly for CPUs with BMI2
//! (`mulx`) and ADX (`adcx`/`adox`), constant time.
//!
//! Why a second representation: a product of two five-limb elements (`field.rs`) is 25 64-bit
//! multiplications and about 190 instructions; on four limbs it is 16 + 4 multiplications and
//! about 100 instructions, because `adcx` and `adox` keep two carry chains in flight at once.
//! Measured one after another on this project's benchmark machine: 7.3 ns against 10.5 ns per
//! product. The fixed-base multiplication spends most of its time in products.
//!
//! An element is any 256-bit value `l[0] + l[1]·2^64 + l[2]·2^128 + l[3]·2^192`, standing for
//! its residue mod p; nothing is kept reduced, so there are no limb bounds to track: every
//! operation takes any four words and returns four words. Reduction uses 2^256 = 38 (mod p).
//! Only [`FieldElement::to_bytes`] reduces fully.
//!
//! Every function here executes `mulx`/`adcx`/`adox`: call them only from code that checked
//! the CPU has BMI2 and ADX (`curve.rs` does, once per signature). Nothing branches on, or
//! indexes memory by, an element's value: the assembly is additions, subtractions with borrow,
//! multiplications and masks; `tests/constant_time.rs` checks it under valgrind.

use super::field::{Fe, FieldElement, le_bytes, le_words};
use std::arch::asm;

#[derive(Clone, Copy)]
pub(crate) struct Fe64(pub(crate) [u64; 4]);

/// `r0..r3 += 38·(r4..r7)`, leaving a 256-bit value. Clobbers r4..r7, lo, hi and rdx; expects
/// none of the flags. Shared by the product and the square.
macro_rules! fold_high_half {
    () => {
        concat!(
            // 38·(r4..r7) as five words (r4, hi, r5, r6, r7), one carry chain.
            "mov rdx, 38\n",
            "mulx {hi}, {r4}, {r4}\n",
            "mulx {r5}, {lo}, {r5}\n",
            "add {hi}, {lo}\n",
            "mulx {r6}, {lo}, {r6}\n",
            "adc {r5}, {lo}\n",
            "mulx {r7}, {lo}, {r7}\n",
            "adc {r6}, {lo}\n",
            "adc {r7}, 0\n",
            // Added to the low half; the word above it (r7, at most 38) is folded again.
            "add {r0}, {r4}\n",
            "adc {r1}, {hi}\n",
            "adc {r2}, {r5}\n",
            "adc {r3}, {r6}\n",
            "adc {r7}, 0\n",
            "imul {r7}, {r7}, 38\n",
            "add {r0}, {r7}\n",
            "adc {r1}, 0\n",
            "adc {r2}, 0\n",
            "adc {r3}, 0\n",
            // A carry out here means the sum wrapped to a value below 38·39, so adding 38 for
            // the lost 2^256 cannot carry again.
            "sbb {r7}, {r7}\n",
            "and {r7}, 38\n",
            "add {r0}, {r7}\n",
        )
    };
}

/// One row of the schoolbook product: `r(i)..r(i+4) += rdx · b`, with the low halves on the
/// overflow-flag chain (`adox`) and the high halves on the carry-flag chain (`adcx`). r(i+4) is
/// written, not added to: it is the row's top word plus the two chains' last carries.
#[rustfmt::skip]
macro_rules! product_row {
    ($ri:literal, $r1:literal, $r2:literal, $r3:literal, $r4:literal) => {
        concat!(
            "xor {lo:e}, {lo:e}\n", // clears both flags
            "mulx {hi}, {lo}, [{pb}]\n",
            "adox {", $ri, "}, {lo}\n",
            "adcx {", $r1, "}, {hi}\n",
            "mulx {hi}, {lo}, [{pb} + 8]\n",
            "adox {", $r1, "}, {lo}\n",
            "adcx {", $r2, "}, {hi}\n",
            "mulx {hi}, {lo}, [{pb} + 16]\n",
            "adox {", $r2, "}, {lo}\n",
            "adcx {", $r3, "}, {hi}\n",
            "mulx {", $r4, "}, {lo}, [{pb} + 24]\n",
            "adox {", $r3, "}, {lo}\n",
            "mov {lo:e}, 0\n", // mov leaves the flags alone
            "adcx {", $r4, "}, {lo}\n",
            "adox {", $r4, "}, {lo}\n",
        )
    };
}

/// `a ± b` over four words (`$op`/`$op_carry`: add/adc or sub/sbb); a carry or borrow out of
/// the top stands for ±2^256 = ±38, applied to the bottom word, and once more if that wraps too.
macro_rules! add_or_sub {
    ($a:expr, $b:expr, $op:literal, $op_carry:literal) => {{
        let [mut r0, mut r1, mut r2, mut r3] = $a.0;
        let b = &$b.0;
        // SAFETY: register arithmetic only.
        unsafe {
            asm!(
                concat!($op, " {r0}, {b0}"),
                concat!($op_carry, " {r1}, {b1}"),
                concat!($op_carry, " {r2}, {b2}"),
                concat!($op_carry, " {r3}, {b3}"),
                "sbb {m}, {m}",
                "and {m}, 38",
                concat!($op, " {r0}, {m}"),
                concat!($op_carry, " {r1}, 0"),
                concat!($op_carry, " {r2}, 0"),
                concat!($op_carry, " {r3}, 0"),
                "sbb {m}, {m}",
                "and {m}, 38",
                concat!($op, " {r0}, {m}"),
                r0 = inout(reg) r0, r1 = inout(reg) r1, r2 = inout(reg) r2, r3 = inout(reg) r3,
                b0 = in(reg) b[0], b1 = in(reg) b[1], b2 = in(reg) b[2], b3 = in(reg) b[3],
                m = out(reg) _,
                options(pure, nomem, nostack),
            );
        }
        Fe64([r0, r1, r2, r3])
    }};
}

impl Fe64 {
    /// From a five-limb element (its canonical value): for building the table.
    pub(crate) fn from_fe(fe: &Fe) -> Fe64 {
        Fe64(le_words(&fe.to_bytes()))
    }

    /// To five limbs (the canonical value), for the inversion.
    #[inline(always)]
    fn to_fe(self) -> Fe {
        Fe::from_bytes(&self.to_bytes())
    }
}

impl FieldElement for Fe64 {
    const ZERO: Fe64 = Fe64([0; 4]);
    const ONE: Fe64 = Fe64([1, 0, 0, 0]);
    const D: Fe64 = Fe64([0x75eb4dca135978a3, 0x00700a4d4141d8ab, 0x8cc740797779e898, 0x52036cee2b6ffe73]);

    /// `self + b`: a 257-bit sum, its top bit folded back as 38 (twice, as in the product).
    #[inline(always)]
    fn add(&self, b: &Fe64) -> Fe64 {
        add_or_sub!(self, b, "add", "adc")
    }

    /// `self - b`: a borrow out of the top means 2^256 was added, so 38 is taken off (twice:
    /// the first correction can borrow only from a value below 38, and then the second cannot).
    #[inline(always)]
    fn sub(&self, b: &Fe64) -> Fe64 {
        add_or_sub!(self, b, "sub", "sbb")
    }

    /// `self · b`: the 512-bit schoolbook product (row 0 on one carry chain, rows 1–3 on two),
    /// then the high half folded in as 38·high.
    #[inline(always)]
    fn mul(&self, b: &Fe64) -> Fe64 {
        let (r0, r1, r2, r3);
        // SAFETY: reads the two 4-word arrays behind the references; needs BMI2 and ADX (see
        // the module's note). Thirteen registers: all the operand registers Rust allows.
        unsafe {
            asm!(
                "mov rdx, [{pa}]",
                "mulx {r1}, {r0}, [{pb}]",
                "mulx {r2}, {lo}, [{pb} + 8]",
                "add {r1}, {lo}",
                "mulx {r3}, {lo}, [{pb} + 16]",
                "adc {r2}, {lo}",
                "mulx {r4}, {lo}, [{pb} + 24]",
                "adc {r3}, {lo}",
                "adc {r4}, 0",
                "mov rdx, [{pa} + 8]",
                product_row!("r1", "r2", "r3", "r4", "r5"),
                "mov rdx, [{pa} + 16]",
                product_row!("r2", "r3", "r4", "r5", "r6"),
                "mov rdx, [{pa} + 24]",
                product_row!("r3", "r4", "r5", "r6", "r7"),
                fold_high_half!(),
                pa = in(reg) self.0.as_ptr(),
                pb = in(reg) b.0.as_ptr(),
                r0 = out(reg) r0, r1 = out(reg) r1, r2 = out(reg) r2, r3 = out(reg) r3,
                r4 = out(reg) _, r5 = out(reg) _, r6 = out(reg) _, r7 = out(reg) _,
                lo = out(reg) _, hi = out(reg) _, out("rdx") _,
                options(pure, readonly, nostack),
            );
        }
        Fe64([r0, r1, r2, r3])
    }

    /// `self²` as a product: squares are rare here (16 per signature, in the doublings); the
    /// inversion's 254 run on five limbs (see `invert`).
    #[inline(always)]
    fn square(&self) -> Fe64 {
        self.mul(self)
    }

    /// Through the five-limb code: its squaring has the shorter latency (a chain of 254
    /// squarings waits on each one), and the two conversions cost less than one squaring.
    #[inline(always)]
    fn invert(&self) -> Fe64 {
        Fe64::from_fe(&self.to_fe().invert())
    }

    #[inline(always)]
    fn to_bytes(self) -> [u8; 32] {
        let mut l = self.0;
        // Fold bit 255 in as 19 (2^255 = 19 mod p), twice: the first leaves a value below
        // 2^255 + 19, the second one below 2^255.
        for _ in 0..2 {
            let top = l[3] >> 63;
            l[3] &= u64::MAX >> 1;
            add_small(&mut l, 19 * top);
        }
        // Now below 2^255, so below 2p: subtract p exactly when adding 19 reaches 2^255.
        let mut probe = l;
        add_small(&mut probe, 19);
        let q = probe[3] >> 63;
        add_small(&mut l, 19 * q);
        l[3] &= u64::MAX >> 1; // drops the 2^255 that subtracting p left over
        le_bytes(l)
    }
}

/// `l += x` over four words, carrying through; the caller keeps the sum below 2^256.
#[inline(always)]
fn add_small(l: &mut [u64; 4], x: u64) {
    let mut carry = x as u128;
    for word in l.iter_mut() {
        carry += *word as u128;
        *word = carry as u64;
        carry >>= 64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values that stress the carries: zero, one, p - 1, p, p + 1, 2^255 - 1, 2^256 - 1,
    /// 2^256 - 38 (whose doubling wraps exactly once), words at their extremes, and a
    /// pseudo-random walk. As raw words: most are not reduced, which every operation accepts.
    fn samples() -> Vec<[u64; 4]> {
        let top = u64::MAX >> 1;
        let mut v = vec![
            [0, 0, 0, 0],
            [1, 0, 0, 0],
            [u64::MAX - 19, u64::MAX, u64::MAX, top],
            [u64::MAX - 18, u64::MAX, u64::MAX, top],
            [u64::MAX - 17, u64::MAX, u64::MAX, top],
            [u64::MAX, u64::MAX, u64::MAX, top],
            [u64::MAX; 4],
            [u64::MAX - 37, u64::MAX, u64::MAX, u64::MAX],
            [0, 0, 0, 1 << 63],
            [37, 0, 0, 0],
            [u64::MAX, 0, u64::MAX, 0],
            [0, u64::MAX, 0, u64::MAX],
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..300 {
            let mut w = [0u64; 4];
            for word in w.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *word = x;
            }
            v.push(w);
        }
        v
    }

    /// The same 256-bit value as five limbs (not reduced: `field.rs` takes limbs below 2^54).
    fn as_fe(w: &[u64; 4]) -> Fe {
        let bytes = le_bytes(*w);
        // from_bytes ignores bit 255; add it back as 19 (mod p) to keep the same residue.
        let low = Fe::from_bytes(&bytes);
        let top = Fe([19 * (w[3] >> 63), 0, 0, 0, 0]);
        low.add(&top)
    }

    #[test]
    fn agrees_with_the_five_limb_field() {
        if !crate::curve::has_adx_build() {
            return;
        }
        let samples = samples();
        for a in &samples {
            let (fa, ea) = (Fe64(*a), as_fe(a));
            assert_eq!(fa.to_bytes(), ea.to_bytes(), "encoding of {a:x?}");
            assert_eq!(fa.neg().to_bytes(), ea.neg().to_bytes(), "negation of {a:x?}");
            assert_eq!(fa.square().to_bytes(), ea.square().to_bytes(), "square of {a:x?}");
            assert_eq!(fa.invert().to_bytes(), ea.invert().to_bytes(), "inverse of {a:x?}");
            for b in samples.iter().step_by(7) {
                let (fb, eb) = (Fe64(*b), as_fe(b));
                assert_eq!(fa.mul(&fb).to_bytes(), ea.mul(&eb).to_bytes(), "{a:x?} · {b:x?}");
                assert_eq!(fa.add(&fb).to_bytes(), ea.add(&eb).reduced().to_bytes(), "{a:x?} + {b:x?}");
                assert_eq!(fa.sub(&fb).to_bytes(), ea.sub(&eb).to_bytes(), "{a:x?} - {b:x?}");
            }
        }
    }

    #[test]
    fn from_fe_keeps_the_value() {
        if !crate::curve::has_adx_build() {
            return;
        }
        for a in samples() {
            let e = as_fe(&a);
            assert_eq!(Fe64::from_fe(&e).to_bytes(), e.to_bytes());
        }
    }
}
