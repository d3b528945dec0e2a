//! The stream's TCP connection to the venue host: one deadline (`connect_timeout_ms`) for the
//! whole attempt across all of the host's addresses, and given up at once when the stream is
//! closed.
//!
//! `TcpStream::connect_timeout` address after address took N × connect_timeout_ms for a host
//! with N addresses that do not answer (a venue that moved, stale addresses served through a
//! DNS outage by `resolve.rs`, a black-holed IPv6 route), and nothing could interrupt it: the
//! socket only reached `close`'s hands once connected, so `perps_stream_free` gave up waiting
//! and left the I/O thread behind. Here every connect is non-blocking and waited for in `poll`
//! together with the stream's close signal, and the addresses share the time as RFC 8305
//! ("Happy Eyeballs") does: the first is tried at once, each next one `STAGGER` later (or as
//! soon as the attempts under way have all failed), alongside those still running; the first
//! to connect wins, and the others are closed before a byte is sent on them. An address that
//! does not answer thus holds the others back by `STAGGER` only, and every address is tried
//! while time remains. The addresses are tried in the resolver's order (the system's
//! preference, RFC 6724).

use super::poll_close::{Woken, poll_with_close};
use super::transport::io_error;
use crate::error::{Code, Error, Result};
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// How long an attempt runs alone before the next address is tried beside it (RFC 8305 §5's
/// recommended Connection Attempt Delay).
const STAGGER: Duration = Duration::from_millis(250);

/// A blocking TCP socket connected to one of `addrs` within `timeout`: a `Timeout` error
/// once it passes, a `StreamClosed` one as soon as `closed_signal` is readable, and the last
/// address's OS error ("connecting: …") when every address failed before that.
pub(super) fn connect_tcp(addrs: &[SocketAddr], timeout: Duration, closed_signal: RawFd) -> Result<TcpStream> {
    if addrs.is_empty() {
        return Err(Error::new(Code::Transport, "the stream host resolved to no address"));
    }
    let deadline = Instant::now() + timeout;
    let mut pending: Vec<TcpStream> = Vec::new();
    let mut next = 0;
    let mut next_start = Instant::now();
    let mut last_error = None;
    loop {
        let now = Instant::now();
        if next < addrs.len() && (pending.is_empty() || now >= next_start) {
            next_start = now + STAGGER;
            match start(addrs[next]) {
                Ok(Started::Connected(tcp)) => return blocking(tcp),
                Ok(Started::InProgress(tcp)) => pending.push(tcp),
                // Refused at once (no route for the family…): the next address need not wait.
                Err(e) => (last_error, next_start) = (Some(e), now),
            }
            next += 1;
            continue;
        }
        if pending.is_empty() {
            let error = last_error.unwrap_or_else(|| io::Error::other("no address could be tried"));
            return Err(io_error(error, "connecting"));
        }
        let left = deadline.saturating_duration_since(now);
        if left.is_zero() {
            return Err(timed_out(timeout, next, addrs.len()));
        }
        // Until the next address's turn, or the deadline.
        let until = if next < addrs.len() { deadline.min(next_start) } else { deadline };
        let connecting: Vec<_> = pending.iter().map(|tcp| (tcp.as_raw_fd(), libc::POLLOUT)).collect();
        let ready = match poll_with_close(&connecting, closed_signal, until) {
            Ok(Woken::Closed) => {
                return Err(Error::new(Code::StreamClosed, "the stream was closed while it connected"));
            }
            // Done connecting, either way.
            Ok(Woken::Ready(ready)) => ready,
            Ok(Woken::TimedOut) => continue,
            Err(e) => return Err(io_error(e, "connecting: waiting for the socket")),
        };
        // Highest index first: removing one leaves the indices still to visit in place.
        for i in ready.into_iter().rev() {
            let tcp = pending.swap_remove(i);
            match tcp.take_error() {
                Ok(None) => return blocking(tcp),
                Ok(Some(e)) | Err(e) => {
                    last_error = Some(e);
                    // This attempt failed: the next address need not wait out its turn.
                    next_start = Instant::now();
                }
            }
        }
    }
}

fn timed_out(timeout: Duration, tried: usize, of: usize) -> Error {
    let mut message = format!("connecting took longer than connect_timeout_ms ({} ms)", timeout.as_millis());
    if of > 1 {
        message.push_str(&format!(" ({tried} of the host's {of} addresses tried)"));
    }
    Error::new(Code::Timeout, message)
}

/// The connected socket made blocking again, as the handshake (`handshake.rs`) expects.
fn blocking(tcp: TcpStream) -> Result<TcpStream> {
    tcp.set_nonblocking(false).map_err(|e| io_error(e, "making the socket blocking"))?;
    Ok(tcp)
}

