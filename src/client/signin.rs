//! The sign-in flows: prepare-signin (with challenge verification), login, and both in one
//! call with an in-process wallet key.

use super::answers::{self, refusal, venue_reason};
use super::{Client, guarded, json_object, require_2xx};
use crate::challenge::{self, Expected, Pins, Rejection};
use crate::endpoints::answer::Refusal;
use crate::error::{Code, Error, Result};
use crate::redact::CallSecrets;
use crate::session::{DEFAULT_TOKEN_SECONDS, Login, PendingSignin, Session};
use crate::wallet::{self, Chain};
use serde_json::{Value, json};
use ureq::http::Method;
use zeroize::Zeroizing;

/// The longest token lifetime a caller may ask for (10 years); beyond it is surely a bug.
pub const MAX_EXPIRES_SECONDS: i64 = 10 * 365 * 86_400;

impl Client {
    /// A JSON POST to the sign-in host (prepare-signin, login).
    fn post_to_auth(&self, url: &str, body: &[u8]) -> Result<super::transport::Reply> {
        self.send(self.base_host, Method::POST, url, &[("content-type", "application/json")], Some(body))
    }

    /// POST prepare-signin, verify the challenge, keep it in the session (with those of other
    /// sign-ins under way on it) for `login`; returns the decoded payload JSON (the wallet
    /// signs its `message`).
    pub fn prepare_signin(&self, session: &Session, chain: Chain, address: &str) -> Result<String> {
        guarded(session, None, |secrets| {
            let pending = self.prepare_and_verify(session, chain, address, secrets)?;
            let payload = pending.challenge.payload_json.clone();
            session.add_pending(pending, self.venue_now_ms().div_euclid(1000));
            Ok(payload)
        })
    }

    /// POST prepare-signin and verify the challenge.
    fn prepare_and_verify(
        &self,
        session: &Session,
        chain: Chain,
        address: &str,
        secrets: &CallSecrets<'_>,
    ) -> Result<PendingSignin> {
        check_address(chain, address)?;
        if chain == Chain::Solana {
            // Before anything is sent: the wallet must not be the session's own key.
            wallet::solana::refuse_the_request_key(address, Some(session.request_id()))?;
        }
        let url = format!("{}/v1/offchain/prepare-signin?chain={}", self.base_url, chain.as_str());
        let body = json!({ "address": address, "requestId": session.request_id() }).to_string();
        let reply = self.post_to_auth(&url, body.as_bytes())?;
        let reply = require_2xx(reply, "prepare-signin", secrets, self.venue_now_ms())?;
        let answer = json_object(&reply, "prepare-signin", secrets)?;
        if let Some(key) = crate::endpoints::answer::outcome_named_twice(&reply.body) {
            return Err(Error::bad_response(format!(
                "prepare-signin: {}",
                crate::endpoints::answer::named_twice_message(key)
            ))
            .with_status(reply.status)
            .with_body(answers::redacted(reply, secrets).body));
        }
        if answer.get("success") != Some(&Value::Bool(true)) {
            let reply = answers::redacted(reply, secrets);
            let quoted = venue_reason(&reply.body).map(|r| format!(": \"{r}\"")).unwrap_or_default();
            return Err(Error::new(
                Code::ApiError,
                format!("prepare-signin: the venue answered success=false{quoted}"),
            )
            .with_status(reply.status)
            .with_body(reply.body));
        }
        let Some(Value::String(signed_data)) = answer.get("signedData") else {
            return Err(Error::bad_response("prepare-signin: the answer has no \"signedData\" string")
                .with_status(reply.status)
                .with_body(answers::redacted(reply, secrets).body));
        };
        let expected = Expected {
            request_id: session.request_id(),
            chain,
            address,
            now_secs: self.venue_now_ms().div_euclid(1000),
        };
        let verified = self.verify_challenge(signed_data, &expected, secrets)?;
        Ok(PendingSignin { chain, address: address.to_owned(), challenge: verified })
    }

    /// Verify with the cached certs; on an unknown key id, or no key that verifies (without a
    /// kid, none of the set; with one, the set's key of that id: new key material under the
    /// same id), fetch the certs once more — key rotation — and try again, never looping.
    fn verify_challenge(
        &self,
        signed_data: &str,
        expected: &Expected<'_>,
        secrets: &CallSecrets<'_>,
    ) -> Result<challenge::VerifiedChallenge> {
        let pins = Pins {
            domain: self.expected_domain.as_deref(),
            uri: self.expected_uri.as_deref(),
            sign_in_host: self.sign_in_host.as_deref(),
        };
        let (certs, fresh) = self.certs(false, secrets)?;
        match challenge::verify_pinned(signed_data, &certs, expected, &pins) {
            Ok(v) => Ok(v),
            Err(Rejection::UnknownKid(_) | Rejection::NoMatchingKey(_)) if !fresh => {
                let (certs, _) = self.certs(true, secrets)?;
                challenge::verify_pinned(signed_data, &certs, expected, &pins).map_err(Error::from)
            }
            Err(rejection) => Err(rejection.into()),
        }
    }

