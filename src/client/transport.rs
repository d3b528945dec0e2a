//! The HTTP transport: one ureq `Agent` (keep-alive pool, TCP_NODELAY, no redirects,
//! rustls) and the one place where transport failures become library errors.
//!
//! `may_have_reached_venue` is decided here, from a fact rather than a guess: whether any
//! request bytes were written (see `sent_tracker`). Before that (DNS, refused connection,
//! TLS handshake, connect timeout) the venue cannot have seen the request; after it, the
//! venue may have read the whole request and acted on it.

use crate::client::deadline_tcp::DeadlineTcp;
use crate::client::options::ClientOptions;
use crate::client::resolve::{LookupFailed, RememberingResolver};
use crate::client::sent_tracker::{self, SentTracking};
use crate::client::write_coalescing::WriteCoalescing;
use crate::error::{Code, Error, Result};
use crate::name_lookup::{self, Lookup};
use std::time::Duration;
use ureq::http::header::{self, HeaderName};
use ureq::http::{Method, Request};
use ureq::tls::{Certificate, RootCerts, TlsConfig};
use ureq::unversioned::transport::{Connector, RustlsConnector};
use ureq::{Agent, Timeout};

/// A venue answer: status and body (UTF-8, within the size cap).
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
    /// The `Retry-After` header of a non-2xx answer, when present.
    pub retry_after: Option<String>,
    /// The `Content-Type` header of a non-2xx answer, when present (an HTML page is not the
    /// venue's answer: `answers::is_web_server_page`).
    pub content_type: Option<String>,
}

/// How far one exchange may go: `total`, a shorter whole-exchange limit than the client's
/// `total_timeout_ms` (what is left of a call's time after pacing waited or the symbol rules
/// were read; `None`: all of it); `larger_answer`, a larger bound than `max_response_bytes`
/// for this one answer (the larger of the two applies; `None`: the client's).
#[derive(Clone, Copy, Debug, Default)]
pub struct Bounds {
    pub total: Option<Duration>,
    pub larger_answer: Option<u64>,
}

pub struct Transport {
    agent: Agent,
    max_response_bytes: u64,
    limits: Limits,
}

impl Transport {
    pub fn new(options: &ClientOptions) -> Result<Transport> {
        Transport::with_lookup(options, name_lookup::system)
    }

    /// As `new`, with the venue's host looked up by `lookup` (a test's: no real DNS).
    fn with_lookup(options: &ClientOptions, lookup: Lookup) -> Result<Transport> {
        let mut tls = TlsConfig::builder();
        if let Some(path) = &options.ca_bundle_path {
            tls = tls.root_certs(RootCerts::new_with_certs(&load_pem_bundle(path)?));
        }
        let config = Agent::config_builder()
            // Never a proxy from the environment (HTTP_PROXY, ALL_PROXY…): a bearer token sent
            // to plain-http loopback must not be forwarded to some other host.
            .proxy(None)
            .http_status_as_error(false)
            .max_redirects(0)
            .max_redirects_will_error(false)
            .no_delay(true)
            .user_agent(options.user_agent.as_str())
            // The venue's host name lookup, then the TCP + TLS set-up: each within
            // connect_timeout_ms (a lookup bounded only by the total would take all of it, and
            // a time-out would name the wrong option).
            .timeout_resolve(Some(options.connect_timeout))
            .timeout_connect(Some(options.connect_timeout))
            .timeout_per_read(Some(options.read_timeout))
            // A write that makes no progress for as long is a stalled venue too. It also keeps
            // the socket's send timeout the same from one request to the next: with only the
            // total limit, ureq would re-arm it (a `setsockopt`) with the time left before
            // every write. The total limit still caps every write.
            .timeout_per_write(Some(options.read_timeout))
            .timeout_global(Some(options.total_timeout))
            .tls_config(tls.build())
            .build();
        // Our own TCP link (every wait bounded by the call's deadline), rustls, then the two
        // links that see the plain request bytes. No proxy connectors: proxies are off.
        let connector =
            ().chain(DeadlineTcp).chain(RustlsConnector::default()).chain(SentTracking).chain(WriteCoalescing);
        let agent = Agent::with_parts(config, connector, RememberingResolver::new(lookup));
        let limits =
            Limits { connect: options.connect_timeout, read: options.read_timeout, total: options.total_timeout };
        Ok(Transport { agent, max_response_bytes: options.max_response_bytes, limits })
    }

