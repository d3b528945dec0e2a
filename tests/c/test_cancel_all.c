/*
 * tests/c/test_cancel_all.c: perps_cancel_all from C against the sandbox venue (tests/c/run.sh
 * starts it and names its URLs in PERPS_TEST_SANDBOX_{BASE,PERPS,ADMIN}_URL; run under
 * ASan/UBSan and valgrind by run.sh). Each report and error is freed, so the sanitizers and
 * valgrind see every path's ownership:
 *
 *   bad input          NULL client or session, bad params_json: PERPS_INVALID_ARGUMENT with a
 *                      message naming the problem, with an error object and with err == NULL
 *   prefix             only the orders with the prefix cancelled (read back on the venue), the
 *                      report complete
 *   a lost batch       cancel_orders answers 503 once (nothing done): the order is cancelled
 *                      again by itself and confirmed (two cancel requests)
 *   never seen         a named cl_ord_id the venue never had: "not_found", complete false
 *   nothing to do      confirm_ms 0 with nothing open: complete, no request but the listing
 *   a refused token    HTTP 401 on the look-up after the cancel: NULL, the message says the
 *                      cancel was sent, may_have_reached_venue
 *
 * A fresh API credential (admin `api-key`) per run: the three runs share one venue.
 *
 * Build: cc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude tests/c/test_cancel_all.c …
 */
#define _POSIX_C_SOURCE 200809L

#include "perps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sandbox_admin.h"

/* A resting buy of BTC-USD 5 % under the mark with this cl_ord_id; 1 when placed. */
static int rest(perps_client *c, perps_session *s, const char *cl_ord_id) {
    char mark_text[64], order[512];
    char *price = perps_query_symbol_price(c, NULL, "{\"symbol\":\"BTC-USD\"}", NULL);
    int ok = price != NULL && field(price, "mark_price", mark_text, sizeof mark_text);
    perps_string_free(price);
    if (!ok) {
        return 0;
    }
    snprintf(order, sizeof order,
             "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\",\"price\":\"%ld\","
             "\"time_in_force\":\"gtc\",\"reduce_only\":false,\"cl_ord_id\":\"%s\"}",
             (long)(strtod(mark_text, NULL) * 0.95), cl_ord_id);
    char *placed = perps_new_order(c, s, order, NULL);
    perps_string_free(placed);
    return placed != NULL;
}

/* The venue's status of the order with this cl_ord_id ("" when the look-up failed). */
static void status_of(perps_client *c, perps_session *s, const char *cl_ord_id, char *out, size_t size) {
    char params[128];
    snprintf(params, sizeof params, "{\"cl_ord_id\":\"%s\"}", cl_ord_id);
    char *order = perps_query_order(c, s, params, NULL);
    if (order == NULL || !field(order, "status", out, size)) {
        out[0] = '\0';
    }
    perps_string_free(order);
}

/* A call that must fail with PERPS_INVALID_ARGUMENT naming `needle`, checked with an error
 * object and again with err == NULL. */
static void refused(perps_client *c, perps_session *s, const char *params, const char *needle, int line) {
    perps_error *err = NULL;
    char *report = perps_cancel_all(c, s, params, &err);
    check_at(report == NULL, "refused: NULL", line);
    perps_string_free(report);
    if (check_error_at(err, PERPS_INVALID_ARGUMENT, needle, line)) {
        check_at(!perps_error_may_have_reached_venue(err), "nothing sent", line);
        perps_error_free(err);
    }
    report = perps_cancel_all(c, s, params, NULL);
    check_at(report == NULL, "refused with err == NULL", line);
    perps_string_free(report);
}

static void test_bad_input(perps_client *c, perps_session *s) {
    refused(NULL, s, NULL, "client is NULL", __LINE__);
    refused(c, NULL, NULL, "session is NULL", __LINE__);
    refused(c, s, "{\"cl_ord_id_prefix\":\"\"}", "\"cl_ord_id_prefix\" is empty", __LINE__);
    refused(c, s, "{\"cl_ord_id_list\":[]}", "\"cl_ord_id_list\" is an empty list", __LINE__);
    refused(c, s, "{\"confirm_ms\":300001}", "\"confirm_ms\"", __LINE__);
    refused(c, s, "{\"everything\":true}", "unknown parameter \"everything\"", __LINE__);
    refused(c, s, "\xff", "params_json is not valid UTF-8", __LINE__);
}

