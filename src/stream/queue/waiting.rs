//! How a caller of `next` waits for the queue's next event (`Queue::pop`): apart from what
//! the queue holds and lets in (`queue.rs`: bounds, redaction), because this part is about
//! threads, CPUs and descriptors, and is what the latency of an event depends on.
//!
//! A caller sleeps in `poll`, on the queue's own signal *and on the connection's socket*
//! (`Watch`). A frame arriving wakes the caller at the same moment as the I/O thread, instead
//! of after it (a second wake-up, one thread by another, costs more than decoding a book on a
//! virtual machine); the caller then watches the queue while the I/O thread reads and decodes
//! the frame, and returns the event as soon as it is queued. When the I/O thread can only run
//! on the CPU the caller is on (pinned there: it inherits the affinity of the thread that
//! opened the stream), it could not decode before the caller gives up the CPU, a context
//! switch per event: then the caller reads and decodes the frame itself (`ReadForCaller`,
//! `reader.rs`), as a plain read loop would, and the I/O thread leaves the socket to it
//! (`Watch::watchers`). When the caller cannot read (the connection is being set up, or held
//! by another thread), it watches the queue as above. It watches only while the I/O thread
//! is busy with what woke it, or for `MIN_WATCH` at first (the I/O thread may not have
//! started yet), never more than `MAX_WATCH`; then it sleeps again, and hands the socket
//! back to the I/O thread. A call that does not wait (a zero timeout), on the I/O thread's
//! CPU, reads the socket once itself (`ReadForCaller::poll_now`): an engine busy-polling
//! there would otherwise get each frame only when the scheduler lets the I/O thread run.
//! One caller at a time sleeps that way (the watcher; it alone drains
//! the signal, so no wake-up meant for another sleeper is consumed); other concurrent callers
//! sleep on a condition variable. Either is woken only when it sleeps: the I/O thread makes
//! no system call per event to wake anyone.

use super::super::watch::{CallerRead, Watch, Watching};
use super::{Queue, take};
use crate::error::Result;
use std::io::Read;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::PoisonError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a caller woken by the socket watches the queue before it looks whether the I/O
/// thread has taken the frame up at all.
const MIN_WATCH: Duration = Duration::from_micros(20);
/// The longest a caller watches the queue before it sleeps again (a frame that takes longer
/// to decode wakes it through the signal).
const MAX_WATCH: Duration = Duration::from_millis(1);

impl Queue {
    /// The next event; `Ok(None)` when `timeout` passes first (`None`: wait without limit).
    /// While it waits it also watches `watch` (see the module's documentation).
    pub fn pop(&self, timeout: Option<Duration>, mut watch: Option<&Watch<'_>>) -> Result<Option<String>> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut watcher: Option<WatcherRole> = None;
        // Counted among the socket's watchers from the first sleep on it to the return.
        let mut watching: Option<Watching> = None;
        let mut polled = false;
        loop {
            let mut state = self.lock();
            if let Some(outcome) = take(&mut state) {
                return outcome.map(Some);
            }
            let seen = self.changes.load(Ordering::SeqCst);
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left == Some(Duration::ZERO) {
                drop(state);
                // A call that does not wait reads the socket itself, once, where a waiting
                // caller would (`ReadForCaller::poll_now`).
                if timeout == Some(Duration::ZERO)
                    && !polled
                    && let Some(reader) = watch.and_then(|w| w.reader).filter(|r| r.reads_here())
                {
                    polled = true;
                    if reader.poll_now() == CallerRead::Read {
                        continue;
                    }
                }
                return Ok(None);
            }
            if watcher.is_none() {
                watcher = WatcherRole::take(&self.watcher);
            }
            if watcher.is_none() {
                // Another caller is the watcher: sleep on the condition variable.
                state.sleepers += 1;
                state = match left {
                    None => self.ready.wait(state).unwrap_or_else(PoisonError::into_inner),
                    Some(left) => self.ready.wait_timeout(state, left).unwrap_or_else(PoisonError::into_inner).0,
                };
                state.sleepers -= 1;
                continue;
            }
            drop(state);
            let reads_here = watch.and_then(|w| w.reader).is_some_and(|r| r.reads_here());
            match (reads_here, &watching, watch) {
                (true, None, Some(w)) => watching = Some(Watching::start(w.watchers)),
                (false, Some(_), _) => watching = None,
                _ => {}
            }
            // Announced before the last look: a change after it writes the signal.
            self.watcher_asleep.store(true, Ordering::SeqCst);
            let socket_ready = self.changes.load(Ordering::SeqCst) == seen
                && wait(self.signal_rx.as_raw_fd(), watch.map(|w| w.fd), left);
            self.watcher_asleep.store(false, Ordering::SeqCst);
            self.drain_signal();
            if let (true, Some(socket)) = (socket_ready, watch)
                && !self.watch_queue(seen, socket, reads_here)
            {
                // The socket stays readable but nothing comes of it (the connection is held
                // up, e.g. by a writer waiting for the venue): for the rest of this call,
                // sleep on the signal alone rather than wake on the socket again and again,
                // and leave the reading to the I/O thread.
                watch = None;
                watching = None;
                if let (true, Some(reader)) = (reads_here, socket.reader) {
                    reader.stop_watching();
                }
            }
        }
    }

