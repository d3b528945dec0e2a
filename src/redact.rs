//! Redaction of venue text: a hostile (or careless) venue may echo the session's token, or
//! any key it knows, in an error answer, and the library hands venue text to its caller in
//! error messages and bodies, which end up in logs. Every error of a call that talked to the
//! venue passes through [`Secrets::redact_error`] with the secrets in play for that call
//! (`Client`'s flows build the set), so no run of [`RUN`] bytes of any of them survives.
//!
//! A run of 8 bytes is what `tests/secrets.rs` scans for: a secret echoed in part (a token
//! cut by the venue, or by the 40-character excerpt of a message) is caught as well as a
//! whole one. Hex secrets are matched in either case. Over-redaction costs little in an
//! error's words: the same 8 bytes in an unrelated place (a JWT header shared by every token)
//! are replaced too. It would corrupt data, though: 8 bytes of a key's hex form are often 8
//! decimal digits, which a number in a venue frame can spell. So the streams redact the
//! venue's frames handed on as data of the tokens they sent alone (`stream::queue::Tables`).

use crate::error::Error;
use ed25519_dalek::SigningKey;
use std::borrow::Cow;
use std::fmt::Write;
use std::sync::Arc;
use zeroize::Zeroizing;

/// The length of the runs matched: any 8 bytes of a secret are redacted.
pub(crate) const RUN: usize = 8;

/// What replaces a redacted run.
pub(crate) const REDACTED: &str = "<redacted>";

/// Bits in the prefilter of [`Secrets::redact`]: one per hash of a run's lower-case form.
const FILTER_BITS: u32 = 16;

/// The filter's bit for a run (its lower-case form, hashed): a run of a secret always has its
/// bit set, so a clear bit rules a window out without a search.
fn filter_bit(run: [u8; RUN]) -> usize {
    let lower = u64::from_le_bytes(run.map(|b| b.to_ascii_lowercase()));
    (lower.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - FILTER_BITS)) as usize
}

/// Bytes of the pieces the second filter holds: [`QUAD`] bytes of a secret.
const QUAD: usize = 4;

/// Words of a filter (`1 << FILTER_BITS` bits).
const QUAD_WORDS: usize = (1 << FILTER_BITS) / 64;

/// The second filter's bit for `QUAD` bytes, given in lower case (`lower_ascii`). Every
/// window of [`RUN`] bytes holds `QUAD` bytes that start at a multiple of `QUAD`, so a text is
/// scanned by its aligned `QUAD`-byte blocks, and only the windows around a block whose bit
/// is set are looked at: a quarter of the hashing, for the texts the streams redact at every
/// push.
#[inline]
fn quad_bit(lower: u32) -> usize {
    (lower.wrapping_mul(0x9e37_79b1) >> (32 - FILTER_BITS)) as usize
}

/// The bits `text` sets in each of the two filters of a table it is added to (by its runs,
/// and by its `QUAD`-byte pieces, lower case): for the residue tests, which look for a freed
/// copy of a filter.
#[doc(hidden)]
pub fn filter_bits(text: &str) -> [Vec<usize>; 2] {
    let lower = Zeroizing::new(text.to_ascii_lowercase());
    let runs = lower.as_bytes().windows(RUN).map(|w| filter_bit(w.try_into().expect("RUN bytes"))).collect();
    let quads = lower.as_bytes().windows(QUAD).map(|w| quad_bit(u32::from_le_bytes(w.try_into().expect("QUAD bytes"))));
    [runs, quads.collect()]
}

/// Bytes of either filter (`1 << FILTER_BITS` bits), the size of a freed copy of one. (A
/// function: a public constant would be exported to the C header.)
#[doc(hidden)]
pub fn filter_bytes() -> usize {
    (1 << FILTER_BITS) / 8
}

/// `to_ascii_lowercase` of eight bytes at once: `A`–`Z` gain 0x20, every other byte is kept.
#[inline]
fn lower_ascii(x: u64) -> u64 {
    const EACH: u64 = 0x0101_0101_0101_0101;
    let low7 = x & (0x7f * EACH);
    // The top bit of each byte: set from `A` (0x41) on, and from the byte after `Z` (0x5b) on.
    let from_a = low7 + 0x3f * EACH;
    let after_z = low7 + 0x25 * EACH;
    let upper = (from_a ^ after_z) & !x & (0x80 * EACH);
    x | (upper >> 2)
}

