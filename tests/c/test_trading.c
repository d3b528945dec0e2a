/*
 * tests/c/test_trading.c: the trading loop's exports from C — the fifteen endpoint calls
 * and the error accessors perps_error_cl_ord_id / _request_id / _retry_after_ms — against
 * a scripted HTTP server on a loopback socket, run on a thread of this program (the flows
 * against the sandbox venue are in tests/trading_flows.rs).
 *
 * Covers: NULL session on the three public endpoints (no token sent) and refused on account
 * endpoints (nothing sent); the depth book sorted by value; HTTP 404 → PERPS_NOT_FOUND;
 * 429 with Retry-After → perps_error_retry_after_ms; HTTP 200 with code != 0 →
 * PERPS_API_ERROR; the x-request-id on the error equal to the header the server received;
 * the generated cl_ord_id of a failed order equal to the one in the body sent; pacing with
 * rate_limit "refuse" sending nothing it refuses (and a venue 429 emptying the account's
 * bucket, and holding the host's other requests for one window); perps_query_funding_history:
 * its query encoded, the bearer, both answer forms as sent, a code in an envelope an error.
 *
 * Build: cc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude tests/c/test_trading.c …
 */

#define _POSIX_C_SOURCE 200809L

#include "perps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "scripted_server.h"

static const char ED_SEED_B58[] = "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb";
static const char LIMIT_ORDER[] =
    "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\",\"price\":\"65000\","
    "\"time_in_force\":\"gtc\",\"reduce_only\":false}";

/* ------------------------------------------------------------------------------------ */
/* Tests                                                                                 */
/* ------------------------------------------------------------------------------------ */

static perps_client *client_with(const char *options) {
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", server.port);
    perps_error *err = NULL;
    perps_client *c = perps_client_new(url, url, options, &err);
    CHECK(c != NULL && err == NULL);
    perps_error_free(err);
    return c;
}

static void test_public_endpoints_take_a_null_session(perps_client *c) {
    char line[256], auth[256];
    perps_error *err = NULL;

    script(200, "", "{\"symbol\":\"BTC-USD\",\"mark_price\":\"65000.1\",\"last_price\":null}");
    char *price = perps_query_symbol_price(c, NULL, "{\"symbol\":\"BTC-USD\"}", &err);
    CHECK(price != NULL && err == NULL);
    CHECK(price != NULL && strcmp(price, "{\"symbol\":\"BTC-USD\",\"mark_price\":\"65000.1\",\"last_price\":null}") == 0);
    perps_string_free(price);
    last_request_line(line, sizeof line);
    CHECK(strcmp(line, "GET /api/query_symbol_price?symbol=BTC-USD HTTP/1.1") == 0);
    CHECK(!last_header("authorization", auth, sizeof auth)); /* public: no token */

    /* Unsorted levels, string order unlike numeric order: sorted by value, text kept. */
    script(200, "", "{\"asks\":[[\"10.25\",\"1\"],[\"9.5\",\"2\"],[9.75,\"3\"]],"
                    "\"bids\":[[\"8.5\",\"1\"],[\"10\",\"2\"],[\"9\",\"3\"]],\"symbol\":\"BTC-USD\"}");
    char *book = perps_query_depth_book(c, NULL, "{\"symbol\":\"BTC-USD\",\"limit\":3}", &err);
    CHECK(book != NULL && err == NULL);
    CHECK(book != NULL && strcmp(book, "{\"asks\":[[\"9.5\",\"2\"],[9.75,\"3\"],[\"10.25\",\"1\"]],"
                                       "\"bids\":[[\"10\",\"2\"],[\"9\",\"3\"],[\"8.5\",\"1\"]],"
                                       "\"symbol\":\"BTC-USD\"}") == 0);
    perps_string_free(book);
    last_request_line(line, sizeof line);
    CHECK(strcmp(line, "GET /api/query_depth_book?symbol=BTC-USD&limit=3 HTTP/1.1") == 0);

    script(200, "", "[{\"symbol\":\"BTC-USD\",\"price_tick_decimals\":2}]");
    char *info = perps_query_symbol_info(c, NULL, NULL, &err);
    CHECK(info != NULL && err == NULL && strstr(info, "price_tick_decimals") != NULL);
    perps_string_free(info);

    /* An account endpoint refuses a NULL session before sending anything. */
    int before = requests_seen();
    CHECK(perps_query_balance(c, NULL, NULL, &err) == NULL);
    if (check_error_at(err, PERPS_INVALID_ARGUMENT, "session is NULL", __LINE__)) {
        CHECK(perps_error_request_id(err) == NULL && perps_error_cl_ord_id(err) == NULL);
        perps_error_free(err);
    }
    err = NULL;
    CHECK(perps_cancel_order(c, NULL, "{\"order_id\":1}", NULL) == NULL); /* err may be NULL */
    CHECK(requests_seen() == before);
}

