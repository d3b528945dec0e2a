//! Writing JSON text by hand on the hot paths (events, order frames): strings escaped here.

/// Append `text` as a JSON string literal.
pub fn push_str(out: &mut String, text: &str) {
    let plain = text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\' && b != 0x7f);
    if plain {
        out.push('"');
        out.push_str(text);
        out.push('"');
    } else {
        // serde_json escapes exactly what JSON requires.
        out.push_str(&serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned()));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn strings_are_escaped_only_when_needed() {
        let mut out = String::new();
        super::push_str(&mut out, "BTC-USD");
        super::push_str(&mut out, "a\"b\\c\n\u{1}");
        assert_eq!(out, r#""BTC-USD""a\"b\\c\n\u0001""#);
        let back: String = serde_json::from_str(&out[9..]).unwrap();
        assert_eq!(back, "a\"b\\c\n\u{1}");
    }
}
