//! Any endpoint of the table in `endpoints`, run the same way: parameters checked and
//! written once, the request sent once (POSTs body-signed; account GETs with the bearer;
//! public GETs bare), the answer checked and shaped. The venue's HTTP 404 is
//! `PERPS_NOT_FOUND` (an HTML 404 page is not the venue's: `PERPS_HTTP_STATUS`); HTTP 200
//! with `code` ≠ 0 is `PERPS_API_ERROR` (`code` 404: `PERPS_NOT_FOUND`). Never retried.

use super::trading::{Account, Outgoing};
use super::{Client, guarded};
use crate::endpoints::answer;
use crate::endpoints::params::Params;
use crate::endpoints::{Auth, Endpoint, Shape, Verb};
use crate::error::{Error, Result};
use crate::redact::CallSecrets;
use crate::session::Session;
use ureq::http::Method;

impl Client {
    /// Call `endpoint` with `params_json` (None or "" for no parameters). `session` may be
    /// `None` only for the public endpoints. Returns the venue's answer (see
    /// `endpoints::answer`). A `query_symbol_info` without a symbol also refreshes the
    /// symbol rules when they are on.
    pub fn call(&self, endpoint: Endpoint, session: Option<&Session>, params_json: Option<&str>) -> Result<String> {
        // Account calls run with the session's secrets (venue text quoted in an error is
        // redacted of them); public calls hold none.
        let sent = std::time::Instant::now();
        let answer = match session {
            Some(s) => {
                guarded(s, None, |secrets| self.endpoint_answer(endpoint, session, params_json, secrets, None, None))?
            }
            None => self.endpoint_answer(endpoint, None, params_json, &CallSecrets::none(), None, None)?,
        };
        if endpoint == Endpoint::QuerySymbolInfo
            && self.symbols.is_some()
            && Params::parse(endpoint.spec(), params_json).is_ok_and(|p| p.is_empty())
        {
            // An answer that is not a symbol list is still the caller's answer; the rules
            // keep the list they had.
            let _ = self.keep_symbols(&answer, sent);
        }
        Ok(answer)
    }

    /// The answer of one endpoint call. `deadline`: when the calling flow's time ends, if it
    /// used some of it already (a new order reading the symbol rules); `None`: all of
    /// `total_timeout_ms` is this call's. `larger_answer`: a larger bound for the answer than
    /// `max_response_bytes` (cancel_all's open-orders listing: `transport::Bounds`); `None`:
    /// the client's.
    pub(super) fn endpoint_answer(
        &self,
        endpoint: Endpoint,
        session: Option<&Session>,
        params_json: Option<&str>,
        secrets: &CallSecrets<'_>,
        deadline: Option<std::time::Instant>,
        larger_answer: Option<u64>,
    ) -> Result<String> {
        let spec = endpoint.spec();
        let credentials = match (spec.auth, session) {
            (Auth::Public, _) => None,
            (_, None) => {
                return Err(Error::invalid_argument(format!(
                    "session is NULL: {} needs a signed-in session (only query_symbol_info, query_symbol_price \
                     and query_depth_book take none)",
                    spec.name
                )));
            }
            (_, Some(session)) => Some((session, session.usable_credentials(self.venue_now_ms().div_euclid(1000))?)),
        };
        let params = Params::parse(spec, params_json)?;
        let (method, target, body) = match spec.verb {
            Verb::Post => (Method::POST, spec.path(), Some(params.to_body())),
            Verb::Get => (Method::GET, format!("{}{}", spec.path(), params.to_query()), None),
        };
        let account = credentials.as_ref().map(|(session, (token, account))| Account {
            session,
            token: token.as_str(),
            account: account.as_str(),
        });
        let body = body.as_deref().map(str::as_bytes);
        let outgoing =
            Outgoing { method, target: &target, body, account, secrets, not_found: true, deadline, larger_answer };
        let exchanged = self.exchange(&outgoing)?;
        let answering = if spec.auth == Auth::Signed { answer::Answering::Change } else { answer::Answering::Read };
        let shaped = match spec.shape {
            Shape::AsSent => answer::check(&exchanged.reply.body, answering).map(|()| None),
            Shape::List => answer::check_list(&exchanged.reply.body),
            Shape::DepthBook => answer::sort_depth_book(&exchanged.reply.body).map(Some),
        };
        match shaped {
            Ok(Some(sorted)) => Ok(sorted),
            Ok(None) => Ok(exchanged.reply.body),
            // The venue's "not found" may come as a code under HTTP 200 (a 200 can carry a
            // code): the same answer as its HTTP 404, so an engine's look-up reads it alike.
            Err(refusal) => Err(exchanged.refusal(spec.name, refusal, true)),
        }
    }
}
