//! Serving a live connection (the I/O thread's part while the reader is in the link): read
//! what no caller reads, ping when the venue is quiet, and end the connection when it is
//! silent (idle timeout), when the venue has stopped taking our writes (the same bound), when
//! a message it began stays incomplete (the same bound: `fragments.rs`), or
//! when it is due for rotation. `supervisor.rs` acts on how it ended.

use super::reader::{Reader, read_served};
use super::settings::StreamSettings;
use super::shared::{Link, Shared, note_affinity, poll_fds};
use super::supervisor::{Ended, Protocol};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// While a caller reads the socket, how often the I/O thread looks whether one still does.
const CALLER_READS_RECHECK: Duration = Duration::from_millis(50);
/// How often the I/O thread looks at its affinity (another thread may pin it).
const AFFINITY_RECHECK: Duration = Duration::from_millis(20);

/// Serve a live connection until it ends.
pub(super) fn serve(
    shared: &Shared,
    proto: Box<dyn Protocol>,
    settings: &StreamSettings,
) -> (Ended, Box<dyn Protocol>) {
    shared.link().reader = Some(Reader::new(proto));
    let mut ended = serve_reader(shared, settings);
    let mut reader = shared.link().reader.take().expect("serve put the reader in the link and alone takes it");
    // A caller reading on this thread's CPU may have found the end (a refused login, which
    // marked the stream as ending) after the I/O thread's last look, while it ended the
    // connection on a timer (idle, rotation): what the caller found is how it ended — but a
    // refusal, which has marked the stream as ending, always wins (a caller may read a Close
    // frame after the I/O thread read the refusal).
    if let Some(end) = reader.ended.take()
        && ended.refused.is_none()
    {
        ended = end.into();
    }
    ended.close = reader.close_reason;
    (ended, reader.proto)
}

/// The I/O thread's part while the connection is served (the reader in the link): read what
/// no caller reads, ping, and watch the idle timeout and the rotation.
fn serve_reader(shared: &Shared, settings: &StreamSettings) -> Ended {
    let options = &settings.options;
    let started = Instant::now();
    let mut last_ping = Instant::now();
    // The client's ping is due a third of the idle timeout after the last frame or ping.
    let ping_every = options.idle_timeout / 3;
    let ping_due = |last_inbound: Instant, last_ping: Instant| last_inbound.max(last_ping) + ping_every;
    let mut more = false;
    let mut affinity_noted: Option<Instant> = None;
    loop {
        if affinity_noted.is_none_or(|at| at.elapsed() >= AFFINITY_RECHECK) {
            note_affinity(&shared.io_cpu);
            affinity_noted = Some(Instant::now());
        }
        let (fd, last_inbound, unsent_since, timer_due, open_since) = {
            let mut link = shared.link();
            let Link { conn: Some(conn), reader: Some(reader), .. } = &mut *link else {
                return Ended::lost("the connection was dropped");
            };
            if let Some(end) = reader.ended.take() {
                return end.into();
            }
            if let Some(end) = read_served(conn, reader, shared, &mut more) {
                return end.into();
            }
            conn.retry_unsent();
            if ping_due(reader.last_inbound, last_ping) <= Instant::now() {
                last_ping = Instant::now();
                // Never waited for: a wait for room would hold the connection (nothing read,
                // no order written) for up to the write timeout; a failed write shows as the
                // connection's end at the next read.
                conn.send_ping_now();
            }
            let timer_due = reader.proto.on_timers(Instant::now(), &shared.queue);
            (conn.fd(), reader.last_inbound, conn.unsent_since(), timer_due, conn.ws.get_ref().message_open_since())
        };
        if shared.is_closing() {
            return Ended::lost("closed by the caller");
        }
        let now = Instant::now();
        let idle_deadline = last_inbound + options.idle_timeout;
        let rotate_at = started + options.rotate_after;
        if now >= idle_deadline {
            return Ended::lost(format!(
                "nothing received for {} ms (the venue pings every 10 s): the connection is presumed dead (half-open)",
                options.idle_timeout.as_millis()
            ));
        }
        // Bytes of ours the venue has not taken for as long as silence is allowed: it is not
        // reading (half-open on its side, or stuck), however much it still sends — pongs
        // would be dropped and orders refused unsent for as long as it keeps sending.
        let unsent_deadline = unsent_since.map(|since| since + options.idle_timeout);
        if unsent_deadline.is_some_and(|deadline| now >= deadline) {
            return Ended::lost(format!(
                "the venue took none of our writes for {} ms (stream_idle_timeout_ms): the connection is presumed dead (half-open)",
                options.idle_timeout.as_millis()
            ));
        }
        // A message begun and not finished for as long as silence is allowed: pings between
        // its fragments keep `last_inbound` fresh while nothing is delivered (`fragments.rs`).
        let incomplete_deadline = open_since.map(|since| since + options.idle_timeout);
        if incomplete_deadline.is_some_and(|deadline| now >= deadline) {
            return Ended::lost(format!(
                "a message the venue began {} ms ago is still incomplete (stream_idle_timeout_ms): the connection \
                 delivers nothing and is presumed broken",
                options.idle_timeout.as_millis()
            ));
        }
        if now >= rotate_at {
            return Ended {
                reason: format!("rotation after {} ms (before the venue's 24 h cap)", options.rotate_after.as_millis()),
                rotation: true,
                refused: None,
                close: None,
            };
        }
        if !more {
            let wake_at = idle_deadline.min(rotate_at).min(ping_due(last_inbound, last_ping).max(now));
            let wake_at = unsent_deadline.map_or(wake_at, |deadline| wake_at.min(deadline));
            let wake_at = incomplete_deadline.map_or(wake_at, |deadline| wake_at.min(deadline));
            let wake_at = timer_due.map_or(wake_at, |due| wake_at.min(due.max(now)));
            // A caller asleep on the socket reads what wakes it, and one busy-polling `next`
            // on this CPU reads what is there at each call (`ReadForCaller`): the I/O thread
            // then sleeps on its timers alone, not to be woken by every frame too, and looks
            // again soon in case the caller has gone (it wakes the thread if it stops
            // watching while still in `next`).
            let callers_read =
                shared.socket_watchers.load(Ordering::SeqCst) > 0 || shared.polled_within(CALLER_READS_RECHECK);
            let (socket, wait) = if callers_read {
                (None, (wake_at - now).min(CALLER_READS_RECHECK))
            } else {
                (Some(fd), wake_at - now)
            };
            shared.io_busy.store(false, Ordering::Release);
            poll_fds(socket, shared.wake_rx.as_raw_fd(), wait);
            shared.io_busy.store(true, Ordering::Release);
            shared.drain_wake();
        } else if shared.writer_waiting() {
            // Let the writer take the connection before reading on.
            std::thread::yield_now();
        }
    }
}
