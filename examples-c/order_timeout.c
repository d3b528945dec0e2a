/*
 * libperps example: an order times out — did it reach the venue? Find it by its cl_ord_id
 * before deciding to send it again. The library never retries an order.
 *
 *   order_timeout BASE_URL PERPS_URL
 *
 * The path every engine needs:
 *   1. perps_new_order fails with PERPS_TIMEOUT and perps_error_may_have_reached_venue:
 *      the venue may have the order, or not.
 *   2. perps_error_cl_ord_id(err) names the order (the library generated it when the order
 *      had none) and perps_error_request_id(err) the x-request-id it was sent with.
 *   3. perps_query_order {"cl_ord_id": …}: PERPS_NOT_FOUND may only mean "not visible yet"
 *      (the venue can take up to ~10 s to list a new order), so look again for a grace
 *      period of 10 s.
 *   4. Decide: found → it is working, do not resend; still not found after the grace period
 *      → send it again with the same cl_ord_id.
 *
 * examples-c/market_maker.sh runs it against the sandbox venue with a one-shot fault that
 * makes the venue answer the next order after 1.5 s while this client gives up after 0.5 s.
 * The wallet key is a well-known TEST key: never use it with real funds.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "json_scan.h"
#include "perps.h"
#include "ticks.h"

static const char *const BSC_TEST_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static int fail(const char *step, perps_error *err) {
    fprintf(stderr, "%s failed: code %d: %s\n", step, (int)perps_error_code(err), perps_error_message(err));
    perps_error_free(err);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s BASE_URL PERPS_URL\n", argv[0]);
        return 2;
    }
    perps_error *err = NULL;
    /* Give up on an answer after 0.5 s; generated ids start with "demo-". */
    perps_client *client = perps_client_new(
        argv[1], argv[2], "{\"read_timeout_ms\":500,\"total_timeout_ms\":500,\"cl_ord_id_prefix\":\"demo-\"}", &err);
    if (client == NULL) return fail("perps_client_new", err);
    perps_session *session = perps_session_new(&err);
    if (session == NULL) {
        perps_client_free(client);
        return fail("perps_session_new", err);
    }
    int status = 1;
    char *login = NULL, *price = NULL, *placed = NULL, *found = NULL, *cancelled = NULL;
    char cl_ord_id[96] = "", order[320], mark[40], bid[40], state[32];

    if ((login = perps_signin(client, session, "bsc", BSC_TEST_KEY, 3600, &err)) == NULL) { fail("perps_signin", err); goto done; }
    if ((price = perps_query_symbol_price(client, NULL, "{\"symbol\":\"BTC-USD\"}", &err)) == NULL) { fail("perps_query_symbol_price", err); goto done; }
    if (!json_get(price, "mark_price", mark, sizeof mark)) { fprintf(stderr, "no mark_price in %s\n", price); goto done; }
    from_ticks(to_ticks(mark, 2) - 50000, 2, bid, sizeof bid); /* 500.00 below the mark: it rests */
    snprintf(order, sizeof order,
             "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\",\"price\":\"%s\","
             "\"time_in_force\":\"gtc\",\"reduce_only\":false}", bid);
    printf("1. mark %s; sending a buy of 0.01 BTC-USD at %s (no cl_ord_id: the library makes one)\n", mark, bid);

    placed = perps_new_order(client, session, order, &err);
    if (placed != NULL) {
        json_get(placed, "cl_ord_id", cl_ord_id, sizeof cl_ord_id);
        printf("2. placed at once (no slow venue this time): %s\n", placed);
    } else if (perps_error_code(err) == PERPS_TIMEOUT || perps_error_code(err) == PERPS_TRANSPORT ||
               perps_error_may_have_reached_venue(err)) {
        /* Whatever the code (a time-out, a lost connection, a 5xx, an answer of unknown
         * outcome): what decides is whether the order may have reached the venue. */
        printf("2. %s: %s\n", perps_error_code(err) == PERPS_TIMEOUT     ? "TIMEOUT"
                              : perps_error_code(err) == PERPS_TRANSPORT ? "TRANSPORT"
                                                                         : "failed",
               perps_error_message(err));
        printf("   may have reached the venue: %s; cl_ord_id %s; x-request-id %s\n",
               perps_error_may_have_reached_venue(err) ? "yes" : "no",
               perps_error_cl_ord_id(err) ? perps_error_cl_ord_id(err) : "(none)",
               perps_error_request_id(err) ? perps_error_request_id(err) : "(nothing sent)");
        if (perps_error_cl_ord_id(err) != NULL) {
            snprintf(cl_ord_id, sizeof cl_ord_id, "%s", perps_error_cl_ord_id(err));
        }
        int reached = perps_error_may_have_reached_venue(err);
        perps_error_free(err);
        err = NULL;
        if (!reached) {
            printf("3. nothing reached the venue: safe to send again\n");
            status = 0;
            goto done;
        }
    } else {
        fail("perps_new_order", err);
        goto done;
    }

    /* 3. Look before resending: 404 can mean "not visible yet" (up to ~10 s), so look again
     *    for 10 s (40 tries, 250 ms apart) before deciding it is not there. */
    char query[160];
    snprintf(query, sizeof query, "{\"cl_ord_id\":\"%s\"}", cl_ord_id);
    for (int attempt = 1; attempt <= 40 && found == NULL; attempt++) {
        found = perps_query_order(client, session, query, &err);
        if (found == NULL && perps_error_code(err) == PERPS_NOT_FOUND) {
            printf("3. query_order %s: not found yet (attempt %d), looking again in 250 ms\n", cl_ord_id, attempt);
            perps_error_free(err);
            err = NULL;
            sleep_ms(250);
        } else if (found == NULL) {
            fail("perps_query_order", err);
            goto done;
        }
    }
    if (found == NULL) {
        printf("4. decision: not on the venue after 10 s: send it again with cl_ord_id %s\n", cl_ord_id);
        status = 0;
        goto done;
    }
    json_get(found, "status", state, sizeof state);
    printf("3. query_order %s: found, status \"%s\"\n", cl_ord_id, state);
    printf("4. decision: the venue has the order: do NOT send it again\n");

    if ((cancelled = perps_cancel_order(client, session, query, &err)) == NULL) { fail("perps_cancel_order", err); goto done; }
    printf("5. cleaned up: cancel_order %s -> %s\n", cl_ord_id, cancelled);
    status = 0;

done:
    perps_string_free(cancelled);
    perps_string_free(found);
    perps_string_free(placed);
    perps_string_free(price);
    perps_string_free(login);
    perps_session_free(session);
    perps_client_free(client);
    return status;
}
