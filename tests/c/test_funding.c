/*
 * tests/c/test_funding.c: perps_query_funding_history from C against the sandbox venue
 * (tests/c/run.sh starts it and names its URLs in PERPS_TEST_SANDBOX_BASE_URL,
 * PERPS_TEST_SANDBOX_PERPS_URL and PERPS_TEST_SANDBOX_ADMIN_URL).
 *
 * A fresh API credential (the venue's admin `api-key`) buys a BTC-USD position; the venue
 * settles funding at a rate (admin `funding`); the newest row must carry the payment this
 * test computes itself, exactly — −qty × mark × rate from the position the venue reported,
 * rounded half away from zero to nine decimals — and the balance must move by it. Then
 * `limit` and `last_id` paging, and bad parameters refused with nothing reaching the venue
 * (its request counter). The sandbox's marks walk every 3 s: a settlement is checked only
 * when the mark read before and after it is the same, and tried again otherwise.
 *
 * Build: cc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude tests/c/test_funding.c …
 */

#define _POSIX_C_SOURCE 200809L

#include "perps.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sandbox_admin.h"

/* A decimal string as an exact count of 10^-places (at most `places` decimals). */
static int64_t scaled(const char *text, int places) {
    int negative = *text == '-';
    text += negative;
    int64_t n = 0;
    int decimals = -1;
    for (; *text != '\0'; text++) {
        if (*text == '.') {
            decimals = 0;
            continue;
        }
        n = n * 10 + (*text - '0');
        decimals += decimals >= 0;
    }
    for (int d = decimals < 0 ? 0 : decimals; d < places; d++) {
        n *= 10;
    }
    return negative ? -n : n;
}

/* ------------------------------------------------------------------------------------ */

static char *call(perps_client *c, perps_session *s, const char *params) {
    perps_error *err = NULL;
    char *out = perps_query_funding_history(c, s, params, &err);
    if (out == NULL) {
        fprintf(stderr, "query_funding_history(%s): %s\n", params ? params : "NULL",
                err ? perps_error_message(err) : "?");
        perps_error_free(err);
    }
    return out;
}

static int64_t balance(perps_client *c, perps_session *s) {
    char text[64] = "0";
    char *b = perps_query_balance(c, s, NULL, NULL);
    CHECK(b != NULL && field(b, "balance", text, sizeof text));
    perps_string_free(b);
    return scaled(text, 9);
}

static void position(perps_client *c, perps_session *s, char *qty, char *mark) {
    char *p = perps_query_positions(c, s, "{\"symbol\":\"BTC-USD\"}", NULL);
    CHECK(p != NULL && field(p, "qty", qty, 32) && field(p, "mark_price", mark, 32));
    perps_string_free(p);
}

