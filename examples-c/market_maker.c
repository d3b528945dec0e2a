/*
 * libperps example: a small market maker on the venue's two WebSockets. It quotes both sides
 * of one symbol around the middle of the book, learns of fills from the account stream,
 * re-quotes when the book moves, pulls its quotes when the book goes stale, keeps its
 * position within a limit, and uses REST only to read the symbol's rules at start and to
 * reconcile: at start-up, every second, after a connection was lost or a stream fell behind,
 * and at exit (cancel every order it placed, check that none is left).
 *
 *   [MM_SYMBOL=BTC-USD] [MM_MAX_POSITION=0.05] market_maker BASE_URL PERPS_URL [SECONDS [NOT_FOUND_MS]]
 *
 * It stops after SECONDS (default 10). An order of unknown fate that the venue has not known
 * for NOT_FOUND_MS (default 10000) is taken as never placed (a test can shorten the wait).
 * MM_SYMBOL names the symbol (default BTC-USD; its tick, lot and order size bounds come
 * from perps_query_symbol_info, and it refuses to start when the venue does not list it or
 * the rules cannot be read or do not fit the 0.01 quotes); MM_MAX_POSITION is the largest
 * absolute position, in the base asset, that a fill of its quotes may lead to (default
 * 0.05): at the limit, the side that would grow the position is not quoted.
 *
 * SIGINT / SIGTERM end it early, still cancelling every order it placed. examples-c/market_maker.sh
 * runs it against the sandbox venue while moving the sandbox's mark so that quotes fill.
 * The wallet key is a well-known TEST key: never use it with real funds.
 *
 * What it shows of the library: one market stream (perps_stream_open) carrying depth_book
 * and price for the symbol and, with the session, the account channels order, trade and
 * position; the order stream (perps_order_stream_open) for post-only quotes
 * (perps_stream_new_order, cl_ord_id prefix "mm-") and cancels (perps_stream_cancel_order),
 * each answered by an "accepted" ack (final false) and then its outcome (final true); the
 * status events (pull the quotes when a stream is lost, reconcile when it is back, end on
 * "failed"); one thread polling both streams with short timeouts. An order whose fate is
 * unknown — its outcome says "outcome_unknown":true, a lost connection left its request
 * "unanswered", or its frame may have partly left (perps_error_stream_request_id) — is looked
 * up by its cl_ord_id (perps_query_order) before its side is quoted again, never sent again
 * blindly; a "repeat" reply is not an outcome and is ignored, unless it "contradicts" the
 * first: then the order's fate is unknown. REST (market_maker_rest.h): query_symbol_info,
 * change_margin_mode and change_leverage at start-up; query_open_orders, query_positions and
 * cancel_orders to reconcile, only ever cancelling orders with its own cl_ord_id prefix (the
 * account may be shared); query_order and cancel_order by cl_ord_id for orders of unknown
 * fate and at exit. Client options symbol_rules (bad prices refused locally) and rate_limit
 * "wait" (the reconciling REST calls never meet a 429).
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "market_maker.h"
#include "market_maker_rest.h"
#include "perps.h"

static const char *const BSC_TEST_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
static const char *const HALF_SPREAD = "25";  /* either side of the mid */
static const char *const REQUOTE_MOVE = "10"; /* re-quote a side when the mid moved this much */
static const char *const QTY = "0.01";        /* each quote's size */
static const char *const DEFAULT_MAX_POSITION = "0.05";
static long long half_spread, requote_move;   /* the same in ticks of the symbol (at start) */
static const long long POLL_MS = 5;               /* each stream's wait in one turn of the loop */
static const long long RECONCILE_EVERY_MS = 1000; /* REST check of what the streams told us */
static const long long REPLY_DEADLINE_MS = 5000;  /* no outcome by then: trust REST instead */
static const long long BOOK_FRESH_MS = 2000;      /* quote only on a book younger than this */
static const long long SETTLE_MS = 2000;          /* at exit, wait this long for outcomes */

static volatile sig_atomic_t stopping = 0;
static void on_signal(int sig) {
    (void)sig;
    stopping = 1;
}

