//! A scripted venue for the sign-in fault tests (`tests/server_faults_signin.rs`): a rogue
//! server on 127.0.0.1 that signs real challenges with test keys, serves certs and login
//! answers chosen by the test, and keeps its own clock. Its own module because it is a
//! helper of some size, not a test.

use crate::common::abi::{self, Client, Failure, Session, login, prepare};
use crate::common::{self, VenueKey};
use crate::helpers::{BSC_ADDRESS, BSC_KEY};
use crate::rogue_server::{Rogue, Seen, Step, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

/// The venue's answer to a login request, chosen by the test.
pub type LoginScript = Box<dyn Fn(&Seen) -> Vec<Step> + Send + Sync>;

/// A scripted venue for sign-in: challenges signed by `signers[active]` with the venue
/// clock (system clock + `clock_secs`); certs and login answers chosen by the test.
pub struct ScriptedVenue {
    pub signers: Vec<VenueKey>,
    pub active: Arc<AtomicUsize>,
    pub clock_secs: Arc<AtomicI64>,
    pub certs: Box<dyn Fn(usize) -> Vec<Step> + Send + Sync>,
    pub login: LoginScript,
}

impl ScriptedVenue {
    pub fn new(signer: VenueKey, certs: Box<dyn Fn(usize) -> Vec<Step> + Send + Sync>) -> ScriptedVenue {
        ScriptedVenue {
            signers: vec![signer],
            active: Arc::default(),
            clock_secs: Arc::default(),
            certs,
            login: login_ok(),
        }
    }

    /// Signed by key 7 (kid "k1"), whose certs are served.
    pub fn honest() -> ScriptedVenue {
        ScriptedVenue::new(VenueKey::new(7, Some("k1")), certs_of(&[&VenueKey::new(7, Some("k1"))]))
    }
}

pub fn now_secs() -> i64 {
    perps::body_sign::now_ms() / 1000
}

pub fn login_ok() -> LoginScript {
    Box::new(|_| json(200, &format!(r#"{{"token":"login-token-9c1d","chain":"bsc","address":"{BSC_ADDRESS}"}}"#)))
}

pub fn certs_of(keys: &[&VenueKey]) -> Box<dyn Fn(usize) -> Vec<Step> + Send + Sync> {
    let set = common::jwk_set(keys);
    Box::new(move |_| json(200, &set))
}

pub fn start_venue(venue: ScriptedVenue) -> Rogue {
    let certs_served = AtomicUsize::new(0);
    Rogue::start(move |seen, _| match seen.path() {
        "/auth/v1/offchain/prepare-signin" => {
            let asked = seen.json();
            let iat = now_secs() + venue.clock_secs.load(Ordering::SeqCst);
            let payload = common::signin_payload(
                "bsc",
                asked["address"].as_str().unwrap_or(""),
                asked["requestId"].as_str().unwrap_or(""),
                iat,
                iat + 180,
            );
            let signer = &venue.signers[venue.active.load(Ordering::SeqCst)];
            let jws = signer.sign_jws(&signer.header(), &payload.to_string());
            json(200, &serde_json::json!({"success": true, "signedData": jws}).to_string())
        }
        "/auth/v1/offchain/certs" => (venue.certs)(certs_served.fetch_add(1, Ordering::SeqCst)),
        "/auth/v1/offchain/login" => (venue.login)(seen),
        "/perps/api/kline/time" => json(200, &(now_secs() + venue.clock_secs.load(Ordering::SeqCst)).to_string()),
        _ => json(200, r#"{"code":0}"#),
    })
}

pub fn prepare_login(client: &Client, session: &Session) -> Result<String, Failure> {
    let payload = prepare(client, session, "bsc", BSC_ADDRESS)?;
    let signature = abi::wallet_sign("bsc", BSC_KEY, &payload).unwrap();
    login(client, session, &signature, 3600)
}
