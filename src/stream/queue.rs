//! The queue between a stream's I/O thread and the callers of `next`.
//!
//! Bounded (events and bytes): the connection's own status events always go in; when data
//! events, or notices about them (error, gap, seq_regression: one per frame a hostile venue
//! sends), do not fit they are counted, and a `{"state":"overflow","dropped":N}` status event
//! marks the place where they were lost — nothing disappears silently.
//!
//! Redaction: every status event and notice, every event that quotes the venue's words (an
//! order reply, a frame of no known channel) and the terminal error pass through the
//! stream's secrets (`crate::redact`: the session's token and key), as REST errors do. Pushes
//! on the known channels are the venue's data, passed as sent.
//!
//! How a caller waits: in `poll`, on the queue's own signal *and on the connection's socket*
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

use super::events::status;
use super::watch::{CallerRead, Watch, Watching};
use crate::error::{Code, Error, Result};
use crate::redact::Secrets;
use serde_json::json;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Most data events held for the caller at once.
pub(crate) const MAX_QUEUED_EVENTS: usize = 1 << 16;
/// Most bytes of data events held for the caller at once.
pub(crate) const MAX_QUEUED_BYTES: usize = 64 << 20;

/// How long a caller woken by the socket watches the queue before it looks whether the I/O
/// thread has taken the frame up at all.
const MIN_WATCH: Duration = Duration::from_micros(20);
/// The longest a caller watches the queue before it sleeps again (a frame that takes longer
/// to decode wakes it through the signal).
const MAX_WATCH: Duration = Duration::from_millis(1);

#[derive(Default)]
struct State {
    events: VecDeque<(Kind, String)>,
    /// Callers asleep on `ready` (not the watcher).
    sleepers: usize,
    data_bytes: usize,
    data_events: usize,
    /// Data events refused since the last overflow marker.
    dropped: u64,
    /// `close` was called: `next` fails at once with `PERPS_STREAM_CLOSED`.
    closed: bool,
    /// The I/O thread ended for good with this error (after its `failed` event).
    terminal: Option<Error>,
}

/// What a queued entry is, for the bounds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Data,
    /// A status event about the data (error, gap, seq_regression): bounded like data.
    Notice,
    /// A status event about the connection: never dropped (their number is bounded by the
    /// reconnection pacing).
    Status,
}

pub struct Queue {
    state: Mutex<State>,
    /// Bumped with every change a waiting `pop` must see (an event, `finish`, `close`).
    changes: AtomicU64,
    /// Taken by the one `pop` that sleeps in `poll` (the watcher).
    watcher: AtomicBool,
    /// The watcher is (about to be) asleep: changes write the signal.
    watcher_asleep: AtomicBool,
    /// The watcher's signal (one end written, the other polled and drained by the watcher).
    signal_tx: UnixStream,
    signal_rx: UnixStream,
    /// Where the other callers sleep.
    ready: Condvar,
    /// The secrets redacted out of status events, venue words and the terminal error.
    secrets: Mutex<Option<Arc<Secrets>>>,
}

impl Default for Queue {
    /// For tests and benchmarks; a stream uses `Queue::new`.
    fn default() -> Self {
        Queue::new().expect("a socket pair for the queue's signal")
    }
}

