//! The sign-in endpoints: prepare-signin, certs and login (at `/v1/offchain/*` and under
//! `/auth`).
//!
//! As the live venue (issue 17): any non-empty `requestId` is accepted at prepare-signin and
//! carried into the token; a session whose `requestId` names no Ed25519 key signs in, and
//! each of its body signatures is refused with 403. Strict mode requires base58 at once.

use serde_json::{Map, Value, json};

use super::chain::{Chain, base58_32};
use super::clock::iso8601_utc_ms;
use super::es256::corrupt_signature;
use super::faults::Faults;
use super::http::{Incoming, Reply, error};
use super::random;
use super::request_key;
use super::state::{Session, Shared};
use super::wallet_verify::{WalletError, verify_bsc, verify_solana};

const DOMAIN: &str = "sandbox.libperps.local";
const URI: &str = "https://sandbox.libperps.local";
const STATEMENT: &str = "Sign in to the libperps sandbox venue. This request will not trigger \
a blockchain transaction or cost any gas fees.";
/// Lifetime of a sign-in challenge (venue facts: exp − iat = 180 s).
const CHALLENGE_SECS: i64 = 180;
/// Default access-token lifetime (spec: 604800 s = 7 days).
const DEFAULT_TOKEN_SECS: i64 = 604_800;

/// `POST {base}/v1/offchain/prepare-signin?chain=…`. Every refusal is HTTP 200 with
/// `success: false`: the spec's only documented failure signal for this endpoint.
pub(crate) fn prepare_signin(shared: &Shared, inc: &Incoming, faults: &Faults) -> Reply {
    match challenge(shared, inc, faults) {
        Ok(jwt) => Reply::Json(200, json!({"success": true, "signedData": jwt})),
        Err(message) => Reply::Json(200, json!({"success": false, "message": message})),
    }
}

fn challenge(shared: &Shared, inc: &Incoming, faults: &Faults) -> Result<String, String> {
    let chain = chain_param(inc)?;
    if !inc.is_json() {
        return Err("Content-Type must be application/json".into());
    }
    let body = inc.json_object()?;
    let address = body.get("address").and_then(Value::as_str).unwrap_or_default();
    if !chain.valid_address(address) {
        return Err(format!("address is not a valid {} address", chain.as_str()));
    }
    let request_id = body.get("requestId").and_then(Value::as_str).unwrap_or_default();
    if request_id.is_empty() {
        return Err("requestId is required: the base58 encoding of an Ed25519 public key".into());
    }
    if shared.config.strict && request_key::from_base58(request_id).is_none() {
        return Err("requestId must be the base58 encoding of an Ed25519 public key (strict mode)".into());
    }

    let mut now_ms = shared.clock.now_ms();
    if faults.challenge_expired {
        now_ms -= 300_000;
    }
    let iat = now_ms.div_euclid(1000);
    let issued_at = iso8601_utc_ms(now_ms);
    let nonce = random::hex::<16>();
    let message = format!(
        "{DOMAIN} wants you to sign in with your {} account:\n{address}\n\n{STATEMENT}\n\n\
         URI: {URI}\nVersion: 1\nChain ID: {}\nNonce: {nonce}\nIssued At: {issued_at}\n\
         Request ID: {request_id}",
        chain.account_noun(),
        chain.chain_id(),
    );
    let claims = json!({
        "domain": DOMAIN, "uri": URI, "statement": STATEMENT, "version": "1",
        "chainId": chain.chain_id(), "nonce": nonce, "address": address,
        "requestId": request_id, "issuedAt": issued_at, "message": message,
        "exp": iat + CHALLENGE_SECS, "iat": iat,
    });
    let keys = shared.keys();
    Ok(if faults.challenge_unknown_kid {
        keys.sign_rogue(&claims)
    } else if faults.challenge_bad_signature {
        corrupt_signature(&keys.sign(&claims))
    } else {
        keys.sign(&claims)
    })
}

/// `GET {base}/v1/offchain/certs`: the JWK set of the current key.
pub(crate) fn certs(shared: &Shared, faults: &Faults) -> Reply {
    if faults.certs_down {
        return error(503, "certificate service unavailable (sandbox fault)");
    }
    Reply::Json(200, shared.keys().jwks())
}