    /// POST login with the pending challenge the wallet's signature is for (the only one, or
    /// with several sign-ins under way on the session, the one whose message it signs); keep
    /// the token. `expires_seconds <= 0` asks for the venue default (604800 s).
    pub fn login(&self, session: &Session, signature: &str, expires_seconds: i64) -> Result<String> {
        guarded(session, None, |secrets| {
            check_expires(expires_seconds)?;
            if signature.trim().is_empty() {
                return Err(Error::invalid_argument("the wallet signature is empty"));
            }
            let pending = signed_challenge(session.pending(), signature)?;
            self.send_login(session, &pending, signature, expires_seconds, secrets)
        })
    }

    /// POST login with `pending`'s challenge and the wallet's signature of it; keep the token.
    fn send_login(
        &self,
        session: &Session,
        pending: &PendingSignin,
        signature: &str,
        expires_seconds: i64,
        secrets: &CallSecrets<'_>,
    ) -> Result<String> {
        wallet::check_login_signature(pending.chain, signature)?;
        let now = self.venue_now_ms().div_euclid(1000);
        if pending.challenge.exp <= now {
            return Err(Error::invalid_state(format!(
                "the pending challenge expired at {} (now {now}); call prepare-signin again",
                pending.challenge.exp
            )));
        }
        let mut request = json!({ "signature": signature, "signedData": pending.challenge.signed_data });
        if expires_seconds > 0 {
            request["expiresSeconds"] = json!(expires_seconds);
        }
        let body = Zeroizing::new(request.to_string());
        let url = format!("{}/v1/offchain/login?chain={}", self.base_url, pending.chain.as_str());
        let mut reply = WipedReply(self.post_to_auth(&url, body.as_bytes())?);
        if !(200..300).contains(&reply.status) {
            return Err(login_refusal(&reply, secrets, self.venue_now_ms()));
        }
        let login = self.read_login_answer(&reply, pending, now, expires_seconds, secrets)?;
        session.complete_signin(&pending.challenge.signed_data, login);
        Ok(std::mem::take(&mut reply.0.body))
    }

    /// The login of a 2xx login answer, or why there is none.
    fn read_login_answer(
        &self,
        reply: &super::Reply,
        pending: &PendingSignin,
        now: i64,
        expires_seconds: i64,
        secrets: &CallSecrets<'_>,
    ) -> Result<Login> {
        // Not through `json_object`: that attaches the body, and a cut answer can hold the token.
        // Read in place: a map of values would hold a copy of the token, freed unwiped.
        let answer = serde_json::from_str::<crate::endpoints::answer::Entries<'_>>(&reply.body).map_err(|_| {
            Error::bad_response("login: the venue's answer is not a JSON object (body withheld: it may hold the token)")
                .with_status(reply.status)
        })?;
        let answer = LoginAnswer(answer.0);
        // `code` or `success` named twice: readers keeping the first or the last copy disagree
        // on whether this is a login; `token`, `chain` or `address` twice: on which token, or
        // for which wallet (the body, which may hold the token, is withheld).
        const LOGIN_KEYS: [&str; 5] = ["code", "success", "token", "chain", "address"];
        if let Some(key) = crate::endpoints::answer::key_named_twice(&reply.body, &LOGIN_KEYS) {
            let why = crate::endpoints::answer::named_twice_message(key);
            return Err(Error::bad_response(format!("login: {why} (body withheld: it may hold the token)"))
                .with_status(reply.status));
        }
        // A refusal the answer states (`"success": false`, as prepare-signin refuses, or a
        // refusal code): the venue's reason, as for a non-2xx answer, rather than "no token".
        match crate::endpoints::answer::stated(answer.value("code").as_ref(), answer.value("success").as_ref(), "") {
            Err(Refusal::Code(code, _)) => return Err(login_refused(reply, secrets, Some(code))),
            Err(Refusal::Unsuccessful(_)) => return Err(login_refused(reply, secrets, None)),
            Ok(()) | Err(Refusal::Shape(_)) => {}
        }
        check_login_answer(&answer, pending, now, expires_seconds).map_err(|e| {
            // The body holds the token: never attach it to an error, nor let its message
            // quote it (a buggy answer's token in another field).
            answer.own_token().redact_error(e).with_status(reply.status)
        })
    }

    /// prepare-signin, sign with the in-process wallet key, login: one call.
    pub fn signin(&self, session: &Session, chain: Chain, wallet_key: &str, expires_seconds: i64) -> Result<String> {
        guarded(session, Some(wallet_key), |secrets| {
            // Refused before prepare-signin: a bad argument must not spend a request and a nonce.
            check_expires(expires_seconds)?;
            let address = wallet::address(chain, wallet_key)?;
            // The challenge verified here is the one signed and sent: never kept in the
            // session, where another thread's sign-in could take or clear it.
            let pending = self.prepare_and_verify(session, chain, &address, secrets)?;
            let signature = Zeroizing::new(wallet::sign_login(chain, wallet_key, &pending.challenge.payload_json)?);
            self.send_login(session, &pending, &signature, expires_seconds, secrets)
        })
    }
}

