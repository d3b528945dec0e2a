"""Independent cross-checks of libperps's Ed25519 body signatures (`v1,{id},{ts},{body}`), through
its C ABI (ctypes, libperps_ctypes.py). Source of truth, sharing no code with libperps: PyNaCl
(libsodium), `nacl.signing`; Ed25519 is deterministic, so expected signatures are recomputed and
compared byte for byte; base64, JSON and UUID from the Python standard library.
See also test_body_signature.py, test_evm.py and test_solana.py.
"""

import base64
import re
import time
import uuid
from ctypes import byref

import base58
import nacl.exceptions
import nacl.signing
import pytest

from libperps_ctypes import LIB, PERPS_INVALID_KEY, PERPS_OK, PerpsBodySignature, PerpsError, Session
from vectors import KEYPAIR, PUBLIC_KEY, SEED, SIGNING_KEY, b58, b64decode_strict

# --------------------------------------------------------------------------------------
# Fixtures and shared data
# --------------------------------------------------------------------------------------

HEADER_KEYS = {"x-request-sign-version", "x-request-id", "x-request-timestamp", "x-request-signature"}
FIXED_ID = "5f0c6b2e-8a1d-4c3b-9e7f-2a4d6c8b0e1f"
FIXED_TS = 1767225600123  # 2026-01-01T00:00:00.123Z
ORDER_BODY = (
    '{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.010",'
    '"price":"65000.5","time_in_force":"gtc","reduce_only":false}'
)
UNICODE_BODY = '{"cl_ord_id":"caf\u00e9-\U0001F680-\u65e5\u672c","note":"\u00e9\u00e8 \U0001F600"}'

def signed_message(request_id, ts, body):
    return f"v1,{request_id},{ts},{body}".encode("utf-8")


def check_headers(headers):
    assert set(headers) == HEADER_KEYS
    assert all(isinstance(v, str) for v in headers.values())
    assert headers["x-request-sign-version"] == "v1"
    sig = b64decode_strict(headers["x-request-signature"])
    assert len(sig) == 64
    assert len(headers["x-request-signature"]) == 88
    return sig


def verify_body_signature(request_id, headers, body):
    """Verify with PyNaCl over exactly `v1,{id},{ts},{body}`; returns the raw signature."""
    sig = check_headers(headers)
    vk = nacl.signing.VerifyKey(base58.b58decode(request_id))
    msg = signed_message(headers["x-request-id"], headers["x-request-timestamp"], body)
    vk.verify(msg, sig)  # raises BadSignatureError on mismatch
    # Sanity: the verifier does reject a different body/id/timestamp.
    for bad in (
        signed_message(headers["x-request-id"], headers["x-request-timestamp"], body + " "),
        signed_message(headers["x-request-id"], str(int(headers["x-request-timestamp"]) + 1), body),
        f"{headers['x-request-id']},{headers['x-request-timestamp']},{body}".encode(),
    ):
        with pytest.raises(nacl.exceptions.BadSignatureError):
            vk.verify(bad, sig)
    return sig


@pytest.fixture
def fresh_session():
    with Session.new() as s:
        yield s


def test_library_version_matches_header():
    assert LIB.perps_version().decode() == "0.1.0"


# --------------------------------------------------------------------------------------
# 1. Body signature (Ed25519, truth: PyNaCl)
# --------------------------------------------------------------------------------------


def test_sign_body_at_fresh_session_verifies(fresh_session):
    rid = fresh_session.request_id()
    pk = base58.b58decode(rid)
    assert len(pk) == 32 and b58(pk) == rid
    headers = fresh_session.sign_body_at(ORDER_BODY, FIXED_ID, FIXED_TS)
    assert headers["x-request-id"] == FIXED_ID
    assert headers["x-request-timestamp"] == str(FIXED_TS)
    verify_body_signature(rid, headers, ORDER_BODY)


SEED_FORMS = {
    "base58 seed": b58(SEED),
    "base58 keypair": b58(KEYPAIR),
    "hex seed": SEED.hex(),
    "hex keypair": KEYPAIR.hex(),
}


@pytest.mark.parametrize("form", sorted(SEED_FORMS))
@pytest.mark.parametrize("body", [ORDER_BODY, UNICODE_BODY, "", "{}"], ids=["order", "unicode", "empty", "braces"])
def test_sign_body_at_api_key_matches_pynacl(form, body):
    with Session.from_api_key("api-token-not-used-here", SEED_FORMS[form]) as s:
        rid = s.request_id()
        assert rid == b58(PUBLIC_KEY)
        headers = s.sign_body_at(body, FIXED_ID, FIXED_TS)
    expected = SIGNING_KEY.sign(signed_message(FIXED_ID, FIXED_TS, body)).signature
    assert headers["x-request-id"] == FIXED_ID
    assert headers["x-request-timestamp"] == str(FIXED_TS)
    sig = verify_body_signature(rid, headers, body)
    assert sig == expected
    assert headers["x-request-signature"] == base64.b64encode(expected).decode("ascii")


