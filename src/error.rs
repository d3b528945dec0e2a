//! The one error type of the core, with stable numbered codes.
//!
//! Every fallible core function returns [`Error`]. The C layer hands the same value to the
//! caller as a `perps_error` object, so the code, message, HTTP status, venue body and the
//! "may have reached the venue" flag survive the boundary unchanged.

use std::fmt;

/// Stable error codes. The numbers are part of the ABI: never renumber, never reuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    /// An argument is missing, NULL, not UTF-8, or malformed.
    InvalidArgument = 1,
    /// A private key could not be parsed or does not match itself.
    InvalidKey = 2,
    /// The order is invalid (field missing, wrong type, unknown field, bad value).
    InvalidOrder = 3,
    /// A signature or the claims of a sign-in challenge did not verify.
    VerificationFailed = 4,
    /// The call is not allowed in the session's current state (e.g. login before prepare).
    InvalidState = 5,
    /// The connection failed (refused, DNS, TLS, reset).
    Transport = 6,
    /// A time limit was reached.
    Timeout = 7,
    /// The venue answered with a non-2xx HTTP status.
    HttpStatus = 8,
    /// The venue answered 2xx but said no (`success: false`, a `code` other than 0 or 200).
    ApiError = 9,
    /// The venue's answer could not be understood (not JSON, wrong shape, too large).
    BadResponse = 10,
    /// The session's access token has expired; sign in again.
    TokenExpired = 11,
    /// The operating system's random number generator failed.
    Rng = 12,
    /// The venue's HTTP 404 from one of the endpoint calls (e.g. "order not found": already
    /// gone, or not visible yet); an HTML 404 page is not the venue's and stays `HttpStatus`.
    NotFound = 13,
    /// Refused locally by the client's rate limiter; nothing was sent.
    RateLimited = 14,
    /// The stream was closed (`perps_stream_close`), or has ended (or is ending) for good:
    /// `next` gives the events of its end (`disconnected`, `failed`) before this.
    StreamClosed = 15,
    /// A new WebSocket connection would break the venue's connection limits (10 open per
    /// IP, 30 new per minute; counted in this process); nothing was sent.
    StreamLimit = 16,
    /// A bug: a panic was caught at the C boundary.
    Panic = 99,
}

impl Code {
    /// The code's name as the C header spells it.
    pub fn name(self) -> &'static str {
        match self {
            Code::InvalidArgument => "PERPS_INVALID_ARGUMENT",
            Code::InvalidKey => "PERPS_INVALID_KEY",
            Code::InvalidOrder => "PERPS_INVALID_ORDER",
            Code::VerificationFailed => "PERPS_VERIFICATION_FAILED",
            Code::InvalidState => "PERPS_INVALID_STATE",
            Code::Transport => "PERPS_TRANSPORT",
            Code::Timeout => "PERPS_TIMEOUT",
            Code::HttpStatus => "PERPS_HTTP_STATUS",
            Code::ApiError => "PERPS_API_ERROR",
            Code::BadResponse => "PERPS_BAD_RESPONSE",
            Code::TokenExpired => "PERPS_TOKEN_EXPIRED",
            Code::Rng => "PERPS_RNG",
            Code::NotFound => "PERPS_NOT_FOUND",
            Code::RateLimited => "PERPS_RATE_LIMITED",
            Code::StreamClosed => "PERPS_STREAM_CLOSED",
            Code::StreamLimit => "PERPS_STREAM_LIMIT",
            Code::Panic => "PERPS_PANIC",
        }
    }
}

