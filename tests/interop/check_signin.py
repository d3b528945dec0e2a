"""Sign-in against signin_venue.py (written from the documents only): the ES256 challenge
(signedData) and each refusal before any login is sent. The wallet logins:
check_wallet_login.py; what follows sign-in (token, body signatures, expiry, clock, secrets):
check_credentials.py. Run: python check_signin.py [NAME...]"""
import base64
import json
import re
import sys
import time

from common import client, error_of, describe, perps, registry, run_checks
from signin_venue import AUTH, SigninVenue, siwe_message, solana_wallet, iso

CHECKS, check = registry()
# venue-facts.md "Wallet signatures": the known bsc vector.
BSC_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
BSC_ADDR = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
OTHER_BSC = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
SOL_KEY, SOL_ADDR, SOL_SK = solana_wallet()
ORDER = {"symbol": "BTC-USD", "side": "buy", "order_type": "limit", "qty": "0.0001",
         "price": "65000.01", "time_in_force": "gtc", "reduce_only": False}
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def logins(v):
    return v.requests(AUTH + "/login")


def certs_fetches(v):
    return len(v.requests(AUTH + "/certs"))


def signin(v, chain="bsc", key=BSC_KEY, expires=0, **opts):
    """A fresh session signed in (or not) in one call: (session, error, result)."""
    s = perps.Session()
    with client(v, **opts) as c:
        e, r = error_of(c.signin, s, chain, key, expires)
    return s, e, r


def refused_before_login(v, e, want=perps.Code.VERIFICATION_FAILED, chain="bsc", key=BSC_KEY):
    """A challenge refusal: the precise code, and no login request reached the venue."""
    good = e is not None and e.code == want and not logins(v)
    return good, f"{describe(e)} logins_sent={len(logins(v))}"


def v_sign_text(v, header, claims, der=False):
    return v.issuer.sign_text(json.dumps(dict(header, alg="ES256", typ="JWT")), json.dumps(claims), der=der)


def bent(shape, chain="bsc", **opts):
    """Sign in against a venue whose challenge is bent by shape(claims, header)."""
    v = SigninVenue()
    v.shape = shape
    s, e, r = signin(v, chain, BSC_KEY if chain == "bsc" else SOL_KEY, **opts)
    return v, e


def remessage(claims, chain="bsc"):
    claims["message"] = siwe_message(chain, claims)


# ---- the challenge (seed "Access token flow" 3, venue-facts "Sign-in challenge") ----------
@check("challenge_claims_verified")
def _():
    v = SigninVenue()
    s = perps.Session()
    with client(v) as c:
        e, payload = error_of(c.prepare_signin, s, "bsc", BSC_ADDR)
    if e:
        return False, describe(e)
    prep = v.requests(AUTH + "/prepare-signin")[0]
    signed = json.loads(base64.urlsafe_b64decode(v.issued[0].split(".")[1] + "=="))
    good = (json.loads(payload) == signed and prep.method == "POST" and prep.query == {"chain": "bsc"}
            and json.loads(prep.body) == {"address": BSC_ADDR, "requestId": s.request_id}
            and prep.headers.get("content-type", "").startswith("application/json")
            and certs_fetches(v) == 1 and s.info()["pending_signin"])
    return good, f"prep body={prep.body} certs={certs_fetches(v)} info={s.info()}"


@check("challenge_tampered_payload")
def _():
    def shape(claims, header, venue):
        token = venue.issuer.sign(claims, header)
        h, p, sig = token.split(".")
        claims["nonce"] = "ffffffffffffffff"  # same claims but one, the signature kept
        remessage(claims)
        p2 = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
        return ".".join([h, p2, sig])
    v = SigninVenue()
    v.shape = shape
    s, e, r = signin(v)
    return refused_before_login(v, e)


@check("challenge_tampered_signature")
def _():
    def shape(claims, header, venue):
        h, p, sig = venue.issuer.sign(claims, header).split(".")
        raw = bytearray(base64.urlsafe_b64decode(sig + "=="))
        raw[10] ^= 1
        return ".".join([h, p, base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()])
    v = SigninVenue()
    v.shape = shape
    s, e, r = signin(v)
    return refused_before_login(v, e)


