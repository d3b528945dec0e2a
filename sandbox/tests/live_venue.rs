//! Issue 17, one regression test per point: the sandbox accepts what the live venue accepts
//! (each request shaped as a real client sent it), and strict mode refuses it with a
//! precise message. The evidence is named in sandbox/README.md ("What the sandbox
//! accepts, and why").

mod common;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use common::{ORDER, Trader, exchange, jwt_payload, limit, message, now_ms, sandbox, signature_headers, strict};
use ed25519_dalek::{Signer as _, SigningKey};
use perps_sandbox::{Sandbox, SandboxConfig};
use serde_json::{Value, json};

/// Point 1 (fox88-tw / Bonfire-Lab: one constant id for every request, not a UUID).
#[test]
fn a_constant_request_id_is_booked_and_counted() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    let ts = now_ms().to_string();
    let second = ORDER.replace("64000", "64001");
    assert_eq!(t.post_signed("/api/new_order", ORDER, "standx-bot", &ts).0, 200);
    assert_eq!(t.post_signed("/api/new_order", &second, "standx-bot", &ts).0, 200);
    // The same signed request again (a retry after a timeout): the venue books it again.
    assert_eq!(t.post_signed("/api/new_order", ORDER, "standx-bot", &ts).0, 200);
    let (_, open) = t.get("/api/query_open_orders");
    assert_eq!(open["total"], 3, "three orders: nothing de-duplicated");
    let stats = sb.stats();
    assert_eq!((stats.repeated_request_ids, stats.identical_signed_requests, stats.orders_accepted), (2, 1, 3));
    let log = sb.requests(10);
    let flags: Vec<(bool, bool)> = log
        .iter()
        .filter(|r| r["path"] == "/api/new_order")
        .map(|r| (r["repeated_request_id"].as_bool().unwrap(), r["identical_signed_request"].as_bool().unwrap()))
        .collect();
    assert_eq!(flags, [(false, false), (true, false), (true, true)]);

    let sb = strict();
    let t = Trader::with_api_key(&sb);
    let (status, answer) = t.post_signed("/api/new_order", ORDER, "standx-bot", &ts);
    assert_eq!((status, message(&answer)), (400, "x-request-id must be a UUID (strict mode)".into()));
    let id = uuid::Uuid::new_v4().to_string();
    assert_eq!(t.post_signed("/api/new_order", ORDER, &id, &ts).0, 200);
    let (status, answer) = t.post_signed("/api/new_order", &second, &id.to_uppercase(), &ts);
    assert_eq!((status, message(&answer)), (400, "duplicate x-request-id (strict mode)".into()));
}

/// A Solana sign-in: prepare, then the wallet's signature document with `input` as given.
fn solana_login(sb: &Sandbox, input: impl Fn(&Value, &str) -> Value, wallet: &SigningKey) -> (u16, Value) {
    solana_login_tampered(sb, input, wallet, |_| {})
}

/// The same, with the signature document changed by `tamper` before it is sent.
fn solana_login_tampered(
    sb: &Sandbox,
    input: impl Fn(&Value, &str) -> Value,
    wallet: &SigningKey,
    tamper: impl Fn(&mut Value),
) -> (u16, Value) {
    let agent = common::agent();
    let address = bs58::encode(wallet.verifying_key().to_bytes()).into_string();
    let session = SigningKey::from_bytes(&[8; 32]);
    let request_id = bs58::encode(session.verifying_key().to_bytes()).into_string();
    let headers = [("Content-Type".to_owned(), "application/json".to_owned())];
    let body = json!({"address": address, "requestId": request_id}).to_string();
    let (_, answer) =
        exchange(&agent, "POST", &format!("{}/v1/offchain/prepare-signin?chain=solana", sb.url()), &headers, &body);
    let jwt = answer["signedData"].as_str().unwrap();
    let payload = jwt_payload(jwt);
    let message = payload["message"].as_str().unwrap();
    let mut doc = json!({"input": input(&payload, message), "output": {
        "signedMessage": message.as_bytes(),
        "signature": wallet.sign(message.as_bytes()).to_bytes().to_vec(),
        "account": {"publicKey": wallet.verifying_key().to_bytes().to_vec()},
    }});
    tamper(&mut doc);
    let login = json!({"signature": STANDARD.encode(doc.to_string()), "signedData": jwt}).to_string();
    exchange(&agent, "POST", &format!("{}/v1/offchain/login?chain=solana", sb.url()), &headers, &login)
}