def test_sign_body_at_timestamp_zero_and_uppercase_id_used_as_given():
    upper = FIXED_ID.upper()
    with Session.from_api_key("t", b58(SEED)) as s:
        headers = s.sign_body_at(ORDER_BODY, upper, 0)
    assert headers["x-request-id"] == upper
    assert headers["x-request-timestamp"] == "0"
    sig = verify_body_signature(b58(PUBLIC_KEY), headers, ORDER_BODY)
    assert sig == SIGNING_KEY.sign(signed_message(upper, 0, ORDER_BODY)).signature


def test_sign_body_at_non_ascii_utf8_is_signed_as_utf8_bytes():
    with Session.from_api_key("t", b58(SEED)) as s:
        headers = s.sign_body_at(UNICODE_BODY, FIXED_ID, FIXED_TS)
    msg = signed_message(FIXED_ID, FIXED_TS, UNICODE_BODY)
    assert b"caf\xc3\xa9-\xf0\x9f\x9a\x80" in msg  # é and 🚀 as UTF-8
    assert b64decode_strict(headers["x-request-signature"]) == SIGNING_KEY.sign(msg).signature


def _check_fresh(headers, before_ms, after_ms):
    rid = headers["x-request-id"]
    u = uuid.UUID(rid)
    assert u.version == 4 and u.variant == uuid.RFC_4122
    assert rid == str(u)  # lower case, hyphenated, 36 chars
    assert re.fullmatch(r"[0-9]+", headers["x-request-timestamp"])
    assert before_ms - 1000 <= int(headers["x-request-timestamp"]) <= after_ms + 1000


@pytest.mark.parametrize("body", [ORDER_BODY, UNICODE_BODY], ids=["order", "unicode"])
def test_sign_body_fresh_id_and_time(fresh_session, body):
    rid = fresh_session.request_id()
    before = int(time.time() * 1000)
    h1 = fresh_session.sign_body(body)
    h2 = fresh_session.sign_body(body)
    after = int(time.time() * 1000)
    for h in (h1, h2):
        _check_fresh(h, before, after)
        verify_body_signature(rid, h, body)
    assert h1["x-request-id"] != h2["x-request-id"]


def test_sign_body_api_key_verifies_with_pynacl_and_is_hedged():
    with Session.from_api_key("t", b58(KEYPAIR)) as s:
        before = int(time.time() * 1000)
        headers = s.sign_body(UNICODE_BODY)
        after = int(time.time() * 1000)
    _check_fresh(headers, before, after)
    deterministic = SIGNING_KEY.sign(
        signed_message(headers["x-request-id"], headers["x-request-timestamp"], UNICODE_BODY)
    ).signature
    # A valid Ed25519 signature by the key, whose nonce mixed in fresh randomness: not the
    # RFC 8032 signature of the same message (that one comes from perps_sign_body_at).
    sig = verify_body_signature(b58(PUBLIC_KEY), headers, UNICODE_BODY)
    assert sig[:32] != deterministic[:32]


@pytest.mark.parametrize("body", [ORDER_BODY, UNICODE_BODY, ""], ids=["order", "unicode", "empty"])
def test_sign_body_into_verifies_with_pynacl_and_is_hedged(body):
    raw = body.encode("utf-8")
    # Pass a buffer with trailing garbage: only `len` bytes may be signed.
    buf = raw + b"GARBAGE-NOT-SIGNED"
    with Session.from_api_key("t", SEED.hex()) as s:
        out = PerpsBodySignature()
        before = int(time.time() * 1000)
        code = LIB.perps_sign_body_into(s.ptr, buf, len(raw), byref(out))
        after = int(time.time() * 1000)
    assert code == PERPS_OK
    headers = {
        "x-request-sign-version": out.version.decode(),
        "x-request-id": out.request_id.decode(),
        "x-request-timestamp": out.timestamp.decode(),
        "x-request-signature": out.signature.decode(),
    }
    _check_fresh(headers, before, after)
    deterministic = SIGNING_KEY.sign(
        signed_message(headers["x-request-id"], headers["x-request-timestamp"], body)
    ).signature
    sig = verify_body_signature(b58(PUBLIC_KEY), headers, body)
    assert sig[:32] != deterministic[:32]


def test_api_key_mismatched_keypair_rejected():
    other_pub = bytes(nacl.signing.SigningKey(bytes(32)).verify_key)
    with pytest.raises(PerpsError) as e:
        Session.from_api_key("t", b58(SEED + other_pub))
    assert e.value.code == PERPS_INVALID_KEY
