"""Secret arguments as bytes the caller can wipe (``bytes``, ``bytearray``, ``memoryview``):
``wallet_address``, ``wallet_sign``, ``Client.signin`` and ``Session.from_api_key`` give what
the ``str`` form gives — the same result for a good key, the same code and message for an
empty one, one holding a NUL and one the library refuses — and never modify the caller's
buffer. Bytes that are not UTF-8 are the library's INVALID_ARGUMENT naming the argument. Every
buffer the binding copies a secret into, whatever its form, is zeros once the call returned,
failed calls included (``perps._secrets._hook`` shows each secret's place in it as it is
copied; the test reads that place again after the call). A NUL in any argument is refused
before a secret is copied. (tests/test_interrupts.py: the same wherever an interrupt lands.)
Independent truths: the test wallet's address, and PyNaCl verifying a body signature of a
session made from the RFC 8032 key's bytes.
"""

import base64
import contextlib
import json

import nacl.signing
import pytest

import perps
import perps._secrets
from test_flow import ORDER, WALLET_ADDRESS, WALLET_KEY, sandbox  # noqa: F401  (sandbox: the fixture)
from test_offline import RFC8032_SEED, RFC8032_SEED_B58, SOL_LOGIN_SIG, SOL_PAYLOAD

KEYS = {
    "the test key": WALLET_KEY,
    "an empty key": "",
    "a NUL inside": WALLET_KEY[:10] + "\0" + WALLET_KEY[10:],
    "a refused key": "0x1234",
    "a non-ASCII key": "é€😀",
}


def forms(text):
    """The byte forms of a str secret: bytes, bytearray, memoryview of a bytearray, and a
    memoryview with the format "c" (as ctypes buffers export)."""
    raw = text.encode("utf-8")
    return [raw, bytearray(raw), memoryview(bytearray(raw)), memoryview(bytearray(raw)).cast("c")]


def outcome(call):
    try:
        return ("ok", call())
    except perps.PerpsError as e:
        return ("error", e.code, e.message)


def check_same_as_str(label, call):
    """call(key) for each form of each KEYS entry gives what the str form gives, and leaves
    the caller's buffer as it was."""
    text = KEYS[label]
    expected = outcome(lambda: call(text))
    assert (expected[0] == "ok") == (label == "the test key"), expected
    for form in forms(text):
        before = bytes(form)
        assert outcome(lambda: call(form)) == expected, type(form)
        assert bytes(form) == before, "the caller's buffer changed"


@pytest.mark.parametrize("label", list(KEYS))
def test_wallet_address_forms(label):
    check_same_as_str(label, lambda key: perps.wallet_address("bsc", key))


def test_wallet_address_of_the_test_key_bytes():
    key = bytearray(WALLET_KEY.encode())
    assert perps.wallet_address("bsc", key) == WALLET_ADDRESS
    assert perps.wallet_address("bsc", memoryview(key)) == WALLET_ADDRESS
    assert key == WALLET_KEY.encode()


def test_wallet_sign_of_the_rfc8032_key_bytes_is_its_known_signature():
    key = bytearray(RFC8032_SEED_B58.encode())
    assert perps.wallet_sign("solana", key, SOL_PAYLOAD) == SOL_LOGIN_SIG


def test_bytes_not_utf8_are_the_librarys_invalid_argument():
    key = bytearray(b"0x\xffa")
    with pytest.raises(perps.PerpsError) as e:
        perps.wallet_address("bsc", key)
    assert e.value.code == perps.Code.INVALID_ARGUMENT
    assert "private_key is not valid UTF-8" in e.value.message
    assert key == b"0x\xffa"


def test_buffers_that_are_not_bytes_are_refused():
    import array

    with pytest.raises(TypeError):
        perps.wallet_address("bsc", memoryview(array.array("H", [48, 120])))  # not bytes
    with pytest.raises(TypeError):
        perps.wallet_address("bsc", memoryview(bytearray(b"0x1234"))[::2])  # not contiguous
    with pytest.raises(TypeError):
        perps.wallet_address("bsc", 1234)


@pytest.mark.parametrize(
    "token,key,good",
    [
        ("tok", RFC8032_SEED_B58, True),
        ("", RFC8032_SEED_B58, False),
        ("tok", "", False),
        ("to\0k", RFC8032_SEED_B58, False),
        ("tok", RFC8032_SEED_B58 + "\0", False),
        ("tok", "not-a-key", False),
    ],
)
def test_from_api_key_forms(token, key, good):
    def state(t, k):
        with perps.Session.from_api_key(t, k) as s:
            return s.request_id, s.token(), s.sign_body_at('{"a":1}', "0b4f4a3e-8c1d-4f6e-9a2b-3c4d5e6f7a8b", 1700000000000)

    expected = outcome(lambda: state(token, key))
    assert (expected[0] == "ok") == good, expected
    for t, k in zip(forms(token), forms(key)):
        before = bytes(t), bytes(k)
        assert outcome(lambda: state(t, k)) == expected, type(t)
        assert (bytes(t), bytes(k)) == before


