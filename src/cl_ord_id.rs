//! Client order ids (`cl_ord_id`) generated for orders sent without one.
//!
//! Format: the client's `cl_ord_id_prefix` (empty by default), then 26 characters of
//! Crockford base32 (`0-9A-Z` without `I L O U`) encoding 128 bits, like the venue's own
//! ULID-shaped ids:
//!
//! | bits | what |
//! |---|---|
//! | 48 | milliseconds since the Unix epoch (ids sort by creation time) |
//! | 40 | a random number drawn once per process (and again in a forked child) |
//! | 40 | a per-process counter, starting at a random value, one step per id |
//!
//! Within a process, ids never repeat: the counter is shared by all threads (one atomic
//! step) and 2^40 ids would be needed for it to come round. Two processes collide only if
//! they draw the same 40-bit process number and produce the same counter value in the same
//! millisecond. A forked child draws a new process number (it is tied to the process id),
//! so a parent and its child never continue the same sequence.

use crate::error::Result;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Length of the generated part.
pub const GENERATED_LEN: usize = 26;

const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const MASK_40: u64 = (1 << 40) - 1;

/// (process id, random process number): drawn again when the process id changes (fork).
static PROCESS: Mutex<Option<(u32, u64)>> = Mutex::new(None);
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A new id: `prefix` followed by the 26-character time + process + counter part.
pub fn generate(prefix: &str) -> Result<String> {
    let process = process_number()?;
    let counter = COUNTER.fetch_add(1, Ordering::Relaxed) & MASK_40;
    let millis = (crate::body_sign::now_ms().max(0) as u64) & ((1 << 48) - 1);
    let value = (u128::from(millis) << 80) | (u128::from(process) << 40) | u128::from(counter);
    let mut id = String::with_capacity(prefix.len() + GENERATED_LEN);
    id.push_str(prefix);
    for i in (0..GENERATED_LEN).rev() {
        id.push(ALPHABET[((value >> (5 * i)) & 31) as usize] as char);
    }
    Ok(id)
}

/// The process number, drawn on first use and again after a fork. The counter restarts at a
/// random value with it.
fn process_number() -> Result<u64> {
    let pid = std::process::id();
    let mut process = PROCESS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    match *process {
        Some((owner, number)) if owner == pid => Ok(number),
        _ => {
            let mut bytes = [0u8; 16];
            getrandom::fill(&mut bytes).map_err(|e| {
                crate::Error::new(crate::Code::Rng, format!("the OS random number generator failed: {e}"))
            })?;
            let number = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) & MASK_40;
            COUNTER.store(u64::from_le_bytes(bytes[8..].try_into().expect("8 bytes")) & MASK_40, Ordering::Relaxed);
            *process = Some((pid, number));
            Ok(number)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_the_documented_shape_and_sort_by_time() {
        let a = generate("").unwrap();
        assert_eq!(a.len(), GENERATED_LEN);
        assert!(a.bytes().all(|b| ALPHABET.contains(&b)), "{a}");
        assert!(a.as_bytes()[0] <= b'7', "128 bits: the first character carries 3 bits");
        let b = generate("mm-1_").unwrap();
        assert!(b.starts_with("mm-1_") && b.len() == 5 + GENERATED_LEN);
        // Same process part, counter one step on.
        assert_eq!(a[10..18], b[15..23]);
        assert_ne!(a[18..], b[23..]);
    }

    #[test]
    fn ids_from_many_threads_never_repeat() {
        let ids: Vec<String> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| (0..10_000).map(|_| generate("").unwrap()).collect::<Vec<_>>()))
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let unique: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
    }
}
