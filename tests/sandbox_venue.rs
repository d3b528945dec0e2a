//! The sandbox venue tested on its own, over HTTP, with the crypto crates only (never the
//! client modules of this crate), so a bug in the client cannot hide one in the sandbox.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ed25519_dalek::Signer as _;
use perps_sandbox::{Faults, Sandbox, SandboxConfig};
use serde_json::{Value, json};
use sha3::{Digest, Keccak256};

const BSC_KEY: &str = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const BSC_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"50000","time_in_force":"gtc","reduce_only":false}"#;

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().into()
}

fn call(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    headers: &[(&str, String)],
    body: &str,
) -> Result<(u16, String), ureq::Error> {
    let mut response = if method == "GET" {
        let mut rq = agent.get(url);
        for (k, v) in headers {
            rq = rq.header(*k, v);
        }
        rq.call()?
    } else {
        let mut rq = agent.post(url).header("Content-Type", "application/json");
        for (k, v) in headers {
            rq = rq.header(*k, v);
        }
        rq.send(body)?
    };
    Ok((response.status().as_u16(), response.body_mut().read_to_string()?))
}

fn json_call(agent: &ureq::Agent, method: &str, url: &str, headers: &[(&str, String)], body: &str) -> (u16, Value) {
    let (status, text) = call(agent, method, url, headers, body).expect("HTTP exchange");
    (status, serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}")))
}

/// The decoded payload of a compact JWS, after checking its ES256 signature with `jwks`.
fn verify_jwt(jwt: &str, jwks: &Value) -> Value {
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3);
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
    assert_eq!(header["alg"], "ES256");
    let jwk = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kid"] == header["kid"])
        .expect("the JWT's kid is in the certs");
    let mut sec1 = vec![4u8];
    for coord in ["x", "y"] {
        sec1.extend(URL_SAFE_NO_PAD.decode(jwk[coord].as_str().unwrap()).unwrap());
    }
    let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(&sec1).unwrap();
    let sig = p256::ecdsa::Signature::from_slice(&URL_SAFE_NO_PAD.decode(parts[2]).unwrap()).unwrap();
    let input = format!("{}.{}", parts[0], parts[1]);
    p256::ecdsa::signature::Verifier::verify(&key, input.as_bytes(), &sig).expect("ES256 verifies");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap()
}

