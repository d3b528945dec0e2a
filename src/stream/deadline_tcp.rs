//! The TCP socket under a stream's TLS and WebSocket layers, keeping the connection set-up's
//! deadline (the reply timeout) on every `recv` and `send` while the handshakes run.
//!
//! The deadline is kept here, at the bottom, and not above TLS: rustls reads and writes the
//! socket on its own inside one call of ours (the whole TLS handshake runs inside the first
//! write of the upgrade request, record after record). Kept above it, a venue that accepts
//! the TCP connection and never answers the ClientHello would hold that write — and the I/O
//! thread, its reconnection, and every event of the stream — for ever; one that trickles its
//! handshake a byte at a time would make each read a success. Here each `recv` waits at most
//! what is left, and none starts once it is spent (`TimedOut`), as the REST transport's
//! `client/deadline_tcp.rs` does for the same reason.
//!
//! Once the connection is set up the deadline is lifted and the socket made non-blocking.

use super::no_sigpipe::NoSigPipe;
use std::io::{self, IoSlice, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

pub struct DeadlineTcp {
    stream: NoSigPipe,
    deadline: Option<Instant>,
}

impl DeadlineTcp {
    pub fn new(tcp: TcpStream, deadline: Option<Instant>) -> DeadlineTcp {
        DeadlineTcp { stream: NoSigPipe(tcp), deadline }
    }

    pub fn tcp(&self) -> &TcpStream {
        &self.stream.0
    }

    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    /// Before a blocking `recv` or `send`: the socket's timeout set to what is left of the
    /// deadline, or `TimedOut` once it has passed.
    fn keep_deadline(&self, reading: bool) -> io::Result<()> {
        let Some(deadline) = self.deadline else { return Ok(()) };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "the deadline passed"));
        }
        if reading { self.tcp().set_read_timeout(Some(left)) } else { self.tcp().set_write_timeout(Some(left)) }
    }
}

impl Read for DeadlineTcp {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.keep_deadline(true)?;
        self.stream.read(buf)
    }
}

impl Write for DeadlineTcp {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.keep_deadline(false)?;
        self.stream.write(buf)
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.keep_deadline(false)?;
        self.stream.write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::time::Duration;

    #[test]
    fn a_peer_that_trickles_cannot_keep_reads_going_past_the_deadline() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let tcp = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut peer, _) = listener.accept().unwrap();
        let mut stream = DeadlineTcp::new(tcp, Some(Instant::now() + Duration::from_millis(300)));
        let started = Instant::now();
        let error = loop {
            // A byte is always there: only the deadline ends the reads.
            peer.write_all(b"x").unwrap();
            if let Err(e) = stream.read(&mut [0u8; 1]) {
                break e;
            }
        };
        assert_eq!(error.kind(), io::ErrorKind::TimedOut, "{error}");
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    }
}
