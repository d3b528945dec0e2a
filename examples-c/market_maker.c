/*
 * libperps example: a small market maker. It quotes both sides of BTC-USD around the mark,
 * cancels and re-quotes when the mark moves, notices fills, reconciles its open orders and
 * position with the venue every round, and cancels everything on exit.
 *
 *   market_maker BASE_URL PERPS_URL [ROUNDS]     (a round every 250 ms; default 24 rounds)
 *
 * SIGINT / SIGTERM end it early, still cancelling everything. examples-c/market_maker.sh
 * runs it against the sandbox venue while moving the sandbox's mark so that quotes fill.
 * The wallet key is a well-known TEST key: never use it with real funds.
 *
 * What it shows of the library: sign-in, change_margin_mode / change_leverage at start-up,
 * market data without a session (query_symbol_price, query_depth_book: levels sorted best
 * first), post-only quotes (time_in_force "alo") with client order ids from the library
 * (prefix "mm-"), cancel_orders by cl_ord_id list and by id list, query_order to follow
 * each quote, query_open_orders and query_positions to reconcile, and the client options
 * symbol_rules (bad prices refused locally) and rate_limit "wait" (never a 429).
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_field.h"
#include "perps.h"

static const char *const BSC_TEST_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
static const char *const SYMBOL = "BTC-USD";
static const int PRICE_DECIMALS = 2;        /* BTC-USD's price_tick_decimals */
static const long long HALF_SPREAD = 2500;  /* 25.00 either side of the mark, in ticks */
static const long long REQUOTE_MOVE = 1000; /* re-quote when the mark moved 10.00 */
static const char *const QTY = "0.01";

static volatile sig_atomic_t stopping = 0;
static void on_signal(int sig) {
    (void)sig;
    stopping = 1;
}

static perps_client *client;
static perps_session *session;

/* One side's live quote: its cl_ord_id ("" when none) and price. */
struct quote {
    const char *side;
    char cl_ord_id[64];
    char price[32];
};
static struct quote bid = {"buy", "", ""}, ask = {"sell", "", ""};
static long long quoted_mark = -1;
static int fills = 0;

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Call an endpoint; on failure print the error and return NULL. */
static char *checked(const char *what, char *answer, perps_error *err) {
    if (answer == NULL) {
        fprintf(stderr, "  %s failed: code %d: %s\n", what, (int)perps_error_code(err), perps_error_message(err));
        perps_error_free(err);
    }
    return answer;
}

static void place(struct quote *q, long long price_ticks) {
    char order[320];
    perps_error *err = NULL;
    from_ticks(price_ticks, PRICE_DECIMALS, q->price, sizeof q->price);
    snprintf(order, sizeof order,
             "{\"symbol\":\"%s\",\"side\":\"%s\",\"order_type\":\"limit\",\"qty\":\"%s\",\"price\":\"%s\","
             "\"time_in_force\":\"alo\",\"reduce_only\":false}",
             SYMBOL, q->side, QTY, q->price);
    char *placed = perps_new_order(client, session, order, &err);
    q->cl_ord_id[0] = '\0';
    if (placed == NULL) {
        fprintf(stderr, "  quote %s %s refused: %s\n", q->side, q->price, perps_error_message(err));
        perps_error_free(err);
        return;
    }
    json_field(placed, "cl_ord_id", q->cl_ord_id, sizeof q->cl_ord_id);
    perps_string_free(placed);
}

/* Cancel our live quotes (one request for both) and forget them. */
static void cancel_quotes(const char *why) {
    char params[200];
    if (bid.cl_ord_id[0] == '\0' && ask.cl_ord_id[0] == '\0') {
        return;
    }
    if (bid.cl_ord_id[0] != '\0' && ask.cl_ord_id[0] != '\0') {
        snprintf(params, sizeof params, "{\"cl_ord_id_list\":[\"%s\",\"%s\"]}", bid.cl_ord_id, ask.cl_ord_id);
    } else {
        snprintf(params, sizeof params, "{\"cl_ord_id_list\":[\"%s\"]}",
                 bid.cl_ord_id[0] != '\0' ? bid.cl_ord_id : ask.cl_ord_id);
    }
    perps_error *err = NULL;
    char *answer = checked("cancel_orders", perps_cancel_orders(client, session, params, &err), err);
    if (answer != NULL) {
        printf("  cancel   %s: %s%s%s -> %s\n", why, bid.cl_ord_id, bid.cl_ord_id[0] && ask.cl_ord_id[0] ? ", " : "",
               ask.cl_ord_id, answer);
    }
    perps_string_free(answer);
    bid.cl_ord_id[0] = ask.cl_ord_id[0] = '\0';
}

