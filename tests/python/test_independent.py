"""Independent cross-checks of libperps's signatures, through its C ABI (ctypes).

Sources of truth (none of them shares code with libperps):
  * Ed25519 body signatures (`v1,{id},{ts},{body}`) and Solana wallet signatures:
    PyNaCl (libsodium) -- `nacl.signing.SigningKey` / `VerifyKey`. Ed25519 is
    deterministic, so expected signatures are recomputed and compared byte for byte.
  * bsc (EVM) EIP-191 personal_sign signatures and EIP-55 addresses: eth-account
    (`Account.sign_message(encode_defunct(text=...))`, `Account.recover_message`,
    `Account.from_key`). Both sides use RFC 6979 nonces and low-s, so signatures are
    compared byte for byte. Plus the well-known Hardhat/Anvil key/address vectors.
  * base58 (requestId, Solana keys and addresses): the `base58` PyPI package.
  * base64 / JSON / UUID: the Python standard library.

The library is target/release/libperps.so (override with env PERPS_LIB). Every owned
char* the library returns is declared `c_void_p`, copied with `ctypes.string_at`, then
released with `perps_string_free`; only borrowed strings (error message/body, version)
use `c_char_p`.
"""

import base64
import ctypes
import json
import os
import pathlib
import re
import time
import uuid
from ctypes import (
    POINTER,
    Structure,
    byref,
    c_bool,
    c_char,
    c_char_p,
    c_int,
    c_int64,
    c_size_t,
    c_uint16,
    c_void_p,
)

import base58
import nacl.exceptions
import nacl.signing
import pytest
from eth_account import Account
from eth_account.messages import encode_defunct

# --------------------------------------------------------------------------------------
# ctypes binding of include/perps.h
# --------------------------------------------------------------------------------------

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
LIB_PATH = os.environ.get("PERPS_LIB") or str(REPO_ROOT / "target" / "release" / "libperps.so")

PERPS_OK = 0
PERPS_INVALID_ARGUMENT = 1
PERPS_INVALID_KEY = 2
PERPS_VERIFICATION_FAILED = 4

PERPS_SIGN_VERSION_SIZE = 4
PERPS_REQUEST_ID_SIZE = 40
PERPS_TIMESTAMP_SIZE = 24
PERPS_SIGNATURE_SIZE = 96


class PerpsBodySignature(Structure):
    _fields_ = [
        ("version", c_char * PERPS_SIGN_VERSION_SIZE),
        ("request_id", c_char * PERPS_REQUEST_ID_SIZE),
        ("timestamp", c_char * PERPS_TIMESTAMP_SIZE),
        ("signature", c_char * PERPS_SIGNATURE_SIZE),
    ]


ERR_OUT = POINTER(c_void_p)  # perps_error **


def _load():
    if not os.path.exists(LIB_PATH):
        pytest.exit(f"libperps not found at {LIB_PATH}: run `make lib` or set PERPS_LIB", 2)
    lib = ctypes.CDLL(LIB_PATH)

    def decl(name, restype, *argtypes):
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = list(argtypes)

    decl("perps_string_free", None, c_void_p)
    decl("perps_version", c_char_p)  # static, never freed

    decl("perps_error_code", c_int, c_void_p)
    decl("perps_error_message", c_char_p, c_void_p)  # borrowed
    decl("perps_error_http_status", c_uint16, c_void_p)
    decl("perps_error_body", c_char_p, c_void_p)  # borrowed
    decl("perps_error_may_have_reached_venue", c_bool, c_void_p)
    decl("perps_error_free", None, c_void_p)

    decl("perps_session_new", c_void_p, ERR_OUT)
    decl("perps_session_from_api_key", c_void_p, c_char_p, c_char_p, ERR_OUT)
    decl("perps_session_request_id", c_void_p, c_void_p, ERR_OUT)
    decl("perps_session_free", None, c_void_p)

    decl("perps_sign_body", c_void_p, c_void_p, c_char_p, ERR_OUT)
    decl("perps_sign_body_at", c_void_p, c_void_p, c_char_p, c_char_p, c_int64, ERR_OUT)
    decl("perps_sign_body_into", c_int, c_void_p, c_char_p, c_size_t, POINTER(PerpsBodySignature))

    decl("perps_wallet_address", c_void_p, c_char_p, c_char_p, ERR_OUT)
    decl("perps_wallet_sign", c_void_p, c_char_p, c_char_p, c_char_p, ERR_OUT)
    decl("perps_wallet_wrap_solana_signature", c_void_p, c_char_p, c_char_p, c_char_p, c_size_t, ERR_OUT)
    return lib


