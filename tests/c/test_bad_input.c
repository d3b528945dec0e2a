/*
 * tests/c/test_bad_input.c: bad input through the libperps C ABI, table-driven.
 *
 * The table is tests/bad_input/cases.txt (its header documents the format and the fixtures);
 * tests/bad_input.rs runs the very same file from Rust. Each case calls one exported
 * function with NULLs, empty strings, invalid UTF-8, 10 MiB inputs, malformed or wrongly
 * typed JSON, keys wrong in length / alphabet / curve, unknown chains, out-of-range
 * expires_seconds, or a session in the wrong state, and asserts:
 *   - the exact perps_code (and the return value: NULL or that code);
 *   - a non-empty message of at most 512 bytes containing the case's fragment;
 *   - no run of 8 bytes of any secret the case handed over in the message;
 *   - no HTTP status, no body, may_have_reached_venue false (nothing was sent);
 *   - out-parameters untouched; the same failure again with err == NULL.
 * While the table runs, the process's stdout and stderr are redirected to a file, which must
 * stay empty: a failing call prints nothing (no logging, no panic message).
 * tests/c/run.sh runs this program under ASan+UBSan (static library) and valgrind (shared
 * library): every string, error, client and session is freed, so both report zero leaks.
 *
 * The table's parser is in bad_input_table.h, its named fixtures in bad_input_fixtures.h, the
 * call of each exported function with a case's arguments in bad_input_calls.h.
 *
 * Build: cc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude tests/c/test_bad_input.c …
 * Table: found beside this source (../bad_input/cases.txt, from __FILE__) or at
 *        $PERPS_BAD_INPUT_CASES. PERPS_TEST_VERBOSE=1 prints every case's message;
 *        PERPS_TEST_NO_CAPTURE=1 leaves stdout/stderr alone (for debugging);
 *        PERPS_TEST_SELFTEST_NOISE=1 writes to stderr inside the capture (must then fail).
 */

#define _POSIX_C_SOURCE 200809L

#include "perps.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "bad_input_table.h"
#include "bad_input_fixtures.h"
#include "bad_input_calls.h"

/* ------------------------------------------------------------------------------------ */
/* Harness                                                                              */
/* ------------------------------------------------------------------------------------ */

#define MAX_MESSAGE_LEN 512
#define SECRET_WINDOW 8
#define SENTINEL 0x5a

/* Problems found in the current case, printed together with its label. */
static char problems[4096];
static size_t problems_len;

static void problem(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (problems_len < sizeof problems - 1) {
        int n = vsnprintf(problems + problems_len, sizeof problems - problems_len, fmt, ap);
        if (n > 0) {
            problems_len += (size_t)n;
            if (problems_len >= sizeof problems) {
                problems_len = sizeof problems - 1;
            }
        }
    }
    if (problems_len < sizeof problems - 2) {
        problems[problems_len++] = '\n';
        problems[problems_len] = '\0';
    }
    va_end(ap);
}

/* ------------------------------------------------------------------------------------ */
/* Secrets                                                                               */
/* ------------------------------------------------------------------------------------ */

/* Does any run of SECRET_WINDOW bytes of `secret` (or all of it, when shorter but at least
 * 4 bytes) appear in `text`? Searches text's windows in the secret. */
static int leaks(const char *text, const char *secret, size_t secret_len) {
    if (secret_len < 4) {
        return 0;
    }
    size_t w = secret_len < SECRET_WINDOW ? secret_len : SECRET_WINDOW;
    size_t text_len = strlen(text);
    for (size_t i = 0; i + w <= text_len; i++) {
        for (size_t j = 0; j + w <= secret_len; j++) {
            if (text[i] == secret[j] && memcmp(text + i, secret + j, w) == 0) {
                return 1;
            }
        }
    }
    return 0;
}

static void check_secrets(const struct tcase *c, const char *kinds, const char *msg) {
    for (int i = 0; i < c->nargs; i++) {
        const struct arg *a = &c->args[i];
        const char *bytes = NULL;
        size_t len = 0;
        if (a->kind == ARG_STR && (a->secret || kinds[i] == 'k')) {
            bytes = a->bytes;
            len = a->len;
        } else if (a->kind == ARG_FIX) {
            const struct fixture *f = fixture_named(a->word);
            if (f != NULL && (f->secret || kinds[i] == 'k')) {
                bytes = f->bytes;
                len = f->len;
            } else if (strcmp(a->word, "api") == 0 || strcmp(a->word, "logged_out") == 0) {
                const char *token = a->word[0] == 'a' ? API_TOKEN : LOGGED_OUT_TOKEN;
                if (leaks(msg, token, strlen(token))) {
                    problem("the message quotes the session's API token");
                }
                bytes = ED_SEED_B58;
                len = strlen(ED_SEED_B58);
            }
        }
        if (bytes != NULL && leaks(msg, bytes, len)) {
            problem("the message quotes a secret given as argument %d", i + 1);
        }
    }
}