static void test_errors_carry_what_was_sent(perps_client *c, perps_session *s) {
    char sent_id[64], sent_cl[96];
    perps_error *err = NULL;

    /* 404 on a signed POST: PERPS_NOT_FOUND, with the x-request-id the server received. */
    script(404, "", "{\"code\":404,\"message\":\"order not found\"}");
    CHECK(perps_cancel_order(c, s, "{\"cl_ord_id\":\"gone-1\"}", &err) == NULL);
    if (check_error_at(err, PERPS_NOT_FOUND, "cancel_order", __LINE__)) {
        CHECK(perps_error_http_status(err) == 404);
        CHECK(perps_error_body(err) != NULL && strstr(perps_error_body(err), "order not found") != NULL);
        CHECK(last_header("x-request-id", sent_id, sizeof sent_id));
        CHECK(perps_error_request_id(err) != NULL && strcmp(perps_error_request_id(err), sent_id) == 0);
        CHECK(perps_error_cl_ord_id(err) == NULL); /* not a new_order */
        CHECK(perps_error_retry_after_ms(err) == -1);
        CHECK(!perps_error_may_have_reached_venue(err));
        perps_error_free(err);
    }

    /* 429 with Retry-After on an order: the wait, the generated cl_ord_id, the id sent. */
    err = NULL;
    script(429, "Retry-After: 3\r\n", "{\"code\":429,\"message\":\"rate limit\"}");
    CHECK(perps_new_order(c, s, LIMIT_ORDER, &err) == NULL);
    if (check_error_at(err, PERPS_HTTP_STATUS, "HTTP 429", __LINE__)) {
        CHECK(perps_error_http_status(err) == 429);
        CHECK(perps_error_retry_after_ms(err) == 3000);
        CHECK(last_body_string("cl_ord_id", sent_cl, sizeof sent_cl));
        const char *cl = perps_error_cl_ord_id(err);
        CHECK(cl != NULL && strcmp(cl, sent_cl) == 0);
        CHECK(cl != NULL && strncmp(cl, "t-", 2) == 0 && strlen(cl) == 2 + 26); /* the client's prefix */
        CHECK(last_header("x-request-id", sent_id, sizeof sent_id));
        CHECK(perps_error_request_id(err) != NULL && strcmp(perps_error_request_id(err), sent_id) == 0);
        perps_error_free(err);
    }

    /* HTTP 200 with code != 0 on a GET: PERPS_API_ERROR; a GET carries no x-request-id. */
    err = NULL;
    script(200, "", "{\"code\":7,\"message\":\"account frozen\"}");
    CHECK(perps_query_balance(c, s, "{}", &err) == NULL);
    if (check_error_at(err, PERPS_API_ERROR, "account frozen", __LINE__)) {
        CHECK(perps_error_http_status(err) == 200);
        CHECK(perps_error_request_id(err) == NULL);
        perps_error_free(err);
    }

    /* Success: the order's answer carries its cl_ord_id. */
    err = NULL;
    script(200, "", "{\"code\":0,\"message\":\"success\",\"request_id\":\"v-9\"}");
    char *placed = perps_new_order(c, s, LIMIT_ORDER, &err);
    CHECK(placed != NULL && err == NULL);
    CHECK(last_body_string("cl_ord_id", sent_cl, sizeof sent_cl));
    char expected[256];
    snprintf(expected, sizeof expected, "{\"code\":0,\"message\":\"success\",\"request_id\":\"v-9\",\"cl_ord_id\":\"%s\"}",
             sent_cl);
    CHECK(placed != NULL && strcmp(placed, expected) == 0);
    perps_string_free(placed);

    /* Every endpoint answers through the same shape; cancel_orders' bare [] included. */
    script(200, "", "[]");
    char *cancelled = perps_cancel_orders(c, s, "{\"order_id_list\":[4294967297]}", &err);
    CHECK(cancelled != NULL && strcmp(cancelled, "[]") == 0);
    perps_string_free(cancelled);
    CHECK(last_body_string("x", sent_cl, sizeof sent_cl) == 0);
}

