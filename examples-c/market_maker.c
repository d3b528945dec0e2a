/*
 * libperps example: a small market maker on the venue's two WebSockets. It quotes both sides
 * of BTC-USD around the middle of the book, learns of fills from the account stream,
 * re-quotes when the book moves, and uses REST only to reconcile: at start-up, every second,
 * after a connection was lost or a stream fell behind, and at exit (cancel everything, check
 * that nothing is left).
 *
 *   market_maker BASE_URL PERPS_URL [SECONDS [NOT_FOUND_MS]]
 *
 * It stops after SECONDS (default 10). An order of unknown fate that the venue has not known
 * for NOT_FOUND_MS (default 10000) is taken as never placed (a test can shorten the wait).
 *
 * SIGINT / SIGTERM end it early, still cancelling everything. examples-c/market_maker.sh
 * runs it against the sandbox venue while moving the sandbox's mark so that quotes fill.
 * The wallet key is a well-known TEST key: never use it with real funds.
 *
 * What it shows of the library: one market stream (perps_stream_open) carrying depth_book
 * and price for the symbol and, with the session, the account channels order, trade and
 * position; the order stream (perps_order_stream_open) for post-only quotes
 * (perps_stream_new_order, cl_ord_id prefix "mm-") and cancels (perps_stream_cancel_order),
 * each answered by an "accepted" ack (final false) and then its outcome (final true); the
 * status events (stop quoting when a stream is lost, reconcile when it is back, end on
 * "failed"); one thread polling both streams with short timeouts. An order whose fate is
 * unknown — its outcome says "outcome_unknown":true, a lost connection left its request
 * "unanswered", or its frame may have partly left (perps_error_stream_request_id) — is looked
 * up by its cl_ord_id (perps_query_order) before its side is quoted again, never sent again
 * blindly; a "repeat" reply is not an outcome and is ignored, unless it "contradicts" the
 * first: then the order's fate is unknown. REST: change_margin_mode /
 * change_leverage at start-up, query_open_orders, query_positions and cancel_orders to
 * reconcile. Client options symbol_rules (bad prices refused locally) and rate_limit "wait"
 * (the reconciling REST calls never meet a 429).
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "market_maker.h"
#include "perps.h"

static const char *const BSC_TEST_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
static const char *const SUBSCRIPTIONS =
    "[{\"channel\":\"depth_book\",\"symbol\":\"BTC-USD\"},{\"channel\":\"price\",\"symbol\":\"BTC-USD\"},"
    "{\"channel\":\"order\"},{\"channel\":\"trade\"},{\"channel\":\"position\"}]";
static const long long HALF_SPREAD = 2500;  /* 25.00 either side of the mid, in ticks */
static const long long REQUOTE_MOVE = 1000; /* re-quote a side when the mid moved 10.00 */
static const char *const QTY = "0.01";
static const long long POLL_MS = 5;               /* each stream's wait in one turn of the loop */
static const long long RECONCILE_EVERY_MS = 1000; /* REST check of what the streams told us */
static const long long REPLY_DEADLINE_MS = 5000;  /* no outcome by then: trust REST instead */
static const long long BOOK_FRESH_MS = 2000;      /* quote only on a book younger than this */
static const long long SETTLE_MS = 2000;          /* at exit, wait this long for outcomes */
static const int FORGET_AFTER_MISSES = 3;         /* the venue can list a new order seconds late */
static const long long UNKNOWN_CHECK_MS = 500;    /* an order of unknown fate: looked up this often */
static long long not_found_for_ms = 10000;        /* ...and taken as never placed once unknown this long */

static volatile sig_atomic_t stopping = 0;
static void on_signal(int sig) {
    (void)sig;
    stopping = 1;
}

static perps_client *client;
static perps_session *session;
static perps_stream *market, *orders;

/* A REST answer, or NULL after printing why not. `err` is read here, after the call has set
 * it (an argument `err` beside the call `f(…, &err)` could be read before the call runs:
 * C leaves the order of argument evaluation unspecified). */
static char *checked(const char *what, char *answer, perps_error **err) {
    if (answer == NULL) {
        fprintf(stderr, "  %s failed: code %d: %s\n", what, (int)perps_error_code(*err), perps_error_message(*err));
        perps_error_free(*err);
        *err = NULL;
    }
    return answer;
}

/* Every open order of the account, cancelled by id over REST (start-up, exit, and whenever
 * the streams cannot be trusted). The number cancelled, or -1 when it failed. */
