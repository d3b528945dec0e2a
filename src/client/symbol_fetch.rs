//! An order's symbol rules (client option `symbol_rules`), checked before it is sent, and the
//! reads of the venue's rules (`query_symbol_info`) that the check needs, within the order's
//! one deadline. When the rules are read again: `symbol_cache`.

use super::Client;
use super::symbol_cache::SymbolCache;
use super::symbol_rules::{SymbolTable, Verdict};
use crate::endpoints::Endpoint;
use crate::error::{Error, Result, excerpt};
use crate::order::OrderBody;
use crate::redact::CallSecrets;
use std::sync::Arc;
use std::time::Instant;

impl Client {
    /// Check an order against the symbol rules when they are on: read first when there are
    /// none (or they are stale); read again once when the order's symbol is not in them. A
    /// read starts the call's one `total_timeout_ms`; `Ok(Some(deadline))`: the check read
    /// the rules (or waited for a read), and the order has until `deadline`. `Ok(None)`: no
    /// read, and no clock read either (the path of an order the kept rules allow).
    pub(super) fn check_symbol_rules(&self, order: &OrderBody) -> Result<Option<Instant>> {
        let Some(cache) = &self.symbols else { return Ok(None) };
        let (mut table, mut deadline) = match cache.current() {
            Some(table) => (table, None),
            None => {
                let deadline = Instant::now() + self.total_timeout;
                (self.read_rules(cache, None, deadline)?, Some(deadline))
            }
        };
        let mut verdict = table.check(order);
        if deadline.is_none() && verdict == Verdict::Unknown {
            let again = Instant::now() + self.total_timeout;
            table = self.read_rules(cache, Some(&table), again)?;
            verdict = table.check(order);
            deadline = Some(again);
        }
        match verdict {
            Verdict::Allowed => Ok(deadline),
            Verdict::Refused(message) => Err(Error::invalid_order(message)),
            Verdict::Unknown => {
                let listed: Vec<&str> = table.symbols().take(12).collect();
                Err(Error::invalid_order(format!(
                    "symbol \"{}\" is not listed by the venue (symbol rules; it lists {})",
                    excerpt(order.field("symbol").unwrap_or("")),
                    if listed.is_empty() { "none".to_owned() } else { listed.join(", ") }
                )))
            }
        }
    }

    /// Read the venue's symbol list, one read at a time (`SymbolCache::read_once`). `seen`:
    /// the table the caller found wanting (`None`: none).
    fn read_rules(
        &self,
        cache: &SymbolCache,
        seen: Option<&Arc<SymbolTable>>,
        deadline: Instant,
    ) -> Result<Arc<SymbolTable>> {
        cache.read_once(seen, deadline, || self.read_list(cache, deadline))
    }

    /// `query_symbol_info` without a symbol, within what is left of the call's time: keep
    /// the list.
    fn read_list(&self, cache: &SymbolCache, deadline: Instant) -> Result<Arc<SymbolTable>> {
        let not_sent = |e: Error| {
            let message = format!(
                "symbol rules: the venue's symbol list could not be read, so the order was not sent: {}",
                e.message()
            );
            e.with_message(message).reached_venue(false)
        };
        let answer = self
            .endpoint_answer(Endpoint::QuerySymbolInfo, None, None, &CallSecrets::none(), Some(deadline))
            .map_err(not_sent)?;
        let table = SymbolTable::parse(&answer).map_err(|why| {
            Error::bad_response(format!("symbol rules: {why}; the order was not sent")).with_body(answer)
        })?;
        Ok(cache.store_list(table))
    }

    /// Read a `query_symbol_info` answer (all symbols) into the symbol-rules cache.
    pub(super) fn keep_symbols(&self, answer: &str) -> std::result::Result<Arc<SymbolTable>, String> {
        let cache = self.symbols.as_ref().ok_or("symbol rules are off")?;
        Ok(cache.store_list(SymbolTable::parse(answer)?))
    }
}
