//! A client's copy of the venue's symbol rules (client option `symbol_rules`), and when to
//! read them again.
//!
//! The rules are read at the first order, then kept. They are read again when an order names
//! a symbol they lack (that symbol alone, merged into the table), when an order would be
//! refused by a rule older than `symbol_rules_max_age_ms` (the venue may have loosened it: a
//! refusal is never made on stale rules, and an order that passes costs nothing), after the
//! venue refuses an order with a tick or order-qty error (over REST or the order stream: every
//! rule read before that is read again at the next order of its symbol — the whole list, or,
//! symbol by symbol, that symbol), and on demand (`perps_query_symbol_info` without a
//! symbol).
//!
//! A venue that refuses the whole list (a 4xx to `query_symbol_info` without `symbol`, as an
//! HTTP status or as the `code` of an HTTP 200 answer: the documents call `symbol` required,
//! while a live client calls it without one) is remembered
//! as one that needs per-symbol reads; each order's symbol is then read on its own and merged
//! into the table. So is a venue whose list, just read, lacked a symbol that a read of it
//! alone found (a list of some symbols only, or `[]`).
//!
//! One read of a kind at a time: calls that need the list (or the same symbol) while it is
//! being read wait for that read and share its outcome, failure included, each within its
//! own deadline; they never read again one after another.