    /// Send one request, once, within `bounds`. `body` is sent byte for byte when present.
    ///
    /// One exception to "once": a GET that went out on a kept-alive connection from the pool
    /// and found it closed or reset before any byte of an answer — the venue closed it as the
    /// request was written, the race of HTTP keep-alive — is sent again once, on another
    /// connection (the pool drops the closed one), within the same time. A GET only reads,
    /// so reading twice changes nothing at the venue; an order or a cancel is never sent
    /// again (its error says it may have reached the venue). That second send is a request
    /// like any other to the venue's limits: `pace_again(left)`, given the time left, paces it
    /// (the caller's pacing: the host's per-IP limit, the account's bucket) and returns the
    /// time the exchange may take, or `None` when pacing has no room for it within that time
    /// — then nothing more is sent, and the first failure is the call's.
    pub fn send_within(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        bounds: Bounds,
        pace_again: &dyn Fn(Duration) -> Option<Duration>,
    ) -> Result<Reply> {
        let Bounds { total, larger_answer } = bounds;
        let max_response_bytes = larger_answer.map_or(self.max_response_bytes, |n| n.max(self.max_response_bytes));
        let started = std::time::Instant::now();
        let may_read_again = method == Method::GET;
        let first = self.exchange_once(method.clone(), url, headers, body, total);
        let response = match first {
            Err(e)
                if may_read_again
                    && e.is_closed_by_peer()
                    && sent_tracker::failed_on_a_pooled_connection_unanswered() =>
            {
                let left = total.unwrap_or(self.limits.total).saturating_sub(started.elapsed());
                let Some(left) = Some(left).filter(|left| !left.is_zero()).and_then(pace_again) else {
                    return Err(e.mapped(&self.limits));
                };
                self.exchange_once(method, url, headers, body, Some(left))
            }
            other => other,
        };
        let mut response = response.map_err(|e| e.mapped(&self.limits))?;
        let status = response.status().as_u16();
        let success = (200..300).contains(&status);
        let non_2xx_header = |name: header::HeaderName| {
            if success {
                return None;
            }
            response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
        };
        let (retry_after, content_type) = (non_2xx_header(header::RETRY_AFTER), non_2xx_header(header::CONTENT_TYPE));
        // A non-2xx answer keeps its status, and so its documented mapping, even when its body
        // is too large (the body is dropped) or not UTF-8 (decoded lossily).
        let expected = response.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse().ok());
        let reader = response.body_mut().with_config().limit(max_response_bytes).reader();
        let bytes = match read_wiping(reader, expected, max_response_bytes) {
            Ok(bytes) => bytes,
            Err(ureq::Error::BodyExceedsLimit(_)) if !success => Vec::new(),
            Err(ureq::Error::BodyExceedsLimit(limit)) => {
                let bound = if larger_answer.is_some_and(|n| n > self.max_response_bytes) {
                    "the bound for this answer"
                } else {
                    "max_response_bytes"
                };
                return Err(Error::bad_response(format!(
                    "the venue's answer (HTTP {status}) is larger than {bound} ({limit})"
                ))
                .with_status(status)
                .reached_venue(true));
            }
            Err(other) => return Err(map_error(other, &self.limits).with_status(status)),
        };
        // Every copy of the answer but the one returned is wiped (it may hold a token).
        let body = match String::from_utf8(bytes) {
            // A UTF-8 byte-order mark is no part of the JSON text (RFC 8259 §8.1 lets a reader
            // ignore it); kept, it would make every answer unreadable to us and to the caller.
            // Taken out in place.
            Ok(mut body) if body.starts_with('\u{feff}') => {
                body.replace_range(..'\u{feff}'.len_utf8(), "");
                body
            }
            Ok(body) => body,
            Err(e) if !success => {
                let mut bytes = e.into_bytes();
                let body = String::from_utf8_lossy(&bytes).into_owned();
                crate::wipe::wipe(&mut bytes);
                body
            }
            Err(e) => {
                crate::wipe::wipe(&mut e.into_bytes());
                return Err(Error::bad_response(format!("the venue's answer (HTTP {status}) is not UTF-8"))
                    .with_status(status)
                    .reached_venue(true));
            }
        };
        Ok(Reply { status, body, retry_after, content_type })
    }

    /// Build and run one exchange (its errors as ureq gives them, for `send_within` to judge
    /// and map).
    fn exchange_once(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        total: Option<std::time::Duration>,
    ) -> std::result::Result<ureq::http::Response<ureq::Body>, ExchangeError> {
        let mut builder = Request::builder().method(method).uri(url);
        for (name, value) in headers {
            builder = builder.header(header_name(name).map_err(ExchangeError::Ours)?, *value);
        }
        sent_tracker::reset();
        let outcome = match body {
            Some(bytes) => builder.body(bytes).map(|r| self.run(r, total)),
            None => builder.body(()).map(|r| self.run(r, total)),
        };
        match outcome {
            Ok(result) => result.map_err(ExchangeError::Ureq),
            Err(e) => Err(ExchangeError::Ours(bad_request(e))),
        }
    }

    fn run<S: ureq::AsSendBody>(
        &self,
        request: Request<S>,
        total: Option<std::time::Duration>,
    ) -> std::result::Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        match total {
            None => self.agent.run(request),
            Some(total) => self.agent.run(self.agent.configure_request(request).timeout_global(Some(total)).build()),
        }
    }
}

