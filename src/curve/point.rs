//! Points of the twisted Edwards curve -x² + y² = 1 + d·x²·y² (edwards25519) in the
//! coordinate systems a fixed-base multiplication needs (Hisil–Wong–Carter–Dawson, 2008):
//! - [`Extended`] (X:Y:Z:T) with x = X/Z, y = Y/Z, x·y = T/Z: the running sum;
//! - [`Niels`] (y+x, y−x, 2d·x·y) of an affine point: a table entry, added in 7 products;
//! - [`Completed`] ((X:Z), (Y:T)): what an addition or doubling yields before conversion.
//!
//! Generic over the field representation ([`FieldElement`]). For the five-limb [`Fe`], limb
//! bounds (see `field.rs`) are respected by construction: every product input is reduced or the
//! sum of at most three reduced elements.

use super::field::{Fe, FieldElement};

// The base point and the affine form are the table generator's (build.rs, `table_gen.rs`) and
// the tests'; the library itself only reads the tables.
/// The base point's coordinates (RFC 8032 §5.1): y = 4/5 and x the even square root.
#[cfg_attr(not(test), allow(dead_code))]
const BASE_X_BYTES: [u8; 32] = [
    0x1a, 0xd5, 0x25, 0x8f, 0x60, 0x2d, 0x56, 0xc9, 0xb2, 0xa7, 0x25, 0x95, 0x60, 0xc7, 0x2c, 0x69, 0x5c, 0xdc, 0xd6,
    0xfd, 0x31, 0xe2, 0xa4, 0xc0, 0xfe, 0x53, 0x6e, 0xcd, 0xd3, 0x36, 0x69, 0x21,
];
#[cfg_attr(not(test), allow(dead_code))]
const BASE_Y_BYTES: [u8; 32] = [
    0x58, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
    0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
];

#[derive(Clone, Copy)]
pub(crate) struct Extended<F> {
    x: F,
    y: F,
    z: F,
    t: F,
}

/// An affine point as (y+x, y−x, 2d·x·y), limbs reduced.
#[derive(Clone, Copy)]
pub(crate) struct Niels<F> {
    pub(crate) y_plus_x: F,
    pub(crate) y_minus_x: F,
    pub(crate) xy2d: F,
}

pub(crate) struct Completed<F> {
    x: F,
    y: F,
    z: F,
    t: F,
}

#[cfg_attr(not(test), allow(dead_code))]
impl<F: FieldElement> Niels<F> {
    /// The neutral element (0, 1).
    pub(crate) const IDENTITY: Niels<F> = Niels { y_plus_x: F::ONE, y_minus_x: F::ONE, xy2d: F::ZERO };
}

#[cfg_attr(not(test), allow(dead_code))]
impl Extended<Fe> {
    /// The standard base point B.
    pub(crate) fn base_point() -> Extended<Fe> {
        let (x, y) = (Fe::from_bytes(&BASE_X_BYTES), Fe::from_bytes(&BASE_Y_BYTES));
        Extended { x, y, z: Fe::ONE, t: x.mul(&y) }
    }

    /// The affine form as a table entry (one inversion: for building tables, not signing).
    pub(crate) fn to_niels(self) -> Niels<Fe> {
        let z_inv = self.z.invert();
        let (x, y) = (self.x.mul(&z_inv), self.y.mul(&z_inv));
        let d = Fe::D;
        // Entries are stored reduced, so the sum y + x is carried.
        Niels { y_plus_x: y.add(&x).reduced(), y_minus_x: y.sub(&x), xy2d: x.mul(&y).mul(&d.add(&d)) }
    }
}

impl<F: FieldElement> Extended<F> {
    pub(crate) const IDENTITY: Extended<F> = Extended { x: F::ZERO, y: F::ONE, z: F::ONE, t: F::ZERO };

    /// `self + q` (mixed addition, 7 products with the conversion that follows).
    #[inline(always)]
    pub(crate) fn add_niels(&self, q: &Niels<F>) -> Completed<F> {
        let pp = self.y.add(&self.x).mul(&q.y_plus_x);
        let mm = self.y.sub(&self.x).mul(&q.y_minus_x);
        let txy2d = self.t.mul(&q.xy2d);
        let z2 = self.z.add(&self.z);
        Completed { x: pp.sub(&mm), y: pp.add(&mm), z: z2.add(&txy2d), t: z2.sub(&txy2d) }
    }

    /// `2·self` (the doubling formula reads X, Y, Z only).
    #[inline(always)]
    pub(crate) fn double(&self) -> Completed<F> {
        let xx = self.x.square();
        let yy = self.y.square();
        let zz = self.z.square();
        let zz2 = zz.add(&zz);
        let x_plus_y_sq = self.x.add(&self.y).square();
        let yy_plus_xx = yy.add(&xx);
        let yy_minus_xx = yy.sub(&xx);
        Completed { x: x_plus_y_sq.sub(&yy_plus_xx), y: yy_plus_xx, z: yy_minus_xx, t: zz2.sub(&yy_minus_xx) }
    }