/* perps_query_funding_history: the venue's answer as sent, in either form. */
static void test_funding_history(perps_client *c, perps_session *s) {
    char line[512], auth[256];
    perps_error *err = NULL;

    /* The live form: a bare array of rows (no transact_time, txn_type "funding_fee"). */
    static const char bare[] =
        "[{\"id\":30000000002,\"user\":\"bsc_0xabc\",\"asset\":\"DUSD\",\"symbol\":\"BTC-USD\","
        "\"qty\":\"-0.081263125\",\"txn_type\":\"funding_fee\",\"created_at\":\"2026-01-02T08:00:00.000001Z\","
        "\"updated_at\":\"2026-01-02T08:00:00.000001Z\"}]";
    script(200, "", bare);
    char *rows = perps_query_funding_history(
        c, s, "{\"limit\":2,\"start\":\"2026-01-02T08:00:00+0800\",\"symbol\":\"BTC-USD\",\"last_id\":30000000003}", &err);
    CHECK(rows != NULL && err == NULL);
    CHECK(rows != NULL && strcmp(rows, bare) == 0);
    perps_string_free(rows);
    last_request_line(line, sizeof line);
    CHECK(strcmp(line, "GET /api/query_funding_history?symbol=BTC-USD&start=2026-01-02T08%3A00%3A00%2B08%3A00"
                       "&last_id=30000000003&limit=2 HTTP/1.1") == 0);
    CHECK(last_header("authorization", auth, sizeof auth) && strcmp(auth, "Bearer c-test-token") == 0);

    /* The other lists' envelope, and no parameters at all. */
    static const char envelope[] = "{\"page_size\":1,\"result\":[{\"id\":7,\"qty\":-0.5,\"txn_type\":\"funding\"}],\"total\":1}";
    script(200, "", envelope);
    rows = perps_query_funding_history(c, s, NULL, &err);
    CHECK(rows != NULL && err == NULL && strcmp(rows, envelope) == 0);
    perps_string_free(rows);
    last_request_line(line, sizeof line);
    CHECK(strcmp(line, "GET /api/query_funding_history HTTP/1.1") == 0);

    /* A refusal inside an envelope. */
    script(200, "", "{\"code\":401,\"message\":\"token expired\",\"result\":[]}");
    CHECK(perps_query_funding_history(c, s, "{}", &err) == NULL);
    if (check_error_at(err, PERPS_API_ERROR, "token expired", __LINE__)) {
        CHECK(perps_error_http_status(err) == 200);
        perps_error_free(err);
    }

    /* Bad parameters, refused unsent, and the sandbox's own funding: tests/c/test_funding.c. */
    int before = requests_seen();
    CHECK(perps_query_funding_history(c, s, "{\"limit\":501}", NULL) == NULL);
    CHECK(requests_seen() == before);
}

/* Pacing with "refuse", without depending on how fast this machine is (valgrind is slow): a
 * fresh account's first 18 requests always pass (the bucket starts full); a venue 429 with
 * Retry-After empties an account's bucket (for at most 10 s), so its next request is refused
 * at once, unsent. */
