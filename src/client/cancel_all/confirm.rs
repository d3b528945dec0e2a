//! The confirmation: each order looked up with `query_order` until it ended, cancelled again
//! while it stays open, with up to `IN_FLIGHT` requests out at once.
//!
//! One request at a time, the venue's round trip (100–250 ms) held the run to 4–10 requests
//! a second whatever its pace allowed: confirming a market maker's ~100 quotes took 10–25 s a
//! round, past the default `confirm_ms`. Workers on scoped threads overlap the requests; the
//! run's pace still decides when each one starts (`requests.rs`), a rate refusal still halts
//! them all until the pause is over, and a refused session still ends the run.

use super::requests::Run;
use super::{ENDED, GONE_AFTER, RECANCEL_AFTER, ROUND_PAUSE, Target, order_id};
use crate::endpoints::Endpoint;
use crate::error::{Code, Error, Result};
use serde_json::Value;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// The most requests of the confirmation out at once. The run's pace (20 a second) decides
/// when each starts; this bounds how many overlap: at the venue's 100–250 ms round trip, one
/// at a time made 4–10 a second, and 8 keep up with the pace up to a 400 ms round trip. More
/// would only wait for the pace, each on a thread and a connection of its own.
const IN_FLIGHT: usize = 8;

/// One round's targets, handed out one at a time: the worker that takes a target holds it
/// (`&mut`) until its check is done, so no two workers ever check one order.
struct Round<I> {
    /// (position in the round, (index in the targets, target)).
    next: I,
    /// Where a rate refusal cut the round short: the earliest position (and its target's
    /// index) whose check ended with the run halted — the next round starts there.
    cut: Option<(usize, usize)>,
    /// The failure that ended the run (the first one, when workers met several).
    ended: Option<Error>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Run<'_> {
    /// Look each target up until it ended, cancelling again one still open a second after
    /// its last cancel, until `deadline` (each request's own deadline too). Rounds go on
    /// where a rate refusal cut the last one short, so no order waits behind the others.
    pub(super) fn confirm(&self, targets: &mut [Target], deadline: Instant) -> Result<()> {
        let mut start = 0;
        loop {
            // The open targets, from `start` on, then those before it.
            let mut open: Vec<(usize, &mut Target)> =
                targets.iter_mut().enumerate().filter(|(_, t)| !t.confirmed).collect();
            if open.is_empty() {
                return Ok(());
            }
            let before_start = open.partition_point(|(i, _)| *i < start);
            open.rotate_left(before_start);
            start = self.round(open, deadline)?;
            let now = Instant::now();
            if now >= deadline {
                return Ok(());
            }
            let pause = self.take_pause().unwrap_or(ROUND_PAUSE);
            std::thread::sleep(pause.min(deadline - now));
        }
    }

    /// Check each of `open` once (unless the run is halted or the time is up), with up to
    /// `IN_FLIGHT` workers: this thread and scoped threads that share the run (its pace,
    /// counts and pause are under its lock). Returns the index of the target the next round
    /// starts at.
    fn round(&self, open: Vec<(usize, &mut Target)>, deadline: Instant) -> Result<usize> {
        let workers = open.len().min(IN_FLIGHT);
        let round = Mutex::new(Round { next: open.into_iter().enumerate(), cut: None, ended: None });
        let work = || {
            while !self.halted() && Instant::now() < deadline {
                let Some((position, (index, target))) = lock(&round).next.next() else { return };
                let checked = self.check(target, deadline);
                let mut round = lock(&round);
                match checked {
                    Err(e) => {
                        round.ended.get_or_insert(e);
                        return;
                    }
                    Ok(()) if self.halted() && round.cut.is_none_or(|(cut, _)| position < cut) => {
                        round.cut = Some((position, index));
                    }
                    Ok(()) => {}
                }
            }
        };
        std::thread::scope(|scope| {
            for _ in 1..workers {
                // A thread the system cannot give is a worker fewer, not a failed cancel_all:
                // this thread works through the round in any case.
                if std::thread::Builder::new().name("perps-cancel-all".into()).spawn_scoped(scope, work).is_err() {
                    break;
                }
            }
            work();
        });
        let round = round.into_inner().unwrap_or_else(PoisonError::into_inner);
        match round.ended {
            Some(e) => Err(e),
            None => Ok(round.cut.map_or(0, |(_, index)| index)),
        }
    }

    fn check(&self, target: &mut Target, deadline: Instant) -> Result<()> {
        let answer = match self.send(Endpoint::QueryOrder, &target.key(), Some(deadline))? {
            Ok(answer) => answer,
            Err(e) if e.code() == Code::NotFound => {
                // Gone, for an order known to exist and unseen for a while; for one never
                // seen, maybe not visible yet (§1.4): asked again until the deadline.
                if target.known {
                    let since = *target.unseen_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= GONE_AFTER {
                        target.ended("gone");
                    }
                } else {
                    target.status = "not_found".to_owned();
                }
                return Ok(());
            }
            Err(_) => return Ok(()),
        };
        let order: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
        let Some(status) = order.get("status").and_then(Value::as_str) else { return Ok(()) };
        if !target.is_answered_by(&order) {
            return Ok(());
        }
        target.unseen_since = None;
        if !target.known {
            target.known = true;
            target.order_id = order_id(&order);
            target.symbol = order.get("symbol").and_then(Value::as_str).map(str::to_owned);
        }
        if ENDED.contains(&status) {
            target.ended(status);
            return Ok(());
        }
        target.status = status.to_owned();
        if target.cancelled_at.is_none_or(|at| at.elapsed() >= RECANCEL_AFTER) {
            target.cancelled_at = Some(Instant::now());
            // Its answer decides nothing: the next look-up does.
            self.send(Endpoint::CancelOrder, &target.key(), Some(deadline))?.ok();
        }
        Ok(())
    }
}