LIB = _load()


class PerpsError(Exception):
    def __init__(self, code, message):
        super().__init__(f"perps error {code}: {message}")
        self.code = code
        self.message = message


def _raise_from(err):
    """Turn a filled perps_error* into a PerpsError, freeing it."""
    assert err.value, "call failed but *err was not set"
    try:
        code = LIB.perps_error_code(err)
        message = LIB.perps_error_message(err).decode("utf-8")
    finally:
        LIB.perps_error_free(err)
    raise PerpsError(code, message)


def _take_string(ptr):
    """Copy an owned char* into a Python str and free it with perps_string_free."""
    try:
        return ctypes.string_at(ptr).decode("utf-8")
    finally:
        LIB.perps_string_free(ptr)


def _call_str(fn, *args):
    err = c_void_p(None)
    ptr = fn(*args, byref(err))
    if not ptr:
        _raise_from(err)
    assert not err.value, "*err written on success"
    return _take_string(ptr)


def _b(s):
    return s.encode("utf-8") if isinstance(s, str) else s


class Session:
    def __init__(self, ptr):
        assert ptr
        self.ptr = c_void_p(ptr)

    @classmethod
    def new(cls):
        err = c_void_p(None)
        ptr = LIB.perps_session_new(byref(err))
        if not ptr:
            _raise_from(err)
        return cls(ptr)

    @classmethod
    def from_api_key(cls, token, key):
        err = c_void_p(None)
        ptr = LIB.perps_session_from_api_key(_b(token), _b(key), byref(err))
        if not ptr:
            _raise_from(err)
        return cls(ptr)

    def close(self):
        if self.ptr:
            LIB.perps_session_free(self.ptr)
            self.ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def request_id(self):
        return _call_str(LIB.perps_session_request_id, self.ptr)

    def sign_body(self, body):
        return json.loads(_call_str(LIB.perps_sign_body, self.ptr, _b(body)))

    def sign_body_at(self, body, request_id, ts_ms):
        return json.loads(_call_str(LIB.perps_sign_body_at, self.ptr, _b(body), _b(request_id), ts_ms))

    def sign_body_into(self, body_bytes):
        out = PerpsBodySignature()
        code = LIB.perps_sign_body_into(self.ptr, body_bytes, len(body_bytes), byref(out))
        assert code == PERPS_OK, code
        return out


def wallet_address(chain, key):
    return _call_str(LIB.perps_wallet_address, _b(chain), _b(key))


def wallet_sign(chain, key, payload_json):
    return _call_str(LIB.perps_wallet_sign, _b(chain), _b(key), _b(payload_json))


def wrap_solana_signature(payload_json, address, signature):
    return _call_str(
        LIB.perps_wallet_wrap_solana_signature, _b(payload_json), _b(address), signature, len(signature)
    )


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

# A fixed 32-byte Ed25519 seed (also used as the Solana wallet key).
SEED = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
SIGNING_KEY = nacl.signing.SigningKey(SEED)
PUBLIC_KEY = bytes(SIGNING_KEY.verify_key)
KEYPAIR = SEED + PUBLIC_KEY


def b58(data):
    return base58.b58encode(data).decode("ascii")


