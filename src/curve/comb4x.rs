//! The comb of `base_table.rs` with the point in vector lanes: X, Y, Z, T each in one lane of a
//! [`Fe4`], so that the four products of each half of a mixed addition are one vector product.
//! An addition is two such products instead of seven scalar ones; the four doublings between
//! the comb's halves run on [`Fe`].
//!
//! A mixed addition of the table entry (y+x, y−x, 2dxy) to (X:Y:Z:T), as in `point.rs`:
//! - (Y+X, Y−X, Z, T) ⊙ (y+x, y−x, 2, 2dxy) = (PP, MM, 2Z, T·2dxy);
//! - E = PP − MM, H = PP + MM, F = 2Z − T·2dxy, G = 2Z + T·2dxy;
//! - (E, G, F, E) ⊙ (F, H, G, H) = (X', Y', Z', T').
//!
//! The table holds each entry already in lanes, with the constant 2 in the third lane
//! (`table_gen.rs` lays it out).

use super::base_table::{self, Row, comb, entry_mask, negation_mask, sign_and_magnitude};
use super::field::Fe;
use super::field4x::{Fe4, lane_order};
use super::lanes::Lanes;
use super::point::Extended;

/// Words per entry: limb i of (y+x, y−x, 2, 2dxy) at words 4i..4i+4.
const ENTRY_WORDS: usize = 20;

/// The table in lanes (32 rows of 9 entries, 46 KB): static data from the build script, like
/// the other builds' (`base_table.rs`).
pub(crate) fn table() -> &'static [Row<ENTRY_WORDS>; 32] {
    #[cfg(test)]
    if let Some(corrupted) = super::guard::fault::corrupted(&base_table::TABLE4X) {
        return corrupted;
    }
    &base_table::TABLE4X
}

/// `k·B` for a scalar `k` given little-endian, below 2^255, with `pick` as the table lookup
/// ([`select`]; the machine-code audit's test copies plant a leak in theirs). Inlined into its
/// callers so that it is compiled for the CPU features each one enables.
#[inline(always)]
pub(crate) fn mul_base<L: Lanes>(
    k: &[u8; 32],
    table: &[Row<ENTRY_WORDS>; 32],
    pick: impl Fn(&Row<ENTRY_WORDS>, i8) -> Fe4<L>,
) -> Extended<Fe> {
    let identity = Fe4::<L>::from_fes(Extended::<Fe>::IDENTITY.coordinates());
    let p = comb(
        k,
        identity,
        #[inline(always)]
        |p, row, digit| add_entry(&p, &pick(&table[row], digit)),
        #[inline(always)]
        |p| Fe4::from_fes(Extended::from_coordinates(p.to_fes()).times_16().coordinates()),
    );
    Extended::from_coordinates(p.to_fes())
}

/// `p + q` for p = (X, Y, Z, T) reduced and q an entry from [`select`].
#[inline(always)]
fn add_entry<L: Lanes>(p: &Fe4<L>, q: &Fe4<L>) -> Fe4<L> {
    let yyzt = p.permute::<{ lane_order([1, 1, 2, 3]) }>();
    let xxxx = p.permute::<{ lane_order([0, 0, 0, 0]) }>();
    // (Y+X, Y−X, Z, T), carried once for all lanes.
    let u = yyzt.add_lazy(&xxxx).blend(&yyzt.sub_lazy(&xxxx), 0b0010).blend(&yyzt, 0b1100).carried();
    let w = u.mul(q); // (PP, MM, 2Z, T·2dxy)
    let swapped = w.permute::<{ lane_order([1, 0, 3, 2]) }>(); // (MM, PP, T·2dxy, 2Z)
    let ehfg = w.sub_lazy(&swapped).blend(&w.add_lazy(&swapped), 0b1010).carried();
    ehfg.permute::<{ lane_order([0, 3, 2, 0]) }>().mul(&ehfg.permute::<{ lane_order([2, 1, 3, 1]) }>())
}

/// `digit·P` from P's row, reading every entry whatever the digit, in lanes.
#[inline(always)]
pub(crate) fn select<L: Lanes>(row: &Row<ENTRY_WORDS>, digit: i8) -> Fe4<L> {
    let (negative, magnitude) = sign_and_magnitude(digit);
    let mut acc = [L::splat(0); 5];
    for (j, entry) in row.iter().enumerate() {
        let hit = L::splat(entry_mask(magnitude, j));
        let (limbs, _) = entry.as_chunks::<4>();
        for (a, limb) in acc.iter_mut().zip(limbs) {
            *a = a.or(L::load(limb).and(hit));
        }
    }
    negated_if(Fe4(acc), negative)
}

/// −P when `negative` is 1: y+x and y−x trade lanes, and 2dxy becomes 2p − 2dxy (entries are
/// canonical, so its limbs stay below 2^52: a valid product input without carrying).
#[inline(always)]
fn negated_if<L: Lanes>(entry: Fe4<L>, negative: u64) -> Fe4<L> {
    let zero = Fe4([L::splat(0); 5]);
    let negated = entry.permute::<{ lane_order([1, 0, 2, 3]) }>().blend(&zero.sub_lazy(&entry), 0b1000);
    entry.masked_choice(&negated, L::splat(negation_mask(negative)))
}

/// [`select`] with a leak planted, for the machine-code audit to catch (never on a secret):
/// `PLANT` 1 adds a branch on the digit's sign (a volatile read of the row in one arm: it
/// cannot be turned into a conditional move); 2 reads only the entry at the digit's magnitude,
/// an address that depends on the digit. Same results as [`select`].
#[inline(always)]
pub(crate) fn planted_select<L: Lanes, const PLANT: u8>(row: &Row<ENTRY_WORDS>, digit: i8) -> Fe4<L> {
    let (negative, magnitude) = sign_and_magnitude(digit);
    if PLANT == 2 {
        // SAFETY: a magnitude is at most 8, and a row has 9 entries.
        let entry = unsafe { row.get_unchecked(magnitude as usize) };
        let (limbs, _) = entry.as_chunks::<4>();
        let loaded =
            [L::load(&limbs[0]), L::load(&limbs[1]), L::load(&limbs[2]), L::load(&limbs[3]), L::load(&limbs[4])];
        return negated_if(Fe4(loaded), negative);
    }
    if negative == 1 {
        // SAFETY: reads a word of the row we were given.
        unsafe { std::ptr::read_volatile(&row[0][0]) };
    }
    select(row, digit)
}