/// The whole body from `reader` (ureq's, which stops it at `limit` bytes with
/// `BodyExceedsLimit`), into one block that grows by copying into a new one twice its size and
/// wiping the old: a `Vec` grown by `read_to_end` frees each outgrown block with the answer's
/// bytes in it, and an answer may hold a token (the login's). The first block is the size the
/// answer announced (`Content-Length`, within `limit`, at most 1 MiB until that much came),
/// and one byte more, to see its end without growing. The bytes past the answer are zeros.
fn read_wiping(
    mut reader: impl std::io::Read,
    expected: Option<u64>,
    limit: u64,
) -> std::result::Result<Vec<u8>, ureq::Error> {
    const FIRST_UNKNOWN: usize = 1024;
    const FIRST_MOST: u64 = 1 << 20;
    let first = expected.map_or(FIRST_UNKNOWN, |n| (n.min(limit).min(FIRST_MOST) + 1) as usize);
    let mut block = vec![0u8; first];
    let mut filled = 0;
    loop {
        if filled == block.len() {
            let mut bigger = vec![0u8; block.len() * 2];
            bigger[..filled].copy_from_slice(&block);
            crate::wipe::wipe(&mut block);
            block = bigger;
        }
        match reader.read(&mut block[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                crate::wipe::wipe(&mut block);
                return Err(ureq::Error::from(e));
            }
        }
    }
    block.truncate(filled);
    Ok(block)
}

/// Why one exchange failed: a request we could not build, or ureq's failure (mapped into our
/// words by `map_error` once `send_within` has decided whether to read again).
enum ExchangeError {
    Ours(Error),
    Ureq(ureq::Error),
}

impl ExchangeError {
    /// The venue closed or reset the connection (nothing else: not a timeout, not TLS).
    fn is_closed_by_peer(&self) -> bool {
        use std::io::ErrorKind::*;
        matches!(self, ExchangeError::Ureq(ureq::Error::Io(io))
            if matches!(io.kind(), ConnectionReset | ConnectionAborted | UnexpectedEof | BrokenPipe))
    }

    fn mapped(self, limits: &Limits) -> Error {
        match self {
            ExchangeError::Ours(error) => error,
            ExchangeError::Ureq(error) => map_error(error, limits),
        }
    }
}

/// The name of a header the library sends. Each is made at compile time: a name given as
/// text is parsed by the http crate on every request (`HdrName::from_bytes`), whose scratch
/// buffer valgrind's memcheck reports, in some builds, as a jump on uninitialised memory —
/// noise in every C program run under valgrind with this library. Other names (none today)
/// are parsed as before.
fn header_name(name: &str) -> Result<HeaderName> {
    const X_REQUEST_SIGN_VERSION: HeaderName = HeaderName::from_static("x-request-sign-version");
    const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
    const X_REQUEST_TIMESTAMP: HeaderName = HeaderName::from_static("x-request-timestamp");
    const X_REQUEST_SIGNATURE: HeaderName = HeaderName::from_static("x-request-signature");
    const X_SESSION_ID: HeaderName = HeaderName::from_static("x-session-id");
    const X_IMPERSONATE: HeaderName = HeaderName::from_static("x-impersonate");
    Ok(match name {
        "authorization" => header::AUTHORIZATION,
        "content-type" => header::CONTENT_TYPE,
        "x-request-sign-version" => X_REQUEST_SIGN_VERSION,
        "x-request-id" => X_REQUEST_ID,
        "x-request-timestamp" => X_REQUEST_TIMESTAMP,
        "x-request-signature" => X_REQUEST_SIGNATURE,
        "x-session-id" => X_SESSION_ID,
        "x-impersonate" => X_IMPERSONATE,
        other => HeaderName::from_bytes(other.as_bytes()).map_err(|_| {
            Error::invalid_argument(format!("\"{}\" is not a header name", crate::error::excerpt(other)))
        })?,
    })
}