/// One failure. Messages name the problem and never contain a secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    code: Code,
    message: String,
    http_status: u16,
    body: Option<String>,
    may_have_reached_venue: bool,
    /// The order's `cl_ord_id` (given or generated) when a `new_order` failed. Boxed, as the
    /// ids below: a `String` each would take the error past clippy's `result_large_err`
    /// threshold (see `venue_code`).
    cl_ord_id: Option<Box<str>>,
    /// The `x-request-id` sent with the failed request, when request bytes were sent.
    request_id: Option<Box<str>>,
    /// The envelope `request_id` of an order-stream request whose frame may have been partly
    /// written: the id its replies and the `unanswered` list of a disconnection name.
    stream_request_id: Option<Box<str>>,
    /// How long to wait before asking again (a 429's `Retry-After`, or the local limiter).
    retry_after_ms: Option<i64>,
    /// The venue's `code` when it refused in the body of a 2xx answer (`PERPS_API_ERROR`,
    /// or `PERPS_NOT_FOUND` for code 404) with one in the range of HTTP statuses: what its
    /// HTTP status would have said. A `u16`: an `i64` would take the error past clippy's
    /// `result_large_err` threshold (128 bytes), on every `Result` of the crate.
    venue_code: Option<u16>,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            http_status: 0,
            body: None,
            may_have_reached_venue: false,
            cl_ord_id: None,
            request_id: None,
            stream_request_id: None,
            retry_after_ms: None,
            venue_code: None,
        }
    }

    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Error::new(Code::InvalidArgument, message)
    }
    pub fn invalid_key(message: impl Into<String>) -> Self {
        Error::new(Code::InvalidKey, message)
    }
    pub fn invalid_order(message: impl Into<String>) -> Self {
        Error::new(Code::InvalidOrder, message)
    }
    pub fn verification(message: impl Into<String>) -> Self {
        Error::new(Code::VerificationFailed, message)
    }
    pub fn invalid_state(message: impl Into<String>) -> Self {
        Error::new(Code::InvalidState, message)
    }
    pub fn bad_response(message: impl Into<String>) -> Self {
        Error::new(Code::BadResponse, message)
    }

    /// Attach the HTTP status of the venue's answer.
    pub fn with_status(mut self, status: u16) -> Self {
        self.http_status = status;
        self
    }
    /// Attach the venue's response body (kept verbatim for the caller).
    pub fn with_body(mut self, body: impl Into<String>) -> Self {
        self.body = Some(body.into());
        self
    }
    /// Mark that the request may have been processed by the venue (never retry an order then).
    pub fn reached_venue(mut self, may_have: bool) -> Self {
        self.may_have_reached_venue = may_have;
        self
    }

    /// Rewrite the message and the body (`rewrite` returns `None` to keep a text as it is):
    /// how venue text is redacted of secrets (`crate::redact`).
    pub(crate) fn map_texts(mut self, rewrite: impl Fn(&str) -> Option<String>) -> Self {
        if let Some(message) = rewrite(&self.message) {
            self.message = message;
        }
        if let Some(body) = self.body.as_deref().and_then(&rewrite) {
            self.body = Some(body);
        }
        self
    }
    /// Attach the order's `cl_ord_id`, so the caller can look the order up before resending.
    pub fn with_cl_ord_id(mut self, cl_ord_id: impl Into<String>) -> Self {
        self.cl_ord_id = Some(cl_ord_id.into().into_boxed_str());
        self
    }
    /// Attach the `x-request-id` that was sent (only once request bytes have left).
    pub fn with_request_id(mut self, request_id: impl Into<String>) -> Self {
        self.request_id = Some(request_id.into().into_boxed_str());
        self
    }
    /// Attach the envelope `request_id` of an order-stream request whose frame may have left.
    pub fn with_stream_request_id(mut self, request_id: impl Into<String>) -> Self {
        self.stream_request_id = Some(request_id.into().into_boxed_str());
        self
    }
    /// Attach how long to wait before asking again, in milliseconds (never negative).
    pub fn with_retry_after_ms(mut self, ms: i64) -> Self {
        self.retry_after_ms = Some(ms.max(0));
        self
    }
    /// Attach the venue's `code` of a refusal sent in a 2xx answer's body; kept only when
    /// it is in the range of HTTP statuses (0 to 65535), the only codes read from it.
    pub(crate) fn with_venue_code(mut self, code: i64) -> Self {
        self.venue_code = u16::try_from(code).ok();
        self
    }
    /// Put `prefix` before the message (keeping everything else): a flow that ends on the
    /// failure of one of its requests says what it had already done.
    pub(crate) fn with_message_prefix(mut self, prefix: &str) -> Self {
        self.message.insert_str(0, prefix);
        self
    }
    /// Replace the code (keeping everything else).
    pub(crate) fn with_code(mut self, code: Code) -> Self {
        self.code = code;
        self
    }

    pub fn code(&self) -> Code {
        self.code
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    /// HTTP status of the venue's answer, 0 when there was none.
    pub fn http_status(&self) -> u16 {
        self.http_status
    }
    pub fn body(&self) -> Option<&str> {
        self.body.as_deref()
    }
    pub fn may_have_reached_venue(&self) -> bool {
        self.may_have_reached_venue
    }
    pub fn cl_ord_id(&self) -> Option<&str> {
        self.cl_ord_id.as_deref()
    }
    pub fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }
    /// The envelope `request_id` of an order-stream request whose frame may have been partly
    /// written (`Stream::new_order`, `Stream::cancel_order`): the id the stream's replies and
    /// the `unanswered` list of its `disconnected` event name. `None` otherwise. Not the
    /// `x-request-id` ([`Error::request_id`]).
    pub fn stream_request_id(&self) -> Option<&str> {
        self.stream_request_id.as_deref()
    }
    /// Milliseconds to wait before asking again; `None` when unknown.
    pub fn retry_after_ms(&self) -> Option<i64> {
        self.retry_after_ms
    }
    /// The venue's `code` when it refused in the body of a 2xx answer with one in the range
    /// of HTTP statuses; `None` otherwise (an HTTP status refused it, another code, or the
    /// failure was not the venue's refusal).
    pub(crate) fn venue_code(&self) -> Option<u16> {
        self.venue_code
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.name(), self.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("code", &self.code.name())
            .field("message", &self.message)
            .field("http_status", &self.http_status)
            .field("body", &self.body)
            .field("may_have_reached_venue", &self.may_have_reached_venue)
            .field("cl_ord_id", &self.cl_ord_id)
            .field("request_id", &self.request_id)
            .field("stream_request_id", &self.stream_request_id)
            .field("retry_after_ms", &self.retry_after_ms)
            .field("venue_code", &self.venue_code)
            .finish()
    }
}

