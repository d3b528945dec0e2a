/*
 * tests/c/bad_input_calls.h: for test_bad_input.c (its only includer), the call of each
 * exported function by its name in the table with a case's resolved arguments, and the
 * release of what a call that did not fail returned. Split from test_bad_input.c to keep the
 * runner readable; plain `static` functions, each used.
 */

#ifndef PERPS_TESTS_C_BAD_INPUT_CALLS_H
#define PERPS_TESTS_C_BAD_INPUT_CALLS_H

#include "perps.h"

#include <stdint.h>
#include <string.h>

#include "bad_input_table.h"

/* Reports a problem with the current case; defined by the runner. */
static void problem(const char *fmt, ...);

enum ret_kind { RET_OWNED, RET_CLIENT, RET_SESSION, RET_STREAM, RET_CODE, RET_UNIT };

struct ret {
    enum ret_kind kind;
    char *str;
    perps_client *client;
    perps_session *session;
    perps_stream *stream;
    perps_code code;
};

struct resolved {
    const void *ptr[MAX_ARGS];
    int64_t i64[MAX_ARGS];
    size_t size[MAX_ARGS];
};

/* The fifteen endpoint calls and perps_cancel_all share one shape: perps_X(client, session, params_json, err). */
typedef char *(*endpoint_fn)(const perps_client *, const perps_session *, const char *, perps_error **);
static const struct {
    const char *fn;
    endpoint_fn call;
} ENDPOINTS[] = {
    {"cancel_order", perps_cancel_order},
    {"cancel_orders", perps_cancel_orders},
    {"cancel_all", perps_cancel_all},
    {"change_leverage", perps_change_leverage},
    {"change_margin_mode", perps_change_margin_mode},
    {"query_order", perps_query_order},
    {"query_orders", perps_query_orders},
    {"query_open_orders", perps_query_open_orders},
    {"query_trades", perps_query_trades},
    {"query_funding_history", perps_query_funding_history},
    {"query_positions", perps_query_positions},
    {"query_balance", perps_query_balance},
    {"query_position_config", perps_query_position_config},
    {"query_symbol_info", perps_query_symbol_info},
    {"query_symbol_price", perps_query_symbol_price},
    {"query_depth_book", perps_query_depth_book},
};

static endpoint_fn endpoint_named(const char *fn) {
    for (size_t i = 0; i < sizeof ENDPOINTS / sizeof ENDPOINTS[0]; i++) {
        if (strcmp(ENDPOINTS[i].fn, fn) == 0) {
            return ENDPOINTS[i].call;
        }
    }
    return NULL;
}

#define S(i) ((const char *)r->ptr[i])
#define SESSION(i) ((const perps_session *)r->ptr[i])
#define CLIENT(i) ((const perps_client *)r->ptr[i])
#define STREAM(i) ((const perps_stream *)r->ptr[i])

