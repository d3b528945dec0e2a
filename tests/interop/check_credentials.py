"""The credential lifecycle after sign-in, against signin_venue.py (written from the documents
only): the login result and token expiry, body signatures with the signed-in key verified
by PyNaCl, 401s, imported web-site credentials, the clock (venue-api.md §3.3), and secrets
kept out of errors. Sign-in itself: check_signin.py. Run: python check_credentials.py [NAME...]"""
import json
import sys
import time

import base58
import nacl.signing

from common import client, error_of, describe, perps, registry, run_checks
from check_signin import BSC_ADDR, BSC_KEY, OTHER_BSC, ORDER, SOL_ADDR, SOL_KEY, UUID, logins, signin
from signin_venue import AUTH, SigninVenue
from venue import verify_signature

CHECKS, check = registry()


# ---- the login result (seed "Login result", Limits; venue-api §3.4) -----------------------
@check("login_expires_seconds_passed_through")
def _():
    v = SigninVenue()
    s, e, r = signin(v, expires=3600)
    if e:
        return False, describe(e)
    sent = v.logins[-1].body.get("expiresSeconds")
    exp = s.info()["token_expires_at"]
    good = sent == 3600 and type(sent) is int and exp is not None and abs(exp - (time.time() + 3600)) < 10
    return good, f"expiresSeconds={sent!r} token_expires_at={exp} result={sorted(json.loads(r))}"


@check("login_expires_seconds_absent_by_default")
def _():
    v = SigninVenue()
    s, e, r = signin(v)
    if e:
        return False, describe(e)
    exp = s.info()["token_expires_at"]
    good = "expiresSeconds" not in v.logins[-1].body and exp is not None and abs(exp - (time.time() + 604800)) < 10
    return good, f"body keys={sorted(v.logins[-1].body)} token_expires_at={exp}"


@check("login_token_expiry_is_the_tokens_own")  # venue-api §3.4: [WJ] clamps to the JWT exp
def _():
    v = SigninVenue()
    v.max_token_lifetime = 86400  # the venue grants less than asked
    s, e, r = signin(v, expires=30 * 86400)
    if e:
        return False, describe(e)
    exp = s.info()["token_expires_at"]
    return exp is not None and abs(exp - (time.time() + 86400)) < 10, f"asked 30 days, granted 1: token_expires_at={exp}"


@check("login_answer_without_token")
def _():
    v = SigninVenue()
    v.login_answer = lambda result: {k: x for k, x in result.items() if k != "token"}
    s, e, r = signin(v)
    good = e is not None and e.code == perps.Code.BAD_RESPONSE and not s.info()["has_token"]
    return good, describe(e)


@check("login_answer_address_lower_case_accepted")  # EVM: case-insensitive hex
def _():
    v = SigninVenue()
    v.login_answer = lambda result: dict(result, address=result["address"].lower())
    s, e, r = signin(v)
    return e is None and s.info()["has_token"], describe(e)


@check("login_result_and_session")
def _():
    v = SigninVenue()
    s, e, r = signin(v)
    if e:
        return False, describe(e)
    res, info = json.loads(r), s.info()
    good = (res["token"] == v.logins[-1].token == s.token() and info["chain"] == "bsc"
            and info["address"].lower() == BSC_ADDR.lower() and info["alias"] == "interop-alias"
            and not info["pending_signin"])
    return good, f"info={info}"


def bent_answer(change):
    v = SigninVenue()
    v.login_answer = lambda result: dict(result, **change)
    s, e, r = signin(v)
    token = v.logins[-1].token if v.logins else None
    leak = token is not None and e is not None and (token in e.message or token in (e.body or ""))
    good = e is not None and e.code == perps.Code.VERIFICATION_FAILED and not s.info()["has_token"] and not leak
    return good, f"{describe(e)} token_in_error={leak}"


@check("login_answer_wrong_address")  # venue-facts: the answer must match what was signed in
def _():
    return bent_answer({"address": OTHER_BSC})


@check("login_answer_wrong_chain")
def _():
    return bent_answer({"chain": "solana"})


