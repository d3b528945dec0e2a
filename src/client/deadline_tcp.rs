//! The first link of the connector chain: the TCP socket, with every wait bounded by what is
//! left of the call's time.
//!
//! ureq computes, before each transport operation, the time left to the nearest limit (the
//! call's `timeout_global`, or a per-read/per-write idle limit) and hands it to the
//! transport. Its own TCP transport then sets that as the socket's `SO_SNDTIMEO` and calls
//! `write_all`, which bounds each `send` but not the whole write: a venue that drains an
//! upload slowly lets every `send` make a little progress within the limit, and one
//! transmission of ureq's output buffer (or one TLS record) outlives the call's deadline by
//! as much as the venue likes (a 2 s total took 10 s in `tests/hostile_venue.rs`). So this
//! transport re-arms the socket's timeout with the time really left before every `send` and
//! `recv`, and fails with `Timeout` once it is spent: connect, TLS handshake (whose bytes go
//! through here), request head, body, answer — every phase ends by the deadline.
//!
//! The socket timeout is re-armed only when the wait changes (rounded down to 10 ms, never
//! beyond the deadline), so a small order on a kept-alive connection costs one `send` and one
//! `recv`, as before.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use ureq::Timeout;
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, LazyBuffers, NextTimeout, ShutdownHandle, Transport,
};

/// The step to which socket timeouts are rounded down (fewer `setsockopt` calls).
const GRANULARITY: Duration = Duration::from_millis(10);

/// The connector link that opens the TCP connection (the start of the chain).
#[derive(Debug, Default)]
pub struct DeadlineTcp;

impl Connector<()> for DeadlineTcp {
    type Out = DeadlineTcpTransport;

    fn connect(&self, details: &ConnectionDetails, _: Option<()>) -> Result<Option<Self::Out>, ureq::Error> {
        let limit = Limit::of(details.timeout, details.timeout.reason);
        let stream = connect_within(&details.addrs, &limit)?;
        if details.config.no_delay() {
            stream.set_nodelay(true)?;
        }
        let buffers = LazyBuffers::new(details.config.input_buffer_size(), details.config.output_buffer_size());
        let stream = Arc::new(stream);
        // ureq's agent may shut the socket down from another thread (`Agent::shutdown`).
        (details.register_shutdown)(Arc::downgrade(&stream) as Weak<dyn ShutdownHandle>)?;
        Ok(Some(DeadlineTcpTransport { stream, buffers, send_timeout: None, recv_timeout: None }))
    }
}

/// Try each address in turn, each with an equal share of the time left.
fn connect_within(addrs: &[SocketAddr], limit: &Limit) -> Result<TcpStream, ureq::Error> {
    let mut last = None;
    for (i, addr) in addrs.iter().enumerate() {
        let attempt = match limit.left() {
            Some(left) if left.is_zero() => return Err(ureq::Error::Timeout(limit.reason)),
            Some(left) => Some((left / (addrs.len() - i) as u32).max(GRANULARITY).min(left)),
            None => None,
        };
        let result = match attempt {
            Some(t) => TcpStream::connect_timeout(addr, t),
            None => TcpStream::connect(addr),
        };
        match result {
            Ok(stream) => return Ok(stream),
            Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => {
                last = Some(ureq::Error::Timeout(limit.reason));
            }
            // Refused, unreachable…: this address only; the next one may work.
            Err(e) => last = Some(ureq::Error::Io(e)),
        }
    }
    Err(last.unwrap_or(ureq::Error::HostNotFound))
}

/// How long one operation may still take: ureq's time left (the nearest of the call's
/// limits), measured from when the operation started.
struct Limit {
    started: Instant,
    budget: Option<Duration>,
    reason: Timeout,
}

impl Limit {
    fn of(timeout: NextTimeout, reason: Timeout) -> Limit {
        let budget = (!timeout.after.is_not_happening()).then(|| *timeout.after);
        Limit { started: Instant::now(), budget, reason }
    }

    fn left(&self) -> Option<Duration> {
        self.budget.map(|b| b.saturating_sub(self.started.elapsed()))
    }

    /// The wait for one `send`/`recv`: the time left, or the idle limit if shorter, with the
    /// reason reported when it runs out. `Err` when nothing is left.
    fn next_wait(
        &self,
        idle: Option<Duration>,
        idle_reason: Timeout,
    ) -> Result<Option<(Duration, Timeout)>, ureq::Error> {
        let left = self.left();
        if left.is_some_and(|l| l < Duration::from_millis(1)) {
            return Err(ureq::Error::Timeout(self.reason));
        }
        let wait = match (left, idle) {
            (Some(l), Some(i)) if i < l => Some((i, idle_reason)),
            (Some(l), _) => Some((l, self.reason)),
            (None, Some(i)) => Some((i, idle_reason)),
            (None, None) => None,
        };
        // Rounded down (never past the deadline), but never to zero: a zero socket timeout
        // would mean "wait forever".
        Ok(wait.map(|(w, r)| {
            let rounded = if w > GRANULARITY {
                w - Duration::from_nanos((w.as_nanos() % GRANULARITY.as_nanos()) as u64)
            } else {
                w
            };
            (rounded, r)
        }))
    }
}