/// The pending challenge a login's `signature` is for: the only one, or, with several
/// sign-ins under way on the session, the one whose message the signature signs by its
/// wallet (sending another's challenge with it would fail at the venue, and could consume
/// it).
fn signed_challenge(mut pending: Vec<PendingSignin>, signature: &str) -> Result<PendingSignin> {
    match pending.len() {
        0 => Err(Error::invalid_state("login needs a verified challenge: call prepare-signin first")),
        1 => Ok(pending.remove(0)),
        n => pending
            .into_iter()
            .rev()
            .find(|p| wallet::signs(p.chain, signature, &p.challenge.message, &p.address))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "the wallet signature signs none of the {n} challenges pending in this session (sign-ins under \
                     way on it at once): sign the message of the payload prepare-signin returned; a signature \
                     this library cannot check (a contract wallet's) needs a session of its own"
                ))
            }),
    }
}

/// A non-2xx login answer: its status and the venue's reason, never its body (an answer to
/// login may hold a token we do not know, so it cannot be redacted as the session's is).
/// The reason is quoted only after every word shaped like a token is cut out of it.
fn login_refusal(reply: &super::Reply, secrets: &CallSecrets<'_>, now_ms: i64) -> Error {
    let reply = WipedReply(super::Reply {
        body: without_tokens(&reply.body, secrets),
        status: reply.status,
        retry_after: reply.retry_after.clone(),
        content_type: reply.content_type.clone(),
    });
    refusal(&reply, "login", now_ms)
}

/// A login answer, its body wiped when dropped: it holds the token.
struct WipedReply(super::Reply);

impl std::ops::Deref for WipedReply {
    type Target = super::Reply;
    fn deref(&self) -> &super::Reply {
        &self.0
    }
}

impl Drop for WipedReply {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.0.body);
    }
}

/// A login answer's members as the venue wrote them, read in place (a copy of the token
/// would be freed unwiped); a member named twice is read as its last copy.
struct LoginAnswer<'a>(Vec<(std::borrow::Cow<'a, str>, &'a serde_json::value::RawValue)>);

impl LoginAnswer<'_> {
    fn raw(&self, name: &str) -> Option<&str> {
        self.0.iter().rev().find(|(key, _)| key == name).map(|(_, value)| value.get())
    }

    /// A member that holds no secret, parsed.
    fn value(&self, name: &str) -> Option<Value> {
        self.raw(name).and_then(|raw| serde_json::from_str(raw).ok())
    }

    /// A string member that holds no secret.
    fn text(&self, name: &str) -> Result<String> {
        self.raw(name)
            .and_then(|raw| serde_json::from_str(raw).ok())
            .ok_or_else(|| Error::bad_response(format!("login: the answer has no {name:?} string")))
    }

    /// The answer's `token` string, when it has one, as a redaction table: even one that could
    /// not be sent in a header is the venue's token.
    fn own_token(&self) -> crate::redact::Secrets {
        let mut secrets = crate::redact::Secrets::new();
        match self.token() {
            Ok(token) => secrets.add(&token),
            Err(_) => {
                if let Some(token) = self.raw("token").and_then(|raw| serde_json::from_str::<String>(raw).ok()) {
                    secrets.add(&Zeroizing::new(token));
                }
            }
        }
        secrets
    }

    /// The `token` string, decoded into memory wiped on drop (serde_json decodes a string's
    /// escapes in a scratch buffer it frees unwiped): non-empty visible ASCII, as a header
    /// value must be; an escape may spell such a character.
    fn token(&self) -> Result<Zeroizing<String>> {
        let raw = self.raw("token").unwrap_or_default();
        let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
            return Err(Error::bad_response("login: the answer has no \"token\" string"));
        };
        let unusable = || Error::bad_response("login: the token in the answer is empty or not header-safe");
        let mut token = Zeroizing::new(String::with_capacity(inner.len()));
        let mut bytes = inner.bytes();
        while let Some(byte) = bytes.next() {
            let byte = match byte {
                b'\\' => match bytes.next() {
                    Some(b'u') => {
                        let code =
                            (0..4).try_fold(0u32, |code, _| Some(code * 16 + char::from(bytes.next()?).to_digit(16)?));
                        code.and_then(|code| u8::try_from(code).ok()).ok_or_else(unusable)?
                    }
                    Some(escaped @ (b'"' | b'\\' | b'/')) => escaped,
                    _ => return Err(unusable()),
                },
                byte => byte,
            };
            if !byte.is_ascii_graphic() {
                return Err(unusable());
            }
            token.push(char::from(byte));
        }
        if token.is_empty() {
            return Err(unusable());
        }
        Ok(token)
    }
}