/// Point 2 (bitwii traded live with nine fields of the payload in `input`).
#[test]
fn a_solana_input_subset_signs_in_and_output_stays_strict() {
    let sb = sandbox();
    let wallet = SigningKey::from_bytes(&[5; 32]);
    let nine = |p: &Value, _: &str| {
        let keep = ["domain", "uri", "statement", "version", "chainId", "nonce", "address", "issuedAt", "message"];
        Value::Object(keep.iter().map(|k| ((*k).to_owned(), p[*k].clone())).collect())
    };
    let (status, answer) = solana_login(&sb, nine, &wallet);
    assert_eq!((status, &answer["chain"]), (200, &json!("solana")), "{answer}");
    assert_eq!(solana_login(&sb, |_, m| json!(m), &wallet).0, 200, "a string input");
    let (status, answer) = solana_login(&sb, |p, _| json!({"nonce": "other", "address": p["address"]}), &wallet);
    assert!(status == 400 && message(&answer).contains("input.nonce"), "{answer}");
    // output is verified strictly: the key, the signature and the signed bytes.
    let other = SigningKey::from_bytes(&[6; 32]);
    let tampered = [
        (json!(["output", "account", "publicKey"]), json!(other.verifying_key().to_bytes().to_vec()), 401, "publicKey"),
        (json!(["output", "signature"]), json!(other.sign(b"x").to_bytes().to_vec()), 401, "does not verify"),
        (json!(["output", "signedMessage"]), json!(b"another message".to_vec()), 400, "signedMessage"),
    ];
    for (path, value, expected, fragment) in tampered {
        let set = |doc: &mut Value| {
            let keys: Vec<&str> = path.as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
            let mut at = doc;
            for k in &keys[..keys.len() - 1] {
                at = &mut at[*k];
            }
            at[keys[keys.len() - 1]] = value.clone();
        };
        let (status, answer) = solana_login_tampered(&sb, nine, &wallet, set);
        assert!(status == expected && message(&answer).contains(fragment), "{path}: {status} {answer}");
    }

    let sb = strict();
    let (status, answer) = solana_login(&sb, nine, &wallet);
    assert_eq!(
        (status, message(&answer)),
        (400, "solana signature input is not the signed-in payload (strict mode)".into())
    );
    assert_eq!(solana_login(&sb, |p, _| p.clone(), &wallet).0, 200);
}

/// Point 3 (ethan0xbuilds special-cases exactly this text).
#[test]
fn stale_or_future_timestamps_are_403_signature_has_expired() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    for skew in [-31_000i128, 31_000] {
        let ts = (now_ms() as i128 + skew).to_string();
        let (status, answer) = t.post_signed("/api/new_order", ORDER, &uuid::Uuid::new_v4().to_string(), &ts);
        assert_eq!(status, 403, "{answer}");
        assert!(message(&answer).contains("signature has expired"), "{answer}");
    }
    // The venue clock can move while it runs: the same local clock is now stale.
    sb.set_clock_offset_ms(-60_000);
    assert_eq!(t.post("/api/new_order", ORDER).0, 403);
    sb.set_clock_offset_ms(0);
    assert_eq!(t.post("/api/new_order", ORDER).0, 200);
}

/// Point 4 (kevinfantasy2008/standx: a live token issued for a base64 SPKI-DER key).
#[test]
fn any_request_id_signs_in_and_an_undecodable_key_fails_at_signature_time() {
    let sb = sandbox();
    let agent = common::agent();
    let token = common::bsc_login(&agent, &sb.url(), "my-session-1");
    assert_eq!(jwt_payload(&token)["requestId"], "my-session-1", "carried into the token");
    let t = Trader { agent, url: sb.url(), token, key: SigningKey::from_bytes(&[1; 32]) };
    assert_eq!(t.get("/api/query_balance").0, 200, "reads need no body signature");
    let (status, answer) = t.post("/api/new_order", ORDER);
    assert!(status == 403 && message(&answer).contains("not an Ed25519 public key"), "{answer}");

    let key = SigningKey::from_bytes(&[2; 32]);
    let mut spki = vec![0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00];
    spki.extend_from_slice(key.verifying_key().as_bytes());
    let agent = common::agent();
    let token = common::bsc_login(&agent, &sb.url(), &STANDARD.encode(&spki));
    let t = Trader { agent, url: sb.url(), token, key };
    assert_eq!(t.post("/api/new_order", ORDER).0, 200, "a base64 SPKI-DER key signs bodies");

    let sb = strict();
    let body = json!({"address": common::BSC_ADDRESS, "requestId": "my-session-1"}).to_string();
    let url = format!("{}/v1/offchain/prepare-signin?chain=bsc", sb.url());
    let (status, answer) =
        exchange(&common::agent(), "POST", &url, &[("Content-Type".into(), "application/json".into())], &body);
    assert_eq!((status, &answer["success"]), (200, &json!(false)));
    assert!(message(&answer).contains("(strict mode)"), "{answer}");
}

