"""Independent cross-checks of libperps's Solana sign-in: Ed25519 over the message, wrapped in JSON
+ base64, through its C ABI (ctypes, libperps_ctypes.py). Source of truth, sharing no code with
libperps: PyNaCl (libsodium) and the `base58` PyPI package.
See also test_body_signature.py, test_evm.py and test_solana.py.
"""

import json

import base58
import nacl.exceptions
import nacl.signing
import pytest

from libperps_ctypes import (
    PERPS_INVALID_KEY,
    PERPS_VERIFICATION_FAILED,
    PerpsError,
    wallet_address,
    wallet_sign,
    wrap_solana_signature,
)
from vectors import KEYPAIR, PUBLIC_KEY, SEED, SIGNING_KEY, b58, b64decode_strict, signin_payload

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
