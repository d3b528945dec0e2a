/*
 * tests/c/fixtures.h: the keys, known answers and payloads that the C and C++ tests share
 * (tests/c/test_core.c, test_session.c, test_wallet.c and test_bad_input.c,
 * tests/cpp/test_hpp.cpp), in one place.
 *
 * The known answers were computed independently of the library (Python `cryptography`
 * for Ed25519 and deterministic ECDSA, a pure-Python Keccak-256 for EIP-191):
 *  - Ed25519 key: RFC 8032 test 1 seed 9d61b19d…7f60, public d75a9801…511a.
 *  - Body signature v1: Ed25519 over "v1,{id},{timestamp},{body}", standard base64.
 *  - EIP-191 personal_sign with RFC 6979 (HMAC-SHA-256) nonce, low s, v = 27/28.
 *
 * Valid C11 and C++17. Each test uses only some of these, hence the unused attribute.
 */
#ifndef PERPS_TEST_FIXTURES_H
#define PERPS_TEST_FIXTURES_H

#include <stdint.h>

#define PERPS_FIXTURE __attribute__((unused))

static const char BAD_UTF8[] PERPS_FIXTURE = "\xff\xfe";

/* RFC 8032 test 1 Ed25519 key in every accepted text form, and its public key in base58. */
#define ED_SEED_HEX "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
#define ED_PUB_HEX "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
static const char ED_SEED_B58[] PERPS_FIXTURE = "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb";
static const char ED_PAIR_B58[] PERPS_FIXTURE =
    "49W385L4rePHy6PAaQUovbD2aacgN4HsKXSMeUzRg4fmwXszN91JuMFrQRj3vMDpZuRF3ZknQBuRBoWQJEfXstMw";
/* The same seed with the first byte of the public half flipped. */
static const char ED_BAD_PAIR_B58[] PERPS_FIXTURE =
    "49W385L4rePHy6PAaQUovbD2aacgN4HsKXSMeUzRg4fmwTyaieHE1Wm8zjc5QqxNfyg1nZC1hEoWbwCWo3MYA5hb";
static const char ED_JSON_ARRAY[] PERPS_FIXTURE =
    "[157,97,177,157,239,253,90,96,186,132,74,244,146,236,44,196,68,73,197,105,123,50,105,25,"
    "112,59,172,3,28,174,127,96,215,90,152,1,130,177,10,183,213,75,254,211,201,100,7,58,14,"
    "225,114,243,218,166,35,37,175,2,26,104,247,7,81,26]";
static const char ED_REQUEST_ID[] PERPS_FIXTURE = "FVen3X669xLzsi6N2V91DoiyzHzg1uAgqiT8jZ9nS96Z";

/* Body signature v1 known answers for that key. */
static const char KAT_ID[] PERPS_FIXTURE = "123e4567-e89b-42d3-a456-426614174000";
static const int64_t KAT_TS PERPS_FIXTURE = 1700000000123;
static const char KAT_BODY[] PERPS_FIXTURE = "{\"symbol\":\"BTC-USD\",\"side\":\"buy\"}";
static const char KAT_SIG[] PERPS_FIXTURE =
    "M9mPMRykFc2vFDpyUxltxdZwxZSHKnMTK3/vLL6qiD6HSCHPgCBes+TSHs46KP5RVfivCHpvqs4yUoJVLT0yCA==";
static const char KAT_SIG_EMPTY_BODY[] PERPS_FIXTURE =
    "k4maIjmd5aq3wy1xxMM+GvUsAnM9ZlG5sk4vy97R70j/RodBTzb/9p4B3x9FfrcRkERam2cGf4SfpZMDcjNSAw==";

/* EVM: the well-known development key and its EIP-55 address. */
static const char EVM_KEY[] PERPS_FIXTURE = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
static const char EVM_ADDRESS[] PERPS_FIXTURE = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
static const char EVM_PAYLOAD[] PERPS_FIXTURE =
    "{\"domain\":\"standx.com\",\"chainId\":56,\"message\":\"standx.com wants you to sign in with "
    "your Ethereum account:\\n0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266\\n\\nSign in to StandX."
    "\\n\\nNonce: abc123\",\"exp\":1700000180,\"iat\":1700000000}";
static const char EVM_SIG[] PERPS_FIXTURE =
    "0x4f68d61b544051b53ec975a99146a31e9e3cf1d023a76f7377d9bfc4482a59b52b50005fbdd9da32ff59e0616"
    "ad291bba6cc7cf93dea1bb4261fbc40824cb6dd1c";

/* Solana: login signature of SOL_PAYLOAD by the RFC 8032 key, and the raw signature. */
static const char SOL_PAYLOAD[] PERPS_FIXTURE = "{\"message\":\"sign me please\",\"requestId\":\"x\"}";
static const uint8_t SOL_RAW_SIG[64] PERPS_FIXTURE = {
    73,  168, 206, 31,  70,  74,  255, 147, 242, 247, 230, 89,  131, 29,  150, 98,
    180, 38,  138, 158, 24,  219, 207, 93,  120, 132, 56,  86,  61,  25,  219, 9,
    86,  73,  244, 95,  62,  151, 232, 135, 181, 10,  10,  23,  44,  18,  77,  22,
    154, 252, 179, 31,  149, 250, 31,  197, 190, 77,  213, 27,  64,  158, 152, 7};
