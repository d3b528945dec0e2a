//! One identity: the request-signing key, the chain and wallet it signs in for, the
//! verified challenges waiting for login, and the access token.
//!
//! The key never changes after creation, so signing reads it without a lock; the mutable
//! state sits behind an `RwLock` so one session can be shared by many threads.

use crate::body_sign::{self, BodySignature};
use crate::challenge::VerifiedChallenge;
use crate::error::{Code, Error, Result};
use crate::keys::RequestKey;
use crate::redact::Secrets;
use crate::wallet::Chain;
use std::fmt;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use zeroize::Zeroizing;

/// The venue's default access-token lifetime (7 days).
pub const DEFAULT_TOKEN_SECONDS: i64 = 604_800;

/// At most this many verified challenges wait for their login in one session (sign-ins under
/// way on it at once, `perps_prepare_signin` then `perps_login`); a newer one pushes out the
/// oldest.
const MAX_PENDING_SIGNINS: usize = 8;

/// A verified challenge waiting for the wallet's signature.
#[derive(Clone, Debug)]
pub struct PendingSignin {
    pub chain: Chain,
    pub address: String,
    pub challenge: VerifiedChallenge,
}

/// What login (or an imported API credential) gave the session.
#[derive(Clone)]
pub struct Login {
    pub token: Zeroizing<String>,
    pub chain: Option<Chain>,
    pub address: Option<String>,
    pub alias: Option<String>,
    /// Unix seconds after which the token is no longer accepted; `None` when unknown
    /// (an API credential's token).
    pub expires_at: Option<i64>,
}

impl fmt::Debug for Login {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Login")
            .field("token", &"<redacted>")
            .field("chain", &self.chain)
            .field("address", &self.address)
            .field("alias", &self.alias)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// Optional headers sent with the session's trading requests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestOptions {
    /// `x-session-id`: ties REST orders to the order-response WebSocket session; sent on
    /// order entry only (`new_order`, `cancel_order`, `cancel_orders`).
    pub session_id: Option<String>,
    /// `x-impersonate`: act for a vault the account owns (`cv_…`).
    pub impersonate: Option<String>,
}

#[derive(Default, Debug)]
struct State {
    /// Oldest first, each challenge (`signed_data`) once, at most [`MAX_PENDING_SIGNINS`]:
    /// one per sign-in under way, so that threads signing in on one session do not use (or
    /// clear) each other's challenge.
    pending: Vec<PendingSignin>,
    login: Option<Login>,
    options: RequestOptions,
    /// The key's text forms and the current token, as one redaction table: built when the
    /// token changes, not at each failed call (a market maker's cancels of orders already
    /// gone fail all day, and building the table costs about a signature).
    secrets: Arc<Secrets>,
}

#[derive(Debug)]
pub struct Session {
    key: RequestKey,
    /// The imported key's text forms (API credentials), for redacting venue text; empty for
    /// a generated key, which never leaves this process.
    key_secrets: Secrets,
    state: RwLock<State>,
}

impl Session {
    /// A session with a fresh temporary key from the OS RNG.
    pub fn new() -> Result<Session> {
        Ok(Session::with_key(RequestKey::generate()?))
    }

    /// A session for a web-site API credential: its token and Ed25519 private key.
    pub fn from_api_key(token: &str, private_key: &str) -> Result<Session> {
        check_token(token)?;
        let mut key_secrets = Secrets::new();
        key_secrets.add(private_key);
        // Parsed once, for signing and for its text forms, in a frame whose stack is
        // overwritten after (`wipe::then_wipe_stack`): the key's copies are left there.
        let key = crate::wipe::then_wipe_stack(|| {
            let parsed = crate::keys::parse_ed25519_secret(private_key)?;
            key_secrets.add_ed25519(&parsed);
            Ok::<_, crate::error::Error>(RequestKey::from_signing_key(&parsed))
        })?;
        let session = Session { key, key_secrets, state: RwLock::new(State::default()) };
        session.set_login(
            &mut session.write(),
            Some(Login {
                token: Zeroizing::new(token.to_owned()),
                chain: None,
                address: None,
                alias: None,
                // A JWT's own expiry, when the token is one ([WJ] clamps imported tokens to
                // it); an opaque token has none the library could know.
                expires_at: jwt_expiry(token),
            }),
        );
        Ok(session)
    }

