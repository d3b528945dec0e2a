//! The core-Rust-API twin of the bad-input runner, for `tests/secrets.rs`: each case of the
//! table (`tests/bad_input/cases.txt`) run through `perps::` directly, and every text the
//! results show (`Debug`, `Display`, message, body), to be scanned for secrets. Its own
//! module because it mirrors the C runner call by call and is long; the scan stays in
//! `tests/secrets.rs`.

use crate::harness::{self, Arg, Case, Fixtures};
use perps::challenge::{self, CertSet, Expected};
use perps::client::Client as CoreClient;
use perps::client::options::ClientOptions;
use perps::keys::{RequestKey, parse_ed25519_secret};
use perps::session::Session as CoreSession;
use perps::wallet::{self, Chain};
use std::fmt::Debug;

/// The texts a result shows: its `Debug`, and for an error its `Display`, message and body.
pub fn shown<T: Debug>(result: &perps::Result<T>) -> Vec<String> {
    let mut out = vec![format!("{result:?}")];
    if let Err(e) = result {
        out.push(e.to_string());
        out.push(e.message().to_owned());
        out.extend(e.body().map(str::to_owned));
    }
    out
}

/// The core-API twins of the C fixtures.
pub struct Core {
    client: CoreClient,
    fresh: CoreSession,
    api: CoreSession,
    logged_out: CoreSession,
}

impl Core {
    pub fn new(url: &str) -> Core {
        let logged_out = CoreSession::from_api_key(harness::LOGGED_OUT_TOKEN, harness::ED_SEED_B58).unwrap();
        logged_out.logout();
        Core {
            client: CoreClient::new(url, url, ClientOptions::default()).unwrap(),
            fresh: CoreSession::new().unwrap(),
            api: CoreSession::from_api_key(harness::API_TOKEN, harness::ED_SEED_B58).unwrap(),
            logged_out,
        }
    }

    fn session(&self, arg: &Arg) -> Option<&CoreSession> {
        match arg {
            Arg::Fixture(name) if name == "fresh" => Some(&self.fresh),
            Arg::Fixture(name) if name == "api" => Some(&self.api),
            Arg::Fixture(name) if name == "logged_out" => Some(&self.logged_out),
            _ => None,
        }
    }
}

/// An argument as the core API takes it: `Some(None)` for NULL, `None` when the core API
/// cannot take it (bytes that are not UTF-8 only exist at the C boundary).
fn text<'a>(arg: &'a Arg, fx: &'a Fixtures) -> Option<Option<&'a str>> {
    match arg {
        Arg::Null => Some(None),
        Arg::Str { bytes, .. } => std::str::from_utf8(bytes).ok().map(Some),
        Arg::Fixture(name) => fx.strings.get(name.as_str()).and_then(|(b, _)| std::str::from_utf8(b).ok()).map(Some),
        Arg::Int(_) => None,
    }
}

fn int(arg: &Arg) -> Option<i64> {
    match arg {
        Arg::Int(t) => t.parse().ok(),
        _ => None,
    }
}

fn bytes<'a>(arg: &'a Arg, fx: &'a Fixtures) -> Option<&'a [u8]> {
    match arg {
        Arg::Str { bytes, .. } => Some(bytes),
        Arg::Fixture(name) => fx.strings.get(name.as_str()).map(|(b, _)| b.as_slice()),
        _ => None,
    }
}

