/*
 * tests/c/test_core.c: the offline part of the libperps C ABI, exercised from C: the version,
 * error objects, body signatures and string ownership. Sessions are in test_session.c, the
 * wallet, challenge and order calls in test_wallet.c; the three together call every function
 * of include/perps.h that needs no network.
 *
 * Each call is tried on its happy path (output shapes and independent known-answer vectors)
 * and on its failure paths (NULL for every pointer argument, invalid UTF-8, err == NULL, bad
 * keys, bad payloads, bad orders). Every string, error and session is freed, so the run is
 * clean under AddressSanitizer/LeakSanitizer and valgrind (see tests/c/run.sh).
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
#include "offline_checks.h"

/* ------------------------------------------------------------------------------------ */
/* The test harness (its shared part is tests/c/check.h)                                */
/* ------------------------------------------------------------------------------------ */

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

int main(void) {
    test_version();
    test_error_accessors_and_frees_on_null();
    test_sign_body();
    test_sign_body_at();
    test_sign_body_into();
    test_string_free_after_the_caller_wrote_into_it();

    return check_summary();
}