enum Started {
    /// Connected at once (loopback may).
    Connected(TcpStream),
    /// Connecting: writable (or in error) once it is done.
    InProgress(TcpStream),
}

/// A non-blocking, close-on-exec socket of `addr`'s family, connecting to it.
fn start(addr: SocketAddr) -> io::Result<Started> {
    let family = if addr.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    let tcp = new_socket(family)?;
    // SAFETY: a zeroed sockaddr_in / sockaddr_in6 is a valid one, filled in below field by
    // field (in network byte order where the kernel expects it); the pointer and length passed
    // to `connect` describe that value, which outlives the call.
    let rc = unsafe {
        match addr {
            SocketAddr::V4(a) => {
                let mut raw: libc::sockaddr_in = std::mem::zeroed();
                raw.sin_family = libc::AF_INET as libc::sa_family_t;
                raw.sin_port = a.port().to_be();
                raw.sin_addr.s_addr = u32::from_ne_bytes(a.ip().octets());
                let len = std::mem::size_of_val(&raw) as libc::socklen_t;
                libc::connect(tcp.as_raw_fd(), (&raw as *const libc::sockaddr_in).cast(), len)
            }
            SocketAddr::V6(a) => {
                let mut raw: libc::sockaddr_in6 = std::mem::zeroed();
                raw.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                raw.sin6_port = a.port().to_be();
                // As std writes it (`SocketAddrV6::flowinfo` is the field as the kernel has it).
                raw.sin6_flowinfo = a.flowinfo();
                raw.sin6_addr.s6_addr = a.ip().octets();
                raw.sin6_scope_id = a.scope_id();
                let len = std::mem::size_of_val(&raw) as libc::socklen_t;
                libc::connect(tcp.as_raw_fd(), (&raw as *const libc::sockaddr_in6).cast(), len)
            }
        }
    };
    if rc == 0 {
        return Ok(Started::Connected(tcp));
    }
    let error = io::Error::last_os_error();
    match error.raw_os_error() {
        // EINTR: the connect goes on in the background, as EINPROGRESS says.
        Some(libc::EINPROGRESS) | Some(libc::EINTR) => Ok(Started::InProgress(tcp)),
        _ => Err(error),
    }
}