use super::symbol_rules::SymbolTable;
use crate::error::{Code, Error, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

/// The default of `symbol_rules_max_age_ms`: a minute.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(60);

/// What one read fetches: the whole list, or one symbol's rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target<'a> {
    List,
    Symbol(&'a str),
}

/// A read under way, and its outcome once it has one.
#[derive(Debug)]
struct Flight {
    /// `None`: the whole list; `Some`: that symbol.
    symbol: Option<String>,
    landed: Mutex<Option<Result<Arc<SymbolTable>>>>,
    wake: Condvar,
}

impl Flight {
    fn fetches(&self, target: &Target<'_>) -> bool {
        match target {
            Target::List => self.symbol.is_none(),
            Target::Symbol(symbol) => self.symbol.as_deref() == Some(*symbol),
        }
    }
}

#[derive(Debug)]
pub struct SymbolCache {
    table: RwLock<Option<Arc<SymbolTable>>>,
    /// When the venue last refused an order with a tick or order-qty error, in nanoseconds
    /// after `base` plus one (0: never): every rule read (its request sent) before it is
    /// stale, and the next order of its symbol reads it again first (the whole list, or,
    /// from a venue read symbol by symbol, that symbol: each symbol's rules are read again as
    /// it is next used, not only the next order's). An atomic: every order reads it.
    stale_since: AtomicU64,
    /// The origin of `stale_since`.
    base: Instant,
    /// Set when the venue refused the whole list with a 4xx (status or code), or when a
    /// symbol a list read lacked was found by a read of it alone: read symbol by symbol.
    per_symbol: AtomicBool,
    /// Rules older than this are read again before they refuse an order.
    max_age: Duration,
    flights: Mutex<Vec<Arc<Flight>>>,
}

impl SymbolCache {
    pub fn new(max_age: Duration) -> SymbolCache {
        SymbolCache {
            table: RwLock::new(None),
            stale_since: AtomicU64::new(0),
            base: Instant::now(),
            per_symbol: AtomicBool::new(false),
            max_age,
            flights: Mutex::new(Vec::new()),
        }
    }

    /// The current table, if any (stale rules in it included: [`is_stale`](Self::is_stale)).
    pub fn current(&self) -> Option<Arc<SymbolTable>> {
        self.table.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Whether `symbol`'s rules in `table` were read before the venue's last tick or
    /// order-qty refusal. A symbol the table lacks is not stale: it is missing.
    pub fn is_stale(&self, table: &SymbolTable, symbol: &str) -> bool {
        let since = self.stale_since.load(Ordering::Acquire);
        since != 0 && table.read_at(symbol).is_some_and(|at| self.nanos(at) < since)
    }

    /// `at` as `stale_since` counts (a time before `base` as 0).
    fn nanos(&self, at: Instant) -> u64 {
        at.checked_duration_since(self.base).map_or(0, |d| d.as_nanos().min(u128::from(u64::MAX - 1)) as u64 + 1)
    }

    /// Keep a whole list (its request sent at `sent`) in place of what was kept — but for
    /// rules read after `sent` (a symbol read alone while the list was on its way), which
    /// stay: answers land out of order.
    pub fn store_list(&self, table: SymbolTable, sent: Instant) -> Arc<SymbolTable> {
        let mut kept = self.table.write().unwrap_or_else(PoisonError::into_inner);
        let table = match kept.as_deref() {
            Some(old) => Arc::new(table.merged(old.read_after(sent))),
            None => Arc::new(table),
        };
        *kept = Some(table.clone());
        table
    }

    /// Keep the rules of the symbols `table` (the answer to a read of `asked` alone, sent at
    /// `sent`; empty for a 4xx refusal of it) lists, `asked` under that name whatever its
    /// case in the answer, and the others as they were — but not `asked` when the answer does
    /// not name it and the rule kept for it was read no later: kept, it would stay stale (read again at every order) though the venue
    /// no longer lists it.
    pub fn merge(&self, table: SymbolTable, asked: &str, sent: Instant) -> Arc<SymbolTable> {
        let mut kept = self.table.write().unwrap_or_else(PoisonError::into_inner);
        let table = table.named_as(asked);
        let lacks_asked = table.rule(asked).is_none();
        let mut merged = match kept.as_deref() {
            Some(old) => old.merged(table),
            None => table,
        };
        if lacks_asked && merged.read_at(asked).is_some_and(|at| at <= sent) {
            merged = merged.without(asked);
        }
        let merged = Arc::new(merged);
        *kept = Some(merged.clone());
        merged
    }

    /// The venue refused an order with a tick or order-qty error: every rule read until now
    /// is read again before it is next used.
    pub fn mark_stale(&self) {
        // The latest mark wins, whichever thread stores last.
        self.stale_since.fetch_max(self.nanos(Instant::now()), Ordering::AcqRel);
    }

    /// Whether the venue refused the whole list, so that rules are read symbol by symbol.
    pub fn per_symbol(&self) -> bool {
        self.per_symbol.load(Ordering::Relaxed)
    }

    pub fn set_per_symbol(&self) {
        self.per_symbol.store(true, Ordering::Relaxed);
    }

    /// Whether `symbol`'s rules in `table` are too old to refuse an order on.
    pub fn too_old(&self, table: &SymbolTable, symbol: &str) -> bool {
        table.read_at(symbol).is_none_or(|at| at.elapsed() >= self.max_age)
    }

    /// Read `target` with `fetch` (which stores what it read), unless a read of it is under
    /// way: then wait for that one, until `deadline`, and share its outcome. Before reading,
    /// a table kept since the caller looked at `seen` (the table it found wanting, `None`
    /// when there was none) is used instead when it answers better for `symbol`.
    pub fn read_once(
        &self,
        target: Target<'_>,
        symbol: &str,
        seen: Option<&Arc<SymbolTable>>,
        deadline: Instant,
        fetch: impl FnOnce() -> Result<Arc<SymbolTable>>,
    ) -> Result<Arc<SymbolTable>> {
        let flight = {
            let mut flights = self.flights.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(flight) = flights.iter().find(|f| f.fetches(&target)) {
                let flight = flight.clone();
                drop(flights);
                return wait_for(&flight, deadline);
            }
            if let Some(current) = self.current()
                && answers_better(&current, seen, &target, symbol)
                && !self.is_stale(&current, symbol)
            {
                return Ok(current);
            }
            let flight = Arc::new(Flight {
                symbol: match target {
                    Target::List => None,
                    Target::Symbol(symbol) => Some(symbol.to_owned()),
                },
                landed: Mutex::new(None),
                wake: Condvar::new(),
            });
            flights.push(flight.clone());
            flight
        };
        let mut landing = Landing { cache: self, flight, outcome: None };
        let outcome = fetch();
        landing.outcome = Some(outcome.clone());
        outcome
    }
}

/// Whether `current`, kept after the caller found `seen` wanting, is newer for what `target`
/// reads: for the whole list, any table kept since is; for one symbol, only a newer read of
/// that symbol is.
fn answers_better(
    current: &Arc<SymbolTable>,
    seen: Option<&Arc<SymbolTable>>,
    target: &Target<'_>,
    symbol: &str,
) -> bool {
    match seen {
        None => true,
        Some(seen) if Arc::ptr_eq(seen, current) => false,
        Some(seen) => match target {
            Target::List => true,
            Target::Symbol(_) => current.read_at(symbol) > seen.read_at(symbol),
        },
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
                "the symbol rules another call was reading did not arrive within total_timeout_ms",
            ));
        }
        landed = flight.wake.wait_timeout(landed, left).unwrap_or_else(PoisonError::into_inner).0;
    }
}

