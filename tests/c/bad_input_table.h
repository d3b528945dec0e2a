/*
 * tests/c/bad_input_table.h: the case table of test_bad_input.c (tests/bad_input/cases.txt):
 * its cases' types, its vocabulary (the exported functions' parameter kinds, the code names)
 * and its parser. Split from test_bad_input.c, its only includer (after check.h: parse errors
 * go to `report`), to keep the runner readable; the functions are plain `static`, each used.
 */

#ifndef PERPS_TESTS_C_BAD_INPUT_TABLE_H
#define PERPS_TESTS_C_BAD_INPUT_TABLE_H

#include "perps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAX_ARGS 8

enum arg_kind { ARG_NULL, ARG_STR, ARG_INT, ARG_FIX };

struct arg {
    enum arg_kind kind;
    char *bytes; /* ARG_STR: malloc'd, NUL-terminated; len without the NUL */
    size_t len;
    int secret;      /* $"..." */
    char word[64];   /* ARG_INT digits, ARG_FIX name */
};

struct tcase {
    int line;
    char fn[48];
    struct arg args[MAX_ARGS];
    int nargs;
    perps_code expect;
    char *fragment; /* NULL for "-" */
};

/* ------------------------------------------------------------------------------------ */
/* The table's vocabulary                                                               */
/* ------------------------------------------------------------------------------------ */

/* Parameter kinds in C order, without err (the same letters as tests/bad_input/table.rs):
 * c client, s session, x string, k secret string, b bytes (a length follows), n size_t,
 * i int64_t, o out-pointer; e/C/S/z/t/T an error/client/session/string/stream/stream to free
 * that may only be NULL. */
static const struct {
    const char *fn;
    const char *kinds;
} SIGNATURES[] = {
    {"string_free", "z"},
    {"client_free", "C"},
    {"session_free", "S"},
    {"error_free", "e"},
    {"error_code", "e"},
    {"error_message", "e"},
    {"error_http_status", "e"},
    {"error_body", "e"},
    {"error_may_have_reached_venue", "e"},
    {"error_cl_ord_id", "e"},
    {"error_request_id", "e"},
    {"error_stream_request_id", "e"},
    {"error_retry_after_ms", "e"},
    {"version", ""},
    {"session_new", ""},
    {"client_new", "xxx"},
    {"session_from_api_key", "kk"},
    {"session_request_id", "s"},
    {"session_token", "s"},
    {"session_info", "s"},
    {"session_logout", "s"},
    {"session_set_session_id", "sx"},
    {"session_set_impersonate", "sx"},
    {"sign_body", "sx"},
    {"sign_body_at", "sxxi"},
    {"sign_body_into", "sbno"},
    {"wallet_address", "xk"},
    {"wallet_sign", "xkx"},
    {"wallet_wrap_solana_signature", "xxbn"},
    {"challenge_verify", "xxxxxi"},
    {"order_serialize", "x"},
    {"prepare_signin", "csxx"},
    {"login", "csxi"},
    {"signin", "csxki"},
    {"new_order", "csx"},
    {"request", "csxxx"},
    {"client_sync_time", "co"},
    {"cancel_order", "csx"},
    {"cancel_orders", "csx"},
    {"cancel_all", "csx"},
    {"change_leverage", "csx"},
    {"change_margin_mode", "csx"},
    {"query_order", "csx"},
    {"query_orders", "csx"},
    {"query_open_orders", "csx"},
    {"query_trades", "csx"},
    {"query_funding_history", "csx"},
    {"query_positions", "csx"},
    {"query_balance", "csx"},
    {"query_position_config", "csx"},
    {"query_symbol_info", "csx"},
    {"query_symbol_price", "csx"},
    {"query_depth_book", "csx"},
    {"stream_open", "csx"},
    {"order_stream_open", "cs"},
    {"stream_next", "ti"},
    {"stream_new_order", "tx"},
    {"stream_cancel_order", "tx"},
    {"stream_close", "t"},
    {"stream_free", "T"},
};
#define N_SIGNATURES (sizeof SIGNATURES / sizeof SIGNATURES[0])

