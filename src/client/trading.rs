//! Trading requests: the order, any other venue endpoint, the server-time sync, and the one
//! exchange every venue request of an account goes through (pacing, body signature, the
//! send, and the details a failure carries). Every request is sent exactly once: nothing here
//! retries.

use super::answers::is_web_server_page;
use super::request_pacing::Limits;
use super::symbol_rules::is_rules_error;
use super::transport::{Bounds, Reply};
use super::{Client, guarded, json_object, require_2xx, sent_tracker};
use crate::body_sign::BodySignature;
use crate::endpoints::answer::{self, Answering, Refusal};
use crate::error::{Code, Error, Result, excerpt, venue_words};
use crate::order;
use crate::redact::CallSecrets;
use crate::session::{RequestOptions, Session};
use std::time::Instant;
use ureq::http::Method;

/// The account a request acts for: its session, checked token and account name.
pub(super) struct Account<'a> {
    pub session: &'a Session,
    pub token: &'a str,
    /// Names the rate-limit bucket (`Session::usable_credentials`).
    pub account: &'a str,
}

/// One request to send.
pub(super) struct Outgoing<'a> {
    pub method: Method,
    /// Path and query under `perps_url`.
    pub target: &'a str,
    /// Sent byte for byte; signed when `account` is present.
    pub body: Option<&'a [u8]>,
    /// `None` for public market data: no token, no signature, no pacing.
    pub account: Option<Account<'a>>,
    /// The secrets in play for the call: venue text is redacted of them before an error
    /// quotes or keeps it (`crate::redact`).
    pub secrets: &'a CallSecrets<'a>,
    /// The endpoint calls: the venue's own 404 ("order not found": a JSON, text or empty
    /// body) is `PERPS_NOT_FOUND`. An HTML page stays `PERPS_HTTP_STATUS`: it comes from a
    /// proxy or a wrong URL, and says nothing about the order. `false`: every 404 is
    /// `PERPS_HTTP_STATUS` (`new_order`, `perps_request`).
    pub not_found: bool,
    /// When the call's time (`total_timeout_ms`) ends, if earlier steps of the call (reading
    /// the symbol rules) used some of it; `None`: the exchange has all of it.
    pub deadline: Option<Instant>,
    /// A larger bound than the client's `max_response_bytes` for this answer (the larger
    /// applies): cancel_all's open-orders listing. `None`: the client's.
    pub larger_answer: Option<u64>,
}

/// A 2xx answer, with the signature whose `x-request-id` a later failure reports.
pub(super) struct Exchanged<'a> {
    pub reply: Reply,
    signature: Option<BodySignature>,
    secrets: &'a CallSecrets<'a>,
    /// The limits the request was paced to: a refusal with code 429 pauses them as an HTTP
    /// 429 does (for the limits' own times: the transport reads no header of a 2xx answer).
    limits: Limits,
}

impl Exchanged<'_> {
    /// An error about this answer: it carries the status, the (redacted) body and the
    /// `x-request-id`. A refusal with the venue's code 429 (`Error::venue_code`) is the
    /// venue's rate limit said in the body: it pauses the limits the request was paced to,
    /// as an HTTP 429 does.
    pub fn refused(&self, error: Error) -> Error {
        if error.venue_code() == Some(429) {
            self.limits.venue_429(None);
        }
        with_request_id(
            error.with_status(self.reply.status).with_body(self.secrets.redact(&self.reply.body).into_owned()),
            self.signature.as_ref(),
        )
    }

    /// The error for what a 2xx answer's `code` or `success` refused (`answer::stated`):
    /// `PERPS_API_ERROR` with the venue's code and words — `PERPS_NOT_FOUND` for code 404
    /// when `not_found` (an endpoint call's look-up reads it as its HTTP 404) — which may
    /// have reached the venue only for a code that leaves the outcome unknown (5xx, 408); or
    /// `PERPS_BAD_RESPONSE` for an answer of another shape (a code that is no plain integer,
    /// a success code beside `"success": false`), whose outcome is unknown.
    pub fn refusal(&self, what: &str, refusal: Refusal, not_found: bool) -> Error {
        let error = match refusal {
            Refusal::Shape(why) => Error::bad_response(format!("{what}: {why}")).reached_venue(true),
            Refusal::Code(code, words) => Error::new(
                if code == 404 && not_found { Code::NotFound } else { Code::ApiError },
                answer::refused_with_code(what, code, &self.quoted(&words)),
            )
            .with_venue_code(code)
            .reached_venue(answer::code_leaves_outcome_unknown(code)),
            Refusal::Unsuccessful(words) => {
                Error::new(Code::ApiError, answer::refused_unsuccessful(what, &self.quoted(&words)))
            }
        };
        self.refused(error)
    }

    /// Venue text quoted in a message: redacted of the call's secrets, then `venue_words`.
    pub fn quoted(&self, text: &str) -> String {
        venue_words(&self.secrets.redact(text))
    }
}

