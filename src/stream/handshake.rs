//! The client side of the WebSocket opening handshake (RFC 6455 §4.1), done here rather than
//! by tungstenite, whose check of the answer is stricter than the RFC in one place and
//! looser in another:
//!
//! - `Connection` may hold a token list (`keep-alive, Upgrade`, RFC 7230 §6.1) as long as one
//!   token is `upgrade`; tungstenite refuses anything but the single word.
//! - Any extension in `Sec-WebSocket-Extensions` fails the connection: the client asks for
//!   none, and a venue that compressed frames (`permessage-deflate`) would send frames the
//!   client cannot read (tungstenite does not check this).
//! - Informational answers (100 Continue, 103 Early Hints) before the real one are read past
//!   (RFC 9110 §15.2, as ureq does for REST; at most `MAX_INTERIM`), where tungstenite's
//!   check would take the first for the answer.
//! - An HTTP answer other than 101 keeps its status and body, and its error quotes the
//!   venue's reason (`message` of a JSON body, as REST errors do) and carries its
//!   `Retry-After` (`perps_error_retry_after_ms`) for a 429 or 503. A `chunked` body is
//!   decoded for the quote (`read_body`); chunking it cannot decode is quoted as it came.
//! - A line may end in a bare LF (RFC 9112 §2.2: a recipient may accept it; a proxy's answer
//!   may have them): the head ends at the first empty line whichever way lines end, and
//!   httparse reads both. The header checks are the same.
//!
//! Reads and writes keep the set-up's deadline (`deadline_tcp.rs`): a venue that trickles
//! its answer cannot hold a reconnect. The answer's head is read with a size cap; bytes read
//! past it (the venue's first frames) are handed to the WebSocket.

use super::chunked::Chunked;
use super::transport::{Socket, io_error};
use crate::error::{Code, Error, Result};
use std::io::{Read, Write};
use tungstenite::handshake::client::Request;

/// An answer's head (status line and headers) larger than this is not the venue's.
const MAX_HEAD_BYTES: usize = 16 * 1024;
/// How much of a refusal's body is kept (the venue's is a short JSON reason).
const MAX_BODY_BYTES: usize = 4 * 1024;
/// Headers read from an answer (tungstenite's limit).
const MAX_HEADERS: usize = 124;
/// Informational answers (1xx other than 101) read past before the real one.
const MAX_INTERIM: usize = 8;

const WHAT: &str = "the WebSocket handshake";