static const char *signature_of(const char *fn) {
    for (size_t i = 0; i < N_SIGNATURES; i++) {
        if (strcmp(SIGNATURES[i].fn, fn) == 0) {
            return SIGNATURES[i].kinds;
        }
    }
    return NULL;
}

static const struct {
    const char *name;
    perps_code code;
} CODES[] = {
    {"OK", PERPS_OK},
    {"INVALID_ARGUMENT", PERPS_INVALID_ARGUMENT},
    {"INVALID_KEY", PERPS_INVALID_KEY},
    {"INVALID_ORDER", PERPS_INVALID_ORDER},
    {"VERIFICATION_FAILED", PERPS_VERIFICATION_FAILED},
    {"INVALID_STATE", PERPS_INVALID_STATE},
    {"TRANSPORT", PERPS_TRANSPORT},
    {"TIMEOUT", PERPS_TIMEOUT},
    {"HTTP_STATUS", PERPS_HTTP_STATUS},
    {"API_ERROR", PERPS_API_ERROR},
    {"BAD_RESPONSE", PERPS_BAD_RESPONSE},
    {"TOKEN_EXPIRED", PERPS_TOKEN_EXPIRED},
    {"RNG", PERPS_RNG},
    {"NOT_FOUND", PERPS_NOT_FOUND},
    {"RATE_LIMITED", PERPS_RATE_LIMITED},
    {"STREAM_CLOSED", PERPS_STREAM_CLOSED},
    {"STREAM_LIMIT", PERPS_STREAM_LIMIT},
    {"PANIC", PERPS_PANIC},
};