    /// `16·self`: four doublings.
    #[inline(always)]
    pub(crate) fn times_16(&self) -> Extended<F> {
        let mut p = *self;
        for _ in 0..4 {
            p = p.double().to_extended();
        }
        p
    }

    /// (X, Y, Z, T), for code that keeps the coordinates in its own layout (`comb4x.rs`).
    #[inline(always)]
    pub(crate) fn coordinates(&self) -> [F; 4] {
        [self.x, self.y, self.z, self.t]
    }

    #[inline(always)]
    pub(crate) fn from_coordinates([x, y, z, t]: [F; 4]) -> Extended<F> {
        Extended { x, y, z, t }
    }

    /// The 32-byte encoding (y with the sign of x in the top bit; one inversion), and whether the affine point it encodes is on the curve: all ones if
    /// -x² + y² = 1 + d·x²·y², zero otherwise. Computed without branches; the caller decides.
    ///
    /// Why on the affine coordinates (x, y) = (X/Z, Y/Z), the very values encoded, rather than
    /// X·Y = Z·T and the curve equation on (X:Y:Z:T): a corrupted table entry or a carry fault
    /// anywhere in the multiplication leaves a point off the curve (the addition formulas keep
    /// a point on the curve only when their inputs are on it), and checking after the inversion
    /// also catches a fault in the inversion and in the two products that make x and y, which a
    /// check before it cannot see. A fault in T alone is harmless: T is not encoded. Four
    /// products, ≈ 1 % of a signature.
    #[inline(always)]
    pub(crate) fn compress_checked(&self) -> ([u8; 32], u64) {
        let z_inv = self.z.invert();
        let x = self.x.mul(&z_inv);
        let y = self.y.mul(&z_inv);
        let mut out = y.to_bytes();
        out[31] ^= x.is_odd() << 7;
        let (xx, yy) = (x.square(), y.square());
        let left = yy.sub(&xx);
        let right = F::ONE.add(&F::D.mul(&xx.mul(&yy)));
        (out, all_ones_if_zero(&left.sub(&right).to_bytes()))
    }
}

/// All ones when every byte is zero, else zero, without branches.
#[inline(always)]
fn all_ones_if_zero(bytes: &[u8; 32]) -> u64 {
    let any = bytes.iter().fold(0u64, |acc, &b| acc | b as u64);
    (any.wrapping_sub(1) >> 63).wrapping_neg()
}

impl<F: FieldElement> Completed<F> {
    #[inline(always)]
    pub(crate) fn to_extended(&self) -> Extended<F> {
        Extended { x: self.x.mul(&self.t), y: self.y.mul(&self.z), z: self.z.mul(&self.t), t: self.x.mul(&self.y) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// d = -121665/121666 (RFC 8032 §5.1), little-endian.
    const D_BYTES: [u8; 32] = [
        0xa3, 0x78, 0x59, 0x13, 0xca, 0x4d, 0xeb, 0x75, 0xab, 0xd8, 0x41, 0x41, 0x4d, 0x0a, 0x70, 0x00, 0x98, 0xe8,
        0x79, 0x77, 0x79, 0x40, 0xc7, 0x8c, 0x73, 0xfe, 0x6f, 0x2b, 0xee, 0x6c, 0x03, 0x52,
    ];

    #[test]
    fn d_is_the_curve_constant_in_every_field() {
        assert_eq!(Fe::D.to_bytes(), D_BYTES);
        // d · 121666 = -121665.
        let d_times = Fe::D.mul(&Fe([121666, 0, 0, 0, 0]));
        assert_eq!(d_times.add(&Fe([121665, 0, 0, 0, 0])).to_bytes(), [0u8; 32]);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(super::super::field64::Fe64::D.0, super::super::field::le_words(&D_BYTES));
    }

    #[test]
    fn the_check_accepts_points_on_the_curve_and_refuses_others() {
        let mut p = Extended::base_point();
        for _ in 0..20 {
            let (encoding, on_curve) = p.compress_checked();
            assert_eq!(on_curve, u64::MAX);
            let [x, y, z, _] = p.coordinates();
            let (x, y) = (x.mul(&z.invert()), y.mul(&z.invert()));
            let mut expected = y.to_bytes();
            expected[31] |= x.is_odd() << 7;
            assert_eq!(encoding, expected);
            // Any one coordinate off by one bit, or a wrong Z, leaves the curve.
            for bit in [0, 7, 50] {
                let [x, y, z, t] = p.coordinates();
                let flip = |e: Fe| Fe([e.0[0] ^ (1 << bit), e.0[1], e.0[2], e.0[3], e.0[4]]);
                for off in [[flip(x), y, z, t], [x, flip(y), z, t], [x, y, flip(z), t]] {
                    assert_eq!(Extended::from_coordinates(off).compress_checked().1, 0, "bit {bit}");
                }
            }
            p = p.double().to_extended();
        }
    }
}