fn with_request_id(error: Error, signature: Option<&BodySignature>) -> Error {
    match signature {
        Some(sig) => error.with_request_id(sig.request_id()),
        None => error,
    }
}

/// The largest venue clock offset `sync_time` takes, either way: 24 h. A real clock error is
/// seconds or minutes; a day is already far beyond any, and an answer beyond it (a Unix time of
/// 1000, year 9999) is broken.
const MAX_CLOCK_OFFSET_MS: i64 = 24 * 3600 * 1000;

impl Client {
    /// Validate (generating a `cl_ord_id` when there is none), check the symbol rules when
    /// they are on, serialise once, pace, sign those bytes, POST `/api/new_order`, all within
    /// one `total_timeout_ms`. The answer carries the `cl_ord_id`; so does any error after
    /// the order was validated. Never retried.
    pub fn new_order(&self, session: &Session, order_json: &str) -> Result<String> {
        guarded(session, None, |secrets| self.send_order(session, order_json, secrets))
    }

    fn send_order(&self, session: &Session, order_json: &str, secrets: &CallSecrets<'_>) -> Result<String> {
        let (token, account) = session.usable_credentials(self.venue_now_ms().div_euclid(1000))?;
        let (body, cl_ord_id) =
            order::validate_with_id(order_json, || crate::cl_ord_id::generate(&self.cl_ord_id_prefix))?;
        let outcome = self.check_symbol_rules(&body).and_then(|deadline| {
            let account = Account { session, token: &token, account: &account };
            let outgoing = Outgoing {
                method: Method::POST,
                target: "/api/new_order",
                body: Some(body.as_str().as_bytes()),
                account: Some(account),
                secrets,
                not_found: false,
                deadline,
                larger_answer: None,
            };
            let exchanged = self.exchange(&outgoing)?;
            order_answer(&exchanged, &cl_ord_id)
        });
        outcome.map_err(|error| {
            if let Some(symbols) = &self.symbols
                && matches!(error.code(), Code::HttpStatus | Code::ApiError)
                && (is_rules_error(error.message()) || error.body().is_some_and(is_rules_error))
            {
                symbols.mark_stale();
            }
            error.with_cl_ord_id(cl_ord_id.clone())
        })
    }

    /// Any other venue endpoint under `perps_url`: bearer always; body signature whenever
    /// there is a body (sent byte for byte as given). Never retried.
    pub fn request(&self, session: &Session, method: &str, path: &str, body: Option<&str>) -> Result<String> {
        guarded(session, None, |secrets| self.send_request(session, method, path, body, secrets))
    }

    fn send_request(
        &self,
        session: &Session,
        method: &str,
        path: &str,
        body: Option<&str>,
        secrets: &CallSecrets<'_>,
    ) -> Result<String> {
        let method = parse_method(method)?;
        // Visible ASCII only: anything else is not a valid request target, and would be
        // refused by the venue only after the request was sent.
        if !path.starts_with('/') || !path.bytes().all(|b| b.is_ascii_graphic()) || path.contains('#') {
            return Err(Error::invalid_argument(format!(
                "path \"{}\" must start with '/' and contain no spaces, control or non-ASCII characters \
                 (percent-encode them) or '#' (e.g. \"/api/query_open_orders\")",
                excerpt(path)
            )));
        }
        let (token, account) = session.usable_credentials(self.venue_now_ms().div_euclid(1000))?;
        // An empty body is none. Written so that no length of an absent body is read: the
        // `filter` form compiled to a select on that (undefined) length, which valgrind
        // reports in the C examples as a branch on uninitialised memory.
        let body = body.map(str::as_bytes).unwrap_or_default();
        let body = (!body.is_empty()).then_some(body);
        let account = Account { session, token: &token, account: &account };
        let read = method == Method::GET;
        // An order sent this way fails as `new_order` does: with the `cl_ord_id` it names, so
        // the caller can look the order up before sending it again.
        let cl_ord_id = is_new_order(&method, path).then(|| body.and_then(named_cl_ord_id)).flatten();
        let outgoing = Outgoing {
            method,
            target: path,
            body,
            account: Some(account),
            secrets,
            not_found: false,
            deadline: None,
            larger_answer: None,
        };
        let sent_id = cl_ord_id.as_deref();
        let result = self.exchange(&outgoing).and_then(|exchanged| venue_result(&exchanged, path, read, sent_id));
        result.map_err(|error| match cl_ord_id {
            Some(id) => error.with_cl_ord_id(id),
            None => error,
        })
    }

