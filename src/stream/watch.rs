//! What a caller waiting in `next` watches besides the queue (`queue/waiting.rs`): the
//! connection's socket, and, when it is to read the frames itself, how (`ReadForCaller`,
//! implemented by the stream's shared state, `shared.rs`).

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The connection a sleeping `pop` watches besides the queue.
pub struct Watch<'a> {
    /// Readable when the I/O thread has a frame to read (a descriptor that follows the
    /// stream's current connection, never readable between connections).
    pub fd: RawFd,
    /// Whether the I/O thread is at work (between its `poll` calls).
    pub io_busy: &'a AtomicBool,
    /// Callers that read `fd` themselves now (`ReadForCaller::reads_here`, in `pop`): while
    /// there is one, the I/O thread leaves the frames to it.
    pub watchers: &'a AtomicUsize,
    /// How the caller reads the connection itself, if it may.
    pub reader: Option<&'a dyn ReadForCaller>,
}

/// What a caller's attempt to read the connection itself came to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum CallerRead {
    /// It read what there was: the queue holds the events.
    Read,
    /// Someone else holds the connection (the I/O thread reading, a writer).
    Busy,
    /// Not now (the connection is being set up, or has ended): the I/O thread reads.
    NotServing,
}

/// Reading the connection from the caller's thread (the stream's shared state).
pub trait ReadForCaller {
    /// Whether this caller should read the frames itself: the I/O thread could only run on
    /// the CPU the caller runs on, so handing a frame over would cost a context switch.
    /// Otherwise the I/O thread decodes the frame while the caller wakes up, which is sooner.
    fn reads_here(&self) -> bool;
    fn read_now(&self) -> CallerRead;
    /// A caller that does not wait (`next` with a zero timeout, an engine busy-polling) reads
    /// what is there now: the I/O thread, on the same CPU, would only get to the frame when
    /// the caller gives up the CPU. While such calls keep coming, the I/O thread leaves the
    /// socket to them, as to a waiting caller.
    fn poll_now(&self) -> CallerRead;
    /// The caller stops watching the socket while still waiting: the I/O thread must read.
    fn stop_watching(&self);
}

/// One caller among a socket's watchers (`Watch::watchers`), until dropped.
pub(super) struct Watching<'a>(&'a AtomicUsize);

impl<'a> Watching<'a> {
    pub(super) fn start(watchers: &'a AtomicUsize) -> Watching<'a> {
        watchers.fetch_add(1, Ordering::SeqCst);
        Watching(watchers)
    }
}

impl Drop for Watching<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