/// A TCP socket of `family`, non-blocking and close-on-exec (atomically where the system can:
/// the host process may fork and exec on another thread).
fn new_socket(family: libc::c_int) -> io::Result<TcpStream> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let kind = libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let kind = libc::SOCK_STREAM;
    // SAFETY: `socket` takes no pointers; a non-negative result is a new descriptor that
    // nothing else owns, handed at once to an `OwnedFd` (closed on every path from here).
    let fd = unsafe { libc::socket(family, kind, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    let tcp = TcpStream::from(unsafe { OwnedFd::from_raw_fd(fd) });
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        // SAFETY: `fcntl` and `setsockopt` on the descriptor `tcp` owns, with a pointer to a
        // local that outlives the call.
        unsafe {
            if libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) < 0 {
                return Err(io::Error::last_os_error());
            }
            // No SIGPIPE from a write to a reset connection (std sets this on its own sockets
            // there: MSG_NOSIGNAL does not exist on Apple systems).
            #[cfg(target_vendor = "apple")]
            {
                let one: libc::c_int = 1;
                let len = std::mem::size_of_val(&one) as libc::socklen_t;
                if libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_NOSIGPIPE, (&one as *const libc::c_int).cast(), len)
                    < 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        tcp.set_nonblocking(true)?;
    }
    Ok(tcp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::resolve::Resolver;
    use crate::stream::settings::StreamSettings;
    use std::io::Write;
    use std::net::TcpListener;
    use std::os::unix::net::UnixStream;
    use std::sync::OnceLock;

    /// A listener on 127.0.0.1 whose accept queue is full (a backlog of 0, one connection
    /// queued, none ever accepted): Linux drops the SYN of any further connect, which then
    /// waits until its own time-out, as one to a host that does not answer.
    struct FullAcceptQueue {
        listener: TcpListener,
        _queued: Vec<TcpStream>,
    }

    impl FullAcceptQueue {
        fn new() -> FullAcceptQueue {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            // SAFETY: `listen` on a socket this function owns; Linux takes the new backlog.
            assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), 0) }, 0);
            let addr = listener.local_addr().unwrap();
            let mut queued = Vec::new();
            // Connects until one is not answered (a loopback answer takes microseconds).
            for _ in 0..16 {
                match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
                    Ok(tcp) => queued.push(tcp),
                    Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                        return FullAcceptQueue { listener, _queued: queued };
                    }
                    Err(e) => panic!("filling the backlog: {e}"),
                }
            }
            panic!("the backlog never filled");
        }

        fn addr(&self) -> SocketAddr {
            self.listener.local_addr().unwrap()
        }
    }

    fn closed_signal() -> (UnixStream, UnixStream) {
        UnixStream::pair().unwrap()
    }

    #[test]
    fn close_ends_a_connect_that_cannot_complete_at_once() {
        let venue = FullAcceptQueue::new();
        let (closed_tx, closed_rx) = closed_signal();
        let closer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            (&closed_tx).write_all(&[1]).unwrap();
            closed_tx
        });
        let started = Instant::now();
        let error = connect_tcp(&[venue.addr()], Duration::from_secs(120), closed_rx.as_raw_fd()).unwrap_err();
        // Not the time-out (two minutes): the close.
        assert_eq!(error.code(), Code::StreamClosed, "{error}");
        assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
        let _closed_tx = closer.join().unwrap();
        // Closed already: the next attempt ends at once too.
        let error = connect_tcp(&[venue.addr()], Duration::from_secs(120), closed_rx.as_raw_fd()).unwrap_err();
        assert_eq!(error.code(), Code::StreamClosed, "{error}");
    }

    static SILENT_HOST: OnceLock<Vec<SocketAddr>> = OnceLock::new();

    fn silent_host(_: &str, _: u16) -> io::Result<Vec<SocketAddr>> {
        Ok(SILENT_HOST.get().unwrap().clone())
    }

    #[test]
    fn addresses_that_do_not_answer_share_one_connect_timeout() {
        let venues = [FullAcceptQueue::new(), FullAcceptQueue::new()];
        SILENT_HOST.set(venues.iter().map(FullAcceptQueue::addr).collect()).unwrap();
        let options = crate::client::options::ClientOptions::parse(Some(r#"{"connect_timeout_ms":2000}"#)).unwrap();
        let perps_url = crate::client::url::check_url("http://127.0.0.1:9", "perps_url", false).unwrap();
        let settings = StreamSettings::new(&perps_url, &options).unwrap();
        let mut resolver = Resolver::new(silent_host);
        let (_closed_tx, closed_rx) = closed_signal();
        let started = Instant::now();
        let connected = super::super::transport::connect(
            "ws://venue.example/x",
            &settings,
            closed_rx.as_raw_fd(),
            &mut resolver,
            &mut |_| {},
        );
        let took = started.elapsed();
        let error = connected.err().expect("nothing answers");
        assert_eq!(error.code(), Code::Timeout, "{error}");
        assert_eq!(
            error.message(),
            "connecting took longer than connect_timeout_ms (2000 ms) (2 of the host's 2 addresses tried)"
        );
        // One connect_timeout (2 s), not one per address (4 s).
        assert!(took >= Duration::from_secs(2) && took < Duration::from_millis(3900), "{took:?}");
    }

    /// A port nothing listens on: connects to it are refused.
    fn refusing() -> SocketAddr {
        TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
    }

    fn is_blocking(tcp: &TcpStream) -> bool {
        // SAFETY: F_GETFL on a descriptor `tcp` owns.
        let flags = unsafe { libc::fcntl(tcp.as_raw_fd(), libc::F_GETFL) };
        flags >= 0 && flags & libc::O_NONBLOCK == 0
    }

    #[test]
    fn an_address_that_does_not_answer_holds_the_next_back_only_briefly() {
        let silent = FullAcceptQueue::new();
        let venue = TcpListener::bind("127.0.0.1:0").unwrap();
        let (_closed_tx, closed_rx) = closed_signal();
        let addrs = [silent.addr(), refusing(), venue.local_addr().unwrap()];
        // A minute's time-out: only trying the next addresses beside the silent one connects.
        let started = Instant::now();
        let tcp = connect_tcp(&addrs, Duration::from_secs(60), closed_rx.as_raw_fd()).unwrap();
        assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
        assert_eq!(tcp.peer_addr().unwrap(), venue.local_addr().unwrap());
        assert!(is_blocking(&tcp), "the handshake reads and writes a blocking socket");
        let (mut accepted, _) = venue.accept().unwrap();
        (&tcp).write_all(b"x").unwrap();
        let mut byte = [0u8];
        std::io::Read::read_exact(&mut accepted, &mut byte).unwrap();
        assert_eq!(&byte, b"x");
    }

    #[test]
    fn when_every_address_fails_the_last_os_error_is_reported() {
        let (_closed_tx, closed_rx) = closed_signal();
        let error = connect_tcp(&[refusing(), refusing()], Duration::from_secs(60), closed_rx.as_raw_fd()).unwrap_err();
        assert_eq!(error.code(), Code::Transport, "{error}");
        assert!(error.message().starts_with("connecting: Connection refused"), "{error}");
        let error = connect_tcp(&[], Duration::from_secs(60), closed_rx.as_raw_fd()).unwrap_err();
        assert_eq!(error.message(), "the stream host resolved to no address");
    }
}
