/*
 * tests/c/test_wallet.c: the offline wallet, challenge and order calls of the libperps C ABI,
 * exercised from C (split from test_core.c, which keeps the body-signing calls; the same
 * rules hold: every pointer argument NULL in turn, invalid UTF-8, err == NULL, bad
 * keys, payloads and orders; everything freed, clean under ASan/LSan and valgrind).
 *
 * Known answers, computed independently of the library (see fixtures.h): EIP-191
 * personal_sign with an RFC 6979 (HMAC-SHA-256) nonce, low s, v = 27/28 (Python
 * `cryptography` and a pure-Python Keccak-256); Ed25519 from Python `cryptography`.
 */

#include "perps.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "ed25519_verify.h"
#include "fixtures.h"
#include "offline_checks.h"

/* "0x" + 130 lower-case hex digits, last byte 1b or 1c. */
static int is_eip191_sig(const char *s) {
    if (strlen(s) != 132 || s[0] != '0' || s[1] != 'x') {
        return 0;
    }
    for (int i = 2; i < 132; i++) {
        if (!isdigit((unsigned char)s[i]) && !(s[i] >= 'a' && s[i] <= 'f')) {
            return 0;
        }
    }
    return strcmp(s + 130, "1b") == 0 || strcmp(s + 130, "1c") == 0;
}

/* ------------------------------------------------------------------------------------ */
/* Tests                                                                                 */
/* ------------------------------------------------------------------------------------ */