    /// Send one request: pace it (option `rate_limit`: the host's per-IP limit, and the
    /// account's bucket for account requests; a venue 429 pauses both), sign its body, add
    /// the bearer and the session's headers (`x-session-id` on order entry only:
    /// [`is_order_entry`]), send it once within what is left of the call's time, and require
    /// a 2xx answer. Errors after request bytes left carry the `x-request-id`.
    pub(super) fn exchange<'a>(&self, outgoing: &Outgoing<'a>) -> Result<Exchanged<'a>> {
        let account = outgoing.account.as_ref().map(|account| account.account);
        let paced = self.pace(self.perps_host, account, outgoing.target, outgoing.deadline)?;
        let path = outgoing.target.split('?').next().unwrap_or(outgoing.target);
        let mut headers: Vec<(&str, &str)> = Vec::with_capacity(9);
        let bearer;
        let options: RequestOptions;
        let mut signature: Option<BodySignature> = None;
        if let Some(account) = &outgoing.account {
            bearer = zeroize::Zeroizing::new(format!("Bearer {}", account.token));
            headers.push(("authorization", bearer.as_str()));
            if let Some(bytes) = outgoing.body {
                signature = Some(account.session.sign_body_now(bytes, self.venue_now_ms())?);
            }
            options = account.session.request_options();
        } else {
            options = RequestOptions::default();
        }
        if let Some(sig) = &signature {
            headers.push(("content-type", "application/json"));
            headers.extend(sig.headers());
        } else if outgoing.body.is_some() {
            headers.push(("content-type", "application/json"));
        }
        if let Some(id) = &options.session_id
            && is_order_entry(&outgoing.method, path)
        {
            headers.push(("x-session-id", id));
        }
        if let Some(vault) = &options.impersonate {
            headers.push(("x-impersonate", vault));
        }
        let url = format!("{}{}", self.perps_url, outgoing.target);
        let pace_again = |left| self.pace_again(self.perps_host, account, outgoing.target, left);
        let bounds = Bounds { total: paced.time_left, larger_answer: outgoing.larger_answer };
        let reply = self
            .transport
            .send_within(outgoing.method.clone(), &url, &headers, outgoing.body, bounds, &pace_again)
            .map_err(|e| if sent_tracker::request_bytes_sent() { with_request_id(e, signature.as_ref()) } else { e })?;
        self.pause_on_429(&paced.limits, &reply);
        // The venue's "order not found" only (`order_not_found`): an engine takes NOT_FOUND
        // for "gone".
        let not_found = outgoing.not_found && super::order_not_found::says_order_not_found(&reply);
        let reply = require_2xx(reply, path, outgoing.secrets, self.venue_now_ms()).map_err(|e| {
            let e = if not_found { e.with_code(Code::NotFound) } else { e };
            with_request_id(e, signature.as_ref())
        })?;
        Ok(Exchanged { reply, signature, secrets: outgoing.secrets, limits: paced.limits })
    }

    /// Read the venue's clock (`GET /api/kline/time`, Unix seconds) and keep the offset
    /// applied to every later `x-request-timestamp`. Returns the offset in milliseconds. An
    /// offset of more than 24 h either way is refused and the one in use kept.
    pub fn sync_time(&self) -> Result<i64> {
        let started = crate::body_sign::now_ms();
        let reply =
            self.send(self.perps_host, Method::GET, &format!("{}/api/kline/time", self.perps_url), &[], None)?;
        let finished = crate::body_sign::now_ms();
        let reply = require_2xx(reply, "kline/time", &CallSecrets::none(), self.venue_now_ms())?;
        let venue_ms = super::venue_time::millis(&reply.body).map_err(|why| {
            Error::bad_response(format!("kline/time: {why}")).with_status(reply.status).with_body(reply.body.clone())
        })?;
        // The venue's clock was read somewhere during the round trip: its middle is the best
        // estimate.
        let offset = venue_ms - (started + finished) / 2;
        if offset.abs() > MAX_CLOCK_OFFSET_MS {
            // Taken, it would move every request's timestamp and every challenge's and token's
            // expiry check by as much: sign-in and orders would fail for reasons they do not
            // have ("token expired", "challenge expired", the venue's timestamp window).
            let kept = self.clock_offset_ms();
            return Err(Error::bad_response(format!(
                "kline/time: the venue's clock is {} s {} this machine's, more than the {} s (24 h) a clock \
                 may be off: a broken answer (or local clock), not used; the offset in use ({kept} ms) is kept",
                offset.unsigned_abs() / 1000,
                if offset > 0 { "ahead of" } else { "behind" },
                MAX_CLOCK_OFFSET_MS / 1000,
            ))
            .with_status(reply.status)
            .with_body(reply.body.clone()));
        }
        self.clock_offset_ms.store(offset, std::sync::atomic::Ordering::Relaxed);
        Ok(offset)
    }
}