static int cancel_everything(const char *when) {
    perps_error *err = NULL;
    char *open = checked("query_open_orders", perps_query_open_orders(client, session, NULL, &err), &err);
    if (open == NULL) {
        return -1;
    }
    char params[4096] = "{\"order_id_list\":[", id[32];
    size_t n = strlen(params);
    int count = 0;
    for (const char *o = json_first(json_list(open)); o != NULL && n + 40 < sizeof params; o = json_next(o)) {
        if (json_get(o, "id", id, sizeof id)) {
            n += (size_t)snprintf(params + n, sizeof params - n, "%s%s", count++ ? "," : "", id);
        }
    }
    perps_string_free(open);
    snprintf(params + n, sizeof params - n, "]}");
    if (count == 0) {
        printf("  cancel   everything (%s): nothing open\n", when);
        return 0;
    }
    char *answer = checked("cancel_orders", perps_cancel_orders(client, session, params, &err), &err);
    printf("  cancel   everything (%s): %d order(s) by id -> %s\n", when, count, answer ? answer : "failed");
    int cancelled = answer != NULL;
    perps_string_free(answer);
    if (!cancelled) {
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        if (quotes[i]->state != UNKNOWN) { /* cancelled with the rest; an unknown one may come later */
            forget(quotes[i]);
        }
    }
    return count;
}

/* Compare the venue's open orders and position (REST) with what the streams told us. Orders
 * open at the venue that we do not track are cancelled; a quote of ours that the venue has
 * not listed FORGET_AFTER_MISSES times in a row may have ended without the streams telling
 * us: it is looked up by cl_ord_id (check_unknown) before its side is quoted again. With `adopt`, the venue's position replaces the streamed one (after a
 * connection loss the position channel may have missed a fill). Returns the number of open
 * orders the venue lists, or -1 when it could not be read. */
static int reconcile(const char *when, int adopt) {
    perps_error *err = NULL;
    char *open = checked("query_open_orders", perps_query_open_orders(client, session, "{\"symbol\":\"BTC-USD\"}", &err), &err);
    char *positions = open ? checked("query_positions", perps_query_positions(client, session, "{\"symbol\":\"BTC-USD\"}", &err), &err) : NULL;
    if (positions == NULL || json_list(open) == NULL || json_list(positions) == NULL) {
        if (positions != NULL) { /* answered, but in a shape this example cannot read: no list */
            printf("  reconcile: an answer without a list of orders or positions: skipped\n");
        }
        perps_string_free(open);
        perps_string_free(positions);
        return -1;
    }
    char params[2048] = "{\"order_id_list\":[", cl_ord_id[64], id[32], qty[40] = "0";
    size_t n = strlen(params);
    int venue_open = 0, orphans = 0, listed[2] = {0, 0};
    for (const char *o = json_first(json_list(open)); o != NULL; o = json_next(o)) {
        venue_open++;
        json_get(o, "cl_ord_id", cl_ord_id, sizeof cl_ord_id);
        const struct quote *q = quote_by_cl_ord_id(cl_ord_id);
        if (q != NULL) {
            listed[q == &ask] = 1;
        } else if (json_get(o, "id", id, sizeof id) && n + 40 < sizeof params) {
            n += (size_t)snprintf(params + n, sizeof params - n, "%s%s", orphans++ ? "," : "", id);
        }
    }
    for (int i = 0; i < 2; i++) {
        struct quote *q = quotes[i];
        if (q->state == RESTING || q->state == CANCELLING) { /* not PLACING: it may not rest yet */
            q->misses = listed[i] ? 0 : q->misses + 1;
            if (q->misses >= FORGET_AFTER_MISSES) {
                /* Not forgotten on a list's word (the venue can list an order seconds late):
                 * looked up by cl_ord_id, which says at once whether it ended. */
                printf("  reconcile: %s %s not open at the venue %d times in a row\n", q->name, q->cl_ord_id, q->misses);
                fate_unknown(q, q->cl_ord_id, "not listed");
            }
        }
    }
    for (const char *p = json_first(json_list(positions)); p != NULL; p = json_next(p)) {
        char symbol[32];
        if (json_get(p, "symbol", symbol, sizeof symbol) && strcmp(symbol, SYMBOL) == 0) {
            json_get(p, "qty", qty, sizeof qty);
        }
    }
    int same = to_ticks(qty, QTY_COMPARE_DECIMALS) == to_ticks(streamed_position, QTY_COMPARE_DECIMALS);
    printf("  reconcile (%s): venue lists %d open order(s), we track %d; position %s BTC, %s%s\n", when, venue_open,
           tracked_count(), qty, same ? "as streamed" : adopt ? "adopted; the position channel said " : "the position channel said ",
           same ? "" : streamed_position);
    if (adopt) {
        snprintf(streamed_position, sizeof streamed_position, "%s", qty);
    }
    perps_string_free(open);
    perps_string_free(positions);
    if (orphans > 0) {
        snprintf(params + n, sizeof params - n, "]}");
        char *answer = checked("cancel_orders", perps_cancel_orders(client, session, params, &err), &err);
        printf("  reconcile: %d open order(s) we do not track, cancelled by id -> %s\n", orphans, answer ? answer : "failed");
        perps_string_free(answer);
    }
    return venue_open;
}

