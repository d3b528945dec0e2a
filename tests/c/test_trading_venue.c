/*
 * tests/c/test_trading_venue.c: the success paths of the trading loop's account exports from
 * C against the sandbox venue (tests/c/run.sh starts it and names its URLs in
 * PERPS_TEST_SANDBOX_BASE_URL, PERPS_TEST_SANDBOX_PERPS_URL and PERPS_TEST_SANDBOX_ADMIN_URL;
 * run under ASan/UBSan and valgrind by run.sh). test_trading.c drives the same exports
 * against a scripted server for their errors and what they send; this one checks what the
 * venue made of each call, read back through the other calls:
 *
 *   perps_query_position_config  the symbol's defaults (query_symbol_info's def_leverage,
 *                                cross), then each change read back
 *   perps_change_margin_mode     isolated, read back; refused by the venue (HTTP 400) once the
 *                                symbol has an open order
 *   perps_change_leverage        7, read back; 1 above max_leverage refused (HTTP 400), the
 *                                setting unchanged
 *   perps_query_order            by cl_ord_id and by order_id: the resting order as placed
 *                                (side, price, qty, status open, leverage 7); the market order
 *                                filled; the cancelled one canceled
 *   perps_query_trades           the market order's fills: its order_id, side buy, their qty
 *                                adding up to the order's
 *   perps_query_orders           the account's two orders, every status, newest first
 *
 * A fresh API credential (admin `api-key`) per run: the three runs share one venue.
 *
 * Build: cc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude tests/c/test_trading_venue.c …
 */
#define _POSIX_C_SOURCE 200809L

#include "perps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sandbox_admin.h"

/* A call that must succeed: its answer, or NULL after reporting the error. */
#define OK_CALL(fn, c, s, params) ok_call(#fn, fn((c), (s), (params), &err), &err, __LINE__)
static char *ok_call(const char *name, char *answer, perps_error **err, int line) {
    check_at(answer != NULL && *err == NULL, name, line);
    if (answer == NULL) {
        fprintf(stderr, "     %s: %s\n", name, *err != NULL ? perps_error_message(*err) : "(no error)");
        perps_error_free(*err);
        *err = NULL;
    }
    return answer;
}

/* A decimal field of a JSON text as a double (0 when absent): enough to compare 63000 with
 * "63000.00" and 0.001 with "0.0010". */
static double number(const char *json, const char *name) {
    char text[64];
    return json != NULL && field(json, name, text, sizeof text) ? strtod(text, NULL) : 0.0;
}

static int near(double a, double b) {
    return a - b < 1e-12 && b - a < 1e-12;
}

static int field_is(const char *json, const char *name, const char *want) {
    char text[128];
    return json != NULL && field(json, name, text, sizeof text) && strcmp(text, want) == 0;
}

/* The venue refused the call with HTTP 400 and these words in its body. */
static void expect_refusal(char *answer, perps_error *err, const char *words, int line) {
    check_at(answer == NULL, "refused", line);
    perps_string_free(answer);
    if (check_error_at(err, PERPS_HTTP_STATUS, NULL, line)) {
        check_at(perps_error_http_status(err) == 400, "HTTP 400", line);
        const char *body = perps_error_body(err);
        check_at(body != NULL && strstr(body, words) != NULL, words, line);
        perps_error_free(err);
    }
}

