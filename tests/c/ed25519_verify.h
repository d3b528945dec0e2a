/*
 * tests/c/ed25519_verify.h: Ed25519 verification of a body signature by OpenSSL (libcrypto),
 * an implementation independent of the library's. Fresh signatures are hedged (a new nonce
 * every time), so a test cannot compare one with a re-signature: it verifies it.
 *
 *   body_signature_verifies(public_key_b58, request_id, timestamp, body, body_len, signature_b64)
 *
 * checks the signature over "v1,{request_id},{timestamp},{body}" under the public key given in
 * base58 (what perps_session_request_id returns). Link with -lcrypto.
 */

#ifndef PERPS_TESTS_C_ED25519_VERIFY_H
#define PERPS_TESTS_C_ED25519_VERIFY_H

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* base58 (Bitcoin alphabet) of exactly 32 bytes into `out`; 0 on anything else. */
static inline int base58_32(const char *text, unsigned char out[32]) {
    static const char alphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    unsigned char n[33] = {0}; /* big-endian accumulator, one byte of headroom */
    for (const char *c = text; *c; c++) {
        const char *at = strchr(alphabet, *c);
        if (at == NULL || *c == '\0') {
            return 0;
        }
        unsigned int carry = (unsigned int)(at - alphabet);
        for (int i = 32; i >= 0; i--) {
            carry += 58u * n[i];
            n[i] = (unsigned char)(carry & 0xff);
            carry >>= 8;
        }
        if (carry != 0) {
            return 0;
        }
    }
    if (n[0] != 0) {
        return 0;
    }
    memcpy(out, n + 1, 32);
    return 1;
}

static inline int body_signature_verifies(const char *public_key_b58, const char *request_id, const char *timestamp,
                                          const char *body, size_t body_len, const char *signature_b64) {
    unsigned char pub[32], sig[66];
    if (!base58_32(public_key_b58, pub)) {
        return 0;
    }
    /* 88 base64 characters, two of them '=' padding: 66 bytes decoded, 64 of them the signature. */
    if (strlen(signature_b64) != 88 || EVP_DecodeBlock(sig, (const unsigned char *)signature_b64, 88) != 66) {
        return 0;
    }
    size_t prefix_len = strlen(request_id) + strlen(timestamp) + 5;
    char *message = malloc(prefix_len + body_len + 1);
    if (message == NULL) {
        return 0;
    }
    snprintf(message, prefix_len + 1, "v1,%s,%s,", request_id, timestamp);
    prefix_len = strlen(message);
    if (body_len > 0) {
        memcpy(message + prefix_len, body, body_len);
    }
    EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, sizeof pub);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = key != NULL && ctx != NULL && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) == 1 &&
             EVP_DigestVerify(ctx, sig, 64, (const unsigned char *)message, prefix_len + body_len) == 1;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(key);
    free(message);
    return ok;
}

#endif
