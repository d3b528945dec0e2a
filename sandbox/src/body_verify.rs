//! Body signature v1: the four `x-request-*` headers and the Ed25519 check over
//! `"{version},{id},{timestamp},{raw body}"`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{Signature, VerifyingKey};

use super::http::Incoming;

/// The signature headers of one request, validated for shape and freshness.
pub(crate) struct SignedHeaders<'a> {
    pub version: &'a str,
    /// As received (the signed text uses it verbatim).
    pub id: &'a str,
    pub timestamp: &'a str,
    pub signature: Signature,
}

/// Checks presence and shape of the four headers and that the timestamp (decimal
/// milliseconds) lies within `window_ms` either side of the sandbox clock. Any failure is
/// the client's malformed request: HTTP 400.
pub(crate) fn read_headers(inc: &Incoming, now_ms: i64, window_ms: i64) -> Result<SignedHeaders<'_>, String> {
    let get =
        |name: &str| -> Result<&str, String> { inc.header(name)?.ok_or_else(|| format!("missing header {name}")) };
    let version = get("x-request-sign-version")?;
    if version != "v1" {
        return Err("x-request-sign-version must be v1".into());
    }
    let id = get("x-request-id")?;
    // Only the hyphenated 8-4-4-4-12 form: braced, URN and bare-hex spellings of one UUID
    // would otherwise be distinct texts for the replay check.
    if id.len() != 36 || uuid::Uuid::try_parse(id).is_err() {
        return Err("x-request-id must be a UUID".into());
    }
    let timestamp = get("x-request-timestamp")?;
    let ts: i64 = timestamp
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| timestamp.parse().ok())
        .flatten()
        .ok_or("x-request-timestamp must be decimal milliseconds since the Unix epoch")?;
    if (ts - now_ms).abs() > window_ms {
        return Err(format!("x-request-timestamp {ts} is outside ±{window_ms} ms of the venue clock {now_ms}"));
    }
    let raw = STANDARD
        .decode(get("x-request-signature")?)
        .ok()
        .filter(|r| r.len() == 64)
        .ok_or("x-request-signature must be standard base64 of 64 bytes")?;
    let signature = Signature::from_bytes(&raw.try_into().expect("length checked"));
    Ok(SignedHeaders { version, id, timestamp, signature })
}

/// Strict Ed25519 verification of the v1 text over the body bytes exactly as received.
pub(crate) fn verify(key: &VerifyingKey, h: &SignedHeaders<'_>, body: &[u8]) -> bool {
    let mut text = Vec::with_capacity(h.version.len() + h.id.len() + h.timestamp.len() + 3 + body.len());
    for part in [h.version.as_bytes(), b",", h.id.as_bytes(), b",", h.timestamp.as_bytes(), b","] {
        text.extend_from_slice(part);
    }
    text.extend_from_slice(body);
    key.verify_strict(&text, &h.signature).is_ok()
}