static void test_pacing_refuses_without_sending(void) {
    perps_client *c = client_with("{\"rate_limit\":\"refuse\"}");
    perps_session *a = perps_session_from_api_key("c-pace-a", "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", NULL);
    perps_session *b = perps_session_from_api_key("c-pace-b", "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb", NULL);
    CHECK(a != NULL && b != NULL);
    if (c == NULL || a == NULL || b == NULL) {
        perps_client_free(c);
        perps_session_free(a);
        perps_session_free(b);
        return;
    }
    /* The host's per-IP limit (48 requests in any 1.1 s) is shared by every client of the
     * process, and counts the requests the tests before this one sent to this server: let
     * them leave its window first. */
    struct timespec one_window = {1, 150 * 1000 * 1000};
    nanosleep(&one_window, NULL);
    script(200, "", "{\"page_size\":0,\"result\":[],\"total\":0}");
    int before = requests_seen(), passed = 0;
    perps_error *err = NULL;
    for (int i = 0; i < 18; i++) {
        char *open = perps_query_open_orders(c, a, NULL, &err);
        passed += open != NULL;
        perps_string_free(open);
    }
    CHECK(passed == 18 && err == NULL);
    CHECK(requests_seen() == before + 18);

    script(429, "Retry-After: 30\r\n", "{\"code\":429,\"message\":\"rate limit\"}");
    CHECK(perps_query_balance(c, b, NULL, &err) == NULL);
    if (check_error_at(err, PERPS_HTTP_STATUS, "HTTP 429", __LINE__)) {
        CHECK(perps_error_retry_after_ms(err) == 30000);
        perps_error_free(err);
    }
    err = NULL;
    before = requests_seen();
    CHECK(perps_query_open_orders(c, b, NULL, &err) == NULL);
    if (check_error_at(err, PERPS_RATE_LIMITED, "nothing was sent", __LINE__)) {
        /* The venue asked for 30 s; the shared bucket pauses at most 10 s (a 429 must never
         * block an account's cancels for long). */
        int64_t wait = perps_error_retry_after_ms(err);
        CHECK(wait > 5000 && wait <= 10000);
        CHECK(perps_error_request_id(err) == NULL && perps_error_http_status(err) == 0);
        CHECK(!perps_error_may_have_reached_venue(err));
        perps_error_free(err);
    }
    err = NULL;
    CHECK(perps_new_order(c, b, LIMIT_ORDER, &err) == NULL); /* orders share the account's bucket */
    if (check_error_at(err, PERPS_RATE_LIMITED, NULL, __LINE__)) {
        CHECK(perps_error_cl_ord_id(err) != NULL); /* the order's id was made before pacing */
        perps_error_free(err);
    }
    CHECK(requests_seen() == before);
    /* The 429 may also have been the IP's limit, which counts one second: the host's other
     * requests (another account's, public market data) are held for one window (1.1 s) at
     * most, not for the account's 10 s. */
    err = NULL;
    CHECK(perps_query_symbol_price(c, a, "{\"symbol\":\"BTC-USD\"}", &err) == NULL);
    if (check_error_at(err, PERPS_RATE_LIMITED, "per-IP", __LINE__)) {
        CHECK(perps_error_retry_after_ms(err) > 0 && perps_error_retry_after_ms(err) <= 1100);
        perps_error_free(err);
    }
    CHECK(requests_seen() == before);
    nanosleep(&one_window, NULL);
    err = NULL;
    script(200, "", "{\"mark_price\":\"1\"}");
    char *price = perps_query_symbol_price(c, b, "{\"symbol\":\"BTC-USD\"}", &err);
    CHECK(price != NULL && err == NULL);
    perps_string_free(price);
    script(200, "", "{\"page_size\":0,\"result\":[],\"total\":0}");
    char *open = perps_query_open_orders(c, a, NULL, &err);
    CHECK(open != NULL && err == NULL); /* another account: its own bucket was not paused */
    perps_string_free(open);
    char *still_paused = perps_query_open_orders(c, b, NULL, &err); /* b: still within its 10 s */
    CHECK(still_paused == NULL);
    perps_string_free(still_paused);
    if (check_error_at(err, PERPS_RATE_LIMITED, "account", __LINE__)) {
        perps_error_free(err);
    }
    perps_client_free(c);
    perps_session_free(a);
    perps_session_free(b);
}

int main(void) {
    if (!start_server()) {
        fprintf(stderr, "cannot start the loopback server\n");
        return 1;
    }
    perps_client *c = client_with("{\"cl_ord_id_prefix\":\"t-\",\"total_timeout_ms\":5000}");
    /* An API credential: a token at once, and a request key of its own (its own pacing bucket). */
    perps_session *s = perps_session_from_api_key("c-test-token", ED_SEED_B58, NULL);
    CHECK(s != NULL);
    if (c != NULL && s != NULL) {
        test_public_endpoints_take_a_null_session(c);
        test_errors_carry_what_was_sent(c, s);
        test_funding_history(c, s);
        test_pacing_refuses_without_sending();
    }
    /* The accessors on NULL: their documented answers. */
    CHECK(perps_error_cl_ord_id(NULL) == NULL);
    CHECK(perps_error_request_id(NULL) == NULL);
    CHECK(perps_error_retry_after_ms(NULL) == -1);
    perps_session_free(s);
    perps_client_free(c);
    stop_server();
    return check_summary();
}
