//! The queue between a stream's I/O thread and the callers of `next`.
//!
//! Bounded (events and bytes): the connection's own status events always go in; when data
//! events, or notices about them (error, gap, seq_regression: one per frame a hostile venue
//! sends), do not fit they are counted, and a `{"state":"overflow","dropped":N}` status event
//! marks the place where they were lost — nothing disappears silently.
//!
//! Redaction: every status event and notice and the terminal error pass through the
//! stream's secrets (`crate::redact`: the session's token and key), as REST errors do. An
//! event that hands on a frame of the venue (an order reply, a push of any channel, a frame of
//! no known channel) passes through the secrets the stream sent the venue — its tokens —
//! alone: the venue can echo only what it was sent, and the key's hex forms, runs of 8 bytes
//! of which are often 8 decimal digits, would otherwise match numbers and hex ids in the
//! venue's data one event in about a million (an order id, a price, `received_ns`) and
//! corrupt it, or withhold an order's outcome.
//!
//! How a caller waits for the next event: `queue/waiting.rs`.

mod waiting;

use super::events::status;
use crate::error::{Code, Error, Result};
use crate::redact::Secrets;
use serde_json::json;
use std::collections::VecDeque;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// Most data events held for the caller at once.
pub(crate) const MAX_QUEUED_EVENTS: usize = 1 << 16;
/// Most bytes of data events held for the caller at once.
pub(crate) const MAX_QUEUED_BYTES: usize = 64 << 20;

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
    /// The I/O thread is ending the stream with this error (`ending`): new requests are
    /// refused as ended while it closes the connection, before `terminal` is set.
    ending: Option<Error>,
    /// While a connection is set up (`hold`): its events other than status, kept for after
    /// its `connected` / `reconnected` event (`release`).
    held: Option<Held>,
}

/// Events held while a connection is set up, bounded as the queue is.
#[derive(Default)]
struct Held {
    events: Vec<(Kind, String)>,
    bytes: usize,
    /// Events dropped while held (the hold was full): later than every held one, so their
    /// `overflow` marker comes after the held events when they are released.
    dropped: u64,
}

/// What a queued entry is, for the bounds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Data,
    /// A status event about the data (error, gap, seq_regression, request_timeout): bounded
    /// like data.
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
    /// The secrets redacted out of events (`Tables`).
    secrets: Mutex<Option<Tables>>,
}

/// The stream's secrets, as of its current connection.
#[derive(Clone)]
pub struct Tables {
    /// Out of status events, notices and the terminal error: the session's token and key.
    pub all: Arc<Secrets>,
    /// Out of the venue's frames handed on as data events: what the stream sent the venue
    /// (its token), which is all the venue can echo.
    pub sent: Arc<Secrets>,
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
    pub fn set_secrets(&self, tables: Tables) {
        *self.secrets.lock().unwrap_or_else(PoisonError::into_inner) = Some(tables);
    }

