//! Verification of the sign-in challenge (`signedData`): an ES256 compact JWS checked
//! against the venue's JWK set, then its claims checked against what the session expects.
//!
//! A pure function of its inputs (including the clock), so every rejection is testable.
//! The signature is verified over the exact bytes received (`header.payload` as sent),
//! never over re-encoded JSON. Header and payload are read with `strict_json`: a member
//! name given twice anywhere is refused before any claim is read. The `message` the wallet
//! will sign is parsed (`signin_message`) and must say what the claims say.

use crate::error::{Error, Result};
use crate::wallet::Chain;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::{Map, Value};

/// How far in the future `iat` may be before the challenge is refused (clock skew allowance).
pub const MAX_IAT_AHEAD_SECS: i64 = 60;

/// An EC P-256 verification key from the venue's JWK set.
#[derive(Clone, Debug)]
pub struct CertKey {
    kid: Option<String>,
    x: String,
    y: String,
}

/// The venue's certificate set (`GET /v1/offchain/certs`): only EC P-256 signing keys are kept.
#[derive(Clone, Debug, Default)]
pub struct CertSet {
    keys: Vec<CertKey>,
}

impl CertSet {
    /// Parse `{"keys":[…]}`. Keys of other types, curves, algorithms or uses are ignored;
    /// a set with no usable key is an error (nothing could ever verify).
    pub fn parse(json: &str) -> Result<CertSet> {
        let doc: Value = serde_json::from_str(json)
            .map_err(|e| Error::bad_response(format!("the certs document is not valid JSON: {e}")))?;
        let keys = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::bad_response("the certs document has no \"keys\" array (expected a JWK set)"))?;
        let keys: Vec<CertKey> = keys.iter().filter_map(usable_key).collect();
        if keys.is_empty() {
            return Err(Error::bad_response("the certs document has no EC P-256 signing key"));
        }
        Ok(CertSet { keys })
    }

    pub fn has_kid(&self, kid: &str) -> bool {
        self.keys.iter().any(|k| k.kid.as_deref() == Some(kid))
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

fn usable_key(jwk: &Value) -> Option<CertKey> {
    let field = |name: &str| jwk.get(name).and_then(Value::as_str);
    let is_p256 = field("kty") == Some("EC") && field("crv") == Some("P-256");
    let alg_ok = matches!(field("alg"), None | Some("ES256"));
    let use_ok = matches!(field("use"), None | Some("sig"));
    if !(is_p256 && alg_ok && use_ok) {
        return None;
    }
    Some(CertKey { kid: field("kid").map(str::to_owned), x: field("x")?.to_owned(), y: field("y")?.to_owned() })
}

/// What the session expects the challenge to say.
#[derive(Clone, Copy, Debug)]
pub struct Expected<'a> {
    pub request_id: &'a str,
    pub chain: Chain,
    pub address: &'a str,
    /// Current time, Unix seconds (injectable for tests).
    pub now_secs: i64,
}

/// What the caller pins beyond the session: the sign-in message's `domain` and `uri` must
/// be exactly these when set (client options `expected_domain`, `expected_uri`).
/// `sign_in_host`: the host the challenge came from (`base_url`'s, lower case) when it is not
/// loopback; then an unpinned domain must be that host or a parent domain of it, and an
/// unpinned URI's host that site or the domain's (`site_binding.rs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Pins<'a> {
    pub domain: Option<&'a str>,
    pub uri: Option<&'a str>,
    pub sign_in_host: Option<&'a str>,
}

/// A challenge that passed every check.
#[derive(Clone, Debug)]
pub struct VerifiedChallenge {
    /// The JWT exactly as received, sent back unchanged at login.
    pub signed_data: String,
    /// The decoded payload JSON text (segment two, base64url-decoded, unchanged).
    pub payload_json: String,
    /// The text the wallet must sign.
    pub message: String,
    pub exp: i64,
    pub iat: i64,
}