    pub fn with_key(key: RequestKey) -> Session {
        Session { key, key_secrets: Secrets::new(), state: RwLock::new(State::default()) }
    }

    /// The secrets venue text must never show back for this session: its token and its
    /// imported key (`crate::redact`). Shared: the table is built once per token.
    pub fn secrets(&self) -> Arc<Secrets> {
        self.read().secrets.clone()
    }

    /// Keep (or forget) the login, and the redaction table of its token with it.
    fn set_login(&self, state: &mut State, login: Option<Login>) {
        let mut secrets = self.key_secrets.clone();
        if let Some(login) = &login {
            secrets.add(&login.token);
        }
        state.secrets = Arc::new(secrets);
        state.login = login;
    }

    pub fn request_id(&self) -> &str {
        self.key.request_id()
    }

    pub fn key(&self) -> &RequestKey {
        &self.key
    }

    /// Sign a body with a fresh UUID at `timestamp_ms`.
    pub fn sign_body_now(&self, body: &[u8], timestamp_ms: i64) -> Result<BodySignature> {
        body_sign::sign_now(&self.key, body, timestamp_ms)
    }

    /// Sign a body with a caller-chosen request id and time.
    pub fn sign_body_at(&self, body: &[u8], request_id: &str, timestamp_ms: i64) -> Result<BodySignature> {
        body_sign::sign(&self.key, body, request_id, timestamp_ms)
    }

    /// Keep a verified challenge until the login that uses it. Challenges expired at
    /// `now_secs` (the venue's clock) are forgotten; beyond [`MAX_PENDING_SIGNINS`], the oldest.
    pub fn add_pending(&self, pending: PendingSignin, now_secs: i64) {
        let mut state = self.write();
        state
            .pending
            .retain(|p| p.challenge.exp > now_secs && p.challenge.signed_data != pending.challenge.signed_data);
        if state.pending.len() >= MAX_PENDING_SIGNINS {
            state.pending.remove(0);
        }
        state.pending.push(pending);
    }

    /// The challenges waiting for their login, oldest first.
    pub fn pending(&self) -> Vec<PendingSignin> {
        self.read().pending.clone()
    }

    /// Keep the login of the challenge `signed_data`, which has been used and is forgotten;
    /// the challenges of other sign-ins under way stay.
    pub fn complete_signin(&self, signed_data: &str, login: Login) {
        let mut state = self.write();
        state.pending.retain(|p| p.challenge.signed_data != signed_data);
        self.set_login(&mut state, Some(login));
    }

    /// Keep a login made without a challenge of this session (a test's token); pending
    /// challenges stay.
    pub fn complete_login(&self, login: Login) {
        let mut state = self.write();
        self.set_login(&mut state, Some(login));
    }

    /// Forget the token and any pending challenge (the key stays: it is the session).
    pub fn logout(&self) {
        let mut state = self.write();
        state.pending.clear();
        self.set_login(&mut state, None);
    }

    pub fn login(&self) -> Option<Login> {
        self.read().login.clone()
    }

    /// The token for a request, checked for presence and expiry before anything is sent.
    pub fn usable_token(&self, now_secs: i64) -> Result<Zeroizing<String>> {
        self.usable_credentials(now_secs).map(|(token, _)| token)
    }

    /// The token (checked like [`usable_token`](Self::usable_token)) and the account it
    /// acts for: the wallet address after sign-in (lower case for bsc, whose addresses are
    /// case-insensitive), or, for an API credential, the session's request key id. The
    /// account names the venue's rate-limit bucket.
    pub fn usable_credentials(&self, now_secs: i64) -> Result<(Zeroizing<String>, String)> {
        let state = self.read();
        let login = state
            .login
            .as_ref()
            .ok_or_else(|| Error::invalid_state("the session has no access token: sign in (or log in) first"))?;
        if let Some(expires_at) = login.expires_at
            && now_secs >= expires_at
        {
            // An API credential (no chain) cannot be renewed by signing in with this session.
            let renew = if login.chain.is_some() { "sign in again" } else { "create a new API credential" };
            return Err(Error::new(
                Code::TokenExpired,
                format!("the session's access token expired at {expires_at} (now {now_secs}); {renew}"),
            ));
        }
        let account = match (&login.address, login.chain) {
            (Some(address), Some(Chain::Bsc)) => address.to_ascii_lowercase(),
            (Some(address), _) => address.clone(),
            (None, _) => self.request_id().to_owned(),
        };
        Ok((login.token.clone(), account))
    }