pub struct DeadlineTcpTransport {
    stream: Arc<TcpStream>,
    buffers: LazyBuffers,
    /// The socket's current `SO_SNDTIMEO` / `SO_RCVTIMEO` (None: none set, blocks).
    send_timeout: Option<Duration>,
    recv_timeout: Option<Duration>,
}

impl std::fmt::Debug for DeadlineTcpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeadlineTcpTransport").field("peer", &self.stream.peer_addr().ok()).finish()
    }
}

impl DeadlineTcpTransport {
    fn arm_send(&mut self, wait: Option<Duration>) -> std::io::Result<()> {
        if self.send_timeout != wait {
            self.stream.set_write_timeout(wait)?;
            self.send_timeout = wait;
        }
        Ok(())
    }

    fn arm_recv(&mut self, wait: Option<Duration>) -> std::io::Result<()> {
        if self.recv_timeout != wait {
            self.stream.set_read_timeout(wait)?;
            self.recv_timeout = wait;
        }
        Ok(())
    }
}

impl Transport for DeadlineTcpTransport {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let limit = Limit::of(timeout, timeout.reason);
        let mut written = 0;
        while written < amount {
            let wait = limit.next_wait(timeout.per_write.map(|d| *d), Timeout::PerWrite)?;
            self.arm_send(wait.map(|(w, _)| w))?;
            let output = &self.buffers.output()[written..amount];
            // std's `write` on a socket is one `send` with MSG_NOSIGNAL: a closed connection is
            // an error, never a SIGPIPE in the host process.
            match (&*self.stream).write(output) {
                Ok(0) => return Err(ureq::Error::Io(ErrorKind::WriteZero.into())),
                Ok(n) => written += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Err(ureq::Error::Timeout(wait.map_or(limit.reason, |(_, r)| r)));
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        let limit = Limit::of(timeout, timeout.reason);
        loop {
            let wait = limit.next_wait(timeout.per_read.map(|d| *d), Timeout::PerRead)?;
            self.arm_recv(wait.map(|(w, _)| w))?;
            let input = self.buffers.input_append_buf();
            match (&*self.stream).read(input) {
                Ok(n) => {
                    self.buffers.input_appended(n);
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Err(ureq::Error::Timeout(wait.map_or(limit.reason, |(_, r)| r)));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// A pooled connection is reusable when the venue has neither closed it nor sent
    /// anything unasked: one non-blocking peek.
    fn is_open(&mut self) -> bool {
        let mut byte = 0u8;
        // SAFETY: a valid socket descriptor and a one-byte buffer we own.
        let n = unsafe {
            libc::recv(self.stream.as_raw_fd(), (&raw mut byte).cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT)
        };
        n < 0 && std::io::Error::last_os_error().kind() == ErrorKind::WouldBlock
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(budget_ms: Option<u64>) -> Limit {
        Limit { started: Instant::now(), budget: budget_ms.map(Duration::from_millis), reason: Timeout::Global }
    }

    #[test]
    fn the_wait_is_the_nearer_of_the_time_left_and_the_idle_limit() {
        let (wait, reason) =
            limit(Some(5_000)).next_wait(Some(Duration::from_secs(1)), Timeout::PerWrite).unwrap().unwrap();
        assert_eq!((wait, reason), (Duration::from_secs(1), Timeout::PerWrite));
        let (wait, reason) =
            limit(Some(800)).next_wait(Some(Duration::from_secs(1)), Timeout::PerWrite).unwrap().unwrap();
        assert!(wait <= Duration::from_millis(800) && wait >= Duration::from_millis(780), "{wait:?}");
        assert_eq!(wait.as_millis() % 10, 0, "rounded down to 10 ms");
        assert_eq!(reason, Timeout::Global);
        assert_eq!(limit(None).next_wait(None, Timeout::PerRead).unwrap(), None);
        assert!(matches!(limit(Some(0)).next_wait(None, Timeout::PerRead), Err(ureq::Error::Timeout(Timeout::Global))));
        let (tiny, _) = limit(Some(5)).next_wait(None, Timeout::PerRead).unwrap().unwrap();
        assert!(tiny > Duration::ZERO && tiny <= Duration::from_millis(5), "never zero (would block forever)");
    }
}
