//! The stream exports called from Rust tests the way a C caller calls them: a handle freed on
//! drop, events copied out of their owned C strings and parsed, errors read and freed.
#![allow(dead_code)]

use super::abi::{Client, Failure, Session, c, owned, take_error};
use perps::ffi::stream::*;
use serde_json::Value;
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

/// A `perps_stream*`, freed (`perps_stream_free`) on drop.
#[derive(Debug)]
pub struct Stream(pub *mut perps_stream);

// SAFETY: the library documents next, new_order, cancel_order and close as callable from any
// threads at once; the handle is freed only on drop, after every borrow ended.
unsafe impl Send for Stream {}
unsafe impl Sync for Stream {}

impl Stream {
    /// `perps_stream_open`; `session` None passes NULL (public channels only).
    pub fn market(client: &Client, session: Option<&Session>, subscriptions: &str) -> Result<Stream, Failure> {
        let subs = c(subscriptions);
        let mut err = null_mut();
        let s = session.map_or(null(), |s| s.0 as *const _);
        let handle = perps_stream_open(client.0, s, subs.as_ptr(), &mut err);
        if handle.is_null() { Err(take_error(err)) } else { Ok(Stream(handle)) }
    }

    /// `perps_order_stream_open`.
    pub fn orders(client: &Client, session: &Session) -> Result<Stream, Failure> {
        let mut err = null_mut();
        let handle = perps_order_stream_open(client.0, session.0, &mut err);
        if handle.is_null() { Err(take_error(err)) } else { Ok(Stream(handle)) }
    }

    /// `perps_stream_next`: `Ok(None)` when the time passed with nothing (NULL, no error).
    pub fn next(&self, timeout_ms: i64) -> Result<Option<Value>, Failure> {
        let mut err = null_mut();
        let event = perps_stream_next(self.0, timeout_ms, &mut err);
        if event.is_null() {
            return if err.is_null() { Ok(None) } else { Err(take_error(err)) };
        }
        assert!(err.is_null(), "an error object set beside an event");
        let text = unsafe { std::ffi::CStr::from_ptr(event) }.to_str().unwrap().to_owned();
        perps::ffi::strings::perps_string_free(event);
        Ok(Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("event is not JSON ({e}): {text}"))))
    }

    /// `perps_stream_new_order`: `{"request_id","cl_ord_id"}`.
    pub fn new_order(&self, order: &str) -> Result<Value, Failure> {
        let o = c(order);
        owned(|e| perps_stream_new_order(self.0, o.as_ptr(), e)).map(|t| serde_json::from_str(&t).unwrap())
    }

    /// `perps_stream_cancel_order`: `{"request_id","order_id"?,"cl_ord_id"?}`.
    pub fn cancel_order(&self, params: &str) -> Result<Value, Failure> {
        let p = c(params);
        owned(|e| perps_stream_cancel_order(self.0, p.as_ptr(), e)).map(|t| serde_json::from_str(&t).unwrap())
    }

    /// `perps_stream_close` (any thread).
    pub fn close(&self) {
        perps_stream_close(self.0);
    }

    /// Events until one satisfies `pred` (returned with those before it); panics after
    /// `limit` or on an error from `next`.
    pub fn until(&self, limit: Duration, what: &str, pred: impl Fn(&Value) -> bool) -> (Value, Vec<Value>) {
        let deadline = Instant::now() + limit;
        let mut before = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now()).as_millis() as i64;
            match self.next(left) {
                Ok(Some(event)) if pred(&event) => return (event, before),
                Ok(Some(event)) => before.push(event),
                Ok(None) => panic!("timed out waiting for {what}; saw {before:#?}"),
                Err(f) => panic!("waiting for {what}: {f:?} (after {before:#?})"),
            }
        }
    }

    /// Every event that arrives within `quiet` of the one before.
    pub fn drain(&self, quiet: Duration) -> Vec<Value> {
        std::iter::from_fn(|| self.next(quiet.as_millis() as i64).unwrap()).collect()
    }

    /// Every event for `period` (not stopping at a quiet moment).
    pub fn collect_for(&self, period: Duration) -> Vec<Value> {
        let deadline = Instant::now() + period;
        let mut events = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return events;
            }
            if let Some(event) = self.next(left.as_millis().max(1) as i64).unwrap() {
                events.push(event);
            }
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        perps_stream_free(self.0);
    }
}

pub fn is_status(state: &'static str) -> impl Fn(&Value) -> bool {
    move |e| e["channel"] == "status" && e["state"] == state
}

pub fn is_channel(channel: &'static str) -> impl Fn(&Value) -> bool {
    move |e| e["channel"] == channel
}

/// The order reply of `request_id` with `final` = `is_final`.
pub fn reply_to(request_id: &Value, is_final: bool) -> impl Fn(&Value) -> bool + '_ {
    move |e| e["channel"] == "order_response" && &e["request_id"] == request_id && e["final"] == is_final
}

/// Wait (polling, at most `limit`) until `cond` holds; panics naming `what` otherwise.
pub fn wait_until(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}
