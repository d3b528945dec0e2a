/*
 * tests/c/offline_checks.h: checks shared by the offline C tests (test_core.c,
 * test_session.c, test_wallet.c), and json_string to scripted_server.h (test_trading.c).
 * Include once per program, after check.h; `static inline` as check.h, for the same reason.
 */

#ifndef PERPS_TESTS_C_OFFLINE_CHECKS_H
#define PERPS_TESTS_C_OFFLINE_CHECKS_H

#include "check.h"

/* Check that a call failed with `code`, a non-empty message containing `needle` (when not
 * NULL), and none of the HTTP details an offline failure cannot have; then free `e`. */
static inline void expect_error_at(perps_error *e, perps_code code, const char *needle, int line) {
    if (!check_error_at(e, code, needle, line)) {
        return;
    }
    check_at(perps_error_http_status(e) == 0, "offline error has no HTTP status", line);
    check_at(perps_error_body(e) == NULL, "offline error has no venue body", line);
    check_at(!perps_error_may_have_reached_venue(e), "offline error never reached the venue", line);
    perps_error_free(e);
}

#define EXPECT_ERROR(e, code, needle) expect_error_at((e), (code), (needle), __LINE__)

static inline int contains(const char *haystack, const char *needle) {
    return haystack != NULL && strstr(haystack, needle) != NULL;
}

/* True when `msg` contains any 12-character run of `secret`. */
static inline int quotes_secret(const char *msg, const char *secret) {
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

/* The value of "key":"value" in a flat JSON object without escapes; 0 when absent. */
static inline int json_string(const char *json, const char *key, char *out, size_t out_size) {
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

#endif
