/*
 * tests/c/test_core.c: the offline part of the libperps C ABI, exercised from C.
 *
 * Every function of include/perps.h that needs no network is called here, on its happy
 * path (output shapes and independent known-answer vectors) and on its failure paths
 * (NULL for every pointer argument, invalid UTF-8, err == NULL, bad keys, bad payloads,
 * bad orders). Every string, error and session is freed, so the run is clean under
 * AddressSanitizer/LeakSanitizer and valgrind (see tests/c/run.sh).
 *
 * The known answers were computed independently of the library (Python `cryptography`
 * for Ed25519 and deterministic ECDSA, a pure-Python Keccak-256 for EIP-191):
 *  - Ed25519 key: RFC 8032 test 1 seed 9d61b19d…7f60, public d75a9801…511a.
 *  - Body signature v1: Ed25519 over "v1,{id},{timestamp},{body}", standard base64.
 *  - EIP-191 personal_sign with RFC 6979 (HMAC-SHA-256) nonce, low s, v = 27/28.
 *
 * Build: cc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude tests/c/test_core.c …
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

/* ------------------------------------------------------------------------------------ */
/* The test harness (its shared part is tests/c/check.h)                                */
/* ------------------------------------------------------------------------------------ */

/* Check that a call failed with `code`, a non-empty message containing `needle` (when not
 * NULL), and none of the HTTP details an offline failure cannot have; then free `e`. */
static void expect_error_at(perps_error *e, perps_code code, const char *needle, int line) {
    if (!check_error_at(e, code, needle, line)) {
        return;
    }
    check_at(perps_error_http_status(e) == 0, "offline error has no HTTP status", line);
    check_at(perps_error_body(e) == NULL, "offline error has no venue body", line);
    check_at(!perps_error_may_have_reached_venue(e), "offline error never reached the venue", line);
    perps_error_free(e);
}

#define EXPECT_ERROR(e, code, needle) expect_error_at((e), (code), (needle), __LINE__)

/* The value of "key":"value" in a flat JSON object without escapes; 0 when absent. */
static int json_string(const char *json, const char *key, char *out, size_t out_size) {
    char pattern[96];
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    const char *start = json ? strstr(json, pattern) : NULL;
    if (start == NULL) {
        return 0;
    }
    start += strlen(pattern);
    const char *end = strchr(start, '"');
    if (end == NULL || (size_t)(end - start) >= out_size) {
        return 0;
    }
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = '\0';
    return 1;
}

static int contains(const char *haystack, const char *needle) {
    return haystack != NULL && strstr(haystack, needle) != NULL;
}

/* True when `msg` contains any 12-character run of `secret`. */
static int quotes_secret(const char *msg, const char *secret) {
    size_t len = strlen(secret);
    for (size_t off = 0; msg != NULL && off + 12 <= len; off++) {
        char run[13];
        memcpy(run, secret + off, 12);
        run[12] = '\0';
        if (strstr(msg, run) != NULL) {
            return 1;
        }
    }
    return 0;
}

/* A lower-case hyphenated UUID v4 (RFC 9562 variant). */
static int is_uuid_v4(const char *s) {
    if (strlen(s) != 36) {
        return 0;
    }
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-') {
                return 0;
            }
        } else if (!isdigit((unsigned char)s[i]) && !(s[i] >= 'a' && s[i] <= 'f')) {
            return 0;
        }
    }
    return s[14] == '4' && strchr("89ab", s[19]) != NULL;
}

/* Standard padded base64 of 64 bytes: 86 alphabet characters and "==". */
static int is_b64_sig(const char *s) {
    if (strlen(s) != 88 || s[86] != '=' || s[87] != '=') {
        return 0;
    }
    for (int i = 0; i < 86; i++) {
        if (!isalnum((unsigned char)s[i]) && s[i] != '+' && s[i] != '/') {
            return 0;
        }
    }
    return 1;
}

static int is_decimal(const char *s) {
    if (s[0] == '\0') {
        return 0;
    }
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s)) {
            return 0;
        }
    }
    return 1;
}

static int is_base58(const char *s) {
    static const char alphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    if (s[0] == '\0') {
        return 0;
    }
    for (; *s; s++) {
        if (strchr(alphabet, *s) == NULL) {
            return 0;
        }
    }
    return 1;
}

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