impl Queue {
    pub fn new() -> Result<Queue> {
        let (signal_tx, signal_rx) = UnixStream::pair()
            .map_err(|e| Error::new(Code::Transport, format!("cannot create the event queue's signal: {e}")))?;
        for end in [&signal_tx, &signal_rx] {
            end.set_nonblocking(true)
                .map_err(|e| Error::new(Code::Transport, format!("the event queue's signal: {e}")))?;
        }
        Ok(Queue {
            state: Mutex::new(State::default()),
            changes: AtomicU64::new(0),
            watcher: AtomicBool::new(false),
            watcher_asleep: AtomicBool::new(false),
            signal_tx,
            signal_rx,
            ready: Condvar::new(),
            secrets: Mutex::new(None),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Count a change (made under the lock, `state`) and wake the sleepers on `ready`: all of
    /// them, or one. The watcher is woken after the lock is released (`wake_watcher`).
    fn changed(&self, state: &State, all: bool) {
        self.changes.fetch_add(1, Ordering::SeqCst);
        if state.sleepers > 0 {
            if all {
                self.ready.notify_all();
            } else {
                self.ready.notify_one();
            }
        }
    }

    fn wake_watcher(&self) {
        // SeqCst with the watcher's announcement: either it sees the change, or this sees it.
        if self.watcher_asleep.load(Ordering::SeqCst) {
            // A full buffer already holds a wake-up: nothing is lost.
            let _ = (&self.signal_tx).write(&[1]);
        }
    }

    /// The secrets to redact from now on (the stream's session, at each connection: its
    /// token may have been refreshed).
    pub fn set_secrets(&self, secrets: Secrets) {
        *self.secrets.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(secrets));
    }

    fn current_secrets(&self) -> Option<Arc<Secrets>> {
        self.secrets.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    pub fn redact_error(&self, error: Error) -> Error {
        match self.current_secrets() {
            Some(secrets) => secrets.redact_error(error),
            None => error,
        }
    }

    /// `event` redacted; one that is no longer JSON after it (a secret inside an escape) is
    /// withheld, and a notice says so.
    fn redacted(&self, event: String) -> (String, bool) {
        let Some(secrets) = self.current_secrets() else { return (event, false) };
        let std::borrow::Cow::Owned(redacted) = secrets.redact(&event) else { return (event, false) };
        if serde_json::from_str::<serde::de::IgnoredAny>(&redacted).is_ok() {
            return (redacted, false);
        }
        let notice = super::events::status(
            "error",
            json!({ "code_name": "PERPS_BAD_RESPONSE", "message": "the venue sent a frame that quotes a secret of this session; withheld" }),
        );
        (notice, true)
    }

    /// A data event that quotes the venue's words (an order reply, a frame of no known
    /// channel): redacted first.
    pub fn push_quoting_venue(&self, event: String) {
        match self.redacted(event) {
            (event, false) => self.push_event(Kind::Data, event),
            (notice, true) => self.push_event(Kind::Notice, notice),
        }
    }

    pub fn push(&self, kind: Kind, event: String) {
        match kind {
            Kind::Data => self.push_event(kind, event),
            _ => {
                let (event, withheld) = self.redacted(event);
                self.push_event(if withheld { Kind::Notice } else { kind }, event);
            }
        }
    }

    fn push_event(&self, kind: Kind, event: String) {
        let mut state = self.lock();
        if state.closed {
            return;
        }
        if kind != Kind::Status {
            if state.data_events >= MAX_QUEUED_EVENTS || state.data_bytes + event.len() > MAX_QUEUED_BYTES {
                state.dropped += 1;
                return;
            }
            mark_overflow(&mut state);
            state.data_events += 1;
            state.data_bytes += event.len();
        }
        // The marker must come before anything queued after the loss.
        mark_overflow(&mut state);
        state.events.push_back((kind, event));
        self.changed(&state, false);
        drop(state);
        self.wake_watcher();
        if self.watcher.load(Ordering::Acquire) && !self.watcher_asleep.load(Ordering::Acquire) {
            // A caller is watching for this event: if it waits for this CPU (a caller and an
            // I/O thread pinned together), let it have the CPU now rather than after this
            // thread's next read and poll.
            std::thread::yield_now();
        }
    }

    /// The I/O thread has ended for good: `next` gives the queued events, then this error.
    pub fn finish(&self, error: Error) {
        let error = self.redact_error(error);
        let mut state = self.lock();
        state.terminal = Some(error);
        self.changed(&state, true);
        drop(state);
        self.wake_watcher();
    }

    /// `perps_stream_close`: every waiting and later `next` fails with `PERPS_STREAM_CLOSED`.
    pub fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        state.events.clear();
        self.changed(&state, true);
        drop(state);
        self.wake_watcher();
    }

    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

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

/// The next event, or why there will be none; `None` when the queue is just empty.
fn take(state: &mut State) -> Option<Result<String>> {
    if state.closed {
        return Some(Err(Error::new(Code::StreamClosed, "the stream is closed (perps_stream_close)")));
    }
    if let Some((kind, event)) = state.events.pop_front() {
        if kind != Kind::Status {
            state.data_events -= 1;
            state.data_bytes -= event.len();
        }
        mark_overflow(state);
        return Some(Ok(event));
    }
    state.terminal.as_ref().map(|error| {
        Err(Error::new(
            Code::StreamClosed,
            format!("the stream has ended: {}: {}", error.code().name(), error.message()),
        ))
    })
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

/// Queue the overflow marker once there is room and data was lost.
fn mark_overflow(state: &mut State) {
    if state.dropped > 0 && state.data_events < MAX_QUEUED_EVENTS {
        let dropped = std::mem::take(&mut state.dropped);
        let marker = status(
            "overflow",
            json!({ "dropped": dropped, "message": "the caller did not keep up: events were dropped here; resynchronise (e.g. by REST)" }),
        );
        state.events.push_back((Kind::Status, marker));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn overflow_is_marked_where_the_loss_happened() {
        let queue = Queue::default();
        for i in 0..MAX_QUEUED_EVENTS + 5 {
            queue.push(Kind::Data, format!("{{\"n\":{i}}}"));
        }
        queue.push(Kind::Status, status("disconnected", json!({})));
        assert_eq!(queue.pop(Some(Duration::ZERO), None).unwrap().unwrap(), "{\"n\":0}");
        // Room again: the marker is queued after everything that was kept.
        for _ in 1..MAX_QUEUED_EVENTS {
            queue.pop(Some(Duration::ZERO), None).unwrap().unwrap();
        }
        let after: Vec<String> = std::iter::from_fn(|| queue.pop(Some(Duration::ZERO), None).unwrap()).collect();
        assert_eq!(after.len(), 2, "{after:?}");
        assert!(after[0].contains("\"disconnected\""), "status events are never dropped: {after:?}");
        assert!(after[1].contains("\"overflow\"") && after[1].contains("\"dropped\":5"), "{after:?}");
    }

    #[test]
    fn close_wakes_a_waiting_pop_and_finish_reports_after_the_queue() {
        let queue = Arc::new(Queue::default());
        queue.push(Kind::Data, "{}".into());
        queue.finish(Error::new(Code::TokenExpired, "expired"));
        assert_eq!(queue.pop(None, None).unwrap().as_deref(), Some("{}"));
        let e = queue.pop(None, None).unwrap_err();
        assert_eq!(e.code(), Code::StreamClosed);
        assert!(e.message().contains("PERPS_TOKEN_EXPIRED"), "{}", e.message());

        let queue = Arc::new(Queue::default());
        let waiter = std::thread::spawn({
            let queue = queue.clone();
            move || queue.pop(None, None)
        });
        std::thread::sleep(Duration::from_millis(50));
        queue.close();
        assert_eq!(waiter.join().unwrap().unwrap_err().code(), Code::StreamClosed);
        assert_eq!(queue.pop(Some(Duration::from_millis(1)), None).unwrap_err().code(), Code::StreamClosed);
    }

    /// Many producers and consumers, consumers in `pop` with or without a time limit: every
    /// event is taken exactly once, and `finish` reaches every waiting consumer (a lost
    /// wake-up leaves one asleep: the test fails after 20 s instead of finishing).
    #[test]
    fn no_wake_up_is_lost() {
        let queue = Arc::new(Queue::default());
        let (producers, per_producer, consumers) = (4, 5_000, 3);
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        for c in 0..consumers {
            let (queue, done) = (queue.clone(), done_tx.clone());
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                loop {
                    // One consumer with a time limit that never passes in this test, the others
                    // without: each can only be woken, never time out.
                    let timeout = (c == 0).then(|| Duration::from_secs(3600));
                    match queue.pop(timeout, None) {
                        Ok(Some(event)) => mine.push(event),
                        Ok(None) => {}
                        Err(_) => break,
                    }
                }
                let _ = done.send(mine);
            });
        }
        let producer_threads: Vec<_> = (0..producers)
            .map(|p| {
                let queue = queue.clone();
                std::thread::spawn(move || {
                    for i in 0..per_producer {
                        queue.push(Kind::Data, format!("{p}-{i}"));
                        if i % 500 == 0 {
                            std::thread::sleep(Duration::from_micros(200));
                        }
                    }
                })
            })
            .collect();
        for thread in producer_threads {
            thread.join().unwrap();
        }
        // Until the queue is empty, then the end.
        let started = Instant::now();
        while !queue.lock().events.is_empty() {
            assert!(started.elapsed() < Duration::from_secs(20), "events left in the queue");
            std::thread::sleep(Duration::from_millis(1));
        }
        queue.finish(Error::new(Code::Transport, "done"));
        let mut every = Vec::new();
        for _ in 0..consumers {
            let mine = done_rx.recv_timeout(Duration::from_secs(20)).expect("every consumer is woken by finish");
            every.extend(mine);
        }
        every.sort();
        every.dedup();
        assert_eq!(every.len(), producers * per_producer);
    }

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