def b64decode_strict(s):
    assert re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", s) and len(s) % 4 == 0, f"not standard padded base64: {s!r}"
    return base64.b64decode(s, validate=True)


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


# --------------------------------------------------------------------------------------
# 2. bsc: EIP-191 personal_sign (secp256k1, truth: eth-account)
# --------------------------------------------------------------------------------------

HARDHAT_KEY_0 = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
HARDHAT_ADDR_0 = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141

EVM_KEYS = {
    # key -> address known independently (Hardhat/Anvil accounts #0, #1; key 1 -> G's address)
    HARDHAT_KEY_0: HARDHAT_ADDR_0,
    "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    "0x0000000000000000000000000000000000000000000000000000000000000001": "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf",
    "0x4646464646464646464646464646464646464646464646464646464646464646": None,  # EIP-155 example key
}


def eip4361_message(address, chain_id=56, statement="Sign in to the perps venue."):
    return (
        f"standx.com wants you to sign in with your Ethereum account:\n"
        f"{address}\n"
        f"\n"
        f"{statement}\n"
        f"\n"
        f"URI: https://standx.com\n"
        f"Version: 1\n"
        f"Chain ID: {chain_id}\n"
        f"Nonce: 8f2c1a9e4b7d6f30\n"
        f"Issued At: 2026-01-01T00:00:00.000Z"
    )


def signin_payload(address, message, chain_id=56):
    return {
        "domain": "standx.com",
        "uri": "https://standx.com",
        "statement": "Sign in to the perps venue.",
        "version": "1",
        "chainId": chain_id,
        "nonce": "8f2c1a9e4b7d6f30",
        "address": address,
        "requestId": b58(PUBLIC_KEY),
        "issuedAt": "2026-01-01T00:00:00.000Z",
        "message": message,
        "exp": 1767225780,
        "iat": 1767225600,
    }


def check_eip191(key, message):
    payload = json.dumps(signin_payload(Account.from_key(key).address, message))
    ours = wallet_sign("bsc", key, payload)
    assert re.fullmatch(r"0x[0-9a-f]{130}", ours), ours
    theirs = Account.sign_message(encode_defunct(text=message), key)
    assert ours == "0x" + bytes(theirs.signature).hex()
    raw = bytes.fromhex(ours[2:])
    r, s, v = int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:64], "big"), raw[64]
    assert v in (27, 28)
    assert 0 < s <= SECP256K1_N // 2  # low-s
    assert (r, s, v) == (theirs.r, theirs.s, theirs.v)
    recovered = Account.recover_message(encode_defunct(text=message), signature=raw)
    assert recovered == Account.from_key(key).address
    return ours


def test_eip191_hardhat_vector():
    message = eip4361_message(HARDHAT_ADDR_0)
    ours = check_eip191(HARDHAT_KEY_0, message)
    assert Account.recover_message(encode_defunct(text=message), signature=ours) == HARDHAT_ADDR_0
    # The 0x prefix on the key is optional.
    payload = json.dumps(signin_payload(HARDHAT_ADDR_0, message))
    assert wallet_sign("bsc", HARDHAT_KEY_0[2:], payload) == ours


@pytest.mark.parametrize("key", sorted(EVM_KEYS))
def test_eip191_more_keys(key):
    check_eip191(key, eip4361_message(Account.from_key(key).address))


@pytest.mark.parametrize(
    "message",
    [
        "hello",
        "",
        "caf\u00e9 \U0001F680 \u65e5\u672c\nline two\r\nline three",  # byte length != char length
        "x" * 1000,
    ],
    ids=["short", "empty", "unicode-multiline", "long"],
)
def test_eip191_messages(message):
    check_eip191(HARDHAT_KEY_0, message)


def test_eip191_payload_fields_do_not_matter_only_message():
    message = eip4361_message(HARDHAT_ADDR_0)
    minimal = json.dumps({"message": message})
    full = json.dumps(signin_payload(HARDHAT_ADDR_0, message))
    assert wallet_sign("bsc", HARDHAT_KEY_0, minimal) == wallet_sign("bsc", HARDHAT_KEY_0, full)


