//! Whether a fragmented message is in progress, and since when: the frame boundaries of the
//! bytes read after the handshake, followed header by header (RFC 6455 §5.2).
//!
//! tungstenite gathers a fragmented message's frames out of sight and returns only the whole
//! message, while it returns each ping between them: a venue that starts a message and sends
//! continuation frames slowly, never the last (FIN), with pings between, keeps the connection
//! "alive" — the idle timeout counts from the last frame — while it delivers nothing. The
//! serving loop (`serving.rs`) ends a connection whose message has stayed incomplete for the
//! idle timeout. Reading the headers costs a few operations per frame: a payload is skipped
//! by its length, never looked at.

use std::time::Instant;

/// The longest frame header: 2 bytes, 8 of extended length, 4 of mask.
const MAX_HEADER: usize = 14;

pub struct FrameWatch {
    /// Off during the handshake (its bytes are HTTP, not frames).
    on: bool,
    header: [u8; MAX_HEADER],
    have: usize,
    /// Payload bytes of the current frame still to come.
    payload_left: u64,
    /// When the first frame of a message not yet finished came.
    open_since: Option<Instant>,
}

impl FrameWatch {
    pub fn off() -> FrameWatch {
        FrameWatch { on: false, header: [0; MAX_HEADER], have: 0, payload_left: 0, open_since: None }
    }

    /// From here on the bytes are frames: `leftover` are the first of them (read with the
    /// handshake's answer).
    pub fn start(&mut self, leftover: &[u8]) {
        *self = FrameWatch { on: true, ..FrameWatch::off() };
        self.feed(leftover);
    }

    /// When the message in progress began, if one is.
    pub fn open_since(&self) -> Option<Instant> {
        self.open_since
    }

    /// Bytes read, in order.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        if !self.on {
            return;
        }
        while !bytes.is_empty() {
            if self.payload_left > 0 {
                let skip = self.payload_left.min(bytes.len() as u64);
                self.payload_left -= skip;
                bytes = &bytes[skip as usize..];
                continue;
            }
            self.header[self.have] = bytes[0];
            self.have += 1;
            bytes = &bytes[1..];
            if self.have >= 2 && self.have == header_len(self.header[1]) {
                self.frame();
            }
        }
    }

    /// A whole header read: the frame's payload follows.
    fn frame(&mut self) {
        let (first, second) = (self.header[0], self.header[1]);
        let ext = &self.header[2..self.have];
        self.payload_left = match second & 0x7f {
            126 => u64::from(u16::from_be_bytes([ext[0], ext[1]])),
            127 => u64::from_be_bytes(ext[..8].try_into().unwrap_or([0; 8])),
            short => u64::from(short),
        };
        self.have = 0;
        let fin = first & 0x80 != 0;
        match first & 0x0f {
            // Text or binary: a message begins (and ends here with FIN).
            0x1 | 0x2 if !fin => self.open_since = Some(Instant::now()),
            0x1 | 0x2 => self.open_since = None,
            // The last continuation ends the message.
            0x0 if fin => self.open_since = None,
            // A continuation that is not the last, or a control frame (never fragmented).
            _ => {}
        }
    }
}

/// A header's length, from its second byte: 2, plus the extended length, plus the mask.
fn header_len(second: u8) -> usize {
    let ext = match second & 0x7f {
        126 => 2,
        127 => 8,
        _ => 0,
    };
    2 + ext + if second & 0x80 != 0 { 4 } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(first: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![first];
        match payload.len() {
            n if n < 126 => out.push(n as u8),
            n if n <= 0xffff => {
                out.push(126);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                out.push(127);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn a_message_is_open_from_its_first_fragment_to_its_last_whatever_the_reads() {
        const TEXT: u8 = 0x01;
        const CONT: u8 = 0x00;
        const FIN: u8 = 0x80;
        const PING: u8 = 0x89;
        let big = vec![b'x'; 70_000];
        let mid = vec![b'y'; 300];
        // (bytes, open after them)
        let steps: Vec<(Vec<u8>, bool)> = vec![
            (frame(FIN | TEXT, b"{}"), false),
            (frame(TEXT, b"{\"a\":"), true),
            (frame(PING, b""), true),
            (frame(CONT, &big), true),
            (frame(PING, b"p"), true),
            (frame(CONT, &mid), true),
            (frame(FIN | CONT, b"1}"), false),
            (frame(FIN | 0x02, &mid), false),
        ];
        // Fed whole, and byte by byte: the same answers.
        for chunk in [usize::MAX, 1, 7] {
            let mut watch = FrameWatch::off();
            watch.feed(b"HTTP/1.1 101 Switching Protocols\r\n");
            assert!(watch.open_since().is_none());
            watch.start(&[]);
            for (n, (bytes, open)) in steps.iter().enumerate() {
                for piece in bytes.chunks(chunk.min(bytes.len()).max(1)) {
                    watch.feed(piece);
                }
                assert_eq!(watch.open_since().is_some(), *open, "step {n}, chunks of {chunk}");
            }
        }
        // The handshake's leftover is the first frames.
        let mut watch = FrameWatch::off();
        watch.start(&frame(TEXT, b"["));
        assert!(watch.open_since().is_some());
    }
}