static void test_position_config(perps_client *c, perps_session *s) {
    perps_error *err = NULL;
    char *info = OK_CALL(perps_query_symbol_info, c, NULL, "{\"symbol\":\"BTC-USD\"}");
    long def_leverage = (long)number(info, "def_leverage"), max_leverage = (long)number(info, "max_leverage");
    CHECK(def_leverage >= 1 && max_leverage >= 7);
    perps_string_free(info);

    char *config = OK_CALL(perps_query_position_config, c, s, "{\"symbol\":\"BTC-USD\"}");
    CHECK(field_is(config, "symbol", "BTC-USD") && field_is(config, "margin_mode", "cross"));
    CHECK((long)number(config, "leverage") == def_leverage);
    perps_string_free(config);

    char *changed = OK_CALL(perps_change_margin_mode, c, s, "{\"symbol\":\"BTC-USD\",\"margin_mode\":\"isolated\"}");
    CHECK(field_is(changed, "code", "0"));
    perps_string_free(changed);
    changed = OK_CALL(perps_change_leverage, c, s, "{\"symbol\":\"BTC-USD\",\"leverage\":7}");
    CHECK(field_is(changed, "code", "0"));
    perps_string_free(changed);
    config = OK_CALL(perps_query_position_config, c, s, "{\"symbol\":\"BTC-USD\"}");
    CHECK(field_is(config, "margin_mode", "isolated") && (long)number(config, "leverage") == 7);
    perps_string_free(config);

    char params[96];
    snprintf(params, sizeof params, "{\"symbol\":\"BTC-USD\",\"leverage\":%ld}", max_leverage + 1);
    char *refused = perps_change_leverage(c, s, params, &err);
    expect_refusal(refused, err, "leverage must be between 1 and", __LINE__);
    err = NULL;
    config = OK_CALL(perps_query_position_config, c, s, "{\"symbol\":\"BTC-USD\"}");
    CHECK((long)number(config, "leverage") == 7);
    perps_string_free(config);
}

/* Every trade row (flat objects) of a list answer whose order_id is `order_id`: how many,
 * their qty added up, and whether each says side buy and symbol BTC-USD. */
static int fills_of(const char *rows, const char *order_id, double *qty, int *as_placed) {
    char key[64], row[1024];
    snprintf(key, sizeof key, "\"order_id\":%s", order_id);
    int n = 0;
    *qty = 0;
    *as_placed = 1;
    for (const char *at = rows != NULL ? strstr(rows, key) : NULL; at != NULL; at = strstr(at + 1, key)) {
        const char *start = at, *end = strchr(at, '}');
        while (start > rows && *start != '{') {
            start--;
        }
        char next = at[strlen(key)];
        if (next >= '0' && next <= '9') {
            continue; /* a longer id starting with these digits */
        }
        if (end == NULL || (size_t)(end - start) >= sizeof row) {
            return -1;
        }
        memcpy(row, start, (size_t)(end - start + 1));
        row[end - start + 1] = '\0';
        *qty += number(row, "qty");
        *as_placed = *as_placed && field_is(row, "side", "buy") && field_is(row, "symbol", "BTC-USD");
        n++;
    }
    return n;
}

