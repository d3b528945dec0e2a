/*
 * examples-c/market_maker_rest.h: the REST side of market_maker.c. The symbol's rules at
 * start, the reconciles (the venue's open orders and position against what the streams
 * said), the look-ups of orders whose fate is unknown, and the clean-up at exit. Like
 * market_maker.h it is included once, by market_maker.c: the example is one translation
 * unit, so its functions and state are static.
 */
#ifndef PERPS_EXAMPLES_MARKET_MAKER_REST_H
#define PERPS_EXAMPLES_MARKET_MAKER_REST_H

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "market_maker.h"
#include "perps.h"

static const int FORGET_AFTER_MISSES = 3;      /* the venue can list a new order seconds late */
static const long long UNKNOWN_CHECK_MS = 500; /* an order of unknown fate: looked up this often */
static long long not_found_for_ms = 10000;     /* ...and taken as never placed once unknown this long */
static const long long EXIT_LIST_MS = 3000;    /* at exit, a list still showing ours is read again this long */

static perps_client *client;
static perps_session *session;
static char symbol_params[64]; /* {"symbol":"BTC-USD"}, for the REST calls that take one */

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

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

/* A whole number 0..9 as the venue writes a count of decimals (2 or "2"), or -1. */
static int decimals_of(const char *info, const char *key) {
    char text[16];
    long long n;
    return json_get(info, key, text, sizeof text) && ticks_exact(text, 0, &n) && n >= 0 && n <= 9 ? (int)n : -1;
}

/* The symbol's rules from query_symbol_info (public: no session), read before anything is
 * sent: the tick 10^-price_tick_decimals and the lot 10^-qty_tick_decimals (the venue names
 * no tick size as such), and the order size bounds. The quote size `qty` and the position
 * limit `limit` must fit them. 1 when they do; else 0, after saying why: the symbol is not
 * listed or not trading, its rules cannot be read, or ours do not fit them. */
static int read_symbol_rules(const char *qty, const char *limit) {
    snprintf(symbol_params, sizeof symbol_params, "{\"symbol\":\"%s\"}", symbol);
    perps_error *err = NULL;
    char *answer = perps_query_symbol_info(client, NULL, symbol_params, &err);
    if (answer == NULL) { /* e.g. HTTP 400 "invalid symbol DOGE-USD" */
        fprintf(stderr, "market_maker: %s: no rules from the venue, an unknown symbol? (query_symbol_info: %s): not starting\n",
                symbol, perps_error_message(err));
        perps_error_free(err);
        return 0;
    }
    const char *info = NULL;
    char text[40], min[40] = "", max[40] = "", why[512] = "", tick[32], lot[32];
    for (const char *o = json_first(json_list(answer)); o != NULL && info == NULL; o = json_next(o)) {
        info = json_get(o, "symbol", text, sizeof text) && strcmp(text, symbol) == 0 ? o : NULL;
    }
    long long min_qty = 0, max_qty = -1;
    if (info == NULL) {
        snprintf(why, sizeof why, "the venue does not list it (query_symbol_info)");
    } else if ((json_get(info, "enabled", text, sizeof text) && strcmp(text, "false") == 0) ||
               (json_get(info, "status", text, sizeof text) && strcmp(text, "trading") != 0)) {
        snprintf(why, sizeof why, "the venue lists it as not trading");
    } else if ((price_decimals = decimals_of(info, "price_tick_decimals")) < 0 ||
               (qty_decimals = decimals_of(info, "qty_tick_decimals")) < 0 ||
               !json_get(info, "min_order_qty", min, sizeof min) || !ticks_exact(min, qty_decimals, &min_qty) ||
               min_qty <= 0 || (json_get(info, "max_order_qty", max, sizeof max) && !ticks_exact(max, qty_decimals, &max_qty))) {
        snprintf(why, sizeof why, "its rules cannot be read (price_tick_decimals, qty_tick_decimals, min_order_qty, "
                                  "max_order_qty in %.300s)", info);
    }
    if (why[0] == '\0') { /* the rules are read: do ours fit them? */
        from_ticks(1, price_decimals, tick, sizeof tick);
        from_ticks(1, qty_decimals, lot, sizeof lot);
        if (!ticks_exact(qty, qty_decimals, &quote_qty) || quote_qty < min_qty || (max_qty >= 0 && quote_qty > max_qty)) {
            snprintf(why, sizeof why, "the quote size %s does not fit its rules (order qty %s..%s, lot %s)", qty, min, max, lot);
        } else if (!ticks_exact(limit, qty_decimals, &max_position) || max_position < quote_qty) {
            snprintf(why, sizeof why, "MM_MAX_POSITION %s is not a decimal on its lot %s, of at least the quote size %s",
                     limit, lot, qty);
        } else if (!json_get(info, "base_asset", base_asset, sizeof base_asset)) {
            snprintf(base_asset, sizeof base_asset, "%s", "lots"); /* only for the messages */
        }
    }
    perps_string_free(answer);
    if (why[0] != '\0') {
        fprintf(stderr, "market_maker: %s: %s: not starting\n", symbol, why);
        return 0;
    }
    printf("%s rules (query_symbol_info): tick %s, lot %s, order qty %s..%s; quoting %s, position within +-%s %s\n", symbol,
           tick, lot, min, max, qty, limit, base_asset);
    return 1;
}