/* Has this quote filled? Follow it with query_order (by its cl_ord_id). */
static void follow(struct quote *q) {
    if (q->cl_ord_id[0] == '\0') {
        return;
    }
    char params[96], status[32] = "", filled[32] = "", avg[40] = "";
    snprintf(params, sizeof params, "{\"cl_ord_id\":\"%s\"}", q->cl_ord_id);
    perps_error *err = NULL;
    char *order = perps_query_order(client, session, params, &err);
    if (order == NULL) {
        /* Not visible yet, or already gone: look again next round. */
        if (perps_error_code(err) != PERPS_NOT_FOUND) {
            fprintf(stderr, "  query_order failed: %s\n", perps_error_message(err));
        }
        perps_error_free(err);
        return;
    }
    json_field(order, "status", status, sizeof status);
    json_field(order, "fill_qty", filled, sizeof filled);
    json_field(order, "fill_avg_price", avg, sizeof avg);
    if (strcmp(status, "filled") == 0) {
        printf("  FILLED   %s %s BTC @ %s (%s)\n", q->side, filled, avg, q->cl_ord_id);
        fills++;
        q->cl_ord_id[0] = '\0';
    } else if (strcmp(status, "canceled") == 0 || strcmp(status, "rejected") == 0) {
        printf("  %s %s (%s): re-quote\n", status, q->side, q->cl_ord_id);
        q->cl_ord_id[0] = '\0';
    }
    perps_string_free(order);
}

/* Count the open orders the venue lists and read the position: the truth to trade on. */
static int reconcile(const char *when) {
    perps_error *err = NULL;
    char *open = checked("query_open_orders", perps_query_open_orders(client, session, "{\"symbol\":\"BTC-USD\"}", &err), err);
    char *positions = checked("query_positions", perps_query_positions(client, session, "{\"symbol\":\"BTC-USD\"}", &err), err);
    int venue_open = 0;
    for (const char *p = open; p != NULL && (p = strstr(p, "\"cl_ord_id\":")) != NULL; p++) {
        venue_open++;
    }
    char qty[40] = "0";
    json_field(positions, "qty", qty, sizeof qty);
    int ours = (bid.cl_ord_id[0] != '\0') + (ask.cl_ord_id[0] != '\0');
    printf("  reconcile (%s): venue lists %d open order(s), we track %d; position %s BTC\n", when, venue_open, ours, qty);
    perps_string_free(open);
    perps_string_free(positions);
    return venue_open;
}

/* Every open order of the account, cancelled by id (what an engine does at start and exit). */
static void cancel_everything(const char *when) {
    perps_error *err = NULL;
    char *open = checked("query_open_orders", perps_query_open_orders(client, session, NULL, &err), err);
    char params[4096] = "{\"order_id_list\":[";
    size_t n = strlen(params);
    int count = 0;
    char id[32];
    for (const char *p = open; p != NULL && (p = json_field(p, "id", id, sizeof id)) != NULL;) {
        n += (size_t)snprintf(params + n, sizeof params - n, "%s%s", count ? "," : "", id);
        count++;
        if (n + 40 > sizeof params) {
            break;
        }
    }
    snprintf(params + n, sizeof params - n, "]}");
    if (count > 0) {
        char *answer = checked("cancel_orders", perps_cancel_orders(client, session, params, &err), err);
        printf("  cancel   everything (%s): %d order(s) by id -> %s\n", when, count, answer ? answer : "failed");
        perps_string_free(answer);
    } else {
        printf("  cancel   everything (%s): nothing open\n", when);
    }
    perps_string_free(open);
    bid.cl_ord_id[0] = ask.cl_ord_id[0] = '\0';
}

