//! The confirmation: each order looked up with `query_order` until it ended, cancelled again
//! while it stays open, with up to `IN_FLIGHT` requests out at once.
//!
//! One request at a time, the venue's round trip (100–250 ms) held the run to 4–10 requests
//! a second whatever its pace allowed: confirming a market maker's ~100 quotes took 10–25 s a
//! round, past the default `confirm_ms`. Workers on scoped threads overlap the requests; the
//! run's pace still decides when each one starts (`requests.rs`), a rate refusal still halts
//! them all until the pause is over, and a refused session still ends the run.

use super::requests::{Run, refused_for_the_rate};
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
    /// The positions whose look-up the venue answered this round (not refused for the rate,
    /// not left unsent by a halt): they go to the back of the next round.
    answered: Vec<usize>,
    /// The failure that ended the run (the first one, when workers met several).
    ended: Option<Error>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Run<'_> {
    /// Look each target up until it ended, cancelling again one still open a second after
    /// its last cancel, until `deadline` (each request's own deadline too). A round cut short
    /// by a rate refusal leaves the targets it did not get an answer for at the front of the
    /// next: whatever the venue refuses, every order is asked for in turn.
    pub(super) fn confirm(&self, targets: &mut [Target], deadline: Instant) -> Result<()> {
        // The order of the next round: indexes into `targets`.
        let mut order: Vec<usize> = (0..targets.len()).collect();
        let mut workers = IN_FLIGHT;
        loop {
            order.retain(|&i| !targets[i].confirmed);
            if order.is_empty() {
                return Ok(());
            }
            let open = targets_in(targets, &order);
            let answered = self.round(open, workers, deadline)?;
            // Those without an answer first, in their order; then the answered ones.
            let mut was_answered = vec![false; order.len()];
            for position in answered {
                was_answered[position] = true;
            }
            let with = |answered: bool| order.iter().zip(&was_answered).filter(move |(_, a)| **a == answered);
            order = with(false).chain(with(true)).map(|(&i, _)| i).collect();
            let now = Instant::now();
            if now >= deadline {
                return Ok(());
            }
            // A venue refusing for the rate leaves the run fewer requests than its pace: half
            // as many out at once after each refusal, down to one at a time (eight out, most
            // refused or halted, left no re-cancel the room to pass), twice as many again
            // after a round without one.
            let pause = match self.take_pause() {
                Some(pause) => {
                    workers = (workers / 2).max(1);
                    pause
                }
                None => {
                    workers = (workers * 2).min(IN_FLIGHT);
                    ROUND_PAUSE
                }
            };
            std::thread::sleep(pause.min(deadline - now));
        }
    }

    /// Check each of `open` once (unless the run is halted or the time is up), with up to
    /// `workers` workers: this thread and scoped threads that share the run (its pace,
    /// counts and pause are under its lock). Returns the positions (in `open`) whose look-up
    /// was answered.
    fn round(&self, open: Vec<&mut Target>, workers: usize, deadline: Instant) -> Result<Vec<usize>> {
        let workers = open.len().min(workers);
        let round = Mutex::new(Round { next: open.into_iter().enumerate(), answered: Vec::new(), ended: None });
        let work = || {
            while !self.halted() && Instant::now() < deadline {
                let Some((position, target)) = lock(&round).next.next() else { return };
                let checked = self.check(target, deadline);
                let mut round = lock(&round);
                match checked {
                    Err(e) => {
                        round.ended.get_or_insert(e);
                        return;
                    }
                    Ok(Answered::Yes) => round.answered.push(position),
                    Ok(Answered::No) => {}
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
            None => Ok(round.answered),
        }
    }

    /// Look `target` up once, and cancel it again when it is still open a second after its
    /// last cancel. `Answered::No` when the venue said nothing of it: the look-up, or the
    /// re-cancel it called for, was refused for the rate or not sent.
    fn check(&self, target: &mut Target, deadline: Instant) -> Result<Answered> {
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
                return Ok(Answered::Yes);
            }
            Err(e) if refused_for_the_rate(&e) => return Ok(Answered::No),
            Err(_) => return Ok(Answered::Yes),
        };
        let order: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
        let Some(status) = order.get("status").and_then(Value::as_str) else { return Ok(Answered::Yes) };
        if !target.is_answered_by(&order) {
            return Ok(Answered::Yes);
        }
        target.unseen_since = None;
        if !target.known {
            target.known = true;
            target.order_id = order_id(&order);
            target.symbol = order.get("symbol").and_then(Value::as_str).map(str::to_owned);
        }
        if ENDED.contains(&status) {
            target.ended(status);
            return Ok(Answered::Yes);
        }
        target.status = status.to_owned();
        if target.cancelled_at.is_none_or(|at| at.elapsed() >= RECANCEL_AFTER) {
            // Its answer decides nothing (the next look-up does), unless it was refused for
            // the rate or not sent: then the order is still due its cancel, first in the next
            // round.
            if let Err(e) = self.send(Endpoint::CancelOrder, &target.key(), Some(deadline))?
                && refused_for_the_rate(&e)
            {
                return Ok(Answered::No);
            }
            target.cancelled_at = Some(Instant::now());
        }
        Ok(Answered::Yes)
    }
}

/// Whether a check got the venue's word on its order.
enum Answered {
    Yes,
    No,
}

/// The targets at `order`'s indexes, in that order, each borrowed once.
fn targets_in<'t>(targets: &'t mut [Target], order: &[usize]) -> Vec<&'t mut Target> {
    let mut slots: Vec<Option<&'t mut Target>> = targets.iter_mut().map(Some).collect();
    order.iter().map(|&i| slots[i].take().expect("each index once")).collect()
}
