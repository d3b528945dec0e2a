//! The events a caller receives from `next`, one JSON object each, and the queue between the
//! I/O thread and the caller.
//!
//! Shapes (fields may be added, never renamed):
//! - venue pushes: `{"channel","seq","symbol"?,"data","received_ns"}`;
//! - order-stream replies: `{"channel":"order_response","request_id","code","message","final",…}`;
//! - everything about the connection: `{"channel":"status","state",…,"received_ns"}`.
//!
//! The queue is bounded (events and bytes). Status events always go in; when data events
//! do not fit they are counted, and a `{"state":"overflow","dropped":N}` status event
//! marks the place where they were lost: nothing disappears silently.

use crate::error::{Code, Error, Result};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Most data events held for the caller at once.
pub(crate) const MAX_QUEUED_EVENTS: usize = 1 << 16;
/// Most bytes of data events held for the caller at once.
pub(crate) const MAX_QUEUED_BYTES: usize = 64 << 20;

/// Wall-clock time in nanoseconds since the Unix epoch (what `received_ns` carries).
pub fn now_ns() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64)
}

/// A status event: `{"channel":"status","state":…, …fields, "received_ns":…}`.
pub fn status(state: &str, fields: Value) -> String {
    let mut event = json!({ "channel": "status", "state": state });
    if let (Value::Object(event), Value::Object(fields)) = (&mut event, fields) {
        event.extend(fields);
        event.insert("received_ns".into(), now_ns().into());
    }
    event.to_string()
}

/// A non-fatal problem with what the venue sent (the connection goes on).
pub fn error_status(error: &Error, frame_excerpt: Option<&str>) -> String {
    status(
        "error",
        json!({
            "code": error.code() as i32,
            "code_name": error.code().name(),
            "message": error.message(),
            "frame": frame_excerpt,
        }),
    )
}

#[derive(Default)]
struct State {
    events: VecDeque<(Kind, String)>,
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
    Status,
}

pub struct Queue {
    state: Mutex<State>,
    ready: Condvar,
}

impl Default for Queue {
    fn default() -> Self {
        Queue { state: Mutex::new(State::default()), ready: Condvar::new() }
    }
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn push(&self, kind: Kind, event: String) {
        let mut state = self.lock();
        if state.closed {
            return;
        }
        if kind == Kind::Data {
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
        drop(state);
        self.ready.notify_one();
    }

    /// The I/O thread has ended for good: `next` gives the queued events, then this error.
    pub fn finish(&self, error: Error) {
        self.lock().terminal = Some(error);
        self.ready.notify_all();
    }

    /// `perps_stream_close`: every waiting and later `next` fails with `PERPS_STREAM_CLOSED`.
    pub fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        state.events.clear();
        drop(state);
        self.ready.notify_all();
    }

    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// The next event; `Ok(None)` when `timeout` passes first (`None`: wait without limit).
    pub fn pop(&self, timeout: Option<Duration>) -> Result<Option<String>> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut state = self.lock();
        loop {
            if state.closed {
                return Err(Error::new(Code::StreamClosed, "the stream is closed (perps_stream_close)"));
            }
            if let Some((kind, event)) = state.events.pop_front() {
                if kind == Kind::Data {
                    state.data_events -= 1;
                    state.data_bytes -= event.len();
                }
                mark_overflow(&mut state);
                return Ok(Some(event));
            }
            if let Some(error) = &state.terminal {
                return Err(Error::new(
                    Code::StreamClosed,
                    format!("the stream has ended: {}: {}", error.code().name(), error.message()),
                ));
            }
            state = match deadline {
                None => self.ready.wait(state).unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(None);
                    }
                    self.ready.wait_timeout(state, left).unwrap_or_else(PoisonError::into_inner).0
                }
            };
        }
    }
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

    #[test]
    fn overflow_is_marked_where_the_loss_happened() {
        let queue = Queue::default();
        for i in 0..MAX_QUEUED_EVENTS + 5 {
            queue.push(Kind::Data, format!("{{\"n\":{i}}}"));
        }
        queue.push(Kind::Status, status("disconnected", json!({})));
        assert_eq!(queue.pop(Some(Duration::ZERO)).unwrap().unwrap(), "{\"n\":0}");
        // Room again: the marker is queued after everything that was kept.
        for _ in 1..MAX_QUEUED_EVENTS {
            queue.pop(Some(Duration::ZERO)).unwrap().unwrap();
        }
        let after: Vec<String> = std::iter::from_fn(|| queue.pop(Some(Duration::ZERO)).unwrap()).collect();
        assert_eq!(after.len(), 2, "{after:?}");
        assert!(after[0].contains("\"disconnected\""), "status events are never dropped: {after:?}");
        assert!(after[1].contains("\"overflow\"") && after[1].contains("\"dropped\":5"), "{after:?}");
    }

    #[test]
    fn close_wakes_a_waiting_pop_and_finish_reports_after_the_queue() {
        let queue = std::sync::Arc::new(Queue::default());
        queue.push(Kind::Data, "{}".into());
        queue.finish(Error::new(Code::TokenExpired, "expired"));
        assert_eq!(queue.pop(None).unwrap().as_deref(), Some("{}"));
        let e = queue.pop(None).unwrap_err();
        assert_eq!(e.code(), Code::StreamClosed);
        assert!(e.message().contains("PERPS_TOKEN_EXPIRED"), "{}", e.message());

        let queue = std::sync::Arc::new(Queue::default());
        let waiter = std::thread::spawn({
            let queue = queue.clone();
            move || queue.pop(None)
        });
        std::thread::sleep(Duration::from_millis(50));
        queue.close();
        assert_eq!(waiter.join().unwrap().unwrap_err().code(), Code::StreamClosed);
        assert_eq!(queue.pop(Some(Duration::from_millis(1))).unwrap_err().code(), Code::StreamClosed);
    }
}