static void round_once(int round) {
    perps_error *err = NULL;
    char mark_text[40] = "", best_bid[40] = "?", best_ask[40] = "?";
    char *price = checked("query_symbol_price", perps_query_symbol_price(client, NULL, "{\"symbol\":\"BTC-USD\"}", &err), err);
    char *book = checked("query_depth_book", perps_query_depth_book(client, NULL, "{\"symbol\":\"BTC-USD\",\"limit\":5}", &err), err);
    if (price == NULL || book == NULL || json_field(price, "mark_price", mark_text, sizeof mark_text) == NULL) {
        perps_string_free(price);
        perps_string_free(book);
        return;
    }
    /* Levels come sorted best first: the first level of each side is the top of the book. */
    const char *bids = strstr(book, "\"bids\":[[");
    const char *asks = strstr(book, "\"asks\":[[");
    if (bids) sscanf(bids + 9, "\"%39[^\"]", best_bid);
    if (asks) sscanf(asks + 9, "\"%39[^\"]", best_ask);
    long long mark = to_ticks(mark_text, PRICE_DECIMALS);
    printf("round %2d: mark %s, book %s / %s\n", round, mark_text, best_bid, best_ask);

    follow(&bid);
    follow(&ask);
    long long moved = quoted_mark < 0 ? 0 : (mark > quoted_mark ? mark - quoted_mark : quoted_mark - mark);
    if (quoted_mark >= 0 && moved >= REQUOTE_MOVE) {
        char why[64];
        from_ticks(moved, PRICE_DECIMALS, why, sizeof why);
        char reason[96];
        snprintf(reason, sizeof reason, "mark moved %s", why);
        cancel_quotes(reason);
    }
    if (bid.cl_ord_id[0] == '\0' || ask.cl_ord_id[0] == '\0') {
        if (bid.cl_ord_id[0] == '\0') place(&bid, mark - HALF_SPREAD);
        if (ask.cl_ord_id[0] == '\0') place(&ask, mark + HALF_SPREAD);
        quoted_mark = mark;
        printf("  quote    bid %s (%s)  ask %s (%s)\n", bid.price, bid.cl_ord_id, ask.price, ask.cl_ord_id);
    }
    reconcile("round");
    perps_string_free(price);
    perps_string_free(book);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s BASE_URL PERPS_URL [ROUNDS]\n", argv[0]);
        return 2;
    }
    int rounds = argc > 3 ? atoi(argv[3]) : 24;
    setvbuf(stdout, NULL, _IOLBF, 0); /* one line at a time, also into a pipe or file */
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    perps_error *err = NULL;
    client = perps_client_new(argv[1], argv[2], "{\"symbol_rules\":true,\"rate_limit\":\"wait\",\"cl_ord_id_prefix\":\"mm-\"}", &err);
    if (client == NULL) {
        fprintf(stderr, "perps_client_new: %s\n", perps_error_message(err));
        perps_error_free(err);
        return 1;
    }
    session = perps_session_new(NULL);
    char *login = session ? checked("perps_signin", perps_signin(client, session, "bsc", BSC_TEST_KEY, 3600, &err), err) : NULL;
    if (login == NULL) {
        perps_session_free(session);
        perps_client_free(client);
        return 1;
    }
    perps_string_free(login);
    printf("signed in; libperps %s\n", perps_version());

    char *answer = checked("change_margin_mode",
                           perps_change_margin_mode(client, session, "{\"symbol\":\"BTC-USD\",\"margin_mode\":\"cross\"}", &err), err);
    perps_string_free(answer);
    answer = checked("change_leverage", perps_change_leverage(client, session, "{\"symbol\":\"BTC-USD\",\"leverage\":5}", &err), err);
    printf("set-up: cross margin, leverage 5 -> %s\n", answer ? answer : "failed");
    perps_string_free(answer);
    cancel_everything("start-up");

    for (int round = 1; round <= rounds && !stopping; round++) {
        round_once(round);
        sleep_ms(250);
    }

    printf("exit:\n");
    cancel_everything("exit");
    int left = reconcile("exit");
    printf("done: %d fill(s); %d order(s) left open\n", fills, left);
    perps_session_free(session);
    perps_client_free(client);
    return left == 0 ? 0 : 1;
}
