//! Knowing whether request bytes left this process: the fact behind
//! `may_have_reached_venue`.
//!
//! ureq's error types do not say at which stage a failure happened (a DNS failure and a
//! reset after the body was written can both be plain I/O errors). So the transport chain
//! ends in [`SentTracking`], a pass-through that records, on the calling thread, that a
//! write of request bytes completed. It sits above TLS, so a failed handshake (which ureq
//! performs inside the first write) never counts as sent.
//!
//! ureq runs each request synchronously on the caller's thread, so a thread-local flag,
//! reset at the start of each request and read right after it, belongs to that request
//! alone. It never outlives the call (this is not a "last error" API).

use std::cell::Cell;
use ureq::unversioned::transport::{Buffers, ConnectionDetails, Connector, NextTimeout, Transport};

thread_local! {
    static REQUEST_BYTES_SENT: Cell<bool> = const { Cell::new(false) };
    static NEW_CONNECTION: Cell<bool> = const { Cell::new(false) };
    static ANSWER_BYTES_RECEIVED: Cell<bool> = const { Cell::new(false) };
}

/// Forget the previous request's state; call before sending.
pub fn reset() {
    REQUEST_BYTES_SENT.with(|sent| sent.set(false));
    NEW_CONNECTION.with(|new| new.set(false));
    ANSWER_BYTES_RECEIVED.with(|received| received.set(false));
}

/// Whether request bytes were written since [`reset`] on this thread.
pub fn request_bytes_sent() -> bool {
    REQUEST_BYTES_SENT.with(Cell::get)
}

/// Whether the request since [`reset`] went out on a kept-alive connection from the pool
/// (no connection was opened for it) and no byte of an answer came back: the venue may have
/// closed that connection as the request was written (the race of HTTP keep-alive), so the
/// request may never have been read.
pub fn failed_on_a_pooled_connection_unanswered() -> bool {
    !NEW_CONNECTION.with(Cell::get) && !ANSWER_BYTES_RECEIVED.with(Cell::get)
}

/// The last link of the connector chain: wraps whatever transport the chain produced.
#[derive(Debug, Default)]
pub struct SentTracking;

impl<In: Transport> Connector<In> for SentTracking {
    type Out = TrackedTransport<In>;

    fn connect(&self, _details: &ConnectionDetails, chained: Option<In>) -> Result<Option<Self::Out>, ureq::Error> {
        // Called only when the pool has no connection to give: this one is new.
        NEW_CONNECTION.with(|new| new.set(true));
        Ok(chained.map(|inner| TrackedTransport { inner }))
    }
}

#[derive(Debug)]
pub struct TrackedTransport<In> {
    inner: In,
}

impl<In: Transport> Transport for TrackedTransport<In> {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let result = self.inner.transmit_output(amount, timeout);
        if result.is_ok() && amount > 0 {
            REQUEST_BYTES_SENT.with(|sent| sent.set(true));
        }
        result
    }

    fn maybe_await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        received(self.inner.maybe_await_input(timeout))
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        received(self.inner.await_input(timeout))
    }

    fn is_open(&mut self) -> bool {
        self.inner.is_open()
    }

    fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }
}

/// Note that bytes of an answer arrived (input available).
fn received(result: Result<bool, ureq::Error>) -> Result<bool, ureq::Error> {
    if let Ok(true) = result {
        ANSWER_BYTES_RECEIVED.with(|received| received.set(true));
    }
    result
}