/* What the streams said can no longer be trusted (a connection lost, a stream behind, a
 * reply overdue): cancel everything by REST, forget our quotes and the requests in flight,
 * take the venue's position, and quote again from the next book. */
static void resync(const char *why) {
    cancel_everything(why);
    for (int i = 0; i < 2; i++) { /* also when the cancel failed: the periodic reconcile cancels what is left */
        if (quotes[i]->state != UNKNOWN) {
            forget(quotes[i]);
        }
    }
    forget_requests();
    book_at_ms = 0;
    reconcile(why, 1);
}

/* An order of unknown fate, looked up by its cl_ord_id: cancelled if it rests, forgotten once
 * it has ended or the venue has not known it for not_found_for_ms (a new order can stay
 * unknown to the venue for seconds). Until then its side is not quoted. */
static void check_unknown(struct quote *q) {
    static long long checked_ms[2];
    long long *last = &checked_ms[q == &ask];
    if (q->state != UNKNOWN || now_ms() - *last < UNKNOWN_CHECK_MS) {
        return;
    }
    *last = now_ms();
    char params[96], status[24] = "";
    snprintf(params, sizeof params, "{\"cl_ord_id\":\"%s\"}", q->cl_ord_id);
    perps_error *err = NULL;
    char *order = perps_query_order(client, session, params, &err);
    if (order == NULL) {
        if (perps_error_code(err) == PERPS_NOT_FOUND && now_ms() - q->unknown_ms > not_found_for_ms) {
            printf("  unknown  %s %s: not at the venue after %lld ms: never placed\n", q->name, q->cl_ord_id, not_found_for_ms);
            forget(q);
        } else if (perps_error_code(err) != PERPS_NOT_FOUND) {
            printf("  unknown  %s %s: query_order failed: %s (asked again)\n", q->name, q->cl_ord_id, perps_error_message(err));
        }
        perps_error_free(err);
        return;
    }
    json_get(order, "status", status, sizeof status);
    perps_string_free(order);
    /* Forgotten only once it has ended: any other status ("open", "new", "partially_filled",
     * a word we do not know) may rest, and is cancelled. */
    if (strcmp(status, "filled") == 0 || strcmp(status, "canceled") == 0 || strcmp(status, "cancelled") == 0 ||
        strcmp(status, "rejected") == 0 || strcmp(status, "expired") == 0) {
        printf("  unknown  %s %s: the venue says %s\n", q->name, q->cl_ord_id, status);
        forget(q);
        return;
    }
    char *answer = checked("cancel_order", perps_cancel_order(client, session, params, &err), &err);
    printf("  unknown  %s %s: the venue says %s: cancelled -> %s\n", q->name, q->cl_ord_id, status, answer ? answer : "failed");
    if (answer != NULL) {
        forget(q);
    }
    perps_string_free(answer);
}

/* Write an order:new (`json` the order) or order:cancel (`json` its params) for quote `q` on
 * the order stream, and remember the request until its outcome. 1 when written. */