/// Run `case` through the core API; the texts it shows, or `None` when it has no core twin.
pub fn core_outputs(case: &Case, fx: &Fixtures, core: &Core) -> Option<Vec<String>> {
    let a = &case.args;
    let req = |i: usize| text(&a[i], fx).flatten();
    let chain = |i: usize| req(i).map(Chain::parse);
    let mut out: Vec<String> = Vec::new();
    match case.function.as_str() {
        "client_new" => {
            let options = ClientOptions::parse(text(&a[2], fx)?);
            out.extend(shown(&options));
            if let Ok(options) = options {
                out.extend(shown(&CoreClient::new(req(0)?, req(1)?, options)));
            }
        }
        "session_from_api_key" => {
            let (token, key) = (req(0)?, req(1)?);
            out.extend(shown(&CoreSession::from_api_key(token, key)));
            out.extend(shown(&RequestKey::from_text(key)));
            out.extend(shown(&parse_ed25519_secret(key)));
        }
        "wallet_address" | "wallet_sign" => {
            let key = req(1)?;
            // Every parser the key meets, whatever the chain: their Debug shows no secret.
            out.extend(shown(&wallet::evm::WalletKey::parse(key)));
            out.extend(shown(&wallet::solana::WalletKey::parse(key)));
            out.extend(shown(&RequestKey::from_text(key)));
            let chain = chain(0)?;
            out.extend(shown(&chain));
            if let Ok(chain) = chain {
                if case.function == "wallet_address" {
                    out.extend(shown(&wallet::address(chain, key)));
                } else {
                    out.extend(shown(&wallet::sign_login(chain, key, req(2)?)));
                }
            }
        }
        "wallet_wrap_solana_signature" => {
            let signature = bytes(&a[2], fx)?;
            if int(&a[3]).map(|n| n as usize) != Some(signature.len()) && a[3] != Arg::Fixture("len".into()) {
                return None;
            }
            out.extend(shown(&wallet::solana::wrap_external_signature(req(0)?, req(1)?, signature)));
        }
        "challenge_verify" => {
            let certs = CertSet::parse(req(1)?);
            out.extend(shown(&certs));
            let chain = chain(3)?;
            if let (Ok(certs), Ok(chain)) = (certs, chain) {
                let expected = Expected { request_id: req(2)?, chain, address: req(4)?, now_secs: 1_700_000_000 };
                let verified = challenge::verify(req(0)?, &certs, &expected);
                out.push(format!("{verified:?}"));
                out.extend(verified.err().map(|r| r.message()));
            }
        }
        "order_serialize" => out.extend(shown(&perps::order::validate(req(0)?))),
        "prepare_signin" | "login" | "signin" | "new_order" | "request" => {
            if a[0] != Arg::Fixture("client".into()) {
                return None;
            }
            let session = core.session(&a[1])?;
            let result = match case.function.as_str() {
                "prepare_signin" => {
                    let address = req(3)?;
                    chain(2)?.and_then(|ch| core.client.prepare_signin(session, ch, address))
                }
                "login" => core.client.login(session, req(2)?, int(&a[3])?),
                "signin" => {
                    let (key, expires) = (req(3)?, int(&a[4])?);
                    chain(2)?.and_then(|ch| core.client.signin(session, ch, key, expires))
                }
                "new_order" => core.client.new_order(session, req(2)?),
                _ => core.client.request(session, req(2)?, req(3)?, text(&a[4], fx)?),
            };
            out.extend(shown(&result));
            out.push(format!("{session:?}"));
            out.push(format!("{:?}", core.client));
        }
        "sign_body" | "sign_body_at" => {
            let session = core.session(&a[0])?;
            let body = req(1)?.as_bytes();
            let signed = if case.function == "sign_body" {
                session.sign_body_now(body, 1_700_000_000_000)
            } else {
                session.sign_body_at(body, req(2)?, int(&a[3])?)
            };
            out.extend(shown(&signed));
            out.push(format!("{session:?}"));
        }
        "session_set_session_id" | "session_set_impersonate" => {
            let session = core.session(&a[0])?;
            let value = text(&a[1], fx)?;
            // A copy, so that a value accepted here does not change the shared fixture.
            let _ = session;
            let scratch = CoreSession::from_api_key(harness::API_TOKEN, harness::ED_SEED_B58).unwrap();
            let result = if case.function == "session_set_session_id" {
                scratch.set_session_id(value)
            } else {
                scratch.set_impersonate(value)
            };
            out.extend(shown(&result));
            out.push(format!("{scratch:?}"));
        }
        "session_token" | "session_info" | "session_request_id" | "session_logout" => {
            let session = core.session(&a[0])?;
            out.push(format!("{session:?}"));
            out.push(format!("{:?}", session.login()));
            out.push(session.info_json());
        }
        _ => return None,
    }
    Some(out)
}