/// Send the upgrade request and read the venue's answer. `Ok` with the bytes read past the
/// answer's head when the venue switched to WebSocket as the RFC says it must.
pub fn client(socket: &mut Socket, request: Request) -> Result<Vec<u8>> {
    let (bytes, key) = tungstenite::handshake::client::generate_request(request)
        .map_err(|e| Error::invalid_argument(format!("{WHAT}: the request cannot be written: {e}")))?;
    socket.write_all(&bytes).and_then(|()| socket.flush()).map_err(|e| io_error(e, WHAT))?;
    let mut headers;
    let mut buffer = Vec::with_capacity(1024);
    let mut interim = 0;
    let (answer, rest) = loop {
        let head_len = read_head(socket, &mut buffer)?;
        let rest = buffer.split_off(head_len);
        // Each head is parsed with its own headers: an interim answer's are dropped with it.
        headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut answer = httparse::Response::new(&mut headers);
        let parsed = answer.parse(&buffer);
        if let Err(httparse::Error::TooManyHeaders) = parsed {
            return Err(Error::bad_response(format!("{WHAT}: the venue's answer has more than {MAX_HEADERS} headers")));
        }
        if !matches!(parsed, Ok(httparse::Status::Complete(_))) {
            let first_line = buffer.split(|b| matches!(b, b'\r' | b'\n')).next().unwrap_or_default();
            let line = String::from_utf8_lossy(first_line).into_owned();
            return Err(Error::new(
                Code::Transport,
                format!("{WHAT}: the venue's answer is not HTTP (\"{}\")", crate::error::excerpt(&line)),
            ));
        }
        // An informational answer (100 Continue, 103 Early Hints…) comes before the real one,
        // which a client must read on (RFC 9110 §15.2); a few at most, within the deadline.
        match answer.code {
            Some(code @ 100..=199) if code != 101 && interim < MAX_INTERIM => {
                interim += 1;
                buffer = rest;
            }
            _ => break (answer, rest),
        }
    };
    let status = answer.code.unwrap_or(0);
    let header = |name: &'static str| {
        answer
            .headers
            .iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value))
    };
    if status != 101 {
        let retry_after = header("Retry-After").next().map(|v| v.into_owned());
        // Chunked when it is the last transfer coding (RFC 9112 §6.1), whatever the length says.
        let chunked = header("Transfer-Encoding")
            .next_back()
            .is_some_and(|v| v.rsplit(',').next().is_some_and(|coding| coding.trim().eq_ignore_ascii_case("chunked")));
        let length = if chunked {
            Length::Chunked
        } else {
            Length::Bytes(header("Content-Length").next().and_then(|v| v.trim().parse().ok()))
        };
        let body = read_body(socket, rest, length);
        return Err(refusal(status, &body, retry_after.as_deref()));
    }
    let fail = |why: String| Error::new(Code::Transport, format!("{WHAT}: {why} (RFC 6455 §4.1)"));
    if answer.version != Some(1) {
        return Err(fail("the venue's 101 answer is not HTTP/1.1".into()));
    }
    if !header("Upgrade").any(|v| v.trim().eq_ignore_ascii_case("websocket")) {
        return Err(fail("the venue's 101 answer has no \"Upgrade: websocket\" header".into()));
    }
    // A token list is allowed (`keep-alive, Upgrade`); one of its tokens must be `upgrade`.
    if !header("Connection").any(|v| v.split(',').any(|token| token.trim().eq_ignore_ascii_case("upgrade"))) {
        return Err(fail("the venue's 101 answer has no \"upgrade\" token in its Connection header".into()));
    }
    // Exactly one field, holding the key's answer: a field sent twice is one value, the two
    // joined by a comma (RFC 9110 §5.3), which answers no key (and RFC 6455 §11.3.3 forbids it).
    let expected = tungstenite::handshake::derive_accept_key(key.as_bytes());
    let accepts: Vec<_> = header("Sec-WebSocket-Accept").collect();
    if !matches!(accepts.as_slice(), [accept] if accept.trim() == expected) {
        return Err(fail("the venue's Sec-WebSocket-Accept does not answer the request's key".into()));
    }
    // The client asks for no extension and no subprotocol: any in the answer is unasked.
    if let Some(extension) = header("Sec-WebSocket-Extensions").find(|v| !v.trim().is_empty()) {
        return Err(fail(format!(
            "the venue answered with the extension \"{}\", which the client did not ask for",
            crate::error::excerpt(extension.trim())
        )));
    }
    if let Some(protocol) = header("Sec-WebSocket-Protocol").find(|v| !v.trim().is_empty()) {
        return Err(fail(format!(
            "the venue answered with the subprotocol \"{}\", which the client did not ask for",
            crate::error::excerpt(protocol.trim())
        )));
    }
    Ok(rest)
}

/// Read into `buffer` (which may hold bytes read already) until the blank line that ends an
/// answer's head: the head's length (what follows it was read along).
fn read_head(socket: &mut Socket, buffer: &mut Vec<u8>) -> Result<usize> {
    if let Some(end) = head_end(buffer, 0) {
        return Ok(end);
    }
    let mut chunk = [0u8; 2048];
    loop {
        let n = socket.read(&mut chunk).map_err(|e| io_error(e, WHAT))?;
        if n == 0 {
            return Err(Error::new(
                Code::Transport,
                format!("{WHAT}: the venue closed the connection before answering"),
            ));
        }
        // Look again from just before the new bytes: the blank line may straddle two reads.
        let from = buffer.len().saturating_sub(3);
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(end) = head_end(buffer, from) {
            return Ok(end);
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return Err(Error::bad_response(format!(
                "{WHAT}: the venue's answer has more than {MAX_HEAD_BYTES} bytes of headers"
            )));
        }
    }
}

