//! A rotated connection read out before it is closed.
//!
//! A rotation (`stream_rotate_after_ms`, before the venue's 24 h cap) is ours, not a failure:
//! the venue still serves the old connection, and outcomes of orders sent on it may be on
//! their way. So the old connection, already out of the link (no order is written to it any
//! more: a caller's order waits for the new connection, refused as during any reconnection),
//! is read until every request sent on it has its final reply, or a bounded grace passes,
//! or the venue ends it; its replies are delivered as any others. Only then is it closed and
//! its `disconnected` event says what is still `unanswered`.
//!
//! The new connection is opened after that, not before: its `reconnected` event then follows
//! the old connection's `disconnected` (as for any other replacement), and the grace is
//! spent only while an outcome is awaited (usually one round trip).
//!
//! The market stream awaits no outcome: what has already arrived on the old socket is read
//! (pushes the venue sent before the rotation), nothing is waited for. A push the venue
//! sends between the old connection's close and the new one's subscription is not received:
//! the venue offers no replay; `seq` starts again on the new connection, and the `reconnected`
//! event tells an engine to take a fresh depth snapshot, as after any reconnection.

use super::reader::read_available;
use super::settings::StreamSettings;
use super::shared::{Shared, poll_fds};
use super::supervisor::Protocol;
use super::transport::Connection;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// The longest the old connection is read for outcomes after a rotation (or the read
/// timeout, if shorter: no reply is awaited longer than that anywhere else).
const MAX_ROTATION_GRACE: Duration = Duration::from_secs(5);

/// Read the old connection until the protocol awaits no outcome on it, or the grace passes,
/// or the connection ends (or the stream is closed).
pub(super) fn read_out(conn: &mut Connection, proto: &mut dyn Protocol, shared: &Shared, settings: &StreamSettings) {
    let deadline = Instant::now() + settings.reply_timeout.min(MAX_ROTATION_GRACE);
    let mut last_inbound = Instant::now();
    let mut close_reason = None;
    let mut more = false;
    loop {
        // An auth outcome (a late answer to the old connection's login) means nothing now:
        // the connection is being replaced anyway.
        if read_available(conn, proto, shared, &mut last_inbound, &mut close_reason, &mut more).is_err() {
            return;
        }
        // The grace bounds the whole read-out, however much the venue still sends: a venue
        // that keeps the socket full (`more`) must not hold the replacement back. Without
        // outcomes to wait for, what already arrived (`more`: beyond one pass of reads) is
        // still read: pushes of many symbols, or account fills, queued behind it.
        let left = deadline.saturating_duration_since(Instant::now());
        if (!proto.awaits_outcomes() && !more) || shared.is_closing() || left.is_zero() {
            return;
        }
        if more {
            continue;
        }
        poll_fds(Some(conn.fd()), shared.wake_rx.as_raw_fd(), left);
        shared.drain_wake();
    }
}