static int send_request(struct quote *q, const char *method, const char *json, const char *price) {
    struct request *r = free_request();
    if (r == NULL) { /* never expected: two quotes have at most four requests in flight */
        printf("  %s %s not sent: %zu requests in flight already\n", method, q->name, sizeof requests / sizeof requests[0]);
        return 0;
    }
    int is_new = strcmp(method, "order:new") == 0;
    perps_error *err = NULL;
    char *sent = is_new ? perps_stream_new_order(orders, json, &err) : perps_stream_cancel_order(orders, json, &err);
    if (sent == NULL) {
        printf("  %s %s not sent: code %d: %s\n", method, q->name, (int)perps_error_code(err), perps_error_message(err));
        const char *partly = perps_error_stream_request_id(err), *cl_ord_id = perps_error_cl_ord_id(err);
        if (perps_error_may_have_reached_venue(err)) {
            /* Part of its frame may have left: request_id `partly` is the one the coming
             * "disconnected" event lists as unanswered. The order may exist: look it up. */
            if (cl_ord_id != NULL) {
                printf("  %s %s: request_id %s may have partly left\n", method, q->name, partly ? partly : "?");
                fate_unknown(q, cl_ord_id, "its frame may have partly left");
            }
            resync_reason = "a request may have reached the venue"; /* an order we could not follow */
        } else if (perps_error_code(err) == PERPS_INVALID_ORDER) {
            ended = failed = 1; /* our own prices are wrong: stop rather than send them again */
        }
        q->wait_for_book = books_seen;
        perps_error_free(err);
        return 0;
    }
    /* The answer is {"request_id","cl_ord_id"} (the library made the cl_ord_id of a new
     * order). */
    int complete = json_get(sent, "request_id", r->id, sizeof r->id) &&
                   (!is_new || json_get(sent, "cl_ord_id", q->cl_ord_id, sizeof q->cl_ord_id));
    if (!complete) {
        printf("  %s %s: unexpected answer %s\n", method, q->name, sent);
        r->id[0] = '\0';
        resync_reason = "an answer we could not read";
    } else {
        snprintf(r->cl_ord_id, sizeof r->cl_ord_id, "%s", q->cl_ord_id);
        snprintf(r->price, sizeof r->price, "%s", price);
        r->method = method;
        r->q = q;
        r->acked = 0;
        r->sent_ms = now_ms();
    }
    perps_string_free(sent);
    return complete;
}

/* Quote the free sides around the mid; cancel a resting side whose mid moved too far. */
static void quote_if_due(void) {
    if (!market_up || !orders_up || stopping || book_at_ms == 0 || now_ms() - book_at_ms > BOOK_FRESH_MS) {
        return; /* blind (a stream down, or no recent book): never place on stale prices */
    }
    long long mid = (best_bid + best_ask) / 2;
    for (int i = 0; i < 2; i++) {
        struct quote *q = quotes[i];
        long long moved = mid > q->mid ? mid - q->mid : q->mid - mid;
        if (q->state == RESTING && moved >= REQUOTE_MOVE) {
            char by[32], params[96];
            from_ticks(moved, PRICE_DECIMALS, by, sizeof by);
            snprintf(params, sizeof params, "{\"cl_ord_id\":\"%s\"}", q->cl_ord_id);
            printf("  cancel   %s %s: mid moved %s\n", q->name, q->cl_ord_id, by);
            if (send_request(q, "order:cancel", params, q->price)) {
                q->state = CANCELLING;
            }
        }
    }
    char line[256] = "";
    for (int i = 0; i < 2; i++) {
        struct quote *q = quotes[i];
        if (q->state != FREE || books_seen <= q->wait_for_book) {
            continue; /* after a rejection, wait for a newer book: the one quoted from was stale */
        }
        char order[320], price[32];
        from_ticks(q == &bid ? mid - HALF_SPREAD : mid + HALF_SPREAD, PRICE_DECIMALS, price, sizeof price);
        snprintf(order, sizeof order,
                 "{\"symbol\":\"%s\",\"side\":\"%s\",\"order_type\":\"limit\",\"qty\":\"%s\",\"price\":\"%s\","
                 "\"time_in_force\":\"alo\",\"reduce_only\":false}",
                 SYMBOL, q->side, QTY, price);
        if (send_request(q, "order:new", order, price)) {
            q->state = PLACING;
            q->mid = mid;
            q->misses = 0;
            snprintf(q->price, sizeof q->price, "%s", price);
            size_t used = strlen(line);
            snprintf(line + used, sizeof line - used, "  %s %s (%s)", q->name, q->price, q->cl_ord_id);
        }
    }
    if (line[0] != '\0') {
        printf("  quote  %s\n", line);
    }
}

/* Read what a stream has: wait up to `wait_ms` for the first event, then take the rest that
 * are already queued. Every event string is freed here. */
static void pump(perps_stream *st, const char *name, long long wait_ms) {
    for (int i = 0; i < 256 && !ended; i++) {
        perps_error *err = NULL;
        char *event = perps_stream_next(st, i == 0 ? wait_ms : 0, &err);
        if (event == NULL) {
            if (err != NULL) { /* PERPS_STREAM_CLOSED after a "failed" event, or a close */
                printf("%s ended: code %d: %s\n", name, (int)perps_error_code(err), perps_error_message(err));
                perps_error_free(err);
                ended = failed = 1;
            }
            return;
        }
        if (st == market) {
            on_market_event(event);
        } else {
            on_order_stream_event(event);
        }
        perps_string_free(event);
    }
}