@check("challenge_alg_none")
def _():
    def shape(claims, header, venue):
        enc = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
        return enc({"alg": "none", "typ": "JWT"}) + "." + enc(claims) + "."
    v, e = bent(shape)
    return refused_before_login(v, e)


@check("challenge_unknown_kid_refused_fresh_certs")  # a set just fetched: no second fetch needed
def _():
    v, e = bent(lambda claims, header, venue: header.update(kid="not-a-venue-key"))
    good, detail = refused_before_login(v, e)
    return good and certs_fetches(v) == 1, f"{detail} certs_fetches={certs_fetches(v)}"


@check("challenge_unknown_kid_cached_certs_refetched_once")  # venue-facts: refetch once
def _():
    v = SigninVenue()
    with client(v) as c:
        e1, _ = error_of(c.signin, perps.Session(), "bsc", BSC_KEY, 0)  # caches the set
        n = len(logins(v))
        v.shape = lambda claims, header, venue: header.update(kid="not-a-venue-key")
        e2, _ = error_of(c.signin, perps.Session(), "bsc", BSC_KEY, 0)
    good = (e1 is None and e2 is not None and e2.code == perps.Code.VERIFICATION_FAILED
            and len(logins(v)) == n and certs_fetches(v) == 2)
    return good, f"{describe(e2)} certs_fetches={certs_fetches(v)} logins_after_refusal={len(logins(v)) - n}"


@check("challenge_key_rotation_refetches")  # venue-facts: keys rotate
def _():
    v = SigninVenue()
    with client(v) as c:
        e1, _ = error_of(c.signin, perps.Session(), "bsc", BSC_KEY, 0)
        old = v.issuer.current
        v.issuer.rotate()
        v.certs_answer = lambda: v.issuer.jwks(only=[v.issuer.current])
        e2, _ = error_of(c.signin, perps.Session(), "bsc", BSC_KEY, 0)
    good = e1 is None and e2 is None and certs_fetches(v) == 2 and old != v.issuer.current
    return good, f"{describe(e1)} / {describe(e2)} certs_fetches={certs_fetches(v)}"


@check("challenge_without_kid_after_rotation")  # no kid: try each key; none verifies -> refetch once
def _():
    v = SigninVenue()
    with client(v) as c:
        e1, _ = error_of(c.signin, perps.Session(), "bsc", BSC_KEY, 0)  # caches the old set
        v.issuer.rotate()
        v.certs_answer = lambda: v.issuer.jwks(only=[v.issuer.current])
        v.shape = lambda claims, header, venue: venue.issuer.sign(claims, {"typ": "JWT"})
        e2, _ = error_of(c.signin, perps.Session(), "bsc", BSC_KEY, 0)
    # venue-facts: keys rotate, and a kid-less challenge is tried with each key; our reading
    # is that a cached set none of whose keys verifies is as stale as one without the kid.
    return e1 is None and e2 is None and certs_fetches(v) == 2, f"{describe(e2)} certs_fetches={certs_fetches(v)}"


@check("challenge_extra_claims_kept")  # claims the documents do not list: kept, Solana input unchanged
def _():
    extra = {"sub": "bsc_0xabc", "jti": "9f1c", "meta": {"tier": [1, 2.5, None], "note": "é"}}
    out = []
    for chain in ("bsc", "solana"):
        v, e = bent(lambda claims, header, venue: claims.update(extra), chain)
        out.append((chain, e is None and len(logins(v)) == 1 and v.logins[-1].error is None,
                    describe(e) if e else v.logins[-1].error))
    return all(g for _, g, _ in out), str(out)


@check("challenge_iat_30s_ahead_accepted")  # venue-facts: up to ~60 s ahead is tolerated
def _():
    def shape(claims, header, venue):
        claims["iat"] += 30
        claims["exp"] += 30
    v, e = bent(shape)
    return e is None and len(logins(v)) == 1, describe(e)


