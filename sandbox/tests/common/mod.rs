//! What the sandbox's own tests share: a third-party client written by hand (ureq for HTTP,
//! ed25519-dalek for body signatures, k256 for the wallet), never the library.

#![allow(dead_code)] // each test file uses its own part of this module

pub mod ws;

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ed25519_dalek::{Signer as _, SigningKey};
use perps_sandbox::{Sandbox, SandboxConfig};
use serde_json::{Value, json};
use sha3::{Digest, Keccak256};

/// Hardhat/Anvil account #0: a published test key.
pub const BSC_KEY: &str = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
pub const BSC_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

/// A sandbox whose marks never move by themselves (deterministic).
pub fn sandbox() -> Sandbox {
    Sandbox::start(SandboxConfig::default()).expect("sandbox starts")
}

/// The same in strict mode (the refusals kept behind an option).
pub fn strict() -> Sandbox {
    Sandbox::start(SandboxConfig { strict: true, ..Default::default() }).expect("sandbox starts")
}

/// A resting limit order as the docs show one.
pub const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"64000","time_in_force":"gtc","reduce_only":false}"#;

/// An answer's `message` ("" when there is none).
pub fn message(answer: &Value) -> String {
    answer["message"].as_str().unwrap_or_default().to_owned()
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().into()
}

pub fn now_ms() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis()
}

