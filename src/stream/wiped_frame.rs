//! The frames that carry the session's token (the market stream's auth frame, the order
//! stream's `auth:login`), written straight into memory that is wiped on drop and handed to
//! tungstenite as it is, so that no copy of the token is freed unwiped on the way: built
//! with `json!` and `to_string`, each frame left three or four such copies (a `Value`'s
//! string, the inner JSON text, a buffer outgrown while writing, the payload tungstenite
//! frees after framing it) for any later allocation, core dump or swap to read
//! (`tests/stream_token_wiped.rs`). What tungstenite keeps in its write buffer is the frame
//! masked, and the socket's buffers are the kernel's.

use tungstenite::{Bytes, Message, Utf8Bytes};
use zeroize::Zeroizing;

/// Text in memory wiped on drop that never frees an unwiped copy of itself: when it must
/// grow, its text moves to a larger buffer and the old one is wiped.
pub struct WipedText(Zeroizing<String>);

impl WipedText {
    pub fn with_capacity(capacity: usize) -> WipedText {
        WipedText(Zeroizing::new(String::with_capacity(capacity)))
    }

    pub fn push(&mut self, text: &str) {
        self.make_room(text.len());
        self.0.push_str(text);
    }

    /// `text` as a JSON string, escaped by the stream's one escaper (`json::push_str`, as
    /// serde_json escapes). Room for the longest escaping (`\u00xx`: six bytes for one) is
    /// made first, so that `push_str` never outgrows the buffer and frees an unwiped copy.
    pub fn push_json(&mut self, text: &str) {
        self.make_room(2 + 6 * text.len());
        super::json::push_str(&mut self.0, text);
    }

    /// Room for `more` bytes: when the buffer is too small, its text moves to a larger one
    /// and the old one is wiped as it is dropped.
    fn make_room(&mut self, more: usize) {
        if self.0.len() + more > self.0.capacity() {
            let mut larger = String::with_capacity((self.0.len() + more).max(2 * self.0.capacity()));
            larger.push_str(&self.0);
            self.0 = Zeroizing::new(larger);
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text frame carrying this text: tungstenite holds the buffer itself (no copy), and
    /// wipes it when it drops the frame.
    pub fn into_message(self) -> Message {
        let text = Utf8Bytes::try_from(Bytes::from_owner(self)).expect("text from a String is UTF-8");
        Message::Text(text)
    }
}

impl AsRef<[u8]> for WipedText {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::WipedText;

    #[test]
    fn json_strings_are_escaped_as_serde_json_escapes_them() {
        for text in ["plain", "q\"b\\s/", "\u{0}\u{1f}\n\r\t\u{8}\u{c}\u{7f}", "é€😀", ""] {
            let mut out = WipedText::with_capacity(1);
            out.push_json(text);
            assert_eq!(out.as_str(), serde_json::to_string(text).unwrap(), "{text:?}");
        }
    }
}