/// The secrets of one call (or of a stream), as the set of all their runs of [`RUN`] bytes
/// (sorted, for a binary search), wiped on drop, with a bit filter in front of the search so
/// that a scan costs little where no secret is (a stream redacts every order reply).
#[derive(Clone, Default)]
pub struct Secrets {
    runs: Zeroizing<Vec<[u8; RUN]>>,
    /// `1 << FILTER_BITS` bits; empty while there is no run. Wiped on drop, as `quads`.
    filter: Zeroizing<Vec<u64>>,
    /// `1 << FILTER_BITS` bits, one per `quad_bit` of each run's `QUAD`-byte pieces; empty
    /// while there is no run. Wiped on drop: a key in hex has 16-bit pieces, so the set bits
    /// all but list them, and chaining pieces that overlap spells the key out (a freed copy
    /// gave a session's seed back in a fraction of a second, checked against its public key).
    quads: Zeroizing<Vec<u64>>,
    /// Secrets shorter than a run: replaced where they occur whole.
    short: Vec<Zeroizing<String>>,
}

/// Sort the runs (for the binary search) and drop repeats. The sort runs in a frame of its
/// own whose stack is overwritten after (`wipe::then_wipe_stack`): its scratch there held runs
/// of the secrets, which values later moved to the heap would carry.
fn sort_and_dedup(runs: &mut Vec<[u8; RUN]>) {
    crate::wipe::then_wipe_stack(|| runs.sort_unstable());
    runs.dedup();
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secrets").field("runs", &self.runs.len()).finish_non_exhaustive()
    }
}

impl Secrets {
    pub fn new() -> Secrets {
        Secrets::default()
    }

    /// A secret as text (a token, a key as the caller wrote it). Surrounding whitespace is
    /// not part of it; hex is matched in either case.
    pub fn add(&mut self, secret: &str) {
        let secret = secret.trim();
        if secret.is_empty() {
            return;
        }
        if secret.len() < RUN {
            self.short.push(Zeroizing::new(secret.to_owned()));
            return;
        }
        let lower = Zeroizing::new(secret.to_ascii_lowercase());
        // A new table of the exact size, not the old one grown: a Vec that grows frees its
        // old buffer unwiped, and the runs of a secret, overlapping, spell it out.
        let mut runs = Zeroizing::new(Vec::with_capacity(self.runs.len() + 2 * (secret.len() - RUN + 1)));
        runs.extend_from_slice(&self.runs);
        for text in [secret.as_bytes(), lower.as_bytes()] {
            runs.extend(text.windows(RUN).map(|w| <[u8; RUN]>::try_from(w).expect("a window of RUN bytes")));
        }
        sort_and_dedup(&mut runs);
        // The old table and filters are wiped as they drop.
        self.runs = runs;
        self.filter = Zeroizing::new(vec![0; (1 << FILTER_BITS) / 64]);
        self.quads = Zeroizing::new(vec![0; QUAD_WORDS]);
        for run in self.runs.iter() {
            let bit = filter_bit(*run);
            self.filter[bit / 64] |= 1 << (bit % 64);
            let lower = lower_ascii(u64::from_le_bytes(*run));
            for shift in [0, 8, 16, 24, 32] {
                let bit = quad_bit((lower >> shift) as u32);
                self.quads[bit / 64] |= 1 << (bit % 64);
            }
        }
    }

    /// Raw secret bytes in the text forms they travel in: hex and base58.
    pub fn add_bytes(&mut self, bytes: &[u8]) {
        // Written into its final size (a String that grows frees its old buffers unwiped).
        let mut hex = Zeroizing::new(String::with_capacity(2 * bytes.len()));
        for b in bytes {
            let _ = write!(hex, "{b:02x}");
        }
        self.add(&hex);
        self.add(&Zeroizing::new(bs58::encode(bytes).into_string()));
    }