/* ------------------------------------------------------------------------------------ */
/* Running one case                                                                     */
/* ------------------------------------------------------------------------------------ */

/* The accessors and frees that take no err: their documented answers for NULL. */
static void run_accessor(const struct tcase *c) {
    if (strcmp(c->fn, "error_message") == 0) {
        const char *m = perps_error_message(NULL);
        if (m == NULL || c->fragment == NULL || strstr(m, c->fragment) == NULL) {
            problem("perps_error_message(NULL) is \"%s\"", m ? m : "(null)");
        }
    } else if (strcmp(c->fn, "error_http_status") == 0) {
        if (perps_error_http_status(NULL) != 0) problem("perps_error_http_status(NULL) != 0");
    } else if (strcmp(c->fn, "error_body") == 0) {
        if (perps_error_body(NULL) != NULL) problem("perps_error_body(NULL) != NULL");
    } else if (strcmp(c->fn, "error_may_have_reached_venue") == 0) {
        if (perps_error_may_have_reached_venue(NULL)) problem("perps_error_may_have_reached_venue(NULL)");
    } else if (strcmp(c->fn, "error_cl_ord_id") == 0) {
        if (perps_error_cl_ord_id(NULL) != NULL) problem("perps_error_cl_ord_id(NULL) != NULL");
    } else if (strcmp(c->fn, "error_request_id") == 0) {
        if (perps_error_request_id(NULL) != NULL) problem("perps_error_request_id(NULL) != NULL");
    } else if (strcmp(c->fn, "error_stream_request_id") == 0) {
        if (perps_error_stream_request_id(NULL) != NULL) problem("perps_error_stream_request_id(NULL) != NULL");
    } else if (strcmp(c->fn, "error_retry_after_ms") == 0) {
        if (perps_error_retry_after_ms(NULL) != -1) problem("perps_error_retry_after_ms(NULL) != -1");
    } else if (strcmp(c->fn, "version") == 0) {
        const char *v = perps_version();
        if (v == NULL || c->fragment == NULL || strstr(v, c->fragment) == NULL) problem("perps_version()");
    }
    if (c->expect != PERPS_OK) {
        problem("an accessor case must expect OK");
    }
}

