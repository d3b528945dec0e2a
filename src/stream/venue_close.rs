//! The venue's Close frame, as the venue sent it.
//!
//! tungstenite replaces a Close frame whose status code is not one RFC 6455 allows by its own
//! (`1002 "Protocol violation"`), and that is not what the venue said. The venue documents
//! one such frame (venue-api §2.1): the body `{"code":408,"message":"disconnecting due to
//! not receive Pong within 5 minute period"}`, sent as the whole payload (its first two
//! bytes read as a status code, 31522, are invalid) or after a raw code 408 (invalid too).
//! So when tungstenite reports that substitute, the frame is read again from the last bytes
//! the socket gave (`transport::Socket::tail`): a Close frame from the venue is unmasked and
//! its payload at most 125 bytes, so the whole frame fits in the tail when it was the last
//! thing read — as it is, since tungstenite returns a Close as soon as it has read it.

use tungstenite::protocol::CloseFrame;

/// The most bytes a Close frame takes (2 of header, a payload of at most 125): what the
/// socket keeps of what it read last.
pub(crate) const MAX_CLOSE_FRAME: usize = 127;

/// The venue's Close frame, as it came.
#[derive(Clone, Debug)]
pub struct VenueClose {
    /// Its status code; `None` for a Close without one (no payload, or a payload of text
    /// alone, such as the documented JSON body).
    pub code: Option<u16>,
    /// Its reason, as the venue wrote it (often JSON, e.g. the documented
    /// `{"code":408,"message":"disconnecting due to not receive Pong…"}`).
    pub reason: String,
}

impl VenueClose {
    /// The Close tungstenite read, or when it substituted its own for an invalid status code,
    /// the venue's, read from `tail` (the socket's last bytes).
    pub fn new(frame: Option<CloseFrame>, tail: &[u8]) -> VenueClose {
        let Some(frame) = frame else { return VenueClose { code: None, reason: String::new() } };
        let code = u16::from(frame.code);
        if code == 1002 && frame.reason.as_str() == "Protocol violation" {
            return match raw_close_payload(tail) {
                // The venue did send this very frame.
                Some(payload) if payload == [&1002u16.to_be_bytes()[..], b"Protocol violation"].concat() => {
                    VenueClose { code: Some(code), reason: frame.reason.as_str().to_owned() }
                }
                Some(payload) => from_payload(payload),
                // Not found (more came after it): the venue's code is unknown, and never
                // reported as the substitute's.
                None => VenueClose { code: None, reason: String::new() },
            };
        }
        VenueClose { code: Some(code), reason: frame.reason.as_str().to_owned() }
    }

    /// For messages: the code and the venue's words, quoted (escapes written out first, so
    /// that redaction sees what a reader would).
    pub fn describe(&self) -> String {
        let words = crate::error::venue_words(&crate::redact::unescaped(&self.reason));
        match self.code {
            Some(code) => format!("the venue closed the connection (code {code}: {words})"),
            None if self.reason.is_empty() => "the venue closed the connection".to_owned(),
            None => format!("the venue closed the connection (no status code: {words})"),
        }
    }

    /// For the `disconnected` event: `close_code` and `close_reason`, the reason as sent, so
    /// that an engine can read the venue's JSON in it — with its JSON escapes written out
    /// (`redact::unescaped`), because the event's redaction reads one level of escapes: a
    /// token escaped inside the reason would otherwise come back to the engine's reader.
    pub fn fields(&self) -> serde_json::Value {
        serde_json::json!({ "close_code": self.code, "close_reason": crate::redact::unescaped(&self.reason) })
    }
}

/// The payload of the unmasked Close frame (`0x88`, length ≤ 125) that ends `tail`, if one
/// does. The first candidate from the front is taken: a frame's header comes before its
/// payload.
fn raw_close_payload(tail: &[u8]) -> Option<&[u8]> {
    (0..tail.len().saturating_sub(1)).find_map(|at| {
        let payload = &tail[at + 2..];
        let fits = tail[at] == 0x88 && usize::from(tail[at + 1]) == payload.len() && payload.len() <= 125;
        // tungstenite accepted it: no payload, or a code and a UTF-8 reason.
        let readable = payload.is_empty() || (payload.len() >= 2 && std::str::from_utf8(&payload[2..]).is_ok());
        (fits && readable).then_some(payload)
    })
}

/// What a payload says: text alone (it starts with a printable character, where any valid
/// status code starts with a control byte) is a reason without a code; otherwise a code
/// (invalid, as tungstenite found it) and its reason.
fn from_payload(payload: &[u8]) -> VenueClose {
    match std::str::from_utf8(payload) {
        Ok(text) if payload.first().is_some_and(|b| *b >= 0x20) => VenueClose { code: None, reason: text.to_owned() },
        _ if payload.len() >= 2 => VenueClose {
            code: Some(u16::from_be_bytes([payload[0], payload[1]])),
            reason: String::from_utf8_lossy(&payload[2..]).into_owned(),
        },
        _ => VenueClose { code: None, reason: String::new() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn substitute() -> Option<CloseFrame> {
        Some(CloseFrame { code: 1002.into(), reason: "Protocol violation".into() })
    }

    fn frame(payload: &[u8]) -> Vec<u8> {
        [&[0x88, payload.len() as u8][..], payload].concat()
    }

    #[test]
    fn the_venues_payload_is_recovered_from_the_tail() {
        let json = br#"{"code":408,"message":"disconnecting due to not receive Pong within 5 minute period"}"#;
        // Bytes of an earlier frame before it, as the tail holds them.
        let tail = [&b"\x81\x02{}"[..], &frame(json)].concat();
        let close = VenueClose::new(substitute(), &tail);
        assert_eq!((close.code, close.reason.as_bytes()), (None, &json[..]));

        let tail = frame(&[&408u16.to_be_bytes()[..], b"no pong"].concat());
        let close = VenueClose::new(substitute(), &tail);
        assert_eq!((close.code, close.reason.as_str()), (Some(408), "no pong"));
    }

    #[test]
    fn a_real_1002_stays_and_an_unrecoverable_one_is_never_reported_as_the_venues() {
        let real = frame(&[&1002u16.to_be_bytes()[..], b"Protocol violation"].concat());
        let close = VenueClose::new(substitute(), &real);
        assert_eq!((close.code, close.reason.as_str()), (Some(1002), "Protocol violation"));

        let close = VenueClose::new(substitute(), b"\x88\x05abc");
        assert_eq!((close.code, close.reason.as_str()), (None, ""));

        let ordinary = Some(CloseFrame { code: 4008.into(), reason: "bye".into() });
        let close = VenueClose::new(ordinary, b"");
        assert_eq!((close.code, close.reason.as_str()), (Some(4008), "bye"));
    }
}
