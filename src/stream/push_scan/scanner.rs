//! The byte-level JSON reader under the push scanner (`push_scan.rs`): strings without
//! escapes, numbers by JSON's grammar, literals, and whole values up to `MAX_DEPTH`, each
//! borrowed from the frame. Apart from the scanner because it knows JSON, not the venue: the
//! scanner above it knows the push's envelope and a book's levels.

use super::Span;

/// Deepest nesting read here (serde_json's own limit is 128).
const MAX_DEPTH: u32 = 64;

/// The bytes that end a string's plain run: its closing quote, or what the scanner leaves to
/// serde_json (a backslash, a control character).
static STRING_STOP: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// A position in a frame, read forward.
pub(super) struct Scanner<'a> {
    pub(super) text: &'a str,
    pub(super) at: usize,
}

impl<'a> Scanner<'a> {
    pub(super) fn new(text: &'a str) -> Scanner<'a> {
        Scanner { text, at: 0 }
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    pub(super) fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    pub(super) fn eat(&mut self, expected: u8) -> Option<()> {
        (self.next()? == expected).then_some(())
    }

    /// JSON's four whitespace bytes.
    pub(super) fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// A string's content; `None` for an escape or a control character.
    pub(super) fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.at;
        let bytes = self.text.as_bytes();
        let mut end = start;
        loop {
            let b = *bytes.get(end)?;
            if STRING_STOP[usize::from(b)] {
                if b != b'"' {
                    return None;
                }
                self.at = end + 1;
                return Some(&self.text[start..end]);
            }
            end += 1;
        }
    }

    /// A number by JSON's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    pub(super) fn number(&mut self) -> Option<&'a str> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.some_digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.some_digits()?;
        }
        Some(&self.text[start..self.at])
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
    }

    /// An integer within `i64` (`-? (0 | [1-9][0-9]*)`, no fraction or exponent).
    pub(super) fn integer(&mut self) -> Option<i64> {
        let number = self.number()?;
        if number.contains(['.', 'e', 'E']) {
            return None;
        }
        number.parse().ok()
    }

    /// `true`, `false` or `null`.
    pub(super) fn literal(&mut self) -> Option<&'a str> {
        let rest = &self.text[self.at..];
        let word = ["true", "false", "null"].into_iter().find(|w| rest.starts_with(w))?;
        self.at += word.len();
        Some(word)
    }

    /// An element of a level: a string (its content is the price text), a number or a
    /// literal (their text). The span of that text.
    pub(super) fn element(&mut self) -> Option<Span> {
        let start = self.at;
        match self.peek()? {
            b'"' => {
                let content = self.string()?;
                Some(Span { start: start + 1, end: start + 1 + content.len() })
            }
            b'-' | b'0'..=b'9' => self.number().map(|_| Span { start, end: self.at }),
            _ => self.literal().map(|_| Span { start, end: self.at }),
        }
    }

    /// Any JSON value (strings without escapes), its text as sent.
    pub(super) fn value(&mut self, depth: u32) -> Option<&'a str> {
        if depth > MAX_DEPTH {
            return None;
        }
        let start = self.at;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'-' | b'0'..=b'9' => {
                self.number()?;
            }
            b'[' => {
                self.at += 1;
                self.space();
                if self.peek()? == b']' {
                    self.at += 1;
                } else {
                    loop {
                        self.value(depth + 1)?;
                        self.space();
                        match self.next()? {
                            b',' => self.space(),
                            b']' => break,
                            _ => return None,
                        }
                    }
                }
            }
            b'{' => {
                self.at += 1;
                self.space();
                if self.peek()? == b'}' {
                    self.at += 1;
                } else {
                    loop {
                        self.string()?;
                        self.space();
                        self.eat(b':')?;
                        self.space();
                        self.value(depth + 1)?;
                        self.space();
                        match self.next()? {
                            b',' => self.space(),
                            b'}' => break,
                            _ => return None,
                        }
                    }
                }
            }
            _ => {
                self.literal()?;
            }
        }
        Some(&self.text[start..self.at])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_json_grammar() {
        for (text, read) in
            [("0", "0"), ("-0", "-0"), ("12.5e-3", "12.5e-3"), ("1E+2", "1E+2"), ("01", "0"), ("1.5.", "1.5")]
        {
            assert_eq!(Scanner::new(text).number(), Some(read), "{text}");
        }
        for text in ["-", "1.", ".5", "1e", "1e+", "+1", "-a"] {
            assert_eq!(Scanner::new(text).number(), None, "{text}");
        }
    }
}