/// EIP-191 personal_sign with the test wallet: "0x" + r||s||v (v = 27/28).
fn personal_sign(message: &str) -> String {
    let key = k256::ecdsa::SigningKey::from_slice(&hex(BSC_KEY)).unwrap();
    let mut h = Keccak256::new();
    h.update(format!("\x19Ethereum Signed Message:\n{}", message.len()).as_bytes());
    h.update(message.as_bytes());
    let (sig, recid) = key.sign_prehash_recoverable(&h.finalize());
    let mut out: Vec<u8> = sig.to_bytes().to_vec();
    out.push(27 + recid.to_byte());
    format!("0x{}", out.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// The four body-signature headers for `body`, signed now with `key`.
fn signed_headers(key: &ed25519_dalek::SigningKey, token: &str, body: &str) -> Vec<(&'static str, String)> {
    let id = uuid::Uuid::new_v4().to_string();
    let ts = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis().to_string();
    let sig = key.sign(format!("v1,{id},{ts},{body}").as_bytes());
    vec![
        ("Authorization", format!("Bearer {token}")),
        ("x-request-sign-version", "v1".into()),
        ("x-request-id", id),
        ("x-request-timestamp", ts),
        ("x-request-signature", STANDARD.encode(sig.to_bytes())),
    ]
}

/// prepare-signin for the test wallet with `key` as requestId; the verified payload.
fn prepare(agent: &ureq::Agent, sb: &Sandbox, key: &ed25519_dalek::SigningKey) -> (String, Value) {
    let request_id = bs58::encode(key.verifying_key().to_bytes()).into_string();
    let body = json!({"address": BSC_ADDRESS, "requestId": request_id}).to_string();
    let url = format!("{}/v1/offchain/prepare-signin?chain=bsc", sb.base_url());
    let (status, answer) = json_call(agent, "POST", &url, &[], &body);
    assert_eq!((status, &answer["success"]), (200, &json!(true)), "{answer}");
    let jwt = answer["signedData"].as_str().unwrap().to_owned();
    let (_, jwks) = json_call(agent, "GET", &format!("{}/v1/offchain/certs", sb.base_url()), &[], "");
    let payload = verify_jwt(&jwt, &jwks);
    assert_eq!(payload["requestId"], request_id.as_str());
    (jwt, payload)
}

fn login(agent: &ureq::Agent, sb: &Sandbox, jwt: &str, signature: &str) -> (u16, Value) {
    let url = format!("{}/v1/offchain/login?chain=bsc", sb.base_url());
    let body = json!({"signature": signature, "signedData": jwt, "expiresSeconds": 3600}).to_string();
    json_call(agent, "POST", &url, &[], &body)
}

#[test]
fn certs_and_challenge() {
    let sb = Sandbox::start(SandboxConfig::default()).unwrap();
    let agent = agent();
    let certs_url = format!("{}/v1/offchain/certs", sb.base_url());
    let (status, jwks) = json_call(&agent, "GET", &certs_url, &[], "");
    assert_eq!(status, 200);
    let keys = jwks["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    for (field, value) in [("kty", "EC"), ("crv", "P-256"), ("alg", "ES256"), ("use", "sig")] {
        assert_eq!(keys[0][field], value);
    }

    let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let (_, payload) = prepare(&agent, &sb, &key);
    assert_eq!(payload["address"], BSC_ADDRESS);
    assert_eq!(payload["chainId"], 56);
    assert_eq!(payload["version"], "1");
    assert_eq!(payload["exp"].as_i64().unwrap() - payload["iat"].as_i64().unwrap(), 180);
    let message = payload["message"].as_str().unwrap();
    assert!(message.contains(&format!("wants you to sign in with your Ethereum account:\n{BSC_ADDRESS}\n")));
    assert!(message.contains(&format!("Nonce: {}\n", payload["nonce"].as_str().unwrap())));

    // A missing requestId is refused with success false. One that is not base58 of 32
    // bytes is accepted, as the live venue does (its signatures fail later, with 403), and
    // refused at once in strict mode.
    let url = format!("{}/v1/offchain/prepare-signin?chain=bsc", sb.base_url());
    let missing = json!({"address": BSC_ADDRESS}).to_string();
    let (status, answer) = json_call(&agent, "POST", &url, &[], &missing);
    assert_eq!((status, &answer["success"]), (200, &json!(false)));
    let bad = json!({"address": BSC_ADDRESS, "requestId": "not-base58!"}).to_string();
    let (status, answer) = json_call(&agent, "POST", &url, &[], &bad);
    assert_eq!((status, &answer["success"]), (200, &json!(true)));
    let strict = Sandbox::start(SandboxConfig { strict: true, ..Default::default() }).unwrap();
    let url = format!("{}/v1/offchain/prepare-signin?chain=bsc", strict.base_url());
    let (status, answer) = json_call(&agent, "POST", &url, &[], &bad);
    assert_eq!((status, &answer["success"]), (200, &json!(false)));

    // After a rotation the certs serve only the new key.
    sb.rotate_key();
    let (_, rotated) = json_call(&agent, "GET", &certs_url, &[], "");
    assert_ne!(rotated["keys"][0]["kid"], keys[0]["kid"]);
    assert_eq!(rotated["keys"].as_array().unwrap().len(), 1);
}

#[test]
fn bsc_login_and_signed_orders() {
    let sb = Sandbox::start(SandboxConfig::default()).unwrap();
    let agent = agent();
    let key = ed25519_dalek::SigningKey::from_bytes(&[9; 32]);
    let (jwt, payload) = prepare(&agent, &sb, &key);
    let message = payload["message"].as_str().unwrap();

    let (status, answer) = login(&agent, &sb, &jwt, &personal_sign("another message"));
    assert_eq!(status, 401, "{answer}");
    let (status, answer) = login(&agent, &sb, &jwt, &personal_sign(message));
    assert_eq!(status, 200, "{answer}");
    assert!(answer["address"].as_str().unwrap().eq_ignore_ascii_case(BSC_ADDRESS));
    assert_eq!((&answer["chain"], &answer["perpsAlpha"]), (&json!("bsc"), &json!(true)));
    let token = answer["token"].as_str().unwrap().to_owned();
    let (status, answer) = login(&agent, &sb, &jwt, &personal_sign(message));
    assert_eq!(status, 400, "a nonce is single use: {answer}");

    let order_url = format!("{}/api/new_order", sb.perps_url());
    let headers = signed_headers(&key, &token, ORDER);
    let (status, answer) = json_call(&agent, "POST", &order_url, &headers, ORDER);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer, json!({"code": 0, "message": "success", "request_id": headers[2].1}));
    // The same signed request again (a client retrying after a timeout): the live venue
    // books it again, so the sandbox does too, and counts it.
    let (status, _) = json_call(&agent, "POST", &order_url, &headers, ORDER);
    assert_eq!(status, 200, "a repeated signed request is accepted, as on the venue");
    assert_eq!(sb.stats().identical_signed_requests, 1);

    let headers = signed_headers(&key, &token, ORDER);
    let altered = ORDER.replace("0.01", "0.02");
    let (status, _) = json_call(&agent, "POST", &order_url, &headers, &altered);
    assert_eq!(status, 403, "a body changed after signing is refused");

    let (status, open) = json_call(
        &agent,
        "GET",
        &format!("{}/api/query_open_orders", sb.perps_url()),
        &[("Authorization", format!("Bearer {token}"))],
        "",
    );
    assert_eq!((status, open["result"].as_array().unwrap().len()), (200, 2));

    let stats = sb.stats();
    assert_eq!((stats.orders_received, stats.orders_accepted), (3, 2));
    assert_eq!(stats.connections, 1, "one kept-alive connection served every request");
}

#[test]
fn server_time_follows_the_sandbox_clock() {
    let offset_ms = 3_600_000;
    let sb = Sandbox::start(SandboxConfig { clock_offset_ms: offset_ms, ..Default::default() }).unwrap();
    let (status, text) = call(&agent(), "GET", &format!("{}/api/kline/time", sb.perps_url()), &[], "").unwrap();
    assert_eq!(status, 200);
    let venue: i64 = text.trim().parse().expect("a bare integer");
    let local = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let local = i64::try_from(local).unwrap();
    assert!((venue - local - offset_ms / 1000).abs() <= 2, "venue {venue}, local {local}");
}

#[test]
fn faults_close_and_status() {
    let sb = Sandbox::start(SandboxConfig::default()).unwrap();
    let agent = agent();
    let order_url = format!("{}/api/new_order", sb.perps_url());

    // On a kept-alive connection, as a client's order would be.
    let time_url = format!("{}/api/kline/time", sb.perps_url());
    assert_eq!(call(&agent, "GET", &time_url, &[], "").unwrap().0, 200);
    sb.set_faults(Faults { close_after_order: true, ..Default::default() });
    let outcome = call(&agent, "POST", &order_url, &[], ORDER);
    assert!(outcome.is_err(), "expected a transport error, got {outcome:?}");
    assert_eq!(sb.stats().orders_received, 1);
    let after = call(&agent, "GET", &time_url, &[], "");
    assert_eq!(after.unwrap().0, 200, "still serving");

    // The same controls over HTTP.
    let admin = format!("http://127.0.0.1:{}/_sandbox", sb.port());
    let (status, _) = json_call(&agent, "POST", &format!("{admin}/faults"), &[], r#"{"status":500}"#);
    assert_eq!(status, 200);
    let (status, answer) = json_call(&agent, "POST", &order_url, &[], ORDER);
    assert_eq!((status, &answer["code"]), (500, &json!(500)));
    let (status, _) = json_call(&agent, "POST", &format!("{admin}/faults"), &[], r#"{"nope":1}"#);
    assert_eq!(status, 400, "unknown fault names are refused");
    let (_, stats) = json_call(&agent, "GET", &format!("{admin}/stats"), &[], "");
    assert_eq!(stats["orders_received"], 2);
    let (status, rotated) = json_call(&agent, "POST", &format!("{admin}/rotate-key"), &[], "");
    assert_eq!(status, 200);
    assert!(rotated["kid"].is_string());
}

#[test]
fn solana_login_and_api_key() {
    let api_key = ed25519_dalek::SigningKey::from_bytes(&[3; 32]);
    let api_pub = bs58::encode(api_key.verifying_key().to_bytes()).into_string();
    // Strict mode: the Solana `input` must be the whole payload (the live venue also takes a
    // subset or a string; sandbox/tests/live_venue.rs checks that).
    let config = SandboxConfig { api_keys: vec![("tok-1".into(), api_pub)], strict: true, ..Default::default() };
    let sb = Sandbox::start(config).unwrap();
    let agent = agent();

    let wallet = ed25519_dalek::SigningKey::from_bytes(&[5; 32]);
    let address = bs58::encode(wallet.verifying_key().to_bytes()).into_string();
    let temp = ed25519_dalek::SigningKey::from_bytes(&[6; 32]);
    let request_id = bs58::encode(temp.verifying_key().to_bytes()).into_string();
    let body = json!({"address": address, "requestId": request_id}).to_string();
    let url = format!("{}/v1/offchain/prepare-signin?chain=solana", sb.base_url());
    let (_, answer) = json_call(&agent, "POST", &url, &[], &body);
    let jwt = answer["signedData"].as_str().unwrap();
    let payload: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(jwt.split('.').nth(1).unwrap()).unwrap()).unwrap();
    let message = payload["message"].as_str().unwrap();
    assert!(message.contains("with your Solana account:"));
    let signature = |input: &Value| {
        let doc = json!({"input": input, "output": {
            "signedMessage": message.as_bytes(),
            "signature": wallet.sign(message.as_bytes()).to_bytes().to_vec(),
            "account": {"publicKey": wallet.verifying_key().to_bytes().to_vec()},
        }});
        STANDARD.encode(doc.to_string())
    };
    let login_url = format!("{}/v1/offchain/login?chain=solana", sb.base_url());
    let send = |sig: String| {
        json_call(&agent, "POST", &login_url, &[], &json!({"signature": sig, "signedData": jwt}).to_string())
    };
    let (status, _) = send(signature(&json!(message)));
    assert_eq!(status, 400, "strict mode: input must be the payload object, not the message");
    let (status, answer) = send(signature(&payload));
    assert_eq!(status, 200, "{answer}");
    assert_eq!((&answer["address"], &answer["chain"]), (&json!(address), &json!("solana")));

    // A web-site API credential signs with its own key under its token.
    let order_url = format!("{}/api/new_order", sb.perps_url());
    let (status, answer) = json_call(&agent, "POST", &order_url, &signed_headers(&api_key, "tok-1", ORDER), ORDER);
    assert_eq!((status, &answer["code"]), (200, &json!(0)), "{answer}");
    let (status, _) = json_call(&agent, "POST", &order_url, &signed_headers(&temp, "tok-1", ORDER), ORDER);
    assert_eq!(status, 403, "a body signed by another key is refused");
}