/// A 2xx answer to `perps_request`, returned as the venue sent it. A JSON object's `code`,
/// when present, must be a success (judged by `endpoints::answer::refusal_code`); a change's
/// answer, object or array, is judged in full (`endpoints::change_answer`), and an order's
/// must not name a `cl_ord_id` other than the one its body names (`cl_ord_id`, as
/// [`order_answer`]). Any other JSON is the venue's answer as it is: several endpoints answer
/// an array (funding history, recent trades, funding rates, `cancel_orders`' `[]`;
/// venue-api.md §1.3–1.5), and `perps_request` is the only way to some of them. Plain text
/// (`/api/health` answers `OK`) and bare numbers (`/api/kline/time`) are returned for a GET
/// only, and never a web page (a wrong URL's): a POST, PUT or DELETE answered with neither an
/// object nor an array (no JSON, `null`, `false`, `"rate limited"`) leaves its effect
/// unknown, so it is `PERPS_BAD_RESPONSE` that may have reached the venue.
fn venue_result(exchanged: &Exchanged, what: &str, read: bool, cl_ord_id: Option<&str>) -> Result<String> {
    let reply = &exchanged.reply;
    let text = reply.body.trim_start();
    if text.starts_with('{') {
        let answer = check_code(exchanged, what, if read { Answering::Read } else { Answering::Change })?;
        if let Some(sent) = cl_ord_id {
            names_the_cl_ord_id_sent(exchanged, &answer, sent, what)?;
        }
        return Ok(reply.body.clone());
    }
    if !read
        && text.starts_with('[')
        && let Ok(answer) = serde_json::from_str::<serde_json::Value>(&reply.body)
        && let Err(refusal) = crate::endpoints::change_answer::judge(&answer, &reply.body)
    {
        return Err(exchanged.refusal(what, refusal, false));
    }
    let json = serde_json::from_str::<serde::de::IgnoredAny>(&reply.body).is_ok();
    let refused = match (read, json) {
        (true, false) if is_web_server_page(reply) => Some("the venue's answer is not JSON"),
        (false, false) => Some("the venue's answer is not JSON"),
        (false, true) if !text.starts_with('[') => Some("the venue's answer is neither a JSON object nor an array"),
        _ => None,
    };
    if let Some(why) = refused {
        let error = Error::bad_response(format!("{what}: {why}"))
            .with_status(reply.status)
            .with_body(exchanged.secrets.redact(&reply.body).into_owned());
        return Err(exchanged.refused(error.reached_venue(true)));
    }
    Ok(reply.body.clone())
}

/// The order's answer, with its `cl_ord_id` added when the venue's object lacks one
/// (`{"code":0,"message":"success","request_id":…,"cl_ord_id":…}`); the venue's text
/// unchanged when it names the one sent. An answer naming another (`null`, `""`, an id of
/// the venue's, two of them) contradicts the order's identity: the caller would look the
/// order up, or cancel it, by an id it was not sent with. Its outcome is unknown:
/// `PERPS_BAD_RESPONSE`, which may have reached the venue, carrying the id sent (and the
/// venue's body), so the order is looked up by both before anything is sent again.
fn order_answer(exchanged: &Exchanged, cl_ord_id: &str) -> Result<String> {
    let answer = check_code(exchanged, "new_order", Answering::Change)?;
    let body = &exchanged.reply.body;
    if names_the_cl_ord_id_sent(exchanged, &answer, cl_ord_id, "new_order")? {
        return Ok(body.clone());
    }
    let trimmed = body.trim_end();
    let head = trimmed.strip_suffix('}').expect("a JSON object ends with '}'");
    let quoted = serde_json::to_string(cl_ord_id).expect("a string serialises");
    let separator = if answer.is_empty() { "" } else { "," };
    Ok(format!("{head}{separator}\"cl_ord_id\":{quoted}}}"))
}