/// Why a challenge was refused. `UnknownKid` is separate so the client can refetch certs once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The header names a key id the certs do not contain.
    UnknownKid(String),
    /// No key that could have signed verifies the signature: without a `kid`, no key of the
    /// set; with one, not the set's key of that id (the venue may have rotated the key
    /// material under the same id).
    NoMatchingKey(String),
    /// Anything else (malformed, wrong alg, claims).
    Other(String),
}

impl Rejection {
    pub fn message(&self) -> String {
        Error::from(self.clone()).message().to_owned()
    }
}

impl From<Rejection> for Error {
    fn from(r: Rejection) -> Error {
        match r {
            Rejection::UnknownKid(kid) => Error::verification(format!(
                "the challenge is signed with key id \"{}\", which the venue's certs do not contain",
                crate::error::excerpt(&kid)
            )),
            Rejection::NoMatchingKey(message) | Rejection::Other(message) => Error::verification(message),
        }
    }
}

fn reject<T>(message: impl Into<String>) -> std::result::Result<T, Rejection> {
    Err(Rejection::Other(message.into()))
}

/// Verify `signed_data` against `certs` and check its claims against `expected`.
pub fn verify(
    signed_data: &str,
    certs: &CertSet,
    expected: &Expected<'_>,
) -> std::result::Result<VerifiedChallenge, Rejection> {
    verify_pinned(signed_data, certs, expected, &Pins::default())
}

/// [`verify`], and the message's domain and URI must also be the pinned ones.
pub fn verify_pinned(
    signed_data: &str,
    certs: &CertSet,
    expected: &Expected<'_>,
    pins: &Pins<'_>,
) -> std::result::Result<VerifiedChallenge, Rejection> {
    let signed_data = signed_data.trim();
    let segments: Vec<&str> = signed_data.split('.').collect();
    let [header_b64, payload_b64, signature_b64] = segments[..] else {
        return reject(format!(
            "the challenge is not a compact JWS (expected 3 dot-separated segments, got {})",
            segments.len()
        ));
    };
    let header = decode_json_segment(header_b64, "header")?;
    check_header(&header)?;
    let payload_bytes = decode_segment(payload_b64, "payload")?;
    let signature = decode_segment(signature_b64, "signature")?;
    if signature.len() != 64 {
        return reject(format!("the challenge's ES256 signature is {} bytes; expected 64 (r || s)", signature.len()));
    }

    let kid = match header.get("kid") {
        None => None,
        Some(Value::String(k)) => Some(k.as_str()),
        Some(_) => return reject("the challenge header's \"kid\" is not a string"),
    };
    let candidates: Vec<&CertKey> = match kid {
        Some(kid) => certs.keys.iter().filter(|k| k.kid.as_deref() == Some(kid)).collect(),
        None => certs.keys.iter().collect(),
    };
    if candidates.is_empty() {
        return match kid {
            Some(kid) => Err(Rejection::UnknownKid(kid.to_owned())),
            None => reject("the venue's certs contain no EC P-256 key to verify the challenge with"),
        };
    }
    let signing_input = &signed_data.as_bytes()[..header_b64.len() + 1 + payload_b64.len()];
    if !candidates.iter().any(|key| signature_matches(key, signing_input, signature_b64)) {
        return Err(match kid {
            Some(kid) => Rejection::NoMatchingKey(format!(
                "the challenge's ES256 signature does not verify with certs key {kid:?}"
            )),
            None => Rejection::NoMatchingKey(format!(
                "the challenge's ES256 signature does not verify with any of the {} certs keys",
                candidates.len()
            )),
        });
    }

    let payload_json = String::from_utf8(payload_bytes).or_else(|_| reject("the challenge payload is not UTF-8"))?;
    let payload = json_object(payload_json.as_bytes(), "payload")?;
    let claims = check_claims(&payload, expected, pins)?;
    Ok(VerifiedChallenge { signed_data: signed_data.to_owned(), payload_json, ..claims })
}

