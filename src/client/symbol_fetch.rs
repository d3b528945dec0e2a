//! An order's symbol rules (client option `symbol_rules`), checked before it is sent, and the
//! reads of the venue's rules (`query_symbol_info`) that the check needs, within the order's
//! one deadline. When the rules are read again: `symbol_cache`.

use super::Client;
use super::symbol_cache::{SymbolCache, Target};
use super::symbol_rules::{SymbolTable, Verdict};
use crate::endpoints::Endpoint;
use crate::error::{Code, Error, Result, excerpt};
use crate::order::OrderBody;
use crate::redact::CallSecrets;
use std::sync::Arc;
use std::time::Instant;

/// What a check of an order's symbol rules read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    /// The whole list (`query_symbol_info` without a symbol).
    List,
    /// The order's symbol alone.
    Symbol,
}

impl Client {
    /// Check an order against the symbol rules when they are on: read first when there are
    /// none (or they are stale); read again when a rule older than `symbol_rules_max_age_ms`
    /// would refuse it; read the order's symbol alone when the rules lack it. A read starts
    /// the call's one `total_timeout_ms`; `Ok(Some(deadline))`: the check read the rules (or
    /// waited for a read), and the order has until `deadline`. `Ok(None)`: no read, and no
    /// clock read either (the path of an order the kept rules allow).
    pub(crate) fn check_symbol_rules(&self, order: &OrderBody) -> Result<Option<Instant>> {
        let Some(cache) = &self.symbols else { return Ok(None) };
        let symbol = order.field("symbol").unwrap_or("");
        // The venue's refusal of a read of the symbol alone that says it has no such symbol.
        let mut venue_says = None;
        // Read the rules `symbol` needs (`read_rules`). A 4xx it returns refused a read of the
        // symbol alone (a list so refused makes it read the symbol); one that says there is no
        // such symbol leaves the table without it, so that it reads as unknown, and the
        // refusal says why.
        let mut read_now = |seen: Option<&Arc<SymbolTable>>, deadline: Instant| -> Result<(Arc<SymbolTable>, Read)> {
            match self.read_rules(cache, symbol, seen, deadline) {
                Ok(read) => Ok(read),
                Err(error) => {
                    no_such_symbol_or(error, symbol, &mut venue_says, |error| rules_unavailable(cache, error, symbol))?;
                    Ok((cache.current().unwrap_or_default(), Read::Symbol))
                }
            }
        };
        // `read`: what this call read (or waited for), `None` while it read nothing.
        let (mut table, mut deadline, mut read) = match cache.current() {
            Some(table) if !cache.is_stale(&table, symbol) => (table, None, None),
            seen => {
                let deadline = Instant::now() + self.total_timeout;
                let (table, read) = read_now(seen.as_ref(), deadline)?;
                (table, Some(deadline), Some(read))
            }
        };
        let mut verdict = table.check(order);
        // A refusal is never made on stale rules: the venue may have loosened them.
        if read.is_none() && matches!(verdict, Verdict::Refused(_)) && cache.too_old(&table, symbol) {
            let again = Instant::now() + self.total_timeout;
            let (newer, kind) = read_now(Some(&table), again)?;
            (table, read, deadline) = (newer, Some(kind), Some(again));
            verdict = table.check(order);
        }
        // The rules lack the symbol. It is asked for on its own (one read), not by reading the
        // whole list again: the documents call `symbol` required, so a venue may answer the
        // list with `[]` or some symbols only, and a symbol listed since is found this way
        // too. A symbol that a list read just now lacked, found on its own, shows that the
        // list is not the whole one: from then on symbols are read one at a time (the list
        // read again would drop what was merged). A venue that refuses the read with a 4xx
        // says it has no such symbol. Not read twice: a read of the symbol alone just now (by
        // this call, or one it waited for) was this one.
        if matches!(verdict, Verdict::Unknown) && read != Some(Read::Symbol) {
            let at = deadline.unwrap_or_else(|| Instant::now() + self.total_timeout);
            let alone = cache
                .read_once(Target::Symbol(symbol), symbol, Some(&table), at, || self.read_symbol(cache, symbol, at));
            match alone {
                Ok(newer) => {
                    table = newer;
                    verdict = table.check(order);
                    if read == Some(Read::List) && !matches!(verdict, Verdict::Unknown) {
                        cache.set_per_symbol();
                    }
                }
                Err(error) => {
                    no_such_symbol_or(error, symbol, &mut venue_says, |error| symbol_unavailable(error, symbol))?;
                }
            }
            deadline = Some(at);
        }
        match verdict {
            Verdict::Allowed => Ok(deadline),
            Verdict::Refused(message) => Err(Error::invalid_order(message)),
            Verdict::Unknown => {
                let listed: Vec<&str> = table.symbols().take(12).collect();
                let alone = match venue_says {
                    Some(refusal) => format!("its query_symbol_info for \"{}\" refused: {refusal}", excerpt(symbol)),
                    None => format!("its query_symbol_info for \"{}\" lists no such symbol", excerpt(symbol)),
                };
                let source = if cache.per_symbol() {
                    alone
                } else if listed.is_empty() {
                    format!("its list names none, and {alone}")
                } else {
                    format!("its list names {}, and {alone}", listed.join(", "))
                };
                Err(Error::invalid_order(format!(
                    "symbol \"{}\" is not listed by the venue (symbol rules; {source})",
                    excerpt(symbol)
                )))
            }
        }
    }