/// Whether an order's answer names its `cl_ord_id`: `Ok(false)` when it names none, `Ok(true)`
/// when it names the one sent, once; an answer naming another (or it twice) is
/// `PERPS_BAD_RESPONSE` that may have reached the venue (see [`order_answer`]).
fn names_the_cl_ord_id_sent(
    exchanged: &Exchanged,
    answer: &serde_json::Map<String, serde_json::Value>,
    sent: &str,
    what: &str,
) -> Result<bool> {
    let Some(named) = answer.get("cl_ord_id") else { return Ok(false) };
    let twice = answer::key_named_twice(&exchanged.reply.body, &["cl_ord_id"]).is_some();
    if named.as_str() == Some(sent) && !twice {
        return Ok(true);
    }
    let named = match named {
        serde_json::Value::String(id) => format!("\"{}\"", venue_words(id)),
        other => venue_words(&other.to_string()),
    };
    let why = if twice { "names a cl_ord_id twice" } else { "names a cl_ord_id other than the one sent" };
    let error = Error::bad_response(format!(
        "{what}: the venue's answer {why} ({named}; sent {sent}): its outcome is unknown; look the order up by \
         both before sending it again"
    ));
    Err(exchanged.refused(error.reached_venue(true)))
}

/// Parse the answer as a JSON object and check its `code` (a change's answer is judged in
/// full: `endpoints::change_answer`).
fn check_code(
    exchanged: &Exchanged,
    what: &str,
    answering: Answering,
) -> Result<serde_json::Map<String, serde_json::Value>> {
    let answer =
        json_object(&exchanged.reply, what, exchanged.secrets).map_err(|e| exchanged.refused(e.reached_venue(true)))?;
    if let Some(key) = crate::endpoints::answer::outcome_named_twice(&exchanged.reply.body) {
        let error = Error::bad_response(format!("{what}: {}", crate::endpoints::answer::named_twice_message(key)));
        return Err(exchanged.refused(error.reached_venue(true)));
    }
    let stated = match answering {
        Answering::Read => answer::stated(answer.get("code"), answer.get("success"), answer::words(&answer)),
        Answering::Change => crate::endpoints::change_answer::judge_object(&answer, Some(&exchanged.reply.body)),
    };
    match stated {
        Ok(()) => Ok(answer),
        Err(refusal) => Err(exchanged.refusal(what, refusal, false)),
    }
}

/// The order-entry requests: the POSTs of `new_order`, `cancel_order` and `cancel_orders`
/// (paths under `perps_url`, without the query), from the endpoint calls or `perps_request`
/// alike.
const ORDER_ENTRY: [&str; 3] = ["/api/new_order", "/api/cancel_order", "/api/cancel_orders"];

/// Whether a request carries the session's `x-session-id`: only order entry does. The venue
/// pushes the result of a request with it to the ws-api connection of that session id
/// (`venue-api.md` §2.4: put it on REST `new_order`/`cancel_order`); on a read, its result
/// would arrive there too, matching no order of the stream (a live client keeps it off
/// reads for that reason).
fn is_order_entry(method: &Method, path: &str) -> bool {
    *method == Method::POST && ORDER_ENTRY.contains(&path)
}

/// Whether `perps_request` is placing an order: a POST to `/api/new_order` (query aside).
fn is_new_order(method: &Method, target: &str) -> bool {
    *method == Method::POST && target.split('?').next() == Some("/api/new_order")
}

/// The `cl_ord_id` a caller's order body names: its top-level `cl_ord_id` string, only when
/// the body is one JSON object that names it once (of two, the venue's reader may keep
/// either). The body itself is sent as given; none is invented for it.
fn named_cl_ord_id(body: &[u8]) -> Option<String> {
    let entries = crate::json_entries::parse(std::str::from_utf8(body).ok()?).ok()?;
    entries.into_iter().find(|(key, _)| key == "cl_ord_id").and_then(|(_, value)| match value {
        serde_json::Value::String(id) => Some(id),
        _ => None,
    })
}

fn parse_method(method: &str) -> Result<Method> {
    match method {
        "GET" => Ok(Method::GET),
        "POST" => Ok(Method::POST),
        "PUT" => Ok(Method::PUT),
        "DELETE" => Ok(Method::DELETE),
        other => {
            Err(Error::invalid_argument(format!("method \"{}\" is not one of GET, POST, PUT, DELETE", excerpt(other))))
        }
    }
}