static void test_settled_funding(perps_client *c, perps_session *s) {
    char answer[1024], qty[32] = "0", mark[32] = "0", qty_after[32], mark_after[32], row_qty[32], id[32];
    char *placed = perps_new_order(
        c, s, "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"market\",\"qty\":\"0.0100\",\"time_in_force\":\"ioc\",\"reduce_only\":false}",
        NULL);
    CHECK(placed != NULL);
    perps_string_free(placed);
    char *none = call(c, s, NULL);
    CHECK(none != NULL && strcmp(none, "[]") == 0);
    perps_string_free(none);

    int checked = 0;
    for (int attempt = 1; attempt <= 5 && !checked; attempt++) {
        position(c, s, qty, mark);
        int64_t before = balance(c, s);
        CHECK(admin("POST", "funding", "{\"symbol\":\"BTC-USD\",\"rate\":\"0.0001\"}", answer, sizeof answer));
        position(c, s, qty_after, mark_after);
        int64_t after = balance(c, s);
        char *rows = call(c, s, "{\"symbol\":\"BTC-USD\"}");
        CHECK(rows != NULL && rows[0] == '[');
        /* The newest row first: its fields are the first ones in the array. */
        CHECK(field(rows, "qty", row_qty, sizeof row_qty) && field(rows, "id", id, sizeof id));
        CHECK(rows != NULL && strstr(rows, "\"txn_type\":\"funding_fee\"") != NULL &&
              strstr(rows, "\"asset\":\"DUSD\"") != NULL);
        perps_string_free(rows);
        CHECK(after - before == scaled(row_qty, 9)); /* the balance moved by the row */
        if (strcmp(mark, mark_after) != 0) {
            continue; /* the walk moved the mark during the settlement */
        }
        /* qty (4 decimals) × mark (2) × rate 0.0001 (4): 10^-10; rounded half away to 10^-9. */
        int64_t exact = -scaled(qty, 4) * scaled(mark, 2) * scaled("0.0001", 4);
        int64_t expected = exact < 0 ? -((-exact + 5) / 10) : (exact + 5) / 10;
        int ok = scaled(row_qty, 9) == expected && expected < 0; /* a long pays at a positive rate */
        CHECK(ok);
        if (!ok) {
            fprintf(stderr, "row qty %s, expected %lld (10^-9) for qty %s at %s\n", row_qty, (long long)expected, qty,
                    mark);
        }
        checked = 1;
    }
    CHECK(checked);

    /* Paging: the newest row alone, then the older ones from its id. */
    CHECK(admin("POST", "funding", "{\"rate\":\"-0.0002\"}", answer, sizeof answer));
    char *all = call(c, s, NULL);
    char *first = call(c, s, "{\"limit\":1}");
    char newest[32] = "", second[32] = "", params[96];
    CHECK(all != NULL && field(all, "id", newest, sizeof newest));
    CHECK(all != NULL && field(strstr(all, "},{"), "id", second, sizeof second));
    CHECK(first != NULL && field(first, "id", id, sizeof id) && strcmp(id, newest) == 0);
    CHECK(first != NULL && strstr(first, "},{") == NULL);                              /* one row */
    CHECK(first != NULL && field(first, "qty", row_qty, sizeof row_qty) && row_qty[0] != '-'); /* received */
    snprintf(params, sizeof params, "{\"last_id\":%s}", newest);
    char *rest = call(c, s, params);
    CHECK(rest != NULL && field(rest, "id", id, sizeof id) && strcmp(id, second) == 0);
    perps_string_free(all);
    perps_string_free(first);
    perps_string_free(rest);
}

static long long venue_requests(void) {
    char stats[4096], n[32] = "-1";
    CHECK(admin("GET", "stats", "", stats, sizeof stats) && field(stats, "requests", n, sizeof n));
    return atoll(n);
}

static void test_refused_before_sending(perps_client *c, perps_session *s) {
    static const char *const bad[][2] = {
        {"{\"limit\":501}", "expected an integer from 1 to 500"},
        {"{\"limit\":0}", "expected an integer from 1 to 500"},
        {"{\"last_id\":\"5\"}", "must be a JSON integer"},
        {"{\"side\":\"buy\"}", "unknown parameter \"side\""},
        {"{\"start\":\"2026-01-03\",\"end\":\"2026-01-02\"}", "is after \"end\""},
    };
    long long before = venue_requests();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        perps_error *err = NULL;
        CHECK(perps_query_funding_history(c, s, bad[i][0], &err) == NULL);
        if (check_error_at(err, PERPS_INVALID_ARGUMENT, bad[i][1], __LINE__)) {
            CHECK(!perps_error_may_have_reached_venue(err) && perps_error_http_status(err) == 0);
            perps_error_free(err);
        }
    }
    perps_error *err = NULL;
    CHECK(perps_query_funding_history(c, NULL, NULL, &err) == NULL);
    if (check_error_at(err, PERPS_INVALID_ARGUMENT, "session is NULL", __LINE__)) {
        perps_error_free(err);
    }
    /* The stats request itself is not counted (admin requests are not the venue's). */
    CHECK(venue_requests() == before);
}

int main(void) {
    perps_client *c;
    perps_session *s;
    if (!sandbox_account("test_funding", NULL, &c, &s)) {
        return 2;
    }
    if (c != NULL && s != NULL) {
        test_settled_funding(c, s);
        test_refused_before_sending(c, s);
    }
    perps_session_free(s);
    perps_client_free(c);
    return check_summary();
}
