//! Body signature v1: the `x-request-*` headers and the Ed25519 check over
//! `"{version},{id},{timestamp},{raw body}"`.
//!
//! As the live venue (issue 17): any non-empty `x-request-id` is accepted (clients traded
//! live with one constant id; the docs call it a random string), a missing
//! `x-request-sign-version` is taken as `v1` (a present value other than `v1` is refused),
//! and a timestamp outside the window is HTTP 403 "signature has expired". Strict mode
//! requires the version header and a UUID id. A missing header is HTTP 400; a signature
//! that is not standard base64 of 64 bytes is HTTP 403 "invalid signature: …", as any bad
//! signature (venue facts: "403 (e.g. bad signature)").

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{Signature, VerifyingKey};

use super::http::Incoming;

/// The signature headers of one request, validated for shape and freshness.
pub(crate) struct SignedHeaders<'a> {
    /// As received, or `v1` when the header is absent.
    pub version: &'a str,
    /// As received (the signed text uses it verbatim).
    pub id: &'a str,
    pub timestamp: &'a str,
    pub signature: Signature,
}

/// Why the headers were refused: the status and the message.
pub(crate) type Refusal = (u16, String);

/// Checks presence and shape of the headers and that the timestamp (decimal milliseconds)
/// lies within `window_ms` either side of the venue clock.
pub(crate) fn read_headers(
    inc: &Incoming,
    now_ms: i64,
    window_ms: i64,
    strict: bool,
) -> Result<SignedHeaders<'_>, Refusal> {
    read_headers_with(|name| inc.header(name), now_ms, window_ms, strict)
}

/// `read_headers` over any header source (the ws-api's `header` object): `header(name)` gives
/// the one value of a lower-case header name, or why it cannot.
pub(crate) fn read_headers_with<'a>(
    header: impl Fn(&str) -> Result<Option<&'a str>, String>,
    now_ms: i64,
    window_ms: i64,
    strict: bool,
) -> Result<SignedHeaders<'a>, Refusal> {
    let bad = |m: String| (400, m);
    let get = |name: &str| -> Result<Option<&'a str>, Refusal> { header(name).map_err(bad) };
    let need = |name: &str| -> Result<&'a str, Refusal> {
        get(name)?.filter(|v| !v.is_empty()).ok_or_else(|| bad(format!("missing header {name}")))
    };
    let version = match get("x-request-sign-version")? {
        Some(v) => v,
        None if strict => return Err(bad("missing header x-request-sign-version (strict mode)".into())),
        None => "v1",
    };
    if version != "v1" {
        return Err(bad(format!("unsupported x-request-sign-version {version:?}: only v1")));
    }
    let id = need("x-request-id")?;
    // Strict: only the hyphenated 8-4-4-4-12 form, so one UUID has one spelling for the
    // duplicate check.
    if strict && (id.len() != 36 || uuid::Uuid::try_parse(id).is_err()) {
        return Err(bad("x-request-id must be a UUID (strict mode)".into()));
    }
    let timestamp = need("x-request-timestamp")?;
    let ts: i64 = timestamp
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| timestamp.parse().ok())
        .flatten()
        .ok_or_else(|| bad("x-request-timestamp must be decimal milliseconds since the Unix epoch".into()))?;
    if ts.abs_diff(now_ms) > window_ms.unsigned_abs() {
        return Err((
            403,
            format!(
                "signature has expired: x-request-timestamp {ts} is outside ±{window_ms} ms of the venue clock {now_ms}"
            ),
        ));
    }
    // Missing: 400. Present but not a signature: 403, as the venue answers a bad signature.
    let raw = STANDARD.decode(need("x-request-signature")?).ok().filter(|r| r.len() == 64).ok_or_else(|| {
        (403, "invalid signature: x-request-signature must be standard base64 of 64 bytes".to_owned())
    })?;
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
