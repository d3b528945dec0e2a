//! Percent-encoding of query-string names and values (RFC 3986): every byte outside the
//! unreserved set `A-Z a-z 0-9 - . _ ~` becomes `%XX` (upper-case hex), so a value can never
//! end the parameter (`&`, `=`, `#`), be read as a space (`+`), or escape the query.
//! An ISO time's offset `+08:00` travels as `%2B08%3A00`, not as a space.

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Append `text`, percent-encoded, to `out`.
pub fn push_encoded(out: &mut String, text: &str) {
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 15)] as char);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::push_encoded;

    fn encoded(text: &str) -> String {
        let mut out = String::new();
        push_encoded(&mut out, text);
        out
    }

    #[test]
    fn reserved_and_awkward_bytes_are_encoded() {
        assert_eq!(encoded("BTC-USD"), "BTC-USD");
        assert_eq!(encoded("a.b_c~d"), "a.b_c~d");
        assert_eq!(encoded("2026-01-02T03:04:05+08:00"), "2026-01-02T03%3A04%3A05%2B08%3A00");
        assert_eq!(encoded("a b&c=d#e%f+g/h?i"), "a%20b%26c%3Dd%23e%25f%2Bg%2Fh%3Fi");
        assert_eq!(encoded("é"), "%C3%A9");
        assert_eq!(encoded(""), "");
    }
}