    /// An Ed25519 private key: its seed and its 64-byte keypair, in every text form.
    pub fn add_ed25519(&mut self, key: &SigningKey) {
        self.add_bytes(&Zeroizing::new(key.to_bytes())[..]);
        self.add_bytes(&Zeroizing::new(key.to_keypair_bytes())[..]);
    }

    /// A wallet private key as the caller gave it, and its canonical forms.
    pub fn add_wallet_key(&mut self, text: &str) {
        // Parsing it leaves the key on the stack: overwritten after (`wipe::then_wipe_stack`).
        crate::wipe::then_wipe_stack(|| {
            self.add(text);
            let trimmed = crate::keys::text::trim(text);
            let digits = crate::keys::text::strip_0x(trimmed).unwrap_or(trimmed);
            if let Some(bytes) = crate::keys::text::decode_hex(digits) {
                self.add_bytes(&bytes);
            }
            if let Ok(key) = crate::keys::parse_ed25519_secret(text) {
                self.add_ed25519(&key);
            }
        })
    }

    /// One shared table for the secrets of both: `a` itself when the two are one table.
    pub fn joined(a: Arc<Secrets>, b: Arc<Secrets>) -> Arc<Secrets> {
        if Arc::ptr_eq(&a, &b) { a } else { Arc::new(a.with(&b)) }
    }

    /// The secrets of both tables, as one: a new table of the exact size (see `add`).
    pub fn with(&self, other: &Secrets) -> Secrets {
        let mut runs = Zeroizing::new(Vec::with_capacity(self.runs.len() + other.runs.len()));
        runs.extend_from_slice(&self.runs);
        runs.extend_from_slice(&other.runs);
        sort_and_dedup(&mut runs);
        let either = |a: &Zeroizing<Vec<u64>>, b: &Zeroizing<Vec<u64>>| match (a.is_empty(), b.is_empty()) {
            (true, _) => b.clone(),
            (_, true) => a.clone(),
            // An exact-size iterator: collected into one buffer of its final size.
            _ => Zeroizing::new(a.iter().zip(b.iter()).map(|(a, b)| a | b).collect()),
        };
        let (filter, quads) = (either(&self.filter, &other.filter), either(&self.quads, &other.quads));
        let short = self.short.iter().chain(&other.short).cloned().collect();
        Secrets { runs, filter, quads, short }
    }

    fn is_secret_run(&self, window: &[u8]) -> bool {
        let Ok(run) = <[u8; RUN]>::try_from(window) else { return false };
        let bit = filter_bit(run);
        if self.filter[bit / 64] & (1 << (bit % 64)) == 0 {
            return false;
        }
        let lower = run.map(|b| b.to_ascii_lowercase());
        self.runs.binary_search(&run).is_ok() || self.runs.binary_search(&lower).is_ok()
    }