/// `POST {base}/v1/offchain/login?chain=…`. Malformed or stale input → 400; a wallet
/// signature that is well-formed but not the wallet's → 401.
pub(crate) fn login(shared: &Shared, inc: &Incoming, faults: &Faults) -> Reply {
    let bad = |m: String| error(400, m);
    let chain = match chain_param(inc) {
        Ok(c) => c,
        Err(m) => return bad(m),
    };
    if !inc.is_json() {
        return bad("Content-Type must be application/json".into());
    }
    let body = match inc.json_object() {
        Ok(b) => b,
        Err(m) => return bad(m),
    };
    let (Some(signature), Some(signed_data)) =
        (body.get("signature").and_then(Value::as_str), body.get("signedData").and_then(Value::as_str))
    else {
        return bad("signature and signedData are required strings".into());
    };
    let lifetime = match body.get("expiresSeconds") {
        None => DEFAULT_TOKEN_SECS,
        Some(v) => match v.as_i64() {
            Some(n) if n > 0 => n,
            _ => return bad("expiresSeconds must be a positive integer".into()),
        },
    };

    let payload = match shared.keys().verify(signed_data) {
        Ok(p) => p,
        Err(m) => return bad(format!("signedData rejected: {m}")),
    };
    let claims = match Claims::read(&payload) {
        Ok(c) => c,
        Err(m) => return bad(format!("signedData payload: {m}")),
    };
    let now = shared.clock.now_ms().div_euclid(1000);
    if claims.exp <= now {
        return bad("signedData has expired".into());
    }
    if claims.chain != chain {
        return bad(format!("signedData was issued for another chain than {}", chain.as_str()));
    }
    if shared.state().used_nonces.contains(claims.nonce) {
        return bad("signedData nonce has already been used".into());
    }
    let checked = match chain {
        Chain::Bsc => verify_bsc(claims.address, claims.message, signature),
        Chain::Solana => verify_solana(
            claims.address,
            &Value::Object(payload.clone()),
            claims.message,
            signature,
            shared.config.strict,
        ),
    };
    match checked {
        Ok(()) => {}
        Err(WalletError::Malformed(m)) => return bad(m),
        Err(WalletError::Mismatch(m)) => return error(401, m),
    }
    let Some(exp) = now.checked_add(lifetime) else {
        return bad("expiresSeconds is too large".into());
    };
    let key = request_key::decode(claims.request_id)
        .ok_or_else(|| format!("the session's requestId {:?} is not an Ed25519 public key", claims.request_id));
    let account = account_id(chain, claims.address);
    let user = format!("{}_{}", chain.as_str(), account.split_once(':').map_or("", |(_, a)| a));
    let token = shared.keys().sign(&json!({
        "sub": claims.address, "chain": chain.as_str(), "requestId": claims.request_id,
        "iat": now, "exp": exp, "jti": random::hex::<8>(),
    }));

    let mut st = shared.state();
    // Checked again under the lock: two logins racing with one challenge get one token.
    if !st.used_nonces.insert(claims.nonce.to_owned()) {
        return bad("signedData nonce has already been used".into());
    }
    st.sessions.insert(token.clone(), Session { account, user, key, expires_at: Some(exp) });
    let answered =
        if faults.login_wrong_address { other_address(chain, claims.address) } else { claims.address.to_owned() };
    drop(st);
    Reply::Json(
        200,
        json!({
            "token": token, "address": answered, "alias": format!("sandbox-{}", &claims.address[..8]),
            "chain": chain.as_str(), "perpsAlpha": true,
        }),
    )
}

/// The fields of a verified challenge the login needs.
struct Claims<'a> {
    chain: Chain,
    address: &'a str,
    message: &'a str,
    nonce: &'a str,
    request_id: &'a str,
    exp: i64,
}

impl<'a> Claims<'a> {
    fn read(p: &'a Map<String, Value>) -> Result<Claims<'a>, String> {
        let text = |k: &str| p.get(k).and_then(Value::as_str).ok_or(format!("{k} missing"));
        let chain = p.get("chainId").and_then(Value::as_u64).and_then(Chain::from_chain_id).ok_or("unknown chainId")?;
        Ok(Claims {
            chain,
            address: text("address")?,
            message: text("message")?,
            nonce: text("nonce")?,
            request_id: text("requestId")?,
            exp: p.get("exp").and_then(Value::as_i64).ok_or("exp missing")?,
        })
    }
}

fn chain_param(inc: &Incoming) -> Result<Chain, String> {
    let chain = inc.query_param("chain")?.ok_or("query parameter chain is required")?;
    Chain::parse(chain).ok_or_else(|| format!("unsupported chain {chain:?}; expected bsc or solana"))
}

/// One account per wallet: EVM addresses are case-insensitive, base58 ones are not.
fn account_id(chain: Chain, address: &str) -> String {
    match chain {
        Chain::Bsc => format!("bsc:{}", address.to_ascii_lowercase()),
        Chain::Solana => format!("solana:{address}"),
    }
}

/// A valid address of the same chain that is not `address` (the `login_wrong_address` fault).
fn other_address(chain: Chain, address: &str) -> String {
    match chain {
        Chain::Bsc => {
            let (head, last) = address.split_at(address.len() - 1);
            format!("{head}{}", if last.eq_ignore_ascii_case("0") { "1" } else { "0" })
        }
        Chain::Solana => {
            let mut bytes = base58_32(address).unwrap_or_default();
            bytes[31] ^= 1;
            bs58::encode(bytes).into_string()
        }
    }
}
