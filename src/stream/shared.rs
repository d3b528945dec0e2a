//! What a stream's I/O thread shares with the callers: the connection (`Link`, under its
//! lock, for order writers and for callers that read it), the queue of events, and the
//! descriptors that wake either side (`Shared`).

use super::events::{self, Kind, Queue};
use super::limits::Permit;
use super::reader::{Reader, read_served};
use super::transport::Connection;
use super::watch::{CallerRead, ReadForCaller, Watch};
use crate::error::{Code, Error, Result};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

/// The live connection, shared with callers that write order frames.
#[derive(Default)]
pub struct Link {
    pub conn: Option<Connection>,
    pub(super) _permit: Option<Permit>,
    /// While the connection is served: how it is read, by the I/O thread or a caller.
    pub reader: Option<Reader>,
}

pub struct Shared {
    pub queue: Queue,
    /// A descriptor that refers to the current connection's socket (`dup3` of it) and, between
    /// connections, to `placeholder`: what a caller waiting in `next` watches (`queue/waiting.rs`).
    watch: OwnedFd,
    /// Never readable (nothing is ever written to its peer).
    placeholder: (UnixStream, UnixStream),
    /// Whether the I/O thread is at work (not waiting in `poll`).
    pub(super) io_busy: AtomicBool,
    /// Callers in `next` that read the connection's socket themselves (`Watch::watchers`).
    pub(super) socket_watchers: AtomicUsize,
    /// The one CPU the I/O thread may run on, or -1 (`note_affinity`).
    pub(super) io_cpu: AtomicI32,
    /// When a caller last read the socket in a call that does not wait (`poll_now`): `born`
    /// plus this many microseconds, 0 for never.
    polled_at_us: AtomicU64,
    born: Instant,
    link: Mutex<Link>,
    /// Callers waiting for `link` to write an order frame: the I/O thread lets go of it
    /// after the frame it is reading instead of reading on.
    writers_waiting: AtomicUsize,
    closing: AtomicBool,
    wake_tx: UnixStream,
    pub(super) wake_rx: UnixStream,
    /// Readable from `close` on, for good (its byte is never read): what a writer waiting
    /// for room in the socket (`Connection::flush`) polls beside the socket. Not `wake_rx`,
    /// which the I/O thread drains: a writer could miss the byte and wait its full timeout.
    closed_tx: UnixStream,
    closed_rx: UnixStream,
    /// The socket of a connection being set up, so `close` can cut its handshake short.
    pub(super) handshake: Mutex<Option<TcpStream>>,
    exited: Mutex<bool>,
    exited_signal: Condvar,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub fn new() -> Result<Shared> {
        let (wake_tx, wake_rx) = UnixStream::pair()
            .map_err(|e| Error::new(Code::Transport, format!("cannot create a wake-up socket: {e}")))?;
        for end in [&wake_tx, &wake_rx] {
            end.set_nonblocking(true).map_err(|e| Error::new(Code::Transport, format!("wake-up socket: {e}")))?;
        }
        let (closed_tx, closed_rx) = UnixStream::pair()
            .map_err(|e| Error::new(Code::Transport, format!("cannot create a wake-up socket: {e}")))?;
        closed_tx.set_nonblocking(true).map_err(|e| Error::new(Code::Transport, format!("wake-up socket: {e}")))?;
        let placeholder =
            UnixStream::pair().map_err(|e| Error::new(Code::Transport, format!("cannot create a socket pair: {e}")))?;
        let watch = placeholder
            .0
            .try_clone()
            .map_err(|e| Error::new(Code::Transport, format!("cannot duplicate a descriptor: {e}")))?;
        Ok(Shared {
            queue: Queue::new()?,
            watch: OwnedFd::from(watch),
            placeholder,
            io_busy: AtomicBool::new(false),
            socket_watchers: AtomicUsize::new(0),
            io_cpu: AtomicI32::new(-1),
            polled_at_us: AtomicU64::new(0),
            born: Instant::now(),
            link: Mutex::new(Link::default()),
            writers_waiting: AtomicUsize::new(0),
            closing: AtomicBool::new(false),
            wake_tx,
            wake_rx,
            closed_tx,
            closed_rx,
            handshake: Mutex::new(None),
            exited: Mutex::new(false),
            exited_signal: Condvar::new(),
        })
    }