/// Point 5 (Bonfire-Lab's live test sends a market order without time_in_force).
#[test]
fn market_orders_may_omit_time_in_force() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    let market = r#"{"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"0.001","reduce_only":false,"cl_ord_id":"bonfire-1"}"#;
    assert_eq!(t.post("/api/new_order", market).0, 200);
    assert_eq!(t.order_by_cl("bonfire-1")["status"], "filled");
    let limit_without = ORDER.replace(r#","time_in_force":"gtc""#, "");
    assert_eq!(t.post("/api/new_order", &limit_without).0, 400, "a limit order still needs it");

    let sb = strict();
    let t = Trader::with_api_key(&sb);
    let (status, answer) = t.post("/api/new_order", market);
    assert_eq!(
        (status, message(&answer)),
        (400, "time_in_force is required on market orders too (strict mode)".into())
    );
}

/// Point 6 (sbtobb's adapter and the ws-api doc example omit the version header).
#[test]
fn a_missing_sign_version_is_v1() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    let send = |sb: &Sandbox, t: &Trader, version: Option<&str>| {
        let id = uuid::Uuid::new_v4().to_string();
        let ts = now_ms().to_string();
        let mut headers = signature_headers(&t.key, &id, &ts, ORDER);
        match version {
            None => headers.retain(|(k, _)| k != "x-request-sign-version"),
            Some(v) => headers[0].1 = v.into(),
        }
        headers.push(t.bearer());
        headers.push(("Content-Type".into(), "application/json".into()));
        exchange(&t.agent, "POST", &format!("{}/api/new_order", sb.url()), &headers, ORDER)
    };
    assert_eq!(send(&sb, &t, None).0, 200);
    let (status, answer) = send(&sb, &t, Some("v2"));
    assert!(status == 400 && message(&answer).contains("v2"), "{answer}");
    let sb = strict();
    let t = Trader::with_api_key(&sb);
    let (status, answer) = send(&sb, &t, None);
    assert_eq!((status, message(&answer)), (400, "missing header x-request-sign-version (strict mode)".into()));
}

