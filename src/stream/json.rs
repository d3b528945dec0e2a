//! Writing JSON text by hand on the hot paths (events, order frames): strings escaped here;
//! reading the venue's numbers as numbers or strings; and venue text made plain for redaction.

use serde::Deserialize as _;

/// What each byte needs in a JSON string: 0 nothing, `u` a `\u00xx` escape, otherwise the
/// letter of its short escape (`"`, `\\`, `b`, `f`, `n`, `r`, `t`).
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x0c] = b'f';
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Append `text` as a JSON string literal, escaped straight into `out` — what serde_json
/// writes: `\"`, `\\`, the short escapes of `\b \f \n \r \t`, `\u00xx` for other control
/// characters, everything else as it is. Byte by byte: the texts escaped on the hot path
/// (order bodies) have a quote every few bytes, where copying runs costs more.
pub fn push_str(out: &mut String, text: &str) {
    // SAFETY: only whole UTF-8 texts are appended: every byte of `text` in order (a valid
    // string's bytes, never split from their neighbours) and ASCII escapes between them.
    let out = unsafe { out.as_mut_vec() };
    out.reserve(text.len() + 2);
    out.push(b'"');
    for &b in text.as_bytes() {
        match ESCAPE[usize::from(b)] {
            0 => out.push(b),
            b'u' => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
            }
            letter => out.extend_from_slice(&[b'\\', letter]),
        }
    }
    out.push(b'"');
}

/// A stream's `seq` as it may come (venue-api.md: sources send numbers as numbers or as
/// strings): an integer or a string of digits, as REST reads the answers' `code`
/// (`endpoints::answer::venue_code`), and also a whole float (`5.0`) or a negative zero,
/// harmless for a sequence number. `None` for anything else, `null` included. Never for a
/// `code`: a code that is not a plain integer is no success (`venue_code`), on the streams
/// as on REST.
pub fn lenient_int(value: Option<&serde_json::Value>) -> Option<i64> {
    /// 2^63: the first float beyond `i64`.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    match value {
        Some(serde_json::Value::Number(n)) if n.is_f64() => {
            n.as_f64().filter(|f| f.fract() == 0.0 && (-LIMIT..LIMIT).contains(f)).map(|f| f as i64)
        }
        Some(serde_json::Value::String(s))
            if s.strip_prefix('-').is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b == b'0')) =>
        {
            Some(0)
        }
        _ => crate::endpoints::answer::venue_code(value).ok().flatten(),
    }
}

/// `seq` read leniently (an integer, a string of one, an integral float); anything else is
/// an error, which sends the frame down the path of frames of an unknown shape.
pub fn lenient_seq<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<i64>, D::Error> {
    let value = Option::<serde_json::Value>::deserialize(d)?;
    match value {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v) => lenient_int(Some(&v)).map(Some).ok_or_else(|| serde::de::Error::custom("seq is not an integer")),
    }
}

/// A `seq` field read by [`lenient_seq`].
pub struct Seq(pub Option<i64>);

impl<'de> serde::Deserialize<'de> for Seq {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        lenient_seq(d).map(Seq)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_are_read_as_numbers_or_strings() {
        use serde_json::json;
        for (v, n) in [(json!(0), Some(0)), (json!("200"), Some(200)), (json!(0.0), Some(0)), (json!("-7"), Some(-7))] {
            assert_eq!(super::lenient_int(Some(&v)), n, "{v}");
        }
        for v in [json!(null), json!("three"), json!(1.5), json!([0]), json!(true), json!("")] {
            assert_eq!(super::lenient_int(Some(&v)), None, "{v}");
        }
        assert_eq!(super::lenient_int(None), None);
    }

    #[test]
    fn strings_are_escaped_only_when_needed() {
        let mut out = String::new();
        super::push_str(&mut out, "BTC-USD");
        super::push_str(&mut out, "a\"b\\c\n\u{1}");
        assert_eq!(out, r#""BTC-USD""a\"b\\c\n\u0001""#);
        let back: String = serde_json::from_str(&out[9..]).unwrap();
        assert_eq!(back, "a\"b\\c\n\u{1}");
    }

    #[test]
    fn every_character_is_written_as_serde_json_writes_it() {
        let every: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        for text in [every.as_str(), "", "plain", "\u{7f}\u{1f}x\u{8}\u{c}é\"", "{\"a\":\"b\"}"] {
            let mut out = String::new();
            super::push_str(&mut out, text);
            assert_eq!(out, serde_json::to_string(text).unwrap());
        }
    }
}