# ---- body signatures with the signed-in key (seed "Body signature") -----------------------
def order_after_signin(chain, key, addr):
    v = SigninVenue()
    s = perps.Session()
    with client(v) as c:
        e, r = error_of(c.signin, s, chain, key, 0)
        if e:
            return False, describe(e)
        e, r = error_of(c.new_order, s, ORDER)
    reqs = v.requests("/api/new_order")
    if e or len(reqs) != 1:
        return False, describe(e)
    h = reqs[0].headers
    prep = json.loads(v.requests(AUTH + "/prepare-signin")[0].body)
    ts = int(h["x-request-timestamp"])
    good = (reqs[0].sig_ok and h.get("x-request-sign-version") == "v1" and "x-request-version" not in h
            and UUID.match(h["x-request-id"]) and h["x-request-id"] != s.request_id
            and prep["requestId"] == s.request_id and abs(ts - time.time() * 1000) < 5000
            and h["authorization"] == "Bearer " + v.logins[-1].token
            and json.loads(reqs[0].body)["symbol"] == "BTC-USD")
    return good, f"sig_ok={reqs[0].sig_ok} headers={ {k: h[k] for k in h if k.startswith('x-request') and k != 'x-request-signature'} }"


@check("signed_order_after_bsc_signin")
def _():
    return order_after_signin("bsc", BSC_KEY, BSC_ADDR)


@check("signed_order_after_solana_signin")
def _():
    return order_after_signin("solana", SOL_KEY, SOL_ADDR)


@check("venue_accepts_version_header_forms")  # venue-api §6 item 4, the venue's own reading
def _():
    s = perps.Session.from_api_key("t", base58.b58encode(b"\x05" * 32).decode())
    key = nacl.signing.SigningKey(b"\x05" * 32).verify_key
    body = '{"a":1}'
    h = s.sign_body_at(body, "0b6a3c1e-7f0a-4d8e-9c1b-2a3b4c5d6e7f", 1767225600000)
    forms = [h, {k.replace("sign-version", "version"): x for k, x in h.items()},
             {k: x for k, x in h.items() if k != "x-request-sign-version"}]
    got = [verify_signature(f, body, key) for f in forms]
    wrong = verify_signature(dict(h, **{"x-request-sign-version": "v2"}), body, key)
    return all(got) and not wrong, f"forms={got} v2={wrong}"


# ---- token lifecycle (venue-api §3.4) -----------------------------------------------------
def imported(v, token_claims=None, opaque=None, lifetime=None):
    """A web-site credential: a token the venue knows and an Ed25519 key (base58 seed)."""
    seed = bytes(range(32))
    token = opaque or v.issuer.sign(token_claims, {"typ": "JWT"})
    v.keys[token] = nacl.signing.SigningKey(seed).verify_key
    if lifetime is not None:
        v.expires[token] = time.time() + lifetime
    return perps.Session.from_api_key(token, base58.b58encode(seed).decode()), token


@check("session_import_key_forms")  # web-site credential key: base58 seed or keypair, or hex
def _():
    seed = bytes(range(32))
    pub = bytes(nacl.signing.SigningKey(seed).verify_key)
    out = []
    for form in (base58.b58encode(seed + pub).decode(), seed.hex(), (seed + pub).hex()):
        v = SigninVenue()
        v.keys["web-token"] = nacl.signing.SigningKey(seed).verify_key
        with client(v) as c:
            e, _ = error_of(c.new_order, perps.Session.from_api_key("web-token", form), ORDER)
        out.append(e is None and v.requests("/api/new_order")[0].sig_ok)
    return all(out), f"keypair-b58, seed-hex, keypair-hex: {out}"


@check("logout_forgets_token")
def _():
    v = SigninVenue()
    s, e, r = signin(v)
    s.logout()
    with client(v) as c:
        e, _ = error_of(c.new_order, s, ORDER)
    good = e is not None and e.code == perps.Code.INVALID_STATE and not v.requests("/api/new_order") and not s.info()["has_token"]
    return good, describe(e)


@check("token_401_surfaces_no_retry")
def _():
    v = SigninVenue()
    s, token = imported(v, opaque="opaque-web-token-0123456789", lifetime=-1)  # the venue says expired
    with client(v) as c:
        e1, _ = error_of(c.new_order, s, ORDER)
        e2, _ = error_of(c.query_balance, s)
    n_orders, n_bal = len(v.requests("/api/new_order")), len(v.requests("/api/query_balance"))
    good = all(e is not None and e.code == perps.Code.HTTP_STATUS and e.http_status == 401 for e in (e1, e2)) \
        and n_orders == 1 and n_bal == 1
    return good, f"order: {describe(e1)} / balance: {describe(e2)} requests={n_orders},{n_bal}"