    /// Read the rules `symbol` needs: the whole list, or, from a venue read symbol by symbol,
    /// that symbol's rules alone; and which of the two it was (decided by this call's own
    /// reads: another thread may switch the venue to per-symbol reads meanwhile). `seen`:
    /// the table the caller found wanting (`None`: none).
    fn read_rules(
        &self,
        cache: &SymbolCache,
        symbol: &str,
        seen: Option<&Arc<SymbolTable>>,
        deadline: Instant,
    ) -> Result<(Arc<SymbolTable>, Read)> {
        if !cache.per_symbol() {
            match cache.read_once(Target::List, symbol, seen, deadline, || self.read_list(cache, deadline)) {
                // The venue refused the whole list (this read, or the one it waited for).
                Err(_) if cache.per_symbol() => {}
                outcome => return outcome.map(|table| (table, Read::List)),
            }
        }
        cache
            .read_once(Target::Symbol(symbol), symbol, seen, deadline, || self.read_symbol(cache, symbol, deadline))
            .map(|table| (table, Read::Symbol))
    }

    /// `query_symbol_info` without a symbol: keep the list. A 4xx refusal (except 408 and 429,
    /// which say "later", not "not like this") marks the venue as one that needs a symbol,
    /// whether an HTTP status says it or the `code` of an HTTP 200 answer does (a 200 can
    /// carry a code: `venue-api.md` §3.1).
    fn read_list(&self, cache: &SymbolCache, deadline: Instant) -> Result<Arc<SymbolTable>> {
        let sent = Instant::now();
        let answer = self
            .endpoint_answer(Endpoint::QuerySymbolInfo, None, None, &CallSecrets::none(), Some(deadline), None)
            .inspect_err(|error| {
                if is_a_refusal(error) {
                    cache.set_per_symbol();
                }
            })?;
        Ok(cache.store_list(symbol_table(answer, sent)?, sent))
    }

    /// `query_symbol_info` for one symbol: merge its rules into the table.
    fn read_symbol(&self, cache: &SymbolCache, symbol: &str, deadline: Instant) -> Result<Arc<SymbolTable>> {
        let params = serde_json::json!({ "symbol": symbol }).to_string();
        let sent = Instant::now();
        let answer = self
            .endpoint_answer(Endpoint::QuerySymbolInfo, None, Some(&params), &CallSecrets::none(), Some(deadline), None)
            .inspect_err(|error| {
                // The venue has no such symbol (any more): its kept rules go.
                if says_no_such_symbol(error, symbol) {
                    cache.merge(SymbolTable::default(), symbol, sent);
                }
            })?;
        Ok(cache.merge(symbol_table(answer, sent)?, symbol, sent))
    }