/// A 2xx login answer that states a refusal (by `code`, or by `"success": false` with no
/// code): `PERPS_API_ERROR` with the venue's code and reason, quoted as `login_refusal`
/// quotes it, and never the body.
fn login_refused(reply: &super::Reply, secrets: &CallSecrets<'_>, code: Option<i64>) -> Error {
    use crate::endpoints::answer::{refused_unsuccessful, refused_with_code};
    let words = venue_reason(&without_tokens(&reply.body, secrets)).unwrap_or_default();
    let error = match code {
        Some(code) => Error::new(Code::ApiError, refused_with_code("login", code, &words)).with_venue_code(code),
        None => Error::new(Code::ApiError, refused_unsuccessful("login", &words)),
    };
    error.with_status(reply.status)
}

/// `body` with the call's secrets and every token of a login answer cut out
/// ([`tokens_of_login_answer`]).
fn without_tokens(body: &str, secrets: &CallSecrets<'_>) -> String {
    let redacted = Zeroizing::new(secrets.redact(body).into_owned());
    tokens_of_login_answer(body).redact(&redacted).into_owned()
}

/// What an error about a login answer must never quote, whoever wrote the answer: the
/// answer's own `token` when it names one (even a refusal's), and every word shaped like a
/// token (a JWT, a long base64 or opaque credential), read with the answer's JSON escapes
/// written out (a JWT's dots written `\u002e` still make a JWT). Words are what whitespace and
/// quotes separate, and what is judged the runs of base64 characters in them
/// (`token=q8Z…+/…==` of `token=q8Z…+/…==;`): cut at `+`, `/` or `=` as well, a credential
/// falls into pieces too short to look like one.
fn tokens_of_login_answer(body: &str) -> crate::redact::Secrets {
    let mut tokens = match serde_json::from_str::<crate::endpoints::answer::Entries<'_>>(body) {
        Ok(entries) => LoginAnswer(entries.0).own_token(),
        Err(_) => crate::redact::Secrets::new(),
    };
    let text = Zeroizing::new(crate::redact::written_out(body).into_owned());
    let base64 = |c: char| c.is_ascii_alphanumeric() || "-_.+/=~".contains(c);
    for word in text.split(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
        for run in word.split(|c: char| !base64(c)) {
            if looks_like_a_token(run) {
                tokens.add(run);
            }
        }
    }
    tokens
}

/// A JWT (three dot-separated segments of base64url) or a long credential: 32 characters or
/// more of base64, base64url or an opaque token's alphabet, with a digit, a capital, `+` or
/// `=` among them (random text of 32 such characters has one: a URL's path or a long
/// lower-case word has none).
fn looks_like_a_token(word: &str) -> bool {
    let base64url = |segment: &str| {
        !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_=".contains(&b))
    };
    let jwt = word.len() >= 20 && word.split('.').count() == 3 && word.split('.').all(base64url);
    let opaque = word.len() >= 32
        && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.+/=~".contains(&b))
        && word.bytes().any(|b| b.is_ascii_digit() || b.is_ascii_uppercase() || b"+=".contains(&b));
    jwt || opaque
}

/// `expires_seconds` ≤ 0 is the venue default; more than 10 years is surely a bug.
fn check_expires(expires_seconds: i64) -> Result<()> {
    if expires_seconds > MAX_EXPIRES_SECONDS {
        return Err(Error::invalid_argument(format!(
            "expires_seconds {expires_seconds} is more than the {MAX_EXPIRES_SECONDS} s (10 years) this library allows"
        )));
    }
    Ok(())
}

