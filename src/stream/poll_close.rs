//! The wait of a stream's I/O thread for some descriptors beside the stream's close signal, in
//! `poll`: the name lookup's end (`resolve.rs`) and the TCP connects (`connect.rs`) both wait
//! with it, so that `close` ends either at once, and a failing `poll` is reported the same way
//! by both rather than waited on until the deadline.

use std::io;
use std::os::fd::RawFd;
use std::time::Instant;

/// What ended a wait.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Woken {
    /// The close signal is readable: the stream is closing (this wins over the others).
    Closed,
    /// The indices (ascending, at least one) of the descriptors that have an event.
    Ready(Vec<usize>),
    /// The deadline passed.
    TimedOut,
}

/// Wait until one of `fds` (each a descriptor and the `poll` events it waits for) has an
/// event, `closed_signal` is readable (a negative one never is), or `deadline` passes. A
/// signal handled on this thread (EINTR) does not end the wait; any other failure of `poll`
/// does, as the error.
pub(super) fn poll_with_close(
    fds: &[(RawFd, libc::c_short)],
    closed_signal: RawFd,
    deadline: Instant,
) -> io::Result<Woken> {
    poll_with_close_by(system_poll, fds, closed_signal, deadline)
}

/// `poll(2)`: how many entries have an event.
fn system_poll(fds: &mut [libc::pollfd], ms: libc::c_int) -> io::Result<usize> {
    // SAFETY: `fds` holds `fds.len()` valid pollfd entries for the duration of the call (a
    // negative fd is ignored).
    let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(rc as usize) }
}

/// `poll_with_close` with the `poll` given (a test's, to fail as the system's rarely does).
fn poll_with_close_by(
    mut poll: impl FnMut(&mut [libc::pollfd], libc::c_int) -> io::Result<usize>,
    fds: &[(RawFd, libc::c_short)],
    closed_signal: RawFd,
    deadline: Instant,
) -> io::Result<Woken> {
    let mut polled = Vec::with_capacity(fds.len() + 1);
    polled.push(libc::pollfd { fd: closed_signal, events: libc::POLLIN, revents: 0 });
    polled.extend(fds.iter().map(|&(fd, events)| libc::pollfd { fd, events, revents: 0 }));
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        // Rounded up: waking a little early would only spin.
        let ms = left.as_micros().div_ceil(1000).min(libc::c_int::MAX as u128) as libc::c_int;
        match poll(&mut polled, ms) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
            Ok(0) if left.is_zero() => return Ok(Woken::TimedOut),
            // Woken before the deadline with nothing to report (the clock's granularity).
            Ok(0) => continue,
            Ok(_) if polled[0].revents != 0 => return Ok(Woken::Closed),
            Ok(_) => {
                let ready: Vec<usize> = (1..polled.len()).filter(|&i| polled[i].revents != 0).map(|i| i - 1).collect();
                if !ready.is_empty() {
                    return Ok(Woken::Ready(ready));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    fn in_an_hour() -> Instant {
        Instant::now() + Duration::from_secs(3600)
    }

    #[test]
    fn a_poll_failure_other_than_a_signal_ends_the_wait_as_an_error() {
        let mut calls = 0;
        let failing = |_: &mut [libc::pollfd], _| {
            calls += 1;
            Err(io::Error::from_raw_os_error(libc::ENOMEM))
        };
        let error = poll_with_close_by(failing, &[(0, libc::POLLIN)], -1, in_an_hour()).unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::ENOMEM));
        assert_eq!(calls, 1, "not polled again until the deadline");
    }

    #[test]
    fn a_signal_does_not_end_the_wait_and_closing_wins() {
        let mut calls = 0;
        // Interrupted once, then both the close signal and the descriptor have an event.
        let interrupted_then_both = |fds: &mut [libc::pollfd], _| {
            calls += 1;
            if calls == 1 {
                return Err(io::Error::from_raw_os_error(libc::EINTR));
            }
            fds.iter_mut().for_each(|fd| fd.revents = libc::POLLIN);
            Ok(fds.len())
        };
        let woken = poll_with_close_by(interrupted_then_both, &[(0, libc::POLLIN)], 3, in_an_hour()).unwrap();
        assert_eq!(woken, Woken::Closed);
        assert_eq!(calls, 2);
    }

    #[test]
    fn the_ready_descriptors_are_named_and_a_passed_deadline_times_out() {
        let (closed_tx, closed_rx) = UnixStream::pair().unwrap();
        let (a_tx, a_rx) = UnixStream::pair().unwrap();
        let (b_tx, b_rx) = UnixStream::pair().unwrap();
        let fds = [(a_rx.as_raw_fd(), libc::POLLIN), (b_rx.as_raw_fd(), libc::POLLIN)];
        let closed = closed_rx.as_raw_fd();
        assert_eq!(poll_with_close(&fds, closed, Instant::now()).unwrap(), Woken::TimedOut);
        (&b_tx).write_all(b"x").unwrap();
        assert_eq!(poll_with_close(&fds, closed, in_an_hour()).unwrap(), Woken::Ready(vec![1]));
        drop(a_tx);
        assert_eq!(poll_with_close(&fds, closed, in_an_hour()).unwrap(), Woken::Ready(vec![0, 1]));
        (&closed_tx).write_all(b"x").unwrap();
        assert_eq!(poll_with_close(&fds, closed, in_an_hour()).unwrap(), Woken::Closed);
    }
}