static perps_stream *market, *orders;

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
    }
    perps_string_free(sent);
    return complete;
}

/* Cancel resting quote `q` over the order stream, saying why. */
static void cancel_quote(struct quote *q, const char *why) {
    char params[160];
    snprintf(params, sizeof params, "{\"cl_ord_id\":\"%s\"}", q->cl_ord_id);
    printf("  cancel   %s %s: %s\n", q->name, q->cl_ord_id, why);
    if (send_request(q, "order:cancel", params, q->price)) {
        q->state = CANCELLING;
    }
}

/* Quote the free sides around the mid; cancel a resting side whose mid moved too far, whose
 * book went stale, or that the position limit no longer allows. */
static void quote_if_due(void) {
    static int stale, limited[2]; /* what was last said, so that it is said once */
    if (!orders_up || stopping) {
        return; /* nothing can be sent (a lost order stream: resync pulls the quotes by REST) */
    }
    long long age = now_ms() - book_at_ms;
    if (!market_up || book_at_ms == 0 || age > BOOK_FRESH_MS) {
        /* Blind: the market stream down, or no recent book (0 after a resync: no book yet).
         * Never place on stale prices, and pull the quotes resting there: they were priced
         * from a market that may have moved since. A PLACING one is pulled once it rests. */
        if (book_at_ms != 0 && !stale) {
            printf("book stale: no depth_book for %lld ms: pull our quotes, quote again from a fresh book\n", age);
            stale = 1;
        }
        for (int i = 0; i < 2; i++) {
            if (quotes[i]->state == RESTING) {
                cancel_quote(quotes[i], "book stale");
            }
        }
        return;
    }
    if (stale) {
        printf("book fresh again: quoting\n");
        stale = 0;
    }
    long long mid = (best_bid + best_ask) / 2;
    for (int i = 0; i < 2; i++) {
        struct quote *q = quotes[i];
        long long moved = mid > q->mid ? mid - q->mid : q->mid - mid;
        if (q->state == RESTING && moved >= requote_move) {
            char why[48];
            snprintf(why, sizeof why, "mid moved ");
            from_ticks(moved, price_decimals, why + strlen(why), sizeof why - strlen(why));
            cancel_quote(q, why);
        } else if (q->state == RESTING && !within_limit(q, 0)) {
            cancel_quote(q, "position limit"); /* the position moved otherwise: e.g. a fill of another engine */
        }
    }
    /* The position the limit decides on: the position channel's, with the fills the trade
     * channel reported since (within_limit), as the venue pushes a fill's trade first. */
    char line[256] = "", limit[32], position[40];
    from_ticks(max_position, qty_decimals, limit, sizeof limit);
    from_ticks(to_ticks(streamed_position, qty_decimals) + fills_since_position, qty_decimals, position,
               sizeof position);
    for (int i = 0; i < 2; i++) {
        struct quote *q = quotes[i];
        if (q->state != FREE || books_seen <= q->wait_for_book) {
            continue; /* after a rejection, wait for a newer book: the one quoted from was stale */
        }
        if (within_limit(q, 1) == limited[i]) { /* changed since last said */
            limited[i] = !limited[i];
            printf("  limit    position %s %s: %s %s +-%s\n", position, base_asset, q->name,
                   limited[i] ? "not quoted, its fill would take the position beyond" : "quoted again, within", limit);
        }
        if (limited[i]) {
            continue;
        }
        char order[320], price[32];
        from_ticks(q == &bid ? mid - half_spread : mid + half_spread, price_decimals, price, sizeof price);
        snprintf(order, sizeof order,
                 "{\"symbol\":\"%s\",\"side\":\"%s\",\"order_type\":\"limit\",\"qty\":\"%s\",\"price\":\"%s\","
                 "\"time_in_force\":\"alo\",\"reduce_only\":false}",
                 symbol, q->side, QTY, price);
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
    char subscriptions[256];
    snprintf(subscriptions, sizeof subscriptions,
             "[{\"channel\":\"depth_book\",\"symbol\":\"%s\"},{\"channel\":\"price\",\"symbol\":\"%s\"},"
             "{\"channel\":\"order\"},{\"channel\":\"trade\"},{\"channel\":\"position\"}]",
             symbol, symbol);
    market = perps_stream_open(client, session, subscriptions, &err);
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
        fprintf(stderr, "usage: [MM_SYMBOL=BTC-USD] [MM_MAX_POSITION=%s] %s BASE_URL PERPS_URL [SECONDS [NOT_FOUND_MS]]\n",
                DEFAULT_MAX_POSITION, argv[0]);
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
    const char *name = getenv("MM_SYMBOL"), *limit = getenv("MM_MAX_POSITION");
    size_t name_len = name ? strlen(name) : 0;
    const char *name_chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    if (name != NULL && (name_len == 0 || name_len >= sizeof symbol || strspn(name, name_chars) != name_len)) {
        fprintf(stderr, "%s: MM_SYMBOL must be a symbol's name (letters, digits, '-', '_'), not \"%s\"\n", argv[0], name);
        return 2; /* (it goes into JSON as it is) */
    }
    snprintf(symbol, sizeof symbol, "%s", name ? name : "BTC-USD");
    setvbuf(stdout, NULL, _IOLBF, 0); /* one line at a time, also into a pipe or file */
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    perps_error *err = NULL;
    char options[256];
    /* stream_request_timeout_ms: a request with no outcome by then comes back as a
     * "request_timeout" event (on_status), and REST is trusted instead. */
    snprintf(options, sizeof options,
             "{\"symbol_rules\":true,\"rate_limit\":\"wait\",\"cl_ord_id_prefix\":\"%s\",\"stream_request_timeout_ms\":%lld}",
             CL_ORD_ID_PREFIX, REPLY_DEADLINE_MS);
    client = perps_client_new(argv[1], argv[2], options, &err);
    if (client == NULL) {
        fprintf(stderr, "perps_client_new: %s\n", perps_error_message(err));
        perps_error_free(err);
        return 1;
    }
    /* The symbol's rules before anything else: quoting on a tick or lot we guessed would have
     * the venue refuse every order (or worse, the library stop the engine: symbol_rules). */
    if (!read_symbol_rules(QTY, limit ? limit : DEFAULT_MAX_POSITION)) {
        perps_client_free(client);
        return 2; /* as for a bad argument: nothing was sent */
    }
    half_spread = to_ticks(HALF_SPREAD, price_decimals);
    requote_move = to_ticks(REQUOTE_MOVE, price_decimals);
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

    char params[128];
    snprintf(params, sizeof params, "{\"symbol\":\"%s\",\"margin_mode\":\"cross\"}", symbol);
    char *answer = checked("change_margin_mode", perps_change_margin_mode(client, session, params, &err), &err);
    perps_string_free(answer);
    snprintf(params, sizeof params, "{\"symbol\":\"%s\",\"leverage\":5}", symbol);
    answer = checked("change_leverage", perps_change_leverage(client, session, params, &err), &err);
    printf("set-up: cross margin, leverage 5 -> %s\n", answer ? answer : "failed");
    perps_string_free(answer);
    cancel_own("start-up"); /* left by an earlier run of ours */
    reconcile("start-up", 1);

    int status = run(seconds);
    /* Closed first, so that nothing more is sent on them while REST cleans up. */
    perps_stream_close(orders);
    perps_stream_close(market);
    perps_stream_free(orders);
    perps_stream_free(market);
    int unresolved = settle_quotes_at_exit(); /* then the report: never before every order's end is known */
    int left = final_check();
    if (left < 0) {
        printf("done: %d fill(s); our open orders could not be read: check the account\n", fills);
    } else if (unresolved > 0) {
        printf("done: %d fill(s); %d order(s) whose end we never learnt (%d listed open): check the account\n", fills,
               unresolved, left);
    } else {
        printf("done: %d fill(s); %d order(s) left open\n", fills, left);
    }
    perps_session_free(session);
    perps_client_free(client);
    return status == 0 && left == 0 && unresolved == 0 ? 0 : 1;
}
