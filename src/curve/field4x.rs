//! Four elements of GF(2^255 - 19) at once, one per lane: limb i of all four in one [`Lanes`]
//! value, radix 2^51 as in [`Fe`]. A product is 25 `madd52lo` and 25 `madd52hi` for all four
//! lanes, against 4 × 25 scalar multiplications.
//!
//! Limb bounds keep this correct. "Reduced" here means every limb is below 2^51 + 2^15.
//! - [`Fe4::mul`] accepts limbs below 2^52 (the multiplier reads 52 bits of each) and returns
//!   reduced limbs.
//! - [`Fe4::add_lazy`] and [`Fe4::sub_lazy`] do not carry. Applied to reduced elements (the
//!   subtrahend of `sub_lazy` below 2^52 - 38), their limbs stay below 2^54;
//!   [`Fe4::carried`] accepts limbs below 2^61 and returns reduced limbs.
//!
//! Nothing here branches on, or indexes memory by, a lane's value.

use super::field::{Fe, LOW_51};
use super::lanes::Lanes;

/// 2·p, limb by limb (2^52 - 38, then 2^52 - 2): added before subtracting so that no limb of a
/// reduced minuend goes negative.
const TWO_P: [u64; 5] = [2 * (LOW_51 - 18), 2 * LOW_51, 2 * LOW_51, 2 * LOW_51, 2 * LOW_51];

/// Lane `i` of the result is lane `order[i]` of the input (a [`Fe4::permute`] pattern).
pub(crate) const fn lane_order(order: [i32; 4]) -> i32 {
    order[0] | order[1] << 2 | order[2] << 4 | order[3] << 6
}

#[derive(Clone, Copy)]
pub(crate) struct Fe4<L>(pub(crate) [L; 5]);

/// `[f(0), …, f(4)]`, always inlined with its closure (which callers mark
/// `#[inline(always)]`). Not `std::array::from_fn` or `map`: they are only `#[inline]`, and a
/// closure compiled outside the CPU-feature-enabled caller would turn every lane operation
/// into a call (measured: 37 times slower in one build).
#[inline(always)]
fn limbwise<L>(f: impl Fn(usize) -> L) -> [L; 5] {
    [f(0), f(1), f(2), f(3), f(4)]
}

/// `19·x` in shifts and additions (the lanes have no cheap 64-bit multiplication).
#[inline(always)]
fn times_19<L: Lanes>(x: L) -> L {
    x.shl::<4>().add(x.shl::<1>()).add(x)
}

impl<L: Lanes> Fe4<L> {
    /// Limbs below 2^61 carried to below 2^51 + 2^15: every carry is taken at once (each is
    /// below 2^10), and the top one re-enters limb 0 times 19 (2^255 = 19 mod p).
    #[inline(always)]
    pub(crate) fn carried(&self) -> Fe4<L> {
        let mask = L::splat(LOW_51);
        let c = limbwise(
            #[inline(always)]
            |i| self.0[i].shr::<51>(),
        );
        let top = times_19(c[4]);
        Fe4(limbwise(
            #[inline(always)]
            |i| self.0[i].and(mask).add(if i == 0 { top } else { c[i - 1] }),
        ))
    }

    #[inline(always)]
    pub(crate) fn add_lazy(&self, b: &Fe4<L>) -> Fe4<L> {
        Fe4(limbwise(
            #[inline(always)]
            |i| self.0[i].add(b.0[i]),
        ))
    }

    /// `self + 2p - b`, uncarried.
    #[inline(always)]
    pub(crate) fn sub_lazy(&self, b: &Fe4<L>) -> Fe4<L> {
        Fe4(limbwise(
            #[inline(always)]
            |i| self.0[i].add(L::splat(TWO_P[i])).sub(b.0[i]),
        ))
    }

    /// Whether every limb of every lane is below 2^52 (for debug assertions).
    fn limbs_below_52(&self) -> bool {
        self.0.iter().all(|limb| limb.store().iter().all(|&word| word < 1 << 52))
    }

    /// The product in every lane; both operands with limbs below 2^52 (asserted in debug
    /// builds: the multiplier reads only the low 52 bits of each, so a larger limb would be
    /// silently cut).
    #[inline(always)]
    pub(crate) fn mul(&self, b: &Fe4<L>) -> Fe4<L> {
        debug_assert!(self.limbs_below_52() && b.limbs_below_52(), "Fe4::mul: a limb is 2^52 or more");
        let (x, y) = (&self.0, &b.0);
        let zero = L::splat(0);
        // a_i·b_j = lo + hi·2^52 = lo + 2·hi·2^51: lo goes to column i+j, hi to column
        // i+j+1 with weight 2. Each column gets at most 5 of each, so stays below 2^56.
        let mut lo = [zero; 10];
        let mut hi = [zero; 10];
        for i in 0..5 {
            for j in 0..5 {
                lo[i + j] = lo[i + j].madd52lo(x[i], y[j]);
                hi[i + j + 1] = hi[i + j + 1].madd52hi(x[i], y[j]);
            }
        }
        let mut column = lo;
        for (c, h) in column.iter_mut().zip(hi) {
            *c = c.add(h.shl::<1>());
        }
        // Column k+5 weighs 2^255 = 19 (mod p) times column k: below 20·2^56 < 2^61.
        Fe4(limbwise(
            #[inline(always)]
            |k| column[k].add(times_19(column[k + 5])),
        ))
        .carried()
    }

    #[inline(always)]
    pub(crate) fn permute<const ORDER: i32>(&self) -> Fe4<L> {
        Fe4(limbwise(
            #[inline(always)]
            |i| self.0[i].permute::<ORDER>(),
        ))
    }

