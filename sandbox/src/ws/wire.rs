//! The socket of an upgraded connection: read through tiny_http's stream (its buffer may hold
//! bytes that came with the handshake), written on a duplicate of the descriptor, both in
//! non-blocking mode; `poll` over it and a wake-up socket pair.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

pub(crate) struct Wire {
    upgraded: Box<dyn tiny_http::ReadWrite + Send>,
    socket: TcpStream,
}

impl Wire {
    /// `socket` must be the connection `upgraded` reads from (a duplicate descriptor).
    pub(crate) fn new(upgraded: Box<dyn tiny_http::ReadWrite + Send>, socket: TcpStream) -> io::Result<Wire> {
        // The duplicate shares the open file description: tiny_http's reads stop blocking too.
        socket.set_nonblocking(true)?;
        socket.set_nodelay(true)?;
        Ok(Wire { upgraded, socket })
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }

    /// Ends the TCP connection in both directions (the client sees it end at once).
    pub(crate) fn shutdown(&self) {
        let _ = self.socket.shutdown(Shutdown::Both);
    }
}

impl Read for Wire {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.upgraded.read(buf)
    }
}

impl Write for Wire {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.socket.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.socket.flush()
    }
}

/// A wake-up pair: the connection keeps the reading end, others write a byte to the other.
pub(crate) fn wake_pair() -> io::Result<(UnixStream, UnixStream)> {
    let (waker, wakee) = UnixStream::pair()?;
    waker.set_nonblocking(true)?;
    wakee.set_nonblocking(true)?;
    Ok((waker, wakee))
}

/// Reads every pending wake-up byte.
pub(crate) fn drain(wakee: &mut UnixStream) {
    let mut buf = [0u8; 64];
    while matches!(wakee.read(&mut buf), Ok(n) if n > 0) {}
}

/// Waits until the socket is readable (or writable, with `want_write`), the wake-up end has
/// a byte, or `timeout` passes.
pub(crate) fn wait(socket: RawFd, want_write: bool, wakee: &UnixStream, timeout: Duration) {
    let events = libc::POLLIN | if want_write { libc::POLLOUT } else { 0 };
    let mut fds = [
        libc::pollfd { fd: socket, events, revents: 0 },
        libc::pollfd { fd: wakee.as_raw_fd(), events: libc::POLLIN, revents: 0 },
    ];
    let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: a valid array of two pollfd.
    // What woke it does not matter: the loop then tries everything without blocking.
    unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
}

/// A stalled connection's wait: only the peer hanging up (or a wake-up, or `timeout`) ends
/// it, never data (which stays unread). True when the peer has gone.
pub(crate) fn wait_for_hangup(socket: RawFd, wakee: &UnixStream, timeout: Duration) -> bool {
    let mut fds = [
        libc::pollfd { fd: socket, events: libc::POLLRDHUP, revents: 0 },
        libc::pollfd { fd: wakee.as_raw_fd(), events: libc::POLLIN, revents: 0 },
    ];
    let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: a valid array of two pollfd.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
    n > 0 && fds[0].revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0
}
