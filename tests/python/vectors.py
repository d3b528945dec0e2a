"""Keys and helpers the independent cross-checks share (test_body_signature.py,
test_evm.py, test_solana.py): a fixed Ed25519 seed with its PyNaCl key pair, strict base58 and
base64, and the sign-in payload the wallet signs."""

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