static void test_prefix_and_lost_batch(perps_client *c, perps_session *s) {
    char status[32];
    perps_error *err = NULL;
    CHECK(rest(c, s, "c-all-1") && rest(c, s, "c-keep-1"));
    char *report = perps_cancel_all(c, s, "{\"cl_ord_id_prefix\":\"c-all-\",\"confirm_ms\":5000}", &err);
    CHECK(report != NULL && err == NULL);
    CHECK(report != NULL && strstr(report, "\"complete\":true") != NULL);
    CHECK(report != NULL && strstr(report, "\"cl_ord_id\":\"c-all-1\",\"symbol\":\"BTC-USD\",\"status\":\"canceled\","
                                           "\"confirmed\":true") != NULL);
    CHECK(report != NULL && strstr(report, "c-keep-1") == NULL);
    perps_string_free(report);
    status_of(c, s, "c-all-1", status, sizeof status);
    CHECK(strcmp(status, "canceled") == 0);
    status_of(c, s, "c-keep-1", status, sizeof status);
    CHECK(strcmp(status, "open") == 0);

    /* The batch is lost once: it is sent again. */
    char answer[4096];
    CHECK(rest(c, s, "c-all-2"));
    CHECK(admin("POST", "faults", "{\"per_endpoint\":{\"cancel_orders\":{\"status\":503,\"times\":1}}}", answer,
                sizeof answer));
    report = perps_cancel_all(c, s, "{\"cl_ord_id_prefix\":\"c-all-\"}", &err);
    CHECK(report != NULL && err == NULL);
    CHECK(report != NULL && strstr(report, "\"complete\":true") != NULL);
    CHECK(report != NULL && strstr(report, "\"cancel_requests\":2,\"failed_cancel_requests\":1") != NULL);
    perps_string_free(report);
    status_of(c, s, "c-all-2", status, sizeof status);
    CHECK(strcmp(status, "canceled") == 0);
}

static void test_not_found_and_nothing_to_do(perps_client *c, perps_session *s) {
    perps_error *err = NULL;
    char *report = perps_cancel_all(c, s, "{\"cl_ord_id_list\":[\"c-never\"],\"confirm_ms\":300}", &err);
    CHECK(report != NULL && err == NULL);
    CHECK(report != NULL && strstr(report, "\"complete\":false") != NULL);
    CHECK(report != NULL && strstr(report, "{\"order_id\":null,\"cl_ord_id\":\"c-never\",\"symbol\":null,"
                                           "\"status\":\"not_found\",\"confirmed\":false}") != NULL);
    perps_string_free(report);

    report = perps_cancel_all(c, s, "{\"symbol\":\"XAG-USD\",\"confirm_ms\":0}", &err);
    CHECK(report != NULL && err == NULL);
    CHECK(report != NULL && strcmp(report, "{\"complete\":true,\"orders\":[],\"cancel_requests\":0,"
                                           "\"failed_cancel_requests\":0,\"queries\":0,"
                                           "\"listing_truncated\":false}") == 0);
    perps_string_free(report);
}

static void test_refused_token(perps_client *c, perps_session *s) {
    char answer[4096], status[32];
    perps_error *err = NULL;
    CHECK(rest(c, s, "c-all-3"));
    CHECK(admin("POST", "faults", "{\"per_endpoint\":{\"query_order\":{\"status\":401,\"times\":1}}}", answer,
                sizeof answer));
    char *report = perps_cancel_all(c, s, "{\"cl_ord_id_prefix\":\"c-all-\"}", &err);
    CHECK(report == NULL);
    perps_string_free(report);
    if (check_error_at(err, PERPS_HTTP_STATUS, "cancel_all stopped after 1 cancel request(s) were sent", __LINE__)) {
        CHECK(perps_error_http_status(err) == 401);
        CHECK(perps_error_may_have_reached_venue(err));
        perps_error_free(err);
    }
    status_of(c, s, "c-all-3", status, sizeof status);
    CHECK(strcmp(status, "canceled") == 0);
}

int main(void) {
    perps_client *c;
    perps_session *s;
    if (!sandbox_account("test_cancel_all", NULL, &c, &s)) {
        return 2;
    }
    if (c != NULL && s != NULL) {
        test_bad_input(c, s);
        test_prefix_and_lost_batch(c, s);
        test_not_found_and_nothing_to_do(c, s);
        test_refused_token(c, s);
    }
    perps_session_free(s);
    perps_client_free(c);
    return check_summary();
}