static void test_orders_and_trades(perps_client *c, perps_session *s) {
    perps_error *err = NULL;
    char *price = OK_CALL(perps_query_symbol_price, c, NULL, "{\"symbol\":\"BTC-USD\"}");
    double mark = number(price, "mark_price");
    CHECK(mark > 2000);
    perps_string_free(price);

    /* A buy far below the mark rests; a market buy takes from the book. */
    char order[512], params[128], rest_id[32] = "", take_id[32] = "";
    long bid = (long)(mark - 2000); /* whole dollars, rounded down (mark > 2000) */
    snprintf(order, sizeof order,
             "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\",\"price\":\"%ld\","
             "\"time_in_force\":\"gtc\",\"reduce_only\":false,\"cl_ord_id\":\"c-venue-rest\"}",
             bid);
    char *placed = OK_CALL(perps_new_order, c, s, order);
    CHECK(field_is(placed, "code", "0") && field_is(placed, "cl_ord_id", "c-venue-rest"));
    perps_string_free(placed);
    placed = OK_CALL(perps_new_order, c, s,
                     "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"market\",\"qty\":\"0.001\","
                     "\"time_in_force\":\"ioc\",\"reduce_only\":false,\"cl_ord_id\":\"c-venue-take\"}");
    CHECK(field_is(placed, "code", "0"));
    perps_string_free(placed);

    /* The resting order, by cl_ord_id, as placed; then the same order by its id. */
    char *rest = OK_CALL(perps_query_order, c, s, "{\"cl_ord_id\":\"c-venue-rest\"}");
    CHECK(field_is(rest, "cl_ord_id", "c-venue-rest") && field_is(rest, "status", "open"));
    CHECK(field_is(rest, "side", "buy") && field_is(rest, "symbol", "BTC-USD"));
    CHECK(number(rest, "price") == (double)bid && near(number(rest, "qty"), 0.01));
    CHECK((long)number(rest, "leverage") == 7);
    CHECK(rest != NULL && field(rest, "id", rest_id, sizeof rest_id) && strtod(rest_id, NULL) > 4294967296.0);
    perps_string_free(rest);
    snprintf(params, sizeof params, "{\"order_id\":%s}", rest_id);
    rest = OK_CALL(perps_query_order, c, s, params);
    CHECK(field_is(rest, "id", rest_id) && field_is(rest, "cl_ord_id", "c-venue-rest"));
    perps_string_free(rest);

    /* The market order: filled, all of it. */
    char *take = OK_CALL(perps_query_order, c, s, "{\"cl_ord_id\":\"c-venue-take\"}");
    CHECK(field_is(take, "status", "filled") && near(number(take, "fill_qty"), 0.001));
    CHECK(take != NULL && field(take, "id", take_id, sizeof take_id));
    perps_string_free(take);

    /* Its fills: the market order's id, side buy, adding up to its qty; the resting order
     * has none. */
    char *trades = OK_CALL(perps_query_trades, c, s, "{\"symbol\":\"BTC-USD\"}");
    double qty = 0;
    int as_placed = 0;
    CHECK(fills_of(trades, take_id, &qty, &as_placed) >= 1 && as_placed && near(qty, 0.001));
    CHECK(fills_of(trades, rest_id, &qty, &as_placed) == 0);
    CHECK(field_is(trades, "code", "0") && strstr(trades, "\"result\":[") != NULL);
    perps_string_free(trades);

    /* A margin mode change with an order open: the venue refuses it. */
    char *refused = perps_change_margin_mode(c, s, "{\"symbol\":\"BTC-USD\",\"margin_mode\":\"cross\"}", &err);
    expect_refusal(refused, err, "cannot change the margin mode", __LINE__);
    err = NULL;

    /* Cancelled: canceled when read back. */
    snprintf(params, sizeof params, "{\"order_id\":%s}", rest_id);
    char *cancelled = OK_CALL(perps_cancel_order, c, s, params);
    perps_string_free(cancelled);
    rest = OK_CALL(perps_query_order, c, s, "{\"cl_ord_id\":\"c-venue-rest\"}");
    CHECK(field_is(rest, "status", "canceled"));
    perps_string_free(rest);

    /* The account's orders, every status: these two, newest (the market order) first. */
    char *orders = OK_CALL(perps_query_orders, c, s, "{\"symbol\":\"BTC-USD\"}");
    CHECK(field_is(orders, "total", "2") && field_is(orders, "code", "0"));
    const char *newest = orders != NULL ? strstr(orders, "\"cl_ord_id\":\"c-venue-take\"") : NULL;
    const char *older = orders != NULL ? strstr(orders, "\"cl_ord_id\":\"c-venue-rest\"") : NULL;
    CHECK(newest != NULL && older != NULL && newest < older);
    perps_string_free(orders);
}

int main(void) {
    perps_client *c;
    perps_session *s;
    if (!sandbox_account("test_trading_venue", NULL, &c, &s)) {
        return 2;
    }
    if (c != NULL && s != NULL) {
        test_position_config(c, s);
        test_orders_and_trades(c, s);
    }
    perps_session_free(s);
    perps_client_free(c);
    return check_summary();
}
