//! The TCP stream under a stream's TLS, written without ever raising SIGPIPE.
//!
//! rustls writes its records with `write_vectored`, which std implements on a socket as a
//! plain `writev`. On a connection the venue (or a load balancer) reset, or one the library
//! shut down after a failed write, that raises SIGPIPE, whose default action ends the
//! process. Rust programs ignore SIGPIPE from their first instruction; the hosts of this
//! library — C and C++ engines, Go, Java, C# and Python programs — may not, so a reset
//! `wss://` connection would kill the trading engine. std's `write` on a socket is one
//! `send` with MSG_NOSIGNAL (the REST transport relies on it too: `client/deadline_tcp.rs`);
//! here every write goes that way, a vectored one through `sendmsg` with MSG_NOSIGNAL, so a
//! dead connection is an error (EPIPE, ECONNRESET) and the stream reconnects.

use std::io::{self, IoSlice, Read, Write};
use std::net::TcpStream;

pub struct NoSigPipe(pub TcpStream);

impl Read for NoSigPipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for NoSigPipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // `send(…, MSG_NOSIGNAL)`.
        (&self.0).write(buf)
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        use std::os::fd::AsRawFd;
        /// IOV_MAX on Linux: a longer list is written in part, as `writev` would.
        const MAX_BUFFERS: usize = 1024;
        // SAFETY: a zeroed msghdr is a valid empty one; `IoSlice` is guaranteed ABI-compatible
        // with `iovec` on Unix, and the slices outlive the call, which only reads them.
        let sent = unsafe {
            let mut message: libc::msghdr = std::mem::zeroed();
            message.msg_iov = bufs.as_ptr() as *mut libc::iovec;
            message.msg_iovlen = bufs.len().min(MAX_BUFFERS) as _;
            libc::sendmsg(self.0.as_raw_fd(), &message, libc::MSG_NOSIGNAL)
        };
        if sent < 0 { Err(io::Error::last_os_error()) } else { Ok(sent as usize) }
    }

    // Elsewhere: `Write`'s own `write_vectored` writes the first buffer through `write`
    // (std sets SO_NOSIGPIPE on the sockets of the Apple systems, where MSG_NOSIGNAL is not).

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    // That no write raises SIGPIPE is tested in a process of its own, where SIGPIPE has its
    // default action as in a C host: tests/stream_sigpipe.rs.

    #[test]
    fn a_vectored_write_sends_every_buffer_in_order() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut stream = NoSigPipe(TcpStream::connect(listener.local_addr().unwrap()).unwrap());
        let (mut peer, _) = listener.accept().unwrap();
        let sent = stream.write_vectored(&[IoSlice::new(b"abc"), IoSlice::new(b""), IoSlice::new(b"defg")]).unwrap();
        assert_eq!(sent, 7);
        let mut got = [0u8; 7];
        peer.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"abcdefg");
    }
}