/// Point 7 (WJ's live-verified decoder: `id`, ISO times, the list envelope with code and
/// message, the reference statuses; market and ioc orders never resting).
#[test]
fn orders_and_lists_decode_as_wj_reads_them() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    t.order(limit("BTC-USD", "buy", "0.01", "64000", "gtc", "wj-rest"));
    t.order(limit("BTC-USD", "buy", "0.01", "64000", "ioc", "wj-ioc"));
    t.order(json!({"symbol":"BTC-USD","side":"sell","order_type":"market","qty":"0.01","time_in_force":"ioc","reduce_only":false,"cl_ord_id":"wj-mkt"}));
    let (_, open) = t.get("/api/query_open_orders");
    for field in ["code", "message", "page_size", "result", "total"] {
        assert!(open.get(field).is_some(), "{field}: {open}");
    }
    let resting: Vec<&str> =
        open["result"].as_array().unwrap().iter().map(|o| o["cl_ord_id"].as_str().unwrap()).collect();
    assert_eq!(resting, ["wj-rest"]);
    let (_, all) = t.get("/api/query_orders");
    let statuses: Vec<&str> = all["result"].as_array().unwrap().iter().map(|o| o["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["filled", "canceled", "open"]);
    for o in all["result"].as_array().unwrap() {
        assert!(o["id"].is_u64() && o["created_at"].as_str().unwrap().ends_with('Z') && o["updated_at"].is_string());
    }
}

/// Point 8 (WJ refuses a base URL with a path; sbtobb's URL join drops the prefix).
#[test]
fn the_plain_root_url_serves_sign_in_and_trading() {
    let sb = sandbox();
    assert_eq!(sb.url(), format!("http://127.0.0.1:{}", sb.port()));
    let t = Trader::sign_in(&sb, SigningKey::from_bytes(&[3; 32]));
    assert_eq!(t.post("/api/new_order", ORDER).0, 200);
    assert_eq!(t.post("/perps/api/new_order", ORDER).0, 200, "the prefixed form still works");
    assert_eq!(t.get("/perps/api/query_open_orders").1["total"], 2);
}

/// Point 9 (discountry/standx-perps-auth-tool exports a JWT with a chosen expiry; WJ
/// clamps its run time to the `exp` claim).
#[test]
fn api_credentials_are_jwts_whose_exp_is_enforced() {
    let sb = sandbox();
    let credential = sb.issue_api_key(Some(120)).unwrap();
    let claims = jwt_payload(&credential.token);
    assert_eq!(credential.token.split('.').count(), 3);
    assert_eq!(
        (claims["exp"].as_i64(), &claims["requestId"]),
        (Some(credential.expires_at), &json!(credential.public_key))
    );
    let seed: [u8; 32] = bs58::decode(&credential.private_key).into_vec().unwrap().try_into().unwrap();
    let t = Trader {
        agent: common::agent(),
        url: sb.url(),
        token: credential.token.clone(),
        key: SigningKey::from_bytes(&seed),
    };
    assert_eq!(t.post("/api/new_order", ORDER).0, 200);
    sb.set_clock_offset_ms(121_000);
    let (status, answer) = t.get("/api/query_open_orders");
    assert!(status == 401 && message(&answer).contains("expired"), "{answer}");
    // Over HTTP, as a rehearsal in another language issues one.
    let (status, issued) =
        exchange(&t.agent, "POST", &format!("{}/api-key", sb.admin_url()), &[], r#"{"expires_seconds":60}"#);
    assert_eq!(status, 200);
    assert!(issued["token"].is_string() && issued["private_key"].is_string() && issued["expires_at"].is_i64());
    // A configured credential whose token is a JWT has its exp honoured too.
    let key = SigningKey::from_bytes(&[9; 32]);
    let public = bs58::encode(key.verifying_key().to_bytes()).into_string();
    let expired = format!("e30.{}.c2ln", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"exp":1000}"#));
    let sb = Sandbox::start(SandboxConfig { api_keys: vec![(expired.clone(), public)], ..Default::default() }).unwrap();
    let t = Trader { agent: common::agent(), url: sb.url(), token: expired, key };
    assert_eq!(t.get("/api/query_balance").0, 401);
}

/// The issue's "done when": a client using the plain root URL, a constant x-request-id, a
/// Solana input subset, a market order without time_in_force and no version header signs
/// in and trades.
#[test]
fn a_client_with_every_live_habit_trades() {
    let sb = sandbox();
    let wallet = SigningKey::from_bytes(&[7; 32]);
    let subset = |p: &Value, _: &str| json!({"address": p["address"], "nonce": p["nonce"], "message": p["message"]});
    let (status, login) = solana_login(&sb, subset, &wallet);
    assert_eq!(status, 200, "{login}");
    let key = SigningKey::from_bytes(&[8; 32]);
    let token = login["token"].as_str().unwrap();
    let market = r#"{"symbol":"ETH-USD","side":"buy","order_type":"market","qty":"0.5","reduce_only":false}"#;
    for _ in 0..2 {
        let ts = now_ms().to_string();
        let mut headers = signature_headers(&key, "1", &ts, market);
        headers.retain(|(k, _)| k != "x-request-sign-version");
        headers.push(("Authorization".into(), format!("Bearer {token}")));
        headers.push(("Content-Type".into(), "application/json".into()));
        let (status, answer) =
            exchange(&common::agent(), "POST", &format!("{}/api/new_order", sb.url()), &headers, market);
        assert_eq!((status, &answer["code"]), (200, &json!(0)), "{answer}");
    }
    let t = Trader { agent: common::agent(), url: sb.url(), token: token.into(), key };
    let p = t.position("ETH-USD").unwrap();
    assert_eq!(p["qty"], "1.000", "both orders filled: {p}");
}
