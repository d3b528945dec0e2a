//! The random bytes of every fresh signature: the request id (16 bytes) and the hedged
//! nonce's randomness Z (32 bytes, `keys.rs`). OS randomness (`getrandom`), fetched
//! `POOL_BYTES` at a time into a per-thread pool, each byte handed out once and then wiped.
//!
//! Why not one `getrandom` per signature: the call costs 0.5–0.8 µs on a virtual machine,
//! 5–10 % of a signature. Why not a user-space generator (a ChaCha20 stream seeded from the
//! OS and reseeded now and then): it would be new cryptographic code with a state to protect,
//! seed and reseed, and a state that, once read, predicts every later nonce input until the
//! next reseed. Here every byte is the OS CSPRNG's output, unmodified: nothing to seed, no
//! state beyond the unused bytes themselves; a byte is never handed out twice; the pool is per
//! thread, so threads share no lock and no bytes. One system call per 32 signatures costs
//! ≈ 0.02 µs a signature. A request id is not secret (it travels in a header); Z is (the
//! hedged construction needs it unpredictable), and it leaves the pool wiped.
//!
//! Fork: a child process starts with a copy of the parent's pools and would hand out the
//! same ids and the same Z as the parent. So the first use installs a `pthread_atfork` child
//! handler that bumps a process-wide generation number; a pool filled under another generation
//! is discarded, and the child draws fresh bytes from the OS. This covers `fork()` through the
//! C library (C, Python's `os.fork`, …). A raw `clone` system call that bypasses the C
//! library's fork handlers is not covered; such children (Go's `ForkExec`, `vfork`) only
//! `exec`, without calling into this library.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// 32 signatures (16 + 32 bytes each) per system call: the call's cost is shared 32 ways,
/// and the pool stays small (a thread-local block in every thread that signs).
const POOL_BYTES: usize = 32 * 48;

/// Aligned so that handed-out bytes are wiped a word at a time; no `Drop` (see `POOL`).
#[repr(C, align(8))]
struct PoolBytes([u8; POOL_BYTES]);

struct Pool {
    bytes: PoolBytes,
    /// Bytes handed out so far; `POOL_BYTES` means empty.
    used: usize,
    /// `GENERATION` when the pool was filled.
    generation: u64,
}

/// Bumped in a child process right after `fork`.
static GENERATION: AtomicU64 = AtomicU64::new(0);

thread_local! {
    // No destructor (so no per-thread registration, which could allocate), and no lazy
    // initialiser: the first use finds an empty pool and fills it.
    static POOL: RefCell<Pool> =
        const { RefCell::new(Pool { bytes: PoolBytes([0; POOL_BYTES]), used: POOL_BYTES, generation: 0 }) };
}

/// `N` random bytes (at most `POOL_BYTES`) never handed out before, in this process or any
/// other (for request ids; secrets go through [`fill`] into a buffer the caller wipes).
pub(crate) fn take<const N: usize>() -> Result<[u8; N], getrandom::Error> {
    const { assert!(N <= POOL_BYTES) };
    let mut out = [0u8; N];
    fill(&mut out)?;
    Ok(out)
}

/// Fill `out` (at most `POOL_BYTES` long) with random bytes never handed out before, in this
/// process or any other.
pub(crate) fn fill(out: &mut [u8]) -> Result<(), getrandom::Error> {
    assert!(out.len() <= POOL_BYTES, "at most {POOL_BYTES} bytes at a time");
    if !forks_are_watched() {
        return getrandom::fill(out);
    }
    let generation = GENERATION.load(Ordering::Acquire);
    POOL.with(|cell| {
        let mut pool = cell.borrow_mut();
        if pool.used + out.len() > POOL_BYTES || pool.generation != generation {
            pool.used = POOL_BYTES;
            getrandom::fill(&mut pool.bytes.0)?;
            pool.used = 0;
            pool.generation = generation;
        }
        let range = pool.used..pool.used + out.len();
        out.copy_from_slice(&pool.bytes.0[range.clone()]);
        // Handed out once: wipe it from the pool (volatile writes, not optimised away).
        crate::wipe::wipe(&mut pool.bytes.0[range]);
        pool.used += out.len();
        Ok(())
    })
}

/// Installs (once) the fork handler; false if it could not be installed.
#[cfg(unix)]
fn forks_are_watched() -> bool {
    use std::sync::atomic::AtomicBool;
    static ONCE: std::sync::Once = std::sync::Once::new();
    static WATCHED: AtomicBool = AtomicBool::new(false);
    extern "C" fn in_child() {
        // Async-signal-safe: one atomic add.
        GENERATION.fetch_add(1, Ordering::AcqRel);
    }
    ONCE.call_once(|| {
        // SAFETY: registers a handler that only touches an atomic. If registration fails
        // (ENOMEM), forks would go unnoticed: every id then makes its own OS call.
        let ok = unsafe { libc::pthread_atfork(None, None, Some(in_child)) } == 0;
        WATCHED.store(ok, Ordering::Release);
    });
    WATCHED.load(Ordering::Acquire)
}

/// No `fork` without unix.
#[cfg(not(unix))]
fn forks_are_watched() -> bool {
    true
}

/// What `draw` gives in a child forked now and then in this process: (this process's,
/// the child's). For the tests that show a fork handing the child fresh randomness (here,
/// and the nonce's in `keys.rs`). The child does no more than draw, write to a pipe and
/// `_exit` (a failed draw reports zeros, which fail the test here); this process waits for it.
#[cfg(all(test, unix))]
pub(crate) fn drawn_in_parent_and_forked_child<const N: usize>(
    draw: impl Fn() -> Option<[u8; N]>,
) -> ([u8; N], [u8; N]) {
    let mut fds = [0; 2];
    // SAFETY: plain system calls on a pipe of our own; the child only draws, writes, exits.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let drawn = draw().unwrap_or([0; N]);
        unsafe {
            libc::write(fds[1], drawn.as_ptr().cast(), N);
            libc::_exit(0);
        }
    }
    let parent = draw().expect("a draw in this process");
    let mut child = [0u8; N];
    let n = unsafe { libc::read(fds[0], child.as_mut_ptr().cast(), N) };
    let mut status = 0;
    unsafe {
        libc::waitpid(pid, &mut status, 0);
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    assert_eq!(n, N as isize, "the child reported what it drew");
    assert_ne!(child, [0; N], "the child could not draw");
    (parent, child)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_distinct_across_refills_and_threads() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            assert!(seen.insert(take::<16>().unwrap()));
        }
        let other: Vec<[u8; 16]> =
            std::thread::spawn(|| (0..1000).map(|_| take::<16>().unwrap()).collect()).join().unwrap();
        for id in other {
            assert!(seen.insert(id));
        }
    }

    #[test]
    fn a_new_generation_discards_the_pool() {
        take::<16>().unwrap();
        // What the fork handler does in a child.
        let generation = GENERATION.fetch_add(1, Ordering::AcqRel) + 1;
        take::<16>().unwrap();
        POOL.with(|cell| {
            let pool = cell.borrow();
            assert_eq!(pool.generation, generation);
            assert_eq!(pool.used, 16, "refilled, then one id taken");
        });
    }

    /// Without the fork handler, parent and child would hand out the same next id (the
    /// child's pool is a copy of the parent's).
    #[cfg(unix)]
    #[test]
    fn a_forked_child_draws_fresh_bytes() {
        take::<16>().unwrap();
        let (parent, child) = drawn_in_parent_and_forked_child(|| take::<16>().ok());
        assert_ne!(parent, child, "a forked child repeated the parent's request id");
    }
}