@check("token_expiry_known_refused_locally")
def _():
    v = SigninVenue()
    s, e, r = signin(v, expires=2)
    if e:
        return False, describe(e)
    time.sleep(max(0.0, s.info()["token_expires_at"] - time.time()) + 0.3)
    with client(v) as c:
        e, r = error_of(c.new_order, s, ORDER)
    good = e is not None and e.code == perps.Code.TOKEN_EXPIRED and not v.requests("/api/new_order")
    return good, f"{describe(e)} orders_sent={len(v.requests('/api/new_order'))}"


@check("session_import_jwt_token")
def _():
    v = SigninVenue()
    exp = int(time.time()) + 3600
    s, token = imported(v, {"sub": BSC_ADDR, "exp": exp})
    with client(v) as c:
        e, r = error_of(c.new_order, s, ORDER)
    reqs = v.requests("/api/new_order")
    info = s.info()
    good = e is None and reqs and reqs[0].sig_ok and info["token_expires_at"] == exp and info["has_token"]
    return good, f"{describe(e)} token_expires_at={info['token_expires_at']} want {exp}"


@check("session_import_opaque_token_no_expiry")
def _():
    v = SigninVenue()
    s, token = imported(v, opaque="opaque-web-token-abcdef")
    with client(v) as c:
        e, r = error_of(c.new_order, s, ORDER)
    info = s.info()
    return e is None and info["token_expires_at"] is None, f"{describe(e)} info={info}"


@check("session_import_expired_jwt_refused_locally")
def _():
    v = SigninVenue()
    s, token = imported(v, {"sub": BSC_ADDR, "exp": int(time.time()) - 10})
    with client(v) as c:
        e, r = error_of(c.new_order, s, ORDER)
    good = e is not None and e.code == perps.Code.TOKEN_EXPIRED and not v.requests("/api/new_order")
    return good, describe(e)


# ---- clock (venue-api §3.3) ---------------------------------------------------------------
@check("clock_skew_403_hint_then_sync")
def _():
    v = SigninVenue()
    v.clock_offset, v.skew_window_ms = 120.0, 30000  # the window is not published; ours is 30 s
    s, token = imported(v, {"sub": BSC_ADDR, "exp": int(time.time()) + 3600})
    with client(v) as c:
        e1, _ = error_of(c.new_order, s, ORDER)
        n1 = len(v.requests("/api/new_order"))
        e_sync, off = error_of(c.sync_time)
        e2, _ = error_of(c.new_order, s, ORDER)
    hint = e1 is not None and e1.http_status == 403 and "signature has expired" in e1.message and "sync_time" in e1.message
    good = hint and n1 == 1 and e_sync is None and abs(off - 120000) < 1500 and e2 is None
    return good, f"before: {describe(e1)} sent={n1} | offset_ms={off} | after: {describe(e2)}"


@check("clock_sync_seconds_forms")  # kline/time: Unix seconds, integer or decimal (§1.5)
def _():
    out = []
    for form in (lambda t: str(int(t)), lambda t: f"{t:.3f}", lambda t: json.dumps(str(int(t)))):
        v = SigninVenue()
        v.clock_offset = -300.0
        v.rest["/api/kline/time"] = lambda r, f=form: (200, f(v.now()), {})
        with client(v) as c:
            e, off = error_of(c.sync_time)
        out.append(off if e is None else describe(e))
    return all(isinstance(o, int) and abs(o + 300000) < 1500 for o in out), f"offsets={out}"


@check("clock_kline_time_in_ms_refused_offset_kept")  # geo systemTime is ms, kline/time seconds (§1.5)
def _():
    v = SigninVenue()
    v.clock_offset, v.skew_window_ms = 120.0, 30000
    s, token = imported(v, {"sub": BSC_ADDR, "exp": int(time.time()) + 3600})
    with client(v) as c:
        e1, off = error_of(c.sync_time)  # seconds: the offset is taken
        v.rest["/api/kline/time"] = lambda r: (200, str(int(v.now() * 1000)), {})
        e2, _ = error_of(c.sync_time)    # milliseconds where seconds belong: refused, offset kept
        e3, _ = error_of(c.new_order, s, ORDER)
    good = e1 is None and e2 is not None and e2.code == perps.Code.BAD_RESPONSE and e3 is None
    return good, f"offset_ms={off} | ms answer: {describe(e2)} | order after: {describe(e3)}"


