//! One write per request: the request head and its body leave in a single `send`.
//!
//! ureq hands its transport the request head and then the body as two transmissions. With
//! TCP_NODELAY (which we want: no Nagle delay on an order) each becomes its own `send`
//! syscall and its own TCP segment, and the venue's server wakes up to read twice. On
//! loopback one `send` costs several microseconds of CPU: as much as the rest of the
//! library's own work per order, apart from the signature.
//!
//! So this link of the connector chain holds back a first small transmission (the head)
//! and sends it together with the next one (the body), or on its own just before ureq first
//! waits for input (a request without a body; every request waits for its response, so
//! nothing can stay behind). The bytes on the wire are the same, in the same order; only
//! the number of `send` calls changes. A large first transmission goes out at once, and a
//! head and body larger than ureq's output buffer go out in as few sends as it allows.
//!
//! It sits above `sent_tracker`, so a request counts as sent only once its bytes were
//! really written.
//!
//! As the last link, it also wipes the connection's buffers when ureq drops the connection
//! (closed, or the pool or the client dropped): ureq's input and output buffers of the
//! plaintext (under TLS, the rustls link's) hold the last answers read (a login's holds the
//! access token) and requests written, and would be freed as they are.

use ureq::unversioned::transport::{Buffers, ConnectionDetails, Connector, NextTimeout, Transport};

/// A transmission up to this size may wait for the next one. A request head is about 1 KiB.
const HOLD_LIMIT: usize = 16 * 1024;

/// The connector link: wraps whatever transport the chain produced so far.
#[derive(Debug, Default)]
pub struct WriteCoalescing;

impl<In: Transport> Connector<In> for WriteCoalescing {
    type Out = CoalescingTransport<In>;

    fn connect(&self, _details: &ConnectionDetails, chained: Option<In>) -> Result<Option<Self::Out>, ureq::Error> {
        Ok(chained.map(|inner| CoalescingTransport { inner, held: Vec::new() }))
    }
}

pub struct CoalescingTransport<In: Transport> {
    inner: In,
    /// Bytes ureq asked us to transmit that are not sent yet (a copy: ureq writes its next
    /// transmission at the start of the same output buffer).
    held: Vec<u8>,
}

/// The held bytes are a request head with its bearer token: their count only.
impl<In: Transport + std::fmt::Debug> std::fmt::Debug for CoalescingTransport<In> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoalescingTransport").field("inner", &self.inner).field("held_bytes", &self.held.len()).finish()
    }
}

impl<In: Transport> CoalescingTransport<In> {
    /// Send everything held, in as few transmissions as ureq's output buffer allows.
    fn flush(&mut self, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let mut result = Ok(());
        let mut start = 0;
        let started = std::time::Instant::now();
        while start < self.held.len() && result.is_ok() {
            let output = self.inner.buffers().output();
            let amount = output.len().min(self.held.len() - start);
            output[..amount].copy_from_slice(&self.held[start..start + amount]);
            start += amount;
            result = self.inner.transmit_output(amount, time_left(timeout, started));
        }
        // Sent or failed, never sent twice: after a failure the connection is broken and
        // ureq does not reuse it. The copy holds the bearer token: clear it (ureq's own output
        // buffer keeps the same bytes until its next request, or until `drop` below).
        crate::wipe::wipe(&mut self.held);
        self.held.clear();
        if self.held.capacity() > 2 * HOLD_LIMIT {
            self.held = Vec::new();
        }
        result
    }
}

/// `timeout` as it stands `started.elapsed()` later: a second transmission of one flush gets
/// only what the first one left of the call's time.
fn time_left(timeout: NextTimeout, started: std::time::Instant) -> NextTimeout {
    use ureq::unversioned::transport::time::Duration;
    match timeout.after {
        Duration::Exact(after) => {
            NextTimeout { after: Duration::Exact(after.saturating_sub(started.elapsed())), ..timeout }
        }
        Duration::NotHappening => timeout,
    }
}

impl<In: Transport> Drop for CoalescingTransport<In> {
    fn drop(&mut self) {
        crate::wipe::wipe(&mut self.held);
        let buffers = self.inner.buffers();
        // Everything read counts as consumed: the whole input buffer is then free to write.
        let unread = buffers.input().len();
        buffers.input_consume(unread);
        crate::wipe::wipe(buffers.input_append_buf());
        crate::wipe::wipe(buffers.output());
    }
}