    /// Read a `query_symbol_info` answer (all symbols), to a request sent at `sent`, into the
    /// symbol-rules cache.
    pub(super) fn keep_symbols(&self, answer: &str, sent: Instant) -> std::result::Result<Arc<SymbolTable>, String> {
        let cache = self.symbols.as_ref().ok_or("symbol rules are off")?;
        Ok(cache.store_list(SymbolTable::parse_read_at(answer, sent)?, sent))
    }
}

/// A 4xx refusal (as an HTTP status or the `code` of a 200 answer), except 408 and 429, which
/// say "later", not "not like this".
fn is_a_refusal(error: &Error) -> bool {
    let refusal = error.venue_code().unwrap_or(error.http_status());
    (400..500).contains(&refusal) && !matches!(refusal, 408 | 429)
}

/// A failed read of the rules: the venue's word that it has no such symbol
/// ([`says_no_such_symbol`]), kept in `venue_says` (the check goes on with rules that lack
/// it), or the order's error (`unavailable`: nothing was sent).
fn no_such_symbol_or(
    error: Error,
    symbol: &str,
    venue_says: &mut Option<String>,
    unavailable: impl FnOnce(Error) -> Error,
) -> Result<()> {
    if !says_no_such_symbol(&error, symbol) {
        return Err(unavailable(error));
    }
    *venue_says = Some(error.message().to_owned());
    Ok(())
}

/// A refusal of a read of `symbol` alone that says the venue has no such symbol: a 4xx
/// whose words tie a missing word to the symbol ("symbol not found", "unknown symbol",
/// "invalid symbol", "BTC-USD does not exist"). Anything else ("symbol is required", "invalid
/// params: symbol", "unknown field `symbol`", a bare 404 "not found" — which a gateway's
/// wrong route gives too —, a 401 or 403) says the read failed, not that the symbol is
/// missing: the order is then not sent because the rules could not be fetched, never
/// refused as unlisted on a guess.
fn says_no_such_symbol(error: &Error, symbol: &str) -> bool {
    let refusal = error.venue_code().unwrap_or(error.http_status());
    if !is_a_refusal(error) || matches!(refusal, 401 | 403) {
        return false;
    }
    // The venue's own words (the message also holds the library's).
    let words = error.body().and_then(super::answers::venue_reason).unwrap_or_default().to_ascii_lowercase();
    const ABOUT_A_REQUEST: [&str; 6] = ["required", "param", "field", "missing", "format", "route"];
    const TIED: [&str; 9] = [
        "symbol not found",
        "symbol does not exist",
        "symbol not exist",
        "unknown symbol",
        "invalid symbol",
        "no such symbol",
        "symbol not listed",
        "symbol is delisted",
        "symbol delisted",
    ];
    const MISSING: [&str; 5] = ["not found", "does not exist", "not exist", "not listed", "delisted"];
    let named = words.contains(&symbol.to_ascii_lowercase());
    !ABOUT_A_REQUEST.iter().any(|word| words.contains(word))
        && (TIED.iter().any(|phrase| words.contains(phrase)) || (named && MISSING.iter().any(|m| words.contains(m))))
}

/// The rules in an answer to a request sent at `sent`: they are as old as that (a rule the
/// venue changed while the answer was on its way is no newer for arriving later).
fn symbol_table(answer: String, sent: Instant) -> Result<SymbolTable> {
    SymbolTable::parse_read_at(&answer, sent)
        .map_err(|why| Error::bad_response(format!("query_symbol_info: {why}")).with_body(answer).reached_venue(false))
}