static struct ret call(const char *fn, const struct resolved *r, perps_error **err) {
    struct ret out;
    memset(&out, 0, sizeof out);
    out.kind = RET_OWNED;
    if (strcmp(fn, "string_free") == 0) {
        perps_string_free((char *)(uintptr_t)r->ptr[0]);
        out.kind = RET_UNIT;
    } else if (strcmp(fn, "client_free") == 0) {
        perps_client_free((perps_client *)(uintptr_t)r->ptr[0]);
        out.kind = RET_UNIT;
    } else if (strcmp(fn, "session_free") == 0) {
        perps_session_free((perps_session *)(uintptr_t)r->ptr[0]);
        out.kind = RET_UNIT;
    } else if (strcmp(fn, "error_free") == 0) {
        perps_error_free((perps_error *)(uintptr_t)r->ptr[0]);
        out.kind = RET_UNIT;
    } else if (strcmp(fn, "error_code") == 0) {
        out.kind = RET_CODE;
        out.code = perps_error_code((const perps_error *)r->ptr[0]);
    } else if (strcmp(fn, "session_new") == 0) {
        out.kind = RET_SESSION;
        out.session = perps_session_new(err);
    } else if (strcmp(fn, "client_new") == 0) {
        out.kind = RET_CLIENT;
        out.client = perps_client_new(S(0), S(1), S(2), err);
    } else if (strcmp(fn, "session_from_api_key") == 0) {
        out.kind = RET_SESSION;
        out.session = perps_session_from_api_key(S(0), S(1), err);
    } else if (strcmp(fn, "session_request_id") == 0) {
        out.str = perps_session_request_id(SESSION(0), err);
    } else if (strcmp(fn, "session_token") == 0) {
        out.str = perps_session_token(SESSION(0), err);
    } else if (strcmp(fn, "session_info") == 0) {
        out.str = perps_session_info(SESSION(0), err);
    } else if (strcmp(fn, "session_logout") == 0) {
        out.kind = RET_CODE;
        out.code = perps_session_logout(SESSION(0), err);
    } else if (strcmp(fn, "session_set_session_id") == 0) {
        out.kind = RET_CODE;
        out.code = perps_session_set_session_id(SESSION(0), S(1), err);
    } else if (strcmp(fn, "session_set_impersonate") == 0) {
        out.kind = RET_CODE;
        out.code = perps_session_set_impersonate(SESSION(0), S(1), err);
    } else if (strcmp(fn, "sign_body") == 0) {
        out.str = perps_sign_body(SESSION(0), S(1), err);
    } else if (strcmp(fn, "sign_body_at") == 0) {
        out.str = perps_sign_body_at(SESSION(0), S(1), S(2), r->i64[3], err);
    } else if (strcmp(fn, "sign_body_into") == 0) {
        out.kind = RET_CODE;
        out.code = perps_sign_body_into(SESSION(0), (const uint8_t *)r->ptr[1], r->size[2],
                                        (perps_body_signature *)(uintptr_t)r->ptr[3]);
    } else if (strcmp(fn, "wallet_address") == 0) {
        out.str = perps_wallet_address(S(0), S(1), err);
    } else if (strcmp(fn, "wallet_sign") == 0) {
        out.str = perps_wallet_sign(S(0), S(1), S(2), err);
    } else if (strcmp(fn, "wallet_wrap_solana_signature") == 0) {
        out.str = perps_wallet_wrap_solana_signature(S(0), S(1), (const uint8_t *)r->ptr[2], r->size[3], err);
    } else if (strcmp(fn, "challenge_verify") == 0) {
        out.str = perps_challenge_verify(S(0), S(1), S(2), S(3), S(4), r->i64[5], err);
    } else if (strcmp(fn, "order_serialize") == 0) {
        out.str = perps_order_serialize(S(0), err);
    } else if (strcmp(fn, "prepare_signin") == 0) {
        out.str = perps_prepare_signin(CLIENT(0), SESSION(1), S(2), S(3), err);
    } else if (strcmp(fn, "login") == 0) {
        out.str = perps_login(CLIENT(0), SESSION(1), S(2), r->i64[3], err);
    } else if (strcmp(fn, "signin") == 0) {
        out.str = perps_signin(CLIENT(0), SESSION(1), S(2), S(3), r->i64[4], err);
    } else if (strcmp(fn, "new_order") == 0) {
        out.str = perps_new_order(CLIENT(0), SESSION(1), S(2), err);
    } else if (strcmp(fn, "request") == 0) {
        out.str = perps_request(CLIENT(0), SESSION(1), S(2), S(3), S(4), err);
    } else if (strcmp(fn, "client_sync_time") == 0) {
        out.kind = RET_CODE;
        out.code = perps_client_sync_time(CLIENT(0), (int64_t *)(uintptr_t)r->ptr[1], err);
    } else if (endpoint_named(fn) != NULL) {
        out.str = endpoint_named(fn)(CLIENT(0), SESSION(1), S(2), err);
    } else if (strcmp(fn, "stream_open") == 0) {
        out.kind = RET_STREAM;
        out.stream = perps_stream_open(CLIENT(0), SESSION(1), S(2), err);
    } else if (strcmp(fn, "order_stream_open") == 0) {
        out.kind = RET_STREAM;
        out.stream = perps_order_stream_open(CLIENT(0), SESSION(1), err);
    } else if (strcmp(fn, "stream_next") == 0) {
        out.str = perps_stream_next(STREAM(0), r->i64[1], err);
    } else if (strcmp(fn, "stream_new_order") == 0) {
        out.str = perps_stream_new_order(STREAM(0), S(1), err);
    } else if (strcmp(fn, "stream_cancel_order") == 0) {
        out.str = perps_stream_cancel_order(STREAM(0), S(1), err);
    } else if (strcmp(fn, "stream_close") == 0) {
        perps_stream_close(STREAM(0));
        out.kind = RET_UNIT;
    } else if (strcmp(fn, "stream_free") == 0) {
        perps_stream_free((perps_stream *)(uintptr_t)r->ptr[0]);
        out.kind = RET_UNIT;
    } else {
        out.kind = RET_UNIT;
        problem("no runner for perps_%s", fn);
    }
    return out;
}

/* Free what a successful call returned; 1 when the call failed. */
static int release(const struct ret *r) {
    switch (r->kind) {
    case RET_OWNED:
        perps_string_free(r->str);
        return r->str == NULL;
    case RET_CLIENT:
        perps_client_free(r->client);
        return r->client == NULL;
    case RET_SESSION:
        perps_session_free(r->session);
        return r->session == NULL;
    case RET_STREAM:
        perps_stream_free(r->stream);
        return r->stream == NULL;
    case RET_CODE:
        return r->code != PERPS_OK;
    case RET_UNIT:
        return 0;
    }
    return 0;
}

#endif
