"""Wallet logins against signin_venue.py (written from the documents only): bsc and Solana
sign-in in one call and in two steps with a signature made outside the library, whose
signatures the venue checks with eth-account / PyNaCl; the wallet message's wording and
encoding; refusals by the venue. The challenge itself: check_signin.py.
Run: python check_wallet_login.py [NAME...]"""
import base64
import json
import re
import sys

import base58
from eth_account import Account
from eth_account.messages import encode_defunct

from common import client, error_of, describe, perps, registry, run_checks
from check_signin import (BSC_ADDR, BSC_KEY, SOL_ADDR, SOL_KEY, SOL_SK, bent, logins,
                          refused_before_login, remessage, signin)
from signin_venue import SigninVenue

CHECKS, check = registry()


def login_ok(v, s, chain, addr):
    seen = v.logins[-1] if v.logins else None
    if seen is None:
        return False, "no login reached the venue"
    good = (seen.error is None and seen.recovered.lower() == addr.lower() and seen.chain == chain
            and seen.body["signedData"] == v.issued[-1] and s.info()["has_token"])
    return good, f"venue: recovered={seen.recovered} error={seen.error} body keys={sorted(seen.body)}"


@check("signin_bsc_one_call")
def _():
    v = SigninVenue()
    s, e, r = signin(v)
    if e:
        return False, describe(e)
    sig = v.logins[-1].body["signature"]
    good, detail = login_ok(v, s, "bsc", BSC_ADDR)
    ctype = logins(v)[-1].headers.get("content-type", "")
    shape_ok = ctype.startswith("application/json") and logins(v)[-1].query == {"chain": "bsc"} and re.fullmatch(r"0x[0-9a-fA-F]{130}", sig) is not None and int(sig[-2:], 16) in (27, 28)
    return good and shape_ok and v.logins[-1].recovered == BSC_ADDR, f"{detail} sig={sig[:12]}…{sig[-2:]}"


@check("signin_bsc_key_without_0x")
def _():
    v = SigninVenue()
    s, e, r = signin(v, key=BSC_KEY[2:])
    return (e is None and login_ok(v, s, "bsc", BSC_ADDR)[0]), describe(e)


@check("signin_bsc_two_step_external_signature")  # the wallet is eth-account, not the library
def _():
    v = SigninVenue()
    s = perps.Session()
    with client(v) as c:
        payload = json.loads(c.prepare_signin(s, "bsc", BSC_ADDR))
        signed = Account.sign_message(encode_defunct(text=payload["message"]), private_key=BSC_KEY)
        e, r = error_of(c.login, s, "0x" + bytes(signed.signature).hex(), 0)
    good, detail = login_ok(v, s, "bsc", BSC_ADDR)
    return e is None and good, f"{describe(e)} {detail}"


@check("signin_solana_one_call")
def _():
    v = SigninVenue()
    s, e, r = signin(v, "solana", SOL_KEY)
    if e:
        return False, describe(e)
    good, detail = login_ok(v, s, "solana", SOL_ADDR)
    return good and v.logins[-1].recovered == SOL_ADDR, detail


@check("signin_solana_two_step_external_signature")  # signature document built here (PyNaCl)
def _():
    v = SigninVenue()
    s = perps.Session()
    with client(v) as c:
        text = c.prepare_signin(s, "solana", SOL_ADDR)
        payload = json.loads(text)
        msg = payload["message"].encode()
        doc = {"input": payload, "output": {"signedMessage": list(msg), "signature": list(SOL_SK.sign(msg).signature),
                                            "account": {"publicKey": list(bytes(SOL_SK.verify_key))}}}
        e, r = error_of(c.login, s, base64.b64encode(json.dumps(doc).encode()).decode(), 0)
    good, detail = login_ok(v, s, "solana", SOL_ADDR)
    return e is None and good, f"{describe(e)} {detail}"


@check("signin_solana_wrapped_external_signature")  # a hardware wallet's raw signature
def _():
    v = SigninVenue()
    s = perps.Session()
    with client(v) as c:
        text = c.prepare_signin(s, "solana", SOL_ADDR)
        raw = SOL_SK.sign(json.loads(text)["message"].encode()).signature
        e, r = error_of(lambda: c.login(s, perps.wallet_wrap_solana_signature(text, SOL_ADDR, raw), 0))
    good, detail = login_ok(v, s, "solana", SOL_ADDR)
    return e is None and good, f"{describe(e)} {detail}"


def non_ascii(chain, key, addr):
    # venue-facts: personal_sign prefixes the message's BYTE length; Ed25519 signs its UTF-8.
    def shape(claims, header, venue):
        claims["statement"] = "Connexion à la plateforme — ✓ 登录"
        remessage(claims, chain)
    v, e = bent(shape, chain)
    seen = v.logins[-1] if v.logins else None
    return (e is None and seen is not None and seen.error is None and seen.recovered.lower() == addr.lower(),
            f"{describe(e)} venue: {seen and (seen.recovered, seen.error)}")


@check("challenge_bsc_non_ascii_statement_refused")  # EIP-4361: statement is ASCII (RFC 3986 chars, space)
def _():
    def shape(claims, header, venue):
        claims["statement"] = "Connexion à la plateforme"
        remessage(claims)
    return refused_before_login(*bent(shape))


@check("wallet_sign_bsc_counts_utf8_bytes")  # venue-facts: "\x19Ethereum Signed Message:\n" + BYTE length
def _():
    v = SigninVenue()
    claims = v.claims("bsc", BSC_ADDR, perps.Session().request_id)
    claims["message"] = claims["message"].replace("Sign in", "Connexion à — ✓ 登录")
    e, sig = error_of(perps.wallet_sign, "bsc", BSC_KEY, json.dumps(claims))
    got = None if e else Account.recover_message(encode_defunct(text=claims["message"]), signature=bytes.fromhex(sig[2:]))
    return got == BSC_ADDR, f"{describe(e)} recovered={got}"


@check("signin_solana_non_ascii_message")
def _():
    return non_ascii("solana", SOL_KEY, SOL_ADDR)


@check("solana_key_forms_same_address")  # venue-facts: keypair, 32-byte seed, keygen array
def _():
    seed = b"\x07" * 32
    forms = [SOL_KEY, base58.b58encode(seed).decode(), json.dumps(list(base58.b58decode(SOL_KEY)))]
    got = [error_of(perps.wallet_address, "solana", f) for f in forms]
    return all(e is None and a == SOL_ADDR for e, a in got), str([a or describe(e) for e, a in got])


@check("login_before_prepare_invalid_state")
def _():
    v = SigninVenue()
    with client(v) as c:
        e, r = error_of(c.login, perps.Session(), "0x" + "00" * 65, 0)
    return refused_before_login(v, e, perps.Code.INVALID_STATE)


@check("login_refused_by_venue")  # a signature by another wallet: the venue answers 400
def _():
    v = SigninVenue()
    s = perps.Session()
    with client(v) as c:
        payload = json.loads(c.prepare_signin(s, "bsc", BSC_ADDR))
        other = Account.create().key
        signed = Account.sign_message(encode_defunct(text=payload["message"]), private_key=other)
        e, r = error_of(c.login, s, "0x" + bytes(signed.signature).hex(), 0)
    good = (e is not None and e.http_status == 400 and "Invalid signature" in e.message
            and not s.info()["has_token"] and v.logins[-1].error is not None)
    return good, describe(e)




if __name__ == "__main__":
    sys.exit(run_checks(CHECKS, sys.argv[1:]))