impl std::error::Error for Error {}

/// Untrusted text quoted in a message: at most 40 characters, with control characters and
/// bidirectional overrides escaped (`\u{0}`, `\n`, `\u{202e}`), and `"` and `\` escaped
/// so the quotes around it are unambiguous. An error message can then neither carry a huge
/// input back, nor break a log line, nor hide or fake its text, and it reads the same in
/// Rust and through the C ABI (where a NUL could not pass).
pub(crate) fn excerpt(text: &str) -> String {
    escaped(text, 40)
}

/// The venue's own words in a message (a refusal's `message`, a close reason): escaped as
/// `excerpt` escapes, but up to 200 characters, with `…` after them when the text was cut,
/// so an engine's log shows the venue's whole reason ("withdrawing 1000000 would leave the
/// BTC-USD position's margin at …") and says when it does not.
pub(crate) fn venue_words(text: &str) -> String {
    const LIMIT: usize = 200;
    let mut shown = escaped(text, LIMIT);
    if text.chars().nth(LIMIT).is_some() {
        shown.push('…');
    }
    shown
}

fn escaped(text: &str, limit: usize) -> String {
    let mut shown = String::with_capacity(text.len().min(limit + 8));
    for c in text.chars().take(limit) {
        if c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') {
            shown.extend(c.escape_default());
        } else if c == '"' || c == '\\' {
            shown.push('\\');
            shown.push(c);
        } else {
            shown.push(c);
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::{excerpt, venue_words};

    #[test]
    fn an_error_stays_under_clippys_result_large_err_threshold() {
        // Every fallible function of the crate returns it: at 128 bytes clippy flags them all.
        let size = std::mem::size_of::<super::Error>();
        assert!(size < 128, "Error is {size} bytes");
    }

    #[test]
    fn excerpt_keeps_forty_characters_and_escapes_what_could_hide_or_forge_text() {
        assert_eq!(excerpt("BTC-USD"), "BTC-USD");
        assert_eq!(excerpt(&"é".repeat(100)), "é".repeat(40), "cut on characters, not bytes");
        assert_eq!(excerpt("a\0b\r\nc\u{7f}"), r"a\u{0}b\r\nc\u{7f}");
        assert_eq!(excerpt("\u{202e}evil\u{2066}"), r"\u{202e}evil\u{2066}");
        assert_eq!(excerpt(r#"x" (did you mean "y"?) \"#), r#"x\" (did you mean \"y\"?) \\"#);
        assert_eq!(excerpt("naïve ✓ 价格"), "naïve ✓ 价格", "printable text is kept as is");
    }

    #[test]
    fn the_venues_words_keep_two_hundred_characters_and_say_when_cut() {
        let reason = "withdrawing 1000000 would leave the BTC-USD position's margin below its maintenance margin";
        assert_eq!(venue_words(reason), reason, "a whole sentence of the venue's is kept");
        assert_eq!(venue_words(&"x".repeat(200)), "x".repeat(200), "200 characters: not cut");
        assert_eq!(venue_words(&"é".repeat(201)), format!("{}…", "é".repeat(200)), "cut on characters, marked");
        assert_eq!(venue_words("a\nb \"c\" \u{202e}"), r#"a\nb \"c\" \u{202e}"#, "escaped as excerpt escapes");
    }
}