/// One HTTP exchange; the body parsed as JSON (`Value::String` when it is not JSON).
pub fn exchange(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: &str,
) -> (u16, Value) {
    let mut response = if method == "GET" {
        let mut rq = agent.get(url);
        for (k, v) in headers {
            rq = rq.header(k.as_str(), v.as_str());
        }
        rq.call()
    } else {
        let mut rq = agent.post(url);
        for (k, v) in headers {
            rq = rq.header(k.as_str(), v.as_str());
        }
        rq.send(body)
    }
    .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// The v1 body-signature headers, as the docs describe them.
pub fn signature_headers(key: &SigningKey, id: &str, ts: &str, body: &str) -> Vec<(String, String)> {
    let signature = key.sign(format!("v1,{id},{ts},{body}").as_bytes());
    vec![
        ("x-request-sign-version".into(), "v1".into()),
        ("x-request-id".into(), id.into()),
        ("x-request-timestamp".into(), ts.into()),
        ("x-request-signature".into(), STANDARD.encode(signature.to_bytes())),
    ]
}

/// A trading client: a bearer token and the Ed25519 key that signs its bodies.
pub struct Trader {
    pub agent: ureq::Agent,
    /// The root URL (`http://127.0.0.1:PORT`); the venue's paths are joined to it.
    pub url: String,
    pub token: String,
    pub key: SigningKey,
}

impl Trader {
    /// With an API credential the sandbox issues (as the venue's web site does).
    pub fn with_api_key(sb: &Sandbox) -> Trader {
        let credential = sb.issue_api_key(None).unwrap();
        let seed: [u8; 32] = bs58::decode(&credential.private_key).into_vec().unwrap().try_into().unwrap();
        Trader { agent: agent(), url: sb.url(), token: credential.token, key: SigningKey::from_bytes(&seed) }
    }

    /// Wallet sign-in (bsc) with `request_key` as the session key, by hand.
    pub fn sign_in(sb: &Sandbox, request_key: SigningKey) -> Trader {
        let agent = agent();
        let request_id = bs58::encode(request_key.verifying_key().to_bytes()).into_string();
        let token = bsc_login(&agent, &sb.url(), &request_id);
        Trader { agent, url: sb.url(), token, key: request_key }
    }

    pub fn bearer(&self) -> (String, String) {
        ("Authorization".into(), format!("Bearer {}", self.token))
    }

    pub fn get(&self, path: &str) -> (u16, Value) {
        exchange(&self.agent, "GET", &format!("{}{path}", self.url), &[self.bearer()], "")
    }

    /// A signed POST with a fresh UUID and the current time.
    pub fn post(&self, path: &str, body: &str) -> (u16, Value) {
        let id = uuid::Uuid::new_v4().to_string();
        self.post_signed(path, body, &id, &now_ms().to_string())
    }

    pub fn post_signed(&self, path: &str, body: &str, id: &str, ts: &str) -> (u16, Value) {
        let mut headers = signature_headers(&self.key, id, ts, body);
        headers.push(self.bearer());
        headers.push(("Content-Type".into(), "application/json".into()));
        exchange(&self.agent, "POST", &format!("{}{path}", self.url), &headers, body)
    }

    /// new_order; asserts the venue's acceptance.
    pub fn order(&self, order: Value) -> Value {
        let (status, answer) = self.post("/api/new_order", &order.to_string());
        assert_eq!((status, &answer["code"]), (200, &json!(0)), "{order} → {answer}");
        answer
    }

    pub fn order_by_cl(&self, cl_ord_id: &str) -> Value {
        let (status, order) = self.get(&format!("/api/query_order?cl_ord_id={cl_ord_id}"));
        assert_eq!(status, 200, "{order}");
        order
    }

    pub fn position(&self, symbol: &str) -> Option<Value> {
        let (status, list) = self.get(&format!("/api/query_positions?symbol={symbol}"));
        assert_eq!(status, 200, "{list}");
        list.as_array().unwrap().first().cloned()
    }

    pub fn balance(&self) -> Value {
        let (status, balance) = self.get("/api/query_balance");
        assert_eq!(status, 200, "{balance}");
        balance
    }
}

/// A limit order body.
pub fn limit(symbol: &str, side: &str, qty: &str, price: &str, tif: &str, cl: &str) -> Value {
    json!({"symbol": symbol, "side": side, "order_type": "limit", "qty": qty, "price": price,
           "time_in_force": tif, "reduce_only": false, "cl_ord_id": cl})
}

/// prepare-signin + EIP-191 signature + login for the test wallet; the token.
pub fn bsc_login(agent: &ureq::Agent, root: &str, request_id: &str) -> String {
    let body = json!({"address": BSC_ADDRESS, "requestId": request_id}).to_string();
    let json_header = [("Content-Type".to_owned(), "application/json".to_owned())];
    let (status, answer) =
        exchange(agent, "POST", &format!("{root}/v1/offchain/prepare-signin?chain=bsc"), &json_header, &body);
    assert_eq!((status, &answer["success"]), (200, &json!(true)), "{answer}");
    let jwt = answer["signedData"].as_str().unwrap();
    let message = jwt_payload(jwt)["message"].as_str().unwrap().to_owned();
    let login = json!({"signature": personal_sign(&message), "signedData": jwt}).to_string();
    let (status, answer) =
        exchange(agent, "POST", &format!("{root}/v1/offchain/login?chain=bsc"), &json_header, &login);
    assert_eq!(status, 200, "{answer}");
    answer["token"].as_str().unwrap().to_owned()
}

/// The payload of a compact JWS (not verified: the sandbox's own tests of sign-in do that).
pub fn jwt_payload(jwt: &str) -> Value {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(jwt.split('.').nth(1).unwrap()).unwrap()).unwrap()
}

/// EIP-191 personal_sign with the test wallet: "0x" + r||s||v (v = 27/28).
pub fn personal_sign(message: &str) -> String {
    let key = k256::ecdsa::SigningKey::from_slice(&hex(BSC_KEY)).unwrap();
    let mut h = Keccak256::new();
    h.update(format!("\x19Ethereum Signed Message:\n{}", message.len()).as_bytes());
    h.update(message.as_bytes());
    let (sig, recid) = key.sign_prehash_recoverable(&h.finalize());
    let mut out: Vec<u8> = sig.to_bytes().to_vec();
    out.push(27 + recid.to_byte());
    format!("0x{}", out.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

pub fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// A decimal string as f64, for comparisons with a tolerance.
pub fn num(v: &Value) -> f64 {
    v.as_str().unwrap_or_else(|| panic!("not a decimal string: {v}")).parse().unwrap()
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}
