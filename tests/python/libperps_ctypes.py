"""A ctypes binding of include/perps.h for the independent cross-checks (test_*.py here).

The library is target/release/libperps.so (override with env PERPS_LIB). Every owned
char* the library returns is declared `c_void_p`, copied with `ctypes.string_at`, then
released with `perps_string_free`; only borrowed strings (error message/body, version)
use `c_char_p`.
"""

import ctypes
import json
import os
import pathlib
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

import pytest

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
    decl("perps_challenge_verify", c_void_p, c_char_p, c_char_p, c_char_p, c_char_p, c_char_p, c_int64, ERR_OUT)
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


def challenge_verify(signed_data, certs_json, request_id, chain, address, now_unix_secs):
    return _call_str(
        LIB.perps_challenge_verify,
        _b(signed_data),
        _b(certs_json),
        _b(request_id),
        _b(chain),
        _b(address),
        now_unix_secs,
    )