    /// `text` with every run of a secret replaced by [`REDACTED`] (one marker per stretch).
    ///
    /// A venue may echo a secret JSON-escaped (`\u0077\u0073…`), which the byte scan does
    /// not see but whoever reads the text as JSON would: JSON text with a backslash whose
    /// escapes, written out, show a secret is given re-serialised (escapes written out) and
    /// redacted. Any other text keeps its bytes.
    ///
    /// Text that is not JSON but holds JSON escapes — JSON cut short (a body kept only in
    /// part), or quoted in other words (a gateway's `upstream said: {…}`) — is read with its
    /// escapes written out too ([`escapes_written_out`]): whoever decodes those escapes would
    /// otherwise get the secret back. Again the text changes only where that shows a secret.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if !(self.runs.is_empty() && self.short.is_empty()) && text.contains('\\') {
            if let Cow::Owned(written_out) = unescaped(text)
                && let Cow::Owned(redacted) = self.redact_bytes(&written_out)
            {
                return Cow::Owned(redacted);
            }
            if let Some(written_out) = escapes_written_out(text)
                && let Cow::Owned(redacted) = self.redact_bytes(&written_out)
            {
                return Cow::Owned(redacted);
            }
        }
        self.redact_bytes(text)
    }

    /// [`redact`](Self::redact) of the text's bytes as they stand.
    fn redact_bytes<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let bytes = text.as_bytes();
        // Allocated at the first secret found (most texts hold none).
        let mut hidden: Vec<bool> = Vec::new();
        let mut hide = |from: usize, to: usize| {
            if hidden.is_empty() {
                hidden = vec![false; bytes.len()];
            }
            hidden[from..to].fill(true);
        };
        if !self.runs.is_empty() && bytes.len() >= RUN {
            // Each window of RUN bytes holds the aligned block of QUAD bytes at the first
            // multiple of QUAD from its start: the windows around a block the second filter
            // does not rule out are the only ones that may be a secret's (`quad_bit`).
            let last = bytes.len() - RUN;
            // Its fixed size lets the look-ups below go without a bounds check.
            let quads: &[u64; QUAD_WORDS] = self.quads.as_slice().try_into().expect("the filter's size");
            let ruled_out = |lower: u32| {
                let bit = quad_bit(lower);
                quads[bit / 64] & (1 << (bit % 64)) == 0
            };
            let mut look_around = |block: usize| {
                for start in block.saturating_sub(RUN - QUAD)..=block.min(last) {
                    if self.is_secret_run(&bytes[start..start + RUN]) {
                        hide(start, start + RUN);
                    }
                }
            };
            // Two blocks per 8 bytes, lowered together; then the last block, if any.
            let eights = bytes.chunks_exact(2 * QUAD);
            let tail = eights.remainder().len();
            for (n, eight) in eights.enumerate() {
                let lower = lower_ascii(u64::from_le_bytes(eight.try_into().expect("8 bytes")));
                for half in [0, 1] {
                    if !ruled_out((lower >> (32 * half)) as u32) {
                        look_around(2 * QUAD * n + QUAD * half);
                    }
                }
            }
            if tail >= QUAD {
                let block = bytes.len() - tail;
                let quad: [u8; QUAD] = bytes[block..block + QUAD].try_into().expect("QUAD bytes");
                if !ruled_out(lower_ascii(u64::from(u32::from_le_bytes(quad))) as u32) {
                    look_around(block);
                }
            }
        }
        // A secret shorter than a run is hidden where it stands as a word of its own: a
        // token "t" must not take every letter t out of a message.
        let word_char = |b: u8| b.is_ascii_alphanumeric() || b"-_.~+/=".contains(&b);
        for short in &self.short {
            for (start, _) in text.match_indices(short.as_str()) {
                let end = start + short.len();
                let alone =
                    (start == 0 || !word_char(bytes[start - 1])) && (end == bytes.len() || !word_char(bytes[end]));
                if alone {
                    hide(start, end);
                }
            }
        }
        if hidden.is_empty() {
            return Cow::Borrowed(text);
        }
        // Secrets are ASCII, so a hidden stretch starts and ends on character boundaries;
        // a stretch that does not (a non-ASCII secret) is widened to the whole characters.
        let mut out = String::with_capacity(text.len());
        let mut in_stretch = false;
        for (i, c) in text.char_indices() {
            if hidden[i..i + c.len_utf8()].iter().any(|h| *h) {
                if !in_stretch {
                    out.push_str(REDACTED);
                    in_stretch = true;
                }
            } else {
                out.push(c);
                in_stretch = false;
            }
        }
        Cow::Owned(out)
    }

    /// The error with its message and venue body redacted.
    pub fn redact_error(&self, error: Error) -> Error {
        error.map_texts(|text| match self.redact(text) {
            Cow::Borrowed(_) => None,
            Cow::Owned(redacted) => Some(redacted),
        })
    }
}

/// Venue text on its way to the caller (a REST body, a frame passed on, an excerpt, a close
/// reason), as redaction must see it. The scan reads bytes, so a secret the venue sends
/// JSON-escaped (`\u0077\u0073…`) would pass it and reach whoever reads the text as JSON:
/// JSON with a backslash is re-serialised, which writes every escaped character out as
/// itself. JSON without one has no escape and is returned as it is, and so is text that is
/// not JSON (nobody decodes it).
pub(crate) fn unescaped(text: &str) -> Cow<'_, str> {
    if !text.contains('\\') {
        return Cow::Borrowed(text);
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value) => Cow::Owned(value.to_string()),
        Err(_) => Cow::Borrowed(text),
    }
}

