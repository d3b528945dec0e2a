"""The offline helpers through the Python binding, each against an independent truth:
wallet_wrap_solana_signature with a signature PyNaCl (libsodium) makes with the RFC 8032 test key,
and the known answer tests/c/fixtures.h shares; challenge_verify with the shared challenge
fixture (tests/c/fixtures.h CHALLENGE_JWS, made and verified with `cryptography` by
tests/python/test_challenge.py: an ES256 JWS by the key whose public key is P-256's generator
point, the certs' key), accepted with its payload returned, and refused when expired, for
another wallet or session key, or with its signature changed."""

import base64
import json

import nacl.signing
import pytest

import perps

RFC8032_SEED = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
RFC8032_SEED_B58 = "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb"
RFC8032_ADDRESS = "FVen3X669xLzsi6N2V91DoiyzHzg1uAgqiT8jZ9nS96Z"  # base58 of its public key
SOL_PAYLOAD = '{"message":"sign me please","requestId":"x"}'
SOL_LOGIN_SIG = (  # tests/c/fixtures.h SOL_LOGIN_SIG
    "eyJpbnB1dCI6eyJtZXNzYWdlIjoic2lnbiBtZSBwbGVhc2UiLCJyZXF1ZXN0SWQiOiJ4In0sIm91dHB1dCI6eyJzaWdu"
    "ZWRNZXNzYWdlIjpbMTE1LDEwNSwxMDMsMTEwLDMyLDEwOSwxMDEsMzIsMTEyLDEwOCwxMDEsOTcsMTE1LDEwMV0sInNp"
    "Z25hdHVyZSI6WzczLDE2OCwyMDYsMzEsNzAsNzQsMjU1LDE0NywyNDIsMjQ3LDIzMCw4OSwxMzEsMjksMTUwLDk4LDE4"
    "MCwzOCwxMzgsMTU4LDI0LDIxOSwyMDcsOTMsMTIwLDEzMiw1Niw4Niw2MSwyNSwyMTksOSw4Niw3MywyNDQsOTUsNjIs"
    "MTUxLDIzMiwxMzUsMTgxLDEwLDEwLDIzLDQ0LDE4LDc3LDIyLDE1NCwyNTIsMTc5LDMxLDE0OSwyNTAsMzEsMTk3LDE5"
    "MCw3NywyMTMsMjcsNjQsMTU4LDE1Miw3XSwiYWNjb3VudCI6eyJwdWJsaWNLZXkiOlsyMTUsOTAsMTUyLDEsMTMwLDE3"
    "NywxMCwxODMsMjEzLDc1LDI1NCwyMTEsMjAxLDEwMCw3LDU4LDE0LDIyNSwxMTQsMjQzLDIxOCwxNjYsMzUsMzcsMTc1"
    "LDIsMjYsMTA0LDI0Nyw3LDgxLDI2XX19fQ=="
)
EVM_ADDRESS = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"

CHALLENGE_CERTS = (
    '{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","alg":"ES256","use":"sig",'
    '"x":"axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpY","y":"T-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfU"}]}'
)
CHALLENGE_NOW, CHALLENGE_EXP = 1700000060, 1700000180  # issued at 1700000000
CHALLENGE_JWS = (
    "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6ImsxIn0."
    "eyJkb21haW4iOiJ2ZW51ZS5leGFtcGxlIiwidXJpIjoiaHR0cHM6Ly92ZW51ZS5leGFtcGxlIiwic3RhdGVtZW50"
    "IjoiU2lnbiBpbiB0byB0aGUgdGVzdCB2ZW51ZS4iLCJ2ZXJzaW9uIjoiMSIsImNoYWluSWQiOjU2LCJub25jZSI6"
    "Im4wbmNlMTcwMDAwMDAwMCIsImFkZHJlc3MiOiIweGYzOUZkNmU1MWFhZDg4RjZGNGNlNmFCODgyNzI3OWNmZkZi"
    "OTIyNjYiLCJyZXF1ZXN0SWQiOiJGVmVuM1g2Njl4THpzaTZOMlY5MURvaXl6SHpnMXVBZ3FpVDhqWjluUzk2WiIs"
    "Imlzc3VlZEF0IjoiMjAyMy0xMS0xNFQyMjoxMzoyMFoiLCJtZXNzYWdlIjoidmVudWUuZXhhbXBsZSB3YW50cyB5"
    "b3UgdG8gc2lnbiBpbiB3aXRoIHlvdXIgRXRoZXJldW0gYWNjb3VudDpcbjB4ZjM5RmQ2ZTUxYWFkODhGNkY0Y2U2"
    "YUI4ODI3Mjc5Y2ZmRmI5MjI2NlxuXG5TaWduIGluIHRvIHRoZSB0ZXN0IHZlbnVlLlxuXG5VUkk6IGh0dHBzOi8v"
    "dmVudWUuZXhhbXBsZVxuVmVyc2lvbjogMVxuQ2hhaW4gSUQ6IDU2XG5Ob25jZTogbjBuY2UxNzAwMDAwMDAwXG5J"
    "c3N1ZWQgQXQ6IDIwMjMtMTEtMTRUMjI6MTM6MjBaXG5SZXF1ZXN0IElEOiBGVmVuM1g2Njl4THpzaTZOMlY5MURv"
    "aXl6SHpnMXVBZ3FpVDhqWjluUzk2WiIsImlhdCI6MTcwMDAwMDAwMCwiZXhwIjoxNzAwMDAwMTgwfQ."
    "j7s3-ScJacb5e3lu0q5TJvr3MyTNNtntLIbHb2cXwRmNDXskIyMRLeiCP5nHfuSuH6ljHcKZ-BJD3epZ1fBxbw"
)