@pytest.mark.parametrize("key", sorted(EVM_KEYS))
def test_bsc_wallet_address_eip55(key):
    expected = Account.from_key(key).address
    if EVM_KEYS[key] is not None:
        assert expected == EVM_KEYS[key]
    assert wallet_address("bsc", key) == expected
    assert wallet_address("bsc", key[2:]) == expected


@pytest.mark.parametrize(
    "key",
    ["0x" + "00" * 32, "0x" + format(SECP256K1_N, "064x"), "0x" + "ff" * 32, "0x1234", HARDHAT_KEY_0 + "00"],
    ids=["zero", "n", "ff", "short", "long"],
)
def test_bsc_invalid_keys_rejected_like_eth_account(key):
    with pytest.raises(Exception):
        Account.from_key(key)
    with pytest.raises(PerpsError) as e:
        wallet_address("bsc", key)
    assert e.value.code in (PERPS_INVALID_KEY, PERPS_INVALID_ARGUMENT)


# --------------------------------------------------------------------------------------
# 3. solana: Ed25519 over the message, wrapped in JSON + base64 (truth: PyNaCl, base58)
# --------------------------------------------------------------------------------------

SOLANA_ADDR = b58(PUBLIC_KEY)
SOLANA_KEY_FORMS = {
    "base58 keypair": b58(KEYPAIR),
    "base58 seed": b58(SEED),
    "keygen json array": json.dumps(list(KEYPAIR)),
    "keygen json array compact": "[" + ",".join(str(b) for b in KEYPAIR) + "]",
    "hex keypair": KEYPAIR.hex(),
}


def solana_message(address):
    return (
        f"standx.com wants you to sign in with your Solana account:\n"
        f"{address}\n"
        f"\n"
        f"Sign in to the perps venue \u00e9\U0001F680.\n"
        f"\n"
        f"URI: https://standx.com\n"
        f"Version: 1\n"
        f"Nonce: 8f2c1a9e4b7d6f30\n"
        f"Issued At: 2026-01-01T00:00:00.000Z"
    )


# The session's request key in the Solana payloads: a key of its own, never the wallet's (the
# library refuses a wallet key that is also the request-signing key).
OTHER_REQUEST_ID = b58(bytes(nacl.signing.SigningKey(bytes(range(32, 64))).verify_key))


def solana_payload():
    p = signin_payload(SOLANA_ADDR, solana_message(SOLANA_ADDR), chain_id=0)
    p["statement"] = "Sign in to the perps venue \u00e9\U0001F680."
    p["requestId"] = OTHER_REQUEST_ID
    return p


def test_solana_wallet_key_that_is_the_request_key_is_refused():
    p = signin_payload(SOLANA_ADDR, solana_message(SOLANA_ADDR), chain_id=0)
    assert p["requestId"] == SOLANA_ADDR
    with pytest.raises(PerpsError) as exc:
        wallet_sign("solana", b58(SEED), json.dumps(p))
    assert exc.value.code == 2 and "request-signing key" in str(exc.value)


def check_solana_signature(b64, payload_obj, message, public_key):
    blob = b64decode_strict(b64)
    doc = json.loads(blob.decode("utf-8"))
    assert set(doc) == {"input", "output"}
    assert doc["input"] == payload_obj
    out = doc["output"]
    assert set(out) == {"signedMessage", "signature", "account"}
    assert set(out["account"]) == {"publicKey"}
    for arr in (out["signedMessage"], out["signature"], out["account"]["publicKey"]):
        assert isinstance(arr, list)
        assert all(type(x) is int and 0 <= x <= 255 for x in arr)
    signed = bytes(out["signedMessage"])
    assert signed == message.encode("utf-8")
    assert bytes(out["account"]["publicKey"]) == public_key
    sig = bytes(out["signature"])
    assert len(sig) == 64
    nacl.signing.VerifyKey(public_key).verify(message.encode("utf-8"), sig)
    return sig