static const char SOL_LOGIN_SIG[] PERPS_FIXTURE =
    "eyJpbnB1dCI6eyJtZXNzYWdlIjoic2lnbiBtZSBwbGVhc2UiLCJyZXF1ZXN0SWQiOiJ4In0sIm91dHB1dCI6eyJzaWdu"
    "ZWRNZXNzYWdlIjpbMTE1LDEwNSwxMDMsMTEwLDMyLDEwOSwxMDEsMzIsMTEyLDEwOCwxMDEsOTcsMTE1LDEwMV0sInNp"
    "Z25hdHVyZSI6WzczLDE2OCwyMDYsMzEsNzAsNzQsMjU1LDE0NywyNDIsMjQ3LDIzMCw4OSwxMzEsMjksMTUwLDk4LDE4"
    "MCwzOCwxMzgsMTU4LDI0LDIxOSwyMDcsOTMsMTIwLDEzMiw1Niw4Niw2MSwyNSwyMTksOSw4Niw3MywyNDQsOTUsNjIs"
    "MTUxLDIzMiwxMzUsMTgxLDEwLDEwLDIzLDQ0LDE4LDc3LDIyLDE1NCwyNTIsMTc5LDMxLDE0OSwyNTAsMzEsMTk3LDE5"
    "MCw3NywyMTMsMjcsNjQsMTU4LDE1Miw3XSwiYWNjb3VudCI6eyJwdWJsaWNLZXkiOlsyMTUsOTAsMTUyLDEsMTMwLDE3"
    "NywxMCwxODMsMjEzLDc1LDI1NCwyMTEsMjAxLDEwMCw3LDU4LDE0LDIyNSwxMTQsMjQzLDIxOCwxNjYsMzUsMzcsMTc1"
    "LDIsMjYsMTA0LDI0Nyw3LDgxLDI2XX19fQ==";

/* A JWK set with one usable EC P-256 key (the curve's generator point). */
static const char CERTS[] PERPS_FIXTURE =
    "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"k1\",\"alg\":\"ES256\",\"use\":\"sig\","
    "\"x\":\"axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpY\","
    "\"y\":\"T-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfU\"}]}";

/* A sign-in challenge (prepare-signin's signedData, a compact ES256 JWS) signed by the key whose
 * private scalar is 1, so that CERTS (the generator point) verifies it: published and
 * reproducible, made byte for byte by RFC 6979 deterministic ECDSA in
 * tests/python/test_challenge.py, which verifies it with `cryptography` (OpenSSL) too. Its
 * payload (CHALLENGE_PAYLOAD, what perps_challenge_verify returns) signs in the EVM test
 * wallet (EVM_ADDRESS) for the RFC 8032 key's requestId (ED_REQUEST_ID), issued at
 * 1700000000, expiring at 1700000180; CHALLENGE_NOW is inside. */
static const int64_t CHALLENGE_NOW PERPS_FIXTURE = 1700000060;
static const int64_t CHALLENGE_EXP PERPS_FIXTURE = 1700000180;
static const char CHALLENGE_JWS[] PERPS_FIXTURE =
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
    "j7s3-ScJacb5e3lu0q5TJvr3MyTNNtntLIbHb2cXwRmNDXskIyMRLeiCP5nHfuSuH6ljHcKZ-BJD3epZ1fBxbw";
static const char CHALLENGE_PAYLOAD[] PERPS_FIXTURE =
    "{\"domain\":\"venue.example\",\"uri\":\"https://venue.example\",\"statement\":\"Sign in to t"
    "he test venue.\",\"version\":\"1\",\"chainId\":56,\"nonce\":\"n0nce1700000000\",\"address\":"
    "\"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266\",\"requestId\":\"FVen3X669xLzsi6N2V91DoiyzHzg1"
    "uAgqiT8jZ9nS96Z\",\"issuedAt\":\"2023-11-14T22:13:20Z\",\"message\":\"venue.example wants yo"
    "u to sign in with your Ethereum account:\\n0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266\\n\\nS"
    "ign in to the test venue.\\n\\nURI: https://venue.example\\nVersion: 1\\nChain ID: 56\\nNonc"
    "e: n0nce1700000000\\nIssued At: 2023-11-14T22:13:20Z\\nRequest ID: FVen3X669xLzsi6N2V91Doiyz"
    "Hzg1uAgqiT8jZ9nS96Z\",\"iat\":1700000000,\"exp\":1700000180}";

/* A valid limit order in the documented field order. */
static const char ORDER[] PERPS_FIXTURE =
    "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\",\"price\":\"65000\","
    "\"time_in_force\":\"gtc\",\"reduce_only\":false}";

#endif /* PERPS_TEST_FIXTURES_H */
