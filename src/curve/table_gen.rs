//! What the fixed-base tables hold, computed from scratch: for row i (P = 256^i·B) the
//! multiples 0·P … 8·P as affine (y+x, y−x, 2d·x·y), each canonical, and the word layout of
//! each build's table.
//!
//! Compiled twice: by the build script (`build.rs` includes this file with `field.rs` and
//! `point.rs`), which writes the tables into the library as `static` arrays, so they sit in
//! read-only memory and are never built at run time (see `base_table.rs`); and by the tests,
//! which compute them again and compare with what was compiled in.

use super::field::{Fe, FieldElement, le_words};
use super::point::{Extended, Niels};

/// Rows of the comb: one per pair of radix-16 digits.
pub(crate) const ROWS: usize = 32;

/// One table entry: the canonical encodings of y+x, y−x and 2d·x·y.
pub(crate) type Entry = [[u8; 32]; 3];

/// Words per entry in each build's layout.
pub(crate) const FE_WORDS: usize = 16;
pub(crate) const FE64_WORDS: usize = 12;
pub(crate) const LANES_WORDS: usize = 20;

/// 0·P, 1·P, …, 8·P for P = 256^i·B, i = 0..32.
pub(crate) fn base_multiples() -> Vec<[Entry; 9]> {
    let canonical = |n: &Niels<Fe>| [n.y_plus_x.to_bytes(), n.y_minus_x.to_bytes(), n.xy2d.to_bytes()];
    let mut rows = Vec::with_capacity(ROWS);
    let mut base = Extended::base_point();
    for _ in 0..ROWS {
        let base_niels = base.to_niels();
        let mut row = [canonical(&Niels::<Fe>::IDENTITY); 9];
        row[1] = canonical(&base_niels);
        let mut multiple = base;
        for entry in row.iter_mut().skip(2) {
            multiple = multiple.add_niels(&base_niels).to_extended();
            *entry = canonical(&multiple.to_niels());
        }
        rows.push(row);
        for _ in 0..8 {
            base = base.double().to_extended();
        }
    }
    rows
}

/// Five-limb layout (`Fe`): the limbs of y+x, y−x, 2dxy, then one word of padding (a whole
/// number of 256-bit registers).
pub(crate) fn fe_entry(e: &Entry) -> [u64; FE_WORDS] {
    let mut out = [0u64; FE_WORDS];
    for (k, coordinate) in e.iter().enumerate() {
        out[5 * k..5 * k + 5].copy_from_slice(&Fe::from_bytes(coordinate).0);
    }
    out
}

/// Four-limb layout (`Fe64`): the 64-bit words of y+x, y−x, 2dxy.
pub(crate) fn fe64_entry(e: &Entry) -> [u64; FE64_WORDS] {
    let mut out = [0u64; FE64_WORDS];
    for (k, coordinate) in e.iter().enumerate() {
        out[4 * k..4 * k + 4].copy_from_slice(&le_words(coordinate));
    }
    out
}

/// Lane layout (`comb4x.rs`): limb i of (y+x, y−x, 2, 2dxy) at words 4i..4i+4, the constant 2
/// being the third lane's factor in the vector mixed addition.
pub(crate) fn lanes_entry(e: &Entry) -> [u64; LANES_WORDS] {
    let two = Fe([2, 0, 0, 0, 0]);
    let lanes = [Fe::from_bytes(&e[0]), Fe::from_bytes(&e[1]), two, Fe::from_bytes(&e[2])];
    let mut out = [0u64; LANES_WORDS];
    for i in 0..5 {
        for (lane, element) in lanes.iter().enumerate() {
            out[4 * i + lane] = element.0[i];
        }
    }
    out
}

/// One table in a layout, as rows of entries.
pub(crate) fn layout<const N: usize>(rows: &[[Entry; 9]], entry: fn(&Entry) -> [u64; N]) -> Vec<[[u64; N]; 9]> {
    rows.iter().map(|row| row.each_ref().map(entry)).collect()
}