impl<In: Transport> Transport for CoalescingTransport<In> {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        if amount == 0 {
            return Ok(());
        }
        if self.held.is_empty() {
            if amount > HOLD_LIMIT {
                return self.inner.transmit_output(amount, timeout);
            }
            let output = self.inner.buffers().output();
            self.held.extend_from_slice(&output[..amount]);
            return Ok(());
        }
        // Something is held (the head): it leaves now, together with this transmission.
        let output = self.inner.buffers().output();
        self.held.extend_from_slice(&output[..amount]);
        self.flush(timeout)
    }

    fn maybe_await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.flush(timeout)?;
        self.inner.maybe_await_input(timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.flush(timeout)?;
        self.inner.await_input(timeout)
    }

    fn is_open(&mut self) -> bool {
        // Held bytes between requests would be a bug; such a connection is never reused.
        self.held.is_empty() && self.inner.is_open()
    }

    fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ureq::unversioned::transport::LazyBuffers;

    /// An inner transport that records each transmission, and can be told to fail.
    #[derive(Debug)]
    struct Recorder {
        buffers: LazyBuffers,
        sent: Vec<Vec<u8>>,
        fail: bool,
        waits: usize,
    }

    impl Transport for Recorder {
        fn buffers(&mut self) -> &mut dyn Buffers {
            &mut self.buffers
        }
        fn transmit_output(&mut self, amount: usize, _: NextTimeout) -> Result<(), ureq::Error> {
            if self.fail {
                return Err(ureq::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionReset)));
            }
            let output = self.buffers.output();
            self.sent.push(output[..amount].to_vec());
            Ok(())
        }
        fn await_input(&mut self, _: NextTimeout) -> Result<bool, ureq::Error> {
            self.waits += 1;
            Ok(false)
        }
        fn is_open(&mut self) -> bool {
            true
        }
    }

    /// The transport `WriteCoalescing::connect` makes (its `ConnectionDetails` argument cannot
    /// be built outside ureq, and is not used).
    fn coalescing(output_size: usize) -> CoalescingTransport<Recorder> {
        let inner = Recorder { buffers: LazyBuffers::new(1024, output_size), sent: Vec::new(), fail: false, waits: 0 };
        CoalescingTransport { inner, held: Vec::new() }
    }

    /// What ureq does for one transmission: write into the output buffer, then transmit.
    fn transmit(t: &mut CoalescingTransport<Recorder>, bytes: &[u8]) -> Result<(), ureq::Error> {
        t.buffers().output()[..bytes.len()].copy_from_slice(bytes);
        t.transmit_output(bytes.len(), NextTimeout::default())
    }

    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
    }

    #[test]
    fn head_and_body_leave_in_one_send() {
        let mut t = coalescing(128 * 1024);
        let (head, body) = (pattern(811, 1), pattern(125, 2));
        transmit(&mut t, &head).unwrap();
        assert!(t.inner.sent.is_empty(), "the head waits for the body");
        assert!(!t.is_open(), "a connection holding bytes is never handed out for reuse");
        transmit(&mut t, &body).unwrap();
        assert_eq!(t.inner.sent, vec![[head, body].concat()]);
        assert!(t.is_open());
        t.await_input(NextTimeout::default()).unwrap();
        assert_eq!(t.inner.sent.len(), 1, "nothing is sent twice");
    }

    #[test]
    fn a_request_without_body_is_sent_before_waiting_for_the_answer() {
        for maybe in [false, true] {
            let mut t = coalescing(128 * 1024);
            let head = pattern(300, 3);
            transmit(&mut t, &head).unwrap();
            assert!(t.inner.sent.is_empty());
            if maybe {
                t.maybe_await_input(NextTimeout::default()).unwrap();
            } else {
                t.await_input(NextTimeout::default()).unwrap();
            }
            assert_eq!(t.inner.sent, vec![head]);
            assert_eq!(t.inner.waits, 1);
        }
    }

    #[test]
    fn a_large_first_transmission_goes_out_at_once() {
        let mut t = coalescing(64 * 1024);
        let big = pattern(HOLD_LIMIT + 1, 4);
        transmit(&mut t, &big).unwrap();
        assert_eq!(t.inner.sent, vec![big]);
    }

    #[test]
    fn head_and_body_larger_than_the_buffer_keep_their_bytes_and_order() {
        let mut t = coalescing(4096);
        let (head, body, more) = (pattern(1000, 5), pattern(4096, 6), pattern(4096, 7));
        transmit(&mut t, &head).unwrap();
        transmit(&mut t, &body).unwrap();
        transmit(&mut t, &more).unwrap();
        t.await_input(NextTimeout::default()).unwrap();
        assert!(t.inner.sent.iter().all(|s| s.len() <= 4096), "no send exceeds ureq's output buffer");
        assert_eq!(t.inner.sent.len(), 3, "head + body in two full sends, then the rest");
        assert_eq!(t.inner.sent.concat(), [head, body, more].concat());
    }

    #[test]
    fn bytes_that_failed_to_send_are_never_sent_again() {
        let mut t = coalescing(128 * 1024);
        transmit(&mut t, &pattern(500, 8)).unwrap();
        t.inner.fail = true;
        assert!(transmit(&mut t, &pattern(100, 9)).is_err());
        t.inner.fail = false;
        t.await_input(NextTimeout::default()).unwrap();
        assert!(t.inner.sent.is_empty(), "the failed request is not replayed");
        assert!(t.is_open() && t.held.is_empty());
    }
}