/* The keys and known-answer vectors are in fixtures.h (shared with the other C/C++ tests). */

/* ------------------------------------------------------------------------------------ */
/* Tests                                                                                 */
/* ------------------------------------------------------------------------------------ */

static void test_version(void) {
    const char *v = perps_version();
    char expected[64];
    snprintf(expected, sizeof expected, "%d.%d.%d", PERPS_VERSION_MAJOR, PERPS_VERSION_MINOR, PERPS_VERSION_PATCH);
    CHECK(v != NULL);
    CHECK(v != NULL && strcmp(v, expected) == 0);
    CHECK(perps_version() == v); /* static: the same pointer every time */
}

static void test_error_accessors_and_frees_on_null(void) {
    CHECK(perps_error_code(NULL) == PERPS_INVALID_ARGUMENT);
    CHECK(perps_error_message(NULL) != NULL && perps_error_message(NULL)[0] != '\0');
    CHECK(perps_error_http_status(NULL) == 0);
    CHECK(perps_error_body(NULL) == NULL);
    CHECK(!perps_error_may_have_reached_venue(NULL));
    perps_error_free(NULL);
    perps_string_free(NULL);
    perps_session_free(NULL);
    CHECK(1); /* reached: the three _free(NULL) calls returned */

    /* A real error object: every accessor, then one free. */
    perps_error *err = NULL;
    CHECK(perps_sign_body(NULL, "{}", &err) == NULL);
    CHECK(err != NULL);
    CHECK(perps_error_code(err) == PERPS_INVALID_ARGUMENT);
    CHECK(contains(perps_error_message(err), "session"));
    CHECK(perps_error_message(err) == perps_error_message(err)); /* borrowed, stable */
    CHECK(perps_error_http_status(err) == 0);
    CHECK(perps_error_body(err) == NULL);
    CHECK(!perps_error_may_have_reached_venue(err));
    perps_error_free(err);
}