fn check_header(header: &Map<String, Value>) -> std::result::Result<(), Rejection> {
    match header.get("alg") {
        Some(Value::String(alg)) if alg == "ES256" => {}
        Some(Value::String(alg)) => {
            return reject(format!(
                "the challenge uses alg \"{}\"; only ES256 is accepted",
                crate::error::excerpt(alg)
            ));
        }
        _ => return reject("the challenge header has no \"alg\" string"),
    }
    if header.contains_key("crit") {
        // RFC 7515 §4.1.11: extensions we do not understand must make the JWS invalid.
        return reject("the challenge header has a \"crit\" extension list, which this client does not support");
    }
    Ok(())
}

fn signature_matches(key: &CertKey, signing_input: &[u8], signature_b64: &str) -> bool {
    let Ok(decoding) = DecodingKey::from_ec_components(&key.x, &key.y) else {
        return false;
    };
    jsonwebtoken::crypto::verify(signature_b64, signing_input, &decoding, Algorithm::ES256).unwrap_or(false)
}

fn check_claims(
    payload: &Map<String, Value>,
    expected: &Expected<'_>,
    pins: &Pins<'_>,
) -> std::result::Result<VerifiedChallenge, Rejection> {
    let exp = numeric_claim(payload, "exp")?;
    let iat = numeric_claim(payload, "iat")?;
    if exp <= expected.now_secs {
        return reject(format!("the challenge has expired (exp {exp}, now {})", expected.now_secs));
    }
    if iat > expected.now_secs + MAX_IAT_AHEAD_SECS {
        return reject(format!(
            "the challenge's iat {iat} is more than {MAX_IAT_AHEAD_SECS} s ahead of now ({}); check the clock",
            expected.now_secs
        ));
    }
    let request_id = string_claim(payload, "requestId")?;
    if request_id != expected.request_id {
        return reject(format!(
            "the challenge's requestId \"{}\" is not this session's key \"{}\"",
            crate::error::excerpt(request_id),
            crate::error::excerpt(expected.request_id)
        ));
    }
    let address = string_claim(payload, "address")?;
    if !expected.chain.same_address(address, expected.address) {
        return reject(format!(
            "the challenge's address \"{}\" is not the wallet {} ({} addresses)",
            crate::error::excerpt(address),
            crate::wallet::shown_address(expected.address),
            expected.chain
        ));
    }
    let message = string_claim(payload, "message")?;
    if message.is_empty() {
        return reject("the challenge's message is empty");
    }
    check_message(payload, message, expected, pins)?;
    Ok(VerifiedChallenge {
        signed_data: String::new(),
        payload_json: String::new(),
        message: message.to_owned(),
        exp,
        iat,
    })
}