def test_wrap_solana_signature():
    key = nacl.signing.SigningKey(RFC8032_SEED)
    raw = key.sign(b"sign me please").signature  # made outside the library
    wrapped = perps.wallet_wrap_solana_signature(SOL_PAYLOAD, RFC8032_ADDRESS, raw)
    assert wrapped == SOL_LOGIN_SIG
    login = json.loads(base64.b64decode(wrapped, validate=True))
    assert login["input"] == json.loads(SOL_PAYLOAD)
    assert bytes(login["output"]["signedMessage"]) == b"sign me please"
    assert bytes(login["output"]["signature"]) == raw
    assert bytes(login["output"]["account"]["publicKey"]) == bytes(key.verify_key)
    assert perps.wallet_sign("solana", RFC8032_SEED_B58, SOL_PAYLOAD) == wrapped  # Ed25519 is deterministic
    assert perps.wallet_wrap_solana_signature(SOL_PAYLOAD, RFC8032_ADDRESS, bytearray(raw)) == wrapped

    flipped = bytes([raw[0] ^ 1]) + raw[1:]
    with pytest.raises(perps.PerpsError) as e:
        perps.wallet_wrap_solana_signature(SOL_PAYLOAD, RFC8032_ADDRESS, flipped)
    assert e.value.code is perps.Code.VERIFICATION_FAILED
    with pytest.raises(perps.PerpsError) as e:
        perps.wallet_wrap_solana_signature(SOL_PAYLOAD, RFC8032_ADDRESS, raw[:63])
    assert e.value.code is perps.Code.INVALID_ARGUMENT
    with pytest.raises(perps.PerpsError) as e:
        perps.wallet_wrap_solana_signature('{"message":"another message"}', RFC8032_ADDRESS, raw)
    assert e.value.code is perps.Code.VERIFICATION_FAILED


def test_challenge_verify():
    payload = base64.urlsafe_b64decode(CHALLENGE_JWS.split(".")[1] + "==").decode()
    with perps.Session.from_api_key("tok", RFC8032_SEED_B58) as session:
        request_id = session.request_id
    assert request_id == RFC8032_ADDRESS
    got = perps.challenge_verify(CHALLENGE_JWS, CHALLENGE_CERTS, request_id, "bsc", EVM_ADDRESS, CHALLENGE_NOW)
    assert got == payload
    claims = json.loads(got)
    assert claims["requestId"] == request_id and claims["address"] == EVM_ADDRESS

    header, body, signature = CHALLENGE_JWS.split(".")
    for jws, rid, address, now in [
        (CHALLENGE_JWS, request_id, EVM_ADDRESS, CHALLENGE_EXP),  # expired
        (CHALLENGE_JWS, request_id, "0x" + "11" * 20, CHALLENGE_NOW),  # another wallet
        (CHALLENGE_JWS, "8bK4GzmYb2Xc7m9vHuJnWWwvQ6RkU2z3t1ePqAa7sXYZ", EVM_ADDRESS, CHALLENGE_NOW),  # another key
        (f"{header}.{body}.A{signature[1:]}", request_id, EVM_ADDRESS, CHALLENGE_NOW),  # signature changed
    ]:
        with pytest.raises(perps.PerpsError) as e:
            perps.challenge_verify(jws, CHALLENGE_CERTS, rid, "bsc", address, now)
        assert e.value.code is perps.Code.VERIFICATION_FAILED and not e.value.may_have_reached_venue
    with pytest.raises(perps.PerpsError) as e:
        perps.challenge_verify(CHALLENGE_JWS, "not json", request_id, "bsc", EVM_ADDRESS, CHALLENGE_NOW)
    assert e.value.code is perps.Code.BAD_RESPONSE