/// Where the head that `bytes` starts with ends (past its empty line), looking from `from`:
/// the first LF followed by an empty line, whether lines end in CRLF or a bare LF.
fn head_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(lf) = bytes.get(at..)?.iter().position(|b| *b == b'\n') {
        let after = at + lf + 1;
        match bytes.get(after..) {
            Some([b'\n', ..]) => return Some(after + 1),
            Some([b'\r', b'\n', ..]) => return Some(after + 2),
            _ => at = after,
        }
    }
    None
}

/// How long a refusal's body is.
enum Length {
    /// Its `Content-Length`, if it has one.
    Bytes(Option<usize>),
    /// `Transfer-Encoding: chunked`: up to its last chunk.
    Chunked,
}

/// A refusal's body: what came with the head, and what follows up to its length (at most
/// `MAX_BODY_BYTES`) within the deadline; what could not be read in time is left out. A
/// chunked body is decoded (`super::chunked`), or kept as it came when it cannot be.
fn read_body(socket: &mut Socket, mut body: Vec<u8>, length: Length) -> String {
    let mut chunk = [0u8; 1024];
    let mut more = |body: &mut Vec<u8>| match socket.read(&mut chunk) {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            body.extend_from_slice(&chunk[..n]);
            true
        }
    };
    let body = match length {
        Length::Bytes(length) => {
            let want = length.unwrap_or(0).min(MAX_BODY_BYTES);
            while body.len() < want && more(&mut body) {}
            body.truncate(length.unwrap_or(body.len()).min(MAX_BODY_BYTES));
            body
        }
        // Read until the last chunk, malformed chunking, or as many bytes as a body is kept
        // for (the chunks' sizes beside them): then what came, decoded.
        Length::Chunked => loop {
            let decoded = super::chunked::decode(&body);
            if !matches!(decoded, Chunked::Partial(_)) || body.len() >= MAX_BODY_BYTES || !more(&mut body) {
                break match decoded {
                    Chunked::Complete(mut data) | Chunked::Partial(mut data) => {
                        data.truncate(MAX_BODY_BYTES);
                        data
                    }
                    Chunked::Malformed => {
                        body.truncate(MAX_BODY_BYTES);
                        body
                    }
                };
            }
        },
    };
    String::from_utf8_lossy(&body).into_owned()
}

/// The venue's HTTP answer other than 101, as an error: its status, its reason quoted, its
/// body (escapes written out, for the redaction of the error: `redact::unescaped`) and, for
/// a 429 or 503, its `Retry-After`.
fn refusal(status: u16, body: &str, retry_after: Option<&str>) -> Error {
    let hint = match status {
        401 => " (token missing, invalid or expired)",
        403 => " (refused)",
        429 => " (rate limited)",
        _ => "",
    };
    // Read as REST reads the venue's refusals (`message` of a JSON body, else its first line).
    let quoted = crate::client::venue_reason(body).map(|reason| format!(": \"{reason}\"")).unwrap_or_default();
    let error = Error::new(
        Code::HttpStatus,
        format!("{WHAT}: the venue answered HTTP {status} instead of switching to WebSocket{hint}{quoted}"),
    )
    .with_status(status);
    let error = if body.is_empty() { error } else { error.with_body(crate::redact::unescaped(body).into_owned()) };
    match (status, retry_after) {
        (429 | 503, Some(value)) => match crate::client::retry_after_ms(value, crate::body_sign::now_ms()) {
            Some(ms) => error.with_retry_after_ms(ms),
            None => error,
        },
        _ => error,
    }
}