@check("prepare_success_without_signed_data")
def _():
    v = SigninVenue()
    v.prepare_answer = {"success": True}
    s, e, r = signin(v)
    return refused_before_login(v, e, perps.Code.BAD_RESPONSE)


@check("challenge_without_kid_accepted")  # the documented example header has no kid
def _():
    v = SigninVenue()
    v.issuer.rotate()  # two keys in the set: the library must try each
    v.shape = lambda claims, header, venue: v.issuer.sign(claims, {"typ": "JWT"})
    s, e, r = signin(v)
    return e is None and len(logins(v)) == 1, describe(e)


@check("challenge_jwks_without_use_accepted")  # venue-facts: `use` may be missing
def _():
    v = SigninVenue()
    v.certs_answer = lambda: v.issuer.jwks(use=False)
    s, e, r = signin(v)
    return e is None, describe(e)


@check("challenge_expired")
def _():
    def shape(claims, header, venue):
        claims["iat"] -= 181
        claims["exp"] -= 181
    return refused_before_login(*bent(shape))


@check("challenge_not_yet_valid")  # venue-facts: iat not more than ~60 s ahead
def _():
    def shape(claims, header, venue):
        claims["iat"] += 120
        claims["exp"] += 120
    return refused_before_login(*bent(shape))


@check("challenge_wrong_address")
def _():
    def shape(claims, header, venue):
        claims["address"] = OTHER_BSC
        remessage(claims)
    return refused_before_login(*bent(shape))


@check("challenge_wrong_solana_address")  # Solana: exact base58
def _():
    other = solana_wallet(b"\x08" * 32)[1]
    def shape(claims, header, venue):
        claims["address"] = other
        remessage(claims, "solana")
    return refused_before_login(*bent(shape, "solana"))


@check("challenge_bsc_address_lower_case_accepted")  # venue-facts: EVM case-insensitive hex
def _():
    def shape(claims, header, venue):
        claims["address"] = BSC_ADDR.lower()
        remessage(claims)
    v, e = bent(shape)
    return e is None and len(logins(v)) == 1, describe(e)


@check("challenge_expires_between_prepare_and_login")  # an expired challenge is not sent
def _():
    v = SigninVenue()
    v.shape = lambda claims, header, venue: claims.update(exp=claims["iat"] + 2)
    s = perps.Session()
    with client(v) as c:
        payload = c.prepare_signin(s, "bsc", BSC_ADDR)
        sig = perps.wallet_sign("bsc", BSC_KEY, payload)
        time.sleep(max(0.0, json.loads(payload)["exp"] - time.time()) + 0.5)
        e, r = error_of(c.login, s, sig, 0)
    good = e is not None and e.code in (perps.Code.VERIFICATION_FAILED, perps.Code.INVALID_STATE) and not logins(v)
    return good, f"{describe(e)} logins_sent={len(logins(v))}"


@check("challenge_der_signature_refused")  # venue-facts: raw r||s (RFC 7518 §3.4), not DER
def _():
    v, e = bent(lambda claims, header, venue: v_sign_text(venue, header, claims, der=True))
    return refused_before_login(v, e)


@check("challenge_verified_over_exact_bytes")  # venue-facts: not over re-encoded bytes
def _():
    # Spaces, escaped slashes and a key order of the venue's own: a client that re-encodes
    # the payload before verifying gets other bytes and a bad signature.
    def shape(claims, header, venue):
        text = "{ " + ", ".join(f'"{k}" : ' + json.dumps(claims[k]).replace("/", "\\/")
                               for k in reversed(list(claims))) + " }"
        return venue.issuer.sign_text(json.dumps(dict(header, alg="ES256", typ="JWT")), text)
    v, e = bent(shape)
    return e is None and len(logins(v)) == 1 and v.logins[-1].error is None, describe(e)