fn bad_request(e: ureq::http::Error) -> Error {
    Error::invalid_argument(format!("the request cannot be built (bad URL or header value): {e}"))
}

/// The client's time limits, named in the messages of the failures they cause.
#[derive(Clone, Copy, Debug)]
struct Limits {
    connect: Duration,
    read: Duration,
    total: Duration,
}

/// Turn a ureq failure into our error. Whether the venue may have seen the request is
/// whether request bytes were written on this thread during this call. The texts are ours,
/// in words a caller can act on (the option to raise, what the venue did), never the names
/// of ureq's or rustls's types.
fn map_error(e: ureq::Error, limits: &Limits) -> Error {
    let sent = sent_tracker::request_bytes_sent();
    let ms = |d: Duration| d.as_millis();
    let (code, what) = match &e {
        ureq::Error::Timeout(reason) => (
            Code::Timeout,
            match reason {
                Timeout::Resolve => {
                    format!(
                        "resolving the venue's host took longer than connect_timeout_ms ({} ms)",
                        ms(limits.connect)
                    )
                }
                Timeout::Connect => {
                    format!("connecting took longer than connect_timeout_ms ({} ms)", ms(limits.connect))
                }
                Timeout::PerRead => format!("the venue sent nothing for read_timeout_ms ({} ms)", ms(limits.read)),
                Timeout::PerWrite => {
                    format!("the venue accepted no data for read_timeout_ms ({} ms)", ms(limits.read))
                }
                _ => format!("the call took longer than total_timeout_ms ({} ms)", ms(limits.total)),
            },
        ),
        ureq::Error::HostNotFound => (Code::Transport, "the venue's host name could not be resolved".to_owned()),
        // A failed TLS handshake comes out of rustls's `complete_io` as an I/O error that
        // carries the rustls error: it is a TLS failure, and says so in our words.
        // A failed lookup (`resolve.rs`) names the host and says why, in its own words.
        ureq::Error::Io(io) if io.get_ref().is_some_and(|inner| inner.is::<LookupFailed>()) => {
            (Code::Transport, io.get_ref().map(ToString::to_string).unwrap_or_default())
        }
        ureq::Error::Io(io) => match io.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
            Some(tls) => (Code::Transport, tls_failure(&format!("{tls:?}"), sent)),
            None => (Code::Transport, io_failure(io)),
        },
        ureq::Error::Protocol(_) | ureq::Error::LargeResponseHeader(..) => {
            (Code::Transport, "the venue's answer is not valid HTTP/1.1".to_owned())
        }
        ureq::Error::Rustls(tls) => (Code::Transport, tls_failure(&format!("{tls:?}"), sent)),
        ureq::Error::Tls(_) | ureq::Error::Pem(_) | ureq::Error::TlsRequired => {
            (Code::Transport, tls_failure(&e.to_string(), sent))
        }
        ureq::Error::BadUri(_) => return Error::invalid_argument("the request URL is not valid"),
        ureq::Error::BodyStalled => (Code::Transport, "the venue's answer stopped arriving".to_owned()),
        other => (Code::Transport, format!("the HTTP exchange failed ({other})")),
    };
    if sent {
        Error::new(code, format!("{what} after the request was sent; the venue may have received it"))
            .reached_venue(true)
    } else {
        Error::new(code, format!("could not reach the venue ({what}): request not sent"))
    }
}