static int code_named(const char *name, perps_code *out) {
    for (size_t i = 0; i < sizeof CODES / sizeof CODES[0]; i++) {
        if (strcmp(CODES[i].name, name) == 0) {
            *out = CODES[i].code;
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Parsing tests/bad_input/cases.txt                                                    */
/* ------------------------------------------------------------------------------------ */

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *bigger = realloc(buf, cap * 2 + 1);
            if (bigger == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf != NULL) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Parse a "..." literal starting at *p (on the quote); advance *p past it. */
static int parse_literal(const char **p, const char *end, char **out, size_t *out_len) {
    const char *s = *p + 1;
    char *buf = malloc((size_t)(end - s) + 1);
    size_t n = 0;
    if (buf == NULL) {
        return 0;
    }
    while (s < end && *s != '"') {
        if (*s == '\\' && s + 1 < end) {
            s++;
            switch (*s) {
            case '\\': buf[n++] = '\\'; break;
            case '"': buf[n++] = '"'; break;
            case 'n': buf[n++] = '\n'; break;
            case 'r': buf[n++] = '\r'; break;
            case 't': buf[n++] = '\t'; break;
            case 'x':
                if (s + 2 >= end || hexval(s[1]) < 0 || hexval(s[2]) < 0) {
                    free(buf);
                    return 0;
                }
                buf[n++] = (char)(hexval(s[1]) * 16 + hexval(s[2]));
                s += 2;
                break;
            default: free(buf); return 0;
            }
            s++;
        } else {
            buf[n++] = *s++;
        }
    }
    if (s >= end) {
        free(buf);
        return 0;
    }
    buf[n] = '\0';
    *out = buf;
    *out_len = n;
    *p = s + 1;
    return 1;
}

static void free_case(struct tcase *c) {
    for (int i = 0; i < c->nargs; i++) {
        free(c->args[i].bytes);
    }
    free(c->fragment);
}

/* Parse one line into *c; 0 with a message on a malformed line. */
static int parse_line(const char *line, const char *end, int number, struct tcase *c) {
    memset(c, 0, sizeof *c);
    c->line = number;
    const char *p = line;
    int arrow = 0, have_code = 0, have_fragment = 0;
    while (p < end) {
        if (*p == ' ' || *p == '\t' || *p == '\r') {
            p++;
            continue;
        }
        if (*p == '"' || (*p == '$' && p + 1 < end && p[1] == '"')) {
            int secret = *p == '$';
            char *bytes = NULL;
            size_t len = 0;
            if (secret) {
                p++;
            }
            if (!parse_literal(&p, end, &bytes, &len)) {
                fprintf(report, "cases.txt:%d: bad literal\n", number);
                return 0;
            }
            if (arrow) {
                if (strcmp(bytes, "-") == 0) {
                    free(bytes);
                } else {
                    c->fragment = bytes;
                }
                have_fragment = 1;
            } else if (c->nargs < MAX_ARGS) {
                struct arg *a = &c->args[c->nargs++];
                a->kind = ARG_STR;
                a->bytes = bytes;
                a->len = len;
                a->secret = secret;
            } else {
                free(bytes);
                fprintf(report, "cases.txt:%d: too many arguments\n", number);
                return 0;
            }
            continue;
        }
        const char *start = p;
        while (p < end && *p != ' ' && *p != '\t' && *p != '\r') {
            p++;
        }
        size_t wlen = (size_t)(p - start);
        char word[64];
        if (wlen >= sizeof word) {
            fprintf(report, "cases.txt:%d: token too long\n", number);
            return 0;
        }
        memcpy(word, start, wlen);
        word[wlen] = '\0';
        if (strcmp(word, "=>") == 0) {
            arrow = 1;
        } else if (arrow) {
            if (have_code || !code_named(word, &c->expect)) {
                fprintf(report, "cases.txt:%d: bad code %s\n", number, word);
                return 0;
            }
            have_code = 1;
        } else if (c->fn[0] == '\0') {
            if (wlen >= sizeof c->fn) {
                return 0;
            }
            memcpy(c->fn, word, wlen + 1);
        } else if (c->nargs >= MAX_ARGS) {
            fprintf(report, "cases.txt:%d: too many arguments\n", number);
            return 0;
        } else {
            struct arg *a = &c->args[c->nargs++];
            memcpy(a->word, word, wlen + 1);
            if (strcmp(word, "NULL") == 0) {
                a->kind = ARG_NULL;
            } else if (word[0] == '@') {
                a->kind = ARG_FIX;
                memmove(a->word, word + 1, wlen);
            } else {
                char *rest = NULL;
                errno = 0;
                if (word[0] == '-') {
                    (void)strtoll(word, &rest, 10);
                } else {
                    (void)strtoull(word, &rest, 10);
                }
                if (errno != 0 || rest == word || *rest != '\0') {
                    fprintf(report, "cases.txt:%d: unknown token %s\n", number, word);
                    return 0;
                }
                a->kind = ARG_INT;
            }
        }
    }
    const char *kinds = signature_of(c->fn);
    if (!arrow || !have_code || !have_fragment || kinds == NULL || (int)strlen(kinds) != c->nargs) {
        fprintf(report, "cases.txt:%d: malformed case (function %s)\n", number, c->fn);
        return 0;
    }
    return 1;
}

static struct tcase *parse_table(const char *text, size_t len, int *count) {
    size_t cap = 64;
    int n = 0;
    struct tcase *cases = malloc(cap * sizeof *cases);
    const char *end = text + len;
    int number = 0;
    for (const char *line = text; cases != NULL && line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        if (eol == NULL) {
            eol = end;
        }
        number++;
        const char *first = line;
        while (first < eol && (*first == ' ' || *first == '\t')) {
            first++;
        }
        if (first < eol && *first != '#' && *first != '\r') {
            if ((size_t)n == cap) {
                struct tcase *bigger = realloc(cases, cap * 2 * sizeof *cases);
                if (bigger == NULL) {
                    break;
                }
                cases = bigger;
                cap *= 2;
            }
            if (parse_line(first, eol, number, &cases[n])) {
                n++;
            } else {
                free_case(&cases[n]);
                CHECK(!"every line of the table parses");
            }
        }
        line = eol + 1;
    }
    *count = n;
    return cases;
}

#endif
