//! Fault injection for the unit tests (compiled only under `cfg(test)`): what a faulty CPU
//! or memory could do to a build, made to happen on demand.
//! - [`Fault::TableRow`]: one word of every entry of one table row has a flipped bit (every
//!   multiplication reads that row, so every R is affected);
//! - [`Fault::TableEntry`]: one word of one entry has a flipped bit;
//! - [`Fault::ResultLimb`]: a bit of X flipped in the result, after the comb.
//!
//! The tables are static and read-only, so a faulty table is a corrupted copy that the builds
//! read instead (`base_table::table`, `table64`, `comb4x::table`).

use super::super::base_table::{Row, TableField};
use super::super::point::Extended;
use std::sync::Mutex;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    TableRow { row: usize },
    TableEntry { row: usize, entry: usize, word: usize },
    ResultLimb,
}

static FAULT: Mutex<Option<Fault>> = Mutex::new(None);

pub(crate) fn set(fault: Option<Fault>) {
    *FAULT.lock().unwrap_or_else(|e| e.into_inner()) = fault;
}

fn current() -> Option<Fault> {
    *FAULT.lock().unwrap_or_else(|e| e.into_inner())
}

/// A corrupted copy of `table` when a table fault is set (leaked: tests only).
pub(crate) fn corrupted<const N: usize>(table: &'static [Row<N>; 32]) -> Option<&'static [Row<N>; 32]> {
    let fault = current()?;
    if fault == Fault::ResultLimb {
        return None;
    }
    let mut copy = Box::new(*table);
    match fault {
        Fault::TableRow { row } => {
            for entry in copy[row].iter_mut() {
                entry[0] ^= 1 << 3;
            }
        }
        Fault::TableEntry { row, entry, word } => copy[row][entry][word] ^= 1 << 3,
        Fault::ResultLimb => {}
    }
    Some(Box::leak(copy))
}

/// The point with a bit of X flipped when [`Fault::ResultLimb`] is set.
pub(crate) fn perturbed<F: TableField>(p: Extended<F>) -> Extended<F> {
    if current() != Some(Fault::ResultLimb) {
        return p;
    }
    let [x, y, z, t] = p.coordinates();
    let mut words = x.words().to_vec();
    words[1] ^= 1 << 5;
    Extended::from_coordinates([F::from_words(&words), y, z, t])
}
