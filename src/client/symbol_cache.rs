//! A client's copy of the venue's symbol rules (client option `symbol_rules`), and when to
//! read them again.
//!
//! The list comes from `query_symbol_info` (all symbols): read at the first order, then
//! kept; read again once when an order names a symbol not in it, at the next order after the
//! venue refuses one with a tick error, and replaced on demand (`perps_query_symbol_info`
//! without a symbol).
//!
//! One read at a time: calls that need the list while it is being read wait for that read
//! and share its outcome, failure included, each within its own deadline; they never read
//! again one after another.

use super::symbol_rules::SymbolTable;
use crate::error::{Code, Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};
use std::time::Instant;

/// A read under way, and its outcome once it has one.
#[derive(Debug, Default)]
struct Flight {
    landed: Mutex<Option<Result<Arc<SymbolTable>>>>,
    wake: Condvar,
}

#[derive(Debug, Default)]
pub struct SymbolCache {
    table: RwLock<Option<Arc<SymbolTable>>>,
    /// Set after a tick error: the next order reads the rules first.
    stale: AtomicBool,
    /// The read under way, if any.
    flight: Mutex<Option<Arc<Flight>>>,
}

impl SymbolCache {
    /// The current table, unless there is none yet or it is stale.
    pub fn current(&self) -> Option<Arc<SymbolTable>> {
        if self.stale.load(Ordering::Relaxed) {
            return None;
        }
        self.table.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Keep a whole list, in place of whatever was kept.
    pub fn store_list(&self, table: SymbolTable) -> Arc<SymbolTable> {
        let table = Arc::new(table);
        *self.table.write().unwrap_or_else(PoisonError::into_inner) = Some(table.clone());
        self.stale.store(false, Ordering::Relaxed);
        table
    }

    pub fn mark_stale(&self) {
        self.stale.store(true, Ordering::Relaxed);
    }

    /// Read the list with `fetch` (which stores what it read), unless a read is under way:
    /// then wait for that one, until `deadline`, and share its outcome. Before reading, a
    /// table kept since the caller looked at `seen` (the table it found wanting, `None` when
    /// there was none) is used instead.
    pub fn read_once(
        &self,
        seen: Option<&Arc<SymbolTable>>,
        deadline: Instant,
        fetch: impl FnOnce() -> Result<Arc<SymbolTable>>,
    ) -> Result<Arc<SymbolTable>> {
        let flight = {
            let mut flight = self.flight.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(under_way) = flight.as_ref() {
                let under_way = under_way.clone();
                drop(flight);
                return wait_for(&under_way, deadline);
            }
            if let Some(current) = self.current()
                && seen.is_none_or(|seen| !Arc::ptr_eq(seen, &current))
            {
                return Ok(current);
            }
            flight.insert(Arc::default()).clone()
        };
        let mut landing = Landing { cache: self, flight, outcome: None };
        let outcome = fetch();
        landing.outcome = Some(outcome.clone());
        outcome
    }
}

/// Wait for a read under way to land, until `deadline`.
fn wait_for(flight: &Flight, deadline: Instant) -> Result<Arc<SymbolTable>> {
    let mut landed = flight.landed.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        if let Some(outcome) = landed.as_ref() {
            return outcome.clone();
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Error::new(
                Code::Timeout,
                "symbol rules: the venue's symbol list, being read for another call, did not arrive within \
                 total_timeout_ms, so the order was not sent",
            ));
        }
        landed = flight.wake.wait_timeout(landed, left).unwrap_or_else(PoisonError::into_inner).0;
    }
}

/// Ends a read: takes it off the cache and hands its outcome to the calls waiting for it —
/// on drop, so that they are woken even if the read panicked.
struct Landing<'a> {
    cache: &'a SymbolCache,
    flight: Arc<Flight>,
    outcome: Option<Result<Arc<SymbolTable>>>,
}

impl Drop for Landing<'_> {
    fn drop(&mut self) {
        *self.cache.flight.lock().unwrap_or_else(PoisonError::into_inner) = None;
        let outcome = self
            .outcome
            .take()
            .unwrap_or_else(|| Err(Error::new(Code::Panic, "reading the symbol rules failed (a bug: it panicked)")));
        *self.flight.landed.lock().unwrap_or_else(PoisonError::into_inner) = Some(outcome);
        self.flight.wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const LIST: &str = r#"[{"symbol":"BTC-USD","qty_tick_decimals":4},{"symbol":"ETH-USD","qty_tick_decimals":3}]"#;

    #[test]
    fn calls_that_arrive_during_a_read_share_its_outcome_failure_included() {
        let cache = SymbolCache::default();
        let deadline = Instant::now() + Duration::from_secs(5);
        let reads = std::sync::atomic::AtomicUsize::new(0);
        let started = std::sync::Barrier::new(2);
        let outcomes: Vec<Result<Arc<SymbolTable>>> = std::thread::scope(|scope| {
            let leader = scope.spawn(|| {
                cache.read_once(None, deadline, || {
                    reads.fetch_add(1, Ordering::SeqCst);
                    started.wait();
                    std::thread::sleep(Duration::from_millis(500));
                    Err(Error::new(Code::Timeout, "the venue was slow"))
                })
            });
            started.wait();
            let waiters: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(|| {
                        cache.read_once(None, deadline, || {
                            reads.fetch_add(1, Ordering::SeqCst);
                            Ok(cache.store_list(SymbolTable::parse(LIST).unwrap()))
                        })
                    })
                })
                .collect();
            std::iter::once(leader).chain(waiters).map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(reads.load(Ordering::SeqCst), 1, "one read for all five calls");
        for outcome in outcomes {
            assert_eq!(outcome.unwrap_err().message(), "the venue was slow");
        }
        // The read is over: the next call reads again.
        let table = cache.read_once(None, deadline, || {
            reads.fetch_add(1, Ordering::SeqCst);
            Ok(cache.store_list(SymbolTable::parse(LIST).unwrap()))
        });
        assert!(table.unwrap().rule("ETH-USD").is_some());
        assert_eq!(reads.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_waiter_gives_up_at_its_own_deadline() {
        let cache = SymbolCache::default();
        let started = std::sync::Barrier::new(2);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                cache.read_once(None, Instant::now(), || {
                    started.wait();
                    std::thread::sleep(Duration::from_millis(500));
                    Err(Error::new(Code::Timeout, "slow"))
                })
            });
            started.wait();
            let begun = Instant::now();
            let deadline = begun + Duration::from_millis(100);
            let waited = cache.read_once(None, deadline, || unreachable!());
            assert_eq!(waited.unwrap_err().code(), Code::Timeout);
            assert!(begun.elapsed() < Duration::from_millis(400), "{:?}", begun.elapsed());
        });
    }
}