    /// The socket woke us: read the frame ourselves, or, when the I/O thread reads it, watch
    /// for the event it makes. False when `MAX_WATCH` passed without either.
    fn watch_queue(&self, seen: u64, watch: &Watch<'_>, reads_here: bool) -> bool {
        let started = Instant::now();
        loop {
            let read = match watch.reader {
                Some(reader) if reads_here => reader.read_now(),
                _ => CallerRead::NotServing,
            };
            if read == CallerRead::Read {
                return true;
            }
            // A few pauses (each about 40 ns on recent x86) between yields.
            for _ in 0..8 {
                if self.changes.load(Ordering::Acquire) != seen {
                    return true;
                }
                std::hint::spin_loop();
            }
            let watched = started.elapsed();
            if watched >= MAX_WATCH {
                return false;
            }
            if read == CallerRead::NotServing && watched >= MIN_WATCH && !watch.io_busy.load(Ordering::Acquire) {
                return true;
            }
            // The I/O thread may be waiting for this CPU.
            std::thread::yield_now();
        }
    }

    fn drain_signal(&self) {
        let mut buf = [0u8; 64];
        while matches!((&self.signal_rx).read(&mut buf), Ok(n) if n > 0) {}
    }
}

/// The watcher's role, held for one `pop` call.
struct WatcherRole<'a>(&'a AtomicBool);

impl<'a> WatcherRole<'a> {
    fn take(flag: &'a AtomicBool) -> Option<WatcherRole<'a>> {
        flag.compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed).ok().map(|_| WatcherRole(flag))
    }
}

impl Drop for WatcherRole<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Sleep until the signal or the socket is readable, or `timeout` passes; whether the socket
/// is what woke us.
fn wait(signal: RawFd, socket: Option<RawFd>, timeout: Option<Duration>) -> bool {
    let mut fds = [
        libc::pollfd { fd: signal, events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: socket.unwrap_or(-1), events: libc::POLLIN, revents: 0 },
    ];
    let count = if socket.is_some() { 2 } else { 1 };
    // Rounded up to the millisecond: waking early would only loop.
    let ms = timeout.map_or(-1, |t| t.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32);
    // SAFETY: `count` valid pollfd entries for the duration of the call.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), count, ms) };
    ready > 0 && fds[0].revents == 0 && fds[1].revents & libc::POLLIN != 0
}

#[cfg(test)]
mod tests {
    use super::super::Kind;
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;

    /// A pop watching a socket that turns readable keeps watching the queue while the "I/O
    /// thread" is busy, and returns the event it then queues.
    #[test]
    fn a_readable_socket_wakes_the_caller_which_takes_the_event_queued_after() {
        let queue = Arc::new(Queue::default());
        let (mut venue, socket) = UnixStream::pair().unwrap();
        let busy = Arc::new(AtomicBool::new(false));
        let io = std::thread::spawn({
            let (queue, busy) = (queue.clone(), busy.clone());
            move || {
                std::thread::sleep(Duration::from_millis(30));
                busy.store(true, Ordering::Release);
                venue.write_all(b"x").unwrap();
                std::thread::sleep(Duration::from_micros(300));
                queue.push(Kind::Data, "{\"a\":1}".into());
                busy.store(false, Ordering::Release);
                venue
            }
        });
        let watchers = std::sync::atomic::AtomicUsize::new(0);
        let watch = Watch { fd: socket.as_raw_fd(), io_busy: &busy, watchers: &watchers, reader: None };
        assert_eq!(queue.pop(Some(Duration::from_secs(5)), Some(&watch)).unwrap().as_deref(), Some("{\"a\":1}"));
        io.join().unwrap();
    }
}
