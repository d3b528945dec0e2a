"""Independent cross-checks of libperps's bsc (EVM) sign-in: EIP-191 personal_sign signatures and
EIP-55 addresses, through its C ABI (ctypes, libperps_ctypes.py). Source of truth, sharing no
code with libperps: eth-account (`Account.sign_message(encode_defunct(text=...))`,
`Account.recover_message`, `Account.from_key`); both sides use RFC 6979 nonces and low s, so
signatures are compared byte for byte; plus the well-known Hardhat/Anvil key/address vectors.
See also test_body_signature.py, test_evm.py and test_solana.py.
"""

import json
import re

import pytest
from eth_account import Account
from eth_account.messages import encode_defunct

from libperps_ctypes import PERPS_INVALID_ARGUMENT, PERPS_INVALID_KEY, PerpsError, wallet_address, wallet_sign
from vectors import signin_payload

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