@pytest.mark.parametrize("form", sorted(SOLANA_KEY_FORMS))
def test_solana_wallet_sign_matches_pynacl(form):
    payload_obj = solana_payload()
    payload = json.dumps(payload_obj, ensure_ascii=False)
    ours = wallet_sign("solana", SOLANA_KEY_FORMS[form], payload)
    message = payload_obj["message"]
    sig = check_solana_signature(ours, payload_obj, message, PUBLIC_KEY)
    assert sig == SIGNING_KEY.sign(message.encode("utf-8")).signature


def test_solana_input_is_payload_object_unchanged():
    # Escaped (ensure_ascii) and unescaped JSON of the same payload decode to the same object.
    payload_obj = solana_payload()
    payload_obj["extra"] = {"nested": [1, 2, {"k": None}], "flag": True}
    for text in (json.dumps(payload_obj), json.dumps(payload_obj, ensure_ascii=False, indent=2)):
        ours = wallet_sign("solana", b58(KEYPAIR), text)
        check_solana_signature(ours, payload_obj, payload_obj["message"], PUBLIC_KEY)


@pytest.mark.parametrize("form", sorted(SOLANA_KEY_FORMS))
def test_solana_wallet_address(form):
    assert wallet_address("solana", SOLANA_KEY_FORMS[form]) == SOLANA_ADDR
    assert SOLANA_ADDR == base58.b58encode(bytes(nacl.signing.SigningKey(SEED).verify_key)).decode()


def test_solana_second_key_all_forms_agree():
    seed = bytes(range(1, 33))
    sk = nacl.signing.SigningKey(seed)
    pub = bytes(sk.verify_key)
    kp = seed + pub
    payload_obj = signin_payload(b58(pub), solana_message(b58(pub)), chain_id=0)
    payload = json.dumps(payload_obj)
    for key in (b58(kp), b58(seed), json.dumps(list(kp))):
        assert wallet_address("solana", key) == b58(pub)
        ours = wallet_sign("solana", key, payload)
        sig = check_solana_signature(ours, payload_obj, payload_obj["message"], pub)
        assert sig == sk.sign(payload_obj["message"].encode()).signature


def test_solana_mismatched_keypair_rejected():
    other_pub = bytes(nacl.signing.SigningKey(bytes(32)).verify_key)
    with pytest.raises(PerpsError) as e:
        wallet_address("solana", b58(SEED + other_pub))
    assert e.value.code == PERPS_INVALID_KEY


def test_solana_wrap_external_signature_equals_wallet_sign():
    payload_obj = solana_payload()
    payload = json.dumps(payload_obj)
    message = payload_obj["message"].encode("utf-8")
    sig = SIGNING_KEY.sign(message).signature  # "made elsewhere": by PyNaCl
    wrapped = wrap_solana_signature(payload, SOLANA_ADDR, sig)
    assert check_solana_signature(wrapped, payload_obj, payload_obj["message"], PUBLIC_KEY) == sig
    assert wrapped == wallet_sign("solana", b58(KEYPAIR), payload)


def test_solana_wrap_rejects_bad_signature():
    payload_obj = solana_payload()
    payload = json.dumps(payload_obj)
    sig = bytearray(SIGNING_KEY.sign(payload_obj["message"].encode("utf-8")).signature)
    sig[0] ^= 1
    with pytest.raises(PerpsError) as e:
        wrap_solana_signature(payload, SOLANA_ADDR, bytes(sig))
    assert e.value.code == PERPS_VERIFICATION_FAILED
    # Signature by another key over the right message.
    other = nacl.signing.SigningKey(bytes(range(32))).sign(payload_obj["message"].encode()).signature
    with pytest.raises(PerpsError) as e:
        wrap_solana_signature(payload, SOLANA_ADDR, other)
    assert e.value.code == PERPS_VERIFICATION_FAILED