fn io_failure(e: &std::io::Error) -> String {
    use std::io::ErrorKind::*;
    match e.kind() {
        ConnectionRefused => "the connection was refused".to_owned(),
        ConnectionReset => "the venue reset the connection".to_owned(),
        ConnectionAborted | UnexpectedEof | BrokenPipe => "the venue closed the connection".to_owned(),
        HostUnreachable | NetworkUnreachable => "the venue's host is unreachable".to_owned(),
        AddrNotAvailable => "no local address can reach the venue".to_owned(),
        _ => format!("a network error: {e}"),
    }
}

/// rustls reports certificate problems with its type names (`UnknownIssuer`; `text` is the
/// error's `Debug` form, which names the variant): say what they mean and what to do.
/// `sent`: the handshake was over (request bytes went out), so a failure is the session's.
fn tls_failure(text: &str, sent: bool) -> String {
    let meaning = if text.contains("UnknownIssuer") || text.contains("UnknownCA") {
        "the venue's certificate is not issued by a trusted authority (a private CA goes in ca_bundle_path)"
    } else if text.contains("NotValidForName") {
        "the venue's certificate is not valid for this host name"
    } else if text.contains("Expired") {
        "the venue's certificate has expired"
    } else if text.contains("NotValidYet") {
        "the venue's certificate is not valid yet (check the clock)"
    } else if text.contains("Revoked") {
        "the venue's certificate is revoked"
    } else if text.contains("InvalidCertificate") || text.contains("certificate") {
        "the venue's certificate was refused"
    } else if sent {
        "the venue's TLS data was not valid"
    } else {
        "the TLS handshake failed"
    };
    format!("TLS failure: {meaning}")
}

fn load_pem_bundle(path: &str) -> Result<Vec<Certificate<'static>>> {
    let pem = std::fs::read(path)
        .map_err(|e| Error::invalid_argument(format!("ca_bundle_path {path:?} cannot be read: {e}")))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(cert)) => certs.push(cert),
            Ok(_) => {}
            Err(_) => return Err(Error::invalid_argument(format!("ca_bundle_path {path:?} is not valid PEM"))),
        }
    }
    if certs.is_empty() {
        return Err(Error::invalid_argument(format!("ca_bundle_path {path:?} holds no certificate")));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;
    use std::sync::{Condvar, Mutex};

    /// A name server that does not answer (for a minute at most: a failed test leaves no
    /// thread behind for long).
    fn silent(_: &str, _: u16) -> std::io::Result<Vec<SocketAddr>> {
        static NEVER: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());
        let _ = NEVER.1.wait_timeout(NEVER.0.lock().unwrap(), Duration::from_secs(60));
        Err(std::io::Error::other("no answer"))
    }

    #[test]
    fn a_lookup_is_bounded_by_connect_timeout_ms_and_its_time_out_says_so() {
        let options = ClientOptions {
            connect_timeout: Duration::from_millis(200),
            total_timeout: Duration::from_secs(5),
            ..ClientOptions::default()
        };
        let transport = Transport::with_lookup(&options, silent).unwrap();
        let error = transport
            .send_within(Method::GET, "https://venue.test/api/query_order", &[], None, Bounds::default(), &|_| None)
            .unwrap_err();
        assert_eq!(error.code(), Code::Timeout, "{error}");
        assert!(
            error.message().contains("resolving the venue's host took longer than connect_timeout_ms (200 ms)"),
            "{error}"
        );
        assert!(error.message().ends_with("request not sent"), "{error}");
        assert!(!error.may_have_reached_venue());
    }

    fn no_such_name(_: &str, _: u16) -> std::io::Result<Vec<SocketAddr>> {
        // As glibc's getaddrinfo fails through std (EAI_NONAME).
        Err(std::io::Error::other("failed to lookup address information: Name or service not known"))
    }

    #[test]
    fn a_failed_lookup_says_which_host_and_why() {
        let transport = Transport::with_lookup(&ClientOptions::default(), no_such_name).unwrap();
        let error = transport
            .send_within(Method::GET, "https://venue.test/api/query_order", &[], None, Bounds::default(), &|_| None)
            .unwrap_err();
        assert_eq!(error.code(), Code::Transport, "{error}");
        assert_eq!(
            error.message(),
            "could not reach the venue (the venue's host \"venue.test\" could not be resolved: failed to lookup \
             address information: Name or service not known): request not sent"
        );
        assert!(!error.may_have_reached_venue());
    }
}