static void run_case(const struct tcase *c) {
    const char *kinds = signature_of(c->fn);
    if (strcmp(c->fn, "error_message") == 0 || strcmp(c->fn, "error_http_status") == 0 ||
        strcmp(c->fn, "error_body") == 0 || strcmp(c->fn, "error_may_have_reached_venue") == 0 ||
        strcmp(c->fn, "error_cl_ord_id") == 0 || strcmp(c->fn, "error_request_id") == 0 ||
        strcmp(c->fn, "error_stream_request_id") == 0 || strcmp(c->fn, "error_retry_after_ms") == 0 || strcmp(c->fn, "version") == 0) {
        run_accessor(c);
        return;
    }

    struct resolved r;
    memset(&r, 0, sizeof r);
    perps_body_signature out_sig;
    int64_t out_i64;
    memset(&out_sig, SENTINEL, sizeof out_sig);
    memset(&out_i64, SENTINEL, sizeof out_i64);
    int uses_out = 0;
    size_t last_len = 0;
    for (int i = 0; i < c->nargs; i++) {
        const struct arg *a = &c->args[i];
        char k = kinds[i];
        if (a->kind == ARG_NULL) {
            continue;
        }
        /* A client fixture where a session goes, or a session where a client goes: a handle
         * of the wrong kind, which the library must refuse by its tag. */
        if (a->kind == ARG_FIX && (k == 'c' || k == 's') && strcmp(a->word, "client") == 0) {
            r.ptr[i] = fx_client;
        } else if (a->kind == ARG_FIX && (k == 'c' || k == 's') && session_fixture(a->word) != NULL) {
            r.ptr[i] = session_fixture(a->word);
        } else if (a->kind == ARG_FIX && k == 'o' && strcmp(a->word, "out") == 0) {
            uses_out = 1;
            r.ptr[i] = strcmp(c->fn, "sign_body_into") == 0 ? (const void *)&out_sig : (const void *)&out_i64;
        } else if (a->kind == ARG_FIX && k == 'n' && strcmp(a->word, "len") == 0) {
            r.size[i] = last_len;
        } else if (a->kind == ARG_FIX && (k == 'x' || k == 'k' || k == 'b') && fixture_named(a->word) != NULL) {
            r.ptr[i] = fixture_named(a->word)->bytes;
            last_len = fixture_named(a->word)->len;
        } else if (a->kind == ARG_STR && (k == 'x' || k == 'k' || k == 'b')) {
            r.ptr[i] = a->bytes;
            last_len = a->len;
        } else if (a->kind == ARG_INT && k == 'i') {
            r.i64[i] = (int64_t)strtoll(a->word, NULL, 10);
        } else if (a->kind == ARG_INT && k == 'n') {
            r.size[i] = (size_t)strtoull(a->word, NULL, 10);
        } else {
            problem("argument %d does not fit parameter kind '%c'", i + 1, k);
            return;
        }
    }

    perps_error *err = NULL;
    struct ret ret = call(c->fn, &r, &err);
    int is_failure = ret.kind == RET_OWNED ? ret.str == NULL
                     : ret.kind == RET_CLIENT ? ret.client == NULL
                     : ret.kind == RET_SESSION ? ret.session == NULL
                     : ret.kind == RET_STREAM  ? ret.stream == NULL
                     : ret.kind == RET_CODE ? ret.code != PERPS_OK
                                            : 0;
    /* error_code(NULL) answers a code without failing: compare that code. */
    perps_code got = ret.kind == RET_CODE ? ret.code : (is_failure ? PERPS_PANIC : PERPS_OK);
    if (strcmp(c->fn, "error_code") == 0) {
        is_failure = 0;
    }
    if (!is_failure && c->expect == PERPS_OK && c->fragment != NULL) {
        const char *text = ret.kind == RET_OWNED ? ret.str : NULL;
        if (text == NULL || strstr(text, c->fragment) == NULL) {
            problem("the result does not contain \"%s\"", c->fragment);
        }
    }
    if (!is_failure && strcmp(c->fn, "sign_body_into") == 0 && c->expect == PERPS_OK) {
        if (strcmp(out_sig.version, "v1") != 0 || strlen(out_sig.signature) != 88) {
            problem("perps_sign_body_into succeeded without filling *out");
        }
    }
    release(&ret);

    if (err != NULL) {
        const char *msg = perps_error_message(err);
        got = perps_error_code(err);
        if (ret.kind == RET_CODE && ret.code != got) {
            problem("returned code %d but the error object says %d", (int)ret.code, (int)got);
        }
        if (getenv("PERPS_TEST_VERBOSE") != NULL) {
            fprintf(report, "  cases.txt:%d perps_%s: code %d: %.200s\n", c->line, c->fn, (int)got, msg);
        }
        if (!is_failure) {
            problem("an error object was written on success");
        }
        if (msg == NULL || msg[0] == '\0') {
            problem("empty message");
        } else {
            if (strlen(msg) > MAX_MESSAGE_LEN) {
                problem("the message is %zu bytes (at most %d)", strlen(msg), MAX_MESSAGE_LEN);
            }
            if (c->fragment != NULL && strstr(msg, c->fragment) == NULL) {
                problem("message \"%.300s\" does not contain \"%s\"", msg, c->fragment);
            }
            check_secrets(c, kinds, msg);
        }
        if (perps_error_http_status(err) != 0 || perps_error_body(err) != NULL ||
            perps_error_may_have_reached_venue(err) || perps_error_request_id(err) != NULL) {
            problem("an offline failure carries an HTTP status, a body, may_have_reached_venue or an x-request-id");
        }
        perps_error_free(err);
    } else if (is_failure && strcmp(c->fn, "sign_body_into") != 0) {
        problem("the call failed without writing an error object");
    } else if (is_failure && c->fragment != NULL) {
        problem("a fragment is given but the function has no message");
    }
    if (got != c->expect) {
        problem("code %d, expected %d", (int)got, (int)c->expect);
    }
    if (is_failure) {
        perps_body_signature untouched;
        int64_t untouched_i64;
        memset(&untouched, SENTINEL, sizeof untouched);
        memset(&untouched_i64, SENTINEL, sizeof untouched_i64);
        if (uses_out && (memcmp(&out_sig, &untouched, sizeof out_sig) != 0 || out_i64 != untouched_i64)) {
            problem("an out-parameter was written on failure");
        }
        /* Again with err == NULL: the return value alone reports the same failure. */
        struct ret again = call(c->fn, &r, NULL);
        if (ret.kind == RET_CODE ? again.code != ret.code : !release(&again)) {
            problem("with err == NULL the call did not fail the same way");
        }
    }
}