@check("signin_with_skewed_clock_needs_sync")  # venue-facts: iat <= ~60 s ahead; §3.3: venue clock
def _():
    v = SigninVenue()
    v.clock_offset = 120.0  # the challenge's iat is 120 s ahead of the local clock
    with client(v) as c:
        e1, _ = error_of(c.signin, perps.Session(), "bsc", BSC_KEY, 0)
        n = len(logins(v))
        c.sync_time()
        e2, _ = error_of(c.signin, perps.Session(), "bsc", BSC_KEY, 0)
    good = (e1 is not None and e1.code == perps.Code.VERIFICATION_FAILED and "clock" in e1.message
            and n == 0 and e2 is None)
    return good, f"unsynced: {describe(e1)} logins={n} | synced: {describe(e2)}"


# ---- secrets (perps.h: error messages never contain a secret) -----------------------------
@check("secrets_never_in_errors")
def _():
    v = SigninVenue()
    bad_keys = [BSC_KEY[:-1], BSC_KEY[:-1] + "g", "0x" + "00" * 32, BSC_KEY + "00"]
    errors = []
    for k in bad_keys:
        errors.append(("bsc", k, error_of(perps.wallet_address, "bsc", k)[0]))
        errors.append(("bsc", k, signin(v, "bsc", k)[1]))
    sol_bad = [SOL_KEY[:-2], SOL_KEY + "1", base58.b58encode(b"\x07" * 32 + b"\x00" * 32).decode()]
    for k in sol_bad:
        errors.append(("solana", k, signin(v, "solana", k)[1]))
    seed = bytes(range(32))
    for bad in (base58.b58encode(seed[:31]).decode(), seed.hex()[:-1], seed.hex() + "zz", base58.b58encode(seed + seed).decode()):
        errors.append(("import", bad, error_of(perps.Session.from_api_key, "opaque-import-token-3c3c3c3c", bad)[0]))
    errors.append(("import", "opaque-import-token-3c3c3c3c", errors[-1][2]))
    s, token = imported(v, opaque="opaque-secret-token-5f5f5f5f", lifetime=-1)
    with client(v) as c:
        errors.append(("token", token, error_of(c.new_order, s, ORDER)[0]))
    signed_in, e, _ = signin(v)
    if e is None:  # info() is "without secrets": neither token may appear there
        errors.append(("info", token, perps.PerpsError(0, json.dumps(signed_in.info()) + json.dumps(s.info()))))
        errors.append(("info", v.logins[-1].token, errors[-1][2]))
    secrets_ = {k for _, k, _ in errors} | {BSC_KEY, BSC_KEY[2:], SOL_KEY, token}
    secrets_ |= {k[2:] for k in secrets_ if k.startswith("0x")} | {k.lower() for k in secrets_}
    leaks, missing = [], []
    for chain, k, e in errors:
        if e is None:
            missing.append(k[:8])
            continue
        text = e.message + " " + (e.body or "")
        leaks += [f"{chain}:{sec[:8]}… in {e.code.name}" for sec in secrets_ if len(sec) > 20 and sec in text]
    return not leaks and not missing, f"{len(errors)} errors scanned leaks={leaks} unexpected_successes={missing}"


@check("secret_token_echoed_by_venue_401")  # a venue echoing the token in its error body
def _():
    v = SigninVenue()
    s, token = imported(v, opaque="opaque-echoed-token-7a7a7a7a7a")
    v.rest["/api/query_balance"] = lambda r: (401, json.dumps({"code": 401, "message": "bad token " + token}), {})
    with client(v) as c:
        e, _ = error_of(c.query_balance, s)
    in_msg = e is not None and token in e.message
    in_body = e is not None and token in (e.body or "")
    return e is not None and not in_msg, f"{describe(e)} token_in_message={in_msg} token_in_body={in_body}"


if __name__ == "__main__":
    sys.exit(run_checks(CHECKS, sys.argv[1:]))