/// The error of an order whose symbol rules could not be read: nothing was sent. A venue
/// answer that brought no rules (a refusal, a wrong shape) is `PERPS_BAD_RESPONSE` without an
/// HTTP status, so that nothing in the error reads as the venue's answer to the order (its
/// message and body say what the rules request got); a time-out, a connection failure, the
/// local rate limiter keep their codes, flagged as not sent.
fn rules_unavailable(cache: &SymbolCache, error: Error, symbol: &str) -> Error {
    let what = if cache.per_symbol() {
        format!(
            "the rules of \"{}\"; this venue does not list every symbol, so they are read one symbol at a time",
            excerpt(symbol)
        )
    } else {
        "the venue's symbol list".to_owned()
    };
    not_fetched(&what, error)
}

/// As `rules_unavailable`, for the read of one symbol that the kept rules lack.
fn symbol_unavailable(error: Error, symbol: &str) -> Error {
    not_fetched(&format!("the rules of \"{}\", which the rules kept so far lack", excerpt(symbol)), error)
}

fn not_fetched(what: &str, error: Error) -> Error {
    let code = match error.code() {
        code @ (Code::Timeout | Code::Transport | Code::RateLimited | Code::InvalidArgument | Code::Panic) => code,
        _ => Code::BadResponse,
    };
    let mut unavailable = Error::new(
        code,
        format!("symbol rules could not be fetched ({what}), so the order was NOT sent: {}", error.message()),
    );
    if let Some(body) = error.body() {
        unavailable = unavailable.with_body(body);
    }
    if let Some(ms) = error.retry_after_ms() {
        unavailable = unavailable.with_retry_after_ms(ms);
    }
    unavailable
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error of a `query_symbol_info?symbol=BTC-USD` answered `status` with `body`.
    fn answered(status: u16, body: &str) -> Error {
        Error::new(Code::HttpStatus, format!("/api/query_symbol_info: the venue answered HTTP {status}"))
            .with_status(status)
            .with_body(body)
    }

    #[test]
    fn only_a_refusal_about_the_symbol_says_there_is_no_such_symbol() {
        for (error, none) in [
            (answered(404, r#"{"code":404,"message":"symbol not found"}"#), true),
            (answered(400, r#"{"code":400,"message":"Symbol Not Found"}"#), true),
            (answered(400, r#"{"message":"BTC-USD does not exist"}"#), true),
            (answered(422, r#"{"msg":"invalid symbol"}"#), true),
            (answered(400, r#"{"error":"unknown symbol BTC-USD"}"#), true),
            // A refusal for another reason: the read failed, the symbol may well exist.
            (answered(404, r#"{"code":404,"message":"not found"}"#), false),
            (answered(404, r#"{"message":"no Route matched with those values"}"#), false),
            (Error::new(Code::ApiError, "refused").with_venue_code(404), false),
            (answered(400, r#"{"code":400,"message":"invalid params: symbol is required"}"#), false),
            (answered(400, r#"{"message":"unknown field `symbol`"}"#), false),
            (answered(400, r#"{"message":"Invalid parameter 'symbol'"}"#), false),
            (answered(400, r#"{"code":400,"message":"invalid params"}"#), false),
            (answered(400, r#"{"code":400,"message":"symbol is required"}"#), false),
            (answered(400, r#"{"message":"Unknown error"}"#), false),
            (answered(401, r#"{"message":"invalid symbol token"}"#), false),
            (answered(403, r#"{"message":"symbol not found"}"#), false),
            (answered(429, r#"{"message":"symbol not found"}"#), false),
            (answered(503, r#"{"message":"symbol not found"}"#), false),
            (
                Error::new(
                    Code::HttpStatus,
                    "the venue answered HTTP 404 (a web server's page, not the venue's answer)",
                )
                .with_status(404),
                false,
            ),
        ] {
            assert_eq!(says_no_such_symbol(&error, "BTC-USD"), none, "{error:?}");
        }
    }
}