@check("challenge_message_optional_eip4361_fields_accepted")  # EIP-4361: Expiration Time, Not Before, Resources
def _():
    def shape(claims, header, venue):
        claims["message"] = siwe_message("bsc", claims, extra=[
            f"Expiration Time: {iso(claims['exp'])}", f"Not Before: {claims['issuedAt']}"]) + \
            "\nResources:\n- https://standx.com/terms"
    v, e = bent(shape)
    return e is None and len(logins(v)) == 1, describe(e)


@check("challenge_wrong_request_id")
def _():
    def shape(claims, header, venue):
        claims["requestId"] = solana_wallet(b"\x09" * 32)[1]
        remessage(claims)
    return refused_before_login(*bent(shape))


@check("challenge_solana_wording_for_bsc_signin")  # the wallet would sign in on another chain
def _():
    return refused_before_login(*bent(lambda claims, header, venue: remessage(claims, "solana")))


@check("challenge_other_chain_id_consistent")  # INFO: no document pins bsc to 56 (an example)
def _():
    def shape(claims, header, venue):
        claims["chainId"] = 1
        remessage(claims)
    v, e = bent(shape)
    return True, f"INFO (not asserted): chainId 1 on bsc -> {describe(e)} logins_sent={len(logins(v))}"


@check("challenge_message_chain_id_differs_from_claim")
def _():
    def shape(claims, header, venue):
        claims["message"] = claims["message"].replace("Chain ID: 56", "Chain ID: 1")
    return refused_before_login(*bent(shape))


@check("challenge_message_address_differs_from_claim")  # the wallet would sign for another
def _():
    def shape(claims, header, venue):
        claims["message"] = claims["message"].replace(BSC_ADDR, OTHER_BSC)
    return refused_before_login(*bent(shape))


@check("challenge_wrong_domain_pinned")
def _():
    def shape(claims, header, venue):
        claims["domain"] = "standx.com.evil.example"
        remessage(claims)
    return refused_before_login(*bent(shape, expected_domain="standx.com", expected_uri="https://standx.com"))


@check("challenge_wrong_uri_pinned")
def _():
    def shape(claims, header, venue):
        claims["uri"] = "https://evil.example"
        remessage(claims)
    return refused_before_login(*bent(shape, expected_domain="standx.com", expected_uri="https://standx.com"))


@check("challenge_pinned_domain_uri_match")
def _():
    v = SigninVenue()
    s, e, r = signin(v, expected_domain="standx.com", expected_uri="https://standx.com")
    return e is None and len(logins(v)) == 1, describe(e)


@check("challenge_verify_offline")  # perps_challenge_verify: the venue's JWK set, a given now
def _():
    v = SigninVenue()
    s = perps.Session()
    claims = v.claims("bsc", BSC_ADDR, s.request_id)
    jwt_text = v.issuer.sign(claims, {"kid": v.issuer.current})
    certs = json.dumps(v.issuer.jwks())
    e1, r = error_of(perps.challenge_verify, jwt_text, certs, s.request_id, "bsc", BSC_ADDR.lower(), claims["iat"])
    e2, _ = error_of(perps.challenge_verify, jwt_text, certs, s.request_id, "bsc", BSC_ADDR, claims["exp"] + 1)
    e3, _ = error_of(perps.challenge_verify, jwt_text, certs, s.request_id, "solana", BSC_ADDR, claims["iat"])
    good = (e1 is None and json.loads(r) == claims and e2 is not None and e2.code == perps.Code.VERIFICATION_FAILED
            and e3 is not None and e3.code == perps.Code.VERIFICATION_FAILED)
    return good, f"ok-case={describe(e1)} expired={describe(e2)} other-chain={describe(e3)}"


@check("prepare_success_false")  # seed "Errors": success false is a failure
def _():
    v = SigninVenue()
    v.prepare_answer = {"success": False, "message": "address blocked"}
    s, e, r = signin(v)
    return refused_before_login(v, e, perps.Code.API_ERROR)



if __name__ == "__main__":
    sys.exit(run_checks(CHECKS, sys.argv[1:]))