    fn current_secrets(&self) -> Option<Tables> {
        self.secrets.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    pub fn redact_error(&self, error: Error) -> Error {
        match self.current_secrets() {
            Some(tables) => tables.all.redact_error(error),
            None => error,
        }
    }

    /// `event` redacted of `which` secrets; one that is no longer JSON after it (a secret
    /// inside an escape) is withheld, and a notice says so.
    fn redacted(&self, event: String, which: fn(&Tables) -> &Arc<Secrets>) -> (String, bool) {
        let Some(tables) = self.current_secrets() else { return (event, false) };
        let secrets = which(&tables);
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

    /// A data event that hands on a frame of the venue (an order reply, a push, a frame of no
    /// known channel): redacted first of what the stream sent the venue.
    pub fn push_quoting_venue(&self, event: String) {
        match self.redacted(event, |tables| &tables.sent) {
            (event, false) => self.push_event(Kind::Data, event),
            (notice, true) => self.push_event(Kind::Notice, notice),
        }
    }

    pub fn push(&self, kind: Kind, event: String) {
        match kind {
            Kind::Data => self.push_event(kind, event),
            _ => {
                let (event, withheld) = self.redacted(event, |tables| &tables.all);
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
            if let Some(held) = &mut state.held {
                if held.events.len() >= MAX_QUEUED_EVENTS || held.bytes + event.len() > MAX_QUEUED_BYTES {
                    held.dropped += 1;
                } else {
                    held.bytes += event.len();
                    held.events.push((kind, event));
                }
                return;
            }
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

    /// From now on hold every event but status events: a connection is being set up, and
    /// what the venue sends before its auth answer (an account push) must come out after the
    /// status event that says the connection is up — an engine may reset its state on it.
    pub fn hold(&self) {
        self.lock().held.get_or_insert_with(Held::default);
    }

    /// Queue the held events (after the connection's status event, or before the events of
    /// its failure: never dropped) and stop holding.
    pub fn release(&self) {
        let Some(held) = self.lock().held.take() else { return };
        for (kind, event) in held.events {
            self.push_event(kind, event);
        }
        if held.dropped > 0 {
            // The marker goes where the loss was: after the held events, all older than it
            // (an engine that resynchronises at the marker must not then apply older events).
            let mut state = self.lock();
            if state.closed {
                return;
            }
            state.dropped += held.dropped;
            mark_overflow(&mut state);
            self.changed(&state, false);
            drop(state);
            self.wake_watcher();
        }
    }

    /// The I/O thread has ended for good: `next` gives the queued events, then this error.
    /// `status` (the `failed` event) is queued last under the same lock, so that a caller
    /// that has seen it is refused new requests as "ended", never told the stream is
    /// reconnecting.
    pub fn finish(&self, status: Option<String>, error: Error) {
        let status = status.map(|event| self.redacted(event, |tables| &tables.all));
        let error = self.redact_error(error);
        let mut state = self.lock();
        if let Some((event, withheld)) = status
            && !state.closed
        {
            mark_overflow(&mut state);
            state.events.push_back((if withheld { Kind::Notice } else { Kind::Status }, event));
        }
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

    /// The I/O thread is about to end the stream for good with `error` (its connection is
    /// still being closed; `finish` follows): from now on requests are refused as ended,
    /// never told that the stream is reconnecting.
    pub fn ending(&self, error: &Error) {
        let error = self.redact_error(error.clone());
        self.lock().ending = Some(error);
    }

    /// Why the stream can take no more requests: closed by the caller, or ended (or being
    /// ended) for good by the I/O thread (`ending`, `finish`); `None` while it runs.
    pub fn why_ended(&self) -> Option<String> {
        let state = self.lock();
        why_ended(&state).or_else(|| state.ending.as_ref().map(ended))
    }
}

/// Why `next` gives no more events: closed, or ended (`finish`: its events are queued). Not
/// while it is only `ending`: the events of its end are still to come. The words of
/// `PERPS_STREAM_CLOSED` (`take`).
fn why_ended(state: &State) -> Option<String> {
    if state.closed {
        return Some("the stream is closed (perps_stream_close)".to_owned());
    }
    state.terminal.as_ref().map(ended)
}

fn ended(error: &Error) -> String {
    format!("the stream has ended: {}: {}", error.code().name(), error.message())
}

/// The next event, or why there will be none; `None` when the queue is just empty. Once
/// closed, nothing more is given; once ended, the queued events first.
fn take(state: &mut State) -> Option<Result<String>> {
    if !state.closed
        && let Some((kind, event)) = state.events.pop_front()
    {
        if kind != Kind::Status {
            state.data_events -= 1;
            state.data_bytes -= event.len();
        }
        mark_overflow(state);
        return Some(Ok(event));
    }
    why_ended(state).map(|why| Err(Error::new(Code::StreamClosed, why)))
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
    use std::time::{Duration, Instant};

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
    fn events_dropped_while_held_are_marked_after_the_held_ones() {
        // A connection being set up: its pushes are held for after its status event; the
        // hold fills up, and the later pushes are lost. The marker must come after the held
        // events (all older than the loss), not before them.
        let queue = Queue::default();
        queue.hold();
        for i in 0..MAX_QUEUED_EVENTS + 3 {
            queue.push(Kind::Data, format!("{{\"n\":{i}}}"));
        }
        queue.push(Kind::Status, status("connected", json!({})));
        queue.release();
        let first = queue.pop(Some(Duration::ZERO), None).unwrap().unwrap();
        assert!(first.contains("\"connected\""), "{first}");
        for i in 0..MAX_QUEUED_EVENTS {
            assert_eq!(queue.pop(Some(Duration::ZERO), None).unwrap().unwrap(), format!("{{\"n\":{i}}}"));
        }
        let after: Vec<String> = std::iter::from_fn(|| queue.pop(Some(Duration::ZERO), None).unwrap()).collect();
        assert_eq!(after.len(), 1, "{after:?}");
        assert!(after[0].contains("\"overflow\"") && after[0].contains("\"dropped\":3"), "{after:?}");
    }

    #[test]
    fn close_wakes_a_waiting_pop_and_finish_reports_after_the_queue() {
        let queue = Arc::new(Queue::default());
        queue.push(Kind::Data, "{}".into());
        queue.finish(None, Error::new(Code::TokenExpired, "expired"));
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

    #[test]
    fn a_stream_being_ended_refuses_requests_but_still_delivers_the_events_of_its_end() {
        let queue = Queue::default();
        assert!(queue.why_ended().is_none());
        queue.ending(&Error::new(Code::ApiError, "refused"));
        // Requests: refused as ended (`why_ended`), never "reconnecting".
        assert!(queue.why_ended().unwrap().contains("PERPS_API_ERROR: refused"));
        // `next`: nothing yet, not the end; then the events of the end, then the end.
        assert_eq!(queue.pop(Some(Duration::ZERO), None).unwrap(), None);
        queue.push(Kind::Status, status("disconnected", json!({})));
        queue.finish(Some(status("failed", json!({}))), Error::new(Code::ApiError, "refused"));
        assert!(queue.pop(None, None).unwrap().unwrap().contains("\"disconnected\""));
        assert!(queue.pop(None, None).unwrap().unwrap().contains("\"failed\""));
        assert_eq!(queue.pop(None, None).unwrap_err().code(), Code::StreamClosed);
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
        queue.finish(None, Error::new(Code::Transport, "done"));
        let mut every = Vec::new();
        for _ in 0..consumers {
            let mine = done_rx.recv_timeout(Duration::from_secs(20)).expect("every consumer is woken by finish");
            every.extend(mine);
        }
        every.sort();
        every.dedup();
        assert_eq!(every.len(), producers * per_producer);
    }
}