    pub fn request_options(&self) -> RequestOptions {
        self.read().options.clone()
    }

    /// Set (`Some`) or clear (`None`) the `x-session-id` header value.
    pub fn set_session_id(&self, value: Option<&str>) -> Result<()> {
        let value = value.map(|v| header_value(v, "x-session-id")).transpose()?;
        self.write().options.session_id = value;
        Ok(())
    }

    /// Set (`Some`) or clear (`None`) the `x-impersonate` header value.
    pub fn set_impersonate(&self, value: Option<&str>) -> Result<()> {
        let value = value.map(|v| header_value(v, "x-impersonate")).transpose()?;
        self.write().options.impersonate = value;
        Ok(())
    }

    /// Identity and state as JSON, without secrets.
    pub fn info_json(&self) -> String {
        let state = self.read();
        let login = state.login.as_ref();
        // The newest of the sign-ins under way.
        let pending = state.pending.last();
        serde_json::json!({
            "request_id": self.request_id(),
            "has_token": login.is_some(),
            "chain": login.and_then(|l| l.chain).or(pending.map(|p| p.chain)).map(Chain::as_str),
            "address": login.and_then(|l| l.address.clone()).or(pending.map(|p| p.address.clone())),
            "alias": login.and_then(|l| l.alias.clone()),
            "token_expires_at": login.and_then(|l| l.expires_at),
            "pending_signin": pending.is_some(),
            "challenge_expires_at": pending.map(|p| p.challenge.exp),
            "session_id": state.options.session_id,
            "impersonate": state.options.impersonate,
        })
        .to_string()
    }

    // A panic while a lock is held cannot leave this state half-written (each write is one
    // assignment), so a poisoned lock is safe to keep using.
    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }
    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A token travels in an `Authorization` header: it must be non-empty visible ASCII.
pub fn check_token(token: &str) -> Result<()> {
    if token.is_empty() {
        return Err(Error::invalid_argument("the API token is empty"));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::invalid_argument(
            "the API token contains a space, control or non-ASCII character (it must fit an HTTP header)",
        ));
    }
    Ok(())
}

fn header_value(value: &str, name: &str) -> Result<String> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::invalid_argument(format!("the {name} value must be non-empty visible ASCII")));
    }
    Ok(value.to_owned())
}

/// The `exp` claim of a JWT access token, read without verification (only the venue can
/// verify its own token; we only want to know when to stop using it). A NumericDate may be
/// a non-integer (RFC 7519 §2): it is rounded down, as the challenge's claims are.
pub(crate) fn jwt_expiry(token: &str) -> Option<i64> {
    use base64::Engine as _;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).ok()?;
    let exp = serde_json::from_slice::<serde_json::Value>(&bytes).ok()?.get("exp")?.as_number()?.clone();
    exp.as_i64().or_else(|| exp.as_f64().map(|f| f.floor() as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn login(token: &str) -> Login {
        Login { token: Zeroizing::new(token.to_owned()), chain: None, address: None, alias: None, expires_at: None }
    }

    fn hides(session: &Session, secret: &str) -> bool {
        !session.secrets().redact(&format!("the venue said {secret}.")).contains(secret)
    }

    #[test]
    fn the_redaction_table_follows_the_token_and_is_built_once_per_token() {
        let session = Session::new().unwrap();
        assert!(!hides(&session, "token-one-0123456789"), "no token yet: nothing to hide");
        session.complete_login(login("token-one-0123456789"));
        assert!(hides(&session, "token-one-0123456789"));
        assert!(Arc::ptr_eq(&session.secrets(), &session.secrets()), "one table, shared by every call");
        let first = session.secrets();
        session.complete_login(login("token-two-9876543210"));
        assert!(hides(&session, "token-two-9876543210"), "a new token gets a new table");
        assert!(!Arc::ptr_eq(&first, &session.secrets()));
        session.logout();
        assert!(!hides(&session, "token-two-9876543210"));
    }

    #[test]
    fn an_imported_credential_hides_its_token_and_its_key() {
        let key = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
        let session = Session::from_api_key("api-token-0123456789", key).unwrap();
        assert!(hides(&session, "api-token-0123456789"));
        assert!(hides(&session, key));
        session.complete_login(login("signed-in-token-0123456789"));
        assert!(hides(&session, key), "the key's forms stay in every table");
    }
}
