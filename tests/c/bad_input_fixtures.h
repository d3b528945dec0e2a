/*
 * tests/c/bad_input_fixtures.h: the named fixtures of test_bad_input.c (its only includer):
 * the keys, tokens and 10 MiB inputs a case names with @name, and the client and sessions
 * they run against (a loopback port nothing listens on, so nothing can be sent). Split from
 * test_bad_input.c to keep the runner readable; the functions are plain `static`, each used.
 */

#ifndef PERPS_TESTS_C_BAD_INPUT_FIXTURES_H
#define PERPS_TESTS_C_BAD_INPUT_FIXTURES_H

#include "perps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "loopback.h"

#define MIB10 ((size_t)10 << 20)

/* ------------------------------------------------------------------------------------ */
/* Fixtures                                                                             */
/* ------------------------------------------------------------------------------------ */

static const char API_TOKEN[] = "api-tok-7Hq2Lm9Xw4Rk8Vn3";
static const char LOGGED_OUT_TOKEN[] = "api-tok-gone-5Tz1Qp6Yc0Wd";

struct fixture {
    const char *name;
    char *bytes; /* malloc'd, NUL-terminated (the bytes fixtures too, one past their length) */
    size_t len;
    int secret;
};

static struct fixture fixtures[16];
static size_t n_fixtures;
static perps_client *fx_client;
static perps_session *fx_fresh;
static perps_session *fx_api;
static perps_session *fx_logged_out;

static void add_fixture(const char *name, const void *bytes, size_t len, int secret) {
    char *copy = malloc(len + 1);
    if (copy == NULL) {
        return;
    }
    memcpy(copy, bytes, len);
    copy[len] = '\0';
    fixtures[n_fixtures++] = (struct fixture){name, copy, len, secret};
}

/* A fixture of `len` bytes: `head`, then `fill` repeated, then `tail`. */
static void add_built_fixture(const char *name, const char *head, char fill, size_t len_fill, const char *tail,
                              int secret) {
    size_t h = strlen(head), t = strlen(tail);
    char *buf = malloc(h + len_fill + t + 1);
    if (buf == NULL) {
        return;
    }
    memcpy(buf, head, h);
    memset(buf + h, fill, len_fill);
    memcpy(buf + h + len_fill, tail, t + 1);
    fixtures[n_fixtures++] = (struct fixture){name, buf, h + len_fill + t, secret};
}

static const struct fixture *fixture_named(const char *name) {
    for (size_t i = 0; i < n_fixtures; i++) {
        if (strcmp(fixtures[i].name, name) == 0) {
            return &fixtures[i];
        }
    }
    return NULL;
}

static int setup_fixtures(void) {
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", closed_port());
    fx_client = perps_client_new(url, url, NULL, NULL);
    fx_fresh = perps_session_new(NULL);
    fx_api = perps_session_from_api_key(API_TOKEN, ED_SEED_B58, NULL);
    fx_logged_out = perps_session_from_api_key(LOGGED_OUT_TOKEN, ED_SEED_B58, NULL);
    if (fx_client == NULL || fx_fresh == NULL || fx_api == NULL || fx_logged_out == NULL ||
        perps_session_logout(fx_logged_out, NULL) != PERPS_OK) {
        return 0;
    }
    add_fixture("order", ORDER, strlen(ORDER), 0);
    add_fixture("evm_key", EVM_KEY, strlen(EVM_KEY), 1);
    add_fixture("sol_key", ED_PAIR_B58, strlen(ED_PAIR_B58), 1);
    add_fixture("evm_payload", EVM_PAYLOAD, strlen(EVM_PAYLOAD), 0);
    add_fixture("sol_payload", SOL_PAYLOAD, strlen(SOL_PAYLOAD), 0);
    add_fixture("sol_address", ED_REQUEST_ID, strlen(ED_REQUEST_ID), 0);
    add_fixture("sig64", SOL_RAW_SIG, sizeof SOL_RAW_SIG, 0);
    static const uint8_t zero64[64] = {0};
    add_fixture("zero64", zero64, sizeof zero64, 0);
    add_fixture("certs", CERTS, strlen(CERTS), 0);
    add_built_fixture("big_ascii", "", 'a', MIB10, "", 0);
    add_built_fixture("big_bad_utf8", "", 'a', MIB10 - 1, "\xff", 0);
    char head[256];
    snprintf(head, sizeof head, "%.*s,\"cl_ord_id\":\"", (int)strlen(ORDER) - 1, ORDER);
    add_built_fixture("big_order", head, 'x', MIB10, "\"}", 0);
    add_built_fixture("big_deep", "{\"a\":", '[', MIB10, "", 0);
    add_built_fixture("big_json_string", "\"", 'a', MIB10, "\"", 0);
    add_built_fixture("big_key", "", 'a', (size_t)64 << 10, "", 1);
    return n_fixtures == 15;
}

static void free_fixtures(void) {
    for (size_t i = 0; i < n_fixtures; i++) {
        free(fixtures[i].bytes);
    }
    perps_client_free(fx_client);
    perps_session_free(fx_fresh);
    perps_session_free(fx_api);
    perps_session_free(fx_logged_out);
}

static perps_session *session_fixture(const char *name) {
    if (strcmp(name, "fresh") == 0) return fx_fresh;
    if (strcmp(name, "api") == 0) return fx_api;
    if (strcmp(name, "logged_out") == 0) return fx_logged_out;
    return NULL;
}

#endif