def test_a_session_from_key_bytes_signs_bodies_that_verify():
    verify = nacl.signing.SigningKey(RFC8032_SEED).verify_key
    body, rid, ts = '{"note":"bytes"}', "0b4f4a3e-8c1d-4f6e-9a2b-3c4d5e6f7a8b", 1700000000000
    for t, k in zip(forms("tok"), forms(RFC8032_SEED_B58)):
        with perps.Session.from_api_key(t, k) as s:
            headers = s.sign_body_at(body, rid, ts)
            signature = base64.b64decode(headers["x-request-signature"])
            verify.verify(f"v1,{rid},{ts},{body}".encode(), signature)  # raises if it does not


@pytest.mark.parametrize("label", list(KEYS))
def test_wallet_sign_and_signin_forms(sandbox, label):  # noqa: F811  (sandbox: the fixture)
    with perps.Client(sandbox.base_url, sandbox.perps_url) as client:
        with perps.Session() as session:
            payload = client.prepare_signin(session, "bsc", WALLET_ADDRESS)
        check_same_as_str(label, lambda key: perps.wallet_sign("bsc", key, payload))

        def signin(key):
            with perps.Session() as s:
                client.signin(s, "bsc", key, 3600)
                info = s.info()
                assert info["has_token"], info
                return info["address"] if "address" in info else info

        check_same_as_str(label, signin)


def test_signed_in_with_a_bytearray_key_places_an_order(sandbox):  # noqa: F811
    key = bytearray(WALLET_KEY.encode())
    with perps.Client(sandbox.base_url, sandbox.perps_url) as client, perps.Session() as session:
        client.signin(session, "bsc", key, 3600)
        assert json.loads(client.new_order(session, ORDER))["code"] == 0
    assert key == WALLET_KEY.encode()


@contextlib.contextmanager
def seen_buffers():
    """What the hook shows of each secret copied: its name, what its place in the buffer held
    then, and that place (read again once the call returned)."""
    seen = []
    perps._secrets._hook = lambda event, name, arg: seen.append((event, name, arg.raw, arg))
    try:
        yield seen
    finally:
        perps._secrets._hook = None


def check_wiped(seen, secrets):
    """Each secret was copied, in order, holding it and its NUL; each copy is zeros now that
    the call returned."""
    assert [(e, name, held) for e, name, held, _ in seen] == [
        ("made", name, value.encode() + b"\0") for name, value in secrets
    ]
    for _, name, held, arg in seen:
        assert arg.raw == bytes(len(held)), f"{name}'s copy is not zeros after the call: {arg.raw!r}"


@pytest.mark.parametrize("form", [str, bytes, bytearray, lambda s: memoryview(bytearray(s.encode()))])
def test_every_secret_buffer_is_wiped(sandbox, form):  # noqa: F811
    def f(text):
        return form(text.encode()) if form in (bytes, bytearray) else form(text)

    key = [("private_key", WALLET_KEY)]
    refused = [("private_key", "0x1234")]
    api = [("api_token", "tok"), ("ed25519_private_key", RFC8032_SEED_B58)]
    cases = [
        (key, True, lambda: perps.wallet_address("bsc", f(WALLET_KEY))),
        (refused, False, lambda: perps.wallet_address("bsc", f("0x1234"))),
        (api, True, lambda: perps.Session.from_api_key(f("tok"), f(RFC8032_SEED_B58)).close()),
        ([api[0], ("ed25519_private_key", "not-a-key")], False, lambda: perps.Session.from_api_key(f("tok"), f("not-a-key"))),
        # a NUL in either secret is refused before anything is copied
        ([], False, lambda: perps.Session.from_api_key(f("tok"), f(RFC8032_SEED_B58 + "\0"))),
        ([], False, lambda: perps.wallet_address("bsc", f(WALLET_KEY[:10] + "\0" + WALLET_KEY[10:]))),
    ]
    with perps.Client(sandbox.base_url, sandbox.perps_url) as client, perps.Session() as session:
        payload = client.prepare_signin(session, "bsc", WALLET_ADDRESS)
        cases += [
            ([("wallet_key", WALLET_KEY)], True, lambda: client.signin(session, "bsc", f(WALLET_KEY), 3600)),
            ([("wallet_key", "0x1234")], False, lambda: client.signin(session, "bsc", f("0x1234"), 3600)),
            (key, True, lambda: perps.wallet_sign("bsc", f(WALLET_KEY), payload)),
            (refused, False, lambda: perps.wallet_sign("bsc", f("0x1234"), payload)),
            (key, False, lambda: perps.wallet_sign("bsc", f(WALLET_KEY), "{")),  # a bad payload
            ([], False, lambda: perps.wallet_sign("bsc", f(WALLET_KEY), "{\0}")),  # refused first
        ]
        for secrets, good, call in cases:
            with seen_buffers() as seen:
                if good:
                    call()
                else:
                    with pytest.raises(perps.PerpsError):
                        call()
            check_wiped(seen, secrets)
