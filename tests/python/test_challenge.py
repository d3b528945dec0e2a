"""Independent cross-check of libperps's challenge verification (perps_challenge_verify, through
its C ABI: ctypes, libperps_ctypes.py) with the fixture every other test of it shares:
CHALLENGE_JWS in vectors.py (tests/c/fixtures.h has the same bytes). Source of truth, sharing
no code with libperps: `cryptography` (OpenSSL) signs and verifies ES256 here, and the key is
P-256's published generator point (private scalar 1).

The fixture is made again here, byte for byte (RFC 6979 deterministic ECDSA), so it is not an
opaque blob: whoever changes it must change this recipe, and any ES256 implementation can
check it.
"""

import base64
import json
import pathlib
import re

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from libperps_ctypes import PERPS_VERIFICATION_FAILED, PerpsError, challenge_verify
from vectors import CHALLENGE_ADDRESS, CHALLENGE_CERTS, CHALLENGE_JWS, CHALLENGE_NOW, PUBLIC_KEY, b58

# P-256's base point G, as SEC 2 (§2.4.2) and FIPS 186-4 (D.1.2.3) publish it.
P256_GX = 0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296
P256_GY = 0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5

REQUEST_ID = b58(PUBLIC_KEY)  # the RFC 8032 test key's requestId (tests/c/fixtures.h ED_REQUEST_ID)
HEADER = '{"alg":"ES256","typ":"JWT","kid":"k1"}'
IAT, EXP = 1700000000, 1700000180


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def payload_text():
    """The venue's sign-in payload: the claims and the EIP-4361 message that says the same."""
    statement = "Sign in to the test venue."
    nonce = "n0nce1700000000"
    issued_at = "2023-11-14T22:13:20Z"  # IAT in RFC 3339
    message = (
        f"venue.example wants you to sign in with your Ethereum account:\n{CHALLENGE_ADDRESS}\n\n"
        f"{statement}\n\nURI: https://venue.example\nVersion: 1\nChain ID: 56\nNonce: {nonce}\n"
        f"Issued At: {issued_at}\nRequest ID: {REQUEST_ID}"
    )
    claims = {
        "domain": "venue.example",
        "uri": "https://venue.example",
        "statement": statement,
        "version": "1",
        "chainId": 56,
        "nonce": nonce,
        "address": CHALLENGE_ADDRESS,
        "requestId": REQUEST_ID,
        "issuedAt": issued_at,
        "message": message,
        "iat": IAT,
        "exp": EXP,
    }
    return json.dumps(claims, separators=(",", ":"))


def certs_public_key():
    (jwk,) = json.loads(CHALLENGE_CERTS)["keys"]
    x = int.from_bytes(b64url_decode(jwk["x"]), "big")
    y = int.from_bytes(b64url_decode(jwk["y"]), "big")
    return ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()


def es256_verify(public_key, jws):
    signing_input, _, signature = jws.rpartition(".")
    raw = b64url_decode(signature)
    assert len(raw) == 64
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public_key.verify(der, signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256()))


def c_fixture(name):
    """A string constant of tests/c/fixtures.h (the C and C++ tests' copy), its pieces joined."""
    text = (pathlib.Path(__file__).resolve().parents[1] / "c" / "fixtures.h").read_text()
    body = re.search(r"\b" + name + r"\[\] PERPS_FIXTURE =(.*?);\n", text, re.S).group(1)
    return "".join(json.loads(piece) for piece in re.findall(r'"(?:[^"\\]|\\.)*"', body))


def test_the_c_tests_use_the_same_fixture():
    assert c_fixture("CHALLENGE_JWS") == CHALLENGE_JWS
    assert c_fixture("CERTS") == CHALLENGE_CERTS
    assert c_fixture("CHALLENGE_PAYLOAD") == payload_text()


def test_the_certs_key_is_the_published_generator_point():
    numbers = certs_public_key().public_numbers()
    assert (numbers.x, numbers.y) == (P256_GX, P256_GY)
    one = ec.derive_private_key(1, ec.SECP256R1()).public_key().public_numbers()
    assert (one.x, one.y) == (P256_GX, P256_GY)


def test_the_fixture_is_made_again_byte_for_byte():
    key = ec.derive_private_key(1, ec.SECP256R1())
    signing_input = b64url(HEADER.encode()) + "." + b64url(payload_text().encode())
    der = key.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256(), deterministic_signing=True))
    r, s = decode_dss_signature(der)
    assert signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big")) == CHALLENGE_JWS


def test_the_fixture_verifies_with_cryptography_and_a_changed_payload_does_not():
    es256_verify(certs_public_key(), CHALLENGE_JWS)
    header, payload, signature = CHALLENGE_JWS.split(".")
    other = b64url(payload_text().replace(CHALLENGE_ADDRESS, "0x" + "11" * 20).encode())
    with pytest.raises(InvalidSignature):
        es256_verify(certs_public_key(), f"{header}.{other}.{signature}")


def test_libperps_accepts_the_challenge_and_returns_its_payload():
    returned = challenge_verify(CHALLENGE_JWS, CHALLENGE_CERTS, REQUEST_ID, "bsc", CHALLENGE_ADDRESS, CHALLENGE_NOW)
    assert returned == payload_text()
    # The address is an EVM address: its case does not matter.
    lower = challenge_verify(CHALLENGE_JWS, CHALLENGE_CERTS, REQUEST_ID, "bsc", CHALLENGE_ADDRESS.lower(), IAT)
    assert lower == payload_text()


@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"now": EXP}, "expired"),
        ({"now": IAT - 61}, "ahead of now"),
        ({"address": "0x" + "11" * 20}, "address"),
        ({"request_id": "8bK4GzmYb2Xc7m9vHuJnWWwvQ6RkU2z3t1ePqAa7sXYZ"}, "requestId"),
        ({"chain": "solana"}, ""),
        ({"jws": CHALLENGE_JWS[:-2] + ("AA" if not CHALLENGE_JWS.endswith("AA") else "AQ")}, "signature"),
    ],
)
def test_libperps_refuses_what_does_not_match(change, fragment):
    args = {
        "jws": CHALLENGE_JWS,
        "request_id": REQUEST_ID,
        "chain": "bsc",
        "address": CHALLENGE_ADDRESS,
        "now": CHALLENGE_NOW,
        **change,
    }
    with pytest.raises(PerpsError) as exc:
        challenge_verify(args["jws"], CHALLENGE_CERTS, args["request_id"], args["chain"], args["address"], args["now"])
    assert exc.value.code == PERPS_VERIFICATION_FAILED
    assert fragment in exc.value.message


def test_libperps_refuses_the_challenge_against_another_key():
    other = ec.derive_private_key(2, ec.SECP256R1()).public_key().public_numbers()
    certs = json.dumps(
        {
            "keys": [
                {
                    "kty": "EC",
                    "crv": "P-256",
                    "kid": "k1",
                    "x": b64url(other.x.to_bytes(32, "big")),
                    "y": b64url(other.y.to_bytes(32, "big")),
                }
            ]
        }
    )
    with pytest.raises(PerpsError) as exc:
        challenge_verify(CHALLENGE_JWS, certs, REQUEST_ID, "bsc", CHALLENGE_ADDRESS, CHALLENGE_NOW)
    assert exc.value.code == PERPS_VERIFICATION_FAILED