    pub fn link(&self) -> MutexGuard<'_, Link> {
        lock(&self.link)
    }

    /// The next event for a caller (`Stream::next`), watching the connection while it waits.
    pub fn next(&self, timeout: Option<Duration>) -> Result<Option<String>> {
        let watch = Watch {
            fd: self.watch.as_raw_fd(),
            io_busy: &self.io_busy,
            watchers: &self.socket_watchers,
            reader: Some(self),
        };
        self.queue.pop(timeout, Some(&watch))
    }

    /// Point the watched descriptor at `fd` (a new connection's socket) or, with `None`, at
    /// the placeholder. A failure only costs the callers the early wake-up.
    pub(super) fn point_watch(&self, fd: Option<RawFd>) {
        let target = fd.unwrap_or(self.placeholder.0.as_raw_fd());
        let watch = self.watch.as_raw_fd();
        // SAFETY: both descriptors are open; `watch` is ours, and replacing it is atomic.
        #[cfg(target_os = "linux")]
        unsafe {
            libc::dup3(target, watch, libc::O_CLOEXEC)
        };
        // SAFETY: as above; close-on-exec set again right after.
        #[cfg(not(target_os = "linux"))]
        unsafe {
            libc::dup2(target, watch);
            libc::fcntl(watch, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }

    /// The link for a caller's write: the I/O thread, if it is reading, hands it over after
    /// the current frame (not after its whole read budget).
    pub fn link_for_writing(&self) -> MutexGuard<'_, Link> {
        if let Ok(link) = self.link.try_lock() {
            return link;
        }
        self.writers_waiting.fetch_add(1, Ordering::AcqRel);
        let link = lock(&self.link);
        self.writers_waiting.fetch_sub(1, Ordering::AcqRel);
        link
    }

    /// Whether a caller read the socket in a call that does not wait within `within`: an
    /// engine busy-polling `next` on the I/O thread's CPU, which reads the frames itself.
    pub(super) fn polled_within(&self, within: Duration) -> bool {
        let at = self.polled_at_us.load(Ordering::Relaxed);
        at != 0 && (self.born.elapsed().as_micros() as u64).saturating_sub(at) < within.as_micros() as u64
    }

    pub(super) fn writer_waiting(&self) -> bool {
        self.writers_waiting.load(Ordering::Acquire) > 0
    }

    pub fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    /// A descriptor readable once the stream is closing, for a writer's wait for room
    /// (`transport::connect`). It lives as long as `Shared`, which every connection of the
    /// stream is dropped before.
    pub(super) fn closed_signal(&self) -> RawFd {
        self.closed_rx.as_raw_fd()
    }

    /// From any thread: `next` fails at once, the I/O thread wakes and ends, and so does a
    /// writer waiting for room in the socket (the link's holder: the I/O thread needs it).
    pub fn close(&self) {
        self.closing.store(true, Ordering::Release);
        self.queue.close();
        self.wake_io();
        let _ = (&self.closed_tx).write(&[1]);
        if let Some(socket) = lock(&self.handshake).as_ref() {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }

    /// Wait up to `limit` for the I/O thread to end; whether it did.
    pub fn wait_exited(&self, limit: Duration) -> bool {
        let exited = lock(&self.exited);
        let (exited, _) =
            self.exited_signal.wait_timeout_while(exited, limit, |done| !*done).unwrap_or_else(PoisonError::into_inner);
        *exited
    }

    pub(super) fn mark_exited(&self) {
        *lock(&self.exited) = true;
        self.exited_signal.notify_all();
    }

    /// Wake the I/O thread from its `poll` (`close`, a caller that found the connection
    /// ended or stops reading it, a request whose deadline the thread must now keep).
    pub(super) fn wake_io(&self) {
        let _ = (&self.wake_tx).write(&[1]);
    }

    pub(super) fn drain_wake(&self) {
        let mut buf = [0u8; 64];
        while matches!((&self.wake_rx).read(&mut buf), Ok(n) if n > 0) {}
    }

    /// Sleep `d`, or until `close`. Nothing else ends it early: not a wake a caller left
    /// (a connection it found ended: there is none during a sleep), nor a signal that
    /// interrupts the wait (EINTR: SIGCHLD, a profiler's timer, any the host's handlers catch
    /// on this thread). The backoff between reconnections is kept whole.
    pub(super) fn sleep(&self, d: Duration) {
        let until = Instant::now() + d;
        while !self.is_closing() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let polled = Instant::now();
            let woken = poll_fds(None, self.wake_rx.as_raw_fd(), left);
            if !woken && polled.elapsed() < Duration::from_millis(1) && left > Duration::from_millis(1) {
                // `poll` came back at once with nothing ready: interrupted, or failing. A short
                // pause rather than a spin (a close still ends the sleep within it).
                std::thread::sleep(left.min(Duration::from_millis(10)));
            }
            self.drain_wake();
        }
    }

    pub(super) fn status(&self, state: &str, fields: Value) {
        self.queue.push(Kind::Status, events::status(state, fields));
    }
}

