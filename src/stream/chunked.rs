//! A `Transfer-Encoding: chunked` body (RFC 9112 §7.1) decoded, for the quote of an upgrade
//! refused with one (`handshake.rs`): the venue's reason, not its chunk sizes. Only the data
//! is kept (extensions and trailers are dropped); a line may end in a bare LF, as in the head.
//! Never panics, on any bytes: what it cannot decode is `Malformed`, and the caller quotes
//! the body as it came.

/// What the bytes read so far of a chunked body hold.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Chunked {
    /// Up to the last chunk (`0`): the data.
    Complete(Vec<u8>),
    /// Well formed so far, more to come: the data so far.
    Partial(Vec<u8>),
    Malformed,
}

/// More hex digits than this in a chunk's size is no size a refusal's body has (and would
/// not fit in a `u64`).
const MAX_SIZE_DIGITS: usize = 16;

pub(super) fn decode(raw: &[u8]) -> Chunked {
    let mut data = Vec::new();
    let mut rest = raw;
    loop {
        let Some(lf) = rest.iter().position(|b| *b == b'\n') else {
            // The size line is still coming: well formed as far as it goes?
            return if size_line_so_far(rest) { Chunked::Partial(data) } else { Chunked::Malformed };
        };
        let Some(size) = chunk_size(&rest[..lf]) else { return Chunked::Malformed };
        rest = &rest[lf + 1..];
        if size == 0 {
            return Chunked::Complete(data);
        }
        if (rest.len() as u64) < size {
            data.extend_from_slice(rest);
            return Chunked::Partial(data);
        }
        let (chunk, after) = rest.split_at(size as usize);
        data.extend_from_slice(chunk);
        rest = match after {
            [b'\r', b'\n', tail @ ..] | [b'\n', tail @ ..] => tail,
            [] | [b'\r'] => return Chunked::Partial(data),
            _ => return Chunked::Malformed,
        };
    }
}

/// The size of a chunk line (without its LF): hex digits, then an optional `;extension`.
fn chunk_size(line: &[u8]) -> Option<u64> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let digits = hex_part(line);
    if digits.is_empty() || digits.len() > MAX_SIZE_DIGITS || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    // Hex digits only, at most 16: always a valid u64.
    u64::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

/// Whether `partial` (a size line whose LF has not come yet) can still become one.
fn size_line_so_far(partial: &[u8]) -> bool {
    if partial.contains(&b';') {
        return chunk_size(partial.split(|b| *b == b';').next().unwrap_or_default()).is_some();
    }
    let digits = hex_part(partial.strip_suffix(b"\r").unwrap_or(partial));
    digits.len() <= MAX_SIZE_DIGITS && digits.iter().all(u8::is_ascii_hexdigit)
}

/// The size's digits: before any extension, blanks around them dropped (RFC 9112 §7.1.1 BWS).
fn hex_part(line: &[u8]) -> &[u8] {
    let size = line.split(|b| *b == b';').next().unwrap_or_default();
    size.trim_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_decoded_with_extensions_trailers_and_either_line_end() {
        let raw = b"4\r\nWiki\r\n5 ;name=value\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\n";
        assert_eq!(decode(raw), Chunked::Complete(b"Wikipedia in\r\n\r\nchunks.".to_vec()));
        assert_eq!(decode(b"3\nabc\n0\n\n"), Chunked::Complete(b"abc".to_vec()));
        assert_eq!(decode(b"0\r\n"), Chunked::Complete(Vec::new()));
    }

    #[test]
    fn every_prefix_of_a_chunked_body_is_partial_with_a_prefix_of_its_data() {
        let raw = b"4\r\nWiki\r\n5;a=b\r\npedia\r\n0\r\n\r\n";
        let end = raw.iter().position(|b| *b == b'0').unwrap() + 3;
        for cut in 0..raw.len() {
            match decode(&raw[..cut]) {
                Chunked::Partial(data) => assert!(b"Wikipedia".starts_with(&data), "{cut}: {data:?}"),
                Chunked::Complete(data) => assert!(cut >= end && data == b"Wikipedia", "{cut}: {data:?}"),
                Chunked::Malformed => panic!("a prefix of {cut} bytes read as malformed"),
            }
        }
    }

    #[test]
    fn what_is_not_chunked_is_malformed() {
        for raw in [
            &b"zz\r\nnot chunked\r\n"[..],
            b"{\"message\":\"no\"}",
            b"fffffffffffffffffffff\r\nhuge\r\n",
            b"3\r\nabcdef\r\n0\r\n\r\n",
            b"\r\n",
            b";ext\r\n",
            b"-1\r\n",
        ] {
            assert_eq!(decode(raw), Chunked::Malformed, "{:?}", String::from_utf8_lossy(raw));
        }
    }

    #[test]
    fn a_size_larger_than_the_bytes_read_is_partial_and_never_overflows() {
        assert_eq!(decode(b"ffffffffffffffff\r\nabc"), Chunked::Partial(b"abc".to_vec()));
        assert_eq!(decode(b"10\r\nabc"), Chunked::Partial(b"abc".to_vec()));
    }
}
