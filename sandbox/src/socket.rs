//! Closing an accepted TCP connection without a response.
//!
//! tiny_http 0.12 answers 500 when a `Request` is dropped unanswered, `into_writer` only
//! gives the write half (dropping it leaves the socket open and the client waiting), and
//! `upgrade` writes a 101 first. No API exposes the socket. So the sandbox finds the socket
//! itself: it scans its own file descriptors for the TCP socket whose local end is the
//! sandbox's listening address and whose peer is the client, and shuts it down in both
//! directions. The
//! client sees the connection end with no response (a transport error), and tiny_http's
//! connection thread sees end-of-file and finishes.
//!
//! The same scan closes every client connection when the sandbox is dropped, so "drop
//! stops it" holds for kept-alive connections too. A scan must run while the listening port
//! is still bound (`Sandbox` keeps a copy of each listener until its last scan): a freed
//! port can be handed to a new outgoing connection of this process, which would match.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// Shuts down every TCP socket of this process accepted on `listener` (same port; same IP
/// unless the listener's IP is unspecified) whose peer is `peer` (any peer when `None`).
/// Returns how many were shut down.
pub(crate) fn shutdown_connections(listener: SocketAddr, peer: Option<SocketAddr>) -> usize {
    let mut closed = 0;
    for fd in candidate_fds() {
        let Some(sock_local) = addr_of(fd, libc::getsockname) else {
            continue;
        };
        let same_ip = listener.ip().is_unspecified() || sock_local.ip() == listener.ip();
        if sock_local.port() != listener.port() || !same_ip {
            continue;
        }
        // The listening socket has no peer (ENOTCONN), so it is never touched.
        let Some(sock_peer) = addr_of(fd, libc::getpeername) else {
            continue;
        };
        if peer.is_none_or(|p| p == sock_peer) {
            // SAFETY: shutdown on an fd is harmless if the fd is not a socket (ENOTSOCK);
            // it does not close the descriptor, so no other owner is invalidated.
            unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
            closed += 1;
        }
    }
    closed
}

/// A duplicate (close-on-exec) of this process's descriptor of the TCP connection accepted
/// on `listener` whose peer is `peer`, if there is one: the caller owns it. A WebSocket
/// upgraded by tiny_http is served on it (`ws::upgrade`).
pub(crate) fn duplicate_connection(listener: SocketAddr, peer: SocketAddr) -> Option<libc::c_int> {
    let fd = candidate_fds().into_iter().find(|&fd| is_connection(fd, listener, peer))?;
    // SAFETY: F_DUPFD_CLOEXEC on an open descriptor returns a new descriptor (or -1).
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    // The descriptor could have been closed and reused between the scan and the dup: check
    // the copy again.
    if dup < 0 {
        return None;
    }
    if is_connection(dup, listener, peer) {
        Some(dup)
    } else {
        // SAFETY: `dup` is ours and used nowhere else.
        unsafe { libc::close(dup) };
        None
    }
}

fn is_connection(fd: libc::c_int, listener: SocketAddr, peer: SocketAddr) -> bool {
    let local = addr_of(fd, libc::getsockname);
    let same_ip = |l: SocketAddr| listener.ip().is_unspecified() || l.ip() == listener.ip();
    local.is_some_and(|l| l.port() == listener.port() && same_ip(l)) && addr_of(fd, libc::getpeername) == Some(peer)
}

/// Open descriptors from /proc/self/fd on Linux; elsewhere the low 4096 (the scan only
/// issues getsockname, which fails harmlessly on descriptors that are not open).
fn candidate_fds() -> Vec<libc::c_int> {
    match std::fs::read_dir("/proc/self/fd") {
        Ok(dir) => dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect(),
        Err(_) => (0..4096).collect(),
    }
}

type AddrFn = unsafe extern "C" fn(libc::c_int, *mut libc::sockaddr, *mut libc::socklen_t) -> libc::c_int;

/// The IPv4 or IPv6 address `get` (getsockname or getpeername) reports for `fd`, if any.
fn addr_of(fd: libc::c_int, get: AddrFn) -> Option<SocketAddr> {
    // SAFETY: sockaddr_storage is plain data; all-zero is a valid value.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = libc::socklen_t::try_from(std::mem::size_of::<libc::sockaddr_storage>()).ok()?;
    // SAFETY: the pointers are to live locals of the advertised size.
    let rc = unsafe { get(fd, (&raw mut storage).cast(), &raw mut len) };
    if rc != 0 {
        return None;
    }
    match libc::c_int::from(storage.ss_family) {
        libc::AF_INET => {
            // SAFETY: ss_family is AF_INET, so the storage holds a sockaddr_in.
            let sin: libc::sockaddr_in = unsafe { std::ptr::read((&raw const storage).cast()) };
            let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            Some(SocketAddr::V4(SocketAddrV4::new(ip, u16::from_be(sin.sin_port))))
        }
        libc::AF_INET6 => {
            // SAFETY: ss_family is AF_INET6, so the storage holds a sockaddr_in6.
            let sin6: libc::sockaddr_in6 = unsafe { std::ptr::read((&raw const storage).cast()) };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Some(SocketAddr::V6(SocketAddrV6::new(ip, u16::from_be(sin6.sin6_port), 0, sin6.sin6_scope_id)))
        }
        _ => None,
    }
}

/// Set TCP_NODELAY on the listening socket: on Linux accepted connections inherit it, and
/// tiny_http gives no access to them. Without it, an answer written in two parts waits for
/// the client's delayed acknowledgement (~40 ms per sign-in step). Best effort.
pub(crate) fn set_nodelay_inherited(listener: &std::net::TcpListener) {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    // SAFETY: a valid socket fd and a pointer to a c_int of the stated size.
    unsafe {
        libc::setsockopt(
            listener.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}