/// Ends a read: takes it off the list of reads under way and hands its outcome to the calls
/// waiting for it — on drop, so that they are woken even if the read panicked.
struct Landing<'a> {
    cache: &'a SymbolCache,
    flight: Arc<Flight>,
    outcome: Option<Result<Arc<SymbolTable>>>,
}

impl Drop for Landing<'_> {
    fn drop(&mut self) {
        self.cache.flights.lock().unwrap_or_else(PoisonError::into_inner).retain(|f| !Arc::ptr_eq(f, &self.flight));
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

    const LIST: &str = r#"[{"symbol":"BTC-USD","qty_tick_decimals":4},{"symbol":"ETH-USD","qty_tick_decimals":3}]"#;

    #[test]
    fn calls_that_arrive_during_a_read_share_its_outcome_failure_included() {
        let cache = SymbolCache::new(DEFAULT_MAX_AGE);
        let deadline = Instant::now() + Duration::from_secs(5);
        let reads = std::sync::atomic::AtomicUsize::new(0);
        let started = std::sync::Barrier::new(2);
        let outcomes: Vec<Result<Arc<SymbolTable>>> = std::thread::scope(|scope| {
            let leader = scope.spawn(|| {
                cache.read_once(Target::List, "BTC-USD", None, deadline, || {
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
                        cache.read_once(Target::List, "BTC-USD", None, deadline, || {
                            reads.fetch_add(1, Ordering::SeqCst);
                            Ok(cache.store_list(SymbolTable::parse(LIST).unwrap(), Instant::now()))
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
        let table = cache.read_once(Target::List, "BTC-USD", None, deadline, || {
            reads.fetch_add(1, Ordering::SeqCst);
            Ok(cache.store_list(SymbolTable::parse(LIST).unwrap(), Instant::now()))
        });
        assert!(table.unwrap().rule("ETH-USD").is_some());
        assert_eq!(reads.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_symbol_its_own_read_lacks_is_dropped_unless_a_later_read_listed_it() {
        let (earlier, later) = (Instant::now(), Instant::now() + Duration::from_secs(1));
        let btc = |at| SymbolTable::parse_read_at(r#"[{"symbol":"BTC-USD"},{"symbol":"ETH-USD"}]"#, at).unwrap();
        let symbols = |table: &SymbolTable| table.symbols().map(str::to_owned).collect::<Vec<_>>();
        // Read at `earlier`, asked again at `later`: the answer lacks it, so it goes.
        let cache = SymbolCache::new(DEFAULT_MAX_AGE);
        cache.store_list(btc(earlier), earlier);
        assert_eq!(symbols(&cache.merge(SymbolTable::default(), "BTC-USD", later)), ["ETH-USD"]);
        // Listed by a read sent later than the one that lacks it (answers land out of
        // order): it stays. Named in another case: it was answered, and stays.
        let cache = SymbolCache::new(DEFAULT_MAX_AGE);
        cache.store_list(btc(later), later);
        assert_eq!(symbols(&cache.merge(SymbolTable::default(), "BTC-USD", earlier)), ["BTC-USD", "ETH-USD"]);
        let lower = SymbolTable::parse_read_at(r#"[{"symbol":"btc-usd","qty_tick_decimals":1}]"#, later).unwrap();
        let merged = cache.merge(lower, "BTC-USD", later);
        assert_eq!(merged.rule("BTC-USD").unwrap().qty_tick_decimals, Some(1), "kept under the order's name");
        assert!(merged.rule("btc-usd").is_none());
    }

    #[test]
    fn a_list_keeps_the_rules_read_after_its_request_was_sent() {
        let (sent, later) = (Instant::now(), Instant::now() + Duration::from_secs(1));
        let cache = SymbolCache::new(DEFAULT_MAX_AGE);
        // SOL-USD read alone while the list (which lacks it, and has BTC-USD's older rule)
        // was on its way.
        cache.merge(
            SymbolTable::parse_read_at(r#"[{"symbol":"SOL-USD"},{"symbol":"BTC-USD","qty_tick_decimals":3}]"#, later)
                .unwrap(),
            "SOL-USD",
            later,
        );
        let list = cache.store_list(
            SymbolTable::parse_read_at(r#"[{"symbol":"BTC-USD","qty_tick_decimals":2},{"symbol":"ETH-USD"}]"#, sent)
                .unwrap(),
            sent,
        );
        assert!(list.rule("SOL-USD").is_some() && list.rule("ETH-USD").is_some());
        assert_eq!(list.rule("BTC-USD").unwrap().qty_tick_decimals, Some(3), "the later rule stays");
        // A list sent after them replaces them.
        let newest = later + Duration::from_secs(1);
        let list = cache.store_list(SymbolTable::parse_read_at(r#"[{"symbol":"ETH-USD"}]"#, newest).unwrap(), newest);
        assert_eq!(list.symbols().collect::<Vec<_>>(), ["ETH-USD"]);
    }

    #[test]
    fn a_waiter_gives_up_at_its_own_deadline() {
        let cache = SymbolCache::new(DEFAULT_MAX_AGE);
        let started = std::sync::Barrier::new(2);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                cache.read_once(Target::Symbol("BTC-USD"), "BTC-USD", None, Instant::now(), || {
                    started.wait();
                    std::thread::sleep(Duration::from_millis(500));
                    Err(Error::new(Code::Timeout, "slow"))
                })
            });
            started.wait();
            let begun = Instant::now();
            let deadline = begun + Duration::from_millis(100);
            let waited = cache.read_once(Target::Symbol("BTC-USD"), "BTC-USD", None, deadline, || unreachable!());
            assert_eq!(waited.unwrap_err().code(), Code::Timeout);
            assert!(begun.elapsed() < Duration::from_millis(400), "{:?}", begun.elapsed());
        });
    }

    #[test]
    fn symbol_by_symbol_a_read_of_another_symbol_does_not_answer() {
        let cache = SymbolCache::new(DEFAULT_MAX_AGE);
        cache.set_per_symbol();
        let deadline = Instant::now() + Duration::from_secs(5);
        let seen = cache.merge(SymbolTable::parse(r#"[{"symbol":"BTC-USD"}]"#).unwrap(), "BTC-USD", Instant::now());
        cache.merge(SymbolTable::parse(r#"[{"symbol":"SOL-USD"}]"#).unwrap(), "SOL-USD", Instant::now());
        let eth = SymbolTable::parse(r#"[{"symbol":"ETH-USD"}]"#).unwrap();
        let table = cache.read_once(Target::Symbol("ETH-USD"), "ETH-USD", Some(&seen), deadline, || {
            Ok(cache.merge(eth, "ETH-USD", Instant::now()))
        });
        assert_eq!(table.unwrap().symbols().collect::<Vec<_>>(), ["BTC-USD", "SOL-USD", "ETH-USD"]);
    }

    #[test]
    fn rules_are_too_old_after_the_max_age() {
        let cache = SymbolCache::new(Duration::from_secs(60));
        let long_ago = Instant::now().checked_sub(Duration::from_secs(61)).expect("a clock past a minute");
        let table = SymbolTable::parse_read_at(LIST, long_ago).unwrap();
        assert!(cache.too_old(&table, "BTC-USD"));
        assert!(!cache.too_old(&SymbolTable::parse(LIST).unwrap(), "BTC-USD"));
        assert!(cache.too_old(&table, "XRP-USD"), "a symbol the table lacks has no rules to trust");
    }
}