/* The engine's own open orders (cl_ord_id prefix CL_ORD_ID_PREFIX) of its symbol, cancelled
 * by id over REST (at start-up, and whenever the streams cannot be trusted); the account's
 * other orders are left alone. A quote the venue listed is forgotten once cancelled. Any other
 * quote (not listed: it may rest all the same, listed late, or have ended; or the list or the
 * cancel failed) is of unknown fate: looked up (check_unknown) before its side is quoted
 * again, never left waiting for a reply the resync forgot. The number cancelled, or -1 when
 * it failed. */
static int cancel_own(const char *when) {
    perps_error *err = NULL;
    char *open = checked("query_open_orders", perps_query_open_orders(client, session, symbol_params, &err), &err);
    if (json_list(open) == NULL) {
        perps_string_free(open);
        for (int i = 0; i < 2; i++) {
            if (quotes[i]->state != FREE && quotes[i]->state != UNKNOWN) {
                fate_unknown(quotes[i], quotes[i]->cl_ord_id, "our open orders could not be listed");
            }
        }
        return -1;
    }
    char params[4096] = "{\"order_id_list\":[", id[32], cl_ord_id[64];
    size_t n = strlen(params);
    int count = 0, others = 0, listed[2] = {0, 0};
    for (const char *o = json_first(json_list(open)); o != NULL && n + 40 < sizeof params; o = json_next(o)) {
        json_get(o, "cl_ord_id", cl_ord_id, sizeof cl_ord_id);
        if (!is_own_order(cl_ord_id)) {
            others++;
        } else if (json_get(o, "id", id, sizeof id)) {
            const struct quote *q = quote_by_cl_ord_id(cl_ord_id);
            if (q != NULL) {
                listed[q == &ask] = 1;
            }
            n += (size_t)snprintf(params + n, sizeof params - n, "%s%s", count++ ? "," : "", id);
        }
    }
    perps_string_free(open);
    snprintf(params + n, sizeof params - n, "]}");
    char *answer = count == 0 ? NULL : checked("cancel_orders", perps_cancel_orders(client, session, params, &err), &err);
    printf("  cancel   our orders (%s): %d by id -> %s%s", when, count, count == 0 ? "none open" : answer ? answer : "failed",
           others ? "; " : "\n");
    if (others) {
        printf("%d order(s) not ours left alone\n", others);
    }
    int cancelled = count == 0 || answer != NULL;
    perps_string_free(answer);
    for (int i = 0; i < 2; i++) {
        struct quote *q = quotes[i];
        if (q->state == FREE || q->state == UNKNOWN) { /* an unknown one is looked up: that says how it ended */
            continue;
        }
        if (listed[i] && cancelled) {
            forget(q);
        } else {
            fate_unknown(q, q->cl_ord_id, listed[i] ? "its cancel by REST failed" : "not listed when cancelling by REST");
        }
    }
    return cancelled ? count : -1;
}

/* Compare the venue's open orders and position (REST) with what the streams told us. Our own
 * orders open at the venue that we do not track (left by an earlier run, or by a resync that
 * could not follow them) are cancelled; other orders of the account are left alone. A quote
 * of ours that the venue has not listed FORGET_AFTER_MISSES times in a row may have ended
 * without the streams telling us: it is looked up by cl_ord_id (check_unknown) before its
 * side is quoted again. With `adopt`, the venue's position replaces the streamed one (after a
 * connection loss the position channel may have missed a fill). Returns the number of our
 * open orders the venue lists, or -1 when it could not be read. */