/// The message the wallet will sign says what the claims say: domain, address, statement,
/// URI, version, chain ID, nonce, issued-at and request ID, each equal to its claim (the
/// claims are signed by the venue's key; the message is what the wallet shows and signs).
fn check_message(
    payload: &Map<String, Value>,
    text: &str,
    expected: &Expected<'_>,
    pins: &Pins<'_>,
) -> std::result::Result<(), Rejection> {
    let message = crate::signin_message::parse(text)
        .or_else(|why| reject(format!("the challenge's message is not a sign-in message: {why}")))?;
    let account = match expected.chain {
        Chain::Bsc => crate::signin_message::Account::Ethereum,
        Chain::Solana => crate::signin_message::Account::Solana,
    };
    if message.account != account {
        return reject(format!(
            "the challenge's message signs in with {} account, not {} one",
            message.account.with_article(),
            account.with_article()
        ));
    }
    if let Some(scheme) = message.scheme
        && scheme != "https"
    {
        return reject(format!(
            "the challenge's message names scheme \"{}\", not https",
            crate::error::excerpt(scheme)
        ));
    }
    let domain = string_claim(payload, "domain")?;
    let uri = string_claim(payload, "uri")?;
    for (name, pinned, claimed) in [("domain", pins.domain, domain), ("uri", pins.uri, uri)] {
        if let Some(pinned) = pinned
            && pinned != claimed
        {
            return reject(format!(
                "the challenge's {name} \"{}\" is not the expected_{name} \"{}\"",
                crate::error::excerpt(claimed),
                crate::error::excerpt(pinned)
            ));
        }
    }
    if !expected.chain.same_address(message.address, expected.address) {
        return reject(format!(
            "the challenge's message is for wallet \"{}\", not {}",
            crate::error::excerpt(message.address),
            crate::wallet::shown_address(expected.address)
        ));
    }
    let statement = match payload.get("statement") {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return reject("the challenge's \"statement\" claim is not a string"),
    };
    let version = text_claim(payload, "version")?;
    let chain_id = text_claim(payload, "chainId")?;
    let fields = [
        ("domain", Some(message.domain), Some(domain)),
        ("statement", message.statement, statement),
        ("URI", message.uri, Some(uri)),
        ("version", message.version, Some(version.as_str())),
        ("chain ID", message.chain_id, Some(chain_id.as_str())),
        ("nonce", message.nonce, Some(string_claim(payload, "nonce")?)),
        ("issued-at", message.issued_at, Some(string_claim(payload, "issuedAt")?)),
        ("request ID", message.request_id, Some(string_claim(payload, "requestId")?)),
    ];
    for (name, said, claimed) in fields {
        if said != claimed {
            let show =
                |v: Option<&str>| v.map_or("nothing".to_owned(), |v| format!("\"{}\"", crate::error::excerpt(v)));
            return reject(format!(
                "the challenge's message gives {name} {} where its claims give {}",
                show(said),
                show(claimed)
            ));
        }
    }
    // The message says what the claims say (its text is ASCII-checked): now which site.
    crate::site_binding::check(domain, uri, pins).or_else(reject)?;
    Ok(())
}

/// A claim that is a string, or a number written as its decimal text (`chainId` is a
/// number in the venue's payload; a name on some Solana conventions).
fn text_claim(payload: &Map<String, Value>, name: &str) -> std::result::Result<String, Rejection> {
    match payload.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) if n.is_u64() => Ok(n.to_string()),
        Some(_) => reject(format!("the challenge's {name:?} claim is not a string or an integer")),
        None => reject(format!("the challenge has no {name:?} claim")),
    }
}

fn numeric_claim(payload: &Map<String, Value>, name: &str) -> std::result::Result<i64, Rejection> {
    match payload.get(name) {
        Some(Value::Number(n)) => match n.as_i64().or_else(|| n.as_f64().map(|f| f.floor() as i64)) {
            Some(v) => Ok(v),
            None => reject(format!("the challenge's {name:?} claim is not a usable number")),
        },
        Some(_) => reject(format!("the challenge's {name:?} claim is not a number")),
        None => reject(format!("the challenge has no {name:?} claim")),
    }
}

fn string_claim<'p>(payload: &'p Map<String, Value>, name: &str) -> std::result::Result<&'p str, Rejection> {
    match payload.get(name) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => reject(format!("the challenge's {name:?} claim is not a string")),
        None => reject(format!("the challenge has no {name:?} claim")),
    }
}

fn decode_segment(segment: &str, name: &str) -> std::result::Result<Vec<u8>, Rejection> {
    if segment.is_empty() {
        return reject(format!("the challenge's {name} segment is empty"));
    }
    URL_SAFE_NO_PAD
        .decode(segment)
        .or_else(|_| reject(format!("the challenge's {name} segment is not unpadded base64url")))
}

fn decode_json_segment(segment: &str, name: &str) -> std::result::Result<Map<String, Value>, Rejection> {
    json_object(&decode_segment(segment, name)?, name)
}

/// A JSON object with no member name given twice at any depth (`strict_json`).
fn json_object(bytes: &[u8], name: &str) -> std::result::Result<Map<String, Value>, Rejection> {
    match crate::strict_json::parse(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => reject(format!("the challenge's {name} is not a JSON object")),
        Err(why) => reject(format!("the challenge's {name} is not a JSON object: {why}")),
    }
}