static int run(long long seconds) {
    perps_error *err = NULL;
    market = perps_stream_open(client, session, SUBSCRIPTIONS, &err);
    if (market == NULL) {
        fprintf(stderr, "perps_stream_open: code %d: %s\n", (int)perps_error_code(err), perps_error_message(err));
        perps_error_free(err);
        return 1;
    }
    orders = perps_order_stream_open(client, session, &err);
    if (orders == NULL) {
        fprintf(stderr, "perps_order_stream_open: code %d: %s\n", (int)perps_error_code(err), perps_error_message(err));
        perps_error_free(err);
        return 1;
    }
    long long end = now_ms() + seconds * 1000, next_reconcile = now_ms() + RECONCILE_EVERY_MS;
    while (!stopping && !ended && now_ms() < end) {
        pump(market, "market stream", POLL_MS);
        pump(orders, "order stream", POLL_MS);
        const struct request *late = overdue_request(REPLY_DEADLINE_MS);
        if (late != NULL) {
            printf("  no outcome for %s %s within %lld ms\n", late->method, late->cl_ord_id, REPLY_DEADLINE_MS);
            resync_reason = "reply overdue";
        }
        if (resync_reason != NULL) {
            const char *why = resync_reason;
            resync_reason = reconcile_reason = NULL;
            resync(why);
        }
        if (reconcile_reason != NULL) {
            reconcile(reconcile_reason, 0);
            reconcile_reason = NULL;
        }
        if (now_ms() >= next_reconcile) {
            reconcile("periodic", 0);
            next_reconcile = now_ms() + RECONCILE_EVERY_MS;
        }
        check_unknown(&bid);
        check_unknown(&ask);
        quote_if_due();
    }
    printf("exit (%s): stop quoting, wait for the outcomes in flight\n",
           stopping ? "signal" : ended ? "a stream ended" : "time is up");
    for (long long until = now_ms() + SETTLE_MS; !ended && pending_count() > 0 && now_ms() < until;) {
        pump(orders, "order stream", POLL_MS);
        pump(market, "market stream", 0);
    }
    return failed;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s BASE_URL PERPS_URL [SECONDS [NOT_FOUND_MS]]\n", argv[0]);
        return 2;
    }
    long long seconds = argc > 3 ? atoll(argv[3]) : 10;
    if (seconds <= 0) {
        fprintf(stderr, "%s: SECONDS must be a positive whole number, not \"%s\"\n", argv[0], argv[3]);
        return 2;
    }
    if (argc > 4 && (not_found_for_ms = atoll(argv[4])) <= 0) {
        fprintf(stderr, "%s: NOT_FOUND_MS must be a positive whole number, not \"%s\"\n", argv[0], argv[4]);
        return 2;
    }
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
    if (session == NULL) {
        fprintf(stderr, "perps_session_new failed\n");
    }
    char *login = session ? checked("perps_signin", perps_signin(client, session, "bsc", BSC_TEST_KEY, 3600, &err), &err) : NULL;
    if (login == NULL) {
        perps_session_free(session);
        perps_client_free(client);
        return 1;
    }
    perps_string_free(login);
    printf("signed in; libperps %s\n", perps_version());

    char *answer = checked("change_margin_mode",
                           perps_change_margin_mode(client, session, "{\"symbol\":\"BTC-USD\",\"margin_mode\":\"cross\"}", &err), &err);
    perps_string_free(answer);
    answer = checked("change_leverage", perps_change_leverage(client, session, "{\"symbol\":\"BTC-USD\",\"leverage\":5}", &err), &err);
    printf("set-up: cross margin, leverage 5 -> %s\n", answer ? answer : "failed");
    perps_string_free(answer);
    cancel_everything("start-up");
    reconcile("start-up", 1);

    int status = run(seconds);
    /* Closed first, so that nothing more is sent on them while REST cleans up. */
    perps_stream_close(orders);
    perps_stream_close(market);
    perps_stream_free(orders);
    perps_stream_free(market);
    cancel_everything("exit");
    int left = reconcile("exit", 0);
    if (left < 0) {
        printf("done: %d fill(s); the open orders could not be read: check the account\n", fills);
    } else {
        printf("done: %d fill(s); %d order(s) left open\n", fills, left);
    }
    perps_session_free(session);
    perps_client_free(client);
    return status == 0 && left == 0 ? 0 : 1;
}