/// `text` as whoever decodes its JSON escapes reads it: JSON re-serialised ([`unescaped`]),
/// any other text with its escapes written out ([`escapes_written_out`]).
pub(crate) fn written_out(text: &str) -> Cow<'_, str> {
    match unescaped(text) {
        Cow::Borrowed(text) => escapes_written_out(text).map_or(Cow::Borrowed(text), Cow::Owned),
        written_out => written_out,
    }
}

/// Text that is not JSON with its JSON string escapes written out wherever they stand
/// (`\u0077` → `w`, a surrogate pair → its character, a lone surrogate → U+FFFD, `\"`,
/// `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`); `None` when it holds none. What a reader
/// that decodes the escapes of cut or embedded JSON would see, for the redaction's scan.
fn escapes_written_out(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let hex4 = |at: usize| -> Option<u32> {
        let digits = text.get(at..at + 4)?;
        digits.bytes().all(|b| b.is_ascii_hexdigit()).then(|| u32::from_str_radix(digits, 16).ok()).flatten()
    };
    let mut out = String::with_capacity(text.len());
    let (mut i, mut copied, mut changed) = (0, 0, false);
    while i < bytes.len() {
        if bytes[i] != b'\\' || i + 1 >= bytes.len() {
            i += 1;
            continue;
        }
        let (written, len) = match bytes[i + 1] {
            b'u' => match hex4(i + 2) {
                Some(high @ 0xd800..=0xdbff) => match (bytes.get(i + 6..i + 8), hex4(i + 8)) {
                    (Some(b"\\u"), Some(low @ 0xdc00..=0xdfff)) => {
                        (char::from_u32(0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)), 12)
                    }
                    _ => (Some('\u{fffd}'), 6),
                },
                Some(code) => (Some(char::from_u32(code).unwrap_or('\u{fffd}')), 6),
                None => (None, 2),
            },
            b'"' => (Some('"'), 2),
            b'\\' => (Some('\\'), 2),
            b'/' => (Some('/'), 2),
            b'b' => (Some('\u{8}'), 2),
            b'f' => (Some('\u{c}'), 2),
            b'n' => (Some('\n'), 2),
            b'r' => (Some('\r'), 2),
            b't' => (Some('\t'), 2),
            _ => (None, 2),
        };
        if let Some(c) = written {
            out.push_str(&text[copied..i]);
            out.push(c);
            copied = i + len;
            changed = true;
        }
        i += len;
    }
    changed.then(|| {
        out.push_str(&text[copied..]);
        out
    })
}

/// The secrets in play for one call, built on first use: only a call that fails, and whose
/// failure quotes the venue, pays for them. Every function that turns a venue answer into an
/// error takes one and redacts the answer before quoting or keeping it.
///
/// Shared by threads (`Sync`): cancel_all's confirmation runs requests of one call on several
/// threads, and any of them may fail. The table is built once whichever fails first.
pub struct CallSecrets<'a> {
    make: &'a (dyn Fn() -> Arc<Secrets> + Sync),
    built: std::sync::OnceLock<Arc<Secrets>>,
}

impl<'a> CallSecrets<'a> {
    pub fn new(make: &'a (dyn Fn() -> Arc<Secrets> + Sync)) -> CallSecrets<'a> {
        CallSecrets { make, built: std::sync::OnceLock::new() }
    }

    /// For a call that holds no secret (the clock sync).
    pub fn none() -> CallSecrets<'static> {
        CallSecrets { make: &Arc::<Secrets>::default, built: std::sync::OnceLock::new() }
    }