static int reconcile(const char *when, int adopt) {
    perps_error *err = NULL;
    char *open = checked("query_open_orders", perps_query_open_orders(client, session, symbol_params, &err), &err);
    char *positions = open ? checked("query_positions", perps_query_positions(client, session, symbol_params, &err), &err) : NULL;
    if (positions == NULL || json_list(open) == NULL || json_list(positions) == NULL) {
        if (positions != NULL) { /* answered, but in a shape this example cannot read: no list */
            printf("  reconcile: an answer without a list of orders or positions: skipped\n");
        }
        perps_string_free(open);
        perps_string_free(positions);
        return -1;
    }
    char params[2048] = "{\"order_id_list\":[", cl_ord_id[64], id[32], qty[40] = "0", others[48] = "";
    size_t n = strlen(params);
    int ours = 0, strays = 0, not_ours = 0, listed[2] = {0, 0};
    for (const char *o = json_first(json_list(open)); o != NULL; o = json_next(o)) {
        json_get(o, "cl_ord_id", cl_ord_id, sizeof cl_ord_id);
        const struct quote *q = quote_by_cl_ord_id(cl_ord_id);
        if (!is_own_order(cl_ord_id)) {
            not_ours++; /* another engine's or a person's: not ours to cancel */
            continue;
        }
        ours++;
        if (q != NULL) {
            listed[q == &ask] = 1;
        } else if (json_get(o, "id", id, sizeof id) && n + 40 < sizeof params) {
            n += (size_t)snprintf(params + n, sizeof params - n, "%s%s", strays++ ? "," : "", id);
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
        char sym[32];
        if (json_get(p, "symbol", sym, sizeof sym) && strcmp(sym, symbol) == 0) {
            json_get(p, "qty", qty, sizeof qty);
        }
    }
    int same = to_ticks(qty, qty_decimals) == to_ticks(streamed_position, qty_decimals);
    if (not_ours > 0) {
        snprintf(others, sizeof others, "; %d order(s) not ours left alone", not_ours);
    }
    printf("  reconcile (%s): venue lists %d open order(s) of ours, we track %d; position %s %s, %s%s%s\n", when, ours,
           tracked_count(), qty, base_asset, same ? "as streamed" : adopt ? "adopted; the position channel said " : "the position channel said ",
           same ? "" : streamed_position, others);
    if (adopt) {
        snprintf(streamed_position, sizeof streamed_position, "%s", qty);
        fills_since_position = 0;
    }
    perps_string_free(open);
    perps_string_free(positions);
    if (strays > 0) {
        snprintf(params + n, sizeof params - n, "]}");
        char *answer = checked("cancel_orders", perps_cancel_orders(client, session, params, &err), &err);
        printf("  reconcile: %d open order(s) of ours we do not track, cancelled by id -> %s\n", strays, answer ? answer : "failed");
        perps_string_free(answer);
    }
    return ours;
}

/* What the streams said can no longer be trusted (a connection lost, a stream behind, a
 * reply overdue): cancel our orders by REST, forget the requests in flight, take the venue's
 * position, and quote again from the next book. */
static void resync(const char *why) {
    cancel_own(why); /* when it fails, the periodic reconcile cancels what is left */
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
    char params[160], status[24] = "";
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

/* At exit, with the streams closed: every order we placed whose end we have not seen (a
 * quote not FREE: resting, just placed, being cancelled, or of unknown fate) is cancelled by
 * its cl_ord_id, which reaches an order the venue does not list yet. One the cancel does not
 * settle (not found: it ended, or is not known yet) is looked up until the venue says how it
 * ended or has not known it for not_found_for_ms. Returns how many are still unresolved
 * then: their fate stays unknown, and the exit says so. */
static int settle_quotes_at_exit(void) {
    for (int i = 0; i < 2; i++) {
        struct quote *q = quotes[i];
        if (q->state == FREE) {
            continue;
        }
        char params[160];
        snprintf(params, sizeof params, "{\"cl_ord_id\":\"%s\"}", q->cl_ord_id);
        perps_error *err = NULL;
        char *answer = perps_cancel_order(client, session, params, &err);
        printf("  cancel   %s %s (exit) by cl_ord_id -> %s\n", q->name, q->cl_ord_id, answer ? answer : perps_error_message(err));
        if (answer != NULL) {
            forget(q); /* accepted: it ends (cancelled, or filled first) */
        } else if (q->state != UNKNOWN) {
            fate_unknown(q, q->cl_ord_id, perps_error_code(err) == PERPS_NOT_FOUND ? "no order to cancel" : "its cancel failed");
        }
        perps_string_free(answer);
        perps_error_free(err);
    }
    for (long long until = now_ms() + not_found_for_ms + 2 * UNKNOWN_CHECK_MS; tracked_count() > 0 && now_ms() < until;) {
        check_unknown(&bid);
        check_unknown(&ask);
        sleep_ms(50);
    }
    int unresolved = tracked_count();
    forget(&bid); /* counted in `unresolved`; a final list that shows them cancels them */
    forget(&ask);
    return unresolved;
}

/* The final check: the venue lists none of our orders. A cancel is accepted before it is
 * done, and the venue can list orders late, so a list that still shows ours (each cancelled
 * again by reconcile, as we track none now) is read again for up to EXIT_LIST_MS before it
 * counts as a failure. A list can also miss an order placed just before it, so an empty one
 * is a success only together with settle_quotes_at_exit's: every order we placed ended.
 * Returns the number of our orders still listed, or -1 when no list could be read. */
static int final_check(void) {
    for (long long until = now_ms() + EXIT_LIST_MS;; sleep_ms(250)) {
        int left = reconcile("exit", 0);
        if (left == 0 || now_ms() >= until) {
            return left;
        }
    }
}

#endif /* PERPS_EXAMPLES_MARKET_MAKER_REST_H */
