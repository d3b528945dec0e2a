/*
 * tests/c/check.h: the tiny test harness shared by tests/c/test_*.c.
 *
 * Each test program is one translation unit that includes this header once, so the counters
 * and functions below are private to that program. The functions are `static inline`: a
 * program that leaves one unused gets no -Wunused-function warning.
 *
 *   CHECK(cond)                           one check at the current line
 *   check_at(ok, expr, line)              one check reported at `line`
 *   check_error_at(e, code, needle, line) the checks every expected error shares
 *   return check_summary();               the closing "N passed, M failed" line and exit status
 *
 * A failed check prints "FAIL file:line: expr", where `file` is the test program's source
 * (check_at and check_error_at are macros, so __FILE__ is the including file's name).
 * tests/c/run.sh requires the last "N passed, M failed" line to read "N passed, 0 failed".
 */

#ifndef PERPS_TESTS_C_CHECK_H
#define PERPS_TESTS_C_CHECK_H

#include "perps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed;
static int failed;
/* Where failed checks are reported; NULL means stderr. (test_bad_input points it at the real
 * stderr while fds 1 and 2 are redirected.) */
static FILE *report;

/* Count one check; report it when it failed. */
static inline void check_in(const char *file, int line, int ok, const char *expr) {
    if (ok) {
        passed++;
    } else {
        failed++;
        fprintf(report ? report : stderr, "FAIL %s:%d: %s\n", file, line, expr);
    }
}

#define check_at(ok, expr, line) check_in(__FILE__, (line), (ok), (expr))

#define CHECK(cond) check_at((cond) ? 1 : 0, #cond, __LINE__)

/* The checks every expected error shares: `e` is an error object with `code` and a non-empty
 * message that contains `needle` (unless NULL). PERPS_TEST_VERBOSE=1 prints the message.
 * Returns 1 when `e` is an error object (the caller checks the rest and frees it), 0 when it
 * is NULL (nothing more to check). */
static inline int check_error_in(const char *file, int line, const perps_error *e, perps_code code,
                                 const char *needle) {
    check_in(file, line, e != NULL, "an error object was returned");
    if (e == NULL) {
        return 0;
    }
    const char *msg = perps_error_message(e);
    if (getenv("PERPS_TEST_VERBOSE") != NULL) {
        printf("  line %d: code %d: %s\n", line, (int)perps_error_code(e), msg);
    }
    check_in(file, line, perps_error_code(e) == code, "perps_error_code(e) == expected code");
    if (perps_error_code(e) != code) {
        fprintf(stderr, "     got code %d (%s), expected %d\n", (int)perps_error_code(e), msg ? msg : "(null)",
                (int)code);
    }
    check_in(file, line, msg != NULL && msg[0] != '\0', "error message is non-empty");
    if (needle != NULL) {
        int found = msg != NULL && strstr(msg, needle) != NULL;
        check_in(file, line, found, "error message names the problem");
        if (!found) {
            fprintf(stderr, "     message \"%s\" does not contain \"%s\"\n", msg ? msg : "(null)", needle);
        }
    }
    return 1;
}

#define check_error_at(e, code, needle, line) check_error_in(__FILE__, (line), (e), (code), (needle))

/* Print the closing "N passed, M failed" line; the program's exit status. */
static inline int check_summary(void) {
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

#endif /* PERPS_TESTS_C_CHECK_H */