fn check_login_answer(
    answer: &LoginAnswer<'_>,
    pending: &PendingSignin,
    now: i64,
    expires_seconds: i64,
) -> Result<Login> {
    let token = answer.token()?;
    let chain = Zeroizing::new(answer.text("chain")?);
    if chain.as_str() != pending.chain.as_str() {
        // Another chain's name is quoted; any other text may be the token in the wrong place.
        return Err(Error::verification(format!(
            "login: the venue answered for chain {}, not {}",
            crate::wallet::quote_if_harmless(&chain),
            pending.chain
        )));
    }
    let address = Zeroizing::new(answer.text("address")?);
    if !pending.chain.same_address(&address, &pending.address) {
        // Quoted only when it has an address's shape: any other text may be the token.
        let answered = if pending.chain.is_address(&address) {
            format!("wallet \"{}\"", address.as_str())
        } else {
            format!("an \"address\" that is no {} address ({} bytes, not shown)", pending.chain, address.len())
        };
        return Err(Error::verification(format!("login: the venue answered for {answered}, not {}", pending.address)));
    }
    let requested = if expires_seconds > 0 { expires_seconds } else { DEFAULT_TOKEN_SECONDS };
    let expires_at = crate::session::jwt_expiry(&token).unwrap_or(now + requested);
    Ok(Login {
        token,
        chain: Some(pending.chain),
        address: Some(address.to_string()),
        alias: answer.text("alias").ok(),
        expires_at: Some(expires_at),
    })
}

/// A wallet address of the right shape for its chain, checked before anything is sent.
fn check_address(chain: Chain, address: &str) -> Result<()> {
    if chain.is_address(address) {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!(
            "{} is not a {chain} address ({})",
            crate::wallet::shown_address(address),
            match chain {
                Chain::Bsc => "0x followed by 40 hex digits",
                Chain::Solana => "base58 of a 32-byte public key, a point of Ed25519: not a private key",
            }
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token_of(answer: &str) -> Result<String> {
        let entries = serde_json::from_str::<crate::endpoints::answer::Entries<'_>>(answer).unwrap();
        LoginAnswer(entries.0).token().map(|token| token.to_string())
    }

    #[test]
    fn what_a_login_error_must_not_quote() {
        let redacted = |body: &str| tokens_of_login_answer(body).redact(body).into_owned();
        // Credentials however they stand, escaped or not.
        assert_eq!(
            redacted(r#"{"message":"token=q8Zr3Xw1Lm7Pa9Tb+/Ue2Kd5Hs0Vf4Jn6Yc8Gg1Oi3Rk7Wl2==; retry"}"#),
            r#"{"message":"<redacted>; retry"}"#
        );
        assert!(!redacted(r#"{"m":"jwt eyJhbGciOiJFUzI1NiJ9\u002eeyJzdWIiOiJ4In0\u002eQk9HVVNz"}"#).contains("eyJ"));
        assert!(!redacted("session eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.Qk9HVVNz exists").contains("eyJ"));
        assert_eq!(
            redacted(r#"{"message":"signed in as t-7Q","token":"t-7Q"}"#),
            r#"{"message":"signed in as <redacted>","token":"<redacted>"}"#
        );
        // Words that are no credential stay.
        for words in [
            "signedData rejected: unknown kid",
            "see https://docs.venue.example/errors/login for more",
            "a-very-long-hyphenated-lower-case-word-that-is-not-a-token",
        ] {
            let body = format!(r#"{{"message":"{words}"}}"#);
            assert_eq!(redacted(&body), body);
        }
    }

    #[test]
    fn the_token_is_decoded_as_json_and_must_fit_a_header() {
        assert_eq!(token_of(r#"{"token":"ab.c_d-e"}"#).unwrap(), "ab.c_d-e");
        assert_eq!(token_of(r#"{"token":"a\u002eb\/c\\d\"e\u007E"}"#).unwrap(), r#"a.b/c\d"e~"#);
        assert_eq!(token_of(r#"{"token":"first","token":"last"}"#).unwrap(), "last");
        for unusable in [r#""""#, r#""a b""#, r#""a\tb""#, r#""a\u0020b""#, r#""a\u00e9""#, r#""é""#, r#""a\nb""#] {
            let message = token_of(&format!(r#"{{"token":{unusable}}}"#)).unwrap_err().message().to_owned();
            assert!(message.contains("empty or not header-safe"), "{unusable}: {message}");
        }
        for absent in [r#"{}"#, r#"{"token":null}"#, r#"{"token":42}"#, r#"{"token":["a"]}"#] {
            let message = token_of(absent).unwrap_err().message().to_owned();
            assert!(message.contains("no \"token\" string"), "{absent}: {message}");
        }
    }
}