    /// Lane i from `b` where bit i of `lanes` is set (a constant), else from `self`.
    #[inline(always)]
    pub(crate) fn blend(&self, b: &Fe4<L>, lanes: u8) -> Fe4<L> {
        Fe4(limbwise(
            #[inline(always)]
            |i| self.0[i].blend(b.0[i], lanes),
        ))
    }

    /// `b` in every lane where `mask` is all ones, `self` where it is zero, without branches.
    #[inline(always)]
    pub(crate) fn masked_choice(&self, b: &Fe4<L>, mask: L) -> Fe4<L> {
        Fe4(limbwise(
            #[inline(always)]
            |i| self.0[i].xor(self.0[i].xor(b.0[i]).and(mask)),
        ))
    }

    /// Four elements (limbs below 2^52), reduced.
    #[inline(always)]
    pub(crate) fn from_fes(e: [Fe; 4]) -> Fe4<L> {
        Fe4(limbwise(
            #[inline(always)]
            |i| L::load(&[e[0].0[i], e[1].0[i], e[2].0[i], e[3].0[i]]),
        ))
        .carried()
    }

    /// The four lanes as elements (reduced limbs are reduced for [`Fe`] too).
    #[inline(always)]
    pub(crate) fn to_fes(self) -> [Fe; 4] {
        let limbs = limbwise(
            #[inline(always)]
            |i| self.0[i].store(),
        );
        let lane = |j: usize| Fe([limbs[0][j], limbs[1][j], limbs[2][j], limbs[3][j], limbs[4][j]]);
        [lane(0), lane(1), lane(2), lane(3)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::field::FieldElement;
    use crate::curve::lanes::Emulated;

    /// Elements at the limb bounds' edges and pseudo-random ones (as `Fe`, limbs below 2^52).
    fn samples() -> Vec<Fe> {
        let mut out = vec![Fe::ZERO, Fe::ONE, Fe([LOW_51 - 18, LOW_51, LOW_51, LOW_51, LOW_51])];
        out.push(Fe([(1 << 52) - 1; 5]));
        out.push(Fe([1 << 51; 5]));
        out.push(Fe([0, 0, 0, 0, (1 << 52) - 1]));
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            out.push(Fe(std::array::from_fn(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                state >> 12 // below 2^52
            })));
        }
        out
    }

    fn lanes_agree<L: Lanes>(op: &str, got: Fe4<L>, want: [Fe; 4]) {
        for (lane, (g, w)) in got.to_fes().iter().zip(want).enumerate() {
            assert!(g.0.iter().all(|&l| l < (1 << 51) + (1 << 15)), "{op}: lane {lane} not reduced");
            assert_eq!(g.to_bytes(), w.to_bytes(), "{op}: lane {lane}");
        }
    }

    /// Every operation, lane by lane, against the five-limb field.
    fn check_against_fe<L: Lanes>() {
        let s = samples();
        for (n, w) in s.windows(8).enumerate() {
            let a: [Fe; 4] = [w[0], w[1], w[2], w[3]];
            let b: [Fe; 4] = [w[4], w[5], w[6], w[7]];
            let (va, vb) = (Fe4::<L>::from_fes(a), Fe4::<L>::from_fes(b));
            lanes_agree(&format!("mul #{n}"), va.mul(&vb), std::array::from_fn(|i| a[i].mul(&b[i])));
            lanes_agree(&format!("add #{n}"), va.add_lazy(&vb).carried(), std::array::from_fn(|i| a[i].add(&b[i])));
            lanes_agree(&format!("sub #{n}"), va.sub_lazy(&vb).carried(), std::array::from_fn(|i| a[i].sub(&b[i])));
            // The raw product input bound: limbs just below 2^52 in both operands.
            let top = Fe4::<L>(std::array::from_fn(|_| L::splat((1 << 52) - 1)));
            lanes_agree("mul at 2^52 - 1", top.mul(&vb), std::array::from_fn(|i| Fe([(1 << 52) - 1; 5]).mul(&b[i])));
            lanes_agree("permute", va.permute::<{ lane_order([3, 0, 0, 2]) }>(), [a[3], a[0], a[0], a[2]]);
            lanes_agree("blend", va.blend(&vb, 0b0110), [a[0], b[1], b[2], a[3]]);
        }
        lanes_agree("from_fes", Fe4::<L>::from_fes([Fe::ONE; 4]), [Fe::ONE; 4]);
    }

    /// The input bound is asserted: a limb of 2^52 would be read as 0 by the multiplier.
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "a limb is 2^52 or more")]
    fn a_limb_beyond_52_bits_is_caught_in_debug_builds() {
        let mut limbs = [Emulated::splat(1); 5];
        limbs[4] = Emulated([1, 1 << 52, 1, 1]);
        let _ = Fe4(limbs).mul(&Fe4([Emulated::splat(3); 5]));
    }

    #[test]
    fn emulated_lanes_agree_with_the_five_limb_field() {
        check_against_fe::<Emulated>();
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn ifma_lanes_agree_with_the_five_limb_field() {
        // On a CPU without IFMA there is nothing to run (the library prints nothing, tests
        // included; the emulated lanes above are checked everywhere). tests/signer_paths.rs
        // says loudly, in CI, which builds this CPU could not run; tests/ct_audit.rs audits the
        // IFMA build's machine code on any CPU.
        if crate::curve::has_ifma_build() {
            // SAFETY: the CPU has the features `Ifma` needs (checked just above).
            unsafe { check_against_fe_ifma() }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512ifma")]
    unsafe fn check_against_fe_ifma() {
        check_against_fe::<crate::curve::lanes::Ifma>();
    }
}
