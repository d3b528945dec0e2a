"""Keys and helpers the independent cross-checks share (test_body_signature.py,
test_evm.py, test_solana.py, test_challenge.py): a fixed Ed25519 seed with its PyNaCl key pair,
strict base58 and base64, the sign-in payload the wallet signs, and a signed challenge."""

import base64
import re

import base58
import nacl.signing

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


# A sign-in challenge as the venue sends it (prepare-signin's signedData), for the ES256 key
# whose private scalar is 1: its public key is P-256's generator point G (SEC 2 §2.4.2,
# FIPS 186-4 D.1.2.3), published, so anyone can check the signature, and with RFC 6979's
# deterministic nonce anyone can make it again byte for byte (test_challenge.py does both
# with `cryptography`). The payload is the EIP-4361 sign-in of the EVM test wallet for the
# RFC 8032 key's requestId, issued at 1700000000, expiring at 1700000180. The C, C++ and
# binding tests use these same values (tests/c/fixtures.h CHALLENGE_*).
CHALLENGE_CERTS = (
    '{"keys":[{"kty":"EC","crv":"P-256","kid":"k1","alg":"ES256","use":"sig",'
    '"x":"axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpY","y":"T-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfU"}]}'
)
CHALLENGE_ADDRESS = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
CHALLENGE_NOW = 1700000060  # inside [iat, exp)
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