    fn get(&self) -> &Secrets {
        self.built.get_or_init(self.make)
    }

    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.get().redact(text)
    }

    pub fn redact_error(&self, error: Error) -> Error {
        self.get().redact_error(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_tables_joined_hide_the_secrets_of_both() {
        let (mut a, mut b) = (Secrets::new(), Secrets::new());
        a.add("first-token-0123456789");
        b.add("second-token-9876543210");
        b.add("short");
        let both = a.with(&b);
        let text = "first-token-0123456789 second-token-9876543210 short kept";
        assert_eq!(both.redact(text), "<redacted> <redacted> <redacted> kept");
        assert_eq!(Secrets::new().with(&a).redact(text), a.redact(text));
        assert_eq!(a.with(&Secrets::new()).redact(text), a.redact(text));
    }

    #[test]
    fn json_text_is_unescaped_only_when_it_has_an_escape() {
        let plain = r#"{"b":1,"a":"x"}"#;
        assert!(matches!(unescaped(plain), Cow::Borrowed(text) if text == plain));
        assert_eq!(unescaped(r#"{"t":"\u0077s-\u0074ok","q":"a\"b"}"#), r#"{"q":"a\"b","t":"ws-tok"}"#);
        assert_eq!(unescaped(r#"not "json" \u0077"#), r#"not "json" \u0077"#);
    }

    #[test]
    fn a_secret_echoed_json_escaped_is_redacted_once_written_out() {
        let mut s = Secrets::new();
        s.add("tok-SECRET-0123456789abcdef");
        let escaped: String = "tok-SECRET-0123456789abcdef".chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
        let body = format!(r#"{{"code":401,"message":"bad token {escaped}"}}"#);
        assert_eq!(s.redact(&body), r#"{"code":401,"message":"bad token <redacted>"}"#);
        // Escapes that hide no secret: the text keeps its bytes (and its key order).
        let plain = r#"{"z":"a\"b","a":"\u0041"}"#;
        assert_eq!(s.redact(plain), plain);
        // Not JSON, and no secret once its escapes are written out: kept as it is.
        assert_eq!(s.redact(r"no \u0074ok here"), r"no \u0074ok here");
        // Not JSON (cut short, or JSON quoted in other words): its escapes are read too.
        let cut = &body[..body.len() - 2];
        assert_eq!(s.redact(cut), r#"{"code":401,"message":"bad token <redacted>"#);
        let quoted = format!("upstream said: {body} (502)");
        assert_eq!(s.redact(&quoted), r#"upstream said: {"code":401,"message":"bad token <redacted>"} (502)"#);
        let pair = format!(r#"x \ud83d\ude00 \ud83d {escaped}"#);
        assert_eq!(s.redact(&pair), "x \u{1f600} \u{fffd} <redacted>");
    }

    #[test]
    fn escapes_in_any_text_are_read_without_a_panic() {
        // Hostile text: escapes cut anywhere, next to multi-byte characters.
        let pieces = ["\\", "u", "d83d", "\\ude00", "00", "7", "é", "😀", "\"", "x", "\\u00e9", "n"];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut s = Secrets::new();
        s.add("tok-SECRET-0123456789abcdef");
        for _ in 0..20_000 {
            let text: String = (0..12)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    pieces[(state % pieces.len() as u64) as usize]
                })
                .collect();
            let _ = escapes_written_out(&text);
            let _ = s.redact(&text);
        }
    }

    #[test]
    fn whole_and_partial_echoes_are_redacted() {
        let mut s = Secrets::new();
        s.add("tok-SECRET-0123456789abcdef");
        assert_eq!(s.redact("no secret here"), "no secret here");
        assert_eq!(s.redact("bad token tok-SECRET-0123456789abcdef!"), "bad token <redacted>!");
        assert_eq!(s.redact("cut: 0123456789ab…"), "cut: <redacted>…", "a run of 8 bytes of it is enough");
        assert_eq!(s.redact("short 0123456 stays"), "short 0123456 stays", "7 bytes say nothing");
        assert_eq!(s.redact("x tok-SECRET-0123456789abcdef y tok-SECRET-01"), "x <redacted> y <redacted>");
    }

    #[test]
    fn hex_in_either_case_and_key_forms() {
        let key = SigningKey::from_bytes(&[7u8; 32]);
        let mut s = Secrets::new();
        s.add_ed25519(&key);
        let hex: String = key.to_bytes().iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(s.redact(&format!("key {hex}.")), "key <redacted>.");
        let pair = bs58::encode(key.to_keypair_bytes()).into_string();
        assert_eq!(s.redact(&format!("[{pair}]")), "[<redacted>]");
        let seed = bs58::encode(key.to_bytes()).into_string();
        assert_eq!(s.redact(&format!("é{seed}é")), "é<redacted>é", "non-ASCII neighbours are kept");
    }

    #[test]
    fn the_filter_never_rules_out_a_run_of_a_secret() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut secrets = Secrets::new();
        let mut texts = Vec::new();
        for _ in 0..50 {
            let text: String = (0..40)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    b"ABCDEFabcdef0123456789-_."[(state % 25) as usize] as char
                })
                .collect();
            secrets.add(&text);
            texts.push(text);
        }
        for text in &texts {
            for start in 0..=text.len() - RUN {
                for run in [text[start..start + RUN].to_owned(), text[start..start + RUN].to_ascii_uppercase()] {
                    assert_eq!(secrets.redact(&format!("<{run}>")), "<<redacted>>", "{run}");
                }
            }
        }
        assert_eq!(secrets.redact("nothing here at all, none"), "nothing here at all, none");
    }

    #[test]
    fn eight_bytes_are_lowered_as_each_byte_is() {
        for b in 0..=255u8 {
            for at in 0..8 {
                let mut bytes = [b'Q', b'r', 0xc3, b'7', b'Z', b'@', b'[', 0xff];
                bytes[at] = b;
                let lowered = bytes.map(|b| b.to_ascii_lowercase());
                assert_eq!(lower_ascii(u64::from_le_bytes(bytes)), u64::from_le_bytes(lowered), "{bytes:?}");
            }
        }
    }

    /// The scan as it was, window by window: what the blocks' filter must find.
    fn every_window(secrets: &Secrets, text: &str) -> Vec<usize> {
        (0..=text.len().saturating_sub(RUN))
            .filter(|&start| text.len() >= RUN && secrets.is_secret_run(&text.as_bytes()[start..start + RUN]))
            .collect()
    }

    #[test]
    fn the_blocks_filter_finds_a_run_at_every_offset_as_the_window_scan_does() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n) as usize
        };
        let token = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiIweDEyMyIsImV4cCI6MTcwMDAwMDAwMH0.Sig-_x";
        let mut secrets = Secrets::new();
        secrets.add(token);
        let alphabet = b"0123456789.\",[]{}:abcXYZ-_";
        for round in 0..4_000 {
            // Market data with a piece of the token (8 bytes or more, in either case) at any
            // offset, or none.
            let mut text: String = (0..random(60)).map(|_| alphabet[random(alphabet.len() as u64)] as char).collect();
            if round % 4 != 0 {
                let from = random((token.len() - RUN) as u64);
                let to = (from + RUN + random(12)).min(token.len());
                let piece =
                    if round % 3 == 0 { token[from..to].to_ascii_uppercase() } else { token[from..to].to_owned() };
                text.insert_str(random(text.len() as u64 + 1), &piece);
            }
            text.extend((0..random(20)).map(|_| alphabet[random(alphabet.len() as u64)] as char));
            let windows = every_window(&secrets, &text);
            let redacted = secrets.redact_bytes(&text);
            assert_eq!(windows.is_empty(), matches!(redacted, Cow::Borrowed(_)), "{text}: {windows:?}");
            if !windows.is_empty() {
                // Exactly the bytes of those windows are hidden.
                let mut hidden = vec![false; text.len()];
                windows.iter().for_each(|&w| hidden[w..w + RUN].fill(true));
                let mut expected = String::new();
                for (i, c) in text.char_indices() {
                    match (hidden[i], i > 0 && hidden[i - 1]) {
                        (true, false) => expected.push_str(REDACTED),
                        (true, true) => {}
                        (false, _) => expected.push(c),
                    }
                }
                assert_eq!(redacted, expected, "{text}");
            }
        }
    }

    #[test]
    fn short_secrets_are_replaced_whole() {
        let mut s = Secrets::new();
        s.add("ab12");
        assert_eq!(s.redact("token ab12 refused"), "token <redacted> refused");
        assert_eq!(s.redact("xab12 ab12x ab12-"), "xab12 ab12x ab12-", "only where it stands alone");
        let mut t = Secrets::new();
        t.add("t");
        assert_eq!(t.redact("request not sent: t"), "request not sent: <redacted>");
    }
}