static void test_session_new(void) {
    perps_error *err = NULL;
    perps_session *a = perps_session_new(&err);
    perps_session *b = perps_session_new(NULL); /* err == NULL is fine on success too */
    CHECK(a != NULL && b != NULL);
    CHECK(err == NULL); /* *err is written only on failure */

    char *ida = perps_session_request_id(a, &err);
    char *idb = perps_session_request_id(b, &err);
    CHECK(err == NULL);
    CHECK(ida != NULL && idb != NULL);
    if (ida && idb) {
        CHECK(is_base58(ida) && (strlen(ida) == 43 || strlen(ida) == 44));
        CHECK(strcmp(ida, idb) != 0); /* two fresh keys */
        char *again = perps_session_request_id(a, NULL);
        CHECK(again != NULL && strcmp(again, ida) == 0);
        perps_string_free(again);
    }

    char *info = perps_session_info(a, &err);
    CHECK(err == NULL && info != NULL);
    if (info && ida) {
        char rid[64];
        CHECK(json_string(info, "request_id", rid, sizeof rid) && strcmp(rid, ida) == 0);
        CHECK(contains(info, "\"has_token\":false"));
        CHECK(contains(info, "\"pending_signin\":false"));
        CHECK(contains(info, "\"token_expires_at\":null"));
    }
    perps_string_free(info);

    /* A fresh session has no token. */
    CHECK(perps_session_token(a, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_STATE, "token");
    err = NULL;
    CHECK(perps_session_token(a, NULL) == NULL); /* err == NULL: no crash */

    /* Logging out of a fresh session is harmless; the key stays. */
    CHECK(perps_session_logout(a, &err) == PERPS_OK);
    CHECK(err == NULL);
    char *after = perps_session_request_id(a, NULL);
    CHECK(after != NULL && ida != NULL && strcmp(after, ida) == 0);
    perps_string_free(after);

    perps_string_free(ida);
    perps_string_free(idb);
    perps_session_free(a);
    perps_session_free(b);
}

static void test_session_null_arguments(void) {
    perps_error *err = NULL;
    CHECK(perps_session_request_id(NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "session");
    err = NULL;
    CHECK(perps_session_token(NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "session");
    err = NULL;
    CHECK(perps_session_info(NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "session");
    err = NULL;
    CHECK(perps_session_logout(NULL, &err) == PERPS_INVALID_ARGUMENT);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "session");
    err = NULL;

    /* err == NULL on failure: the return value alone reports it. */
    CHECK(perps_session_request_id(NULL, NULL) == NULL);
    CHECK(perps_session_info(NULL, NULL) == NULL);
    CHECK(perps_session_logout(NULL, NULL) == PERPS_INVALID_ARGUMENT);
}

static void test_session_from_api_key(void) {
    static const char *forms[] = {
        ED_SEED_B58, ED_PAIR_B58, ED_SEED_HEX, ED_SEED_HEX ED_PUB_HEX, "0x" ED_SEED_HEX, ED_JSON_ARRAY,
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        perps_error *err = NULL;
        perps_session *s = perps_session_from_api_key("my-api-token", forms[i], &err);
        CHECK(s != NULL && err == NULL);
        if (s == NULL) {
            fprintf(stderr, "     key form %zu: %s\n", i, perps_error_message(err));
            perps_error_free(err);
            continue;
        }
        char *id = perps_session_request_id(s, &err);
        CHECK(id != NULL && strcmp(id, ED_REQUEST_ID) == 0);
        perps_string_free(id);
        perps_session_free(s);
    }

    perps_error *err = NULL;
    perps_session *s = perps_session_from_api_key("my-api-token", ED_SEED_B58, &err);
    CHECK(s != NULL);
    char *token = perps_session_token(s, &err);
    CHECK(err == NULL && token != NULL && strcmp(token, "my-api-token") == 0);
    perps_string_free(token);

    char *info = perps_session_info(s, &err);
    CHECK(info != NULL && contains(info, "\"has_token\":true"));
    CHECK(!contains(info, "my-api-token")); /* no secrets in info */
    CHECK(!contains(info, ED_SEED_B58));
    perps_string_free(info);

    CHECK(perps_session_logout(s, &err) == PERPS_OK && err == NULL);
    CHECK(perps_session_token(s, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_STATE, NULL);
    err = NULL;
    info = perps_session_info(s, &err);
    CHECK(info != NULL && contains(info, "\"has_token\":false"));
    perps_string_free(info);
    char *id = perps_session_request_id(s, NULL);
    CHECK(id != NULL && strcmp(id, ED_REQUEST_ID) == 0); /* the key survives logout */
    perps_string_free(id);
    perps_session_free(s);
}

static void test_session_from_api_key_failures(void) {
    perps_error *err = NULL;

    CHECK(perps_session_from_api_key(NULL, ED_SEED_B58, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "api_token");
    err = NULL;
    CHECK(perps_session_from_api_key("tok", NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "ed25519_private_key");
    err = NULL;
    CHECK(perps_session_from_api_key(BAD_UTF8, ED_SEED_B58, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_session_from_api_key("tok", BAD_UTF8, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_session_from_api_key("", ED_SEED_B58, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "token");
    err = NULL;
    CHECK(perps_session_from_api_key(NULL, NULL, NULL) == NULL); /* err == NULL: no crash */

    /* A token that cannot travel in a header; the message must not quote it. */
    CHECK(perps_session_from_api_key("tok SECRET-TOKEN-TEXT", ED_SEED_B58, &err) == NULL);
    CHECK(err != NULL && !contains(perps_error_message(err), "SECRET-TOKEN-TEXT"));
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, NULL);
    err = NULL;

    /* Bad keys: PERPS_INVALID_KEY, and the message never quotes the key text. */
    static const char *bad_keys[] = {
        "",                                   /* empty */
        "3yZe7d",                             /* valid base58, wrong length (4 bytes) */
        "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb2", /* valid base58, 33 bytes */
        "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7fzz", /* bad hex */
        "0x9d61b19deffd5a60ba844af492ec2cc4",  /* 0x hex, 16 bytes */
        "0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl",   /* not base58 (0, O, I, l) */
        ED_BAD_PAIR_B58,                      /* keypair whose public half does not match */
        ED_SEED_HEX "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511b", /* same, hex */
        "[1,2,3]",                            /* JSON array, 3 bytes */
        "[1,2,300]",                          /* JSON array, not bytes */
    };
    for (size_t i = 0; i < sizeof bad_keys / sizeof bad_keys[0]; i++) {
        err = NULL;
        CHECK(perps_session_from_api_key("tok-SECRET-TOKEN-xyz", bad_keys[i], &err) == NULL);
        CHECK(err == NULL || !contains(perps_error_message(err), "SECRET-TOKEN"));
        const char *msg = perps_error_message(err);
        /* Neither the whole key nor any 12-character run of it is quoted. */
        int quoted = (strlen(bad_keys[i]) >= 6 && contains(msg, bad_keys[i])) || quotes_secret(msg, bad_keys[i]);
        CHECK(!quoted);
        if (quoted) {
            fprintf(stderr, "     bad key %zu quoted in message: %s\n", i, msg);
        }
        EXPECT_ERROR(err, PERPS_INVALID_KEY, NULL);
        if (perps_session_from_api_key("tok", bad_keys[i], NULL) != NULL) { /* err == NULL */
            CHECK(0);
        }
    }
    err = NULL;
    CHECK(perps_session_from_api_key("tok", ED_BAD_PAIR_B58, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_KEY, "match");
}

static void test_sign_body(void) {
    perps_error *err = NULL;
    perps_session *s = perps_session_new(&err);
    CHECK(s != NULL);

    char *json = perps_sign_body(s, KAT_BODY, &err);
    CHECK(err == NULL && json != NULL);
    char version[16], id[64], ts[32], sig[128];
    CHECK(json_string(json, "x-request-sign-version", version, sizeof version) && strcmp(version, "v1") == 0);
    CHECK(json_string(json, "x-request-id", id, sizeof id) && is_uuid_v4(id));
    CHECK(json_string(json, "x-request-timestamp", ts, sizeof ts) && is_decimal(ts));
    CHECK(json_string(json, "x-request-signature", sig, sizeof sig) && is_b64_sig(sig));
    CHECK(json != NULL && json[0] == '{' && json[strlen(json) - 1] == '}');
    /* The timestamp is the local clock in milliseconds (allow five minutes). */
    long long now_ms = (long long)time(NULL) * 1000;
    long long got_ms = strtoll(ts, NULL, 10);
    CHECK(got_ms > now_ms - 300000 && got_ms < now_ms + 300000);

    /* The signature verifies (OpenSSL) over v1,{id},{ts},{body} under the session's key. */
    char *request_key = perps_session_request_id(s, &err);
    CHECK(request_key != NULL &&
          body_signature_verifies(request_key, id, ts, KAT_BODY, strlen(KAT_BODY), sig));
    /* Re-signing with that id and time: RFC 8032's deterministic signature (the same every
     * time, and verifying too), not the fresh one, whose nonce was hedged with fresh randomness. */
    char *again = perps_sign_body_at(s, KAT_BODY, id, (int64_t)got_ms, &err);
    char *third = perps_sign_body_at(s, KAT_BODY, id, (int64_t)got_ms, &err);
    char sig2[128], sig3[128];
    CHECK(again != NULL && json_string(again, "x-request-signature", sig2, sizeof sig2) && strcmp(sig, sig2) != 0);
    CHECK(third != NULL && json_string(third, "x-request-signature", sig3, sizeof sig3) && strcmp(sig2, sig3) == 0);
    CHECK(request_key != NULL && body_signature_verifies(request_key, id, ts, KAT_BODY, strlen(KAT_BODY), sig2));
    perps_string_free(third);
    perps_string_free(again);
    perps_string_free(request_key);

    /* A second call gets a new request id. */
    char *other = perps_sign_body(s, KAT_BODY, &err);
    char id2[64];
    CHECK(other != NULL && json_string(other, "x-request-id", id2, sizeof id2) && strcmp(id, id2) != 0);
    perps_string_free(other);
    perps_string_free(json);

    /* Empty body is a valid body. */
    json = perps_sign_body(s, "", &err);
    CHECK(json != NULL && err == NULL);
    perps_string_free(json);

    /* Failures. */
    err = NULL;
    CHECK(perps_sign_body(NULL, KAT_BODY, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "session");
    err = NULL;
    CHECK(perps_sign_body(s, NULL, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "body");
    err = NULL;
    CHECK(perps_sign_body(s, BAD_UTF8, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_sign_body(s, NULL, NULL) == NULL);
    CHECK(perps_sign_body(NULL, NULL, NULL) == NULL);

    perps_session_free(s);
}

static void test_sign_body_at(void) {
    perps_error *err = NULL;
    perps_session *s = perps_session_from_api_key("tok", ED_SEED_HEX, &err);
    CHECK(s != NULL);

    /* Known answer (independent Ed25519) and full shape. */
    char *a = perps_sign_body_at(s, KAT_BODY, KAT_ID, KAT_TS, &err);
    CHECK(err == NULL && a != NULL);
    char v[16], id[64], ts[32], sig[128];
    CHECK(json_string(a, "x-request-sign-version", v, sizeof v) && strcmp(v, "v1") == 0);
    CHECK(json_string(a, "x-request-id", id, sizeof id) && strcmp(id, KAT_ID) == 0);
    CHECK(json_string(a, "x-request-timestamp", ts, sizeof ts) && strcmp(ts, "1700000000123") == 0);
    CHECK(json_string(a, "x-request-signature", sig, sizeof sig) && strcmp(sig, KAT_SIG) == 0);

    /* Deterministic for a fixed id and time. */
    char *b = perps_sign_body_at(s, KAT_BODY, KAT_ID, KAT_TS, &err);
    CHECK(a != NULL && b != NULL && strcmp(a, b) == 0);
    perps_string_free(b);

    /* One byte of body changed: another signature, same id and time. */
    char changed[sizeof KAT_BODY];
    memcpy(changed, KAT_BODY, sizeof KAT_BODY);
    changed[sizeof KAT_BODY - 3] = 'x'; /* "buy" -> "bux" */
    char *c = perps_sign_body_at(s, changed, KAT_ID, KAT_TS, &err);
    char sig_c[128], ts_c[32];
    CHECK(c != NULL && json_string(c, "x-request-signature", sig_c, sizeof sig_c) && is_b64_sig(sig_c) &&
          strcmp(sig_c, KAT_SIG) != 0);
    CHECK(c != NULL && json_string(c, "x-request-timestamp", ts_c, sizeof ts_c) && strcmp(ts_c, ts) == 0);
    perps_string_free(c);

    /* A different timestamp or id also changes the signature. */
    c = perps_sign_body_at(s, KAT_BODY, KAT_ID, KAT_TS + 1, &err);
    CHECK(c != NULL && json_string(c, "x-request-signature", sig_c, sizeof sig_c) && strcmp(sig_c, KAT_SIG) != 0);
    perps_string_free(c);
    c = perps_sign_body_at(s, KAT_BODY, "123e4567-e89b-42d3-a456-426614174001", KAT_TS, &err);
    CHECK(c != NULL && json_string(c, "x-request-signature", sig_c, sizeof sig_c) && strcmp(sig_c, KAT_SIG) != 0);
    perps_string_free(c);
    perps_string_free(a);

    /* Empty body known answer. */
    c = perps_sign_body_at(s, "", KAT_ID, KAT_TS, &err);
    CHECK(c != NULL && json_string(c, "x-request-signature", sig_c, sizeof sig_c) &&
          strcmp(sig_c, KAT_SIG_EMPTY_BODY) == 0);
    perps_string_free(c);

    /* Boundary timestamps: 0 and INT64_MAX (19 digits). */
    c = perps_sign_body_at(s, KAT_BODY, KAT_ID, 0, &err);
    CHECK(c != NULL && json_string(c, "x-request-timestamp", ts_c, sizeof ts_c) && strcmp(ts_c, "0") == 0);
    perps_string_free(c);
    c = perps_sign_body_at(s, KAT_BODY, KAT_ID, INT64_MAX, &err);
    CHECK(c != NULL && json_string(c, "x-request-timestamp", ts_c, sizeof ts_c) &&
          strcmp(ts_c, "9223372036854775807") == 0);
    perps_string_free(c);

    /* The id is used exactly as given (upper case stays upper case). */
    static const char upper_id[] = "123E4567-E89B-42D3-A456-426614174000";
    c = perps_sign_body_at(s, KAT_BODY, upper_id, KAT_TS, &err);
    CHECK(c != NULL && json_string(c, "x-request-id", id, sizeof id) && strcmp(id, upper_id) == 0);
    perps_string_free(c);
    CHECK(err == NULL);

    /* Failures. */
    err = NULL;
    CHECK(perps_sign_body_at(NULL, KAT_BODY, KAT_ID, KAT_TS, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "session");
    err = NULL;
    CHECK(perps_sign_body_at(s, NULL, KAT_ID, KAT_TS, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "body");
    err = NULL;
    CHECK(perps_sign_body_at(s, KAT_BODY, NULL, KAT_TS, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "request_id");
    err = NULL;
    CHECK(perps_sign_body_at(s, BAD_UTF8, KAT_ID, KAT_TS, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "UTF-8");
    err = NULL;
    CHECK(perps_sign_body_at(s, KAT_BODY, BAD_UTF8, KAT_TS, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "request_id");
    static const char *bad_ids[] = {
        "",
        "not-a-uuid",
        "123e4567e89b42d3a456426614174000",       /* simple form, no hyphens */
        "{123e4567-e89b-42d3-a456-426614174000}", /* braced */
        "123e4567-e89b-42d3-a456-42661417400g",   /* non-hex */
        "123e4567-e89b-42d3-a456-4266141740000",  /* 37 characters */
        " 123e4567-e89b-42d3-a456-426614174000",  /* leading space */
    };
    for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++) {
        err = NULL;
        CHECK(perps_sign_body_at(s, KAT_BODY, bad_ids[i], KAT_TS, &err) == NULL);
        EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "request_id");
    }
    err = NULL;
    CHECK(perps_sign_body_at(s, KAT_BODY, KAT_ID, -1, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "timestamp");
    err = NULL;
    CHECK(perps_sign_body_at(s, KAT_BODY, KAT_ID, INT64_MIN, &err) == NULL);
    EXPECT_ERROR(err, PERPS_INVALID_ARGUMENT, "timestamp");
    CHECK(perps_sign_body_at(s, KAT_BODY, KAT_ID, -1, NULL) == NULL);
    CHECK(perps_sign_body_at(NULL, NULL, NULL, -1, NULL) == NULL);

    perps_session_free(s);
}

static int field_terminated(const char *field, size_t size, size_t expected_len) {
    const char *nul = memchr(field, '\0', size);
    return nul != NULL && (size_t)(nul - field) == expected_len;
}

static void test_sign_body_into(void) {
    perps_session *s = perps_session_from_api_key("tok", ED_PAIR_B58, NULL);
    CHECK(s != NULL);

    /* The body need not be NUL-terminated: sign the first strlen(KAT_BODY) bytes only. */
    uint8_t buf[sizeof KAT_BODY + 8];
    memcpy(buf, KAT_BODY, sizeof KAT_BODY - 1);
    memset(buf + sizeof KAT_BODY - 1, '#', sizeof buf - (sizeof KAT_BODY - 1)); /* no NUL at all */

    perps_body_signature out;
    memset(&out, 0xAA, sizeof out); /* no stray NULs: every terminator comes from the library */
    CHECK(perps_sign_body_into(s, buf, sizeof KAT_BODY - 1, &out) == PERPS_OK);
    CHECK(field_terminated(out.version, sizeof out.version, 2) && strcmp(out.version, "v1") == 0);
    CHECK(field_terminated(out.request_id, sizeof out.request_id, 36) && is_uuid_v4(out.request_id));
    const char *ts_nul = memchr(out.timestamp, '\0', sizeof out.timestamp);
    CHECK(ts_nul != NULL && is_decimal(out.timestamp));
    CHECK(field_terminated(out.signature, sizeof out.signature, 88) && is_b64_sig(out.signature));

    /* The signature verifies over exactly those bytes (OpenSSL); the deterministic signature of
     * the same bytes, id and time (perps_sign_body_at) is another one: this one was hedged. */
    char *request_key = perps_session_request_id(s, NULL);
    CHECK(request_key != NULL && body_signature_verifies(request_key, out.request_id, out.timestamp, KAT_BODY,
                                                         strlen(KAT_BODY), out.signature));
    CHECK(request_key != NULL && !body_signature_verifies(request_key, out.request_id, out.timestamp, "{}", 2,
                                                          out.signature));
    if (ts_nul != NULL && field_terminated(out.request_id, sizeof out.request_id, 36)) {
        int64_t ts = (int64_t)strtoll(out.timestamp, NULL, 10);
        char *json = perps_sign_body_at(s, KAT_BODY, out.request_id, ts, NULL);
        char sig[128];
        CHECK(json != NULL && json_string(json, "x-request-signature", sig, sizeof sig) &&
              strcmp(sig, out.signature) != 0);
        perps_string_free(json);
    }

    /* An embedded NUL is just another body byte (the length decides). */
    static const uint8_t with_nul[] = {'a', '\0', 'b'};
    perps_body_signature nul_sig;
    CHECK(perps_sign_body_into(s, with_nul, sizeof with_nul, &nul_sig) == PERPS_OK);
    CHECK(is_b64_sig(nul_sig.signature));

    /* Fresh id every call. */
    perps_body_signature second;
    CHECK(perps_sign_body_into(s, buf, sizeof KAT_BODY - 1, &second) == PERPS_OK);
    CHECK(strcmp(second.request_id, out.request_id) != 0);

    /* NULL body with length 0 is the empty body. */
    perps_body_signature empty;
    CHECK(perps_sign_body_into(s, NULL, 0, &empty) == PERPS_OK);
    CHECK(request_key != NULL &&
          body_signature_verifies(request_key, empty.request_id, empty.timestamp, "", 0, empty.signature));
    perps_string_free(request_key);

    /* Failures leave `out` untouched. */
    perps_body_signature pattern, target;
    memset(&pattern, 0x5A, sizeof pattern);
    memcpy(&target, &pattern, sizeof target);
    CHECK(perps_sign_body_into(NULL, buf, 4, &target) == PERPS_INVALID_ARGUMENT);
    CHECK(memcmp(&target, &pattern, sizeof target) == 0);
    CHECK(perps_sign_body_into(s, NULL, 5, &target) == PERPS_INVALID_ARGUMENT);
    CHECK(memcmp(&target, &pattern, sizeof target) == 0);
    CHECK(perps_sign_body_into(s, (const uint8_t *)BAD_UTF8, 2, &target) == PERPS_INVALID_ARGUMENT);
    CHECK(memcmp(&target, &pattern, sizeof target) == 0);
    static const uint8_t truncated_utf8[] = {'{', '"', 'a', '"', ':', '"', 0xC3}; /* cut mid-character */
    CHECK(perps_sign_body_into(s, truncated_utf8, sizeof truncated_utf8, &target) == PERPS_INVALID_ARGUMENT);
    CHECK(memcmp(&target, &pattern, sizeof target) == 0);
    CHECK(perps_sign_body_into(s, buf, SIZE_MAX, &target) == PERPS_INVALID_ARGUMENT); /* impossible length */
    CHECK(memcmp(&target, &pattern, sizeof target) == 0);
    CHECK(perps_sign_body_into(s, buf, 4, NULL) == PERPS_INVALID_ARGUMENT);
    CHECK(perps_sign_body_into(NULL, NULL, 0, NULL) == PERPS_INVALID_ARGUMENT);

    perps_session_free(s);
}

/* perps_string_free frees and wipes the whole string whatever the caller wrote into it: it
 * does not measure the string again (with strlen, a terminator overwritten here made it read
 * past the end of the allocation: ASan and valgrind report that; a NUL written into the middle
 * left the rest unwiped). */
static void test_string_free_after_the_caller_wrote_into_it(void) {
    perps_error *err = NULL;
    char *addr = perps_wallet_address("solana", ED_SEED_B58, &err);
    CHECK(err == NULL && addr != NULL);
    size_t len = strlen(addr);
    memset(addr, 'x', len + 1); /* the terminator too */
    perps_string_free(addr);

    char *json = perps_sign_body(NULL, "{}", &err);
    CHECK(json == NULL && err != NULL);
    perps_error_free(err);
    err = NULL;
    perps_session *s = perps_session_new(&err);
    CHECK(s != NULL);
    json = perps_sign_body(s, "{}", &err);
    CHECK(err == NULL && json != NULL);
    json[3] = '\0'; /* shortened */
    perps_string_free(json);
    perps_session_free(s);
}

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
    test_version();
    test_error_accessors_and_frees_on_null();
    test_session_new();
    test_session_null_arguments();
    test_session_from_api_key();
    test_session_from_api_key_failures();
    test_sign_body();
    test_sign_body_at();
    test_sign_body_into();
    test_wallet_address();
    test_string_free_after_the_caller_wrote_into_it();
    test_wallet_sign();
    test_swapped_arguments_do_not_leak_the_key();
    test_wallet_wrap_solana_signature();
    test_challenge_verify();
    test_order_serialize();

    return check_summary();
}