static void test_wallet_address(void) {
    perps_error *err = NULL;
    static const char *evm_forms[] = {
        EVM_KEY,
        "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
        "0XAC0974BEC39A17E36BA4A6B4D238FF944BACB478CBED5EFCAE784D7BF4F2FF80",
    };
    for (size_t i = 0; i < sizeof evm_forms / sizeof evm_forms[0]; i++) {
        char *addr = perps_wallet_address("bsc", evm_forms[i], &err);
        CHECK(err == NULL && addr != NULL && strcmp(addr, EVM_ADDRESS) == 0);
        perps_string_free(addr);
    }
    static const char *sol_forms[] = {ED_SEED_B58, ED_PAIR_B58, ED_SEED_HEX, ED_JSON_ARRAY};
    for (size_t i = 0; i < sizeof sol_forms / sizeof sol_forms[0]; i++) {
        char *addr = perps_wallet_address("solana", sol_forms[i], &err);
        CHECK(err == NULL && addr != NULL && strcmp(addr, ED_REQUEST_ID) == 0);
        perps_string_free(addr);
    }

    /* Failures. */
    err = NULL;
    CHECK(perps_wallet_address(NULL, EVM_KEY, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "chain");
    err = NULL;
    CHECK(perps_wallet_address("bsc", NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "private_key");
    err = NULL;
    CHECK(perps_wallet_address(BAD_UTF8, EVM_KEY, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_wallet_address("bsc", BAD_UTF8, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    static const char *bad_chains[] = {"eth", "", "BSC", "solana "};
    for (size_t i = 0; i < sizeof bad_chains / sizeof bad_chains[0]; i++) {
        err = NULL;
        CHECK(perps_wallet_address(bad_chains[i], EVM_KEY, &err) == NULL);
        EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "chain");
    }
    CHECK(perps_wallet_address("eth", EVM_KEY, NULL) == NULL);
    CHECK(perps_wallet_address(NULL, NULL, NULL) == NULL);

    static const char *bad_evm[] = {
        "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff8",   /* 63 digits */
        "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff800", /* 65 digits */
        "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ffzz",  /* bad hex */
        "0x0000000000000000000000000000000000000000000000000000000000000000",  /* zero scalar */
        "0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141",  /* = n */
        "",
    };
    for (size_t i = 0; i < sizeof bad_evm / sizeof bad_evm[0]; i++) {
        err = NULL;
        CHECK(perps_wallet_address("bsc", bad_evm[i], &err) == NULL);
        CHECK(err == NULL || bad_evm[i][0] == '\0' || !contains(perps_error_message(err), bad_evm[i] + 2));
        CHECK(err == NULL || !contains(perps_error_message(err), "ac0974bec39a"));
        EXPECT_ERROR(err, PERPS_INVALID_KEY, NULL);
    }
    static const char *bad_sol[] = {ED_BAD_PAIR_B58, "0OIl0OIl0OIl", "3yZe7d", ""};
    for (size_t i = 0; i < sizeof bad_sol / sizeof bad_sol[0]; i++) {
        err = NULL;
        CHECK(perps_wallet_address("solana", bad_sol[i], &err) == NULL);
        CHECK(err == NULL || bad_sol[i][0] == '\0' || !contains(perps_error_message(err), bad_sol[i]));
        EXPECT_ERROR(err, PERPS_INVALID_KEY, NULL);
    }
}

/* Both arguments are `const char *`: a caller who swaps chain and private_key must not get
 * the key back in the error message (ABI.md convention 8: secrets never appear in errors). */
static void test_swapped_arguments_do_not_leak_the_key(void) {
    static const char *keys[] = {EVM_KEY, ED_SEED_B58, ED_PAIR_B58};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        perps_error *err = NULL;
        CHECK(perps_wallet_address(keys[i], "bsc", &err) == NULL);
        CHECK(err != NULL && !quotes_secret(perps_error_message(err), keys[i]));
        if (err != NULL && quotes_secret(perps_error_message(err), keys[i])) {
            fprintf(stderr, "     perps_wallet_address(key, \"bsc\") message quotes the key: %s\n",
                    perps_error_message(err));
        }
        EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, NULL);
        err = NULL;
        CHECK(perps_wallet_sign(keys[i], "solana", SOL_PAYLOAD, &err) == NULL);
        CHECK(err != NULL && !quotes_secret(perps_error_message(err), keys[i]));
        EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, NULL);
    }
}

static void test_wallet_sign(void) {
    perps_error *err = NULL;

    /* bsc: EIP-191 known answer and shape. */
    char *sig = perps_wallet_sign("bsc", EVM_KEY, EVM_PAYLOAD, &err);
    CHECK(err == NULL && sig != NULL);
    CHECK(sig != NULL && is_eip191_sig(sig));
    CHECK(sig != NULL && strcmp(sig, EVM_SIG) == 0);
    if (sig != NULL && strcmp(sig, EVM_SIG) != 0) {
        fprintf(stderr, "     got      %s\n     expected %s\n", sig, EVM_SIG);
    }
    char *sig2 = perps_wallet_sign("bsc", EVM_KEY + 2, EVM_PAYLOAD, &err); /* without 0x: same key */
    CHECK(sig != NULL && sig2 != NULL && strcmp(sig, sig2) == 0);        /* RFC 6979: deterministic */
    perps_string_free(sig2);
    sig2 = perps_wallet_sign("bsc", EVM_KEY, "{\"message\":\"another message\"}", &err);
    CHECK(sig2 != NULL && is_eip191_sig(sig2) && sig != NULL && strcmp(sig, sig2) != 0);
    perps_string_free(sig2);
    perps_string_free(sig);

    /* solana: the base64 JSON wrapper, known answer. */
    sig = perps_wallet_sign("solana", ED_PAIR_B58, SOL_PAYLOAD, &err);
    CHECK(err == NULL && sig != NULL && strcmp(sig, SOL_LOGIN_SIG) == 0);
    perps_string_free(sig);

    /* Failures. */
    err = NULL;
    CHECK(perps_wallet_sign(NULL, EVM_KEY, EVM_PAYLOAD, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "chain");
    err = NULL;
    CHECK(perps_wallet_sign("bsc", NULL, EVM_PAYLOAD, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "private_key");
    err = NULL;
    CHECK(perps_wallet_sign("bsc", EVM_KEY, NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "payload_json");
    err = NULL;
    CHECK(perps_wallet_sign(BAD_UTF8, EVM_KEY, EVM_PAYLOAD, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_wallet_sign("bsc", BAD_UTF8, EVM_PAYLOAD, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_wallet_sign("bsc", EVM_KEY, BAD_UTF8, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_wallet_sign("tron", EVM_KEY, EVM_PAYLOAD, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "chain");

    static const char *bad_payloads[] = {
        "{not json", "", "[1,2]", "\"message\"", "{}", "{\"message\":42}", "{\"message\":\"x\"} trailing",
    };
    for (size_t i = 0; i < sizeof bad_payloads / sizeof bad_payloads[0]; i++) {
        err = NULL;
        CHECK(perps_wallet_sign("bsc", EVM_KEY, bad_payloads[i], &err) == NULL);
        EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, NULL);
        err = NULL;
        CHECK(perps_wallet_sign("solana", ED_SEED_B58, bad_payloads[i], &err) == NULL);
        EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, NULL);
    }
    err = NULL;
    CHECK(perps_wallet_sign("bsc", "0x1234", EVM_PAYLOAD, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_KEY, NULL);
    err = NULL;
    CHECK(perps_wallet_sign("solana", ED_BAD_PAIR_B58, SOL_PAYLOAD, &err) == NULL);
    CHECK(err == NULL || !contains(perps_error_message(err), ED_BAD_PAIR_B58));
    EXPECT_ERROR(err, PERPS_INVALID_KEY, NULL);
    CHECK(perps_wallet_sign("bsc", EVM_KEY, "{not json", NULL) == NULL);
    CHECK(perps_wallet_sign(NULL, NULL, NULL, NULL) == NULL);
}

static void test_wallet_wrap_solana_signature(void) {
    perps_error *err = NULL;

    /* The raw signature made "elsewhere" wraps to exactly what perps_wallet_sign gives. */
    char *wrapped = perps_wallet_wrap_solana_signature(SOL_PAYLOAD, ED_REQUEST_ID, SOL_RAW_SIG, 64, &err);
    CHECK(err == NULL && wrapped != NULL && strcmp(wrapped, SOL_LOGIN_SIG) == 0);
    perps_string_free(wrapped);

    /* One bit off: PERPS_VERIFICATION_FAILED. */
    uint8_t wrong[64];
    memcpy(wrong, SOL_RAW_SIG, 64);
    wrong[10] ^= 0x01;
    CHECK(perps_wallet_wrap_solana_signature(SOL_PAYLOAD, ED_REQUEST_ID, wrong, 64, &err) == NULL);
    EXPECT_ERROR(err, PERPS_VERIFICATION_FAILED, "signature");
    err = NULL;
    /* Right signature, other message. */
    CHECK(perps_wallet_wrap_solana_signature("{\"message\":\"sign me please!\"}", ED_REQUEST_ID, SOL_RAW_SIG, 64,
                                             &err) == NULL);
    EXPECT_ERROR(err, PERPS_VERIFICATION_FAILED, NULL);
    err = NULL;
    /* Right signature, other wallet. */
    char *other = perps_wallet_address("solana", "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
                                       &err);
    CHECK(other != NULL);
    if (other != NULL) {
        CHECK(perps_wallet_wrap_solana_signature(SOL_PAYLOAD, other, SOL_RAW_SIG, 64, &err) == NULL);
        EXPECT_ERROR(err, PERPS_VERIFICATION_FAILED, NULL);
        err = NULL;
    }
    perps_string_free(other);
    /* All-zero signature. */
    uint8_t zeros[64] = {0};
    CHECK(perps_wallet_wrap_solana_signature(SOL_PAYLOAD, ED_REQUEST_ID, zeros, 64, &err) == NULL);
    EXPECT_ERROR(err, PERPS_VERIFICATION_FAILED, NULL);
    err = NULL;

    /* Argument failures. */
    CHECK(perps_wallet_wrap_solana_signature(NULL, ED_REQUEST_ID, SOL_RAW_SIG, 64, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "payload_json");
    err = NULL;
    CHECK(perps_wallet_wrap_solana_signature(SOL_PAYLOAD, NULL, SOL_RAW_SIG, 64, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "address");
    err = NULL;
    CHECK(perps_wallet_wrap_solana_signature(SOL_PAYLOAD, ED_REQUEST_ID, NULL, 64, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "signature");
    err = NULL;
    CHECK(perps_wallet_wrap_solana_signature(SOL_PAYLOAD, ED_REQUEST_ID, NULL, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "64");
    err = NULL;
    CHECK(perps_wallet_wrap_solana_signature(SOL_PAYLOAD, ED_REQUEST_ID, SOL_RAW_SIG, 63, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "64");
    err = NULL;
    CHECK(perps_wallet_wrap_solana_signature(BAD_UTF8, ED_REQUEST_ID, SOL_RAW_SIG, 64, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_wallet_wrap_solana_signature(SOL_PAYLOAD, BAD_UTF8, SOL_RAW_SIG, 64, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_wallet_wrap_solana_signature("{not json", ED_REQUEST_ID, SOL_RAW_SIG, 64, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "JSON");
    err = NULL;
    CHECK(perps_wallet_wrap_solana_signature(SOL_PAYLOAD, "0OIl", SOL_RAW_SIG, 64, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "base58");
    err = NULL;
    CHECK(perps_wallet_wrap_solana_signature(SOL_PAYLOAD, "3yZe7d", SOL_RAW_SIG, 64, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "32 bytes");
    err = NULL;
    CHECK(perps_wallet_wrap_solana_signature(SOL_PAYLOAD, ED_REQUEST_ID, SOL_RAW_SIG, SIZE_MAX, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "signature");
    CHECK(perps_wallet_wrap_solana_signature(SOL_PAYLOAD, ED_REQUEST_ID, wrong, 64, NULL) == NULL);
    CHECK(perps_wallet_wrap_solana_signature(NULL, NULL, NULL, 0, NULL) == NULL);
}

static void test_challenge_verify(void) {
    perps_error *err = NULL;
    static const char addr[] = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

    /* A challenge that verifies (fixtures.h, made and checked independently): the payload
     * comes back unchanged, and err stays NULL. */
    char *payload = perps_challenge_verify(CHALLENGE_JWS, CERTS, ED_REQUEST_ID, "bsc", EVM_ADDRESS, CHALLENGE_NOW, &err);
    CHECK(err == NULL && payload != NULL && strcmp(payload, CHALLENGE_PAYLOAD) == 0);
    perps_string_free(payload);
    payload = perps_challenge_verify(CHALLENGE_JWS, CERTS, ED_REQUEST_ID, "bsc", EVM_ADDRESS, CHALLENGE_NOW, NULL);
    CHECK(payload != NULL && strcmp(payload, CHALLENGE_PAYLOAD) == 0);
    perps_string_free(payload);
    /* The same challenge when it has expired, for another session's key or wallet, or with
     * one signature byte changed: refused. */
    CHECK(perps_challenge_verify(CHALLENGE_JWS, CERTS, ED_REQUEST_ID, "bsc", EVM_ADDRESS, CHALLENGE_EXP, &err) == NULL);
    EXPECT_ERROR(err, PERPS_VERIFICATION_FAILED, "expired");
    err = NULL;
    CHECK(perps_challenge_verify(CHALLENGE_JWS, CERTS, "8bK4GzmYb2Xc7m9vHuJnWWwvQ6RkU2z3t1ePqAa7sXYZ", "bsc",
                                 EVM_ADDRESS, CHALLENGE_NOW, &err) == NULL);
    EXPECT_ERROR(err, PERPS_VERIFICATION_FAILED, "requestId");
    err = NULL;
    CHECK(perps_challenge_verify(CHALLENGE_JWS, CERTS, ED_REQUEST_ID, "bsc", "0x1111111111111111111111111111111111111111",
                                 CHALLENGE_NOW, &err) == NULL);
    EXPECT_ERROR(err, PERPS_VERIFICATION_FAILED, "address");
    err = NULL;
    char tampered[sizeof CHALLENGE_JWS];
    memcpy(tampered, CHALLENGE_JWS, sizeof tampered);
    tampered[sizeof tampered - 5] = tampered[sizeof tampered - 5] == 'A' ? 'B' : 'A'; /* in the signature */
    CHECK(perps_challenge_verify(tampered, CERTS, ED_REQUEST_ID, "bsc", EVM_ADDRESS, CHALLENGE_NOW, &err) == NULL);
    EXPECT_ERROR(err, PERPS_VERIFICATION_FAILED, "signature");
    err = NULL;
    /* {"alg":"ES256","typ":"JWT"} . {"exp":1} . 64 zero bytes */
    static const char zero_sig_jws[] =
        "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjF9."
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    /* {"alg":"HS256","typ":"JWT"} . {} . "sig" */
    static const char hs256_jws[] = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.c2ln";

    static const char *malformed[] = {"not-a-jws", "a.b", "a.b.c", "", "...", "a.b.c.d", zero_sig_jws, hs256_jws};
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        err = NULL;
        CHECK(perps_challenge_verify(malformed[i], CERTS, ED_REQUEST_ID, "bsc", addr, 0, &err) == NULL);
        EXPECT_ERROR(err, PERPS_VERIFICATION_FAILED, NULL);
    }
    err = NULL;
    CHECK(perps_challenge_verify(hs256_jws, CERTS, ED_REQUEST_ID, "bsc", addr, 1700000000, &err) == NULL);
    EXPECT_ERROR(err, PERPS_VERIFICATION_FAILED, "ES256");

    /* Unusable certs documents: PERPS_BAD_RESPONSE. */
    static const char *bad_certs[] = {
        "not json", "", "{}", "{\"keys\":[]}", "{\"keys\":[{\"kty\":\"RSA\",\"n\":\"x\",\"e\":\"AQAB\"}]}", "[]",
    };
    for (size_t i = 0; i < sizeof bad_certs / sizeof bad_certs[0]; i++) {
        err = NULL;
        CHECK(perps_challenge_verify(zero_sig_jws, bad_certs[i], ED_REQUEST_ID, "bsc", addr, 0, &err) == NULL);
        EXPECT_ERROR(err, PERPS_BAD_RESPONSE, "certs");
    }

    /* NULL / non-UTF-8 arguments, unknown chain. */
    err = NULL;
    CHECK(perps_challenge_verify(NULL, CERTS, ED_REQUEST_ID, "bsc", addr, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "signed_data");
    err = NULL;
    CHECK(perps_challenge_verify(zero_sig_jws, NULL, ED_REQUEST_ID, "bsc", addr, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "certs_json");
    err = NULL;
    CHECK(perps_challenge_verify(zero_sig_jws, CERTS, NULL, "bsc", addr, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "request_id");
    err = NULL;
    CHECK(perps_challenge_verify(zero_sig_jws, CERTS, ED_REQUEST_ID, NULL, addr, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "chain");
    err = NULL;
    CHECK(perps_challenge_verify(zero_sig_jws, CERTS, ED_REQUEST_ID, "bsc", NULL, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "address");
    err = NULL;
    CHECK(perps_challenge_verify(zero_sig_jws, CERTS, ED_REQUEST_ID, "eth", addr, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "chain");
    err = NULL;
    CHECK(perps_challenge_verify(BAD_UTF8, CERTS, ED_REQUEST_ID, "bsc", addr, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_challenge_verify(zero_sig_jws, BAD_UTF8, ED_REQUEST_ID, "bsc", addr, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_challenge_verify(zero_sig_jws, CERTS, BAD_UTF8, "bsc", addr, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_challenge_verify(zero_sig_jws, CERTS, ED_REQUEST_ID, "bsc", BAD_UTF8, 0, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    CHECK(perps_challenge_verify(zero_sig_jws, CERTS, ED_REQUEST_ID, "bsc", addr, 0, NULL) == NULL);
    CHECK(perps_challenge_verify(NULL, NULL, NULL, NULL, NULL, 0, NULL) == NULL);
}

static void test_order_serialize(void) {
    perps_error *err = NULL;

    /* Fields in any order, with spaces: one compact body in the documented order, decimals
     * kept as the caller's text. */
    char *body = perps_order_serialize(
        "{ \"reduce_only\": false, \"time_in_force\": \"gtc\", \"price\": \"65000.50\",\n"
        "  \"qty\": \"0.010\", \"order_type\": \"limit\", \"side\": \"buy\", \"symbol\": \"BTC-USD\" }",
        &err);
    CHECK(err == NULL && body != NULL);
    CHECK(body != NULL &&
          strcmp(body, "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.010\","
                       "\"price\":\"65000.50\",\"time_in_force\":\"gtc\",\"reduce_only\":false}") == 0);
    /* Serialising the result again is a fixed point. */
    char *again = body ? perps_order_serialize(body, &err) : NULL;
    CHECK(again != NULL && body != NULL && strcmp(again, body) == 0);
    perps_string_free(again);
    perps_string_free(body);

    body = perps_order_serialize("{\"symbol\":\"ETH-USD\",\"side\":\"sell\",\"order_type\":\"market\",\"qty\":\"2\","
                                 "\"time_in_force\":\"ioc\",\"reduce_only\":true,\"cl_ord_id\":\"my-1\","
                                 "\"leverage\":10,\"margin_mode\":\"cross\"}",
                                 &err);
    CHECK(err == NULL && body != NULL &&
          strcmp(body, "{\"symbol\":\"ETH-USD\",\"side\":\"sell\",\"order_type\":\"market\",\"qty\":\"2\","
                       "\"time_in_force\":\"ioc\",\"reduce_only\":true,\"cl_ord_id\":\"my-1\","
                       "\"margin_mode\":\"cross\",\"leverage\":10}") == 0);
    perps_string_free(body);

    /* Invalid orders: PERPS_INVALID_ORDER naming the field. */
    static const struct {
        const char *json;
        const char *needle;
    } bad[] = {
        {"{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"1\",\"price\":\"1\","
         "\"time_in_force\":\"gtc\",\"reduceOnly\":false}",
         "reduceOnly"},
        {"{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":0.01,\"price\":\"1\","
         "\"time_in_force\":\"gtc\",\"reduce_only\":false}",
         "qty"},
        {"{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"1\","
         "\"time_in_force\":\"gtc\",\"reduce_only\":false}",
         "price"},
        {"{\"symbol\":\"BTC-USD\",\"side\":\"BUY\",\"order_type\":\"market\",\"qty\":\"1\","
         "\"time_in_force\":\"gtc\",\"reduce_only\":false}",
         "side"},
        {"{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"market\",\"qty\":\"1\","
         "\"time_in_force\":\"gtc\",\"reduce_only\":\"false\"}",
         "reduce_only"},
        {"{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"market\",\"qty\":\"-1\","
         "\"time_in_force\":\"gtc\",\"reduce_only\":false}",
         "qty"},
        {"{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"market\",\"qty\":\"1\","
         "\"time_in_force\":\"gtc\",\"reduce_only\":false,\"reduce_only\":true}",
         "duplicate"},
        {"{\"side\":\"buy\",\"order_type\":\"market\",\"qty\":\"1\",\"time_in_force\":\"gtc\",\"reduce_only\":false}",
         "symbol"},
        {"{not json", "JSON"},
        {"[1,2,3]", "object"},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err = NULL;
        CHECK(perps_order_serialize(bad[i].json, &err) == NULL);
        EXPECT_ERROR(err, PERPS_INVALID_ORDER, bad[i].needle);
    }
    err = NULL;
    CHECK(perps_order_serialize(bad[0].json, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ORDER, "reduce_only"); /* the suggestion */

    err = NULL;
    CHECK(perps_order_serialize(NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "order_json");
    err = NULL;
    CHECK(perps_order_serialize(BAD_UTF8, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    CHECK(perps_order_serialize(bad[0].json, NULL) == NULL);
    CHECK(perps_order_serialize(NULL, NULL) == NULL);
}

int main(void) {
    test_wallet_address();
    test_wallet_sign();
    test_swapped_arguments_do_not_leak_the_key();
    test_wallet_wrap_solana_signature();
    test_challenge_verify();
    test_order_serialize();

    return check_summary();
}
