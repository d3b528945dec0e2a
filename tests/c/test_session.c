/*
 * tests/c/test_session.c: sessions from keys and API credentials, offline, exercised from C
 * (split from test_core.c; the same rules hold: every pointer argument NULL in turn, invalid
 * UTF-8, err == NULL, bad keys; everything freed, clean under ASan/LSan and valgrind).
 * Keys and known answers are in fixtures.h.
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

/* ------------------------------------------------------------------------------------ */
/* Tests                                                                                 */
/* ------------------------------------------------------------------------------------ */

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

int main(void) {
    test_session_new();
    test_session_null_arguments();
    test_session_from_api_key();
    test_session_from_api_key_failures();

    return check_summary();
}