/// A caller in `next` woken by the socket reads the frame itself, if the connection is being
/// served and no one else holds it (`reader.rs`).
impl ReadForCaller for Shared {
    fn reads_here(&self) -> bool {
        let io_cpu = self.io_cpu.load(Ordering::Relaxed);
        // SAFETY: sched_getcpu has no preconditions (the vDSO; -1 on failure).
        io_cpu >= 0 && unsafe { libc::sched_getcpu() } == io_cpu
    }

    fn read_now(&self) -> CallerRead {
        let mut link = match self.link.try_lock() {
            Ok(link) => link,
            Err(TryLockError::WouldBlock) => return CallerRead::Busy,
            Err(TryLockError::Poisoned(_)) => return CallerRead::NotServing,
        };
        let Link { conn: Some(conn), reader: Some(reader), .. } = &mut *link else {
            return CallerRead::NotServing;
        };
        if reader.ended.is_some() || self.is_closing() {
            return CallerRead::NotServing;
        }
        let mut more = false;
        if let Some(end) = read_served(conn, reader, self, &mut more) {
            // The end of the connection is the I/O thread's to handle: wake it.
            reader.ended = Some(end);
            self.wake_io();
        }
        CallerRead::Read
    }

    fn poll_now(&self) -> CallerRead {
        // At least 1: 0 stands for never.
        self.polled_at_us.store((self.born.elapsed().as_micros() as u64).max(1), Ordering::Relaxed);
        self.read_now()
    }

    fn stop_watching(&self) {
        self.wake_io();
    }
}

/// Record in `io_cpu` the one CPU the calling thread may run on, or -1 when it may run on
/// several (or the affinity cannot be read): callers on that CPU read the socket themselves.
pub(super) fn note_affinity(io_cpu: &AtomicI32) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the call writes at most its size.
    let cpu = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0
            || libc::CPU_COUNT(&set) != 1
        {
            -1
        } else {
            (0..libc::CPU_SETSIZE as usize).find(|&i| libc::CPU_ISSET(i, &set)).map_or(-1, |i| i as i32)
        }
    };
    io_cpu.store(cpu, Ordering::Relaxed);
}

/// Wait until `socket` (if any) or `wake` is readable, or `timeout` passes (or a signal
/// interrupts the wait). Whether one of them is ready.
pub(super) fn poll_fds(socket: Option<RawFd>, wake: RawFd, timeout: Duration) -> bool {
    let mut fds = [
        libc::pollfd { fd: wake, events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: socket.unwrap_or(-1), events: libc::POLLIN, revents: 0 },
    ];
    let count = if socket.is_some() { 2 } else { 1 };
    // Rounded up: waking a little early would only spin.
    let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
    // SAFETY: `count` valid pollfd entries for the duration of the call.
    unsafe { libc::poll(fds.as_mut_ptr(), count, ms) > 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::Arc;

    extern "C" fn ignore(_: libc::c_int) {}

    #[test]
    fn a_signal_or_a_callers_wake_does_not_cut_a_sleep_short() {
        // A handler (not SIG_IGN): the signal is delivered, and interrupts `poll` with EINTR.
        // SA_RESTART is set, yet `poll` is never restarted (signal(7)).
        // SAFETY: a handler that does nothing, for a signal nothing else in the tests uses.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = ignore as *const () as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigaction(libc::SIGURG, &action, std::ptr::null_mut());
        }
        let shared = Arc::new(Shared::new().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        let sleeper = std::thread::spawn({
            let shared = shared.clone();
            move || {
                // SAFETY: the calling thread's own id.
                tx.send(unsafe { libc::pthread_self() }).unwrap();
                let started = Instant::now();
                shared.sleep(Duration::from_millis(400));
                started.elapsed()
            }
        });
        let thread = rx.recv().unwrap();
        for _ in 0..5 {
            std::thread::sleep(Duration::from_millis(40));
            // SAFETY: the sleeping thread is alive until joined below.
            unsafe { libc::pthread_kill(thread, libc::SIGURG) };
        }
        // Nor does a wake a caller leaves (a connection it found ended).
        shared.wake_io();
        let slept = sleeper.join().unwrap();
        assert!(slept >= Duration::from_millis(400), "slept {slept:?} of 400 ms");
        // A close still ends it at once.
        let sleeper = std::thread::spawn({
            let shared = shared.clone();
            move || {
                let started = Instant::now();
                shared.sleep(Duration::from_secs(30));
                started.elapsed()
            }
        });
        std::thread::sleep(Duration::from_millis(50));
        shared.close();
        assert!(sleeper.join().unwrap() < Duration::from_secs(5));
    }
}