/* ------------------------------------------------------------------------------------ */
/* Main                                                                                 */
/* ------------------------------------------------------------------------------------ */

static char *table_path(void) {
    const char *env = getenv("PERPS_BAD_INPUT_CASES");
    if (env != NULL) {
        return strdup(env);
    }
    const char *here = __FILE__;
    const char *slash = strrchr(here, '/');
    size_t dir = slash ? (size_t)(slash - here + 1) : 0;
    const char *rel = "../bad_input/cases.txt";
    char *path = malloc(dir + strlen(rel) + 1);
    if (path != NULL) {
        memcpy(path, here, dir);
        strcpy(path + dir, rel);
    }
    return path;
}

int main(void) {
    report = stderr;
    char *path = table_path();
    size_t len = 0;
    char *text = path ? read_file(path, &len) : NULL;
    if (text == NULL) {
        fprintf(stderr, "cannot read the table %s (set PERPS_BAD_INPUT_CASES)\n", path ? path : "(null)");
        free(path);
        printf("0 passed, 1 failed\n");
        return 1;
    }
    int n = 0;
    struct tcase *cases = parse_table(text, len, &n);
    free(text);
    CHECK(cases != NULL && n >= 60);
    if (!setup_fixtures()) {
        CHECK(!"fixtures are set up");
    }

    /* Every exported function has a case. */
    for (size_t i = 0; i < N_SIGNATURES; i++) {
        int found = 0;
        for (int j = 0; j < n && !found; j++) {
            found = strcmp(cases[j].fn, SIGNATURES[i].fn) == 0;
        }
        if (!found) {
            fprintf(stderr, "no case for perps_%s\n", SIGNATURES[i].fn);
        }
        CHECK(found);
    }

    /* Capture fds 1 and 2 while the table runs: a failing call must print nothing. */
    int capture = getenv("PERPS_TEST_NO_CAPTURE") == NULL;
    char captured_path[] = "/tmp/perps-bad-input-output.XXXXXX";
    int saved_out = -1, saved_err = -1, cap_fd = -1;
    if (capture) {
        fflush(stdout);
        fflush(stderr);
        cap_fd = mkstemp(captured_path);
        saved_out = dup(1);
        saved_err = dup(2);
        int report_fd = dup(2);
        FILE *r = report_fd >= 0 ? fdopen(report_fd, "w") : NULL;
        if (cap_fd < 0 || saved_out < 0 || saved_err < 0 || r == NULL || dup2(cap_fd, 1) < 0 || dup2(cap_fd, 2) < 0) {
            CHECK(!"stdout and stderr can be captured");
            capture = 0;
        } else {
            report = r;
            setvbuf(report, NULL, _IONBF, 0);
        }
    }

    int cases_ok = 0;
    int silent = 0;
    for (int i = 0; i < n; i++) {
        problems_len = 0;
        problems[0] = '\0';
        run_case(&cases[i]);
        if (problems_len > 0) {
            failed++;
            fprintf(report, "FAIL cases.txt:%d perps_%s:\n%s", cases[i].line, cases[i].fn, problems);
        } else {
            passed++;
            cases_ok++;
        }
    }
    if (capture && getenv("PERPS_TEST_SELFTEST_NOISE") != NULL) {
        fputs("noise on stderr (self-test of the capture)\n", stderr);
    }

    if (capture) {
        fflush(stdout);
        fflush(stderr);
        dup2(saved_out, 1);
        dup2(saved_err, 2);
        close(saved_out);
        close(saved_err);
        if (report != stderr) {
            fclose(report);
        }
        report = stderr;
        struct stat st;
        silent = fstat(cap_fd, &st) == 0 && st.st_size == 0;
        if (!silent) {
            char buf[2048];
            ssize_t got = pread(cap_fd, buf, sizeof buf - 1, 0);
            buf[got > 0 ? got : 0] = '\0';
            fprintf(stderr, "the library wrote to stdout/stderr during failing calls:\n%s\n", buf);
        }
        CHECK(silent);
        close(cap_fd);
        unlink(captured_path);
    }

    for (int i = 0; i < n; i++) {
        free_case(&cases[i]);
    }
    free(cases);
    free(path);
    free_fixtures();
    printf("bad input: %d of %d cases as expected (stdout/stderr during the calls: %s)\n", cases_ok, n,
           !capture ? "not captured" : silent ? "silent" : "NOT SILENT");
    return check_summary();
}
